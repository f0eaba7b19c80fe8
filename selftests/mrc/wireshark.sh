#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The Wireshark dissector (tools/wireshark/mrc.lua) on real traffic: one
# capture holds a connection refused (RST), a short transfer across a spine
# blackholed for a moment (probes, retransmissions, SACKs), a stray
# datagram on the MRC port and a connection on another UDP port (the
# heuristic); one tshark run decodes it and known packets are checked field
# by field.
cd "$(dirname "$0")" || exit 1
. ./lib.sh

# --crafted, on the host (make check; no VM, no module): packets built byte
# by byte (text2pcap), for what the kernel's traffic here does not hold:
# SYNACKs and HSACKs carrying the sender's plane addresses, whole, cut by
# the capture, and malformed; ACKs with a duplicate's echo (DSACK), after
# SACKX's words or not, and one too short.
if [ "${1-}" = --crafted ]; then
	for t in tshark text2pcap editcap; do
		command -v $t > /dev/null && continue
		tap_plan 1
		tap_setup_fail "$t not installed (tools/deps.sh: tshark)"
	done
	tap_plan 6
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
	# hdr TYPE LEN [FLAGS]: a header from port 7001, ID 0x1111 to port 7002,
	# ID 0x2222
	hdr() { printf '04%02x%02x00%04x%04x%08x%08x%08x%08x%016x%08x%08x%08x%04x%04x' "$1" \
		"${3:-0}" 7001 7002 0x1111 0x2222 1000 2000 0 1000 0 65536 4797 "$2"; }
	dsack() { printf '%08x%04x0000' "$1" "$2"; }		# TSVAL EV
	hs() { printf '0123456789abcdef%08x%08x' 7 1400; }	# cookie, slot, MSS
	list() { printf '%02x000000' "$1"; }			# count, reserved
	v4() { printf '04%02x0000%08x%024x' "$1" "$2" 0; }	# PLANE ADDR
	v6() { printf '06%02x0000%s' "$1" "$2"; }		# PLANE 32-HEX-DIGITS
	# pkt HEX: a packet as text2pcap reads it, 16 bytes a line after the offset
	pkt() {
		fold -w 32 <<< "$1" | awk '{ printf "%06x", (NR - 1) * 16
			for (i = 1; i < length($0); i += 2) printf " %s", substr($0, i, 2); print "" }'
	}
	{
		# 1: SYNACK, planes 1 and 2 (IPv4)
		pkt "$(hdr 2 60)$(hs)$(list 2)$(v4 1 0x0a640201)$(v4 2 0x0ac80201)"
		# 2: HSACK, plane 1 (IPv6) and 3 (IPv4)
		pkt "$(hdr 3 60)$(hs)$(list 2)$(v6 1 fd100002000000000000000000000001)$(v4 3 0x0a640101)"
		# 3: SYNACK without a list
		pkt "$(hdr 2 16)$(hs)"
		# 4: HSACK, planes 0 to 2
		pkt "$(hdr 3 80)$(hs)$(list 3)$(v4 0 0x0a010101)$(v4 1 0x0a020202)$(v4 2 0x0a030303)"
		# 5: SYNACK, planes 0 to 3, the capture's snap length (180) cuts the fourth
		pkt "$(hdr 2 100)$(hs)$(list 4)$(v4 0 0x0a010101)$(v4 1 0x0a020202)$(v4 2 0x0a030303)$(v4 3 0x0a040404)"
		# 6: SYNACK, count 3 but two entries
		pkt "$(hdr 2 60)$(hs)$(list 3)$(v4 1 0x0a640201)$(v4 2 0x0ac80201)"
		# 7: HSACK, 16 + 10 bytes
		pkt "$(hdr 3 26)$(hs)$(list 1)000000000000"
		# 8: ACK with a duplicate's echo (DSACK)
		pkt "$(hdr 5 8 0x40)$(dsack 4660 49153)"
		# 9: ACK with one SACKX word and the echo
		pkt "$(hdr 5 16 0x60)8000000000000001$(dsack 4661 49154)"
		# 10: ACK flagged DSACK with 4 bytes
		pkt "$(hdr 5 4 0x40)00001234"
	} > "$out/hex"
	text2pcap -q -4 10.0.2.1,10.0.1.1 -u 49152,4797 "$out/hex" "$out/full.pcap" > "$out/t" 2>&1 &&
		editcap -s 180 "$out/full.pcap" "$out/cap.pcap" >> "$out/t" 2>&1
	rc=$?
	echo "# text2pcap, editcap: rc $rc, $(grep -c '^000000' "$out/hex") packets"
	[ $rc -eq 0 ] || sed 's/^/# /' "$out/t"
	# tsh ARGS...: tshark with mrc.lua on the crafted capture
	tsh() {
		tshark -n -X "lua_script:$(cd ../../tools/wireshark && pwd)/mrc.lua" -r "$out/cap.pcap" \
			"$@" 2> "$out/err"
		local rc=$?
		grep -v "Running as user" "$out/err" | sed 's/^/# tshark: /' >&2
		return $rc
	}
	# expert infos, with fields any version of mrc.lua has; PI_MALFORMED
	# is 0x07000000
	tsh -T fields -e frame.number -e mrc.type -e mrc.len -e _ws.malformed \
		-e _ws.expert.group -e _ws.expert.message > "$out/e"
	sed 's/^/# /' "$out/e"
	n=$(wc -l < "$out/e")
	bad=$(awk -F'\t' '$1 <= 5 && ($4 != "" || $5 ~ /117440512/) { print $1 }' "$out/e" | paste -sd ' ')
	tap_result $(( n == 10 && ${#bad} == 0 )) \
		"SYNACK and HSACK with 0 to 4 plane addresses are not malformed${bad:+ (frames $bad are)}"
	bad=$(awk -F'\t' '$1 >= 6 && $1 <= 7 && $5 !~ /117440512/ { print $1 }' "$out/e" | paste -sd ' ')
	tap_result $(( n == 10 && ${#bad} == 0 )) \
		"a count that disagrees with the length, a list of 10 bytes: malformed${bad:+ (frames $bad are not)}"
	# DSACK: the duplicate's echo decodes, alone and after SACKX's words;
	# 4 bytes of it are malformed
	tsh -T fields -e frame.number -e mrc.dsack.tsval -e mrc.dsack.ev -e mrc.sack.psn \
		-E separator='|' > "$out/d"
	rc=$?
	sed -n '8,10s/^/# dsack: /p' "$out/d"
	bad=$(awk -F'\t' '($1 == 8 || $1 == 9) && ($4 != "" || $5 ~ /117440512/) { print $1 }
			   $1 == 10 && $5 !~ /117440512/ { print $1 }' "$out/e" | paste -sd ' ')
	grep -qx '8|4660|49153|' "$out/d" && grep -qx '9|4661|49154|2065,2128' "$out/d"
	tap_result $(( rc == 0 && $? == 0 && ${#bad} == 0 )) \
		"an ACK's DSACK echo decodes alone and after SACKX's words; a short one is malformed${bad:+ (frames $bad wrong)}"
	# the lists: count, then family, plane, IPv4 and IPv6 of each entry
	tsh -T fields -e frame.number -e mrc.addrs.count -e mrc.addr.family -e mrc.addr.plane \
		-e mrc.addr.ipv4 -e mrc.addr.ipv6 -E separator='|' > "$out/a"
	rc=$?
	sed 's/^/# /' "$out/a"
	grep -qx '1|2|4,4|1,2|10.100.2.1,10.200.2.1|' "$out/a" &&
		grep -qx '2|2|6,4|1,3|10.100.1.1|fd10:2::1' "$out/a"
	tap_result $(( rc == 0 && $? == 0 )) "the address lists decode: family, plane, IPv4 and IPv6 address"
	grep -qx '3|||||' "$out/a" &&
		grep -qx '4|3|4,4,4|0,1,2|10.1.1.1,10.2.2.2,10.3.3.3|' "$out/a"
	tap_result $(( rc == 0 && $? == 0 )) "a SYNACK without a list has no addresses; three planes decode"
	# -V: the tree as a reader sees it
	tsh -V -Y frame.number==5 > "$out/v5"
	grep -E "Plane [0-9]|cut by" "$out/v5" | sed 's/^/# -V: /'
	grep -qx '5|4|4,4,4|0,1,2|10.1.1.1,10.2.2.2,10.3.3.3|' "$out/a" &&
		grep -q "Address list cut by the capture" "$out/v5"
	tap_result $(( rc == 0 && $? == 0 )) "a list cut by the capture: the entries it kept decode, the rest is marked cut"
	tap_done
fi

trap 'kill $(jobs -p) 2>/dev/null; fabric_down' EXIT
LUA=$(cd ../../tools/wireshark && pwd)/mrc.lua
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
SPINES=4

if ! command -v tshark > /dev/null || ! command -v tcpdump > /dev/null; then
	tap_plan 1
	tap_skip "wireshark dissector" "tshark or tcpdump not installed (tools/deps.sh)"
	tap_done
fi
tap_plan 15
start=$(now)
out=$(mktemp -d)

# One tshark run, started first: it takes seconds to load in the emulated
# VM, so it loads while the fabric comes up and then decodes as the packets
# arrive from tcpdump through a FIFO (-l: a line each at once), keeping a
# copy of the capture.  A line a packet, the fields of FIELDS tab-separated,
# repeated ones comma-separated.
FIELDS=(frame.number ip.src udp.srcport udp.dstport udp.length mrc.ev mrc.type
	mrc.flags.fin mrc.flags.acknow mrc.flags.probe mrc.flags.sackx mrc.flags.dsack mrc.sport mrc.dport
	mrc.src_id mrc.dst_id mrc.psn mrc.ack_psn mrc.sack mrc.sack.psn mrc.len
	mrc.hs.cookie mrc.hs.slot mrc.hs.mss mrc.ack_ev _ws.malformed
	_ws.expert.severity mrc.burst mrc.burst.last_psn)
mkfifo "$out/fifo"
# shellcheck disable=SC2046
tshark -n -l -X "lua_script:$LUA" -r "$out/fifo" -w "$out/cap.pcap" -P -T fields \
	$(printf -- '-e %s ' "${FIELDS[@]}") > "$out/f" 2> "$out/tshark.err" &
tshark_pid=$!

fabric_up $SPINES || { echo "# cannot build the fabric"; exit 1; }
echo "# fabric up in $(since "$start") s"

# The capture is on a's link into the fabric, not on a spine: a spine sees
# only the EVs that hash onto it, and the handshake may take any of them.
# Headers only (the payload is the test pattern).  tcpdump opens the FIFO
# once tshark has loaded.
ip netns exec $NS_A tcpdump -i eth0 -n -s 160 -B 4096 -U -w "$out/fifo" udp \
	2> "$out/tcpdump.err" &
cap=$!
for i in $(seq 1 200); do grep -q listening "$out/tcpdump.err" && break; sleep 0.1; done
echo "# capturing at $(since "$start") s"

# The receiver of the transfer first: it opens b's tunnel socket, without
# which a SYN meets a closed UDP port instead of MRC's RST.
xfer_start $NS_B 7001 "$out/rx" || echo "# receiver did not start"

# No listener on 7099: the SYN gets a RST.
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7099 -n 1 -U 3000 > "$out/refused" 2>&1
echo "# refused: $(cat "$out/refused")"

# A stray datagram on the MRC port ("mrc fabric probe...": version 0x6d),
# from UDP port 40000: the one packet that must show as malformed.
ip netns exec $NS_A ./udp_spray $B4 4797 40000 1 1

# The transfer: 1.2 s over spines at 1 Mbit/s on 16 EVs, about 1500
# packets; spine 2 is dead from 0.3 s to 0.7 s: its EVs lose packets
# (retransmitted, SACKed around), are retired and probed.  Every packet on
# its own (burst-max 1), so that each frame is one packet; bursts below.
"$MRCCTL" -n $NS_A config set burst-max 1 || echo "# cannot set burst-max"
fabric_shape_all 1mbit -
ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7001 -n $((1 << 30)) -d 1.2 -e 16 > "$out/tx" &
tx=$!
sleep 0.3
fabric_blackhole 2
sleep 0.4
fabric_heal 2
wait $tx
wait_for $XFER_PID 10
echo "# transfer: $(tail -n 1 "$out/rx"); sender: $(cat "$out/tx")"
fabric_shape_all - -

# Bursts: 8 MiB unshaped with the default burst-max; captured on a's link,
# before any device cut them, a burst is one frame of several DATA packets.
"$MRCCTL" -n $NS_A config set burst-max 44
xfer_start $NS_B 7003 "$out/rx3" &&
	ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7003 -n $((8 << 20)) > "$out/tx3" &&
	wait_for $XFER_PID 20
echo "# bursts: $(tail -n 1 "$out/rx3")"

# A connection on UDP port 5555, which only the heuristic can claim.
heur=0
if [ -x "$MRCCTL" ] && "$MRCCTL" -n $NS_A config set udp-port 5555 &&
   "$MRCCTL" -n $NS_B config set udp-port 5555; then
	xfer_start $NS_B 7002 "$out/rx2" &&
	ip netns exec $NS_A ./mrc_xfer -c $B4 -p 7002 -n 20000 > "$out/tx2" &&
	wait_for $XFER_PID 10 && heur=1
	echo "# on UDP port 5555: $(tail -n 1 "$out/rx2")"
fi

# The end marker, a datagram from UDP port 40001 to 5555 (not MRC): once
# tshark has printed it, it has everything captured before.
ip netns exec $NS_A ./udp_spray $B4 5555 40001 1 1
t_done=$(since "$start")
for i in $(seq 1 300); do
	awk -F'\t' '$3 == 40001 { f = 1 } END { exit !f }' "$out/f" && break
	sleep 0.1
done
echo "# traffic done at $t_done s, tshark decoded it by $(since "$start") s"
kill $cap
wait $cap
wait_for $tshark_pid 30
rc=$?
sed 's/^/# tcpdump: /' "$out/tcpdump.err"
echo "# tshark: rc $rc, $(wc -l < "$out/f") packets"
grep -v "Running as user" "$out/tshark.err" | sed 's/^/# tshark: /'

# q [NAME=VALUE...] PROGRAM: awk over the decoded packets; f("mrc.psn") is a
# field, A and B the hosts' addresses, inc(psn, n) PSN arithmetic.
q() {
	local vars=()
	while [ $# -gt 1 ]; do vars+=(-v "$1"); shift; done
	awk -F'\t' -v A="$A4" -v B="$B4" -v names="${FIELDS[*]}" "${vars[@]}" '
		BEGIN { _n = split(names, _nm, " "); for (_i = 1; _i <= _n; _i++) col[_nm[_i]] = _i }
		function f(name) { return $(col[name]) }
		function inc(p, n) { return (p + n) % 4294967296 }
		'"$1" "$out/f"
}
# show LABEL PROGRAM: the first packets the condition PROGRAM selects
show() { q "$2 { if (++shown <= 2) print \"# $1: \" \$0 }"; }
data_a='f("mrc.type") == 4 && f("ip.src") == A && f("mrc.dport") == 7001'

npk=$(q 'f("mrc.type") != "" { n++ } END { print n + 0 }')
[ $rc -eq 0 ] && [ "$npk" -gt 200 ]
tap_result $(( $? == 0 )) "tshark loads mrc.lua and decodes the capture ($npk MRC packets)"

# The handshake: SYN, the stateless SYNACK with the cookie, the HSACK
# echoing it.
show SYN 'f("mrc.type") == 1'
read -r syn_id syn_psn <<< "$(q 'f("mrc.type") == 1 && f("ip.src") == A && f("mrc.dport") == 7001 &&
	f("mrc.dst_id") == "0x00000000" && f("udp.dstport") == 4797 &&
	f("mrc.ev") == f("udp.srcport") && f("mrc.len") == 0 {
		print f("mrc.src_id"), f("mrc.psn"); exit }')"
tap_result $(( ${#syn_id} == 10 )) "SYN a -> b: MRC port 7001, dst_id 0, UDP port 4797, EV the UDP source port"

show SYNACK 'f("mrc.type") == 2'
read -r srv_id cookie slot <<< "$(q id="$syn_id" p="${syn_psn:-0}" '
	f("mrc.type") == 2 && f("ip.src") == B && f("mrc.sport") == 7001 && f("mrc.dst_id") == id &&
	f("mrc.ack_psn") == inc(p, 1) && f("mrc.len") == 16 && f("mrc.hs.mss") > 0 &&
	f("mrc.hs.cookie") ~ /^0x/ { print f("mrc.src_id"), f("mrc.hs.cookie"), f("mrc.hs.slot"); exit }')"
tap_result $(( ${#srv_id} == 10 )) "SYNACK b -> a: to the SYN's ID, acks its PSN, cookie $cookie slot $slot and MSS decoded"

show HSACK 'f("mrc.type") == 3'
hsack=$(q id="$syn_id" sid="$srv_id" p="${syn_psn:-0}" c="$cookie" s="$slot" '
	f("mrc.type") == 3 && f("ip.src") == A && f("mrc.src_id") == id && f("mrc.dst_id") == sid &&
	f("mrc.psn") == p && f("mrc.len") == 16 && f("mrc.hs.cookie") == c &&
	f("mrc.hs.slot") == s { n++ } END { print n + 0 }')
tap_result $(( hsack > 0 && ${#cookie} == 18 )) "HSACK a -> b: echoes the SYNACK's cookie and slot"

# Data: PSNs from the SYN's + 1 to the FIN's without a gap, len as the UDP
# length says; the distinct PSNs' lengths add up to what the sender sent,
# and some PSN went twice.
show DATA "$data_a"
sent=$(kv "$out/tx" sent)
read -r ndata npsn bytes resent first badlen nev fin <<< "$(q "$data_a"' {
		n++; if (n == 1) first = f("mrc.psn")
		if (f("udp.length") - 8 - 48 != f("mrc.len")) bad++
		if (f("mrc.psn") in seen) re++; else { seen[f("mrc.psn")] = 1; bytes += f("mrc.len"); d++ }
		if (!(f("mrc.ev") in ev)) { ev[f("mrc.ev")] = 1; evs++ }
		if (f("mrc.flags.fin") == 1) fin = f("mrc.psn")
	} END { printf "%d %d %d %d %s %d %d %s\n", n, d, bytes, re, first, bad, evs, fin }')"
echo "# data a -> b: $ndata packets, $npsn PSNs from $first to FIN $fin, $bytes bytes (sent ${sent:-?}), $resent again, on $nev EVs"
[ "$ndata" -gt 100 ] && [ "$first" = "$(( (${syn_psn:-0} + 1) % 4294967296 ))" ] &&
	[ "$fin" = "$(( (first + npsn - 1) % 4294967296 ))" ] &&
	[ "$badlen" = 0 ] && [ "$bytes" = "${sent:-x}" ]
tap_result $(( $? == 0 )) "DATA: PSNs from the SYN's + 1 up to the FIN, len matches the UDP length, distinct PSNs carry all $sent bytes"
tap_result $(( resent > 0 )) "retransmissions: $resent DATA packets repeat a PSN"
q 'f("mrc.type") != "" && f("mrc.ev") != f("udp.srcport") { n++ } END { exit n > 0 }'
tap_result $(( $? == 0 && nev >= 8 )) "mrc.ev is the UDP source port; the data used $nev EVs"

# A SACK: b's ACK with a non-zero bitmap; each PSN it lists lies 1..64
# past ack_psn (1..64 x (1 + words) with SACKX's words: a flagged ACK's
# payload, a multiple of 8 bytes, before DSACK's 8 when flagged) and was
# sent by a before.
show SACK 'f("mrc.type") == 5 && (f("mrc.sack") != "0x0000000000000000" || f("mrc.flags.sackx") == 1)'
read -r nsack badsack nsackx nsackd <<< "$(q "$data_a"' { sent[f("mrc.psn")] = 1 }
	f("mrc.type") == 5 && f("ip.src") == B && f("mrc.sport") == 7001 &&
	(f("mrc.sack") != "0x0000000000000000" || f("mrc.flags.sackx") == 1) {
		n++; k = split(f("mrc.sack.psn"), ps, ",")
		lim = 64
		sl = f("mrc.len") - (f("mrc.flags.dsack") == 1 ? 8 : 0)
		if (f("mrc.flags.dsack") == 1) d++
		if (f("mrc.flags.sackx") == 1) {
			x++; lim = 64 * (1 + sl / 8)
			if (sl % 8 || sl < 8 || sl > 248) bad++
		} else if (sl != 0) bad++
		if (!k) bad++
		for (i = 1; i <= k; i++) {
			off = (ps[i] - f("mrc.ack_psn") + 4294967296) % 4294967296
			if (off < 1 || off > lim || !(ps[i] in sent)) bad++
		}
	} END { print n + 0, bad + 0, x + 0, d + 0 }')"
tap_result $(( nsack > 0 && badsack == 0 )) "ACKs with a SACK ($nsack, $nsackx with SACKX words, $nsackd with a DSACK echo): their PSNs follow ack_psn and were sent ($badsack wrong)"

# EV probes: a's ACKs flagged PROBE on retired EVs, and b's answers (PROBE
# and ACKNOW) naming a probed EV in ack_ev.
show PROBE 'f("mrc.type") == 5 && f("mrc.flags.probe") == 1'
read -r nprobe nanswer <<< "$(q 'f("mrc.type") == 5 && f("mrc.flags.probe") == 1 {
		if (f("ip.src") == A && f("mrc.flags.acknow") == 0) { probed[f("mrc.ev")] = 1; p++ }
		if (f("ip.src") == B && f("mrc.flags.acknow") == 1 && f("mrc.ack_ev") in probed) a++
	} END { print p + 0, a + 0 }')"
tap_result $(( nprobe > 0 && nanswer > 0 )) "EV probes: $nprobe from a, $nanswer answers from b echo a probed EV"

# The refused connection: b's RST from nobody (src_id 0) to the SYN's ID.
show RST 'f("mrc.type") == 6'
rst=$(q 'f("mrc.type") == 1 && f("ip.src") == A && f("mrc.dport") == 7099 { id = f("mrc.src_id"); p = f("mrc.psn") }
	f("mrc.type") == 6 && f("ip.src") == B && f("mrc.sport") == 7099 && f("mrc.src_id") == "0x00000000" &&
	id != "" && f("mrc.dst_id") == id && f("mrc.ack_psn") == inc(p, 1) { n++ } END { print n + 0 }')
tap_result $(( rst > 0 )) "RST b -> a for a SYN to a port without listener: src_id 0, to the SYN's ID, acks its PSN"

# Expert info: the stray datagram is malformed, nothing else has an error
# (a malformed header or a Lua error).
show STRAY 'f("udp.srcport") == 40000'
read -r stray others <<< "$(q 'f("udp.srcport") == 40000 && f("_ws.malformed") != "" { s++ }
	f("udp.srcport") != 40000 && (f("_ws.malformed") != "" || f("_ws.expert.severity") ~ /8388608/) {
		o++; if (o <= 3) print "# error: " $0 > "/dev/stderr" }
	END { print s + 0, o + 0 }')"
tap_result $(( stray == 1 )) "a stray datagram on port 4797 is flagged malformed"
tap_result $(( others == 0 && npk > 0 )) "no MRC packet of the kernel's is flagged malformed or in error ($others)"

# Bursts: a frame of N packets, its first header's PSN and len, the UDP
# length N headers and N-1 full lens plus the last's, and mrc.burst.last_psn
# N-1 past the first.
show BURST 'f("mrc.burst") > 1'
read -r nburst badburst <<< "$(q 'f("mrc.type") == 4 && f("ip.src") == A && f("mrc.dport") == 7003 &&
	f("mrc.burst") > 1 {
		n++; k = f("mrc.burst"); seg = 48 + f("mrc.len"); pay = f("udp.length") - 8
		if (pay <= (k - 1) * seg || pay > k * seg ||
		    f("mrc.burst.last_psn") != inc(f("mrc.psn"), k - 1)) bad++
	} END { print n + 0, bad + 0 }')"
tap_result $(( nburst > 0 && badburst == 0 )) "bursts: $nburst frames of several DATA packets decoded, sizes and PSNs consistent ($badburst not)"

# The heuristic: the connection on UDP port 5555 decodes as well.
if [ $heur = 1 ]; then
	show HEUR 'f("udp.dstport") == 5555'
	read -r hsyn hdata <<< "$(q 'f("udp.dstport") == 5555 && f("mrc.dport") == 7002 {
			if (f("mrc.type") == 1) s++; if (f("mrc.type") == 4 && f("mrc.len") > 0) d++ }
		END { print s + 0, d + 0 }')"
	tap_result $(( hsyn > 0 && hdata > 0 )) "on UDP port 5555 the heuristic decodes the SYN and $hdata DATA packets"
else
	tap_skip "heuristic on UDP port 5555" "mrcctl not built or udp-port not settable"
fi
show MARKER 'f("udp.srcport") == 40001'
q 'f("udp.srcport") == 40001 && f("mrc.type") == "" && f("_ws.malformed") == "" { n++ }
	END { exit n != 1 }'
tap_result $(( $? == 0 )) "the heuristic leaves a datagram on UDP port 5555 that is not MRC alone"

[ $tap_fail -gt 0 ] && [ -d /mrc-out ] && cp "$out/cap.pcap" "$out/f" /mrc-out/ 2>/dev/null
echo "# $(since "$start") s in all"
rm -rf "$out"
tap_done
