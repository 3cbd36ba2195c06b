// SPDX-License-Identifier: GPL-2.0
/*
 * ptl_rdma.ko: Portals messages between nodes over InfiniBand or RoCE,
 * through the kernel's verbs and RDMA connection manager.
 *
 * A transport of ptl.ko (include/ptl/transport.h), beside ptl_rtscts:
 * "ptlctl iface bind N dev NETDEV transport rdma" binds a Portals
 * interface to the RDMA device that carries NETDEV's IPv4 address. The
 * link is reliable (RC), so there is no retransmission here; see
 * Documentation/rdma-transport.md. Module parameters, the transport's
 * ops, bind and unbind.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rtnetlink.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include <linux/portals_netlink.h>

#include "prd.h"

unsigned int prd_credits = 32;
module_param_named(credits, prd_credits, uint, 0444);
MODULE_PARM_DESC(credits,
		 "Data frames in flight per connection; receive buffers posted per connection (default 32, 2..1024)");

unsigned int prd_frame_size = 8192;
module_param_named(frame_size, prd_frame_size, uint, 0444);
MODULE_PARM_DESC(frame_size,
		 "Bytes per SEND frame and receive buffer (default 8192, 256..65536)");

unsigned int prd_port = 7470;
module_param_named(port, prd_port, uint, 0444);
MODULE_PARM_DESC(port, "rdma_cm port (RDMA_PS_TCP) of every node (default 7470)");

unsigned int prd_connect_timeout_ms = 5000;
module_param_named(connect_timeout_ms, prd_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "A connection not established this long fails, and its messages (default 5000)");

unsigned int prd_rdma_min = 16384;
module_param_named(rdma_min, prd_rdma_min, uint, 0644);
MODULE_PARM_DESC(rdma_min,
		 "Payloads larger than this (up to 1 MiB) move by RDMA WRITE, with no copy; 0: never (default 16384)");

unsigned int prd_progress_timeout_ms = 10000;
module_param_named(progress_timeout_ms, prd_progress_timeout_ms, uint, 0644);
MODULE_PARM_DESC(progress_timeout_ms,
		 "A connection with work outstanding and no message frame completing this long is closed, and its messages fail; 0: never (default 10000)");

unsigned int prd_peer_idle_s = 60;
module_param_named(peer_idle_s, prd_peer_idle_s, uint, 0644);
MODULE_PARM_DESC(peer_idle_s,
		 "A connection idle this long is closed, by a handshake that loses nothing; 0: never (default 60)");

/*
 * What peers and local senders can make a node hold: each connection
 * costs a QP, a CQ, its send buffers and RDMA slots
 * (Documentation/rdma-transport.md). Near max_conns the idlest
 * connections are closed to make room (close.c); at it, new ones are
 * refused. Hosts on the fabric may take only max_inbound of them.
 */
unsigned int prd_max_conns = 1024;
module_param_named(max_conns, prd_max_conns, uint, 0644);
MODULE_PARM_DESC(max_conns,
		 "Connections per interface, both ways; near it the idlest are closed, at it new ones are refused (default 1024)");

unsigned int prd_max_inbound = 768;
module_param_named(max_inbound, prd_max_inbound, uint, 0644);
MODULE_PARM_DESC(max_inbound,
		 "Of those, accepted from peers; more are refused (default 768)");

unsigned int prd_max_inbound_pending = 64;
module_param_named(max_inbound_pending, prd_max_inbound_pending, uint, 0644);
MODULE_PARM_DESC(max_inbound_pending,
		 "Of those, not yet established (each ends at connect_timeout_ms); more are refused (default 64)");

/*
 * Receive buffers an interface's connections share on a device (srq.c):
 * what all peers together can have unprocessed, whatever their number.
 */
unsigned int prd_srq_buffers = 256;
module_param_named(srq_buffers, prd_srq_buffers, uint, 0444);
MODULE_PARM_DESC(srq_buffers,
		 "Receive buffers of frame_size shared by an interface's connections; 0: a ring of credits + 4 per connection, as on devices without SRQs (default 256, 0 or 16..16384)");

