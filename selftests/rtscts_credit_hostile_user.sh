#!/bin/bash
# Part 4 of rtscts_credit_hostile_test.sh, run by it as uid 1000 in a user
# and network namespace of its own (userns_run, `unshare -Urn`): root only
# in there.
#   rtscts_credit_hostile_user.sh PTL_INJECT PTLCTL GETSRC CGROUP NODES GETS DIR
# Makes a veth pair inside the namespace, binds interface 0 of its Portals
# node to one end, serves gets there (rtscts_getsrc, pid 98), and sends
# `ptl_inject credit` from fake nodes at the other end, one after the
# other (one round again, in case the link lost a frame), in two phases
# with an unbind between them:
#
#  1. NODES fake nodes send GETS GETs each; prints one "key value" a line:
#       taken_min, taken_max  GETs the node took from a fake node (its ack)
#       head_sends            times the first GET past a credit was sent, summed
#       refused               the interface's credit_refused
#       starts                GET_STARTs the getsrc process saw
#       in_flight             its NI's msgs_in_flight
#       ooo_bytes             bytes the interface holds ahead of gaps
#  2. 2 x NODES more send 257 GETs each: each fills its credit and has
#     nothing left ahead of a gap, so what the interface holds is the
#     REPLYs alone, one ptl_msg each, allocated in the binder's memory
#     cgroup. Prints
#       charge_in_flight, charge_ooo_bytes   as above, at the snapshot
#       charged     how much the cgroup's memory.current rose meanwhile
#       released    how much it fell when the interface was unbound
# then exits; the namespace goes with its last process.
set -u
inject=$1 ptlctl=$2 getsrc=$3 cg=$4 nodes=$5 gets=$6 dir=$7
ip=/sbin/ip
pid=98

jnum() { grep -oE "\"$1\": *[0-9]+" | head -n 1 | grep -oE '[0-9]+$'; }
echo "uid_map: $(cat /proc/self/uid_map)"
# Root in here is this uid outside, and so the uid of our NI: the fake
# nodes' GETs claim it, or access control would refuse them.
uid=$(awk '{ print $2 }' /proc/self/uid_map)
$ip link add vu0 type veth peer name vu1 &&
	$ip addr add 10.3.0.2/24 dev vu1 &&
	$ip link set vu0 up && $ip link set vu1 up && $ip link set lo up || exit 1
# A veth drops what is sent before both ends have carrier (sysfs shows
# the namespace of whoever mounted it: ask ip).
for _ in $(seq 100); do
	$ip link show vu0 | grep -q 'state UP' && $ip link show vu1 | grep -q 'state UP' && break
	sleep 0.1
done
"$ptlctl" iface bind 0 dev vu1 || exit 1
mac=$($ip link show vu1 | awk '/link\/ether/ { print $2 }')
# It serves until killed at the end: an hour, as in the main script (a
# bound of 10 minutes ran out in phase 2 on the debug kernel beside two
# other guests, and the rest of the fake nodes found no one to get from).
"$getsrc" $pid 3600000 >"$dir/user-getsrc.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT	# also when a step below fails
for _ in $(seq 100); do
	grep -q '^ready' "$dir/user-getsrc.log" && break
	sleep 0.2
done
grep -q '^ready' "$dir/user-getsrc.log" || { cat "$dir/user-getsrc.log"; exit 1; }
# attack FIRST_NID_INDEX COUNT GETS WAIT_MS: COUNT fake nodes, one after
# the other, each printing its JSON line; sums up as phase 1 reports.
attack() {
	local first=$1 count=$2 n=$3 wait_ms=$4 k out t

	taken_min='' taken_max='' head_sends=0
	for ((k = first; k < first + count; k++)); do
		out=$("$inject" -j credit -i vu0 --dst-mac "$mac" --target 10.3.0.2:$pid \
			--src-nid "10.3.$((k / 200)).$((k % 200 + 20))" --src-uid "$uid" \
			--gets "$n" --rounds 1 --wait-ms "$wait_ms") || return 1
		echo "$out"
		t=$(jnum taken <<<"$out")
		[ -z "$taken_min" ] || [ "$t" -lt "$taken_min" ] && taken_min=$t
		[ -z "$taken_max" ] || [ "$t" -gt "$taken_max" ] && taken_max=$t
		head_sends=$((head_sends + $(jnum head_sends <<<"$out")))
	done
}
in_flight() { awk 'row { print $4; exit } $1 == "objects:" { row = 1 }' <<<"$1"; }

# 1. The attack: GETS GETs from each of NODES fake nodes.
attack 0 "$nodes" "$gets" 1000 || exit 1
iface=$("$ptlctl" -j -s iface show 0)
ni=$("$ptlctl" -s ni show)
"$ptlctl" -s iface show 0
echo "$ni"
echo "taken_min $taken_min"
echo "taken_max $taken_max"
echo "head_sends $head_sends"
echo "refused $(jnum credit_refused <<<"$iface")"
echo "starts $(grep -c '^start ' "$dir/user-getsrc.log")"
echo "in_flight $(in_flight "$ni")"
echo "ooo_bytes $(jnum ooo_bytes <<<"$iface")"
# Unbinding frees it all: the REPLYs fail, what waited ahead of gaps goes.
"$ptlctl" iface unbind 0 && "$ptlctl" iface bind 0 dev vu1 || exit 1
mac=$($ip link show vu1 | awk '/link\/ether/ { print $2 }')

# 2. The REPLYs alone, and what the cgroup is charged for them.
sleep 1
c0=$(cat "$cg/memory.current")
# A second each, as in phase 1: the node under KASAN beside another
# guest may take more than 300 ms to answer 256 GETs.
attack 200 $((2 * nodes)) 257 1000 || exit 1
# One snapshot of the node, and the cgroup's charge right after it.
iface=$("$ptlctl" -j -s iface show 0)
ni=$("$ptlctl" -s ni show)
c1=$(cat "$cg/memory.current")
echo "$ni"
echo "memory.current: $c0 before, $c1 after; memory.max $(cat "$cg/memory.max")"
echo "charge_taken_min $taken_min"
echo "charge_in_flight $(in_flight "$ni")"
echo "charge_ooo_bytes $(jnum ooo_bytes <<<"$iface")"
echo "charged $((c1 - c0))"
# Only what was charged to the cgroup can leave it.
"$ptlctl" iface unbind 0 || echo "unbind failed"
sleep 1
c2=$(cat "$cg/memory.current")
echo "memory.current after unbinding: $c2"
echo "released $((c1 - c2))"
kill $server
wait $server 2>/dev/null	# killed, as meant
exit 0
