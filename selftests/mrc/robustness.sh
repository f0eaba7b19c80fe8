#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Robustness between two namespaces on the leaf-spine fabric (one spine):
# large transfers both ways at once (IPv4, IPv6) arrive intact; so do
# transfers through netem loss, reordering, duplication, corruption and
# jitter; 1 KiB request/response through 5 % loss repairs its lost tails by
# loss probes, not RTOs; deleting the peer's namespace under a live connection ends it with
# ETIMEDOUT within the user timeout; and the module cannot be unloaded while
# a socket is open, unloads cleanly after the last one, and reloads, also
# under another family number, and survives 20 load/unload cycles.  The module test comes last and restores the
# default module.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
out=$(mktemp -d)
SPLAT=../../tools/testing/vm/splat-patterns
KO=/lib/modules/$(uname -r)/updates/mrc.ko
[ -f "$KO" ] || KO=../../net/mrc/mrc.ko

# Leave the default module loaded, whatever happened.
restore_module() {
	if [ "$(cat /sys/module/mrc/parameters/family 2>/dev/null)" != 18 ]; then
		rmmod mrc 2>/dev/null
		modprobe mrc 2>/dev/null
	fi
}
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; restore_module; rm -rf "$out"' EXIT

# The issue asks for 256 MiB each way.  In the TCG VM (2 vCPUs) 64 MiB each
# way at once took 24 s per family (~25 Mbit/s each way) and 128 MiB took
# 51 s (IPv4) and 61 s (IPv6) on a busy host, so 256 MiB (~2 min a family)
# does not fit in ~60 s.  128 MiB is at the limit and made the whole test
# run 5.7 min, beyond the ~4 min VM budget, so 64 MiB is used.
# MRC_BIG_BYTES overrides it (e.g. $((256 << 20)) under KVM).
BIG=${MRC_BIG_BYTES:-$((64 << 20))}
SMALL=$((4 << 20))

tap_plan 18
fabric_up 1 || tap_setup_fail "cannot build the fabric"

# bidir DST PORT BYTES: both sides send BYTES of the pattern at once, each
# checks what it receives.
bidir() {
	local dst=$1 port=$2 n=$3 v6='' t0 rc_tx rc_rx
	[ "${dst#*:}" != "$dst" ] && v6=-6
	t0=$(now)
	xfer_start $NS_B "$port" "$out/rx" -b -n "$n" $v6 || { cat "$out/rx"; return 1; }
	timeout 240 ip netns exec $NS_A ./mrc_xfer -c "$dst" -p "$port" -b -n "$n" \
		> "$out/tx" 2>&1
	rc_tx=$?
	wait_for $XFER_PID 20
	rc_rx=$?
	echo "# $dst: $((n >> 20)) MiB each way in $(since "$t0") s"
	echo "#   a: $(grep -v listening "$out/tx" | tr '\n' ' ')"
	echo "#   b: $(grep -v listening "$out/rx" | tr '\n' ' ')"
	[ $rc_tx = 0 ] && [ $rc_rx = 0 ] &&
	[ "$(kv "$out/tx" ok)" = 1 ] && [ "$(kv "$out/tx" bytes)" = "$n" ] &&
	[ "$(kv "$out/rx" ok)" = 1 ] && [ "$(kv "$out/rx" bytes)" = "$n" ] &&
	[ "$(kv "$out/tx" sent)" = "$n" ] && [ "$(kv "$out/rx" sent)" = "$n" ]
}

bidir $B4 7000 $BIG
tap_result $(( $? == 0 )) "IPv4: $((BIG >> 20)) MiB each way at once arrive intact"
bidir $B6 7001 $BIG
tap_result $(( $? == 0 )) "IPv6: $((BIG >> 20)) MiB each way at once arrive intact"

