// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The portal table: one match list per portal index, searched head to tail
 * (spec 6.4, 8.1). Also keeps the PTLS_* and per-list length registers,
 * and the exact-match index that lets matching skip most of a long list
 * (see ptlc_mh in ptlc_internal.h and "Matching at scale" in
 * Documentation/decisions.md).
 */
#include "ptlc_internal.h"

#define POS_NONE	0ULL		/* below every position: list head */
#define POS_END		(~0ULL)		/* above every position */

static struct ptlc_me *me_of(struct ptlc_list *l)
{
	return PTLC_CONTAINER_OF(l, struct ptlc_me, link);
}

/*
 * Multiplicative hashing: the key's words folded with odd constants, the
 * bucket taken from the high bits of one more product (mask < 2^24).
 */
u32 ptlc_mh_bucket(const struct ptlc_mh *mh, ptl_pt_index_t pt,
		   ptl_process_id_t id, ptl_match_bits_t bits)
{
	u64 x = bits * 0x9e3779b97f4a7c15ULL;

	x ^= (((u64)id.nid << 32) | id.pid) * 0xc2b2ae3d27d4eb4fULL;
	x ^= (u64)pt * 0x165667b19e3779f9ULL;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (u32)(x >> 40) & mh->mask;
}

static u32 source_class(const struct ptlc_me *me)
{
	return (me->match_id.nid == PTL_NID_ANY ? 1U : 0U) |
	       (me->match_id.pid == PTL_PID_ANY ? 2U : 0U);
}

/*
 * The order of hash chains and wild lists: by portal, then by position.
 * Positions of different portals are unrelated (a relabel renumbers one
 * portal's entries), so a chain shared by two portals' keys must not
 * compare them.
 */
static bool ilist_before(const struct ptlc_me *a, const struct ptlc_me *b)
{
	if (a->pt_index != b->pt_index)
		return a->pt_index < b->pt_index;
	return a->pos < b->pos;
}

/*
 * Inserts me into a list kept in that order, walking from both ends at
 * once: O(1) at either end, else the distance to the nearer end.
 */
static void ilist_insert(struct ptlc_list *head, struct ptlc_me *me)
{
	struct ptlc_list *fwd = head->next, *back = head->prev;

	for (;;) {
		if (back == head || ilist_before(ptlc_me_of_ilink(back), me)) {
			ptlc_list_add_between(&me->ilink, back, back->next);
			return;
		}
		if (ilist_before(me, ptlc_me_of_ilink(fwd))) {
			ptlc_list_add_between(&me->ilink, fwd->prev, fwd);
			return;
		}
		back = back->prev;
		fwd = fwd->next;
	}
}

static void index_add(struct ptlc_ni *ni, struct ptlc_me *me)
{
	struct ptlc_mh *mh = &ni->mh;
	u32 b;

	me->hashed = false;
	if (me->ignore_bits) {
		ilist_insert(&ni->pt[me->pt_index].wild, me);
		return;
	}
	if (!mh->buckets) {
		mh->stranded++;
		ilist_insert(&ni->pt[me->pt_index].wild, me);
		return;
	}
	b = ptlc_mh_bucket(mh, me->pt_index, me->match_id, me->match_bits);
	ilist_insert(&mh->buckets[b], me);
	me->hashed = true;
	mh->count++;
	mh->nclass[source_class(me)]++;
	mh->classes |= 1U << source_class(me);
}

static void index_del(struct ptlc_ni *ni, struct ptlc_me *me)
{
	struct ptlc_mh *mh = &ni->mh;

	ptlc_list_del(&me->ilink);
	if (me->hashed) {
		u32 cls = source_class(me);

		mh->count--;
		if (--mh->nclass[cls] == 0)
			mh->classes &= ~(1U << cls);
	} else if (!me->ignore_bits) {
		mh->stranded--;
	}
	me->hashed = false;
}

/*
 * No free position between me's neighbours: renumber the smallest window
 * around me whose neighbours leave an average gap of at least its size
 * (+1), evenly. Order is unchanged, so the hash chains and wild lists
 * stay sorted. Amortized O(log^2 n) per insertion in the worst case; with
 * 2^32 spacing it does not happen in practice.
 */
static void relabel(struct ptlc_ni *ni, struct ptlc_list *head,
		    struct ptlc_me *me)
{
	struct ptlc_list *left = &me->link, *right = &me->link, *l;
	u64 lo, hi, step, k = 1, i;

	for (;;) {
		lo = left->prev == head ? POS_NONE : me_of(left->prev)->pos;
		hi = right->next == head ? POS_END : me_of(right->next)->pos;
		if ((hi - lo) / (k + 1) >= k + 1)
			break;
		if (left->prev == head && right->next == head)
			break;	/* whole list: 2^64 positions always suffice */
		if (left->prev != head) {
			left = left->prev;
			k++;
		}
		if (right->next != head) {
			right = right->next;
			k++;
		}
	}
	step = (hi - lo) / (k + 1);
	for (l = left, i = 1; i <= k; l = l->next, i++)
		me_of(l)->pos = lo + step * i;
	ni->mh.relabels += k;
}

/* Gives me (already linked between prev and next) a position. */
static void assign_pos(struct ptlc_ni *ni, struct ptlc_list *head,
		       struct ptlc_me *me)
{
	struct ptlc_list *prev = me->link.prev, *next = me->link.next;
	u64 lo = prev == head ? POS_NONE : me_of(prev)->pos;
	u64 hi = next == head ? POS_END : me_of(next)->pos;
	u64 gap = 1ULL << ni->mh.gap_shift;

