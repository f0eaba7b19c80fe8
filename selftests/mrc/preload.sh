#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Unmodified programs over MRC: nc (netcat-openbsd) under "mrcctl run"
# (libmrc-preload.so) across the 4-spine fabric.  A 64 MiB file goes a -> b
# intact while mrcctl conn show lists the connection; with -p a connection
# to another port stays TCP; against a TCP-only server the client falls back
# to TCP.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; rm -rf "$out"' EXIT
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
SPINES=4 MIB=64

mrcctl() { "$MRCCTL" "$@"; }

tap_plan 12
command -v nc > /dev/null || tap_setup_fail "nc (netcat-openbsd, make deps) not installed"
[ -x "$MRCCTL" ] && [ -r ../../tools/preload/libmrc-preload.so ] ||
	{ echo "# mrcctl or libmrc-preload.so not built"; exit 1; }
fabric_up $SPINES
tap_result $(( $? == 0 )) "fabric with $SPINES spines comes up"
head -c $((MIB << 20)) /dev/urandom > "$out/data"
sum=$(md5sum < "$out/data")
# smaller pieces (the guest has no /dev/fd for <(...))
for n in 1000 100000 1000000; do head -c $n "$out/data" > "$out/data$n"; done

# tcp_state NS PORT STATE FIELD: TCP sockets of NS in STATE (hex, 01
# established, 0A listen) whose FIELD ($2 local, $3 remote) has PORT; ss
# shows none in the guest (no sock_diag there)
tcp_state() {
	ip netns exec "$1" awk -v p="$(printf ':%04X' "$2")" -v st="$3" \
		"\$4 == st && substr($4, length($4) - 4) == p { n++ } END { print n + 0 }" /proc/net/tcp
}

# serve NS NAME PORT [mrcctl run flags]: nc -l under mrcctl run in NS,
# output in $out/NAME, stderr in $out/NAME.err, pid in SRV; waits until it
# listens (over TCP: /proc/net/tcp shows it; over MRC: a moment after the
# conversion).
serve() {
	local ns=$1 name=$2 port=$3 i
	shift 3
	ip netns exec "$ns" "$MRCCTL" run -v "$@" -- nc -4 -d -l "$port" \
		> "$out/$name" 2> "$out/$name.err" &
	SRV=$!
	for i in $(seq 1 50); do
		[ "$(tcp_state "$ns" "$port" 0A '$2')" -gt 0 ] && return 0
		grep -q "listen port $port\|socket)" "$out/$name.err" && sleep 0.3 && return 0
		sleep 0.1
	done
	return 1
}

# mrc_conns NS PORT: the AF_MRC connections of NS to remote port PORT as
# "state bytes_sent" lines.
mrc_conns() {
	mrcctl -n "$1" -j conn show 2>/dev/null |
		jq -r --argjson p "$2" '.[] | select(.remote_port == $p) | "\(.state) \(.bytes_sent)"'
}

# --- every TCP socket: 64 MiB a -> b, seen as an MRC connection ----------
serve $NS_B big 5201 || echo "# receiver did not start"
t0=$(now)
{ cat "$out/data"; sleep 1; } |
	ip netns exec $NS_A "$MRCCTL" run -v -- nc -4 -N $B4 5201 > /dev/null 2> "$out/cli.err" &
cli=$!
seen=0 max=0
while kill -0 $cli 2>/dev/null; do
	for sent in $(mrc_conns $NS_A 5201 | awk '{ print $2 }'); do
		seen=1
		[ "$sent" -gt "$max" ] && max=$sent
	done
	sleep 0.2
done
wait $cli; rc=$?
wait_for $SRV 10
echo "# $MIB MiB in $(since "$t0") s, nc exit $rc; conn show: bytes_sent up to $max"
sed 's/^/# a: /' "$out/cli.err"; sed 's/^/# b: /' "$out/big.err"
[ $rc -eq 0 ] && [ "$(md5sum < "$out/big")" = "$sum" ]
tap_result $(( $? == 0 )) "nc under mrcctl run: $MIB MiB arrive intact"
[ $seen -eq 1 ] && [ "$max" -ge $((MIB << 20)) ]
tap_result $(( $? == 0 )) "mrcctl conn show lists the connection, all $MIB MiB sent over it"
grep -q "fd [0-9]*: AF_INET SOCK_STREAM -> AF_MRC (socket)" "$out/cli.err" &&
	grep -q "AF_MRC (socket)" "$out/big.err" && ! grep -q unavailable "$out/cli.err" "$out/big.err"
tap_result $(( $? == 0 )) "both ends converted at socket(), no fallback"

