#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# mrc-agent (tools/agent): it traces the host's connections by itself and
# serves per-hop metrics that Prometheus's promtool accepts, with labels
# per peer and hop only.  On the leaf-spine fabric each EV is counted on
# exactly one spine's hop; with a spine blackholed, the EV retirements it
# attributes fall on that spine's hops and on no other spine's.  Its
# one-shot mode, privilege, options and SIGTERM are checked too.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
AGENT=$(cd ../../tools/agent && pwd)/mrc-agent
out=$(mktemp -d)
cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	fabric_down
	rm -rf "$out"
}
trap cleanup EXIT
SPINES=4

tap_plan 9
[ -x "$AGENT" ] || tap_setup_fail "$AGENT not built"
command -v curl > /dev/null && command -v promtool > /dev/null || tap_setup_fail "no curl or promtool"
fabric_up $SPINES || tap_setup_fail "cannot build the fabric"
fabric_traceable || tap_setup_fail "cannot set the routers' ICMP up for traces"

scrape() { ip netns exec $NS_A curl -sf http://127.0.0.1:9464/metrics > "$1"; }
# metric FILE NAME LABELS-REGEX: the sum of NAME's samples whose labels match
metric() {
	awk -v n="$2" -v re="$3" '$1 ~ "^" n "{" && $1 ~ re { s += $2 } END { print s + 0 }' "$1"
}
spine_hop() { echo "hop=\"10\\.1\\.$1\\.2\""; }

ip netns exec $NS_B ./mrc_hold -l -p 7501 > "$out/srv" 2>&1 &
wait_line "$out/srv" listening 100
ip netns exec $NS_A ./mrc_hold -c $B4 -p 7501 -t 3600 -r 256 -e 16 > "$out/cli" 2>&1 &
wait_line "$out/cli" "evs set" 100

ip netns exec $NS_A "$AGENT" -i 1 > "$out/agent" 2>&1 &
agent=$!
wait_line "$out/agent" "serving" 100
# every EV counted on one spine's hop and on l2's end of its link: the
# traces are done
for i in $(seq 1 60); do
	scrape "$out/m1" &&
		[ "$(metric "$out/m1" mrc_agent_hop_evs 'hop="10\.1\.[0-9]+\.2"')" -ge 16 ] &&
		[ "$(metric "$out/m1" mrc_agent_hop_evs 'hop="10\.2\.[0-9]+\.1"')" -ge 16 ] &&
		break
	sleep 0.5
done
sed -n '/^mrc_agent_hop_evs/p' "$out/m1" | sed 's/^/# /'
n=$(metric "$out/m1" mrc_agent_hop_evs 'hop="10\.1\.[0-9]+\.2"')
l1=$(metric "$out/m1" mrc_agent_hop_evs 'hop="10\.0\.1\.254"')
l2=$(metric "$out/m1" mrc_agent_hop_evs 'hop="10\.2\.[0-9]+\.1"')
bad=
for i in $(seq 1 $SPINES); do
	[ "$(metric "$out/m1" mrc_agent_hop_evs "$(spine_hop "$i")")" = \
	  "$(metric "$out/m1" mrc_agent_hop_evs "hop=\"10\\.2\\.$i\\.1\"")" ] || bad="$bad $i"
done
tap_result $(( n >= 16 && l1 == n && l2 == n && ${#bad} == 0 )) \
	"the agent traced the connection: its EVs (16 and any replacements) through l1 ($l1), on the spines' hops ($n), on l2's ends of the same links ($l2)${bad:+; spines that differ:$bad}"
promtool check metrics < "$out/m1" > "$out/promtool" 2>&1
tap_result $(( $? == 0 )) "promtool accepts the metrics$(head -c 200 "$out/promtool" | tr '\n' ' ')"
labels=$(grep -v '^#' "$out/m1" | grep -o '[a-z_]*=' | sort -u | xargs)
tap_result $(( $(grep -c '^mrc_agent_traced_connections 1$' "$out/m1") == 1 )) \
	"one connection traced; labels: $labels"
[ "$labels" = "attributed= hop= peer= state=" ]
tap_result $(( $? == 0 )) "labels per peer and hop only: no connection, no port"

# --- a dead spine: the retirements fall on its hops ---------------------------
victim=1 most=0
for i in $(seq 1 $SPINES); do
	c=$(metric "$out/m1" mrc_agent_hop_evs "$(spine_hop "$i").*state=\"active\"")
	[ "$c" -gt "$most" ] && victim=$i most=$c
done
fabric_blackhole "$victim"
# until the agent attributed a retirement (15 s at most), and 2 s more
for i in $(seq 1 30); do
	sleep 0.5
	scrape "$out/m2" &&
		[ "$(metric "$out/m2" mrc_agent_hop_ev_retirements_total "$(spine_hop "$victim")")" -gt 0 ] &&
		break
done
sleep 2
scrape "$out/m2"
fabric_heal "$victim"
grep '^mrc_agent_hop_ev_retirements_total\|^mrc_agent_ev_retirements_total' "$out/m2" | sed 's/^/# /'
dead=$(metric "$out/m2" mrc_agent_hop_ev_retirements_total "$(spine_hop "$victim")")
far=$(metric "$out/m2" mrc_agent_hop_ev_retirements_total "hop=\"10\\.2\\.$victim\\.1\"")
others=0
for i in $(seq 1 $SPINES); do
	[ "$i" = "$victim" ] && continue
	others=$((others + $(metric "$out/m2" mrc_agent_hop_ev_retirements_total "$(spine_hop "$i")")))
done
tap_result $(( dead > 0 && far == dead && others == 0 )) \
	"spine $victim blackholed: $dead retirements on its hops (l2's end: $far), $others on the other spines'"

# --- SIGTERM, one-shot mode, privilege, options --------------------------------
kill -TERM $agent
wait $agent
tap_result $(( $? == 0 )) "SIGTERM: the agent exits 0"
ip netns exec $NS_A "$AGENT" -1 -i 3 > "$out/once" 2> "$out/once.err"
rc=$?
promtool check metrics < "$out/once" > /dev/null 2>&1
tap_result $(( rc == 0 && $? == 0 && $(metric "$out/once" mrc_agent_hop_evs 'state="active"') > 0 )) \
	"-1: one round's metrics on stdout, accepted by promtool"
err=$(ip netns exec $NS_A unshare -U -r "$AGENT" -1 -i 1 2>&1 > /dev/null)
rc=$?
grep -q "^mrc-agent: cannot join the events group: Operation not permitted" <<< "$err"
tap_result $(( rc == 1 && $? == 0 )) "without CAP_NET_ADMIN over the namespace: exit 1 ($err)"
timeout 30 ip netns exec $NS_A "$AGENT" -t 9 -1 > /dev/null 2>&1
rc1=$?
timeout 30 ip netns exec $NS_A "$AGENT" -l nowhere > /dev/null 2>&1
tap_result $(( rc1 == 1 && $? == 1 )) "bad options (-t 9, -l nowhere): exit 1"
tap_done
