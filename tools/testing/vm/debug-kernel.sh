#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds the debug guest kernel from Debian's linux-source-6.12: allnoconfig
# plus tools/testing/vm/debug.config (KASAN, KFENCE, lockdep, DEBUG_NET, the
# net refcount trackers, kmemleak, UBSAN, KUnit, ...), then mrc.ko and its
# KUnit suites against it.  The kernel is cached by the hash of the fragment
# and the source package's version, in $MRC_CACHE/debug-HASH; mrc's objects
# are built from a copy of net/ and include/ (6.12 writes an external
# module's objects beside its sources, where the production build keeps its
# own).  Prints the folder that run-vm.sh takes as MRC_DEBUG_KERNEL, the
# clone's .debug-kernel: bzImage, kver, lib/modules/KVER (modules.builtin:
# modprobe of built-ins) linked from the cache, and this clone's mrc.ko,
# mrc_test.ko, mrc_datapath_test.ko
# Usage: debug-kernel.sh [--kernel-only]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/tools/testing/ksrc.sh"
mkdir -p "$MRC_CACHE"
# one build per cache: several clones at once wait for each other
exec 8> "$MRC_CACHE/debug-kernel.lock"
flock 8
ksrc=$(mrc_ksrc)
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
# what decides the kernel: the fragment (its "recipe" line is bumped when
# the way it is built below changes) and the source package
hash=$(cat "$here/debug.config" <(echo "$srcver") | sha256sum | cut -c1-12)
out=$MRC_CACHE/debug-$hash
build=$out/build
log=$out/build.log
mkdir -p "$build"
jobs=$(nproc)

if [ ! -f "$out/bzImage" ]; then
	echo "debug-kernel: building $out (linux-source $srcver, $jobs jobs; log $log)" >&2
	start=$(date +%s)
	# another configuration's tree, when there is one, is taken over:
	# make then rebuilds only what the changed options reach
	old=$(ls -d "$MRC_CACHE"/debug-*/build/.config 2>/dev/null | grep -v "/debug-$hash/" | head -n 1)
	if [ -n "$old" ] && [ ! -f "$build/.config" ]; then
		rmdir "$build" && mv "${old%/.config}" "$build" &&
			echo "debug-kernel: starting from ${old%/build/.config}'s objects" >&2
	fi
	{
		make -C "$ksrc" O="$build" allnoconfig &&
		"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$build" \
			"$build/.config" "$here/debug.config" &&
		make -C "$ksrc" O="$build" olddefconfig
	} > "$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
	# every option the fragment asks for survived olddefconfig
	missing=$(awk -F= '/^CONFIG_/ { print }
		/^# CONFIG_.* is not set/ { print $0 }' "$here/debug.config" |
		while IFS= read -r want; do
			case $want in
			*=n) opt=${want%=n}
			     grep -q "^$opt=" "$build/.config" && echo "$want" ;;
			*) grep -qxF "$want" "$build/.config" || echo "$want" ;;
			esac
		done)
	if [ -n "$missing" ]; then
		echo "debug-kernel: options of debug.config that olddefconfig dropped:" >&2
		echo "$missing" >&2
		exit 1
	fi
	# Debian's certificate paths are not in this tree
	"$ksrc/scripts/config" --file "$build/.config" --set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS ""
	make -C "$ksrc" O="$build" -j"$jobs" bzImage modules >> "$log" 2>&1 ||
		{ tail -40 "$log" >&2; echo "debug-kernel: build FAILED" >&2; exit 1; }
	kver=$(make -s -C "$ksrc" O="$build" kernelrelease 2>/dev/null | tail -1)
	rm -rf "$out/lib"
	make -C "$ksrc" O="$build" INSTALL_MOD_PATH="$out" modules_install >> "$log" 2>&1 ||
		{ tail -20 "$log" >&2; exit 1; }
	echo "$kver" > "$out/kver"
	cp "$build/arch/x86/boot/bzImage" "$out/bzImage.tmp"
	mv "$out/bzImage.tmp" "$out/bzImage"
	echo "debug-kernel: built $kver in $(( $(date +%s) - start )) s" >&2
	# older configurations' trees go once this one is whole
	find "$MRC_CACHE" -maxdepth 1 -name 'debug-*' ! -name "debug-$hash" \
		! -name '*.lock' -exec rm -rf {} + 2>/dev/null || true
fi
[ "${1:-}" = --kernel-only ] && { echo "$out"; exit 0; }

# mrc.ko and the KUnit suites as modules of this kernel, in this clone's
# own folder: the kernel is shared by every clone on the machine, the
# modules are not (a second clone's build would else replace the .ko a
# first clone's VM has yet to load).  The folder links the kernel's parts.
own=$repo/.debug-kernel
mod=$own/mrc-src
mkdir -p "$mod"
rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
	--exclude='.*.cmd' --exclude=modules.order --exclude=Module.symvers \
	"$repo/Kbuild" "$repo/net" "$repo/include" "$mod/"
make -C "$build" M="$mod" CONFIG_MRC=m CONFIG_MRC_KUNIT_TEST=m W=1 \
	-j"$jobs" modules > "$own/mrc-build.log" 2>&1 ||
	{ tail -30 "$own/mrc-build.log" >&2; echo "debug-kernel: mrc build FAILED" >&2; exit 1; }
for ko in mrc mrc_test mrc_datapath_test; do
	cp "$mod/net/mrc/$ko.ko" "$own/$ko.ko"
done
for part in bzImage kver lib; do
	ln -sfn "$out/$part" "$own/$part"
done
echo "$own"
