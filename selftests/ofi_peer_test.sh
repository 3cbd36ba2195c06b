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

counters_back
report $? "ptl.ko holds nothing of either process (MDs, NIs, EQs, pinned pages)"
netns_teardown
rm -rf "$scratch"
echo "1..$tap_count"
exit $((failures > 0))
