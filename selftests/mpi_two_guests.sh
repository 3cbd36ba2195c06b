#!/bin/bash
# Runs in each of two test guests joined by the harness's emulated
# Ethernet link (tools/testing/vm/run --nodes 2): unmodified MPI programs
# under Debian's Open MPI with ranks on both guests, over ptl_rtscts on
# virtio-net (PTL_TRANSPORT=rdma: ptl_rdma over Soft-RoCE on the same
# link; see transport_lib.sh).
#
#     node 0                                     node 1
#   mpirun; orted, ranks 0, 2, ...             orted, ranks 1, 3, ...
#   mpi_rsh_agent.sh (client)  -- tcp 7777 ->  mpi_rsh_agent.sh --serve
#   eth0 10.99.0.1  <------- emulated link ------->  eth0 10.99.0.2
#
# There is no ssh in the guests. mpirun's hostfile names the nodes
# netns-default (node 0 itself) and peer-10-99-0-2, and
# selftests/mpi_rsh_agent.sh, its rsh agent, starts the daemon for the
# latter by sending its command line to the agent that node 1 serves
# with busybox nc; the daemon's output and exit status come back the same
# way (details in the agent). Everything else is Open MPI's own: the
# daemon calls mpirun back over the link (oob tcp) and forks the ranks.
#
#  1. both nodes: ptl.ko and the transport loaded, interface 0 on eth0
#     (MPI_NETEM: netem with those parameters on eth0 too);
#  2. node 0: selftests/mpi/ on 2 and 4 ranks (MPI_RANKS), ranks
#     alternating between the guests (so pairs r, r ^ 1 cross the link),
#     each program's TAP lines as the suite's; MPI_HPCC=1 and
#     MPI_NETPIPE=1 add hpcc on 2 and 4 ranks and NetPIPE (mpi_lib.sh);
#  3. node 0 stops node 1's agent; on both, ptl.ko's counters are back
#     where they were and the modules unload.
# MPI_TRANSPORT as in mpi_test.sh: ptl (the libfabric provider; the suite
# is skipped until $BUILD/ofi/libptl-fi.so exists) or tcp (Open MPI's ob1
# over the same link). MPI_NETEM, MPI_RANKS, MPI_PROGRAMS, MPI_TIMEOUT and
# MPI_TEST_SKIP as there.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ptlctl=$build/tools/ptlctl/ptlctl
# The module's default: shorter ones give live peers up when the host
# starves the guests (mpi_test.sh).
peer_timeout_ms=10000
# shellcheck source-path=SCRIPTDIR source=transport_lib.sh
. "$top/selftests/transport_lib.sh"
# shellcheck source-path=SCRIPTDIR source=mpi_lib.sh
. "$top/selftests/mpi_lib.sh"

hostfile=/tmp/mpi-hosts
printf '%s\n' "netns-default slots=8" "peer-${PEER_IP//./-} slots=8" >$hostfile
if ! mpi_init $hostfile 10.99.0.0/24; then
	skip "node $NODE: MPI programs over $mpi_transport between two guests" "$mpi_skip_reason"
	exit 0
fi
if ! command -v mpirun >/dev/null || [ ! -x "$mpi_bin/mpi_p2p" ]; then
	report 1 "node $NODE: Open MPI and the MPI programs are there (make deps, make selftests)"
	exit 1
fi

counters="pinned_pages mds nis eqs core_objects open_files"
insmod "$moddir/ptl.ko" nid=7 && transport_up eth0 $peer_timeout_ms
report $? "node $NODE: ptl.ko and $transport_mod.ko loaded, interface 0 bound to eth0"
if [ -n "${MPI_NETEM:-}" ]; then
	# shellcheck disable=SC2086  # the netem parameters, word by word
	modprobe sch_netem && /sbin/tc qdisc add dev eth0 root netem $MPI_NETEM
	report $? "node $NODE: netem on eth0: $MPI_NETEM"
fi
# hpcc's ranks start in its directory on both nodes (mpirun's --wdir)
mkdir -p /tmp/hpcc-2 /tmp/hpcc-4

# The transport's counters of this node, as diagnostics (a failure's
# first clue: msgs_failed, timeouts, credit_refused, ...).
transport_counters() {
	"$ptlctl" -s iface show 0 2>&1 | sed "s/^/# node $NODE: /"
}

# mpi_run's hook when mpirun timed out: this node's connections and
# counters (a hang's first clues), and with rdma the device's.
mpi_on_timeout() {
	"$ptlctl" -s peer show iface 0 2>&1 | sed "s/^/# node $NODE: timeout: /"
	transport_counters
	[ "$transport" != rdma ] ||
		rdma statistic show link rxe0/1 2>&1 | tr -s ' ' | fold -w 160 |
		sed "s/^/# node $NODE: timeout: /"
}

leftovers() {	# the counters of ptl.ko that are not zero
	local c v rc=0

	sleep 1
	for c in $counters; do
		v=$(cat "/sys/class/misc/portals/$c")
		[ "$v" = 0 ] || { echo "# $c is $v"; rc=1; }
	done
	return $rc
}

if [ "$NODE" = 1 ]; then
	# Serve node 0's agent until it says stop (the harness's time limit
	# ends a node 0 that never does).
	"$mpi_agent" --serve
	report $? "node 1: served mpirun's daemon launches until node 0 was done"
	transport_counters
	leftovers
	report $? "node 1: nothing left behind by the ranks"
	transport_down && rmmod ptl
	report $? "node 1: both modules unload"
	exit $((failures > 0))
fi

# Node 1's agent: up when it runs a command for us.
for _ in $(seq 60); do
	"$mpi_agent" "peer-${PEER_IP//./-}" true 2>/dev/null && break
	sleep 1
done
"$mpi_agent" "peer-${PEER_IP//./-}" true
report $? "node 0: node 1's agent answers"
echo "# MPI over $mpi_transport ($transport_mod): mpirun ${mpi_opts[*]} -np N PROGRAM"
mpi_where 4 "$NODE_IP" "$PEER_IP"

for np in ${MPI_RANKS:-2 4}; do
	for prog in ${MPI_PROGRAMS:-mpi_p2p mpi_probe mpi_unexpected mpi_coll mpi_osc}; do
		mpi_run "$prog" "$np" "$mpi_bin/$prog"
	done
done
if [ "${MPI_HPCC:-0}" = 1 ]; then
	mpi_hpcc hpcc 2
	mpi_hpcc hpcc 4
fi
[ "${MPI_NETPIPE:-0}" = 1 ] && mpi_netpipe netpipe

"$mpi_agent" --stop "$PEER_IP"
report $? "node 0: node 1's agent stopped"
transport_counters
leftovers
report $? "node 0: nothing left behind by the ranks"
transport_down && rmmod ptl
report $? "node 0: both modules unload"
exit $((failures > 0))
