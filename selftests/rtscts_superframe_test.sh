#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): super-frames and large
# frames (rtscts/gso.c). A burst of frames to one peer leaves ptl_rtscts as
# one fraglist GSO skb; a veth carries it whole, and where a device or a
# qdisc cannot, the transport's offload gives the stack back the frames.
# Parts 1 to 5 run with large_frames=N, so that the data goes as frames
# of the MTU, and part 6 with large frames (wire version 5: one DATA frame
# for up to 64 KiB, cut into frames of the MTU where a device cannot carry
# it):
#
#     default namespace (node a)                       namespace b (node b)
#   va 10.0.0.1 --veth-- pa [bridge ptlbr] pb --veth-- vb 10.0.0.2
#   (every device at MTU 1500)
#
#  1. 1 MiB puts and gets at MTU 1500 (ptl_stress, payloads verified):
#     node a sent super-frames and node b received them whole
#     (tx_superframes, rx_superframes), and no operation failed; a packet
#     socket on vb (ptl_inject record) holds a reference to every one of
#     them meanwhile, so b takes its frames off a shared super-frame and
#     the socket still reads it whole;
#  2. the same through a tbf qdisc on each end whose burst holds one
#     full frame: tbf cuts every longer super-frame in software with the
#     offload (a failed cut is a drop tbf counts); payloads verified, tbf
#     dropped nothing, and b received far fewer super-frames whole than a
#     sent;
#  3. without checksum offload (ethtool -K tx off), where pcsum (wire
#     version 3) is left to a device that computes any checksum: on va,
#     node a computes it when it seals each frame, and the super-frames
#     of such frames are cut where the device cannot carry them; on the
#     bridge port pb only, a's frames leave va to be summed by a device,
#     and the offload computes each one's pcsum where it cuts them at pb;
#     payloads verified, b received no super-frame whole and counted no
#     bad frame, in both; and no full DATA frame reached vb with pcsum 0
#     when pb cut them (a tc u32 filter at vb's ingress counts those: in
#     part 1 it saw many, the frames a veth carries with pcsum left
#     undone);
#  4. netem corrupting 2 % of what va sends, duplicating all of it: netem
#     copies a duplicated frame whole before it flips a bit, anywhere in
#     it, most often in the payload that only pcsum covers, and the stack
#     computes that pcsum first; b catches the corruption (bad frames
#     counted) and every payload arrives intact;
#  5. with the module parameter superframes=N, frames go one by one: no
#     super-frame is sent, payloads verified;
#  6. large frames: across the veth b receives them whole (over 8 KiB of
#     frame per frame received on average), and an eager put of 4 KiB
#     leaves a as one frame, a large MSG; through tbf (burst: one full
#     frame) and from va without checksum offload they are cut, tbf drops
#     nothing and b counts no bad frame beyond resent copies (every
#     segment's crc and pcsum right: a copy resent after its message was
#     acknowledged may carry bytes the application changed since); with netem losing 2 % of what va sends and reordering a
#     quarter of it, and then duplicating all of it, every payload
#     arrives intact and b saw losses (frames out of order), duplicates;
#     each of these with eager messages too (large MSGs, cut into a MSG
#     and DATA frames), and those once more through netem corrupting 2 %
#     (a cut large MSG partly lost, its rest resent as DATA); payloads
#     verified throughout;
#  7. an interface bound with an ethertype that is not one of IEEE's two
#     local experimental ones (0x9000) gets no offload and sends no
#     super-frames, and its traffic is delivered;
#  8. nothing is left behind; the modules unload.
# Environment: NET_MESSAGES (run-net-tests.sh's; default 10,000): each
# phase sends one 500th of it per client (at least 4), 256 KiB .. 1 MiB
# each.
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
param=/sys/module/ptl_rtscts/parameters/superframes
large=/sys/module/ptl_rtscts/parameters/large_frames
inject=$build/tools/ptl_inject/ptl_inject
netbench=$build/tools/ptl_perf/ptl_netbench
pid=79
count=$((${NET_MESSAGES:-10000} / 500))
((count >= 4)) || count=4
dir=$(mktemp -d /tmp/ptl-superframe.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# stress NAME [MIN MAX MIX]: ptl_stress, 2 clients of puts and gets from
# a to b, MIN to MAX bytes each (default 256K to 1M: RTS/CTS and DATA).
stress() {
	local rc=0 pids=() i min=${2:-256K} max=${3:-1M}
	local mix=${4:-put=40,ack=40,get=20}

	$ip netns exec b "$stress" server --pid "$pid" --clients 2 \
		--timeout-ms 60000 --quiet &
	local server=$!
	sleep 0.5
	for i in 0 1; do
		"$stress" client --server "$nid_b:$pid" --id "$i" --count "$count" \
			--min-size "$min" --max-size "$max" --mix "$mix" \
			--seed $((i + 1)) --timeout-ms 60000 --quiet &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	wait "$server" || rc=1
	[ $rc = 0 ] || peers_show
	report $rc "$1: ptl_stress, $min to $max puts and gets, payloads verified"
}

# eager NAME: the same with eager messages of 1,400 bytes to 16 KiB (at
# most eager_max), each a MSG of more than one frame of the MTU: a large
# MSG, cut where the phase cuts (a MSG, then DATA frames).
eager() { stress "$1, eager" 1400 16K; }

# note NAME SENT RECEIVED: what a phase did, for the log.
note() { echo "# $1: a sent $2 super-frames, b received $3 whole"; }

modprobe sch_tbf || true
# A kernel without bridges (the debug kernel's config): a plain veth pair,
# and part 3 without its bridge port.
if modprobe -q bridge; then
	netns_setup_bridge 2 || { report 1 "two nodes on a bridge"; exit 1; }
	ports="pa pb"
else
	# shellcheck disable=SC2119 # the module's defaults
	netns_setup || { report 1 "two nodes on a veth"; exit 1; }
	ports=
fi
counters_save
for d in va $ports; do $ip link set dev "$d" mtu 1500; done &&
	$ip -n b link set dev vb mtu 1500
# Full DATA frames (type 4, frame_len 1500: 0xdc 0x05) whose pcsum (46)
# is 0, counted and let through at vb's ingress (offsets from the frame).
$ip netns exec b $tc qdisc add dev vb ingress &&
	$ip netns exec b $tc filter add dev vb parent ffff: protocol 0x88b5 \
		u32 match u8 4 0xff at 1 match u16 0xdc05 0xffff at 4 \
		match u16 0 0xffff at 46 action ok
report $? "a tc u32 filter at vb's ingress counts full DATA frames with pcsum 0"
# What the filter's action let through (its statistics: the u32 rule's
# own counters need CONFIG_CLS_U32_PERF, which the debug kernel lacks).
unsummed() {
	$ip netns exec b $tc -s filter show dev vb ingress |
		grep -oE 'Sent [0-9]+ bytes [0-9]+ pkt' | grep -oE '[0-9]+ pkt' |
		grep -oE '[0-9]+' | head -n 1
}

echo N >"$large"
[ "$(cat "$large")" = N ]
report $? "large_frames=N for parts 1 to 5"

# 1. A clean veth carries them whole.
tx0=$(a_iface tx_superframes) rx0=$(b_iface rx_superframes)
re0=$(a_iface retransmits) f0=$(a_iface msgs_failed)
$ip netns exec b "$inject" record -i vb --file "$dir/b.pcap" --wait-ms 8000 \
	>"$dir/record.out" 2>&1 &
rec=$!
stress "veth"
wait $rec
report $? "veth: a packet socket on vb read what b received meanwhile ($(cat "$dir/record.out"))"
tx1=$(a_iface tx_superframes) rx1=$(b_iface rx_superframes)
note "veth" $((tx1 - tx0)) $((rx1 - rx0))
u1=$(unsummed)
echo "# veth: $u1 full DATA frames reached vb with pcsum left to a device"
[ "${u1:-0}" -gt 0 ]
report $? "veth: pcsum is left undone across a veth (the filter sees such frames)"
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

# 3. No checksum offload on va, then on pb alone: pcsum in software.
bad0=$(b_iface bad_frames) u1=$(unsummed)
[ -n "$ports" ] || skip "pb without checksum offload" "no bridge in this kernel"
for d in va ${ports:+pb}; do
	tx2=$(a_iface tx_superframes) rx2=$(b_iface rx_superframes)
	ethtool -K "$d" tx off >/dev/null
	report $? "ethtool -K $d tx off (no checksum offload)"
	stress "$d without checksum offload"
	tx3=$(a_iface tx_superframes) rx3=$(b_iface rx_superframes)
	note "$d without checksum offload" $((tx3 - tx2)) $((rx3 - rx2))
	[ $((tx3 - tx2)) -gt 0 ] && [ "$rx3" = "$rx2" ]
	report $? "$d without checksum offload: a sent super-frames, b received none whole"
	[ "$(b_iface bad_frames)" = "$bad0" ]
	report $? "$d without checksum offload: b counted no bad frame (every pcsum right)"
	[ "$(unsummed)" = "$u1" ]
	report $? "$d without checksum offload: no full DATA frame reached vb without its pcsum"
	ethtool -K "$d" tx on >/dev/null
	u1=$(unsummed)
done

# 4. netem corrupts frames after the stack computed their pcsum.
$tc qdisc add dev va root netem corrupt 2% duplicate 100%
report $? "netem on va: corrupt 2%, duplicate 100%"
stress "netem corrupt 2%"
bad1=$(b_iface bad_frames)
echo "# netem corrupt: b counted $((bad1 - bad0)) bad frames"
[ "$bad1" -gt "$bad0" ]
report $? "netem corrupt 2%: b caught corrupted frames (bad frames counted)"
$tc qdisc del dev va root
tx2=$(a_iface tx_superframes)

# 5. Switched off.
echo N >"$param"
stress "superframes=N"
[ "$(a_iface tx_superframes)" = "$tx2" ]
report $? "superframes=N: no super-frame sent"
echo Y >"$param"

# 6. Large frames.
echo Y >"$large"
[ "$(cat "$large")" = Y ]
report $? "large_frames=Y"
rx0=$(b_iface rx_superframes) fr0=$(b_iface rx_frames) by0=$(b_iface rx_bytes)
bad0=$(b_iface bad_frames)
stress "large frames"
frames=$(($(b_iface rx_frames) - fr0)) bytes=$(($(b_iface rx_bytes) - by0))
echo "# large frames: b received $frames frames, $bytes bytes, $(($(b_iface rx_superframes) - rx0)) whole large frames or super-frames"
[ "$frames" -gt 0 ] && [ $((bytes / frames)) -gt 8192 ]
report $? "large frames: b received them whole (over 8 KiB per frame)"
# A stream of 1,000 puts of 4 KiB (ptl_netbench): as frames of the MTU
# each is a MSG and a DATA frame, as a large MSG one frame. What a sends
# besides are acknowledgements of b's credit messages, one per 8 puts.
$ip netns exec b "$netbench" server >"$dir/netbench-server.out" 2>&1 &
nbs=$!
fr0=$(a_iface tx_frames) ms0=$(a_iface msgs_tx)
wait_for 10 "$netbench" client 10.0.0.2 --transports=portals --no-latency \
	--bw-sizes=4K --bw-bytes=4000K --bw-reps=1 >"$dir/netbench.out" 2>&1
rc=$?
frames=$(($(a_iface tx_frames) - fr0)) msgs=$(($(a_iface msgs_tx) - ms0))
kill "$nbs" 2>/dev/null
wait "$nbs" 2>/dev/null
echo "# large frames, 4 KiB put stream: a sent $msgs messages in $frames frames"
[ $rc = 0 ] && [ "$msgs" -ge 1000 ] && [ $((frames * 4)) -le $((msgs * 5)) ] ||
	cat "$dir/netbench.out"
report $? "large frames: a stream of 4 KiB puts, one frame a message (at most 1.25 with acknowledgements)"
$tc qdisc add dev va root tbf rate 10gbit burst 1540 limit 4000000 &&
	$ip netns exec b $tc qdisc add dev vb root tbf rate 10gbit \
		burst 1540 limit 4000000
report $? "large frames: tbf on both ends, burst 1540 bytes"
rx1=$(b_iface rx_superframes) fr0=$(b_iface rx_frames)
stress "large frames through tbf"
eager "large frames through tbf"
drops=$($tc -s qdisc show dev va | grep -oE 'dropped [0-9]+' | grep -oE '[0-9]+')
rx2=$(b_iface rx_superframes) frames=$(($(b_iface rx_frames) - fr0))
echo "# large frames through tbf: b received $frames frames, $((rx2 - rx1)) whole"
[ "${drops:-1}" = 0 ] && [ $(((rx2 - rx1) * 10)) -lt "$frames" ]
report $? "large frames through tbf: cut (b received under a tenth whole), tbf dropped nothing"
$tc qdisc del dev va root
$ip netns exec b $tc qdisc del dev vb root
ethtool -K va tx off >/dev/null
rx1=$(b_iface rx_superframes) re0=$(a_iface retransmits)
stress "large frames from va without checksum offload"
eager "large frames from va without checksum offload"
[ "$(b_iface rx_superframes)" = "$rx1" ]
report $? "large frames from va without checksum offload: cut, b received none whole"
ethtool -K va tx on >/dev/null
# Only here does b check pcsums (every other frame of this part was
# partial, across the veth), each of the ~15,000 segments'. One run in
# eleven of session 24 (with frame heads from page fragments) counted
# one bad frame in this part, cause not found: a copy
# resent after its message was acknowledged may be summed from pages the
# application has written since, and fail where it would have been a
# duplicate. A wrong cut would spoil every segment, so b may count at
# most as many bad frames as a resent meanwhile.
bad=$(($(b_iface bad_frames) - bad0)) resent=$(($(a_iface retransmits) - re0))
echo "# large frames: b counted $bad bad frames, a resent $resent frames without checksum offload"
[ "$bad" -le "$resent" ]
report $? "large frames: every segment's crc and pcsum right (no more bad frames than resent copies)"
ooo0=$(b_iface out_of_order) dup0=$(b_iface duplicates)
$tc qdisc add dev va root netem loss 2% delay 1ms reorder 75%
report $? "netem on va: loss 2%, a quarter reordered"
stress "large frames, netem loss 2% and reordering"
eager "large frames, netem loss 2% and reordering"
$tc qdisc change dev va root netem duplicate 100%
stress "large frames, netem duplicating all"
eager "large frames, netem duplicating all"
# netem cuts a large frame before it corrupts one of its segments: b
# drops that one, takes those before it, and a sends the rest again (a
# large MSG's rest as DATA).
$tc qdisc change dev va root netem corrupt 2%
eager "large frames, netem corrupting 2%"
$tc qdisc del dev va root
echo "# large frames through netem: b counted $(($(b_iface out_of_order) - ooo0)) out of order, $(($(b_iface duplicates) - dup0)) duplicates"
[ "$(b_iface out_of_order)" -gt "$ooo0" ] && [ "$(b_iface duplicates)" -gt "$dup0" ]
report $? "large frames through netem: b saw frames out of order and duplicates"
tx2=$(a_iface tx_superframes)

# 7. No offload for an ethertype outside the experimental pair.
"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0 &&
	"$ptlctl" iface bind 0 dev va ethertype 0x9000 &&
	$ip netns exec b "$ptlctl" iface bind 0 dev vb ethertype 0x9000
report $? "both ends bound again with ethertype 0x9000"
stress "ethertype 0x9000"
[ "$(a_iface tx_superframes)" = 0 ]
report $? "ethertype 0x9000: no super-frame sent"

# 8. Nothing left behind.
sleep 1
counters_back
report $? "module counters are back where they were"
netns_teardown
exit $((failures > 0))
