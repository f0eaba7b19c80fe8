#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs MRC's KUnit suites inside the debug guest kernel (KASAN, KFENCE,
# lockdep, kmemleak, UBSAN, DEBUG_NET: tools/testing/vm/debug.config),
# built by tools/testing/vm/debug-kernel.sh from linux-source-6.12 and cached
# in $MRC_CACHE.  The suites are modules of that kernel, loaded after mrc.ko
# in the VM (tools/testing/kunit-guest.sh); their KTAP is counted, and any
# splat or unreferenced object in the guest log fails the run (run-vm.sh).
# Writes RESULTS/kunit/counts ("passed failed skipped").
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
results=${RESULTS:-$repo/results}/kunit
mkdir -p "$results"
echo "0 1 0" > "$results/counts"
dk=$(bash "$repo/tools/testing/vm/debug-kernel.sh") || {
	echo "kunit: the debug kernel or mrc against it did not build" >&2
	exit 1
}
cd "$repo/tools/testing" || exit 1
MRC_DEBUG_KERNEL=$dk bash vm/run-vm.sh -o "$results" -t 900 ./kunit-guest.sh |
	tee "$results/tap.log"
rc=${PIPESTATUS[0]}
awk -f tap-count.awk "$results/tap.log" > "$results/counts"
read -r passed failed skipped < "$results/counts"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "$passed 1 $skipped" > "$results/counts"
fi
cat "$results/counts"
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
	echo "kunit: FAILED (rc=$rc; guest log $results/console.log)" >&2
	exit 1
fi
