// SPDX-License-Identifier: GPL-2.0
/*
 * The out-of-order buffer: frames that arrived ahead of a gap in a peer's
 * stream, kept until the gap closes (reliable.c drains them in order).
 *
 * Anyone on the segment can open a stream (a SYN from any nid) and send
 * frames whose sequence 0 never comes, so what this buffer holds is
 * bounded in three ways, all in real memory:
 *
 *   - per peer, RTSCTS_OOO_MAX_BYTES (and the window, in frames);
 *   - per interface, ooo_max_kb (module parameter), over all its peers;
 *   - in time: a gap not filled within peer_timeout_ms frees what waits
 *     behind it (counted in ooo_expired). A sender that has not filled
 *     it by then has declared us unreachable and will start a new stream
 *     anyway; what it resends goes by the same rules (SACK bits are
 *     advice, wire-protocol.md).
 * A frame over a cap is dropped and counted (ooo_dropped); a sender
 * sends it again.
 *
 * A frame is not kept as it arrived but copied (whole into a linear
 * buffer if it fits a page, else its headers there and its payload in
 * page fragments), allocated with
 * __GFP_ACCOUNT while the memory cgroup of the process that bound the
 * interface is the active one:
 *
 *   - the copy's truesize is exactly what it holds. An skb as received
 *     says less: over veth it still belongs to the sending socket, and
 *     pskb_expand_head() does not add to the truesize of such an skb, so
 *     the pull of a frame's checksummed bytes into a new head (up to
 *     64 KiB) went uncounted and the cap allowed twice its size;
 *   - the copy belongs to no socket. An skb from a packet socket in
 *     another namespace pins that socket, and with it its namespace,
 *     while it waits here (skb_orphan() alone would still leave the
 *     sender's pages and head, and their truesize, as they were);
 *   - the memory is charged to the binder's cgroup: in a namespace of its
 *     own, a user who binds an interface pays for what it buffers, and
 *     its memory.max bounds it (the charge fails rather than overdraw:
 *     GFP_NOWAIT, not GFP_ATOMIC, whose __GFP_HIGH forces it). In the
 *     initial namespace that is usually the root cgroup, which is not
 *     charged; the caps still hold.
 * The copy costs one pass over the bytes of frames that arrive out of
 * order, a path of loss and reordering only.
 *
 * Everything is freed with the peer (reclaim, removal, unbind: the
 * device's unregistration in a dying namespace unbinds it), on a restart
 * or failure of the peer, and when the gap expires.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/skbuff.h>

#include "rtscts.h"

/*
 * The sequences of a buffered frame, in skb->cb: the first, and how many
 * (a large frame's segments).
 */
struct rtscts_ooo_cb {
	u32 seq;
	u32 seqs;
};

#define RTSCTS_OOO_CB(skb) ((struct rtscts_ooo_cb *)(skb)->cb)

u32 rtscts_ooo_seq(const struct sk_buff *skb)
{
	return RTSCTS_OOO_CB(skb)->seq;
}

u32 rtscts_ooo_seqs(const struct sk_buff *skb)
{
	return RTSCTS_OOO_CB(skb)->seqs;
}

/* Does the buffered @held have every sequence of [seq, seq + n)? */
static bool rtscts_ooo_covers(const struct sk_buff *held, u32 seq, u32 n)
{
	u32 from = seq - rtscts_ooo_seq(held);

	return from < rtscts_ooo_seqs(held) &&
	       n <= rtscts_ooo_seqs(held) - from;
}

/* Bytes one interface holds ahead of gaps, over all its peers. */
static long rtscts_ooo_if_cap(void)
{
	return (long)READ_ONCE(rtscts_ooo_max_kb) << 10;
}

/* Bytes one peer may hold: its own cap, and never more than the interface's. */
static u32 rtscts_ooo_peer_cap(void)
{
	return min_t(long, RTSCTS_OOO_MAX_BYTES, rtscts_ooo_if_cap());
}

static unsigned long rtscts_ooo_timeout(void)
{
	return max_t(unsigned long,
		     msecs_to_jiffies(READ_ONCE(rtscts_peer_timeout_ms)), 1);
}

/* At bind, in the binder's context: whom the buffers are charged to. */
void rtscts_ooo_bind(struct rtscts_if *rif)
{
	rif->memcg = get_mem_cgroup_from_mm(current->mm);
	atomic_long_set(&rif->ooo_bytes, 0);
}

/* At unbind, once every peer is gone. */
void rtscts_ooo_unbind(struct rtscts_if *rif)
{
	WARN_ON_ONCE(atomic_long_read(&rif->ooo_bytes));
	mem_cgroup_put(rif->memcg);
	rif->memcg = NULL;
}

/*
 * A copy of the frame @skb in memory charged to @rif's cgroup: linear if
 * it fits a page with the shared info (a 1500-byte frame then takes a
 * 2 KiB buffer, not a page), else the first @hdr_len bytes linear and the
 * rest in pages (a 64 KiB frame would take a 128 KiB buffer). NULL
 * without memory or over the cgroup's limit.
 */
static struct sk_buff *rtscts_ooo_copy(struct rtscts_if *rif,
				       const struct sk_buff *skb, u16 hdr_len)
{
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT;
	unsigned int lin = skb->len <= SKB_WITH_OVERHEAD(PAGE_SIZE) ?
			   skb->len : hdr_len;
	unsigned int rest = skb->len - lin, off = lin;
	struct mem_cgroup *old;
	struct sk_buff *n;
	int err, i;

	old = set_active_memcg(rif->memcg);
	n = alloc_skb_with_frags(lin, rest, 0, &err, gfp);
	set_active_memcg(old);
	if (!n)
		return NULL;
	skb_put(n, lin);
	n->len += rest;
	n->data_len = rest;
	if (skb_copy_bits(skb, 0, n->data, lin))
		goto fail;
	for (i = 0; i < skb_shinfo(n)->nr_frags; i++) {
		skb_frag_t *frag = &skb_shinfo(n)->frags[i];

		if (skb_copy_bits(skb, off, skb_frag_address(frag),
				  skb_frag_size(frag)))
			goto fail;
		off += skb_frag_size(frag);
	}
	return n;
fail:
	kfree_skb(n);
	return NULL;
}

