// SPDX-License-Identifier: GPL-2.0
/*
 * Peers: the per-node state of an interface.
 *
 * State is created lazily, on the first frame from a node or the first
 * message to it: the user sees no connections. A peer is small while
 * idle (no window, no buffer: lists are empty), and an idle peer that has
 * not been heard from for peer_idle_s is reclaimed (static ones never);
 * the table is capped at max_peers per interface. The table is a
 * resizable hash (rhashtable): a frame finds its peer in the same few
 * steps with ten peers or ten thousand, and a small cluster does not pay
 * for the buckets a large one needs.
 *
 * The table is shared by every user of the interface, so no one may fill
 * it for the others (issue 20, R3). A peer is charged to the uid of the
 * first message sent to it (the Portals header's src_uid, which the
 * sending kernel fills), or to no one when a frame from the node or
 * ptlctl made it; one uid holds at most user_peer_share percent of
 * max_peers. At either cap a new peer takes the place of one that has
 * been unresolved (no link-layer address: a node that does not answer
 * ARP) or idle for RTSCTS_EVICT_GRACE, as a neighbour table drops its
 * incomplete entries first; at the uid's cap only one of that uid's own.
 * What was queued for an evicted peer fails. The search looks at
 * RTSCTS_EVICT_SCAN peers from the head of a list in creation order and
 * moves those it cannot take to the tail: bounded work under the table's
 * lock, and every peer is looked at in turn.
 *
 * Incarnations and streams (Documentation/wire-protocol.md,
 * "Reliability"): every frame carries the sender's incarnation; a newer
 * one means the peer restarted: whatever was in flight with it fails and
 * both streams start afresh. A peer that stops answering for
 * peer_timeout_ms fails what is in flight with it (timers.c) and becomes
 * unreachable until it is heard from again. A keyed interface remembers
 * where the streams of the peers it frees stood (remember.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/rculist.h>
#include <linux/rhashtable.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "rtscts.h"
#include "rtscts_trace.h"

static struct kmem_cache *rtscts_peer_cache;

/*
 * Every frame looks its peer up, so both functions are a few instructions
 * (the table's defaults, jhash2 and memcmp, cost a hundred more per
 * frame): the high half of a 64-bit multiplication, which every bit of
 * the seeded nid reaches, spreads nids that differ only in their high
 * bytes (10.0.k.1) as well as consecutive ones.
 */
static u32 rtscts_nid_hashfn(const void *data, u32 len, u32 seed)
{
	return ((u64)(*(const u32 *)data ^ seed) * GOLDEN_RATIO_64) >> 32;
}

static int rtscts_nid_cmpfn(struct rhashtable_compare_arg *arg,
			    const void *obj)
{
	return ((const struct rtscts_peer *)obj)->nid != *(const u32 *)arg->key;
}

static const struct rhashtable_params rtscts_peer_params = {
	.key_len = sizeof(u32),
	.key_offset = offsetof(struct rtscts_peer, nid),
	.head_offset = offsetof(struct rtscts_peer, hnode),
	.hashfn = rtscts_nid_hashfn,
	.obj_cmpfn = rtscts_nid_cmpfn,
	.automatic_shrinking = true,
};

int rtscts_peers_init(void)
{
	rtscts_peer_cache = KMEM_CACHE(rtscts_peer, 0);
	return rtscts_peer_cache ? 0 : -ENOMEM;
}

void rtscts_peers_exit(void)
{
	rcu_barrier();		/* peers are freed after a grace period */
	kmem_cache_destroy(rtscts_peer_cache);
}

/* The peer @nid of @rif, or NULL. Under rcu_read_lock. */
struct rtscts_peer *rtscts_peer_lookup(struct rtscts_if *rif, u32 nid)
{
	return rhashtable_lookup(&rif->peers, &nid, rtscts_peer_params);
}

