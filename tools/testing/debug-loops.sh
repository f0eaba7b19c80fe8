#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make stress`'s hunt for the unexplained guest crashes (issue 33): the
# demo, collective.sh and multipath.sh, MRC_LOOPS (20) times each, on the
# debug guest kernel (KASAN, KFENCE, lockdep, kmemleak...), every console kept
# in results/debug-loops/CASE/RUN.  A run fails on its own exit status or on
# any splat in its guest log (run-vm.sh); results/debug-loops/summary.txt
# counts, per case, runs, failures and splats with the first line of each.
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
timeout=$(sed -n 's/^timeout=//p' "$repo/selftests/mrc/settings")
summary=$out/summary.txt
: > "$summary"
bad=0
for c in "${cases[@]}"; do
	fails=0 splats=0
	for i in $(seq 1 "$n"); do
		d=$out/$c/$i
		mkdir -p "$d"
		if [ "$c" = demo ]; then
			MRC_DEMO_RESULTS=$d bash "$repo/tools/demo/demo.sh" > "$d/out.log" 2>&1
		else
			(cd "$repo/selftests/mrc" &&
			 bash "$repo/tools/testing/vm/run-vm.sh" -o "$d" -t "$timeout" "./$c") \
				> "$d/out.log" 2>&1
		fi
		rc=$?
		splat=$(grep -E -m1 -h -f "$repo/tools/testing/vm/splat-patterns" \
			"$d"/console*.log 2>/dev/null)
		[ -n "$splat" ] && { splats=$((splats + 1)); echo "$c run $i: $splat" >> "$summary"; }
		[ "$rc" -eq 0 ] || fails=$((fails + 1))
		echo "# debug-loops: $c run $i/$n: rc=$rc${splat:+ splat: $splat}"
	done
	echo "$c: $n runs, $fails failed, $splats with a splat" | tee -a "$summary"
	[ "$fails" -eq 0 ] && [ "$splats" -eq 0 ] || bad=1
done
exit "$bad"
