#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A crafted peer (mrc_peer: a UDP socket that completes the handshake and
# then sends what no MRC stack would) against a victim namespace:
#
#  1-3) empty DATA packets are charged like data: 100k empty in-order
#       messages, 8000 empty out-of-order packets, keep the victim's memory
#       within its rcvbuf (dropped and counted); an orphan that gets an empty
#       message resets, as for data, but not for a copy of data it had read.
#  4)   reassembly cost: 8000 out-of-order packets in descending PSN order
#       cost about what ascending ones do (an rbtree, not a list walk).
#  5-7) orphans are bounded: one whose peer ACKs its FIN but never sends
#       its own dies within the FIN wait; one behind a zero window whose peer
#       answers every probe dies within the orphan timeout; with
#       net.mrc.max_orphans=2, closing 4 connections leaves 2 orphans and
#       aborts 2 (OrphanOverflow).
#  8)   the send window: a reordered (older) ACK does not replace a newer
#       one's window; a huge window is clamped to 8192 x MSS, and so is the
#       one the victim advertises with a huge rcvbuf.
#  9)   a transmit that fails (no route) leaks no per-EV in_flight.
#  10)  MRC_PATH_INFO_EXT: every EV names a path the connection has (path 0,
#       the only one here) with a non-zero local address.
#  11)  ICMP: a forged "fragmentation needed" quoting the victim's ID with
#       peer ID 0 (only a SYN's quote may) is dropped and counted
#       (RxIcmpDropped), the MSS kept; one quoting the real peer ID lowers it.
#
# PEER_ONLY (e.g. "4 5") runs a subset; ZERO_N and OOO_N set the counts.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
out=$(mktemp -d)
NS_P=mrc-pa NS_V=mrc-pv P4=10.99.0.1 V4=10.99.0.2
ZERO_N=${ZERO_N:-100000} OOO_N=${OOO_N:-8000}
max_orphans0=$(cat /proc/sys/net/mrc/max_orphans 2>/dev/null)
fin_timeout0=$(cat /proc/sys/net/mrc/fin_timeout 2>/dev/null)

cleanup() {
	ip netns del $NS_P 2>/dev/null
	ip netns del $NS_V 2>/dev/null
	[ -n "$max_orphans0" ] && sysctl -qw net.mrc.max_orphans="$max_orphans0"
	[ -n "$fin_timeout0" ] && sysctl -qw net.mrc.fin_timeout="$fin_timeout0"
	rm -rf "$out"
}
trap cleanup EXIT

ONLY=${PEER_ONLY:-1 2 3 4 5 6 7 8 9 10 11}
tap_plan $(echo $ONLY | wc -w)
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
modprobe mrc 2>/dev/null || insmod ../../net/mrc/mrc.ko 2>/dev/null
ip netns add $NS_P && ip netns add $NS_V &&
	link $NS_P veth0 $NS_V veth0 && addr $NS_P veth0 $P4/24 && addr $NS_V veth0 $V4/24 &&
	ip -n $NS_P link set lo up && ip -n $NS_V link set lo up ||
	tap_setup_fail "cannot build the namespaces"

# peer MODE ARGS...: one run of mrc_peer; its output in $out/MODE
peer() {
	local m=$1
	shift
	timeout 300 ip netns exec $NS_V ./mrc_peer -N $NS_P -l $P4 -r $V4 -m "$m" "$@" \
		> "$out/$m" 2>&1
	echo "# $m: $(tr '\n' ' ' < "$out/$m")"
}
# orphans_gone: waits (15 s at most) until no MRC orphan is left
orphans_gone() {
	local i
	for i in $(seq 1 150); do
		[ "$(cat /proc/sys/net/mrc/orphans 2>/dev/null || echo 0)" = 0 ] && return 0
		sleep 0.1
	done
	echo "# orphans left: $(cat /proc/sys/net/mrc/orphans)"
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0) }'; }
SLACK=$((64 << 10))

# ---- empty DATA is charged ----
if want 1; then
	peer zerolen -n "$ZERO_N"
	f=$out/zerolen
	rcvbuf=$(kv "$f" rcvbuf)
	num rcvbuf
	le "$(kv "$f" rmem)" $((rcvbuf + SLACK)) && [ "$(kv "$f" dropped)" -gt 0 ]
	tap_result $(( ! $? )) "empty messages: memory within rcvbuf ($(kv "$f" rmem) of $(kv "$f" rcvbuf)), $(kv "$f" dropped) dropped"
fi
if want 2; then
	peer zeroooo -n "$OOO_N"
	f=$out/zeroooo
	rcvbuf=$(kv "$f" rcvbuf)
	num rcvbuf
	le "$(kv "$f" rmem)" $((rcvbuf + SLACK)) && [ "$(kv "$f" dropped)" -gt 0 ]
	tap_result $(( ! $? )) "empty out-of-order packets: memory within rcvbuf ($(kv "$f" rmem) of $(kv "$f" rcvbuf))"