# retx: a's retransmissions (nothing when a counter is missing)
retx() {
	local x y
	x=$(mrc_stat $NS_A Retransmits) y=$(mrc_stat $NS_A FastRetransmits)
	is_num "$x" "$y" && echo $((x + y))
}
# netem_xfer "NETEM ARGS" PORT [SENDER OPTIONS]: a one-way transfer a -> b of
# NETEM_BYTES (SMALL) bytes with netem on the spine (both directions); sets
# RETX (a's retransmissions), DUP (duplicates b received) and NETEM_DROPS
# (what netem dropped: the fault confirmed).
netem_xfer() {
	local t0 rc_tx rc_rx r0 d0 r1 d1 n=${NETEM_BYTES:-$SMALL}
	RETX='' DUP='' NETEM_DROPS=''
	fabric_netem 1 "$1" || return 1
	r0=$(retx) d0=$(mrc_stat $NS_B RxDuplicate)
	t0=$(now)
	xfer_start $NS_B "$2" "$out/rx" || { cat "$out/rx"; return 1; }
	# shellcheck disable=SC2086
	timeout 120 ip netns exec $NS_A ./mrc_xfer -c $B4 -p "$2" -n "$n" ${3:-} > "$out/tx" 2>&1
	rc_tx=$?
	wait_for $XFER_PID 20
	rc_rx=$?
	r1=$(retx) d1=$(mrc_stat $NS_B RxDuplicate)
	# left empty (a case's "RETX > 0" then fails) when a counter is missing
	is_num "$r0" "$r1" && RETX=$((r1 - r0))
	is_num "$d0" "$d1" && DUP=$((d1 - d0))
	echo "# netem $1: $(since "$t0") s; $(grep -v listening "$out/rx" | tail -n 1);" \
		"$(tail -n 1 "$out/tx"); retransmits $RETX, duplicates received $DUP"
	read -r _ NETEM_DROPS _ <<< "$(fabric_qdisc_stats 1 netem)"
	echo "# netem dropped $NETEM_DROPS skbs"
	fabric_netem 1 ""
	[ $rc_tx = 0 ] && [ $rc_rx = 0 ] &&
	[ "$(kv "$out/rx" ok)" = 1 ] && [ "$(kv "$out/rx" bytes)" = "$n" ] &&
	[ "$(kv "$out/tx" sent)" = "$n" ]
}

# netem drops whole skbs, and a data skb is a GSO burst of up to 44
# packets: 4 MiB are ~70 bursts, which 1% loss left all whole about every
# second run (CI: 0 retransmits).  64 MiB (~1,100 bursts) and, at 10%,
# 16 MiB leave no burst unhit with odds of 1e-5 and 1e-12; netem's own
# counter confirms the loss happened.
NETEM_BYTES=$((64 << 20)) netem_xfer "loss 1%" 7010
tap_result $(( $? == 0 && NETEM_DROPS > 0 && RETX > 0 )) \
	"1% loss: 64 MiB arrive intact, losses repaired ($NETEM_DROPS dropped, $RETX retransmits)"
NETEM_BYTES=$((16 << 20)) netem_xfer "loss 10%" 7011
tap_result $(( $? == 0 && NETEM_DROPS > 0 && RETX > 0 )) \
	"10% loss: 16 MiB arrive intact, losses repaired ($NETEM_DROPS dropped, $RETX retransmits)"
netem_xfer "delay 5ms reorder 25% 50%" 7012
tap_result $(( $? == 0 )) "25% reordering: $((SMALL >> 20)) MiB arrive intact"
netem_xfer "duplicate 5%" 7013
tap_result $(( $? == 0 && DUP > 0 )) "5% duplication: $((SMALL >> 20)) MiB arrive intact, $DUP duplicates discarded"
# netem draws per skb, not per packet, and corrupts one packet of a GSO
# burst per hit: 4 MiB goes out in as few as 67 bursts of 44, so 1% may
# hit no data packet at all (a CI run resent nothing).  10% of the skbs
# expects several hits even then.
netem_xfer "corrupt 10%" 7014
tap_result $(( $? == 0 && RETX > 0 )) "10% corruption: $((SMALL >> 20)) MiB arrive intact, corrupted packets resent ($RETX)"
netem_xfer "delay 5ms 3ms" 7015
tap_result $(( $? == 0 )) "jitter (5 ms +- 3 ms): $((SMALL >> 20)) MiB arrive intact"
# The user timeout counts from the send after an idle spell, not from the
# last progress before it (that would end the connection at its first send)
netem_xfer "delay 40ms" 7016 "-U 1000 -W 2500"
tap_result $(( $? == 0 )) "idle 2.5 s with a 1 s user timeout, then a send over an 80 ms RTT: intact"

