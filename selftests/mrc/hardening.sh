#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Hardening against hostile input, on the leaf-spine fabric (one spine):
#
#  a) malformed packets: mrc_fuzz throws FUZZ_N random and mutated MRC
#     packets (truncated headers, bad version/type/flags/priority/length,
#     bad IDs, absurd SACK fields and PSNs, forged cookies, RSTs and FINs
#     with random IDs, random bytes, bit flips) at the receiver of a live
#     transfer a -> b; the transfer completes intact, neither side is reset,
#     and the drops are counted under their reasons.
#  b) off-path packets: RSTs with random IDs at both ends, RSTs naming the
#     receiver's ID from a wrong sender ID or a wrong address, and DATA/ACK
#     with the right IDs and address but PSNs far outside the window, all
#     during a transfer, change nothing: it completes intact, no reset.
#  c) handshake flood: SYN_N SYNs from spoofed sources (raw IPv4 socket,
#     random addresses in a's /24) at a listener while a legitimate client
#     connects and transfers; no per-SYN state (MRC slab and accepted
#     connections stay flat).
#  d) syscall fuzzing: mrc_sysfuzz for SYS_SECS seconds, 4 threads, over
#     loopback in its own namespace; the kernel log stays clean (the VM
#     runner checks) and the module unloads once the sockets are closed.
#
# STRESS=1 (make stress) makes every count and duration bigger.  HARD_ONLY
# (e.g. "a c") runs a subset.  FUZZ_SEED changes the fuzz seed.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
out=$(mktemp -d)
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
KO=/lib/modules/$(uname -r)/updates/mrc.ko
[ -f "$KO" ] || KO=../../net/mrc/mrc.ko

reload_module() { [ -d /sys/module/mrc ] || modprobe mrc 2>/dev/null || insmod "$KO"; }
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; ip netns del mrc-fz 2>/dev/null; reload_module; rm -rf "$out"' EXIT

SEED=${FUZZ_SEED:-1}
if [ -n "${STRESS:-}" ]; then
	FUZZ_N=${FUZZ_N:-1000000} OFF_N=${OFF_N:-100000} SYN_N=${SYN_N:-1000000}
	SYS_SECS=${SYS_SECS:-180} XFER_SECS=${XFER_SECS:-30}
else
	# Measured in the TCG VM (2 vCPUs): see the report lines "# ... pps".
	FUZZ_N=${FUZZ_N:-100000} OFF_N=${OFF_N:-20000} SYN_N=${SYN_N:-100000}
	SYS_SECS=${SYS_SECS:-30} XFER_SECS=${XFER_SECS:-10}
fi
ONLY=${HARD_ONLY:-a b c d}
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

# stats NS FILE: snapshot of the namespace's counters.
stats() { ip netns exec "$1" cat /proc/net/mrc_stats > "$2"; }
# delta BEFORE AFTER NAME
# (nothing when either file lacks it)
delta() {
	awk -v k="$3" 'FNR == NR { if ($1 == k) { a = $2; h = 1 } next } $1 == k && h { print $2 - a }' "$1" "$2"
}
# delta_sum BEFORE AFTER NAME...: the sum of those counters' changes;
# nothing when one is missing (num then fails the case using it)
delta_sum() {
	local b=$1 a=$2 k d s=0
	shift 2
	for k in "$@"; do
		d=$(delta "$b" "$a" "$k")
		is_num "$d" || return 1
		s=$((s + d))
	done
	echo $s
}
# deltas BEFORE AFTER: every counter that changed, "Name=+N ..."
deltas() {
	awk 'FNR == NR { a[$1] = $2; next } $2 != a[$1] { printf "%s=+%d ", $1, $2 - a[$1] }' "$1" "$2"
}

