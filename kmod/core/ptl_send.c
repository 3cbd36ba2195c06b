// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The initiator side of data movement (spec 6.8): PtlPut[Region],
 * PtlGet[Region] and PtlGetPut validate their MDs, build the header the
 * transport sends and post SEND_START. Issuing a put (or the put half of a
 * getput) consumes a threshold unit; issuing a get does not, its reply will
 * (8.3).
 */
#include "ptlc_internal.h"

/* An MD handle usable to initiate: live and active. */
static int initiator_md(struct ptlc_ni *ni, ptl_handle_md_t h,
			struct ptlc_md **out)
{
	int slot = ptlc_handle_slot(h);
	struct ptlc_md *md;

	/* A valid MD handle of another NI cannot pair with this one. */
	if (slot >= 0 && slot != (int)ni->slot &&
	    ((h >> PTLC_H_TYPE_SHIFT) & PTLC_H_TYPE_MASK) == PTLC_OBJ_MD)
		return PTL_MD_ILLEGAL;
	md = ptlc_md_lookup(ni, h);
	if (!md || !ptlc_md_active(md))
		return PTL_MD_INVALID;
	*out = md;
	return PTL_OK;
}

/* The byte range of md an operation uses: the whole MD or a region. */
static int md_region(const struct ptlc_md *md, const struct ptlc_put_args *a,
		     bool region, u64 *offset, u64 *length)
{
	if (!region) {
		*offset = 0;
		*length = md->length;
		return PTL_OK;
	}
	if (a->local_offset > md->length ||
	    a->length > md->length - a->local_offset)
		return PTL_MD_ILLEGAL;
	*offset = a->local_offset;
	*length = a->length;
	return PTL_OK;
}

/* The MD a put or get starts from and the byte range it names. */
static int initiator_region(struct ptlc_ni *ni, const struct ptlc_put_args *a,
			    bool region, struct ptlc_md **md, u64 *offset,
			    u64 *length)
{
	int rc = initiator_md(ni, a->md, md);

	if (!rc)
		rc = md_region(*md, a, region, offset, length);
	return rc;
}

/* The header fields every request shares. */
static void request_hdr(struct ptlc_ni *ni, const struct ptlc_put_args *a,
			u32 type, struct ptl_hdr *h)
{
	ptl_memset(h, 0, sizeof(*h));
	h->type = type;
	h->dst = a->target;
	h->src.nid = ni->nid;
	h->src.pid = ni->pid;
	h->src_uid = ni->uid;
	h->src_jid = ni->jid;
	h->match_bits = a->match_bits;
	h->offset = a->remote_offset;
	h->pt_index = a->pt_index;
	h->ac_index = a->ac_index;
}

/* SEND_START/END fields (table 8.5): what we sent, where. */
static void send_event(struct ptlc_ni *ni, struct ptlc_msg *msg,
		       const struct ptlc_md *md, const struct ptl_hdr *h)
{
	ptl_event_t *ev = &msg->ev;

	ptlc_event_init(ni, ev, md);
	ev->type = PTL_EVENT_SEND_START;
	ev->initiator.nid = ni->nid;
	ev->initiator.pid = ni->pid;
	ev->uid = ni->uid;
	ev->jid = ni->jid;
	ev->pt_index = h->pt_index;
	ev->match_bits = h->match_bits;
	ev->rlength = h->rlength;
	ev->mlength = h->rlength;
	ev->offset = h->offset;
	ev->hdr_data = h->hdr_data;
}

/* The REPLY_END a get posts if its request cannot be delivered. */
static void get_failure_event(struct ptlc_ni *ni, struct ptlc_msg *msg,
			      const struct ptlc_md *md,
			      const struct ptlc_put_args *a, u64 length,
			      u64 offset)
{
	ptl_event_t *ev = &msg->ev;

	ptlc_event_init(ni, ev, md);
	ev->type = PTL_EVENT_REPLY_END;
	ev->initiator = a->target;
	ev->pt_index = a->pt_index;
	ev->match_bits = a->match_bits;
	ev->rlength = length;
	ev->offset = offset;
}

