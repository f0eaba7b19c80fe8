#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A host without MRC first: its ICMP port unreachable refuses the connect
# and the converted program falls back to TCP.  Then programs nobody here
# wrote, unmodified, over MRC through "mrcctl run"
# (libmrc-preload.so) across the 4-spine fabric: sockperf ping-pong, an
# rsync daemon, curl against Python's HTTP server (it listens on [::] and
# takes IPv4 clients), iperf3 through a spine that dies and heals.  Each
# one's data is checked, and b's MRC counters show that MRC carried it.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; rm -rf "$out"' EXIT
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
run() { local ns=$1; shift; ip netns exec "$ns" "$MRCCTL" run -- "$@"; }
# (servers started in the background spell it out: a function run with &
# is a subshell, and kill %1 would end that subshell, not the server)
# accepted: n = connections b's MRC accepted since the last call
acc0=0
accepted() { local now; now=$(mrc_stat $NS_B ConnAccepted); n=$((now - acc0)); acc0=$now; }
tap_plan 6
[ -x "$MRCCTL" ] && [ -r ../../tools/preload/libmrc-preload.so ] ||
	{ echo "# mrcctl or libmrc-preload.so not built"; exit 1; }
fabric_up 4
tap_result $(( $? == 0 )) "fabric with 4 spines comes up"
acc0=$(mrc_stat $NS_B ConnAccepted)

# First, while b has no MRC socket (so no tunnel on MRC's UDP port): its
# ICMP port unreachable refuses a's MRC connect at once, and the program
# converted by mrcctl run falls back to TCP (b's nc is plain TCP).
head -c 100000 /dev/urandom > "$out/small"
ip netns exec $NS_B nc -4 -d -l 5300 > "$out/fb" 2> /dev/null &
sleep 0.5
i0=$(mrc_stat $NS_A RxIcmpUnreachable)
ip netns exec $NS_A "$MRCCTL" run -v -- nc -4 -N $B4 5300 < "$out/small" 2> "$out/fb.err"
rc=$?
wait %1 2>/dev/null
i1=$(mrc_stat $NS_A RxIcmpUnreachable)
echo "# no MRC at b: nc rc $rc, ICMP unreachable +$((i1 - i0)); $(grep -m1 retrying "$out/fb.err")"
[ $rc -eq 0 ] && [ $i1 -gt $i0 ] && cmp -s "$out/fb" "$out/small" &&
	grep -q "over MRC: Connection refused, retrying over TCP" "$out/fb.err"
tap_result $(( $? == 0 )) "a host without MRC: ICMP port unreachable refuses the connect, nc falls back to TCP"

# sockperf: a ping-pong of small messages (it sends with sendto() on its
# connected socket, which MRC, as TCP, allows)
if command -v sockperf > /dev/null; then
	ip netns exec $NS_B "$MRCCTL" run -- sockperf sr --tcp -p 5301 > "$out/sp.s" 2>&1 &
	sleep 2
	run $NS_A sockperf pp --tcp -i $B4 -p 5301 -t 2 > "$out/sp.c" 2>&1
	rc=$?
	accepted
	echo "# sockperf: rc $rc, $n MRC connections; $(grep -m1 "Summary: Latency" "$out/sp.c")"
	[ $rc -eq 0 ] && [ "$n" -ge 1 ] && grep -q "Summary: Latency" "$out/sp.c"
	tap_result $(( $? == 0 )) "sockperf ping-pong over MRC"
	kill %1 2>/dev/null; wait 2>/dev/null
else
	tap_skip "sockperf ping-pong over MRC" "sockperf not installed"
fi

# rsync: a daemon on b, a tree pulled by a
if command -v rsync > /dev/null; then
	mkdir -p "$out/tree/sub" "$out/copy"
	head -c 3000000 /dev/urandom > "$out/tree/a"
	head -c 70000 /dev/urandom > "$out/tree/sub/b"
	printf '[data]\npath = %s\nread only = yes\nuse chroot = no\n' "$out/tree" > "$out/rsyncd.conf"
	ip netns exec $NS_B "$MRCCTL" run -- rsync --daemon --no-detach --port 5302 --config "$out/rsyncd.conf" \
		--log-file "$out/rsyncd.log" &
	sleep 2
	run $NS_A rsync -a "rsync://$B4:5302/data/" "$out/copy/" 2> "$out/rsync.err"
	rc=$?
	accepted
	echo "# rsync: rc $rc, $n MRC connections"
	[ $rc -eq 0 ] && [ "$n" -ge 1 ] && diff -r "$out/tree" "$out/copy" > /dev/null
	tap_result $(( $? == 0 )) "rsync from a daemon over MRC: the tree arrives intact"
	kill %1 2>/dev/null; wait 2>/dev/null
else
	tap_skip "rsync from a daemon over MRC" "rsync not installed"
fi

# curl against python3 -m http.server: a dual-stack listener, an IPv4 client
mkdir -p "$out/www"
head -c 2000000 /dev/urandom > "$out/www/f"
ip netns exec $NS_B "$MRCCTL" run -- python3 -u -m http.server 5303 --directory "$out/www" > "$out/http.log" 2>&1 &
for i in $(seq 1 50); do grep -q "Serving" "$out/http.log" && break; sleep 0.2; done
run $NS_A curl -s -S --max-time 60 -o "$out/got" "http://$B4:5303/f" 2> "$out/curl.err"
rc=$?
accepted
echo "# curl: rc $rc, $n MRC connections $(cat "$out/curl.err")"
[ $rc -eq 0 ] && [ "$n" -ge 1 ] && cmp -s "$out/got" "$out/www/f"
tap_result $(( $? == 0 )) "curl from python3 -m http.server ([::]) over MRC: the file intact"
kill %1 2>/dev/null; wait 2>/dev/null

# iperf3 for 6 s, spine 2 blackholed from 2 s to 4 s: no second without data.
# The blackhole is confirmed: from just after it to just before the heal
# spine 2 sent < 1 % of the spines' bytes toward b.
ip netns exec $NS_B "$MRCCTL" run -- iperf3 -s -1 -p 5304 > /dev/null 2>&1 &
sleep 1
run $NS_A iperf3 -c $B4 -p 5304 -t 6 -i 1 -f m > "$out/iperf" 2>&1 &
cl=$!
sleep 2
fabric_blackhole 2
c0=$(fabric_tx_counts ab)
sleep 2
c1=$(fabric_tx_counts ab)
fabric_heal 2
wait $cl
rc=$?
read -r part total <<< "$(fabric_dead_share 2 "$c0" "$c1")"
dead=0
fault_share_below 1 "$part" "$total" && dead=1
accepted
iv=$(awk '/sec .*Mbits\/sec/ && !/sender|receiver/ { printf "%s ", $7 }' "$out/iperf")
echo "# iperf3: rc $rc, $n MRC connections; Mbit/s per second: $iv; spine 2 sent ${part:-?} of the spines' ${total:-?} bytes toward b while blackholed"
[ $rc -eq 0 ] && [ "$n" -ge 2 ] && [ $dead = 1 ] &&
	awk '/sec .*Mbits\/sec/ && !/sender|receiver/ { k++; if ($7 + 0 <= 0) bad++ }
		END { exit !(k >= 5 && !bad) }' "$out/iperf"
tap_result $(( $? == 0 )) "iperf3 across a spine failure over MRC (the spine dead: < 1 % of the bytes): every second moves data"
tap_done
