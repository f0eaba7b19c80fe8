#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boots the installed Debian 6.12 kernel under qemu (KVM when usable, TCG
# otherwise) with the host root shared read-only over 9p and a tmpfs overlay,
# loads the freshly built mrc.ko, runs one shell command in the current
# folder and returns its exit status.  The guest kernel log lands in the
# results folder; a log with any Oops/BUG/WARNING/KASAN/lockdep/refcount
# report fails the run even when the command passed.  A hung guest is killed
# after the timeout.
#
# Usage: run-vm.sh [-o OUTDIR] [-t SECONDS] [-m MEM_MB] [-c CPUS] [-n] CMD...
#   -n  do not load mrc.ko
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/tools/testing/ksrc.sh"

outdir= timeout=300 mem=2048 cpus=2 load=1
while getopts "o:t:m:c:n" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	t) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	n) load=0 ;;
	*) echo "usage: $0 [-o OUTDIR] [-t SECONDS] [-m MB] [-c CPUS] [-n] CMD..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "run-vm: no command" >&2; exit 2; }

kver=${MRC_KVER:-$(bash "$repo/tools/kver.sh")} || exit 2
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || { echo "run-vm: $kernel missing: run make deps" >&2; exit 2; }
[ -n "$outdir" ] || outdir=$(mktemp -d /tmp/mrc-vm.XXXXXX)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
rm -f "$outdir"/{status,dmesg.log,console.log,cmd,env}

initrd=$MRC_CACHE/vm/initramfs-$kver.cpio.gz
if [ ! -f "$initrd" ] || [ "$here/init-stage1.sh" -nt "$initrd" ] ||
   [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	mkdir -p "$MRC_CACHE/vm"
	bash "$here/mkinitramfs.sh" "$kver" "$initrd" || exit 2
fi

printf '%s\n' "$*" > "$outdir/cmd"
{
	printf 'MRC_CWD=%q\n' "$PWD"
	[ "$load" = 1 ] && printf 'MRC_KO=%q\n' "${MRC_KO:-$repo/net/mrc/mrc.ko}"
	printf 'MRC_MODPARAMS=%q\n' "${MRC_MODPARAMS:-}"
	# Pass the test environment through (names starting with MRC_ or KSFT_).
	env | grep -E '^(MRC_|KSFT_)[A-Z0-9_]*=' | grep -Ev '^MRC_(CWD|KO|MODPARAMS)=' |
		while IFS='=' read -r k v; do printf '%s=%q\nexport %s\n' "$k" "$v" "$k"; done
} > "$outdir/env"

if [ -w /dev/kvm ] && [ -z "${MRC_NO_KVM:-}" ]; then
	accel=(-accel kvm -cpu host)
else
	accel=(-accel tcg,thread=multi -cpu max)
fi

timeout -k 5 "$timeout" qemu-system-x86_64 "${accel[@]}" \
	-M pc -smp "$cpus" -m "$mem" -nodefaults -no-user-config -display none \
	-no-reboot -kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=7 panic=-1 mitigations=off nokaslr mrcinit=$here/guest-init.sh" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$outdir",mount_tag=mrcout,security_model=none,multidevs=remap \
	-serial file:"$outdir/console.log" -serial stdio -nic none \
	< /dev/null
qrc=$?

rc=0
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	echo "run-vm: TIMEOUT: guest killed after ${timeout}s" >&2
	rc=124
elif [ ! -f "$outdir/status" ]; then
	echo "run-vm: guest died before the command finished (qemu rc=$qrc)" >&2
	rc=125
else
	rc=$(cat "$outdir/status")
fi
# The serial console has the whole kernel log, up to a crash; dmesg.log is
# there only when the guest shut down in order.
if grep -Eq -f "$here/splat-patterns" "$outdir/console.log" "$outdir/dmesg.log" 2>/dev/null; then
	echo "run-vm: KERNEL SPLAT in guest log ($outdir/console.log):" >&2
	grep -E -h -A15 -f "$here/splat-patterns" "$outdir/console.log" | head -40 >&2
	[ "$rc" -eq 0 ] && rc=126
fi
exit "$rc"
