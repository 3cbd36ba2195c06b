#!/bin/bash
# The demo's guest side: load the module, run Portals programs on one
# node, then on two nodes (two network namespaces joined by veth) over
# ptl_rtscts, then ext4 on ptlblk served from the other node and a short
# fio run against ptlblk and NBD (tools/testing/bench/run-blkbench), unload.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$top/build}

say() { printf '\n--- %s\n' "$*"; }

say "loading ptl.ko on this node (nid 7)"
insmod "$top/ptl.ko" nid=7
dmesg | grep -E 'ptl: ' | tail -2
ls -l /dev/portals

say "ptl_hello: a minimal Portals 3.3 program (library, interface, identity)"
"$build/tools/demo/ptl_hello"

say "ptl_pingpong: two processes on this node exchange Portals messages"
echo "    (each process has its own PtlInit; a pipe carries only their Portals ids,"
echo "     every message is a put through ptl.ko, acknowledged and verified)"
"$build/tools/demo/ptl_pingpong" 3

say "ptl_stopped: 1000 messages arrive while their receiver is stopped (SIGSTOP)"
echo "    (the kernel places data and events in the receiver's memory; the receiver"
echo "     does nothing until SIGCONT, then finds everything already there)"
"$build/tools/demo/ptl_stopped" 1000

say "module counters after both programs exited (nothing left behind)"
for c in open_files nis mds eqs pinned_pages core_objects; do
	printf '    %-13s %s\n' "$c" "$(cat /sys/class/misc/portals/$c 2>/dev/null || echo n/a)"
done

# ---- act two: two Portals nodes ----
ip=/sbin/ip
tc=/sbin/tc
ptlctl=$build/tools/ptlctl/ptlctl
say "two Portals nodes: this network namespace (a) and namespace b, joined by a veth link"
echo "    (each network namespace is a Portals node with its own interfaces, nids and pids)"
modprobe veth
modprobe sch_netem
$ip netns add b
$ip link add va type veth peer name vb
$ip link set vb netns b
$ip addr add 10.0.0.1/24 dev va && $ip link set va up
$ip -n b addr add 10.0.0.2/24 dev vb && $ip -n b link set vb up
echo "    node a: va 10.0.0.1    node b: vb 10.0.0.2"

say "loading ptl_rtscts.ko and binding interface 0 of each node with ptlctl"
insmod "$top/ptl_rtscts.ko"
echo "+ ptlctl iface bind 0 dev va"
"$ptlctl" iface bind 0 dev va
echo "+ ip netns exec b ptlctl iface bind 0 dev vb"
$ip netns exec b "$ptlctl" iface bind 0 dev vb
echo "+ ptlctl iface show"
"$ptlctl" iface show
echo "    (the nid is the interface's IPv4 address: peers need no configuration)"

export PTL_PEER_NETNS=/run/netns/b
say "ptl_pingpong across the link: pong runs on node b"
"$build/tools/demo/ptl_pingpong" 3

say "ptl_stopped across the link: 1000 puts land in a process on node b while it is stopped"
"$build/tools/demo/ptl_stopped" 1000
unset PTL_PEER_NETNS

say "a transfer that survives a lossy link: netem drops 5%, reorders 5%, duplicates 1% on both ends"
$tc qdisc add dev va root netem loss 5% reorder 5% delay 1ms duplicate 1%
$ip netns exec b $tc qdisc add dev vb root netem loss 5% reorder 5% delay 1ms duplicate 1%
$ip netns exec b "$build/tools/ptl_stress/ptl_stress" server --pid 77 --quiet &
server=$!
sleep 0.5
"$build/tools/ptl_stress/ptl_stress" client --server 167772162:77 --count 200 --max-size 256K
wait $server
$tc qdisc del dev va root
$ip netns exec b $tc qdisc del dev vb root

say "what the transport counted on node a (ptlctl -s): frames, retransmissions, duplicates"
"$ptlctl" -s iface show
"$ptlctl" -s peer show

# ---- act three: a block device served by the other node ----
server=$build/tools/ptlblk-server/ptlblk-server
img=/tmp/demo-disk.img
mnt=/tmp/demo-mnt
say "ptlblk: a block device on node a whose blocks live in a file on node b"
echo "    (ptlblk.ko is a kernel client of the Portals API: reads are puts from the"
echo "     server into the request's pages, writes are gets from them)"
insmod "$top/ptlblk.ko"
$ip netns exec b truncate -s 256M "$img"
echo "+ ip netns exec b ptlblk-server $img &"
$ip netns exec b "$server" "$img" 2>/tmp/demo-server.log &
blk_server=$!
for _ in $(seq 50); do
	$ip netns exec b "$ptlctl" ni show 2>/dev/null | grep -q ' pid 42 ' && break
	sleep 0.2
done
echo "+ ptlctl blk attach 10.0.0.2"
"$ptlctl" blk attach 10.0.0.2
udevadm settle 2>/dev/null || true

say "ext4 on /dev/ptlblk0: format, mount, write files, read them back after a remount"
modprobe ext4
mkdir -p "$mnt"
echo "+ mkfs.ext4 -q /dev/ptlblk0 && mount /dev/ptlblk0 $mnt"
mkfs.ext4 -q -F /dev/ptlblk0
mount /dev/ptlblk0 "$mnt"
cp -r "$top/Documentation" "$mnt/"
head -c 32M /dev/urandom >"$mnt/random.bin"
(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >/tmp/demo-sums
echo "    wrote $(wc -l </tmp/demo-sums) files, $(du -sh "$mnt" | cut -f1)"
umount "$mnt"
echo "+ umount; fsck.ext4 -f -n; mount again; sha256sum -c"
fsck.ext4 -f -n /dev/ptlblk0 2>&1 | tail -1
mount /dev/ptlblk0 "$mnt"
(cd "$mnt" && sha256sum --quiet -c /tmp/demo-sums) && echo "    every checksum matches"
df -h "$mnt" | sed 's/^/    /'
umount "$mnt"
"$ptlctl" -s blk show
"$ptlctl" blk detach ptlblk0
kill -TERM "$blk_server"
wait "$blk_server"
sed 's/^/    /' /tmp/demo-server.log
rm -f "$img"
rmmod ptlblk

say "unbinding, unloading"
"$ptlctl" iface unbind 0
$ip netns exec b "$ptlctl" iface unbind 0
$ip netns del b
rmmod ptl_rtscts
rmmod ptl
dmesg | grep -E 'ptl: ' | tail -1

say "fio on ptlblk and on the Linux NBD, same link, same backing file (tools/testing/bench/run-blkbench)"
echo "    (a short run in this real-time guest: its figures vary from run to run;"
echo "     make bench measures them in a deterministic guest, Documentation/performance.md)"
"$top/tools/testing/bench/run-blkbench" --guest --quick --mtu 65000 /tmp/demo-blkbench.tsv
"$top/tools/testing/bench/blkbench-table" --no-goals /tmp/demo-blkbench.tsv

echo
echo "demo finished: two processes exchanged Portals messages on one node and across a link"
echo "between two nodes, a stopped receiver got all of its messages and events, a transfer"
echo "came through a lossy link intact, ext4 ran on a block device served by the other node,"
echo "and every module unloaded cleanly"
