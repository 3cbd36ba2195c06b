#!/bin/bash
# ptlctl against the real ptl.ko, inside a test guest (tools/testing/vm/run), as
# root: every subcommand, its text and JSON output, its errors, and the
# refusals without CAP_NET_ADMIN. Prints TAP lines ("ok - ...", "not ok -
# ...") like selftests/run-in-guest.sh, which may call it; exits non-zero
# if any check failed.
#
#   ns ptlA                                  ns ptlB
#   +-------------------------+              +-------------------------+
#   | Portals iface 0         |              | Portals iface 0         |
#   |   bound to veth0        |              |   bound to veth0        |
#   |   nid 10.99.1.1         |              |   nid 10.99.1.2         |
#   | veth0 10.99.1.1/24      +--------------+ veth0 10.99.1.2/24      |
#   +-------------------------+   veth pair  +-------------------------+
#
# ptl.ko (and ptl_rtscts.ko, if built) are loaded unless already loaded,
# and unloaded again at the end if this script loaded them.
#
#   tools/testing/vm/run --timeout 600 --name ptlctl --workdir "$PWD" -- selftests/ptlctl_test.sh
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ptlctl=$build/tools/ptlctl/ptlctl
prog=$build/tools/ptlctl/tests/ptlctl_testprog
# iproute2's ip by path: a bare "ip" may be busybox's (no netns, no veth).
IP=/usr/sbin/ip
[ -x "$IP" ] || IP=/sbin/ip
tmp=$(mktemp -d /tmp/ptlctl_test.XXXXXX)
loaded=()
pids=()

A_IP=10.99.1.1
B_IP=10.99.1.2
A_NID=$(((10 << 24) | (99 << 16) | (1 << 8) | 1))
B_NID=$((A_NID + 1))

# (ip netns exec execs the command: started with & by path, not through
# these functions, $! is the command's own pid.)
inA() { "$IP" netns exec ptlA "$@"; }
inB() { "$IP" netns exec ptlB "$@"; }

# In namespace A as uid 65534 with no capabilities at all.
# shellcheck disable=SC2317 # called through run
unprivA() {
	inA setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$@"
}

# run NAME CMD...: runs CMD with stdout in $tmp/NAME.out and stderr in
# $tmp/NAME.err; returns its status. The files show in the log on failure.
run() {
	local name=$1
	shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local status=$?
	if [ -s "$tmp/$name.err" ]; then sed "s/^/# $name: /" "$tmp/$name.err"; fi
	return $status
}

# expect STATUS NAME DESCRIPTION CMD...: the command exits with STATUS.
expect() {
	local want=$1 name=$2 what=$3 status
	shift 3
	run "$name" "$@"
	status=$?
	[ "$status" -eq "$want" ] || echo "# $name: exit $status, wanted $want"
	# A refusal must come from the kernel, not from a missing module.
	if [ "$status" -ne 0 ] && has_err "$name" 'netlink family is missing'; then
		status=-1
	fi
	report $((status != want)) "$what"
}

# has NAME PATTERN: the output of run NAME matches the extended regex.
has() { grep -qE -- "$2" "$tmp/$1.out"; }
has_err() { grep -qE -- "$2" "$tmp/$1.err"; }

# json NAME PYTHON-EXPR: the output of run NAME parses as one JSON
# document d for which the expression is true.
json() {
	python3 -c "
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit('not one JSON document: %s' % e)
try:
    ok = ($2)
except (KeyError, IndexError, TypeError) as e:
    sys.exit('unexpected shape: %r' % e)
sys.exit(0 if ok else 'false: %s' % json.dumps(d)[:400])" "$tmp/$1.out" 2>&1 |
		sed "s/^/# json $1: /"
	return "${PIPESTATUS[0]}"
}

