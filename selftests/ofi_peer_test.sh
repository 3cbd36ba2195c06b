#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A dead peer never hangs a send of the ptl libfabric provider: two Portals
# nodes in one guest (netns_lib.sh: two namespaces, a veth, ptl_rtscts with
# a 2 s peer timeout), a receiver in namespace b that never receives
# (build/ofi/tests/fi_ptl_peer serve) and a long send to it from the
# default namespace, which waits for the receiver to pull its data. Then
#  1. the receiver's process is killed: the probes the sender's provider
#     sends are dropped at node b, and after FI_PTL_PROBE_TIMEOUT (3 s here)
#     the send ends with FI_ETIMEDOUT;
#  2. the link goes down: the transport fails the probe within its peer
#     timeout and the send ends with FI_EHOSTUNREACH.
# Both within the probe interval plus the timeout (+4 s of slack). Then
# two cases of sends held in the transport while the link is down (3 and
# 4 below), a receiver given up while it holds headers (5), and nothing
# of either process is left in ptl.ko. Prints TAP lines.
#   tools/testing/vm/run --smp 2 -- selftests/ofi_peer_test.sh
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
tap_numbered=1
peer=$build/ofi/tests/fi_ptl_peer
export FI_PROVIDER_PATH=$build/ofi FI_PROVIDER=ptl
export FI_PTL_PROBE_INTERVAL=500 FI_PTL_PROBE_TIMEOUT=3000
limit_ms=$((500 + 3000 + 4000))
scratch=$(mktemp -d)

if [ ! -x "$peer" ]; then
	report 1 "$peer is built (make user)"
	echo "1..$tap_count"
	exit 1
fi
netns_setup peer_timeout_ms=2000
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 of each bound"
counters_save

# run_case NAME EXPECTED_ERROR ACTION: a serve in b, a 64 KiB send to it
# (past the 8 KiB eager size: the receiver must pull it), ACTION (kill:
# the receiver; link-down: va) once the send is out, then the send's
# completion within limit_ms of the action (timed here: the sender's own
# figure, from its fi_tsend, also holds this script's wait and sleep,
# seconds on a slow guest).
run_case() {
	local name=$1 expected=$2 action=$3 server sender addr=$scratch/$1.addr out=$scratch/$1.out t0
	$ip netns exec b "$peer" serve "$addr" &
	server=$!
	wait_for 5 test -s "$addr"
	"$peer" send "$addr" 65536 >"$out" 2>&1 &
	sender=$!
	wait_for 5 grep -q '^sent' "$out"
	sleep 1 # the send waits on the receiver now
	t0=$(date +%s%N)
	case $action in
	kill) kill -KILL "$server" ;;
	link-down) $ip link set va down ;;
	esac
	wait "$sender"
	local rc=$? line ms
	ms=$((($(date +%s%N) - t0) / 1000000))
	line=$(grep '^completion' "$out")
	sed 's/^/# /' "$out"
	[ $rc -eq 0 ] && grep -q "ERROR $expected" <<<"$line" && [ "$ms" -le $limit_ms ]
	report $? "$name: the send ends with $expected within $limit_ms ms of the $action ($ms ms)"
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
}

run_case receiver-killed "Connection timed out" kill
run_case link-down "No route to host" link-down
$ip link set va up

# 3. A link down for longer than the probe timeout (3 s), not for the
# transport's peer timeout (30 s here): 200 eager sends of 1 KiB wait on
# the receiver's ACKs and make the sender probe it, but a probe's clock
# starts when the transport has delivered it, so nobody is given up:
# every send completes and every message arrives intact once the link is
# back. Before probes were timed from delivery (a get timed from its
# issue), the probe timed out in the transport's queue and all 200 sends
# ended with an error.
params=/sys/module/ptl_rtscts/parameters
echo 30000 >$params/peer_timeout_ms
held_case() {
	local name=$1 mode=$2 addr=$scratch/$1.addr receiver sender rc
	$ip netns exec b "$peer" recv "$addr" 200 1024 >"$scratch/$name.recv" 2>&1 &
	receiver=$!
	wait_for 5 test -s "$addr"
	$ip link set va down
	# shellcheck disable=SC2086 # $mode: no word or one
	"$peer" burst "$addr" 200 1024 $mode >"$scratch/$name.send" 2>&1 &
	sender=$!
	if [ -n "$mode" ]; then
		wait_for 10 grep -q '^closed' "$scratch/$name.send"
	else
		sleep 6
	fi
	$ip link set va up
	wait "$receiver"
	rc=$?
	[ -z "$mode" ] && wait_for 30 grep -q '^overwritten' "$scratch/$name.send"
	sed 's/^/# /' "$scratch/$name.send" "$scratch/$name.recv"
	kill "$sender" 2>/dev/null
	wait "$sender" 2>/dev/null
	[ $rc -eq 0 ] && grep -q '^received 200 of 200, 0 bad' "$scratch/$name.recv"
}
held_case slow-link ""
rc=$?
grep -q '^completions: 200, 0 of them errors' "$scratch/slow-link.send"
report $((rc | $?)) "link down 6 s: no peer given up, all 200 sends complete and arrive intact"

