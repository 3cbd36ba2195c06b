// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Memory descriptors (spec 6.5, 8.3, 8.4, 8.7, 8.13): creation on a match
 * entry or free-floating, unlink (explicit and automatic), update, and the
 * walk over an MD's segments that the glue uses to move data.
 */
#include "ptlc_internal.h"

struct ptlc_md *ptlc_md_lookup(struct ptlc_ni *ni, ptl_handle_md_t h)
{
	return ptlc_htab_lookup(&ni->mds, h);
}

ptl_handle_md_t ptlc_md_handle(const struct ptlc_ni *ni,
			       const struct ptlc_md *md)
{
	return ptlc_htab_handle(&ni->mds, md->index);
}

void *ptlc_md_mem(const struct ptlc_md *md)
{
	return md->mem;
}

bool ptlc_md_active(const struct ptlc_md *md)
{
	return md->desc.threshold != 0 && !md->maxed;
}

void ptlc_md_consume_threshold(struct ptlc_md *md)
{
	if (md->desc.threshold > 0)
		md->desc.threshold--;
}

/* The MD as events and PtlMDUpdate show it: live threshold, live EQ. */
void ptlc_md_snapshot(struct ptlc_ni *ni, const struct ptlc_md *md,
		      ptl_md_t *out)
{
	*out = md->desc;
	if (!ptlc_eq_lookup(ni, md->desc.eq_handle))
		out->eq_handle = PTL_EQ_NONE;
}

/* ---- creation ---- */

/* Bytes of an iovec MD's segment array (one spare: never a 0-byte alloc). */
static size_t segs_bytes(unsigned int nsegs)
{
	return sizeof(struct ptlc_seg) * ((size_t)nsegs + 1);
}

static void md_set_desc(struct ptlc_md *md, const ptl_md_t *d)
{
	md->desc = *d;
	/* A threshold <= 0 other than INF makes an inactive MD (8.3). */
	if (md->desc.threshold < 0 && md->desc.threshold != PTL_MD_THRESH_INF)
		md->desc.threshold = 0;
}

/* Checks what needs no lock and builds the MD's segment list. */
static int md_prepare(struct ptlc_ni *ni, const struct ptlc_md_spec *spec,
		      struct ptlc_md **out)
{
	const ptl_md_t *d = &spec->desc;
	struct ptlc_md *md;
	u64 total = 0;
	unsigned int i;

	if (d->options & ~(unsigned int)PTL_MD_OPTIONS_ALL)
		return PTL_MD_ILLEGAL;
	if (d->options & PTL_MD_IOVEC) {
		if (spec->nsegs != d->length ||
		    spec->nsegs > (unsigned int)ni->limits.max_md_iovecs ||
		    (spec->nsegs && !spec->segs))
			return PTL_MD_ILLEGAL;
		for (i = 0; i < spec->nsegs; i++) {
			if (spec->segs[i].len > PTL_WIRE_MAX_LENGTH - total)
				return PTL_MD_ILLEGAL;
			total += spec->segs[i].len;
		}
	} else if (d->length > PTL_WIRE_MAX_LENGTH) {
		return PTL_MD_ILLEGAL;
	}

	md = ptlc_alloc(ni, sizeof(*md));
	if (!md)
		return PTL_NO_SPACE;
	if (d->options & PTL_MD_IOVEC) {
		md->segs = ptlc_alloc(ni, segs_bytes(spec->nsegs));
		if (!md->segs) {
			ptlc_free(ni, md, sizeof(*md));
			return PTL_NO_SPACE;
		}
		if (spec->nsegs)
			ptl_memcpy(md->segs, spec->segs,
				   sizeof(*md->segs) * spec->nsegs);
		md->nsegs = spec->nsegs;
		md->length = total;
	} else {
		md->inline_seg.addr = (u64)(uintptr_t)d->start;
		md->inline_seg.len = d->length;
		md->segs = &md->inline_seg;
		md->nsegs = 1;
		md->length = d->length;
	}
	md_set_desc(md, d);
	md->mem = spec->mem;
	*out = md;
	return PTL_OK;
}

