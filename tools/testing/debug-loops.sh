#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make stress`'s hunt for the unexplained guest crashes (issue 33): the
# demo, collective.sh and multipath.sh, MRC_LOOPS (20) times each, on the
# debug guest kernel (KASAN, KFENCE, lockdep, kmemleak...), every console kept
# in results/debug-loops/CASE/RUN.  A run fails on its own exit status or on
# any splat in its guest log (run-vm.sh); results/debug-loops/summary.txt
# has a line a run (its status, the first line of any splat), then per case
# the runs, failures and splats.
# Usage: debug-loops.sh [CASE...]   (demo, collective.sh, multipath.sh)
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${RESULTS:-$repo/results}/debug-loops
n=${MRC_LOOPS:-20}
mkdir -p "$out"
dk=$(bash "$repo/tools/testing/vm/debug-kernel.sh") || exit 1
export MRC_DEBUG_KERNEL=$dk
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(demo collective.sh multipath.sh)
# selftest.sh's hang guard for the debug kernel: KASAN, lockdep and
# kmemleak make a guest two to three times slower under TCG
timeout=$(($(sed -n 's/^timeout=//p' "$repo/selftests/mrc/settings") * 3))
summary=$out/summary.txt
: > "$summary"
# run-major, so that a loop stopped early (timed-loops.sh stops its busy
# VM when its own runs end) has covered every case about equally
declare -A fails splats runs
for i in $(seq 1 "$n"); do
	for c in "${cases[@]}"; do
		d=$out/$c/$i
		mkdir -p "$d"
		if [ "$c" = demo ]; then
			# demo.sh empties its results folder: its own, inside
			MRC_DEMO_RESULTS=$d/demo MRC_DEMO_TIMEOUT=$timeout bash "$repo/tools/demo/demo.sh" > "$d/out.log" 2>&1
		else
			(cd "$repo/selftests/mrc" &&
			 bash "$repo/tools/testing/vm/run-vm.sh" -o "$d" -t "$timeout" "./$c") \
				> "$d/out.log" 2>&1
		fi
		rc=$?
		splat=$(grep -E -m1 -h -f "$repo/tools/testing/vm/splat-patterns" \
			"$d"/console*.log "$d"/demo/console*.log 2>/dev/null)
		runs[$c]=$((${runs[$c]:-0} + 1))
		[ -n "$splat" ] && splats[$c]=$((${splats[$c]:-0} + 1))
		[ "$rc" -eq 0 ] || fails[$c]=$((${fails[$c]:-0} + 1))
		echo "$c run $i: rc=$rc${splat:+ splat: $splat}" | tee -a "$summary"
	done
done
bad=0
for c in "${cases[@]}"; do
	echo "$c: ${runs[$c]} runs, ${fails[$c]:-0} failed, ${splats[$c]:-0} with a splat" |
		tee -a "$summary"
	[ "${fails[$c]:-0}" -eq 0 ] && [ "${splats[$c]:-0}" -eq 0 ] || bad=1
done
exit "$bad"
