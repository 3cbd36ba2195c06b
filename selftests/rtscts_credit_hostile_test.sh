#!/bin/bash
# shellcheck disable=SC2317 # the functions that wait_for calls
# Runs inside a test guest (tools/testing/vm/run): a sender that ignores
# ptl_rtscts's request credit (wire-protocol.md, "Request credit";
# rtscts/credit.c). Every GET a node takes makes it queue a REPLY, which
# waits until the sender acknowledges it; a node takes at most 256
# requests of one peer's stream before it is done with them, and refuses
# the peer's further requests unprocessed (credit_refused). An honest
# sender never meets that (rtscts_flood_test.sh); this is the hostile one:
#
#     default namespace (node a)                namespace b (node b)
#   va 10.0.0.1, bound; ptl_inject  ---veth---  vb 10.0.0.2, bound;
#   credit as fake nid 10.0.0.200                rtscts_getsrc on pid 98
#   (and .201), ptl_stress client                (a 64 KiB MD for gets),
#                                                ptl_stress server pid 77
#
#  1. the fake node opens a stream with one GET, then sends GETs 1..N-1
#     (CREDIT_GETS, 2000) past every grant, sends again twice what was not
#     acknowledged, and never acknowledges a REPLY. Node b takes exactly
#     256 of them (its ack stops at 256, its grant never passes 256, the
#     getsrc process sees 256 GET_STARTs: 256 REPLYs made), refuses the
#     first GET past the credit each time it arrives (credit_refused rose
#     by exactly the times the injector sent it, at least once) and holds
#     for the fake node at most 256 messages (the peer's queued, the
#     target NI's msgs_in_flight) and at most 4 MiB ahead of the gap.
#     Each GET also carries two PUTs as riders (wire version 4), where
#     only responses may ride: node b refuses them (bad_frames rose by at
#     least two per GET it took) and they change none of the above;
#  2. while a second fake node (10.0.0.201) does the same, node a's
#     ptl_stress client (puts, gets, getputs, every byte verified) to node
#     b is served in full, none of its requests refused; the second fake
#     node also gets exactly 256: the credit is per peer;
#  3. the fake nodes stay silent: after peer_timeout_ms every REPLY has
#     failed (GET_END PTL_NI_FAIL, none ended well), node b holds nothing
#     for them any more;
#     3b. the interface's cap on requests held from all peers together
#     (rx_reqs_max, set to 384): the first fake node gets 256, a second
#     the 128 left, however many credits each has; rx_reqs (the gauge)
#     says 384, and 0 again once their REPLYs failed;
#  4. as uid 1000 in a user and network namespace of its own (`unshare
#     -Urn`, rtscts_credit_hostile_user.sh) and a memory cgroup: it binds
#     its own veth end, serves gets on it, and attacks it from the other
#     end with CREDIT_USER_NODES (8) fake nodes: each gets 256 and no
#     more; then twice as many send 257 GETs each (a full credit, nothing
#     ahead of a gap), and the REPLYs they make its interface hold (a
#     ptl_msg each) are charged to its cgroup;
#  5. nothing is left behind: counters back, no WARN or oops in dmesg,
#     everything unbinds, the modules unload.
# Environment: CREDIT_GETS (2000), CREDIT_USER_NODES (8).
# Prints TAP lines; the harness fails the run on any kernel splat too.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=userns_lib.sh
. "$top/selftests/userns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=memcg_lib.sh
. "$top/selftests/memcg_lib.sh"
inject=$build/tools/ptl_inject/ptl_inject
getsrc=$build/selftests/rtscts_getsrc
gets=${CREDIT_GETS:-2000}
user_nodes=${CREDIT_USER_NODES:-8}
credit=256		# RTSCTS_REQ_CREDIT
ooo_cap=$((4 << 20))	# RTSCTS_OOO_MAX_BYTES: held ahead of a gap, per peer
pid=98
fake1=10.0.0.200
fake2=10.0.0.201
fake3=10.0.0.202
fake4=10.0.0.203
params=/sys/module/ptl_rtscts/parameters
dir=$(mktemp -d /tmp/ptl-credit.XXXXXX)