struct workqueue_struct *prd_wq;

/* The first IPv4 address of @dev, network order; 0 if none. RTNL. */
static __be32 prd_dev_addr(struct net_device *dev)
{
	struct in_device *in_dev = __in_dev_get_rtnl(dev);
	const struct in_ifaddr *ifa;

	if (!in_dev)
		return 0;
	in_dev_for_each_ifa_rtnl(ifa, in_dev)
		return ifa->ifa_local;
	return 0;
}

static int prd_bind(struct ptl_binding *b, struct net_device *dev,
		    const struct ptl_bind_config *cfg,
		    struct netlink_ext_ack *extack)
{
	struct prd_iface *pif;
	int err;

	if (cfg->ethertype) {
		NL_SET_ERR_MSG(extack, "rdma has no ethertype");
		return -EINVAL;
	}
	pif = kzalloc(sizeof(*pif), GFP_KERNEL);
	if (!pif)
		return -ENOMEM;
	pif->kind = PRD_KIND_IFACE;
	pif->b = b;
	pif->net = dev_net(dev);
	pif->addr = prd_dev_addr(dev);
	pif->eager_max = cfg->eager_max;
	mutex_init(&pif->lock);
	INIT_LIST_HEAD(&pif->conns);
	init_waitqueue_head(&pif->idle);
	xa_init(&pif->peers);
	mutex_init(&pif->rxq_lock);
	INIT_LIST_HEAD(&pif->rxqs);
	pif->memcg = get_mem_cgroup_from_mm(current->mm);
	if (!pif->addr) {
		NL_SET_ERR_MSG(extack, "the device has no IPv4 address");
		err = -EADDRNOTAVAIL;
		goto err_free;
	}
	err = prd_listen(pif, extack);
	if (err)
		goto err_free;
	ptl_binding_set_priv(b, pif);
	prd_sweep_start(pif);
	return 0;

err_free:
	mem_cgroup_put(pif->memcg);
	kfree(pif);
	return err;
}

static int prd_configure(struct ptl_binding *b,
			 const struct ptl_bind_config *cfg,
			 struct netlink_ext_ack *extack)
{
	struct prd_iface *pif = ptl_binding_priv(b);

	if (cfg->ethertype) {
		NL_SET_ERR_MSG(extack, "rdma has no ethertype");
		return -EINVAL;
	}
	if (cfg->eager_max)
		WRITE_ONCE(pif->eager_max, cfg->eager_max);
	return 0;
}

static void prd_unbind(struct ptl_binding *b)
{
	struct prd_iface *pif = ptl_binding_priv(b);

	prd_sweep_stop(pif);
	prd_stop_listening(pif);
	prd_kill_all(pif);
	/* The last connection on a device took its receive queue. */
	WARN_ON(!list_empty(&pif->rxqs));
	xa_destroy(&pif->peers);
	mem_cgroup_put(pif->memcg);	/* what was charged holds its own */
	kfree(pif);
}

static int prd_send(struct ptl_binding *b, struct ptl_msg *msg, gfp_t gfp)
{
	struct prd_iface *pif = ptl_binding_priv(b);
	unsigned int noio = 0, tries;
	struct prd_conn *conn;
	int err = -EAGAIN;

	/* Connecting allocates with GFP_KERNEL: not in ptlblk's I/O path. */
	if (!(gfp & __GFP_IO))
		noio = memalloc_noio_save();
	/* -EAGAIN: it began to close; the next try makes a new one. */
	for (tries = 0; tries < 3; tries++) {
		conn = prd_conn_get(pif, ptl_msg_dst_nid(msg));
		if (IS_ERR(conn)) {
			err = PTR_ERR(conn);
			break;
		}
		err = prd_enqueue(conn, msg);
		prd_conn_put(conn);
		if (err != -EAGAIN)
			break;
	}
	if (!(gfp & __GFP_IO))
		memalloc_noio_restore(noio);
	return err;
}

