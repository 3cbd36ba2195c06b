# shellcheck shell=bash
# Soft-RoCE for the guests' RDMA tests and benchmarks; sourced, not run.
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