	if (prev == head && next == head)
		me->pos = 1ULL << 63;
	else if (next == head && hi - lo > gap)
		me->pos = lo + gap;		/* appended */
	else if (prev == head && hi - lo > gap)
		me->pos = hi - gap;		/* prepended */
	else if (hi - lo >= 2)
		me->pos = lo + (hi - lo) / 2;
	else
		relabel(ni, head, me);
}

/* Links me between prev and next on its portal's list. */
int ptlc_pt_insert(struct ptlc_ni *ni, struct ptlc_me *me,
		   struct ptlc_list *prev, struct ptlc_list *next)
{
	struct ptlc_pt *pt = &ni->pt[me->pt_index];

	if (pt->len >= (u32)ni->limits.max_me_list)
		return PTL_ME_LIST_TOO_LONG;
	ptlc_list_add_between(&me->link, prev, next);
	assign_pos(ni, &pt->mes, me);
	index_add(ni, me);
	if (pt->len++ == 0) {
		ni->ptls_cur++;
		if (ni->ptls_cur > ni->ptls_max)
			ni->ptls_max = ni->ptls_cur;
	}
	if (pt->len > pt->max_len)
		pt->max_len = pt->len;
	return PTL_OK;
}

void ptlc_pt_remove(struct ptlc_ni *ni, struct ptlc_me *me)
{
	struct ptlc_pt *pt = &ni->pt[me->pt_index];

	index_del(ni, me);
	ptlc_list_del(&me->link);
	if (--pt->len == 0)
		ni->ptls_cur--;
}

/* The bucket count the hash should have now, or 0 if it is fine. */
static u32 mh_wanted(const struct ptlc_mh *mh)
{
	u32 n = mh->count + mh->stranded;
	u32 have = mh->buckets ? mh->mask + 1 : 0;
	u32 want = PTLC_MH_MIN_BUCKETS;

	if (n <= have || have >= PTLC_MH_MAX_BUCKETS || !n)
		return 0;
	while (want < n && want < PTLC_MH_MAX_BUCKETS)
		want <<= 1;
	return want > have ? want : 0;
}

/*
 * Moves every entry into buckets (want of them, initialized). Each new
 * bucket takes entries from one old bucket only (the new mask extends the
 * old), appended in the old chain's order, so chains stay sorted.
 * Stranded entries (exact, but queued on wild lists while there was no
 * table) move into the hash too. O(entries) under the lock, once per
 * doubling: amortized O(1) per ME.
 */
static void mh_rehash(struct ptlc_ni *ni, struct ptlc_list *buckets, u32 want)
{
	struct ptlc_mh *mh = &ni->mh;
	struct ptlc_list *old = mh->buckets, *l, *next;
	u32 i, nold = old ? mh->mask + 1 : 0;

	mh->buckets = buckets;
	mh->mask = want - 1;
	for (i = 0; i < nold; i++) {
		while (!ptlc_list_empty(&old[i])) {
			struct ptlc_me *me = ptlc_me_of_ilink(old[i].next);
			u32 b = ptlc_mh_bucket(mh, me->pt_index, me->match_id,
					       me->match_bits);

			ptlc_list_del(&me->ilink);
			ptlc_list_add_between(&me->ilink, buckets[b].prev,
					      &buckets[b]);
		}
	}
	for (i = 0; mh->stranded && i <= (u32)ni->limits.max_pt_index; i++) {
		struct ptlc_list *wild = &ni->pt[i].wild;

		for (l = wild->next; l != wild; l = next) {
			struct ptlc_me *me = ptlc_me_of_ilink(l);

			next = l->next;
			if (me->ignore_bits)
				continue;
			index_del(ni, me);
			index_add(ni, me);
		}
	}
}

void ptlc_mh_grow(struct ptlc_ni *ni)
{
	struct ptlc_list *buckets, *spare;
	u32 want, i, nspare;

	ptl_lock(&ni->lock);
	want = mh_wanted(&ni->mh);
	ptl_unlock(&ni->lock);
	if (!want)
		return;
	buckets = ptlc_alloc(ni, sizeof(*buckets) * want);
	if (!buckets)
		return;		/* matching works without: longer chains */
	for (i = 0; i < want; i++)
		ptlc_list_init(&buckets[i]);
	ptl_lock(&ni->lock);
	if (mh_wanted(&ni->mh) == want) {
		spare = ni->mh.buckets;
		nspare = spare ? ni->mh.mask + 1 : 0;
		mh_rehash(ni, buckets, want);
	} else {
		spare = buckets;	/* someone else grew it meanwhile */
		nspare = want;
	}
	ptl_unlock(&ni->lock);
	ptlc_free(ni, spare, sizeof(*spare) * nspare);
}

/* At NI teardown, after every ME is gone. */
void ptlc_mh_destroy(struct ptlc_ni *ni)
{
	struct ptlc_mh *mh = &ni->mh;

	PTL_WARN_ON(mh->count || mh->stranded);
	if (mh->buckets)
		ptlc_free(ni, mh->buckets,
			  sizeof(*mh->buckets) * (mh->mask + 1));
	mh->buckets = NULL;
}

/*
 * PtlMEAttachAny picks the lowest portal whose match list is empty. Unlike
 * the Sandia reference (never used since init), an index becomes free again
 * when its list empties, so long-running clients do not run out.
 */
int ptlc_pt_first_free(struct ptlc_ni *ni, ptl_pt_index_t *index)
{
	u32 i;

	for (i = 0; i <= (u32)ni->limits.max_pt_index; i++) {
		if (ptlc_list_empty(&ni->pt[i].mes)) {
			*index = i;
			return PTL_OK;
		}
	}
	return PTL_PT_FULL;
}
