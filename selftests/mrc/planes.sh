#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Planes (issue 14): a and b each have one interface into each of two
# independent leaf-spine networks (lib.sh's fabric_planes_up, 2 spines a
# plane, 5 ms of netem on each spine hop: a 10 ms base RTT).  First the
# fabric itself (routing, ECMP, isolation of a plane, TCP and MPTCP across
# it), then one MRC connection over both planes: it sprays over both,
# survives a's plane-1 interface going down (local detection, no loss
# needed), plane 1's leaf blackholed silently and a whole plane dying and
# coming back; forged address announcements are ignored; and an IPv4-only
# plane plus an IPv6-only plane serve one connection.
#
# The MRC cases need plane support in mrc.ko (its PlaneDown counter), the
# IPv4 + IPv6 one `mrcctl plane` too: without it each fails at once, saying
# so (PLANES_FORCE=1 runs them anyway).
cd "$(dirname "$0")" || exit 1
. ./lib.sh
trap 'kill $(jobs -p) 2>/dev/null; fabric_down' EXIT
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
mrcctl() { "$MRCCTL" "$@"; }
SPINES=2 HOP_MS=5
P2B4=$(plane_addr 2 b) P2B6=$(plane_addr 2 b 6)
out=$(mktemp -d)

tap_plan 15
modprobe mrc 2>/dev/null
fabric_planes_up $SPINES || { tap_skip "fabric" "cannot build the planes fabric"; tap_done; }
for p in 1 2; do fabric_plane_netem $p "delay ${HOP_MS}ms"; done

