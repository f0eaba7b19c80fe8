#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# mrcctl, its man page and make install on the host, where no mrc module
# need be loaded: what mrcctl refuses before it talks to the kernel, and
# what the tree's text files must hold.  TAP; run by make check after the
# build.
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/testing/tap.sh"
MRCCTL=${MRCCTL:-$repo/tools/mrcctl/mrcctl}
MAN=$repo/tools/mrcctl/mrcctl.8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tap_plan 23

# --- the man page ------------------------------------------------------------
bad=$(LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]' "$MAN" | cut -d: -f1 | paste -sd ' ')
tap_result $(( ${#bad} == 0 )) "mrcctl.8 holds no control bytes${bad:+ (lines $bad)}"
# lint.sh --host on a copy of the tree whose man page has a form feed
mkdir -p "$tmp/lint/tools/mrcctl"
cp "$repo/tools/lint.sh" "$tmp/lint/tools/"
printf '.TH X 8\n.B plane add \fIADDR\n' > "$tmp/lint/tools/mrcctl/mrcctl.8"
err=$(bash "$tmp/lint/tools/lint.sh" --host 2>&1)
rc=$?
echo "# lint.sh --host: rc $rc: $err"
[ $rc -ne 0 ] && grep -q "mrcctl.8: control bytes on line(s) 2" <<< "$err"
tap_result $(( $? == 0 )) "lint.sh rejects a control byte in a man page"

# --- the command line is checked before netlink is opened ---------------------
# usage TEXT ARGS...: mrcctl ARGS is a usage error (rc 1) that says TEXT,
# whether or not the module is loaded
usage() {
	local text=$1 err rc
	shift
	err=$("$MRCCTL" "$@" 2>&1 >/dev/null)
	rc=$?
	echo "# mrcctl $*: rc $rc: $err"
	[ $rc -eq 1 ] && grep -q -- "$text" <<< "$err"
}
usage 'unknown conn command "bogus"' conn bogus &&
	usage 'unknown conn show argument "-x"' conn show -x &&
	usage 'unknown config key "no-such-key"' config set no-such-key 1 &&
	usage 'invalid value "lots" for ev-count' config set ev-count lots &&
	usage 'config key "ev-count" needs a value' config set ev-count
tap_result $(( $? == 0 )) "conn and config: bad words and values are usage errors (rc 1), not \"module not loaded\""
usage 'invalid address "1.2.3"' paths 1.2.3 &&
	usage 'invalid address "10.0.0"' plane add 10.0.0 &&
	usage 'invalid value "70000" for ports' policy add ports 70000 pin &&
	usage 'unknown monitor argument "bogus"' monitor bogus &&
	usage 'unknown stats argument "bogus"' stats bogus &&
	usage 'info takes no arguments' info x
tap_result $(( $? == 0 )) "paths, plane, policy, monitor, stats and info: the same"
usage 'object "con" is ambiguous: config, conn, connections' con &&
	usage 'object "p" is ambiguous: paths, policy, plane' p show &&
	usage 'config command "s" is ambiguous: show, set' config s
tap_result $(( $? == 0 )) "ambiguous prefixes (con, p, config s) are refused with their candidates"
usage 'unknown conn command "bogus"' conne bogus &&
	usage 'unknown plane command "bogus"' pl bogus &&
	usage 'unknown config key "bogus"' config se bogus 1
tap_result $(( $? == 0 )) "unique prefixes (conne, pl, config se) name their command"
# a valid command gets past the parse: rc 2 without the module, or 0 where
# it is loaded (or installed here: the family's alias autoloads it)
err=$("$MRCCTL" info 2>&1 >/dev/null)
rc=$?
echo "# mrcctl info: rc $rc: $err"
[ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -Eq "module is not loaded|generic netlink socket" <<< "$err"; }
tap_result $(( $? == 0 )) "a valid command reaches netlink: rc 2, module not loaded (or 0 with it)"

# --- connection IDs: hex, as conn show prints them --------------------------
# past the parse an ID reaches netlink: rc 2 here, not a usage error
reaches() {
	local err rc
	err=$("$MRCCTL" conn show id "$1" 2>&1 >/dev/null)
	rc=$?
	echo "# mrcctl conn show id $1: rc $rc: $err"
	[ $rc -ne 1 ]
}
reaches 00000019 && reaches 0000abcd && reaches 0XABCD && reaches ffffffff
tap_result $(( $? == 0 )) "conn show id reads hex: 00000019 (no octal), 0000abcd, 0XABCD, ffffffff"
usage 'invalid connection id "100000000": at most ffffffff' conn show id 100000000 &&
	usage 'invalid connection id "12g"' conn show id 12g &&
	usage 'invalid connection id "0x"' conn show id 0x &&
	usage 'invalid connection id "-1"' conn show id -1 &&
	usage 'invalid connection id "0x0x1"' conn show id 0x0x1
tap_result $(( $? == 0 )) "conn show id refuses 100000000 (hex, too big), 12g, 0x, -1 and 0x0x1"
# the unit: mrcctl.c's parse_conn_id() against its own CONN_ID_FMT
cat > "$tmp/conn_id.c" << 'EOF'
#define main mrcctl_main
#include "mrcctl.c"
#undef main

int main(void)
{
	static const uint32_t ids[] = { 0, 1, 0x19, 0x1234, 0xabcdef, 0x80000000, 0xffffffff };
	char buf[32];
	unsigned int i;
	int bad = 0;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		snprintf(buf, sizeof(buf), CONN_ID_FMT, (uint64_t)ids[i]);
		bad += parse_conn_id(buf) != ids[i];
		snprintf(buf, sizeof(buf), "0x" CONN_ID_FMT, (uint64_t)ids[i]);
		bad += parse_conn_id(buf) != ids[i];
	}
	bad += parse_conn_id("00001234") != 0x1234 || parse_conn_id("0XaBc") != 0xabc;
	printf("%u IDs printed and read back, %d wrong\n", i, bad);
	return bad != 0;
}
EOF
out=$(cc -D_GNU_SOURCE -I"$repo/include/uapi" -I"$repo/tools/mrcctl" \
	$(pkg-config --cflags libmnl 2>/dev/null) -o "$tmp/conn_id" "$tmp/conn_id.c" \
	$(pkg-config --libs libmnl 2>/dev/null || echo -lmnl) 2>&1 && "$tmp/conn_id" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
tap_result $(( rc == 0 )) "every ID conn show prints (%08x, with or without 0x) reads back as itself"

# --- the module: netlink (mrcctl) autoloads it ----------------------------------
genl_alias=net-pf-16-proto-16-family-mrc	# PF_NETLINK, NETLINK_GENERIC, "mrc"
if [ -f "$repo/net/mrc/mrc.ko" ]; then
	modinfo -F alias "$repo/net/mrc/mrc.ko" | grep -qx "$genl_alias"
	tap_result $(( $? == 0 )) "mrc.ko carries the alias $genl_alias"
else
	echo "# net/mrc/mrc.ko not built: its source instead"
	grep -q "^MODULE_ALIAS_GENL_FAMILY(MRC_FAMILY_NAME);" "$repo"/net/mrc/*.c
	tap_result $(( $? == 0 )) "the module source declares MODULE_ALIAS_GENL_FAMILY(MRC_FAMILY_NAME)"
fi

# --- stats -o prometheus: a HELP line of its own for every kernel counter -----
# The kernel's names (pernet.c, one per enum mrc_counter entry in protocol.h)
# against mrcctl's counter_help table: a missing one falls back to a
# generic "MRC counter NAME", a stale one helps nothing.
kernel=$(sed -n '/mrc_counter_names\[__MRC_C_MAX\] = {/,/^};/p' "$repo/net/mrc/pernet.c" |
	grep -o '= "[A-Za-z0-9]*"' | tr -d '= "' | sort)
n_enum=$(sed -n '/^enum mrc_counter {/,/__MRC_C_MAX/p' "$repo/net/mrc/protocol.h" |
	grep -c '^[[:space:]]*MRC_C_[A-Z0-9_]*[,= ]')
helped=$(sed -n '/} counter_help\[\] = {/,/^};/p' "$repo/tools/mrcctl/mrcctl.c" |
	grep -o '^[[:space:]]*{ "[A-Za-z0-9]*"' | tr -d '{ "\t' | sort)
missing=$(comm -23 <(echo "$kernel") <(echo "$helped") | paste -sd ' ')
stale=$(comm -13 <(echo "$kernel") <(echo "$helped") | paste -sd ' ')
n_kernel=$(echo "$kernel" | grep -c .)
echo "# $n_kernel kernel counters ($n_enum in enum mrc_counter), $(echo "$helped" | grep -c .) help lines"
[ "$n_kernel" -gt 0 ] && [ "$n_kernel" = "$n_enum" ] && [ -z "$missing" ] && [ -z "$stale" ]
tap_result $(( $? == 0 )) "every kernel counter has a help line${missing:+ (missing: $missing)}${stale:+ (stale: $stale)}"

# --- stats -o prometheus: the drop counters are one family, by reason ---------
# The unit: mrcctl.c's printing of the counters a dump returned, fed the
# kernel's names in the kernel's order (value 1000 + position).  RxDropX and
# RxXDropped make mrc_rx_dropped_packets_total{reason="x"}, printed together
# where the first falls; every other counter keeps its own family.
order=$(sed -n '/mrc_counter_names\[__MRC_C_MAX\] = {/,/^};/p' "$repo/net/mrc/pernet.c" |
	grep -o '= "[A-Za-z0-9]*"' | tr -d '= "')
drops=$(grep -Ec '^RxDrop.|^Rx.+Dropped$' <<< "$order")
cat > "$tmp/stats.c" << 'EOF'
#define main mrcctl_main
#include "mrcctl.c"
#undef main

int main(int argc, char **argv)
{
	static struct counters cs;
	int i;

	prom = true;
	netns = "ns1";
	for (i = 1; i < argc && cs.n < MAX_COUNTERS; i++, cs.n++) {
		snprintf(cs.c[cs.n].name, sizeof(cs.c[0].name), "%s", argv[i]);
		cs.c[cs.n].value = 1000 + i;
	}
	prom_print_counters(&cs);
	return 0;
}
EOF
# shellcheck disable=SC2046,SC2086
out=$(cc -D_GNU_SOURCE -I"$repo/include/uapi" -I"$repo/tools/mrcctl" \
	$(pkg-config --cflags libmnl 2>/dev/null) -o "$tmp/stats" "$tmp/stats.c" \
	$(pkg-config --libs libmnl 2>/dev/null || echo -lmnl) 2>&1 &&
	"$tmp/stats" $order > "$tmp/stats.prom" 2>&1)
rc=$?
[ -n "$out" ] && echo "$out" | head -n 5 | sed 's/^/# cc: /'
pos() { grep -nx "$1" <<< "$order" | cut -d: -f1; }
samples=$(grep -c '^mrc_rx_dropped_packets_total{' "$tmp/stats.prom")
reasons=$(grep -o 'reason="[a-z_]*"' "$tmp/stats.prom" | sort -u | grep -c .)
families=$(grep -c '^# TYPE ' "$tmp/stats.prom")
n_order=$(grep -c . <<< "$order")
grep -E '^(# TYPE )?mrc_rx_(dropped_packets|packets|duplicate)_total' "$tmp/stats.prom" | sed 's/^/# /'
echo "# $n_order counters, $drops of them drops: $families families, $samples drop samples, $reasons reasons"
# a family's samples contiguous: no metric name comes back after another
contiguous=$(awk '!/^#/ { m = $0; sub(/[{ ].*/, "", m); if (m != last && seen[m]++) bad = 1; last = m }
	END { print bad ? "no" : "yes" }' "$tmp/stats.prom")
[ $rc -eq 0 ] && [ "$drops" -ge 10 ] && [ "$samples" = "$drops" ] && [ "$reasons" = "$drops" ] &&
	[ "$families" = $((n_order - drops + 1)) ] && [ "$contiguous" = yes ] &&
	[ "$(grep -c '^# TYPE mrc_rx_dropped_packets_total counter$' "$tmp/stats.prom")" = 1 ] &&
	! grep -q '^mrc_rx_drop_\|^mrc_rx_icmp_dropped' "$tmp/stats.prom" &&
	grep -qx "mrc_rx_dropped_packets_total{netns=\"ns1\",reason=\"rcvbuf\"} $((1000 + $(pos RxDropRcvbuf)))" \
		"$tmp/stats.prom" &&
	grep -qx "mrc_rx_dropped_packets_total{netns=\"ns1\",reason=\"no_connection\"} $((1000 + $(pos RxDropNoConnection)))" \
		"$tmp/stats.prom" &&
	grep -qx "mrc_rx_dropped_packets_total{netns=\"ns1\",reason=\"icmp\"} $((1000 + $(pos RxIcmpDropped)))" \
		"$tmp/stats.prom" &&
	grep -qx "mrc_rx_packets_total{netns=\"ns1\"} $((1000 + $(pos RxPackets)))" "$tmp/stats.prom" &&
	grep -qx "mrc_rx_duplicate_total{netns=\"ns1\"} $((1000 + $(pos RxDuplicate)))" "$tmp/stats.prom"
tap_result $(( $? == 0 )) "stats -o prometheus: the $drops drop counters are one family, mrc_rx_dropped_packets_total{reason}; the rest a family each"

# --- conn show and paths -o prometheus: series per peer, not per port --------
# The unit: mrcctl.c's printing of the rows a dump collected, fed N
# connections (and N source ports) toward each of two peers, interleaved
# as a dump returns them.  By default one series per peer: no ephemeral
# port nor EV in a label, as many lines for 3 connections as for 500;
# --per-conn and --per-ev a series per connection and per source port.
cat > "$tmp/prom.c" << 'EOF'
#define main mrcctl_main
#include "mrcctl.c"
#undef main

static const struct nlattr *none[TB_MAX];

int main(int argc, char **argv)
{
	static const char *const peers[] = { "10.0.2.1", "fd00:2::1" };
	bool paths = !strcmp(argv[1], "path");
	int n = atoi(argv[2]), i, p;
	char port[8];

	prom = true;
	prom_per_row = argc > 3;
	netns = "ns1";
	for (i = 0; i < n; i++) {
		for (p = 0; p < 2; p++) {
			struct prom_row *r = prom_row_add(none);

			snprintf(port, sizeof(port), "%d", 40000 + i);
			prom_label(r->labels, sizeof(r->labels), "peer", peers[p]);
			snprintf(r->group, sizeof(r->group), "%s", r->labels);
			prom_label(r->labels, sizeof(r->labels), "port", port);
			if (paths) {	/* the first port of each peer retired */
				r->v[MRC_A_PATH_STATE] = i ? MRC_EV_ACTIVE : MRC_EV_RETIRED;
				r->v[MRC_A_PATH_SENT] = 100;
				r->v[MRC_A_PATH_SRTT_US] = i ? 100 + 100 * (i % 2) : 0;
				r->v[MRC_A_PATH_MIN_RTT_US] = i ? 50 + i : 0;
			} else {	/* the first connection of each peer closing */
				r->v[MRC_A_CONN_STATE] = i ? MRC_STATE_ESTABLISHED : MRC_STATE_CLOSING;
				r->v[MRC_A_CONN_PACKETS_SENT] = 100;
				r->v[MRC_A_CONN_SRTT_US] = i ? 100 + 100 * (i % 2) : 0;
				r->v[MRC_A_CONN_RTO_US] = 200000 + i;
			}
		}
	}
	if (paths)
		prom_print_paths();
	else
		prom_print_conns();
	return 0;
}
EOF
out=$(cc -D_GNU_SOURCE -I"$repo/include/uapi" -I"$repo/tools/mrcctl" \
	$(pkg-config --cflags libmnl 2>/dev/null) -o "$tmp/prom" "$tmp/prom.c" \
	$(pkg-config --libs libmnl 2>/dev/null || echo -lmnl) 2>&1)
rc=$?
[ -n "$out" ] && echo "$out" | head -n 5 | sed 's/^/# cc: /'
for what in conn path; do
	for n in 3 500; do
		"$tmp/prom" $what $n > "$tmp/$what.$n" 2>&1 || rc=1
		"$tmp/prom" $what $n per-row > "$tmp/$what.$n.rows" 2>&1 || rc=1
	done
done
series() { grep -vc '^#' "$1"; }
echo "# conn show: $(series "$tmp/conn.3") and $(series "$tmp/conn.500") series for 3 and 500" \
	"connections a peer, $(series "$tmp/conn.500.rows") with --per-conn"
echo "# paths: $(series "$tmp/path.3") and $(series "$tmp/path.500") series for 3 and 500" \
	"source ports a peer, $(series "$tmp/path.500.rows") with --per-ev"
[ $rc -eq 0 ] && ! grep -q 'port=' "$tmp/conn.500" "$tmp/path.500" &&
	[ "$(series "$tmp/conn.3")" = "$(series "$tmp/conn.500")" ] &&
	[ "$(series "$tmp/path.3")" = "$(series "$tmp/path.500")" ] &&
	[ "$(series "$tmp/conn.500.rows")" -gt 10000 ] && [ "$(series "$tmp/path.500.rows")" -gt 10000 ]
tap_result $(( $? == 0 )) "-o prometheus: series per peer, as many for 500 connections or ports as for 3; --per-conn, --per-ev: per row"
# the aggregates: state counts, sums, means and extremes of the samples
grep -E '^mrc_(conns|paths)(_sent_packets_total|_srtt_seconds)?\{.*10\.0\.2\.1' "$tmp/conn.3" \
	"$tmp/path.3" | sed "s|^$tmp/|# |"
grep -qx 'mrc_conns{netns="ns1",peer="10.0.2.1",state="established"} 2' "$tmp/conn.3" &&
	grep -qx 'mrc_conns{netns="ns1",peer="fd00:2::1",state="closing"} 1' "$tmp/conn.3" &&
	grep -qx 'mrc_conns_sent_packets{netns="ns1",peer="10.0.2.1"} 300' "$tmp/conn.3" &&
	grep -qx 'mrc_conns_srtt_seconds{netns="ns1",peer="fd00:2::1"} 0.000150' "$tmp/conn.3" &&
	grep -qx 'mrc_conns_rto_seconds{netns="ns1",peer="10.0.2.1"} 0.200002' "$tmp/conn.3" &&
	grep -qx 'mrc_paths{netns="ns1",peer="10.0.2.1",state="retired"} 1' "$tmp/path.3" &&
	grep -qx 'mrc_paths_sent_packets{netns="ns1",peer="fd00:2::1"} 300' "$tmp/path.3" &&
	grep -qx 'mrc_paths_min_rtt_seconds{netns="ns1",peer="10.0.2.1"} 0.000051' "$tmp/path.3" &&
	grep -qx 'mrc_conn_sent_packets_total{netns="ns1",peer="10.0.2.1",port="40002"} 100' \
		"$tmp/conn.3.rows" &&
	grep -qx 'mrc_path_sent_packets_total{netns="ns1",peer="10.0.2.1",port="40002"} 100' \
		"$tmp/path.3.rows"
tap_result $(( $? == 0 )) "-o prometheus aggregates: connections and ports by state, sums, mean RTT, smallest, largest"
if command -v promtool > /dev/null; then
	cat "$tmp/conn.3" "$tmp/path.3" "$tmp/conn.3.rows" "$tmp/path.3.rows" "$tmp/stats.prom" |
		promtool check metrics > "$tmp/promtool" 2>&1
	rc=$?
	sed 's/^/# promtool: /' "$tmp/promtool"
	[ $rc -eq 0 ] && [ ! -s "$tmp/promtool" ]
	tap_result $(( $? == 0 )) "promtool check metrics: the aggregates, the per-row output and stats, no lint"
else
	tap_skip_env "promtool check metrics" "promtool not installed (tools/deps.sh: prometheus)"
fi
usage 'conn show --per-conn is for -o prometheus' conn show --per-conn &&
	usage 'paths --per-ev is for -o prometheus' paths --per-ev 10.0.2.1
tap_result $(( $? == 0 )) "--per-conn and --per-ev without -o prometheus are usage errors"

# --- make install without a kernel to install for -----------------------------
# A host with neither a Debian 6.12 kernel nor the running kernel's headers:
# kver.sh looks in empty directories; nothing may land under DESTDIR.
mkdir -p "$tmp/boot" "$tmp/src" "$tmp/modules" "$tmp/root"
kmake() {	# make in the tree, none of an outer make's variables (make check's)
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u KVER -u KDIR -u MRC_KVER \
		MRC_BOOT_DIR="$tmp/boot" MRC_SRC_DIR="$tmp/src" MRC_MODULES_DIR="$tmp/modules" \
		make --no-print-directory -C "$repo" "$@"
}
err=$(kmake -s install-files DESTDIR="$tmp/root" PREFIX=/usr 2>&1 >/dev/null)
rc=$?
left=$(cd "$tmp/root" && find . -mindepth 1 | head -n 3 | paste -sd ' ')
echo "# make install-files, no kernel: rc $rc: $err"
[ $rc -ne 0 ] && grep -q "no kernel release (KVER)" <<< "$err" && [ -z "$left" ]
tap_result $(( $? == 0 )) "make install with no kernel refuses, installs nothing${left:+ ($left)}"
err=$(kmake -s uninstall DESTDIR="$tmp/root" PREFIX=/usr 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] && grep -q "no kernel release (KVER)" <<< "$err"
tap_result $(( $? == 0 )) "make uninstall with no kernel refuses (rc $rc)"
# only the running kernel's headers: its /lib/modules (make -n: what it would do)
mkdir -p "$tmp/modules/$(uname -r)/build"
out=$(kmake -n install-files DESTDIR="$tmp/root" PREFIX=/usr 2>&1)
grep -q "^install .* $tmp/root/lib/modules/$(uname -r)/updates/mrc.ko$" <<< "$out"
tap_result $(( $? == 0 )) "make install with the running kernel's headers installs for it"

# --- make install into DESTDIR: what goes where -------------------------------
# mrcctl in bin (run and the show commands are for every user), an sbin one
# of an older install removed, the uapi header in include/linux; uninstall
# takes it all back.  The module too where it is built (KVER named).
dest=$tmp/dest
mkdir -p "$dest/usr/sbin"
echo stale > "$dest/usr/sbin/mrcctl"
inst() {	# install-files or uninstall
	if [ -f "$repo/net/mrc/mrc.ko" ]; then
		kmake -s "$1" DESTDIR="$dest" PREFIX=/usr KVER=mrc-test
	else	# not built: the tools' part of it
		[ "$1" = install-files ] && set -- install
		kmake -s -C tools/mrcctl "$1" DESTDIR="$dest" PREFIX=/usr &&
			kmake -s -C tools/preload "$1" DESTDIR="$dest" PREFIX=/usr
	fi
}
out=$(inst install-files 2>&1)
rc=$?
files=$(cd "$dest" && find . -type f | sort | paste -sd ' ')
echo "# make install-files DESTDIR=... PREFIX=/usr: rc $rc $out: $files"
[ $rc -eq 0 ] && [ -x "$dest/usr/bin/mrcctl" ] && [ ! -e "$dest/usr/sbin/mrcctl" ] &&
	[ -f "$dest/usr/share/man/man8/mrcctl.8" ] && [ -f "$dest/usr/lib/mrc/libmrc-preload.so" ]
tap_result $(( $? == 0 )) "make install puts mrcctl in PREFIX/bin, not sbin (an old sbin/mrcctl goes)"
printf '#include <sys/socket.h>\n#include <linux/mrc.h>\nint main(void) { return socket(AF_MRC, SOCK_STREAM, 0) < 0; }\n' \
	> "$tmp/use.c"
cmp -s "$repo/include/uapi/linux/mrc.h" "$dest/usr/include/linux/mrc.h" &&
	cc -Wall -Werror -I"$dest/usr/include" -o "$tmp/use" "$tmp/use.c"
tap_result $(( $? == 0 )) "make install puts the uapi header in PREFIX/include/linux/mrc.h; a program builds with it"
out=$(inst uninstall 2>&1)
rc=$?
left=$(cd "$dest" && find . -type f | paste -sd ' ')
echo "# make uninstall: rc $rc $out"
[ $rc -eq 0 ] && [ -z "$left" ]
tap_result $(( $? == 0 )) "make uninstall removes what install put there${left:+ (left: $left)}"

tap_done
