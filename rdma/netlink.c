// SPDX-License-Identifier: GPL-2.0
/*
 * ptlctl peer show for ptl_rdma: one PTL_CMD_GET_PEER message per
 * connection. A peer is a connection here, not a nid: two nodes that
 * connected to each other at once keep both (conn.c), and each is shown,
 * with PTL_PEER_F_SENDS on the one our requests take. There are no static
 * peers to add or delete: a nid is the IPv4 address of the peer's RDMA
 * netdev and rdma_cm resolves it (Documentation/rdma-transport.md).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>
#include <net/netlink.h>

#include <linux/portals_netlink.h>

#include "prd.h"

/* A snapshot of a connection, written out without its lock. */
struct prd_peer_view {
	u32 nid;
	u8 state;
	u32 flags;
	u32 credits, owed;
	u64 tx_frames, tx_bytes, rx_frames, rx_bytes, rdma_writes;
};

static const u8 prd_peer_states[] = {
	[PRD_CONN_CONNECTING] = PTL_PEER_CONNECTING,
	[PRD_CONN_UP] = PTL_PEER_UP,
	[PRD_CONN_DEAD] = PTL_PEER_DEAD,
};

/* pif->lock held: @conn stays on pif->conns, so it is not freed. */
static void prd_peer_view(struct prd_iface *pif, struct prd_conn *conn,
			  struct prd_peer_view *v)
{
	v->nid = conn->nid;
	v->flags = conn->active ? PTL_PEER_F_ACTIVE : 0;
	/* Only compared, never followed: xa_load() is enough. */
	if (xa_load(&pif->peers, conn->nid) == conn)
		v->flags |= PTL_PEER_F_SENDS;
	spin_lock_bh(&conn->lock);
	if (conn->closing)
		v->flags |= PTL_PEER_F_CLOSING;
	v->state = prd_peer_states[conn->state];
	v->credits = conn->tx_credits;
	v->owed = conn->rx_owed;
	spin_unlock_bh(&conn->lock);
	v->tx_frames = atomic64_read(&conn->st_tx_frames);
	v->tx_bytes = atomic64_read(&conn->st_tx_bytes);
	v->rx_frames = atomic64_read(&conn->st_rx_frames);
	v->rx_bytes = atomic64_read(&conn->st_rx_bytes);
	v->rdma_writes = atomic64_read(&conn->st_rdma_writes);
}

static int prd_put_stat(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, PTL_STAT_PAD);
}

/* The counters as the interface reports them (prd_fill_stats()). */
static int prd_fill_peer_stats(struct sk_buff *skb,
			       const struct prd_peer_view *v)
{
	struct nlattr *nest = nla_nest_start(skb, PTL_A_PEER_STATS);

	if (!nest ||
	    prd_put_stat(skb, PTL_STAT_TX_FRAMES, v->tx_frames) ||
	    prd_put_stat(skb, PTL_STAT_TX_BYTES, v->tx_bytes) ||
	    prd_put_stat(skb, PTL_STAT_RX_FRAMES, v->rx_frames) ||
	    prd_put_stat(skb, PTL_STAT_RX_BYTES, v->rx_bytes) ||
	    prd_put_stat(skb, PTL_STAT_RTS, v->rdma_writes))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int prd_fill_peer(struct ptl_binding *b, struct sk_buff *skb,
			 struct netlink_callback *cb,
			 const struct prd_peer_view *v)
{
	void *hdr = ptl_netlink_peer_begin(b, skb, cb);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PTL_A_NID, v->nid) ||
	    nla_put_u8(skb, PTL_A_PEER_STATE, v->state) ||
	    nla_put_u32(skb, PTL_A_PEER_FLAGS, v->flags) ||
	    nla_put_u32(skb, PTL_A_PEER_CREDITS, v->credits) ||
	    nla_put_u32(skb, PTL_A_PEER_CREDITS_OWED, v->owed) ||
	    prd_fill_peer_stats(skb, v)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * cb->args[2]: connections already sent. Connections come and go between
 * two parts of a dump; one may then be shown twice or not at all, as
 * with any dump of a changing table.
 */
int prd_dump_peers(struct ptl_binding *b, struct sk_buff *skb,
		   struct netlink_callback *cb)
{
	struct prd_iface *pif = ptl_binding_priv(b);
	struct prd_peer_view v;
	struct prd_conn *conn;
	long idx = 0;

	mutex_lock(&pif->lock);
	list_for_each_entry(conn, &pif->conns, node) {
		if (idx < cb->args[2]) {
			idx++;
			continue;
		}
		prd_peer_view(pif, conn, &v);
		if (prd_fill_peer(b, skb, cb, &v))
			break;
		idx++;
	}
	mutex_unlock(&pif->lock);
	cb->args[2] = idx;
	return skb->len;
}