# --- IPv6, small ----------------------------------------------------------
ip netns exec $NS_B "$MRCCTL" run -- nc -6 -d -l 5204 > "$out/v6" 2> "$out/v6.err" &
srv=$!
sleep 0.5
cat "$out/data100000" | ip netns exec $NS_A "$MRCCTL" run -- nc -6 -N $B6 5204 2> "$out/v6c.err"
rc=$?
wait_for $srv 10
sed 's/^/# a: /' "$out/v6c.err"; sed 's/^/# b: /' "$out/v6.err"
[ $rc -eq 0 ] && cmp -s "$out/v6" "$out/data100000"
tap_result $(( $? == 0 )) "IPv6: nc -6 under mrcctl run, data intact"

# --- -p: only the listed port goes over MRC -------------------------------
# b serves 5201 and 5202, both under -p 5201: only the 5201 listener converts
serve $NS_B p1 5201 -p 5201 || echo "# 5201 receiver did not start"
s1=$SRV
serve $NS_B p2 5202 -p 5201 || echo "# 5202 receiver did not start"
s2=$SRV
# held: each client holds its connection after its data until the sampler
# below has seen both (30 s at most), not for a set time: with 2 s, a
# host running two make checks at once ran the sampler's mrcctl, jq and
# awk so slowly that it never saw the MRC connection (MRC to 5201 "").
held() {
	local i
	for i in $(seq 1 300); do [ -e "$out/seen" ] && return; sleep 0.1; done
}
rm -f "$out/seen"
{ cat "$out/data1000000"; held; } |
	ip netns exec $NS_A "$MRCCTL" run -v -p 5201 -- nc -4 -N $B4 5201 2> "$out/p1c.err" &
c1=$!
{ cat "$out/data1000000"; held; } |
	ip netns exec $NS_A "$MRCCTL" run -v -p 5201 -- nc -4 -N $B4 5202 2> "$out/p2c.err" &
c2=$!
# Sample while either client lives: a slow machine may start one client
# well after the other, so one sample at a fixed time can miss a
# connection that is not up yet.  Both seen, one more sample (a second
# connection to 5202 over MRC would show there), then the clients end.
m1= m2= t1=0 t2=0 more=2
while kill -0 $c1 2>/dev/null || kill -0 $c2 2>/dev/null; do
	m=$(mrc_conns $NS_A 5201); [ -n "$m" ] && m1=$m
	m=$(mrc_conns $NS_A 5202); [ -n "$m" ] && m2=$m
	n=$(tcp_state $NS_A 5201 01 '$3'); [ "$n" -gt "$t1" ] && t1=$n
	n=$(tcp_state $NS_A 5202 01 '$3'); [ "$n" -gt "$t2" ] && t2=$n
	[ -n "$m1" ] && [ "$t2" -gt 0 ] && [ $((more -= 1)) -le 0 ] && : > "$out/seen"
	sleep 0.2
done
echo "# while the clients ran: MRC to 5201 \"$m1\", MRC to 5202 \"$m2\"; TCP to 5201 $t1, to 5202 $t2 (most at once)"
wait $c1; r1=$?
wait $c2; r2=$?
wait_for $s1 10; wait_for $s2 10
for f in p1c p2c p1 p2; do sed "s/^/# $f: /" "$out/$f.err"; done
echo "# r1 $r1 r2 $r2, received $(stat -c %s "$out/p1") $(stat -c %s "$out/p2")"
cmp -s "$out/p1" "$out/data1000000" && [ $r1 -eq 0 ] && [ -n "$m1" ] && [ "$t1" -eq 0 ] &&
	grep -q "AF_MRC (listen port 5201)" "$out/p1.err"
tap_result $(( $? == 0 )) "-p 5201: the connection to 5201 is MRC, its data intact"
cmp -s "$out/p2" "$out/data1000000" && [ $r2 -eq 0 ] && [ -z "$m2" ] && [ "$t2" -eq 1 ] &&
	! grep -q AF_MRC "$out/p2c.err" "$out/p2.err"
tap_result $(( $? == 0 )) "-p 5201: the connection to 5202 stays TCP (/proc/net/tcp shows it), data intact"

# -d: a destination outside the prefixes stays TCP too (a plain TCP
# receiver gets the data)
ip netns exec $NS_B nc -4 -d -l 5205 > "$out/d1" 2> /dev/null &
srv=$!
sleep 0.5
cat "$out/data1000" |
	ip netns exec $NS_A "$MRCCTL" run -v -d 10.9.0.0/16,fd00::/16 -- nc -4 -N $B4 5205 \
	2> "$out/d1c.err"