/* The segments of an iovec MD and their allocation (never empty). */
static void free_segs(struct ptlc_ni *ni, struct ptlc_seg *segs,
		      unsigned int nsegs)
{
	ptlc_free(ni, segs, segs_bytes(nsegs));
}

static void md_free(struct ptlc_ni *ni, struct ptlc_md *md)
{
	if (md->segs != &md->inline_seg)
		free_segs(ni, md->segs, md->nsegs);
	ptlc_free(ni, md, sizeof(*md));
}

/* An EQ handle for an MD: none, or a live EQ of this NI. */
static int md_check_eq(struct ptlc_ni *ni, ptl_handle_eq_t eq)
{
	int slot = ptlc_handle_slot(eq);

	if (eq == PTL_EQ_NONE)
		return PTL_OK;
	if (slot >= 0 && slot != (int)ni->slot &&
	    ((eq >> PTLC_H_TYPE_SHIFT) & PTLC_H_TYPE_MASK) == PTLC_OBJ_EQ)
		return PTL_MD_ILLEGAL;
	return ptlc_eq_lookup(ni, eq) ? PTL_OK : PTL_EQ_INVALID;
}

/*
 * Under the lock: gives a prepared MD a handle and attaches it to @me
 * (NULL: free-floating). PTL_FAIL: the handle table needs the chunk
 * *spare did not hold.
 */
static int md_install_locked(struct ptlc_ni *ni, struct ptlc_md *md,
			     struct ptlc_me *me, void **spare,
			     ptl_handle_md_t *out)
{
	int rc = md_check_eq(ni, md->desc.eq_handle);

	if (rc)
		return rc;
	rc = ptlc_htab_insert(&ni->mds, md, spare, &md->index);
	if (rc)
		return rc;
	md->gen = ptlc_htab_gen(&ni->mds, md->index);
	md->me = me;
	if (me)
		me->md = md;
	*out = ptlc_md_handle(ni, md);
	return PTL_OK;
}

/*
 * Adds a prepared MD to the NI, attached to the ME named by me_h or, if
 * me_h is PTL_INVALID_HANDLE and bind is set, free-floating.
 */
static int md_install(struct ptlc_ni *ni, struct ptlc_md *md, bool bind,
		      ptl_handle_me_t me_h, ptl_handle_md_t *out)
{
	struct ptlc_me *me = NULL;
	void *spare = NULL;
	int rc;

	for (;;) {
		ptl_lock(&ni->lock);
		if (!bind) {
			me = ptlc_htab_lookup(&ni->mes, me_h);
			rc = !me ? PTL_ME_INVALID :
			     me->md ? PTL_ME_IN_USE : PTL_OK;
			if (rc)
				break;
		}
		rc = md_install_locked(ni, md, me, &spare, out);
		if (rc != PTL_FAIL)
			break;
		ptl_unlock(&ni->lock);
		spare = ptlc_chunk_alloc(ni);
		if (!spare)
			return PTL_NO_SPACE;
	}
	ptl_unlock(&ni->lock);
	ptlc_chunk_free(ni, spare);
	return rc;
}

static int md_create(struct ptlc_ni *ni, bool bind, ptl_handle_me_t me_h,
		     const struct ptlc_md_spec *spec, ptl_unlink_t unlink_op,
		     ptl_handle_md_t *out)
{
	struct ptlc_md *md;
	int rc;

	rc = md_prepare(ni, spec, &md);
	if (rc)
		return rc;
	md->unlink_op = unlink_op;
	rc = md_install(ni, md, bind, me_h, out);
	if (rc) {
		md->mem = NULL;		/* still the glue's */
		md_free(ni, md);
	}
	return rc;
}

int ptlc_md_attach(struct ptlc_ni *ni, ptl_handle_me_t me,
		   const struct ptlc_md_spec *spec, ptl_unlink_t unlink_op,
		   ptl_handle_md_t *out)
{
	return md_create(ni, false, me, spec, unlink_op, out);
}

int ptlc_md_bind(struct ptlc_ni *ni, const struct ptlc_md_spec *spec,
		 ptl_unlink_t unlink_op, ptl_handle_md_t *out)
{
	return md_create(ni, true, PTL_INVALID_HANDLE, spec, unlink_op, out);
}

