# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers of the mrc shell selftests: TAP output and the leaf-spine
# test fabric.
#
#   a --- l1 ==== s1..sN ==== l2 --- b
#
# Hosts a and b sit behind leaves l1 and l2, joined by N spines.  The leaves
# hash ECMP from the packet headers as a switch does (policy 3, fields 0x37:
# src/dst address, protocol, src/dst port), so a packet's UDP source port
# picks its spine.  Addresses (IPv4 and IPv6):
#   a 10.0.1.1 fd00:1::1     b 10.0.2.1 fd00:2::1
#   spine i: l1 10.1.i.1 / si 10.1.i.2,  l2 10.2.i.1 / si 10.2.i.2
# Names are prefixed so that nothing collides with other namespaces.

. "$(dirname "${BASH_SOURCE[0]}")/../../tools/testing/tap.sh"

KSFT_SKIP=4
NS_A=mrc-a NS_B=mrc-b NS_L1=mrc-l1 NS_L2=mrc-l2
A4=10.0.1.1 B4=10.0.2.1 A6=fd00:1::1 B6=fd00:2::1
FABRIC_SPINES=0 FABRIC_LEAVES=2

ns_spine() { echo "mrc-s$1"; }

# spine_links: a spine's interfaces, one toward each leaf
spine_links() { seq -f 'l%g' 1 "$FABRIC_LEAVES"; }

# ns_sysctl NS KEY=VALUE...
ns_sysctl() {
	local ns=$1 kv
	shift
	for kv in "$@"; do
		ip netns exec "$ns" sysctl -qw "$kv" || return 1
	done
}

# link NS1 IF1 NS2 IF2: a veth pair between two namespaces, both ends up
link() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" &&
	ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up
}

addr() { ip -n "$1" addr add "$3" dev "$2" nodad 2>/dev/null || ip -n "$1" addr add "$3" dev "$2"; }

# fabric_pin_keys: a clsact qdisc with a matchall drop filter, on the
# loopback of a namespace that carries no traffic, holds the kernel's tc
# static keys on.  Blackholing a spine later then patches no kernel text:
# under qemu TCG, live text patching races with packets in flight on the
# other vCPU ("Oops: int3" in __dev_queue_xmit), an emulator artifact.
fabric_pin_keys() {
	# once per boot: a second matchall at the same pref would be EEXIST
	ip netns add mrc-keys 2>/dev/null || return 0
	tc -n mrc-keys qdisc replace dev lo clsact &&
	tc -n mrc-keys filter replace dev lo ingress pref 1 matchall action drop &&
	tc -n mrc-keys filter replace dev lo egress pref 1 matchall action drop
}

