# shellcheck shell=bash
# The sign that a guest run was lost to the emulated link, not to anything
# in the guest; sourced by tools/testing/run-checks and the benchmarks
# that retry such a run once.
#
# vm_link_stalled DIR: the run whose logs are in DIR (tools/testing/vm/run
# --log DIR) ended because QEMU stopped taking a guest's frames off the
# emulated link, which no code in the guest can cause. Seen with two
# guests on QEMU 7.2's UDP socket link. Its signs: the guest's transmit
# watchdog, when the stuck frames fill the ring; or, when they do not,
# Soft-RoCE's WARN after waiting 50 s in a QP's destroy for its packets
# stuck there, in ptl_rdma's QPs or perftest's (rdma-transport.md, "Known
# problems": both traced to that).
vm_link_stalled() {
	grep -qsE 'NETDEV WATCHDOG: .*transmit queue [0-9]+ timed out|WARNING: .* at drivers/infiniband/sw/rxe/rxe_pool\.c:[0-9]+ __rxe_cleanup' \
		"$1"/node*/console.log
}
