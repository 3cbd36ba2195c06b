#!/bin/bash
# Part 4 of rtscts_ooo_test.sh, run by it as uid 1000 in a user and
# network namespace of its own (userns_run, `unshare -Urn`): root only in there.
#   rtscts_ooo_user.sh PTL_INJECT PTLCTL CGROUP NIDS FRAMES [GAP_US]
# Makes a veth pair inside the namespace, binds interface 0 of its
# Portals node to one end, sends the gap attack from the other, and prints
#   held N       bytes the interface holds ahead of gaps (ooo_bytes)
#   charged N    how much the cgroup's memory.current rose meanwhile
#   expired N    frames that expired before the snapshot (ooo_expired)
# then exits, leaving the namespace to be freed with its last process.
set -u
inject=$1 ptlctl=$2 cg=$3 nids=$4 frames=$5 gap_us=${6:-0}
ip=/sbin/ip

echo "uid_map: $(cat /proc/self/uid_map)"
$ip link add vu0 mtu 65535 type veth peer name vu1 mtu 65535 &&
	$ip addr add 10.2.0.2/24 dev vu1 &&
	$ip link set vu0 up && $ip link set vu1 up || exit 1
# A veth drops what is sent before both ends have carrier.
for _ in $(seq 100); do
	[ "$(cat /sys/class/net/vu0/operstate)" = up ] &&
		[ "$(cat /sys/class/net/vu1/operstate)" = up ] && break
	sleep 0.1
done
echo "operstate: vu0 $(cat /sys/class/net/vu0/operstate), vu1 $(cat /sys/class/net/vu1/operstate)"
"$ptlctl" iface bind 0 dev vu1 || exit 1
mac=$($ip link show vu1 | awk '/link\/ether/ { print $2 }')
c0=$(cat "$cg/memory.current")
"$inject" gap -i vu0 --dst-nid 10.2.0.2 --dst-mac "$mac" --peers "$nids" --frames "$frames" \
	--first-nid 0x0a020100 --gap-us "$gap_us" || exit 1
# One snapshot of the interface, and the cgroup's charge right after it:
# held is the snapshot's ooo_bytes (the row under "held:").
show=$("$ptlctl" -s iface show 0)
c1=$(cat "$cg/memory.current")
echo "$show"
echo "memory.current: $c0 before, $c1 after; memory.max $(cat "$cg/memory.max")"
held() { awk -v col="$1" 'row { print $col; exit } $1 == "held:" { row = 1 }' <<<"$show"; }
echo "held $(held 1)"
echo "expired $(held 3)"
echo "charged $((c1 - c0))"
