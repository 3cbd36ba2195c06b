#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): unmodified MPI programs
# under Debian's Open MPI, their ranks on two Portals nodes, two network
# namespaces joined by a veth pair, over ptl_rtscts.ko (netns_lib.sh):
#
#     default namespace (node a)              namespace b (node b)
#   mpirun; orted, ranks 0, 2, ...          orted, ranks 1, 3, ...
#   va 10.0.0.1, nid 167772161  ---veth---  vb 10.0.0.2, nid 167772162
#
# mpirun reads a hostfile with two made-up host names, netns-default and
# netns-b, and starts its daemon (orted) on each through
# selftests/mpi_rsh_agent.sh given as its rsh agent (--mca plm_rsh_agent):
# the agent runs the daemon's command line in that network namespace
# (ip netns exec b) and in a UTS namespace named after the host, as ssh
# would on a real node; the daemons fork the ranks there, so each rank
# is a process of its namespace's Portals node. mpirun's own traffic with
# its daemons (oob tcp) goes over the veth too. --map-by node alternates
# the ranks, so the pairs (r, r ^ 1) of the programs always cross the link.
#
#  1. selftests/mpi/ (mpi_p2p, mpi_probe, mpi_unexpected, mpi_coll,
#     mpi_osc) on 2 and 4 ranks (MPI_RANKS): each program's TAP lines
#     become this suite's, plus one per run (exit status, complete plan);
#  2. with MPI_HPCC=1: HPC Challenge (Debian's hpcc) on 2 and 4 ranks,
#     its own verification; with MPI_NETPIPE=1: NetPIPE (NPopenmpi), an
#     integrity check and latency/bandwidth to 1 MiB;
#  3. ptl.ko's counters are back where they were (nothing pinned, no MD,
#     NI or EQ left by the ranks) and both modules unload.
#
# With MPI_NODES=N (3 .. 16; default 2, the layout above) the nodes are N
# namespaces on one Linux bridge instead (netns_setup_bridge: node k is
# namespace a, b, c, ... with 10.0.0.k, the default namespace being a), the
# hostfile names netns-default, netns-b, ..., and MPI_RANKS defaults to
# 2 N: a first look at scale, every rank's peers spread over N - 1 other
# nodes. Each rank's neighbour r ^ 1 is still on another node (N even);
# each node's transport counters are printed at the end. The ranks then
# outnumber the guest's CPUs many times over, so they yield when idle
# (mpi_yield_when_idle) rather than spin away the others' time slices.
# Environment:
#   MPI_TRANSPORT=ptl (default): pml cm + mtl ofi over the ptl libfabric
#     provider ($BUILD/ofi/libptl-fi.so: FI_PROVIDER_PATH, FI_PROVIDER=ptl,
#     --mca opal_common_ofi_provider_include ptl); the whole suite is
#     skipped while the provider is not built. MPI_TRANSPORT=tcp: Open
#     MPI's ob1 + tcp btl over the same veth (proves the launcher and the
#     programs); see mpi_lib.sh.
#   MPI_NETEM="loss 1%": netem with those parameters on both veth ends.
#   MPI_MTU: the MTU of every node's device (and the bridge's ports), for
#     example 65000 (veth's jumbo frames); default veth's 1500.
#   MPI_PEER_TIMEOUT_MS: ptl_rtscts's peer_timeout_ms (10000, the module's
#     default: with 2000 a guest starved by a loaded host gave live peers up
#     and the ranks saw MPI_ERR_INTERN, in hpcc and at 16 ranks); the
#     provider's probe timeout (FI_PTL_PROBE_TIMEOUT) is twice that, at
#     least its default 15 s.
#   MPI_RANKS ("2 4"), MPI_PROGRAMS (all of selftests/mpi/; "none" runs
#   none of them), MPI_HPCC_RANKS (hpcc's, "2 4"), MPI_MCA, MPI_TIMEOUT
#   (600 s per mpirun), MPI_TEST_SKIP (tests to skip, by key).
# Prints TAP lines; tools/testing/run-checks counts them.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=mpi_lib.sh
. "$top/selftests/mpi_lib.sh"

