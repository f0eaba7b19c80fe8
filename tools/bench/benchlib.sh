# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Guest-side helpers shared by tools/demo and tools/bench, on top of
# selftests/mrc/lib.sh (source that first, from selftests/mrc).
#
# Under TCG every `ip netns exec` costs seconds of a busy guest, so the
# counters are read without entering namespaces: one sleeping "holder"
# process per namespace, and /proc/PID/net/{dev,mrc_stats} of that process
# are the namespace's.  One awk reads them all.

MRCCTL=${MRCCTL:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../mrcctl" && pwd)/mrcctl}
declare -A HOLD

# hold_start: a holder in a, b and every spine (after fabric_up)
hold_start() {
	local ns
	for ns in $NS_A $NS_B $(for i in $(seq 1 "$FABRIC_SPINES"); do ns_spine "$i"; done); do
		ip netns exec "$ns" sleep 1000000 &
		HOLD[$ns]=$!
	done
	sleep 0.5
}

hold_stop() {
	local p
	for p in "${HOLD[@]}"; do kill "$p" 2>/dev/null; done
	HOLD=()
}

# snap: one line "ms F1..FN R1..RN EvRetired EvReadmitted": the time in ms
# since the epoch, bytes each spine forwarded a->b (tx of its l2 link), bytes
# each spine received from l1 (forwarded or dropped) and a's EV counters.
snap() {
	local files=() i
	for i in $(seq 1 "$FABRIC_SPINES"); do
		files+=("/proc/${HOLD[$(ns_spine "$i")]}/net/dev")
	done
	awk -v n="$FABRIC_SPINES" -v ms="$(date +%s%3N)" '
		FNR == 1 { f++ }
		FILENAME ~ /net\/dev$/ { sub(/:/, " "); if ($1 == "l2") tx[f] = $10; if ($1 == "l1") rx[f] = $2 }
		FILENAME ~ /mrc_stats$/ && $1 == "EvRetired" { ret = $2 }
		FILENAME ~ /mrc_stats$/ && $1 == "EvReadmitted" { rea = $2 }
		END {
			printf "%s", ms
			for (i = 1; i <= n; i++) printf " %d", tx[i]
			for (i = 1; i <= n; i++) printf " %d", rx[i]
			printf " %d %d\n", ret, rea
		}' "${files[@]}" "/proc/${HOLD[$NS_A]}/net/mrc_stats"
}

# read_spines: as snap, with bash builtins only (no process start, so cheap
# on a busy guest): TXB[i] = bytes spine i forwarded a->b, RET and REA = a's
# EvRetired and EvReadmitted
declare -a TXB
RET=0 REA=0
read_spines() {
	local i line f
	for ((i = 1; i <= FABRIC_SPINES; i++)); do
		while IFS= read -r line; do
			line=${line/:/ }
			read -ra f <<< "$line"
			[ "${f[0]}" = l2 ] && TXB[i]=${f[9]}
		done < "/proc/${HOLD[mrc-s$i]}/net/dev"
	done
	while read -r f line; do
		case $f in EvRetired) RET=$line ;; EvReadmitted) REA=$line ;; esac
	done < "/proc/${HOLD[$NS_A]}/net/mrc_stats"
}

# busiest_now SECONDS: the spine that forwarded most a->b in the next SECONDS
busiest_now() {
	local i best=1 a
	read_spines; a=("" "${TXB[@]:1}")
	sleep "$1"
	read_spines
	for ((i = 2; i <= FABRIC_SPINES; i++)); do
		[ $((TXB[i] - a[i])) -gt $((TXB[best] - a[best])) ] && best=$i
	done
	echo $best
}

# busiest_spine SNAP1 SNAP2: the spine that forwarded most a->b between two snaps
busiest_spine() {
	awk -v n="$FABRIC_SPINES" -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " "); best = 1
		for (i = 1; i <= n; i++) if (y[i + 1] - x[i + 1] > y[best + 1] - x[best + 1]) best = i
		print best }'
}

# ev_spines PORT...: "PORT SPINE" for each EV (UDP source port of a's MRC
# packets), from the leaf's own ECMP decision (ip route get with ports)
ev_spines() {
	local p
	for p in "$@"; do
		echo "route get $B4 from $A4 iif a0 ipproto udp sport $p dport ${MRC_UDP_PORT:-4797}"
	done | ip -n "$NS_L1" -batch - 2>/dev/null |
		awk -v ports="$*" 'BEGIN { split(ports, p, " ") }
			/ dev s[0-9]+/ { for (i = 1; i < NF; i++) if ($i == "dev") { sub(/^s/, "", $(i + 1)); print p[++k], $(i + 1) } }'
}

# tcp_spine SPORT DPORT: the spine a TCP flow a:SPORT -> b:DPORT takes
tcp_spine() {
	ip -n "$NS_L1" route get "$B4" from "$A4" iif a0 ipproto tcp sport "$1" dport "$2" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { sub(/^s/, "", $(i + 1)); print $(i + 1); exit } }'
}

# conn_evs: "PORT STATE" of every EV of a's established connections
conn_evs() {
	"$MRCCTL" -n "$NS_A" conn show -e 2>/dev/null | awk '
		/^id / { est = ($NF == "established") }
		est && $1 ~ /^[0-9]+$/ && NF >= 10 { print $1, $2 }'
}