# wait_for FILE REGEX [TENTHS]: until FILE has a matching line (default 10 s).
wait_for() {
	local i
	for ((i = 0; i < ${3:-100}; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_gone PID [TENTHS]: until the process has exited.
wait_gone() {
	local i
	for ((i = 0; i < ${2:-100}; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	"$IP" netns del ptlA 2>/dev/null
	"$IP" netns del ptlB 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- modules and topology ---------------------------------------------------

if [ ! -d /sys/module/ptl ]; then
	insmod "$moddir/ptl.ko" nid="${PTL_TEST_NID:-7}" && loaded=(ptl "${loaded[@]}")
fi
test -d /sys/module/ptl
report $? "ptl.ko is loaded"
if [ ! -d /sys/module/ptl_rtscts ]; then
	for ko in "$moddir/ptl_rtscts.ko" "$moddir/rtscts/ptl_rtscts.ko"; do
		if [ -f "$ko" ]; then
			insmod "$ko" && loaded=(ptl_rtscts "${loaded[@]}")
			break
		fi
	done
fi
test -d /sys/module/ptl_rtscts || echo "# ptl_rtscts.ko is not loaded: binding will fail"
for t in "$ptlctl" "$prog"; do
	[ -x "$t" ] || { echo "not ok - $t is built" && exit 1; }
done

modprobe veth 2>/dev/null	# a module in Debian's kernel
"$IP" netns add ptlA && "$IP" netns add ptlB &&
	"$IP" link add name veth0 netns ptlA type veth peer name veth0 netns ptlB &&
	inA "$IP" addr add "$A_IP/24" dev veth0 && inB "$IP" addr add "$B_IP/24" dev veth0 &&
	inA "$IP" link set lo up && inB "$IP" link set lo up &&
	inA "$IP" link set veth0 up && inB "$IP" link set veth0 up
report $? "two namespaces joined by a veth pair"
for ns in ptlA ptlB; do
	for ((i = 0; i < 50; i++)); do
		[ "$("$IP" netns exec $ns cat /sys/class/net/veth0/operstate 2>/dev/null)" = up ] &&
			break
		sleep 0.1
	done
done
B_MAC=$(inB cat /sys/class/net/veth0/address 2>/dev/null)

# --- iface -------------------------------------------------------------------

expect 0 show0 "iface show: interface 0 exists before any bind" inA "$ptlctl" iface show
has show0 '^iface 0: state local'
report $? "iface show: an unbound interface is local"

expect 0 bindA "iface bind 0 dev veth0 (namespace A)" inA "$ptlctl" iface bind 0 dev veth0
expect 0 bindB "iface bind 0 dev veth0 (namespace B)" inB "$ptlctl" iface bind 0 dev veth0
expect 0 showA "iface show 0 (abbreviated: i sh 0)" inA "$ptlctl" i sh 0
has showA '^iface 0: state (up|down) dev veth0 ifindex [0-9]+ transport rtscts'
report $? "iface show: bound to veth0 through rtscts"
has showA "nid $A_IP \\($A_NID\\)"
report $? "iface show: the default nid is the device's IPv4 address"

expect 0 showAj "iface show -j -p parses" inA "$ptlctl" -j -p iface show
json showAj "any(i['iface'] == 0 and i['ifname'] == 'veth0' and i['nid'] == $A_NID
	and i['state'] in ('up', 'down') and i['transport'] == 'rtscts'
	and 'stats' not in i for i in d)"
report $? "iface show -j: the bound interface with snake_case keys, no stats"
expect 0 showAjs "iface show -j -s parses" inA "$ptlctl" -j -s iface show 0
json showAjs "len(d) == 1 and isinstance(d[0]['stats'], dict)
	and all(isinstance(v, int) for v in d[0]['stats'].values())"
report $? "iface show -j -s: counters under \"stats\""
expect 0 showAs "iface show -s" inA "$ptlctl" -s iface show 0
has showAs '^    (TX|RX|errors|objects|other): '
report $? "iface show -s: counter tables"

expect 0 eager "iface set 0 eager 2048" inA "$ptlctl" iface set 0 eager 2048
run eager2 inA "$ptlctl" -j iface show 0
json eager2 "d[0].get('eager_max') == 2048"
report $? "iface set: the new eager size shows"

expect 1 badiface "iface show 9 is refused" inA "$ptlctl" iface show 9
has_err badiface '^ptlctl: iface show 9: '
report $? "iface show 9: the error names the command"
expect 1 nodev "iface bind to a missing device is refused" \
	inA "$ptlctl" iface bind 1 dev nosuchdev0
has_err nodev 'no network device "nosuchdev0"'
report $? "iface bind: a missing device is named"

# --- peers -------------------------------------------------------------------

expect 0 peeradd "peer add $B_IP lladdr $B_MAC" inA "$ptlctl" peer add "$B_IP" lladdr "$B_MAC"
expect 0 peers "peer show" inA "$ptlctl" peer show
has peers "^peer $B_IP \\($B_NID\\) iface 0 lladdr $B_MAC .*static"
report $? "peer show: the static peer with its lladdr"
expect 0 peersj "peer show -j" inA "$ptlctl" -j peer show iface 0
json peersj "any(p['nid'] == $B_NID and p['lladdr'] == '$B_MAC' and 'static' in p['flags']
	for p in d)"
report $? "peer show -j: nid, lladdr and the static flag"
expect 0 peerdel "peer del $B_IP" inA "$ptlctl" peer del "$B_IP"
run peers2 inA "$ptlctl" peer show && ! has peers2 "^peer $B_IP "
report $? "peer show: the deleted peer is gone"
expect 1 peerdel2 "peer del of an unknown peer fails" inA "$ptlctl" peer del "$B_IP"
expect 1 peers1 "peer show on an unbound interface fails" inA "$ptlctl" peer show iface 1
has_err peers1 '^ptlctl: peer show iface 1: '
report $? "peer show iface 1: the error names the command"
expect 2 peerbad "peer add with a bad lladdr is a usage error" \
	inA "$ptlctl" peer add "$B_IP" lladdr 02:zz
has_err peerbad "bad lladdr '02:zz'"
report $? "peer add: the usage error says what is wrong"

# --- ni ----------------------------------------------------------------------

"$IP" netns exec ptlA "$prog" hold --pid 77 >"$tmp/holdA.out" 2>&1 &
holdA=$!
pids+=("$holdA")
wait_for "$tmp/holdA.out" '^ready'
report $? "a Portals program holds pid 77 in namespace A"
expect 0 ni "ni show" inA "$ptlctl" ni show
has ni "^ni iface 0 nid $A_IP \\($A_NID\\) pid 77 uid 0 \\(root\\) jid [a-z0-9]+ owner $holdA \\(ptlctl_testprog\\)"
report $? "ni show: interface, nid, pid, uid, jid and owner of the NI"
expect 0 nij "ni show -j -s" inA "$ptlctl" -j -s ni show
json nij "any(n['pid'] == 77 and n['owner_pid'] == $holdA and n['comm'] == 'ptlctl_testprog'
	and n['uid'] == 0 and n['nid'] == $A_NID and 'ni_mes' in n['stats'] for n in d)"
report $? "ni show -j -s: the NI with its counters"
run niB inB "$ptlctl" -j ni show
json niB "not any(n['pid'] == 77 for n in d)"
report $? "ni show: another namespace's NIs are not listed"
# An NI holds its pid before its core exists: a dump that meets one being
# made must skip it (it dereferenced the missing core once, in CI).
(for _ in $(seq 300); do inA "$prog" hold --exit >/dev/null 2>&1; done) &
churn=$!
dumps=0 dump_failed=0
while kill -0 "$churn" 2>/dev/null; do
	inA "$ptlctl" ni show >/dev/null || dump_failed=1
	dumps=$((dumps + 1))
done
wait "$churn"
[ "$dump_failed" -eq 0 ] && [ "$dumps" -gt 0 ]
report $? "ni show while NIs come and go: $dumps dumps beside 300 NIs made and closed"
expect 1 nidchange "iface set nid is refused while an NI is open" \
	inA "$ptlctl" iface set 0 nid 10.99.1.77
kill "$holdA" 2>/dev/null
wait_gone "$holdA"
sleep 0.2
run ni2 inA "$ptlctl" -j ni show
json ni2 "not any(n['pid'] == 77 for n in d)"
report $? "ni show: the NI is gone when its process exits"

# --- stats -------------------------------------------------------------------

expect 0 stats "stats" inA "$ptlctl" stats
has stats '^    objects: '
report $? "stats: the object counters"
expect 0 statsj "stats -j" inA "$ptlctl" -j stats
json statsj "isinstance(d, dict) and all(isinstance(d[k], int) for k in ('open_files', 'nis', 'mds', 'eqs'))"
report $? "stats -j: counters by name"

# --- traffic and monitor -------------------------------------------------------

"$IP" netns exec ptlB "$prog" hold --pid 78 >"$tmp/holdB.out" 2>&1 &
holdB=$!
pids+=("$holdB")
wait_for "$tmp/holdB.out" '^ready'
report $? "a Portals program holds pid 78 in namespace B"

# monitor_once NAME ARGS...: starts "ptlctl ARGS monitor count 1" in A, makes
# B a new peer of A (forget it, put to it) until the monitor saw an event.
monitor_once() {
	local name=$1 mon try
	shift
	"$IP" netns exec ptlA "$ptlctl" "$@" monitor count 1 >"$tmp/$name.out" 2>"$tmp/$name.err" &
	mon=$!
	pids+=("$mon")
	sleep 1	# let it join the group
	for try in 1 2 3; do
		inA "$ptlctl" peer del "$B_IP" 2>/dev/null
		run "put$name$try" inA "$prog" put "$B_IP" 78
		wait_gone "$mon" 50 && break
	done
	kill "$mon" 2>/dev/null
	wait "$mon" 2>/dev/null
}

monitor_once monj -j
grep -q '^event PTL_EVENT_ACK' "$tmp/putmonj1.out"
report $? "a put from A to B is acknowledged across the veth pair"
python3 -c "
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
if len(lines) != 1:
    sys.exit('%d lines, wanted one event' % len(lines))
e = json.loads(lines[0])
sys.exit(0 if e['nid'] == $B_NID and e['iface'] == 0 and e['event'] == 'up' else lines[0])" \
	"$tmp/monj.out" 2>&1 | sed 's/^/# monj: /'
report "${PIPESTATUS[0]}" "monitor -j: one JSON object per line, the peer came up"

monitor_once mon
# (B's side of the forgotten stream may be reported before it is up again)
has mon "^iface 0 peer $B_IP \\($B_NID\\) (up|reset|restarted) incarnation 0x[0-9a-f]{8} failed [0-9]+$"
report $? "monitor: a peer event as a text line"

expect 0 peersdyn "peer show -s after traffic" inA "$ptlctl" -s peer show
has peersdyn "^peer $B_IP \\($B_NID\\) iface 0 lladdr $B_MAC state up"
report $? "peer show: the resolved peer is up"
! has peersdyn "^peer $B_IP .*static"
report $? "peer show: a resolved peer is not static"
has peersdyn '^    rtt [0-9]+us'
report $? "peer show: round-trip estimates"
expect 0 peersdynj "peer show -j -s after traffic" inA "$ptlctl" -j -s peer show
json peersdynj "any(p['nid'] == $B_NID and p['state'] == 'up' and 'rtt_us' in p
	and 'incarnation' in p and isinstance(p.get('stats', {}), dict) for p in d)"
report $? "peer show -j -s: state, rtt_us, incarnation, counters"
kill "$holdB" 2>/dev/null
wait_gone "$holdB"

# --- pid reservations ----------------------------------------------------------

expect 0 res "pid reserve 100-109 uid 65534" inA "$ptlctl" pid reserve 100-109 uid 65534
expect 0 resname "pid reserve 120 uid nobody (a user name)" inA "$ptlctl" pid reserve 120 uid nobody
expect 1 overlap "pid reserve of an overlapping range fails" inA "$ptlctl" pid reserve 105 uid 0
has_err overlap '^ptlctl: pid reserve 105 iface 0: '
report $? "pid reserve: the overlap error names the command"
expect 0 pidshow "pid show" inA "$ptlctl" pid show
has pidshow '^pid 100-109 iface 0 uid 65534' && has pidshow '^pid 120 iface 0 uid 65534'
report $? "pid show: both reservations"
expect 0 pidshowj "pid show -j" inA "$ptlctl" -j pid show iface 0
json pidshowj "{(r['pid'], r['pid_last'], r['uid']) for r in d} >= {(100, 109, 65534), (120, 120, 65534)}"
report $? "pid show -j: first and last pid and uid"

claim() {	# claim UID PID: can that uid's process PtlNIInit that pid in A?
	inA setpriv --reuid="$1" --regid="$1" --clear-groups "$prog" hold --pid "$2" --exit \
		>/dev/null 2>"$tmp/claim.err"
}
claim 65533 100
# ptlctl_testprog exits 3 when PtlNIInit (not PtlInit) fails.
[ $? -eq 3 ]
report $? "a reserved pid is refused to another uid"
claim 65534 100
report $? "a reserved pid is granted to its uid"
claim 65533 110
report $? "a pid outside the reservation is granted to another uid"

expect 0 unres "pid unreserve 100" inA "$ptlctl" pid unreserve 100
claim 65533 100
report $? "an unreserved pid is granted to another uid"
expect 1 unres2 "pid unreserve of no reservation fails" inA "$ptlctl" pid unreserve 100
expect 0 unres3 "pid unreserve 120" inA "$ptlctl" pid unreserve 120
expect 0 res1 "pid reserve on interface 1" inA "$ptlctl" pid reserve 300 uid 0 iface 1
run pid1 inA "$ptlctl" -j pid show iface 1
run pid0 inA "$ptlctl" -j pid show iface 0
json pid1 "[(r['iface'], r['pid']) for r in d] == [(1, 300)]" && json pid0 "all(r['pid'] != 300 for r in d)"
report $? "pid show iface N: only that interface's ranges"
expect 0 unres1 "pid unreserve on interface 1" inA "$ptlctl" pid unreserve 300 iface 1

# --- without CAP_NET_ADMIN -----------------------------------------------------

expect 0 unpriv_show "reading needs no privilege" unprivA "$ptlctl" iface show
for cmd in "iface unbind 0" "iface set 0 eager 1024" "peer add $B_IP lladdr $B_MAC" \
	"peer del $B_IP" "pid reserve 400 uid 0" "pid unreserve 100"; do
	# shellcheck disable=SC2086 # the words of the command
	run unpriv unprivA "$ptlctl" $cmd
	status=$?
	[ $status -ne 0 ] && has_err unpriv "^ptlctl: .* needs CAP_NET_ADMIN"
	report $? "$cmd without CAP_NET_ADMIN: refused, and the message says why"
done

# --- unbind ----------------------------------------------------------------------

expect 0 unbind "iface unbind 0" inA "$ptlctl" iface unbind 0
run show1 inA "$ptlctl" iface show 0
has show1 '^iface 0: state local'
report $? "iface show: an unbound interface is local again"
expect 1 unbind2 "iface unbind of an unbound interface fails" inA "$ptlctl" iface unbind 0
expect 0 unbindB "iface unbind 0 (namespace B)" inB "$ptlctl" iface unbind 0

# --- the module gone -------------------------------------------------------------

if [ ${#loaded[@]} -gt 0 ]; then
	cleanup
	trap - EXIT
	tmp=$(mktemp -d /tmp/ptlctl_test.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	for m in "${loaded[@]}"; do rmmod "$m" || echo "# rmmod $m failed"; done
	run gone "$ptlctl" stats
	[ $? -eq 1 ] &&
		[ "$(cat "$tmp/gone.err")" = "ptlctl: the portals generic netlink family is missing: is ptl.ko loaded?" ]
	report $? "without ptl.ko: the family is missing, exit 1"
else
	skip "without ptl.ko: the family is missing, exit 1" "ptl.ko was loaded by the caller"
fi

exit $((failures > 0))
