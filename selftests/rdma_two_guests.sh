#!/bin/bash
# Runs in each of two test guests joined by the harness's emulated
# Ethernet link (tools/testing/vm/run --nodes 2): Portals over ptl_rdma.ko on a
# Soft-RoCE device (rxe0) over eth0 in each guest.
#
#     node 0 (client)                       node 1 (server)
#   eth0/rxe0 10.99.0.1  <-- emulated link -->  eth0/rxe0 10.99.0.2
#
#  1. ptl_stress: puts, gets and getputs of 0 B .. 3 MiB both ways, each
#     verified, over connections set up on demand (those above 16 KiB by
#     RDMA WRITE into the target's pages, over 1 MiB in rounds; gets of
#     16 KiB .. 1 MiB by RDMA WRITE into the initiator's sink, in one
#     round trip, larger ones the old way); then the same over a link
#     that loses 0.5% of the packets each way;
#  1c. what a connection makes for traffic (send buffers, MRs) it gives
#     back when quiet;
#  1d. idle connections close (and traffic racing with the closing
#     handshake loses nothing);
#  1e. at max_conns the idlest connection is closed to make room: node
#     1's ptl_rdma answers the CLOSE, a hostile peer that does not loses
#     its connection;
#  2. peer death: node 1 falls silent under traffic (netem drops all it
#     sends);
#     node 0's operations fail (the QP's retries run out) within a bounded
#     time, and node 1's do too;
#  (2b comes before 2: the Soft-RoCE reconnect problem of
#  rdma-transport.md, "Known problems", can follow a silent peer)
#  2b. a peer that stops in the middle of a large put, after our CTS:
#     node 0's RDMA WRITEs and rdma_cm messages are filtered out, so node
#     1, with nothing of its own in flight, learns nothing from RC; its
#     progress watchdog ends the connection (by its probe, which meets
#     no acknowledgement, or at the timeout) and the put fails there;
#  3. module unload under traffic: node 1 unbinds and unloads ptl_rdma
#     mid-transfer; node 0's operations fail at once (disconnect);
#  4. device removal under traffic: node 0 deletes its rxe device
#     ("rdma link delete") mid-transfer; its operations fail.
# After each, every Portals counter is back at zero (pinned pages, MDs,
# NIs, EQs, objects), the RDMA resources (PDs, CQs, QPs, cm_ids) are back
# to what the device had before binding, and the modules unload. The
# nodes meet through the harness (NODE, PEER_IP) and sleeps; each prints
# TAP lines prefixed by the harness with [nodeN].
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ptlctl=$build/tools/ptlctl/ptlctl
stress=$build/tools/ptl_stress/ptl_stress
rdma_peer=$build/tools/ptl_rdma_peer/ptl_rdma_peer
op_timeout_ms=9000
failures=0

# shellcheck source-path=SCRIPTDIR source=rdma_lib.sh
. "$top/selftests/rdma_lib.sh"

report() {	# report STATUS DESCRIPTION
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
		failures=$((failures + 1))
	fi
}

# PTL_RDMA_MIN: ptl_rdma's rdma_min, payloads above it go by RDMA WRITE
# (default 16384, as the module's; 0: every message in SEND frames).
rdma_min=${PTL_RDMA_MIN:-16384}
# PTL_RDMA_SRQ_BUFFERS: ptl_rdma's srq_buffers, the receive buffers the
# connections share (default 256, as the module's; 0: a ring per
# connection, as on a device without SRQs).
srq_buffers=${PTL_RDMA_SRQ_BUFFERS:-256}
# The loss of the lossy-link step, in per cent, each way: enough for
# Soft-RoCE to retransmit several times per run; much more (2%) and its
# go-back-N over a 1 MiB WRITE sometimes runs out of retries, which fails
# the connection (rightly: it is as good as a dead link).
loss=0.5

bind_rdma() {
	insmod "$moddir/ptl_rdma.ko" rdma_min="$rdma_min" \
		srq_buffers="$srq_buffers" &&
		"$ptlctl" iface bind 0 dev eth0 transport rdma
}

# Messages this node sent or received by RDMA WRITE (the "rts" column).
rdma_writes() {
	iface_stat TX: rts
}