# ---- the fabric ------------------------------------------------------------
# route_dev NS DST: the interface a route lookup for DST leaves by
route_dev() { ip -n "$1" route get "$2" | grep -o 'dev [^ ]*' | head -n 1 | cut -d' ' -f2; }
ping_ok() { ip netns exec $NS_A ping -c 1 -W 2 -q "$1" > /dev/null 2>&1; }
ok=1
for dst in $B4:eth0 $B6:eth0 $P2B4:eth1 $P2B6:eth1; do
	d=${dst%:*} dev=${dst##*:}
	ping_ok "$d" || { echo "# a cannot ping $d"; ok=0; }
	[ "$(route_dev $NS_A "$d")" = "$dev" ] || { echo "# a's route to $d: $(route_dev $NS_A "$d")"; ok=0; }
done
for dst in $A4:eth0 $(plane_addr 2 a):eth1; do
	[ "$(route_dev $NS_B "${dst%:*}")" = "${dst##*:}" ] || ok=0
done
rtt1=$(ip netns exec $NS_A ping -c 5 -i 0.2 -q $B4 | awk -F/ '/^rtt/ { print $5 }')
rtt2=$(ip netns exec $NS_A ping -c 5 -i 0.2 -q "$P2B4" | awk -F/ '/^rtt/ { print $5 }')
echo "# idle ping RTT: plane 1 $rtt1 ms, plane 2 $rtt2 ms (netem: $((4 * HOP_MS / 2)) ms)"
tap_result $ok "both planes reach across (IPv4, IPv6); a plane-2 address is routed by eth1, others by eth0"

# plane-2 spines' packets from p2l1, space separated
p2_counts() {
	local i
	for i in $(seq 1 $SPINES); do
		ip netns exec "$(plane_spine 2 "$i")" cat /sys/class/net/l1/statistics/rx_packets
	done | tr '\n' ' '
}
ok=1
for dst in $P2B4 $P2B6; do
	read -ra c0 <<< "$(p2_counts)"
	ip netns exec $NS_A ./udp_spray "$dst" 9 20000 256 2 || ok=0
	read -ra c1 <<< "$(p2_counts)"
	total=0 min=-1
	for i in $(seq 0 $((SPINES - 1))); do
		d=$((c1[i] - c0[i])) total=$((total + c1[i] - c0[i]))
		[ $min -lt 0 ] || [ $d -lt $min ] && min=$d
	done
	echo "# $dst: plane-2 spines got ${c1[*]} packets (before ${c0[*]})"
	# 512 packets over 2 spines: a spine under 8 % means no ECMP by port
	[ $total -ge 512 ] && [ $((min * 100)) -ge $((total * 8)) ] || ok=0
done
tap_result $ok "plane 2's leaves spread source ports over its spines (IPv4, IPv6)"

# a silent leaf and a down interface cut their plane only, and heal
ok=1
fabric_leaf_blackhole 1 1 || ok=0
ping_ok $B4 && { echo "# plane 1 blackholed yet reachable"; ok=0; }
ping_ok "$P2B4" || { echo "# plane 2 lost with plane 1's leaf"; ok=0; }
fabric_leaf_heal 1 1
ping_ok $B4 || { echo "# plane 1 not healed"; ok=0; }
fabric_host_link a 1 down
ping_ok $B4 && { echo "# eth0 down yet plane 1 reachable"; ok=0; }
ping_ok "$P2B4" || ok=0
fabric_host_link a 1 up || ok=0
if ! ping_ok $B4 || ! ping_ok $B6; then echo "# plane 1 not back after eth0 up"; ok=0; fi
tap_result $ok "a blackholed leaf or a down interface cuts its plane only; both come back"

# tcp_on DST PLANE PORT: an 8 MiB TCP transfer to DST, >= 90 % of its bytes
# delivered through PLANE
tcp_on() {
	local b0 b1 six=
	[ "${1#*:}" != "$1" ] && six=-6
	b0=$(fabric_plane_bytes "$2" ab)
	xfer_start $NS_B "$3" "$out/rx" -T ${six:+"$six"} || return 1
	ip netns exec $NS_A ./mrc_xfer -T -c "$1" -p "$3" -n $((8 << 20)) > "$out/tx" 2>&1
	wait_for $XFER_PID 60 || return 1
	b1=$(fabric_plane_bytes "$2" ab)
	echo "# TCP to $1: $(tail -n 1 "$out/rx"); plane $2 delivered $((b1 - b0)) bytes"
	[ "$(kv "$out/rx" ok)" = 1 ] && [ "$(kv "$out/rx" bytes)" = $((8 << 20)) ] &&
		[ $(((b1 - b0) * 10)) -ge $(((8 << 20) * 9)) ]
}
ok=1
tcp_on $B4 1 7100 || ok=0
tcp_on "$P2B6" 2 7101 || ok=0
tap_result $ok "TCP: a transfer to plane 1's IPv4 and one to plane 2's IPv6 address arrive intact, each on its plane"

# MPTCP: b announces its plane-2 address, a opens a subflow to it
ip -n $NS_A mptcp limits set subflow 2 add_addr_accepted 2
ip -n $NS_B mptcp limits set subflow 2 add_addr_accepted 2
ip -n $NS_B mptcp endpoint add "$P2B4" dev eth1 signal
read -ra b0 <<< "$(fabric_planes_bytes ab)"
xfer_start $NS_B 7102 "$out/rx" -M
ip netns exec $NS_A ./mrc_xfer -M -c $B4 -p 7102 -n $((16 << 20)) > "$out/tx" 2>&1
wait_for $XFER_PID 60
rc=$?
read -ra b1 <<< "$(fabric_planes_bytes ab)"
d1=$((b1[0] - b0[0])) d2=$((b1[1] - b0[1]))
echo "# MPTCP: $(tail -n 1 "$out/rx"); plane 1 $d1 bytes, plane 2 $d2 bytes"
# its scheduler need not split evenly: each plane's subflow carrying 5 %
# proves both planes serve one connection
tap_result $(( rc == 0 && $(kv "$out/rx" bytes) == 16 << 20 && d1 * 20 >= d1 + d2 && d2 * 20 >= d1 + d2 )) \
	"MPTCP: one connection intact over both planes ($((d1 * 100 / (d1 + d2 + 1))) % / $((d2 * 100 / (d1 + d2 + 1))) %)"
ip -n $NS_B mptcp endpoint flush

# ---- MRC over planes ---------------------------------------------------------
PLANES_ERR=
[ -n "$(mrc_stat $NS_A PlaneDown)" ] || PLANES_ERR="no PlaneDown in /proc/net/mrc_stats"
[ -n "${PLANES_FORCE:-}" ] && PLANES_ERR=
[ -z "$PLANES_ERR" ] || echo "# no plane support: $PLANES_ERR"
# planes_missing N DESC: without plane support, N results fail at once
planes_missing() {
	local i
	[ -z "$PLANES_ERR" ] && return 1
	for i in $(seq 1 "$1"); do
		tap_result 0 "$2 (not run: no plane support in mrc.ko: issue 14)"
	done
	return 0
}
ip netns exec $NS_A "$MRCCTL" plane show 2>&1 | sed "s/^/# $NS_A: /"

# xfer_bg PORT SECS [DST]: a timed MRC transfer a -> b in the background
# (TX_PID, XFER_PID; the receiver ticks every 100 ms and lists every gap
# of 20 ms or more with its time)
xfer_bg() {
	local dst=${3:-$B4} six=
	[ "${dst#*:}" != "$dst" ] && six=-6
	xfer_start $NS_B "$1" "$out/rx" -i 100 -g 20 ${six:+"$six"} || return 1
	ip netns exec $NS_A ./mrc_xfer -c "$dst" -p "$1" -n $((1 << 40)) -d "$2" -U 20000 \
		> "$out/tx" 2>&1 &
	TX_PID=$!
}
# xfer_end: waits for both ends; XFER_OK=1 when every byte sent arrived,
# verified; XFER_GAP the receiver's longest delivery gap (ms)
xfer_end() {
	local txrc rxrc
	wait_for "$TX_PID" 90
	txrc=$?
	wait_for $XFER_PID 30
	rxrc=$?
	XFER_OK=0
	[ $txrc = 0 ] && [ $rxrc = 0 ] && [ "$(kv "$out/rx" ok)" = 1 ] &&
		[ "$(kv "$out/rx" bytes)" = "$(kv "$out/tx" sent)" ] && XFER_OK=1
	XFER_GAP=$(kv "$out/rx" max_gap_ms)
	echo "# $(tail -n 1 "$out/rx"); sender: $(tail -n 1 "$out/tx")"
	echo "# delivered per 100 ms: $(awk '/^tick/ { sub("bytes=", "", $3); printf "%d ", $3 / 1024 }' "$out/rx")KiB"
}
# at_s: now, in seconds since the receiver's tick 0
at_s() { awk -v z="$(kv "$out/rx" realtime)" -v n="$(now)" 'BEGIN { printf "%.3f", n - z }'; }
# fail_gap FROM_S TO_S: the longest delivery gap (ms) that began between
# FROM_S - 50 ms and TO_S + 1 s (the failure was made in [FROM_S, TO_S]),
# and, in NOISE_GAP, the longest elsewhere in the transfer (the emulator's)
fail_gap() {
	read -r FAIL_GAP NOISE_GAP <<< "$(awk -v lo="$1" -v hi="$2" '/^gap/ {
		split($2, t, "="); split($3, g, "=")
		if (t[2] >= lo * 1000 - 50 && t[2] <= hi * 1000 + 1000) {
			if (g[2] > in_) in_ = g[2]
		} else if (g[2] > out_) out_ = g[2]
	} END { printf "%.1f %.1f\n", in_, out_ }' "$out/rx")"
	echo "# gaps >= 20 ms (start ms:length ms): $(awk '/^gap/ { split($2, t, "="); split($3, g, "="); printf "%s:%s ", t[2], g[2] }' "$out/rx")"
}
# loaded_rtt NS: RTT, the connection's smoothed RTT (ms), mean of 3 samples
# 0.2 s apart while it carries the transfer; the samples in RTT_SAMPLES
loaded_rtt() {
	local i s
	RTT_SAMPLES=
	for i in 1 2 3; do
		s=$(mrcctl -n "$1" -j conn show 2>/dev/null |
			jq '[.[] | select(.state == "established")][0].srtt_us // 0')
		RTT_SAMPLES="$RTT_SAMPLES ${s:-0}"
		[ $i = 3 ] || sleep 0.2
	done
	# shellcheck disable=SC2086
	RTT=$(awk 'BEGIN { for (i = 1; i < ARGC; i++) s += ARGV[i]; printf "%.1f\n", s / (ARGC - 1) / 1000 }' \
		$RTT_SAMPLES)
}
# conn_plane_evs NS PLANE: active EVs of NS's established connection on
# PLANE (from conn show -e: an EV's "plane" ID or its "local_addr"; adapt
# here to the kernel's names), "none" when its EVs show no plane at all
conn_plane_evs() {
	local h=a
	[ "$1" = "$NS_B" ] && h=b
	mrcctl -n "$1" -j conn show -e 2>/dev/null | jq -r --argjson p "$2" \
		--arg a4 "$(plane_addr "$2" $h)" --arg a6 "$(plane_addr "$2" $h 6)" '
		([.[] | select(.state == "established")][0].evs // []) as $e |
		if ($e | map(select(has("plane") or has("local_addr"))) | length) == 0 then "none"
		else $e | map(select(.state == "active" and (.plane == $p or
			.local_addr == $a4 or .local_addr == $a6))) | length end'
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 < b + 0) ? 1 : 0 }'; }

