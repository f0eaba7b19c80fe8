#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# External syscall fuzzing: Debian's trinity (kernelslacker/trinity,
# 1.9+git20230109), a fuzzer nobody here wrote, drives AF_MRC for
# TRINITY_SECS seconds (default 30) in a namespace of its own (lo up).
#
# How trinity gets AF_MRC sockets: trinity has no protocol table for family
# 18 (AF_ASH to it, "not implemented"), so neither "-P ASH" (its socket
# generator refuses ASH: "Error during initialization of sockets") nor its
# socket() syscall (type 0 for families it does not know) can make one.  At
# start its socket fd provider reads ./trinity.socketcache, (family, type,
# protocol) triplets of native unsigned ints, and opens one socket per
# triplet; it uses the file as it is as long as every family in it is
# enabled and every socket() succeeds.  So this script writes
# TRINITY_SOCKETS (default 8, see the trinity bug below) triplets (MRC,
# STREAM or SEQPACKET, every other pair SOCK_NONBLOCK, protocol 0) into an
# empty work folder, disables every other fd provider (--enable-fds=sockets:
# every fd argument is one of these sockets) and excludes every other domain
# (-E) rather than -P: with -P every generated sockaddr is one of the -P
# domain, which trinity does not know, so it is zeroes; without it,
# bind/connect/sendto addresses come from all domains, and trinity's IPv4
# and IPv6 generators (127.0.0.1, ::1, random ports) give MRC real addresses
# now and then.  Only socket syscalls and fd syscalls that reach a socket's
# ops are enabled (-c; not close, which trinity avoids), so trinity cannot
# taint the kernel elsewhere (kexec, mount...).
#
# Checks: trinity opened all the sockets from the cache and exited cleanly;
# the namespace's MRC socket count (/proc/net/protocols) reached them during
# the run; trinity's --stats count successful calls (on MRC sockets: they
# are its only fds); /proc/sys/kernel/tainted is unchanged (the module's own
# load-time taint bits are already in the "before" value); and no MRC
# socket is left in the namespace afterwards (waits TRINITY_DRAIN_SECS,
# default 60).  The VM runner fails the run on any kernel splat.
#
# TRINITY_SEED: trinity's seed (default: trinity's own random one, printed).
# TRINITY_CHILDREN: trinity child processes (default 4).
# TRINITY_SOCKETS: AF_MRC sockets in the cache (default 8).
# TRINITY_TRIES: runs to get past trinity's startup crash (default 8).
# TRINITY_USER=nobody runs trinity unprivileged (setpriv), default root.
# TRINITY_LOG=FILE keeps trinity's output (of the last run).
# Skips (exit 4) when trinity is not installed: a failure under make check,
# whose make deps installs it.
cd "$(dirname "$0")" || exit 1
. ./lib.sh

if ! command -v trinity > /dev/null 2>&1; then
	tap_plan 1
	tap_skip "trinity against AF_MRC" "trinity not installed"
	tap_done
fi

SECS=${TRINITY_SECS:-30}
SEED=${TRINITY_SEED:-}
CHILDREN=${TRINITY_CHILDREN:-4}
NSOCK=${TRINITY_SOCKETS:-8}
TRIES=${TRINITY_TRIES:-8}
DRAIN=${TRINITY_DRAIN_SECS:-60}
RUNAS=${TRINITY_USER:-root}
NS=mrc-trin
FAM=$(mrc_family)

# trinity's domain names and numbers (net/domains.c): all but MRC's are
# excluded.
DOMAINS="UNSPEC:0 UNIX:1 INET:2 AX25:3 IPX:4 APPLETALK:5 NETROM:6 BRIDGE:7
ATMPVC:8 X25:9 INET6:10 ROSE:11 DECnet:12 NETBEUI:13 SECURITY:14 KEY:15
NETLINK:16 PACKET:17 ASH:18 ECONET:19 ATMSVC:20 RDS:21 SNA:22 IRDA:23 PPPOX:24
WANPIPE:25 LLC:26 IB:27 MPLS:28 CAN:29 TIPC:30 BLUETOOTH:31 IUCV:32 RXRPC:33
ISDN:34 PHONET:35 IEEE802154:36 CAIF:37 ALG:38 NFC:39 VSOCK:40 KCM:41
QIPCRTR:42 SMC:43 XDP:44"
# Socket syscalls, and fd syscalls that land in the socket's ops.  Not close
# (trinity skips it: AVOID), nor fd syscalls that need other fd types, nor
# ioctl: this trinity segfaults in find_ioctl_group() on a socket fd, so
# nearly every ioctl ends its child before the call (a respawn each time).
CALLS="socket bind connect listen accept accept4 sendto recvfrom sendmsg
recvmsg sendmmsg recvmmsg setsockopt getsockopt shutdown getsockname
getpeername poll ppoll select fcntl read write readv writev splice sendfile"

