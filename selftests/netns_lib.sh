# shellcheck shell=bash disable=SC2034
# Two Portals nodes in one guest for the rtscts suites (run-net-tests.sh,
# rtscts_burst_loss_test.sh), or more on a bridge (mpi_test.sh); sourced,
# not run, after top= is set:
#
#     default namespace (node a)              namespace b (node b)
#   va 10.0.0.1, nid 167772161   ---veth---   vb 10.0.0.2, nid 167772162
#
#   netns_setup RTSCTS_PARAMS...   loads ptl.ko and ptl_rtscts.ko (with
#                                  those module parameters), makes the pair
#                                  and binds interface 0 on both ends
#   netns_setup_bridge N RTSCTS_PARAMS...
#                                  the same with N nodes (2 .. 64) on one
#                                  Linux bridge, for suites that need more
#                                  than two (mpi_test.sh with MPI_NODES,
#                                  run-scalebench): node k has letter L
#                                  (a .. p, then n17 .. n64), device
#                                  vL at 10.0.0.k, nid 10.0.0.k, in
#                                  namespace L (node 1: the default one);
#                                  vL's other end, pL, is a port of bridge
#                                  ptlbr in the default namespace
#   netns_exec K CMD...            CMD in node K's namespace
#   netns_teardown                 undoes either, reporting the unbind and
#                                  the unload, which waits up to 30 s for
#                                  the deleted namespaces' cleanup (TAP:
#                                  report, from tap.sh)
#   counters_save                  notes ptl.ko's object counters
#   counters_back                  prints those that moved since and did
#                                  not come back within 10 s (a response
#                                  keeps its NI until the transport has it
#                                  acknowledged, a resend away); false if any
#   jnum KEY                       the first integer value of "KEY" in JSON
#                                  on stdin (ptlctl -j)
#   a_iface KEY, b_iface KEY       a number (counters included) of interface
#                                  0 of node a (default namespace) or b
#   wait_for SECONDS COMMAND...    until COMMAND succeeds, polling every
#                                  0.2 s; false if it did not in time
#   modules_unload_wait SECONDS    unloads ptl_rtscts once nothing holds it
#                                  (a namespace's bindings go with its
#                                  cleanup, a workqueue after grace
#                                  periods), waiting at most SECONDS, then ptl
#   peer_events_record             records from now on, and peer_events_show
#                                  prints, the rtscts peers' state changes,
#                                  failures and retransmission timeouts of
#                                  every node (tracefs): what a failed
#                                  traffic test shows of who gave up on whom
#   peers_show                     each node's interface and peer counters
# Also sets build, moddir, ip, tc, ptlctl, stress, nid_a and nid_b, for
# the scripts that source it (hence SC2034 off), and netns_nodes: the
# nodes' namespace names after setup ("default" for node 1).

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

# counters_moved: prints ptl.ko's counters that differ from counters_save's.
counters_moved() {
	local c now

	for c in $counters; do
		now=$(cat "/sys/class/misc/portals/$c")
		[ "$now" = "${counters_before[$c]}" ] ||
			echo "# $c: ${counters_before[$c]} before, $now after"
	done
}

counters_back() {
	local i moved

	for ((i = 0; i < 50; i++)); do
		moved=$(counters_moved)
		[ -z "$moved" ] && return 0
		sleep 0.2
	done
	echo "$moved"
	return 1
}

jnum() { grep -oE "\"$1\": *[0-9]+" | head -n 1 | grep -oE '[0-9]+$'; }
a_iface() { "$ptlctl" -j -s iface show 0 2>/dev/null | jnum "$1"; }
b_iface() { $ip netns exec b "$ptlctl" -j -s iface show 0 2>/dev/null | jnum "$1"; }