# A transfer sprays over both (equal) planes.
if ! planes_missing 1 "MRC: one connection sprays over both planes, >= 30 % each"; then
	read -ra b0 <<< "$(fabric_planes_bytes ab)"
	xfer_bg 7200 4
	xfer_end
	read -ra b1 <<< "$(fabric_planes_bytes ab)"
	d1=$((b1[0] - b0[0])) d2=$((b1[1] - b0[1]))
	fail_gap -9 -9
	echo "# plane 1 $d1 bytes, plane 2 $d2 bytes; longest gap with no failure: $XFER_GAP ms"
	tap_result $(( XFER_OK && d1 * 10 >= (d1 + d2) * 3 && d2 * 10 >= (d1 + d2) * 3 )) \
		"MRC: one connection sprays over both planes, >= 30 % each ($((d1 * 100 / (d1 + d2 + 1))) % / $((d2 * 100 / (d1 + d2 + 1))) %)"
fi

# a's plane-1 interface goes down 3 s into an 8 s transfer: the notifier
# retires its EVs and resends what was in flight on plane 2 at once, so the
# longest delivery gap stays below the path RTT (the loaded srtt measured
# just before) plus 5 ms.  The gap is the longest that began in the second
# after the failure; the emulator's stalls elsewhere are printed beside it
# (a run with no failure had them too: the spray case's longest gap).
if ! planes_missing 2 "MRC: a's plane-1 interface down mid-transfer"; then
	pd0=$(mrc_stat $NS_A PlaneDown) pu0=$(mrc_stat $NS_A PlaneUp)
	xfer_bg 7201 8
	sleep 2.4
	loaded_rtt $NS_A
	mrcctl -n $NS_A conn show | head -n 1 | sed 's/^/# a: /'
	tf0=$(at_s)
	fabric_host_link a 1 down
	tf1=$(at_s)
	xfer_end
	fail_gap "$tf0" "$tf1"
	pd1=$(mrc_stat $NS_A PlaneDown)
	fabric_host_link a 1 up
	sleep 1
	pu1=$(mrc_stat $NS_A PlaneUp)
	bound=$(awk -v r="$RTT" 'BEGIN { print r + 5 }')
	echo "# eth0 down at ${tf0}-${tf1} s; loaded srtt samples (us):$RTT_SAMPLES; PlaneDown +$((pd1 - pd0)), PlaneUp +$((pu1 - pu0))"
	tap_result $(( XFER_OK && pd1 > pd0 && pu1 > pu0 )) \
		"MRC: eth0 down mid-transfer: intact, plane down and back up counted (PlaneDown +$((pd1 - pd0)), PlaneUp +$((pu1 - pu0)))"
	tap_result "$(lt "$FAIL_GAP" "$bound")" \
		"MRC: eth0 down: longest gap after it ${FAIL_GAP} ms < path RTT ${RTT} ms + 5 ms (elsewhere ${NOISE_GAP} ms)"