# conn_ids NS: "LOCAL_ID REMOTE_ID REMOTE_ADDR REMOTE_PORT" of the first
# established connection in NS (from mrcctl conn show).
conn_ids() {
	ip netns exec "$1" "$MRCCTL" conn show 2>/dev/null | awk '
		/^id / && !l { l = $2; split($5, r, ":"); ra = r[1]; rp = r[2]; next }
		/remote-id/ && l && !rid { rid = $2 }
		END { if (l) printf "0x%s 0x%s %s %s\n", l, rid, ra, rp }'
}

# xfer_begin PORT SECS: a transfer a -> b in the background for SECS
# seconds (b receives, ticking every second); returns once data flows.
# TX_PID, XFER_PID.  Timed, not sized: the attacks must meet a live
# connection however fast the datapath is (a 64 MiB one ended before them
# once bursts made it four times faster).
xfer_begin() {
	local i
	xfer_start $NS_B "$1" "$out/rx" -i 1000 || { cat "$out/rx"; return 1; }
	ip netns exec $NS_A ./mrc_xfer -c $B4 -p "$1" -n $((64 << 30)) -d "$2" -U 20000 \
		> "$out/tx" 2>&1 &
	TX_PID=$!
	for i in $(seq 1 100); do
		grep -q tick "$out/rx" && return 0
		sleep 0.1
	done
	return 0
}

# xfer_end: waits for the transfer; 0 when what was sent arrived whole and intact.
xfer_end() {
	local rc_tx rc_rx
	wait_for "$TX_PID" 180
	rc_tx=$?
	wait_for "$XFER_PID" 20
	rc_rx=$?
	echo "#   receiver: $(grep -v -e listening -e tick "$out/rx" | tr '\n' ' ')"
	echo "#   sender: $(tr '\n' ' ' < "$out/tx")"
	[ $rc_tx = 0 ] && [ $rc_rx = 0 ] && [ "$(kv "$out/rx" ok)" = 1 ] &&
	[ -n "$(kv "$out/tx" sent)" ] && [ "$(kv "$out/rx" bytes)" = "$(kv "$out/tx" sent)" ]
}

# still_running: the transfer was still going (the attack overlapped it all).
still_running() { kill -0 "$TX_PID" 2>/dev/null && echo yes || echo no; }

ntests=0
want a && ntests=$((ntests + 4))
want b && ntests=$((ntests + 4))
want c && ntests=$((ntests + 3))
want d && ntests=$((ntests + 2))
tap_plan $ntests

if want a || want b || want c; then
	fabric_up 1 || tap_setup_fail "cannot build the fabric"
fi

