#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): Portals between two nodes, two
# network namespaces joined by a veth pair, over ptl_rtscts.ko:
#
#     default namespace (node a)              namespace b (node b)
#   +---------------------------+         +---------------------------+
#   | tests, clients            |  veth   | peers, servers            |
#   | va 10.0.0.1, nid 167772161|---------| vb 10.0.0.2, nid 167772162|
#   +---------------------------+         +---------------------------+
#
#  1. the one-node test programs again with their peers on node b
#     (PTL_PEER_NETNS): every operation and event, ACL, truncation,
#     thresholds, unlink, iovecs, bypass, several senders;
#  2. peers that disappear mid-transfer (ptl_net_fault_test);
#     a kernel client on node a and a process on node b exchanging puts,
#     gets and a getput both ways (ptl_kapi_test);
#  3. ptl_stress: messages of 0 B .. 1 MiB, several pairs at once, each
#     delivered once, in order and intact, on a clean link and then
#     under netem loss 5% + reordering 5% + duplication 1% + corruption
#     0.1% (NET_MESSAGES in all, default 20,000);
#  4. the counters are back where they were and both modules unload;
#  5. recovery from a burst of loss (rtscts_burst_loss_test.sh: 50% for
#     3 s, then a clean link; done within 4 s of the loss ending);
#  6. an unprivileged user in namespaces of its own cannot make frames
#     its link cannot carry (rtscts_mtu_test.sh: MTU below a frame's
#     headers, eager past its bound, a put of 2^32 - 1 bytes; the put
#     needs a guest of more than 4 GiB, tools/testing/run-checks gives it 5 GiB);
#  7. frames held ahead of a gap that never closes (rtscts_ooo_test.sh:
#     forged nids at MTU 65535; caps, expiry, reclaim, namespace exit,
#     a user namespace's memory charged to its cgroup);
#  8. a hostile peer of ptl_rdma's listener (rdma_hostile_test.sh, rxe
#     loopback in this guest: a forged src_nid, the caps on inbound
#     connections, a peer that never answers CLOSE);
#  9. a ptlblk server that lies (ptlblk_hostile_test.sh: no success for
#     data that did not move);
# 10. authenticated frames (rtscts_auth_test.sh: traffic with a shared key
#     on a clean and a netem link; another key or none cannot deliver;
#     forged frames dropped and counted);
# 11. messages a forged node opens and never finishes, to an ordinary
#     (uid 1000) server (rtscts_partial_test.sh: caps per peer and per
#     interface, failure with events when the peer falls silent, the
#     server's pid free at once when it dies, a well-behaved sender
#     never capped);
# 12. one user cannot fill the peer table for the others
#     (rtscts_peers_test.sh: uid 1000's puts to bogus nids, per-uid share,
#     eviction of unresolved peers, their timers backing off);
# 13. forged frames cannot make a node believe its peer restarted nor
#     re-point its address (rtscts_restart_test.sh: ptl_inject forge);
# 14. frames recorded on a keyed segment and replayed after the receiver
#     forgot their sender, or after it was bound again, deliver nothing
#     (rtscts_replay_test.sh: ptl_inject record and replay);
# 15. two nodes flooding each other with puts that ask for ACKs
#     (rtscts_flood_test.sh: request credit; every put ends well, none
#     refused, long before the peer timeout);
# 16. a forged node that ignores the request credit (GETs past every grant,
#     REPLYs never acknowledged; rtscts_credit_hostile_test.sh: 256 taken
#     per peer, the rest refused and counted, an honest node served meanwhile,
#     memory bounded and charged, also from uid 1000's own user namespace);
# 17. super-frames (rtscts_superframe_test.sh: a burst to one peer crosses
#     a veth whole, is cut in software where a qdisc cannot carry it, not
#     sent when switched off or for an ethertype without the offload);
# 18. Portals ACKs that ride on other frames (rtscts_riders_test.sh: a
#     ping-pong of puts with ACKs sends one frame per put, not two; a
#     burst's ACKs share frames; under loss nothing is lost).
# Environment: NET_MESSAGES, NET_PAIRS (4), NET_MTU (9000),
# NET_ONLY_TRAFFIC=1 (only part 3: make soak), NET_STRESS_REPORT=1
# (ptl_stress prints its reports; make soak sums them), NET_TWO_NODES=0
# (none of parts 1-4), NET_SCRIPTS (the suites of parts 5-18 to run, by
# file name; all by default). tools/testing/run-checks splits the debug
# kernel's run in two with the last two.
# Prints TAP lines; tools/testing/run-checks counts them. The harness fails the
# run on any kernel splat.
set -u

# Parts 5-18, suites with nodes of their own, each described above.
all_scripts=(rtscts_burst_loss_test.sh rtscts_mtu_test.sh rtscts_ooo_test.sh
	rdma_hostile_test.sh ptlblk_hostile_test.sh rtscts_auth_test.sh
	rtscts_partial_test.sh rtscts_peers_test.sh rtscts_restart_test.sh
	rtscts_replay_test.sh rtscts_flood_test.sh rtscts_credit_hostile_test.sh
	rtscts_superframe_test.sh rtscts_riders_test.sh)
# --list: their names, one per line (run-checks splits them by name).
if [ "${1:-}" = --list ]; then
	printf '%s\n' "${all_scripts[@]}"
	exit 0