/* ---- destruction ---- */

static void release_mem(struct ptlc_ni *ni, void *mem)
{
	if (mem && ni->ops && ni->ops->md_release)
		ni->ops->md_release(ni->glue, mem);
}

/* The ME coupling of 8.4: a PTL_UNLINK ME goes with its MD. */
void ptlc_md_destroy(struct ptlc_ni *ni, struct ptlc_md *md)
{
	struct ptlc_me *me = md->me;

	if (me) {
		me->md = NULL;
		if (me->unlink == PTL_UNLINK)
			ptlc_me_destroy(ni, me);
	}
	ptlc_htab_remove(&ni->mds, md->index);
	release_mem(ni, md->mem);
	md_free(ni, md);
}

int ptlc_md_unlink(struct ptlc_ni *ni, ptl_handle_md_t h)
{
	struct ptlc_md *md;
	int rc = PTL_OK;

	ptl_lock(&ni->lock);
	md = ptlc_md_lookup(ni, h);
	if (!md)
		rc = PTL_MD_INVALID;
	else if (md->pending)
		rc = PTL_MD_IN_USE;
	else
		ptlc_md_destroy(ni, md);	/* explicit: no UNLINK event */
	ptl_unlock(&ni->lock);
	return rc;
}

/*
 * Auto-unlink (8.3): a PTL_UNLINK MD that use made inactive goes once its
 * last operation is over. The UNLINK event carries the fields of the
 * operation that caused it, linked to that operation's last event. It is
 * skipped when no event can be posted; the unlink itself never is.
 */
void ptlc_md_maybe_auto_unlink(struct ptlc_ni *ni, struct ptlc_md *md,
			       const ptl_event_t *cause, ptl_seq_t link)
{
	ptl_event_t ev;
	ptl_seq_t seq;

	if (md->unlink_op != PTL_UNLINK || ptlc_md_active(md) || md->pending)
		return;
	if (cause) {
		ev = *cause;
		ev.type = PTL_EVENT_UNLINK;
		ev.link = link;
		ptlc_event_post_other(ni, md, &ev, &seq);
	}
	ptlc_md_destroy(ni, md);
}

void ptlc_md_release_ref(struct ptlc_ni *ni, struct ptlc_md *md,
			 const ptl_event_t *cause, ptl_seq_t link)
{
	if (PTL_WARN_ON(!md->pending))
		return;
	md->pending--;
	ptlc_md_maybe_auto_unlink(ni, md, cause, link);
}

/* ---- update ---- */

static void copy_old(struct ptlc_ni *ni, const struct ptlc_md *md,
		     ptl_md_t *old_md, struct ptlc_seg *old_segs,
		     unsigned int cap, unsigned int *old_nsegs)
{
	unsigned int n = md->nsegs < cap ? md->nsegs : cap;

	if (old_md)
		ptlc_md_snapshot(ni, md, old_md);
	if (old_nsegs)
		*old_nsegs = md->nsegs;
	if (old_segs && n)
		ptl_memcpy(old_segs, md->segs, sizeof(*old_segs) * n);
}

/*
 * "Empty" of 8.7, with the reader's position given by the caller: nothing
 * written past it, no END promised. Lock held.
 */
static int eq_empty(struct ptlc_ni *ni, ptl_handle_eq_t eq_h,
		    ptl_seq_t consumer_seq)
{
	struct ptlc_eq *eq;

	if (eq_h == PTL_EQ_NONE)
		return PTL_OK;
	eq = ptlc_eq_lookup(ni, eq_h);
	if (!eq)
		return PTL_EQ_INVALID;
	if (eq->next_seq != consumer_seq || eq->promised)
		return PTL_MD_NO_UPDATE;
	return PTL_OK;
}

static int update_allowed(struct ptlc_ni *ni, const struct ptlc_md *md,
			  ptl_handle_eq_t eq_h, ptl_seq_t consumer_seq)
{
	int rc = eq_empty(ni, eq_h, consumer_seq);

	if (rc)
		return rc;
	/* The glue is moving data through the segments being replaced. */
	if (md->pending)
		return PTL_MD_NO_UPDATE;
	return PTL_OK;
}

