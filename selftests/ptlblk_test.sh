#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): ptlblk, a block device over
# Portals, with ext4 on it, between two nodes (two network namespaces
# joined by a veth pair, ptl_rtscts bound on both ends):
#
#     default namespace (node a)              namespace b (node b)
#   +---------------------------+         +---------------------------+
#   | ptlblk.ko: /dev/ptlblk0   |  veth   | ptlblk-server             |
#   | ext4 on it, mounted       |---------|   /tmp/ptlblk.img (tmpfs) |
#   | va 10.0.0.1               |         | vb 10.0.0.2, pid 42       |
#   +---------------------------+         +---------------------------+
#
#  1. attach (ptlctl blk attach), mkfs.ext4, mount, a tree of files with
#     known checksums, unmount, fsck.ext4 -f clean, mount, every checksum;
#  2. the same under netem loss, reordering and duplication;
#  3. the server killed (kill -9) mid-write: the writer gets an error
#     within the bounded time, the device is dead, the file system
#     unmounts, the device detaches;
#  4. the server back: attach again without reloading anything, the data
#     written before the kill is there (fsck, checksums);
#  5. the device dies with its queue full, 64 writes in flight (fio,
#     libaio, iodepth 64): (a) the server killed, (b) the link deleted;
#     every request ends with an error within the bound, the device
#     detaches, nothing is left pinned or allocated;
#  6. a new link, the file system still clean; the server stops cleanly
#     on SIGTERM, the Portals counters are back where they were, the
#     modules unload.
# After the netem run, a task blocked for 45 s is a hung task (the
# kernel's warning fails the run): every request timeout is shorter.
# The Portals counters are checked after every failure.
# Environment: PTLBLK_FILES (files per tree, default 120), PTLBLK_MB
# (backing file size, default 256). Prints TAP lines; tools/testing/run-checks
# counts them. The harness fails the run on any kernel splat (a hung task
# warning included).
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ip=/sbin/ip
tc=/sbin/tc
files=${PTLBLK_FILES:-120}
size_mb=${PTLBLK_MB:-256}
on_server=("$ip" netns exec b)
# Request timeouts: generous while the link is only lossy (under TCG with
# netem, 64 requests of 1 MiB queued behind the server's 16 slots take
# seconds), short for the kill test, whose bound they set.
timeout_s=30
kill_timeout_s=5
# the full-queue tests: 64 requests of 64 KiB, 16 at a time at the server
depth_timeout_s=15
peer_timeout_ms=3000

# shellcheck source-path=SCRIPTDIR source=ptlblk_lib.sh
. "$top/selftests/ptlblk_lib.sh"

nid_b=10.0.0.2

# the veth pair between the nodes, interface 0 bound on both ends
make_link() {
	$ip link add va type veth peer name vb &&
		$ip link set vb netns b &&
		$ip addr add 10.0.0.1/24 dev va && $ip link set va up &&
		$ip -n b addr add 10.0.0.2/24 dev vb &&
		$ip -n b link set vb up || return 1
	"$ptlctl" iface bind 0 dev va &&
		$ip netns exec b "$ptlctl" iface bind 0 dev vb
}

setup() {
	modprobe -a veth sch_netem ext4 || return 1
	insmod "$moddir/ptl.ko" nid=7 || return 1
	insmod "$moddir/ptl_rtscts.ko" peer_timeout_ms=$peer_timeout_ms || return 1
	insmod "$moddir/ptlblk.ko" || return 1
	$ip netns add b && $ip -n b link set lo up && make_link
}

setup
report $? "two nodes: ptl, ptl_rtscts, ptlblk loaded, interface 0 bound on both"
counters_baseline
mkdir -p "$mnt"
: >"$sums"

