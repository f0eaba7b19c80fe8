#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs every kselftest of selftests/mrc in its own VM (a fresh kernel each,
# so a splat is pinned on the test that caused it).  Prints the TAP of each
# and writes the counts to results/selftest/counts.
# Usage: selftest.sh [TEST...]
# Counted strictly (tap-count.awk -v strict=1): a result the plan announced
# and that never came fails, and so does a skip, but for one that depends
# on the machine (tap_skip_env); a suite that exits 4 (kselftest's SKIP)
# for any other reason, such as a fabric it could not build, fails.
# MRC_RUN_VM=SCRIPT stands in for run-vm.sh (harness-selftest.sh).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
results=${RESULTS:-$repo/results}/selftest
dir=$repo/selftests/mrc
mkdir -p "$results"
timeout=$(sed -n 's/^timeout=//p' "$dir/settings")

if [ $# -gt 0 ]; then
	tests=("$@")
else
	read -ra tests <<< "$(make -s -C "$dir" -f - print <<-'EOF2'
	include Makefile
	print: ; @echo $(TEST_GEN_PROGS) $(TEST_PROGS)
	EOF2
	)"
fi

# The clock test knob (test_clock_start_us, net/mrc/af_mrc.c): transfer_test
# and multipath.sh run again with MRC's clock started shortly before 2^31
# and 2^32 us, so the wrap happens mid-test and each run spends time on
# both sides of it.  Named TEST@clock31 and TEST@clock32, each counted as a
# test of its own.  The knob also zeroes every connection's timestamp
# offset, so the wire's tsval is that clock and wraps with it.
# clock-wrap.sh starts the test a lead before the wrap (waiting for it
# when the boot was quicker than the margin) and asserts that the clock
# crossed 2^31 or 2^32 us while connections were open: multipath.sh
# (minutes) 20 s before it crosses inside itself; transfer_test (0.5-6 s
# under TCG) 0.6 s before it, from a margin of 10 s, beside a verified
# transfer (-x) that stays in flight until the clock has crossed, however
# quick the test was.  multipath.sh's margin is 120 s: it runs under
# -icount, where the guest's clock skips what the host makes it wait
# (sleep=off), so the wait costs nothing, and a margin of 20 s (no wait
# at all) was eaten once: 27.6 s of guest time passed between mrc.ko's
# load and clock-wrap.sh's first read, against 0.3-1.5 s in other runs,
# and the test started past the wrap.
clock_margin() {	# ENTRY: "MARGIN_US LEAD_US"
	case $1 in
	multipath.sh@*) echo 120000000 20000000 ;;
	*) echo 10000000 600000 ;;
	esac
}
clock_cmd() {	# ENTRY: the command the VM runs for it
	local lead xfer=()
	case $1 in
	*@clock3[12])
		read -r _ lead <<< "$(clock_margin "$1")"
		[ "${1%@*}" = multipath.sh ] || xfer=(-x 7093)
		printf 'bash %q %s %s %s ./%s' "$repo/tools/testing/clock-wrap.sh" "${xfer[*]}" \
			"${1##*@clock}" "$lead" "${1%@*}" ;;
	*) echo "./${1%@*}" ;;
	esac
}
clock_params() {	# ENTRY: the insmod parameters it adds
	local margin_us
	read -r margin_us _ <<< "$(clock_margin "$1")"
	case $1 in
	*@clock31) echo "test_clock_start_us=$(((1 << 31) - margin_us))" ;;
	*@clock32) echo "test_clock_start_us=$(((1 << 32) - margin_us))" ;;
	esac
}
if [ $# -eq 0 ]; then
	for t in transfer_test multipath.sh; do tests+=("$t@clock31" "$t@clock32"); done
fi

# Each suite runs once, on the kernel that suits it: the ones that assert
# behaviour only and drive the datapath on the debug kernel (KASAN,
# lockdep, kmemleak... watch them), the others, those that time failover
# gaps and rates among them, and the clock-wrap runs on Debian's
# production kernel.  A suite joins the debug list once it has passed
# there (issue 33 wants every behaviour suite on it).
# MRC_DEBUG_SUITES replaces the list ("" runs everything on production).
debug_suites=${MRC_DEBUG_SUITES-transfer_test crafted_peer.sh evtrace.sh}
if [ $# -eq 0 ]; then
	for i in "${!tests[@]}"; do
		for d in $debug_suites; do
			[ "${tests[$i]}" = "$d" ] && tests[i]=$d@debug
		done
	done
fi

# NAME@debug runs NAME on the debug guest kernel (KASAN, KFENCE, lockdep,
# kmemleak, DEBUG_NET...: tools/testing/vm/debug-kernel.sh, built once and
# cached); the others on Debian's production kernel.  The kernel is asked
# for when the first such entry comes (kernel_of), so that make check can
# build it beside the -icount suites, which run first.  An entry whose
# kernel did not build fails.
debug_kernel=
# The suites that time failovers (gaps, goodput during and after a
# failure) run, with their clock-wrap variants, under TCG's -icount on one
# vCPU: the guest's clock counts the instructions it executes and skips
# its idle spans (sleep=off), so a host that stalls the emulator stretches
# no gap; there their timed cases assert what the feature promises, and
# elsewhere they report n/a.  One vCPU, as two under -icount take turns on
# one host thread and each sees the other's turn as 20-50 ms gaps; shift=1
# (2 ns an instruction) so the guest's CPU, not its links, is seldom the
# limit.  MRC_ICOUNT_SUITES replaces the list ("" runs them all without).
icount_suites=${MRC_ICOUNT_SUITES-planes.sh multipath.sh nccl.sh}
icount_of() {	# ENTRY: the MRC_ICOUNT it runs under ("" for none)
	local s
	case $1 in *@debug) return ;; esac
	for s in $icount_suites; do
		[ "${1%@*}" = "$s" ] && echo "shift=1,sleep=off"
	done
}
kernel_of() {	# ENTRY: the MRC_DEBUG_KERNEL it runs under ("" for production)
	case $1 in *@debug) echo "$debug_kernel" ;; esac
}
# Without arguments the -icount suites go first, then the debug kernel's,
# then the rest: under -icount a suite runs on one host thread and its
# clock counts instructions, so make check builds the debug kernel on the
# other core meanwhile (check.sh), and no suite without that guarantee
# ever runs beside the build.
if [ $# -eq 0 ]; then
	first=() second=() rest=()
	for t in "${tests[@]}"; do
		if [ -n "$(icount_of "$t")" ]; then first+=("$t")
		elif [ "${t%@debug}" != "$t" ]; then second+=("$t")
		else rest+=("$t")
		fi
	done
	tests=("${first[@]}" "${second[@]}" "${rest[@]}")
fi
# the hang guard: KASAN, lockdep and kmemleak make a guest two to three
# times slower under TCG (crafted_peer.sh: 10 min against 4)
timeout_of() {	# ENTRY
	case $1 in *@debug) echo $((timeout * 3)) ;; *) echo "$timeout" ;; esac
}

