// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Address translation (spec 8.1) and MD acceptance (8.2): which match
 * entry of a portal takes an incoming put, get or getput, where in its MD
 * the data goes and how much of it.
 */
#include "ptlc_internal.h"

/*
 * Kernels built with INIT_STACK_ALL_ZERO clear every local array; the
 * cursors are always written before they are read.
 */
#if defined(__has_attribute)
#if __has_attribute(__uninitialized__)
#define PTLC_NOINIT __attribute__((__uninitialized__))
#endif
#endif
#ifndef PTLC_NOINIT
#define PTLC_NOINIT
#endif

bool ptlc_me_matches(const struct ptlc_me *me, ptl_process_id_t src,
		     ptl_match_bits_t bits)
{
	if (me->match_id.nid != PTL_NID_ANY && me->match_id.nid != src.nid)
		return false;
	if (me->match_id.pid != PTL_PID_ANY && me->match_id.pid != src.pid)
		return false;
	return ((me->match_bits ^ bits) & ~me->ignore_bits) == 0;
}

/*
 * Offers a request of rlength bytes at req_offset to md. op_bits are the
 * PTL_MD_OP_* bits the operation needs (both for getput). On acceptance
 * returns the offset used and the length that will be moved.
 */
bool ptlc_md_accepts(const struct ptlc_md *md, u32 op_bits, u64 req_offset,
		     u64 rlength, u64 *offset, u64 *mlength)
{
	u64 o, len = md->length;

	if ((md->desc.options & op_bits) != op_bits || !ptlc_md_active(md))
		return false;
	o = (md->desc.options & PTL_MD_MANAGE_REMOTE) ? req_offset :
	    md->local_offset;
	if (o > len)
		return false;
	if (rlength <= len - o)
		*mlength = rlength;
	else if (md->desc.options & PTL_MD_TRUNCATE)
		*mlength = len - o;
	else
		return false;
	*offset = o;
	return true;
}

/*
 * After acceptance: a locally managed MD moves its offset on, and with
 * PTL_MD_MAX_SIZE goes inactive as soon as a max_size message might no
 * longer fit. max_size means nothing for remotely managed offsets (spec
 * intent; the reference applies it anyway).
 */
void ptlc_md_advance(struct ptlc_md *md, u64 mlength)
{
	if (md->desc.options & PTL_MD_MANAGE_REMOTE)
		return;
	md->local_offset += mlength;
	if ((md->desc.options & PTL_MD_MAX_SIZE) &&
	    md->length - md->local_offset < md->desc.max_size)
		md->maxed = true;
}

/* A hash chain filtered to one key: the exact entries of one source class. */
struct mh_cursor {
	struct ptlc_list *head;
	struct ptlc_list *at;	/* the current candidate, or head */
	ptl_process_id_t id;	/* the key's source (pt and bits: the request's) */
};

/* Moves c->at to the first entry of c's key at or after l. */
static void cursor_seek(struct mh_cursor *c, struct ptlc_list *l,
			const struct ptl_hdr *hdr)
{
	for (; l != c->head; l = l->next) {
		const struct ptlc_me *me = ptlc_me_of_ilink(l);

		if (me->match_bits == hdr->match_bits &&
		    me->match_id.nid == c->id.nid &&
		    me->match_id.pid == c->id.pid &&
		    me->pt_index == hdr->pt_index)
			break;
	}
	c->at = l;
}

/*
 * Source classes (bit 0: nid ANY, bit 1: pid ANY) whose key can match a
 * source with the given ANY bits of its own: the supersets of them (a
 * sender whose nid is PTL_NID_ANY names the same key as nid ANY).
 */
static const u8 key_classes[4] = { 0xf, 0xa, 0xc, 0x8 };

/*
 * The cursors of the keys that can match src (an exact ME's match_id names
 * src's nid or PTL_NID_ANY, and src's pid or PTL_PID_ANY) and have entries.
 */
