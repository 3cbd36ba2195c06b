#!/bin/bash
# Runs in each of two test guests joined by the harness's emulated
# Ethernet link (tools/testing/vm/run --nodes 2): one node with an Ethernet and an
# RDMA Portals interface at once, both on eth0.
#
#     node 0 (clients)                          node 1 (servers)
#   iface 0: eth0 via rtscts (raw frames)  <-->  iface 0: eth0 via rtscts
#   iface 1: eth0 via rdma (rxe0, RoCE)    <-->  iface 1: eth0 via rdma
#   eth0 10.99.0.1                               eth0 10.99.0.2
#
# Both interfaces have the same nid (eth0's IPv4 address): a Portals
# interface is chosen by PtlNIInit's iface (ptl_stress --iface), not by
# the nid. ptl.ko does not refuse two bindings of one netdev, and need
# not: rtscts takes only frames of its ethertype, rdma only rxe0's UDP
# port 4791, so neither sees the other's traffic.
#
#  1. ptl.ko, ptl_rtscts.ko and ptl_rdma.ko loaded, both interfaces bound;
#     ptlctl iface show lists both, with their transports and one nid;
#  2. ptl_stress on both interfaces at once: node 1 serves pid 77 on
#     iface 0 and pid 78 on iface 1, node 0 runs a client on each (puts,
#     gets and getputs of 0 B .. 1 MiB, every message verified; on rdma
#     those above 16 KiB by RDMA WRITE unless PTL_RDMA_MIN says otherwise);
#  3. ptlctl peer show on each node: iface 0 shows the rtscts peer (lladdr,
#     rtt, state up), iface 1 the rdma connection (state up, active on
#     node 0 and accepted on node 1, credits, frames both ways; sometimes
#     a second one node 1 opened, see below), and the connections'
#     counters add up to the interface's;
#  4. every Portals gauge back to zero; node 1 unbinds iface 1 and node
#     0's connection leaves its peer list; both interfaces unbind, the
#     RDMA resources are back to what rxe0 had before binding, all three
#     modules unload.
# Each node prints TAP lines (the harness prefixes them with [nodeN]).
#
#   tools/testing/vm/run --nodes 2 --timeout 900 --name rdma-mixed \
#       --workdir "$PWD" -- "$PWD/selftests/rdma_mixed_two_guests.sh"
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=rdma_lib.sh
. "$top/selftests/rdma_lib.sh"

build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ptlctl=$build/tools/ptlctl/ptlctl
stress=$build/tools/ptl_stress/ptl_stress
# PTL_RDMA_MIN: ptl_rdma's rdma_min, as in rdma_two_guests.sh (default
# 16384, the module's: the large messages by RDMA WRITE; 0: all in frames).
rdma_min=${PTL_RDMA_MIN:-16384}
# PTL_RDMA_SRQ_BUFFERS: ptl_rdma's srq_buffers, as in rdma_two_guests.sh
# (default 256; 0: a ring of receive buffers per connection).
srq_buffers=${PTL_RDMA_SRQ_BUFFERS:-256}
# ptl_rdma's default credits: what a connection may have at most.
credits=32

# check_json DESCRIPTION PYTHON-EXPRESSION PTLCTL-ARGS...: reports whether
# the expression holds of j, ptlctl's JSON output (-j -s and the args),
# with nid and peer (this node's and the other's nids) and node.
check_json() {
	local what=$1 expr=$2 out rc

	shift 2
	out=$("$ptlctl" -j -s "$@")
	python3 -c '
import json, sys
j = json.loads(sys.argv[1])
nid, peer, node = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sys.exit(0 if eval("(" + sys.argv[5] + ")") else 1)
' "$out" "$my_nid" "$peer_nid" "$NODE" "$expr"
	rc=$?
	report $rc "node $NODE: $what"
	[ $rc = 0 ] || echo "#   $out"
}

# client IFACE PID SEED: 120 verified operations with the server at PID
# on interface IFACE; how long they took (ms) in /tmp/client-IFACE.ms.
client() {
	local start rc

	start=$(date +%s%N)
	"$stress" client --iface "$1" --server "$peer_nid:$2" --count 120 \
		--max-size 1M --seed "$3" --timeout-ms 60000 --quiet
	rc=$?
	echo $((($(date +%s%N) - start) / 1000000)) >"/tmp/client-$1.ms"
	return $rc
}

rdma_rxe_up eth0 && res0=$(rdma_res) &&
	insmod "$moddir/ptl.ko" nid=7 &&
	insmod "$moddir/ptl_rtscts.ko" &&
	insmod "$moddir/ptl_rdma.ko" rdma_min="$rdma_min" srq_buffers="$srq_buffers" &&
	"$ptlctl" iface bind 0 dev eth0 &&
	"$ptlctl" iface bind 1 dev eth0 transport rdma
report $? "node $NODE: ptl, ptl_rtscts and ptl_rdma loaded; iface 0 bound to eth0 via rtscts, iface 1 via rdma"
my_nid=$(nid_of "$NODE_IP")
peer_nid=$(nid_of "$PEER_IP")
"$ptlctl" iface show | sed 's/^/#   /'
check_json "iface show: iface 0 via rtscts and iface 1 via rdma, both on eth0 with its nid" \
	"[(i['iface'], i['transport'], i['ifname'], i['nid']) for i in j
	  if i['iface'] < 2] == [(0, 'rtscts', 'eth0', nid), (1, 'rdma', 'eth0', nid)]" \
	iface show

