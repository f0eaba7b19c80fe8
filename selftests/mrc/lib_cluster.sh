# SPDX-License-Identifier: GPL-2.0-only
# The cluster-shaped fabric of the collective tests and benches (source
# after lib.sh): H hosts on each of L leaves, every leaf joined to each of
# S spines.
#
#   h1 h2      h3 h4      h5 h6      h7 h8
#    \ /        \ /        \ /        \ /
#    l1         l2         l3         l4        leaves: a bridge for their
#     \\\\      ||||       ||||      ////       hosts, ECMP to the spines
#      s1        s2         s3        s4
#
# Hosts of one leaf share its bridge and talk without crossing a spine, as
# in a real fabric; traffic between leaves is hashed by the leaf onto a
# spine (policy 3, fields 0x37, as lib.sh's fabric).  Names and addresses:
#   host n (1-based; rank n-1) is mrc-h<n>, on leaf k = (n-1)/H + 1 as its
#     j-th host: eth0 10.0.k.j/24, fd00:k::j/64; leaf k's bridge is .254 / ::fe
#   leaf k - spine i: leaf side s<i> 10.k.i.1/24 fd0k:i::1/64, spine side
#     l<k> 10.k.i.2/24 fd0k:i::2/64
# lib.sh's fabric_blackhole, fabric_heal, fabric_shape and fabric_netem act
# on every leaf link of a spine, so they work here too.

CLUSTER_HOSTS=0 CLUSTER_HPL=0

ns_host() { echo "mrc-h$1"; }
ns_leaf() { echo "mrc-l$1"; }

# cluster_host_leaf N: the leaf of host N; cluster_host_addr N [6]: its address
cluster_host_leaf() { echo $(( ($1 - 1) / CLUSTER_HPL + 1 )); }
cluster_host_addr() {
	local k j
	k=$(cluster_host_leaf "$1")
	j=$(( ($1 - 1) % CLUSTER_HPL + 1 ))
	if [ "${2:-4}" = 6 ]; then echo "fd00:$k::$j"; else echo "10.0.$k.$j"; fi
}

# cluster_up H L S: builds the fabric (IPv4 and IPv6) with one `ip -batch`
# per namespace: under TCG every process start costs, and this fabric has
# H*L + L + S namespaces.  fabric_down (lib.sh) removes it.
cluster_up() {
	local hpl=$1 leaves=$2 spines=$3 b ns all= n k j i m kv nh4 nh6
	[ "$leaves" -le 9 ] || return 1	# fd0k: one hex digit of leaf number
	fabric_down
	fabric_pin_keys || return 1
	FABRIC_SPINES=$spines FABRIC_LEAVES=$leaves CLUSTER_HPL=$hpl
	CLUSTER_HOSTS=$((hpl * leaves))
	b=$(mktemp -d)
	for n in $(seq 1 $CLUSTER_HOSTS); do all="$all $(ns_host "$n")"; done
	for k in $(seq 1 "$leaves"); do all="$all $(ns_leaf "$k")"; done
	for i in $(seq 1 "$spines"); do all="$all $(ns_spine "$i")"; done
	for ns in $all; do ip netns add "$ns" || return 1; done
	for ns in $all; do
		kv="net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0"
		case $ns in
		mrc-h*)
			kv="$kv net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0" ;;
		mrc-l*)
			kv="$kv net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1"
			kv="$kv net.ipv4.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_fields=0x37"
			kv="$kv net.ipv6.fib_multipath_hash_policy=3 net.ipv6.fib_multipath_hash_fields=0x37" ;;
		*)
			kv="$kv net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1" ;;
		esac
		# shellcheck disable=SC2086
		ip netns exec "$ns" sysctl -qw $kv || return 1
	done
	{
		for n in $(seq 1 $CLUSTER_HOSTS); do
			j=$(( (n - 1) % hpl + 1 ))
			echo "link add eth0 netns $(ns_host "$n") type veth peer name h$j netns $(ns_leaf "$(cluster_host_leaf "$n")")"
		done
		for k in $(seq 1 "$leaves"); do
			for i in $(seq 1 "$spines"); do
				echo "link add s$i netns $(ns_leaf "$k") type veth peer name l$k netns $(ns_spine "$i")"
			done
		done
	} > "$b/root"
	ip -batch "$b/root" || return 1
	for n in $(seq 1 $CLUSTER_HOSTS); do
		k=$(cluster_host_leaf "$n")
		cat > "$b/$(ns_host "$n")" <<-E
		addr add $(cluster_host_addr "$n")/24 dev eth0
		addr add $(cluster_host_addr "$n" 6)/64 dev eth0 nodad
		link set lo up
		link set eth0 up
		route add default via 10.0.$k.254
		route add ::/0 via fd00:$k::fe
		E
	done
	for k in $(seq 1 "$leaves"); do
		{
			echo "link add hosts type bridge"
			echo "addr add 10.0.$k.254/24 dev hosts"
			echo "addr add fd00:$k::fe/64 dev hosts nodad"
			echo "link set lo up"
			for j in $(seq 1 "$hpl"); do
				echo "link set h$j master hosts"
				echo "link set h$j up"
			done
			echo "link set hosts up"
			for i in $(seq 1 "$spines"); do
				echo "addr add 10.$k.$i.1/24 dev s$i"
				echo "addr add fd0$k:$i::1/64 dev s$i nodad"
				echo "link set s$i up"
			done
		} > "$b/$(ns_leaf "$k")"
	done
	for i in $(seq 1 "$spines"); do
		{
			echo "link set lo up"
			for k in $(seq 1 "$leaves"); do
				echo "addr add 10.$k.$i.2/24 dev l$k"
				echo "addr add fd0$k:$i::2/64 dev l$k nodad"
				echo "link set l$k up"
				echo "route add 10.0.$k.0/24 via 10.$k.$i.1"
				echo "route add fd00:$k::/64 via fd0$k:$i::1"
			done
		} > "$b/$(ns_spine "$i")"
	done
	for ns in $all; do ip -n "$ns" -batch "$b/$ns" || { rm -rf "$b"; return 1; }; done
	# the leaves' ECMP routes to every other leaf, once every spine link is up
	for k in $(seq 1 "$leaves"); do
		for m in $(seq 1 "$leaves"); do
			[ "$m" -eq "$k" ] && continue
			nh4= nh6=
			for i in $(seq 1 "$spines"); do
				nh4="$nh4 nexthop via 10.$k.$i.2 dev s$i"
				nh6="$nh6 nexthop via fd0$k:$i::2 dev s$i"
			done
			echo "route add 10.0.$m.0/24 $nh4"
			echo "route add fd00:$m::/64 $nh6"
		done > "$b/routes"
		ip -n "$(ns_leaf "$k")" -batch "$b/routes" || { rm -rf "$b"; return 1; }
	done
	rm -rf "$b"
}

