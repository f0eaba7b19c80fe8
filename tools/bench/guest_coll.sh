# SPDX-License-Identifier: GPL-2.0-only
# The collective section of the benchmark (sourced by tools/bench/guest.sh,
# last: it replaces the two-host fabric with the cluster of lib_cluster.sh).
# 12 hosts on 4 leaves, 4 spines of COLL_RATE Mbit/s: hosts 1 and 2 of every
# leaf are the 8 ranks of a ring all-reduce (tools/bench/mrc_coll, every
# element verified on every rank), host 3 of every leaf carries the
# contended scenario's bulk flows.  Each scenario runs for MRC, TCP and
# MPTCP (4 subflows), same fabric; the impaired spine is the busiest one when
# the impairment starts (TCP's flows are pinned: a spine they do not cross
# would show nothing).  Raw: coll.tsv (one line a run) and each run's
# iteration lines (coll_<scenario>_<transport>_<size>_<rep>.txt).
. "$repo/tools/bench/colllib.sh"

COLL_RATE=${MRC_BENCH_COLL_RATE:-8}	# Mbit/s of every spine link
COLL_SECS=${MRC_BENCH_COLL_SECS:-12}	# a failure scenario's run
COLL_AT=${MRC_BENCH_COLL_AT:-3}		# the impairment starts at
COLL_SCEN=${MRC_BENCH_COLL_SCEN:-clean loss blackhole flap straggler contended}
COLL_BIG=${MRC_BENCH_COLL_BIG:-1}	# also 16 MiB, clean, one rep

# shape_coll: every spine link at COLL_RATE through a priority queue (tbf,
# prio under it): packets with the urgent DSCP go first, the rest FIFO, as a
# fabric with a traffic class for collectives does.  One tc batch a spine.
URGENT_DSCP=${MRC_BENCH_COLL_DSCP:-46}
shape_coll() {	# [RATE]: Mbit/s, COLL_RATE by default
	local i ifname b rate=${1:-$COLL_RATE}
	for i in $(seq 1 "$FABRIC_SPINES"); do
		for ifname in $(spine_links); do
			echo "qdisc del dev $ifname root"
			echo "qdisc add dev $ifname root handle 1: tbf rate ${rate}mbit burst 32kb latency 50ms"
			echo "qdisc add dev $ifname parent 1:1 handle 10: prio"
			# each band as shallow as tbf's own queue (50 ms at 8 Mbit/s)
			for b in 1 2 3; do
				echo "qdisc add dev $ifname parent 10:$b pfifo limit $((rate * 50 / 12 + 4))"
			done
			echo "filter add dev $ifname parent 10: protocol ip prio 1 u32 match ip dsfield $((URGENT_DSCP << 2)) 0xfc flowid 10:1"
		done | tc -n "$(ns_spine "$i")" -force -batch - 2>&1 | grep -v 'Cannot delete qdisc with handle of zero\|Command failed' >&2
	done
	return 0
}

log "collectives: 12 hosts on 4 leaves, $SPINES spines at $COLL_RATE Mbit/s; 8 ranks (hosts 1-2 of each leaf)"
coll_setup 3 || { log "cannot build the cluster"; exit 1; }
cluster_mptcp || { log "cannot add the MPTCP endpoints"; exit 1; }
shape_coll
# urgent MRC packets carry the DSCP the spines queue first (MRC_PRIORITY >= 4)
for n in $(seq 1 $CLUSTER_HOSTS); do
	"$MRCCTL" -n "$(ns_host "$n")" config set urgent-dscp "$URGENT_DSCP" > /dev/null ||
		log "cannot set urgent-dscp in $(ns_host "$n")"
done
echo "coll_urgent_dscp $URGENT_DSCP" >> "$OUT/meta.txt"
echo "coll_rate_mbit $COLL_RATE" >> "$OUT/meta.txt"
echo "coll_secs $COLL_SECS coll_at $COLL_AT" >> "$OUT/meta.txt"

# bulk_start / bulk_stop: host 3 of leaf k sends to host 3 of leaf k+1 (a
# ring of 4 MRC flows at bulk priority, sprayed over every spine as the
# all-reduce is) for the contended runs.
# The spines' rate in the contended runs: low enough that the network, not
# the emulated CPU, limits the all-reduce, or queueing has nothing to show.
CONT_RATE=${MRC_BENCH_COLL_CONT_RATE:-2}
bulk_start() {
	local k dst
	BULK=()
	for k in 1 2 3 4; do
		dst=$(cluster_host_addr $(( (k % 4) * 3 + 3 )))
		ip netns exec "$(ns_host $(( (k % 4) * 3 + 3 )))" ./mrc_xfer -l -p 7300 > /dev/null 2>&1 &
		BULK+=($!)
	done
	sleep 1
	for k in 1 2 3 4; do
		dst=$(cluster_host_addr $(( (k % 4) * 3 + 3 )))
		ip netns exec "$(ns_host $(( (k - 1) * 3 + 3 )))" ./mrc_xfer -c "$dst" -p 7300 \
			-n $((1 << 40)) -d $((COLL_SECS + 30)) > /dev/null 2>&1 &
		BULK+=($!)
	done
	sleep 1
}
bulk_stop() { kill "${BULK[@]}" 2>/dev/null; wait "${BULK[@]}" 2>/dev/null; }