# 1. A file system on a device served by the other node.
$ip netns exec b truncate -s "${size_mb}M" "$img"
start_server
report $? "ptlblk-server serves a ${size_mb} MiB file on node b"
"$ptlctl" blk attach $nid_b timeout $timeout_s
report $? "ptlctl blk attach $nid_b"
blkdev_ready && [ "$(cat /sys/block/ptlblk0/size)" = $((size_mb * 2048)) ]
report $? "/dev/ptlblk0 exists with the server's size"
"$ptlctl" -s blk show | sed 's/^/# /'
# The file system leaves the device's last 16 MiB alone: the raw-device
# check below writes there.
mkfs.ext4 -q -F /dev/ptlblk0 $(((size_mb - 16) * 1024))k >/tmp/mkfs.log 2>&1
report $? "mkfs.ext4 /dev/ptlblk0 (all but its last 16 MiB)"
cycle clean 1

# A few requests larger than the default and the FUA/flush path, through
# the block device itself (O_DIRECT, O_SYNC).
dd if=/dev/urandom of=/tmp/raw bs=1M count=4 status=none &&
	dd if=/tmp/raw of=/dev/ptlblk0 bs=1M seek=$((size_mb - 8)) oflag=direct,sync status=none &&
	dd if=/dev/ptlblk0 of=/tmp/raw.back bs=1M skip=$((size_mb - 8)) count=4 iflag=direct status=none &&
	cmp /tmp/raw.back /tmp/raw
report $? "O_DIRECT|O_SYNC 1 MiB writes read back intact"

# 2. Under netem on both ends.
$tc qdisc add dev va root netem loss 2% reorder 5% delay 1ms duplicate 1% &&
	$ip netns exec b $tc qdisc add dev vb root netem loss 2% reorder 5% delay 1ms duplicate 1%
report $? "netem on both ends: loss 2%, reordering 5%, duplication 1%"
cycle netem 2
$tc qdisc del dev va root
$ip netns exec b $tc qdisc del dev vb root
"$ptlctl" -s blk show | sed 's/^/# /'

# 3. The server dies while a writer is busy. Attach again with the short
# timeout (a detach and an attach of a live device on the way). From here
# on every request timeout is at most 15 s: a task blocked for 45 s is a
# hung task, and the kernel's warning fails the run.
echo 45 >/proc/sys/kernel/hung_task_timeout_secs
"$ptlctl" blk detach 0 && "$ptlctl" blk attach $nid_b timeout $kill_timeout_s >/dev/null &&
	blkdev_ready
report $? "detach, attach again with a ${kill_timeout_s} s request timeout"
timeout_s=$kill_timeout_s
writer_start
sleep 2
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null
# bound: the request timeout, plus the transport's, plus slack for TCG
writer_fails $((timeout_s + peer_timeout_ms / 1000 + 20))
"$ptlctl" blk detach ptlblk0
report $? "ptlctl blk detach ptlblk0"
[ ! -e /sys/block/ptlblk0 ]
report $? "the device is gone"
counters_back "the server killed, the device detached"

# 4. The server comes back: attach again, nothing reloaded.
start_server
report $? "ptlblk-server restarted"
"$ptlctl" blk attach $nid_b timeout $timeout_s &&
	blkdev_ready
report $? "attached again without reloading any module"
# The journal replays what the kill interrupted; fsck repairs the rest
# (the big file was cut short); the trees written earlier are intact.
fsck_report -y "fsck.ext4 -f -y after the kill"
mount /dev/ptlblk0 "$mnt" && verify_tree
report $? "every file written before the kill has its checksum"
rm -f "$mnt/big" && umount "$mnt"
report $? "unmounted"
"$ptlctl" blk detach 0
report $? "detached"

# 5. The device dies with its queue full: 64 writes of 64 KiB in flight
# (fio, libaio, O_DIRECT, iodepth 64, in the last 16 MiB, which the file
# system leaves alone; the server works on 16 at a time, the rest wait in
# its queue) when the server is killed and when the link goes away.
bound=$((depth_timeout_s + peer_timeout_ms / 1000 + 20))

