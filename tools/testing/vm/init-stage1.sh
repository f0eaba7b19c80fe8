#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# First stage in the VM: mount the host root read-only over 9p, put a tmpfs
# overlay on it and switch_root into it (not chroot: request_module() runs
# modprobe in the real root only after switch_root).
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules/order); do
	insmod /modules/$m || echo "stage1: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower ||
	{ echo "stage1: cannot mount host root"; poweroff -f; }
mount -t tmpfs -o mode=755 tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot ||
	{ echo "stage1: cannot mount overlay"; poweroff -f; }
init=$(sed -n 's/.*mrcinit=\([^ ]*\).*/\1/p' /proc/cmdline)
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash "$init"
