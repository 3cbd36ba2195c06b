// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Network interface state: limits negotiation, creation and teardown,
 * identity and status registers (spec 6.2, 8.12).
 */
#include "ptlc_internal.h"

/* Every allocation of every NI, so tests can prove nothing leaks. */
static ptl_atomic_t ptlc_objects;
/* Seeds NI handle and slot generations so incarnations differ. */
static ptl_atomic_t ptlc_incarnations;

static bool charge(const struct ptlc_ops *ops, void *glue, long bytes)
{
	return !ops || !ops->charge || ops->charge(glue, bytes);
}

/* Charged first, so a user at its limit cannot make the kernel allocate. */
static void *alloc_charged(const struct ptlc_ops *ops, void *glue,
			   size_t size)
{
	void *p;

	if (!charge(ops, glue, (long)size))
		return NULL;
	p = ptl_zalloc(size, PTL_GFP_SLEEP);
	if (!p) {
		charge(ops, glue, -(long)size);
		return NULL;
	}
	ptl_atomic_inc(&ptlc_objects);
	return p;
}

static void free_charged(const struct ptlc_ops *ops, void *glue,
			 const void *p, size_t size)
{
	if (!p)
		return;
	ptl_atomic_dec(&ptlc_objects);
	ptl_free(p);
	charge(ops, glue, -(long)size);
}

void *ptlc_alloc(struct ptlc_ni *ni, size_t size)
{
	return alloc_charged(ni->ops, ni->glue, size);
}

void ptlc_free(struct ptlc_ni *ni, const void *p, size_t size)
{
	free_charged(ni->ops, ni->glue, p, size);
}

long ptlc_live_objects(void)
{
	return ptl_atomic_read(&ptlc_objects);
}

static const ptl_ni_limits_t ptlc_caps = {
	.max_mes = PTLC_CAP_OBJECTS,
	.max_mds = PTLC_CAP_OBJECTS,
	.max_eqs = PTLC_CAP_OBJECTS,
	.max_ac_index = PTLC_CAP_AC_INDEX,
	.max_pt_index = PTLC_CAP_PT_INDEX,
	.max_md_iovecs = PTLC_CAP_MD_IOVECS,
	.max_me_list = PTLC_CAP_ME_LIST,
	.max_getput_md = PTLC_CAP_GETPUT_MD,
};

/* A negative wish means "no wish"; otherwise the smaller value wins. */
static int limit_min(int cap, int desired)
{
	return desired >= 0 && desired < cap ? desired : cap;
}

static void negotiate_limits(const ptl_ni_limits_t *d, ptl_ni_limits_t *a)
{
	*a = ptlc_caps;
	if (!d)
		return;
	a->max_mes = limit_min(a->max_mes, d->max_mes);
	a->max_mds = limit_min(a->max_mds, d->max_mds);
	a->max_eqs = limit_min(a->max_eqs, d->max_eqs);
	a->max_ac_index = limit_min(a->max_ac_index, d->max_ac_index);
	a->max_pt_index = limit_min(a->max_pt_index, d->max_pt_index);
	a->max_md_iovecs = limit_min(a->max_md_iovecs, d->max_md_iovecs);
	a->max_me_list = limit_min(a->max_me_list, d->max_me_list);
	a->max_getput_md = limit_min(a->max_getput_md, d->max_getput_md);
}

static u32 next_incarnation(void)
{
	ptl_atomic_inc(&ptlc_incarnations);
	/* A large odd stride spreads consecutive NIs' generations apart. */
	return (u32)ptl_atomic_read(&ptlc_incarnations) * 0x9e3779b1U;
}

static void init_tables(struct ptlc_ni *ni, u32 seed)
{
	u32 i;

	ptlc_htab_init(&ni->mes, PTLC_OBJ_ME, ni->slot, ni->limits.max_mes,
		       seed);
	ptlc_htab_init(&ni->mds, PTLC_OBJ_MD, ni->slot, ni->limits.max_mds,
		       seed);
	ptlc_htab_init(&ni->eqs, PTLC_OBJ_EQ, ni->slot, ni->limits.max_eqs,
		       seed);
	for (i = 0; i <= (u32)ni->limits.max_pt_index; i++) {
		ptlc_list_init(&ni->pt[i].mes);
		ptlc_list_init(&ni->pt[i].wild);
	}
	ni->mh.gap_shift = PTLC_POS_GAP_SHIFT;
	ptlc_acl_init(ni);
}

static size_t pt_bytes(const struct ptlc_ni *ni)
{
	return sizeof(*ni->pt) * ((size_t)ni->limits.max_pt_index + 1);
}

static size_t acl_bytes(const struct ptlc_ni *ni)
{
	return sizeof(*ni->acl) * ((size_t)ni->limits.max_ac_index + 1);
}

int ptlc_ni_create(const struct ptlc_ni_config *cfg, struct ptlc_ni **out)
{
	struct ptlc_ni *ni;
	u32 seed;

	if (cfg->slot >= PTLC_MAX_NI_SLOTS)
		return PTL_FAIL;
	ni = alloc_charged(cfg->ops, cfg->glue, sizeof(*ni));
	if (!ni)
		return PTL_NO_SPACE;
	ni->ops = cfg->ops;
	ni->glue = cfg->glue;
	negotiate_limits(cfg->desired, &ni->limits);
	ni->pt = ptlc_alloc(ni, pt_bytes(ni));
	ni->acl = ptlc_alloc(ni, acl_bytes(ni));
	if (!ni->pt || !ni->acl) {
		ptlc_free(ni, ni->pt, pt_bytes(ni));
		ptlc_free(ni, ni->acl, acl_bytes(ni));
		ptlc_free(ni, ni, sizeof(*ni));
		return PTL_NO_SPACE;
	}
	ptl_lock_init(&ni->lock);
	ni->slot = cfg->slot;
	ni->nid = cfg->nid;
	ni->pid = cfg->pid;
	ni->uid = cfg->uid;
	ni->jid = cfg->jid;
	seed = next_incarnation();
	ni->gen = (seed >> 7) & PTLC_H_GEN_MASK;
	if (!ni->gen)
		ni->gen = 1;
	init_tables(ni, seed);
	*out = ni;
	return PTL_OK;
}

