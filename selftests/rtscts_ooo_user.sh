#!/bin/bash
# Part 4 of rtscts_ooo_test.sh, run by it as uid 1000 in a user and
# network namespace of its own (userns_run, `unshare -Urn`): root only in there.
#   rtscts_ooo_user.sh PTL_INJECT PTLCTL CGROUP NIDS FRAMES [GAP_US]
# Makes a veth pair inside the namespace, binds interface 0 of its
# Portals node to one end, sends the gap attack from the other, and prints
#   held N       bytes the interface holds ahead of gaps (ooo_bytes)
#   charged N    how much the cgroup's memory.current rose meanwhile
#   kernel N     how much its kernel memory (memory.stat's kernel) rose
#   expired N    frames that expired before the charge was read
#                (ooo_expired, from a second snapshot after it)
# then exits, leaving the namespace to be freed with its last process.
set -u
inject=$1 ptlctl=$2 cg=$3 nids=$4 frames=$5 gap_us=${6:-0}
ip=/sbin/ip

echo "uid_map: $(cat /proc/self/uid_map)"
$ip link add vu0 mtu 65535 type veth peer name vu1 mtu 65535 &&
	$ip addr add 10.2.0.2/24 dev vu1 &&
	$ip link set vu0 up && $ip link set vu1 up || exit 1
# A veth drops what is sent before both ends have carrier. Asked of ip,
# not /sys/class/net: the sysfs mounted here is the initial namespace's.
state() { $ip -o link show dev "$1" | grep -o 'state [A-Z]*'; }
for _ in $(seq 100); do
	[ "$(state vu0)" = "state UP" ] && [ "$(state vu1)" = "state UP" ] && break
	sleep 0.1
done
echo "vu0 $(state vu0), vu1 $(state vu1)"
"$ptlctl" iface bind 0 dev vu1 || exit 1
mac=$($ip link show vu1 | awk '/link\/ether/ { print $2 }')
# The kernel memory the cgroup is charged for: memory.current also counts
# page cache and the processes' own pages, which come and go meanwhile.
kmem() { awk '$1 == "kernel" { print $2 }' "$cg/memory.stat"; }
c0=$(cat "$cg/memory.current") k0=$(kmem)
"$inject" gap -i vu0 --dst-nid 10.2.0.2 --dst-mac "$mac" --peers "$nids" --frames "$frames" \
	--first-nid 0x0a020100 --gap-us "$gap_us" || exit 1
# One snapshot of the interface, the cgroup's charge right after it, and
# a second snapshot: held is the first's ooo_bytes (the row under
# "held:"), expired the second's ooo_expired, so that a gap that expired
# before the charge was read is seen.
show=$("$ptlctl" -s iface show 0)
c1=$(cat "$cg/memory.current") k1=$(kmem)
after=$("$ptlctl" -s iface show 0)
echo "$show"
grep -E '^(anon|file|kernel|slab|sock|percpu) ' "$cg/memory.stat" | sed 's/^/memory.stat: /'
echo "memory.current: $c0 before, $c1 after; memory.max $(cat "$cg/memory.max")"
held() { awk -v col="$1" 'row { print $col; exit } $1 == "held:" { row = 1 }'; }
echo "held $(held 1 <<<"$show")"
echo "expired $(held 3 <<<"$after")"
echo "charged $((c1 - c0))"
# Without memory.stat's kernel (before 5.18) there is no such line, and
# the exit status stays 0.
if [ -n "$k0" ] && [ -n "$k1" ]; then
	echo "kernel $((k1 - k0))"
fi
