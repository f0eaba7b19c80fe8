#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Second stage in the VM, running in the overlay root: mount the usual file
# systems, load the freshly built module, run the command given by the host
# (in /mrc-out/cmd), store its exit status and power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# /tmp stays the overlay's (writes land in its tmpfs upper layer), so a
# build tree under the host's /tmp, as in a CI clone, is visible here too
mount -t tmpfs tmpfs /run
mkdir -p /run/netns
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mkdir -p /mrc-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 mrcout /mrc-out ||
	{ echo "guest: cannot mount results folder" > /dev/ttyS0; echo o > /proc/sysrq-trigger; }
hostname mrc-vm
ip link set lo up
echo 1 > /proc/sys/kernel/sysrq

finish() {
	# the debug kernel: kmemleak scans twice (an object is reported once it
	# is 5 s old and unreferenced) and its report goes to the console,
	# where the host fails the run on "unreferenced object"
	if [ -n "${MRC_GUEST_MODDIR:-}" ] && [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan > /sys/kernel/debug/kmemleak
		sleep 6
		echo scan > /sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak > /dev/ttyS0
	fi
	dmesg > /mrc-out/dmesg.log
	sync
	umount /mrc-out
	echo o > /proc/sysrq-trigger
	# init must not exit before the power-off lands (that would panic)
	while :; do :; done
}

. /mrc-out/env
# the debug kernel (MRC_DEBUG_KERNEL): its modules.builtin, for modprobe
if [ -n "${MRC_GUEST_MODDIR:-}" ]; then
	mkdir -p "/lib/modules/$(uname -r)"
	cp -r "$MRC_GUEST_MODDIR/." "/lib/modules/$(uname -r)/"
fi
out=/dev/ttyS1
[ -c "$out" ] || out=/dev/console
attempt=$(cat /mrc-out/attempt 2>/dev/null || echo 1)
# Test hooks of the runner's own selftest: a boot that dies (panics) or
# hangs before the command start, on the first N attempts.
if [ "$attempt" -le "${MRC_TEST_BOOT_DEATH:-0}" ]; then
	echo c > /proc/sysrq-trigger
fi
if [ "$attempt" -le "${MRC_TEST_BOOT_HANG:-0}" ]; then
	while :; do sleep 1000; done
fi
# The kernel's UDP encapsulation static keys (udp_encap_needed_key and its
# IPv6 twin) are held on for the whole boot by two fou sockets in a
# namespace of their own.  Otherwise every namespace's first MRC tunnel
# socket, and every netns exit or rmmod that drops the last one, patches
# kernel text under a test's traffic; under qemu TCG that races with the
# other vCPU ("int3" oopses; most likely also the spurious single-step #DB,
# "WARNING ... exc_debug_kernel", of robustness.sh in the CI of 98fa1c8).
if modprobe -q -a fou fou6 && ip netns add mrc-pin; then
	ip -n mrc-pin fou add port 7 ipproto 4 && ip -n mrc-pin -6 fou add port 7 ipproto 41 ||
		echo "<5>mrc-vm: the UDP encapsulation keys are not pinned" > /dev/kmsg
fi
# The command start: everything MRC does (loading mrc.ko included) comes
# after this line in the kernel log and after the file; the host retries a
# boot that died before it.
echo "<5>mrc-vm: command start (attempt $attempt)" > /dev/kmsg
: > /mrc-out/started
sync
{
	if [ -n "${MRC_KO:-}" ]; then
		# Dependencies come from the host's module tree; mrc.ko itself is
		# installed into the overlay so that socket() autoloads it too.
		kdir=/lib/modules/$(uname -r)
		mkdir -p "$kdir/updates"
		cp "$MRC_KO" "$kdir/updates/mrc.ko"
		# socket(AF_MRC) autoloads through request_module("net-pf-N")
		fam=18
		for p in ${MRC_MODPARAMS:-}; do
			case $p in family=*) fam=${p#family=} ;; esac
		done
		cat > /etc/modprobe.d/mrc.conf <<-CONF
		alias net-pf-$fam mrc
		install mrc /sbin/modprobe -a udp_tunnel ip6_udp_tunnel && /sbin/insmod $kdir/updates/mrc.ko ${MRC_MODPARAMS:-} \$CMDLINE_OPTS
		CONF
		[ -n "${MRC_NO_LOAD:-}" ] || modprobe mrc || exit 1
	fi
	cd "$MRC_CWD" && bash /mrc-out/cmd
} < /dev/null > "$out" 2>&1
echo $? > /mrc-out/status
finish
