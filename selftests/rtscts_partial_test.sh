#!/bin/bash
# shellcheck disable=SC2317 # the functions that wait_for calls
# Runs inside a test guest (tools/testing/vm/run): what a hostile host can make
# ptl_rtscts.ko hold with messages it opens and never finishes (issue 20,
# R2). Each matched MSG whose payload is incomplete (and each RTS) keeps a
# message open on its peer until the rest arrives: there was no cap, no
# timer ran for a peer that only sends to us, so a silent peer's messages
# never failed, and each held a reference on its target's NI, so the
# server's pid stayed taken after the server was gone.
#
#     default namespace (hostile host)          namespace b (node b)
#   va 10.0.0.1, the injector  ----veth----  vb 10.0.0.2, bound; an
#                                            ordinary server (uid 1000)
#                                            on pid 99, a 1 MiB MD
#
#  1. one forged nid opens PARTIAL_MSGS (200) puts of 1 MiB with 1 byte
#     each, then falls silent: node b holds at most 64 of them open
#     (rx_open), the server sees at most 64 PUT_STARTs, the rest are
#     dropped unmatched and counted (rx_open_dropped); the same with RTS
#     frames from a second nid;
#  2. silence for peer_timeout_ms: every open message fails with PUT_END
#     PTL_NI_FAIL (one per PUT_START, none ends well) and rx_open is 0;
#  3. the interface's cap (rx_open_max 100) over PARTIAL_NIDS (4) forged
#     nids of 40 messages each: at most 100 open; they fail too;
#  4. with the peer timeout at 10 minutes, 30 messages open and the server
#     killed with -9: at once rx_open is 0, and the server started again
#     gets its pid 99 (it used to get PTL_PID_INVALID);
#  5. a well-behaved sender (node a's own ptl_rtscts) issues 128 puts of
#     64 KiB at once, each by RTS/CTS: all end well, and node b drops
#     none (the sender keeps at most 64 open itself);
#  6. the counters are back, everything unbinds, the modules unload.
# Environment: PARTIAL_MSGS (200), PARTIAL_NIDS (4).
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
inject=$build/tools/ptl_inject/ptl_inject
server_bin=$build/selftests/ptl_partial_rx_test
msgs=${PARTIAL_MSGS:-200}
nids=${PARTIAL_NIDS:-4}
user=1000
pid=99
per_peer=64
if_cap=100
params=/sys/module/ptl_rtscts/parameters
dir=$(mktemp -d /tmp/ptl-partial.XXXXXX)
chown $user "$dir"	# the server, as uid 1000, writes its counts there

diag() { echo "# $*"; }

# The server, as uid 1000 on node b: its counts go to $dir/status.N.
# server_pid is the harness's process, which runs the test in a child:
# signals go to the child, whose pid the status gives.
server_pid=
server_n=0
server_start() {
	server_n=$((server_n + 1))
	status=$dir/status.$server_n
	$ip netns exec b setpriv --reuid=$user --regid=$user --clear-groups \
		env PTL_PARTIAL_STATUS="$status" PTL_PARTIAL_PID=$pid \
		"$server_bin" >"$dir/server.$server_n.log" 2>&1 &
	server_pid=$!
	wait_for 60 test -s "$status"
}
# count KEY: a count the server reported last.
count() { awk -v k="$1" '$1 == k { print $2 }' "$status" 2>/dev/null; }
inject_partial() {	# inject_partial FIRST_NID PEERS MSGS [ptl_inject options]
	local first=$1 peers=$2 n=$3

	shift 3
	"$inject" partial -i va --dst-mac "$mac_b" --target "$nid_b:$pid" \
		--portal 4 --first-nid "$first" --peers "$peers" --msgs "$n" "$@" |
		sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}

if [ ! -x "$inject" ] || [ ! -x "$server_bin" ]; then
	skip "partial incoming messages" "ptl_inject or ptl_partial_rx_test is not built"
	exit 0
fi

netns_setup peer_timeout_ms=600000
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 bound"
[ -w $params/rx_open_max ] && echo $if_cap >$params/rx_open_max
report $? "module parameter rx_open_max (open incoming messages per interface)"
echo 16384 >$params/rx_open_max 2>/dev/null
mac_b=$($ip -n b link show vb | awk '/link\/ether/ { print $2 }')
counters_save
server_start && [ "$(count init)" = PTL_OK ]
rc=$?
report $rc "an ordinary server (uid $user) holds pid $pid on node b (init $(count init))"
[ $rc = 0 ] || sed 's/^/#   /' "$dir/server.$server_n.log"

