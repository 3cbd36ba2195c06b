# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables set here for the callers, or by them for us.)
# Sourced by the ptlblk selftests (ptlblk_test.sh: two namespaces in one
# guest; ptlblk_two_guests.sh: two guests): the paths, TAP lines, the
# server, trees of files with known checksums on ext4 over /dev/ptlblk0,
# fsck, a writer the server dies under, the Portals counters and the
# device's own, waiting for a process with a bound.
# The caller sets top and files (files per tree), and on_server: the
# command prefix that runs a program on the server's node (an array; empty
# when that is this node).

build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ptlctl=$build/tools/ptlctl/ptlctl
server=$build/tools/ptlblk-server/ptlblk-server
img=/tmp/ptlblk.img
mnt=/tmp/ptlblk-mnt
sums=/tmp/ptlblk-sums
slog=/tmp/ptlblk-server.log
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"

# blkdev_ready: /dev/ptlblk0 is there. Guests run no udevd (devtmpfs
# makes the node as the disk is added) and a fresh host may have no udev
# at all; where it runs, its queue is waited for first.
blkdev_ready() {
	if command -v udevadm >/dev/null; then
		udevadm settle 2>/dev/null
	fi
	[ -b /dev/ptlblk0 ]
}

# start_server: ptlblk-server exporting $img, in the background (sets
# server_pid); it is up when its NI is (ptlctl ni show lists pid 42)
server_pid=
start_server() {
	"${on_server[@]}" "$server" "$img" >>"$slog" 2>&1 &
	server_pid=$!
	local i
	for ((i = 0; i < 50; i++)); do
		"${on_server[@]}" "$ptlctl" ni show 2>/dev/null | grep -q ' pid 42 ' &&
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

# fsck_report -n|-y DESC: fsck.ext4 -f on the device; -n must find it
# clean, -y may repair (status 1)
fsck_report() {
	local rc
	fsck.ext4 -f "$1" /dev/ptlblk0 >/tmp/fsck.log 2>&1
	rc=$?
	if [ "$1" = -y ]; then
		[ $rc -le 1 ] || sed 's/^/#   /' /tmp/fsck.log
		report $((rc > 1)) "$2: $rc (0 or 1: clean or repaired)"
	else
		[ $rc -eq 0 ] || sed 's/^/#   /' /tmp/fsck.log
		report $rc "$2"
	fi
}

cycle() {	# cycle NAME SEED: write a tree, unmount, fsck, mount, verify all
	local name=$1 seed=$2
	mount /dev/ptlblk0 "$mnt" &&
		write_tree "$mnt/$name" "$seed" && sync
	report $? "$name: $files files written on ext4 over ptlblk"
	umount "$mnt"
	report $? "$name: unmounted"
	fsck_report -n "$name: fsck.ext4 -f finds the file system clean"
	mount /dev/ptlblk0 "$mnt" && verify_tree
	report $? "$name: every checksum matches after a remount ($(wc -l <"$sums") files)"
	umount "$mnt"
}

# The Portals counters of this node (ptl.ko's sysfs): what a failure must
# not leak. counters_baseline records them; counters_back DESC reports
# whether they returned there (unpinning is deferred to a work item: it
# waits up to 5 s).
portals_counters="pinned_pages mds nis eqs core_objects open_files"
declare -A counters_base
counters_baseline() {
	local c
	for c in $portals_counters; do
		counters_base[$c]=$(cat /sys/class/misc/portals/$c)
	done
}

counters_back() {
	local c now diff i
	for ((i = 0; i < 25; i++)); do
		diff=
		for c in $portals_counters; do
			now=$(cat /sys/class/misc/portals/$c)
			[ "$now" = "${counters_base[$c]}" ] ||
				diff+=" $c ${counters_base[$c]} -> $now;"
		done
		[ -z "$diff" ] && break
		sleep 0.2
	done
	[ -z "$diff" ] || echo "# counters:$diff"
	[ -z "$diff" ]
	report $? "$1: pinned pages, MDs, NIs, EQs and objects back at their baseline"
}

# two_nodes_down: unbinds interface 0 on both nodes, deletes namespace b
# and unloads the three modules, as the end of a two-node ptlblk test.
two_nodes_down() {
	"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0
	$ip netns del b
	rmmod ptlblk && rmmod ptl_rtscts && rmmod ptl
	report $? "ptlblk, ptl_rtscts and ptl unload"
}

# blk_stat NAME...: counters of ptlblk0 (reads, writes, errors, timeouts,
# ...), read at once, printed on one line in the order asked
blk_stat() {
	"$ptlctl" -s blk show 0 | awk -v want="$*" '
		n {
			for (i = 1; i <= NF; i++) val[name[i]] = $i
			k = split(want, w, " ")
			for (i = 1; i <= k; i++) printf "%s%s", val[w[i]], i < k ? " " : "\n"
			exit
		}
		$1 == "reads" { for (i = 1; i <= NF; i++) name[i] = $i; n = 1 }'
}

# blk_inflight: requests of ptlblk0 in the driver (reads + writes)
blk_inflight() {
	local r w
	read -r r w </sys/block/ptlblk0/inflight && echo $((r + w))
}

# wait_inflight N SECONDS: until N requests are in flight at once (the
# bound is wall-clock time: on a slow guest each poll costs much more)
wait_inflight() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		[ "$(blk_inflight)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_exit PID SECONDS: until the process (a child) ends, killing it after
# the bound; sets exit_status and took (seconds since the call). Returns 0
# when it ended by itself.
wait_exit() {
	local pid=$1 t0 end=$((SECONDS + $2))
	t0=$(date +%s)
	while [ $SECONDS -lt $end ]; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	took=$(($(date +%s) - t0))
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		wait "$pid" 2>/dev/null
		exit_status=137
		return 1
	fi
	wait "$pid"
	exit_status=$?
	return 0
}

# The server dies under a writer: writer_start mounts the device and starts
# O_DIRECT 1 MiB writes (sets writer), the same 16 MiB of a file over and
# over until one fails, so that the writer is still writing whenever the
# kill comes, however fast the link (one pass over a big file ended in
# ENOSPC before the kill once large frames made ptlblk faster); after the
# kill, writer_fails BOUND reports that the writer ends with an error
# within the bound, the device is dead and the file system unmounts.
writer_start() {
	mount /dev/ptlblk0 "$mnt"
	report $? "mounted for the kill test"
	(
		while dd if=/dev/zero of="$mnt/big" bs=1M count=16 oflag=direct \
			conv=notrunc status=none 2>/tmp/dd.err; do
			:
		done
		exit 1
	) &
	writer=$!
}

writer_fails() {
	local t0
	wait_exit "$writer" "$1"
	report $? "the writer ends within $1 s of the server's death (${took} s)"
	[ "$exit_status" -ne 0 ]
	report $? "the writer gets an I/O error ($(head -c 80 /tmp/dd.err))"
	"$ptlctl" blk show 0 | grep -q 'state dead'
	report $? "ptlctl blk show: the device is dead"
	t0=$(date +%s)
	umount "$mnt"
	report $? "the file system unmounts ($(($(date +%s) - t0)) s)"
}