/**
 * rtscts_walk_peers - calls @fn on every peer of @rif
 * @rif: the interface
 * @fn: called under RCU, with no lock held; @peer may be dead
 * @arg: for @fn
 *
 * A walk of the table that holds no lock across it: a peer added or
 * removed meanwhile may or may not be seen, and a resize of the table
 * may show one twice, so @fn must not mind either (counts to show,
 * idempotent work).
 */
void rtscts_walk_peers(struct rtscts_if *rif,
		       void (*fn)(struct rtscts_peer *, void *), void *arg)
{
	struct rhashtable_iter it;
	struct rtscts_peer *peer;

	rhashtable_walk_enter(&rif->peers, &it);
	rhashtable_walk_start(&it);
	while ((peer = rhashtable_walk_next(&it))) {
		if (IS_ERR(peer)) {
			if (PTR_ERR(peer) == -EAGAIN)
				continue;	/* resized: go on in the new one */
			break;
		}
		fn(peer, arg);
	}
	rhashtable_walk_stop(&it);
	rhashtable_walk_exit(&it);
}

/* A new stream for what we send (its first frames carry SYN). */
void rtscts_peer_new_stream(struct rtscts_peer *peer)
{
	u32 stream;

	do {
		stream = (u32)atomic_inc_return(&peer->rif->next_stream);
	} while (!stream);
	peer->tx_stream = stream;
	peer->snd_una = 0;
	peer->snd_nxt = 0;
	peer->tx_synced = false;
	peer->cwnd = RTSCTS_INIT_CWND;
	peer->ssthresh = rtscts_window();
	peer->cwnd_acc = 0;
	peer->backoff = 0;
	peer->in_recovery = false;
	peer->rto_recovery = false;
	rtscts_credit_tx_reset(peer);
}