# 1. One silent nid, many open messages: at most 64 held.
inject_partial 0x0a030100 1 "$msgs"
report $? "ptl_inject partial: 1 nid x $msgs puts of 1 MiB carrying 1 byte each"
inject_partial 0x0a030200 1 "$msgs" --rts
report $? "ptl_inject partial --rts: 1 nid x $msgs RTS of 1 MiB"
all_in() { [ "$(b_iface rx_frames)" -ge $((2 * msgs)) ] 2>/dev/null; }
wait_for 60 all_in
open=$(b_iface rx_open)
dropped=$(b_iface rx_open_dropped)
diag "node b: rx_open ${open:-(none)}, rx_open_dropped ${dropped:-(none)}," \
	"server: start $(count start), end_fail $(count end_fail)"
$ip netns exec b "$ptlctl" -s iface show 0 | sed 's/^/#   /'
[ -n "$open" ] && [ "$open" -le $((2 * per_peer)) ] &&
	[ "$(count start)" -le $((2 * per_peer)) ]
report $? "2 peers hold at most $per_peer open messages each (rx_open ${open:-none}, PUT_START $(count start))"
[ -n "$dropped" ] && [ "$dropped" -ge $((2 * (msgs - per_peer))) ]
report $? "the excess is dropped and counted (rx_open_dropped ${dropped:-none}, at least $((2 * (msgs - per_peer))))"

# 2. The peers stay silent: their messages fail with events.
echo 2000 >$params/peer_timeout_ms
all_failed() { [ "$(count end_fail)" = "$(count start)" ] && [ "$(b_iface rx_open)" = 0 ]; }
wait_for 60 all_failed
report $? "after peer_timeout_ms of silence every open message failed: PUT_START $(count start), PUT_END PTL_NI_FAIL $(count end_fail), rx_open $(b_iface rx_open)"
[ "$(count end_ok)" = 0 ] && [ "$(count dropped)" = 0 ]
report $? "none ended well (end_ok $(count end_ok)), no event lost (dropped $(count dropped))"

# 3. Many nids: the interface's cap.
echo 600000 >$params/peer_timeout_ms
echo $if_cap >$params/rx_open_max
start0=$(count start)
frames0=$(b_iface rx_frames)
inject_partial 0x0a030300 "$nids" 40
report $? "ptl_inject partial: $nids nids x 40 puts"
all_in() { [ "$(b_iface rx_frames)" -ge $((frames0 + nids * 40)) ] 2>/dev/null; }
wait_for 60 all_in
open=$(b_iface rx_open)
[ -n "$open" ] && [ "$open" -le $if_cap ] &&
	[ $(($(count start) - start0)) -le $if_cap ]
report $? "the interface holds at most rx_open_max ($if_cap): rx_open ${open:-none}, PUT_START $(($(count start) - start0)), rx_open_dropped $(b_iface rx_open_dropped)"
echo 2000 >$params/peer_timeout_ms
wait_for 60 all_failed
report $? "those fail too: PUT_START $(count start), PUT_END PTL_NI_FAIL $(count end_fail), rx_open $(b_iface rx_open)"
echo 16384 >$params/rx_open_max

# 4. The server goes while messages are open: its pid is free at once.
echo 600000 >$params/peer_timeout_ms
start0=$(count start)
inject_partial 0x0a030400 1 30
report $? "ptl_inject partial: 1 nid x 30 puts, with the peer timeout at 10 minutes"
thirty_open() { [ $(($(count start) - start0)) = 30 ]; }
wait_for 60 thirty_open
report $? "the server matched them (PUT_START $(($(count start) - start0)))"
kill -9 "$(count pid)"
wait "$server_pid" 2>/dev/null
open=$(b_iface rx_open)
server_start
[ "$(count init)" = PTL_OK ]
report $? "the server killed and started again at once gets its pid $pid (init $(count init))"
[ "$open" = 0 ]
report $? "its open messages were cancelled when it exited (rx_open ${open:-none} right after)"
echo 10000 >$params/peer_timeout_ms

# 5. A well-behaved sender never meets the cap.
dropped0=$(b_iface rx_open_dropped)
PTL_PARTIAL_TARGET=$nid_b:$pid PTL_PARTIAL_PUTS=128 PTL_PARTIAL_PUT_LEN=65536 \
	"$server_bin" >"$dir/client.log" 2>&1
rc=$?
sed 's/^/#   /' "$dir/client.log" | grep -v '^#   ok\|^#   #' | head -20
report $rc "node a's 128 puts of 64 KiB issued at once (RTS/CTS) all end well"
got_all() { [ "$(count end_ok)" -ge 128 ]; }
wait_for 60 got_all
report $? "the server took every one (PUT_END PTL_NI_OK $(count end_ok))"
[ "$(b_iface rx_open_dropped)" = "${dropped0:-x}" ]
report $? "node b dropped none of them (rx_open_dropped ${dropped0:-none} before, $(b_iface rx_open_dropped) after)"

# 6. Nothing left behind.
kill -TERM "$(count pid)"
wait "$server_pid"
report $? "the server stops on SIGTERM"
sleep 1
counters_back
report $? "module counters are back where they were"
netns_teardown
rm -rf "$dir"
exit $((failures > 0))
