// SPDX-License-Identifier: GPL-2.0
/*
 * What ptlctl shows of the transport and changes in it: interface
 * attributes, peers with their state and counters, static peers. The
 * family and its messages belong to ptl.ko (kmod/ptl_netlink.c); these
 * are the ops it calls through the binding.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "rtscts.h"

int rtscts_fill_iface(struct ptl_binding *b, struct sk_buff *skb)
{
	struct rtscts_if *rif = ptl_binding_priv(b);
	const char *auth = rtscts_auth_name(rif);

	/* The MAC's name, never its key. */
	if (nla_put_u32(skb, PTL_A_MTU, rtscts_mtu(rif)) ||
	    nla_put_u32(skb, PTL_A_EAGER_MAX, READ_ONCE(rif->eager_max)) ||
	    nla_put_u16(skb, PTL_A_ETHERTYPE, rif->ethertype) ||
	    nla_put_u32(skb, PTL_A_PEERS, atomic_read(&rif->npeers)) ||
	    (auth && nla_put_string(skb, PTL_A_AUTH, auth)))
		return -EMSGSIZE;
	return 0;
}

/* Into the interface's PTL_A_STATS nest, beside the library's. */
int rtscts_fill_stats(struct ptl_binding *b, struct sk_buff *skb)
{
	static const int stats[] = {
		PTL_STAT_TX_FRAMES, PTL_STAT_TX_BYTES, PTL_STAT_RX_FRAMES,
		PTL_STAT_RX_BYTES, PTL_STAT_RETRANSMITS, PTL_STAT_TIMEOUTS,
		PTL_STAT_DUPLICATES, PTL_STAT_OUT_OF_ORDER,
		PTL_STAT_BAD_FRAMES, PTL_STAT_STALE_FRAMES,
		PTL_STAT_NO_BUFFER, PTL_STAT_RTS, PTL_STAT_PEER_RESTARTS,
		PTL_STAT_PEERS_RECLAIMED, PTL_STAT_OOO_DROPPED,
		PTL_STAT_OOO_EXPIRED, PTL_STAT_AUTH_FAILED,
		PTL_STAT_RX_OPEN_DROPPED, PTL_STAT_PEERS_EVICTED,
		PTL_STAT_PEERS_REFUSED, PTL_STAT_RESOLVE_TRIES,
		PTL_STAT_CHALLENGES, PTL_STAT_PEERS_RECALLED,
		PTL_STAT_PEERS_FORGOTTEN, PTL_STAT_NO_DST_INC,
		PTL_STAT_CREDIT_WAITS, PTL_STAT_CREDIT_REFUSED,
		PTL_STAT_TX_SUPERFRAMES, PTL_STAT_RX_SUPERFRAMES,
		PTL_STAT_TX_RIDERS, PTL_STAT_RX_RIDERS, PTL_STAT_LATE_TIMERS,
	};
	struct rtscts_if *rif = ptl_binding_priv(b);
	struct rtscts_census census;
	unsigned int i;

	rtscts_peers_census(rif, &census);
	for (i = 0; i < ARRAY_SIZE(stats); i++)
		if (ptl_nla_put_stat(skb, stats[i],
				    atomic64_read(&rif->stats[stats[i]])))
			return -EMSGSIZE;
	/* Gauges: what the interface holds now, and its caps. */
	if (ptl_nla_put_stat(skb, PTL_STAT_OOO_BYTES,
			    atomic_long_read(&rif->ooo_bytes)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_RX_OPEN,
			    atomic_read(&rif->rx_open)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_RX_REQS,
			    atomic_read(&rif->rx_reqs)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_PEERS_UNRESOLVED,
			    census.unresolved) ||
	    ptl_nla_put_stat(skb, PTL_STAT_PEERS_TIMERS, census.timers) ||
	    ptl_nla_put_stat(skb, PTL_STAT_MEM_BYTES, census.mem_bytes) ||
	    ptl_nla_put_stat(skb, PTL_STAT_PEERS_MAX,
			    READ_ONCE(rtscts_max_peers)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_PEERS_USER_MAX,
			    rtscts_user_max_peers()) ||
	    ptl_nla_put_stat(skb, PTL_STAT_PEERS_REMEMBERED,
			    rtscts_remembered(rif)))
		return -EMSGSIZE;
	return 0;
}

static void rtscts_report_stats(struct ptl_peer_report *r,
				const struct rtscts_peer *peer)
{
	const struct rtscts_peer_stats *st = &peer->st;

	ptl_peer_report_stat(r, PTL_STAT_TX_FRAMES, st->tx_frames);
	ptl_peer_report_stat(r, PTL_STAT_TX_BYTES, st->tx_bytes);
	ptl_peer_report_stat(r, PTL_STAT_RX_FRAMES, st->rx_frames);
	ptl_peer_report_stat(r, PTL_STAT_RX_BYTES, st->rx_bytes);
	ptl_peer_report_stat(r, PTL_STAT_RETRANSMITS, st->retransmits);
	ptl_peer_report_stat(r, PTL_STAT_TIMEOUTS, st->timeouts);
	ptl_peer_report_stat(r, PTL_STAT_LATE_TIMERS, st->late_timers);
	ptl_peer_report_stat(r, PTL_STAT_DUPLICATES, st->duplicates);
	ptl_peer_report_stat(r, PTL_STAT_OUT_OF_ORDER, st->out_of_order);
	ptl_peer_report_stat(r, PTL_STAT_STALE_FRAMES, st->stale);
	ptl_peer_report_stat(r, PTL_STAT_NO_BUFFER, st->no_buffer);
	ptl_peer_report_stat(r, PTL_STAT_MSGS_TX, st->msgs_tx);
	ptl_peer_report_stat(r, PTL_STAT_MSGS_RX, st->msgs_rx);
	ptl_peer_report_stat(r, PTL_STAT_MSGS_FAILED, st->msgs_failed);
	ptl_peer_report_stat(r, PTL_STAT_RTS, st->rts);
	ptl_peer_report_stat(r, PTL_STAT_OOO_BYTES, peer->ooo_bytes);
	ptl_peer_report_stat(r, PTL_STAT_OOO_DROPPED, st->ooo_dropped);
	ptl_peer_report_stat(r, PTL_STAT_OOO_EXPIRED, st->ooo_expired);
	ptl_peer_report_stat(r, PTL_STAT_RX_OPEN, peer->rx_open);
	ptl_peer_report_stat(r, PTL_STAT_RX_OPEN_DROPPED, st->rx_open_dropped);
}