fi

# Plane 1's leaf (a's) blackholed silently 3 s into an 8 s transfer: loss
# detection on its EVs, the gap below 3 loaded RTTs.
if ! planes_missing 2 "MRC: plane 1's leaf blackholed mid-transfer"; then
	r0=$(mrc_stat $NS_A EvRetired)
	xfer_bg 7202 8
	sleep 2.4
	loaded_rtt $NS_A
	tf0=$(at_s)
	fabric_leaf_blackhole 1 1
	tf1=$(at_s)
	xfer_end
	fabric_leaf_heal 1 1
	fail_gap "$tf0" "$tf1"
	r1=$(mrc_stat $NS_A EvRetired)
	bound=$(awk -v r="$RTT" 'BEGIN { print 3 * r }')
	echo "# leaf blackholed at ${tf0}-${tf1} s; loaded srtt samples (us):$RTT_SAMPLES; EvRetired +$((r1 - r0))"
	tap_result $(( XFER_OK && r1 > r0 )) \
		"MRC: plane 1's leaf blackholed: intact, its EVs retired ($((r1 - r0)))"
	tap_result "$(lt "$FAIL_GAP" "$bound")" \
		"MRC: leaf blackholed: longest gap after it ${FAIL_GAP} ms < 3 x loaded RTT ${RTT} ms (elsewhere ${NOISE_GAP} ms)"
	sleep 1
