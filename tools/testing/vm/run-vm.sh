#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boots the installed Debian 6.12 kernel under qemu (KVM when it proves to
# work, TCG otherwise) with the host root shared read-only over 9p and a
# tmpfs overlay, loads the freshly built mrc.ko, runs one shell command in
# the current folder and returns its exit status.  The guest kernel log lands
# in the results folder; a log with any Oops/BUG/WARNING/KASAN/lockdep/
# refcount report fails the run even when the command passed.  A hung guest
# is killed after the timeout.
#
# Accelerator: MRC_ACCEL=kvm|tcg forces one (MRC_NO_KVM=1 is MRC_ACCEL=tcg).
# MRC_ICOUNT=OPTS (e.g. "shift=3,sleep=off") runs TCG with -icount OPTS, one
# host thread for all vCPUs: the guest's clock then counts the instructions
# they execute (sleep=off: idle spans take no time), so its CPU time and
# rates no longer include what the host took from the vCPU threads (for
# cost comparisons, tools/bench; several times slower; never with KVM).
# MRC_KCMDLINE="..." adds to the guest kernel's command line (a memory
# corruption hunt: "slub_debug=FZPU" checks every slab free and poisons
# freed objects, with the last alloc/free stacks in a report).
# MRC_DEBUG_KERNEL=DIR boots the debug kernel that debug-kernel.sh built
# (KASAN, lockdep, kmemleak...) instead of Debian's, with mrc.ko from DIR.
# MRC_TCG_THREAD=single runs TCG on one host thread (multi by default): no
# early-boot deaths from the kernel's code patching, for tests that count
# boot retries.
# Otherwise a writable /dev/kvm is trusted only after one probe boot under
# KVM passed (a /dev/kvm can exist and still fail: "failed to set MSR 0x10a",
# or "KVM internal error. Suberror: 1" with qemu hanging); the verdict is
# cached per host boot in $MRC_CACHE/vm/accel-<boot_id>.  Each run says
# which one it used on stderr and in OUTDIR/accel.
#
# Boot deaths: the guest prints "mrc-vm: command start" to the kernel log and
# creates OUTDIR/started just before it loads mrc.ko and runs the command.  A
# guest that died, hung (MRC_BOOT_TIMEOUT) or logged a splat before that is
# an emulator or boot failure, not a test result (multi-threaded TCG can die
# on the kernel's own code patching, "Oops: int3" early in boot): the boot is
# retried up to MRC_BOOT_RETRIES (2) more times, each attempt's console kept
# as console.attemptN.log, and the count written to OUTDIR/boot-retries.
# Anything after the marker counts in full.
#
# Usage: run-vm.sh [-o OUTDIR] [-t SECONDS] [-m MEM_MB] [-c CPUS] [-n] [-A] CMD...
#   -n  do not load mrc.ko
#   -A  print the accelerator a run would use (probing if needed) and exit
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/tools/testing/ksrc.sh"

outdir= timeout=300 mem=2048 cpus=2 load=1 accel_only=0
while getopts "o:t:m:c:nA" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	t) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	n) load=0 ;;
	A) accel_only=1 ;;
	*) echo "usage: $0 [-o OUTDIR] [-t SECONDS] [-m MB] [-c CPUS] [-n] [-A] CMD..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || [ "$accel_only" = 1 ] || { echo "run-vm: no command" >&2; exit 2; }

debug_args=
if [ -n "${MRC_DEBUG_KERNEL:-}" ]; then
	# the debug kernel (debug-kernel.sh's folder): all built in, mrc.ko
	# and its KUnit suites built against it, its modules.builtin for
	# modprobe; page_poison: CONFIG_PAGE_POISONING does nothing without it.
	# watchdog_thresh=60: a soft lockup is reported after 120 s, not 20:
	# under TCG on a busy host KASAN's boot held a stop_machine() 27 s
	# while the other vCPU parsed ACPI tables (the emulator's speed, not a
	# lockup; a real one still shows)
	kver=$(cat "$MRC_DEBUG_KERNEL/kver") || exit 2
	kernel=$MRC_DEBUG_KERNEL/bzImage
	initrd=$MRC_CACHE/vm/initramfs-nomodules.cpio.gz initrd_kver=-
	export MRC_KO=${MRC_KO:-$MRC_DEBUG_KERNEL/mrc.ko}
	export MRC_GUEST_MODDIR=$MRC_DEBUG_KERNEL/lib/modules/$kver
	debug_args=" page_poison=1 kmemleak=on watchdog_thresh=60"
else
	kver=${MRC_KVER:-$(bash "$repo/tools/kver.sh")} || exit 2
	kernel=${MRC_BOOT_DIR:-/boot}/vmlinuz-$kver
	initrd=$MRC_CACHE/vm/initramfs-$kver.cpio.gz initrd_kver=$kver
