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
	stage regen bash tools/regen.sh --check
	stage lint bash tools/lint.sh
	stage preload-host bash tools/testing/preload-host.sh
	stage mrcctl-host bash tools/testing/mrcctl-host.sh
	stage wireshark-host bash selftests/mrc/wireshark.sh --crafted
	stage harness bash tools/testing/harness-selftest.sh
	stage sim-smoke make -C sim smoke
	# the debug guest kernel (cached by its configuration): built as a
	# stage of its own so that its time shows
	stage debug-kernel bash tools/testing/vm/debug-kernel.sh --kernel-only
	echo "### kunit in the debug kernel ($(date +%T))"
	bash tools/testing/kunit.sh
	add_counts kunit "$RESULTS/kunit/counts" $?
	echo "### vm runner selftest ($(date +%T))"
	bash tools/testing/vm/selftest.sh | tee "$RESULTS/vm-selftest.tap"
	rc=${PIPESTATUS[0]}
	awk -v strict=1 -f tools/testing/tap-count.awk "$RESULTS/vm-selftest.tap" > "$RESULTS/vm-selftest.counts"
	add_counts vm-selftest "$RESULTS/vm-selftest.counts" "$rc"
	echo "### selftests in the VM ($(date +%T))"
	bash tools/testing/selftest.sh
	add_counts selftest "$RESULTS/selftest/counts" $?
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
