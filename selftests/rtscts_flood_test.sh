#!/bin/bash
# shellcheck disable=SC2317 # the functions that wait_for calls
# Runs inside a test guest (tools/testing/vm/run): two nodes that flood
# each other with puts asking for ACKs, at once. Each put makes its target
# queue an ACK, which goes back on the target's own stream behind the
# target's puts. ptl_rtscts used to take at most 256 such responses queued
# per peer and refuse the peer's next frames past that; with both nodes
# past it, each one's ACKs sat behind frames the other refused, neither
# queue drained, and both waited for the peer timeout, which failed
# hundreds of operations (the 4-rank mpi_unexpected hang of issue 22). Now
# a sender frames at most 256 requests beyond what the receiver is done
# with (the grant in every frame, rtscts/credit.c), and responses pass
# requests that wait for it:
#
#     default namespace (node a)              namespace b (node b)
#   rtscts_flood: FLOOD_COUNT puts  <-veth->  rtscts_flood: FLOOD_COUNT puts
#   with ACK_REQ to node b                    with ACK_REQ to node a
#
#  1. both start together; every put ends well (SEND_END and ACK) and
#     every put arrives (PUT_END) on both nodes, within FLOOD_WAIT_MS,
#     which is far below what the peer timeout would have taken;
#  2. no operation failed (msgs_failed 0), no request was refused for
#     credit (credit_refused 0: neither sender ignored a grant), and the
#     senders did wait for credit (credit_waits > 0: the flood reached the
#     limit this test is about);
#  3. the same with 300 puts of 64 KiB each way, which go by RTS/CTS
#     (past eager_max) in many frames each;
#  4. nothing is left behind; the modules unload.
# The link delays frames by 10 ms each way, and the window is 1024
# frames, so that each node has far more puts in flight than the credit.
# Environment: FLOOD_COUNT (2000), FLOOD_WAIT_MS (60000).
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
flood=$build/selftests/rtscts_flood
count=${FLOOD_COUNT:-2000}
wait_ms=${FLOOD_WAIT_MS:-60000}
timeout_ms=30000
dir=$(mktemp -d /tmp/ptl-flood.XXXXXX)

# iface NODE KEY: a counter of interface 0 of node a or b.
iface() {
	if [ "$1" = a ]; then
		"$ptlctl" -j -s iface show 0 | jnum "$2"
	else
		$ip netns exec b "$ptlctl" -j -s iface show 0 | jnum "$2"
	fi
}
both_ready() { grep -q ready "$dir/a.out" && grep -q ready "$dir/b.out"; }

# flood NAME COUNT SIZE: both nodes put COUNT messages of SIZE bytes at once.
flood() {
	local name=$1 count=$2 size=$3 pa pb ra rb failed0_a failed0_b

	failed0_a=$(iface a msgs_failed)
	failed0_b=$(iface b msgs_failed)
	rm -f "$dir/go"
	"$flood" "$nid_b" "$count" "$size" "$wait_ms" "$dir/go" >"$dir/a.out" 2>&1 &
	pa=$!
	$ip netns exec b "$flood" "$nid_a" "$count" "$size" "$wait_ms" "$dir/go" \
		>"$dir/b.out" 2>&1 &
	pb=$!
	wait_for 60 both_ready
	report $? "$name: both nodes listen"
	touch "$dir/go"
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	echo "# node a: $(grep sent "$dir/a.out")"
	echo "# node b: $(grep sent "$dir/b.out")"
	[ $ra = 0 ] && [ $rb = 0 ]
	report $? "$name: $count puts of $size B with ACK_REQ each way, at once: every one ended well and arrived"
	[ "$(iface a msgs_failed)" = "$failed0_a" ] &&
		[ "$(iface b msgs_failed)" = "$failed0_b" ]
	report $? "$name: no operation failed (msgs_failed a $(iface a msgs_failed), b $(iface b msgs_failed))"
	[ "$(iface a credit_refused)" = 0 ] && [ "$(iface b credit_refused)" = 0 ]
	report $? "$name: no request refused for credit (a $(iface a credit_refused), b $(iface b credit_refused))"
}

if [ ! -x "$flood" ]; then
	skip "two nodes flooding each other" "rtscts_flood is not built"
	exit 0
fi

# 10 ms each way and a window of 1024 frames: a sender has far more than
# 256 puts in flight before the first ACK can come back, as on a long
# link, so the credit is what holds it.
netns_setup peer_timeout_ms=$timeout_ms max_window=1024
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 bound (peer timeout $timeout_ms ms, window 1024 frames)"
$tc qdisc add dev va root netem delay 10ms limit 100000 &&
	$ip netns exec b $tc qdisc add dev vb root netem delay 10ms limit 100000
report $? "netem: 10 ms each way"
counters_save

flood "eager" "$count" 64
waits_a=$(iface a credit_waits)
waits_b=$(iface b credit_waits)
waits=$((${waits_a:-0} + ${waits_b:-0}))
# The flood reaches the credit (256 requests) only if a sender posts 256
# puts within about a round trip (20 ms). A debug kernel on a loaded host
# can post slower than that: then there is nothing this check can show.
posted=$(grep -ohE 'posted_ms [0-9]+' "$dir/a.out" "$dir/b.out" |
	awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
if [ "$waits" -eq 0 ] && [ $((posted * 256)) -gt $((count * 20)) ]; then
	skip "eager: the senders waited for credit" \
		"posting $count puts took $posted ms: slower than 256 per 20 ms round trip"
else
	[ "$waits" -gt 0 ]
	report $? "eager: the senders waited for credit ($waits requests waited;" \
		"posting took at most $posted ms)"
fi

flood "RTS/CTS" 300 65536

$tc qdisc del dev va root && $ip netns exec b $tc qdisc del dev vb root
report $? "netem removed"
sleep 1
counters_back
report $? "module counters are back where they were"
netns_teardown
rm -rf "$dir"
exit $((failures > 0))