rc=$?
wait_for $srv 10
sed 's/^/# /' "$out/d1c.err"
[ $rc -eq 0 ] && ! grep -q AF_MRC "$out/d1c.err" && cmp -s "$out/d1" "$out/data1000"
tap_result $(( $? == 0 )) "-d 10.9.0.0/16,fd00::/16: a connection to $B4 stays TCP"

# --- fallback: b's service is plain TCP; MRC there answers with a reset ---
ip netns exec $NS_B nc -4 -d -l 5203 > "$out/fb" 2> /dev/null &
srv=$!
sleep 0.5
t0=$(now)
cat "$out/data100000" | ip netns exec $NS_A "$MRCCTL" run -v -- nc -4 -N $B4 5203 2> "$out/fb.err"
rc=$?
wait_for $srv 10
echo "# fallback took $(since "$t0") s, nc exit $rc; b sent $(mrc_stat $NS_B TxRst) resets"
sed 's/^/# /' "$out/fb.err"
# nc's connect is non-blocking: the library waits for the handshake's
# refusal (a reset from b's MRC) and retries over TCP
[ $rc -eq 0 ] && cmp -s "$out/fb" "$out/data100000" &&
	grep -q "over MRC: Connection refused, retrying over TCP" "$out/fb.err"
tap_result $(( $? == 0 )) "a refused MRC connect (non-blocking, nc) retries over TCP, the data arrives"

# --- iperf3, both ends: its server listens on [::] (dual stack) and takes
# an IPv4 client; its client reads TCP_INFO, its server TCP_CONGESTION -----
a0=$(mrc_stat $NS_B ConnAccepted)
ip netns exec $NS_B "$MRCCTL" run -- iperf3 -s -1 -p 5210 > "$out/iperf.s" 2>&1 &
srv=$!
sleep 1
ip netns exec $NS_A "$MRCCTL" run -- iperf3 -c $B4 -p 5210 -t 2 > "$out/iperf.c" 2>&1
rc=$?
wait_for $srv 10
a1=$(mrc_stat $NS_B ConnAccepted)
num a0 a1
accepted=$((a1 - a0))
echo "# iperf3: client rc $rc, $accepted MRC connections accepted; $(grep -m1 receiver "$out/iperf.c")"
grep -i "error\|not available" "$out/iperf.c" "$out/iperf.s" | sed 's/^/# /'
[ $rc -eq 0 ] && [ $accepted -ge 2 ] && grep -q receiver "$out/iperf.c" &&
	! grep -qi "error\|not available" "$out/iperf.c" "$out/iperf.s"
tap_result $(( $? == 0 )) "iperf3 -s on [::] and iperf3 -c over IPv4, both under mrcctl run: over MRC, no error"

# --- the module absent: one line, then TCP --------------------------------
ip netns exec $NS_B nc -4 -d -l 5206 > "$out/nomod" 2> /dev/null &
srv=$!
sleep 0.5
# 46 is AF_MAX: the socket layer answers EAFNOSUPPORT, as without the module
cat "$out/data1000" | ip netns exec $NS_A \
	env MRC_PRELOAD_FAMILY=46 "$MRCCTL" run -- nc -4 -N $B4 5206 2> "$out/nomod.err"
rc=$?
wait_for $srv 10
sed 's/^/# /' "$out/nomod.err"
[ $rc -eq 0 ] && cmp -s "$out/nomod" "$out/data1000" &&
	[ "$(grep -c "mrc-preload: AF_MRC unavailable" "$out/nomod.err")" -eq 1 ]
tap_result $(( $? == 0 )) "an absent family (MRC_PRELOAD_FAMILY=46): one line on stderr, then TCP"

# --- mrcctl run itself -----------------------------------------------------
env=$(LD_PRELOAD=/nonexistent.so mrcctl run 2> /dev/null -p 80,8000-8080 -d 10.0.0.0/8 -- env)
grep -q "^LD_PRELOAD=/.*/libmrc-preload.so:/nonexistent.so$" <<< "$env" &&
	grep -q "^MRC_PRELOAD_PORTS=80,8000-8080$" <<< "$env" &&
	grep -q "^MRC_PRELOAD_PREFIXES=10.0.0.0/8$" <<< "$env" &&
	! mrcctl run -p 70000 -- true 2> /dev/null && ! mrcctl run -d 10.0.0.0/40 -- true 2> /dev/null
tap_result $(( $? == 0 )) "mrcctl run: LD_PRELOAD prepended, filters passed on, bad ones refused"
tap_done