fi
[ -r "$kernel" ] || { echo "run-vm: $kernel missing: run make deps" >&2; exit 2; }

if [ ! -f "$initrd" ] || [ "$here/init-stage1.sh" -nt "$initrd" ] ||
   [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	mkdir -p "$MRC_CACHE/vm"
	bash "$here/mkinitramfs.sh" "$initrd_kver" "$initrd" || exit 2
fi

# accel_probe: prints "kvm" or "tcg: why", booting once under KVM when this
# host boot has no verdict yet.  The probe is this script, forced to KVM,
# with no retries and no test hooks, running `true`.
accel_probe() {
	local dir=${MRC_ACCEL_CACHE:-$MRC_CACHE/vm} boot_id file v rc start pid
	boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	file=$dir/accel-$boot_id
	mkdir -p "$dir" || return 1
	exec 9> "$file.lock"
	flock 9
	if [ ! -s "$file" ]; then
		find "$dir" -maxdepth 1 -name 'accel-*' ! -name "accel-$boot_id*" -delete
		echo "run-vm: probing KVM (${MRC_ACCEL_PROBE_TIMEOUT:-45} s at most)" >&2
		start=$(date +%s)
		: > "$dir/probe-$boot_id.log"
		# shellcheck disable=SC2046
		env $(compgen -e | grep '^MRC_TEST_' | sed 's/^/-u /') -u MRC_ICOUNT \
			MRC_ACCEL=kvm MRC_BOOT_RETRIES=0 MRC_MODPARAMS= \
			bash "$0" -n -c "$cpus" -m "$mem" -o "$dir/probe-$boot_id" \
			-t "${MRC_ACCEL_PROBE_TIMEOUT:-45}" true > /dev/null 2> "$dir/probe-$boot_id.log" &
		pid=$!
		# qemu reports a KVM emulation failure on stderr, then hangs
		while kill -0 "$pid" 2>/dev/null; do
			if grep -q 'KVM internal error' "$dir/probe-$boot_id.log"; then
				kill "$pid"
				break
			fi
			sleep 0.5
		done
		wait "$pid"
		rc=$?
		if [ "$rc" -eq 0 ]; then
			v=kvm
		else
			v="tcg: probe boot under KVM failed (rc=$rc after $(( $(date +%s) - start )) s: $(grep -m1 -E 'KVM|MSR|error' "$dir/probe-$boot_id.log"); $dir/probe-$boot_id.log)"
		fi
		echo "$v" > "$file.tmp" && mv "$file.tmp" "$file"
	fi
	cat "$file"
	exec 9>&-
}

kvm_dev=${MRC_KVM_DEV:-/dev/kvm}
case ${MRC_ACCEL:-} in
kvm) accel_why="kvm: forced by MRC_ACCEL" ;;
tcg) accel_why="tcg: forced by MRC_ACCEL" ;;
"")
	if [ -n "${MRC_ICOUNT:-}" ]; then
		accel_why="tcg: for MRC_ICOUNT"
	elif [ -n "${MRC_NO_KVM:-}" ]; then
		accel_why="tcg: forced by MRC_NO_KVM"
	elif [ ! -w "$kvm_dev" ]; then
		accel_why="tcg: no writable $kvm_dev"
	else
		accel_why=$(accel_probe) || accel_why="tcg: cannot probe KVM"
	fi ;;
*) echo "run-vm: MRC_ACCEL=$MRC_ACCEL: want kvm or tcg" >&2; exit 2 ;;
esac
if [ -n "${MRC_ICOUNT:-}" ]; then
	[ "${accel_why%%:*}" = tcg ] || { echo "run-vm: MRC_ICOUNT is TCG's, not KVM's" >&2; exit 2; }
	accel_why="tcg: icount $MRC_ICOUNT (MRC_ICOUNT)"
fi
accel=${accel_why%%:*}
if [ "$accel_only" = 1 ]; then
	echo "$accel_why"
	exit 0
fi
echo "run-vm: accelerator $accel_why" >&2
if [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu host)
else
	# 4-level paging: with LA57 the kernel's identify_cpu() clears the
	# CPU's feature bits for a while during boot, an interrupt then
	# computes __VIRTUAL_MASK_SHIFT as 47 and KASAN calls its own direct
	# map a wild access (debug guest, 1 boot in 6: do_raw_spin_lock from
	# handle_edge_irq in arch_cpu_finalize_init); Debian's x86 hosts
	# mostly run 4 levels, and the emulator walks one level less.
	tcg_cpu=max,la57=off
	accel_args=(-accel "tcg,thread=${MRC_TCG_THREAD:-multi}" -cpu "$tcg_cpu")
	[ -n "${MRC_ICOUNT:-}" ] && accel_args=(-accel tcg,thread=single -icount "$MRC_ICOUNT" -cpu "$tcg_cpu")
