#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Per-EV path discovery (mrcctl trace, ev-trace over netlink): each EV of a
# connection is traced with probes on its own UDP 5-tuple and TTL 1, 2, ...
# On the leaf-spine fabric every EV must reach the peer as hop 4 through
# l1, one spine and l2, and the spine a trace names must be the one the
# EV's packets take: with that spine blackholed, the EVs retired are those
# traced through it.  Replacements are traced as they appear; IPv6 too; a
# TTL limit ends a trace short of the peer; errors and privilege are
# checked.  The routers answer from the address of the link a probe came
# in on (icmp_errors_use_inbound_ifaddr) and without ICMP rate limits, as
# an operator configures a fabric for path tracing.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
MRCCTL=$(cd ../../tools/mrcctl && pwd)/mrcctl
out=$(mktemp -d)
cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	fabric_down
	rm -rf "$out"
}
trap cleanup EXIT
mrcctl() { "$MRCCTL" "$@"; }
SPINES=4

tap_plan 12
[ -x "$MRCCTL" ] || tap_setup_fail "$MRCCTL not built"
command -v jq > /dev/null || tap_setup_fail "no jq"
fabric_up $SPINES || tap_setup_fail "cannot build the fabric"
fabric_traceable || tap_setup_fail "cannot set the routers' ICMP up for traces"

# conn_id NS FAMILY: the local ID (decimal) of NS's established connection
conn_id() {
	mrcctl -n "$1" -j conn show |
		jq -r --argjson f "$2" '[.[] | select(.state == "established" and .family == $f)][0].local_id // empty'
}
# traced ID FILE: the finished traces of connection ID as JSON in FILE
traced() {
	mrcctl -n $NS_A -j trace show "$1" -w > "$2"
}

ip netns exec $NS_B ./mrc_hold -l -p 7401 > "$out/srv" 2>&1 &
wait_line "$out/srv" listening 100
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7401 -t 120 -r 256 -e 16 > "$out/cli" 2>&1 &
cli=$!
wait_line "$out/cli" "evs set" 100
iddec=$(conn_id $NS_A 2)
[ -n "$iddec" ] || tap_setup_fail "no connection to trace"
id=$(printf '%08x' "$iddec")
probes0=$(mrc_stat $NS_A TxTraceProbes) hops0=$(mrc_stat $NS_A RxTraceHops)
unreach0=$(mrc_stat $NS_A RxIcmpUnreachable)

# --- errors and privilege, before the first trace --------------------------
mrcctl -n $NS_A trace show "$id" > /dev/null 2> "$out/err"
rc=$?
tap_result $(( rc != 0 )) "trace show of a connection never traced fails: $(head -c 120 "$out/err")"
err=$(ip netns exec $NS_A unshare -U -r "$MRCCTL" trace start "$id" 2>&1)
rc=$?
grep -q "Operation not permitted" <<< "$err"
tap_result $(( rc != 0 && $? == 0 )) "trace start needs CAP_NET_ADMIN over the namespace ($err)"
mrcctl -n $NS_A trace start ffffffff > /dev/null 2> "$out/err"
rc=$?
grep -q "No such file" "$out/err"
tap_result $(( rc != 0 && $? == 0 )) "trace start of no connection: ENOENT ($(head -c 100 "$out/err"))"
mrcctl -n $NS_A trace start "$id" max-ttl 9 > /dev/null 2>&1
tap_result $(( $? != 0 )) "max-ttl above 8 is refused"

# --- every EV reaches the peer through l1, one spine, l2 -------------------
mrcctl -n $NS_A trace start "$id"
tap_result $(( $? == 0 )) "trace start $id"
traced "$id" "$out/t1.json"
mrcctl -n $NS_A trace show "$id" | sed 's/^/# /'
# per EV: port, state, hops, hop addresses; the spine is hop 2's 10.1.I.2,
# and l2 answers from 10.2.I.1, the end of the same spine's link
jq -r '.evs[] | [.port, .state, (.hops | length), (.hops | map(.addr // "*") | join(" "))] |
	@tsv' "$out/t1.json" > "$out/evs1"
bad=$(awk -F'\t' '{ split($4, h, " ")
	sp = h[2]; sub(/^10\.1\./, "", sp); sub(/\.2$/, "", sp)
	if ($2 != "reached" || $3 != 3 || h[1] != "10.0.1.254" || h[2] !~ /^10\.1\.[0-9]+\.2$/ ||
	    h[3] != "10.2." sp ".1") print $1 }' "$out/evs1" | xargs)
