#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Collectives on the cluster fabric (lib_cluster.sh: 8 hosts on 4 leaves,
# 4 spines): 8 ranks, one process each in its host's namespace, run a
# verified collective (tools/bench/mrc_coll) over AF_MRC, and over TCP for
# comparison.  Every rank checks every element of every iteration.
#  - ring all-reduce of 256 KiB, clean: verified on every rank, the data
#    crossed every spine; IPv6 too; all-to-all and a broadcast tree
#  - a spine blackholed for 3 s mid-run, then healed: no failed job step,
#    iterations keep completing while the spine is dead
# Times are reported, not asserted (TCG): the ratios are the bench's job.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
SPINES=4
out=$(mktemp -d)
TMPD=$out
. ../../tools/bench/colllib.sh
COLL=${MRC_COLL:-$COLL}
SIZE=$((256 << 10))
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; rm -rf "$out"' EXIT

tap_plan 8
[ -x "$COLL" ] || tap_setup_fail "no $COLL (make tools)"
coll_setup 2 || tap_setup_fail "cannot build the cluster fabric"
cluster_hostfile "$out/hosts4"
cluster_hostfile "$out/hosts6" 6

# coll NAME HOSTFILE TRANSPORT SIZE ARGS...: every rank in its host's
# namespace (colllib.sh); rank 0's lines in $out/NAME, the other ranks'
# errors shown.  Returns the number of ranks that did not exit 0.
coll() {
	local name=$1 n bad
	COLL_HOSTS=$2 coll_job "$out/$name" "${@:3}"
	bad=$?
	for n in $(seq 1 $((CLUSTER_HOSTS - 1))); do
		[ -s "$out/$name.rank$n" ] && sed "s/^/#   rank $n: /" "$out/$name.rank$n" | head -n 3
	done
	echo "# $name: $(grep '^summary' "$out/$name" || tail -n 2 "$out/$name")"
	return $bad
}
summary() { grep '^summary' "$out/$1" | grep -o "$2=[^ ]*" | cut -d= -f2; }

ipfwd() { local i; for i in $(seq 1 "$FABRIC_SPINES"); do fabric_spine_ipfwd "$i"; done; }

f0=($(ipfwd))
coll ar_mrc "$out/hosts4" mrc $SIZE -o allreduce -n 10
rc=$?
f1=($(ipfwd))
crossed=1
for i in 0 1 2 3; do
	[ $((f1[i] - f0[i])) -gt 100 ] || crossed=0
done
echo "# packets forwarded by each spine: $(for i in 0 1 2 3; do printf '%d ' $((f1[i] - f0[i])); done)"
failed=$(summary ar_mrc failed)
num failed
tap_result $(( rc == 0 && failed == 0 )) \
	"all-reduce, 8 ranks, $((SIZE >> 10)) KiB x 10 over MRC: every rank verified every element"
tap_result $(( rc == 0 && crossed )) "... and the ring's traffic crossed every spine"

coll ar_tcp "$out/hosts4" tcp $SIZE -o allreduce -n 10
tap_result $(( $? == 0 )) "the same over TCP (reference): verified"
echo "# p50 iteration: MRC $(summary ar_mrc p50_ms) ms, TCP $(summary ar_tcp p50_ms) ms"

coll ar6_mrc "$out/hosts6" mrc $SIZE -o allreduce -n 5
tap_result $(( $? == 0 )) "all-reduce over MRC on IPv6: verified"
coll a2a_mrc "$out/hosts4" mrc $SIZE -o alltoall -n 5
tap_result $(( $? == 0 )) "all-to-all over MRC (28 connections): verified"
coll bc_mrc "$out/hosts4" mrc $SIZE -o bcast -n 5
tap_result $(( $? == 0 )) "broadcast tree over MRC: verified"

# A spine dies 2 s into a 9 s run and comes back 3 s later.  The job must
# not fail, and must keep stepping while the spine is dead: iterations that
# start after the blackhole is in place and end before the heal.  That it
# was dead is checked (as planes.sh does): from just after the blackhole to
# just before the heal spine 2 sent < 1 % of the bytes the spines sent
# (BH_SENT of BH_ALL; spines_tx, colllib.sh).
blackhole_run() {	# NAME TRANSPORT
	local t0 tb th s0 s1 i
	coll "$1" "$out/hosts4" "$2" $SIZE -o allreduce -w 3 -d 9 -U 20000 &
	local cpid=$!
	# rank 0 says when the measured iterations start (their t_ms's zero)
	for _ in $(seq 1 300); do
		grep -q '^start' "$out/$1" 2>/dev/null && break
		sleep 0.1
	done
	t0=$(grep -o 'realtime_ms=[0-9]*' "$out/$1" | cut -d= -f2)
	[ -n "$t0" ] || t0=$(date +%s%3N)
	sleep 2; fabric_blackhole 2; tb=$(( $(date +%s%3N) - t0 ))
	read -ra s0 <<< "$(spines_tx | tr '\n' ' ')"
	sleep 3
	read -ra s1 <<< "$(spines_tx | tr '\n' ' ')"
	th=$(( $(date +%s%3N) - t0 )); fabric_heal 2
	wait $cpid
	local rc=$?
	BH_SENT='' BH_ALL=0
	if [ ${#s0[@]} = "$SPINES" ] && [ ${#s1[@]} = "$SPINES" ] && is_num "${s0[@]}" "${s1[@]}"; then
		BH_SENT=$((s1[1] - s0[1]))
		for i in $(seq 0 $((SPINES - 1))); do BH_ALL=$((BH_ALL + s1[i] - s0[i])); done
	fi
	DURING=$(awk -v b="$tb" -v h="$th" '/^iter=/ {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["t_ms"] >= b && v["t_ms"] + v["ms"] <= h) n++ } END { print n + 0 }' "$out/$1")
	echo "# $1: blackhole ${tb}-${th} ms; iterations inside it: $DURING," \
		"longest $(summary "$1" max_ms) ms, interruptions $(summary "$1" interruptions);" \
		"spine 2 sent ${BH_SENT:-?} of the spines' $BH_ALL bytes meanwhile"
	return $rc
}
blackhole_run bh_mrc mrc
rc=$?
failed=$(summary bh_mrc failed)
dead=0
fault_share_below 1 "$BH_SENT" "$BH_ALL" && dead=1
num failed
tap_result $(( rc == 0 && failed == 0 && dead )) \
	"spine blackholed 3 s mid-run (it sent ${BH_SENT:-?} of $BH_ALL bytes, < 1 %): no failed job step, every iteration verified"
tap_result $(( rc == 0 && DURING > 0 && dead )) "... and iterations completed while the spine was dead ($DURING)"
blackhole_run bh_tcp tcp
echo "# TCP's run (reference): exit $?, $DURING iterations inside the blackhole"
fabric_down
tap_done
