#!/bin/bash
# Runs inside a test guest (tools/vm/run): ptlblk, a block device over
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
#  5. the server stops cleanly on SIGTERM, the Portals counters are back
#     where they were, the modules unload.
# Environment: PTLBLK_FILES (files per tree, default 120), PTLBLK_MB
# (backing file size, default 256). Prints TAP lines; tools/run-checks
# counts them. The harness fails the run on any kernel splat (a hung task
# warning included).
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ip=/sbin/ip
tc=/sbin/tc
ptlctl=$build/tools/ptlctl/ptlctl
server=$build/tools/ptlblk-server/ptlblk-server
files=${PTLBLK_FILES:-120}
size_mb=${PTLBLK_MB:-256}
img=/tmp/ptlblk.img
mnt=/tmp/ptlblk-mnt
sums=/tmp/ptlblk-sums
slog=/tmp/ptlblk-server.log
# Request timeouts: generous while the link is only lossy (under TCG with
# netem, 64 requests of 1 MiB queued behind the server's 16 slots take
# seconds), short for the kill test, whose bound they set.
timeout_s=30
kill_timeout_s=5
peer_timeout_ms=3000
failures=0
tests=0

report() {	# report STATUS DESCRIPTION
	tests=$((tests + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
		failures=$((failures + 1))
	fi
}

nid_b=10.0.0.2

setup() {
	modprobe -a veth sch_netem ext4 || return 1
	insmod "$moddir/ptl.ko" nid=7 || return 1
	insmod "$moddir/ptl_rtscts.ko" peer_timeout_ms=$peer_timeout_ms || return 1
	insmod "$moddir/ptlblk.ko" || return 1
	$ip netns add b &&
		$ip link add va type veth peer name vb &&
		$ip link set vb netns b &&
		$ip addr add 10.0.0.1/24 dev va && $ip link set va up &&
		$ip -n b addr add 10.0.0.2/24 dev vb &&
		$ip -n b link set vb up && $ip -n b link set lo up || return 1
	"$ptlctl" iface bind 0 dev va &&
		$ip netns exec b "$ptlctl" iface bind 0 dev vb
}

server_pid=
start_server() {
	$ip netns exec b "$server" "$@" "$img" >>"$slog" 2>&1 &
	server_pid=$!
	# it is up when its NI is (ptlctl ni show lists pid 42 in b)
	local i
	for ((i = 0; i < 50; i++)); do
		$ip netns exec b "$ptlctl" ni show 2>/dev/null | grep -q ' pid 42 ' &&
			return 0
		sleep 0.2
	done
	return 1
}

# write_tree DIR SEED: files of 1 KiB .. 1 MiB in nested directories;
# appends their checksums to $sums.
write_tree() {
	local dir=$1 seed=$2 i size
	RANDOM=$seed
	for ((i = 0; i < files; i++)); do
		mkdir -p "$dir/d$((i % 7))/e$((i % 3))" || return 1
		size=$(((RANDOM % 1024 + 1) * 1024))
		head -c "$size" /dev/urandom >"$dir/d$((i % 7))/e$((i % 3))/f$i" ||
			return 1
	done
	(cd "$mnt" && find "${dir#"$mnt"/}" -type f -print0 | xargs -0 sha256sum) >>"$sums"
}

verify_tree() {
	(cd "$mnt" && sha256sum --quiet -c "$sums")
}

cycle() {	# cycle NAME SEED: write a tree, unmount, fsck, mount, verify all
	local name=$1 seed=$2 rc
	mount /dev/ptlblk0 "$mnt" &&
		write_tree "$mnt/$name" "$seed" && sync
	report $? "$name: $files files written on ext4 over ptlblk"
	umount "$mnt"
	report $? "$name: unmounted"
	fsck.ext4 -f -n /dev/ptlblk0 >/tmp/fsck.log 2>&1
	rc=$?
	[ $rc -eq 0 ] || sed 's/^/#   /' /tmp/fsck.log
	report $rc "$name: fsck.ext4 -f finds the file system clean"
	mount /dev/ptlblk0 "$mnt" && verify_tree
	report $? "$name: every checksum matches after a remount ($(wc -l <"$sums") files)"
	umount "$mnt"
}

setup
report $? "two nodes: ptl, ptl_rtscts, ptlblk loaded, interface 0 bound on both"
counters="pinned_pages mds nis eqs core_objects open_files"
declare -A before
for c in $counters; do
	before[$c]=$(cat /sys/class/misc/portals/$c)
done
mkdir -p "$mnt"
: >"$sums"

# 1. A file system on a device served by the other node.
$ip netns exec b truncate -s "${size_mb}M" "$img"
start_server
report $? "ptlblk-server serves a ${size_mb} MiB file on node b"
"$ptlctl" blk attach $nid_b timeout $timeout_s
report $? "ptlctl blk attach $nid_b"
udevadm settle 2>/dev/null
[ -b /dev/ptlblk0 ] && [ "$(cat /sys/block/ptlblk0/size)" = $((size_mb * 2048)) ]
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
# timeout (a detach and an attach of a live device on the way).
"$ptlctl" blk detach 0 && "$ptlctl" blk attach $nid_b timeout $kill_timeout_s >/dev/null &&
	udevadm settle 2>/dev/null && [ -b /dev/ptlblk0 ]
report $? "detach, attach again with a ${kill_timeout_s} s request timeout"
timeout_s=$kill_timeout_s
mount /dev/ptlblk0 "$mnt"
report $? "mounted for the kill test"
dd if=/dev/zero of="$mnt/big" bs=1M count=$((size_mb / 2)) oflag=direct \
	status=none 2>/tmp/dd.err &
writer=$!
sleep 2
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null
killed=$(date +%s)
# bound: the request timeout, plus the transport's, plus slack for TCG
bound=$((timeout_s + peer_timeout_ms / 1000 + 20))
for ((i = 0; i < bound * 5; i++)); do
	kill -0 "$writer" 2>/dev/null || break
	sleep 0.2
done
if kill -0 "$writer" 2>/dev/null; then
	report 1 "the writer ends within ${bound} s of the server's death"
	kill -9 "$writer"
else
	wait "$writer"
	wrc=$?
	took=$(($(date +%s) - killed))
	[ $wrc -ne 0 ]
	report $? "the writer gets an I/O error $took s after the server's death ($(head -c 80 /tmp/dd.err))"
fi
"$ptlctl" blk show 0 | grep -q 'state dead'
report $? "ptlctl blk show: the device is dead"
t0=$(date +%s)
umount "$mnt"
report $? "the file system unmounts ($(($(date +%s) - t0)) s)"
"$ptlctl" blk detach ptlblk0
report $? "ptlctl blk detach ptlblk0"
[ ! -e /sys/block/ptlblk0 ]
report $? "the device is gone"

# 4. The server comes back: attach again, nothing reloaded.
start_server
report $? "ptlblk-server restarted"
"$ptlctl" blk attach $nid_b timeout $timeout_s &&
	udevadm settle 2>/dev/null && [ -b /dev/ptlblk0 ]
report $? "attached again without reloading any module"
# The journal replays what the kill interrupted; fsck repairs the rest
# (the big file was cut short); the trees written earlier are intact.
fsck.ext4 -f -y /dev/ptlblk0 >/tmp/fsck.log 2>&1
rc=$?
[ $rc -le 1 ] || sed 's/^/#   /' /tmp/fsck.log
report $((rc > 1)) "fsck.ext4 -f -y after the kill: $rc (0 or 1: clean or repaired)"
mount /dev/ptlblk0 "$mnt" && verify_tree
report $? "every file written before the kill has its checksum"
rm -f "$mnt/big" && umount "$mnt"
report $? "unmounted"
"$ptlctl" blk detach 0
report $? "detached"

# 5. Clean shutdown, nothing left behind.
kill -TERM "$server_pid"
wait "$server_pid"
report $? "ptlblk-server stops cleanly on SIGTERM"
sed 's/^/# server: /' "$slog" | tail -n 8
sleep 1
leaks=0
for c in $counters; do
	now=$(cat /sys/class/misc/portals/$c)
	if [ "$now" != "${before[$c]}" ]; then
		echo "# $c: ${before[$c]} before, $now after"
		leaks=1
	fi
done
report $leaks "module counters are back where they were"
"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0
$ip netns del b
rmmod ptlblk && rmmod ptl_rtscts && rmmod ptl
report $? "ptlblk, ptl_rtscts and ptl unload"

echo "# $tests tests, $failures failed"
exit $((failures > 0))