fi

[ -n "$outdir" ] || outdir=$(mktemp -d /tmp/mrc-vm.XXXXXX)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
rm -f "$outdir"/{status,started,attempt,dmesg.log,console.log,console.attempt*.log,cmd,env,accel,boot-retries}
echo "$accel_why" > "$outdir/accel"

printf '%s\n' "$*" > "$outdir/cmd"
{
	printf 'MRC_CWD=%q\n' "$PWD"
	[ "$load" = 1 ] && printf 'MRC_KO=%q\n' "${MRC_KO:-$repo/net/mrc/mrc.ko}"
	printf 'MRC_MODPARAMS=%q\n' "${MRC_MODPARAMS:-}"
	# Pass the test environment through (names starting with MRC_ or KSFT_).
	env | grep -E '^(MRC_|KSFT_)[A-Z0-9_]*=' | grep -Ev '^MRC_(CWD|KO|MODPARAMS)=' |
		while IFS='=' read -r k v; do printf '%s=%q\nexport %s\n' "$k" "$v" "$k"; done
} > "$outdir/env"

marker='mrc-vm: command start'
boot_timeout=${MRC_BOOT_TIMEOUT:-240}
[ "$boot_timeout" -le "$timeout" ] || boot_timeout=$timeout
qpid=
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null; exit 130' INT TERM

# boot: one qemu run; sets qrc and boot_hung (no marker by boot_timeout).
boot() {
	local t0=$SECONDS
	boot_hung=0
	timeout -k 5 "$timeout" qemu-system-x86_64 "${accel_args[@]}" \
		-M pc -smp "$cpus" -m "$mem" -nodefaults -no-user-config -display none \
		-no-reboot -kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=7 panic=-1 mitigations=off nokaslr mrcinit=$here/guest-init.sh$debug_args${MRC_KCMDLINE:+ $MRC_KCMDLINE}" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$outdir",mount_tag=mrcout,security_model=none,multidevs=remap \
		-serial file:"$outdir/console.log" -serial stdio -nic none \
		< /dev/null &
	qpid=$!
	while [ ! -f "$outdir/started" ] && kill -0 "$qpid" 2>/dev/null; do
		if [ $((SECONDS - t0)) -ge "$boot_timeout" ]; then
			boot_hung=1
			kill "$qpid" 2>/dev/null
			break
		fi
		sleep 0.5
	done
	wait "$qpid"
	qrc=$?
	qpid=
}

# pre_splat: the part of console.log before the command-start marker (all
# of it when the guest never got there) has a splat.
pre_splat() {
	awk -v m="$marker" 'index($0, m) { exit } { print }' "$outdir/console.log" 2>/dev/null |
		grep -Eq -f "$here/splat-patterns"
}

retries=${MRC_BOOT_RETRIES:-2}
attempt=1
while :; do
	rm -f "$outdir"/{status,started,dmesg.log,console.log}
	echo "$attempt" > "$outdir/attempt"
	boot
	why=
	if [ ! -f "$outdir/started" ]; then
		if [ "$boot_hung" = 1 ]; then
			why="no command start after ${boot_timeout}s"
		else
			why="qemu rc=$qrc before the command started"
		fi
		pre_splat && why="$why, splat: $(grep -E -m1 -f "$here/splat-patterns" "$outdir/console.log")"
	elif pre_splat; then
		why="splat before the command started: $(awk -v m="$marker" 'index($0, m) { exit } { print }' \
			"$outdir/console.log" | grep -E -m1 -f "$here/splat-patterns")"
	fi
	[ -n "$why" ] && [ "$attempt" -le "$retries" ] || break
	mv "$outdir/console.log" "$outdir/console.attempt$attempt.log" 2>/dev/null
	echo "run-vm: BOOT DEATH (attempt $attempt, not a test result): $why; console kept as console.attempt$attempt.log; booting again" >&2
	attempt=$((attempt + 1))
done
echo $((attempt - 1)) > "$outdir/boot-retries"
[ "$attempt" -gt 1 ] && echo "run-vm: boot retries: $((attempt - 1))" >&2
[ -n "$why" ] && echo "run-vm: guest failed before the command started on every attempt: $why" >&2

rc=0
if [ "$boot_hung" = 1 ]; then
	echo "run-vm: TIMEOUT: guest killed, no command start after ${boot_timeout}s" >&2
	rc=124
elif [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
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
