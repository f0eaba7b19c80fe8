#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In the debug guest kernel (run-vm.sh with MRC_DEBUG_KERNEL, mrc.ko already
# loaded): load MRC's KUnit suites, which run as they load, print their
# KTAP from debugfs and unload everything; guest-init.sh's kmemleak scan at
# power-off then reports what they leaked, and run-vm.sh fails on it.
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
# unloaded, so that what they leaked is unreferenced when guest-init.sh's
# kmemleak scan runs at power-off (as after every debug-kernel run)
rmmod mrc_datapath_test mrc_test mrc || { echo "# rmmod failed"; rc=1; }
exit "$rc"
