#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The NCCL network plugin (tools/nccl: libnccl-net-mrc.so) over AF_MRC on
# the cluster fabric (lib_cluster.sh: 2 hosts on each of 4 leaves, 4
# spines).  tools/nccl/nccl_harness drives it as NCCL would, with host
# memory, from host 1 (leaf 1) to host 5 (leaf 3):
#  - messages of 1 B to 64 MiB, up to 32 in flight, every byte checked,
#    over one AF_MRC connection (mrcctl conn show lists it; the plugin
#    logs it) across every spine
#  - a short run at NCCL_MRC_PRIORITY=5: both ends' connection urgent
#  - the same over TCP (NCCL_MRC_FAMILY=tcp), for reference
#  - the spine that carries most of the flow blackholed for 3 s inside a
#    timed run of 256 KiB messages: no error, every message verified,
#    messages keep completing while the spine is dead, no gap near as long
#    as the blackhole (TCP's run, with its own flow's spine dead, reported)
#  - bad input over AF_MRC: stale, corrupt and foreign handles, closed
#    comms, a message larger than its buffer, tags that do not match, a
#    peer that closed; on the newest ABI (v12) and the oldest (v8); no fd
#    left open
#  - every AF_MRC socket the plugin opened is gone afterwards
# Rates are reported, not asserted (TCG); the goodput while the spine is
# dead is asserted under -icount only (tap_timed).
cd "$(dirname "$0")" || exit 1
. ./lib.sh
. ./lib_cluster.sh
SPINES=4
NCCL_DIR=$(cd ../../tools/nccl 2>/dev/null && pwd)
HARNESS=$NCCL_DIR/nccl_harness
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
TX_NS=$(ns_host 1) RX_NS=$(ns_host 5)
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; rm -rf "$out"' EXIT

tap_plan 12
if [ ! -x "$HARNESS" ] || [ ! -r "$NCCL_DIR/libnccl-net-mrc.so" ]; then
	tap_setup_fail "no tools/nccl/nccl_harness or libnccl-net-mrc.so (make tools)"
fi
[ -x "$MRCCTL" ] || tap_setup_fail "no tools/mrcctl/mrcctl (make tools)"
command -v jq > /dev/null || tap_setup_fail "jq (make deps) not installed"
cluster_up 2 4 $SPINES || tap_setup_fail "cannot build the cluster fabric"
TX_ADDR=$(cluster_host_addr 1) RX_ADDR=$(cluster_host_addr 5)

# mrc_sockets: AF_MRC sockets allocated in the two hosts' namespaces, where
# the harness runs.  /proc/net/protocols counts the namespace it is read in
# (sock_prot_inuse_add(sock_net(sk))), so each is read from inside; nothing
# unless both were read.
mrc_sockets() {
	local ns
	for ns in "$TX_NS" "$RX_NS"; do ip netns exec "$ns" cat /proc/net/protocols; done |
		awk '$1 == "MRC" { s += $3; n++ } END { if (n == 2) print s }'
}
sockets0=$(mrc_sockets)

# pair_start NAME RX_OPTS TX_OPTS [VAR=VALUE...]: the receiver on host 5
# and the sender on host 1 in the background, with NCCL_DEBUG=INFO and the
# variables given.  Their lines in $out/NAME.rx and .tx, the plugin's log
# in .rx.err and .tx.err; RX_PID, TX_PID.  The handle goes through a file.
pair_start() {
	local name=$1 rx_opts=$2 tx_opts=$3
	shift 3
	rm -f "$out/$name.handle"
	# shellcheck disable=SC2086
	timeout 400 ip netns exec "$RX_NS" env NCCL_DEBUG=INFO "$@" "$HARNESS" -l \
		-f "$out/$name.handle" -a "$RX_ADDR" -T 120 $rx_opts \
		> "$out/$name.rx" 2> "$out/$name.rx.err" &
	RX_PID=$!
	# shellcheck disable=SC2086
	timeout 400 ip netns exec "$TX_NS" env NCCL_DEBUG=INFO "$@" "$HARNESS" -c \
		-f "$out/$name.handle" -a "$TX_ADDR" -T 120 $tx_opts \
		> "$out/$name.tx" 2> "$out/$name.tx.err" &
	TX_PID=$!
}

# last_lines FILE: its last summary or error lines, on one line
last_lines() { grep -E '^(summary|error)' "$1" | tail -n 2 | tr '\n' ' '; }

# pair_wait NAME: 0 when both sides exited 0; their summaries printed
pair_wait() {
	local rt rr
	wait "$TX_PID"
	rt=$?
	wait "$RX_PID"
	rr=$?
	echo "# $1: sender exit $rt: $(last_lines "$out/$1.tx")"
	echo "# $1: receiver exit $rr: $(last_lines "$out/$1.rx")"
	grep -h WARN "$out/$1.tx.err" "$out/$1.rx.err" | head -n 4 | sed 's/^/#   /'
	return $((rt || rr))
}