# 1c. Idle connections close (peer_idle_s=1 on both nodes), also while
# the other node's requests race with the handshake: the same bursts both
# ways at once, 1.1 s or 2.5 s apart; then, idle, every connection goes.
# The most send buffers and MRs a connection of interface 0 holds now.
peer_held() {
	"$ptlctl" peer show iface 0 | awk '
		{
			for (i = 1; i < NF; i++) {
				if ($i == "bufs" && $(i + 1) > b) b = $(i + 1)
				if ($i == "mrs" && $(i + 1) > m) m = $(i + 1)
			}
		}
		END { print b + 0, m + 0 }'
}

# 1c. What a connection makes while it moves messages (send buffers
# beyond the one it always has, PRD_TX_FLOOR; MRs for its RDMA slots and
# sinks) it gives back when it has been quiet for a second
# (rdma/demand.c): seen in ptlctl peer show while traffic runs both ways,
# and after.
demand_test() {
	local rc=0 server client bufs mrs max_bufs=0 max_mrs=0 want_mrs=1
	local start deadline floor=1

	[ "$rdma_min" = 0 ] && want_mrs=0
	"$stress" server --pid 84 --clients 1 --timeout-ms 120000 --quiet &
	server=$!
	barrier demand
	"$stress" client --server "$peer_nid:84" --id 0 --seconds 6 \
		--max-size 3M --seed 21 --timeout-ms 20000 --quiet &
	client=$!
	while kill -0 $client 2>/dev/null; do
		read -r bufs mrs <<<"$(peer_held)"
		((bufs > max_bufs)) && max_bufs=$bufs
		((mrs > max_mrs)) && max_mrs=$mrs
		sleep 0.2
	done
	wait $client || rc=1
	wait $server || rc=1
	report $rc "node $NODE: 6 s of traffic each way, every message verified"
	[ "$max_bufs" -gt $floor ] && { [ "$want_mrs" = 0 ] || [ "$max_mrs" -gt 0 ]; }
	report $? "node $NODE: while busy, a connection made send buffers and MRs (up to $max_bufs and $max_mrs)"
	# Given back within two sweeps (1 s each) of a second's quiet.
	deadline=$((SECONDS + 10))
	start=$SECONDS
	while read -r bufs mrs <<<"$(peer_held)" &&
		! { [ "$bufs" = $floor ] && [ "$mrs" = 0 ]; } &&
		[ $SECONDS -lt $deadline ]; do
		sleep 0.5
	done
	[ "$bufs" = $floor ] && [ "$mrs" = 0 ]
	report $? "node $NODE: quiet, every connection back to $floor send buffer and no MR within $((SECONDS - start)) s ($bufs, $mrs)"
	barrier demand-over
}

idle_close_test() {
	local i rc=0 closed0 closed server

	closed0=$(iface_stat peers: reclaimed)
	echo 1 >/sys/module/ptl_rdma/parameters/peer_idle_s
	"$stress" server --pid 83 --clients 8 --timeout-ms 120000 --quiet \
		>/tmp/idle-server.out 2>&1 &
	server=$!
	barrier idle
	for ((i = 0; i < 8; i++)); do
		"$stress" client --server "$peer_nid:83" --id "$i" --count 20 \
			--max-size 256K --seed $((10 + i)) --timeout-ms 20000 \
			--quiet || { rc=1 && rdma_state; }
		if ((i % 2)); then sleep 1.1; else sleep 2.5; fi
	done
	wait $server || rc=1
	report $rc "node $NODE: 8 bursts each way with idle closes between and during them, every message verified"
	# What this node's server had to say of the peer's clients, if
	# anything (their failures are the peer's to report).
	sed 's/^/#   server: /' /tmp/idle-server.out
	# Idle for peer_idle_s (1 s), then the close handshake and the
	# teardown: seconds on a slow guest, so wait for it (at most 30 s).
	for ((i = 0; i < 150; i++)); do
		closed=$(($(iface_stat peers: reclaimed) - closed0))
		[ "$closed" -gt 0 ] && [ "$(rdma_res)" = "$res_bound" ] && break
		sleep 0.2
	done
	((i < 150))
	report $? "node $NODE: idle connections closed ($closed), RDMA resources back to the bound interface's"
	echo 60 >/sys/module/ptl_rdma/parameters/peer_idle_s
	barrier idle-over
}

