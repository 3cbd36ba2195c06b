// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The target side of data movement: what happens when a header arrives
 * (spec 8.1-8.2 for requests, 8.8 for acks, 8.9-8.10 for replies and
 * getput). Runs in softirq context in the kernel: no allocation, no
 * sleeping, one NI lock.
 */
#include "ptlc_internal.h"

static enum ptlc_action drop(struct ptlc_ni *ni, struct ptlc_msg *msg,
			     enum ptlc_drop why, u64 length)
{
	ni->sr[PTL_SR_DROP_COUNT]++;
	ni->sr[PTL_SR_DROP_LENGTH] += length;
	msg->drop = why;
	msg->action = PTLC_MSG_DROP;
	return PTLC_MSG_DROP;
}

static bool addressed_to_us(const struct ptlc_ni *ni,
			    const struct ptl_hdr *hdr)
{
	return hdr->dst.nid == ni->nid && hdr->dst.pid == ni->pid;
}

/* The START event of a request or reply; kept in msg for END/UNLINK. */
static void target_event(struct ptlc_ni *ni, struct ptlc_msg *msg,
			 const struct ptl_hdr *hdr, ptl_event_kind_t kind,
			 const struct ptlc_match *m)
{
	ptl_event_t *ev = &msg->ev;

	ptlc_event_init(ni, ev, m->md);
	ev->type = kind;
	ev->initiator = hdr->src;
	ev->uid = hdr->src_uid;
	ev->jid = hdr->src_jid;
	ev->pt_index = hdr->pt_index;
	ev->match_bits = hdr->match_bits;
	ev->rlength = hdr->rlength;
	ev->mlength = m->mlength;
	ev->offset = m->offset;
	if (kind == PTL_EVENT_PUT_START || kind == PTL_EVENT_GETPUT_START)
		ev->hdr_data = hdr->hdr_data;
}

/* The header going back to a request's initiator (ACK or REPLY). */
static void response_hdr(const struct ptlc_ni *ni, const struct ptl_hdr *req,
			 u32 type, u64 mlength, struct ptl_hdr *h)
{
	ptl_memset(h, 0, sizeof(*h));
	h->type = type;
	h->dst = req->src;
	h->src.nid = ni->nid;
	h->src.pid = ni->pid;
	h->src_uid = ni->uid;
	h->src_jid = ni->jid;
	h->match_bits = req->match_bits;
	h->pt_index = req->pt_index;
	h->rlength = req->rlength;
	h->mlength = mlength;
	h->md_handle = req->md_handle;
	h->md_gen = req->md_gen;
	if (type == PTL_MSG_ACK) {
		h->offset = req->offset;	/* echoed (contract 6) */
	} else {
		h->offset = req->rtn_offset;
		h->payload_length = mlength;
	}
}

static const struct {
	u32 op_bits;
	ptl_event_kind_t start;
	enum ptlc_action action;
} request_kinds[] = {
	[PTL_MSG_PUT] = { PTL_MD_OP_PUT, PTL_EVENT_PUT_START,
			  PTLC_MSG_DEPOSIT },
	[PTL_MSG_GET] = { PTL_MD_OP_GET, PTL_EVENT_GET_START,
			  PTLC_MSG_SEND_REPLY },
	[PTL_MSG_GETPUT] = { PTL_MD_OP_GET | PTL_MD_OP_PUT,
			     PTL_EVENT_GETPUT_START, PTLC_MSG_SWAP },
};

/* Everything that can refuse a request before matching (8.1 steps 1-3). */
static enum ptlc_drop check_request(struct ptlc_ni *ni,
				    const struct ptl_hdr *hdr)
{
	if (!addressed_to_us(ni, hdr))
		return PTLC_DROP_WRONG_TARGET;
	if (hdr->pt_index > (u32)ni->limits.max_pt_index)
		return PTLC_DROP_PT_INDEX;
	if (hdr->ac_index > (u32)ni->limits.max_ac_index)
		return PTLC_DROP_AC_INDEX;
	/* The glue's swap buffer holds at most max_getput_md bytes. */
	if (hdr->type == PTL_MSG_GETPUT &&
	    hdr->rlength > (u64)ni->limits.max_getput_md)
		return PTLC_DROP_NO_MATCH;
	if (!ptlc_acl_allows(ni, hdr)) {
		ni->sr[PTLC_SR_PERM_VIOLATIONS]++;
		return PTLC_DROP_ACL;
	}
	return PTLC_DROP_NONE;
}

static enum ptlc_action recv_request(struct ptlc_ni *ni,
				     const struct ptl_hdr *hdr,
				     unsigned int flags, struct ptlc_msg *msg)
{
	struct ptlc_match m;
	enum ptlc_drop why;
	u32 t = hdr->type;

	why = check_request(ni, hdr);
	if (why != PTLC_DROP_NONE)
		return drop(ni, msg, why, hdr->rlength);
	if (!ptlc_match_request(ni, hdr, request_kinds[t].op_bits, &m))
		return drop(ni, msg, PTLC_DROP_NO_MATCH, hdr->rlength);

	ptlc_md_consume_threshold(m.md);
	ptlc_md_advance(m.md, m.mlength);
	target_event(ni, msg, hdr, request_kinds[t].start, &m);
	ptlc_msg_start(ni, msg, m.md, PTLC_ST_TARGET, true);
	msg->action = request_kinds[t].action;
	msg->offset = m.offset;
	msg->mlength = m.mlength;
	ni->sr[PTL_SR_RECV_COUNT]++;
	ni->sr[PTL_SR_RECV_LENGTH] += m.mlength;

	if (t == PTL_MSG_PUT) {
		/* msg->hdr is read only to send the ACK (SEND_ACK). */
		if (hdr->md_handle != PTL_HANDLE_NONE &&
		    !(m.md->desc.options & PTL_MD_ACK_DISABLE)) {
			msg->flags |= PTLC_MSGF_ACK_OWED;
			response_hdr(ni, hdr, PTL_MSG_ACK, m.mlength,
				     &msg->hdr);
		}
	} else {
		response_hdr(ni, hdr, PTL_MSG_REPLY, m.mlength, &msg->hdr);
		ni->sr[PTL_SR_SEND_COUNT]++;
		ni->sr[PTL_SR_SEND_LENGTH] += m.mlength;
	}
	if (flags & PTLC_RECV_DEFER_START)
		msg->start_owed = true;
	else
		ptlc_msg_post_start(ni, msg);
	return msg->action;
}