/*
 * Moves the new description into md. fresh takes what md owned (its
 * segments and mem), to be freed with it.
 */
static void update_apply(struct ptlc_md *md, struct ptlc_md *fresh)
{
	struct ptlc_md next = *fresh;

	fresh->segs = md->segs == &md->inline_seg ? &fresh->inline_seg :
						      md->segs;
	fresh->inline_seg = md->inline_seg;
	fresh->nsegs = md->nsegs;
	fresh->mem = md->mem;

	md->desc = next.desc;
	md->length = next.length;
	md->nsegs = next.nsegs;
	md->mem = next.mem;
	md->inline_seg = next.inline_seg;
	md->segs = next.segs == &fresh->inline_seg ? &md->inline_seg :
						     next.segs;
	md->local_offset = 0;
	md->maxed = false;
}

/*
 * A reuse_mem update: may @md keep its mem for @d? Only a plain MD over
 * the same bytes, and only if the glue says the memory still is what the
 * process has there.
 */
static bool mem_kept(struct ptlc_ni *ni, const struct ptlc_md *md,
		     const ptl_md_t *d)
{
	if ((md->desc.options | d->options) & PTL_MD_IOVEC)
		return false;
	if (md->desc.start != d->start || md->desc.length != d->length)
		return false;
	return md->mem && ni->ops && ni->ops->mem_reusable &&
	       ni->ops->mem_reusable(ni->glue, md->mem, d);
}

/*
 * The reuse_mem update (put_pp's MDUpdate before every put), NI lock held:
 * the region stays, so only the description changes, with nothing
 * allocated or released.
 */
static int update_in_place(struct ptlc_ni *ni, struct ptlc_md *md,
			   const ptl_md_t *d)
{
	if (!mem_kept(ni, md, d))
		return PTLC_MD_NEEDS_MEM;
	md_set_desc(md, d);
	md->local_offset = 0;
	md->maxed = false;
	return PTL_OK;
}

int ptlc_md_update(struct ptlc_ni *ni, ptl_handle_md_t h, ptl_md_t *old_md,
		   struct ptlc_seg *old_segs, unsigned int old_segs_cap,
		   unsigned int *old_nsegs,
		   const struct ptlc_md_spec *new_spec, ptl_handle_eq_t eq,
		   ptl_seq_t eq_consumer_seq)
{
	struct ptlc_md *fresh = NULL, *md;
	void *old_mem = NULL;
	int rc;

	if (new_spec && new_spec->reuse_mem) {
		if (new_spec->desc.options & ~(unsigned int)PTL_MD_OPTIONS_ALL)
			return PTL_MD_ILLEGAL;
	} else if (new_spec) {
		rc = md_prepare(ni, new_spec, &fresh);
		if (rc)
			return rc;
	}
	ptl_lock(&ni->lock);
	md = ptlc_md_lookup(ni, h);
	if (!md) {
		rc = PTL_MD_INVALID;
		goto out;
	}
	copy_old(ni, md, old_md, old_segs, old_segs_cap, old_nsegs);
	if (!new_spec) {
		rc = PTL_OK;
		goto out;
	}
	rc = md_check_eq(ni, new_spec->desc.eq_handle);
	if (!rc)
		rc = update_allowed(ni, md, eq, eq_consumer_seq);
	if (rc)
		goto out;
	if (new_spec->reuse_mem) {
		rc = update_in_place(ni, md, &new_spec->desc);
	} else {
		update_apply(md, fresh);
		old_mem = fresh->mem;
	}
out:
	ptl_unlock(&ni->lock);
	if (fresh) {
		/* On failure the glue keeps the new mem; else it is md's. */
		fresh->mem = NULL;
		md_free(ni, fresh);
	}
	if (old_mem)
		release_mem(ni, old_mem);
	return rc;
}