# fabric_up N: builds the fabric with N spines (IPv4 and IPv6).
fabric_up() {
	local n=$1 i ns nh4a= nh6a= nh4b= nh6b=
	fabric_down
	fabric_pin_keys || return 1
	FABRIC_SPINES=$n FABRIC_LEAVES=2
	for ns in $NS_A $NS_B $NS_L1 $NS_L2; do
		ip netns add "$ns" || return 1
	done
	for i in $(seq 1 "$n"); do ip netns add "$(ns_spine "$i")" || return 1; done
	for ns in $NS_A $NS_B $NS_L1 $NS_L2 $(for i in $(seq 1 "$n"); do ns_spine "$i"; done); do
		ip -n "$ns" link set lo up
		ns_sysctl "$ns" net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
			net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 || return 1
	done
	for ns in $NS_L1 $NS_L2; do
		ns_sysctl "$ns" net.ipv4.fib_multipath_hash_policy=3 \
			net.ipv4.fib_multipath_hash_fields=0x37 \
			net.ipv6.fib_multipath_hash_policy=3 \
			net.ipv6.fib_multipath_hash_fields=0x37 || return 1
	done
	for ns in $NS_A $NS_B; do
		ns_sysctl "$ns" net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
	done

	link $NS_A eth0 $NS_L1 a0 || return 1
	link $NS_B eth0 $NS_L2 b0 || return 1
	addr $NS_A eth0 $A4/24; addr $NS_A eth0 $A6/64
	addr $NS_L1 a0 10.0.1.254/24; addr $NS_L1 a0 fd00:1::fe/64
	addr $NS_B eth0 $B4/24; addr $NS_B eth0 $B6/64
	addr $NS_L2 b0 10.0.2.254/24; addr $NS_L2 b0 fd00:2::fe/64
	ip -n $NS_A route add default via 10.0.1.254
	ip -n $NS_A -6 route add default via fd00:1::fe
	ip -n $NS_B route add default via 10.0.2.254
	ip -n $NS_B -6 route add default via fd00:2::fe

	for i in $(seq 1 "$n"); do
		ns=$(ns_spine "$i")
		link $NS_L1 "s$i" "$ns" l1 || return 1
		link $NS_L2 "s$i" "$ns" l2 || return 1
		addr $NS_L1 "s$i" "10.1.$i.1/24"; addr "$ns" l1 "10.1.$i.2/24"
		addr $NS_L2 "s$i" "10.2.$i.1/24"; addr "$ns" l2 "10.2.$i.2/24"
		addr $NS_L1 "s$i" "fd01:$i::1/64"; addr "$ns" l1 "fd01:$i::2/64"
		addr $NS_L2 "s$i" "fd02:$i::1/64"; addr "$ns" l2 "fd02:$i::2/64"
		ip -n "$ns" route add 10.0.1.0/24 via "10.1.$i.1"
		ip -n "$ns" route add 10.0.2.0/24 via "10.2.$i.1"
		ip -n "$ns" -6 route add fd00:1::/64 via "fd01:$i::1"
		ip -n "$ns" -6 route add fd00:2::/64 via "fd02:$i::1"
		nh4a="$nh4a nexthop via 10.1.$i.2 dev s$i"
		nh6a="$nh6a nexthop via fd01:$i::2 dev s$i"
		nh4b="$nh4b nexthop via 10.2.$i.2 dev s$i"
		nh6b="$nh6b nexthop via fd02:$i::2 dev s$i"
	done
	# shellcheck disable=SC2086
	ip -n $NS_L1 route add 10.0.2.0/24 $nh4a &&
	ip -n $NS_L1 -6 route add fd00:2::/64 $nh6a &&
	ip -n $NS_L2 route add 10.0.1.0/24 $nh4b &&
	ip -n $NS_L2 -6 route add fd00:1::/64 $nh6b || return 1
}

fabric_down() {
	local ns
	# mrc-keys stays: it pins the tc static keys for the VM's life
	for ns in $(ip netns list 2>/dev/null | awk '/^mrc-/ && $1 != "mrc-keys" {print $1}'); do
		ip netns del "$ns"
	done
	FABRIC_SPINES=0
}

# fabric_spine_count I DIR: packets spine I received from l1 (DIR=ab, a->b) or
# from l2 (DIR=ba); still counted while the spine is blackholed.
fabric_spine_count() {
	local ifname=l1
	[ "$2" = ba ] && ifname=l2
	ip netns exec "$(ns_spine "$1")" cat "/sys/class/net/$ifname/statistics/rx_packets"
}

# fabric_spine_bytes I DIR: as fabric_spine_count, in bytes.
fabric_spine_bytes() {
	local ifname=l1
	[ "$2" = ba ] && ifname=l2
	ip netns exec "$(ns_spine "$1")" cat "/sys/class/net/$ifname/statistics/rx_bytes"
}

# fabric_spine_forwarded I DIR: packets spine I sent toward the far leaf:
# what it forwarded and its own packets (neighbour probes, ND, MLD).
fabric_spine_forwarded() {
	local ifname=l2
	[ "$2" = ba ] && ifname=l1
	ip netns exec "$(ns_spine "$1")" cat "/sys/class/net/$ifname/statistics/tx_packets"
}

# fabric_spine_ipfwd I: IPv4 plus IPv6 datagrams spine I forwarded (either
# direction; the spine's own ARP/ND/MLD packets are not counted).
fabric_spine_ipfwd() {
	ip netns exec "$(ns_spine "$1")" awk '
		$1 == "Ip:" && !h { for (i = 2; i <= NF; i++) if ($i == "ForwDatagrams") c = i; h = 1; next }
		$1 == "Ip:" { n += $c }
		$1 == "Ip6OutForwDatagrams" { n += $2 }
		END { print n + 0 }' /proc/net/snmp /proc/net/snmp6
}

# fabric_counts DIR: the per-spine packet counts, space separated.
fabric_counts() {
	local i out=
	for i in $(seq 1 "$FABRIC_SPINES"); do out="$out $(fabric_spine_count "$i" "$1")"; done
	echo $out
}

