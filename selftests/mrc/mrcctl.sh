#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The control plane: the "mrc" generic netlink family through mrcctl and the
# kernel's own ynl cli.py.  Config round trips and range checks, privilege,
# connection and path dumps, EV policies, planes (add/show/del, their errors
# and events), counters, Prometheus output (checked by promtool), events on a
# blackholed spine, JSON output, and a UDP port change used by new
# connections.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
trap 'kill $(jobs -p) 2>/dev/null; ip netns del mrc-cfg 2>/dev/null; ip netns del mrc-pl 2>/dev/null
      fabric_down' EXIT
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
SPEC=$(cd ../../Documentation/netlink/specs && pwd)/mrc.yaml
KSRC=${MRC_CACHE:-/var/cache/mrc}/linux-source-6.12
out=$(mktemp -d)
SPINES=4

mrcctl() { "$MRCCTL" "$@"; }
# ok CMD...: one TAP line named after the command's description in $DESC
check() { tap_result $(( $1 == 0 )) "$2"; }

tap_plan 62
[ -x "$MRCCTL" ] || { echo "# $MRCCTL not built"; exit 1; }
fabric_up $SPINES || { echo "# cannot build the fabric"; exit 1; }
ip netns add mrc-cfg && ip -n mrc-cfg link set lo up

# --- info ---------------------------------------------------------------
fam=$(mrcctl -j info | jq -r .family)
mrcctl info | sed 's/^/# /'
[ "$fam" = "$(mrc_family)" ]
check $? "info reports the live AF_MRC number ($fam)"

# --- config: round trip of every key -------------------------------------
declare -A want=(
	[udp-port]=5001 [ev-count]=8 [ev-port-min]=40000 [ev-port-max]=50000
	[retire-losses]=3 [ecn]=0 [redundancy]=2 [probe-interval-ms]=120
	[min-rto-us]=2000 [max-rto-us]=3000000 [init-cwnd]=32
	[user-timeout-ms]=10000 [dctcp-shift]=5 [delay-target-us]=1500 [urgent-dscp]=46
	[burst-max]=8
)
for k in udp-port ev-count ev-port-min ev-port-max retire-losses ecn redundancy \
	 probe-interval-ms min-rto-us max-rto-us init-cwnd user-timeout-ms dctcp-shift \
	 delay-target-us urgent-dscp burst-max; do
	mrcctl -n mrc-cfg config set "$k" "${want[$k]}" &&
	got=$(mrcctl -n mrc-cfg -j config show | jq -r ".${k//-/_}") &&
	txt=$(mrcctl -n mrc-cfg config show | awk -v k="$k" '$1 == k {print $2}')
	[ "$got" = "${want[$k]}" ] && [ "$txt" = "${want[$k]}" ]
	check $? "config $k: set ${want[$k]}, read back $got"
done

# --- config: out-of-range values are refused with the kernel's message ----
refused() {	# EXPECTED-TEXT ARGS...: config set fails with EXPECTED-TEXT on stderr
	local text=$1 err rc
	shift
	err=$(mrcctl -n mrc-cfg config set "$@" 2>&1 >/dev/null)
	rc=$?
	echo "# config set $*: rc $rc: $err"
	[ $rc -ne 0 ] && grep -q -- "$text" <<< "$err"
}
refused "ev-count: integer out of range (valid range 1..256)" ev-count 0
check $? "ev-count 0 is refused with the policy's range"
refused "redundancy: integer out of range" redundancy 9 &&
	refused "min-rto-us: integer out of range" min-rto-us 5 &&
	refused "urgent-dscp: integer out of range" urgent-dscp 64
check $? "redundancy 9, min-rto-us 5 and urgent-dscp 64 are refused"
refused "burst-max: integer out of range" burst-max 0 &&
	refused "burst-max: integer out of range" burst-max 45
check $? "burst-max 0 and 45 are refused"
refused "ev-port-min is above ev-port-max" ev-port-min 60000 ev-port-max 50000
check $? "ev-port-min above ev-port-max is refused with the kernel's message"
refused "min-rto-us is above max-rto-us" min-rto-us 5000000 max-rto-us 4000000 &&
	[ "$(mrcctl -n mrc-cfg -j config show | jq .min_rto_us)" = 2000 ]
