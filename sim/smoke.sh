#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make -C sim smoke` (a host stage of make check): a 16-host fabric (4
# leaves x 4 hosts, 4 spines).  Asserts that MRC's spraying uses every
# spine, that every flow of an all-reduce survives a spine-leaf link going
# down mid-run, and that the decision code linked into the model is
# net/mrc's own (compiled from ../net/mrc, no copy in sim/) with the
# constants the model restates equal to the kernel's.
set -eu
cd "$(dirname "$0")"
out=${SIM_SMOKE_OUT:-${RESULTS:-../results}/sim-smoke}
mkdir -p "$out"
bin=build/mrc-sim
fab=(--hosts-per-leaf=4 --leaves=4 --spines=4 --host-gbps=10 --spine-gbps=10)
fail=0
py=/usr/bin/python3
[ -x "$py" ] || py=python3
check() {	# WHAT CONDITION-EXIT-STATUS
	if [ "$2" -eq 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}

# 1. the kernel's files, by path: every decision function's DWARF compile
# unit is ../net/mrc/<file>.c, and sim/ holds no file of those names
for f in ev cc rtt sack; do
	readelf --debug-dump=info "$bin" 2>/dev/null |
		grep -q "DW_AT_name.*: \.\./net/mrc/$f\.c$"
	check "$bin contains net/mrc/$f.c" $?
done
copies=$(find . -name '*.c' \( -name ev.c -o -name cc.c -o -name rtt.c -o -name sack.c \) | wc -l)
[ "$copies" -eq 0 ]
check "no copy of ev.c/cc.c/rtt.c/sack.c under sim/" $?
for sym in mrc_ev_pick mrc_ev_retire mrc_ev_lost mrc_cc_on_ack mrc_rtt_sample mrc_sack_bitmap; do
	nm "$bin" | grep -q " T $sym$"
	check "$sym linked" $?
done
bash check_constants.sh
check "kernel_constants.h matches net/mrc" $?

# 2. spraying: one MRC permutation; every spine carries at least half its
# fair share of the fabric's bytes
"$bin" "${fab[@]}" --transport=mrc --workload=permutation --bytes=2000000 \
	--out="$out/spray.json" > /dev/null
"$py" - "$out/spray.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["spine_bytes"]
fair = sum(b) / len(b)
print("spine bytes:", b)
sys.exit(0 if min(b) >= fair / 2 and d["delivered_bytes"] == d["target_bytes"] else 1)
EOF
check "MRC spraying uses every spine" $?

# 3. a spine-leaf link blackholed 1 ms into an all-reduce, never healed:
# every flow completes
"$bin" "${fab[@]}" --transport=mrc --workload=allreduce --group=4 --bytes=4000000 \
	--fault=down --fault-leaf=0 --fault-spine=0 --fault-at-us=1000 --stop-ms=2000 \
	--out="$out/failure.json" > /dev/null
"$py" - "$out/failure.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
done = all(c[1] >= 0 for c in d["collectives"])
print("fault drops:", d["fault_drops"], "EVs retired:", d["ev_retired"],
      "collectives done:", sum(c[1] >= 0 for c in d["collectives"]), "of", len(d["collectives"]))
sys.exit(0 if done and d["fault_drops"] > 0 and d["delivered_bytes"] == d["target_bytes"] else 1)
EOF
check "all-reduce survives a spine-leaf link down (all flows complete)" $?
exit $fail
