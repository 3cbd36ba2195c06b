#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): frames forged by a third host
# cannot make a node believe that its peer restarted, nor re-point the
# peer's link-layer address (issue 20, R4). Two forged ACKs claiming to
# come from node b in incarnations X and X + 2^31 (of two such, one is
# always "newer" than any incarnation) used to make node a fail what was
# in flight with b, drop b's genuine frames as stale, and send to the
# forger's MAC, learnt before the incarnation was checked. Now a claimed
# restart is checked with b itself (a CHALLENGE to b's known address,
# whose nonce b's CHALLENGE_ACK must echo), and addresses are learnt only
# from frames that passed every check.
#
#     default namespace (node a)              namespace b (node b)
#   va 10.0.0.1, nid 167772161   ---veth---   vb 10.0.0.2, nid 167772162
#                                             + ptl_inject on vb, from the
#                                               MAC of a third host
#
#  1. a and b exchange a put each way: a knows b's incarnation and MAC;
#  2. ptl_inject forge: two ACKs "from b" with incarnations X, X + 2^31,
#     from MAC 02:00:00:00:0c:0c: a keeps b's incarnation and MAC, counts
#     no restart, and challenged b;
#  3. puts both ways still complete;
#  4. b really restarts (its interface unbound and bound again): its put
#     to a completes, and a believes the new incarnation (one restart).
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
inject=$build/tools/ptl_inject/ptl_inject
putmany=$build/selftests/rtscts_putmany
forger_mac=02:00:00:00:0c:0c

diag() { echo "# $*"; }
jstr() { grep -oE "\"$1\": *\"[^\"]*\"" | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/'; }
# What node a knows of node b (its only peer).
a_peer() { "$ptlctl" -j peer show 2>/dev/null; }
# field NAME LINE: the number after NAME in rtscts_putmany's line.
field() { echo "$2" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
# put_ok FROM_NS TO_NID: one put, delivered within 20 s.
put_ok() {
	local out

	if [ "$1" = a ]; then
		out=$("$putmany" "$2" 1 20000)
	else
		out=$($ip netns exec "$1" "$putmany" "$2" 1 20000)
	fi
	diag "put from $1 to $2: $out"
	[ "$(field ok "$out")" = 1 ]
}

if [ ! -x "$inject" ]; then
	skip "forged restarts" "ptl_inject is not built"
	exit 0
fi

netns_setup peer_timeout_ms=10000
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 bound"
mac_a=$($ip link show va | awk '/link\/ether/ { print $2 }')
mac_b=$($ip -n b link show vb | awk '/link\/ether/ { print $2 }')

# 1. They know each other.
put_ok a "$nid_b" && put_ok b "$nid_a"
report $? "a put each way between a and b"
inc_b=$(a_peer | jnum incarnation)
diag "a knows b as incarnation $inc_b at $(a_peer | jstr lladdr) (b's MAC $mac_b)"

# 2. A third host claims that b restarted, twice.
x=$(((inc_b + 1000) & 0xffffffff))
y=$(((x + (1 << 31)) & 0xffffffff))
$ip netns exec b "$inject" forge -i vb --dst-nid "$nid_a" --dst-mac "$mac_a" \
	--src-nid "$nid_b" --src-mac "$forger_mac" --incs "$x,$y" | sed 's/^/# /'
report "${PIPESTATUS[0]}" "ptl_inject forge: ACKs from b's nid with incarnations $x and $y, from $forger_mac"
sleep 1
diag "a knows b as incarnation $(a_peer | jnum incarnation) at $(a_peer | jstr lladdr);" \
	"peer_restarts $(a_iface peer_restarts), challenges $(a_iface challenges)"
[ "$(a_peer | jnum incarnation)" = "$inc_b" ]
report $? "a still believes b's incarnation ($(a_peer | jnum incarnation), was $inc_b)"
[ "$(a_peer | jstr lladdr)" = "$mac_b" ]
report $? "a still sends to b's MAC ($(a_peer | jstr lladdr), b's $mac_b)"
[ "$(a_iface peer_restarts)" = 0 ] && [ "$(a_iface challenges)" -ge 1 ]
report $? "no restart counted ($(a_iface peer_restarts)); b was challenged ($(a_iface challenges))"

# 3. Nothing broke.
put_ok a "$nid_b" && put_ok b "$nid_a"
report $? "after the forgery, puts both ways complete"

# 4. A genuine restart is still believed.
$ip netns exec b "$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface bind 0 dev vb
report $? "node b restarts: its interface unbound and bound again"
put_ok b "$nid_a"
report $? "b's put to a after its restart completes"
inc_now=$(a_peer | jnum incarnation)
[ -n "$inc_now" ] && [ "$inc_now" != "$inc_b" ] && [ "$(a_iface peer_restarts)" = 1 ]
report $? "a believes b's new incarnation ($inc_now, was $inc_b; peer_restarts $(a_iface peer_restarts))"
put_ok a "$nid_b"
report $? "a's put to the restarted b completes"

netns_teardown
exit $((failures > 0))
