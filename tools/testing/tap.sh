# SPDX-License-Identifier: GPL-2.0-only
# Minimal TAP output for the shell tests (kselftest format), shared by the
# host-side and in-VM shell tests.
tap_n=0 tap_fail=0 tap_skip=0 tap_bad=
tap_plan() { echo "TAP version 13"; echo "1..$1"; }
# tap_result OK(1/0) DESCRIPTION; not ok whatever OK says when a num check
# since the last result found an operand that was not a number
tap_result() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 1 ] && [ -z "$tap_bad" ]; then
		echo "ok $tap_n $2"
	else
		echo "not ok $tap_n $2${tap_bad:+ (not a number:$tap_bad)}"
		tap_fail=$((tap_fail + 1))
	fi
	tap_bad=
}
tap_skip() { tap_n=$((tap_n + 1)); tap_skip=$((tap_skip + 1)); echo "ok $tap_n $1 # SKIP ${2:-}"; }
# tap_skip_env NAME WHY: a skip that legitimately depends on the machine,
# not on a tool `make deps` installs nor on a fabric the test builds (say
# why at the call).  make check counts it a skip (tap-count.awk -v
# strict=1); any other skip fails there.
tap_skip_env() { tap_skip "$1" "env: $2"; }
# tap_timed OK NAME: a timed case (a failover's gap, goodput during or
# after a failure) is asserted only where the guest's clock counts its own
# instructions (MRC_ICOUNT: selftest.sh runs the suites that time
# failovers so); elsewhere a host that stalls the emulator could open any
# gap, and the case says n/a rather than pass or fail on the host's load.
tap_timed() {
	if [ -n "${MRC_ICOUNT:-}" ]; then
		tap_result "$1" "$2"
	else
		tap_skip "$2" "n/a: timed, asserted under -icount (tools/testing/selftest.sh)"
	fi
}
# tap_setup_fail WHAT: what a suite cannot run without (a fabric, a tool)
# is not there: a failed result, and the suite ends; the results it planned
# and never gave fail too (tap-count.awk).  Run by hand, kselftest's SKIP
# would hide a broken setup; make check would have counted it a pass.
tap_setup_fail() { tap_result 0 "setup: $1"; tap_done; }
# num VAR...: each VAR must hold an integer (a counter read, a field parsed
# from a tool's output) before a result's $(( )) uses it: bash takes an
# empty or unset operand for 0, and an empty command substitution inside
# $(( )) is a syntax error that drops the whole result line.  One that is
# not a number is reported and set to 0 (the line still prints), and the
# next tap_result fails.  Returns 1 then.
num() {
	local v rc=0
	for v in "$@"; do
		[[ ${!v-} =~ ^-?[0-9]+$ ]] && continue
		echo "# not a number: $v='${!v-}'"
		tap_bad="$tap_bad $v"
		printf -v "$v" %d 0
		rc=1
	done
	return $rc
}
# is_num VALUE...: every VALUE (one at least) is an integer; for a helper's
# own checks (num is for the variables of a result)
is_num() {
	[ $# -gt 0 ] || return 1
	while [ $# -gt 0 ]; do [[ $1 =~ ^-?[0-9]+$ ]] || return 1; shift; done
}
# Exit status by kselftest rules: 1 on any failure, 4 when all skipped.
tap_done() {
	echo "# passed $((tap_n - tap_fail - tap_skip)) failed $tap_fail skipped $tap_skip"
	[ "$tap_fail" -eq 0 ] || exit 1
	[ "$tap_n" -gt 0 ] && [ "$tap_skip" -eq "$tap_n" ] && exit 4
	exit 0
}
