#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): ptlblk against a server that
# lies (issue 20). ptlblk-rogue (tools/ptlblk-server/rogue.cc) answers the
# handshake as ptlblk-server does and then one kind of request in a
# wrong way; the client must never report success for data that did not
# move. Two nodes, two network namespaces joined by a veth pair,
# ptl_rtscts bound on both ends (selftests/netns_lib.sh):
#
#     default namespace (node a)              namespace b (node b)
#   ptlblk.ko: /dev/ptlblk0  ---veth---  ptlblk-rogue MODE, pid 42
#
#   read-status-on-reply  READ answered PTLBLK_S_OK on the reply portal,
#                         its data never sent: the READ fails (it used to
#                         complete OK at the request timeout, with
#                         whatever the pages held)
#   read-none             READ never answered: it fails at the timeout
#   read-short            half the READ's bytes, status OK: it fails
#   write-no-get          WRITE answered OK, its data never fetched: the
#                         WRITE fails (it used to complete OK)
#   write-short-get       half the WRITE's bytes fetched, status OK: fails
# The server lies only about the export's second quarter (4 .. 8 MiB of
# 16; the partition scan at attach reads elsewhere). In each mode the
# same operations elsewhere succeed (the control: 'R' bytes read back, a
# write fetched), the device detaches and nothing is left pinned or
# allocated. Prints TAP lines.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
on_server=("$ip" netns exec b)
# shellcheck source-path=SCRIPTDIR source=ptlblk_lib.sh
. "$top/selftests/ptlblk_lib.sh"
rogue=$build/tools/ptlblk-server/ptlblk-rogue
timeout_s=2
lie=1024	# 4 KiB blocks: 4 MiB, where the server lies

# rogue_up MODE: the lying server on node b, and the device attached to it.
rogue_up() {
	local i
	"${on_server[@]}" "$rogue" "$1" >>/tmp/rogue.log 2>&1 &
	rogue_pid=$!
	for ((i = 0; i < 50; i++)); do
		"${on_server[@]}" "$ptlctl" ni show 2>/dev/null | grep -q ' pid 42 ' && break
		sleep 0.2
	done
	"$ptlctl" blk attach $nid_b timeout $timeout_s >/dev/null && [ -b /dev/ptlblk0 ]
}

rogue_down() {
	"$ptlctl" blk detach 0
	report $? "$1: the device detaches"
	kill -TERM "$rogue_pid"
	wait "$rogue_pid"
}

# read_fails MODE: a 4 KiB O_DIRECT read must end with an error.
read_fails() {
	local errors0
	errors0=$(blk_stat errors)
	! dd if=/dev/ptlblk0 of=/tmp/blk.out bs=4096 skip=$lie count=1 iflag=direct \
		status=none 2>/tmp/dd.err
	report $? "$1: the READ fails ($(head -c 60 /tmp/dd.err))"
	[ "$(blk_stat errors)" -gt "${errors0:-0}" ]
	report $? "$1: counted in the device's errors"
}

# write_fails MODE
write_fails() {
	local errors0
	errors0=$(blk_stat errors)
	! dd if=/dev/urandom of=/dev/ptlblk0 bs=4096 seek=$lie count=1 oflag=direct \
		status=none 2>/tmp/dd.err
	report $? "$1: the WRITE fails ($(head -c 60 /tmp/dd.err))"
	[ "$(blk_stat errors)" -gt "${errors0:-0}" ]
	report $? "$1: counted in the device's errors"
}

read_ok() {	# read_ok MODE: the honest READ brings the server's 'R' bytes
	dd if=/dev/ptlblk0 of=/tmp/blk.out bs=4096 count=1 iflag=direct status=none &&
		[ "$(tr -d R </tmp/blk.out | wc -c)" = 0 ]
	report $? "$1: an honest READ succeeds with the server's data"
}

write_ok() {
	dd if=/dev/urandom of=/dev/ptlblk0 bs=4096 count=1 oflag=direct status=none
	report $? "$1: an honest WRITE succeeds"
}

netns_setup peer_timeout_ms=3000 && insmod "$moddir/ptlblk.ko" && [ -x "$rogue" ]
report $? "two nodes over ptl_rtscts, ptlblk loaded, ptlblk-rogue built"
counters_baseline

for mode in read-status-on-reply read-none read-short write-no-get write-short-get; do
	rogue_up $mode
	report $? "$mode: attached to the lying server"
	case $mode in
	read-*)
		read_fails $mode
		# read-none kills the device (a request unanswered): no control
		[ $mode = read-none ] || write_ok $mode
		[ $mode = read-none ] || read_ok $mode
		;;
	write-*)
		write_fails $mode
		read_ok $mode
		write_ok $mode
		;;
	esac
	rogue_down $mode
done
sed 's/^/# /' /tmp/rogue.log | sort | uniq -c | sort -rn | head -n 12

counters_back "after the lying servers"
two_nodes_down
echo "# $tap_count tests, $failures failed"
exit $((failures > 0))