static struct rtscts_peer *rtscts_peer_alloc(struct rtscts_if *rif, u32 nid,
					     gfp_t gfp)
{
	struct rtscts_peer *peer;
	struct mem_cgroup *old;

	/*
	 * Charged where the interface's buffers are, and refused rather
	 * than forced over that cgroup's limit or into the atomic reserves
	 * (no __GFP_HIGH): anyone on the segment can make a peer (ooo.c).
	 */
	old = set_active_memcg(rif->memcg);
	peer = kmem_cache_zalloc(rtscts_peer_cache,
				 (gfp & ~__GFP_HIGH) | __GFP_ACCOUNT);
	set_active_memcg(old);
	if (!peer)
		return NULL;
	peer->rif = rif;
	peer->nid = nid;
	spin_lock_init(&peer->lock);
	INIT_LIST_HEAD(&peer->inflight);
	INIT_LIST_HEAD(&peer->ctlq);
	INIT_LIST_HEAD(&peer->txq);
	INIT_LIST_HEAD(&peer->txq_begun);
	INIT_LIST_HEAD(&peer->rspq);
	INIT_LIST_HEAD(&peer->rspq_short);
	INIT_LIST_HEAD(&peer->rspq_held);
	INIT_LIST_HEAD(&peer->await_cts);
	INIT_LIST_HEAD(&peer->wait_acks);
	INIT_LIST_HEAD(&peer->rx_msgs);
	INIT_LIST_HEAD(&peer->gc);
	INIT_LIST_HEAD(&peer->lru);
	__skb_queue_head_init(&peer->ooo);
	timer_setup(&peer->timer, rtscts_timer_fn, 0);
	hrtimer_init(&peer->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	peer->ack_timer.function = rtscts_ack_timer_fn;
	peer->state = PTL_PEER_RESOLVING;
	peer->rwnd = RTSCTS_INIT_CWND;
	peer->rto_us = max_t(u32, rtscts_min_rto_ms, 200) * USEC_PER_MSEC;
	peer->last_active = jiffies;
	peer->last_rx = jiffies;
	peer->last_progress = jiffies;
	peer->last_reset = jiffies - RTSCTS_RESET_INTERVAL;
	rtscts_peer_new_stream(peer);
	return peer;
}

/* Percent of max_peers one uid may hold, as a count (at least 1). */
u32 rtscts_user_max_peers(void)
{
	u32 share = clamp_t(u32, READ_ONCE(rtscts_user_peer_share), 1, 100);

	return max_t(u32, div_u64((u64)READ_ONCE(rtscts_max_peers) * share,
				  100), 1);
}

/* Peers charged to @owner; peers_lock held. */
static u32 rtscts_owner_count(struct rtscts_if *rif, u32 owner)
{
	void *v = xa_load(&rif->owners, owner);

	return v ? xa_to_value(v) : 0;
}

/* Charges (@n 1) or uncharges (-1) a peer to @owner; peers_lock held. */
static int rtscts_owner_add(struct rtscts_if *rif, u32 owner, int n)
{
	u32 count;

	if (owner == RTSCTS_OWNER_NONE)
		return 0;
	count = rtscts_owner_count(rif, owner);
	if (WARN_ON_ONCE(n < 0 && !count))
		return 0;
	count += n;
	if (!count) {
		xa_erase_bh(&rif->owners, owner);
		return 0;
	}
	return xa_err(xa_store_bh(&rif->owners, owner, xa_mk_value(count),
				  GFP_ATOMIC));
}

/* Unresolved or idle for RTSCTS_EVICT_GRACE, never static. */
static bool rtscts_peer_evictable(struct rtscts_peer *peer, unsigned long now,
				  bool *unresolved)
{
	bool ok;

	spin_lock_bh(&peer->lock);
	*unresolved = !peer->lladdr_valid;
	if (peer->is_static || peer->dead)
		ok = false;
	else if (*unresolved)
		ok = time_after(now, peer->last_rx + RTSCTS_EVICT_GRACE);
	else
		ok = rtscts_peer_idle(peer) &&
		     time_after(now, peer->last_active + RTSCTS_EVICT_GRACE);
	spin_unlock_bh(&peer->lock);
	return ok;
}

/*
 * Takes @peer out of the table onto @gc; peers_lock held. It is dead from
 * now on: a frame that found it just before is dropped (and comes again
 * to the peer that replaces it), so what it had taken is exactly what a
 * keyed interface remembers of it (remember.c; not when unbinding).
 */
static void rtscts_peer_unhash(struct rtscts_peer *peer, struct list_head *gc)
{
	spin_lock_bh(&peer->lock);
	peer->dead = true;
	if (!READ_ONCE(peer->rif->dying))
		rtscts_remember(peer);
	spin_unlock_bh(&peer->lock);
	rhashtable_remove_fast(&peer->rif->peers, &peer->hnode,
			       rtscts_peer_params);
	list_del(&peer->lru);
	atomic_dec(&peer->rif->npeers);
	rtscts_owner_add(peer->rif, peer->owner, -1);
	list_add_tail(&peer->gc, gc);
}

/*
 * Makes room by taking one evictable peer out of the table (charged to
 * @owner, or to anyone if it is RTSCTS_OWNER_NONE): an unresolved one if
 * the scan finds one, else an idle one. It is freed by the reclaim work
 * (process context). peers_lock held. True if one went.
 */
static bool rtscts_evict(struct rtscts_if *rif, u32 owner)
{
	struct rtscts_peer *peer, *tmp, *idle = NULL;
	unsigned long now = jiffies;
	bool unresolved;
	int n = 0;

	list_for_each_entry_safe(peer, tmp, &rif->lru, lru) {
		if (n++ >= RTSCTS_EVICT_SCAN)
			break;
		if (owner != RTSCTS_OWNER_NONE && peer->owner != owner)
			continue;
		if (rtscts_peer_evictable(peer, now, &unresolved)) {
			if (unresolved) {
				idle = peer;
				break;
			}
			idle = idle ?: peer;
		} else {
			list_move_tail(&peer->lru, &rif->lru);
		}
	}
	if (!idle)
		return false;
	rtscts_peer_unhash(idle, &rif->evicted);
	rtscts_count(rif, PTL_STAT_PEERS_EVICTED, 1);
	return true;
}

/* Room for a peer charged to @owner, evicting if need be; peers_lock held. */
static bool rtscts_peer_room(struct rtscts_if *rif, u32 owner, bool *evicted)
{
	if (owner != RTSCTS_OWNER_NONE &&
	    rtscts_owner_count(rif, owner) >= rtscts_user_max_peers()) {
		if (!rtscts_evict(rif, owner))
			return false;
		*evicted = true;
	}
	if (atomic_read(&rif->npeers) >= READ_ONCE(rtscts_max_peers)) {
		if (!rtscts_evict(rif, RTSCTS_OWNER_NONE))
			return false;
		*evicted = true;
	}
	return !rtscts_owner_add(rif, owner, 1);
}

/**
 * rtscts_peer_get - the peer @nid, created if there is none
 * @rif: the interface
 * @nid: the node
 * @owner: the uid a new peer is charged to, or RTSCTS_OWNER_NONE
 * @gfp: for the creation (the caller is under RCU: atomic)
 *
 * Return: the peer (valid until the caller leaves its RCU read section;
 * check ->dead under its lock), or NULL if the table or @owner's share of
 * it is full of peers that cannot be evicted, the interface is going
 * away, or memory is short.
 */
struct rtscts_peer *rtscts_peer_get(struct rtscts_if *rif, u32 nid, u32 owner,
				    gfp_t gfp)
{
	struct rtscts_peer *peer = rtscts_peer_lookup(rif, nid);
	struct rtscts_peer *fresh;
	bool evicted = false;

	if (peer)
		return peer;
	if (READ_ONCE(rif->dying))
		return NULL;
	fresh = rtscts_peer_alloc(rif, nid, gfp);
	if (!fresh)
		return NULL;
	fresh->owner = owner;
	spin_lock_bh(&rif->peers_lock);
	peer = rtscts_peer_lookup(rif, nid);
	if (!peer && !rif->dying && rtscts_peer_room(rif, owner, &evicted)) {
		/* Where its streams stood, before anyone can find it. */
		rtscts_recall(fresh);
		if (rhashtable_insert_fast(&rif->peers, &fresh->hnode,
					   rtscts_peer_params)) {
			/* No memory for a larger table: refused. */
			spin_lock_bh(&fresh->lock);
			rtscts_remember(fresh);		/* given back */
			spin_unlock_bh(&fresh->lock);
			rtscts_owner_add(rif, owner, -1);
		} else {
			list_add_tail(&fresh->lru, &rif->lru);
			atomic_inc(&rif->npeers);
			peer = fresh;
			fresh = NULL;
		}
	}
	spin_unlock_bh(&rif->peers_lock);
	if (fresh) {
		kmem_cache_free(rtscts_peer_cache, fresh);
		if (!peer)
			rtscts_count(rif, PTL_STAT_PEERS_REFUSED, 1);
	}
	if (evicted)
		schedule_work(&rif->evict_work);
	return peer;
}

static void rtscts_census_one(struct rtscts_peer *peer, void *arg)
{
	struct rtscts_census *c = arg;

	c->timers += timer_pending(&peer->timer) ||
		     hrtimer_active(&peer->ack_timer);
	/* Unlocked: counts to show, stale by the time they are. */
	c->unresolved += !data_race(peer->lladdr_valid);
	/* ... as this one. */
	c->inflight += data_race(peer->ninflight);
}

/* What the peers of @rif are doing (for ptlctl): a snapshot. */
void rtscts_peers_census(struct rtscts_if *rif, struct rtscts_census *c)
{
	memset(c, 0, sizeof(*c));
	rtscts_walk_peers(rif, rtscts_census_one, c);
	c->mem_bytes = (u64)atomic_read(&rif->npeers) *
		       kmem_cache_size(rtscts_peer_cache) +
		       c->inflight * rtscts_txf_size() +
		       atomic_long_read(&rif->ooo_bytes);
}

void rtscts_peer_set_state(struct rtscts_peer *peer, u8 state)
{
	if (peer->state == state)
		return;
	peer->state = state;
	trace_rtscts_peer_state(peer->rif, peer->nid, state);
	if (state == PTL_PEER_UP)
		ptl_binding_peer_event(peer->rif->b, peer->nid,
				       PTL_EVENT_PEER_UP, peer->rx_inc, 0);
}

/*
 * Nothing in flight either way: it may be reclaimed. Lock held. Frames
 * held ahead of a gap do not count: a gap that stays open for the whole
 * of peer_idle_s will not close (they expire after peer_timeout_ms), and
 * reclaiming frees them.
 */
bool rtscts_peer_idle(const struct rtscts_peer *peer)
{
	return !peer->ninflight && !peer->nmsgs &&
	       list_empty(&peer->ctlq) && list_empty(&peer->rx_msgs);
}

/*
 * Forgets what arrived ahead of the stream and the messages partly
 * received (they fail): the peer restarted, or went silent.
 */
void rtscts_peer_reset_rx(struct rtscts_peer *peer)
{
	rtscts_fail_rx(peer);
	rtscts_ooo_purge(peer);
	peer->rx_riders_done = 0;
}

/**
 * rtscts_peer_fail - everything in flight with @peer fails
 * @peer: locked
 * @event: PTL_EVENT_PEER_UNREACHABLE (it timed out) or
 *	PTL_EVENT_PEER_RESTARTED (a new incarnation)
 *
 * Operations to it end with PTL_NI_FAIL, and so do messages partly
 * received from it. Our stream starts afresh. A restarted peer's stream
 * does too; an unreachable one keeps its place, so that frames it
 * resends after a pause are still recognised.
 */
void rtscts_peer_fail(struct rtscts_peer *peer, u8 event)
{
	u64 before = peer->st.msgs_failed;

	rtscts_fail_msgs(peer, true);
	rtscts_ooo_purge(peer);
	rtscts_peer_new_stream(peer);
	if (event == PTL_EVENT_PEER_RESTARTED) {
		peer->rx_stream = 0;
		peer->rcv_nxt = 0;
		rtscts_count(peer->rif, PTL_STAT_PEER_RESTARTS, 1);
	} else {
		rtscts_peer_set_state(peer, PTL_PEER_UNREACHABLE);
	}
	trace_rtscts_peer_fail(peer->rif, peer->nid, event,
			       peer->st.msgs_failed - before);
	ptl_binding_peer_event(peer->rif->b, peer->nid, event, peer->rx_inc,
			       peer->st.msgs_failed - before);
}

static void rtscts_peer_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(rtscts_peer_cache,
			container_of(head, struct rtscts_peer, rcu));
}

