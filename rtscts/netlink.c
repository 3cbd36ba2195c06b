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

static int rtscts_put_stat(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, PTL_STAT_PAD);
}

int rtscts_fill_iface(struct ptl_binding *b, struct sk_buff *skb)
{
	struct rtscts_if *rif = ptl_binding_priv(b);

	if (nla_put_u32(skb, PTL_A_MTU, rtscts_mtu(rif)) ||
	    nla_put_u32(skb, PTL_A_EAGER_MAX, READ_ONCE(rif->eager_max)) ||
	    nla_put_u16(skb, PTL_A_ETHERTYPE, rif->ethertype) ||
	    nla_put_u32(skb, PTL_A_PEERS, atomic_read(&rif->npeers)))
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
		PTL_STAT_OOO_EXPIRED,
	};
	struct rtscts_if *rif = ptl_binding_priv(b);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(stats); i++)
		if (rtscts_put_stat(skb, stats[i],
				    atomic64_read(&rif->stats[stats[i]])))
			return -EMSGSIZE;
	/* A gauge: what the interface holds now. */
	if (rtscts_put_stat(skb, PTL_STAT_OOO_BYTES,
			    atomic_long_read(&rif->ooo_bytes)))
		return -EMSGSIZE;
	return 0;
}

static int rtscts_fill_peer_stats(struct sk_buff *skb,
				  const struct rtscts_peer_stats *st,
				  u32 ooo_bytes)
{
	struct nlattr *nest = nla_nest_start(skb, PTL_A_PEER_STATS);

	if (!nest ||
	    rtscts_put_stat(skb, PTL_STAT_TX_FRAMES, st->tx_frames) ||
	    rtscts_put_stat(skb, PTL_STAT_TX_BYTES, st->tx_bytes) ||
	    rtscts_put_stat(skb, PTL_STAT_RX_FRAMES, st->rx_frames) ||
	    rtscts_put_stat(skb, PTL_STAT_RX_BYTES, st->rx_bytes) ||
	    rtscts_put_stat(skb, PTL_STAT_RETRANSMITS, st->retransmits) ||
	    rtscts_put_stat(skb, PTL_STAT_TIMEOUTS, st->timeouts) ||
	    rtscts_put_stat(skb, PTL_STAT_DUPLICATES, st->duplicates) ||
	    rtscts_put_stat(skb, PTL_STAT_OUT_OF_ORDER, st->out_of_order) ||
	    rtscts_put_stat(skb, PTL_STAT_STALE_FRAMES, st->stale) ||
	    rtscts_put_stat(skb, PTL_STAT_NO_BUFFER, st->no_buffer) ||
	    rtscts_put_stat(skb, PTL_STAT_MSGS_TX, st->msgs_tx) ||
	    rtscts_put_stat(skb, PTL_STAT_MSGS_RX, st->msgs_rx) ||
	    rtscts_put_stat(skb, PTL_STAT_MSGS_FAILED, st->msgs_failed) ||
	    rtscts_put_stat(skb, PTL_STAT_RTS, st->rts) ||
	    rtscts_put_stat(skb, PTL_STAT_OOO_BYTES, ooo_bytes) ||
	    rtscts_put_stat(skb, PTL_STAT_OOO_DROPPED, st->ooo_dropped) ||
	    rtscts_put_stat(skb, PTL_STAT_OOO_EXPIRED, st->ooo_expired))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* A snapshot taken under the peer's lock, written out without it. */
struct rtscts_peer_view {
	u32 nid;
	u8 lladdr[ETH_ALEN];
	u8 state;
	bool is_static;
	u32 incarnation;
	u32 srtt_us, rttvar_us, rto_us, cwnd, inflight, queued, idle_ms;
	u32 ooo_bytes;
	struct rtscts_peer_stats st;
};

static void rtscts_peer_view(struct rtscts_peer *peer,
			     struct rtscts_peer_view *v)
{
	spin_lock_bh(&peer->lock);
	v->nid = peer->nid;
	memcpy(v->lladdr, peer->lladdr, ETH_ALEN);
	v->state = peer->state;
	v->is_static = peer->is_static;
	v->incarnation = peer->rx_inc;
	v->srtt_us = peer->srtt_us;
	v->rttvar_us = peer->rttvar_us;
	v->rto_us = peer->rto_us;
	v->cwnd = peer->cwnd;
	v->inflight = peer->ninflight;
	v->queued = peer->nmsgs;
	v->idle_ms = jiffies_to_msecs(jiffies - peer->last_rx);
	v->ooo_bytes = peer->ooo_bytes;
	v->st = peer->st;
	spin_unlock_bh(&peer->lock);
}

static int rtscts_fill_peer(struct ptl_binding *b, struct sk_buff *skb,
			    struct netlink_callback *cb,
			    const struct rtscts_peer_view *v)
{
	void *hdr = ptl_netlink_peer_begin(b, skb, cb);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PTL_A_NID, v->nid) ||
	    nla_put(skb, PTL_A_PEER_LLADDR, ETH_ALEN, v->lladdr) ||
	    nla_put_u8(skb, PTL_A_PEER_STATE, v->state) ||
	    nla_put_u32(skb, PTL_A_PEER_FLAGS,
			v->is_static ? PTL_PEER_F_STATIC : 0) ||
	    nla_put_u32(skb, PTL_A_PEER_INCARNATION, v->incarnation) ||
	    nla_put_u32(skb, PTL_A_PEER_RTT_US, v->srtt_us) ||
	    nla_put_u32(skb, PTL_A_PEER_RTTVAR_US, v->rttvar_us) ||
	    nla_put_u32(skb, PTL_A_PEER_RTO_US, v->rto_us) ||
	    nla_put_u32(skb, PTL_A_PEER_CWND, v->cwnd) ||
	    nla_put_u32(skb, PTL_A_PEER_INFLIGHT, v->inflight) ||
	    nla_put_u32(skb, PTL_A_PEER_QUEUED, v->queued) ||
	    nla_put_u32(skb, PTL_A_PEER_IDLE_MS, v->idle_ms) ||
	    rtscts_fill_peer_stats(skb, &v->st, v->ooo_bytes)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * cb->args[2]: hash bucket, args[3]: peers of it already sent. Peers come
 * and go between two parts of a dump; one may then be shown twice or not
 * at all, as with any dump of a changing table.
 */
int rtscts_dump_peers(struct ptl_binding *b, struct sk_buff *skb,
		      struct netlink_callback *cb)
{
	struct rtscts_if *rif = ptl_binding_priv(b);
	struct rtscts_peer_view v;
	struct rtscts_peer *peer;
	long bkt, idx;

	for (bkt = cb->args[2]; bkt < HASH_SIZE(rif->peers); bkt++) {
		idx = 0;
		rcu_read_lock();
		hlist_for_each_entry_rcu(peer, &rif->peers[bkt], hnode) {
			if (idx++ < cb->args[3])
				continue;
			rtscts_peer_view(peer, &v);
			if (rtscts_fill_peer(b, skb, cb, &v)) {
				rcu_read_unlock();
				cb->args[2] = bkt;
				cb->args[3] = idx - 1;
				return skb->len;
			}
		}
		rcu_read_unlock();
		cb->args[3] = 0;
	}
	cb->args[2] = bkt;
	return skb->len;
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