# cluster_hostfile FILE [6]: one address a line, line n = host n (rank n-1)
cluster_hostfile() {
	local n
	for n in $(seq 1 $CLUSTER_HOSTS); do cluster_host_addr "$n" "${2:-4}"; done > "$1"
}

# cluster_mptcp: every host gets 3 more addresses, each an MPTCP subflow
# endpoint, so an MPTCP connection opens 4 subflows that hash apart.
cluster_mptcp() {
	local n k a m
	for n in $(seq 1 $CLUSTER_HOSTS); do
		a=$(cluster_host_addr "$n")
		{
			echo "mptcp limits set subflow 4 add_addr_accepted 4"
			for m in 1 2 3; do
				k=${a%.*}.$(( ${a##*.} + 50 * m ))
				echo "addr add $k/24 dev eth0"
				echo "mptcp endpoint add $k dev eth0 subflow"
			done
		} | ip -n "$(ns_host "$n")" -batch - || return 1
	done
}

# cluster_link_netem K I "NETEM ARGS": the link between leaf K and spine I
# passes every packet, both directions, through netem ("" clears it).
cluster_link_netem() {
	local ns ifname
	for ns in "$(ns_leaf "$1"):s$2" "$(ns_spine "$2"):l$1"; do
		ifname=${ns#*:} ns=${ns%%:*}
		tc -n "$ns" qdisc del dev "$ifname" root 2>/dev/null
		[ -z "$3" ] && continue
		# shellcheck disable=SC2086
		tc -n "$ns" qdisc add dev "$ifname" root netem $3 limit 10000 || return 1
	done
}

# fabric_flap I DOWN_MS UP_MS SECS: spine I is blackholed for DOWN_MS, then
# healed for UP_MS, over and over for SECS (run it in the background).
fabric_flap() {
	local end
	end=$(( $(date +%s%3N) + $4 * 1000 ))
	while [ "$(date +%s%3N)" -lt "$end" ]; do
		fabric_blackhole "$1"
		sleep "$(awk -v m="$2" 'BEGIN { print m / 1000 }')"
		fabric_heal "$1"
		sleep "$(awk -v m="$3" 'BEGIN { print m / 1000 }')"
	done
}
