#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Multipath on the leaf-spine fabric (4 spines, IPv4 and IPv6): one
# connection sprays over every spine, aggregates rate-limited spines,
# survives a blackholed spine (its EVs retired) and regains it when healed,
# times out when every path is dead, and is not fooled by paths of
# different delay.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
trap 'kill $(jobs -p) 2>/dev/null; fabric_down' EXIT
SPINES=4
out=$(mktemp -d)

tap_plan 12
fabric_up $SPINES || { tap_skip "fabric" "cannot build fabric"; tap_done; }

# spray DST BYTES NAME: a transfer; every spine must carry >= 10 % of it.
spray() {
	local before after i d total=0 min=-1
	read -ra before <<< "$(fabric_counts ab)"
	xfer_start $NS_B 7000 "$out/rx" $([ "${1#*:}" != "$1" ] && echo -6) || return 1
	ip netns exec $NS_A ./mrc_xfer -c "$1" -p 7000 -n "$2" > "$out/tx" 2>&1
	wait $XFER_PID || { cat "$out/rx" "$out/tx"; return 1; }
	read -ra after <<< "$(fabric_counts ab)"
	for i in $(seq 0 $((SPINES - 1))); do
		d=$((after[i] - before[i]))
		total=$((total + d))
		[ $min -lt 0 ] || [ $d -lt $min ] && min=$d
	done
	echo "# $3: $(tail -n 1 "$out/rx"); per-spine packets a->b: ${after[*]} (before ${before[*]})"
	[ "$(kv "$out/rx" ok)" = 1 ] && [ "$(kv "$out/rx" bytes)" = "$2" ] &&
		[ $((min * 100)) -ge $((total * 10)) ]
}
spray $B4 $((32 << 20)) IPv4
tap_result $(( $? == 0 )) "IPv4: a 32 MiB transfer arrives intact with >= 10% of its packets on every spine"
spray $B6 $((16 << 20)) IPv6
tap_result $(( $? == 0 )) "IPv6: a 16 MiB transfer arrives intact with >= 10% of its packets on every spine"

# Aggregation: 4 spines at 8 Mbit/s each; one connection must beat one spine.
for i in $(seq 1 $SPINES); do fabric_shape "$i" 8mbit -; done
xfer_start $NS_B 7001 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7001 -n $((6 << 20)) > "$out/tx"
wait $XFER_PID
mbps=$(kv "$out/rx" mbps)
echo "# 4 x 8 Mbit/s spines: one MRC connection at $mbps Mbit/s"
tap_result "$(awk -v m="$mbps" 'BEGIN { print (m > 12) ? 1 : 0 }')" \
	"one connection over 4 rate-limited spines exceeds 1.5 spines' rate ($mbps Mbit/s > 12)"
for i in $(seq 1 $SPINES); do fabric_shape "$i" - -; done

# Congestion: spine 1 at a tenth of the others' rate behind an ECN-marking
# queue; CE marks and its queueing delay steer EVs away from it.
for i in 2 3 4; do fabric_shape "$i" 40mbit -; done
fabric_shape_ecn 1 4mbit
ce0=$(mrc_stat $NS_B RxCeMarked)
read -ra before <<< "$(fabric_counts ab)"
xfer_start $NS_B 7010 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7010 -n $((12 << 20)) > "$out/tx"
wait $XFER_PID
read -ra after <<< "$(fabric_counts ab)"
s1=$((after[0] - before[0]))
others=$(( (after[1] - before[1] + after[2] - before[2] + after[3] - before[3]) / 3 ))
ce1=$(mrc_stat $NS_B RxCeMarked)
echo "# ECN spine at 4 Mbit/s: $(tail -n 1 "$out/rx"); its packets $s1 vs $others on each other spine; CE marks $((ce1 - ce0))"
# An equal split would give it 25 % of the packets (and throttle the whole
# transfer to 4 x its rate).  Seen steered: 9-21 % (the fast spines are
# limited by the emulated CPU, not by their rate, so the margin is small).
tap_result $(( ce1 > ce0 && s1 * 100 < (s1 + 3 * others) * 23 )) \
	"a slow ECN-marking spine gets less than an equal share (< 23% of the packets)"
for i in $(seq 1 $SPINES); do fabric_shape "$i" - -; done

