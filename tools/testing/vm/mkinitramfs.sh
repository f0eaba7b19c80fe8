#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds the VM's first-stage initramfs: static busybox, the modules needed to
# mount the host root over 9p with a tmpfs overlay, and init-stage1.sh.
# Usage: mkinitramfs.sh KVER OUTPUT   (KVER "-": a kernel with all built in)
set -eu
kver=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work"/{bin,dev,proc,sys,lower,upper,newroot,modules}
cp /bin/busybox "$work/bin/busybox"
for cmd in sh mount umount mkdir insmod switch_root cat echo sleep poweroff; do
	ln -s busybox "$work/bin/$cmd"
done
cp "$here/init-stage1.sh" "$work/init"
chmod 755 "$work/init"

: > "$work/modules/order"
mods="9p 9pnet_virtio overlay"
[ "$kver" = - ] && mods=
for mod in $mods; do
	modprobe -S "$kver" --show-depends "$mod" | while read -r verb path _; do
		[ "$verb" = insmod ] || continue
		name=$(basename "$path" | sed 's/\.ko.*$//').ko
		[ -f "$work/modules/$name" ] && continue
		case "$path" in
		*.xz) xz -dc "$path" > "$work/modules/$name" ;;
		*.zst) zstd -qdc "$path" > "$work/modules/$name" ;;
		*) cp "$path" "$work/modules/$name" ;;
		esac
		echo "$name" >> "$work/modules/order"
	done
done
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