# ---- a) malformed packets at a live connection ----
if want a; then
	# Baseline: an orderly close with nobody attacking ends without a RST.
	stats $NS_A "$out/a0"; stats $NS_B "$out/b0"
	xfer_begin 7099 1 || echo "# transfer did not start"
	xfer_end
	ok=$?
	sleep 1
	stats $NS_A "$out/a1"; stats $NS_B "$out/b1"
	echo "# b: $(deltas "$out/b0" "$out/b1")"
	echo "# a: $(deltas "$out/a0" "$out/a1")"
	ra=$(delta_sum "$out/a0" "$out/a1" ConnReset TxRst) rb=$(delta_sum "$out/b0" "$out/b1" ConnReset TxRst)
	num ra rb
	rst=$((ra + rb))
	tap_result $(( ok == 0 && rst == 0 )) \
		"baseline: a transfer and orderly close without attack: no RST, no reset (the last FIN is acked)"

	stats $NS_A "$out/a0"; stats $NS_B "$out/b0"
	xfer_begin 7100 $XFER_SECS || echo "# transfer did not start"
	t0=$(now)
	# from a's namespace to b's tunnel port; -p aims HSACKs at the listener
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -n "$FUZZ_N" -s "$SEED" -p 7100 > "$out/fuzz" 2>&1
	overlap=$(still_running)
	echo "# fuzz: $(head -n 1 "$out/fuzz") (wall $(since "$t0") s), transfer still running" \
		"afterwards: $overlap"
	echo "# $(tail -n 1 "$out/fuzz")"
	xfer_end
	ok=$?
	stats $NS_A "$out/a1"; stats $NS_B "$out/b1"
	echo "# b: $(deltas "$out/b0" "$out/b1")"
	echo "# a: $(deltas "$out/a0" "$out/a1")"
	# A reset during the transfer fails the sender or the receiver.  After
	# it, b may count one reset: the teardown RST of the baseline test.
	reset_a=$(delta "$out/a0" "$out/a1" ConnReset)
	reset_b=$(delta "$out/b0" "$out/b1" ConnReset)
	tap_result $(( ok == 0 && reset_a == 0 && reset_b <= 1 )) \
		"fuzz: $(kv "$out/fuzz" sent) malformed packets during a ${XFER_SECS} s transfer: intact, not reset"
	miss=
	for c in RxDropShort RxDropVersion RxDropType RxDropLength RxDropBadId \
		 RxDropNoConnection RxDropBadCookie; do
		[ "$(delta "$out/b0" "$out/b1" $c)" -gt 0 ] || miss="$miss $c"
	done
	tap_result $(( ${#miss} == 0 )) "fuzz: drops counted under every reason${miss:+ (none under$miss)}"
	drops=$(delta_sum "$out/b0" "$out/b1" RxDropShort RxDropVersion RxDropType RxDropLength \
		RxDropBadId RxDropNoConnection RxDropBadCookie RxDropOutOfWindow)
	num drops
	sent=$(kv "$out/fuzz" sent)
	echo "# fuzz: $drops drops counted at b for $sent packets sent"
	# a few may be lost on the way (veth backlog); a handful of bit-flipped
	# packets may be well-formed SYNs to the listener (answered, not drops)
	tap_result "$(awk -v d=$drops -v s="$sent" 'BEGIN { print (d <= s && d >= s * 0.98) ? 1 : 0 }')" \
		"fuzz: every malformed packet dropped and counted ($drops of $sent)"
fi

# ---- b) off-path packets never change a connection's state ----
if want b; then
	stats $NS_A "$out/a0"; stats $NS_B "$out/b0"
	xfer_begin 7200 $XFER_SECS || echo "# transfer did not start"
	read -r lid rid raddr rport <<< "$(conn_ids $NS_B)"
	echo "# b's connection: id $lid, a's id $rid, a's address $raddr port $rport"
	n=$((OFF_N / 10))
	t0=$(now)
	# the right IDs, port and (spoofed) address, PSNs and ACKs far outside
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -m known -D "${lid:-1}" -I "${rid:-1}" \
		-P "${rport:-1}" -S "${raddr:-10.0.1.1}/32" -n $n -s $((SEED + 5)) > "$out/f5" 2>&1
	stats $NS_B "$out/b1"
	win=$(delta "$out/b0" "$out/b1" RxDropOutOfWindow)
	# the receiver's ID from a random sender ID, and from the right sender
	# ID and MRC port but a wrong (spoofed) address: 10.0.1.129-254, not a's .1
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -m knownrst -D "${lid:-1}" -n $n \
		-s $((SEED + 3)) > "$out/f3" 2>&1
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -m knownrst -D "${lid:-1}" -I "${rid:-1}" \
		-P "${rport:-1}" -S 10.0.1.128/25 -n $n -s $((SEED + 4)) > "$out/f4" 2>&1
	stats $NS_B "$out/b2"
	bid=$(delta "$out/b1" "$out/b2" RxDropBadId)
	echo "# known IDs: $(head -n 1 "$out/f5"), $(head -n 1 "$out/f3"), $(head -n 1 "$out/f4")" \
		"(wall $(since "$t0") s)"
	t0=$(now)
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -m rst -n "$OFF_N" -s $((SEED + 1)) > "$out/f1" 2>&1 &
	p1=$!
	ip netns exec $NS_B ./mrc_fuzz -t $A4 -m rst -n "$OFF_N" -s $((SEED + 2)) > "$out/f2" 2>&1
	wait $p1
	overlap=$(still_running)
	echo "# random-ID RSTs: to b $(head -n 1 "$out/f1"); to a $(head -n 1 "$out/f2")" \
		"(wall $(since "$t0") s); transfer still running afterwards: $overlap"
	stats $NS_B "$out/b3"
	nc=$(delta "$out/b2" "$out/b3" RxDropNoConnection)
	xfer_end
	ok=$?
	stats $NS_A "$out/a4"; stats $NS_B "$out/b4"
	echo "# b: $(deltas "$out/b0" "$out/b4")"
	echo "# a: $(deltas "$out/a0" "$out/a4")"
	# b's teardown RST (see the baseline test) may count one
	ra=$(delta "$out/a0" "$out/a4" ConnReset) rb=$(delta "$out/b0" "$out/b4" ConnReset)
	num ra rb
	reset=$(( ra + (rb > 1) ))
	live=$(( ${#lid} > 0 ))
	num win bid nc
	tap_result $(( ok == 0 && reset == 0 && live && win >= n / 2 )) \
		"off-path: $n DATA/ACK with the right IDs and address, PSNs outside the window: dropped ($win OutOfWindow)"
	tap_result $(( ok == 0 && reset == 0 && live && bid >= 2 * n * 9 / 10 )) \
		"off-path: $((2 * n)) RSTs naming b's ID from a wrong sender ID or address: dropped ($bid BadId)"
	tap_result $(( ok == 0 && reset == 0 && nc >= OFF_N * 9 / 10 )) \
		"off-path: $((2 * OFF_N)) RSTs with random IDs during a transfer: intact, not reset ($nc dropped at b)"

	# A RST with the right IDs and address but a PSN nowhere near the
	# window (RFC 5961 takes a RST only at the exact next sequence number).
	stats $NS_A "$out/a0"; stats $NS_B "$out/b0"
	xfer_begin 7201 3 || echo "# transfer did not start"
	read -r lid rid raddr rport <<< "$(conn_ids $NS_B)"
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -m knownrst -D "${lid:-1}" -I "${rid:-1}" \
		-P "${rport:-1}" -S "${raddr:-10.0.1.1}/32" -n 100 -s $((SEED + 6)) > "$out/f6" 2>&1
	overlap=$(still_running)
	echo "# $(head -n 1 "$out/f6") at b's connection $lid; transfer still running afterwards: $overlap"
	xfer_end
	ok=$?
	stats $NS_A "$out/a1"; stats $NS_B "$out/b1"
	echo "# b: $(deltas "$out/b0" "$out/b1")"
	ra=$(delta "$out/a0" "$out/a1" ConnReset) rb=$(delta "$out/b0" "$out/b1" ConnReset)
	num ra rb
	reset=$(( ra + (rb > 1) ))
	tap_result $(( ok == 0 && reset == 0 && ${#lid} > 0 )) \
		"off-path: 100 RSTs with the right IDs and address but PSNs outside the window: no reset"
fi

# ---- c) SYN flood from spoofed sources ----
slab_mrc() { awk '$1 == "MRC" { print $2; f = 1 } END { if (!f) print -1 }' /proc/slabinfo; }
if want c; then
	stats $NS_B "$out/b0"
	# a listener that outlives the flood (serves every connection)
	: > "$out/hold"
	ip netns exec $NS_B ./mrc_hold -l -p 7300 > "$out/hold" 2>&1 &
	hpid=$!
	for i in $(seq 1 50); do grep -q listening "$out/hold" && break; sleep 0.1; done
	s0=$(slab_mrc)
	echo "# MRC slab before: $s0 active objects"
	t0=$(now)
	ip netns exec $NS_A ./mrc_fuzz -t $B4 -m syn -p 7300 -S 10.0.1.128/25 -n "$SYN_N" \
		-s $((SEED + 10)) > "$out/flood" 2>&1 &
	fpid=$!
	( while kill -0 $fpid 2>/dev/null; do slab_mrc; sleep 0.5; done ) > "$out/slab" &
	spid=$!
	sleep 1
	tl=$(now)
	timeout 60 ip netns exec $NS_A ./mrc_hold -c $B4 -p 7300 -t 2 -r 1024 > "$out/tx" 2>&1
	rc_tx=$?
	legit=$(since "$tl")
	lover=$(kill -0 $fpid 2>/dev/null && echo yes || echo no)
	wait $fpid
	wait $spid
	kill $hpid 2>/dev/null
	wait $hpid 2>/dev/null
	rc_rx=0
	echo "# flood: $(head -n 1 "$out/flood") (wall $(since "$t0") s)"
	echo "# legitimate client: $(tr '\n' ' ' < "$out/tx") in $legit s, flood still running" \
		"when it finished: $lover"
	stats $NS_B "$out/b1"
	echo "# b: $(deltas "$out/b0" "$out/b1")"
	smax=$(sort -n "$out/slab" | tail -n 1)
	[ -n "$smax" ] || smax=$s0
	echo "# MRC slab during the flood: $(sort -n "$out/slab" | uniq -c | awk '{ printf "%s x%s, ", $2, $1 }')"
	acc=$(delta "$out/b0" "$out/b1" ConnAccepted)
	# every SYN that reached the listener was answered with a SYNACK
	answered=$(delta "$out/b0" "$out/b1" TxPackets)
	tap_result $(( rc_tx == 0 && answered >= SYN_N * 9 / 10 )) \
		"SYN flood: a legitimate client connects and sends during $(kv "$out/flood" sent) spoofed SYNs ($answered packets answered)"
	tap_result $(( acc == 1 )) "SYN flood: no connection made by spoofed SYNs ($acc accepted)"
	# active objects are counted per slab (a CPU's slab counts as full), so
	# allow a few slabs' worth; per-SYN state would be ~SYN_N objects
	tap_result $(( s0 >= 0 && smax - s0 <= 128 )) \
		"SYN flood: MRC slab flat ($s0 before, at most $smax during)"
	fabric_down
fi

# ---- d) syscall fuzzing, then the module unloads ----
if want d; then
	fabric_down
	ip netns add mrc-fz && ip -n mrc-fz link set lo up
	t0=$(now)
	timeout $((SYS_SECS + 60)) ip netns exec mrc-fz ./mrc_sysfuzz -d "$SYS_SECS" -s "$SEED" \
		> "$out/sys" 2>&1
	rc=$?
	echo "# sysfuzz ($(since "$t0") s, rc $rc): $(tr '\n' ' ' < "$out/sys")"
	tap_result $(( rc == 0 )) "syscall fuzzing: ${SYS_SECS} s, 4 threads, exits cleanly"
	t0=$(now)
	unloaded=0
	for i in $(seq 1 100); do
		if rmmod mrc 2>/dev/null; then unloaded=1; break; fi
		sleep 0.1
	done
	tu=$(since "$t0")
	if [ $unloaded = 0 ]; then
		echo "# rmmod still refused after $tu s: refcount $(cat /sys/module/mrc/refcnt)"
		ip netns exec mrc-fz "$MRCCTL" conn show 2>&1 | head -n 40 | sed 's/^/#   /'
		ip netns exec mrc-fz cat /proc/net/mrc_stats | tr '\n' ' ' | sed 's/^/# /'
		echo
		for i in $(seq 1 40); do
			rmmod mrc 2>/dev/null && { echo "# ... unloaded after $(since "$t0") s"; break; }
			sleep 1
		done
	fi
	tap_result $unloaded "syscall fuzzing: the module unloads after the sockets are closed (${tu} s)"
	ip netns del mrc-fz
	reload_module
fi

tap_done
