#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Issue 33's proof that the timed suites cannot fail on a busy host:
# planes.sh and multipath.sh, MRC_LOOPS (20) times in a row, each under
# -icount on one vCPU as make check runs them (selftest.sh), while another
# VM keeps the machine's other core busy: debug-loops.sh (the demo,
# collective.sh and multipath.sh on the debug kernel), itself a make stress
# run.  Each run keeps its folder results/timed-loops/RUN (selftest.sh's
# TAP and consoles); results/timed-loops/summary.txt has a line a run with
# planes.sh's and multipath.sh's counts, then the busy VM's own summary;
# the busy VM's loops run to their end (hours: a demo on the debug kernel
# takes 30 minutes), and their failures fail this too.
# Usage: timed-loops.sh   (MRC_TIMED_BUSY=0: no VM beside)
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${RESULTS:-$repo/results}/timed-loops
n=${MRC_LOOPS:-20}
mkdir -p "$out"
summary=$out/summary.txt
echo "# run planes.sh(p/f/s) multipath.sh(p/f/s) secs" > "$summary"

busy=
if [ "${MRC_TIMED_BUSY:-1}" != 0 ]; then
	# its own process group, so that an interrupt stops it and its VMs
	setsid bash "$repo/tools/testing/debug-loops.sh" > "$out/busy.log" 2>&1 &
	busy=$!
fi
stop_busy() {
	[ -n "$busy" ] || return 0
	kill -- -"$busy" 2> /dev/null
	wait "$busy" 2> /dev/null
	busy=
}
trap 'stop_busy; exit 130' INT TERM

fails=0
for i in $(seq 1 "$n"); do
	t0=$SECONDS
	RESULTS=$out/$i bash "$repo/tools/testing/selftest.sh" planes.sh multipath.sh \
		> "$out/$i.log" 2>&1
	rc=$?
	line="$i"
	for s in planes.sh multipath.sh; do
		c=$(sed -n "s/^# selftest $s: rc=[0-9]* passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\).*/\1\/\2\/\3/p" \
			"$out/$i.log")
		line="$line ${c:-none}"
	done
	[ "$rc" -eq 0 ] || fails=$((fails + 1))
	echo "$line $((SECONDS - t0))${busy:+ busy=$(kill -0 "$busy" 2> /dev/null && echo yes || echo no)}" |
		tee -a "$summary"
	[ "$rc" -eq 0 ] || sed 's/^/#   /' "$out/$i/selftest/failures" >> "$summary" 2> /dev/null
done
echo "# timed-loops: $n runs, $fails failed" | tee -a "$summary"
# the busy VM's loops are make stress's own: they run to their end
if [ -n "$busy" ]; then
	wait "$busy"
	busy_rc=$?
	busy=
	[ "$busy_rc" -eq 0 ] || fails=$((fails + 1))
fi
busy_sum=${RESULTS:-$repo/results}/debug-loops/summary.txt
[ -f "$busy_sum" ] && sed 's/^/# busy VM: /' "$busy_sum" >> "$summary"
[ "$fails" -eq 0 ]
