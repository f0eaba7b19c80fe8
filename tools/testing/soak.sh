#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Soak of the two runs that once failed with their consoles lost (issue 11):
# each case N times (SOAK_N, default 5), each run in its own VM and its own
# folder results/soak/CASE/RUN (console.log, console.attemptN.log of boots
# retried, tap.log), so a failure can be told apart: a boot death (retried
# by run-vm.sh before the command start), a kernel splat, or MRC's fault.
# Writes results/soak/summary.txt; exits 1 if any run failed.
# Usage: soak.sh [CASE...]   (cases: xfer6-netem rr-loss)
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
results=${RESULTS:-$repo/results}/soak
n=${SOAK_N:-5}
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(xfer6-netem rr-loss)
mkdir -p "$results"
sum=$results/summary.txt
echo "# case run rc boot-retries secs verdict" > "$sum"
fails=0 boots=0
for r in $(seq 1 "$n"); do
	for c in "${cases[@]}"; do
		out=$results/$c/$r
		mkdir -p "$out"
		t0=$SECONDS
		(cd "$repo/selftests/mrc" && bash "$repo/tools/testing/vm/run-vm.sh" -o "$out" \
			-t "${SOAK_TIMEOUT:-420}" "bash $repo/tools/testing/soak-guest.sh $c") \
			> "$out/tap.log" 2>&1
		rc=$?
		b=$(cat "$out/boot-retries" 2>/dev/null || echo 0)
		boots=$((boots + b))
		if [ $rc = 0 ]; then
			v=pass
		elif [ ! -f "$out/started" ]; then
			v="FAIL boot: never reached the command"
		elif grep -Eq -f "$repo/tools/testing/vm/splat-patterns" "$out/console.log"; then
			v="FAIL splat: $(grep -E -m1 -f "$repo/tools/testing/vm/splat-patterns" "$out/console.log")"
		elif [ $rc = 124 ]; then
			v="FAIL timeout after the command start, no splat"
		else
			v="FAIL test: $(grep -m1 '^not ok' "$out/tap.log")"
		fi
		[ $rc = 0 ] || fails=$((fails + 1))
		echo "$c $r $rc $b $((SECONDS - t0)) $v" | tee -a "$sum"
	done
done
echo "# soak: $((n * ${#cases[@]})) runs, $fails failed, $boots boots retried (consoles in $results)" | tee -a "$sum"
[ $fails = 0 ]