wait_for() {
	local end=$((SECONDS + $1))

	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

rtscts_unload() { rmmod ptl_rtscts 2>/dev/null; }
modules_unload_wait() { wait_for "$1" rtscts_unload && rmmod ptl; }

tracefs=/sys/kernel/tracing
peer_events="rtscts_peer_state rtscts_peer_fail rtscts_retransmit"

peer_events_record() {
	local e

	[ -e $tracefs/trace ] || mount -t tracefs nodev $tracefs 2>/dev/null
	echo 4096 >$tracefs/buffer_size_kb && echo >$tracefs/trace || return 1
	for e in $peer_events; do
		echo 1 >"$tracefs/events/rtscts/$e/enable" || return 1
	done
}

# The last 200 events (the earliest are timeouts that led to a failure).
peer_events_show() {
	local e

	for e in $peer_events; do
		echo 0 >"$tracefs/events/rtscts/$e/enable"
	done
	echo "# rtscts events (state 0 resolving, 1 up, 2 unreachable; peer_fail event 1 unreachable, 2 restarted):"
	grep -v '^#' $tracefs/trace | tail -n 200 | sed 's/^/#   /'
}

peers_show() {
	local k

	for ((k = 1; k <= ${#netns_nodes[@]}; k++)); do
		echo "# node $(netns_letter "$k"):"
		netns_exec "$k" "$ptlctl" -s iface show 0 | sed 's/^/#   /'
		netns_exec "$k" "$ptlctl" -s peer show | sed 's/^/#   /'
	done
}

netns_nodes=()
netns_bridge=0

# netns_load RTSCTS_PARAMS...: the modules both setups need.
netns_load() {
	modprobe -a veth sch_netem sch_ingress cls_u32 act_gact || return 1
	# What modprobe's soft dependency loads on a real node: the CPU's
	# CRC32C (the guest cannot load it on demand: without it ptl_rtscts
	# falls back to the table-driven CRC, and the MPI bench paid for that).
	modprobe crc32c 2>/dev/null || true
	insmod "$moddir/ptl.ko" nid=7 || return 1
	insmod "$moddir/ptl_rtscts.ko" "$@"
}

netns_setup() {
	netns_load "$@" || return 1
	netns_nodes=(default b)
	$ip netns add b &&
		$ip link add va type veth peer name vb &&
		$ip link set vb netns b &&
		$ip addr add 10.0.0.1/24 dev va && $ip link set va up &&
		$ip -n b addr add 10.0.0.2/24 dev vb &&
		$ip -n b link set vb up && $ip -n b link set lo up || return 1
	"$ptlctl" iface bind 0 dev va &&
		$ip netns exec b "$ptlctl" iface bind 0 dev vb
}

netns_setup_bridge() {
	local n=$1 k l
	shift
	[ "$n" -ge 2 ] && [ "$n" -le 64 ] || return 1
	netns_load "$@" && modprobe bridge || return 1
	# No STP and no forwarding delay: a port forwards as soon as it is up,
	# as a cluster's switch port does (a learning bridge would drop the
	# first frames, which would look like loss).
	netns_bridge=1
	# The bridge is a device of node 1's namespace too: without
	# arp_ignore it answers ARP for node 1's address with its own MAC
	# (the kernel answers for any local address on any interface), and
	# frames sent there never reach node 1's interface (ARP flux: the
	# other nodes then find node 1 or not, as the replies race).
	$ip link add ptlbr type bridge stp_state 0 forward_delay 0 &&
		echo 1 >/proc/sys/net/ipv4/conf/ptlbr/arp_ignore &&
		$ip link set ptlbr up || return 1
	netns_nodes=(default)
	for ((k = 1; k <= n; k++)); do
		l=$(netns_letter "$k")
		# "name" and "dev" spelt out: ip takes vf (node 6) for a keyword.
		$ip link add name "v$l" type veth peer name "p$l" &&
			$ip link set dev "p$l" master ptlbr && $ip link set dev "p$l" up || return 1
		if [ "$k" -gt 1 ]; then
			netns_nodes+=("$l")
			$ip netns add "$l" && $ip link set dev "v$l" netns "$l" &&
				$ip -n "$l" link set dev lo up || return 1
		fi
		netns_exec "$k" "$ip" addr add "10.0.0.$k/24" dev "v$l" &&
			netns_exec "$k" "$ip" link set dev "v$l" up &&
			netns_exec "$k" "$ptlctl" iface bind 0 dev "v$l" || return 1
	done
}

# netns_letter K: node K's letter (a, b, ... p, then n17 ...): its
# namespace's name (but node 1's, a, is the default namespace) and its
# devices' suffix.
netns_letter() {
	local letters=abcdefghijklmnop

	if [ "$1" -le 16 ]; then
		echo "${letters:$1-1:1}"
	else
		echo "n$1"
	fi
}

# netns_exec K CMD...: CMD in node K's namespace.
netns_exec() {
	local ns=${netns_nodes[$1 - 1]:-}
	shift
	if [ -z "$ns" ]; then
		return 1
	elif [ "$ns" = default ]; then
		"$@"
	else
		$ip netns exec "$ns" "$@"
	fi
}

netns_teardown() {
	local k n=${#netns_nodes[@]} rc=0

	if [ "$netns_bridge" = 0 ]; then
		"$ptlctl" iface unbind 0 && $ip netns exec b "$ptlctl" iface unbind 0
		report $? "both interfaces unbind"
		$ip netns del b
	else
		for ((k = 1; k <= n; k++)); do
			netns_exec "$k" "$ptlctl" iface unbind 0 || rc=1
		done
		report $rc "all $n interfaces unbind"
		for ((k = 2; k <= n; k++)); do
			$ip netns del "${netns_nodes[k - 1]}"
		done
		$ip link del dev va
		$ip link del dev ptlbr
	fi
	modules_unload_wait 30
	report $? "ptl_rtscts and ptl unload"
}
