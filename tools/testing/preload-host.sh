#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libmrc-preload.so on the host, where no mrc module is loaded: nc under
# "mrcctl run" over loopback must fall back to TCP, deliver the data and say
# so in exactly one line per process.  TAP; run by make check, where a test
# that cannot run fails: nc comes with make deps.  Where the mrc module is
# loaded, MRC_PRELOAD_FAMILY names a family no kernel has (255, beyond
# AF_MAX), so that the library meets the same EAFNOSUPPORT.
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/testing/tap.sh"
MRCCTL=$repo/tools/mrcctl/mrcctl
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$out"' EXIT
port=$((20000 + RANDOM % 20000))
line="mrc-preload: AF_MRC unavailable (Address family not supported by protocol), using TCP"

tap_plan 3
command -v nc > /dev/null || tap_setup_fail "nc (netcat-openbsd, make deps) not installed"
if [ -e /sys/module/mrc ]; then
	echo "# the mrc module is loaded here: AF_MRC made unavailable by MRC_PRELOAD_FAMILY=255"
	export MRC_PRELOAD_FAMILY=255
fi
head -c 200000 /dev/urandom > "$out/data"

# run FLAGS...: one nc transfer over loopback, both ends under mrcctl run
run() {
	local i
	"$MRCCTL" run "$@" -- nc -4 -d -l 127.0.0.1 $port > "$out/recv" 2> "$out/srv.err" &
	for i in $(seq 1 50); do
		ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	"$MRCCTL" run "$@" -- nc -4 -N 127.0.0.1 $port < "$out/data" 2> "$out/cli.err" &&
		wait $! && cmp -s "$out/recv" "$out/data" &&
		[ "$(cat "$out/srv.err")" = "$line" ] && [ "$(cat "$out/cli.err")" = "$line" ]
	local rc=$?
	sed 's/^/# /' "$out/srv.err" "$out/cli.err"
	port=$((port + 1))
	return $rc
}
run; tap_result $(( $? == 0 )) "no module: nc over TCP, one fallback line from each end"
run -p "$port"; tap_result $(( $? == 0 )) "no module, -p: the same at connect() and listen()"
env=$(LD_PRELOAD=libfoo.so MRC_PRELOAD_PORTS=1 "$MRCCTL" run -d 10.0.0.0/8 -- env 2> /dev/null)
grep -q "^LD_PRELOAD=$repo/tools/preload/libmrc-preload.so:libfoo.so$" <<< "$env" &&
	! grep -q "^MRC_PRELOAD_PORTS=" <<< "$env" && grep -q "^MRC_PRELOAD_PREFIXES=10.0.0.0/8$" <<< "$env"
tap_result $(( $? == 0 )) "mrcctl run prepends to LD_PRELOAD and sets only the filters given"
tap_done