fi

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
messages=${NET_MESSAGES:-20000}
pairs=${NET_PAIRS:-4}
stress_mtu=${NET_MTU:-9000}
# NET_STRESS_REPORT=1 (make soak): every ptl_stress process prints its
# report (lost, duplicates, reorders, ... and throughput).
stress_report=--quiet
[ "${NET_STRESS_REPORT:-0}" = 1 ] && stress_report=
peer_timeout_ms=2000

# stress_run NAME PID COUNT_PER_PAIR: ptl_stress, NET_PAIRS pairs (part 3).
stress_run() {
	local name=$1 pid=$2 count=$3 i rc=0 pids=()

	$ip netns exec b "$stress" server --pid "$pid" --clients "$pairs" \
		--timeout-ms 60000 $stress_report &
	local server=$!
	peer_events_record
	sleep 0.5
	for ((i = 0; i < pairs; i++)); do
		"$stress" client --server "$nid_b:$pid" --id "$i" \
			--count "$count" --max-size 1M --seed $((i + 1)) \
			--timeout-ms 60000 $stress_report &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	wait "$server" || rc=1
	if [ $rc != 0 ]; then
		peers_show
		peer_events_show
	fi
	report $rc "$name"
}

# 1-4. Two nodes shared by the test programs and the traffic (unless
# NET_TWO_NODES=0).
two_nodes() {
	netns_setup peer_timeout_ms=$peer_timeout_ms
	report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 of each bound to its veth end"
	counters_save

	# 1-2. The test programs with their peers on node b.
	export PTL_PEER_NETNS=/run/netns/b PTLCTL=$ptlctl PTL_MODULE_DIR=$moddir
	export PTL_TEST_PEER_TIMEOUT_MS=$peer_timeout_ms
	# NET_ONLY_TRAFFIC=1 (make soak) goes straight to the traffic of part 3;
	# NET_TESTS names the test programs to run (all three by default).
	tests=${NET_TESTS:-ptl_data_test ptl_bypass_test ptl_net_fault_test}
	[ "${NET_ONLY_TRAFFIC:-0}" = 1 ] && tests=
	for test in $tests; do
		echo "# running $test between two nodes"
		"$build/selftests/$test" || failures=$((failures + 1))
	done
	unset PTL_PEER_NETNS
	# The kernel API across the wire: ptl_kapi_test.ko's kernel client on node
	# a, the process it trades puts and gets with on node b.
	if [ "${NET_ONLY_TRAFFIC:-0}" != 1 ]; then
		echo "# running ptl_kapi_test between two nodes"
		PTL_PEER_NETNS=/run/netns/b "$build/selftests/ptl_kapi_test" ||
			failures=$((failures + 1))
	fi

	# 3. Traffic that must arrive exactly once, in order and intact. The
	# fault tests wanted a short peer timeout; traffic gets the default,
	# and a jumbo-frame link as clusters have (the tests above ran at 1500).
	echo 10000 >/sys/module/ptl_rtscts/parameters/peer_timeout_ms
	$ip link set va mtu "$stress_mtu" && $ip -n b link set vb mtu "$stress_mtu"
	report $? "link MTU $stress_mtu for the traffic tests"
	stress_run "ptl_stress: $pairs pairs, 0 B .. 1 MiB, clean link" 77 \
		$((messages / pairs / 4))
	$tc qdisc add dev va root netem loss 5% reorder 5% delay 1ms duplicate 1% corrupt 0.1% &&
		$ip netns exec b $tc qdisc add dev vb root netem loss 5% reorder 5% \
			delay 1ms duplicate 1% corrupt 0.1%
	report $? "netem on both ends: loss 5%, reordering 5%, duplication 1%, corruption 0.1%"
	stress_run "ptl_stress: $pairs pairs, 0 B .. 1 MiB, under netem, $((messages * 3 / 4)) messages" \
		78 $((messages * 3 / 4 / pairs))
	echo "# transport counters on node a:"
	"$ptlctl" -s iface show | sed 's/^/#   /'
	"$ptlctl" -s peer show | sed 's/^/#   /'
	$tc qdisc del dev va root
	$ip netns exec b $tc qdisc del dev vb root

	# 4. Nothing left behind.
	sleep 1
	counters_back
	report $? "module counters are back where they were"
	netns_teardown
}

if [ "${NET_TWO_NODES:-1}" = 1 ]; then
	t0=$SECONDS
	two_nodes
	echo "# parts 1-4: $((SECONDS - t0)) s"
fi

# 5-18. NET_SCRIPTS names the suites to run (all by default), each one
# of all_scripts: a name that is not fails rather than test nothing.
scripts=${NET_SCRIPTS-${all_scripts[*]}}
[ "${NET_ONLY_TRAFFIC:-0}" = 1 ] && scripts=

# run_script NAME: one of them, and the seconds it took (what
# tools/testing/run-checks's tiers are cut by).
run_script() {
	local t0=$SECONDS
	echo "# running $1"
	"$top/selftests/$1" || failures=$((failures + 1))
	echo "# $1: $((SECONDS - t0)) s"
}

for script in $scripts; do
	if [[ " ${all_scripts[*]} " == *" $script "* ]]; then
		run_script "$script"
	else
		report 1 "NET_SCRIPTS: $script is not one of run-net-tests.sh's suites"
	fi
done

exit $((failures > 0))
