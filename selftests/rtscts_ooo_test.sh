#!/bin/bash
# shellcheck disable=SC2317 # the functions that wait_for calls
# Runs inside a test guest (tools/testing/vm/run): what a hostile host can make
# ptl_rtscts.ko hold ahead of a gap that is never filled, and for how long
# (issue 20, R1). A SYN from any nid followed by frames whose sequence 0
# never comes used to be held for ever: no timer ran for the out-of-order
# queue, a peer with one was never reclaimed, the per-peer cap counted a
# truesize that the receive path's pulls had not updated (half the real
# memory over veth), nothing capped an interface, and the skbs kept the
# sending packet socket, hence its network namespace, alive.
#
#     default namespace (hostile host)          namespace b (node b)
#   va 10.0.0.1, MTU 65535   ----veth----   vb 10.0.0.2, MTU 65535, bound
#
#     namespace c: vc0 ---veth--- vc1 10.1.0.2 (bound), the injector on vc0;
#                  vcan0 ---veth--- vcan1 in the default namespace, a canary
#
#  0. ptl_inject gap from one forged nid, 300 frames of 1500 bytes: node b
#     holds at most max_window (256) of them, each in at most 2.5 KiB, and
#     ptlctl peer del frees them;
#  1. ptl_inject gap from one forged nid, 72 frames of 65535 bytes: node b
#     holds at most 4 MiB for it (its ooo_bytes), and drops the rest;
#  2. ptl_inject gap from OOO_NIDS (64) forged nids, OOO_FRAMES (12)
#     frames each: node b holds at most the interface's cap (ooo_max_kb,
#     8 MiB here), measured by ooo_bytes and by MemFree, and counts the
#     rest in ooo_dropped;
#  3. the gaps never close: within peer_timeout_ms (OOO_TIMEOUT_MS, 45 s:
#     longer than steps 1 and 2 take on the debug kernel or a loaded host,
#     so that nothing expires before it is measured) everything is
#     freed (ooo_bytes 0, ooo_expired, MemFree back); then, with
#     peer_idle_s 1, the peers are reclaimed;
#  4. namespace c, whose own injector's frames sit in its interface's
#     buffer, is deleted: it is dismantled (vcan1, the canary's end in the
#     default namespace, disappears with it);
#  5. as uid 1000 in its own user and network namespace (`unshare -Urn`,
#     userns_lib.sh), in a cgroup with memory.max OOO_MEMCG_MAX (64M): the
#     same attack inside its namespace is charged to that cgroup (with
#     peer_timeout_ms raised meanwhile, so that nothing expires before
#     the charge is read);
#  6. everything unbinds and ptl_rtscts unloads: no namespace was left
#     holding a binding (the user's was freed when its processes exited).
# Environment: OOO_NIDS, OOO_FRAMES, OOO_CAP_KB (8192), OOO_TIMEOUT_MS.
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=userns_lib.sh
. "$top/selftests/userns_lib.sh"
inject=$build/tools/ptl_inject/ptl_inject
nids=${OOO_NIDS:-64}
frames=${OOO_FRAMES:-12}
cap_kb=${OOO_CAP_KB:-8192}
timeout_ms=${OOO_TIMEOUT_MS:-45000}
memcg_max=${OOO_MEMCG_MAX:-64M}
mib=$((1 << 20))

diag() { echo "# $*"; }
# jsum KEY: the sum of KEY over every object of a JSON list.
jsum() { grep -oE "\"$1\": *[0-9]+" | grep -oE '[0-9]+$' | awk '{ s += $1 } END { print s + 0 }'; }
# In bash: mawk prints products past 2^31 as 5.01026e+09 (a 5 GiB guest).
memfree() { echo $(($(awk '$1 == "MemFree:" { print $2 }' /proc/meminfo) * 1024)); }

if [ ! -x "$inject" ]; then
	skip "out-of-order limits" "ptl_inject is not built"
	exit 0
fi

netns_setup peer_timeout_ms="$timeout_ms" ooo_max_kb="$cap_kb"
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded (ooo_max_kb=$cap_kb), interface 0 bound"
$ip link set va mtu 65535 && $ip -n b link set vb mtu 65535
report $? "link MTU 65535"
mac_b=$($ip -n b link show vb | awk '/link\/ether/ { print $2 }')
# Warm the page cache with the binaries, so that MemFree moves by what
# the kernel holds, not by what 9p reads.
"$inject" --help >/dev/null
b_iface peers >/dev/null

# 0. Small frames: the window bounds them, and each costs little more
# than its size.
"$inject" gap -i va --dst-nid "$nid_b" --dst-mac "$mac_b" --peers 1 \
	--frames 300 --size 1500 --first-nid 0x0a010200 | sed 's/^/# /'
