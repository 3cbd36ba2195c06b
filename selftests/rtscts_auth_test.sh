#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): authenticated frames (issue 20).
# Two nodes in two network namespaces joined by a veth pair (as
# run-net-tests.sh), each interface bound with a key (ptlctl iface bind
# ... key FILE):
#
#     default namespace (node a)              namespace b (node b)
#   va 10.0.0.1, key K   ------------veth------------   vb 10.0.0.2, key K
#                    ^ ptl_inject: frames without a tag, with a made-up tag
#
#  1. without a key, ptlctl iface show says "unauthenticated"; with one it
#     names the MAC and never shows the key; a key file others can read
#     is refused; an MTU too small for a tag is refused;
#  2. ptl_stress between the two (0 B .. 1 MiB, each message verified) on
#     a clean link and under netem loss, reordering, duplication and
#     corruption (a corrupted frame fails its tag: dropped, counted, sent
#     again);
#  3. node b with another key, then with none: a's puts to b fail as to an
#     unreachable node, and b counts a's frames in auth_failed, keeping no
#     state for a;
#  4. forged frames (ptl_inject) at node a: valid frames without a tag, and
#     with the AUTH flag and a tag made without the key: all dropped and
#     counted in auth_failed, no peer made for their sender.
# Before issue 20 there was no key (ptlctl iface bind ... key: EINVAL from
# ptl.ko's strict attribute policy) and ptl_inject's frames made peers.
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
inject=$build/tools/ptl_inject/ptl_inject
# Short for the nodes that cannot deliver (part 3); the traffic of part 2
# gets run-net-tests.sh's 10 s: a tag costs time under TCG.
peer_timeout_ms=2000

keys=$(mktemp -d)
trap 'rm -rf "$keys"' EXIT
# newkey FILE BYTE: 32 bytes of BYTE as 64 hex digits, mode 600.
newkey() {
	(umask 077 && printf "%064d\n" 0 | tr 0 "$2" >"$1")
}
newkey "$keys/k" 7
newkey "$keys/other" 9
# bind_a/bind_b [key FILE]: interface 0 of node a/b bound again.
bind_a() { "$ptlctl" iface unbind 0 && "$ptlctl" iface bind 0 dev va "$@"; }
bind_b() {
	$ip netns exec b "$ptlctl" iface unbind 0 2>/dev/null
	$ip netns exec b "$ptlctl" iface bind 0 dev vb "$@"
}

netns_setup peer_timeout_ms=$peer_timeout_ms
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 of each bound to its veth end"

# 1. What ptlctl says and refuses.
"$ptlctl" iface show 0 | grep -q unauthenticated
report $? "without a key, ptlctl iface show says unauthenticated"
bind_a key "$keys/k" && bind_b key "$keys/k"
report $? "both interfaces bound again with the same key"
shown=$("$ptlctl" -s iface show 0; "$ptlctl" -j -s iface show 0)
grep -q "auth hmac(sha256)" <<<"$shown" && ! grep -q unauthenticated <<<"$shown" &&
	grep -q '"auth":"hmac(sha256)"' <<<"$shown"
report $? "with a key, ptlctl iface show names the MAC (text and JSON)"
! grep -qi "0707070707" <<<"$shown"
report $? "the key is not shown back"
cp -p "$keys/k" "$keys/open" && chmod 644 "$keys/open"
out=$($ip netns exec b sh -c "'$ptlctl' iface unbind 0; '$ptlctl' iface bind 0 dev vb key '$keys/open'" 2>&1)
rc=$?
echo "# $out"
[ $rc -ne 0 ] && grep -q "group or others may read it" <<<"$out"
report $? "a key file others may read is refused"
bind_b key "$keys/k"
report $? "node b bound again with the key"
$ip link set va mtu 170 2>/dev/null
[ $? -ne 0 ] && [ "$("$ptlctl" -j iface show 0 | jnum mtu)" = 1500 ]
report $? "an MTU without room for a tag (170 < 185) is refused on a keyed interface"

