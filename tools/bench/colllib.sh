# SPDX-License-Identifier: GPL-2.0-only
# Collectives on the cluster fabric, for the bench (guest_coll.sh) and the
# demo: 8 ranks of tools/bench/mrc_coll on hosts 1-2 of each of 4 leaves.
# Sourced after lib.sh and benchlib.sh (now_ms, TMPD).
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/mrc/lib_cluster.sh"

COLL=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mrc_coll

# coll_setup HPL: the cluster (HPL hosts a leaf, 4 leaves, SPINES spines), the
# ranks' hostfile ($TMPD/ranks), RANK_NS and a holder in every spine
coll_setup() {
	local n i
	fabric_down
	cluster_up "$1" 4 "$SPINES" || return 1
	RANK_NS=()
	: > "$TMPD/ranks"
	for n in $(seq 1 $CLUSTER_HOSTS); do
		[ $(( (n - 1) % $1 )) -lt 2 ] || continue
		cluster_host_addr "$n" >> "$TMPD/ranks"
		RANK_NS+=("$(ns_host "$n")")
	done
	SPINE_HOLD=()
	for i in $(seq 1 "$SPINES"); do
		ip netns exec "$(ns_spine "$i")" sleep 1000000 &
		SPINE_HOLD[i]=$!
	done
}

# spines_tx: bytes each spine has sent toward the leaves, a line each (one
# process: the holders' /proc/PID/net/dev, no netns exec under TCG)
spines_tx() {
	local i files=()
	for i in $(seq 1 "$FABRIC_SPINES"); do files+=("/proc/${SPINE_HOLD[i]}/net/dev"); done
	awk 'FNR == 1 { f++ } { sub(/:/, " ") } $1 ~ /^l[0-9]/ { n[f] += $10 }
		END { for (i = 1; i <= f; i++) print n[i] + 0 }' "${files[@]}"
}
# busiest_spine SECS: the spine that sent the most in that many seconds
busiest_spine() {
	local a
	a=$(spines_tx)
	sleep "$1"
	paste <(echo "$a") <(spines_tx) | awk '$2 - $1 > m { m = $2 - $1; best = NR } END { print best + 0 }'
}
sleep_until() {	# T0_MS AT_MS
	local lt=$(( $2 - ($(now_ms) - $1) ))
	[ $lt -gt 0 ] && sleep "$((lt / 1000)).$(printf '%03d' $((lt % 1000)))"
}
# coll_job FILE TRANSPORT SIZE ARGS...: the 8 ranks; rank 0's lines in FILE
coll_job() {
	local f=$1 t=$2 s=$3 r pids=() bad=0
	shift 3
	for r in 7 6 5 4 3 2 1; do
		ip netns exec "${RANK_NS[r]}" "$COLL" -q -r $r -H "$TMPD/ranks" -t "$t" -s "$s" -p 9100 "$@" &
		pids+=($!)
	done
	ip netns exec "${RANK_NS[0]}" "$COLL" -r 0 -H "$TMPD/ranks" -t "$t" -s "$s" -p 9100 "$@" > "$f" 2>&1 &
	pids+=($!)
	for r in "${pids[@]}"; do wait "$r" || bad=$((bad + 1)); done
	return $bad
}

