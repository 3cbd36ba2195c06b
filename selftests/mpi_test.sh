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
# Environment:
#   MPI_TRANSPORT=ptl (default): pml cm + mtl ofi over the ptl libfabric
#     provider ($BUILD/ofi/libptl-fi.so: FI_PROVIDER_PATH, FI_PROVIDER=ptl,
#     --mca opal_common_ofi_provider_include ptl); the whole suite is
#     skipped while the provider is not built. MPI_TRANSPORT=tcp: Open
#     MPI's ob1 + tcp btl over the same veth (proves the launcher and the
#     programs); see mpi_lib.sh.
#   MPI_NETEM="loss 1%": netem with those parameters on both veth ends.
#   MPI_RANKS ("2 4"), MPI_PROGRAMS (all of selftests/mpi/), MPI_TIMEOUT
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

hostfile=/tmp/mpi-hosts
printf '%s\n' "netns-default slots=8" "netns-b slots=8" >$hostfile
if ! mpi_init $hostfile 10.0.0.0/24; then
	skip "MPI programs over $mpi_transport between two namespaces" "$mpi_skip_reason"
	exit 0
fi
if ! command -v mpirun >/dev/null || [ ! -x "$mpi_bin/mpi_p2p" ]; then
	report 1 "Open MPI and the MPI programs are there (make deps, make selftests)"
	exit 1
fi

netns_setup peer_timeout_ms=2000
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 of each bound to its veth end"
counters_save
if [ -n "${MPI_NETEM:-}" ]; then
	# shellcheck disable=SC2086  # the netem parameters, word by word
	$tc qdisc add dev va root netem $MPI_NETEM &&
		$ip netns exec b $tc qdisc add dev vb root netem $MPI_NETEM
	report $? "netem on both ends of the veth: $MPI_NETEM"
fi
echo "# MPI over $mpi_transport: mpirun ${mpi_opts[*]} -np N PROGRAM"
mpi_where 4 10.0.0.1 10.0.0.2

for np in ${MPI_RANKS:-2 4}; do
	for prog in ${MPI_PROGRAMS:-mpi_p2p mpi_probe mpi_unexpected mpi_coll mpi_osc}; do
		mpi_run "$prog" "$np" "$mpi_bin/$prog"
	done
done

if [ "${MPI_HPCC:-0}" = 1 ]; then
	if command -v hpcc >/dev/null; then
		mpi_hpcc hpcc 2
		mpi_hpcc hpcc 4
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

# The ranks are gone; what they had in ptl.ko must be too.
sleep 1
counters_back
report $? "nothing left behind by the ranks (pinned pages, MDs, NIs, EQs, objects, files)"
netns_teardown
exit $((failures > 0))
