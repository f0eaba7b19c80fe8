#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make install / make uninstall in the guest (its root is an overlay: the
# host is untouched): mrc.ko under /lib/modules/$(uname -r)/updates, found
# by depmod, so socket(AF_MRC) autoloads it through its net-pf alias with
# no modprobe configuration, and so does mrcctl through its genetlink
# family alias; mrcctl (in bin: run is for every user), its man page and
# completion, the uapi header, libmrc-preload.so, sbin/mrc-agent with its
# man page and systemd unit under /usr/local (the unit in /etc) work from
# there; uninstall leaves nothing behind and socket(AF_MRC) fails
# again.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
repo=$(cd ../.. && pwd)
kver=$(uname -r)
mod=/lib/modules/$kver/updates/mrc.ko
tap_plan 6

# start from a machine without mrc: the runner's own copy and modprobe rule go
rmmod mrc 2>/dev/null
rm -f /etc/modprobe.d/mrc.conf "$mod"
depmod -a "$kver"
./af_probe 2> /dev/null
tap_result $(( $? != 0 )) "before install: socket(AF_MRC) fails"

make -s -C "$repo" install-files KVER="$kver" PREFIX=/usr/local > /dev/null
[ -f "$mod" ] && [ -x /usr/local/bin/mrcctl ] && [ ! -e /usr/local/sbin/mrcctl ] &&
	[ -f /usr/local/lib/mrc/libmrc-preload.so ] && [ -f /usr/local/share/man/man8/mrcctl.8 ] &&
	[ -f /usr/local/share/bash-completion/completions/mrcctl ] &&
	[ -f /usr/local/include/linux/mrc.h ] &&
	[ -x /usr/local/sbin/mrc-agent ] && [ -f /usr/local/share/man/man8/mrc-agent.8 ] &&
	grep -q "^ExecStart=/usr/local/sbin/mrc-agent" /etc/systemd/system/mrc-agent.service &&
	modinfo -F alias mrc | grep -q "^net-pf-18$"
tap_result $(( $? == 0 )) "make install: module, bin/mrcctl, man page, completion, header, sbin/mrc-agent and its unit; depmod knows net-pf-18"

./af_probe && lsmod | grep -q "^mrc "
tap_result $(( $? == 0 )) "socket(AF_MRC) autoloads the installed module"
/usr/local/bin/mrcctl info > /dev/null &&
	env -u MRC_PRELOAD_LIB /usr/local/bin/mrcctl run -- env | grep -q "^LD_PRELOAD=/usr/local/lib/mrc/libmrc-preload.so"
tap_result $(( $? == 0 )) "the installed mrcctl talks to it and finds the installed preload library"
rmmod mrc && /usr/local/bin/mrcctl info > /dev/null && lsmod | grep -q "^mrc "
tap_result $(( $? == 0 )) "mrcctl info autoloads it (MODULE_ALIAS_GENL_FAMILY)"

rmmod mrc
make -s -C "$repo" uninstall KVER="$kver" PREFIX=/usr/local > /dev/null
left=$(ls "$mod" /usr/local/bin/mrcctl /usr/local/lib/mrc /usr/local/share/man/man8/mrcctl.8 \
	/usr/local/share/bash-completion/completions/mrcctl /usr/local/include/linux/mrc.h \
	/usr/local/sbin/mrc-agent /usr/local/share/man/man8/mrc-agent.8 \
	/etc/systemd/system/mrc-agent.service 2>/dev/null)
! modinfo mrc > /dev/null 2>&1 && [ -z "$left" ] && ! ./af_probe 2> /dev/null
tap_result $(( $? == 0 )) "make uninstall: nothing left${left:+ ($left)}, socket(AF_MRC) fails again"
tap_done
