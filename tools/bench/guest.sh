#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The benchmark, inside the VM (started by tools/bench/bench.sh): MRC
# against TCP and MPTCP on the 4-spine fabric.  Writes raw results (TSV,
# per-10 ms delivery ticks, latency samples) to $OUT; the host turns them into
# JSON, a table and plots (tools/bench/report.py).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo/selftests/mrc" || exit 1
. ./lib.sh
. "$repo/tools/bench/benchlib.sh"
OUT=${MRC_BENCH_OUT:-/mrc-out}
# receivers write their ticks to the guest's tmpfs: 9p (the results folder)
# would stall a receiver that prints every 10 ms; run() copies them after
TMPD=$(mktemp -d)
RR=$repo/tools/bench/mrc_rr
SPINES=4
REPS=${MRC_BENCH_REPS:-3}
RATE=${MRC_BENCH_RATE_MBIT:-8}		# each spine, aggregation and failover
FO_SECS=${MRC_BENCH_FO_SECS:-10}	# failover: transfer length
FO_FAIL=${MRC_BENCH_FO_FAIL:-3}		# failover: blackhole at, heal at
FO_HEAL=${MRC_BENCH_FO_HEAL:-7}
FO_GAP_MS=${MRC_BENCH_FO_GAP_MS:-5}	# failover: the receiver lists stalls this long
RR_N1=${MRC_BENCH_RR_N1:-1000}		# requests of 1 KiB per run
RR_N64=${MRC_BENCH_RR_N64:-200}		# requests of 64 KiB per run
# spine 1's loss in the request/response section; 0 for a clean fabric, the
# A/B of a datapath change under MRC_ICOUNT (MRC sprays over the lossy
# spine, and the EVs its losses retire move MRC's median from run to run)
RR_LOSS=${MRC_BENCH_RR_LOSS:-1%}
ONLY=${MRC_BENCH_ONLY:-agg fo rr cost4 cost prof coll planes}
trap 'kill $(jobs -p) 2>/dev/null; fabric_down' EXIT
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

log() { printf '[%4ds] %s\n' $(( SECONDS )) "$*"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
kind_of() { case $1 in tcp) echo -T ;; mptcp) echo -M ;; *) echo ;; esac; }

# the two-host fabric only for the sections on it (a minute under TCG)
TWO_HOST=0
for s in agg fo rr rrtrace cost4 cost prof; do [[ " $ONLY " == *" $s "* ]] && TWO_HOST=1; done
if [ $TWO_HOST = 1 ]; then
	log "fabric: $SPINES spines; MPTCP: a has 4 addresses, each a subflow endpoint"
	fabric_up_fast $SPINES || { log "cannot build the fabric"; exit 1; }
	hold_start
	for ns in $NS_A $NS_B; do ip -n $ns mptcp limits set subflow 4 add_addr_accepted 4; done
	for k in 2 3 4; do
		ip -n $NS_A addr add 10.0.1.$k/24 dev eth0
		ip -n $NS_A mptcp endpoint add 10.0.1.$k dev eth0 subflow
	done
fi
{
	echo "kernel $(uname -r)"
	echo "cpus $(nproc)"
	echo "reps $REPS"
	echo "rate_mbit $RATE"
	echo "spines $SPINES"
	echo "fo_secs $FO_SECS fo_fail $FO_FAIL fo_heal $FO_HEAL"
	# a new namespace starts from the same defaults
	if [ $TWO_HOST = 1 ]; then "$MRCCTL" -n $NS_A config show; else "$MRCCTL" config show; fi |
		sed 's/^/mrc_config /'
} > "$OUT/meta.txt"

# xfer PROTO BYTES RX [receiver opts]: one transfer, waits for it
xfer() {
	local k
	k=$(kind_of "$1")
	xfer_start $NS_B 7000 "$3" $k "${@:4}" || return 1
	ip netns exec $NS_A ./mrc_xfer $k -c $B4 -p 7000 -n "$2" > "$3.tx" 2>&1
	wait $XFER_PID
}

# ---- 1. aggregation: 4 spines of RATE Mbit/s; one connection each -------
if [[ " $ONLY " == *" agg "* ]]; then
	log "aggregation: $SPINES x $RATE Mbit/s"
	fabric_shape_all "${RATE}mbit" -
	: > "$OUT/agg.tsv"
	for rep in $(seq 1 "$REPS"); do
		for p in mrc tcp mptcp; do
			case $p in	# about 6 s each at the expected rate
			tcp) mbit=$RATE ;;
			*) mbit=$((RATE * SPINES * 3 / 4)) ;;
			esac
			s0=$(snap)
			r=$TMPD/agg_${p}_$rep.rx
			xfer $p $((mbit * 6 * 125000)) "$r"
			s1=$(snap)
			cp "$r" "$r.tx" "$OUT/"
			used=$(awk -v n=$SPINES -v a="$s0" -v b="$s1" 'BEGIN {
				split(a, x, " "); split(b, y, " ")
				for (i = 2; i <= n + 1; i++) printf "%d ", y[i] - x[i] }')
			printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\n' $p "$rep" "$(kv "$r" mbps)" \
				"$(kv "$r" secs)" "$(kv "$r" ok)" "$(kv "$r" bytes)" "$used" >> "$OUT/agg.tsv"
			log "  $p rep $rep: $(tail -n 1 "$r") spine bytes: $used"
		done
	done
	fabric_shape_all - -
