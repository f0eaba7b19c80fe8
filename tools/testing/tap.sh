# SPDX-License-Identifier: GPL-2.0-only
# Minimal TAP output for the shell tests (kselftest format), shared by the
# host-side and in-VM shell tests.
tap_n=0 tap_fail=0 tap_skip=0
tap_plan() { echo "TAP version 13"; echo "1..$1"; }
# tap_result OK(1/0) DESCRIPTION
tap_result() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $tap_n $2"
	else
		echo "not ok $tap_n $2"
		tap_fail=$((tap_fail + 1))
	fi
}
tap_skip() { tap_n=$((tap_n + 1)); tap_skip=$((tap_skip + 1)); echo "ok $tap_n $1 # SKIP ${2:-}"; }
# Exit status by kselftest rules: 1 on any failure, 4 when all skipped.
tap_done() {
	echo "# passed $((tap_n - tap_fail - tap_skip)) failed $tap_fail skipped $tap_skip"
	[ "$tap_fail" -eq 0 ] || exit 1
	[ "$tap_n" -gt 0 ] && [ "$tap_skip" -eq "$tap_n" ] && exit 4
	exit 0
}