report "${PIPESTATUS[0]}" "ptl_inject gap: 1 nid x 300 frames of 1500 bytes, sequence 0 missing"
small=$(b_iface ooo_bytes)
n=$(b_iface out_of_order)
[ -n "$small" ] && [ "${n:-0}" -gt 0 ] && [ "$n" -le 256 ] &&
	[ "$small" -le $((n * 2560)) ]
report $? "1500-byte frames: ${n:-?} held (at most 256) in ${small:-?} bytes, $((${small:-0} / ${n:-1})) a frame (at most 2560)"
$ip netns exec b "$ptlctl" peer del 10.1.2.0 && [ "$(b_iface ooo_bytes)" = 0 ]
report $? "ptlctl peer del frees them (ooo_bytes $(b_iface ooo_bytes))"

# 1. One nid: its own cap. Measured before any of it expires, or not at
# all: on a host slow enough to take peer_timeout_ms over the attack, the
# buffer empties while it is read (it is then skipped, not failed).
expired0=$(b_iface ooo_expired)
"$inject" gap -i va --dst-nid "$nid_b" --dst-mac "$mac_b" --peers 1 \
	--frames 72 --first-nid 0x0a010100 | sed 's/^/# /'
report "${PIPESTATUS[0]}" "ptl_inject gap: 1 nid x 72 frames of 65535 bytes, sequence 0 missing"
# Summed over the peers: node a may be one too, listed first, holding none.
one=$($ip netns exec b "$ptlctl" -j -s peer show 2>/dev/null | jsum ooo_bytes)
if [ "$(b_iface ooo_expired)" != "$expired0" ]; then
	skip "one peer's cap" "frames expired before they were measured (host too slow)"
else
	[ -n "$one" ] && [ "$one" -gt 0 ] && [ "$one" -le $((4 * mib)) ] &&
		[ "$(b_iface ooo_dropped)" -gt 0 ]
	report $? "one peer holds ${one:-(no ooo_bytes)} bytes, at most 4 MiB; ooo_dropped $(b_iface ooo_dropped)"
fi

# 2. Many nids: the interface's cap. ooo_dropped counts from here (step 1
# dropped some too).
free0=$(memfree)
dropped0=$(b_iface ooo_dropped)
expired0=$(b_iface ooo_expired)
"$inject" gap -i va --dst-nid "$nid_b" --dst-mac "$mac_b" --peers "$nids" \
	--frames "$frames" --first-nid 0x0a010000 | sed 's/^/# /'
report "${PIPESTATUS[0]}" "ptl_inject gap: $nids nids x $frames frames of 65535 bytes, sequence 0 missing"
held=$((free0 - $(memfree)))
ooo=$(b_iface ooo_bytes)
dropped=$(b_iface ooo_dropped)
diag "held: $((held / mib)) MiB by MemFree, ooo_bytes ${ooo:-(none)}, ooo_dropped" \
	"${dropped:-(none)}, $(b_iface peers) peers"
$ip netns exec b "$ptlctl" -s iface show 0 | sed 's/^/#   /'
[ $held -le $(((cap_kb << 10) + 24 * mib)) ]
report $? "memory held under attack ($((held / mib)) MiB by MemFree) within the cap ($((cap_kb >> 10)) MiB) + 24 MiB"
dropped=$((${dropped:-0} - ${dropped0:-0}))
# On a host slow enough for the first gaps to expire during the attack
# (CI's debug kernel beside another guest took over 45 s to send what
# 6.12 sends in 19), ooo_bytes may be anything from 0 up to the cap: the
# cap and the drops are still asserted, the fill only when none expired.
expired=$(($(b_iface ooo_expired) - ${expired0:-0}))
if [ "$expired" -gt 0 ]; then
	diag "$expired frames expired during the attack (host slow): ooo_bytes is not asserted above 0"
	filled=0
else
	filled=1
fi
[ -n "$ooo" ] && [ "$ooo" -ge "$filled" ] && [ "$ooo" -le $((cap_kb << 10)) ] &&
	[ "$dropped" -gt 0 ]
report $? "ooo_bytes (${ooo:-none}) within the cap, the excess counted in ooo_dropped (+$dropped)"

# 3. The gaps are never filled: after peer_timeout_ms it is all freed.
has_expired() { [ "$(b_iface ooo_bytes)" = 0 ]; }
wait_for $((timeout_ms / 1000 + 20)) has_expired
report $? "ooo_bytes back to 0 within peer_timeout_ms (ooo_expired $(b_iface ooo_expired))"
held=$((free0 - $(memfree)))
[ $held -le $((24 * mib)) ]
report $? "memory held after the timeout: $((held / mib)) MiB by MemFree (at most 24)"
idle_param=/sys/module/ptl_rtscts/parameters/peer_idle_s
idle_s=$(cat $idle_param)
echo 1 >$idle_param
no_peers() { [ "$(b_iface peers)" = 0 ]; }
wait_for 20 no_peers
report $? "with peer_idle_s 1, the peers reclaimed (peers $(b_iface peers), peers_reclaimed $(b_iface peers_reclaimed))"
# Back to the default: part 5 measures what its peers hold, and a reclaim
# between its snapshot and its reading of memory.current would free it
# (make check once read a charge of -40960 for 8354304 bytes held).
echo "$idle_s" >$idle_param