fi

# ---- 2. failover: blackhole the busiest spine, heal it; 10 ms ticks -------
if [[ " $ONLY " == *" fo "* ]]; then
	log "failover: $SPINES x $RATE Mbit/s, busiest spine blackholed at ${FO_FAIL}s, healed at ${FO_HEAL}s"
	fabric_shape_all "${RATE}mbit" -
	: > "$OUT/fo.tsv"
	for rep in $(seq 1 "$REPS"); do
		for p in mrc tcp mptcp; do
			case $p in
			tcp) bytes=$((RATE * (FO_SECS - FO_HEAL + FO_FAIL) * 125000 * 9 / 10)) ;;
			*) bytes=$((RATE * SPINES * FO_SECS * 125000 * 6 / 10)) ;;
			esac
			r=$TMPD/fo_${p}_$rep.rx
			k=$(kind_of $p)
			# -g: every stall of FO_GAP_MS or more, for the report to place
			xfer_start $NS_B 7000 "$r" $k -i 10 -g "$FO_GAP_MS" || exit 1
			t0=$(now_ms)
			ip netns exec $NS_A ./mrc_xfer $k -c $B4 -p 7000 -n "$bytes" > "$r.tx" 2>&1 &
			tx=$!
			lt=$(( (FO_FAIL - 1) * 1000 - ($(now_ms) - t0) ))
			[ $lt -gt 0 ] && sleep "$((lt / 1000)).$(printf '%03d' $((lt % 1000)))"
			dead=$(busiest_now 0.7)
			lt=$(( FO_FAIL * 1000 - ($(now_ms) - t0) ))
			[ $lt -gt 0 ] && sleep "$((lt / 1000)).$(printf '%03d' $((lt % 1000)))"
			tf0=$(( $(now_ms) - t0 )); fabric_blackhole "$dead"; tf=$(( $(now_ms) - t0 ))
			lt=$(( FO_HEAL * 1000 - tf )); [ $lt -gt 0 ] && sleep "$((lt / 1000)).$(printf '%03d' $((lt % 1000)))"
			th0=$(( $(now_ms) - t0 )); fabric_heal "$dead"; th=$(( $(now_ms) - t0 ))
			wait $tx; wait $XFER_PID
			cp "$r" "$r.tx" "$OUT/"
			printf '%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n' $p "$rep" "$dead" "$tf0" "$tf" "$th0" "$th" \
				"$(kv "$r" max_gap_ms)" "$(kv "$r" mbps)" "$(kv "$r" ok)" >> "$OUT/fo.tsv"
			log "  $p rep $rep: spine $dead dead ${tf0}..${th} ms: $(tail -n 1 "$r")"
		done
	done
	fabric_shape_all - -
fi

# ---- 3. tail latency: spine 1 at RR_LOSS loss (both directions) ----------
if [[ " $ONLY " == *" rr "* ]]; then
	case $RR_LOSS in
	0 | 0%) log "request/response: every spine clean, no rate limit"; RR_LOSS=0 ;;
	*)	log "request/response: spine 1 at $RR_LOSS loss, other spines clean, no rate limit"
		fabric_shape 1 - - "$RR_LOSS" || exit 1 ;;
	esac
	echo "rr_loss $RR_LOSS" >> "$OUT/meta.txt"
	# TCP's flow takes one spine each way: pick client ports whose flow
	# crosses spine 1 both ways (TCP on the lossy spine) and neither way
	for p in $(seq 40000 40199); do
		echo "route get $B4 from $A4 iif a0 ipproto tcp sport $p dport 7101"
	done | ip -n $NS_L1 -batch - | awk '/ dev s/ { for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1) }' > "$OUT/rr_fwd"
	for p in $(seq 40000 40199); do
		echo "route get $A4 from $B4 iif b0 ipproto tcp sport 7101 dport $p"
	done | ip -n $NS_L2 -batch - | awk '/ dev s/ { for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1) }' > "$OUT/rr_rev"
	read -r lossy clean <<< "$(paste "$OUT/rr_fwd" "$OUT/rr_rev" | awk '
		$1 == "s1" && $2 == "s1" && !l { l = 39999 + NR }
		$1 != "s1" && $2 != "s1" && !c { c = 39999 + NR }
		END { print l + 0, c + 0 }')"
	echo "tcp_lossy_sport $lossy tcp_clean_sport $clean" >> "$OUT/meta.txt"
	log "  TCP client port $lossy crosses spine 1 both ways, $clean neither"
	ip netns exec $NS_B "$RR" -l -p 7100 > /dev/null 2>&1 &
	ip netns exec $NS_B "$RR" -l -p 7101 -T > /dev/null 2>&1 &
	sleep 1
	: > "$OUT/rr.tsv"
	for rep in $(seq 1 "$REPS"); do
		for size in 1024 65536; do
			n=$RR_N1; [ $size = 65536 ] && n=$RR_N64
			for v in mrc tcp-lossy tcp-clean; do
				case $v in
				mrc) opt="-p 7100" ;;
				tcp-lossy) opt="-p 7101 -T -B $lossy" ;;
				tcp-clean) opt="-p 7101 -T -B $clean" ;;
				esac
				f=$TMPD/rr_${v}_${size}_$rep.txt
				# shellcheck disable=SC2086
				line=$(ip netns exec $NS_A "$RR" -c $B4 $opt -s $size -n $n -r "$f")
				cp "$f" "$OUT/"
				printf '%s\t%d\t%d\t%s\n' $v $size "$rep" "$line" >> "$OUT/rr.tsv"
				log "  $v ${size}B rep $rep: $line"
			done
		done
	done
	fabric_shape 1 - -
