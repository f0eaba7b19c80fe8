#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# MRC's tracepoints (mrc:*, net/mrc/trace.h) record what a connection
# decides while a spine dies and heals: state changes, EVs retired, probed
# and re-admitted, losses with the rule that inferred them, resends moving
# to another EV, window changes; and they agree with the counters.  Then a
# clean transfer frees what it received and sent as consumed: skb:kfree_skb
# (drop monitors, dropwatch) sees no more MRC skbs than MRC counted drops.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
trace=/sys/kernel/tracing
out=$(mktemp -d)
cleanup() {
	kill $(jobs -p) 2>/dev/null
	[ -w "$trace/events/mrc/enable" ] && echo 0 > "$trace/events/mrc/enable"
	[ -w "$trace/events/skb/kfree_skb/enable" ] && echo 0 > "$trace/events/skb/kfree_skb/enable"
	fabric_down
	rm -rf "$out"
}
trap cleanup EXIT

tap_plan 8
[ -d "$trace/events" ] || mount -t tracefs nodev "$trace" 2>/dev/null
[ -d "$trace/events/mrc" ] || tap_setup_fail "no tracefs or no mrc events"
fabric_up 4 || tap_setup_fail "cannot build the fabric"

# Enabled before any traffic and disabled after it: enabling flips static
# keys, whose code patching races with running code under TCG.
echo > "$trace/trace"
echo 8192 > "$trace/buffer_size_kb"
echo 1 > "$trace/events/mrc/enable"
declare -A c0
for k in EvRetired EvReadmitted EvProbes Retransmits; do
	c0[$k]=$(mrc_stat_ab $k)
done
xfer_start $NS_B 7301 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7301 -n $((1 << 40)) -d 60 > "$out/tx" &
tx=$!
sleep 1.5
fabric_blackhole 2
sleep 1.5
fabric_heal 2
# the re-admissions need probes after the heal: the sender stops 3.5 s
# after it (SIGUSR1), not at a fixed time that a slow tc may eat into
sleep 3.5
kill -USR1 $tx 2>/dev/null
wait $tx
txrc=$?
wait $XFER_PID
rc=$?
echo 0 > "$trace/events/mrc/enable"
cp "$trace/trace" "$out/trace"
declare -A d
for k in EvRetired EvReadmitted EvProbes Retransmits; do
	# empty (and the cases using it failed) when a counter is missing
	v=$(mrc_stat_ab $k) d[$k]=''
	is_num "$v" "${c0[$k]}" && d[$k]=$((v - c0[$k]))
done
n() { grep -c " $1: " "$out/trace"; }
echo "# transfer: $(tail -n 1 "$out/rx")"
for e in mrc_state mrc_ev_retire mrc_ev_readmit mrc_probe mrc_loss mrc_retransmit mrc_cwnd; do
	echo "# $e: $(n $e) events, e.g. $(grep -m1 " $e: " "$out/trace" | sed 's/.*: //')"
done
echo "# counters: retired ${d[EvRetired]} readmitted ${d[EvReadmitted]} probes ${d[EvProbes]} resent ${d[Retransmits]}"
grep -q "trace entries.*lost [1-9]\|LOST" "$out/trace" && echo "# the trace buffer overflowed"

xfer_intact "$out/rx" "$out/tx"
tap_result $(( $? == 0 && rc == 0 && txrc == 0 )) \
	"a transfer across a spine failure completes intact: every byte sent ($(kv "$out/tx" sent)) arrived"
# SYN_SENT (2) -> ESTABLISHED (3) on the client, later DONE (7)
grep -q " mrc_state: conn=[0-9]* 2->3" "$out/trace" && grep -q " mrc_state: conn=[0-9]* [0-9]->7" "$out/trace"
tap_result $(( $? == 0 )) "mrc_state: the handshake and the end of the connection"
[ "$(n mrc_ev_retire)" -eq "${d[EvRetired]}" ] && [ "${d[EvRetired]}" -gt 0 ]
tap_result $(( $? == 0 )) "mrc_ev_retire: one event per EV retired ($(n mrc_ev_retire), EvRetired ${d[EvRetired]})"
[ "$(n mrc_ev_readmit)" -eq "${d[EvReadmitted]}" ] && [ "${d[EvReadmitted]}" -gt 0 ]
tap_result $(( $? == 0 )) "mrc_ev_readmit: one event per EV re-admitted ($(n mrc_ev_readmit))"
[ "$(n mrc_probe)" -eq "${d[EvProbes]}" ] && [ "${d[EvProbes]}" -gt 0 ]
tap_result $(( $? == 0 )) "mrc_probe: one event per probe of a retired EV ($(n mrc_probe))"
grep -q " mrc_loss: conn=[0-9]* psn=[0-9]* ev=[0-9]* rule=\(same_ev\|rack\|rto\)$" "$out/trace"
tap_result $(( $? == 0 )) "mrc_loss: losses with the rule that inferred them"
# every resend names its old and new EV; the one counter counts them all
awk '/ mrc_retransmit: / { split($NF, e, /[=>-]+/); if (e[2] != e[3]) moved++ }
	END { exit !(moved > 0) }' "$out/trace" &&
	[ "$(n mrc_retransmit)" -eq "${d[Retransmits]}" ]
tap_result $(( $? == 0 )) "mrc_retransmit: one event per resend ($(n mrc_retransmit)), resends move to another EV"

# skb:kfree_skb marks a drop (skb:consume_skb a normal free): during a clean
# transfer the events located in mrc.ko are at most the drops MRC counted
# (received ones and failed sends; none on a healthy fabric), not one per
# packet.  Enabled while no MRC traffic runs, as above.
drops() {
	ip netns exec "$1" awk '/^(RxDrop|RxDuplicate|TxErrors)/ { s += $2 } END { print s + 0 }' \
		/proc/net/mrc_stats
}
if [ -w "$trace/events/skb/kfree_skb/enable" ]; then
	k0=$(( $(drops $NS_A) + $(drops $NS_B) ))
	echo > "$trace/trace"
	echo 1 > "$trace/events/skb/kfree_skb/enable"
	xfer_start $NS_B 7302 "$out/rx2"
	ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7302 -n $((4 << 20)) > "$out/tx2" 2>&1
	rc=$?
	wait $XFER_PID
	rc=$(( rc | $? ))
	echo 0 > "$trace/events/skb/kfree_skb/enable"
	grep " kfree_skb: .*\[mrc\]" "$trace/trace" > "$out/kfree"
	k=$(( $(drops $NS_A) + $(drops $NS_B) - k0 ))
	kfree=$(wc -l < "$out/kfree")
	num k kfree
	echo "# clean transfer: $(tail -n 1 "$out/rx2"); MRC drops counted $k; skb:kfree_skb in mrc.ko: $kfree"
	sed 's/.*location=//; s/+.*//' "$out/kfree" | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/#   /'
	tap_result $(( rc == 0 && kfree <= k )) \
		"skb:kfree_skb: a clean transfer's skbs freed as consumed ($kfree drop events in mrc.ko, $k drops counted)"
else
	# a kernel built without the skb tracepoints (Debian's has them)
	tap_skip_env "skb:kfree_skb" "no skb:kfree_skb tracepoint in this kernel"
fi
tap_done
