#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Selftest of the VM runner itself (runs on the host): exit status passes
# through, a kernel WARNING fails a passing command, a hung guest is killed,
# and socket(AF_MRC) autoloads the module inside the guest.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
results=${RESULTS:-$repo/results}/vm
mkdir -p "$results"
kver=${MRC_KVER:-$(bash "$repo/tools/kver.sh")}
. "$repo/tools/testing/tap.sh"

make -s -C "/usr/src/linux-headers-$kver" M="$here/splat" modules >/dev/null ||
	{ echo "vm selftest: cannot build splat module" >&2; exit 1; }

vm() { bash "$here/run-vm.sh" "$@" >> "$results/output.log" 2>&1; }

tap_plan 6
vm -o "$results/exit" -t 120 'exit 7'
tap_result $(( $? == 7 )) "exit status of the command passes through"

vm -o "$results/pass" -t 120 'true'
tap_result $(( $? == 0 )) "a passing command with a clean kernel log passes"

vm -o "$results/warn" -t 120 "insmod $here/splat/splat.ko"
rc=$?
grep -q 'WARNING:.*splat' "$results/warn/console.log"
tap_result $(( rc == 126 && $? == 0 )) "a kernel WARNING fails the run although the command passed (rc=$rc)"

vm -o "$results/hang" -t 25 'sleep 1000'
tap_result $(( $? == 124 )) "a hung guest is killed at the timeout and reported"
! pgrep -f "path=$results/hang" >/dev/null
tap_result $(( $? == 0 )) "no qemu is left running after the timeout"

MRC_NO_LOAD=1 vm -o "$results/autoload" -t 120 \
	"! grep -q '^mrc ' /proc/modules && $repo/selftests/mrc/af_probe && grep -q '^mrc ' /proc/modules"
tap_result $(( $? == 0 )) "socket(AF_MRC) autoloads mrc.ko through modprobe"
tap_done
