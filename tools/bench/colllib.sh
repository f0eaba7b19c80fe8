# SPDX-License-Identifier: GPL-2.0-only
# Collectives on the cluster fabric, for the bench (guest_coll.sh), the demo
# and selftests/mrc/collective.sh: 8 ranks of tools/bench/mrc_coll on hosts
# 1-2 of each of 4 leaves.  Sourced after lib.sh, with TMPD and SPINES set
# (busiest_spine and sleep_until also need benchlib.sh's now_ms).
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
# coll_job FILE TRANSPORT SIZE ARGS...: one rank a line of COLL_HOSTS
# ($TMPD/ranks by default), rank r in RANK_NS[r]; rank 0's lines in FILE,
# rank r's (only errors) in FILE.rank<r>.  Returns how many ranks failed.
coll_job() {
	local f=$1 t=$2 s=$3 hosts=${COLL_HOSTS:-$TMPD/ranks} r pids=() bad=0
	shift 3
	for ((r = ${#RANK_NS[@]} - 1; r >= 0; r--)); do
		ip netns exec "${RANK_NS[r]}" "$COLL" -r $r -H "$hosts" -t "$t" -s "$s" -p 9100 "$@" \
			> "$f$([ $r -gt 0 ] && echo ".rank$r")" 2>&1 &
		pids+=($!)
	done
	for r in "${pids[@]}"; do wait "$r" || bad=$((bad + 1)); done
	return $bad
}