# 1e. Node 0 runs with max_conns 2: one connection kept open, one place
# for the next while the idlest closes (rdma/close.c). Its connection to
# node 1, idle, is asked to close when node 1's ptl_rdma_peer connects
# (from a second address of node 1's: a nid of its own, whose connection
# node 0's requests to node 1 never take), and node 1's ptl_rdma answers. Then node 0's burst to node 1 needs a
# connection again: the peer tool's, idle too and never answering, is
# asked and closed connect_timeout_ms (5 s) after its CLOSE.
reclaim_test() {
	local rc=0 server peer evicted0 closes0 i extra=${NODE_IP%.*}.99

	if [ "$NODE" = 1 ]; then
		/sbin/ip addr add "$extra/24" dev eth0
		"$stress" server --pid 86 --clients 2 --timeout-ms 120000 \
			--quiet >/tmp/reclaim-server.out 2>&1 &
		server=$!
		barrier reclaim
		barrier reclaim-idle
		"$rdma_peer" --src "$extra" --until-gone --timeout-ms 60000 "$PEER_IP" \
			>/tmp/reclaim-peer.out 2>&1 &
		peer=$!
		for ((i = 0; i < 100; i++)); do
			grep -qx established /tmp/reclaim-peer.out && break
			sleep 0.1
		done
		barrier reclaim-peer
		wait $server || rc=1
		report $rc "node 1: served 2 bursts across connections closed to make room"
		sed 's/^/#   server: /' /tmp/reclaim-server.out
		wait $peer
		sed 's/^/#   peer: /' /tmp/reclaim-peer.out
		grep -qx 'frames CLOSE 1' /tmp/reclaim-peer.out &&
			grep -q '^established 1 .* disconnected 1' /tmp/reclaim-peer.out
		report $? "node 1: its peer tool's idle connection was asked to close, and dropped unanswered"
		/sbin/ip addr del "$extra/24" dev eth0
		barrier reclaim-over
		return
	fi
	evicted0=$(iface_stat peers: evicted)
	closes0=$(iface_stat peers: close_timeouts)
	echo 2 >/sys/module/ptl_rdma/parameters/max_conns
	barrier reclaim
	"$stress" client --server "$peer_nid:86" --id 0 --count 20 \
		--max-size 256K --seed 31 --timeout-ms 20000 --quiet || rc=1
	sleep 1.5	# idle, as the sweep sees it
	barrier reclaim-idle
	barrier reclaim-peer
	wait_peers 1 && [ $(($(iface_stat peers: evicted) - evicted0)) = 1 ] &&
		[ "$(iface_stat peers: close_timeouts)" = "$closes0" ]
	report $? "node 0: a connection at max_conns 2 had node 1 close the idle one"
	"$stress" client --server "$peer_nid:86" --id 1 --count 20 \
		--max-size 256K --seed 32 --timeout-ms 20000 --quiet || rc=1
	report $rc "node 0: two bursts to node 1 across the closes, every message verified"
	wait_peers 1 && [ $(($(iface_stat peers: evicted) - evicted0)) = 2 ] &&
		[ $(($(iface_stat peers: close_timeouts) - closes0)) = 1 ]
	report $? "node 0: the peer tool's connection, asked to close for the burst's and unanswered, went"
	echo 1024 >/sys/module/ptl_rdma/parameters/max_conns
	barrier reclaim-over
}

# Node 0's egress loses its RDMA WRITEs (BTH opcodes 0x06-0x0b) and
# rdma_cm's MADs (UD SEND, 0x64-0x65) to the RoCEv2 port; SENDs and
# acknowledgements pass.
stall_filter_add() {
	local m

	modprobe -a sch_prio cls_u32 act_gact 2>/dev/null
	tc qdisc add dev eth0 root handle 1: prio || return 1
	for m in "0x06 0xfe" "0x08 0xfc" "0x64 0xfe"; do
		# shellcheck disable=SC2086
		tc filter add dev eth0 parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u8 $m at 28 action drop || return 1
	done
}

# Gets whose REPLY was RDMA written into their sink, sent or received.
sink_gets() {
	iface_stat TX: sink_gets
}

# What the connections and the device say, after a failure.
rdma_state() {
	"$ptlctl" -s iface show 0 2>&1 | sed 's/^/#   /'
	"$ptlctl" -s peer show iface 0 2>&1 | sed 's/^/#   /'
	rdma res show qp 2>&1 | sed 's/^/#   /'
	rdma statistic show link rxe0/1 2>&1 | tr -s ' ' | fold -w 160 | sed 's/^/#   /'
}