check $? "min-rto-us above max-rto-us is refused and nothing changes"
mrcctl config set no-such-key 1 2>/dev/null; r1=$?
mrcctl config set ev-count lots 2>/dev/null; r2=$?
mrcctl bogus 2>/dev/null; r3=$?
[ $r1 -ne 0 ] && [ $r2 -ne 0 ] && [ $r3 -ne 0 ]
check $? "unknown keys, bad numbers and unknown words fail ($r1 $r2 $r3)"

# --- privilege ----------------------------------------------------------
err=$(ip netns exec mrc-cfg unshare -U -r "$MRCCTL" config set ev-count 4 2>&1)
rc=$?
echo "# unprivileged config set: rc $rc: $err"
[ $rc -ne 0 ] && grep -q "Operation not permitted" <<< "$err" &&
	[ "$(mrcctl -n mrc-cfg -j config show | jq .ev_count)" = 8 ]
check $? "a user namespace without CAP_NET_ADMIN over the netns cannot change config"
ip netns exec mrc-cfg unshare -U -r "$MRCCTL" policy add ports 50000 exclude 2>/dev/null
rc1=$?
v=$(ip netns exec mrc-cfg unshare -U -r "$MRCCTL" -j config show | jq .ev_count)
# connection IDs authenticate packets: conn show needs CAP_NET_ADMIN too
err=$(ip netns exec mrc-cfg unshare -U -r "$MRCCTL" -j conn show 2>&1 >/dev/null)
rc2=$?
[ $rc1 -ne 0 ] && [ "$v" = 8 ] && [ $rc2 -ne 0 ] && grep -q "Operation not permitted" <<< "$err"
check $? "it cannot add policies nor read connections, but reads config"

# --- planes: a namespace with five dummy devices, one address each ---------
PL=mrc-pl
ip netns add $PL && ip -n $PL link set lo up &&
	ns_sysctl $PL net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 &&
	for i in 1 2 3 4 5; do
		ip -n $PL link add pl$i type dummy && ip -n $PL link set pl$i up || break
	done &&
	addr $PL pl1 10.70.1.1/24 && addr $PL pl2 fd70:2::1/64 && addr $PL pl3 10.70.3.1/24 &&
	addr $PL pl4 10.70.4.1/24 && addr $PL pl5 10.70.5.1/24 ||
	echo "# cannot build the planes namespace"
# plane_err EXPECTED-TEXT ARGS...: mrcctl -n $PL plane ARGS fails with the text
plane_err() {
	local text=$1 err rc
	shift
	err=$(mrcctl -n $PL plane "$@" 2>&1 >/dev/null)
	rc=$?
	echo "# plane $*: rc $rc: $err"
	[ $rc -eq 2 ] && grep -q -- "$text" <<< "$err"
}
mrcctl -n $PL plane show | sed 's/^/# default: /'
mrcctl -n $PL -j plane show | jq -e 'length >= 5 and all(.[]; .default and .up) and
	any(.[]; .addr == "10.70.1.1" and .dev == "pl1") and any(.[]; .addr == "fd70:2::1") and
	all(.[]; .addr | test("^(fe80|127\\.|::1$)") | not)' > /dev/null
check $? "plane show without configured planes lists each device's global address, as default"

mrcctl -n $PL plane add 10.70.1.1 && mrcctl -n $PL plane add fd70:2::1 &&
	mrcctl -n $PL plane show > "$out/planes.txt"
sed 's/^/# /' "$out/planes.txt"
printf '%s\n' "plane 1 10.70.1.1 dev pl1 up down_events 0 up_events 0" \
	"plane 2 fd70:2::1 dev pl2 up down_events 0 up_events 0" | diff - "$out/planes.txt" &&
	mrcctl -n $PL -j plane show | jq -e 'length == 2 and .[0].id == 1 and
		.[0].family == 2 and .[1].family == 10 and .[1].dev == "pl2" and
		(.[1].ifindex > 0) and all(.[]; (.default | not) and .up)' > /dev/null
check $? "plane add of an IPv4 and an IPv6 address: plane show lists exactly these"

