#!/bin/bash
# Runs in each of two test guests joined by the harness's emulated
# Ethernet link (tools/testing/vm/run --nodes 2): two real kernels, two Portals
# nodes, ptl_rtscts over virtio-net (PTL_TRANSPORT=rdma: ptl_rdma over
# Soft-RoCE on the same link; see transport_lib.sh).
#
#     node 0 (client)                       node 1 (server)
#   eth0 10.99.0.1  <---- emulated link ---->  eth0 10.99.0.2
#
#  1. ptl_stress: messages of 0 B .. 1 MiB both ways, each once, in
#     order and intact;
#  2. node 1 then serves a client that runs on (ptl_stress --seconds)
#     and, mid-transfer, unbinds its interface and unloads the transport
#     and ptl: to node 0 the peer has vanished. Node 0's operations must
#     end with failure events within its peer timeout (ptl_stress reports
#     failures and exits, never hangs), then node 0's counters are back at
#     zero and its modules unload.
# PTL_AUTH=1 (issue 20): both nodes bind with the same key, every frame is
# authenticated, and the link loses 2% of the frames each way (netem) for
# the whole run.
# The nodes meet through the harness (NODE, PEER_IP); each prints TAP
# lines prefixed by the harness with [nodeN].
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ptlctl=$build/tools/ptlctl/ptlctl
stress=$build/tools/ptl_stress/ptl_stress
peer_timeout_ms=3000

nid_of() {	# nid_of A.B.C.D
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	echo $((($1 << 24) | ($2 << 16) | ($3 << 8) | $4))
}

# shellcheck source-path=SCRIPTDIR source=transport_lib.sh
. "$top/selftests/transport_lib.sh"

insmod "$moddir/ptl.ko" nid=7 && transport_up eth0 $peer_timeout_ms
report $? "node $NODE: ptl.ko and $transport_mod.ko loaded, interface 0 bound to eth0"
if [ "${PTL_AUTH:-0}" = 1 ]; then
	"$ptlctl" iface show 0 | grep -q "auth hmac(sha256)"
	report $? "node $NODE: interface 0 authenticates its frames (hmac(sha256))"
	modprobe sch_netem && /sbin/tc qdisc add dev eth0 root netem loss 2% delay 1ms
	report $? "node $NODE: netem on eth0, loss 2%"
fi
peer_nid=$(nid_of "$PEER_IP")

# Node 0 starts its clients once node 1 is ready: node 1 accepts one TCP
# connection on this port when its transport is bound and its server
# runs. A fixed head start was not enough beside other guests: ptl_rdma's
# connection to a node not yet listening is refused, and the client's
# first put failed (PTL_NI_FAIL) before the server existed.
ready_port=7071

if [ "$NODE" = 1 ]; then
	"$stress" server --pid 77 --clients 2 --timeout-ms 60000 --quiet &
	server=$!
	sleep 0.5	# its NI and match entries
	timeout 120 busybox nc -l -p $ready_port </dev/null >/dev/null
	wait $server
	report $? "node 1: served two clients, 0 B .. 1 MiB, every message verified"
	# A client that keeps going; we vanish under it.
	"$stress" server --pid 78 --clients 1 --timeout-ms 60000 --quiet &
	sleep 4
	transport_down
	report $? "node 1: unbound and unloaded $transport_mod mid-transfer"
	kill %1 2>/dev/null
	wait
	rmmod ptl
	report $? "node 1: ptl unloads"
	exit $((failures > 0))
fi

peer_tell $ready_port
report $? "node 0: node 1 is ready (transport bound, server running)"
"$stress" client --server "$peer_nid:77" --id 0 --count 300 --max-size 1M \
	--seed 1 --timeout-ms 60000 --quiet &
"$stress" client --server "$peer_nid:77" --id 1 --count 300 --max-size 1M \
	--seed 2 --timeout-ms 60000 --quiet
rc=$?
wait %1 || rc=1
report $rc "node 0: two clients, 600 operations of 0 B .. 1 MiB to the other node"
if [ "${PTL_AUTH:-0}" = 1 ]; then
	"$ptlctl" -s iface show 0 | sed 's/^/#   /'
fi

sleep 2
start=$(date +%s%N)
"$stress" client --server "$peer_nid:78" --id 0 --seconds 60 --max-size 1M \
	--timeout-ms $((peer_timeout_ms * 3)) --quiet
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "# the client ended (status $rc) after $elapsed_ms ms"
[ "$rc" -ne 0 ] && [ "$elapsed_ms" -lt 30000 ]
report $? "node 0: the vanished node's operations failed, no hang (${elapsed_ms} ms)"
"$ptlctl" -s peer show | sed 's/^/#   /'

sleep 1
leaks=0
for c in pinned_pages mds nis eqs core_objects open_files; do
	v=$(cat /sys/class/misc/portals/$c)
	[ "$v" = 0 ] || { echo "# $c is $v"; leaks=1; }
done
report $leaks "node 0: nothing left behind (pinned pages, MDs, NIs, EQs, objects)"
transport_down && rmmod ptl
report $? "node 0: both modules unload"
exit $((failures > 0))
