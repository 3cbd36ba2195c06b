// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The access-control table (spec 6.7, 8.11). Each incoming put, get or
 * getput names an entry; it passes iff every field of the entry is a
 * wildcard or equals the request's value.
 */
#include "ptlc_internal.h"

/*
 * Like the reference implementation, every entry starts as "any process of
 * this user, any job, any portal": the spec fixes only entry 0, and clients
 * written against the reference rely on the others too.
 */
void ptlc_acl_init(struct ptlc_ni *ni)
{
	u32 i;

	for (i = 0; i <= (u32)ni->limits.max_ac_index; i++) {
		ni->acl[i].id.nid = PTL_NID_ANY;
		ni->acl[i].id.pid = PTL_PID_ANY;
		ni->acl[i].uid = ni->uid;
		ni->acl[i].jid = PTL_JID_ANY;
		ni->acl[i].pt_index = PTL_PT_INDEX_ANY;
	}
}

int ptlc_ac_entry(struct ptlc_ni *ni, ptl_ac_index_t ac_index,
		  ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
		  ptl_pt_index_t pt_index)
{
	struct ptlc_ace *e;

	if (ac_index > (u32)ni->limits.max_ac_index)
		return PTL_AC_INDEX_INVALID;
	if (pt_index != PTL_PT_INDEX_ANY &&
	    pt_index > (u32)ni->limits.max_pt_index)
		return PTL_PT_INDEX_INVALID;
	ptl_lock(&ni->lock);
	e = &ni->acl[ac_index];
	e->id = match_id;
	e->uid = uid;
	e->jid = jid;
	e->pt_index = pt_index;
	ptl_unlock(&ni->lock);
	return PTL_OK;
}

static bool field_ok(u32 entry, u32 any, u32 value)
{
	return entry == any || entry == value;
}

/* hdr->ac_index must already be known to be in range. */
bool ptlc_acl_allows(const struct ptlc_ni *ni, const struct ptl_hdr *hdr)
{
	const struct ptlc_ace *e = &ni->acl[hdr->ac_index];

	return field_ok(e->id.nid, PTL_NID_ANY, hdr->src.nid) &&
	       field_ok(e->id.pid, PTL_PID_ANY, hdr->src.pid) &&
	       field_ok(e->uid, PTL_UID_ANY, hdr->src_uid) &&
	       field_ok(e->jid, PTL_JID_ANY, hdr->src_jid) &&
	       field_ok(e->pt_index, PTL_PT_INDEX_ANY, hdr->pt_index);
}