# events: the device of plane 1 goes down and comes back
"$MRCCTL" -n $PL -j monitor > "$out/mon-pl.json" 2>&1 &
mon=$!
"$MRCCTL" -n $PL monitor > "$out/mon-pl.txt" 2>&1 &
mon2=$!
sleep 0.5
ip -n $PL link set pl1 down
sleep 0.5
ip -n $PL link set pl1 up
sleep 1
kill $mon $mon2 2>/dev/null
wait $mon $mon2 2>/dev/null
sed 's/^/# /' "$out/mon-pl.txt"
grep -qx "plane-down id 1 addr 10.70.1.1 dev pl1" "$out/mon-pl.txt" &&
	grep -qx "plane-up id 1 addr 10.70.1.1 dev pl1" "$out/mon-pl.txt" &&
	jq -e -s 'any(.[]; .event == "plane-down" and .addr == "10.70.1.1" and (.up | not)) and
		  any(.[]; .event == "plane-up" and .addr == "10.70.1.1" and .up)' \
		"$out/mon-pl.json" > /dev/null &&
	mrcctl -n $PL plane show | grep -qx "plane 1 10.70.1.1 dev pl1 up down_events 1 up_events 1"
check $? "a plane's device down and up: monitor reports plane-down and plane-up, show counts them"

plane_err "addr: no device of the namespace has this address (Cannot assign requested address)" \
	add 10.70.9.9 &&
	plane_err "addr: this address is already a plane (File exists)" add 10.70.1.1
check $? "plane add of an address no device has, or of a plane, is refused"
mrcctl -n $PL plane add 10.70.3.1 && mrcctl -n $PL plane add 10.70.4.1 &&
	plane_err "at most 4 planes per namespace (No space left on device)" add 10.70.5.1 &&
	[ "$(mrcctl -n $PL -j plane show | jq length)" = 4 ]
check $? "a fifth plane is refused"
plane_err "addr: no plane with this address (No such file or directory)" del 10.70.5.1
check $? "plane del of an address that is no plane is refused"
err=$(ip netns exec $PL unshare -U -r "$MRCCTL" plane add 10.70.5.1 2>&1)
rc=$?
echo "# unprivileged plane add: rc $rc: $err"
ip netns exec $PL unshare -U -r "$MRCCTL" plane del 10.70.1.1 2>/dev/null
rc2=$?
[ $rc -eq 2 ] && grep -q "Operation not permitted" <<< "$err" && [ $rc2 -eq 2 ] &&
	[ "$(ip netns exec $PL unshare -U -r "$MRCCTL" -j plane show | jq length)" = 4 ]
check $? "without CAP_NET_ADMIN over the netns plane add and del fail, plane show works"

# the kernel's ynl cli.py: a plane-del (the address in hex) and a dump
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
YNL="$py $KSRC/tools/net/ynl/cli.py --spec $SPEC"
ip netns exec $PL $YNL --do plane-del --json '{"addr": "0a460401"}' > "$out/ynl-pl.txt" 2>&1 &&
	ip netns exec $PL $YNL --dump plane-get >> "$out/ynl-pl.txt" 2>&1
rc=$?
sed 's/^/# ynl: /' "$out/ynl-pl.txt"
[ $rc -eq 0 ] && grep -q "'addr': '10.70.3.1'" "$out/ynl-pl.txt" &&
	grep -q "'ifname': 'pl2'" "$out/ynl-pl.txt" && ! grep -q "10.70.4.1" "$out/ynl-pl.txt"
check $? "tools/net/ynl/cli.py --do plane-del and --dump plane-get"

mrcctl -n $PL plane del 10.70.1.1 &&
	mrcctl -n $PL plane show | head -n 1 | grep -qx "plane 1 fd70:2::1 dev pl2 up down_events 0 up_events 0" &&
	mrcctl -n $PL plane del fd70:2::1 && mrcctl -n $PL plane del 10.70.3.1 &&
	mrcctl -n $PL -j plane show | jq -e 'length >= 5 and all(.[]; .default)' > /dev/null
check $? "plane del: the ids of the planes after it shift, the last one brings the default back"