# coll_run SCENARIO TRANSPORT SIZE REP [DEADLINE_MS]: one run, one line of coll.tsv
coll_run() {
	local sc=$1 t=$2 s=$3 rep=$4 dl=${5:-} f t0 spine=0 fail=-1 heal=-1 rc flap= prio= args=()
	f=$TMPD/coll_${sc}_${t}_${s}_$rep.txt
	case $sc in
	clean) args=(-w 2 -n 8); [ "$s" -gt $((1 << 20)) ] && args=(-w 0 -n 2) ;;
	# a starved guest can start the failure late: room for its heal
	blackhole|flap) args=(-w 2 -d $((COLL_SECS + 6))) ;;
	*) args=(-w 2 -d "$COLL_SECS") ;;
	esac
	[ -n "$dl" ] && args+=(-D "$dl")
	case $sc in contended-prio) prio=(-P 7) ;; contended*) prio=(-P 0) ;; esac
	[ "$t" = mrc ] && [ -n "$prio" ] && args+=("${prio[@]}")
	case $sc in contended*) shape_coll "$CONT_RATE"; bulk_start ;; esac
	coll_job "$f" "$t" "$s" -U 30000 "${args[@]}" &
	local job=$!
	for _ in $(seq 1 600); do grep -q '^start' "$f" 2>/dev/null && break; sleep 0.1; done
	# the clock of the iteration lines' t_ms (rank 0's first measured start)
	t0=$(grep -o 'realtime_ms=[0-9]*' "$f" | cut -d= -f2)
	[ -n "$t0" ] || t0=$(now_ms)
	case $sc in
	loss|blackhole|flap|straggler)
		sleep_until "$t0" $(( COLL_AT * 1000 - 1000 ))
		spine=$(busiest_spine 1)
		[ "$spine" -gt 0 ] || spine=1
		fail=$(( $(now_ms) - t0 ))
		case $sc in
		loss) fabric_shape "$spine" "${COLL_RATE}mbit" - 1% ;;
		straggler) fabric_shape "$spine" "$((COLL_RATE * 1000 / 4))kbit" - ;;
		blackhole)
			fabric_blackhole "$spine"
			sleep_until "$t0" $(( fail + 3000 ))
			heal=$(( $(now_ms) - t0 )); fabric_heal "$spine" ;;
		flap)
			fabric_flap "$spine" 200 800 5
			heal=$(( $(now_ms) - t0 )) ;;
		esac
		;;
	esac
	wait $job
	rc=$?
	case $sc in contended*)
		bulk_stop
		# how much went through each priority band of the spines
		for i in $(seq 1 "$FABRIC_SPINES"); do
			echo "spine $i"; tc -s -n "$(ns_spine "$i")" qdisc show
		done > "$OUT/coll_${sc}_${t}_$rep.tc"
		"$MRCCTL" -n "${RANK_NS[0]}" stats > "$OUT/coll_${sc}_${t}_$rep.stats" 2>&1
		shape_coll
		;;
	esac
	case $sc in loss|straggler) shape_coll ;; esac
	cp "$f" "$OUT/"
	printf '%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n' "$sc" "$t" "$s" "$rep" "$rc" "$spine" "$fail" "$heal" \
		"$(grep '^summary' "$f" | head -n 1)" >> "$OUT/coll.tsv"
	log "  $sc $t $((s >> 10)) KiB rep $rep: rc=$rc spine=$spine ${fail}..${heal} ms $(grep -o 'p50_ms=[^ ]* p99_ms=[^ ]* max_ms=[^ ]*.*' "$f" | head -n 1)"
}

: > "$OUT/coll.tsv"
for rep in $(seq 1 "$REPS"); do
	for t in ${MRC_BENCH_COLL_TRANSPORTS:-mrc tcp mptcp}; do
		coll_run clean "$t" $((1 << 20)) "$rep"
		# the deadline of an iteration: 10x this rep's clean median
		p50=$(grep -o 'p50_ms=[0-9.]*' "$TMPD/coll_clean_${t}_$((1 << 20))_$rep.txt" | cut -d= -f2)
		dl=$(awk -v p="${p50:-0}" 'BEGIN { printf "%d", p * 10 }')
		[ "$dl" -gt 0 ] || dl=
		for sc in $COLL_SCEN; do
			case $sc in
			clean) ;;
			contended)
				coll_run contended "$t" $((1 << 20)) "$rep" "$dl"
				[ "$t" = mrc ] && coll_run contended-prio mrc $((1 << 20)) "$rep" "$dl" ;;
			*) coll_run "$sc" "$t" $((1 << 20)) "$rep" "$dl" ;;
			esac
		done
	done
done
if [ "$COLL_BIG" = 1 ]; then
	for t in mrc tcp mptcp; do coll_run clean "$t" $((16 << 20)) 1; done
fi
