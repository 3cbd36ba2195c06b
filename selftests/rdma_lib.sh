# shellcheck shell=bash
# Soft-RoCE for the guests' RDMA tests and benchmarks, and the helpers of
# the RDMA tests (barrier, nid_of, rdma_res, iface_stat, iface_peers,
# wait_peers, wait_stat, portals_clean); sourced, not run.
#
# rdma_rxe_up NETDEV [RXEDEV]: loads Soft-RoCE and the RDMA connection
# manager and creates RXEDEV (default rxe0) over NETDEV, then waits until
# its port is ACTIVE. The guests cannot request_module, so every module
# is loaded explicitly; rdma_rxe needs the crc32 shash (crc32_generic)
# first. In kernel 6.1 rxe opens its UDP socket only in the initial
# network namespace: RDMA tests use two guests, not two namespaces.
# On the debug kernel all of this is built in and modprobe is a no-op.

rdma_rxe_up() {
	local netdev=$1 rxe=${2:-rxe0} mod i

	for mod in crc32_generic rdma_rxe rdma_cm ib_uverbs rdma_ucm; do
		modprobe "$mod" 2>/dev/null ||
			grep -qw "$mod" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null ||
			{ echo "rdma_rxe_up: cannot load $mod" >&2; return 1; }
	done
	rdma link add "$rxe" type rxe netdev "$netdev" || return 1
	for ((i = 0; i < 50; i++)); do
		rdma link show "$rxe/1" 2>/dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	echo "rdma_rxe_up: $rxe over $netdev never became ACTIVE" >&2
	return 1
}

# rdma_rxe_down [RXEDEV]: removes the Soft-RoCE device (device removal).
rdma_rxe_down() {
	rdma link delete "${1:-rxe0}"
}

# barrier NAME: returns when both nodes have reached it (120 s at most),
# over TCP on eth0: node 1 listens, node 0 knocks until node 1 answers
# with the same name (not that of a barrier before).
barrier() {
	timeout 130 python3 - "$NODE" "$PEER_IP" "$1" <<'EOF' ||
import socket, sys, time
node, peer, name = sys.argv[1], sys.argv[2], sys.argv[3].encode()
deadline = time.time() + 120
if node == "1":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", 9917))
    s.listen(4)
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        try:
            got = c.recv(64).strip()
            c.sendall(name + b"\n")
        except OSError:
            got = b""
        c.close()
        if got == name:
            sys.exit(0)
while time.time() < deadline:
    try:
        c = socket.create_connection((peer, 9917), timeout=2)
        c.settimeout(5)
        c.sendall(name + b"\n")
        got = c.recv(64).strip()
        c.close()
        if got == name:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.3)
sys.exit(1)
EOF
		echo "# barrier $1 failed on node $NODE"
}

nid_of() {	# nid_of A.B.C.D
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	echo $((($1 << 24) | ($2 << 16) | ($3 << 8) | $4))
}

# What rxe0 holds (PDs, CQs, QPs, cm_ids, MRs), without its name.
rdma_res() {
	rdma resource show rxe0 2>/dev/null | sed 's/^[0-9]*: rxe0: //'
}

# iface_stat ROW NAME: column NAME of row ROW (TX:, peers:, ...) of
# ptlctl -s iface show 0 (the caller sets ptlctl).
# shellcheck disable=SC2154
iface_stat() {
	"$ptlctl" -s iface show 0 | awk -v row="$1" -v name="$2" '
		$1 == row { for (i = 2; i <= NF; i++) if ($i == name) col = i - 1
			getline; print col ? $col : 0 }'
}

# iface_peers: the connections of interface 0.
iface_peers() {
	"$ptlctl" iface show 0 | awk '{ for (i = 1; i < NF; i++) if ($i == "peers") print $(i + 1) }'
}

# wait_peers N [SECONDS]: until interface 0 has N connections (at most
# SECONDS, default 30).
wait_peers() {
	local i

	for ((i = 0; i < ${2:-30} * 10; i++)); do
		[ "$(iface_peers)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_stat ROW NAME VALUE [SECONDS]: until interface 0's counter NAME
# (in ROW of ptlctl -s iface show) is at least VALUE (at most SECONDS,
# default 60).
wait_stat() {
	local i

	for ((i = 0; i < ${4:-60} * 5; i++)); do
		(($(iface_stat "$1" "$2") >= $3)) && return 0
		sleep 0.2
	done
	return 1
}

# The gauges of /sys/class/misc/portals (the other files there count
# events since loading): all 0 once no process holds Portals objects.
portals_gauges="pinned_pages mds nis eqs core_objects open_files pincache_cached_pages"

# portals_clean WHAT: every gauge back to 0 within 30 s (a transport that
# still holds messages of a dead peer holds their NI, MDs and pins until
# the QP's retries run out). Reports with the caller's report().
portals_clean() {
	local c v i leaks

	for ((i = 0; i < 30; i++)); do
		leaks=0
		for c in $portals_gauges; do
			v=$(cat "/sys/class/misc/portals/$c")
			[ "$v" = 0 ] || leaks=1
		done
		[ $leaks = 0 ] && break
		sleep 1
	done
	for c in $portals_gauges; do
		v=$(cat "/sys/class/misc/portals/$c")
		[ "$v" = 0 ] || echo "# $c is $v"
	done
	# What still holds them: the connections and the last kernel words.
	if [ $leaks != 0 ]; then
		"$ptlctl" -s peer show 2>&1 | sed 's/^/# /'
		dmesg | tail -n 20 | sed 's/^/# /'
	fi
	report $leaks "node $NODE: $1: nothing left behind within ${i} s (pinned pages, MDs, NIs, EQs, objects)"
}

# rdma_srq_check LABEL SRQ_BUFFERS: reports where ptl_rdma's connections
# put received frames: one shared receive queue of the interface, or with
# srq_buffers=0 a ring per connection (no SRQ). The caller has report.
rdma_srq_check() {
	local srqs

	srqs=$(rdma resource show srq 2>/dev/null | grep -c 'comm \[ptl_rdma\]')
	if [ "$2" = 0 ]; then
		[ "$srqs" = 0 ]
		report $? "$1: srq_buffers=0: receive buffers in a ring per connection, no SRQ ($srqs)"
	else
		[ "$srqs" = 1 ]
		report $? "$1: receive buffers from one shared receive queue ($srqs SRQ)"
	fi
}
