#!/bin/bash
# Runs in each of two test guests joined by the harness's emulated
# Ethernet link (tools/testing/vm/run --nodes 2): ptlblk between two real kernels,
# the client's ptlblk.ko on node 0, ptlblk-server on node 1, ptl_rtscts
# over virtio-net on both (PTL_TRANSPORT=rdma: ptl_rdma over Soft-RoCE on
# the same link; see transport_lib.sh).
#
#     node 0 (client)                          node 1 (server)
#   /dev/ptlblk0, ext4 on it                 ptlblk-server /tmp/ptlblk.img
#   eth0 10.99.0.1  <----- emulated link ----->  eth0 10.99.0.2
#
#  1. attach, mkfs.ext4, mount, a tree of files with known checksums,
#     unmount, fsck.ext4 -f clean, mount again, every checksum;
#  2. the server killed (kill -9) mid-write, its node staying up: the
#     writer on node 0 gets an error within the bounded time, the device
#     is dead, the file system unmounts, the device detaches, node 0's
#     Portals counters are back at their baseline (and node 1's);
#  3. the server restarted: attach again, fsck, every checksum written
#     before the kill; detach, SIGTERM stops the server, the modules
#     unload on both nodes.
# Node 0 drives; node 1 obeys one-line commands ("kill", "restart",
# "done") that node 0 sends over TCP on the same link (busybox nc).
# Environment from the harness: NODE, PEER_IP. PTLBLK_FILES (files per
# tree, default 60), PTLBLK_MB (backing file, default 128),
# PTLBLK_PEER_TIMEOUT_MS (the transport's peer timeout, default 3000; the
# debug kernel under load needs more, 20000 passed). Prints TAP lines,
# prefixed by the harness with [nodeN].
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
files=${PTLBLK_FILES:-60}
size_mb=${PTLBLK_MB:-128}
on_server=()	# the server runs where this script does (node 1)
port=7070
# Request timeouts: generous for the file system (two TCG guests), short
# for the kill, whose bound they set.
timeout_s=30
kill_timeout_s=8
peer_timeout_ms=${PTLBLK_PEER_TIMEOUT_MS:-3000}

# shellcheck source-path=SCRIPTDIR source=ptlblk_lib.sh
. "$top/selftests/ptlblk_lib.sh"

# shellcheck source-path=SCRIPTDIR source=transport_lib.sh
. "$top/selftests/transport_lib.sh"

insmod "$moddir/ptl.ko" nid=7 && transport_up eth0 "$peer_timeout_ms"
report $? "node $NODE: ptl.ko and $transport_mod.ko loaded, interface 0 bound to eth0"
counters_baseline

# ---- node 1: the server ----

# next_command: the next line node 0 sends. Node 0 sends every command,
# whatever failed before; the bound only ends a run whose node 0 script
# died (on a loaded host a step of node 0 took over 4 minutes).
next_command() {
	timeout 840 busybox nc -l -p $port </dev/null
}

if [ "$NODE" = 1 ]; then
	truncate -s "${size_mb}M" "$img"
	start_server
	report $? "node 1: ptlblk-server serves a ${size_mb} MiB file"
	cmd=$(next_command)
	[ "$cmd" = kill ]
	report $? "node 1: told to kill the server ('$cmd')"
	kill -9 "$server_pid"
	wait "$server_pid" 2>/dev/null
	echo "# node 1: server killed at $(date +%s.%N)"
	counters_back "node 1: the server killed"
	cmd=$(next_command)
	[ "$cmd" = restart ] && start_server
	report $? "node 1: ptlblk-server restarted ('$cmd')"
	cmd=$(next_command)
	[ "$cmd" = "done" ]
	report $? "node 1: node 0 is done ('$cmd')"
	kill -TERM "$server_pid"
	wait "$server_pid"
	report $? "node 1: ptlblk-server stops cleanly on SIGTERM"
	sed 's/^/# server: /' "$slog" | tail -n 6
	counters_back "node 1: the server stopped"
	transport_rnr "node 1"
	transport_down && rmmod ptl
	report $? "node 1: $transport_mod and ptl unload"
	echo "# node 1: $tap_count tests, $failures failed"
	exit $((failures > 0))
fi

# ---- node 0: the client ----

attach() {	# attach TIMEOUT: retry while the server starts
	local i
	for ((i = 0; i < 30; i++)); do
		"$ptlctl" blk attach "$PEER_IP" timeout "$1" >/dev/null 2>&1 &&
			blkdev_ready && return 0
		sleep 1
	done
	return 1
}

modprobe ext4
insmod "$moddir/ptlblk.ko"
report $? "node 0: ptlblk.ko loaded"
mkdir -p "$mnt"
: >"$sums"

# 1. A file system on a device served by the other guest.
attach $timeout_s
report $? "node 0: ptlctl blk attach $PEER_IP (the server on node 1)"
[ "$(cat /sys/block/ptlblk0/size 2>/dev/null)" = $((size_mb * 2048)) ]
report $? "node 0: /dev/ptlblk0 has the server's size"
mkfs.ext4 -q -F /dev/ptlblk0 >/tmp/mkfs.log 2>&1
report $? "node 0: mkfs.ext4 /dev/ptlblk0"
cycle two-guests 1
"$ptlctl" -s blk show | sed 's/^/# /'

# 2. The server dies (its node stays up) while a writer is busy.
"$ptlctl" blk detach 0 && attach $kill_timeout_s
report $? "node 0: detach, attach again with a ${kill_timeout_s} s request timeout"
writer_start
sleep 2
kill -0 "$writer" 2>/dev/null
report $? "node 0: the writer is busy"
peer_tell $port kill
report $? "node 0: node 1 told to kill its server mid-write"
# A killed server whose node stays up is noticed by the request timeout
# only; then slack for two TCG guests.
writer_fails $((kill_timeout_s + peer_timeout_ms / 1000 + 20))
"$ptlctl" -s blk show | sed 's/^/# /'
"$ptlctl" blk detach ptlblk0 && [ ! -e /sys/block/ptlblk0 ]
report $? "node 0: the dead device detaches"
counters_back "node 0: after the kill and the detach"

# 3. The server back: the data written before the kill is there.
peer_tell $port restart
report $? "node 0: node 1 told to restart its server"
attach $timeout_s
report $? "node 0: attached again, nothing reloaded"
fsck_report -y "node 0: fsck.ext4 -f -y after the kill"
mount /dev/ptlblk0 "$mnt" && verify_tree
report $? "node 0: every file written before the kill has its checksum"
umount "$mnt" && "$ptlctl" blk detach 0
report $? "node 0: unmounted, detached"
peer_tell $port "done"
counters_back "node 0: at the end"
transport_rnr "node 0"
rmmod ptlblk && transport_down && rmmod ptl
report $? "node 0: ptlblk, $transport_mod and ptl unload"
echo "# node 0: $tap_count tests, $failures failed"
exit $((failures > 0))