/* The initiator MD an ACK or REPLY names: handle and full generation. */
static struct ptlc_md *response_md(struct ptlc_ni *ni,
				   const struct ptl_hdr *hdr)
{
	struct ptlc_md *md = ptlc_md_lookup(ni, hdr->md_handle);

	return md && md->gen == hdr->md_gen ? md : NULL;
}

/* ACKs are never counted as drops (8.8), but we keep our own count. */
static enum ptlc_action recv_ack(struct ptlc_ni *ni,
				 const struct ptl_hdr *hdr,
				 struct ptlc_msg *msg)
{
	struct ptlc_md *md = response_md(ni, hdr);
	ptl_event_t ev;
	ptl_seq_t seq = 0;

	if (!addressed_to_us(ni, hdr) || !md || !ptlc_md_active(md)) {
		ni->sr[PTLC_SR_ACK_DROPS]++;
		msg->drop = !md ? PTLC_DROP_STALE_MD : PTLC_DROP_INACTIVE_MD;
		msg->action = PTLC_MSG_DROP;
		return PTLC_MSG_DROP;
	}
	ptlc_md_consume_threshold(md);
	ni->sr[PTL_SR_RECV_COUNT]++;

	ptlc_event_init(ni, &ev, md);
	ev.type = PTL_EVENT_ACK;
	ev.initiator = hdr->src;
	ev.uid = hdr->src_uid;
	ev.jid = hdr->src_jid;
	ev.pt_index = hdr->pt_index;
	ev.match_bits = hdr->match_bits;
	ev.rlength = hdr->rlength;
	ev.mlength = hdr->mlength;
	ev.offset = hdr->offset;
	ptlc_event_post_other(ni, md, &ev, &seq);
	ptlc_md_maybe_auto_unlink(ni, md, &ev, seq);
	msg->action = PTLC_MSG_DONE;
	return PTLC_MSG_DONE;
}

/*
 * A reply lands at the return offset of the get (or 0 for getput); it is
 * truncated only if the initiator MD allows truncation (8.9).
 */
static enum ptlc_action recv_reply(struct ptlc_ni *ni,
				   const struct ptl_hdr *hdr,
				   unsigned int flags, struct ptlc_msg *msg)
{
	struct ptlc_md *md = response_md(ni, hdr);
	struct ptlc_match m;
	u64 room;

	if (!addressed_to_us(ni, hdr))
		return drop(ni, msg, PTLC_DROP_WRONG_TARGET, hdr->mlength);
	if (!md)
		return drop(ni, msg, PTLC_DROP_STALE_MD, hdr->mlength);
	if (!ptlc_md_active(md))
		return drop(ni, msg, PTLC_DROP_INACTIVE_MD, hdr->mlength);
	room = hdr->offset <= md->length ? md->length - hdr->offset : 0;
	if (hdr->offset > md->length ||
	    (hdr->mlength > room && !(md->desc.options & PTL_MD_TRUNCATE)))
		return drop(ni, msg, PTLC_DROP_REPLY_TOO_LONG, hdr->mlength);

	m.md = md;
	m.offset = hdr->offset;
	m.mlength = hdr->mlength < room ? hdr->mlength : room;
	ptlc_md_consume_threshold(md);
	target_event(ni, msg, hdr, PTL_EVENT_REPLY_START, &m);
	ptlc_msg_start(ni, msg, md, PTLC_ST_REPLY, true);
	msg->action = PTLC_MSG_DEPOSIT;
	msg->offset = m.offset;
	msg->mlength = m.mlength;
	ni->sr[PTL_SR_RECV_COUNT]++;
	ni->sr[PTL_SR_RECV_LENGTH] += m.mlength;
	if (flags & PTLC_RECV_DEFER_START)
		msg->start_owed = true;
	else
		ptlc_msg_post_start(ni, msg);
	return PTLC_MSG_DEPOSIT;
}

enum ptlc_action ptlc_receive(struct ptlc_ni *ni, const struct ptl_hdr *hdr,
			      unsigned int flags, struct ptlc_msg *msg)
{
	enum ptlc_action action;

	ptlc_msg_reset(msg, ni);
	ptl_lock(&ni->lock);
	switch (hdr->type) {
	case PTL_MSG_PUT:
	case PTL_MSG_GET:
	case PTL_MSG_GETPUT:
		action = recv_request(ni, hdr, flags, msg);
		break;
	case PTL_MSG_ACK:
		action = recv_ack(ni, hdr, msg);
		break;
	case PTL_MSG_REPLY:
		action = recv_reply(ni, hdr, flags, msg);
		break;
	default:
		action = drop(ni, msg, PTLC_DROP_BAD_TYPE, 0);
		break;
	}
	ptl_unlock(&ni->lock);
	return action;
}