# 4. The sender closes its endpoint while the transport still holds the
# 200 sends (the link down), then fills 800 fresh allocations of their
# size with 0xee. The link comes back and the transport sends what it
# held: every message must arrive intact, because memory the kernel still
# uses (bounce buffer, spilled copies) goes to the domain at the close and
# is freed only after PtlNIFini.
held_case closed close
report $? "endpoint closed under held sends: all 200 arrive intact when the link is back"
echo 2000 >$params/peer_timeout_ms

# 5. A receiver given up while it still holds headers of messages whose
# data it has not asked for: 200 eager sends of 8000 bytes to a receiver
# that posts nothing yet. Its heap takes 64; 136 leave only their header
# and wait at the sender in bounce slots, and in spilled copies once the
# 128 slots are taken (8 in the first run). The link goes down until the
# sender's transport gives the receiver up (2 s): the sender fails what
# waits on it and frees the spills. The link comes back and the receiver posts its 200 receives:
# the slots' data comes, and a request for a freed spill is answered
# "gone", so every receive ends, those with FI_ECONNABORTED. The sender
# used to ignore such a request: the receive then waited on a peer that
# answered its probes, until one probe, timed from its issue, happened to
# wait 3 s in the transport (the provider before session 22 ended these 8
# with FI_ETIMEDOUT); with probes timed from delivery it would wait for
# ever.
addr=$scratch/late.addr go=$scratch/late.go
$ip netns exec b "$peer" late "$addr" 200 8000 "$go" >"$scratch/late.recv" 2>&1 &
receiver=$!
wait_for 5 test -s "$addr"
FI_LOG_LEVEL=warn FI_LOG_PROV=ptl "$peer" burst "$addr" 200 8000 >"$scratch/late.send" 2>&1 &
sender=$!
wait_for 10 grep -q '^completions' "$scratch/late.send"
$ip link set va down
wait_for 10 grep -q 'is unreachable' "$scratch/late.send"
$ip link set va up
touch "$go"
wait "$receiver"
sed 's/^/# /' "$scratch/late.send" "$scratch/late.recv"
kill "$sender" 2>/dev/null
wait "$sender" 2>/dev/null
grep -q 'is unreachable' "$scratch/late.send" &&
	grep -Eq '^received 200 of 200, 0 bad, ([1-9][0-9]*) errors \(\1 aborted\)' "$scratch/late.recv"
report $? "receiver given up: every receive ends, the data of freed copies with FI_ECONNABORTED"

# 6. A sender gone before its receiver pulls: a 64 KiB send (long: the
# receiver keeps its header and pulls the data) to a receiver that posts
# nothing yet; the sender's process is killed; then the receiver posts its
# receive. The pull's get is dropped at the sender's node, the receiver's
# probes go unanswered, and the receive ends with FI_ETIMEDOUT, its buffer
# handed back once the kernel lets go of its MD (a REPLY that came later
# would be dropped, not written into it).
addr=$scratch/pull.addr go=$scratch/pull.go
FI_LOG_LEVEL=warn FI_LOG_PROV=ptl $ip netns exec b "$peer" late "$addr" 1 65536 "$go" >"$scratch/pull.recv" 2>&1 &
receiver=$!
wait_for 5 test -s "$addr"
"$peer" send "$addr" 65536 >"$scratch/pull.send" 2>&1 &
sender=$!
wait_for 5 grep -q '^sent' "$scratch/pull.send"
sleep 0.5 # the header is at the receiver
kill -KILL "$sender"
wait "$sender" 2>/dev/null
touch "$go"
wait "$receiver"
sed 's/^/# /' "$scratch/pull.recv"
grep -q '^received 1 of 1, 0 bad, 1 errors' "$scratch/pull.recv" &&
	grep -q '^error Connection timed out: 1' "$scratch/pull.recv"
report $? "sender gone before the pull: the receive ends with FI_ETIMEDOUT"

counters_back
report $? "ptl.ko holds nothing of either process (MDs, NIs, EQs, pinned pages)"
netns_teardown
rm -rf "$scratch"
echo "1..$tap_count"
exit $((failures > 0))