fi
if want 3; then
	peer zeroorphan -n 1000
	f=$out/zeroorphan
	read=$(kv "$f" read) dup_reset=$(kv "$f" dup_reset) reset=$(kv "$f" reset)
	num read dup_reset reset
	tap_result $(( read == 64 && dup_reset == 0 && reset == 1 )) \
		"an orphan ignores a resent packet it had read ($(kv "$f" dup_reset) resets), resets on an empty message"
fi

# ---- reassembly cost ----
if want 4; then
	peer ooo -n "$OOO_N"
	le "$(kv "$out/ooo" ratio)" 2
	tap_result $(( ! $? )) "descending PSNs cost at most 2 x ascending ($(kv "$out/ooo" ratio))"
fi

# ---- orphans ----
if want 5; then
	orphans_gone
	# the default (60 s, as TCP's tcp_fin_timeout) is shortened for the test
	if [ -n "$fin_timeout0" ] && sysctl -qw net.mrc.fin_timeout=3; then
		peer finwait -n 15
		life=$(kv "$out/finwait" lifetime_s)
		sysctl -qw net.mrc.fin_timeout="$fin_timeout0"
		le 2.5 "$life" && le "$life" 6
		tap_result $(( ! $? )) "an orphan whose peer ACKs but never FINs dies after net.mrc.fin_timeout=3 ($life s)"
	else
		tap_result 0 "net.mrc.fin_timeout is missing"
	fi
fi
if want 6; then
	peer probe -n 25
	life=$(kv "$out/probe" lifetime_s)
	le 0 "$life" && le "$life" 12
	tap_result $(( ! $? )) "an orphan behind a zero window, probes answered, dies within 12 s ($life s)"
fi
if want 7; then
	orphans_gone
	if [ -n "$max_orphans0" ] && sysctl -qw net.mrc.max_orphans=2; then
		peer orphans -c 4 3</proc/sys/net/mrc/orphans
		f=$out/orphans
		[ "$(kv "$f" overflow)" = 2 ] && [ "$(kv "$f" peak_orphans)" = 2 ]
		tap_result $(( ! $? )) "max_orphans=2: 4 closes leave $(kv "$f" peak_orphans) orphans, $(kv "$f" overflow) aborted"
		sysctl -qw net.mrc.max_orphans="$max_orphans0"
	else
		tap_result 0 "net.mrc.max_orphans is missing"
	fi
fi

# ---- window ----
if want 8; then
	peer window
	f=$out/window
	lim=$(kv "$f" window_limit)
	[ -n "$(kv "$f" snd_wnd_new)" ] && [ "$(kv "$f" snd_wnd_after_old)" = "$(kv "$f" snd_wnd_new)" ] &&
		le "$(kv "$f" snd_wnd_huge)" "$lim" && le "$(kv "$f" advertised)" "$lim" &&
		le "$(kv "$f" rcv_wnd)" "$lim"
	tap_result $(( ! $? )) "window: an older ACK is ignored, both windows within 8192 x MSS"
fi

# ---- failed transmit ----
if want 9; then
	peer xmitfail
	f=$out/xmitfail
	[ "$(kv "$f" tx_errors)" -gt 0 ] && [ -n "$(kv "$f" conn_in_flight)" ] &&
		[ "$(kv "$f" ev_in_flight_sum)" = "$(kv "$f" conn_in_flight)" ]
	tap_result $(( ! $? )) "failed transmits leak no EV in_flight ($(kv "$f" ev_in_flight_sum) vs $(kv "$f" conn_in_flight))"
fi
if want 10; then
	[ -s "$out/xmitfail" ] || peer xmitfail
	f=$out/xmitfail
	[ "$(kv "$f" ext_n)" -gt 0 ] && [ "$(kv "$f" ext_bad)" = 0 ]
	tap_result $(( ! $? )) "MRC_PATH_INFO_EXT: each of $(kv "$f" ext_n) EVs is on a path of the connection with its addresses ($(kv "$f" ext_bad) not)"
fi

# ---- forged ICMP ----
# MTU 1000 (forged) would cut the MSS of a 1500-byte veth to 924; the real
# one's 1200 cuts it to 1124 (IPv4 + UDP + MRC headers: 76 bytes)
if want 11; then
	peer icmp
	f=$out/icmp
	[ "$(kv "$f" mss)" -gt 1124 ] && [ "$(kv "$f" mss_after_forged)" = "$(kv "$f" mss)" ] &&
		[ "$(kv "$f" frag_forged)" = 0 ] && [ "$(kv "$f" dropped_forged)" = 1 ] &&
		[ "$(kv "$f" mss_after_real)" = 1124 ] && [ "$(kv "$f" frag_real)" = 1 ]
	tap_result $(( ! $? )) "ICMP quoting peer ID 0 dropped and counted ($(kv "$f" dropped_forged)), MSS $(kv "$f" mss_after_forged); the real peer ID's lowers it to $(kv "$f" mss_after_real)"
fi

tap_done