# emulator_fault DIR: prints the EFLAGS of a register dump in DIR's guest
# log that no x86 CPU can hold (a reserved bit set: 3, 5, 15, 22-63; or
# bit 1, always 1, clear), and succeeds if there is one.  The CPU itself
# pushes EFLAGS on an exception, so such a dump shows the emulator's own
# state corrupted, not the kernel's: one fresh-clone make check died in
# planes.sh on a NULL pointer read back from a stack slot just written,
# under fork (mas_wr_store_type+0x4), with EFLAGS 07742646.
emulator_fault() {
	local f
	for f in $(sed -n 's/.* EFLAGS: \([0-9a-f]\{8,16\}\).*/\1/p' "$1/console.log" 2>/dev/null); do
		if (( (16#$f & ~0x3f7fd7) != 0 || (16#$f & 2) == 0 )); then
			echo "$f"
			return 0
		fi
	done
	return 1
}

pass=0 fail=0 skip=0 boots=0 faults=0
rm -f "$results/failures"
for t in "${tests[@]}"; do
	tries=0
	while :; do
		out=$results/$t
		mkdir -p "$out"
		icount=$(icount_of "$t")
		if [ "${t%@debug}" != "$t" ] && [ -z "$debug_kernel" ]; then
			debug_kernel=$(bash "$repo/tools/testing/vm/debug-kernel.sh") || debug_kernel=none
		fi
		echo "# selftest: $t${icount:+ (-icount $icount, 1 vCPU)}"
		(cd "$dir" && export MRC_DEBUG_KERNEL="$(kernel_of "$t")" &&
		 { [ "$MRC_DEBUG_KERNEL" != none ] || { echo "# the debug kernel did not build"; false; }; } &&
		 if [ -n "$icount" ]; then export MRC_ICOUNT=$icount; cpus=(-c 1); else cpus=(); fi &&
		 MRC_MODPARAMS="${MRC_MODPARAMS:-} $(clock_params "$t")" \
			bash "${MRC_RUN_VM:-$repo/tools/testing/vm/run-vm.sh}" -o "$out" -t "$(timeout_of "$t")" \
				"${cpus[@]}" "$(clock_cmd "$t")") \
			2>&1 | tee "$out/tap.log"
		rc=${PIPESTATUS[0]}
		read -r p f s <<< "$(awk -v strict=1 -f "$repo/tools/testing/tap-count.awk" "$out/tap.log" \
			2> "$out/tap-count.err")"
		cat "$out/tap-count.err"
		# a crash, a splat or a timeout fails the test even if its cases passed;
		# so does exit 4 (SKIP), unless every case was a skip of the machine's
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] &&
		   ! { [ "$rc" -eq 4 ] && [ "$p" -eq 0 ] && [ "$s" -gt 0 ]; }; then
			f=1
		fi
		# boots that died before the test started and were retried (run-vm.sh)
		b=$(cat "$out/boot-retries" 2>/dev/null || echo 0)
		echo "# selftest $t: rc=$rc passed=$p failed=$f skipped=$s boot-retries=$b"
		# A run the emulator broke runs once more; its folder is kept beside.
		if [ "$f" -ne 0 ] && [ "$tries" -eq 0 ] && eflags=$(emulator_fault "$out"); then
			echo "# selftest $t: EMULATOR FAULT (a register dump with EFLAGS $eflags, which no CPU can hold), not a test result; kept in $t.emulator-fault, running it again"
			rm -rf "$out.emulator-fault"
			mv "$out" "$out.emulator-fault"
			tries=1 faults=$((faults + 1)) boots=$((boots + b))
			continue
		fi
		# what failed, with the lines just before each "not ok" (a case's figures),
		# kept for the end of the log, where CI shows only the tail
		if [ "$f" -ne 0 ]; then
			{
				echo "# FAILED $t (rc=$rc):"
				awk '{ sub(/^\[ *[0-9.]+\] /, ""); sub(/\r$/, "") }
				     /^ *not ok [0-9]/ { for (i = n - 3; i < n; i++) if (i >= 0) print "#   " l[i % 3]
							print "#   " $0 }
				     { l[n++ % 3] = $0 }' "$out/tap.log" | tail -n 40
				sed 's/^/#   /' "$out/tap-count.err"
				[ "$rc" -ne 0 ] && tail -n 3 "$out/tap.log" |
					sed 's/^\[ *[0-9.]*\] //; s/\r$//; s/^/#   /'
				# the first splat's decisive lines (the fault, where, the flags
				# and the callers), which the tail above cuts off
				awk '{ sub(/^\[ *[0-9.]+\] /, ""); sub(/\r$/, "") }
				     !on && /^(BUG:|WARNING: CPU|Oops|Kernel panic|.*general protection fault|=+$)/ { on = 1 }
				     on && /BUG|WARNING|Oops|panic|protection|#PF|RIP:|EFLAGS|CR2|^ *\?? *[a-z_][a-z_0-9.]*\+0x/ {
					print "#   splat: " $0; if (++k == 30) exit }' "$out/console.log" 2>/dev/null
			} >> "$results/failures"
		fi
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s)) boots=$((boots + b))
		break
	done
done
echo "$pass $fail $skip" > "$results/counts"
echo "$boots" > "$results/boot-retries"
echo "$faults" > "$results/emulator-faults"
echo "# selftests: $pass passed, $fail failed, $skip skipped; VM boots retried after a death before the test: $boots; suites run again after an emulator fault: $faults"
[ "$fail" -eq 0 ]