# 2. Traffic, every message verified at both ends.
stress_pair() {	# stress_pair NAME COUNT
	local server rc=0

	$ip netns exec b "$stress" server --pid 77 --clients 1 \
		--timeout-ms 60000 --quiet &
	server=$!
	peer_events_record
	sleep 0.5
	"$stress" client --server "$nid_b:77" --id 0 --count "$2" \
		--max-size 1M --seed 1 --timeout-ms 60000 --quiet || rc=1
	wait "$server" || rc=1
	if [ $rc != 0 ]; then
		peers_show
		peer_events_show
	fi
	report $rc "$1"
}
echo 10000 >/sys/module/ptl_rtscts/parameters/peer_timeout_ms
fail0=$(b_iface auth_failed)
stress_pair "authenticated: ptl_stress 0 B .. 1 MiB on a clean link" 100
[ "$(b_iface auth_failed)" = "$fail0" ] && [ "$(a_iface auth_failed)" = 0 ]
report $? "no frame failed its tag on a clean link"
$ip link set va mtu 9000 && $ip -n b link set vb mtu 9000 &&
	$tc qdisc add dev va root netem loss 5% reorder 5% delay 1ms duplicate 1% corrupt 0.1% &&
	$ip netns exec b $tc qdisc add dev vb root netem loss 5% reorder 5% \
		delay 1ms duplicate 1% corrupt 0.1%
report $? "MTU 9000, netem on both ends: loss 5%, reordering 5%, duplication 1%, corruption 0.1%"
stress_pair "authenticated: ptl_stress 0 B .. 1 MiB under netem" 150
echo "# auth_failed under netem (corrupted frames): a $(a_iface auth_failed), b $(b_iface auth_failed)"
$tc qdisc del dev va root
$ip netns exec b $tc qdisc del dev vb root

# 3. A node with another key, or none, cannot deliver.
echo $peer_timeout_ms >/sys/module/ptl_rtscts/parameters/peer_timeout_ms
cannot_deliver() {	# cannot_deliver WHAT
	local before t0 rc ms

	before=$(b_iface auth_failed)
	t0=$(date +%s%N)
	"$stress" client --server "$nid_b:77" --id 0 --count 1 --max-size 1K \
		--seed 1 --timeout-ms $((peer_timeout_ms * 5)) --quiet 2>/dev/null
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "# client status $rc after $ms ms; b: auth_failed $before -> $(b_iface auth_failed), peers $(b_iface peers)"
	[ $rc -ne 0 ] && [ "$(b_iface auth_failed)" -gt "$before" ] &&
		[ "$(b_iface peers)" = 0 ]
	report $? "$1: a's operation fails, b drops and counts a's frames and keeps no peer for a"
}
bind_b key "$keys/other"
report $? "node b bound with another key"
cannot_deliver "b with another key"
bind_b
report $? "node b bound without a key"
cannot_deliver "b without a key"

# 4. Forged frames at node a (keyed): no tag, then a tag made without the key.
peers0=$(a_iface peers)
fail0=$(a_iface auth_failed)
bad0=$(a_iface bad_frames)
$ip netns exec b "$inject" flood -i vb --dst-nid "$nid_a" --src-nid 10.0.0.9 \
	--count 50 --what msg >/dev/null &&
	$ip netns exec b "$inject" flood -i vb --dst-nid "$nid_a" --src-nid 10.0.0.8 \
		--count 50 --what msg-tagged >/dev/null
report $? "ptl_inject sent 50 valid MSGs without a tag and 50 with a made-up tag"
sleep 0.5
# Read once: a's peer for b, left by step 3, may go meanwhile (it was
# given up), so no peer made means none more than before.
fail1=$(a_iface auth_failed) bad1=$(a_iface bad_frames) peers1=$(a_iface peers)
echo "# a: auth_failed $fail0 -> $fail1, bad_frames $bad0 -> $bad1, peers $peers0 -> $peers1"
[ "$fail1" -ge $((fail0 + 100)) ] && [ "$peers1" -le "$peers0" ] && [ "$bad1" = "$bad0" ]
report $? "forged frames are dropped and counted in auth_failed, no peer made"

# Unbinding frees the key with its transform (kfree_sensitive).
netns_teardown
exit $((failures > 0))