/* Frees peers already out of the table. Process context. */
static void rtscts_peers_free(struct list_head *gc)
{
	struct rtscts_peer *peer, *tmp;

	list_for_each_entry_safe(peer, tmp, gc, gc) {
		list_del(&peer->gc);
		spin_lock_bh(&peer->lock);
		peer->dead = true;
		rtscts_fail_msgs(peer, true);
		rtscts_ooo_purge(peer);
		rtscts_credit_release(peer);
		spin_unlock_bh(&peer->lock);
		/* dead: the timer function no longer re-arms it. */
		del_timer_sync(&peer->timer);
		hrtimer_cancel(&peer->ack_timer);
		call_rcu(&peer->rcu, rtscts_peer_free_rcu);
	}
}

/* Idle long enough to forget (never a static peer). */
static bool rtscts_peer_expired(struct rtscts_peer *peer, unsigned long now)
{
	bool expired;

	spin_lock_bh(&peer->lock);
	expired = !peer->is_static && rtscts_peer_idle(peer) &&
		  time_after(now, peer->last_active +
				  rtscts_peer_idle_s * HZ);
	spin_unlock_bh(&peer->lock);
	return expired;
}

/* Frees the peers evicted to make room (rtscts_evict). */
static void rtscts_evict_work(struct work_struct *work)
{
	struct rtscts_if *rif = container_of(work, struct rtscts_if,
					     evict_work);
	LIST_HEAD(gc);

	spin_lock_bh(&rif->peers_lock);
	list_splice_init(&rif->evicted, &gc);
	spin_unlock_bh(&rif->peers_lock);
	rtscts_peers_free(&gc);
}