# A request or answer of one packet is its flight's tail: when it is lost,
# nothing sent later shows it.  The tail loss probe resends it on another EV
# two RTTs later (LossProbes, both ends), and the echo of the probe shows the
# repair (LossProbeRecovered), where the RTO (RtoExpired) took 13-20 ms.
# 1000 x 1 KiB over 5 % loss each way: about 100 packets lost.
probe_stats() { mrc_stat_ab "$1"; }
fabric_netem 1 "loss 5%"
p0=$(probe_stats LossProbes); r0=$(probe_stats LossProbeRecovered); o0=$(probe_stats RtoExpired)
: > "$out/srv"
ip netns exec $NS_B ./mrc_msg -l -p 7017 > "$out/srv" 2>&1 &
srv=$!
wait_listening "$out/srv"
timeout 120 ip netns exec $NS_A ./mrc_msg -c $B4 -p 7017 -n 1000 -s 1024 > "$out/msg" 2>&1
rc=$?
wait_for $srv 10
fabric_netem 1 ""
p1=$(probe_stats LossProbes); r1=$(probe_stats LossProbeRecovered); o1=$(probe_stats RtoExpired)
num p0 r0 o0 p1 r1 o1
probes=$((p1 - p0)) repaired=$((r1 - r0)) rtos=$((o1 - o0))
echo "# $(cat "$out/msg"); loss probes $probes, repaired $repaired, RTOs $rtos"
tap_result $(( rc == 0 && repaired > 0 && rtos < repaired )) \
	"5% loss, 1000 x 1 KiB request/response: lost tails repaired by loss probes ($repaired), not RTOs ($rtos)"

# The peer's namespace disappears under a connection: blackhole the path
# first (so the dying peer's RST cannot arrive), kill the peer and delete
# its namespace; the sender must give up with ETIMEDOUT at its user timeout.
UT_MS=3000
xfer_start $NS_B 7020 "$out/rx"
( ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7020 -n $((1 << 40)) -U $UT_MS > "$out/tx" 2>&1
  now > "$out/t_end" ) &
tx=$!
sleep 2
alive=0
kill -0 $tx 2>/dev/null && kill -0 $XFER_PID 2>/dev/null && alive=1
t0=$(now)
fabric_blackhole 1
t1=$(now)
kill -9 $XFER_PID
wait $XFER_PID 2>/dev/null
ip netns del $NS_B
wait_for $tx 30
te=$(cat "$out/t_end" 2>/dev/null || now)
# Progress stopped somewhere between t0 and t1 (the two tc filters take
# seconds under TCG), so correct behaviour means te - t0 >= UT and
# te - t1 <= UT + slack (1.5 s: RTO granularity, scheduling under TCG).
el0=$(awk -v a="$t0" -v b="$te" 'BEGIN { printf "%.1f", b - a }')
el1=$(awk -v a="$t1" -v b="$te" 'BEGIN { printf "%.1f", b - a }')
echo "# peer namespace deleted: a got '$(cat "$out/tx")' $el0 s after the blackhole" \
	"began, $el1 s after it was in place (user timeout $UT_MS ms)"
grep -q "error=Connection timed out" "$out/tx"
tap_result $(( $? == 0 && alive )) "peer namespace deleted: the sender gets ETIMEDOUT"
tap_result "$(awk -v a="$el0" -v b="$el1" -v u=$UT_MS \
	'BEGIN { print (a * 1000 >= u - 300 && b * 1000 <= u + 1500) ? 1 : 0 }')" \
	"... within its user timeout ($el1-$el0 s for $UT_MS ms)"
fabric_down

