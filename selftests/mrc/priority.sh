#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Priority and redundancy on the 4-spine fabric with one lossy spine: urgent
# SEQPACKET messages go out on two EVs at once (redundancy 2), the receiver
# drops the duplicates, and their latency does not suffer from the loss the
# way bulk messages' does.  With urgent-dscp set, urgent packets (only they)
# carry that DSCP in their outer header, for the fabric's priority queues.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; echo 1 > /sys/module/mrc/parameters/redundancy' EXIT
out=$(mktemp -d)

tap_plan 5
# namespaces take their initial settings from the module parameters
echo 2 > /sys/module/mrc/parameters/redundancy
fabric_up 4 || tap_setup_fail "cannot build the fabric"
fabric_shape 1 - - 20%
lossy=$?
# count b's arriving packets with DSCP 46 (EF): a clsact filter set before
# any traffic (mrc-keys holds the static keys), read after each run
"$MRCCTL" -n $NS_A config set urgent-dscp 46 || echo "# cannot set urgent-dscp"
tc -n $NS_B qdisc add dev eth0 clsact &&
tc -n $NS_B filter add dev eth0 ingress pref 1 protocol ip u32 \
	match ip dsfield 0xb8 0xfc action pass || echo "# cannot add the DSCP counter"
dscp46() { tc -s -n $NS_B filter show dev eth0 ingress | awk '/Sent/ { n += $4 } END { print n + 0 }'; }

# rr PRIO PORT: 300 x 1 KiB request/response with that priority
rr() {
	: > "$out/srv"
	# the echo at the same priority: an urgent request's bulk answer, lost
	# on the lossy spine (5 % of them), waited for an RTO in both runs (before
	# the tail loss probe), and the p99s compared two RTO tails (urgent
	# 42.7 ms against bulk 25.0 once)
	ip netns exec $NS_B ./mrc_msg -l -p "$2" -P "$1" > "$out/srv" 2>&1 &
	wait_listening "$out/srv"
	ip netns exec $NS_A ./mrc_msg -c $B4 -p "$2" -n 300 -s 1024 -P "$1" > "$out/rr$1"
}
t0=$(mrc_stat $NS_A TxRedundant); d0=$(mrc_stat $NS_B RxDuplicate); e0=$(dscp46)
rr 0 7100; rc0=$?
t1=$(mrc_stat $NS_A TxRedundant); e1=$(dscp46)
rr 7 7101; rc7=$?
t2=$(mrc_stat $NS_A TxRedundant); d2=$(mrc_stat $NS_B RxDuplicate); e2=$(dscp46)
# the lossy spine really dropped: its netem qdiscs passed and dropped
# packets of both runs, about a fifth of them (>= 10 %, as 20 % was set)
read -r lp ld _ <<< "$(fabric_qdisc_stats 1 netem)"
num t0 t1 t2 d0 d2 e0 e1 e2 lp ld
lossy_ok=$(( lossy == 0 && lp + ld >= 100 && ld * 100 >= (lp + ld) * 10 ))
echo "# spine 1's netem: passed $lp packets, dropped $ld ($((ld * 100 / (lp + ld + 1))) %)"
echo "# bulk:   $(cat "$out/rr0")"
echo "# urgent: $(cat "$out/rr7")"
echo "# redundant copies: bulk $((t1 - t0)), urgent $((t2 - t1)); duplicates dropped $((d2 - d0))"
tap_result $(( rc0 == 0 && rc7 == 0 && lossy_ok )) \
	"request/response completes at both priorities over a 20% lossy spine (it dropped $ld of $((lp + ld)))"
tap_result $(( t1 == t0 && t2 - t1 >= 300 )) "only urgent messages are sent twice ($((t2 - t1)) copies)"
tap_result $(( d2 - d0 > 0 )) "the receiver drops the duplicates ($((d2 - d0)))"
echo "# packets with DSCP 46 at b: during bulk $((e1 - e0)), during urgent $((e2 - e1))"
tap_result $(( e1 == e0 && e2 - e1 >= 300 )) \
	"urgent-dscp 46: urgent packets carry it ($((e2 - e1))), bulk ones do not ($((e1 - e0)))"
p99_0=$(kv "$out/rr0" p99_us); p99_7=$(kv "$out/rr7" p99_us)
num p99_0 p99_7
tap_result $(( p99_7 <= p99_0 + 2000 )) \
	"urgent p99 latency ($p99_7 us) does not suffer from the loss like bulk ($p99_0 us)"
rm -rf "$out"
tap_done