# A client that keeps going until its peer or device goes away; it must
# end with failures (not hang) well within its 60 seconds.
client_fails() {	# client_fails PID WHAT
	local start rc elapsed_ms

	start=$(date +%s%N)
	"$stress" client --server "$peer_nid:$1" --id 0 --seconds 60 \
		--max-size 1M --timeout-ms $op_timeout_ms --quiet
	rc=$?
	elapsed_ms=$((($(date +%s%N) - start) / 1000000))
	echo "# the client ended (status $rc) after $elapsed_ms ms"
	[ "$rc" -ne 0 ] && [ "$elapsed_ms" -lt 40000 ]
	report $? "node 0: $2: operations failed, no hang (${elapsed_ms} ms)"
}

rdma_rxe_up eth0 && res0=$(rdma_res) &&
	insmod "$moddir/ptl.ko" nid=7 && bind_rdma
report $? "node $NODE: rxe0 up, ptl.ko and ptl_rdma.ko loaded, interface 0 bound to eth0 via rdma"
res_bound=$(rdma_res)
peer_nid=$(nid_of "$PEER_IP")

if [ "$NODE" = 1 ]; then
	clients=3
	[ "$rdma_min" != 0 ] && clients=5
	"$stress" server --pid 77 --clients $clients --max-size 3M \
		--timeout-ms 120000 --quiet &
	barrier served
	wait $!
	rc=$?
	report $rc "node 1: served $clients clients, 0 B .. 3 MiB, every message verified"
	[ $rc = 0 ] || rdma_state
	if [ "$rdma_min" != 0 ]; then
		sinks=$(sink_gets)
		[ "${sinks:-0}" -ge 12 ]
		report $? "node 1: answered gets by RDMA WRITE into their sinks (${sinks:-0})"
	fi
	portals_clean "after serving"

	# 1b. The same over a lossy link.
	modprobe sch_netem 2>/dev/null
	"$stress" server --pid 81 --clients 1 --timeout-ms 120000 --quiet &
	tc qdisc add dev eth0 root netem loss $loss%
	barrier lossy
	wait $!
	report $? "node 1: over a link losing $loss% each way: served, every message verified"
	tc qdisc del dev eth0 root
	barrier lossy-over
	demand_test
	idle_close_test
	reclaim_test

	# 2b. Node 0 stops after our CTS for its 1 MiB put.
	echo 3000 >/sys/module/ptl_rdma/parameters/progress_timeout_ms
	stalls=$(iface_stat TX: timeouts)
	"$stress" server --pid 82 --clients 2 --timeout-ms 60000 --quiet &
	server=$!
	barrier stall
	start=$(date +%s%N)
	deadline=$((SECONDS + 30))
	seen=0
	while [ $SECONDS -lt $deadline ]; do
		n=$(iface_peers)
		[ "$n" -gt 0 ] && seen=1
		[ $seen = 1 ] && [ "$n" = 0 ] && break
		sleep 0.1
	done
	elapsed_ms=$((($(date +%s%N) - start) / 1000000))
	[ $seen = 1 ] && [ "$(iface_peers)" = 0 ]
	report $? "node 1: the connection of a peer that stopped after our CTS ended ($elapsed_ms ms after the barrier, progress timeout 3000 ms, watchdog kills $(($(iface_stat TX: timeouts) - stalls)))"
	barrier stall-over
	kill $server 2>/dev/null
	wait $server
	echo 10000 >/sys/module/ptl_rdma/parameters/progress_timeout_ms
	portals_clean "after the stalled peer"

	# 2. Peer death: we fall silent under node 0's traffic.
	"$stress" server --pid 78 --clients 1 --timeout-ms 60000 --quiet &
	barrier silence
	sleep 5
	tc qdisc add dev eth0 root netem loss 100%
	sleep 12
	kill %1 2>/dev/null
	wait
	tc qdisc del dev eth0 root
	barrier silence-over
	sleep 3
	portals_clean "after the silence"

	# 3. Module unload under traffic.
	"$stress" server --pid 79 --clients 1 --timeout-ms 60000 --quiet &
	barrier unload
	sleep 5
	"$ptlctl" iface unbind 0 && rmmod ptl_rdma
	report $? "node 1: unbound and unloaded ptl_rdma mid-transfer"
	kill %1 2>/dev/null
	wait
	[ "$(rdma_res)" = "$res0" ]
	report $? "node 1: RDMA resources back to before binding"

	# 4. Serve node 0 until its device goes away under it.
	bind_rdma
	report $? "node 1: ptl_rdma loaded and bound again"
	"$stress" server --pid 80 --clients 1 --timeout-ms 60000 --quiet &
	barrier removal
	barrier removal-over
	kill %1 2>/dev/null
	wait
	sleep 2
	portals_clean "at the end"
	"$ptlctl" iface unbind 0 && rmmod ptl_rdma && rmmod ptl
	report $? "node 1: both modules unload"
	[ "$(rdma_res)" = "$res0" ]
	report $? "node 1: RDMA resources back to before binding"
	rdma_rxe_down rxe0
	exit $((failures > 0))