diag() { echo "# $*"; }
# field KEY FILE: the number after "KEY": in ptl_inject's JSON.
field() { jnum "$1" <"$2"; }
# stat_of WHAT MATCH KEY: a value from `ptlctl -s WHAT show` (text) on node
# b, in the block of the peer whose nid is MATCH (peer) or of the NI whose
# pid is MATCH (ni): KEY is a "name value" pair of a line (queued), or
# ROW:name for a column under a "ROW:" heading (held:ooo_bytes).
stat_of() {
	$ip netns exec b "$ptlctl" -s "$1" show 2>/dev/null | awk -v what="$1" \
		-v match_="$2" -v key="$3" '
		$1 == what {
			mine = 0
			if (what == "peer") mine = $2 == match_
			else for (i = 1; i < NF; i++) if ($i == "pid") mine = $(i + 1) == match_
			next
		}
		!mine { next }
		row != "" {
			for (i = 1; i <= NF; i++) if (row ":" names[i] == key) { print $i; exit }
			row = ""
			next
		}
		$1 ~ /:$/ {
			row = substr($1, 1, length($1) - 1)
			for (i = 2; i <= NF; i++) names[i - 1] = $i
			next
		}
		{ for (i = 1; i < NF; i++) if ($i == key) { print $(i + 1); exit } }'
}
# slab_objs CACHE: active objects of a slab cache (empty if it is merged).
slab_objs() { awk -v c="$1" '$1 == c { print $2 }' /proc/slabinfo 2>/dev/null; }
# starts, ends KIND: what rtscts_getsrc printed so far.
starts() { grep -c '^start ' "$dir/getsrc.log"; }
ends() { grep -c "^end $1 " "$dir/getsrc.log"; }
# attack NAME SRC_NID [ptl_inject options]: ptl_inject credit from node a
# to the getsrc process on node b, its JSON in $dir/NAME.json.
attack() {
	local name=$1 src=$2

	shift 2
	"$inject" -j credit -i va --dst-mac "$mac_b" --target "$nid_b:$pid" \
		--src-nid "$src" --gets "$gets" --wait-ms 1000 "$@" >"$dir/$name.json"
	local rc=$?
	diag "ptl_inject credit ($name): $(cat "$dir/$name.json")"
	return $rc
}

if [ ! -x "$inject" ] || [ ! -x "$getsrc" ] || [ ! -x "$stress" ]; then
	skip "a sender that ignores the request credit" \
		"ptl_inject, rtscts_getsrc or ptl_stress is not built"
	exit 0
fi

t_start=$SECONDS
dmesg_lines=$(dmesg | wc -l)
# A long peer timeout: the fake nodes' REPLYs stay queued while we look.
netns_setup peer_timeout_ms=600000
report $? "two nodes: ptl.ko and ptl_rtscts.ko loaded, interface 0 bound"
mac_b=$($ip -n b link show vb | awk '/link\/ether/ { print $2 }')
counters_save
slab0=$(slab_objs ptl_msg)
$ip netns exec b "$getsrc" $pid 3600000 >"$dir/getsrc.log" 2>&1 &
getsrc_pid=$!
wait_for 30 grep -q '^ready' "$dir/getsrc.log"
report $? "node b: rtscts_getsrc serves gets on pid $pid"

