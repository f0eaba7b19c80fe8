#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The test harness's own tests, on the host and in seconds (no VM): how
# tap-count.awk counts crafted TAP (a plan short of results, no plan, a
# crash mid-suite, skips under make check), what num makes of an empty
# operand, how selftest.sh judges a suite's exit (with a fake run-vm.sh),
# clock-wrap.sh's verdict (with a fake clock) and the selftests' helpers of
# lib.sh.  TAP; run by make check.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/testing/tap.sh"
awkf=$repo/tools/testing/tap-count.awk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count [AWK ARGS] TAP: tap-count.awk's counts of TAP (printf format)
count() {
	local args=()
	[ $# -gt 1 ] && args=("$1") && shift
	# shellcheck disable=SC2059
	printf "$1" | awk "${args[@]}" -f "$awkf" 2> /dev/null
}
# expect NAME WANT GOT
expect() {
	[ "$2" = "$3" ] || echo "# $1: want '$2', got '$3'"
	tap_result "$([ "$2" = "$3" ] && echo 1 || echo 0)" "$1 ($3)"
}

tap_plan 43

# ---- tap-count.awk -----------------------------------------------------------
expect "tap-count: a full plan counts its results" "1 1 1" \
	"$(count '1..3\nok 1 a\nnot ok 2 b\nok 3 c # SKIP x\n')"
expect "tap-count: results short of the plan (a crash mid-suite) fail, one per missing" "2 1 0" \
	"$(count 'TAP version 13\n1..3\nok 1 a\nok 2 b\n')"
expect "tap-count: results beyond the plan fail" "3 1 0" \
	"$(count '1..2\nok 1 a\nok 2 b\nok 3 c\n')"
expect "tap-count: results without a plan fail" "2 1 0" "$(count 'ok 1 a\nok 2 b\n')"
expect "tap-count: a log with neither plan nor result fails" "0 1 0" "$(count 'run-vm: rc 125\n')"
expect "tap-count: a plan at the end counts" "2 0 0" "$(count 'ok 1 a\nok 2 b\n1..2\n')"
expect "tap-count: kernel log prefixes and CRs are stripped" "1 0 0" \
	"$(count '[    1.23] 1..1\r\n[    1.30] ok 1 a\r\n')"
kunit='KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: s1\n    1..2\n    ok 1 x\n    ok 2 y\nok 1 s1\n'
kunit2='    KTAP version 1\n    # Subtest: s2\n    1..2\n        KTAP version 1\n        # Subtest: p\n'
kunit2=$kunit2'        ok 1 p1\n        ok 2 p2\n    ok 1 p\n    ok 2 z # SKIP no\nok 2 s2\n'
expect "tap-count: KUnit's nested suites and parameterised cases" "5 0 1" "$(count "$kunit$kunit2")"
expect "tap-count: KUnit dying inside its first suite fails both plans" "1 3 0" \
	"$(count 'KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: s1\n    1..2\n    ok 1 x\n')"
expect "tap-count -v strict=1: a skip fails, one of the machine's (env:) stays a skip" "0 1 1" \
	"$(count -vstrict=1 '1..2\nok 1 a # SKIP nc not installed\nok 2 b # SKIP env: family 50\n')"
expect "tap-count without strict: both are skips" "0 0 2" \
	"$(count '1..2\nok 1 a # SKIP nc not installed\nok 2 b # SKIP env: family 50\n')"

# ---- num: an empty operand fails its case, it does not vanish -----------------
# before: bash drops the line (syntax error), the plan catches the gap
cat > "$tmp/raw.sh" <<-EOF
	. "$repo/tools/testing/tap.sh"
	tap_plan 2
	tap_result \$(( \$(true) * 100 / 4 >= 60 )) "during >= 60 %"
	tap_result 1 "the next case"
	tap_done
EOF
bash "$tmp/raw.sh" > "$tmp/raw.tap" 2> /dev/null
expect "without num an empty \$(cmd) operand drops its result line; the plan counts it failed" "1 1 0" \
	"$(awk -f "$awkf" "$tmp/raw.tap" 2> /dev/null)"
cat > "$tmp/num.sh" <<-EOF
	set -u
	. "$repo/tools/testing/tap.sh"
	tap_plan 3
	during=\$(true) before=400
	num during before
	tap_result \$(( during * 100 / before >= 0 )) "during >= 0 % of before"
	declare -A d=([EvRetired]=3)
	num 'd[EvRetired]'
	tap_result \$(( d[EvRetired] > 0 )) "an array element that is a number"
	x=12abc
	num x
	tap_result 1 "a result whose operand is not a number"
	tap_done
EOF
bash "$tmp/num.sh" > "$tmp/num.tap" 2>&1
expect "num: an empty operand fails the next case, which prints" "1" \
	"$(grep -c "^not ok 1 during >= 0 % of before (not a number: during)" "$tmp/num.tap")"
expect "num: numbers (array elements too) pass, '12abc' fails" "1 2 0" \
	"$(awk -f "$awkf" "$tmp/num.tap" 2> /dev/null)"

# ---- selftest.sh's verdict on a suite, with a fake run-vm.sh -----------------
# fake: the "suite" is its name, a file here with the TAP and the exit status
cat > "$tmp/fake-run-vm.sh" <<-'EOF'
	while [ $# -gt 1 ]; do shift; done
	f=$FAKE_DIR/${1#./}
	cat "$f.tap"
	exit "$(cat "$f.rc")"
EOF
# shellcheck disable=SC2059
fake() { printf "$2" > "$tmp/$1.tap"; echo "$3" > "$tmp/$1.rc"; }
fake setupfail '1..4\nnot ok 1 setup: cannot build the fabric\n' 1
fake oldskip '1..18\nok 1 fabric # SKIP cannot build fabric\n' 4
fake crash '1..3\nok 1 a\nok 2 b\n' 125
fake toolskip '1..2\nok 1 a\nok 2 rsync # SKIP rsync not installed\n' 0
fake envskip '1..1\nok 1 trinity # SKIP env: family 50 is beyond trinity domains\n' 4
fake pass '1..2\nok 1 a\nok 2 b\n' 0
fake bare4 '' 4
verdict() {	# SUITE: selftest.sh's "passed failed skipped" for it
	RESULTS=$tmp/results MRC_RUN_VM=$tmp/fake-run-vm.sh FAKE_DIR=$tmp \
		bash "$repo/tools/testing/selftest.sh" "$1" > /dev/null 2>&1
	cat "$tmp/results/selftest/counts"
}
expect "selftest.sh: a suite whose setup failed fails, with every case it planned" "0 4 0" \
	"$(verdict setupfail)"
expect "selftest.sh: a suite that skipped all (exit 4) for its fabric fails" "0 18 0" "$(verdict oldskip)"
expect "selftest.sh: a crash after 2 of 3 results fails" "2 1 0" "$(verdict crash)"
expect "selftest.sh: a tool not installed is a failure" "1 1 0" "$(verdict toolskip)"
expect "selftest.sh: exit 4 with only the machine's skips is a skip" "0 0 1" "$(verdict envskip)"
expect "selftest.sh: exit 4 with nothing printed fails" "0 1 0" "$(verdict bare4)"
expect "selftest.sh: a passing suite passes" "2 0 0" "$(verdict pass)"
# an Oops whose EFLAGS no CPU can hold runs the suite once more; a real one not
cat > "$tmp/oops-run-vm.sh" <<-'EOF'
	out=$2
	while [ $# -gt 1 ]; do shift; done
	s=$FAKE_DIR/${1#./}
	n=$(( $(cat "$s.runs" 2>/dev/null || echo 0) + 1 ))
	echo "$n" > "$s.runs"
	echo '1..2'; echo 'ok 1 a'
	[ "$n" -ge "$(cat "$s.good")" ] && { echo 'ok 2 b'; exit 0; }
	printf '[  1.0] Oops: 0000 [#1]\n[  1.1] RSP: 0018:ffffc900005e38e0 EFLAGS: %s\n' \
		"$(cat "$s.eflags")" > "$out/console.log"
	exit 125
EOF
oops() {	# SUITE EFLAGS GOOD_FROM_RUN: selftest.sh's counts, emulator faults, runs
	echo "$2" > "$tmp/$1.eflags"; echo "$3" > "$tmp/$1.good"; rm -f "$tmp/$1.runs"
	RESULTS=$tmp/results MRC_RUN_VM=$tmp/oops-run-vm.sh FAKE_DIR=$tmp \
		bash "$repo/tools/testing/selftest.sh" "$1" > /dev/null 2>&1
	echo "$(cat "$tmp/results/selftest/counts") $(cat "$tmp/results/selftest/emulator-faults")" \
		"$(cat "$tmp/$1.runs")"
}
expect "selftest.sh: an Oops with reserved EFLAGS bits (07742646) is run again, and counted" \
	"2 0 0 1 2" "$(oops emu 07742646 2)"
expect "selftest.sh: ... once: a second such fault fails" "1 1 0 1 2" "$(oops emu2 07742646 3)"
expect "selftest.sh: an Oops with EFLAGS bit 1 clear is the emulator's too" "2 0 0 1 2" \
	"$(oops emu3 00000244 2)"
expect "selftest.sh: an Oops with a CPU's EFLAGS (00010246) fails at once" "1 1 0 0 1" \
	"$(oops real 00010246 2)"
# the suites that time failovers run under -icount on one vCPU, others not
cat > "$tmp/argv-run-vm.sh" <<-'EOF'
	echo "icount=${MRC_ICOUNT:-} args=$*" >> "$FAKE_DIR/argv"
	echo '1..1'; echo 'ok 1 a'
EOF
rm -f "$tmp/argv"
RESULTS=$tmp/results MRC_RUN_VM=$tmp/argv-run-vm.sh FAKE_DIR=$tmp MRC_DEBUG_SUITES= \
	bash "$repo/tools/testing/selftest.sh" planes.sh multipath.sh@clock31 api_test > /dev/null 2>&1
expect "selftest.sh: planes.sh and multipath.sh@clock31 under -icount, 1 vCPU; api_test not" \
	"2 1" "$(grep -c '^icount=shift=1,sleep=off args=.* -c 1 ' "$tmp/argv") $(grep -c '^icount= ' "$tmp/argv")"
# the whole list: the -icount suites first (make check builds the debug
# kernel beside them), then the rest in the Makefile's order
rm -f "$tmp/argv"
RESULTS=$tmp/results MRC_RUN_VM=$tmp/argv-run-vm.sh FAKE_DIR=$tmp MRC_DEBUG_SUITES= \
	bash "$repo/tools/testing/selftest.sh" > /dev/null 2>&1
order=$(awk '{ print ($1 == "icount=") ? "n" : "i" }' "$tmp/argv" | uniq | tr -d '\n')
expect "selftest.sh: with no list, every -icount suite runs before any other" "in" "$order"

# ---- tap_timed: asserted under -icount, n/a (a skip make check allows) else
timed() {	# MRC_ICOUNT OK: tap-count's strict counts of one tap_timed result
	(tap_n=0; MRC_ICOUNT=$1 tap_timed "$2" "a gap" | sed '1i 1..1') |
		awk -v strict=1 -f "$awkf" 2> /dev/null
}
expect "tap_timed: without -icount a timed case is n/a, whatever it measured" "0 0 1" "$(timed '' 0)"
expect "tap_timed: under -icount it passes or fails on what it measured" "1 0 0|0 1 0" \
	"$(timed shift=1 1)|$(timed shift=1 0)"

# ---- clock-wrap.sh, with a fake clock the "test" moves ---------------------
# wrap BITS FROM TO RC: the wrapper's verdict ("ok"/"not ok") and exit status
# when the clock reads FROM before a test that exits RC and TO after it
wrap() {
	local rc
	echo "$2" > "$tmp/clock"
	MRC_CLOCK_US_FILE=$tmp/clock bash "$repo/tools/testing/clock-wrap.sh" "$1" "${LEAD:-0}" \
		bash -c "echo '1..1'; echo 'ok 1 t'; echo '$3' > '$tmp/clock'; exit $4" > "$tmp/wrap.tap"
	rc=$?
	echo "$(awk '/^(not )?ok 1 MRC/ { print ($1 == "ok") ? "ok" : "not-ok" }' "$tmp/wrap.tap") $rc"
}
expect "clock-wrap.sh: a run from 1 s before 2^31 us to 2 s after it crossed" "ok 0" \
	"$(wrap 31 $(((1 << 31) - 1000000)) $(((1 << 31) + 2000000)) 0)"
expect "clock-wrap.sh: a run that started past 2^32 us (the margin eaten) fails" "not-ok 1" \
	"$(wrap 32 $(((1 << 32) + 10)) $(((1 << 32) + 2000000)) 0)"
expect "clock-wrap.sh: a run that ended short of 2^32 us fails" "not-ok 1" \
	"$(wrap 32 $(((1 << 32) - 9000000)) $(((1 << 32) - 10)) 0)"
expect "clock-wrap.sh: no clock to read (no clock_us) fails" "not-ok 1" "$(wrap 32 '' 5 0)"
expect "clock-wrap.sh: a failing test keeps its status" "ok 3" \
	"$(wrap 32 $(((1 << 32) - 10)) $(((1 << 32) + 10)) 3)"
wrap 32 $(((1 << 32) - 10)) $(((1 << 32) + 10)) 0 > /dev/null
expect "clock-wrap.sh: the test's TAP and its verdict count as two streams" "2 0 0" \
	"$(awk -f "$awkf" "$tmp/wrap.tap" 2> /dev/null)"
# 0.4 s to the wrap, a lead of 0.1 s: it starts the test 0.3 s later (the
# fake clock stands still, so it reads only when it starts)
t0=${EPOCHREALTIME/[.,]/}
LEAD=100000 wrap 31 $(((1 << 31) - 400000)) $(((1 << 31) + 10)) 0 > /dev/null
w=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
tap_result $(( w >= 300 && w < 2000 )) "clock-wrap.sh: waits until LEAD_US before the wrap to start the test ($w ms)"
# -x PORT: a fake mrc_xfer pair; the receiver reports what the sender, on
# SIGUSR1, says it sent (FAKE_SHORT: 4 bytes fewer).  As mrc_xfer's, the
# receiver's first bytes ("start") come after the sender caught SIGUSR1.
cat > "$tmp/xfer" <<-'EOF2'
	#!/bin/bash
	d=$(dirname "$0")
	case $1 in
	-l) echo listening
	    while [ ! -e "$d/ready" ]; do sleep 0.05; done
	    echo 'start realtime=1'
	    while [ ! -e "$d/sent" ]; do sleep 0.05; done
	    echo "bytes=$(($(cat "$d/sent") - ${FAKE_SHORT:-0})) ok=1 secs=1" ;;
	-c) trap 'echo 100 > "$d/sent.new"; mv "$d/sent.new" "$d/sent"; echo sent=100; exit 0' USR1
	    : > "$d/ready"
	    while :; do sleep 0.05; done ;;
	esac
EOF2
chmod +x "$tmp/xfer"
# xwrap FROM TO LATER RC: -x's verdicts ("ok ok", ...) and exit status when the
# test moves the clock from FROM to TO, and (LATER) 0.3 s after it ends to LATER
xwrap() {
	local rc
	rm -f "$tmp/sent" "$tmp/ready"
	echo "$1" > "$tmp/clock"
	MRC_CLOCK_US_FILE=$tmp/clock MRC_WRAP_XFER=$tmp/xfer bash "$repo/tools/testing/clock-wrap.sh" \
		-x 1 31 1000000 bash -c "echo '1..1'; echo 'ok 1 t'; echo '$2' > '$tmp/clock'
			[ -n '$3' ] && (sleep 0.3; echo '$3' > '$tmp/clock') > /dev/null &
			exit $4" > "$tmp/wrap.tap"
	rc=$?
	echo "$(awk '/^(not )?ok [12] (MRC|the transfer)/ { printf "%s ", ($1 == "ok") ? "ok" : "not-ok" }' \
		"$tmp/wrap.tap")$rc"
}
w31=$((1 << 31))
expect "clock-wrap.sh -x: a test across the wrap, the transfer whole" "ok ok 0" \
	"$(xwrap $((w31 - 500000)) $((w31 + 300000)) '' 0)"
t0=${EPOCHREALTIME/[.,]/}
r=$(xwrap $((w31 - 500000)) $((w31 - 50000)) $((w31 + 300000)) 0)
w=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
expect "clock-wrap.sh -x: a test that ended before the wrap: the transfer waits for it" \
	"ok ok 0 wait" "$r $( ((w >= 300)) && echo wait || echo "${w}ms")"
expect "clock-wrap.sh -x: a clock that never crosses fails, however long one waits" "not-ok ok 1" \
	"$(xwrap $((w31 - 500000)) $((w31 - 50000)) '' 0)"
expect "clock-wrap.sh -x: a transfer short of what was sent fails" "ok not-ok 1" \
	"$(FAKE_SHORT=4 xwrap $((w31 - 500000)) $((w31 + 300000)) '' 0)"
expect "clock-wrap.sh -x: a failing test keeps its status" "ok ok 3" \
	"$(xwrap $((w31 - 500000)) $((w31 + 300000)) '' 3)"
# ---- lib.sh's helpers, on crafted figures -------------------------------------
(
	. "$repo/selftests/mrc/lib.sh"
	printf 'bytes=100 ok=1 secs=1\n' > "$tmp/rx"; printf 'sent=100\n' > "$tmp/tx"
	xfer_intact "$tmp/rx" "$tmp/tx" 100 || exit 1
	xfer_intact "$tmp/rx" "$tmp/tx" || exit 1
	! xfer_intact "$tmp/rx" "$tmp/tx" 200 || exit 1		# short of expected
	printf 'bytes=60 ok=1 secs=1\n' > "$tmp/rx"
	! xfer_intact "$tmp/rx" "$tmp/tx" || exit 1		# an intact prefix
	printf 'bytes=100 ok=0 secs=1\n' > "$tmp/rx"
	! xfer_intact "$tmp/rx" "$tmp/tx" 100 || exit 1		# content differs
	printf 'bytes=100 ok=1 secs=1\n' > "$tmp/rx"; printf 'error=Broken pipe sent=100\n' > "$tmp/tx"
	! xfer_intact "$tmp/rx" "$tmp/tx" 100 || exit 1		# the sender failed
	printf 'error=Connection reset bytes=100\n' > "$tmp/rx"; printf 'sent=100\n' > "$tmp/tx"
	! xfer_intact "$tmp/rx" "$tmp/tx" 100 || exit 1		# the receiver failed
	: > "$tmp/rx"
	! xfer_intact "$tmp/rx" "$tmp/tx" || exit 1		# nothing at all
) > /dev/null 2>&1
tap_result $(( $? == 0 )) "lib.sh xfer_intact: sent == received (== expected), compared equal, else not"
(
	. "$repo/selftests/mrc/lib.sh"
	# the share of a spine's bytes during a fault: planes.sh's 1 % rule
	fault_share_below 1 5 1000 && ! fault_share_below 1 50 1000 &&
		! fault_share_below 1 0 0 && ! fault_share_below 1 "" 1000 || exit 1
	# spine 2 of 3 between two fabric_tx_counts readings; one short fails
	FABRIC_SPINES=3
	[ "$(fabric_dead_share 2 "10 20 30" "110 21 130")" = "1 201" ] &&
		! fabric_dead_share 2 "10 20" "110 21 130"
) > /dev/null 2>&1
tap_result $(( $? == 0 )) "lib.sh fault_share_below, fabric_dead_share: < 1 % passes, 5 % and no traffic do not"
tap_done
