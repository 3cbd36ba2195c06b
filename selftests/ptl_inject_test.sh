#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ptl_rtscts.ko against raw frames from tools/ptl_inject: hostile frames,
# floods and a thousand fake peers. Runs inside a test guest as root
# (tools/testing/vm/run), like run-in-guest.sh, and prints TAP lines ("ok - ...",
# "not ok - ...", diagnostics as "# ..."); the harness itself fails the run
# on any oops, WARN or bad taint in the guest's kernel log.
#
#   netns ptlinj-a                             netns ptlinj-b
#   +----------------------------------+       +----------------------------------+
#   | ptl_inject (AF_PACKET, raw)      |       | ptl.ko + ptl_rtscts.ko           |
#   | ptl_stress client                |       |   iface 0 bound to veth-b,       |
#   |   iface 0 bound to veth-a        |       |   nid 10.0.0.2 (167772162)       |
#   |   (from step 3), nid 10.0.0.1    |       | ptl_stress server, pid 77        |
#   | veth-a 10.0.0.1/24               +-------+ veth-b 10.0.0.2/24               |
#   +----------------------------------+ veth  +----------------------------------+
#
#  1. ptl_inject hostile: the catalogue of malformed and semantically wrong
#     frames; bad_frames must rise by at least what the frame codec
#     refuses plus the bad checksums and wrong-node frames, stale_frames by
#     the stale ones
#  2. floods: random bytes, the catalogue, valid MSGs on one stream
#  3. a Portals exchange (ptl_stress, eager and RTS/CTS sizes) still works
#  4. ptl_inject peers: one MSG from each of 1000 fake nodes; every one is
#     acknowledged and the receiver keeps state for each; prints the peer
#     count and the memory it takes (slab caches, MemAvailable)
#  5. a SYN flood from 3000 more nids, then another exchange
#  6. unbind, delete the namespaces, unload both modules
#
# Status: written before ptl_rtscts.ko worked, and not yet called by
# run-in-guest.sh. Wire it in there with
#     "$top/selftests/ptl_inject_test.sh" || failures=$((failures + 1))
# (after ptl.ko was unloaded, or anywhere: it loads only what is not
# loaded and unloads only what it loaded). It skips cleanly when
# ptl_rtscts.ko, ptlctl or ptl_inject are not built.
#
# Environment: BUILD (default TOP/build), PTL_MODULE_DIR (where ptl.ko and
# ptl_rtscts.ko are, default TOP), PTL_INJECT_PEERS (default 1000).
# Exit status: 0 if every test passed or was skipped, 1 otherwise.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
npeers=${PTL_INJECT_PEERS:-1000}

IP=/sbin/ip # busybox's ip shadows iproute2's in guests, and knows no netns
ptlctl=$build/tools/ptlctl/ptlctl
inject=$build/tools/ptl_inject/ptl_inject
stress=$build/tools/ptl_stress/ptl_stress

NS_A=ptlinj-a
NS_B=ptlinj-b
NID_B=167772162 # 10.0.0.2, the default nid of veth-b (its IPv4 address)
PID_B=77

loaded=()   # modules this script loaded, unloaded in reverse at the end
bg_pids=()
tmp=$(mktemp -d /tmp/ptl_inject_test.XXXXXX)

diag() { echo "# $*"; }
# Shows a file as diagnostics (after a failure).
show() { [ -s "$1" ] && sed 's/^/#   /' "$1" | tail -n "${2:-20}"; }

in_a() { "$IP" netns exec "$NS_A" "$@"; }
in_b() { "$IP" netns exec "$NS_B" "$@"; }

# jnum KEY [FILE]: the first integer value of "KEY" in JSON (compact or
# pretty; the key quoted, so "peers" does not match "peers_reclaimed").
jnum() {
	grep -oE "\"$1\": *[0-9]+" "${2:--}" | head -n 1 | grep -oE '[0-9]+$'
}

# b_iface KEY: a number from interface 0 of node b (its counters included).
b_iface() { in_b "$ptlctl" -j -s iface show 0 2>/dev/null | jnum "$1"; }

meminfo() { echo $(($(awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo) * 1024)); }