/* The table and its lists, at bind. */
int rtscts_peers_bind(struct rtscts_if *rif)
{
	int err = rhashtable_init(&rif->peers, &rtscts_peer_params);

	if (err)
		return err;
	spin_lock_init(&rif->peers_lock);
	INIT_LIST_HEAD(&rif->lru);
	INIT_LIST_HEAD(&rif->evicted);
	xa_init_flags(&rif->owners, XA_FLAGS_LOCK_BH);
	INIT_WORK(&rif->evict_work, rtscts_evict_work);
	return 0;
}

void rtscts_reclaim_work(struct work_struct *work)
{
	struct rtscts_if *rif = container_of(to_delayed_work(work),
					     struct rtscts_if, reclaim);
	unsigned long now = jiffies;
	struct rtscts_peer *peer, *tmp;
	LIST_HEAD(gc);
	u64 n = 0;

	spin_lock_bh(&rif->peers_lock);
	list_for_each_entry_safe(peer, tmp, &rif->lru, lru) {
		if (rtscts_peer_expired(peer, now)) {
			rtscts_peer_unhash(peer, &gc);
			n++;
		}
	}
	spin_unlock_bh(&rif->peers_lock);
	rtscts_peers_free(&gc);
	rtscts_count(rif, PTL_STAT_PEERS_RECLAIMED, n);
	if (!READ_ONCE(rif->dying))
		schedule_delayed_work(&rif->reclaim, RTSCTS_RECLAIM_PERIOD);
}