if [ "$FAM" -ge 45 ]; then
	tap_plan 1
	# a module parameter this machine's run chose: make check's default, 18, is in range
	tap_skip_env "trinity against AF_MRC" "family $FAM is beyond trinity's domains (< 45)"
	tap_done
fi

work=$(mktemp -d /tmp/mrc-trinity.XXXXXX)
out=$(mktemp -d)
TPID=
trap '[ -n "$TPID" ] && kill -9 -- -"$TPID" "$TPID" 2>/dev/null; ip netns del $NS 2>/dev/null; rm -rf "$work" "$out"' EXIT

# inuse: MRC sockets in use in the namespace (/proc/net/protocols "sockets")
inuse() { ip netns exec $NS awk '$1 == "MRC" { print $3 }' /proc/net/protocols; }
# le32 N: N as 4 little-endian bytes (printf escapes)
le32() { printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
	$(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }

tap_plan 5

ip netns del $NS 2>/dev/null
ip netns add $NS && ip -n $NS link set lo up || { echo "# cannot create namespace $NS"; exit 1; }
if ! ip netns exec $NS ./af_probe "$FAM"; then
	echo "# no AF_MRC sockets (family $FAM): is mrc.ko loaded?"
	exit 1
fi

# write_cache N: the socket cache, N triplets (family, type, protocol).
write_cache() {
	local i type
	for i in $(seq 0 $(($1 - 1))); do
		type=$(( i % 2 ? 5 : 1 ))		# SOCK_SEQPACKET / SOCK_STREAM
		[ $((i / 2 % 2)) = 1 ] && type=$((type | 04000))	# | SOCK_NONBLOCK
		# shellcheck disable=SC2059
		printf "$(le32 "$FAM")$(le32 $type)$(le32 0)"
	done > "$work/trinity.socketcache"
	chmod 0644 "$work/trinity.socketcache"
}
chmod 0777 "$work"

excl=
for d in $DOMAINS; do
	[ "${d#*:}" = "$FAM" ] || excl=$excl${excl:+,}${d%:*}
done
args=(--dangerous --clowntown -l off --stats -C "$CHILDREN" --enable-fds=sockets -E "$excl")
for c in $CALLS; do args+=(-c "$c"); done
asuser=()
[ "$RUNAS" = root ] || asuser=(setpriv --reuid="$(id -u "$RUNAS")" --regid="$(id -g "$RUNAS")" --clear-groups)

# run_trinity [SEED]: one run of SECS seconds on a cache of NSOCK sockets
# (-s SEED if given); sets rc, max (most MRC sockets in use seen), tr
# (seconds) and seed (the one trinity used).
run_trinity() {
	local n
	write_cache "$NSOCK"
	t0=$(now)
	# timeout signals trinity's process group: SIGINT is trinity's ctrl-c
	# (children stop, the main process closes its sockets, prints --stats).
	(cd "$work" && exec setsid timeout --preserve-status -k 30 -s INT "$SECS" \
		ip netns exec $NS "${asuser[@]}" trinity "${args[@]}" ${1:+-s "$1"}) \
		> "$out/log" 2>&1 &
	TPID=$!
	max=0
	# (stderr: not bash's "Segmentation fault" line when trinity crashes)
	{
		while kill -0 $TPID; do
			n=$(inuse)
			[ "${n:-0}" -gt "$max" ] && max=$n
			sleep 1
		done
		wait $TPID
	} 2>/dev/null
	rc=$?
	TPID=
	tr=$(since "$t0")
	seed=$(sed -n 's/.*random seed: \([0-9]*\).*/\1/p' "$out/log" | head -n 1)
}
started() { grep -q "sockets created based on info from socket cachefile" "$out/log"; }

# Trinity 2023.01 bug (fixed upstream in April 2023 by dfa75c437, "Avoid
# array access out of bounds error during initialzation of fd providers"):
# random socket options for a family it has no table for index its
# net_protocols[] with rnd() % PF_MAX (46, one past its 45 entries), and the
# main process segfaults at startup while it sets options on the sockets
# from the cache: about one socket in ten, at random.  (A child that hits it
# in a setsockopt() dies and is respawned; that costs little.)  So: without
# TRINITY_SEED, trinity seeds itself from /dev/urandom and a run that died at
# startup is retried, TRINITY_TRIES (8) runs in all.  With -s, trinity's main
# process never seeds rand() (only the children use the seed), so its
# startup is the same for every seed and a crash at socket K happens again
# at K: then a cache of K - 1 sockets gets through.  That is also the
# fallback when the retries ran out.
echo "# trinity: ${SEED:+seed $SEED, }$SECS s, $CHILDREN children, $NSOCK AF_MRC sockets (family $FAM), as $RUNAS"
echo "# cd $work && ip netns exec $NS ${asuser[*]} trinity ${args[*]}${SEED:+ -s $SEED}"
ip netns exec $NS cat /proc/net/mrc_stats > "$out/s0"
taint0=$(cat /proc/sys/kernel/tainted)
attempts=0
while :; do
	attempts=$((attempts + 1))
	run_trinity "$SEED"
	started && break
	k=$(grep -c "^\[main\] socket fd:" "$out/log")
	echo "# run $attempts: trinity's main process died (rc $rc, seed ${seed:-?}) setting up socket $k of $NSOCK (trinity bug, see above)"
	if [ -z "$SEED" ]; then
		[ $attempts -lt "$TRIES" ] && continue
		SEED=${seed:-1}
		echo "# retrying with -s $SEED (the same startup for any seed)"
		continue
	fi
	[ "$k" -gt 1 ] && [ "$NSOCK" -gt $((k - 1)) ] || break
	NSOCK=$((k - 1))
	echo "# retrying with -s $SEED and $NSOCK sockets"
done
echo "# trinity seed: ${seed:-?} (TRINITY_SEED=${seed:-?} repeats the children's random choices), $NSOCK sockets, $attempts run(s)"
[ -z "${TRINITY_LOG:-}" ] || cp "$out/log" "$TRINITY_LOG"
taint1=$(cat /proc/sys/kernel/tainted)
ip netns exec $NS cat /proc/net/mrc_stats > "$out/s1"

grep -E "^\[main\] (Enabled|Disabled|Using|Initial|.*sockets|.*cachefile|Ran |.*tainted)|Error|Couldn't|Can't|stale" "$out/log" |
	head -n 20 | sed 's/^/# /'
cached=$(sed -n 's/.* \([0-9]*\) sockets created based on info from socket cachefile.*/\1/p' "$out/log" | tail -n 1)
tap_result $(( rc == 0 && ${cached:-0} == NSOCK )) \
	"trinity ran ${tr} s (rc $rc) on ${cached:-0}/$NSOCK AF_MRC sockets from its socket cache"

tap_result $(( max >= NSOCK )) \
	"AF_MRC sockets in use during the run: up to $max (/proc/net/protocols, namespace $NS)"

# --stats: "name: (attempted:A. success:S. failures:F." per syscall and
# arch, then its errnos.
awk '/^[a-z0-9_]+: \(attempted:/ {
		n = $1; sub(":", "", n); split($0, f, /[:.]/)
		a[n] += f[3]; s[n] += f[5]
	}
	END { for (n in a) printf "%s %d %d\n", n, a[n], s[n] }' "$out/log" | sort > "$out/calls"
