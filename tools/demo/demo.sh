#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make demo`: boots the VM with the freshly built module and runs
# tools/demo/guest.sh there (its output streams here live).  Everything it
# prints and the raw per-100 ms delivery ticks land in results/demo/.
# Knobs (environment): MRC_DEMO_RATE_MBIT (8, each spine), MRC_DEMO_SECS (24),
# MRC_DEMO_FAIL_AT (8), MRC_DEMO_HEAL_AT (16), MRC_DEMO_SPINE (2),
# MRC_DEMO_COLL_SECS (12: the all-reduce segment).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${MRC_DEMO_RESULTS:-$repo/results/demo}
rm -rf "$out"
mkdir -p "$out"
cd "$repo/selftests/mrc" || exit 1
echo "demo: booting the VM (qemu; about 20 s), results in $out"
bash "$repo/tools/testing/vm/run-vm.sh" -o "$out" -t "${MRC_DEMO_TIMEOUT:-600}" \
	"bash $repo/tools/demo/guest.sh" 2>&1 | tee "$out/demo.log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || echo "demo: the VM run failed (rc=$rc); guest log: $out/console.log"
exit "$rc"