# 1. One fake node, GETs past every grant, no REPLY acknowledged; PUTs
# riding on each.
refused0=$(b_iface credit_refused)
bad0=$(b_iface bad_frames)
attack one $fake1 --rounds 2 --put-riders 2
report $? "ptl_inject credit: handshake, $gets GETs with 2 PUT riders each and 2 rounds again from $fake1"
taken=$(field taken "$dir/one.json")
grant=$(field grant_max "$dir/one.json")
head_sends=$(field head_sends "$dir/one.json")
replies=$(field replies "$dir/one.json")
refused=$(($(b_iface credit_refused) - refused0))
[ "$taken" = $credit ]
report $? "node b took exactly $credit of the $gets GETs (its ack stopped at ${taken:-none})"
[ "$grant" = $credit ]
report $? "its grant never passed $credit while no REPLY was acknowledged (largest seen: ${grant:-none})"
# Each refusal is an arrival of that GET (the frames behind it wait ahead
# of the gap, or are dropped, never refused): at most head_sends, and as
# many when the link loses none of them.
[ "$refused" -ge 1 ] && [ "$refused" -le "$head_sends" ]
report $? "credit_refused rose by $refused: at least once, at most once for each of the $head_sends times the first GET past the credit was sent"
bad=$(($(b_iface bad_frames) - bad0))
[ "$bad" -ge $((2 * credit)) ]
report $? "node b refused the PUTs riding on the $credit GETs it took (bad_frames rose by $bad, at least $((2 * credit))): a request may not ride"
in_flight=$(stat_of ni $pid objects:msgs_in_flight)
queued=$(stat_of peer $fake1 queued)
ooo=$(stat_of peer $fake1 held:ooo_bytes)
slab1=$(slab_objs ptl_msg)
diag "node b: GET_START $(starts), REPLYs the fake node saw $replies; target NI msgs_in_flight" \
	"${in_flight:-?}, peer $fake1 queued ${queued:-?}, ooo_bytes ${ooo:-?};" \
	"slab ptl_msg ${slab0:-merged} -> ${slab1:-merged} active objects"
$ip netns exec b "$ptlctl" -s iface show 0 | sed 's/^/#   /'
[ "$(starts)" = $credit ] && [ "$(ends ok)" = 0 ] && [ "$(ends fail)" = 0 ]
report $? "the getsrc process saw exactly $credit GET_STARTs (REPLYs made) and no GET_END yet"
[ -n "$replies" ] && [ "$replies" -ge 1 ] && [ "$replies" -le $credit ]
report $? "the fake node saw $replies distinct REPLYs (1..$credit)"
[ "$in_flight" = $credit ] && [ -n "$queued" ] && [ "$queued" -le $credit ]
report $? "node b holds $credit messages for it: the NI's msgs_in_flight ${in_flight:-?}, the peer's queued ${queued:-?} (at most $credit)"
[ -n "$ooo" ] && [ "$ooo" -le $ooo_cap ]
report $? "and ${ooo:-?} bytes ahead of the gap (at most $ooo_cap)"

# 2. A second fake node attacks while node a's ptl_stress runs.
$ip netns exec b "$stress" server --pid 77 --clients 1 --timeout-ms 60000 --quiet \
	>"$dir/server.log" 2>&1 &
server=$!
sleep 0.5
refused0=$(b_iface credit_refused)
waits0=$("$ptlctl" -j -s iface show 0 | jnum credit_waits)
attack two $fake2 --rounds 4 &
attacker=$!
two_taken() { [ "$(starts)" -ge $((2 * credit)) ]; }
wait_for 60 two_taken
"$stress" client --server "$nid_b:77" --id 0 --count 400 --max-size 64K \
	--mix put=40,ack=20,get=30,getput=10 --timeout-ms 60000 --quiet >"$dir/client.log" 2>&1
rc=$?
sed 's/^/#   /' "$dir/client.log" | head -20
report $rc "node a's ptl_stress (400 puts, gets and getputs up to 64 KiB, verified) to node b during the attack"
wait $server
report $? "the ptl_stress server saw all of it arrive"
wait $attacker
report $? "ptl_inject credit from $fake2 (4 rounds again)"
refused=$(($(b_iface credit_refused) - refused0))
head_sends=$(field head_sends "$dir/two.json")
[ "$(field taken "$dir/two.json")" = $credit ] && [ "$(starts)" = $((2 * credit)) ]
report $? "node b took exactly $credit GETs from $fake2 too: the credit is per peer (GET_START $(starts) in all)"
[ "$refused" -ge 1 ] && [ "$refused" -le "$head_sends" ]
report $? "credit_refused rose by $refused, at most the times $fake2's first GET past the credit was sent ($head_sends): none of node a's requests was refused"
diag "node a waited for credit $(($("$ptlctl" -j -s iface show 0 | jnum credit_waits) - waits0)) times"
[ "$(stat_of ni $pid objects:msgs_in_flight)" = $((2 * credit)) ]
report $? "the target NI holds $((2 * credit)) messages: $credit per fake node"

