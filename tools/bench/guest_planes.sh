# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The planes section of the benchmark (issue 14; sourced by tools/bench/
# guest.sh, last: it replaces the fabric with lib.sh's two planes).  a and
# b have one interface into each of 2 planes, each plane a leaf-spine of
# PL_SPINES spines; every spine link forwards at PL_RATE Mbit/s after
# PL_HOP_MS of delay (one netem each way, so the idle RTT is 2 x PL_HOP_MS).  One connection a -> b for PL_SECS; at PL_FAIL s
# one failure, undone at PL_HEAL s:
#   nic:  a's plane-1 interface goes down, then up (fabric_host_link)
#   leaf: a's plane-1 leaf drops everything, links up (fabric_leaf_blackhole)
# (a failure that starts late, on a busy guest, still lasts PL_HEAL - PL_FAIL)
# for MRC, MPTCP (fullmesh: a's 2 addresses to b's 2, 4 subflows) and TCP
# (to b's plane-1 address: its one path crosses the failure).  Times count
# from the receiver's tick 0 ("start realtime="); plane bytes are what b's
# interfaces received.  Raw: planes.tsv (one line a run) and each run's
# 10 ms ticks and gaps over 5 ms (planes_<scenario>_<transport>_<rep>.rx).

PL_SPINES=${MRC_BENCH_PLANES_SPINES:-2}
PL_RATE=${MRC_BENCH_PLANES_RATE:-$RATE}		# Mbit/s, every spine link
PL_HOP_MS=${MRC_BENCH_PLANES_HOP_MS:-5}		# each spine, each way
PL_SECS=${MRC_BENCH_PLANES_SECS:-11}		# a run's transfer (room for a late failure)
PL_FAIL=${MRC_BENCH_PLANES_FAIL:-3}		# failure at, undone at (s)
PL_HEAL=${MRC_BENCH_PLANES_HEAL:-6}
PL_SCEN=${MRC_BENCH_PLANES_SCEN:-nic leaf}
PL_TRANSPORTS=${MRC_BENCH_PLANES_TRANSPORTS:-mrc mptcp tcp}
PL_PORT=7400

log "planes: 2 planes x $PL_SPINES spines, $PL_RATE Mbit/s and ${PL_HOP_MS} ms each way a spine link"
hold_stop	# the old fabric's holders would keep its namespaces alive
fabric_planes_up "$PL_SPINES" || { log "cannot build the planes fabric"; exit 1; }
P2A4=$(plane_addr 2 a) P2B4=$(plane_addr 2 b)

# Shallow queues: netem's own rate with a limit of about 50 ms at the rate
# (as shape_coll), so the loaded RTT stays near the idle one plus one queue;
# one tc process a spine (each start costs under TCG).
for p in 1 2; do
	for i in $(seq 1 "$PL_SPINES"); do
		for ifname in $(spine_links); do
			echo "qdisc replace dev $ifname root netem delay ${PL_HOP_MS}ms rate ${PL_RATE}mbit limit $((PL_RATE * 50 / 12 + 4))"
		done | tc -n "$(plane_spine $p "$i")" -batch - || { log "cannot shape plane $p spine $i"; exit 1; }
	done
done

# MPTCP fullmesh: b signals its plane-2 address, a's two addresses are
# fullmesh subflow endpoints: a1-b1 (the first), a2-b1, a1-b2, a2-b2.  No
# "dev": an endpoint with one binds its subflows to that device, and a
# plane's device has no route to the other plane's addresses (2 subflows).
# Routed by destination, a subflow between planes leaves by the
# destination's plane and comes back by the source's.
for ns in $NS_A $NS_B; do ip -n "$ns" mptcp limits set subflow 4 add_addr_accepted 4; done
ip -n "$NS_B" mptcp endpoint add "$P2B4" signal
ip -n "$NS_A" mptcp endpoint add "$A4" subflow fullmesh
ip -n "$NS_A" mptcp endpoint add "$P2A4" subflow fullmesh

