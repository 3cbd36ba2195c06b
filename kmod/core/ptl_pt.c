// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The portal table: one match list per portal index, searched head to tail
 * (spec 6.4, 8.1). Also keeps the PTLS_* and per-list length registers.
 */
#include "ptlc_internal.h"

/* Links me between prev and next on its portal's list. */
int ptlc_pt_insert(struct ptlc_ni *ni, struct ptlc_me *me,
		   struct ptlc_list *prev, struct ptlc_list *next)
{
	struct ptlc_pt *pt = &ni->pt[me->pt_index];

	if (pt->len >= (u32)ni->limits.max_me_list)
		return PTL_ME_LIST_TOO_LONG;
	ptlc_list_add_between(&me->link, prev, next);
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

	ptlc_list_del(&me->link);
	if (--pt->len == 0)
		ni->ptls_cur--;
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
