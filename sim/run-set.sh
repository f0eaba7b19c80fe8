#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make sim`: builds sim/, runs the 1,024-host set and the small-topology
# calibration against the kernel bench, two runs at a time (nice 10), then
# writes results/sim/{table.txt,summary.json,*.png}.
#   SIM_SET=large bash sim/run-set.sh    the 8,192-host runs instead
#   SIM_JOBS (2)                          runs in parallel
#   SIM_ONLY=REGEX                        only the runs whose name matches (the
#                                         others' JSON in the directory is kept)
#   SIM_FABRIC="--leaves=8 ..."            another fabric for the main set (a quick try)
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${SIM_OUT:-$repo/results/sim}
jobs=${SIM_JOBS:-2}
set_name=${SIM_SET:-1024}
mkdir -p "$out"
make -s -C "$repo/sim" -j"$jobs"
bin=$repo/sim/build/mrc-sim

# the 1,024-host fabric: 64 leaves x 16 hosts, 16 spines, every link
# 10 Gbit/s (non-blocking), 1 us per hop, 512 KiB per output queue, CE
# above 90 KiB, 9000-byte MTU
fab1024=${SIM_FABRIC:-"--hosts-per-leaf=16 --leaves=64 --spines=16 --host-gbps=10 --spine-gbps=10"}
fab8192="--hosts-per-leaf=16 --leaves=512 --spines=16 --host-gbps=10 --spine-gbps=10"
# the kernel bench's fabric (selftests/mrc/lib.sh, tools/bench): hosts a and
# b on two leaves, 4 spines each shaped to 8 Mbit/s by tbf (burst 32 KiB,
# latency 50 ms: about 82 KiB of queue, no ECN), 1424-byte segments
calib="--hosts-per-leaf=1 --leaves=2 --spines=4 --host-gbps=1 --spine-gbps=0.008 --delay-us=250
 --buffer-kb=82 --ecn-kb=1000000 --mtu=1500 --workload=bulk --bytes=1000000000 --tick-us=10000
 --bin-us=100000 --tcp-cc=TcpCubic --tcp-min-rto-us=200000"

runs=$(mktemp)
add() {	# NAME ARGS...
	local name=$1
	shift
	echo "$name $*" >> "$runs"
}
fail_at=3000
if [ "$set_name" = large ]; then
	for t in mrc mrc1 tcp; do
		add "large-permutation-$t" $fab8192 --transport=$t --workload=permutation --bytes=4000000
	done
	for t in mrc mrc1; do
		add "large-allreduce-down-$t" $fab8192 --transport=$t --workload=allreduce \
			--bytes=8000000 --fault=down --fault-at-us=$fail_at
	done
else
	for t in mrc mrc1 tcp; do
		add "permutation-$t" $fab1024 --transport=$t --workload=permutation --bytes=8000000
		add "allreduce-$t" $fab1024 --transport=$t --workload=allreduce --bytes=8000000
		add "allreduce-down-$t" $fab1024 --transport=$t --workload=allreduce --bytes=8000000 \
			--fault=down --fault-at-us=$fail_at
		add "allreduce-loss-$t" $fab1024 --transport=$t --workload=allreduce --bytes=8000000 \
			--fault=loss --loss=0.01
		add "allreduce-flap-$t" $fab1024 --transport=$t --workload=allreduce --bytes=8000000 \
			--fault=flap --fault-at-us=$fail_at --flap-period-us=2000
		add "incast-$t" $fab1024 --transport=$t --workload=incast --group=16 --bytes=1000000
		add "mix-$t" $fab1024 --transport=$t --workload=mix --bytes=8000000
	done
	for t in mrc tcp; do
		for seed in 1 2 3; do
			add "calib-agg-$t-$seed" $calib --transport=$t --stop-ms=6000 --seed=$seed
			add "calib-fo-$t-$seed" $calib --transport=$t --stop-ms=10000 --seed=$seed \
				--fault=busiest-spine-down --fault-at-us=3000000 --fault-end-us=7000000
		done
	done
fi
# the slowest first, so two lanes finish together
if [ -n "${SIM_ONLY:-}" ]; then
	awk -v re="$SIM_ONLY" '$1 ~ re' "$runs" > "$runs.only"
	mv "$runs.only" "$runs"
fi
sort -t- -k1,1 "$runs" | awk '{ print ($1 ~ /tcp/ ? 0 : 1), $0 }' | sort -s -k1,1n |
	cut -d' ' -f2- > "$runs.sorted"
echo "sim: $(wc -l < "$runs") runs, $jobs at a time, into $out"
start=$(date +%s)
# shellcheck disable=SC2016
xargs -r -P "$jobs" -L 1 bash -c 'name=$1; shift; s=$(date +%s.%N)
	nice -n 10 "'"$bin"'" "$@" --out="'"$out"'/$name.json" > "'"$out"'/$name.log" 2>&1 ||
		{ echo "sim: $name failed" >&2; exit 255; }
	printf "%-28s %6.1f s\n" "$name" "$(echo "$(date +%s.%N) - $s" | bc)"' _ < "$runs.sorted"
echo "sim: all runs took $(( $(date +%s) - start )) s"
rm -f "$runs" "$runs.sorted"
# Debian's python3 (with python3-matplotlib), not a python3 earlier in PATH
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$repo/sim/report.py" "$out"
