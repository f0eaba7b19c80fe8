# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Section "rrtrace" of tools/bench/guest.sh (not run by default): where a
# 64 KiB exchange's time goes, MRC against TCP, on the clean fabric.  One
# connection of each makes MRC_BENCH_RRTRACE_N exchanges (after mrc_rr's 10
# warm-up ones) while ftrace records the sockets' sendmsg and recvmsg
# (kprobes: entry, and return with the bytes), every data transmission of
# over 1000 bytes on every device (net_dev_start_xmit) and the wakeups.
# tools/bench/rrtrace.awk splits each steady-state half exchange (one side's
# sendmsg of the 64 KiB message until the other side has read all of it)
# into its phases: raw/rrtrace_phases.txt; the trace is raw/rrtrace.txt.
# Sourced by guest.sh after the two-host fabric is up, every spine clean.
RRTRACE_N=${MRC_BENCH_RRTRACE_N:-60}
RRTRACE_WARM=10
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs tracefs $T 2> /dev/null
log "rrtrace: $RRTRACE_N exchanges of 64 KiB, MRC and TCP, traced"
if [ ! -e $T/kprobe_events ]; then
	log "  no tracefs with kprobes: section skipped"
else
	ip netns exec $NS_B "$RR" -l -p 7110 > /dev/null 2>&1 &
	l1=$!
	ip netns exec $NS_B "$RR" -l -p 7111 -T > /dev/null 2>&1 &
	l2=$!
	sleep 1
	# buffer_size_kb reads "7 (expanded: 1408)" before its first use
	on=$(cat $T/tracing_on)
	kb=$(sed 's/.*expanded: \([0-9]*\).*/\1/; s/ .*//' $T/buffer_size_kb)
	echo 0 > $T/tracing_on
	: > $T/trace
	# the line layout rrtrace.awk reads: comm-pid [cpu] flags time: event:
	echo 0 > $T/options/record-tgid
	echo 1 > $T/options/irq-info
	for f in mrc_sendmsg mrc_recvmsg tcp_sendmsg tcp_recvmsg; do
		echo "p:$f $f" >> $T/kprobe_events
		echo "r:${f}_r $f ret=\$retval:s32" >> $T/kprobe_events
	done
	for f in mrc_sendmsg mrc_recvmsg tcp_sendmsg tcp_recvmsg; do
		echo 1 > $T/events/kprobes/$f/enable
		echo 1 > $T/events/kprobes/${f}_r/enable
	done
	echo 'len > 1000' > $T/events/net/net_dev_start_xmit/filter
	echo 1 > $T/events/net/net_dev_start_xmit/enable
	echo 1 > $T/events/sched/sched_wakeup/enable
	echo 16384 > $T/buffer_size_kb
	echo 1 > $T/tracing_on
	ip netns exec $NS_A "$RR" -c $B4 -p 7110 -s 65536 -n "$RRTRACE_N" -w $RRTRACE_WARM \
		-r "$OUT/rrtrace_mrc.txt" > "$TMPD/rrtrace_mrc"
	ip netns exec $NS_A "$RR" -c $B4 -p 7111 -T -s 65536 -n "$RRTRACE_N" -w $RRTRACE_WARM \
		-r "$OUT/rrtrace_tcp.txt" > "$TMPD/rrtrace_tcp"
	echo 0 > $T/tracing_on
	grep -v '^#' $T/trace > "$OUT/rrtrace.txt"
	# events the buffer lost: the warm-up's first, which the awk times
	lost=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' $T/per_cpu/cpu*/stats)
	echo 0 > $T/events/enable
	echo 0 > $T/events/net/net_dev_start_xmit/filter
	for f in mrc_sendmsg mrc_recvmsg tcp_sendmsg tcp_recvmsg; do
		echo 0 > $T/events/kprobes/$f/enable
		echo 0 > $T/events/kprobes/${f}_r/enable
	done
	echo > $T/kprobe_events
	: > $T/trace
	echo "$kb" > $T/buffer_size_kb
	echo "$on" > $T/tracing_on
	kill $l1 $l2 2> /dev/null
	{
		echo "# mrc: $(cat "$TMPD/rrtrace_mrc")"
		echo "# tcp: $(cat "$TMPD/rrtrace_tcp")"
		[ "$lost" = 0 ] || echo "# the trace buffer overran: $lost events lost"
		awk -v warm=$RRTRACE_WARM -f "$repo/tools/bench/rrtrace.awk" "$OUT/rrtrace.txt"
	} > "$OUT/rrtrace_phases.txt"
	while read -r line; do log "  $line"; done < "$OUT/rrtrace_phases.txt"
fi