# pair_intact NAME: the receiver verified every message the sender sent
# (both summaries ok=1 with the same msgs and bytes, no error line)
pair_intact() {
	local rx=$out/$1.rx tx=$out/$1.tx
	[ "$(kv "$rx" ok)" = 1 ] && [ "$(kv "$tx" ok)" = 1 ] && [ -n "$(kv "$tx" msgs)" ] &&
		[ "$(kv "$rx" msgs)" = "$(kv "$tx" msgs)" ] &&
		[ "$(kv "$rx" bytes)" = "$(kv "$tx" bytes)" ] &&
		[ "$(kv "$rx" errors)" = 0 ] && ! grep -q '^error=' "$rx" "$tx"
}

# spine_tx: the bytes each spine has sent toward the leaves, space separated
spine_tx() {
	local i files
	files=$(spine_links | sed 's|.*|/sys/class/net/&/statistics/tx_bytes|')
	for i in $(seq 1 $SPINES); do
		# shellcheck disable=SC2086
		ip netns exec "$(ns_spine "$i")" cat $files |
			awk '{ s += $1 } END { printf "%.0f ", s }'
	done
}

ipfwd() { local i; for i in $(seq 1 $SPINES); do fabric_spine_ipfwd "$i"; done; }
# secs FROM TO: TO - FROM, one decimal
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# --- the size ladder over MRC, then over TCP ------------------------------
LADDER="-t 16m -B 128m"
read -ra f0 <<< "$(ipfwd | tr '\n' ' ')"
pair_start ladder "-B 128m" "$LADDER"
# the sender's host lists the connection to the listener while it runs
wait_line "$out/ladder.rx" '^listening' 600
# (not kv: "transport=" ends in "port=" too)
port=$(sed -n 's/^listening .* port=\([0-9]*\) .*/\1/p' "$out/ladder.rx" | tail -n 1)
num port
# (and, once, the AF_MRC sockets of the hosts' namespaces: the count that
# must come back to sockets0 at the end has to see the plugin's).  Five
# looks once it is there, not the whole run: under -icount the guest has
# one vCPU, and mrcctl and jq every 0.2 s took a third of its rate from
# MRC's ladder and nothing from TCP's.
conns=0 sockets_run= looks=0
while kill -0 "$TX_PID" 2>/dev/null && [ "$looks" -lt 5 ]; do
	n=$("$MRCCTL" -n "$TX_NS" -j conn show 2>/dev/null |
		jq --arg a "$RX_ADDR" --argjson p "$port" \
			'[.[] | select(.remote_addr == $a and .remote_port == $p)] | length')
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt "$conns" ] && conns=$n
	[ -z "$sockets_run" ] && [ "$conns" -gt 0 ] && sockets_run=$(mrc_sockets)
	[ "$conns" -gt 0 ] && looks=$((looks + 1))
	sleep 0.2
done
pair_wait ladder
rc=$?
read -ra f1 <<< "$(ipfwd | tr '\n' ' ')"
steps=$(grep -c '^step .* ok=1$' "$out/ladder.rx")
pair_intact ladder
intact=$?
what="1 B to 64 MiB over MRC, 32 in flight: every message verified"
tap_result $(( rc == 0 && intact == 0 && steps == 14 )) \
	"$what ($steps sizes, $(kv "$out/ladder.rx" msgs) messages)"
# mrc_logged NAME PRIO: both sides logged their connection over AF_MRC at PRIO
mrc_logged() {
	grep -q "connected to $RX_ADDR port [0-9]* over AF_MRC (family [0-9]*), priority $2" \
		"$out/$1.tx.err" &&
		grep -q "accepted from $TX_ADDR port [0-9]* over AF_MRC (family [0-9]*), priority $2" \
			"$out/$1.rx.err" && [ "$(kv "$out/$1.rx" transport)" = mrc ]
}
mrc_logged ladder 0
logged=$(( ! $? ))
echo "# connections to $RX_ADDR port $port in $TX_NS's conn show: at most $conns"
grep -h "NET/MRC" "$out/ladder.tx.err" "$out/ladder.rx.err" | grep -v closing | sed 's/^/#   /'
tap_result $(( conns == 1 && logged )) "... over one AF_MRC connection (conn show)"
crossed=1
for i in 0 1 2 3; do
	[ $((f1[i] - f0[i])) -gt 100 ] || crossed=0
done
echo "# packets forwarded by each spine:" \
	"$(for i in 0 1 2 3; do printf '%d ' $((f1[i] - f0[i])); done)"
tap_result $(( crossed )) "... and its traffic crossed every spine"

