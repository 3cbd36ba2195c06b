// SPDX-License-Identifier: GPL-2.0
/*
 * ptl_rtscts.ko: Portals messages between nodes over Ethernet.
 *
 * A transport of ptl.ko (include/ptl/transport.h): ptlctl binds a Portals
 * interface to an Ethernet device through it, and it carries the
 * interface's messages to other nodes in frames of its own ethertype,
 * reliably, in order and flow-controlled, with RTS/CTS for large ones
 * (Documentation/wire-protocol.md). Module init and exit, in strict
 * order, unwound in reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "rtscts.h"

#define CREATE_TRACE_POINTS
#include "rtscts_trace.h"

/* Length-like parameters refuse what the protocol cannot carry. */
static int rtscts_set_eager_max(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, RTSCTS_MAX_EAGER);
}

static const struct kernel_param_ops rtscts_eager_max_ops = {
	.set = rtscts_set_eager_max,
	.get = param_get_uint,
};

unsigned int rtscts_eager_max = 16384;
module_param_cb(eager_max, &rtscts_eager_max_ops, &rtscts_eager_max, 0644);
MODULE_PARM_DESC(eager_max,
		 "Largest payload sent eagerly; larger puts use RTS/CTS (default 16384, at most 1048576; per interface: ptlctl iface set N eager BYTES)");

unsigned int rtscts_max_window = 256;
module_param_named(max_window, rtscts_max_window, uint, 0644);
MODULE_PARM_DESC(max_window,
		 "Frames in flight per peer, and buffered ahead of a gap (default 256, at most 1024)");

unsigned int rtscts_peer_timeout_ms = 10000;
module_param_named(peer_timeout_ms, rtscts_peer_timeout_ms, uint, 0644);
MODULE_PARM_DESC(peer_timeout_ms,
		 "A peer silent this long with operations outstanding is unreachable: they fail (default 10000)");

unsigned int rtscts_peer_idle_s = 60;
module_param_named(peer_idle_s, rtscts_peer_idle_s, uint, 0644);
MODULE_PARM_DESC(peer_idle_s,
		 "State of a peer idle this long is reclaimed (default 60)");

unsigned int rtscts_max_peers = 16384;
module_param_named(max_peers, rtscts_max_peers, uint, 0644);
MODULE_PARM_DESC(max_peers, "Peers kept per interface (default 16384)");

unsigned int rtscts_user_peer_share = 50;
module_param_named(user_peer_share, rtscts_user_peer_share, uint, 0644);
MODULE_PARM_DESC(user_peer_share,
		 "Percent of max_peers the peers one uid sends to first may take (default 50; 1..100)");

unsigned int rtscts_min_rto_ms = 10;
module_param_named(min_rto_ms, rtscts_min_rto_ms, uint, 0644);
MODULE_PARM_DESC(min_rto_ms, "Smallest retransmission timeout (default 10)");

unsigned int rtscts_max_rto_ms = 1000;
module_param_named(max_rto_ms, rtscts_max_rto_ms, uint, 0644);
MODULE_PARM_DESC(max_rto_ms, "Largest retransmission timeout (default 1000)");

unsigned int rtscts_ack_delay_us = 50;
module_param_named(ack_delay_us, rtscts_ack_delay_us, uint, 0644);
MODULE_PARM_DESC(ack_delay_us,
		 "Wait this long for a frame to carry the acknowledgement of a message, or a Portals ACK, before sending it alone (default 50; 0: at once)");

unsigned int rtscts_ride_max_bytes = 4096;
module_param_named(ride_max_bytes, rtscts_ride_max_bytes, uint, 0644);
MODULE_PARM_DESC(ride_max_bytes,
		 "Largest put whose Portals ACK waits for a frame to ride on; the ACK of a larger one goes at once (default 4096)");

unsigned int rtscts_ooo_max_kb = 65536;
module_param_named(ooo_max_kb, rtscts_ooo_max_kb, uint, 0644);
MODULE_PARM_DESC(ooo_max_kb,
		 "Memory one interface holds in frames ahead of gaps, all peers together, in KiB (default 65536; each peer at most 4096)");

unsigned int rtscts_rx_open_max = 16384;
module_param_named(rx_open_max, rtscts_rx_open_max, uint, 0644);
MODULE_PARM_DESC(rx_open_max,
		 "Incoming messages one interface holds open (partly received), all peers together (default 16384; each peer at most 64)");

unsigned int rtscts_rx_reqs_max = 65536;
module_param_named(rx_reqs_max, rtscts_rx_reqs_max, uint, 0644);
MODULE_PARM_DESC(rx_reqs_max,
		 "Requests one interface takes and is not done with (their responses unacknowledged), all peers together (default 65536; each peer at most 256)");

bool rtscts_superframes = true;
module_param_named(superframes, rtscts_superframes, bool, 0644);
MODULE_PARM_DESC(superframes,
		 "Send a burst of frames to one peer as one GSO skb, cut where a device cannot carry it (default Y; ethertypes 0x88b5 and 0x88b6 only)");

bool rtscts_large_frames = true;
module_param_named(large_frames, rtscts_large_frames, bool, 0644);
MODULE_PARM_DESC(large_frames,
		 "Send up to 64 KiB of a message's data as one large frame, which the stack cuts into frames where a device cannot carry it (default Y; ethertypes 0x88b5 and 0x88b6 only, not on keyed interfaces)");

static const struct ptl_transport_ops rtscts_ops = {
	.bind = rtscts_bind,
	.configure = rtscts_configure,
	.unbind = rtscts_unbind,
	.dev_changed = rtscts_dev_changed,
	.send = rtscts_send,
	.cancel_rx = rtscts_cancel_rx,
	.fill_iface = rtscts_fill_iface,
	.fill_stats = rtscts_fill_stats,
	.dump_peers = rtscts_dump_peers,
	.add_peer = rtscts_add_peer,
	.del_peer = rtscts_del_peer,
};

static struct ptl_transport rtscts_transport = {
	.name = "rtscts",
	.owner = THIS_MODULE,
	.version = PTL_TRANSPORT_VERSION,
	.ops = &rtscts_ops,
	.features = PTL_TRANSPORT_F_AUTH,
};

static int __init rtscts_init(void)
{
	int err;

	if (rtscts_min_rto_ms < 1 || rtscts_max_rto_ms < rtscts_min_rto_ms) {
		pr_err("min_rto_ms must be >= 1 and <= max_rto_ms\n");
		return -EINVAL;
	}
	err = rtscts_crc_init();
	if (err)
		return err;
	err = rtscts_txf_init();
	if (err)
		goto err_crc;
	err = rtscts_peers_init();
	if (err)
		goto err_txf;
	err = ptl_transport_register(&rtscts_transport);
	if (err)
		goto err_peers;
	return 0;

err_peers:
	rtscts_peers_exit();
err_txf:
	rtscts_txf_exit();
err_crc:
	rtscts_crc_exit();
	return err;
}

/* Bindings hold this module: none is left when it can be unloaded. */
static void __exit rtscts_exit(void)
{
	ptl_transport_unregister(&rtscts_transport);
	rtscts_peers_exit();
	rtscts_txf_exit();
	rtscts_crc_exit();
}

module_init(rtscts_init);
module_exit(rtscts_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Portals over Ethernet: reliable frames with RTS/CTS");
MODULE_AUTHOR("Portals for Linux developers");
MODULE_IMPORT_NS(PORTALS);
MODULE_SOFTDEP("pre: crc32c");
