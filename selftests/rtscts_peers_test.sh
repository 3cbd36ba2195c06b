#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): one local user cannot fill an
# interface's peer table for the others, a full table of unresolved peers
# makes room for a new one, and such peers do not keep the timers busy
# (issue 20, R3). An ordinary process (uid 1000, no namespace: the host's
# interface, whose table every user of the node shares) puts to nids no
# host answers ARP for; before the fix each got a peer until max_peers,
# after which every other user's put to a new node failed at once, and
# each unresolved peer's timer fired every 20 ms.
#
#     default namespace (node a)              namespace b (node b)
#   va 10.0.0.1, nid 167772161   ---veth---   vb 10.0.0.2, nid 167772162
#   max_peers 64, user_peer_share 50 (the default): 32 peers per uid
#
#  1. ptlctl shows the table's caps (peers_max, peers_user_max);
#  2. uid 1000 puts to 64 bogus nids (10.0.0.100..): it gets at most 32
#     peers, its other puts fail at once; ptlctl peer show charges the
#     peers to uid 1000;
#  3. uid 1001 puts to node b: the put is delivered;
#  4. uid 1002 puts to 32 more bogus nids (10.0.0.200..): the table is
#     full, so peers unresolved for a second are evicted (peers_evicted)
#     and each of its puts gets a peer; then, node b forgotten (ptlctl
#     peer del) and its place taken by uid 1003, root's put to it is
#     delivered in a full table;
#  5. the timers of the unresolved peers: over PEERS_MEASURE_S seconds
#     their resolution tries (resolve_tries) stay below what retries
#     backing off to 1.28 s can make, and so do the ARP lookups (the
#     arp_cache statistics, counted on the unfixed code too: there a
#     fixed 20 ms retry made 50 tries per peer and second).
# Environment: PEERS_MEASURE_S (3).
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
putmany=$build/selftests/rtscts_putmany
measure_s=${PEERS_MEASURE_S:-3}
max_peers=64
share=32

diag() { echo "# $*"; }
# as UID CMD...: CMD as an ordinary user of the node (no namespace).
as() {
	local uid=$1

	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}
# field NAME LINE: the number after NAME in rtscts_putmany's line.
field() { echo "$2" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
# The ARP lookups of the default namespace, all CPUs (hex, a row each).
arp_lookups() {
	local hdr f i col=0 n=0

	{
		read -r -a hdr
		for i in "${!hdr[@]}"; do
			[ "${hdr[$i]}" = lookups ] && col=$i
		done
		while read -r -a f; do
			n=$((n + 16#${f[$col]}))
		done
	} </proc/net/stat/arp_cache
	echo "$n"
}

# user_peer_share is left at its default, 50.
netns_setup max_peers=$max_peers peer_timeout_ms=60000
report $? "two nodes: ptl_rtscts loaded with max_peers=$max_peers"

# 1. The table's state in ptlctl.
[ "$(a_iface peers_max)" = $max_peers ] &&
	[ "$(a_iface peers_user_max)" = $share ]
report $? "ptlctl iface show: peers_max $(a_iface peers_max), peers_user_max $(a_iface peers_user_max)"

# 2. One user's puts to nodes that do not exist.
out=$(as 1000 "$putmany" 0x0a000064 64 2000)
diag "uid 1000, 64 bogus nids: $out"
peers=$(a_iface peers)
[ -n "$peers" ] && [ "$peers" -le $share ] &&
	[ "$(field failed "$out")" = $((64 - share)) ]
report $? "uid 1000 holds at most $share peers (peers ${peers:-?}), its other puts fail at once ($out)"
mine=$("$ptlctl" -j peer show 2>/dev/null | grep -oE '"uid": *1000\b' | wc -l)
[ "$mine" -ge 1 ]
report $? "ptlctl peer show charges $mine peers to uid 1000"
"$ptlctl" -s iface show 0 | sed 's/^/#   /'

# 3. Another user's put to a real node.
out=$(as 1001 "$putmany" "$nid_b" 1 20000)
diag "uid 1001, node b: $out"
[ "$(field ok "$out")" = 1 ]
report $? "uid 1001's put to node b is delivered ($out)"

# 4. A full table: unresolved peers make room.
sleep 1.5	# RTSCTS_EVICT_GRACE: unresolved for a second
out=$(as 1002 "$putmany" 0x0a0000c8 $share 2000)
diag "uid 1002, $share bogus nids: $out, peers $(a_iface peers), evicted $(a_iface peers_evicted)"
[ "$(field failed "$out")" = 0 ] && [ "$(a_iface peers_evicted)" -ge 1 ]
report $? "a full table: uid 1002's puts each get a peer, unresolved ones evicted ($(a_iface peers_evicted))"
"$ptlctl" peer del "$nid_b" && as 1003 "$putmany" 0x0a0000f0 1 >/dev/null
out=$("$putmany" "$nid_b" 1 20000)
[ "$(a_iface peers)" -le $max_peers ] && [ "$(field ok "$out")" = 1 ]
report $? "node b forgotten, root's put to it in a full table is delivered ($out)"

# 5. What the unresolved peers cost in timer callbacks: each fire asks
# once (resolve_tries, and one ARP lookup here), and each ARP request
# sent costs a lookup at node b too (arp_process), the neighbour layer's
# own retransmissions more: the lookups are bounded at 4 per try.
unresolved=$(a_iface peers_unresolved)
: "${unresolved:=$(a_iface peers)}"	# a module without the gauge
sleep 3	# past the first, quick retries
n0=$(arp_lookups)
r0=$(a_iface resolve_tries)
t0=$(date +%s%N)
sleep "$measure_s"
n1=$(arp_lookups)
r1=$(a_iface resolve_tries)
ms=$((($(date +%s%N) - t0) / 1000000))
bound=$((${unresolved:-0} * (ms / 1280 + 2)))
diag "$unresolved unresolved peers in $ms ms: $((${r1:-0} - ${r0:-0})) resolution tries" \
	"(bound $bound), $((n1 - n0)) ARP lookups" \
	"($(((n1 - n0) * 1000 / (ms > 0 ? ms : 1)))/s, bound $((4 * bound)))"
[ "${unresolved:-0}" -gt 0 ] && [ -n "$r1" ] && [ $((r1 - r0)) -le "$bound" ] &&
	[ $((n1 - n0)) -le $((4 * bound)) ]
report $? "resolution retries of $unresolved unresolved peers back off to 1.28 s: $((${r1:-0} - ${r0:-0})) tries, $((n1 - n0)) ARP lookups in $ms ms"

netns_teardown
exit $((failures > 0))