# 2. Traffic on both interfaces at once. Servers and clients give up
# after the same 60 s without progress, so that after a hang both nodes
# still meet at the next barrier.
if [ "$NODE" = 1 ]; then
	"$stress" server --iface 0 --pid 77 --clients 1 --timeout-ms 60000 --quiet &
	eth=$!
	"$stress" server --iface 1 --pid 78 --clients 1 --timeout-ms 60000 --quiet &
	rdma=$!
	barrier served
	wait $eth
	report $? "node 1: served a client on iface 0 (rtscts), every message verified"
	wait $rdma
	report $? "node 1: served a client on iface 1 (rdma), every message verified"
	barrier traffic-over
else
	barrier served
	client 0 77 1 &
	eth=$!
	client 1 78 2 &
	rdma=$!
	wait $eth
	report $? "node 0: 120 operations of 0 B .. 1 MiB on iface 0 (rtscts) in $(cat /tmp/client-0.ms) ms"
	wait $rdma
	report $? "node 0: 120 operations of 0 B .. 1 MiB on iface 1 (rdma) at the same time, in $(cat /tmp/client-1.ms) ms"
	barrier traffic-over
fi

# 3. The peer on each interface, with its transport's fields.
"$ptlctl" -s peer show iface 0 | sed 's/^/#   /'
"$ptlctl" -s peer show iface 1 | sed 's/^/#   /'
check_json "peer show iface 0: the rtscts peer, up, with its lladdr and rtt, frames both ways" \
	"len(j) == 1 and j[0]['nid'] == peer and j[0]['state'] == 'up' and
	 len(j[0]['lladdr']) == 17 and 'rtt_us' in j[0] and 'credits' not in j[0] and
	 j[0]['stats']['tx_frames'] > 0 and j[0]['stats']['rx_frames'] > 0" \
	peer show iface 0
# Node 0 connects; node 1 accepts, and answers on that connection. Node
# 1 opens one of its own when its first answer comes before the accepted
# connection is in its nid table (rdma/conn.c inserts it after
# rdma_accept(), and frames may arrive in between): then each node has
# two, one active and one not, and one of them carries its sends.
check_json "peer show iface 1: rdma connections, all up, no lladdr nor timers, one that our sends take, at most one each way" \
	"1 <= len(j) <= 2 and sum('sends' in p['flags'] for p in j) == 1 and
	 len({'active' in p['flags'] for p in j}) == len(j) and
	 all(p['nid'] == peer and p['state'] == 'up' and 'lladdr' not in p and
	     'rtt_us' not in p for p in j)" \
	peer show iface 1
if [ "$NODE" = 0 ]; then side=connected; else side=accepted; fi
check_json "peer show iface 1: node 0's connection, $side here: credits (0..$credits available, 0..$credits owed), frames and bytes both ways, RDMA WRITEs counted (rdma_min $rdma_min)" \
	"(t := next(p for p in j if ('active' in p['flags']) == (node == 0))) and
	 (node == 1 or 'sends' in t['flags']) and
	 all(0 <= p['credits'] <= $credits and 0 <= p['credits_owed'] <= $credits for p in j) and
	 all(t['stats'][s] > 0 for s in ('tx_frames', 'tx_bytes', 'rx_frames', 'rx_bytes')) and
	 'rts' in t['stats'] and ($rdma_min == 0 or t['stats']['rts'] > 0)" \
	peer show iface 1
rdma_srq_check "node $NODE" "$srq_buffers"
# Idle now: the connection's counters are all of the interface's.
sums=$("$ptlctl" -j -s peer show iface 1 | python3 -c '
import json, sys
conns = json.load(sys.stdin)
print(*(sum(p["stats"][s] for p in conns)
        for s in ("tx_frames", "tx_bytes", "rx_frames", "rx_bytes", "rts")))')
check_json "peer show iface 1: the connections' counters add up to the interface's ($sums)" \
	"[j[0]['stats'][s] for s in ('tx_frames', 'tx_bytes', 'rx_frames', 'rx_bytes', 'rts')]
	 == [int(x) for x in '$sums'.split()]" \
	iface show 1
barrier shown

# 4. Nothing left behind. Node 1 unbinds its rdma interface first: node
# 0's connection is torn down (disconnect) and leaves its peer list.
portals_clean "after the traffic"
if [ "$NODE" = 1 ]; then
	"$ptlctl" iface unbind 1
	report $? "node 1: iface 1 (rdma) unbinds"
	barrier rdma-unbound
else
	barrier rdma-unbound
	for ((i = 0; i < 20; i++)); do
		[ "$("$ptlctl" -j peer show iface 1)" = "[]" ] && break
		sleep 0.5
	done
	[ "$i" -lt 20 ]
	report $? "node 0: the torn-down connection leaves peer show iface 1 (after $((i * 500)) ms)"
	"$ptlctl" iface unbind 1
	report $? "node 0: iface 1 (rdma) unbinds"
fi
"$ptlctl" iface unbind 0
report $? "node $NODE: iface 0 (rtscts) unbinds"
rmmod ptl_rdma && rmmod ptl_rtscts && rmmod ptl
report $? "node $NODE: ptl_rdma, ptl_rtscts and ptl unload"
[ "$(rdma_res)" = "$res0" ]
report $? "node $NODE: RDMA resources back to before binding"
barrier unloaded
rdma_rxe_down rxe0
exit $((failures > 0))
