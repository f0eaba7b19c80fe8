#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make bench`: runs tools/bench/guest.sh in the VM (raw results into
# results/bench/raw), then on the host turns them into results/bench/
# bench.json, table.txt and *.png (tools/bench/report.py, matplotlib).
# Knobs (environment): MRC_BENCH_REPS (3), MRC_BENCH_RATE_MBIT (8, each
# spine), MRC_BENCH_RR_N1 / MRC_BENCH_RR_N64 (requests per run),
# MRC_BENCH_RR_LOSS (spine 1's loss there, 1%; 0: a clean fabric),
# MRC_BENCH_ONLY ("agg fo rr cost4 cost prof coll planes"; also rrtrace,
# tools/bench/guest_rrtrace.sh), MRC_BENCH_RRTRACE_N (60),
# MRC_BENCH_PLANES_* (tools/bench/guest_planes.sh),
# MRC_BENCH_COLL_* (tools/bench/guest_coll.sh), MRC_BENCH_RESULTS (results/bench).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${MRC_BENCH_RESULTS:-$repo/results/bench}
rm -rf "$out"
mkdir -p "$out/raw"
cd "$repo/selftests/mrc" || exit 1
echo "bench: running in the VM (about 30 minutes), raw results in $out/raw"
bash "$repo/tools/testing/vm/run-vm.sh" -o "$out/raw" -t "${MRC_BENCH_TIMEOUT:-3600}" \
	"bash $repo/tools/bench/guest.sh" 2>&1 | tee "$out/bench.log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "bench: the VM run failed (rc=$rc); guest log: $out/raw/console.log"
	exit "$rc"
fi
# Debian's python3 (with python3-matplotlib), not a python3 earlier in PATH
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$repo/tools/bench/report.py" "$out/raw" "$out"