# 3. Silence: the REPLYs fail, and everything for the fake nodes goes.
echo 2000 >$params/peer_timeout_ms
all_failed() {
	[ "$(ends fail)" = $((2 * credit)) ] &&
		[ "$(stat_of ni "$pid" objects:msgs_in_flight)" = 0 ]
}
wait_for 60 all_failed
report $? "after peer_timeout_ms every REPLY failed: GET_END PTL_NI_FAIL $(ends fail), msgs_in_flight $(stat_of ni $pid objects:msgs_in_flight)"
[ "$(ends ok)" = 0 ] && ! grep -q '^dropped' "$dir/getsrc.log"
report $? "none ended well (GET_END ok $(ends ok)), no event lost"
released() {
	local f q

	for f in $fake1 $fake2; do
		q=$(stat_of peer "$f" queued)
		[ -z "$q" ] || [ "$q" = 0 ] || return 1
		q=$(stat_of peer "$f" held:ooo_bytes)
		[ -z "$q" ] || [ "$q" = 0 ] || return 1
	done
}
wait_for 30 released
report $? "node b keeps nothing queued or held for the fake nodes"
[ "$(b_iface rx_reqs)" = 0 ]
report $? "and its interface holds no request (rx_reqs $(b_iface rx_reqs))"

# 3b. The interface's cap over all peers: with rx_reqs_max at 1.5
# credits, the first fake node gets its 256, the second the 128 left.
# Two more fake nodes (new peers of node b); a long peer timeout again
# while they attack, so that no REPLY fails before we look.
echo 600000 >$params/peer_timeout_ms
echo $((credit * 3 / 2)) >$params/rx_reqs_max
starts0=$(starts)
refused0=$(b_iface credit_refused)
attack cap1 $fake3 --rounds 1 && attack cap2 $fake4 --rounds 1
report $? "with rx_reqs_max $((credit * 3 / 2)): ptl_inject credit from $fake3, then from $fake4"
[ "$(field taken "$dir/cap1.json")" = $credit ] &&
	[ "$(field taken "$dir/cap2.json")" = $((credit / 2)) ] &&
	[ "$(($(starts) - starts0))" = $((credit * 3 / 2)) ]
report $? "node b took $(field taken "$dir/cap1.json") and $(field taken "$dir/cap2.json") GETs: the interface's cap, not the second node's credit, stopped it (GET_START +$(($(starts) - starts0)))"
[ "$(b_iface rx_reqs)" = $((credit * 3 / 2)) ] &&
	[ "$(($(b_iface credit_refused) - refused0))" -ge 2 ]
report $? "its interface holds rx_reqs $(b_iface rx_reqs) and counted credit_refused +$(($(b_iface credit_refused) - refused0))"
echo 2000 >$params/peer_timeout_ms
cap_released() { [ "$(b_iface rx_reqs)" = 0 ]; }
wait_for 60 cap_released
report $? "after peer_timeout_ms the REPLYs failed and the interface holds no request again"
echo 65536 >$params/rx_reqs_max
# Part 4's REPLYs stay queued too until it has looked at them.
echo 600000 >$params/peer_timeout_ms

