#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs every kselftest of selftests/mrc in its own VM (a fresh kernel each,
# so a splat is pinned on the test that caused it).  Prints the TAP of each
# and writes the counts to results/selftest/counts.
# Usage: selftest.sh [TEST...]
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

pass=0 fail=0 skip=0 boots=0
for t in "${tests[@]}"; do
	out=$results/$t
	mkdir -p "$out"
	echo "# selftest: $t"
	(cd "$dir" && bash "$repo/tools/testing/vm/run-vm.sh" -o "$out" -t "$timeout" "./$t") \
		2>&1 | tee "$out/tap.log"
	rc=${PIPESTATUS[0]}
	read -r p f s <<< "$(awk -f "$repo/tools/testing/tap-count.awk" "$out/tap.log")"
	# a crash, a splat or a timeout fails the test even if its cases passed
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	if [ "$rc" -eq 4 ] && [ "$p" -eq 0 ] && [ "$s" -eq 0 ]; then s=1; fi
	# boots that died before the test started and were retried (run-vm.sh)
	b=$(cat "$out/boot-retries" 2>/dev/null || echo 0)
	echo "# selftest $t: rc=$rc passed=$p failed=$f skipped=$s boot-retries=$b"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s)) boots=$((boots + b))
done
echo "$pass $fail $skip" > "$results/counts"
echo "$boots" > "$results/boot-retries"
echo "# selftests: $pass passed, $fail failed, $skip skipped; VM boots retried after a death before the test: $boots"
[ "$fail" -eq 0 ]