static int mh_cursors(const struct ptlc_ni *ni, const struct ptl_hdr *hdr,
		      struct mh_cursor *c)
{
	const struct ptlc_mh *mh = &ni->mh;
	u32 own = (hdr->src.nid == PTL_NID_ANY ? 1U : 0U) |
		  (hdr->src.pid == PTL_PID_ANY ? 2U : 0U);
	u32 probe = mh->classes & key_classes[own];
	int n = 0;

	while (probe) {
		u32 cls = (u32)__builtin_ctz(probe);
		ptl_process_id_t id = hdr->src;

		probe &= probe - 1;
		if (cls & 1)
			id.nid = PTL_NID_ANY;
		if (cls & 2)
			id.pid = PTL_PID_ANY;
		c[n].head = &mh->buckets[ptlc_mh_bucket(mh, hdr->pt_index, id,
							hdr->match_bits)];
		c[n].id = id;
		cursor_seek(&c[n], c[n].head->next, hdr);
		n++;
	}
	return n;
}

static bool me_takes(const struct ptlc_me *me, const struct ptl_hdr *hdr,
		     u32 op_bits, struct ptlc_match *m)
{
	if (!me->md || !ptlc_me_matches(me, hdr->src, hdr->match_bits))
		return false;
	if (!ptlc_md_accepts(me->md, op_bits, hdr->offset, hdr->rlength,
			     &m->offset, &m->mlength))
		return false;
	m->md = me->md;
	return true;
}

/*
 * The first entry in list order whose MD accepts wins (8.1). The portal's
 * entries are split between the hash chains (exact entries) and the wild
 * list (the rest), each in list order; this merges the candidates of the
 * chains of src's key with the wild list by position, so the result is
 * that of walking the whole list, entries whose MD is absent or refuses
 * included. Cost: the candidates of the key plus the wild entries before
 * the winner. Lists of up to PTLC_MATCH_WALK_MAX entries are simply
 * walked.
 */
bool ptlc_match_request(struct ptlc_ni *ni, const struct ptl_hdr *hdr,
			u32 op_bits, struct ptlc_match *m)
{
	struct ptlc_pt *pt = &ni->pt[hdr->pt_index];
	struct ptlc_list *wild = &pt->wild;
	struct ptlc_list *w = wild->next;
	/* Written by mh_cursors before any read: not worth zeroing. */
	struct mh_cursor c[PTLC_MH_CLASSES] PTLC_NOINIT;
	int i, n;

	/* A short list costs less to walk than to probe. */
	if (pt->len <= PTLC_MATCH_WALK_MAX) {
		for (w = pt->mes.next; w != &pt->mes; w = w->next) {
			if (me_takes(PTLC_CONTAINER_OF(w, struct ptlc_me, link),
				     hdr, op_bits, m))
				return true;
		}
		return false;
	}
	n = mh_cursors(ni, hdr, c);

	/* The common case: one key's chain, no wild entries to merge. */
	if (n == 1 && w == wild) {
		for (; c[0].at != c[0].head;
		     cursor_seek(&c[0], c[0].at->next, hdr)) {
			if (me_takes(ptlc_me_of_ilink(c[0].at), hdr, op_bits, m))
				return true;
		}
		return false;
	}
	for (;;) {
		struct ptlc_me *best = NULL, *me;
		u64 limit = ~0ULL;	/* above every position */
		int bi = 0;

		for (i = 0; i < n; i++) {
			if (c[i].at == c[i].head)
				continue;
			me = ptlc_me_of_ilink(c[i].at);
			if (!best || me->pos < best->pos) {
				best = me;
				bi = i;
			}
		}
		if (best)
			limit = best->pos;
		/*
		 * Wild entries ahead of the best exact candidate. Those without
		 * an MD are skipped before the position test: they cannot win,
		 * and this keeps their cost that of the plain walk.
		 */
		for (; w != wild; w = w->next) {
			me = ptlc_me_of_ilink(w);
			if (!me->md)
				continue;
			if (me->pos > limit)
				break;
			if (me_takes(me, hdr, op_bits, m))
				return true;
		}
		if (!best)
			return false;
		if (me_takes(best, hdr, op_bits, m))
			return true;
		cursor_seek(&c[bi], c[bi].at->next, hdr);
	}
}
