// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Address translation (spec 8.1) and MD acceptance (8.2): which match
 * entry of a portal takes an incoming put, get or getput, where in its MD
 * the data goes and how much of it.
 */
#include "ptlc_internal.h"

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

/* Walks the portal's list in order; the first MD that accepts wins. */
bool ptlc_match_request(struct ptlc_ni *ni, const struct ptl_hdr *hdr,
			u32 op_bits, struct ptlc_match *m)
{
	struct ptlc_list *head = &ni->pt[hdr->pt_index].mes;
	struct ptlc_list *pos;

	for (pos = head->next; pos != head; pos = pos->next) {
		struct ptlc_me *me = PTLC_CONTAINER_OF(pos, struct ptlc_me,
						       link);

		if (!me->md || !ptlc_me_matches(me, hdr->src, hdr->match_bits))
			continue;
		if (ptlc_md_accepts(me->md, op_bits, hdr->offset, hdr->rlength,
				    &m->offset, &m->mlength)) {
			m->md = me->md;
			return true;
		}
	}
	return false;
}
