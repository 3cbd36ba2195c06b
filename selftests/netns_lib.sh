# shellcheck shell=bash disable=SC2034
# Two Portals nodes in one guest for the rtscts suites (run-net-tests.sh,
# rtscts_burst_loss_test.sh); sourced, not run, after top= is set:
#
#     default namespace (node a)              namespace b (node b)
#   va 10.0.0.1, nid 167772161   ---veth---   vb 10.0.0.2, nid 167772162
#
#   netns_setup RTSCTS_PARAMS...   loads ptl.ko and ptl_rtscts.ko (with
#                                  those module parameters), makes the pair
#                                  and binds interface 0 on both ends
#   netns_teardown                 undoes it, reporting the unbind and the
#                                  unload (TAP: report, from tap.sh)
#   counters_save                  notes ptl.ko's object counters
#   counters_back                  prints those that moved since; false if any
# Also sets build, moddir, ip, tc, ptlctl, stress, nid_a and nid_b, for
# the scripts that source it (hence SC2034 off).

build=${BUILD:-$top/build}
moddir=${PTL_MODULE_DIR:-$top}
ip=/sbin/ip
tc=/sbin/tc
ptlctl=$build/tools/ptlctl/ptlctl
stress=$build/tools/ptl_stress/ptl_stress
nid_a=$(((10 << 24) | 1))
nid_b=$(((10 << 24) | 2))

counters="pinned_pages mds nis eqs core_objects open_files"
declare -A counters_before

counters_save() {
	local c

	for c in $counters; do
		counters_before[$c]=$(cat "/sys/class/misc/portals/$c")
	done
}

counters_back() {
	local c now rc=0

	for c in $counters; do
		now=$(cat "/sys/class/misc/portals/$c")
		if [ "$now" != "${counters_before[$c]}" ]; then
			echo "# $c: ${counters_before[$c]} before, $now after"
			rc=1
		fi
	done
	return $rc
}

netns_setup() {
	modprobe -a veth sch_netem sch_ingress cls_u32 act_gact || return 1
	insmod "$moddir/ptl.ko" nid=7 || return 1
	insmod "$moddir/ptl_rtscts.ko" "$@" || return 1
	$ip netns add b &&
		$ip link add va type veth peer name vb &&
		$ip link set vb netns b &&
		$ip addr add 10.0.0.1/24 dev va && $ip link set va up &&
		$ip -n b addr add 10.0.0.2/24 dev vb &&
		$ip -n b link set vb up && $ip -n b link set lo up || return 1
	"$ptlctl" iface bind 0 dev va &&
		$ip netns exec b "$ptlctl" iface bind 0 dev vb
}

netns_teardown() {
	"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0
	report $? "both interfaces unbind"
	$ip netns del b
	rmmod ptl_rtscts && rmmod ptl
	report $? "ptl_rtscts and ptl unload"
}