# holders: b's /proc/PID/net/dev gives its planes' bytes with no netns exec
ip netns exec "$NS_B" sleep 1000000 &
PL_HOLD_B=$!
sleep 0.5
ping1=$(ip netns exec "$NS_A" ping -c 3 -i 0.2 -q "$B4" | awk -F/ '/^rtt/ { print $5 }')
ping2=$(ip netns exec "$NS_A" ping -c 3 -i 0.2 -q "$P2B4" | awk -F/ '/^rtt/ { print $5 }')
log "  idle ping RTT: plane 1 ${ping1:-?} ms, plane 2 ${ping2:-?} ms"
{
	echo "planes_spines $PL_SPINES"
	echo "planes_rate_mbit $PL_RATE"
	echo "planes_hop_ms $PL_HOP_MS"
	echo "planes_secs $PL_SECS"
	echo "planes_fail $PL_FAIL"
	echo "planes_heal $PL_HEAL"
	echo "planes_ping_ms ${ping1:-0} ${ping2:-0}"
} >> "$OUT/meta.txt"

# pl_bytes: PLB="plane1 plane2", bytes b's eth0 and eth1 received (bash
# builtins only: no process start at the moment of failure)
pl_bytes() {
	local line f b1=0 b2=0
	while IFS= read -r line; do
		line=${line/:/ }
		read -ra f <<< "$line"
		case ${f[0]} in eth0) b1=${f[1]} ;; eth1) b2=${f[1]} ;; esac
	done < "/proc/$PL_HOLD_B/net/dev"
	PLB="$b1 $b2"
}