# full_queue: attach, start fio, wait for 64 writes in flight
full_queue() {
	"$ptlctl" blk attach $nid_b timeout $depth_timeout_s >/dev/null &&
		blkdev_ready
	report $? "$1: attached with a ${depth_timeout_s} s request timeout"
	fio --name=depth --filename=/dev/ptlblk0 --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=64k --iodepth=64 --offset=$((size_mb - 16))M \
		--size=16M --time_based --runtime=600 \
		--output=/tmp/fio.out >/dev/null 2>/tmp/fio.err &
	fio_pid=$!
	wait_inflight 64 60
	report $? "$1: fio has 64 writes in flight ($(blk_inflight))"
}

# queue_failed WHAT INFLIGHT ERRORS0 WRITES0: fio and every request ended
# with errors within the bound, the device is dead and detaches
queue_failed() {
	local errors ok
	wait_exit "$fio_pid" $bound
	report $? "$1: fio ends within ${bound} s (${took} s)"
	[ "$exit_status" -ne 0 ]
	report $? "$1: fio gets I/O errors ($(grep -m1 -o 'err.*' /tmp/fio.err | head -c 70))"
	[ "$(blk_inflight)" = 0 ]
	report $? "$1: nothing in flight"
	read -r errors ok <<<"$(blk_stat errors writes)"
	errors=$((errors - $3))
	ok=$((ok - $4 - errors))
	echo "# $1: $2 writes in flight just before; since then $errors ended with an error, $ok without"
	"$ptlctl" blk show 0 | grep -q 'state dead'
	report $? "$1: the device is dead"
	"$ptlctl" blk detach 0 && [ ! -e /sys/block/ptlblk0 ]
	report $? "$1: the device detaches"
	failed_errors=$errors failed_ok=$ok
}

# a. The server dies. It is stopped first (SIGSTOP), so that what is in
# flight when it dies is known exactly: nothing can be answered any more.
full_queue "server killed"
kill -STOP "$server_pid"
sleep 1
inflight=$(blk_inflight)
read -r errors0 writes0 <<<"$(blk_stat errors writes)"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null
queue_failed "server killed" "$inflight" "$errors0" "$writes0"
[ "$inflight" = 64 ] && [ "$failed_errors" -ge 64 ] && [ "$failed_ok" = 0 ]
report $? "server killed: each of the $inflight writes in flight ended with an error"
counters_back "server killed with 64 writes in flight"

# b. The link goes away (ip link del: the interface unbinds on both
# nodes) while the server is busy: transfers are under way.
start_server
report $? "ptlblk-server restarted"
full_queue "link deleted"
inflight=$(blk_inflight)
read -r errors0 writes0 <<<"$(blk_stat errors writes)"
$ip link del va
queue_failed "link deleted" "$inflight" "$errors0" "$writes0"
[ "$failed_errors" -ge 1 ]
report $? "link deleted: the writes in flight failed ($failed_errors errors)"
kill -TERM "$server_pid"
wait "$server_pid"
report $? "link deleted: the server survives the loss of its link, stops on SIGTERM"
counters_back "link deleted with 64 writes in flight"

# 6. A new link, the file system is intact; a clean shutdown, nothing left
# behind.
make_link
report $? "a new veth pair, interface 0 bound again on both ends"
start_server && "$ptlctl" blk attach $nid_b timeout $timeout_s >/dev/null &&
	blkdev_ready
report $? "the server restarted, attached again"
fsck_report -n "fsck.ext4 -f: the file system is clean"
"$ptlctl" blk detach 0
report $? "detached"
kill -TERM "$server_pid"
wait "$server_pid"
report $? "ptlblk-server stops cleanly on SIGTERM"
sed 's/^/# server: /' "$slog" | tail -n 8
# The image is on tmpfs: the small reads (fsck's) were answered by the
# server's event thread, without a hand-off to a worker.
cached=$(sed -n 's/.*; \([0-9]*\) from the page cache without a worker.*/\1/p' "$slog" | tail -n 1)
[ "${cached:-0}" -gt 0 ]
report $? "ptlblk-server answered small reads from the page cache itself (${cached:-0})"
counters_back "at the end"
two_nodes_down

echo "# $tap_count tests, $failures failed"
exit $((failures > 0))
