#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The demo, inside the VM (started by tools/demo/demo.sh): one AF_MRC
# transfer a -> b over the 4-spine fabric while spine $DEAD is blackholed and
# healed, with a live per-spine view each second; then the same schedule
# over TCP; then a summary.  Results land in $OUT (the VM's /mrc-out).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo/selftests/mrc" || exit 1
. ./lib.sh
. "$repo/tools/bench/benchlib.sh"
OUT=${MRC_DEMO_OUT:-/mrc-out}
TMPD=$(mktemp -d)	# receivers write here (tmpfs), not to the 9p results folder
SPINES=4
RATE_MBIT=${MRC_DEMO_RATE_MBIT:-8}	# each spine's rate
FAIL_AT=${MRC_DEMO_FAIL_AT:-8}		# seconds into a transfer
HEAL_AT=${MRC_DEMO_HEAL_AT:-16}
DUR=${MRC_DEMO_SECS:-24}
DEAD=${MRC_DEMO_SPINE:-2}		# the spine blackholed under MRC
trap 'kill $(jobs -p) 2>/dev/null; fabric_down' EXIT
# the guest's /dev has no /dev/fd, which process substitution needs
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

say() { printf '%s\n' "$*"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

say "== mrc demo: one connection, $SPINES spines of $RATE_MBIT Mbit/s each; spine fails at ${FAIL_AT}s, heals at ${HEAL_AT}s"
say "-- building the leaf-spine fabric (a - l1 = s1..s$SPINES = l2 - b) ..."
fabric_up_fast $SPINES || { say "cannot build the fabric"; exit 1; }
for i in $(seq 1 $SPINES); do fabric_shape "$i" "${RATE_MBIT}mbit" - || exit 1; done
hold_start

# ev_view: EVA[i]/EVR[i] = active/retired EVs of a's connection on spine i
declare -A EVSP
declare -a EVA EVR
ev_view() {
	local i port state
	for ((i = 1; i <= SPINES; i++)); do EVA[i]=0 EVR[i]=0; done
	while read -r port state; do
		i=${EVSP[$port]:-0}
		[ "$i" -gt 0 ] || continue
		if [ "$state" = active ]; then EVA[i]=$((EVA[i] + 1)); else EVR[i]=$((EVR[i] + 1)); fi
	done < <(conn_evs | tee "$TMPD/mrc.evs")
}

bar() {	# bar MBIT: one # per 2 Mbit/s, at most 5
	local n=$(( ($1 + 10) / 20 )) s='#####'
	[ $n -gt 5 ] && n=5
	printf '%-5s' "${s:0:n}"
}

# run PROTO KIND BYTES DEAD_SPINE: one transfer with the live view
run() {
	local proto=$1 kind=$2 bytes=$3 dead=$4 t0 t next tick=0 last_ms gp i d cell line
	local mapper= seen=0 rx=$TMPD/$proto.rx txf=$TMPD/$proto.tx failed=0 healed=0 lt evs=0
	local -a prev L LASTD
	: > "$OUT/$proto.live"
	xfer_start $NS_B 7000 "$rx" -i 100 $kind || { say "receiver did not start"; return 1; }
	read_spines
	for ((i = 1; i <= SPINES; i++)); do prev[i]=${TXB[i]}; done
	local ret0=$RET rea0=$REA
	t0=$(now_ms)
	ip netns exec $NS_A ./mrc_xfer $kind -c $B4 -p 7000 -n "$bytes" > "$txf" 2>&1 &
	local txpid=$!
	printf '%5s %9s |' "t" "goodput"
	for ((i = 1; i <= SPINES; i++)); do
		printf ' %-17s|' "spine$i Mb/s$([ "$proto" = mrc ] && echo ' EVs a/r')"
	done
	[ "$proto" = mrc ] && printf ' EVs retired/readmitted'
	printf '\n'

	last_ms=$t0
	next=$((t0 + 1000))
	while kill -0 $txpid 2>/dev/null || kill -0 $XFER_PID 2>/dev/null; do
		t=$(now_ms)
		if [ $failed = 0 ] && [ $((t - t0)) -ge $((FAIL_AT * 1000)) ]; then
			if [ "$dead" = auto ]; then	# the spine that carried most in the last second
				dead=1
				for ((i = 2; i <= SPINES; i++)); do
					[ "${LASTD[i]:-0}" -gt "${LASTD[dead]:-0}" ] && dead=$i
				done
			fi
			fabric_blackhole "$dead"; failed=1; echo "fail $((t - t0)) $dead" > "$OUT/$proto.events"
			say "   >>> $(( (t - t0) / 1000 )).$(( (t - t0) / 100 % 10 ))s: spine $dead blackholed (drops everything, links stay up)"
		fi
		if [ $healed = 0 ] && [ $((t - t0)) -ge $((HEAL_AT * 1000)) ]; then
			fabric_heal "$dead"; healed=1; echo "heal $((t - t0))" >> "$OUT/$proto.events"
			say "   >>> $(( (t - t0) / 1000 )).$(( (t - t0) / 100 % 10 ))s: spine $dead healed"
		fi
		if [ $t -lt $next ]; then
			lt=$(( next - t ))
			sleep "$((lt / 1000)).$(printf '%03d' $((lt % 1000)))"
			continue
		fi
		next=$((next + 1000))
		[ $next -le $t ] && next=$((t + 1000))
		read_spines
		[ "$proto" = mrc ] && ev_view
		# EV -> spine map: a background job maps ports not seen before
		# (the connection replaces some EVs over time)
		if [ "$proto" = mrc ]; then
			local evmap=$TMPD/mrc.evmap port sp
			if [ -s "$evmap" ]; then
				while read -r port sp; do EVSP[$port]=$sp; done < "$evmap"
				evs=1
			fi
			if [ -z "$mapper" ] || ! kill -0 "$mapper" 2>/dev/null; then
				local unknown=
				while read -r port sp; do
					[ -n "${EVSP[$port]:-}" ] || unknown="$unknown $port"
				done < "$TMPD/mrc.evs"
				if [ -n "$unknown" ]; then
					# shellcheck disable=SC2086
					ev_spines $unknown >> "$evmap" &
					mapper=$!
				fi
			fi
		fi
		t=$(now_ms)
		# goodput: the receiver's 100 ms ticks since the last line
		mapfile -t -s $seen L < "$rx"
		seen=$((seen + ${#L[@]}))
		gp=0
		for line in "${L[@]}"; do
			case $line in tick*) line=${line##*bytes=}; gp=$((gp + line)) ;; esac
		done
		d=$(( t - last_ms )); [ $d -gt 0 ] || d=1
		line=$(printf '%4ds %5d.%d Mb/s |' $(( (t - t0 + 500) / 1000 )) $((gp * 8 / d / 1000)) $((gp * 8 / d / 100 % 10)))
		for ((i = 1; i <= SPINES; i++)); do
			LASTD[i]=$((TXB[i] - prev[i]))
			local mb10=$(( LASTD[i] * 8 / d / 100 ))	# tenths of Mbit/s
			if [ "$i" = "$dead" ] && [ $failed = 1 ] && [ $healed = 0 ]; then
				cell=$(printf '%3d.%d DEAD ' $((mb10 / 10)) $((mb10 % 10)))
			else
				cell=$(printf '%3d.%d %s' $((mb10 / 10)) $((mb10 % 10)) "$(bar $mb10)")
			fi
			if [ "$proto" = mrc ] && [ $evs -gt 0 ] && [ -s "$TMPD/mrc.evs" ]; then
				cell="$cell $(printf '%2d/%-2d' "${EVA[i]}" "${EVR[i]}")"
			else
				cell="$cell     "
			fi
			line="$line $cell|"
		done
		[ "$proto" = mrc ] && line="$line +$((RET - ret0))/+$((REA - rea0))"
		say "$line"
		echo "$line" >> "$OUT/$proto.live"
		for ((i = 1; i <= SPINES; i++)); do prev[i]=${TXB[i]}; done
		last_ms=$t
	done
	[ $healed = 1 ] || { fabric_heal "$dead"; [ $failed = 1 ] && echo "heal $(( $(now_ms) - t0 ))" >> "$OUT/$proto.events"; }
	wait $txpid; wait $XFER_PID
	cp "$rx" "$txf" "$OUT/"
	read_spines
	echo "evretired $((RET - ret0)) evreadmitted $((REA - rea0))" >> "$OUT/$proto.events"
	say "   $(tail -n 1 "$rx")"
}

# summary PROTO LABEL
summary() {
	awk -v label="$2" '
		FILENAME ~ /events$/ && $1 == "fail" { f = $2 }
		FILENAME ~ /events$/ && $1 == "heal" { h = $2 }
		FILENAME ~ /events$/ && $1 == "evretired" { ret = $2; rea = $4 }
		FILENAME ~ /rx$/ && /^tick/ {
			split($2, a, "="); split($3, b, "="); t = a[2]
			if (!f || t <= f) { pb += b[2]; pt = t } else if (t <= h) db += b[2]; else ab += b[2]
			last = t
		}
		FILENAME ~ /rx$/ && /^bytes=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] } }
		END {
			ad = s["secs"] * 1000 - h
			ok = (s["ok"] == 1) ? "verified" : "CORRUPT "
			gb = (pt > 0) ? pb * 8 / pt / 1000 : 0
			gd = (h > f) ? db * 8 / (h - f) / 1000 : 0
			ga = (ad > 0) ? ab * 8 / ad / 1000 : 0
			printf "%-4s %6.1f MiB %s | goodput before %5.1f, during %5.1f, after %5.1f Mbit/s | longest gap %5.0f ms\n",
				label, s["bytes"] / 1048576, ok, gb, gd, ga, s["max_gap_ms"]
			if (label == "MRC")
				printf "      EVs retired %d, re-admitted %d (retire-losses=1: every congestion drop retires an EV too, so most are not the failure)\n", ret, rea
		}' "$OUT/$1.events" "$OUT/$1.rx"
}

# bytes for DUR seconds at MBIT Mbit/s
sz() { echo $(( $1 * 1000000 / 8 * $2 )); }

say ""
say "== AF_MRC: one connection sprays over 64 EVs (UDP source ports) = all spines"
# (under TCG one connection reaches about 2/3 of the 4 spines' capacity)
run mrc "" "$(sz $((RATE_MBIT * SPINES * 60 / 100)) $((DUR - (HEAL_AT - FAIL_AT) / 4)))" "$DEAD"

say ""
say "== TCP, same fabric and schedule: its one flow hashes onto one spine; the demo"
say "   blackholes the spine it is on (any other spine would leave it untouched)"
tcp_bytes=$(sz $((RATE_MBIT * 90 / 100)) $((DUR - (HEAL_AT - FAIL_AT))))
run tcp -T "$tcp_bytes" auto

say ""
say "== summary"
summary mrc MRC
summary tcp TCP
say "live views and raw 100 ms ticks: results/demo/{mrc,tcp}.{live,rx}"

# ---- a training step's view: all-reduce through a spine failure ----------
. "$repo/tools/bench/colllib.sh"
COLL_SECS=${MRC_DEMO_COLL_SECS:-12}
say ""
say "== all-reduce: 8 ranks, 2 hosts on each of 4 leaves, $SPINES spines of $RATE_MBIT Mbit/s; a 1 MiB ring"
say "   all-reduce, every element checked on every rank; the spine that carries the most dies"
say "   3 s in and heals 3 s later.  Each line is one iteration (the slowest rank's time)."
coll_setup 2 || { say "cannot build the cluster"; exit 1; }
for i in $(seq 1 $SPINES); do fabric_shape "$i" "${RATE_MBIT}mbit" - || exit 1; done

# coll_demo TRANSPORT: one run, its iterations shown as they complete
coll_demo() {
	local f=$TMPD/coll_$1.txt t0 spine fail job
	: > "$f"
	coll_job "$f" "$1" $((1 << 20)) -w 1 -d "$COLL_SECS" -U 30000 &
	job=$!
	for _ in $(seq 1 600); do grep -q '^start' "$f" && break; sleep 0.1; done
	t0=$(grep -o 'realtime_ms=[0-9]*' "$f" | cut -d= -f2)
	[ -n "$t0" ] || t0=$(now_ms)
	# a shell loop, not awk: mawk would hold its input back in a pipe
	tail -n +1 -f --pid=$job "$f" | while read -r line; do
		case $line in iter=*) ;; *) continue ;; esac
		local k= t= ms= ok=
		for kv in $line; do
			case $kv in
			iter=*) k=${kv#*=} ;; t_ms=*) t=${kv#*=} ;; ms=*) ms=${kv#*=} ;; ok=*) ok=${kv#*=} ;;
			esac
		done
		printf '   iteration %2d  %5.1f s  %7.0f ms  %s\n' "$k" \
			"$(awk -v a="$t" -v b="$ms" 'BEGIN { print (a + b) / 1000 }')" "$ms" \
			"$([ "$ok" = 1 ] && echo verified || echo WRONG)"
	done &
	local shower=$!
	sleep_until "$t0" 2000
	spine=$(busiest_spine 1)
	[ "$spine" -gt 0 ] || spine=1
	fabric_blackhole "$spine"
	fail=$(( $(now_ms) - t0 ))
	say "   -- $(printf '%5.1f' "$(awk -v m=$fail 'BEGIN { print m / 1000 }')") s: spine $spine blackholed"
	sleep_until "$t0" $((fail + 3000))
	fabric_heal "$spine"
	say "   -- $(printf '%5.1f' "$(awk -v m=$(( $(now_ms) - t0 )) 'BEGIN { print m / 1000 }')") s: spine $spine healed"
	wait $job
	COLL_RC=$?
	wait $shower
	cp "$f" "$OUT/"
}
say ""
say "-- MRC"
coll_demo mrc
mrc_sum=$(grep '^summary' "$TMPD/coll_mrc.txt")
say ""
say "-- TCP (each ring connection hashes onto one spine; the busiest is the one that dies)"
coll_demo tcp
tcp_sum=$(grep '^summary' "$TMPD/coll_tcp.txt")
say ""
for l in "MRC $mrc_sum" "TCP $tcp_sum"; do
	echo "$l" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%-4s %d iterations, median %.0f ms, longest %.0f ms, failed steps %d, %s\n", $1,
			v["iters"], v["p50_ms"], v["max_ms"], v["failed"], v["ok"] ? "all verified" : "NOT verified" }'
done