n=$(wc -l < "$out/evs1")
tap_result $(( n >= 16 && ${#bad} == 0 )) "$n EVs traced: each reached the peer as hop 4 via 10.0.1.254, spine I (10.1.I.2), l2 (10.2.I.1)${bad:+; wrong: $bad}"
awk -F'\t' '{ split($4, h, " "); s[h[2]]++ } END { for (k in s) printf "# spine %s: %d EVs\n", k, s[k] }' \
	"$out/evs1" | sort
spines_used=$(awk -F'\t' '{ split($4, h, " "); print h[2] }' "$out/evs1" | sort -u | wc -l)
tap_result $(( spines_used >= 2 )) "the EVs spread over $spines_used spines"
probes=$(( $(mrc_stat $NS_A TxTraceProbes) - probes0 ))
hops=$(( $(mrc_stat $NS_A RxTraceHops) - hops0 ))
unreach=$(( $(mrc_stat $NS_A RxIcmpUnreachable) - unreach0 ))
tap_result $(( hops == 3 * n && probes >= 4 * n && unreach == 0 )) \
	"counted: TxTraceProbes +$probes, RxTraceHops +$hops (3 a trace), RxIcmpUnreachable +$unreach"

# --- the spine a trace names is the one the EV's packets cross -------------
victim=$(awk -F'\t' '{ split($4, h, " "); print h[2] }' "$out/evs1" | sort | uniq -c | sort -rn |
	awk 'NR == 1 { split($2, a, "."); print a[3] }')
through=$(awk -F'\t' -v s="10.1.$victim.2" '{ split($4, h, " "); if (h[2] == s) print $1 }' \
	"$out/evs1" | sort -n | xargs)
fabric_blackhole "$victim"
sleep 3
retired=$(mrcctl -n $NS_A -j conn show -e | jq -r --argjson id "$iddec" \
	'.[] | select(.local_id == $id) | .evs[] | select(.state == "retired") | .port' | sort -n | xargs)
# Of the EVs traced before, those retired; a replacement drawn meanwhile
# may die on the spine too, and was never in that trace (the next case).
# (no process substitution: the guest has no /dev/fd)
old=$(for p in $retired; do grep -q "^$p	" "$out/evs1" && echo "$p"; done | xargs)
outside=$(for p in $old; do [[ " $through " == *" $p "* ]] || echo "$p"; done | xargs)
tap_result $(( ${#old} > 0 && ${#outside} == 0 )) \
	"spine $victim blackholed: the traced EVs retired ($old) were traced through it ($through)${outside:+; not: $outside}"

# --- replacements are traced as they appear --------------------------------
# Still blackholed (a re-admission after the heal ends the replacements):
# each active EV drawn since reached the peer through another spine, or,
# drawn through the dead one, stopped at l1 before it.
traced "$id" "$out/t2.json"
mrcctl -n $NS_A -j conn show -e | jq -r --argjson id "$iddec" \
	'.[] | select(.local_id == $id) | .evs[] | select(.state == "active") | .port' > "$out/active2"
fabric_heal "$victim"
new=$(while read -r p; do grep -q "^$p	" "$out/evs1" || echo "$p"; done < "$out/active2" | xargs)
jq -r '"# traces while blackholed: " + ([.evs[] | "\(.port):\(.state):\(.hops | map(.addr // "*") | join(","))"] | join(" "))' \
	"$out/t2.json"
bad=$(for p in $new; do
	jq -r --argjson p "$p" --arg dead "10.1.$victim.2" '[.evs[] | select(.port == $p)][0] // {state: "missing"} |
		select(not ((.state == "reached" and (.hops | length) == 3 and .hops[1].addr != $dead) or
			    (.state == "unreached" and (.hops | length) == 1 and .hops[0].addr == "10.0.1.254"))) |
		"\($p):\(.state)"' "$out/t2.json"
done | xargs)
tap_result $(( ${#new} > 0 && ${#bad} == 0 )) \
	"the EVs drawn meanwhile ($new) were traced: around spine $victim, or cut at it${bad:+; not: $bad}"

# --- a TTL limit ends a trace short of the peer ----------------------------
# (a retired EV keeps the trace it had: only the active ones are traced)
mrcctl -n $NS_A trace start "$id" max-ttl 2 && traced "$id" "$out/t3.json"
active=$(mrcctl -n $NS_A -j conn show -e | jq -c --argjson id "$iddec" \
	'[.[] | select(.local_id == $id) | .evs[] | select(.state == "active") | .port]')
bad=$(jq -r --argjson a "$active" '.evs[] | select(.port as $p | $a | index($p)) |
	select(.state != "unreached" or (.hops | length) != 2) | .port' "$out/t3.json" | xargs)
n3=$(jq -r --argjson a "$active" '[.evs[] | select(.port as $p | $a | index($p))] | length' \
	"$out/t3.json")
tap_result $(( ${n3:-0} >= 16 && ${#bad} == 0 )) \
	"max-ttl 2: each of the $n3 active EVs' traces ends unreached after l1 and a spine${bad:+; not: $bad}"

# --- IPv6 --------------------------------------------------------------------
ip netns exec $NS_B ./mrc_hold -l -6 -p 7402 > "$out/srv6" 2>&1 &
wait_line "$out/srv6" listening 100
ip netns exec $NS_A ./mrc_hold -c $B6 -p 7402 -t 120 -r 64 -e 8 > "$out/cli6" 2>&1 &
wait_line "$out/cli6" "evs set" 100
id6=$(conn_id $NS_A 10)
[ -n "$id6" ] && id6=$(printf '%08x' "$id6")
mrcctl -n $NS_A trace start "$id6" && traced "$id6" "$out/t6.json"
mrcctl -n $NS_A trace show "$id6" | sed 's/^/# /'
bad=$(jq -r '.evs[] | select(.state != "reached" or (.hops | length) != 3 or
	(.hops[1].addr | test("^fd01:[0-9]+::2$") | not)) | .port' "$out/t6.json" | xargs)
tap_result $(( ${#id6} > 0 && $(jq '.evs | length' "$out/t6.json" 2>/dev/null || echo 0) >= 8 &&
	${#bad} == 0 )) "IPv6: every EV reached as hop 4 through a spine (fd01:I::2)${bad:+; not: $bad}"
kill $cli 2>/dev/null
tap_done