# --- a live connection and its EVs ---------------------------------------
ip netns exec $NS_B ./mrc_hold -l -p 7000 > "$out/srv" 2>&1 &
for i in $(seq 1 50); do grep -q listening "$out/srv" && break; sleep 0.1; done
# it must outlive the last case (the EXIT trap ends it): 127 s passed under TCG
# with other VMs on the host
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7000 -t 400 > "$out/cli1" 2>&1 &
for i in $(seq 1 100); do grep -q connected "$out/cli1" && break; sleep 0.1; done
sleep 1
mrcctl -n $NS_A -j conn show -e > "$out/conn.json"
mrcctl -n $NS_A conn show -e | sed 's/^/# /'
jq -e --arg b "$B4" 'length >= 1 and (.[0].remote_addr == $b) and
	(.[0].state == "established") and (.[0].remote_port == 7000) and
	(.[0].evs | length >= 1) and all(.[0].evs[]; .port >= 49152)' \
	"$out/conn.json" > /dev/null
check $? "conn show lists the live connection with its EVs"
jq -e --arg a "$A4" --arg b "$B4" '(.[0].paths | length) as $n | $n >= 1 and
	.[0].paths[0].index == 0 and .[0].paths[0].local_addr == $a and
	.[0].paths[0].remote_addr == $b and .[0].paths[0].up and
	all(.[0].evs[]; .path < $n)' "$out/conn.json" > /dev/null
check $? "conn show -e lists the connection's paths, path 0 its own, and each EV's path"
id=$(jq '.[0].local_id' "$out/conn.json")
# the ID as conn show prints it (hex), which conn show id reads
hexid=$(printf %08x "${id:-0}")
mrcctl -n $NS_A conn show | grep -q "^id $hexid " &&
	mrcctl -n $NS_A -j conn show id "$hexid" -e | jq -e --argjson id "$id" \
	'.[0].local_id == $id and (.[0].evs | length >= 1) and .[0].bytes_sent > 0' > /dev/null &&
	mrcctl -n $NS_A -j conn show id "0x$hexid" | jq -e --argjson id "$id" \
	'.[0].local_id == $id' > /dev/null
