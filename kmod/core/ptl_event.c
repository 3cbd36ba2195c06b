// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Which events an MD produces and how they are posted (spec 8.5).
 *
 * START kinds are suppressed by PTL_MD_EVENT_START_DISABLE, END kinds by
 * PTL_MD_EVENT_END_DISABLE; ACK and UNLINK only when both are set. An MD
 * without a live EQ posts nothing.
 *
 * link: a START event links to itself; an END to its START (to itself if
 * no START was posted); an UNLINK to the END of the operation that caused
 * it (its START when END events are disabled; contract 9).
 *
 * An operation whose END event will come "promises" it on the EQ from the
 * moment it is accepted or initiated until the END is written, so that
 * PtlMDUpdate can tell that more events are on their way.
 */
#include "ptlc_internal.h"

bool ptlc_md_start_events(const struct ptlc_md *md)
{
	return !(md->desc.options & PTL_MD_EVENT_START_DISABLE);
}

bool ptlc_md_end_events(const struct ptlc_md *md)
{
	return !(md->desc.options & PTL_MD_EVENT_END_DISABLE);
}

bool ptlc_md_other_events(const struct ptlc_md *md)
{
	return ptlc_md_start_events(md) || ptlc_md_end_events(md);
}

/* Fields every event of md shares; the caller fills the rest. */
void ptlc_event_init(struct ptlc_ni *ni, ptl_event_t *ev,
		     const struct ptlc_md *md)
{
	ptl_memset(ev, 0, sizeof(*ev));
	ev->md_handle = ptlc_md_handle(ni, md);
	ptlc_md_snapshot(ni, md, &ev->md);
	ev->ni_fail_type = PTL_NI_OK;
}

/* Posts ev if enabled; self_link makes the event link to itself. */
static struct ptlc_eq *post(struct ptlc_ni *ni, const struct ptlc_md *md,
			    ptl_event_t *ev, bool enabled, bool self_link,
			    ptl_seq_t *seq)
{
	struct ptlc_eq *eq;

	if (!enabled)
		return NULL;
	eq = ptlc_eq_lookup(ni, md->desc.eq_handle);
	if (!eq)
		return NULL;
	if (self_link)
		ev->link = eq->next_seq;
	*seq = ptlc_eq_write(ni, eq, ev);
	return eq;
}

bool ptlc_event_post_start(struct ptlc_ni *ni, const struct ptlc_md *md,
			   ptl_event_t *ev, ptl_seq_t *seq)
{
	return post(ni, md, ev, ptlc_md_start_events(md), true, seq);
}

/* ev->link holds the START's sequence unless no START was posted. */
bool ptlc_event_post_end(struct ptlc_ni *ni, const struct ptlc_md *md,
			 ptl_event_t *ev, bool started, ptl_seq_t *seq)
{
	return post(ni, md, ev, ptlc_md_end_events(md), !started, seq);
}

/*
 * An operation ends: posts its END as ptlc_event_post_end() does and
 * withdraws the promise it made on @promised (PTL_EQ_NONE if none), with
 * one EQ lookup: the MD still posts to the EQ it promised on, since
 * PtlMDUpdate refuses an MD with an operation in flight (the second
 * lookup is for an EQ freed meanwhile).
 */
bool ptlc_event_end(struct ptlc_ni *ni, const struct ptlc_md *md,
		    ptl_event_t *ev, bool started, ptl_handle_eq_t promised,
		    ptl_seq_t *seq)
{
	struct ptlc_eq *eq = post(ni, md, ev, ptlc_md_end_events(md),
				  !started, seq);
	bool posted = eq;

	if (promised == PTL_EQ_NONE)
		return posted;
	if (!eq || promised != md->desc.eq_handle)
		eq = ptlc_eq_lookup(ni, promised);
	if (eq && !PTL_WARN_ON(!eq->promised))
		eq->promised--;
	return posted;
}

/* ACK (self-linked) and UNLINK (ev->link set by the caller). */
bool ptlc_event_post_other(struct ptlc_ni *ni, const struct ptlc_md *md,
			   ptl_event_t *ev, ptl_seq_t *seq)
{
	return post(ni, md, ev, ptlc_md_other_events(md),
		    ev->type == PTL_EVENT_ACK, seq);
}

/* Returns the EQ that now expects an END, or PTL_EQ_NONE. */
ptl_handle_eq_t ptlc_event_promise(struct ptlc_ni *ni,
				   const struct ptlc_md *md)
{
	struct ptlc_eq *eq;

	if (!ptlc_md_end_events(md))
		return PTL_EQ_NONE;
	eq = ptlc_eq_lookup(ni, md->desc.eq_handle);
	if (!eq)
		return PTL_EQ_NONE;
	eq->promised++;
	return md->desc.eq_handle;
}