static void rtscts_ooo_drop(struct rtscts_peer *peer)
{
	peer->st.ooo_dropped++;
	rtscts_count(peer->rif, PTL_STAT_OOO_DROPPED, 1);
}

/* Reserves @n bytes of the caps; false if either would be exceeded. */
static bool rtscts_ooo_reserve(struct rtscts_peer *peer, unsigned int n)
{
	struct rtscts_if *rif = peer->rif;

	if (peer->ooo_bytes + n > rtscts_ooo_peer_cap())
		return false;
	if (atomic_long_add_return(n, &rif->ooo_bytes) > rtscts_ooo_if_cap()) {
		atomic_long_sub(n, &rif->ooo_bytes);
		return false;
	}
	peer->ooo_bytes += n;
	return true;
}

static void rtscts_ooo_release(struct rtscts_peer *peer, unsigned int n)
{
	peer->ooo_bytes -= n;
	atomic_long_sub(n, &peer->rif->ooo_bytes);
}

/**
 * rtscts_ooo_insert - keep a frame that arrived ahead of a gap
 * @peer: locked
 * @skb: the frame (taken in every case)
 * @f: its decoded headers
 *
 * Frames are held in the order of their first sequence. A large frame
 * may overlap what is held (its segments, cut on the way, came before or
 * come after it): it is kept unless one held frame has all its
 * sequences, and the drain delivers of each frame only what is new.
 *
 * Return: 0 if kept, -EEXIST if it is there already (a duplicate),
 * -ENOBUFS past the window, -ENOMEM over a cap or without memory.
 */
int rtscts_ooo_insert(struct rtscts_peer *peer, struct sk_buff *skb,
		      const struct rtscts_frame *f)
{
	u32 seq = f->seq, seqs = rtscts_frame_seqs(f);
	struct sk_buff *pos, *n;

	if (seq + seqs - 1 - peer->rcv_nxt >= rtscts_window()) {
		kfree_skb(skb);
		return -ENOBUFS;
	}
	skb_queue_walk(&peer->ooo, pos) {
		if (rtscts_ooo_covers(pos, seq, seqs)) {
			kfree_skb(skb);
			return -EEXIST;
		}
		if (rtscts_seq_after(rtscts_ooo_seq(pos), seq))
			break;
	}
	/* Cheap refusal first: the copy can only be larger than the bytes. */
	if (peer->ooo_bytes + skb->len > rtscts_ooo_peer_cap() ||
	    atomic_long_read(&peer->rif->ooo_bytes) + skb->len >
	    rtscts_ooo_if_cap())
		n = NULL;
	else
		n = rtscts_ooo_copy(peer->rif, skb, f->hdr_len);
	consume_skb(skb);
	if (!n || !rtscts_ooo_reserve(peer, n->truesize)) {
		kfree_skb(n);
		rtscts_ooo_drop(peer);
		return -ENOMEM;
	}
	RTSCTS_OOO_CB(n)->seq = seq;
	RTSCTS_OOO_CB(n)->seqs = seqs;
	if (skb_queue_empty(&peer->ooo)) {
		peer->ooo_since = jiffies;
		/* Sooner than what the timer waits for now, if it must. */
		timer_reduce(&peer->timer, peer->ooo_since +
				rtscts_ooo_timeout());
	}
	__skb_queue_before(&peer->ooo, pos, n);	/* the tail if none is after */
	peer->st.out_of_order++;
	rtscts_count(peer->rif, PTL_STAT_OUT_OF_ORDER, 1);
	return 0;
}

/* The first frame held, taken off the buffer (NULL if it is empty). */
struct sk_buff *rtscts_ooo_pop(struct rtscts_peer *peer)
{
	struct sk_buff *skb = __skb_dequeue(&peer->ooo);

	if (skb)
		rtscts_ooo_release(peer, skb->truesize);
	return skb;
}

/* Puts back the frame rtscts_ooo_pop() gave (it could not go on now). */
void rtscts_ooo_unpop(struct rtscts_peer *peer, struct sk_buff *skb)
{
	__skb_queue_head(&peer->ooo, skb);
	peer->ooo_bytes += skb->truesize;
	atomic_long_add(skb->truesize, &peer->rif->ooo_bytes);
}

/* Frees everything held for @peer (locked); returns how many frames. */
u32 rtscts_ooo_purge(struct rtscts_peer *peer)
{
	struct sk_buff *skb;
	u32 n = 0;

	while ((skb = rtscts_ooo_pop(peer))) {
		kfree_skb(skb);
		n++;
	}
	return n;
}

/* When the gap @peer's buffer waits on expires (buffer not empty). */
unsigned long rtscts_ooo_deadline(const struct rtscts_peer *peer)
{
	return peer->ooo_since + rtscts_ooo_timeout();
}

/* From the timer (lock held): frees what waited too long for its gap. */
void rtscts_ooo_expire(struct rtscts_peer *peer)
{
	u32 n;

	if (skb_queue_empty(&peer->ooo) ||
	    time_before(jiffies, rtscts_ooo_deadline(peer)))
		return;
	n = rtscts_ooo_purge(peer);
	peer->st.ooo_expired += n;
	rtscts_count(peer->rif, PTL_STAT_OOO_EXPIRED, n);
}
