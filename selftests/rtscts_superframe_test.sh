#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): super-frames
# (rtscts/gso.c). A burst of frames to one peer leaves ptl_rtscts as one
# fraglist GSO skb; a veth carries it whole, and where a device or a
# qdisc cannot, the transport's offload gives the stack back the frames:
#
#     default namespace (node a)              namespace b (node b)
#   va 10.0.0.1, MTU 1500       ---veth---    vb 10.0.0.2, MTU 1500
#
#  1. 1 MiB puts and gets at MTU 1500 (ptl_stress, payloads verified):
#     node a sent super-frames and node b received them whole
#     (tx_superframes, rx_superframes), and no operation failed;
#  2. the same through a tbf qdisc on each end whose burst holds one
#     full frame: tbf cuts every longer super-frame in software with the
#     offload (a failed cut is a drop tbf counts); payloads verified, tbf
#     dropped nothing, and b received far fewer super-frames whole than a
#     sent;
#  3. with the module parameter superframes=N, frames go one by one: no
#     super-frame is sent, payloads verified;
#  4. an interface bound with an ethertype that is not one of IEEE's two
#     local experimental ones (0x9000) gets no offload and sends no
#     super-frames, and its traffic is delivered;
#  5. nothing is left behind; the modules unload.
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
param=/sys/module/ptl_rtscts/parameters/superframes
pid=79

# stress NAME: ptl_stress, 2 clients of large puts and gets from a to b.
stress() {
	local rc=0 pids=() i

	$ip netns exec b "$stress" server --pid "$pid" --clients 2 \
		--timeout-ms 60000 --quiet &
	local server=$!
	sleep 0.5
	for i in 0 1; do
		"$stress" client --server "$nid_b:$pid" --id "$i" --count 20 \
			--min-size 256K --max-size 1M --mix put=40,ack=40,get=20 \
			--seed $((i + 1)) --timeout-ms 60000 --quiet &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	wait "$server" || rc=1
	[ $rc = 0 ] || peers_show
	report $rc "$1: ptl_stress, 1 MiB puts and gets, payloads verified"
}

# note NAME SENT RECEIVED: what a phase did, for the log.
note() { echo "# $1: a sent $2 super-frames, b received $3 whole"; }

modprobe sch_tbf || true
# shellcheck disable=SC2119 # the module's defaults
netns_setup || { report 1 "two nodes on a veth"; exit 1; }
counters_save
$ip link set va mtu 1500 && $ip -n b link set vb mtu 1500

# 1. A clean veth carries them whole.
tx0=$(a_iface tx_superframes) rx0=$(b_iface rx_superframes)
re0=$(a_iface retransmits) f0=$(a_iface msgs_failed)
stress "veth"
tx1=$(a_iface tx_superframes) rx1=$(b_iface rx_superframes)
note "veth" $((tx1 - tx0)) $((rx1 - rx0))
[ $((tx1 - tx0)) -gt 0 ] && [ $((rx1 - rx0)) -gt 0 ]
report $? "veth: a sent super-frames and b received them whole"
[ "$(a_iface msgs_failed)" = "$f0" ]
report $? "veth: no operation failed"
echo "# veth: a resent $(($(a_iface retransmits) - re0)) frames, b counted $(b_iface duplicates) duplicates"

# 2. tbf cuts them in software with the offload.
$tc qdisc add dev va root tbf rate 10gbit burst 1540 limit 4000000 &&
	$ip netns exec b $tc qdisc add dev vb root tbf rate 10gbit \
		burst 1540 limit 4000000
report $? "tbf on both ends, burst 1540 bytes (one full frame)"
stress "through tbf"
tx2=$(a_iface tx_superframes) rx2=$(b_iface rx_superframes)
note "through tbf" $((tx2 - tx1)) $((rx2 - rx1))
drops=$($tc -s qdisc show dev va | grep -oE 'dropped [0-9]+' | grep -oE '[0-9]+')
echo "# tbf on va: $($tc -s qdisc show dev va | grep -E 'Sent')"
[ "${drops:-1}" = 0 ]
report $? "through tbf: tbf dropped nothing (every cut succeeded)"
[ $((tx2 - tx1)) -gt 0 ] && [ $(((rx2 - rx1) * 10)) -lt $((tx2 - tx1)) ]
report $? "through tbf: a sent super-frames, b received under a tenth of them whole"
$tc qdisc del dev va root
$ip netns exec b $tc qdisc del dev vb root

# 3. Switched off.
echo N >"$param"
stress "superframes=N"
[ "$(a_iface tx_superframes)" = "$tx2" ]
report $? "superframes=N: no super-frame sent"
echo Y >"$param"

# 4. No offload for an ethertype outside the experimental pair.
"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0 &&
	"$ptlctl" iface bind 0 dev va ethertype 0x9000 &&
	$ip netns exec b "$ptlctl" iface bind 0 dev vb ethertype 0x9000
report $? "both ends bound again with ethertype 0x9000"
stress "ethertype 0x9000"
[ "$(a_iface tx_superframes)" = 0 ]
report $? "ethertype 0x9000: no super-frame sent"

# 5. Nothing left behind.
sleep 1
counters_back
report $? "module counters are back where they were"
netns_teardown
exit $((failures > 0))
