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

#include "prd.h"

static const u8 prd_peer_states[] = {
	[PRD_CONN_CONNECTING] = PTL_PEER_CONNECTING,
	[PRD_CONN_UP] = PTL_PEER_UP,
	[PRD_CONN_DEAD] = PTL_PEER_DEAD,
};

/*
 * pif->lock held: @conn stays on pif->conns, so it is not freed. The
 * counters as the interface reports them (prd_fill_stats()).
 */
static void prd_peer_report(struct prd_iface *pif, struct prd_conn *conn,
			    struct ptl_peer_report *r)
{
	r->nid = conn->nid;
	r->flags = conn->active ? PTL_PEER_F_ACTIVE : 0;
	/* Only compared, never followed: xa_load() is enough. */
	if (xa_load(&pif->peers, conn->nid) == conn)
		r->flags |= PTL_PEER_F_SENDS;
	spin_lock_bh(&conn->lock);
	if (conn->closing)
		r->flags |= PTL_PEER_F_CLOSING;
	r->state = prd_peer_states[conn->state];
	ptl_peer_report_attr(r, PTL_A_PEER_CREDITS, conn->tx_credits);
	ptl_peer_report_attr(r, PTL_A_PEER_CREDITS_OWED, conn->rx_owed);
	ptl_peer_report_attr(r, PTL_A_PEER_TX_BUFS, conn->tx_made);
	ptl_peer_report_attr(r, PTL_A_PEER_MRS, prd_conn_mrs(conn));
	spin_unlock_bh(&conn->lock);
	ptl_peer_report_stat(r, PTL_STAT_TX_FRAMES,
			     atomic64_read(&conn->st_tx_frames));
	ptl_peer_report_stat(r, PTL_STAT_TX_BYTES,
			     atomic64_read(&conn->st_tx_bytes));
	ptl_peer_report_stat(r, PTL_STAT_RX_FRAMES,
			     atomic64_read(&conn->st_rx_frames));
	ptl_peer_report_stat(r, PTL_STAT_RX_BYTES,
			     atomic64_read(&conn->st_rx_bytes));
	ptl_peer_report_stat(r, PTL_STAT_RTS,
			     atomic64_read(&conn->st_rdma_writes));
}

/* d->pos[0]: connections already reported. */
int prd_dump_peers(struct ptl_binding *b, struct ptl_peer_dump *d)
{
	struct prd_iface *pif = ptl_binding_priv(b);
	struct prd_conn *conn;
	unsigned long idx = 0;

	mutex_lock(&pif->lock);
	list_for_each_entry(conn, &pif->conns, node) {
		if (idx < d->pos[0]) {
			idx++;
			continue;
		}
		prd_peer_report(pif, conn, &d->report);
		if (ptl_peer_dump_add(d))
			break;
		idx++;
	}
	mutex_unlock(&pif->lock);
	d->pos[0] = idx;
	return 0;
}