# NCCL_MRC_PRIORITY on a short run of its own: 4 and up is urgent (sent
# twice, one packet at a time), which the ladder's rates are not about
pair_start urgent "-B 1m" "-s 1k,64k -t 256k -B 1m" NCCL_MRC_PRIORITY=5
pair_wait urgent
rc=$?
pair_intact urgent
intact=$?
mrc_logged urgent 5
tap_result $(( rc == 0 && intact == 0 && ! $? )) \
	"NCCL_MRC_PRIORITY=5: both ends' connection at priority 5, every message verified"

pair_start tcp "-B 128m" "$LADDER" NCCL_MRC_FAMILY=tcp
pair_wait tcp
rc=$?
steps=$(grep -c '^step .* ok=1$' "$out/tcp.rx")
pair_intact tcp
tap_result $(( rc == 0 && $? == 0 && steps == 14 )) \
	"the same over TCP (NCCL_MRC_FAMILY=tcp, reference): every message verified"
awk '/^step/ { split($2, s, "="); split($6, m, "="); print s[2], m[2] }' "$out/ladder.rx" > "$out/m"
awk '/^step/ { split($6, m, "="); print m[2] }' "$out/tcp.rx" > "$out/t"
echo "# receiver Mb/s per size: size MRC TCP"
paste -d ' ' "$out/m" "$out/t" | sed 's/^/#   /'

