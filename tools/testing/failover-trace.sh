#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In the VM: multipath.sh's spine failover (MP_FAILOVER_RUNS=1) PROBE_RUNS
# times with MRC's loss, retirement, re-admission and window tracepoints on.
# Each run leaves mp.N (the test's output: failure times on the receiver's
# clock and its goodput per 100 ms) and trace.N (with a SYNC marker giving
# the wall clock) in /mrc-out; failover-trace.py lines them up.  With
# PROBE_PERF=1 each run is also sampled by perf (perf.N.gz, on the wall
# clock), and failover-trace.py --perf shows where the guest's CPU went in
# each phase: which processes, which functions.
#   cd selftests/mrc && bash ../../tools/testing/vm/run-vm.sh -o OUT -t 900 \
#	'PROBE_RUNS=6 bash ../../tools/testing/failover-trace.sh'
#   python3 tools/testing/failover-trace.py OUT
cd "$(dirname "$0")/../../selftests/mrc" || exit 1
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
modprobe mrc 2>/dev/null || insmod ../../net/mrc/mrc.ko
echo 32768 > $T/buffer_size_kb
for e in mrc_loss mrc_ev_retire mrc_ev_readmit mrc_cwnd; do
	echo 1 > $T/events/mrc/$e/enable || exit 1
done
echo 1 > $T/tracing_on
for run in $(seq 1 "${PROBE_RUNS:-4}"); do
	echo > $T/trace
	echo "SYNC $EPOCHREALTIME" > $T/trace_marker
	if [ -n "${PROBE_PERF:-}" ]; then
		# 1 kHz per CPU: 4 kHz halved the emulated guest's goodput
		perf record -q -a -e cpu-clock -c 1000000 -k CLOCK_REALTIME -o /tmp/perf.data -- \
			env MP_FAILOVER_RUNS=1 ./multipath.sh > "/mrc-out/mp.$run" 2>&1
		perf script -i /tmp/perf.data -F comm,cpu,time,ip,sym 2>/dev/null |
			gzip > "/mrc-out/perf.$run.gz"
	else
		MP_FAILOVER_RUNS=1 ./multipath.sh > "/mrc-out/mp.$run" 2>&1
	fi
	cat $T/trace > "/mrc-out/trace.$run"
	grep -h "goodput per" "/mrc-out/mp.$run"
done
