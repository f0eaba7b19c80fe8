#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# init of the UML kernel that ran the KUnit suites (they run before init):
# ask kmemleak for two scans (an object is reported once it is 5 s old and
# unreferenced), print the report between markers, power off.  The host root
# is mounted read-only over hostfs; nothing here writes to it.
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t debugfs debugfs /sys/kernel/debug
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	$bb sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	echo "kmemleak: report begin"
	$bb cat /sys/kernel/debug/kmemleak
	echo "kmemleak: report end"
else
	echo "kmemleak: not available"
fi
$bb poweroff -f
