// SPDX-License-Identifier: GPL-2.0
/*
 * What a keyed interface remembers of the peers it lets go: the defence
 * against frames recorded and replayed after the receiver forgot their
 * sender (Documentation/wire-protocol.md, "Authenticated frames").
 *
 * A tag proves that a frame was made by a holder of the key, not that it
 * is new. While a peer's state lives, a replayed reliable frame is a
 * duplicate or stale to it; once an idle peer is reclaimed (or evicted),
 * a replayed frame that opened a stream (SYN) would open it again and
 * deliver its message a second time. So a keyed interface keeps, for
 * each peer it frees, the incarnation it believed and where that peer's
 * stream to us stood, and a peer made again for that node starts from
 * there: the replay is the duplicate it would have been, the genuine
 * sender's next frame simply follows, and a frame of another incarnation
 * is checked with a CHALLENGE as for a known peer (incarnation.c).
 *
 * The first frames a node sends us carry no incarnation of ours (dst_inc
 * 0): on a keyed interface they are refused with a RESET that tells the
 * sender who we are, and the stream it starts again names us. Frames
 * recorded before this interface was bound (a replay after a reboot or
 * a rebind) are then either of an earlier incarnation of ours or of none,
 * and are refused both ways (link.c, reliable.c).
 *
 * The record is small (12 bytes), charged to the binder's memory cgroup
 * like the peers, made only for peers that proved they hold the key, and
 * at most max_peers are kept; past that a freed peer is not remembered
 * (counted: peers_forgotten), and replays to it are what they were
 * without a key. The records go when the interface is unbound.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "rtscts.h"

/* Where a freed peer's stream to us stood. */
struct rtscts_memory {
	u32 rx_inc;
	u32 rx_stream;
	u32 rcv_nxt;
	u32 rx_reqs;		/* requests taken (credit.c) */
};

void rtscts_remember_bind(struct rtscts_if *rif)
{
	xa_init_flags(&rif->remembered, XA_FLAGS_LOCK_BH);
	atomic_set(&rif->nremembered, 0);
}

/**
 * rtscts_remember - keep where @peer's stream to us stood
 * @peer: being taken out of the table and marked dead (peers_lock and its
 *	lock held): it takes no frame any more
 *
 * Only on a keyed interface, for a peer whose frames passed the tag and
 * whose stream we followed.
 */
void rtscts_remember(struct rtscts_peer *peer)
{
	struct rtscts_if *rif = peer->rif;
	struct rtscts_memory *m, *old;
	struct mem_cgroup *memcg;

	if (!rif->auth)
		return;
	if (atomic_read(&rif->nremembered) >= READ_ONCE(rtscts_max_peers)) {
		rtscts_count(rif, PTL_STAT_PEERS_FORGOTTEN, 1);
		return;
	}
	memcg = set_active_memcg(rif->memcg);
	m = kmalloc(sizeof(*m), GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN);
	set_active_memcg(memcg);
	if (!m) {
		rtscts_count(rif, PTL_STAT_PEERS_FORGOTTEN, 1);
		return;
	}
	m->rx_inc = peer->rx_inc;
	m->rx_stream = peer->rx_stream;
	m->rcv_nxt = peer->rcv_nxt;
	m->rx_reqs = peer->rx_reqs;
	if (!m->rx_inc || !m->rx_stream) {
		kfree(m);		/* nothing of it to replay */
		return;
	}
	old = xa_store_bh(&rif->remembered, peer->nid, m, GFP_ATOMIC);
	if (xa_is_err(old)) {
		kfree(m);
		rtscts_count(rif, PTL_STAT_PEERS_FORGOTTEN, 1);
		return;
	}
	/* None to replace: a new peer of the nid took it (rtscts_recall). */
	if (!old)
		atomic_inc(&rif->nremembered);
	kfree(old);
}

/**
 * rtscts_recall - a new peer of a node we remember starts where it was
 * @peer: just made, not yet in the table (peers_lock held)
 */
void rtscts_recall(struct rtscts_peer *peer)
{
	struct rtscts_if *rif = peer->rif;
	struct rtscts_memory *m;

	if (!rif->auth)
		return;
	m = xa_erase_bh(&rif->remembered, peer->nid);
	if (!m)
		return;
	atomic_dec(&rif->nremembered);
	peer->rx_inc = m->rx_inc;
	peer->rx_stream = m->rx_stream;
	peer->rcv_nxt = m->rcv_nxt;
	/* What was outstanding went with the peer: its credit is whole. */
	rtscts_credit_rx_reset(peer, m->rx_reqs);
	rtscts_count(rif, PTL_STAT_PEERS_RECALLED, 1);
	kfree(m);
}

/* The records held (a gauge for ptlctl). */
u32 rtscts_remembered(struct rtscts_if *rif)
{
	return atomic_read(&rif->nremembered);
}

/* Unbinding: no frame arrives and no peer is freed any more. */
void rtscts_remember_unbind(struct rtscts_if *rif)
{
	struct rtscts_memory *m;
	unsigned long nid;

	xa_for_each(&rif->remembered, nid, m)
		kfree(m);
	xa_destroy(&rif->remembered);
}
