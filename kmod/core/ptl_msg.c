// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The life of a message after its first action: START/END pairing, the
 * ACK that must precede a PUT_END, the reference an operation holds on its
 * MD, and the auto-unlink that may follow (spec 8.3, 8.5).
 */
#include "ptlc_internal.h"

/*
 * Clears what a new message reads before it writes (see struct ptlc_msg):
 * everything but hdr and ev, which are built where they are used.
 */
void ptlc_msg_reset(struct ptlc_msg *msg, struct ptlc_ni *ni)
{
	ptl_memset(msg, 0, offsetof(struct ptlc_msg, hdr));
	PTLC_POISON_UNBUILT(&msg->hdr,
			    sizeof(*msg) - offsetof(struct ptlc_msg, hdr));
	msg->promised_eq = PTL_EQ_NONE;
	msg->ni = ni;
}

/* Takes the MD reference and the EQ promise of a new message. */
void ptlc_msg_start(struct ptlc_ni *ni, struct ptlc_msg *msg,
		    struct ptlc_md *md, u32 state, bool events)
{
	msg->ni = ni;
	msg->md = md;
	msg->md_index = md->index;
	msg->md_gen = md->gen;
	msg->state = state;
	msg->promised_eq = PTL_EQ_NONE;
	md->pending++;
	if (events) {
		msg->flags |= PTLC_MSGF_EVENTS;
		msg->promised_eq = ptlc_event_promise(ni, md);
	}
	ni->msgs_alloc++;
	if (ni->msgs_alloc - ni->msgs_freed > ni->msgs_max)
		ni->msgs_max = ni->msgs_alloc - ni->msgs_freed;
}

/* msg->ev holds the START event; posted now or at finalize (deferred). */
void ptlc_msg_post_start(struct ptlc_ni *ni, struct ptlc_msg *msg)
{
	/* Posting sets only ev.link, which the END sets again. */
	if (ptlc_event_post_start(ni, msg->md, &msg->ev, &msg->start_seq))
		msg->flags |= PTLC_MSGF_STARTED;
	msg->start_owed = false;
}

/* Posts the END (if any), drops the MD reference, may auto-unlink. */
static void msg_complete(struct ptlc_ni *ni, struct ptlc_msg *msg,
			 ptl_ni_fail_t fail)
{
	struct ptlc_md *md = msg->md;
	bool started = msg->flags & PTLC_MSGF_STARTED;
	ptl_event_t *ev = &msg->ev;	/* the message ends here: reuse it */
	ptl_seq_t link = msg->start_seq;
	ptl_seq_t seq;

	if (msg->flags & PTLC_MSGF_EVENTS) {
		ev->type++;			/* the END of each START */
		ev->ni_fail_type = fail;
		ev->link = started ? msg->start_seq : 0;
		if (ptlc_event_end(ni, md, ev, started, msg->promised_eq,
				   &seq))
			link = seq;
	}
	ni->msgs_freed++;
	msg->state = PTLC_ST_IDLE;
	msg->md = NULL;
	ptlc_md_release_ref(ni, md, (msg->flags & PTLC_MSGF_EVENTS) ?
			    ev : NULL, link);
}

/* A get whose request never reached its target: no reply will come. */
static void get_failed(struct ptlc_ni *ni, struct ptlc_msg *msg,
		       ptl_ni_fail_t fail)
{
	ptl_seq_t seq;

	msg->ev.ni_fail_type = fail;
	if (ptlc_md_active(msg->md))
		ptlc_event_post_end(ni, msg->md, &msg->ev, false, &seq);
}

static enum ptlc_action finalize_locked(struct ptlc_ni *ni,
					struct ptlc_msg *msg,
					ptl_ni_fail_t fail)
{
	switch (msg->state) {
	case PTLC_ST_TARGET:
	case PTLC_ST_REPLY:
		if (msg->start_owed)
			ptlc_msg_post_start(ni, msg);
		if ((msg->flags & PTLC_MSGF_ACK_OWED) && fail == PTL_NI_OK) {
			msg->state = PTLC_ST_ACK;
			msg->action = PTLC_MSG_SEND_ACK;
			return PTLC_MSG_SEND_ACK;
		}
		fallthrough;
	case PTLC_ST_SEND:
		if ((msg->flags & PTLC_MSGF_GET_REQ) && fail != PTL_NI_OK)
			get_failed(ni, msg, fail);
		fallthrough;
	case PTLC_ST_ACK:
		msg_complete(ni, msg, fail);
		break;
	default:
		PTL_WARN_ON(1);		/* finalized twice, or never started */
		break;
	}
	msg->action = PTLC_MSG_DONE;
	return PTLC_MSG_DONE;
}

enum ptlc_action ptlc_msg_finalize(struct ptlc_msg *msg,
				   ptl_ni_fail_t ni_fail_type)
{
	struct ptlc_ni *ni = msg->ni;
	enum ptlc_action next;

	if (PTL_WARN_ON(!ni))
		return PTLC_MSG_DONE;
	ptl_lock(&ni->lock);
	next = finalize_locked(ni, msg, ni_fail_type);
	ptl_unlock(&ni->lock);
	return next;
}