fi

# Plane 2 dies whole (both its leaves silent) from 3 s to 6 s of a 12 s
# transfer and comes back: its EVs are re-admitted and it carries >= 20 %
# of the bytes from 1.5 s after the heal to the end.
if ! planes_missing 2 "MRC: a whole plane dies and comes back"; then
	a0=$(mrc_stat $NS_A EvReadmitted)
	xfer_bg 7203 12
	sleep 3
	echo "# plane 2 blackholed at $(at_s) s"
	fabric_plane_blackhole 2
	sleep 3
	echo "# plane 2 healed at $(at_s) s"
	fabric_plane_heal 2
	sleep 1.5
	read -ra b0 <<< "$(fabric_planes_bytes ab)"
	evs=$(conn_plane_evs $NS_A 2)
	xfer_end
	read -ra b1 <<< "$(fabric_planes_bytes ab)"
	a1=$(mrc_stat $NS_A EvReadmitted)
	d1=$((b1[0] - b0[0])) d2=$((b1[1] - b0[1]))
	fail_gap 0 0
	echo "# after the heal: plane 1 $d1 bytes, plane 2 $d2 bytes; active EVs on plane 2: $evs; EvReadmitted +$((a1 - a0))"
	tap_result $(( XFER_OK && a1 > a0 )) \
		"MRC: plane 2 dead for 3 s: intact, its EVs re-admitted ($((a1 - a0)))"
	n=$evs
	[ "$n" = none ] && n=0
	tap_result $(( ${n:-0} > 0 && d2 * 5 >= d1 + d2 )) \
		"MRC: traffic returns to plane 2 ($((d2 * 100 / (d1 + d2 + 1))) % of the bytes after the heal, active EVs on it: $evs)"
fi