fi

# ---- 3a. a 64 KiB exchange's phases, traced (not by default) --------------
if [[ " $ONLY " == *" rrtrace "* ]]; then
	. "$repo/tools/bench/guest_rrtrace.sh"
fi

# ---- 4a. four unshaped spines: one connection each, goodput and CPU -------
# xfer_cost FILE PROTO REP BYTES: one transfer, its goodput and the guest's
# busy jiffies (USER_HZ) over the whole run and over the data phase alone
# (the receiver's busy_ticks: no program start-up, no connection set-up),
# a TSV line in FILE
xfer_cost() {
	local r=$TMPD/${1%.tsv}_${2}_$3.rx c0 c1 t0 t1
	c0=$(cpu_busy); t0=$(now_ms)
	xfer "$2" "$4" "$r"
	c1=$(cpu_busy); t1=$(now_ms)
	cp "$r" "$r.tx" "$OUT/"
	printf '%s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\n' "$2" "$3" "$(kv "$r" bytes)" "$(kv "$r" secs)" \
		"$(kv "$r" mbps)" $((c1 - c0)) $((t1 - t0)) "$(kv "$r" busy_ticks)" >> "$OUT/$1"
	log "  $2 rep $3: $(tail -n 1 "$r") busy $((c1 - c0)) jiffies in $((t1 - t0)) ms"
}
if [[ " $ONLY " == *" cost4 "* ]]; then
	log "cost4: $SPINES unshaped spines, one connection each"
	fabric_shape_all - -
	: > "$OUT/cost4.tsv"
	for rep in $(seq 1 "$REPS"); do
		for p in mrc tcp mptcp; do
			bytes=$((128 << 20)); [ $p = mrc ] && bytes=$((64 << 20))
			xfer_cost cost4.tsv $p "$rep" $bytes
		done
	done
fi

# ---- 4. cost: one unconstrained path --------------------------------------
if [[ " $ONLY " == *" cost "* ]]; then
	log "cost: one path (spines 2..4 down: traffic only crosses spine 1), no shaping"
	# one path for everybody: take spines 2..$SPINES out of the leaves' ECMP
	nh4a="nexthop via 10.1.1.2 dev s1" nh4b="nexthop via 10.2.1.2 dev s1"
	ip -n $NS_L1 route replace 10.0.2.0/24 $nh4a
	ip -n $NS_L2 route replace 10.0.1.0/24 $nh4b
	: > "$OUT/cost.tsv"
	for rep in $(seq 1 "$REPS"); do
		for p in mrc tcp; do
			bytes=$((64 << 20)); [ $p = tcp ] && bytes=$((128 << 20))
			xfer_cost cost.tsv $p "$rep" $bytes
		done
	done
fi
# ---- 4b. profile of the cost case ----------------------------------------
if [[ " $ONLY " == *" prof "* ]]; then
	ip -n $NS_L1 route replace 10.0.2.0/24 nexthop via 10.1.1.2 dev s1
	ip -n $NS_L2 route replace 10.0.1.0/24 nexthop via 10.2.1.2 dev s1
	. "$repo/tools/bench/guest_profile.sh"
fi
if [ $TWO_HOST = 1 ]; then
	"$MRCCTL" -n $NS_A stats -a > "$OUT/mrc_stats_a.txt" 2>&1
	"$MRCCTL" -n $NS_B stats -a > "$OUT/mrc_stats_b.txt" 2>&1
	ip netns exec $NS_B cat /proc/net/snmp > "$OUT/snmp_b.txt" 2>&1
fi

# ---- 5. collectives on a cluster-shaped fabric (replaces the fabric) -------
if [[ " $ONLY " == *" coll "* ]]; then
	. "$repo/tools/bench/guest_coll.sh"
fi
# ---- 6. planes: one connection over 2 planes, a NIC or a leaf fails -------
if [[ " $ONLY " == *" planes "* ]]; then
	. "$repo/tools/bench/guest_planes.sh"
fi
log "done"