# Module unload.  While an AF_MRC socket is open, rmmod must fail.
refcnt() { cat /sys/module/mrc/refcnt 2>/dev/null || echo gone; }
# wait_idle SECS: waits until no MRC socket (or finishing connection) is left
wait_idle() {
	for _ in $(seq 1 $(($1 * 10))); do
		[ "$(refcnt)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# loop_xfer PORT BYTES: a transfer over loopback in this namespace
loop_xfer() {
	./mrc_xfer -l -p "$1" > "$out/lrx" 2>&1 &
	local rx=$!
	for _ in $(seq 1 100); do grep -q listening "$out/lrx" && break; sleep 0.1; done
	timeout 60 ./mrc_xfer -c 127.0.0.1 -p "$1" -n "$2" > "$out/ltx" 2>&1
	wait_for $rx 20 && [ "$(kv "$out/lrx" ok)" = 1 ] && [ "$(kv "$out/lrx" bytes)" = "$2" ]
}

./mrc_xfer -l -p 7030 > "$out/hold" 2>&1 &
hold=$!
for _ in $(seq 1 100); do grep -q listening "$out/hold" && break; sleep 0.1; done
loop_xfer 7031 $((1 << 20))
xfer_ok=$?
rc0=$(refcnt)
rmmod mrc > "$out/rmmod" 2>&1
busy=$?
echo "# with a listening socket open: refcnt $rc0, rmmod: $(cat "$out/rmmod")"
tap_result $(( xfer_ok == 0 && busy != 0 )) "rmmod fails while an AF_MRC socket is open"
[ -d /sys/module/mrc ] || modprobe mrc

# After the last socket (and the connections finishing their FINs) is
# gone, rmmod succeeds and the kernel log stays clean.
kill $hold
wait $hold 2>/dev/null
t0=$(now)
wait_idle 30
idle=$?
echo "# refcnt $(refcnt) $(since "$t0") s after the last close"
rmmod mrc > "$out/rmmod" 2>&1
unloaded=$?
[ $unloaded = 0 ] || echo "# rmmod: $(cat "$out/rmmod")"
splat=$(dmesg | grep -E -f $SPLAT | head -n 5)
[ -z "$splat" ] || echo "# kernel log: $splat"
gone=0
[ -d /sys/module/mrc ] || gone=1
tap_result $(( idle == 0 && unloaded == 0 && gone )) "rmmod succeeds once every socket is closed"
# modprobe loads it again (family 18) and it works.
modprobe mrc && loop_xfer 7032 $((1 << 20))
rc=$?
fam=$(cat /sys/module/mrc/parameters/family 2>/dev/null)
tap_result $(( rc == 0 && fam == 18 && ${#splat} == 0 )) \
	"modprobe reloads it (family $fam), a transfer works, kernel log clean"

# Another family number.  The runner's modprobe.d install line ignores
# options given to modprobe, so insmod the same file with family=19.
wait_idle 15
rmmod mrc && insmod "$KO" family=19
rc=$?
fam=$(cat /sys/module/mrc/parameters/family 2>/dev/null)
./af_probe 19 && loop_xfer 7033 $((1 << 20))
probe=$?
# the old number is no longer ours (its autoload finds mrc already loaded)
./af_probe 18 2> "$out/probe18"
old=$?
echo "# family=19: parameter $fam; socket(18): $(cat "$out/probe18")"
tap_result $(( rc == 0 && fam == 19 && probe == 0 && old != 0 )) \
	"loaded with family=19: socket(19, SOCK_STREAM, 0) works, socket(18) does not"

# Back to the default.
wait_idle 15
rmmod mrc && modprobe mrc
rc=$?
fam=$(cat /sys/module/mrc/parameters/family 2>/dev/null)
./af_probe
probe=$?
tap_result $(( rc == 0 && probe == 0 && fam == 18 )) "the default module (family 18) is back"

# Repeated load/unload cycles, with a second namespace alive (per-netns
# init and exit on every load and unload): each cycle loads the module,
# moves 256 KiB over loopback, opens a socket in the other namespace, waits
# for the connections to finish and unloads.  Nothing may stay behind: no
# slab cache, no protocol entry, no sysctl, no splat.
CYCLES=${MRC_CYCLES:-20}
ip netns add mrc-cycle && ip -n mrc-cycle link set lo up
done_cycles=0
t0=$(now)
for i in $(seq 1 "$CYCLES"); do
	wait_idle 15 && rmmod mrc || break
	modprobe mrc && loop_xfer $((7100 + i)) $((256 << 10)) || break
	ip netns exec mrc-cycle ./af_probe || break
	done_cycles=$i
done
wait_idle 15 && rmmod mrc
left=$(awk '$1 == "MRC"' /proc/slabinfo /proc/net/protocols | wc -l)
[ -e /proc/sys/net/mrc ] && left=$((left + 1))
splat=$(dmesg | grep -E -f $SPLAT | head -n 5)
[ -z "$splat" ] || echo "# kernel log: $splat"
echo "# $done_cycles of $CYCLES load/transfer/unload cycles in $(since "$t0") s;" \
	"MRC entries left in slabinfo/protocols/sysctl after unload: $left"
ip netns del mrc-cycle
modprobe mrc
tap_result $(( done_cycles == CYCLES && left == 0 && ${#splat} == 0 )) \
	"$CYCLES load/unload cycles with traffic: nothing left behind, kernel log clean"
tap_done