/* Under the lock: the ME, then its MD, if the test EQ is empty; or nothing. */
static int me_md_install(struct ptlc_ni *ni, const struct ptlc_post_args *p,
			 struct ptlc_me *me, struct ptlc_md *md,
			 void **me_spare, void **md_spare,
			 ptl_handle_me_t *me_out, ptl_handle_md_t *md_out)
{
	int rc = eq_empty(ni, p->test_eq, p->consumer_seq);

	if (rc)
		return rc;
	rc = ptlc_me_install_beside(ni, me, p->base, p->pos, me_spare);
	if (rc)
		return rc;
	rc = md_install_locked(ni, md, me, md_spare, md_out);
	if (rc) {
		ptlc_me_uninstall(ni, me);
		return rc;
	}
	*me_out = ptlc_htab_handle(&ni->mes, me->index);
	return PTL_OK;
}

/*
 * An ME and its MD in one step, both under the lock only if the test EQ
 * is empty: the race-free post of seed 004 (insert, attach inactive, arm
 * with PtlMDUpdate) without the two calls in between. Everything that
 * can fail for want of memory is allocated first; a handle table that
 * needs a chunk gets one for each table, unlocked, and the post is tried
 * again (nothing was visible meanwhile).
 */
int ptlc_me_md_post(struct ptlc_ni *ni, const struct ptlc_post_args *p,
		    const struct ptlc_md_spec *spec, ptl_handle_me_t *me_out,
		    ptl_handle_md_t *md_out)
{
	void *me_spare = NULL, *md_spare = NULL;
	struct ptlc_me *me;
	struct ptlc_md *md;
	int rc;

	rc = md_prepare(ni, spec, &md);
	if (rc)
		return rc;
	md->unlink_op = p->md_unlink;
	me = ptlc_me_new(ni, p->match_id, p->match_bits, p->ignore_bits,
			 p->me_unlink);
	if (!me) {
		rc = PTL_NO_SPACE;
		goto out;
	}
	for (;;) {
		ptl_lock(&ni->lock);
		rc = me_md_install(ni, p, me, md, &me_spare, &md_spare, me_out,
				   md_out);
		if (rc != PTL_FAIL)
			break;
		ptl_unlock(&ni->lock);
		if (!me_spare)
			me_spare = ptlc_chunk_alloc(ni);
		if (!md_spare)
			md_spare = ptlc_chunk_alloc(ni);
		if (!me_spare || !md_spare) {
			rc = PTL_NO_SPACE;
			goto out;
		}
	}
	ptl_unlock(&ni->lock);
out:
	ptlc_chunk_free(ni, me_spare);
	ptlc_chunk_free(ni, md_spare);
	if (rc == PTL_OK) {
		ptlc_mh_grow(ni);
		return PTL_OK;
	}
	if (me)
		ptlc_free(ni, me, sizeof(*me));
	md->mem = NULL;		/* still the glue's */
	md_free(ni, md);
	return rc;
}

/* ---- data walk ---- */

void ptlc_md_iter_init(struct ptlc_md_iter *it, const struct ptlc_md *md,
		       u64 offset, u64 length)
{
	it->segs = md->segs;
	it->nsegs = md->nsegs;
	it->seg = 0;
	it->left = length;
	/* Zero-length segments are skipped whatever the offset. */
	while (it->seg < it->nsegs && offset >= it->segs[it->seg].len) {
		offset -= it->segs[it->seg].len;
		it->seg++;
	}
	it->seg_off = offset;
}

bool ptlc_md_iter_next(struct ptlc_md_iter *it, struct ptlc_chunk *chunk)
{
	u64 avail;

	while (it->left) {
		if (PTL_WARN_ON(it->seg >= it->nsegs))
			return false;
		avail = it->segs[it->seg].len - it->seg_off;
		if (!avail || it->seg_off > it->segs[it->seg].len) {
			it->seg++;
			it->seg_off = 0;
			continue;
		}
		chunk->seg = it->seg;
		chunk->seg_off = it->seg_off;
		chunk->addr = it->segs[it->seg].addr + it->seg_off;
		chunk->len = avail < it->left ? avail : it->left;
		it->seg_off += chunk->len;
		it->left -= chunk->len;
		return true;
	}
	return false;
}