/* A snapshot of @peer, taken under its lock. */
static void rtscts_peer_report(struct rtscts_peer *peer,
			       struct ptl_peer_report *r)
{
	spin_lock_bh(&peer->lock);
	r->nid = peer->nid;
	r->lladdr_len = ETH_ALEN;
	memcpy(r->lladdr, peer->lladdr, ETH_ALEN);
	r->state = peer->state;
	r->flags = peer->is_static ? PTL_PEER_F_STATIC : 0;
	r->has_uid = peer->owner != RTSCTS_OWNER_NONE;
	r->uid = peer->owner;
	ptl_peer_report_attr(r, PTL_A_PEER_INCARNATION, peer->rx_inc);
	ptl_peer_report_attr(r, PTL_A_PEER_RTT_US, peer->srtt_us);
	ptl_peer_report_attr(r, PTL_A_PEER_RTTVAR_US, peer->rttvar_us);
	ptl_peer_report_attr(r, PTL_A_PEER_RTO_US, peer->rto_us);
	ptl_peer_report_attr(r, PTL_A_PEER_CWND, peer->cwnd);
	ptl_peer_report_attr(r, PTL_A_PEER_INFLIGHT, peer->ninflight);
	ptl_peer_report_attr(r, PTL_A_PEER_QUEUED, peer->nmsgs);
	ptl_peer_report_attr(r, PTL_A_PEER_IDLE_MS,
			     jiffies_to_msecs(jiffies - peer->last_rx));
	rtscts_report_stats(r, peer);
	spin_unlock_bh(&peer->lock);
}

/* Peers a dump reports per walk of the table. */
#define RTSCTS_DUMP_BATCH	64

/* The next peers to report: the smallest nids above the cursor. */
struct rtscts_dump_batch {
	u32 after;			/* the cursor: the last nid reported */
	bool any;			/* ... or none yet: every nid */
	u32 n;
	u32 nids[RTSCTS_DUMP_BATCH];	/* ascending */
};

static void rtscts_dump_collect(struct rtscts_peer *peer, void *arg)
{
	struct rtscts_dump_batch *batch = arg;
	u32 nid = peer->nid, i;

	if (!batch->any && nid <= batch->after)
		return;
	if (batch->n == RTSCTS_DUMP_BATCH) {
		if (nid >= batch->nids[RTSCTS_DUMP_BATCH - 1])
			return;
		batch->n--;			/* the largest makes room */
	}
	for (i = batch->n; i && batch->nids[i - 1] > nid; i--)
		batch->nids[i] = batch->nids[i - 1];
	batch->nids[i] = nid;
	batch->n++;
}

/*
 * In ascending nid order, d->pos[0] the last nid reported and d->pos[1]
 * whether one was: a part of the dump resumes above it, whatever came,
 * went or moved in the table since (a resize reorders its buckets). Each
 * batch costs a walk of the table, small next to the messages written.
 * A peer that comes during a dump is reported if its nid is above the
 * cursor; one that goes before its turn is not.
 */
int rtscts_dump_peers(struct ptl_binding *b, struct ptl_peer_dump *d)
{
	struct rtscts_if *rif = ptl_binding_priv(b);
	struct rtscts_dump_batch batch;
	struct rtscts_peer *peer;
	u32 i;

	do {
		batch.after = d->pos[0];
		batch.any = !d->pos[1];
		batch.n = 0;
		rtscts_walk_peers(rif, rtscts_dump_collect, &batch);
		for (i = 0; i < batch.n; i++) {
			rcu_read_lock();
			peer = rtscts_peer_lookup(rif, batch.nids[i]);
			if (peer)
				rtscts_peer_report(peer, &d->report);
			rcu_read_unlock();
			if (peer && ptl_peer_dump_add(d))
				return 0;	/* the message is full */
			d->pos[0] = batch.nids[i];
			d->pos[1] = 1;
		}
	} while (batch.n == RTSCTS_DUMP_BATCH);
	return 0;
}

int rtscts_add_peer(struct ptl_binding *b, u32 nid, const u8 *lladdr,
		    unsigned int addr_len, struct netlink_ext_ack *extack)
{
	struct rtscts_if *rif = ptl_binding_priv(b);

	if (addr_len != ETH_ALEN || !is_valid_ether_addr(lladdr)) {
		NL_SET_ERR_MSG(extack, "not a unicast Ethernet address");
		return -EINVAL;
	}
	if (!nid || nid == PTL_NID_ANY || nid == ptl_binding_nid(b)) {
		NL_SET_ERR_MSG(extack, "that nid cannot be a peer");
		return -EINVAL;
	}
	return rtscts_peer_add_static(rif, nid, lladdr);
}

int rtscts_del_peer(struct ptl_binding *b, u32 nid,
		    struct netlink_ext_ack *extack)
{
	int err = rtscts_peer_remove(ptl_binding_priv(b), nid);

	if (err == -ENOENT)
		NL_SET_ERR_MSG(extack, "no such peer");
	return err;
}