check $? "conn show id ID (a do request), ID copied from conn show ($hexid), returns that connection"
err=$(mrcctl -n $NS_A conn show id 12345 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q "no connection with this local-id" <<< "$err"
check $? "an unknown connection id is refused: $err"

mrcctl -n $NS_A -j paths $B4 > "$out/paths.json"
mrcctl -n $NS_A paths | sed 's/^/# /'
jq -e --arg b "$B4" 'length >= 1 and all(.[]; .peer == $b and .conns >= 1)' \
	"$out/paths.json" > /dev/null
check $? "paths PEER: a heatmap row per source port toward the peer"
[ "$(mrcctl -n $NS_A -j paths 10.9.9.9 | jq length)" = 0 ]
check $? "paths of an unknown peer is empty"
# path-get takes each connection's socket lock: a user without CAP_NET_ADMIN
# over the netns gets the rows of its own connections only (issue 33)
asnobody() { ip netns exec $NS_A setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# not through the function: in the background it would run in a subshell,
# and the kill below would end the subshell and leave mrc_hold running
ip netns exec $NS_A setpriv --reuid=65534 --regid=65534 --clear-groups \
	./mrc_hold -c $B4 -p 7000 -t 400 > "$out/cli-nobody" 2>&1 &
nobody=$!
for i in $(seq 1 100); do grep -q "connected\|error" "$out/cli-nobody" && break; sleep 0.1; done
sleep 1
mrcctl -n $NS_A -j paths $B4 > "$out/paths-root.json"
asnobody "$MRCCTL" -j paths $B4 > "$out/paths-nobody.json" 2>&1
rc=$?
all=$(jq '[.[].conns] | add // 0' "$out/paths-root.json")
own=$(jq '[.[].conns] | add // 0' "$out/paths-nobody.json" 2>/dev/null)
echo "# paths toward $B4: $all EVs of the root's and nobody's connections, $own as nobody (rc $rc)"
[ $rc -eq 0 ] && [ "${own:-0}" -gt 0 ] && [ "$own" -lt "$all" ] &&
	jq -e 'all(.[]; .conns == 1)' "$out/paths-nobody.json" > /dev/null
check $? "paths as an unprivileged user: only its own connection's EVs ($own of $all)"
kill $nobody 2>/dev/null
wait $nobody 2>/dev/null
# its close ends in a FIN exchange, usually gone at once; the cases below
# pick their connection by its local port all the same
for i in $(seq 1 50); do
	[ "$(mrcctl -n $NS_A -j conn show | jq length)" = 1 ] && break; sleep 0.1
done
mrcctl -n $NS_A -j conn show -e | jq -c --argjson id "$id" '.[] | select(.local_id != $id) |
	{evs: ([.evs[].state] | group_by(.) | map({(.[0]): length}) | add)} + del(.evs, .paths)' |
	sed 's/^/# still open 5 s after its close: /'

# --- the kernel's ynl cli.py ---------------------------------------------
ip netns exec $NS_A $py "$KSRC/tools/net/ynl/cli.py" --spec "$SPEC" --dump conn-get \
	> "$out/cli.txt" 2>&1
rc=$?
head -n 12 "$out/cli.txt" | sed 's/^/# /'
[ $rc -eq 0 ] && grep -q "'local-id': $id" "$out/cli.txt" && grep -q "'ev':" "$out/cli.txt"
check $? "tools/net/ynl/cli.py --dump conn-get shows the connection"

# --- EV policies -----------------------------------------------------------
p1=$(mrcctl -n $NS_A -j policy add peer $B4 ports 50000-50100 exclude | jq .id)
p2=$(mrcctl -n $NS_A -j policy add ports 60000 pin | jq .id)
mrcctl -n $NS_A policy show | sed 's/^/# /'
mrcctl -n $NS_A -j policy show | jq -e --arg b "$B4" --argjson p1 "$p1" --argjson p2 "$p2" \
	'length == 2 and .[0].id == $p1 and .[0].peer == $b and .[0].port_min == 50000 and
	 .[0].port_max == 50100 and .[0].action == "exclude" and .[1].id == $p2 and
	 .[1].peer == "any" and .[1].action == "pin"' > /dev/null
check $? "policy add/show: an exclude toward a peer and a pin for every peer"
mrcctl -n $NS_A policy del "$p1" && mrcctl -n $NS_A policy del id "$p2" &&
	[ "$(mrcctl -n $NS_A -j policy show | jq length)" = 0 ]
check $? "policy del removes them"
err=$(mrcctl -n $NS_A policy del 999 2>&1); rc1=$?
err2=$(mrcctl -n $NS_A policy add ports 300-200 exclude 2>&1); rc2=$?
echo "# $err / $err2"
[ $rc1 -ne 0 ] && grep -q "no policy with this id" <<< "$err" &&
	[ $rc2 -ne 0 ] && grep -q "port-min is above port-max" <<< "$err2"
check $? "policy del of an unknown id and an inverted range are refused"

# A pin with fewer ports than the connection's EVs (64 by default): one EV
# on each pinned port and none elsewhere, ev-count says 4; a pin outside
# the namespace's EV range leaves no port: connect() fails, EADDRNOTAVAIL.
p3=$(mrcctl -n $NS_A -j policy add peer $B4 ports 60000-60003 pin | jq .id)
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7000 -t 400 > "$out/cli-pin" 2>&1 &
pin_pid=$!
for i in $(seq 1 100); do grep -q connected "$out/cli-pin" && break; sleep 0.1; done
pin_port=$(sed -n 's/^connected port //p' "$out/cli-pin")
mrcctl -n $NS_A -j conn show -e > "$out/pin.json"
kill $pin_pid
jq -r --argjson p "${pin_port:-0}" '.[] | select(.local_port == $p) |
	"# pinned (port \($p)): ev_count \(.ev_count), EV ports \([.evs[].port] | sort)"' "$out/pin.json"
jq -e --argjson p "${pin_port:-0}" '[.[] | select(.local_port == $p)] | length == 1 and
	(.[0].ev_count == 4) and ([.[0].evs[].port] | sort == [60000, 60001, 60002, 60003])' \
	"$out/pin.json" > /dev/null
check $? "a pin of 4 ports toward a peer: its new connection runs 4 EVs, one on each"
mrcctl -n $NS_A policy del "$p3"
p4=$(mrcctl -n $NS_A -j policy add peer $B4 ports 40000-40003 pin | jq .id)
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7000 -t 1 > "$out/cli-pin" 2>&1
rc=$?
echo "# pin outside the EV range: rc $rc: $(cat "$out/cli-pin")"
mrcctl -n $NS_A policy del "$p4"
[ $rc -ne 0 ] && grep -q "error Cannot assign requested address" "$out/cli-pin"
check $? "a pin outside the EV port range leaves no port: connect() fails with EADDRNOTAVAIL"

# --- counters --------------------------------------------------------------
abs=$(mrcctl -n $NS_A -j stats -a | jq .TxPackets)
export MRCCTL_HISTORY=$out/hist
mrcctl -n $NS_A stats -r
sleep 1
delta=$(mrcctl -n $NS_A -j stats | jq .TxPackets)
abs2=$(mrcctl -n $NS_A -j stats -a -s | jq .TxPackets)
echo "# TxPackets absolute $abs then $abs2, delta over 1 s $delta"
[ "${abs:-0}" -gt 0 ] && [ "${delta:-0}" -gt 0 ] && [ "$delta" -lt "$abs2" ]
check $? "stats: absolute counters and nstat-like deltas"
unset MRCCTL_HISTORY

# --- -o prometheus: the node exporter's textfile format --------------------
# One promtool run over the five outputs (their families are distinct):
# each start is slow under emulation.  Lint problems count as failures too.
# paths and conn show: a series per peer by default (no ephemeral port nor
# EV in a label), per EV and per connection with --per-ev and --per-conn.
if command -v promtool > /dev/null; then
	mrcctl -n $NS_A stats -o prometheus > "$out/stats.prom" &&
		mrcctl -n $NS_A paths -o prometheus > "$out/paths.prom" &&
		mrcctl -n $NS_A conn show -o prometheus > "$out/conn.prom" &&
		mrcctl -n $NS_A paths --per-ev -o prometheus > "$out/paths-ev.prom" &&
		mrcctl -n $NS_A conn show --per-conn -o prometheus > "$out/conn-each.prom"
	rc=$?
	cat "$out/stats.prom" "$out/paths.prom" "$out/conn.prom" "$out/paths-ev.prom" \
		"$out/conn-each.prom" | promtool check metrics > "$out/promtool" 2>&1
	prc=$?
	for f in stats paths conn paths-ev conn-each; do
		grep -m 1 -B 2 -E '^mrc_(tx_packets_total|paths?_sent_packets_total|conns?_sent_bytes)' \
			"$out/$f.prom" | sed "s/^/# $f: /"
	done
	sed 's/^/# promtool: /' "$out/promtool"
	[ $rc -eq 0 ] && [ $prc -eq 0 ] && [ ! -s "$out/promtool" ] &&
		[ -s "$out/paths.prom" ] && [ -s "$out/conn.prom" ]
	check $? "stats, paths and conn show -o prometheus (and --per-ev, --per-conn) pass promtool check metrics, no lint"
	grep -Eq "^mrc_tx_packets_total\\{netns=\"$NS_A\"\\} [1-9]" "$out/stats.prom" &&
		grep -Eq "^mrc_paths_sent_packets\\{netns=\"$NS_A\",peer=\"$B4\"\\} [1-9]" \
			"$out/paths.prom" &&
		grep -Eq "^mrc_conns\\{netns=\"$NS_A\",peer=\"$B4\",state=\"established\"\\} [1-9]" \
			"$out/conn.prom" &&
		! grep -q "port=" "$out/paths.prom" "$out/conn.prom"
	check $? "-o prometheus: TxPackets, the peer's sent packets and connections (netns, peer; no port) non-zero"
	grep -Eq "^mrc_path_sent_packets_total\\{netns=\"$NS_A\",peer=\"$B4\",port=\"[0-9]+\"\\} [1-9]" \
			"$out/paths-ev.prom" &&
		grep -Eq "^mrc_conn_sent_bytes_total\\{netns=\"$NS_A\",local_addr=\"[^\"]+\",local_port=\"[0-9]+\",remote_addr=\"$B4\",remote_port=\"7000\"\\} [0-9]" \
			"$out/conn-each.prom"
	check $? "paths --per-ev and conn show --per-conn: a path's sent packets (peer, port), a connection's bytes"
else
	tap_skip "stats, paths and conn show -o prometheus pass promtool check metrics" \
		"promtool not installed"
	tap_skip "-o prometheus: TxPackets, the peer's sent packets and connections non-zero" \
		"promtool not installed"
	tap_skip "paths --per-ev and conn show --per-conn" "promtool not installed"
fi
err=$(mrcctl -n $NS_A stats -o yaml 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] && grep -q 'unknown output format "yaml"' <<< "$err"
check $? "an unknown -o format is a usage error (rc $rc): $err"

# --- events: a blackholed spine retires EVs, healing re-admits them --------
"$MRCCTL" -n $NS_A -j monitor > "$out/mon.json" 2>&1 &
mon=$!
"$MRCCTL" -n $NS_A monitor -t > "$out/mon.txt" 2>&1 &
mon2=$!
sleep 0.5
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7000 -t 2 > "$out/cli2" 2>&1
fabric_blackhole 1
fabric_blackhole 2
sleep 3
mrcctl -n $NS_A -j paths $B4 > "$out/paths-dead.json"
mrcctl -n $NS_A paths $B4 | sed 's/^/# /'
fabric_heal 1
fabric_heal 2
sleep 4
kill $mon $mon2 2>/dev/null
wait $mon $mon2 2>/dev/null
sed 's/^/# /' "$out/mon.txt" | head -20
jq -e -s 'length > 0' "$out/mon.json" > /dev/null
check $? "monitor -j prints one JSON object per event"
jq -e '[.[] | select(.state == "retired")] | length >= 1' "$out/paths-dead.json" > /dev/null
check $? "paths shows source ports of the dead spines as retired during the transfer"
jq -e -s 'any(.[]; .event == "ev-retired")' "$out/mon.json" > /dev/null
check $? "monitor reports ev-retired when spines are blackholed"
jq -e -s 'any(.[]; .event == "ev-readmitted")' "$out/mon.json" > /dev/null
check $? "monitor reports ev-readmitted when they heal"
jq -e -s 'any(.[]; .event == "conn-established") and any(.[]; .event == "conn-closed")' \
	"$out/mon.json" > /dev/null
check $? "monitor reports conn-established and conn-closed"

# --- every -j output is JSON ---------------------------------------------
bad=0
for args in "info" "config show" "conn show" "conn show -e" "paths" "policy show" \
	    "plane show" "stats" "stats -a -z"; do
	# shellcheck disable=SC2086
	mrcctl -n $NS_A -j $args | jq -e . > /dev/null || { echo "# not JSON: $args"; bad=1; }
	# shellcheck disable=SC2086
	mrcctl -n $NS_A -j -p $args | jq -e . > /dev/null || { echo "# not JSON: -p $args"; bad=1; }
done
check $bad "every show command's -j (and -j -p) output parses as JSON"

# --- a new UDP port is used by new connections ------------------------------
b0=$(mrcctl -n $NS_A -j conn show | jq "[.[] | select(.local_id == $id)][0].bytes_acked")
mrcctl -n $NS_A config set udp-port 5555 && mrcctl -n $NS_B config set udp-port 5555
check $? "udp-port changes with connections open"
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7000 -t 60 > "$out/cli3" 2>&1 &
for i in $(seq 1 100); do grep -q connected "$out/cli3" && break; sleep 0.1; done
sleep 1
mrcctl -n $NS_A -j conn show > "$out/conn2.json"
jq -c '.[] | {local_id, udp_dport, state, bytes_acked}' "$out/conn2.json" | sed 's/^/# /'
ip netns exec $NS_B ss -Huln | sed 's/^/# b: /'
grep -q connected "$out/cli3" &&
	jq -e --argjson id "$id" 'any(.[]; .local_id != $id and .udp_dport == 5555 and
				      .state == "established")' "$out/conn2.json" > /dev/null &&
	ip netns exec $NS_B ss -Huln | grep -q ":5555 "
check $? "a new connection uses the new UDP port"
b1=$(jq "[.[] | select(.local_id == $id)][0].bytes_acked" "$out/conn2.json")
sleep 2
b2=$(mrcctl -n $NS_A -j conn show | jq "[.[] | select(.local_id == $id)][0].bytes_acked")
echo "# old connection bytes_acked: $b0 -> $b1 -> $b2"
[ "$(jq "[.[] | select(.local_id == $id)][0].udp_dport" "$out/conn2.json")" = 4797 ] &&
	[ "${b2:-0}" -gt "${b1:-0}" ] && ip netns exec $NS_B ss -Huln | grep -q ":4797 "
check $? "the old connection keeps its port and keeps delivering"
mrcctl -n $NS_A config set udp-port 4797 && mrcctl -n $NS_B config set udp-port 4797 &&
	mrcctl -n $NS_A -j info | jq -e '.udp_port == 4797' > /dev/null
check $? "udp-port goes back to a port whose old socket is still open"

tap_done
