#!/bin/bash
# Runs inside a test guest (tools/testing/vm/run): an unprivileged user cannot make
# ptl_rtscts.ko build a frame its link cannot carry, nor overflow an skb
# (issue 20, R5). Any user owns a network namespace inside `unshare -Urn`,
# and may create a veth there and bind a Portals interface to it (the
# netlink commands need CAP_NET_ADMIN over the namespace only):
#
#     user namespace of uid 1000, network namespace of its own
#   +-----------------------------------------------------------+
#   |  iface 0: va, nid 1  ------- veth -------  iface 1: vb, nid 2 |
#   +-----------------------------------------------------------+
#
# The module parameter eager_max refuses more than its bound (1 MiB) too.
# As uid 1000 mapped to root there, the user
#   1. asks for eager 4294967295 (refused: eager_max has a bound);
#   2. lowers the bound veth's MTU to 200 (taken, and the interface shows
#      it), then to 68, below the 160 bytes of a MSG frame's headers
#      (refused while bound: both stay at 200);
#   3. puts 2^32 - 1 bytes from iface 0 to a pid nobody holds on iface 1
#      (ptl_huge_put_test: 1,024 iovec segments over one 4 MiB buffer);
#      the put must end with SEND_END;
#   4. binds interface 2 to a team device and gives it a tun as its first
#      port, which would change its type to one without Ethernet addresses
#      (refused while bound: pt0 stays Ethernet, interface 2 stays bound).
# Before the fix 1 and 2 were accepted, rtscts_frame_room() computed
# 68 - 160 in a u32, and the put's MSG skb of hdr_len + len bytes wrapped
# to 68 while ptl_msg_copy() wrote 4 GiB into it: an Oops (in the harness,
# a failed run). Step 3 needs more than 4 GiB of RAM (the MD's pages count
# against it) and skips otherwise: run-net-tests.sh's guest has it.
# Environment: MTU_TEST_UID (1000).
# Prints TAP lines; the harness fails the run on any kernel splat.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$top/selftests/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=userns_lib.sh
. "$top/selftests/userns_lib.sh"
user=${MTU_TEST_UID:-1000}

mac_of() {
	$ip -o link show "$1" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'
}

mtu_shown() {
	"$ptlctl" iface show "$1" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'
}

# A team device takes the type of its first port: a tun port (no link
# layer) would turn the bound pt0 into a device without Ethernet addresses.
# The change is refused while pt0 is bound, and the binding stays.
type_change() {
	local rc

	if [ ! -d /sys/module/team ] || [ ! -d /sys/module/tun ]; then
		skip "a bound team device's type change" "no team or tun module in this kernel"
		return
	fi
	$ip link add pt0 type team && $ip link set pt0 up &&
		"$ptlctl" iface bind 2 dev pt0 nid 3 && $ip tuntap add pt1 mode tun
	rc=$?
	report $rc "the user binds interface 2 to a team device pt0 and makes a tun device pt1"
	[ $rc = 0 ] || return
	! $ip link set pt1 master pt0 2>/dev/null
	report $? "tun pt1 as pt0's first port (pt0 would become a tun) is refused"
	$ip -o link show pt0 | grep -q 'link/ether' &&
		"$ptlctl" iface show 2 | grep -q ' dev pt0 '
	report $? "pt0 is still Ethernet and interface 2 still bound to it"
	# The control: unbound, the same port is taken and pt0 changes type.
	"$ptlctl" iface unbind 2 && $ip link set pt1 master pt0 &&
		$ip -o link show pt0 | grep -q 'link/none'
	report $? "unbound, pt0 takes pt1 as its port and becomes a tun (link/none)"
	$ip link del pt0 && $ip link del pt1
	report $? "pt0 and pt1 go"
}

# The user's part: root of its own user namespace, nobody outside it.
inner() {
	local mtu

	[ "$(tr -s ' ' </proc/self/uid_map)" = " 0 $user 1" ]
	report $? "uid $user is root of a user namespace of its own only: $(tr -s ' ' </proc/self/uid_map)"
	$ip link add va type veth peer name vb &&
		$ip link set va up && $ip link set vb up &&
		"$ptlctl" iface bind 0 dev va nid 1 &&
		"$ptlctl" iface bind 1 dev vb nid 2 &&
		"$ptlctl" peer add 2 lladdr "$(mac_of vb)" iface 0 &&
		"$ptlctl" peer add 1 lladdr "$(mac_of va)" iface 1
	report $? "the user makes a veth pair and binds interfaces 0 and 1 to its ends"

	! "$ptlctl" iface set 0 eager 4294967295 2>/dev/null
	report $? "eager 4294967295 is refused"
	"$ptlctl" iface set 0 eager 4294967295 2>&1 | sed 's/^/#   /'

	$ip link set va mtu 200 && [ "$(mtu_shown 0)" = 200 ]
	report $? "MTU 200 on the bound va is taken and shown"
	! $ip link set va mtu 68 2>/dev/null
	report $? "MTU 68 on the bound va is refused (a MSG frame's headers are 168 bytes)"
	$ip link set va mtu 68 2>&1 | sed 's/^/#   /'
	mtu=$(mtu_shown 0)
	[ "${mtu:-0}" = 200 ] && [ "$($ip -o link show va | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')" = 200 ]
	report $? "va and interface 0 keep MTU 200 ($mtu)"

	echo "# running ptl_huge_put_test: 4294967295 bytes from nid 1 to nid 2"
	PTL_HUGE_PUT_NID=2 "$build/selftests/ptl_huge_put_test"
	report $? "a put of 4294967295 bytes ends (ptl_huge_put_test)"
	"$ptlctl" -s iface show 0 | sed 's/^/#   /'

	type_change
}

if [ "${1:-}" = --inner ]; then
	inner
	exit $((failures > 0))
fi

modprobe -a team tun 2>/dev/null	# for type_change, which skips without them
# Any user may open /dev/net/tun on Debian (udev makes it 0666); the
# harness's guest has no udev.
[ -c /dev/net/tun ] && chmod 0666 /dev/net/tun
modprobe veth &&
	insmod "$moddir/ptl.ko" nid=7 &&
	insmod "$moddir/ptl_rtscts.ko" peer_timeout_ms=2000
report $? "ptl.ko and ptl_rtscts.ko loaded"
param=/sys/module/ptl_rtscts/parameters/eager_max
! echo 4294967295 2>/dev/null >$param && [ "$(cat $param)" = 16384 ]
report $? "module parameter eager_max refuses 4294967295 ($(cat $param))"
echo 1048576 >$param && [ "$(cat $param)" = 1048576 ] && echo 16384 >$param
report $? "module parameter eager_max takes 1048576, its bound"
echo "# uid $user, unshare -Urn:"
userns_run "$user" "$top/selftests/rtscts_mtu_test.sh" --inner
rc=$?
[ $rc = 0 ] || failures=$((failures + 1))
# Its namespace is gone, and with it the veth: nothing stays bound once
# the kernel's cleanup of the namespace (a workqueue, after grace
# periods: seconds on a starved debug guest) has run.
modules_unload_wait 20
report $? "ptl_rtscts and ptl unload after the user's namespace is gone"
exit $((failures > 0))
