#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the newest installed Debian 6.12 kernel that has both an image
# (/boot/vmlinuz-X, the kernel the VM boots) and headers
# (/usr/src/linux-headers-X, which the module builds against): the module
# must load into the kernel it boots.  The host's running kernel is not it.
# Headers, image and source packages may differ in their point release; a
# version with only one of image and headers is skipped, and none with both
# is an error.  MRC_BOOT_DIR and MRC_SRC_DIR replace /boot and /usr/src.
#
# --or-running (make install on a host that is not the VM's): without such
# a kernel, the running one if its headers are installed
# (/lib/modules/RELEASE/build; MRC_MODULES_DIR replaces /lib/modules).
set -eu
boot=${MRC_BOOT_DIR:-/boot} src=${MRC_SRC_DIR:-/usr/src}
mods=${MRC_MODULES_DIR:-/lib/modules}
best=
for h in $(ls -d "$src"/linux-headers-6.12*-amd64 2>/dev/null | sort -rV); do
	v=${h##*/linux-headers-}
	if [ -f "$boot/vmlinuz-$v" ]; then best=$v; break; fi
done
if [ -z "$best" ] && [ "${1-}" = --or-running ]; then
	run=$(uname -r)
	if [ -d "$mods/$run/build" ]; then
		echo "kver: no Debian 6.12 kernel: the running kernel $run" >&2
		echo "$run"
		exit 0
	fi
	echo "kver: no headers of the running kernel $run at $mods/$run/build either" >&2
fi
if [ -z "$best" ]; then
	{
		echo "kver: no Debian 6.12 kernel with both $boot/vmlinuz-X and $src/linux-headers-X: run make deps"
		echo "kver: images: $(cd "$boot" 2>/dev/null && ls -d vmlinuz-6.12* 2>/dev/null | tr '\n' ' ')"
		echo "kver: headers: $(cd "$src" 2>/dev/null && ls -d linux-headers-6.12*-amd64 2>/dev/null | tr '\n' ' ')"
	} >&2
	exit 1
fi
echo "$best"
