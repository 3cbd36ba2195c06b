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
# Both within the probe interval plus the timeout (+4 s of slack); then
# nothing of either process is left in ptl.ko. Prints TAP lines.
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
# completion within limit_ms.
run_case() {
	local name=$1 expected=$2 action=$3 server sender addr=$scratch/$1.addr out=$scratch/$1.out
	$ip netns exec b "$peer" serve "$addr" &
	server=$!
	for _ in $(seq 50); do [ -s "$addr" ] && break; sleep 0.1; done
	"$peer" send "$addr" 65536 >"$out" 2>&1 &
	sender=$!
	for _ in $(seq 50); do grep -q '^sent' "$out" && break; sleep 0.1; done
	sleep 1 # the send waits on the receiver now
	case $action in
	kill) kill -KILL "$server" ;;
	link-down) $ip link set va down ;;
	esac
	wait "$sender"
	local rc=$? line ms
	line=$(grep '^completion' "$out")
	sed 's/^/# /' "$out"
	ms=$(sed -nE 's/.* after ([0-9]+) ms/\1/p' <<<"$line")
	[ $rc -eq 0 ] && grep -q "ERROR $expected" <<<"$line" && [ "${ms:-999999}" -le $((limit_ms + 1000)) ]
	report $? "$name: the send ends with $expected within $((limit_ms + 1000)) ms (${ms:-?} ms)"
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
}

run_case receiver-killed "Connection timed out" kill
run_case link-down "No route to host" link-down
$ip link set va up

# 3. A peer given up while sends to it still sit in the transport: the
# link down, the transport's peer timeout (30 s) above the probe's (3 s).
# 200 eager sends of 1 KiB, 128 from bounce slots and 72 spilled into
# copies of their own, all end with an error when the provider gives the
# receiver up; the sender then fills 800 fresh allocations of the same
# size with 0xee. The link comes back and the transport sends what it
# held: every message must arrive intact. Before 1407894 the provider
# freed the spills at the give-up, the allocator handed their memory out
# again, and the receiver got 0xee.
params=/sys/module/ptl_rtscts/parameters
echo 30000 >$params/peer_timeout_ms
addr=$scratch/held.addr
$ip netns exec b "$peer" recv "$addr" 200 1024 >"$scratch/held.recv" 2>&1 &
receiver=$!
for _ in $(seq 50); do [ -s "$addr" ] && break; sleep 0.1; done
$ip link set va down
"$peer" burst "$addr" 200 1024 >"$scratch/held.send" 2>&1 &
sender=$!
for _ in $(seq 300); do grep -q '^given up' "$scratch/held.send" && break; sleep 0.1; done
grep -q '^completions: 200, 200 of them errors' "$scratch/held.send"
report $? "held sends: all 200 end with an error when the receiver is given up"
$ip link set va up
wait "$receiver"
rc=$?
sed 's/^/# /' "$scratch/held.send" "$scratch/held.recv"
[ $rc -eq 0 ] && grep -q '^received 200 of 200, 0 bad' "$scratch/held.recv"
report $? "held sends: the link back, all 200 reach the receiver intact"
kill "$sender" 2>/dev/null
wait "$sender" 2>/dev/null
echo 2000 >$params/peer_timeout_ms

counters_back
report $? "ptl.ko holds nothing of either process (MDs, NIs, EQs, pinned pages)"
netns_teardown
rm -rf "$scratch"
echo "1..$tap_count"
exit $((failures > 0))
