#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ptl_stress in a test guest: short runs that must pass (several clients,
# several servers, all operations, time-bounded), and faults that must be
# caught (injected duplicate, reorder, loss, corruption, a message Portals
# drops, a server or a client that vanishes, no server at all). Prints TAP
# lines ("ok - ...", "not ok - ..."); exits non-zero if any failed.
#
# Loads ptl.ko (nid $PTL_TEST_NID, default 7) unless /dev/portals exists,
# and unloads it again if it loaded it. Uses $BUILD (default build/).
#   tools/testing/vm/run --smp 2 -- selftests/ptl_stress_test.sh
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
tap_numbered=1
build=${BUILD:-$top/build}
stress=$build/tools/ptl_stress/ptl_stress
nid=${PTL_TEST_NID:-7}
out=$(mktemp -d)

# show FILE: the output of a failed step, as TAP comments
show() {
	sed 's/^/# /' "$1" | tail -n 40
}

# has FILE PATTERN...: every fixed string occurs in FILE
has() {
	local f=$1 p
	shift
	for p in "$@"; do
		grep -qF -- "$p" "$f" || { echo "# missing: $p"; return 1; }
	done
}

loaded=0
if [ ! -c /dev/portals ]; then
	insmod "$top/ptl.ko" nid="$nid" || { echo "not ok 1 - load ptl.ko"; exit 1; }
	loaded=1
fi
if [ ! -x "$stress" ]; then
	echo "not ok 1 - $stress is built"
	exit 1
fi

# 1. The traffic mix from four clients to one server.
"$stress" selftest --clients 4 --count 300 --json >"$out/mix.json" 2>"$out/mix.err"
rc=$?
has "$out/mix.json" '"role":"selftest","pass":true' '"failed_processes":0' '"total":0'
report $((rc || $?)) "4 clients x 300 puts/gets/getputs (0-1 MiB) to one server: all verified"
[ $rc -eq 0 ] || show "$out/mix.err"

# 2. Several pairs at once.
"$stress" selftest --servers 2 --clients 2 --count 200 --window 8 --json \
	>"$out/pairs.json" 2>"$out/pairs.err"
rc=$?
has "$out/pairs.json" '"pass":true' '"servers":2' '"failed_processes":0'
report $((rc || $?)) "2 servers x 2 clients at once: all verified"
[ $rc -eq 0 ] || show "$out/pairs.err"

# 3. Time-bounded, small messages, a wide window.
"$stress" selftest --clients 2 --seconds 2 --max-size 16K --window 64 --json \
	>"$out/time.json" 2>"$out/time.err"
rc=$?
has "$out/time.json" '"pass":true'
report $((rc || $?)) "2 clients for 2 s, window 64, sizes 0-16 KiB: all verified"
[ $rc -eq 0 ] || show "$out/time.err"

# 4. Injected faults, each counted exactly once and in its own class;
# the other client still passes, the run fails.
"$stress" selftest --clients 2 --count 400 --mix put=3,ack=1 \
	--inject dup:50,reorder:100,drop:150,corrupt:200 --json \
	>"$out/inject.json" 2>"$out/inject.err"
rc=$?
[ $rc -eq 1 ]
report $? "a run with injected faults exits 1"
has "$out/inject.json" \
	'"server_errors":{"lost":1,"duplicates":1,"reorders":1,"corruptions":1,"bad_lengths":0,"failures":0,"timeouts":0,"unexpected":0,"eq_overflows":0,"portals_drops":0,"total":4}' \
	'"failed_processes":2'
ok=$?
report $ok "the server counts the duplicate, the reorder, the loss and the corruption once each"
[ $ok -eq 0 ] || show "$out/inject.json"
has "$out/inject.err" 'put seq 50 arrived again (duplicate)' \
	'put seq 100 was matched after a later one (reordered)' \
	'1 of its 400 puts never arrived' 'put seq 200 (' 'corrupted'
ok=$?
report $ok "each fault is named with its sequence number"
[ $ok -eq 0 ] || show "$out/inject.err"

# 5. A message nothing matches: Portals drops it, the drop counter says so.
"$stress" selftest --clients 1 --count 100 --mix put=1 --inject stray:30 --json \
	>"$out/stray.json" 2>"$out/stray.err"
rc=$?
[ $rc -eq 1 ] && has "$out/stray.json" '"portals_drops":1' '"lost":1'
ok=$?
report $ok "a put that matches nothing shows in PTL_SR_DROP_COUNT and as lost"
[ $ok -eq 0 ] || show "$out/stray.err"

# 6. The server vanishes under a running client: the client reports a
# hang naming what it waited for, and exits 1 soon after --timeout-ms.
"$stress" server --pid 90 --quiet >/dev/null 2>&1 &
server=$!
sleep 0.3
start=$SECONDS
"$stress" client --server "$nid:90" --seconds 60 --timeout-ms 2000 --quiet \
	>"$out/vanish.out" 2>&1 &
client=$!
sleep 1.5
kill -9 $server
wait $server 2>/dev/null
wait $client
rc=$?
took=$((SECONDS - start))
[ $rc -eq 1 ] && [ $took -lt 20 ] && has "$out/vanish.out" 'hang: nothing completed for 2000 ms'
ok=$?
report $ok "a client whose server is killed exits 1 with a hang report (${took} s)"
[ $ok -eq 0 ] || show "$out/vanish.out"

# 7. The client vanishes: the server reports it and exits 1.
"$stress" server --pid 91 --timeout-ms 2000 --quiet >"$out/lost.out" 2>&1 &
server=$!
sleep 0.3
"$stress" client --server "$nid:91" --seconds 60 --quiet >/dev/null 2>&1 &
client=$!
sleep 1.5
kill -9 $client
wait $client 2>/dev/null
wait $server
rc=$?
[ $rc -eq 1 ] && has "$out/lost.out" 'and no FIN (it hangs or has exited)'
ok=$?
report $ok "a server whose client is killed exits 1 naming the client"
[ $ok -eq 0 ] || show "$out/lost.out"

# 8. Nobody there.
"$stress" client --server "$nid:92" --timeout-ms 1000 --quiet >"$out/none.out" 2>&1
rc=$?
[ $rc -eq 1 ] && has "$out/none.out" 'no answer from server'
ok=$?
report $ok "a client without a server exits 1 after --timeout-ms"
[ $ok -eq 0 ] || show "$out/none.out"

# 9. Nothing left behind.
if [ -r /sys/class/misc/portals/nis ]; then
	[ "$(cat /sys/class/misc/portals/nis)" = 0 ] &&
		[ "$(cat /sys/class/misc/portals/pinned_pages)" = 0 ]
	report $? "no NI and no pinned page left after the runs"
fi

rm -rf "$out"
if [ $loaded = 1 ]; then
	rmmod ptl
	report $? "ptl.ko unloads"
fi
echo "1..$tap_count"
exit $((failures > 0))