fi

# Peer events, as ptlctl monitor prints them, until the silent peer.
"$ptlctl" monitor >/tmp/monitor.out 2>&1 &
monitor=$!
sleep 1	# let it join the group
barrier served
"$stress" client --server "$peer_nid:77" --id 0 --count 150 --max-size 1M \
	--seed 1 --timeout-ms 60000 --quiet &
client0=$!
"$stress" client --server "$peer_nid:77" --id 1 --count 150 --max-size 3M \
	--seed 2 --timeout-ms 60000 --quiet
rc=$?
wait $client0 || rc=1
report $rc "node 0: two clients, 300 operations of 0 B .. 1 MiB and 0 B .. 3 MiB to the other node"
[ $rc = 0 ] || rdma_state
rdma_srq_check "node 0" "$srq_buffers"
"$ptlctl" -s iface show 0 | sed 's/^/#   /'
# The "rts" column: messages that moved by RDMA WRITE, with no copy.
if [ "$rdma_min" != 0 ]; then
	writes=$(rdma_writes)
	[ "${writes:-0}" -gt 0 ]
	report $? "node 0: large messages moved by RDMA WRITE (${writes:-0})"
	# Gets over rdma_min, up to 1 MiB: the REPLY written into the
	# initiator's sink, in one round trip.
	sinks=$(sink_gets)
	[ "${sinks:-0}" -gt 0 ]
	report $? "node 0: large gets' replies written into their sinks (${sinks:-0})"
	"$stress" client --server "$peer_nid:77" --id 3 --count 12 \
		--sizes 1048576 --mix get=100 --seed 5 --timeout-ms 60000 --quiet
	rc=$?
	n=$(($(sink_gets) - sinks))
	[ $rc = 0 ] && [ $n = 12 ]
	report $? "node 0: 12 gets of 1 MiB, each answered through its sink ($n)"
	sinks=$(sink_gets)
	writes=$(rdma_writes)
	# 3 MiB each: puts out and gets' replies in, in 1 MiB rounds.
	"$stress" client --server "$peer_nid:77" --id 2 --count 12 \
		--sizes 3145728 --mix put=50,ack=25,get=25 --seed 4 \
		--timeout-ms 60000 --quiet
	rc=$?
	rounds=$(($(rdma_writes) - writes))
	[ $rc = 0 ] && [ $rounds = 12 ]
	report $? "node 0: 12 operations of 3 MiB, each by RDMA WRITE in 1 MiB rounds ($rounds)"
	# Gets over the sink's 1 MiB: the old way (RTS/CTS, rounds).
	writes=$(rdma_writes)
	"$stress" client --server "$peer_nid:77" --id 4 --count 6 \
		--sizes 3145728 --mix get=100 --seed 6 --timeout-ms 60000 --quiet
	rc=$?
	rounds=$(($(rdma_writes) - writes))
	n=$(($(sink_gets) - sinks))
	[ $rc = 0 ] && [ $rounds = 6 ] && [ $n = 0 ]
	report $? "node 0: 6 gets of 3 MiB by RDMA WRITE in rounds ($rounds), none through a sink ($n)"
	writes=$(rdma_writes)
else
	"$stress" client --server "$peer_nid:77" --id 2 --count 12 \
		--sizes 3145728 --seed 4 --timeout-ms 60000 --quiet
	report $? "node 0: 12 operations of 3 MiB"
fi

# 1b. Both ways lossy: Soft-RoCE retransmits after ACK timeouts (and
# replays registrations: prd_slot_new_key()); every message still arrives
# intact, and large ones still move by RDMA WRITE.
portals_clean "after the clients"
modprobe sch_netem 2>/dev/null
barrier lossy
tc qdisc add dev eth0 root netem loss $loss%
"$stress" client --server "$peer_nid:81" --id 0 --count 150 --max-size 1M \
	--seed 3 --timeout-ms 60000 --quiet