# cpu_busy: busy jiffies of the whole guest (user+nice+system+irq+softirq)
cpu_busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }

# fabric_up_fast N: the same fabric as lib.sh's fabric_up N (same names,
# addresses, routes, sysctls), built with one `ip -batch` per namespace and
# one sysctl per namespace: about 10x fewer process starts, which under TCG
# turns a minute of set-up into seconds.  fabric_down undoes it.
fabric_up_fast() {
	local n=$1 i ns all nh4a= nh6a= nh4b= nh6b= b
	fabric_down
	fabric_pin_keys || return 1
	FABRIC_SPINES=$n FABRIC_LEAVES=2
	b=$(mktemp -d)
	all="$NS_A $NS_B $NS_L1 $NS_L2"
	for i in $(seq 1 "$n"); do all="$all $(ns_spine "$i")"; done
	for ns in $all; do ip netns add "$ns" || return 1; done
	for ns in $all; do
		local kv="net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0"
		kv="$kv net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1"
		case $ns in
		"$NS_L1"|"$NS_L2")
			kv="$kv net.ipv4.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_fields=0x37"
			kv="$kv net.ipv6.fib_multipath_hash_policy=3 net.ipv6.fib_multipath_hash_fields=0x37" ;;
		"$NS_A"|"$NS_B")
			kv="$kv net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0" ;;
		esac
		# shellcheck disable=SC2086
		ip netns exec "$ns" sysctl -qw $kv || return 1
	done
	{
		echo "link add eth0 netns $NS_A type veth peer name a0 netns $NS_L1"
		echo "link add eth0 netns $NS_B type veth peer name b0 netns $NS_L2"
		for i in $(seq 1 "$n"); do
			echo "link add s$i netns $NS_L1 type veth peer name l1 netns $(ns_spine "$i")"
			echo "link add s$i netns $NS_L2 type veth peer name l2 netns $(ns_spine "$i")"
		done
	} > "$b/root"
	ip -batch "$b/root" || return 1
	for i in $(seq 1 "$n"); do
		nh4a="$nh4a nexthop via 10.1.$i.2 dev s$i"
		nh6a="$nh6a nexthop via fd01:$i::2 dev s$i"
		nh4b="$nh4b nexthop via 10.2.$i.2 dev s$i"
		nh6b="$nh6b nexthop via fd02:$i::2 dev s$i"
	done
	# per-namespace command files: addresses first, then links up, then routes
	cat > "$b/$NS_A" <<-E
	addr add $A4/24 dev eth0
	addr add $A6/64 dev eth0 nodad
	link set lo up
	link set eth0 up
	route add default via 10.0.1.254
	route add ::/0 via fd00:1::fe
	E
	cat > "$b/$NS_B" <<-E
	addr add $B4/24 dev eth0
	addr add $B6/64 dev eth0 nodad
	link set lo up
	link set eth0 up
	route add default via 10.0.2.254
	route add ::/0 via fd00:2::fe
	E
	{
		echo "addr add 10.0.1.254/24 dev a0"
		echo "addr add fd00:1::fe/64 dev a0 nodad"
		echo "link set lo up"
		echo "link set a0 up"
		for i in $(seq 1 "$n"); do
			echo "addr add 10.1.$i.1/24 dev s$i"
			echo "addr add fd01:$i::1/64 dev s$i nodad"
			echo "link set s$i up"
		done
	} > "$b/$NS_L1"
	{
		echo "addr add 10.0.2.254/24 dev b0"
		echo "addr add fd00:2::fe/64 dev b0 nodad"
		echo "link set lo up"
		echo "link set b0 up"
		for i in $(seq 1 "$n"); do
			echo "addr add 10.2.$i.1/24 dev s$i"
			echo "addr add fd02:$i::1/64 dev s$i nodad"
			echo "link set s$i up"
		done
	} > "$b/$NS_L2"
	for i in $(seq 1 "$n"); do
		ns=$(ns_spine "$i")
		cat > "$b/$ns" <<-E
		addr add 10.1.$i.2/24 dev l1
		addr add 10.2.$i.2/24 dev l2
		addr add fd01:$i::2/64 dev l1 nodad
		addr add fd02:$i::2/64 dev l2 nodad
		link set lo up
		link set l1 up
		link set l2 up
		route add 10.0.1.0/24 via 10.1.$i.1
		route add 10.0.2.0/24 via 10.2.$i.1
		route add fd00:1::/64 via fd01:$i::1
		route add fd00:2::/64 via fd02:$i::1
		E
	done
	for ns in $all; do ip -n "$ns" -batch "$b/$ns" || return 1; done
	# the leaves' ECMP routes, once every spine link is up
	# shellcheck disable=SC2086
	ip -n $NS_L1 route add 10.0.2.0/24 $nh4a &&
	ip -n $NS_L1 route add fd00:2::/64 $nh6a &&
	ip -n $NS_L2 route add 10.0.1.0/24 $nh4b &&
	ip -n $NS_L2 route add fd00:1::/64 $nh6b || { rm -rf "$b"; return 1; }
	rm -rf "$b"
}