# pl_tick0 RXFILE: the receiver's tick 0 in ms since the epoch (0: none in 10 s)
pl_tick0() {
	local line i v
	for ((i = 0; i < 200; i++)); do
		while IFS= read -r line; do
			case $line in "start realtime="*)
				v=${line#start realtime=}
				echo $(( ${v%.*} * 1000 + 10#${v#*.} / 1000000 ))
				return ;;
			esac
		done < "$1"
		sleep 0.05
	done
	echo 0
}

# pl_rtt TRANSPORT PORT: the loaded RTT in ms and the subflow count: MRC's
# srtt (mrcctl), TCP's and MPTCP's subflows' mean rtt (ss)
pl_rtt() {
	if [ "$1" = mrc ]; then
		"$MRCCTL" -n "$NS_A" conn show 2>/dev/null | awk '
			/^id / { est = ($NF == "established") }
			est && /srtt/ { for (i = 1; i < NF; i++) if ($i == "srtt") { sub(/us/, "", $(i + 1)); printf "%.2f 1\n", $(i + 1) / 1000; exit } }'
		return
	fi
	ip netns exec "$NS_A" ss -tinH state established "( dport = :$2 )" | awk '
		{ for (i = 1; i <= NF; i++) if ($i ~ /^rtt:/) { split(substr($i, 5), r, "/"); s += r[1]; n++ } }
		END { if (n) printf "%.2f %d\n", s / n, n; else print "0 0" }'
}

# pl_until T0_MS AT_MS: sleeps until AT_MS after T0_MS (now if past)
pl_until() {
	local lt=$(( $2 - ($(now_ms) - $1) ))
	[ $lt -gt 0 ] && sleep "$((lt / 1000)).$(printf '%03d' $((lt % 1000)))"
	return 0
}

# The failure and its undoing are lines fed to an `ip -batch` or `tc
# -batch` started before the transfer (as selftests/mrc/planes.sh does): a
# process start on a loaded TCG guest takes up to seconds, and would smear
# the moment of failure over as much.  pl_batch NS ip|tc: such a process,
# reading a fifo; its input in PL_FD, its pid in PL_BPID.
pl_batch() {
	local f
	f=$(mktemp -u "$TMPD/batch.XXXXXX")
	mkfifo "$f" || return 1
	"$2" -n "$1" -force -batch - < "$f" > /dev/null 2>&1 &
	PL_BPID=$!
	exec {PL_FD}> "$f"
	rm -f "$f"
}

# pl_run SCENARIO TRANSPORT REP: one run, one line of planes.tsv
pl_run() {
	local sc=$1 t=$2 rep=$3 k r tx rj t0 tf0 tf1 th0 th1 s1 s2 s3 rtt a b x1 x2 y1 y2 z1 z2 down up
	PL_PORT=$((PL_PORT + 1))
	k=$(kind_of "$t")
	r=$TMPD/planes_${sc}_${t}_$rep.rx
	case $sc in
	nic)	# up: the addresses and routes back, as fabric_host_link does
		down="link set $(plane_if 1) down" up=$(plane_host_cmds 1 1)
		pl_batch "$NS_A" ip ;;
	leaf)
		down=$(leaf_blackhole_cmds 1 1) up=$(leaf_heal_cmds 1 1)
		pl_batch "$(plane_leaf 1 1)" tc ;;
	esac || { log "  $sc $t rep $rep: no batch process"; return 1; }
	# shellcheck disable=SC2086
	xfer_start "$NS_B" $PL_PORT "$r" $k -i 10 -g 5 || { log "  $sc $t rep $rep: no receiver"; return 1; }
	# shellcheck disable=SC2086
	ip netns exec "$NS_A" ./mrc_xfer $k -c "$B4" -p $PL_PORT -n $((1 << 40)) -d "$PL_SECS" \
		-U 30000 > "$r.tx" 2>&1 &
	tx=$!
	t0=$(pl_tick0 "$r")
	[ "$t0" -gt 0 ] || t0=$(now_ms)
	# the loaded RTT, sampled twice once the window has grown, in the
	# background: its process starts (seconds on a busy TCG guest) must
	# not delay the failure
	{ pl_until "$t0" 1000; a=$(pl_rtt "$t" $PL_PORT)
	  pl_until "$t0" 1600; b=$(pl_rtt "$t" $PL_PORT)
	  # MRC's EVs and their planes, once a scenario
	  [ "$t$rep" = mrc1 ] && "$MRCCTL" -n "$NS_A" conn show -e > "$OUT/planes_${sc}_conn.txt" 2>&1
	  awk -v a="${a:-0 0}" -v b="${b:-0 0}" 'BEGIN { split(a, x, " "); split(b, y, " ")
		n = (x[1] > 0) + (y[1] > 0); printf "%.2f %d\n", n ? (x[1] + y[1]) / n : 0, (y[2] > x[2] ? y[2] : x[2]) }'
	} > "$TMPD/rtt" &
	rj=$!
	pl_until "$t0" 1000
	pl_bytes; s1=$PLB
	pl_until "$t0" $((PL_FAIL * 1000))
	pl_bytes; s2=$PLB
	tf0=$(( $(now_ms) - t0 ))
	echo "$down" >&"$PL_FD"
	tf1=$(( $(now_ms) - t0 ))
	# a late failure (a slow guest) still lasts PL_HEAL - PL_FAIL seconds
	pl_until "$t0" $((tf0 + (PL_HEAL - PL_FAIL) * 1000))
	pl_bytes; s3=$PLB
	th0=$(( $(now_ms) - t0 ))
	echo "$up" >&"$PL_FD"
	th1=$(( $(now_ms) - t0 ))
	exec {PL_FD}>&-
	wait $rj
	read -r rtt < "$TMPD/rtt" || rtt="0 0"
	wait_for $tx $((PL_SECS + 60)) > /dev/null
	wait_for "$XFER_PID" 60 > /dev/null
	wait_for "$PL_BPID" 10 > /dev/null
	[ "$sc" != nic ] || ip -n "$NS_A" link show "$(plane_if 1)" | grep -q "state UP" ||
		log "  a's $(plane_if 1) not up again"
	cp "$r" "$r.tx" "$OUT/"
	# plane bytes: [1 s, failure) and [failure, undone)
	read -r x1 x2 <<< "$s1"; read -r y1 y2 <<< "$s2"; read -r z1 z2 <<< "$s3"
	printf '%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$rep" \
		"$tf0" "$tf1" "$th0" "$th1" "$(kv "$r" max_gap_ms)" "$(kv "$r" mbps)" "$(kv "$r" ok)" \
		"$(kv "$r" bytes)" "${rtt% *}" "${rtt#* }" "$((y1 - x1)) $((y2 - x2))" \
		"$((z1 - y1)) $((z2 - y2))" >> "$OUT/planes.tsv"
	log "  $sc $t rep $rep: failure ${tf0}..${th1} ms, rtt ${rtt% *} ms (${rtt#* } paths), $(tail -n 1 "$r")"
}

: > "$OUT/planes.tsv"
for rep in $(seq 1 "$REPS"); do
	for sc in $PL_SCEN; do
		for t in $PL_TRANSPORTS; do
			pl_run "$sc" "$t" "$rep"
			sleep 1	# re-admission and neighbours settle before the next run
		done
	done
done
kill "$PL_HOLD_B" 2>/dev/null
"$MRCCTL" -n "$NS_A" stats -a > "$OUT/planes_mrc_stats_a.txt" 2>&1