nodes=${MPI_NODES:-2}
# ptl_rtscts's peer timeout: 16 ranks on two vCPUs under TCG starve the
# nodes' softirqs for seconds at a time, and at 2 s the transport gave
# peers up (msgs_failed on every node, MPI_ERR_INTERN in mpi_p2p).
peer_timeout_ms=${MPI_PEER_TIMEOUT_MS:-10000}
# The provider's probe timeout stays above the transport's (mpi.md,
# "Failure"): 16 ranks with a 30 s peer timeout kept its 15 s, and every
# rank gave every peer up at once, probes queued behind thousands of
# requests.
probe_timeout_ms=$((2 * peer_timeout_ms > 15000 ? 2 * peer_timeout_ms : 15000))
hostfile=/tmp/mpi-hosts
{
	echo "netns-default slots=8"
	for ((k = 2; k <= nodes; k++)); do
		echo "netns-$(netns_letter $k) slots=8"
	done
} >$hostfile
if ! mpi_init $hostfile 10.0.0.0/24; then
	skip "MPI programs over $mpi_transport between $nodes namespaces" "$mpi_skip_reason"
	exit 0
fi
if ! command -v mpirun >/dev/null || [ ! -x "$mpi_bin/mpi_p2p" ]; then
	report 1 "Open MPI and the MPI programs are there (make deps, make selftests)"
	exit 1
fi

mpi_opts+=(-x "FI_PTL_PROBE_TIMEOUT=$probe_timeout_ms")
if [ "$nodes" -eq 2 ]; then
	netns_setup peer_timeout_ms="$peer_timeout_ms"
	report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 of each bound to its veth end"
	ranks=${MPI_RANKS:-2 4}
else
	netns_setup_bridge "$nodes" peer_timeout_ms="$peer_timeout_ms"
	report $? "$nodes nodes on a bridge: ptl.ko and ptl_rtscts.ko loaded, interface 0 of each bound to its veth"
	ranks=${MPI_RANKS:-$((2 * nodes))}
	mpi_opts+=(--mca mpi_yield_when_idle 1)
fi
if [ -n "${MPI_MTU:-}" ]; then
	rc=0
	for ((k = 1; k <= nodes; k++)); do
		netns_exec $k "$ip" link set dev "v$(netns_letter $k)" mtu "$MPI_MTU" || rc=1
	done
	[ "$nodes" -gt 2 ] && for ((k = 1; k <= nodes; k++)); do
		"$ip" link set dev "p$(netns_letter $k)" mtu "$MPI_MTU" || rc=1
	done
	report $rc "every node's device at MTU $MPI_MTU"
fi
counters_save
if [ -n "${MPI_NETEM:-}" ]; then
	rc=0
	for ((k = 1; k <= nodes; k++)); do
		# shellcheck disable=SC2086  # the netem parameters, word by word
		netns_exec $k $tc qdisc add dev "v$(netns_letter $k)" root netem $MPI_NETEM || rc=1
	done
	report $rc "netem on every node's device (both ends of the veth with 2): $MPI_NETEM"
fi
echo "# MPI over $mpi_transport: mpirun ${mpi_opts[*]} -np N PROGRAM"
addrs=()
for ((k = 1; k <= nodes; k++)); do
	addrs+=("10.0.0.$k")
done
mpi_where $((2 * nodes)) "${addrs[@]}"

for np in $ranks; do
	for prog in ${MPI_PROGRAMS:-mpi_p2p mpi_probe mpi_unexpected mpi_coll mpi_osc}; do
		[ "$prog" = none ] && continue
		mpi_run "$prog" "$np" "$mpi_bin/$prog"
	done
done

if [ "${MPI_HPCC:-0}" = 1 ]; then
	if command -v hpcc >/dev/null; then
		for np in ${MPI_HPCC_RANKS:-2 4}; do
			mpi_hpcc hpcc "$np"
		done
	else
		skip "hpcc on 2 and 4 ranks" "hpcc is not installed"
	fi
fi
if [ "${MPI_NETPIPE:-0}" = 1 ]; then
	if command -v NPopenmpi >/dev/null; then
		mpi_netpipe netpipe
	else
		skip "NetPIPE" "netpipe-openmpi is not installed"
	fi
fi

# Each node's transport counters: at scale, what it costs (frames,
# retransmissions, peers); on a failure, its first clue (msgs_failed,
# late_responses, credit).
if [ "$nodes" -ge 2 ]; then
	for ((k = 1; k <= nodes; k++)); do
		echo "# node $k (10.0.0.$k):"
		netns_exec $k "$ptlctl" -s iface show 0 2>&1 | sed 's/^/#   /'
	done
fi

# The ranks are gone; what they had in ptl.ko must be too.
sleep 1
counters_back
report $? "nothing left behind by the ranks (pinned pages, MDs, NIs, EQs, objects, files)"
netns_teardown
exit $((failures > 0))