# 4. The same from inside a user and network namespace, charged to its cgroup.
unpriv_test() {
	local cg=/sys/fs/cgroup/ptl-credit inner=$top/selftests/rtscts_credit_hostile_user.sh
	local out=$dir/user.log rc objsize

	if ! memcg_make $cg 256M; then
		skip "uid 1000 in its own namespaces" "$memcg_why"
		return
	fi
	chmod 777 "$dir"
	(
		echo $BASHPID >$cg/cgroup.procs
		userns_run 1000 /bin/bash "$inner" "$inject" "$ptlctl" "$getsrc" "$cg" \
			"$user_nodes" "$gets" "$dir"
	) >"$out" 2>&1
	rc=$?
	sed 's/^/#   /' "$out"
	val() { awk -v k="$1" '$1 == k { print $2 }' "$out"; }
	[ $rc = 0 ] && [ -n "$(val charged)" ]
	report $? "uid 1000 in unshare -Urn: bound its own veth end and attacked it from the other ($user_nodes fake nodes, exit $rc)"
	[ "$(val taken_min)" = $credit ] && [ "$(val taken_max)" = $credit ] &&
		[ "$(val starts)" = $((user_nodes * credit)) ]
	report $? "there too each fake node had exactly $credit GETs taken (GET_START $(val starts))"
	[ "$(val refused)" -ge "$user_nodes" ] && [ "$(val refused)" -le "$(val head_sends)" ]
	report $? "and its interface counted credit_refused $(val refused) (at least once per node, at most the $(val head_sends) times the first GET past a credit was sent)"
	[ "$(val in_flight)" = $((user_nodes * credit)) ] && [ "$(val ooo_bytes)" -le $((user_nodes * ooo_cap)) ]
	report $? "its NI holds $user_nodes x $credit messages (msgs_in_flight $(val in_flight)), its interface $(val ooo_bytes) bytes ahead of the gaps"
	# Then 2 x NODES fake nodes send 257 GETs each: each fills its credit
	# and leaves nothing ahead of a gap, so what the interface holds is
	# the REPLYs alone, a ptl_msg each, allocated in the binder's memory
	# cgroup. Charges go through per-CPU stocks of 64 pages: memory.current
	# may lag by that much per CPU.
	objsize=$(cat /sys/kernel/slab/ptl_msg/object_size 2>/dev/null || echo 0)
	local msgs held slack=$((64 * 4096 * $(nproc)))
	msgs=$(val charge_in_flight)
	held=$((${msgs:-0} * objsize))
	diag "held: $msgs REPLYs x $objsize bytes = $held ($(val charge_ooo_bytes) ahead of gaps);" \
		"memory.current rose $(val charged) and fell $(val released) at unbind; slack $slack"
	[ "$msgs" = $((2 * user_nodes * credit)) ] && [ "$(val charge_taken_min)" = $credit ] &&
		[ "$(val charge_ooo_bytes)" = 0 ]
	report $? "$((2 * user_nodes)) fake nodes x 257 GETs: $credit taken from each, ${msgs:-?} REPLYs held, nothing ahead of a gap"
	[ "$objsize" -gt 0 ] && [ "$(val charged)" -ge $((held - slack)) ] &&
		[ "$(val released)" -ge $((held - slack)) ]
	report $? "the REPLYs ($held bytes of ptl_msg) were charged to its cgroup: memory.current rose $(val charged), and fell $(val released) when it unbound"
	rmdir $cg 2>/dev/null
}
unpriv_test
echo 10000 >$params/peer_timeout_ms

# 5. Nothing left behind.
kill "$getsrc_pid" 2>/dev/null
wait "$getsrc_pid" 2>/dev/null
sleep 1
counters_back
report $? "module counters are back where they were"
splats=$(dmesg | tail -n +$((dmesg_lines + 1)) |
	grep -E 'WARNING|BUG|Oops|refcount_t|general protection')
[ -z "$splats" ]
report $? "no WARN, BUG or oops in dmesg"
[ -n "$splats" ] && diag "dmesg since the start:" && printf '%s\n' "$splats" | sed 's/^/#   /'
netns_teardown
unload_check=$(lsmod | grep -c '^ptl')
[ "$unload_check" = 0 ]
report $? "no ptl module left loaded"
diag "runtime $((SECONDS - t_start)) s"
rm -rf "$dir"
exit $((failures > 0))