void ptlc_ni_destroy(struct ptlc_ni *ni)
{
	void *obj;
	u32 pos;

	ptl_lock(&ni->lock);
	/* MDs first: destroying one may take its ME along. */
	pos = 0;
	while ((obj = ptlc_htab_next(&ni->mds, &pos)))
		ptlc_md_destroy(ni, obj);
	pos = 0;
	while ((obj = ptlc_htab_next(&ni->mes, &pos)))
		ptlc_me_destroy(ni, obj);
	pos = 0;
	while ((obj = ptlc_htab_next(&ni->eqs, &pos)))
		ptlc_eq_destroy(ni, obj);
	ptl_unlock(&ni->lock);

	ptlc_mh_destroy(ni);
	ptlc_htab_destroy(ni, &ni->mes);
	ptlc_htab_destroy(ni, &ni->mds);
	ptlc_htab_destroy(ni, &ni->eqs);
	ptl_lock_destroy(&ni->lock);
	ptlc_free(ni, ni->pt, pt_bytes(ni));
	ptlc_free(ni, ni->acl, acl_bytes(ni));
	ptlc_free(ni, ni, sizeof(*ni));
}

ptl_handle_ni_t ptlc_ni_handle(const struct ptlc_ni *ni)
{
	return ptlc_handle_make(PTLC_OBJ_NI, ni->slot, ni->gen, 0);
}

void ptlc_ni_limits(const struct ptlc_ni *ni, ptl_ni_limits_t *actual)
{
	*actual = ni->limits;
}

void ptlc_ni_id(const struct ptlc_ni *ni, ptl_process_id_t *id)
{
	id->nid = ni->nid;
	id->pid = ni->pid;
}

ptl_uid_t ptlc_ni_uid(const struct ptlc_ni *ni)
{
	return ni->uid;
}

ptl_jid_t ptlc_ni_jid(const struct ptlc_ni *ni)
{
	return ni->jid;
}

/* The ALLOC/FREED/MAX/CUR quadruple of an object table. */
static ptl_sr_value_t table_stat(const struct ptlc_htab *tab, u32 which)
{
	switch (which) {
	case 0:
		return tab->allocs;
	case 1:
		return tab->frees;
	case 2:
		return tab->max_live;
	default:
		return tab->live;
	}
}

static int mlist_status(struct ptlc_ni *ni, ptl_sr_index_t reg,
			ptl_sr_value_t *v)
{
	u32 pt = (reg & ~PTL_SR_MLIST_FLAG) >> 16;
	u32 what = reg & 0xffffU;

	if (pt > (u32)ni->limits.max_pt_index)
		return PTL_SR_INDEX_INVALID;
	if (what == PTL_SR_MES_CUR)
		*v = ni->pt[pt].len;
	else if (what == PTL_SR_MES_MAX)
		*v = ni->pt[pt].max_len;
	else
		return PTL_SR_INDEX_INVALID;
	return PTL_OK;
}

static ptl_sr_value_t plain_status(struct ptlc_ni *ni, ptl_sr_index_t reg)
{
	switch (reg) {
	case PTL_SR_PTLS_MAX:
		return ni->ptls_max;
	case PTL_SR_PTLS_CUR:
		return ni->ptls_cur;
	case PTL_SR_MSGS_ALLOC:
		return ni->msgs_alloc;
	case PTL_SR_MSGS_FREED:
		return ni->msgs_freed;
	case PTL_SR_MSGS_MAX:
		return ni->msgs_max;
	case PTL_SR_MSGS_CUR:
		return ni->msgs_alloc - ni->msgs_freed;
	}
	if (reg >= PTL_SR_MES_ALLOC && reg <= PTL_SR_MES_CUR)
		return table_stat(&ni->mes, reg - PTL_SR_MES_ALLOC);
	if (reg >= PTL_SR_MDS_ALLOC && reg <= PTL_SR_MDS_CUR)
		return table_stat(&ni->mds, reg - PTL_SR_MDS_ALLOC);
	if (reg >= PTL_SR_EQS_ALLOC && reg <= PTL_SR_EQS_CUR)
		return table_stat(&ni->eqs, reg - PTL_SR_EQS_ALLOC);
	/* Counters kept directly, and the alignment statistics (always 0). */
	return ni->sr[reg];
}

int ptlc_ni_status(struct ptlc_ni *ni, ptl_sr_index_t reg, ptl_sr_value_t *v)
{
	int rc = PTL_OK;

	ptl_lock(&ni->lock);
	if (reg & PTL_SR_MLIST_FLAG)
		rc = mlist_status(ni, reg, v);
	else if (reg < PTLC_SR_COUNT)
		*v = plain_status(ni, reg);
	else
		rc = PTL_SR_INDEX_INVALID;
	ptl_unlock(&ni->lock);
	return rc;
}
