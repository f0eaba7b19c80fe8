#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# clock-wrap.sh BITS LEAD_US COMMAND...: runs a selftest in the VM whose
# mrc.ko was loaded with test_clock_start_us a little before 2^BITS us
# (selftest.sh's TEST@clock31 and TEST@clock32), starting it LEAD_US before
# the clock reaches 2^BITS (it waits for that moment if the boot left time
# to spare), and asserts that MRC's clock crossed 2^BITS while it ran:
# read before and after from the module's read-only clock_us parameter.
# The wait puts the wrap at a fixed point of the test however long the
# guest took to start it (0.8 and 1.6 s after the load in two loaded runs,
# where transfer_test then ran 1.1 to 2.2 s).  From the clock's first read
# to the test's start nothing but bash's builtins run: under a loaded TCG
# guest a sleep(1) and a cat there started the test 0.9 s late, past the
# wrap.  With the knob set every connection's timestamp
# offset is 0, so the wire's 32-bit tsval is that clock: crossing 2^32 is
# the wrap of every tsval sent, 2^31 their sign.  A wrap before the test
# started (a slow boot ate the margin) or never would leave the run passing
# without having met it.  The verdict is a TAP document of its own after
# the test's; the exit status is the test's, or 1 where the test passed
# and the clock did not cross.  MRC_CLOCK_US_FILE stands in for the
# parameter (harness-selftest.sh).
set -u
bits=$1 lead=$2
shift 2
clock=${MRC_CLOCK_US_FILE:-/sys/module/mrc/parameters/clock_us}

# crossed BEFORE AFTER: BEFORE < 2^bits <= AFTER, both numbers
crossed() {
	[[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && [ "$1" -lt $((1 << bits)) ] &&
		[ "$2" -ge $((1 << bits)) ]
}

# the wait is a read that times out on a FIFO nobody writes (lib.sh's wait_for)
fifo=$(mktemp -u) && mkfifo "$fifo" && exec {fd}<>"$fifo"
rm -f "$fifo"
# the clock's reads are builtins too, empty when there is no clock
now='' before='' after=''
{ read -r now < "$clock"; } 2>/dev/null
if [[ $now =~ ^[0-9]+$ ]]; then
	w=$(((1 << bits) - lead - now))
	printf -v frac %06d $((w % 1000000))
	[ $w -gt 0 ] && read -rt "$((w / 1000000)).$frac" -u "$fd" _
fi
{ read -r before < "$clock"; } 2>/dev/null
"$@"
rc=$?
{ read -r after < "$clock"; } 2>/dev/null
echo "TAP version 13"
echo "1..1"
if crossed "$before" "$after"; then
	echo "ok 1 MRC's clock crossed 2^$bits us during the test ($before -> $after us)"
	exit $rc
fi
echo "not ok 1 MRC's clock crossed 2^$bits us during the test (before '$before', after '$after', 2^$bits = $((1 << bits)))"
[ $rc -ne 0 ] && exit $rc
exit 1
