// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Match entries (spec 6.4): creation at either end of a portal's list or
 * next to another entry, and unlink.
 */
#include "ptlc_internal.h"

struct me_params {
	ptl_process_id_t match_id;
	ptl_match_bits_t match_bits;
	ptl_match_bits_t ignore_bits;
	ptl_unlink_t unlink;
};

/* Where a new entry goes, decided under the lock. */
enum me_place { PLACE_PORTAL, PLACE_PORTAL_ANY, PLACE_BESIDE };

struct me_where {
	enum me_place place;
	ptl_pt_index_t pt_index;	/* in/out for PLACE_PORTAL_ANY */
	ptl_handle_me_t base;
	ptl_ins_pos_t pos;
};

/* Links me according to w; returns a Portals code. */
static int me_link(struct ptlc_ni *ni, struct ptlc_me *me,
		   struct me_where *w)
{
	struct ptlc_list *head, *at;
	struct ptlc_me *base;
	int rc;

	switch (w->place) {
	case PLACE_PORTAL_ANY:
		rc = ptlc_pt_first_free(ni, &w->pt_index);
		if (rc)
			return rc;
		fallthrough;
	case PLACE_PORTAL:
		me->pt_index = w->pt_index;
		head = &ni->pt[w->pt_index].mes;
		if (w->pos == PTL_INS_BEFORE)
			return ptlc_pt_insert(ni, me, head, head->next);
		return ptlc_pt_insert(ni, me, head->prev, head);
	default:
		base = ptlc_htab_lookup(&ni->mes, w->base);
		if (!base)
			return PTL_ME_INVALID;
		me->pt_index = base->pt_index;
		at = &base->link;
		if (w->pos == PTL_INS_BEFORE)
			return ptlc_pt_insert(ni, me, at->prev, at);
		return ptlc_pt_insert(ni, me, at, at->next);
	}
}

static struct ptlc_me *me_new(struct ptlc_ni *ni, const struct me_params *p)
{
	struct ptlc_me *me = ptlc_alloc(ni, sizeof(*me));

	if (!me)
		return NULL;
	me->match_id = p->match_id;
	me->match_bits = p->match_bits;
	me->ignore_bits = p->ignore_bits;
	me->unlink = p->unlink;
	ptlc_list_init(&me->link);
	ptlc_list_init(&me->ilink);
	return me;
}

/*
 * Under the lock: links @me where @w says and gives it a handle. PTL_FAIL:
 * the handle table needs a chunk (*spare was NULL). On any error @me is
 * linked nowhere.
 */
static int me_install(struct ptlc_ni *ni, struct ptlc_me *me,
		      struct me_where *w, void **spare)
{
	int rc = me_link(ni, me, w);

	if (rc) {
		if (!ptlc_list_empty(&me->link))
			ptlc_pt_remove(ni, me);
		return rc;
	}
	rc = ptlc_htab_insert(&ni->mes, me, spare, &me->index);
	if (rc)
		ptlc_pt_remove(ni, me);
	return rc;
}

/* Allocation happens before the lock; a table chunk on demand. */
static int me_create(struct ptlc_ni *ni, const struct me_params *p,
		     struct me_where *w, ptl_handle_me_t *out)
{
	struct ptlc_me *me = me_new(ni, p);
	void *spare = NULL;
	int rc;

	if (!me)
		return PTL_NO_SPACE;
	for (;;) {
		ptl_lock(&ni->lock);
		rc = me_install(ni, me, w, &spare);
		if (rc != PTL_FAIL)
			break;
		/* Needs a new table chunk: allocate it unlocked, retry. */
		ptl_unlock(&ni->lock);
		spare = ptlc_chunk_alloc(ni);
		if (!spare) {
			ptlc_free(ni, me, sizeof(*me));
			return PTL_NO_SPACE;
		}
	}
	if (rc == PTL_OK)
		*out = ptlc_htab_handle(&ni->mes, me->index);
	ptl_unlock(&ni->lock);
	ptlc_chunk_free(ni, spare);
	if (rc)
		ptlc_free(ni, me, sizeof(*me));
	else
		ptlc_mh_grow(ni);
	return rc;
}

struct ptlc_me *ptlc_me_new(struct ptlc_ni *ni, ptl_process_id_t match_id,
			    ptl_match_bits_t match_bits,
			    ptl_match_bits_t ignore_bits, ptl_unlink_t unlink)
{
	struct me_params p = { match_id, match_bits, ignore_bits, unlink };

	return me_new(ni, &p);
}

int ptlc_me_install_beside(struct ptlc_ni *ni, struct ptlc_me *me,
			   ptl_handle_me_t base, ptl_ins_pos_t pos,
			   void **spare)
{
	struct me_where w = { .place = PLACE_BESIDE, .base = base,
			      .pos = pos };

	return me_install(ni, me, &w, spare);
}

void ptlc_me_uninstall(struct ptlc_ni *ni, struct ptlc_me *me)
{
	ptlc_pt_remove(ni, me);
	ptlc_htab_remove(&ni->mes, me->index);
}

int ptlc_me_attach(struct ptlc_ni *ni, ptl_pt_index_t pt_index,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *out)
{
	struct me_params p = { match_id, match_bits, ignore_bits, unlink };
	struct me_where w = { .place = PLACE_PORTAL, .pt_index = pt_index,
			      .pos = pos };

	if (pt_index > (u32)ni->limits.max_pt_index)
		return PTL_PT_INDEX_INVALID;
	return me_create(ni, &p, &w, out);
}

int ptlc_me_attach_any(struct ptlc_ni *ni, ptl_pt_index_t *pt_index,
		       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		       ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		       ptl_handle_me_t *out)
{
	struct me_params p = { match_id, match_bits, ignore_bits, unlink };
	struct me_where w = { .place = PLACE_PORTAL_ANY,
			      .pos = PTL_INS_AFTER };
	int rc;

	rc = me_create(ni, &p, &w, out);
	if (rc == PTL_OK)
		*pt_index = w.pt_index;
	return rc;
}

int ptlc_me_insert(struct ptlc_ni *ni, ptl_handle_me_t base,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *out)
{
	struct me_params p = { match_id, match_bits, ignore_bits, unlink };
	struct me_where w = { .place = PLACE_BESIDE, .base = base,
			      .pos = pos };

	return me_create(ni, &p, &w, out);
}

/* Frees an ME (and nothing else: its MD must be gone already). */
void ptlc_me_destroy(struct ptlc_ni *ni, struct ptlc_me *me)
{
	PTL_WARN_ON(me->md);
	ptlc_pt_remove(ni, me);
	ptlc_htab_remove(&ni->mes, me->index);
	ptlc_free(ni, me, sizeof(*me));
}

/*
 * PtlMEUnlink always releases the attached MD (contract 13), unless an
 * operation still uses it.
 */
int ptlc_me_unlink(struct ptlc_ni *ni, ptl_handle_me_t h)
{
	struct ptlc_me *me;
	int rc = PTL_OK;

	ptl_lock(&ni->lock);
	me = ptlc_htab_lookup(&ni->mes, h);
	if (!me) {
		rc = PTL_ME_INVALID;
	} else if (me->md && me->md->pending) {
		rc = PTL_ME_IN_USE;
	} else {
		if (me->md) {
			/* Keep the ME: we destroy it ourselves right after. */
			me->unlink = PTL_RETAIN;
			ptlc_md_destroy(ni, me->md);
		}
		ptlc_me_destroy(ni, me);
	}
	ptl_unlock(&ni->lock);
	return rc;
}