static int prd_fill_iface(struct ptl_binding *b, struct sk_buff *skb)
{
	struct prd_iface *pif = ptl_binding_priv(b);

	if (nla_put_u32(skb, PTL_A_EAGER_MAX, READ_ONCE(pif->eager_max)) ||
	    nla_put_u32(skb, PTL_A_PEERS, READ_ONCE(pif->nconns)))
		return -EMSGSIZE;
	return 0;
}

/* Into the interface's PTL_A_STATS nest, beside the library's. */
static int prd_fill_stats(struct ptl_binding *b, struct sk_buff *skb)
{
	static const struct { int attr; enum prd_stat st; } map[] = {
		{ PTL_STAT_TX_FRAMES, PRD_ST_TX_FRAMES },
		{ PTL_STAT_TX_BYTES, PRD_ST_TX_BYTES },
		{ PTL_STAT_RX_FRAMES, PRD_ST_RX_FRAMES },
		{ PTL_STAT_RX_BYTES, PRD_ST_RX_BYTES },
		{ PTL_STAT_BAD_FRAMES, PRD_ST_BAD_FRAMES },
		{ PTL_STAT_NO_BUFFER, PRD_ST_NO_BUFFER },
		{ PTL_STAT_RTS, PRD_ST_RDMA_WRITES },
		{ PTL_STAT_TIMEOUTS, PRD_ST_STALLS },
		{ PTL_STAT_PEERS_RECLAIMED, PRD_ST_IDLE_CLOSES },
		{ PTL_STAT_SINK_GETS, PRD_ST_SINK_GETS },
		{ PTL_STAT_CONNS_REFUSED, PRD_ST_REFUSED },
		{ PTL_STAT_CONNS_BAD_NID, PRD_ST_BAD_NID },
		{ PTL_STAT_CLOSE_TIMEOUTS, PRD_ST_CLOSE_TIMEOUTS },
		{ PTL_STAT_PEERS_EVICTED, PRD_ST_EVICTED },
		{ PTL_STAT_PEERS_REFUSED, PRD_ST_OUT_REFUSED },
	};
	struct prd_iface *pif = ptl_binding_priv(b);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (ptl_nla_put_stat(skb, map[i].attr,
				     atomic64_read(&pif->stats[map[i].st])))
			return -EMSGSIZE;
	return ptl_nla_put_stat(skb, PTL_STAT_PEERS_MAX,
				READ_ONCE(prd_max_conns));
}

static const struct ptl_transport_ops prd_ops = {
	.bind = prd_bind,
	.configure = prd_configure,
	.unbind = prd_unbind,
	.send = prd_send,
	.fill_iface = prd_fill_iface,
	.fill_stats = prd_fill_stats,
	.dump_peers = prd_dump_peers,
};

static struct ptl_transport prd_transport = {
	.name = "rdma",
	.owner = THIS_MODULE,
	.version = PTL_TRANSPORT_VERSION,
	.ops = &prd_ops,
};

static int __init prd_init(void)
{
	int err;

	if (prd_credits < 2 || prd_credits > 1024 ||
	    prd_frame_size < 256 || prd_frame_size > 65536 ||
	    (prd_srq_buffers && prd_srq_buffers < 16) ||
	    prd_srq_buffers > 16384 ||
	    !prd_port || prd_port > 65535) {
		pr_err("credits, frame_size, srq_buffers or port out of range\n");
		return -EINVAL;
	}
	err = prd_demand_init();
	if (err)
		return err;
	prd_wq = alloc_workqueue("ptl_rdma", WQ_MEM_RECLAIM, 0);
	if (!prd_wq) {
		prd_demand_exit();
		return -ENOMEM;
	}
	err = ptl_transport_register(&prd_transport);
	if (err) {
		destroy_workqueue(prd_wq);
		prd_demand_exit();
	}
	return err;
}

/* Bindings hold this module: none is left when it can be unloaded. */
static void __exit prd_exit(void)
{
	ptl_transport_unregister(&prd_transport);
	destroy_workqueue(prd_wq);
	prd_demand_exit();
}

module_init(prd_init);
module_exit(prd_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Portals over InfiniBand/RoCE reliable connections");
MODULE_AUTHOR("Portals for Linux developers");
MODULE_IMPORT_NS(PORTALS);