/* Consumes a threshold unit of md and starts a data-carrying send. */
static void start_send(struct ptlc_ni *ni, struct ptlc_msg *msg,
		       struct ptlc_md *md, u64 offset)
{
	ptlc_md_consume_threshold(md);
	msg->action = PTLC_MSG_SEND;
	msg->offset = offset;
	msg->mlength = msg->hdr.rlength;
	msg->hdr.payload_length = msg->hdr.rlength;
	send_event(ni, msg, md, &msg->hdr);
	ptlc_msg_start(ni, msg, md, PTLC_ST_SEND, true);
	ptlc_msg_post_start(ni, msg);
	ni->sr[PTL_SR_SEND_COUNT]++;
	ni->sr[PTL_SR_SEND_LENGTH] += msg->mlength;
}

int ptlc_put(struct ptlc_ni *ni, const struct ptlc_put_args *a, bool region,
	     struct ptlc_msg *msg)
{
	struct ptlc_md *md;
	u64 offset, length;
	int rc;

	ptlc_msg_reset(msg, NULL);
	ptl_lock(&ni->lock);
	rc = initiator_region(ni, a, region, &md, &offset, &length);
	if (!rc) {
		request_hdr(ni, a, PTL_MSG_PUT, &msg->hdr);
		msg->hdr.rlength = length;
		msg->hdr.hdr_data = a->hdr_data;
		if (a->ack_req == PTL_ACK_REQ) {
			msg->hdr.md_handle = a->md;
			msg->hdr.md_gen = md->gen;
		} else {
			msg->hdr.md_handle = PTL_HANDLE_NONE;
		}
		start_send(ni, msg, md, offset);
	}
	ptl_unlock(&ni->lock);
	return rc;
}

/*
 * The get request carries no data and no events; the MD reference lasts
 * only until the request is sent (8.9): a reply to an MD unlinked since is
 * dropped by the generation check. A request the network could not deliver
 * ends the get with a REPLY_END carrying the failure, so that the caller
 * never waits for a reply that cannot come.
 */
int ptlc_get(struct ptlc_ni *ni, const struct ptlc_put_args *a, bool region,
	     struct ptlc_msg *msg)
{
	struct ptlc_md *md;
	u64 offset, length;
	int rc;

	ptlc_msg_reset(msg, NULL);
	ptl_lock(&ni->lock);
	rc = initiator_region(ni, a, region, &md, &offset, &length);
	if (!rc) {
		request_hdr(ni, a, PTL_MSG_GET, &msg->hdr);
		msg->hdr.rlength = length;
		msg->hdr.rtn_offset = offset;
		msg->hdr.md_handle = a->md;
		msg->hdr.md_gen = md->gen;
		msg->action = PTLC_MSG_SEND;
		msg->offset = offset;
		msg->mlength = 0;
		get_failure_event(ni, msg, md, a, length, offset);
		ptlc_msg_start(ni, msg, md, PTLC_ST_SEND, false);
		msg->flags |= PTLC_MSGF_GET_REQ;
		ni->sr[PTL_SR_SEND_COUNT]++;
	}
	ptl_unlock(&ni->lock);
	return rc;
}

int ptlc_getput(struct ptlc_ni *ni, ptl_handle_md_t get_md,
		const struct ptlc_put_args *a, struct ptlc_msg *msg)
{
	struct ptlc_md *put, *get;
	int rc;

	ptlc_msg_reset(msg, NULL);
	ptl_lock(&ni->lock);
	rc = initiator_md(ni, get_md, &get);
	if (!rc)
		rc = initiator_md(ni, a->md, &put);
	if (!rc && put->length > (u64)ni->limits.max_getput_md)
		rc = PTL_MD_ILLEGAL;
	if (!rc) {
		request_hdr(ni, a, PTL_MSG_GETPUT, &msg->hdr);
		msg->hdr.rlength = put->length;
		msg->hdr.hdr_data = a->hdr_data;
		msg->hdr.rtn_offset = 0;
		msg->hdr.md_handle = get_md;
		msg->hdr.md_gen = get->gen;
		start_send(ni, msg, put, 0);
	}
	ptl_unlock(&ni->lock);
	return rc;
}