# fabric_blackhole I: spine I silently drops everything, its links stay up.
# One tc process for all its links: on a loaded TCG guest each tc start costs
# up to a second, which would smear the moment of failure.
fabric_blackhole() {
	local ifname
	for ifname in $(spine_links); do
		echo "qdisc replace dev $ifname clsact"
		echo "filter replace dev $ifname ingress pref 1 matchall action drop"
	done | tc -n "$(ns_spine "$1")" -batch -
}

# fabric_heal I: undoes fabric_blackhole.
fabric_heal() {
	local ifname
	for ifname in $(spine_links); do
		echo "qdisc del dev $ifname clsact"
	done | tc -n "$(ns_spine "$1")" -force -batch - 2>/dev/null
	return 0
}

# fabric_shape I RATE DELAY [LOSS]: spine I forwards at RATE (tbf, e.g. 20mbit,
# or "-") after DELAY (netem, e.g. 2ms, or "-") with LOSS (netem, e.g. 1%)
# in both directions.  fabric_shape I - - clears the shaping.
fabric_shape() {
	local ns ifname rate=$2 delay=$3 loss=${4:-} netem=
	ns=$(ns_spine "$1")
	[ "$delay" != - ] && netem="delay $delay"
	[ -n "$loss" ] && netem="$netem loss $loss"
	for ifname in $(spine_links); do
		tc -n "$ns" qdisc del dev "$ifname" root 2>/dev/null
		if [ "$rate" != - ]; then
			tc -n "$ns" qdisc add dev "$ifname" root handle 1: \
				tbf rate "$rate" burst 32kb latency 50ms || return 1
			[ -z "$netem" ] || tc -n "$ns" qdisc add dev "$ifname" \
				parent 1:1 handle 10: netem $netem limit 10000 || return 1
		elif [ -n "$netem" ]; then
			tc -n "$ns" qdisc add dev "$ifname" root netem $netem limit 10000 || return 1
		fi
	done
}

# fabric_netem I "NETEM ARGS": spine I passes every packet, both directions,
# through netem with these arguments (e.g. "loss 1%", "delay 5ms 3ms",
# "delay 5ms reorder 25% 50%"); fabric_netem I "" clears it.  Replaces
# whatever root qdisc fabric_shape put there.
fabric_netem() {
	local ns ifname
	ns=$(ns_spine "$1")
	for ifname in $(spine_links); do
		tc -n "$ns" qdisc del dev "$ifname" root 2>/dev/null
		[ -z "$2" ] && continue
		# shellcheck disable=SC2086
		tc -n "$ns" qdisc add dev "$ifname" root netem $2 limit 10000 || return 1
	done
}

# The live AF_MRC family number (the module parameter).
mrc_family() { cat /sys/module/mrc/parameters/family 2>/dev/null || echo 18; }

# mrc_stat NS NAME: one counter of /proc/net/mrc_stats in namespace NS.
mrc_stat() {
	ip netns exec "$1" awk -v k="$2" '$1 == k {print $2}' /proc/net/mrc_stats
}

# xfer_start NS PORT OUT [mrc_xfer receiver options]: a receiver in the
# background; waits until it listens.  Its pid is in XFER_PID.
xfer_start() {
	local ns=$1 port=$2 out=$3 i
	shift 3
	: > "$out"
	ip netns exec "$ns" ./mrc_xfer -l -p "$port" "$@" > "$out" 2>&1 &
	XFER_PID=$!
	for i in $(seq 1 100); do
		grep -q listening "$out" && return 0
		sleep 0.1
	done
	return 1
}

# kv FILE KEY: the value of KEY=value in the last line of FILE that has it.
kv() { grep -o "$2=[^ ]*" "$1" | tail -n 1 | cut -d= -f2; }

# fabric_shape_ecn I RATE: spine I forwards at RATE through an ECN-marking
# queue (fq_codel under tbf): a congested path that marks CE, not drops.
fabric_shape_ecn() {
	local ns ifname
	ns=$(ns_spine "$1")
	for ifname in $(spine_links); do
		tc -n "$ns" qdisc del dev "$ifname" root 2>/dev/null
		tc -n "$ns" qdisc add dev "$ifname" root handle 1: \
			tbf rate "$2" burst 16kb latency 200ms &&
		tc -n "$ns" qdisc add dev "$ifname" parent 1:1 handle 10: \
			fq_codel ecn target 1ms interval 20ms || return 1
	done
}

# now: seconds since the epoch; since T0: seconds (one decimal) since now's T0
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_for PID SECS: waits at most SECS for PID to end (else kills it) and
# returns its exit status.
wait_for() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null && echo "# pid $1 still running after $2 s: killed"
	wait "$1"
}