/*
 * Unbinding: every peer goes, and what is in flight with it fails. No
 * frame arrives and nothing is sent any more: the table goes too.
 */
void rtscts_peers_destroy(struct rtscts_if *rif)
{
	struct rtscts_peer *peer, *tmp;
	LIST_HEAD(gc);

	spin_lock_bh(&rif->peers_lock);
	list_splice_init(&rif->evicted, &gc);
	list_for_each_entry_safe(peer, tmp, &rif->lru, lru)
		rtscts_peer_unhash(peer, &gc);
	spin_unlock_bh(&rif->peers_lock);
	rtscts_peers_free(&gc);
	xa_destroy(&rif->owners);
	rhashtable_destroy(&rif->peers);
}

/* ptlctl peer add: a link-layer address that is never resolved. */
int rtscts_peer_add_static(struct rtscts_if *rif, u32 nid, const u8 *lladdr)
{
	struct rtscts_peer *peer;
	int err = -ENOMEM;

	rcu_read_lock();
	peer = rtscts_peer_get(rif, nid, RTSCTS_OWNER_NONE, GFP_ATOMIC);
	if (peer) {
		spin_lock_bh(&peer->lock);
		err = peer->dead ? -EAGAIN : 0;
		if (!err) {
			ether_addr_copy(peer->lladdr, lladdr);
			peer->alt_valid = false;
			peer->lladdr_valid = true;
			peer->is_static = true;
			if (peer->state == PTL_PEER_RESOLVING)
				rtscts_peer_set_state(peer, PTL_PEER_UP);
		}
		spin_unlock_bh(&peer->lock);
	}
	rcu_read_unlock();
	return err;
}

/* ptlctl peer del: forget it; what is in flight with it fails. */
int rtscts_peer_remove(struct rtscts_if *rif, u32 nid)
{
	struct rtscts_peer *peer;
	LIST_HEAD(gc);

	spin_lock_bh(&rif->peers_lock);
	rcu_read_lock();
	peer = rtscts_peer_lookup(rif, nid);
	if (peer)
		rtscts_peer_unhash(peer, &gc);
	rcu_read_unlock();
	spin_unlock_bh(&rif->peers_lock);
	if (!peer)
		return -ENOENT;
	rtscts_peers_free(&gc);
	return 0;
}