# Failover: blackhole spine 2 one second into a transfer (64 MiB: several
# seconds even on a fast host, so the failure lands mid-transfer).
r0=$(mrc_stat $NS_A EvRetired)
xfer_start $NS_B 7002 "$out/rx" -i 100
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7002 -n $((64 << 20)) > "$out/tx" &
tx=$!
sleep 1
fabric_blackhole 2
wait $tx
wait $XFER_PID
rc=$?
r1=$(mrc_stat $NS_A EvRetired)
echo "# blackholed spine 2: $(tail -n 1 "$out/rx"); EVs retired: $((r1 - r0))"
echo "# delivered per 100 ms: $(awk '/^tick/ {sub("bytes=", "", $3); printf "%d ", $3 / 1024}' "$out/rx")KiB"
tap_result $(( rc == 0 )) "a transfer completes intact across a blackholed spine"
tap_result $(( r1 > r0 )) "EVs on the dead spine are retired ($((r1 - r0)))"
gap=$(kv "$out/rx" max_gap_ms)
tap_result "$(awk -v g="$gap" 'BEGIN { print (g < 5000) ? 1 : 0 }')" \
	"delivery resumed quickly after the failure (longest gap ${gap} ms)"

# Heal: probes find the spine again and re-admit its EVs.
a0=$(mrc_stat $NS_A EvReadmitted)
xfer_start $NS_B 7003 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7003 -n $((64 << 20)) > "$out/tx" &
tx=$!
sleep 0.5
f0=$(fabric_spine_forwarded 2 ab)
fabric_heal 2
wait $tx
wait $XFER_PID
rc=$?
f1=$(fabric_spine_forwarded 2 ab)
a1=$(mrc_stat $NS_A EvReadmitted)
echo "# healed spine 2: readmitted $((a1 - a0)), spine 2 forwarded $((f1 - f0)) packets after the heal"
tap_result $(( rc == 0 && a1 > a0 )) "a healed spine's EVs are re-admitted ($((a1 - a0)))"
tap_result $(( f1 - f0 > 100 )) "traffic returns to the healed spine ($((f1 - f0)) packets)"

# Every path dead: the connection ends with ETIMEDOUT at the user timeout.
xfer_start $NS_B 7004 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7004 -n $((64 << 20)) -U 3000 > "$out/tx" &
tx=$!
sleep 1
for i in $(seq 1 $SPINES); do fabric_blackhole "$i"; done
wait $tx
echo "# all spines dead: $(cat "$out/tx")"
grep -q "error=Connection timed out" "$out/tx"
tap_result $(( $? == 0 )) "with every path dead the sender gets ETIMEDOUT"
kill $XFER_PID 2>/dev/null
for i in $(seq 1 $SPINES); do fabric_heal "$i"; done

# Every path dead, healed before the user timeout: the transfer resumes.
xfer_start $NS_B 7006 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7006 -n $((64 << 20)) -U 8000 > "$out/tx" &
tx=$!
sleep 1
for i in $(seq 1 $SPINES); do fabric_blackhole "$i"; done
sleep 1.5
for i in $(seq 1 $SPINES); do fabric_heal "$i"; done
wait $tx
wait $XFER_PID
rc=$?
gap=$(kv "$out/rx" max_gap_ms)
echo "# all spines dead for 1.5 s: $(tail -n 1 "$out/rx"); sender: $(cat "$out/tx")"
tap_result "$(awk -v r=$rc -v g="$gap" 'BEGIN { print (r == 0 && g > 1000) ? 1 : 0 }')" \
	"all paths dead (gap ${gap} ms), healed before the user timeout: the transfer resumes intact"

# Paths of different delay: reordering is not loss.
fabric_shape 1 - 30ms
s0=$(mrc_stat $NS_B SpuriousRetransmits); p0=$(mrc_stat $NS_A TxPackets)
declare -A c0
for k in FastRetransmits RtoExpired EvRetired RxDropRcvbuf RxDuplicate; do
	c0[$k]=$(( $(mrc_stat $NS_A $k) + $(mrc_stat $NS_B $k) ))
done
xfer_start $NS_B 7005 "$out/rx"
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7005 -n $((8 << 20)) > "$out/tx"
wait $XFER_PID
rc=$?
s1=$(mrc_stat $NS_B SpuriousRetransmits); p1=$(mrc_stat $NS_A TxPackets)
echo "# spine 1 +30 ms: $(tail -n 1 "$out/rx"); spurious retransmits $((s1 - s0)) of $((p1 - p0)) packets"
for k in FastRetransmits RtoExpired EvRetired RxDropRcvbuf RxDuplicate; do
	echo "# $k +$(( $(mrc_stat $NS_A $k) + $(mrc_stat $NS_B $k) - c0[$k] ))"
done
tap_result $(( rc == 0 && (s1 - s0) * 100 <= (p1 - p0) )) \
	"30 ms of extra delay on one spine causes < 1% spurious retransmits"
fabric_shape 1 - -
rm -rf "$out"
tap_done
