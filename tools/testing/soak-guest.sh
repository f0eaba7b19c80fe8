#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# One case of the soak (tools/testing/soak.sh), in the VM, from
# selftests/mrc: the two runs that once failed without a kept console.
#   xfer6-netem  8 MiB a -> b over IPv6, 4 spines, every spine (both
#                directions) with netem loss 1% duplicate 5% corrupt 1%
#   rr-loss      1000 x 1 KiB request/response (tools/bench/mrc_rr), 4
#                spines, spine 1 at 1% loss both ways (as make bench)
# Prints one TAP result and the counters that tell a stall from a crash.
cd "$(dirname "$0")/../../selftests/mrc" || exit 1
. ./lib.sh
SPINES=4
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; fabric_down; rm -rf "$out"' EXIT
limit=${MRC_SOAK_CASE_TIMEOUT:-300}

tap_plan 1
fabric_up $SPINES || { tap_result 0 "fabric comes up"; tap_done; }
t0=$(now)
case $1 in
xfer6-netem)
	n=$((8 << 20))
	for i in $(seq 1 $SPINES); do
		fabric_netem "$i" "loss 1% duplicate 5% corrupt 1%" || exit 1
	done
	xfer_start $NS_B 7400 "$out/rx" -6 || { cat "$out/rx"; exit 1; }
	timeout "$limit" ip netns exec $NS_A ./mrc_xfer -c $B6 -p 7400 -n $n > "$out/tx" 2>&1
	rc=$?
	wait_for $XFER_PID 20
	rrc=$?
	echo "# a: $(tr "\n" " " < "$out/tx")"
	echo "# b: $(grep -v listening "$out/rx" | tr '\n' ' ')"
	ok=0
	[ $rc = 0 ] && [ $rrc = 0 ] && [ "$(kv "$out/rx" ok)" = 1 ] &&
		[ "$(kv "$out/rx" bytes)" = $n ] && ok=1
	desc="8 MiB over IPv6, 4 spines with loss 1% duplicate 5% corrupt 1% (rc $rc/$rrc)" ;;
rr-loss)
	fabric_shape 1 - - 1% || exit 1
	ip netns exec $NS_B ../../tools/bench/mrc_rr -l -p 7401 > "$out/srv" 2>&1 &
	sleep 1
	timeout "$limit" ip netns exec $NS_A ../../tools/bench/mrc_rr -c $B4 -p 7401 -s 1024 \
		-n "${MRC_SOAK_RR_N:-1000}" > "$out/rr" 2>&1
	rc=$?
	echo "# rr: $(tr '\n' ' ' < "$out/rr")"
	ok=0
	[ $rc = 0 ] && grep -q '^rr n=' "$out/rr" && ok=1
	desc="1 KiB request/response, 4 spines, spine 1 at 1% loss (rc $rc)" ;;
*)
	echo "soak-guest: unknown case $1" >&2
	exit 2 ;;
esac
echo "# $1: $(since "$t0") s"
for k in Retransmits FastRetransmits RtoExpired EvRetired RxDuplicate; do
	printf '# %s: a %s b %s\n' "$k" "$(mrc_stat $NS_A $k)" "$(mrc_stat $NS_B $k)"
done
[ $ok = 1 ] || ip netns exec $NS_A ../../tools/mrcctl/mrcctl conn show -e 2>&1 | sed 's/^/# /' | head -40
tap_result $ok "$desc"
tap_done
