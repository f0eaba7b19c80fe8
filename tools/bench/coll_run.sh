#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# coll_run.sh: runs one collective job, every rank of mrc_coll in its own
# network namespace, and waits for all of them.
#
#   coll_run.sh [-t mrc|tcp|mptcp] [-o allreduce|alltoall|bcast] [-s BYTES]
#               [-n ITERS] [-O OUTFILE] [-L LOGDIR] [-W TIMEOUT_S] [-G GRACE_S]
#               [-b MRC_COLL] [-x "MORE MRC_COLL OPTIONS"]
#               { -H HOSTFILE [-N NSFORMAT] [-I FIRST] | NS:ADDR ... }
#
# Ranks come either from NS:ADDR pairs (rank i = the i-th pair; NS "-" or
# empty: this namespace; ADDR an IPv4 or IPv6 literal, split at the first
# colon) or from HOSTFILE (mrc_coll's format), rank i running in namespace
# printf(NSFORMAT, i + FIRST): by default mrc-h%d and 1, lib_cluster.sh's
# names (host n = rank n-1); NSFORMAT "-" runs every rank here.
# Without -n, mrc_coll's default (20 iterations, or with -x "-d SECS" as
# many as fit).  -x passes more options to every rank (e.g. "-d 10 -D 500 -P 7 -p 9100");
# MRC_COLL_CORRUPT and the rest of the environment pass through.
#
# Rank 0's output (its iteration and summary lines, errors) goes to OUTFILE,
# or to stdout; every rank's output is kept in LOGDIR/rank.N if -L is given.
# Once a rank fails the others get GRACE_S seconds (default 15) to notice
# and exit on their own; after TIMEOUT_S (default 900) all are killed.
#
# Exit status: 0 when every rank exited 0, else the highest rank status
# (1 verification, 2 connection failure, 3 usage; 137: killed), 124 on the
# timeout, 3 on a usage error of this script.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/mrc_coll
transport=mrc op=allreduce size=1048576 iters=
outfile='' logdir='' hostfile='' nsfmt=mrc-h%d first=1 extra='' timeout=900 grace=15

usage() {
	sed -n '4,9p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 3
}

while getopts "t:o:s:n:O:L:W:G:b:x:H:N:I:h" c; do
	case $c in
	t) transport=$OPTARG ;;
	o) op=$OPTARG ;;
	s) size=$OPTARG ;;
	n) iters=$OPTARG ;;
	O) outfile=$OPTARG ;;
	L) logdir=$OPTARG ;;
	W) timeout=$OPTARG ;;
	G) grace=$OPTARG ;;
	b) bin=$OPTARG ;;
	x) extra=$OPTARG ;;
	H) hostfile=$OPTARG ;;
	N) nsfmt=$OPTARG ;;
	I) first=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -x "$bin" ] || { echo "coll_run: no $bin (make -C tools/bench)" >&2; exit 3; }

tmp=$(mktemp -d) || exit 3
[ -n "$logdir" ] || logdir=$tmp
mkdir -p "$logdir" || exit 3
hosts=$tmp/hosts
nss=()

if [ -n "$hostfile" ]; then
	[ $# -eq 0 ] || usage
	grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' "$hostfile" |
		awk '{ print $1 }' > "$hosts" || exit 3
	n=$(wc -l < "$hosts")
	for ((r = 0; r < n; r++)); do
		if [ "$nsfmt" = - ]; then
			nss+=(-)
		else
			# shellcheck disable=SC2059
			nss+=("$(printf "$nsfmt" $((r + first)))")
		fi
	done
else
	[ $# -gt 0 ] || usage
	: > "$hosts"
	for p in "$@"; do
		case $p in
		*:*) ;;
		*) echo "coll_run: $p is not NS:ADDR" >&2; exit 3 ;;
		esac
		nss+=("${p%%:*}")
		echo "${p#*:}" >> "$hosts"
	done
	n=$#
fi
[ "$n" -gt 0 ] || usage

nopt=
[ -z "$iters" ] || nopt="-n $iters"
pids=()
for ((r = 0; r < n; r++)); do
	ns=${nss[$r]}
	# shellcheck disable=SC2086
	if [ -z "$ns" ] || [ "$ns" = - ]; then
		"$bin" -r $r -H "$hosts" -t "$transport" -o "$op" -s "$size" $nopt \
			$extra > "$logdir/rank.$r" 2>&1 &
	else
		ip netns exec "$ns" "$bin" -r $r -H "$hosts" -t "$transport" -o "$op" \
			-s "$size" $nopt $extra > "$logdir/rank.$r" 2>&1 &
	fi
	pids+=($!)
done

# wait for all; after the first failure, give the others GRACE_S
start=$SECONDS fail_at='' timed_out=0
declare -A rc
while :; do
	alive=0
	for ((r = 0; r < n; r++)); do
		[ -n "${rc[$r]:-}" ] && continue
		if kill -0 "${pids[$r]}" 2>/dev/null; then
			alive=1
			continue
		fi
		wait "${pids[$r]}"
		rc[$r]=$?
		if [ "${rc[$r]}" -ne 0 ] && [ -z "$fail_at" ]; then
			fail_at=$SECONDS
		fi
	done
	[ $alive -eq 0 ] && break
	if [ $((SECONDS - start)) -ge "$timeout" ]; then
		timed_out=1
	elif [ -z "$fail_at" ] || [ $((SECONDS - fail_at)) -lt "$grace" ]; then
		sleep 0.1
		continue
	fi
	# give up on the rest
	for ((r = 0; r < n; r++)); do
		[ -n "${rc[$r]:-}" ] || kill -KILL "${pids[$r]}" 2>/dev/null
	done
	for ((r = 0; r < n; r++)); do
		if [ -z "${rc[$r]:-}" ]; then
			wait "${pids[$r]}"
			rc[$r]=$?
			echo "coll_run: rank $r did not exit by itself (killed)" >&2
		fi
	done
	break
done

worst=0
for ((r = 0; r < n; r++)); do
	if [ "${rc[$r]}" -ne 0 ]; then
		[ "${rc[$r]}" -gt "$worst" ] && worst=${rc[$r]}
		echo "coll_run: rank $r (${nss[$r]:--}) exit ${rc[$r]}: $(tail -n 1 "$logdir/rank.$r")" >&2
	fi
done
if [ -n "$outfile" ]; then
	cp "$logdir/rank.0" "$outfile"
else
	cat "$logdir/rank.0"
fi
[ "$logdir" = "$tmp" ] || cp "$hosts" "$logdir/hosts"
rm -rf "$tmp"
[ $timed_out -eq 1 ] && exit 124
exit "$worst"