# Forged address announcements (mrc_peer addrs, its own namespaces): the
# real HSACK's address is learned and probed (the control: the parser
# works), the forged ones (wrong destination ID before the handshake ends,
# right IDs from an off-path address, wrong source ID) are dropped: no
# packet to the forged address, which the connection never lists.
if ! planes_missing 2 "MRC: address announcements"; then
	NS_P=mrc-pa NS_V=mrc-pv
	PA=10.99.0.1 VA=10.99.0.2 LEGIT=10.99.0.3 FORGED=10.99.0.4 OFFPATH=10.99.0.9
	ip netns add $NS_P && ip netns add $NS_V && link $NS_P veth0 $NS_V veth0 &&
		ip -n $NS_P link set lo up && ip -n $NS_V link set lo up
	for a in $PA $LEGIT $FORGED $OFFPATH; do addr $NS_P veth0 "$a/24"; done
	addr $NS_V veth0 $VA/24
	ip netns exec $NS_V ./mrc_peer -N $NS_P -l $PA -r $VA -m addrs -A $LEGIT -F $FORGED \
		-O $OFFPATH -n 3 > "$out/peer" 2>&1 &
	peer=$!
	for i in $(seq 1 200); do grep -q holding "$out/peer" && break; sleep 0.1; done
	mrcctl -n $NS_V -j conn show -e > "$out/vconn" 2>&1
	wait_for $peer 30
	echo "# mrc_peer: $(tr '\n' ' ' < "$out/peer")"
	listed=$(grep -c "$FORGED" "$out/vconn")
	conns=$(jq length "$out/vconn" 2>/dev/null)
	tap_result $(( $(kv "$out/peer" addr_learned) >= 1 && $(kv "$out/peer" legit_rx) > 0 )) \
		"MRC: an address announced in the real HSACK is learned and probed"
	# each of the three forgeries is counted: the first as a bad cookie
	# (the cookie covers the destination ID), the others as bad IDs
	tap_result $(( ${conns:-0} >= 1 && listed == 0 && $(kv "$out/peer" forged_rx) == 0 &&
		$(kv "$out/peer" bad_id) + $(kv "$out/peer" addr_rejected) +
		$(kv "$out/peer" bad_cookie) >= 3 )) \
		"MRC: forged announcements (wrong IDs, off-path source) ignored and counted"
	ip netns del $NS_P
	ip netns del $NS_V
fi

# An IPv4-only plane 1 and an IPv6-only plane 2, named explicitly on both
# hosts: one IPv4 connection uses both (>= 30 % each).
if ! planes_missing 1 "MRC: an IPv4-only and an IPv6-only plane serve one connection"; then
	ok=1
	fabric_planes_up $SPINES v4 v6 || ok=0
	ip netns exec $NS_A "$MRCCTL" plane show > /dev/null 2>&1 ||
		{ echo "# mrcctl plane: $(ip netns exec $NS_A "$MRCCTL" plane show 2>&1)"; ok=0; }
	for h in a b; do
		ns=$NS_A
		[ $h = b ] && ns=$NS_B
		ip netns exec $ns "$MRCCTL" plane add "$(plane_addr 1 $h)" 2>/dev/null || ok=0
		ip netns exec $ns "$MRCCTL" plane add "$(plane_addr 2 $h 6)" 2>/dev/null || ok=0
		ip netns exec $ns "$MRCCTL" plane show 2>/dev/null | sed "s/^/# $ns: /"
	done
	read -ra b0 <<< "$(fabric_planes_bytes ab)"
	xfer_bg 7204 4
	xfer_end
	read -ra b1 <<< "$(fabric_planes_bytes ab)"
	d1=$((b1[0] - b0[0])) d2=$((b1[1] - b0[1]))
	echo "# IPv4 plane 1 $d1 bytes, IPv6 plane 2 $d2 bytes"
	tap_result $(( ok && XFER_OK && d1 * 10 >= (d1 + d2) * 3 && d2 * 10 >= (d1 + d2) * 3 )) \
		"MRC: an IPv4-only and an IPv6-only plane serve one connection ($((d1 * 100 / (d1 + d2 + 1))) % / $((d2 * 100 / (d1 + d2 + 1))) %)"
fi
rm -rf "$out"
tap_done