# 4. A namespace whose frames sit in its own interface's buffer goes away.
$ip netns add c &&
	$ip -n c link add vc0 mtu 65535 type veth peer name vc1 mtu 65535 &&
	$ip -n c addr add 10.1.0.2/24 dev vc1 &&
	$ip -n c link set vc0 up && $ip -n c link set vc1 up &&
	$ip -n c link add vcan0 type veth peer name vcan1 netns 1 &&
	$ip netns exec c "$ptlctl" iface bind 0 dev vc1
report $? "namespace c: a veth pair, interface 0 bound to vc1, a canary pair to the default namespace"
mac_c=$($ip -n c link show vc1 | awk '/link\/ether/ { print $2 }')
$ip netns exec c "$inject" gap -i vc0 --dst-nid 10.1.0.2 --dst-mac "$mac_c" \
	--peers 8 --frames 16 | sed 's/^/# /'
report "${PIPESTATUS[0]}" "ptl_inject gap inside namespace c: 8 nids x 16 frames"
diag "namespace c holds $($ip netns exec c "$ptlctl" -j -s iface show 0 | jnum ooo_bytes) bytes" \
	"ahead of gaps, $($ip netns exec c "$ptlctl" -j iface show 0 | jnum peers) peers"
$ip netns del c
canary_gone() { ! $ip link show vcan1 >/dev/null 2>&1; }
wait_for 20 canary_gone
report $? "namespace c dismantled after ip netns del (its canary's end left the default namespace)"

# 5. The same as uid 1000 in a user namespace, charged to its cgroup.
unpriv_test() {
	local cg=/sys/fs/cgroup/ptl-ooo inner=$top/selftests/rtscts_ooo_user.sh
	local out=/tmp/ptl-ooo-user.log rc

	if [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
		skip "uid 1000 in its own namespaces" "no cgroup v2"
		return
	fi
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	if ! mkdir -p $cg || ! echo "$memcg_max" >$cg/memory.max; then
		skip "uid 1000 in its own namespaces" "no memory cgroup"
		return
	fi
	# Nothing may expire before it is measured: the attack took 8 s on
	# 6.1 beside another guest, and on the debug kernel so loaded it can
	# take most of 45 s (make check once read a charge of 6025216 for
	# 8354304 bytes held: gaps expiring between the snapshot and the
	# charge's reading, which expired 0 from the snapshot did not show).
	local timeout_param=/sys/module/ptl_rtscts/parameters/peer_timeout_ms
	echo 600000 >$timeout_param
	# Join the cgroup first: the user's processes inherit it.
	(
		echo $BASHPID >$cg/cgroup.procs
		userns_run 1000 /bin/bash "$inner" "$inject" "$ptlctl" "$cg" "$nids" "$frames" "${OOO_GAP_US:-0}"
	) >$out 2>&1
	rc=$?
	echo "$timeout_ms" >$timeout_param
	sed 's/^/#   /' $out
	grep -q '^charged ' $out
	report $? "uid 1000 in unshare -Urn: the attack ran inside its namespace (exit $rc)"
	local charged held kernel
	charged=$(awk '/^charged /{ print $2 }' $out)
	kernel=$(awk '/^kernel /{ print $2 }' $out)
	held=$(awk '/^held /{ print $2 }' $out)
	if ! grep -q '^expired 0$' $out; then
		skip "the user's charge" "frames expired before they were measured (host too slow)"
		rmdir $cg 2>/dev/null
		return
	fi
	# Slab objects are charged by their size and truesize counts them
	# aligned: within 10 %. Measured by the cgroup's kernel memory where
	# memory.stat has it: memory.current also moves with page cache, the
	# processes' own pages and the per-cpu stocks of charge.
	local rose=${kernel:-$charged}
	[ -n "$held" ] && [ -n "$rose" ] && [ "$held" -gt 0 ] &&
		[ $((rose * 10)) -ge $((held * 9)) ]
	report $? "what its interface held (${held:-?} bytes) was charged to its cgroup (kernel memory rose ${kernel:-?}, memory.current ${charged:-?})"
	rmdir $cg 2>/dev/null
}
unpriv_test

# 6. Nothing left behind.
"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0
report $? "both interfaces unbind"
$ip netns del b
wait_for 20 rtscts_unload
report $? "ptl_rtscts unloads (no namespace left holding a binding: the user's was freed too)"
rmmod ptl
report $? "ptl unloads"

exit $((failures > 0))