report $? "node 0: 150 operations of 0 B .. 1 MiB over a link losing $loss% each way"
tc qdisc del dev eth0 root
if [ "$rdma_min" != 0 ]; then
	lossy_writes=$(rdma_writes)
	[ "${lossy_writes:-0}" -gt "${writes:-0}" ]
	report $? "node 0: over the lossy link too, large messages moved by RDMA WRITE ($((${lossy_writes:-0} - ${writes:-0})))"
	lossy_sinks=$(sink_gets)
	[ "${lossy_sinks:-0}" -gt "${sinks:-0}" ]
	report $? "node 0: over the lossy link too, gets through sinks ($((${lossy_sinks:-0} - ${sinks:-0})))"
fi
# The link did lose packets: rxe0 saw gaps or retransmitted.
retrans=$(rdma statistic show link rxe0/1 2>/dev/null | tr ' ' '\n' |
	grep -A1 -xE 'completer_retry_err|rcvd_seq_err|out_of_seq_request|duplicate_request' |
	awk '/^[0-9]+$/ { n += $1 } END { print n + 0 }')
[ "$retrans" -gt 0 ]
report $? "node 0: rxe0 retransmitted or saw gaps ($retrans times)"
barrier lossy-over
demand_test
idle_close_test
reclaim_test

# 2b. We stop after node 1's CTS for a 1 MiB put: our WRITEs never
# leave, our QP's retries run out, and our disconnect is lost too.
barrier stall
"$stress" client --server "$peer_nid:82" --id 0 --count 1 --sizes 64 \
	--timeout-ms 20000 --quiet
report $? "node 0: connected to node 1 for the stall"
stall_filter_add
report $? "node 0: RDMA WRITEs and rdma_cm messages filtered out"
! "$stress" client --server "$peer_nid:82" --id 1 --count 1 --sizes 1048576 \
	--mix put=100 --timeout-ms 20000 --quiet
report $? "node 0: the 1 MiB put failed"
barrier stall-over
tc qdisc del dev eth0 root
sleep 2
portals_clean "after the stall"

# 2. Node 1 falls silent 5 s after the barrier. The events of this step
# are those after the monitor's first $before lines. Its connection may
# end with 0 operations failed: the client's may all be waiting for the
# server's flow-control messages, and a NOOP runs out of retries.
before=$(wc -l </tmp/monitor.out)
barrier silence
client_fails 78 "a silent peer"
# The event leaves with the operations' failures: give ptlctl monitor
# the moment it needs to print it before it is stopped.
peer_event="^iface 0 peer $PEER_IP \\($peer_nid\\)"
for ((i = 0; i < 50; i++)); do
	tail -n +$((before + 1)) /tmp/monitor.out | grep -qE "$peer_event unreachable " && break
	sleep 0.2
done
kill $monitor 2>/dev/null
wait $monitor 2>/dev/null
sed 's/^/#   monitor: /' /tmp/monitor.out
grep -qE "$peer_event up " /tmp/monitor.out
report $? "node 0: ptlctl monitor saw the connection come up"
tail -n +$((before + 1)) /tmp/monitor.out |
	grep -qE "$peer_event unreachable incarnation 0x[0-9a-f]+ failed [0-9]+\$"
report $? "node 0: ptlctl monitor saw the silent peer become unreachable, with the operations that failed"
sleep 2
portals_clean "after the silent peer"
barrier silence-over

# 3. Node 1 unloads ptl_rdma 5 s after the barrier.
barrier unload
client_fails 79 "a peer that unloads ptl_rdma"
portals_clean "after the unload"

# 4. Device removal under traffic, here.
barrier removal
"$stress" client --server "$peer_nid:80" --id 0 --seconds 60 --max-size 1M \
	--timeout-ms $op_timeout_ms --quiet &
client=$!
sleep 5
start=$(date +%s%N)
rdma_rxe_down rxe0
report $? "node 0: rdma link delete rxe0 under traffic"
wait $client
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -ne 0 ] && [ "$elapsed_ms" -lt 30000 ]
report $? "node 0: the client failed after the device removal, no hang (status $rc, ${elapsed_ms} ms)"
barrier removal-over
"$ptlctl" -s iface show 0 | sed 's/^/#   /'
sleep 2
portals_clean "after the device removal"
"$ptlctl" iface unbind 0 && rmmod ptl_rdma && rmmod ptl
report $? "node 0: both modules unload"
exit $((failures > 0))
