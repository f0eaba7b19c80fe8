#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# clock-wrap.sh [-x PORT] BITS LEAD_US COMMAND...: runs a selftest in the VM
# whose mrc.ko was loaded with test_clock_start_us a little before 2^BITS
# us (selftest.sh's TEST@clock31 and TEST@clock32), starting it LEAD_US
# before the clock reaches 2^BITS (it waits for that moment if the boot
# left time to spare), and asserts that MRC's clock crossed 2^BITS while
# the run had connections to carry across it: read from the module's
# read-only clock_us parameter.  From the clock's first read to the test's
# start nothing but bash's builtins run: under a loaded TCG guest a
# sleep(1) and a cat there started the test 0.9 s late, past the wrap.
#
# A test of minutes (multipath.sh, LEAD_US 20 s) crosses inside itself.
# A test of a second or two cannot promise to: transfer_test ran 0.55 s
# in one CI run and 6 s in a loaded one, so no lead puts the wrap inside
# it on every machine.  For such a test -x PORT keeps a verified transfer
# (mrc_xfer over loopback, PORT) in flight from before the wait until the
# test has ended and the clock has crossed, waiting for the wrap where the
# test was quicker: the crossing is then the run's by construction, not by
# the machine's speed, and a second verdict says the transfer arrived
# whole.
#
# With the knob set every connection's timestamp offset is 0, so the
# wire's 32-bit tsval is that clock: crossing 2^32 is the wrap of every
# tsval sent, 2^31 their sign.  A wrap before the test started (a slow
# boot ate the margin) or never would leave the run passing without having
# met it.  The verdicts are a TAP document of their own after the test's;
# the exit status is the test's, or 1 where the test passed and a verdict
# failed.  MRC_CLOCK_US_FILE stands in for the parameter and MRC_WRAP_XFER
# for mrc_xfer (harness-selftest.sh).
set -u
xport=''
if [ "${1:-}" = -x ]; then
	xport=$2
	shift 2
fi
bits=$1 lead=$2
shift 2
clock=${MRC_CLOCK_US_FILE:-/sys/module/mrc/parameters/clock_us}
xfer=${MRC_WRAP_XFER:-./mrc_xfer}
wrap=$((1 << bits))

# crossed BEFORE AFTER: BEFORE < 2^bits <= AFTER, both numbers
crossed() {
	[[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && [ "$1" -lt $wrap ] && [ "$2" -ge $wrap ]
}

# the waits are reads that time out on a FIFO nobody writes (lib.sh's wait_for)
fifo=$(mktemp -u) && mkfifo "$fifo" && exec {fd}<>"$fifo"
rm -f "$fifo"
# pause US: a builtin sleep of US microseconds (none for US <= 0)
pause() {
	local frac
	[ "$1" -gt 0 ] || return 0
	printf -v frac %06d $(($1 % 1000000))
	read -rt "$(($1 / 1000000)).$frac" -u "$fd" _
}

# the transfer: a receiver that checks every byte, a sender stopped by SIGUSR1
rx='' tx='' rx_pid='' tx_pid=''
if [ -n "$xport" ]; then
	rx=$(mktemp) tx=$(mktemp)
	trap 'kill "$tx_pid" "$rx_pid" 2> /dev/null; rm -f "$rx" "$tx"' EXIT
	# lib.sh's waits and verdict (before the clock's first read: execs may run)
	. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/mrc/lib.sh"
	"$xfer" -l -p "$xport" -i 1000 > "$rx" 2>&1 &
	rx_pid=$!
	wait_line "$rx" listening 100
	"$xfer" -c 127.0.0.1 -p "$xport" -n $((1 << 40)) -d 3600 > "$tx" 2>&1 &
	tx_pid=$!
	xfer_flowing "$rx"
fi

# the clock's reads are builtins too, empty when there is no clock
now='' before='' after='' end=''
{ read -r now < "$clock"; } 2>/dev/null
[[ $now =~ ^[0-9]+$ ]] && pause $((wrap - lead - now))
{ read -r before < "$clock"; } 2>/dev/null
"$@"
rc=$?
{ read -r after < "$clock"; } 2>/dev/null
end=$after
if [ -n "$xport" ]; then
	# a quick test: the transfer carries on until the wrap, and 0.2 s past
	# it; bounded by the wall clock, LEAD_US and a second more (the test
	# started at most LEAD_US before the wrap; a clock that stands still
	# must not hang the run)
	deadline=$((${EPOCHREALTIME/[.,]/} + lead + 1000000))
	while [[ $end =~ ^[0-9]+$ && $before =~ ^[0-9]+$ ]] && [ "$before" -lt $wrap ] &&
	      [ "$end" -lt $((wrap + 200000)) ] && [ "${EPOCHREALTIME/[.,]/}" -lt $deadline ]; do
		w=$((wrap + 200000 - end))
		pause $((w < 100000 ? w : 100000))
		{ read -r end < "$clock"; } 2>/dev/null
	done
	kill -USR1 "$tx_pid" 2> /dev/null
	# bounded: a transfer that cannot end is a failure, not a hung run
	for ((i = 0; i < 600; i++)); do
		kill -0 "$tx_pid" 2> /dev/null || kill -0 "$rx_pid" 2> /dev/null || break
		pause 100000
	done
	kill -9 "$tx_pid" "$rx_pid" 2> /dev/null
	wait "$tx_pid" "$rx_pid"
	rx_pid='' tx_pid=''
fi

echo "TAP version 13"
if [ -z "$xport" ]; then
	echo "1..1"
	if crossed "$before" "$after"; then
		echo "ok 1 MRC's clock crossed 2^$bits us during the test ($before -> $after us)"
		exit $rc
	fi
	echo "not ok 1 MRC's clock crossed 2^$bits us during the test (before '$before', after '$after', 2^$bits = $wrap)"
	[ $rc -ne 0 ] && exit $rc
	exit 1
fi

echo "1..2"
fail=0
if crossed "$before" "$end"; then
	echo "ok 1 MRC's clock crossed 2^$bits us with a transfer in flight, from the test's start ($before -> $after us at its end, $end at the transfer's)"
else
	echo "not ok 1 MRC's clock crossed 2^$bits us with a transfer in flight (test from '$before' to '$after', transfer to '$end', 2^$bits = $wrap)"
	fail=1
fi
if xfer_intact "$rx" "$tx"; then
	echo "ok 2 the transfer across the wrap arrived whole, every byte checked ($(kv "$tx" sent) bytes)"
else
	echo "not ok 2 the transfer across the wrap arrived whole (receiver: $(grep -v '^tick' "$rx" | tr '\n' ' '); sender: $(tr '\n' ' ' < "$tx"))"
	fail=1
fi
[ $rc -ne 0 ] && exit $rc
exit $fail
