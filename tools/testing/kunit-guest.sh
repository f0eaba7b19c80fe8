#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In the debug guest kernel (run-vm.sh with MRC_DEBUG_KERNEL, mrc.ko already
# loaded): load MRC's KUnit suites, which run as they load, print their
# KTAP from debugfs, unload everything, and have kmemleak scan (twice: an
# object is reported once it is 5 s old and unreferenced; the report goes to
# the kernel log, where run-vm.sh fails the run on it).
set -u
dir=${MRC_DEBUG_KERNEL:?}
rc=0
echo "KTAP version 1"
echo "1..2"
n=0
for suite in mrc_test mrc_datapath_test; do
	n=$((n + 1))
	if ! insmod "$dir/$suite.ko"; then
		echo "not ok $n $suite # insmod failed"
		rc=1
		continue
	fi
	found=0
	for r in /sys/kernel/debug/kunit/*/results; do
		[ -r "$r" ] || continue
		s=${r%/results}
		s=${s##*/}
		# each suite once, under the module that ran it
		grep -qx "$s" /tmp/kunit-seen 2>/dev/null && continue
		echo "$s" >> /tmp/kunit-seen
		found=1
		sed 's/^/    /' "$r"
	done
	if [ "$found" = 1 ]; then
		echo "ok $n $suite"
	else
		echo "not ok $n $suite # no results in debugfs"
		rc=1
	fi
done
rmmod mrc_datapath_test mrc_test mrc || { echo "# rmmod failed"; rc=1; }
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	leaks=$(grep -c '^unreferenced object' /sys/kernel/debug/kmemleak)
	echo "# kmemleak: $leaks unreferenced objects"
	[ "$leaks" -eq 0 ] || rc=1
else
	echo "# kmemleak: not in this kernel"
	rc=1
fi
exit "$rc"