ok=$(awk '$1 != "socket" { s += $3 } END { print s + 0 }' "$out/calls")
att=$(awk '{ a += $2 } END { print a + 0 }' "$out/calls")
echo "# calls attempted/succeeded: $(awk '{ printf "%s %d/%d  ", $1, $2, $3 }' "$out/calls")"
echo "# mrc_stats: $(awk 'FNR == NR { a[$1] = $2; next } $2 != a[$1] { printf "%s=+%d ", $1, $2 - a[$1] }' "$out/s0" "$out/s1")"
tap_result $(( ok > 0 )) "trinity's calls on AF_MRC sockets: $att attempted, $ok succeeded"

tap_result $(( taint0 == taint1 )) "kernel not tainted by the run (tainted $taint0 before, $taint1 after)"

t1=$(now)
left=$(inuse)
for i in $(seq 1 $((DRAIN * 2))); do
	[ "${left:-0}" = 0 ] && break
	sleep 0.5
	left=$(inuse)
done
tap_result $(( ${left:-1} == 0 )) "no AF_MRC sockets left after trinity ($left after $(since "$t1") s)"
if [ "${left:-1}" != 0 ]; then
	ip netns exec $NS ../../tools/mrcctl/mrcctl conn show 2>&1 | head -n 40 | sed 's/^/#   /'
fi
if [ "$rc" != 0 ] || [ "${cached:-0}" != "$NSOCK" ]; then
	echo "# trinity output (last 40 lines):"
	tail -n 40 "$out/log" | sed 's/^/#   /'
fi

tap_done
