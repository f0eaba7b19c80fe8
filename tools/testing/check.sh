#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make check`: build, lint, the harness's and the simulator's smoke tests,
# the debug guest kernel (built once, cached) and KUnit inside it, the VM
# runner's own selftest and the kselftests in the VM, each suite on the
# kernel that suits it (selftest.sh).  Every KUnit case and selftest case
# is counted; ends with one line "N passed, N failed, N skipped".
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
export RESULTS=${RESULTS:-$repo/results}
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
pass=0 fail=0 skip=0
failed_stages=()

add_counts() {	# STAGE FILE RC
	local p=0 f=0 s=0
	[ -f "$2" ] && read -r p f s < "$2"
	if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	[ "$f" -eq 0 ] || failed_stages+=("$1")
	echo "### $1: $p passed, $f failed, $s skipped ($(date +%T))"
}

stage() {	# NAME COMMAND...: a stage that counts as one test
	local name=$1 rc
	shift
	echo "### $name: $* ($(date +%T))"
	"$@"
	rc=$?
	if [ $rc -eq 0 ]; then echo "1 0 0"; else echo "0 1 0"; fi > "$RESULTS/$name.counts"
	add_counts "$name" "$RESULTS/$name.counts" 0
	return $rc
}

start=$(date +%s)
if stage build make all; then
	# The debug guest kernel (cached by its configuration; 20-25 min on a
	# fresh 2-core machine) builds in the background, niced, while the
	# host stages and the -icount suites run: those take one host thread
	# each and their clocks count instructions, so the other core is the
	# build's and no timing moves.  selftest.sh runs them first, and waits
	# for the kernel (its lock) before the first suite that needs it.
	echo "### debug-kernel: building in the background ($(date +%T))"
	nice -n 19 bash tools/testing/vm/debug-kernel.sh --kernel-only \
		> "$RESULTS/debug-kernel.log" 2>&1 &
	debug_pid=$!
	stage regen bash tools/regen.sh --check
	stage lint bash tools/lint.sh
	stage preload-host bash tools/testing/preload-host.sh
	stage mrcctl-host bash tools/testing/mrcctl-host.sh
	stage wireshark-host bash selftests/mrc/wireshark.sh --crafted
	stage harness bash tools/testing/harness-selftest.sh
	stage sim-smoke make -C sim smoke
	echo "### selftests in the VM ($(date +%T))"
	bash tools/testing/selftest.sh
	add_counts selftest "$RESULTS/selftest/counts" $?
	# the background build's verdict, and its time when it built
	stage debug-kernel wait "$debug_pid"
	grep -h '^debug-kernel: built' "$RESULTS/debug-kernel.log"
	echo "### kunit in the debug kernel ($(date +%T))"
	bash tools/testing/kunit.sh
	add_counts kunit "$RESULTS/kunit/counts" $?
	echo "### vm runner selftest ($(date +%T))"
	bash tools/testing/vm/selftest.sh | tee "$RESULTS/vm-selftest.tap"
	rc=${PIPESTATUS[0]}
	awk -v strict=1 -f tools/testing/tap-count.awk "$RESULTS/vm-selftest.tap" > "$RESULTS/vm-selftest.counts"
	add_counts vm-selftest "$RESULTS/vm-selftest.counts" "$rc"
fi
# boots that died before their test started (emulator faults, retried by
# run-vm.sh; each attempt's console is kept as console.attemptN.log)
[ -f "$RESULTS/selftest/boot-retries" ] &&
	echo "### VM boot deaths retried in the selftests: $(cat "$RESULTS/selftest/boot-retries")"
echo "### make check took $(( $(date +%s) - start )) s"
[ ${#failed_stages[@]} -eq 0 ] || echo "### failed: ${failed_stages[*]}"
# the failed selftests' own lines last: CI keeps only the log's tail
[ -s "$RESULTS/selftest/failures" ] && cat "$RESULTS/selftest/failures"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