# The transport's slab caches as /proc/slabinfo has them (a cache merged
# with another of the same size has no line of its own: boot with
# slab_nomerge to see it).
slab_report() { # slab_report LABEL
	local c line
	for c in rtscts_peer rtscts_txf; do
		line=$(grep -E "^$c " /proc/slabinfo 2>/dev/null)
		if [ -n "$line" ]; then
			# name active_objs num_objs objsize objperslab pagesperslab ...
			read -r _ active num size _ <<<"$line"
			diag "$1: slab $c: $active active objects of $size bytes ($num allocated," \
				"$((num * size)) bytes)"
		elif [ -e "/sys/kernel/slab/$c" ]; then
			diag "$1: slab $c merged into $(basename "$(readlink -f "/sys/kernel/slab/$c")")," \
				"object size $(cat "/sys/kernel/slab/$c/object_size") bytes"
		fi
	done
}

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local pid m i
	for pid in "${bg_pids[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${bg_pids[@]}"; do wait "$pid" 2>/dev/null; done
	"$IP" netns del "$NS_A" 2>/dev/null
	"$IP" netns del "$NS_B" 2>/dev/null
	for ((i = ${#loaded[@]} - 1; i >= 0; i--)); do
		m=${loaded[i]}
		[ -d "/sys/module/$m" ] && rmmod "$m" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---------------------------------------------------------------- prerequisites

rtscts_ko=
for f in "$moddir/rtscts/ptl_rtscts.ko" "$moddir/ptl_rtscts.ko"; do
	[ -f "$f" ] && rtscts_ko=$f && break
done
missing=
[ -n "$rtscts_ko" ] || missing="ptl_rtscts.ko is not built"
[ -x "$ptlctl" ] || missing="${missing:+$missing; }$ptlctl is not built"
[ -x "$inject" ] || missing="${missing:+$missing; }$inject is not built"
[ -x "$IP" ] || missing="${missing:+$missing; }no $IP"
if [ -n "$missing" ]; then
	skip "ptl_inject tests" "$missing"
	exit 0
fi

# ---------------------------------------------------------------- set-up

load() { # load NAME PATH
	if [ -d "/sys/module/$1" ]; then
		diag "$1 was already loaded: using it, leaving it loaded"
		return 0
	fi
	insmod "$2" || return 1
	loaded+=("$1")
}
load ptl "$moddir/ptl.ko"
report $? "ptl.ko loads"
load ptl_rtscts "$rtscts_ko"
report $? "ptl_rtscts.ko loads ($rtscts_ko)"

"$IP" netns add "$NS_A" && "$IP" netns add "$NS_B" &&
	modprobe veth &&
	"$IP" link add veth-a netns "$NS_A" type veth peer name veth-b netns "$NS_B" &&
	"$IP" -n "$NS_A" addr add 10.0.0.1/24 dev veth-a &&
	"$IP" -n "$NS_B" addr add 10.0.0.2/24 dev veth-b &&
	"$IP" -n "$NS_A" link set lo up && "$IP" -n "$NS_B" link set lo up &&
	"$IP" -n "$NS_A" link set veth-a up && "$IP" -n "$NS_B" link set veth-b up
report $? "two namespaces joined by veth (10.0.0.1/24, 10.0.0.2/24)"

in_b "$ptlctl" iface bind 0 dev veth-b >"$tmp/bind.log" 2>&1
status=$?
report $status "ptlctl iface bind 0 dev veth-b (in $NS_B)"
[ $status -eq 0 ] || show "$tmp/bind.log"
nid=$(b_iface nid)
[ "$nid" = "$NID_B" ]
report $? "interface 0 of $NS_B has nid $NID_B (10.0.0.2), got '${nid:-none}'"
mac_b=$(in_b cat /sys/class/net/veth-b/address)
if [ $status -ne 0 ] || [ -z "$mac_b" ]; then
	diag "no receiver: stopping here"
	exit 1
fi

# Counters of node b: "bad_frames", "stale_frames", "peers", ...
have_stats=1
[ -n "$(b_iface bad_frames)" ] || have_stats=0
# Without counters, the rtscts_bad tracepoint counts refused frames.
trace=/sys/kernel/tracing
[ -d $trace/events ] || trace=/sys/kernel/debug/tracing
if [ $have_stats -eq 0 ] && [ -w "$trace/events/rtscts/rtscts_bad/enable" ]; then
	diag "no bad_frames counter from ptlctl: counting the rtscts:rtscts_bad tracepoint"
	echo >"$trace/trace"
	echo 1 >"$trace/events/rtscts/rtscts_bad/enable"
fi
bad_count() {
	if [ $have_stats -eq 1 ]; then
		b_iface bad_frames
	elif [ -r "$trace/trace" ]; then
		grep -c rtscts_bad "$trace/trace"
	fi
}

# inject NAME ARGS...: ptl_inject -j from node a towards veth-b; its JSON
# report in $tmp/NAME.json.
inject() {
	local name=$1
	shift
	in_a timeout 600 "$inject" -j "$@" -i veth-a --dst-mac "$mac_b" \
		>"$tmp/$name.json" 2>"$tmp/$name.err"
}

# ---------------------------------------------------------------- 1. hostile

bad0=$(bad_count)
stale0=$(b_iface stale_frames)
inject hostile hostile --dst-nid 10.0.0.2 --dst-pid $PID_B --portal 4 --random 64
report $? "ptl_inject hostile sent the catalogue ($(jnum frames "$tmp/hostile.json") frames)"
show "$tmp/hostile.err"
sleep 1
bad1=$(bad_count)
refused=$(jnum refused_by_codec "$tmp/hostile.json")
bad_crc=$(jnum bad_crc "$tmp/hostile.json")
wrong=$(jnum wrong_node "$tmp/hostile.json")
want=$((${refused:-0} + ${bad_crc:-0} + ${wrong:-0}))
if [ -z "$bad0" ] || [ -z "$bad1" ]; then
	skip "bad frames are counted" "neither ptlctl counters nor the rtscts_bad tracepoint"
else
	[ $((bad1 - bad0)) -ge "$want" ]
	report $? "bad_frames rose by $((bad1 - bad0)) (at least $want: $refused refused by the" \
		"codec, $bad_crc bad checksums, $wrong for another node)"
fi
stale_sent=$(jnum stale "$tmp/hostile.json")
stale1=$(b_iface stale_frames)
if [ $have_stats -eq 1 ] && [ -n "$stale_sent" ]; then
	[ $((stale1 - stale0)) -ge "$stale_sent" ]
	report $? "stale_frames rose by $((stale1 - stale0)) (frames for another incarnation)"
fi
b_iface nid >/dev/null
report $? "interface 0 of $NS_B still answers ptlctl"

# ---------------------------------------------------------------- 2. floods

nflood=20000
bad0=$(bad_count)
inject flood-random flood --dst-nid 10.0.0.2 --what random --count $nflood --seed 7
report $? "flood of $nflood random frames"
inject flood-catalogue flood --dst-nid 10.0.0.2 --what catalogue --count $nflood
report $? "flood of $nflood catalogue frames"
# A new stream (ids must grow: 0x7eed0001 is after the catalogue's).
inject flood-msg flood --dst-nid 10.0.0.2 --dst-pid $PID_B --portal 4 --what msg \
	--count $nflood --src-nid 10.0.255.253 --stream 0x7eed0001
report $? "flood of $nflood valid MSG frames on one stream"
for f in random catalogue msg; do
	diag "flood $f: $(jnum frames_per_second "$tmp/flood-$f.json") frames/s," \
		"$(jnum send_errors "$tmp/flood-$f.json") send errors"
done
sleep 1
bad1=$(bad_count)
if [ $have_stats -eq 1 ]; then
	[ $((bad1 - bad0)) -ge $nflood ]
	report $? "bad_frames rose by $((bad1 - bad0)) during the floods (at least $nflood)"
fi
b_iface nid >/dev/null
report $? "interface 0 of $NS_B still answers ptlctl after the floods"

# ---------------------------------------------------------------- 3. exchange

in_a "$ptlctl" iface bind 0 dev veth-a >"$tmp/bind-a.log" 2>&1
status=$?
report $status "ptlctl iface bind 0 dev veth-a (in $NS_A)"
[ $status -eq 0 ] || show "$tmp/bind-a.log"

# exchange DESCRIPTION COUNT: ptl_stress from node a to a server on node b,
# sizes up to 64 KiB (eager and RTS/CTS), every byte verified.
exchange() {
	if [ ! -x "$stress" ]; then
		skip "$1" "$stress is not built"
		return
	fi
	in_b timeout 300 "$stress" server --pid $PID_B --clients 1 --quiet \
		>"$tmp/server.log" 2>&1 &
	local spid=$! c s
	bg_pids+=("$spid")
	sleep 2 # under TCG the server takes a moment to post its buffers
	in_a timeout 240 "$stress" client --server "$NID_B:$PID_B" --count "$2" \
		--max-size 64K --quiet >"$tmp/client.log" 2>&1
	c=$?
	wait "$spid"
	s=$?
	bg_pids=()
	report $((c || s)) "$1 (client exit $c, server exit $s)"
	if [ $((c || s)) -ne 0 ]; then
		show "$tmp/client.log"
		show "$tmp/server.log"
	fi
}
exchange "a Portals exchange across the veth works after the attack" 200

# ---------------------------------------------------------------- 4. peers

# The fake nodes fall silent once acknowledged: on a slow kernel (debug,
# a loaded host) sending to thousands of them outlasts peer_idle_s, and
# the first would be reclaimed before they are counted.
idle_param=/sys/module/ptl_rtscts/parameters/peer_idle_s
idle_s=$(cat "$idle_param" 2>/dev/null)
[ -n "$idle_s" ] && echo 3600 >"$idle_param"
peers0=$(b_iface peers)
mem0=$(meminfo MemAvailable)
sun0=$(meminfo SUnreclaim)
slab_report "before"
inject peers peers --peers "$npeers" --first-nid 0x0a000100 --target "$NID_B:$PID_B" --portal 4
report $? "ptl_inject peers: one MSG from each of $npeers fake nodes"
show "$tmp/peers.err"
sleep 1
acked=$(jnum acked "$tmp/peers.json")
[ "${acked:-0}" -eq "$npeers" ]
report $? "every fake node's MSG was acknowledged ($acked of $npeers," \
	"$(jnum rounds "$tmp/peers.json") rounds, $(jnum reset "$tmp/peers.json") RESETs)"
peers1=$(b_iface peers)
mem1=$(meminfo MemAvailable)
sun1=$(meminfo SUnreclaim)
lines=$(in_b "$ptlctl" peer show 2>/dev/null | wc -l)
# A thousand peers take several parts of a netlink dump: each resumes
# where the last stopped, so every peer is listed once.
nids=$(in_b "$ptlctl" -j peer show 2>/dev/null | grep -oE '"nid": *[0-9]+')
# The fake nodes' peers, counted by nid: the peers from before may have
# been reclaimed meanwhile on a slow kernel (peer_idle_s).
fake=$(grep -oE '[0-9]+$' <<<"$nids" |
	awk -v lo=$((0x0a000100)) -v n="$npeers" '$1 >= lo && $1 < lo + n' | sort -u | wc -l)
if [ -n "$peers1" ]; then
	[ "$fake" -eq "$npeers" ]
	report $? "the receiver keeps state for every fake node ($fake of $npeers;" \
		"peers $peers0 -> $peers1)"
else
	skip "the receiver keeps state for the new peers" "ptlctl shows no peer count"
fi
diag "peers of interface 0: $peers0 before, $peers1 after; 'ptlctl peer show' prints $lines lines"
dumped=$(wc -l <<<"$nids")
distinct=$(sort -u <<<"$nids" | wc -l)
[ -n "$peers1" ] && [ "$dumped" -eq "$peers1" ] && [ "$distinct" -eq "$dumped" ]
report $? "ptlctl peer show lists every peer once, over the parts of its dump" \
	"($dumped listed, $distinct distinct, of ${peers1:-?})"
# Idle peers hold no timer (timers.c): what runs on timers is bounded by
# the peers with something outstanding, not by the table.
if [ -n "$(b_iface peers_timers)" ]; then
	for ((i = 0; i < 25; i++)); do # up to 5 s: delayed ACKs, the last probes
		[ "$(b_iface peers_timers)" = 0 ] && break
		sleep 0.2
	done
	[ "$(b_iface peers_timers)" = 0 ]
	report $? "once idle, none of the $peers1 peers has a timer running" \
		"(peers_timers $(b_iface peers_timers))"
else
	skip "idle peers hold no timer" "ptlctl shows no peers_timers"
fi
slab_report "after $npeers peers"
diag "MemAvailable: $mem0 -> $mem1 bytes ($(((mem0 - mem1) / npeers)) bytes per peer)"
diag "SUnreclaim: $sun0 -> $sun1 bytes ($(((sun1 - sun0) / npeers)) bytes per peer;" \
	"whole-system figures, approximate)"

# ---------------------------------------------------------------- 5. SYN flood

nsyn=3000
inject flood-syn flood --dst-nid 10.0.0.2 --dst-pid $PID_B --portal 4 --what syn \
	--first-nid 0x0a020000 --count $nsyn
report $? "SYN flood: a valid MSG from each of $nsyn more nids"
sleep 1
diag "peers of interface 0 after the SYN flood: $(b_iface peers)"
slab_report "after the SYN flood"
exchange "a Portals exchange still works after the SYN flood" 50
[ -n "$idle_s" ] && echo "$idle_s" >"$idle_param"

# ---------------------------------------------------------------- 6. tear-down

in_a "$ptlctl" iface unbind 0 && in_b "$ptlctl" iface unbind 0
report $? "both interfaces unbind"
if [ -w "$trace/events/rtscts/rtscts_bad/enable" ]; then
	echo 0 >"$trace/events/rtscts/rtscts_bad/enable" 2>/dev/null
fi
"$IP" netns del "$NS_A" && "$IP" netns del "$NS_B"
report $? "the namespaces (and the veth pair) are deleted"
for ((i = ${#loaded[@]} - 1; i >= 0; i--)); do
	m=${loaded[i]}
	rmmod "$m"
	report $? "rmmod $m"
done
loaded=()
slab_report "after unloading"

exit $((failures > 0))