# --- the busiest spine blackholed in a timed run -----------------------------
# blackhole_run NAME [VAR=VALUE...]: 256 KiB messages for 14 s.  1 s after
# the first arrives, the spine that received the most of the flow in the
# next second (lib.sh's fabric_counts: bytes from leaf 1, host 1's) is
# blackholed for 3 s.  Sets
#   BH_SPINE; BH_PRE of BH_PRE_ALL: its bytes and all the spines' in that
#     second, and BH_CARRIED: they were its share of the flow (>= 10 %, and
#     a message's worth at least)
#   BH_DEAD_MS: the dead window, from tb, once the drop is in place, to
#     th, before the heal
#   BH_SENT of BH_ALL: its bytes and the spines' (spine_tx) in that window,
#     and BH_DEAD: under 1 % (fault_share_below), and there was traffic
#   from the receiver's ticks (a tick's t_ms is the end of its interval):
#     BH_IN and BH_DURING, the sum and the mean of the ticks wholly inside
#     [tb + 0.5 s, th], when what was in flight on the spine has been
#     resent; BH_BEFORE, the mean of those before the drop
blackhole_run() {
	local name=$1 tick=100 t0 tb0 tb th s0 s1 a b i rc
	shift
	pair_start "$name" "-B 8m -i $tick -g 200" "-d 14 -z 256k" "$@"
	BH_SPINE=0 BH_PRE='' BH_PRE_ALL='' BH_CARRIED=0 BH_SENT='' BH_ALL='' BH_DEAD=0
	if ! wait_line "$out/$name.rx" '^start realtime=' 600; then
		pair_wait "$name"
		BH_DEAD_MS=0 BH_IN=0 BH_BEFORE=0 BH_DURING=0
		return 1
	fi
	t0=$(kv "$out/$name.rx" realtime)
	sleep 1
	read -ra a <<< "$(fabric_counts ab bytes)"
	sleep 1
	read -ra b <<< "$(fabric_counts ab bytes)"
	BH_SPINE=1
	if [ ${#a[@]} = $SPINES ] && [ ${#b[@]} = $SPINES ] && is_num "${a[@]}" "${b[@]}"; then
		BH_PRE_ALL=0
		for i in $(seq 0 $((SPINES - 1))); do
			BH_PRE_ALL=$((BH_PRE_ALL + b[i] - a[i]))
			[ $((b[i] - a[i])) -gt $((b[BH_SPINE - 1] - a[BH_SPINE - 1])) ] &&
				BH_SPINE=$((i + 1))
		done
		BH_PRE=$((b[BH_SPINE - 1] - a[BH_SPINE - 1]))
		[ "$BH_PRE" -ge $((256 << 10)) ] && [ $((BH_PRE * 100)) -ge $((BH_PRE_ALL * 10)) ] &&
			BH_CARRIED=1
	fi
	tb0=$(now)
	fabric_blackhole "$BH_SPINE"
	tb=$(now)
	s0=$(spine_tx)
	sleep 3
	s1=$(spine_tx)
	th=$(now)
	fabric_heal "$BH_SPINE"
	pair_wait "$name"
	rc=$?
	read -r BH_SENT BH_ALL <<< "$(fabric_dead_share "$BH_SPINE" "$s0" "$s1")"
	fault_share_below 1 "$BH_SENT" "$BH_ALL" && BH_DEAD=1
	# (no <(...): the guest has no /dev/fd)
	read -r BH_DEAD_MS BH_IN BH_DURING BH_BEFORE <<< "$(awk -v t0="$t0" -v tb0="$tb0" \
		-v tb="$tb" -v th="$th" -v w="$tick" '
		BEGIN { b0 = tb0 - t0; b = tb - t0; h = th - t0; w /= 1000 }
		/^tick/ { split($2, t, "="); split($3, v, "="); e = t[2] / 1000
			if (e - w >= b + 0.5 && e <= h) { d += v[2]; nd++ }
			if (e - w >= 0.2 && e <= b0) { p += v[2]; np++ } }
		END { printf "%.0f %.0f %.0f %.0f\n", (h - b) * 1000, d, nd ? d / nd : 0,
			np ? p / np : 0 }' "$out/$name.rx")"
	echo "# $name: spine $BH_SPINE (${BH_PRE:-?} of the spines' ${BH_PRE_ALL:-?} bytes" \
		"from leaf 1 in the second before) dead $(secs "$t0" "$tb") s" \
		"to $(secs "$t0" "$th") s after the first message;" \
		"it sent ${BH_SENT:-?} of the spines' ${BH_ALL:-?} bytes meanwhile;" \
		"completed per 100 ms: $BH_BEFORE before, $BH_DURING while dead;" \
		"longest gap $(kv "$out/$name.rx" max_gap_ms) ms"
	grep '^gap' "$out/$name.rx" | head -n 5 | sed 's/^/#   /'
	return $rc
}

blackhole_run bh
rc=$?
pair_intact bh
intact=$?
gap=$(kv "$out/bh.rx" max_gap_ms)
num BH_IN BH_DEAD_MS BH_BEFORE BH_DURING
what="spine $BH_SPINE blackholed 3 s in a timed run (before, ${BH_PRE:-?} of ${BH_PRE_ALL:-?}"
what="$what bytes, >= 10 %; then ${BH_SENT:-?} of ${BH_ALL:-?}, < 1 %): every message"
what="$what verified, no error ($(kv "$out/bh.rx" msgs) messages)"
tap_result $(( rc == 0 && intact == 0 && BH_CARRIED && BH_DEAD )) "$what"
tap_result $(( BH_IN > 0 && BH_CARRIED && BH_DEAD )) \
	"... messages kept completing while the spine was dead ($BH_IN bytes from 0.5 s in)"
# Against the dead window, not a latency: a slow guest may stall a second,
# but no progress for most of the blackhole is what fails.
tap_result "$(awk -v g="$gap" -v d="$BH_DEAD_MS" 'BEGIN { print (g != "" && d > 0 && g < d / 2) ? 1 : 0 }')" \
	"... the longest gap between completions ${gap:-?} ms (< half the $BH_DEAD_MS ms dead)"
tap_timed $(( BH_BEFORE > 0 && BH_DURING * 100 >= BH_BEFORE * 60 )) \
	"... while it was dead, >= 60% of the rate before ($((BH_DURING * 100 / (BH_BEFORE + 1)))%)"
blackhole_run bh_tcp NCCL_MRC_FAMILY=tcp
rc=$?
pair_intact bh_tcp
echo "# TCP's run (reference), its busiest spine dead: exit $rc, intact $((! $?)), $BH_IN bytes" \
	"completed while dead, longest gap $(kv "$out/bh_tcp.rx" max_gap_ms) ms"

# --- bad input, both ends on host 1 ------------------------------------------
for v in 12 8; do
	ip netns exec "$TX_NS" timeout 300 "$HARNESS" -b -a "$TX_ADDR" -V $v \
		> "$out/bad$v" 2> "$out/bad$v.err"
	rc=$?
	grep -E '^check .*ok=0|^error' "$out/bad$v" | sed 's/^/#   /'
	echo "# v$v: $(grep '^summary' "$out/bad$v")"
	what="bad input on v$v over AF_MRC: $(kv "$out/bad$v" checks) checks of the exact"
	tap_result $(( rc == 0 )) "$what error code, no fd left open"
done

# --- nothing left behind ---------------------------------------------------------
# The kernel's side: the AF_MRC sockets of the hosts' namespaces back to
# where they were (closed connections may linger as orphans for a few
# seconds), where the ladder's were counted while it ran.  The plugin's
# side, an fd it left open, the bad-input runs check (fds_leaked).
for _ in $(seq 1 60); do
	sockets1=$(mrc_sockets)
	is_num "$sockets0" "$sockets1" && [ "$sockets1" -le "$sockets0" ] && break
	sleep 0.5
done
num sockets0 sockets1 sockets_run
tap_result $(( sockets1 <= sockets0 && sockets_run > sockets0 )) \
	"every AF_MRC socket the plugin opened is gone (hosts 1 and 5: $sockets1 allocated, $sockets0 before, $sockets_run while the ladder ran)"
fabric_down
tap_done
