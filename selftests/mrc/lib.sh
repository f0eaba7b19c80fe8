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
#
# Planes (fabric_planes_up): a and b each gain eth1 into a second,
# independent leaf-spine, as hosts with one NIC port per network plane.
#
#   a eth0 --- l1 ==== s1..sN ==== l2 --- eth0 b      plane 1 (as above)
#   a eth1 -- p2l1 == p2s1..N == p2l2 -- eth1 b      plane 2
#
#   plane 2: a 10.100.1.1 fd10:1::1     b 10.100.2.1 fd10:2::1
#     leaf downlinks: p2l1 a1 10.100.1.254 fd10:1::fe, p2l2 b1 10.100.2.254
#     fd10:2::fe; spine i: p2l1 s<i> 10.101.i.1 fd11:i::1 / p2s<i> l1
#     10.101.i.2 fd11:i::2, p2l2 s<i> 10.102.i.1 fd12:i::1 / p2s<i> l2
#     10.102.i.2 fd12:i::2 (namespaces mrc-p2l1, mrc-p2l2, mrc-p2s<i>)
# Plane 1 keeps the hosts' default routes; plane 2's far host subnet is a
# specific route via eth1, so a lookup for a plane-2 address leaves by eth1
# and any other by eth0.  Either plane may be IPv4-only or IPv6-only.

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
# Before that, one fragmented ping on its loopback: the first reassembly
# (or ICMP error) looks up the IPv4 peer table, whose hash key is a
# net_get_random_once() that then patches inet_getpeer() itself; first
# done under traffic, by multipath.sh's fragments at MTU 1280, it oopsed
# there ("int3" at inet_getpeer+0x41, ip_defrag, CI of fba899d).  The tc
# commands after it give the deferred patch time to finish.
fabric_pin_keys() {
	# once per boot: a second matchall at the same pref would be EEXIST
	ip netns add mrc-keys 2>/dev/null || return 0
	ip -n mrc-keys link set lo mtu 1280 up || return 1
	# its fragments fire the key whether or not the reply comes in time
	ip netns exec mrc-keys ping -q -c 1 -W 2 -s 2000 127.0.0.1 > /dev/null
	# and one TCP connect (refused): its port choice fires the once-keys of
	# __inet_hash_connect(), which oopsed there ("int3", collective.sh's TCP
	# ranks connecting under traffic, CI of 1e125df)
	ip netns exec mrc-keys timeout 5 bash -c ': < /dev/tcp/127.0.0.1/9' 2> /dev/null
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

# fabric_traceable: the routers answer path traces as an operator sets a
# fabric up for them (Documentation/networking/mrc.rst, "Path traces"):
# time exceeded from the interface a probe came in on, without rate limit.
fabric_traceable() {
	local ns
	for ns in $NS_L1 $NS_L2 $(for i in $(seq 1 "$FABRIC_SPINES"); do ns_spine "$i"; done); do
		ns_sysctl "$ns" net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0 \
			net.ipv4.icmp_errors_use_inbound_ifaddr=1 || return 1
	done
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

# fabric_spine_tx_bytes I DIR: bytes spine I sent toward the far leaf (DIR
# ab: toward b's, ba: toward a's): what it forwarded that way and its own
# packets.  A blackholed spine sends only the queue it had.
fabric_spine_tx_bytes() {
	local ifname=l2
	[ "$2" = ba ] && ifname=l1
	ip netns exec "$(ns_spine "$1")" cat "/sys/class/net/$ifname/statistics/tx_bytes"
}

# fabric_tx_counts DIR: fabric_spine_tx_bytes of every spine, space separated
fabric_tx_counts() {
	local i out=''
	for i in $(seq 1 "$FABRIC_SPINES"); do out="$out $(fabric_spine_tx_bytes "$i" "$1")"; done
	echo "${out# }"
}

# fabric_dead_share I BEFORE AFTER: spine I's bytes in the difference of
# two fabric_tx_counts readings and all spines' ("PART TOTAL"; nothing
# when a reading lacks a spine), for fault_share_below
fabric_dead_share() {
	local b a i part=0 total=0
	read -ra b <<< "$2"
	read -ra a <<< "$3"
	[ ${#b[@]} = "$FABRIC_SPINES" ] && [ ${#a[@]} = "$FABRIC_SPINES" ] &&
		is_num "${b[@]}" "${a[@]}" || return 1
	for i in $(seq 0 $((FABRIC_SPINES - 1))); do total=$((total + a[i] - b[i])); done
	part=$((a[$1 - 1] - b[$1 - 1]))
	echo "$part $total"
}

# fabric_qdisc_stats I KIND: "PACKETS DROPPED OVERLIMITS" summed over the
# KIND qdiscs (netem, tbf) on spine I's links, from one tc: what a shaping
# or a loss did (fabric_shape, fabric_netem), to confirm it did.
fabric_qdisc_stats() {
	local ifname
	for ifname in $(spine_links); do echo "qdisc show dev $ifname"; done |
		tc -s -n "$(ns_spine "$1")" -batch - 2>/dev/null | awk -v k="$2" '
		$1 == "qdisc" { on = $2 == k; next }
		on && $1 == "Sent" { p += $4; d += $7; o += $9 }
		END { print p + 0, d + 0, o + 0 }'
}

# fault_share_below PCT PART TOTAL: PART < PCT % of TOTAL, TOTAL > 0, both
# numbers: a failed element carried under PCT % of the traffic while it
# was meant to be dead (planes.sh's rule, 1 %), and there was traffic.
fault_share_below() {
	[[ $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ ]] && [ "$3" -gt 0 ] &&
		[ $(($2 * 100)) -lt $(($1 * $3)) ]
}

# fabric_counts DIR [bytes]: the per-spine packet (or byte) counts, space
# separated.
fabric_counts() {
	local i out= get=fabric_spine_count
	[ "${2:-}" = bytes ] && get=fabric_spine_bytes
	for i in $(seq 1 "$FABRIC_SPINES"); do out="$out $($get "$i" "$1")"; done
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

# fabric_shape_all RATE DELAY: fabric_shape on every spine; 1 if one failed.
fabric_shape_all() {
	local i rc=0
	for ((i = 1; i <= SPINES; i++)); do fabric_shape "$i" "$@" || rc=1; done
	return $rc
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

# mrc_stat_ab NAME: counter NAME of a plus b's; nothing when one lacks it
# (num then fails the case that uses it)
mrc_stat_ab() {
	local x y
	x=$(mrc_stat $NS_A "$1") y=$(mrc_stat $NS_B "$1")
	is_num "$x" "$y" && echo $((x + y))
}

# wait_line FILE REGEX TENTHS: until a line of FILE matches REGEX (TENTHS
# tenths of a second at most); 1 if none does
wait_line() {
	local i
	for i in $(seq 1 "$3"); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# wait_listening FILE: until a server's output in FILE says "listening"
# (5 s at most); 1 if it never does
wait_listening() { wait_line "$1" listening 50; }

# xfer_flowing OUT: waits (30 s at most) for the first bytes at the
# receiver writing OUT ("start realtime=", mrc_xfer -i): a case's phases
# count from there, not from the sender's start.  Under -icount (sleep=off)
# the guest's clock jumps to its next timer whenever it idles, as while an
# exec waits for the host's 9p: a loaded host once let a sender's start eat
# all of "sleep 3", and the failure came before the first byte.
xfer_flowing() { wait_line "$1" '^start realtime=' 300; }

# xfer_start NS PORT OUT [mrc_xfer receiver options]: a receiver in the
# background; waits until it listens.  Its pid is in XFER_PID.
xfer_start() {
	local ns=$1 port=$2 out=$3
	shift 3
	: > "$out"
	ip netns exec "$ns" ./mrc_xfer -l -p "$port" "$@" > "$out" 2>&1 &
	XFER_PID=$!
	wait_line "$out" listening 100
}

# kv FILE KEY: the value of KEY=value in the last line of FILE that has it.
kv() { grep -o "$2=[^ ]*" "$1" | tail -n 1 | cut -d= -f2; }

# xfer_intact RX TX [BYTES]: the mrc_xfer transfer whose receiver wrote RX
# and sender TX arrived whole: every byte sent arrived and compared equal
# (the receiver's summary says ok=1 and bytes= the sender's sent=, and
# BYTES when given), neither end printed an error.  The receiver's exit 0
# alone says only that what came was intact: a prefix, when the
# connection ended early, passes that.
xfer_intact() {
	local got sent
	got=$(kv "$1" bytes) sent=$(kv "$2" sent)
	[ -n "$sent" ] && [ "$got" = "$sent" ] && [ "$(kv "$1" ok)" = 1 ] &&
		{ [ -z "${3:-}" ] || [ "$got" = "$3" ]; } &&
		! grep -q '^error=' "$1" "$2"
}

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

# now: the wall clock in seconds; since T0: seconds (one decimal) since T0.
# Bash's own clock, not date(1): under TCG each process start costs 50-100
# ms of a vCPU, and a test's timestamps fall in the windows it measures
# (perf showed date, awk and ip at a quarter of the guest's CPU in the
# second after multipath.sh's failover).
now() { local t=$EPOCHREALTIME; echo "${t/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# loss_stats NS: NS's loss-recovery counters as NAME=VALUE words (one
# process), and loss_delta A B what B adds to A: printed beside a failover,
# to tell a stall of the emulator from a recovery that took extra rounds
# (RACK, the silence rule, RTO, resends of what had arrived)
loss_stats() {
	ip netns exec "$1" awk '$1 ~ /^(LossRack|LossSameEv|LossPathSilent|RtoExpired|SpuriousRto|SpuriousRetransmits|Retransmits|EvRetired)$/ {
		printf "%s=%s ", $1, $2 }' /proc/net/mrc_stats
}
loss_delta() {
	awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= n; i++) { split(x[i], p, "="); split(y[i], q, "=")
			printf "%s +%d ", p[1], q[2] - p[2] } }'
}

# wait_for PID SECS: waits at most SECS for PID to end (else kills it) and
# returns its exit status.  It polls with builtins only: a read that times
# out on a FIFO nobody writes is its sleep.  A seq and a sleep(1) every
# 100 ms cost 50-100 ms of a vCPU each under TCG while the transfers it
# waits for were being measured; a killer subshell beside bash's wait raced
# (a signal before the subshell's own trap ran the test's EXIT trap).
wait_for() {
	local i f dummy
	if [ -z "${WAIT_FD:-}" ]; then
		f=$(mktemp -u) && mkfifo "$f" && exec {WAIT_FD}<>"$f"
		rm -f "$f"
	fi
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		if [ -n "${WAIT_FD:-}" ]; then
			read -rt 0.1 -u "$WAIT_FD" dummy
		else
			sleep 0.1
		fi
	done
	kill -9 "$1" 2>/dev/null && echo "# pid $1 still running after $2 s: killed"
	wait "$1"
}

# ---- two (or three) planes ------------------------------------------------
# Plane p (1-based) is the hosts' eth<p-1>; plane 1 is the fabric above.
# Generally: host subnets 10.<100(p-1)>.k.0/24 and fd<p-1>0:k::/64 (k 1: a,
# 2: b), leaf k - spine i links 10.<100(p-1)+k>.i.0/24 and fd<p-1>k:i::/64,
# leaf k's downlink to a is a<p-1>, to b b<p-1>.
FABRIC_PLANES=0
PLANE_FAM=(-)

# plane_leaf P K, plane_spine P I: namespaces of plane P's leaf K (1: a's,
# 2: b's) and spine I; plane_if P: the hosts' interface into plane P.
plane_leaf() { if [ "$1" = 1 ]; then echo "mrc-l$2"; else echo "mrc-p$1l$2"; fi; }
plane_spine() { if [ "$1" = 1 ]; then ns_spine "$2"; else echo "mrc-p$1s$2"; fi; }
plane_if() { echo "eth$(($1 - 1))"; }

# plane_addr P HOST [4|6]: host a's or b's address on plane P.
plane_addr() {
	local k=1
	[ "$2" = b ] && k=2
	if [ "${3:-4}" = 6 ]; then
		echo "fd$(($1 - 1))0:$k::1"
	else
		echo "10.$((100 * ($1 - 1))).$k.1"
	fi
}

# plane_has P 4|6: plane P carries that family
plane_has() {
	case ${PLANE_FAM[$1]}$2 in v4v64|v4v66|v44|v66) return 0 ;; esac
	return 1
}

# plane_host_cmds P K: `ip -batch` lines that configure host K's (1: a,
# 2: b) interface into plane P: plane 1 holds the default routes, other
# planes a specific route to the far host's subnet.
plane_host_cmds() {
	local p=$1 k=$2 dev o
	dev=$(plane_if "$p") o=$((100 * (p - 1)))
	if plane_has "$p" 4; then
		echo "addr add 10.$o.$k.1/24 dev $dev"
	fi
	if plane_has "$p" 6; then
		echo "addr add fd$((p - 1))0:$k::1/64 dev $dev nodad"
	fi
	echo "link set $dev up"
	if plane_has "$p" 4; then
		if [ "$p" = 1 ]; then
			echo "route replace default via 10.$o.$k.254 dev $dev"
		else
			echo "route replace 10.$o.$((3 - k)).0/24 via 10.$o.$k.254 dev $dev"
		fi
	fi
	if plane_has "$p" 6; then
		if [ "$p" = 1 ]; then
			echo "route replace ::/0 via fd$((p - 1))0:$k::fe dev $dev"
		else
			echo "route replace fd$((p - 1))0:$((3 - k))::/64 via fd$((p - 1))0:$k::fe dev $dev"
		fi
	fi
}

# fabric_planes_up N [FAM...]: a and b on one leaf-spine of N spines per
# plane, one plane per FAM (v4v6, v4 or v6; default two v4v6 planes, at most
# three).  One `ip -batch` per namespace: under TCG each process start
# costs.  Plane 1 is fabric_up's fabric, so every plane-1 helper above
# (fabric_blackhole, fabric_counts...) works on it.
fabric_planes_up() {
	local n=$1 b p k i o v6 ns all kv nh4 nh6
	shift
	[ $# -gt 0 ] || set -- v4v6 v4v6
	[ $# -le 3 ] || return 1
	fabric_down
	fabric_pin_keys || return 1
	FABRIC_SPINES=$n FABRIC_LEAVES=2 FABRIC_PLANES=$#
	PLANE_FAM=(- "$@")
	all="$NS_A $NS_B"
	for p in $(seq 1 $FABRIC_PLANES); do
		case ${PLANE_FAM[p]} in v4v6|v4|v6) ;; *) return 1 ;; esac
		all="$all $(plane_leaf "$p" 1) $(plane_leaf "$p" 2)"
		for i in $(seq 1 "$n"); do all="$all $(plane_spine "$p" "$i")"; done
	done
	for ns in $all; do ip netns add "$ns" || return 1; done
	for ns in $all; do
		kv="net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0"
		case $ns in
		"$NS_A"|"$NS_B")
			kv="$kv net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0" ;;
		mrc-l[0-9]*|mrc-p[0-9]l*)
			kv="$kv net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1"
			kv="$kv net.ipv4.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_fields=0x37"
			kv="$kv net.ipv6.fib_multipath_hash_policy=3 net.ipv6.fib_multipath_hash_fields=0x37" ;;
		*)
			kv="$kv net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1" ;;
		esac
		# shellcheck disable=SC2086
		ip netns exec "$ns" sysctl -qw $kv || return 1
	done
	b=$(mktemp -d)
	for p in $(seq 1 $FABRIC_PLANES); do
		echo "link add $(plane_if "$p") netns $NS_A type veth peer name a$((p - 1)) netns $(plane_leaf "$p" 1)"
		echo "link add $(plane_if "$p") netns $NS_B type veth peer name b$((p - 1)) netns $(plane_leaf "$p" 2)"
		for k in 1 2; do
			for i in $(seq 1 "$n"); do
				echo "link add s$i netns $(plane_leaf "$p" "$k") type veth peer name l$k netns $(plane_spine "$p" "$i")"
			done
		done
	done > "$b/root"
	ip -batch "$b/root" || { rm -rf "$b"; return 1; }
	for ns in $all; do echo "link set lo up" > "$b/$ns"; done
	for p in $(seq 1 $FABRIC_PLANES); do
		o=$((100 * (p - 1))) v6=fd$((p - 1))
		plane_host_cmds "$p" 1 >> "$b/$NS_A"
		plane_host_cmds "$p" 2 >> "$b/$NS_B"
		for k in 1 2; do
			ns=$(plane_leaf "$p" "$k")
			{
				i=a$((p - 1))
				[ $k = 2 ] && i=b$((p - 1))
				plane_has "$p" 4 && echo "addr add 10.$o.$k.254/24 dev $i"
				plane_has "$p" 6 && echo "addr add ${v6}0:$k::fe/64 dev $i nodad"
				echo "link set $i up"
				for i in $(seq 1 "$n"); do
					plane_has "$p" 4 && echo "addr add 10.$((o + k)).$i.1/24 dev s$i"
					plane_has "$p" 6 && echo "addr add $v6$k:$i::1/64 dev s$i nodad"
					echo "link set s$i up"
				done
			} >> "$b/$ns"
			for i in $(seq 1 "$n"); do
				{
					plane_has "$p" 4 && echo "addr add 10.$((o + k)).$i.2/24 dev l$k"
					plane_has "$p" 6 && echo "addr add $v6$k:$i::2/64 dev l$k nodad"
					echo "link set l$k up"
					plane_has "$p" 4 && echo "route add 10.$o.$k.0/24 via 10.$((o + k)).$i.1"
					plane_has "$p" 6 && echo "route add ${v6}0:$k::/64 via $v6$k:$i::1"
				} >> "$b/$(plane_spine "$p" "$i")"
			done
		done
	done
	for ns in $all; do ip -n "$ns" -batch "$b/$ns" || { rm -rf "$b"; return 1; }; done
	# the leaves' ECMP routes to the far host, once every spine link is up
	for p in $(seq 1 $FABRIC_PLANES); do
		o=$((100 * (p - 1))) v6=fd$((p - 1))
		for k in 1 2; do
			nh4='' nh6=''
			for i in $(seq 1 "$n"); do
				nh4="$nh4 nexthop via 10.$((o + k)).$i.2 dev s$i"
				nh6="$nh6 nexthop via $v6$k:$i::2 dev s$i"
			done
			{
				plane_has "$p" 4 && echo "route add 10.$o.$((3 - k)).0/24 $nh4"
				plane_has "$p" 6 && echo "route add ${v6}0:$((3 - k))::/64 $nh6"
			} > "$b/routes"
			ip -n "$(plane_leaf "$p" "$k")" -batch "$b/routes" || { rm -rf "$b"; return 1; }
		done
	done
	rm -rf "$b"
}

# plane_leaf_links P K: leaf K of plane P's interfaces (host, then spines)
plane_leaf_links() {
	if [ "$2" = 1 ]; then echo "a$(($1 - 1))"; else echo "b$(($1 - 1))"; fi
	seq -f 's%g' 1 "$FABRIC_SPINES"
}

# fabric_leaf_blackhole P K: plane P's leaf K (1: a's, 2: b's) silently
# drops everything it receives; its links stay up.  One tc process (see
# fabric_blackhole); fabric_pin_keys keeps this from patching kernel text.
fabric_leaf_blackhole() {
	leaf_blackhole_cmds "$1" "$2" | tc -n "$(plane_leaf "$1" "$2")" -batch -
}

# fabric_leaf_heal P K: undoes fabric_leaf_blackhole.
fabric_leaf_heal() {
	leaf_heal_cmds "$1" "$2" | tc -n "$(plane_leaf "$1" "$2")" -force -batch - 2>/dev/null
	return 0
}

# leaf_blackhole_cmds P K, leaf_heal_cmds P K: their `tc -batch` lines, for
# a tc started ahead of the moment (see planes.sh)
leaf_blackhole_cmds() {
	local ifname
	for ifname in $(plane_leaf_links "$1" "$2"); do
		echo "qdisc replace dev $ifname clsact"
		echo "filter replace dev $ifname ingress pref 1 matchall action drop"
	done
}
leaf_heal_cmds() {
	local ifname
	for ifname in $(plane_leaf_links "$1" "$2"); do
		echo "qdisc del dev $ifname clsact"
	done
}

# fabric_plane_blackhole P / fabric_plane_heal P: both leaves of plane P.
fabric_plane_blackhole() { fabric_leaf_blackhole "$1" 1 && fabric_leaf_blackhole "$1" 2; }
fabric_plane_heal() { fabric_leaf_heal "$1" 1; fabric_leaf_heal "$1" 2; }

# fabric_host_link HOST P up|down: host a's or b's interface into plane P
# goes administratively down or up.  Down drops its IPv4 routes and its
# IPv6 addresses (keep_addr_on_down is 0), so up puts them back, as a
# network manager would.
fabric_host_link() {
	local ns=$NS_A k=1
	[ "$1" = b ] && ns=$NS_B k=2
	if [ "$3" = down ]; then
		ip -n "$ns" link set "$(plane_if "$2")" down
		return
	fi
	# -force: the lines that still hold (IPv4 addresses) say "exists"
	plane_host_cmds "$2" $k | ip -n "$ns" -force -batch - 2>/dev/null
	ip -n "$ns" link show "$(plane_if "$2")" | grep -q "state UP"
}

# fabric_plane_bytes P DIR [rx|tx]: bytes plane P carried a->b (DIR ab) or
# b->a (ba): by default those the receiving host's interface got (what the
# plane delivered), with tx those the sending host's interface sent.
fabric_plane_bytes() {
	local ns=$NS_B what=${3:-rx}
	[ "$2" = ba ] && ns=$NS_A
	[ "$what" = tx ] && { ns=$NS_A; [ "$2" = ba ] && ns=$NS_B; }
	ip netns exec "$ns" cat "/sys/class/net/$(plane_if "$1")/statistics/${what}_bytes"
}

# fabric_planes_bytes DIR [rx|tx]: fabric_plane_bytes of every plane, space
# separated, from one process.
fabric_planes_bytes() {
	local ns=$NS_B what=${2:-rx} p files=
	[ "$1" = ba ] && ns=$NS_A
	[ "$what" = tx ] && { ns=$NS_A; [ "$1" = ba ] && ns=$NS_B; }
	for p in $(seq 1 $FABRIC_PLANES); do
		files="$files /sys/class/net/$(plane_if "$p")/statistics/${what}_bytes"
	done
	# shellcheck disable=SC2086
	ip netns exec "$ns" cat $files | tr '\n' ' ' | sed 's/ $/\n/'
}

# fabric_plane_netem P "NETEM ARGS": every spine of plane P passes every
# packet, both directions, through netem ("" clears it); "delay 5ms" on
# every spine of every plane makes every path's RTT 10 ms plus the hosts'.
fabric_plane_netem() {
	local ns ifname i
	for i in $(seq 1 "$FABRIC_SPINES"); do
		ns=$(plane_spine "$1" "$i")
		for ifname in $(spine_links); do
			tc -n "$ns" qdisc del dev "$ifname" root 2>/dev/null
			[ -z "$2" ] && continue
			# shellcheck disable=SC2086
			tc -n "$ns" qdisc add dev "$ifname" root netem $2 limit 10000 || return 1
		done
	done
}
