// SPDX-License-Identifier: GPL-2.0
/*
 * Intra-node delivery of data-movement calls (PtlPut[Region],
 * PtlGet[Region], PtlGetPut) whose target is on this node (ptl_data.c
 * decides; ptl_request.h).
 *
 * Everything runs in the initiator's ioctl, in process context, holding a
 * reference on the initiator NI (from the ioctl) and on the target NI
 * (from the interface's pid table), never two NI locks at once: each core
 * call takes its own NI's lock and returns. The target process does not
 * take part (it may be stopped or busy): its MDs are pinned, so the data
 * moves with one copy from the initiator's pinned pages into the target's,
 * and its events go into its mapped rings.
 *
 * The sequence follows the core's protocol (ptl_core.h) with
 * PTLC_RECV_DEFER_START, which yields the reference event order:
 *
 *   put:    ptlc_put -> SEND_START; ptlc_receive(target) -> DEPOSIT;
 *           copy; finalize(initiator) -> SEND_END; finalize(target) ->
 *           PUT_START [-> SEND_ACK: ptlc_receive(initiator, ack) -> ACK;
 *           finalize(target)] -> PUT_END
 *   get:    ptlc_get; finalize(initiator) (the request left);
 *           ptlc_receive(target) -> SEND_REPLY; ptlc_receive(initiator,
 *           reply) -> DEPOSIT; copy; finalize(target) -> GET_START,
 *           GET_END; finalize(reply) -> REPLY_START, REPLY_END
 *   getput: ptlc_getput -> SEND_START; ptlc_receive(target) -> SWAP;
 *           read the put data into a kernel buffer; swap under the target
 *           NI's swap lock; finalize(initiator) -> SEND_END; reply with the
 *           old bytes as for get.
 *
 * A target nid other than this node's goes to the interface's transport
 * instead (ptl_remote.c). A pid nobody holds loses the message, as a
 * network would; the initiator completes normally.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"
#include "ptl_request.h"
#include "ptl_trace.h"

/* Message storage of one data-movement call. */
struct ptl_xfer {
	struct ptl_ni *ini;		/* initiator (the caller's NI) */
	struct ptl_ni *tgt;		/* target, referenced */
	struct ptlc_msg imsg;		/* the request, at the initiator */
	struct ptlc_msg tmsg;		/* the request, at the target */
	struct ptlc_msg rmsg;		/* ACK or REPLY, at the initiator */
	u8 in[PTLC_CAP_GETPUT_MD];	/* getput: the new bytes */
	u8 old[PTLC_CAP_GETPUT_MD];	/* getput: the bytes replaced */
};

static struct kmem_cache *ptl_xfer_cache;

static ptl_ni_fail_t ptl_fail_of(int err)
{
	return err ? PTL_NI_FAIL : PTL_NI_OK;
}

/* Every dropped message, at whichever end. */
static void ptl_drop(struct ptl_ni *ni, const struct ptl_hdr *hdr,
		     const struct ptlc_msg *msg)
{
	atomic_long_inc(&ptl_stats.drops);
	trace_ptl_drop(ni->nid, ni->pid, hdr, msg->drop);
}

/*
 * An ACK or REPLY header from the target arrives at the initiator. For a
 * REPLY the caller moves the data and finalizes @x->rmsg.
 */
static enum ptlc_action ptl_respond(struct ptl_xfer *x)
{
	const struct ptl_hdr *hdr = &x->tmsg.hdr;
	enum ptlc_action act;

	act = ptlc_receive(x->ini->core, hdr, PTLC_RECV_DEFER_START, &x->rmsg);
	if (act == PTLC_MSG_DROP)
		ptl_drop(x->ini, hdr, &x->rmsg);
	return act;
}

static void ptl_deliver_put(struct ptl_xfer *x)
{
	ptl_ni_fail_t fail;

	fail = ptl_fail_of(ptl_mem_copy(x->tmsg.md, x->tmsg.offset,
					x->imsg.md, x->imsg.offset,
					x->tmsg.mlength));
	ptlc_msg_finalize(&x->imsg, fail);			/* SEND_END */
	if (ptlc_msg_finalize(&x->tmsg, fail) == PTLC_MSG_SEND_ACK) {
		ptl_respond(x);					/* ACK */
		ptlc_msg_finalize(&x->tmsg, PTL_NI_OK);		/* PUT_END */
	}
}

/* The reply of a get or getput; @old: the swapped-out bytes, or NULL. */
static void ptl_deliver_reply(struct ptl_xfer *x, const u8 *old)
{
	int err;

	if (ptl_respond(x) != PTLC_MSG_DEPOSIT) {
		ptlc_msg_finalize(&x->tmsg, PTL_NI_OK);
		return;
	}
	if (old)
		err = ptl_mem_from_buf(x->rmsg.md, x->rmsg.offset, old,
				       x->rmsg.mlength);
	else
		err = ptl_mem_copy(x->rmsg.md, x->rmsg.offset, x->tmsg.md,
				   x->tmsg.offset, x->rmsg.mlength);
	ptlc_msg_finalize(&x->tmsg, PTL_NI_OK);		/* GET(PUT)_END */
	ptlc_msg_finalize(&x->rmsg, ptl_fail_of(err));	/* REPLY_END */
}

static void ptl_deliver_get(struct ptl_xfer *x)
{
	ptlc_msg_finalize(&x->imsg, PTL_NI_OK);	/* the request is out */
	ptl_deliver_reply(x, NULL);
}

/* Swaps the target bytes with no other getput on this NI in between. */
static int ptl_swap(struct ptl_xfer *x)
{
	u64 len = x->tmsg.mlength;
	int err;

	if (x->imsg.mlength > sizeof(x->in) || len > x->imsg.mlength)
		return -EINVAL;
	err = ptl_mem_to_buf(x->in, x->imsg.md, x->imsg.offset,
			     x->imsg.mlength);
	if (err)
		return err;
	spin_lock_bh(&x->tgt->swap_lock);
	err = ptl_mem_to_buf(x->old, x->tmsg.md, x->tmsg.offset, len);
	if (!err)
		err = ptl_mem_from_buf(x->tmsg.md, x->tmsg.offset, x->in, len);
	spin_unlock_bh(&x->tgt->swap_lock);
	return err;
}

static void ptl_deliver_getput(struct ptl_xfer *x)
{
	int err = ptl_swap(x);

	ptlc_msg_finalize(&x->imsg, ptl_fail_of(err));		/* SEND_END */
	if (err) {
		ptlc_msg_finalize(&x->tmsg, PTL_NI_FAIL);
		return;
	}
	ptl_deliver_reply(x, x->old);
}

/* The request is at the target's door: match it and move the data. */
static void ptl_deliver_local(struct ptl_xfer *x)
{
	const struct ptl_hdr *hdr = &x->imsg.hdr;
	struct ptl_ni *tgt = x->tgt;
	enum ptlc_action act;

	act = ptlc_receive(tgt->core, hdr, PTLC_RECV_DEFER_START, &x->tmsg);
	if (act == PTLC_MSG_DROP) {
		ptl_drop(tgt, hdr, &x->tmsg);
		ptlc_msg_finalize(&x->imsg, PTL_NI_OK);
		return;
	}
	atomic_long_inc(&ptl_stats.intra_msgs);
	trace_ptl_match(tgt->nid, tgt->pid, hdr, x->tmsg.offset,
			x->tmsg.mlength);
	switch (act) {
	case PTLC_MSG_DEPOSIT:
		ptl_deliver_put(x);
		break;
	case PTLC_MSG_SEND_REPLY:
		ptl_deliver_get(x);
		break;
	case PTLC_MSG_SWAP:
		ptl_deliver_getput(x);
		break;
	default:
		/* A request never ends at receive without a drop. */
		ptlc_msg_finalize(&x->imsg, PTL_NI_OK);
		break;
	}
}

/* Delivers the request the initiator's core prepared in @x->imsg. */
static void ptl_send(struct ptl_xfer *x)
{
	const struct ptl_hdr *hdr = &x->imsg.hdr;
	struct ptl_iface *iface = x->ini->iface;

	x->tgt = ptl_iface_find_ni(iface, hdr->dst.pid);
	if (!x->tgt) {
		/* Nobody there to count a drop: the message is lost. */
		ptlc_msg_finalize(&x->imsg, PTL_NI_OK);
		return;
	}
	ptl_deliver_local(x);
	ptl_ni_put(x->tgt);
}

/*
 * Message storage without an allocation per call: each initiator NI keeps
 * one spare ptl_xfer, taken and given back with xchg(). A sender's steady
 * state reuses it; only concurrent data calls on one NI fall back to the
 * slab cache.
 */
static struct ptl_xfer *ptl_xfer_get(struct ptl_ni *ni)
{
	struct ptl_xfer *x = xchg(&ni->spare_xfer, NULL);

	return x ? x : kmem_cache_alloc(ptl_xfer_cache, GFP_KERNEL_ACCOUNT);
}

static void ptl_xfer_put(struct ptl_ni *ni, struct ptl_xfer *x)
{
	x = xchg(&ni->spare_xfer, x);
	if (x)
		kmem_cache_free(ptl_xfer_cache, x);
}

/* The NI is being freed: nobody can take its spare any more. */
void ptl_move_ni_release(struct ptl_ni *ni)
{
	if (ni->spare_xfer)
		kmem_cache_free(ptl_xfer_cache, ni->spare_xfer);
	ni->spare_xfer = NULL;
}

/**
 * ptl_local_request - deliver a call whose target is on this node
 * @ni: the initiator (the caller's reference)
 * @req: the call
 *
 * Return: a Portals code; PTL_OK means initiated.
 */
long ptl_local_request(struct ptl_ni *ni, const struct ptl_data_req *req)
{
	struct ptl_xfer *x;
	long rc;

	x = ptl_xfer_get(ni);
	if (!x)
		return PTL_NO_SPACE;
	x->ini = ni;
	x->tgt = NULL;
	rc = ptl_request_build(ni, req, &x->imsg);
	if (rc == PTL_OK)
		ptl_send(x);
	ptl_xfer_put(ni, x);
	return rc;
}

int ptl_move_init(void)
{
	ptl_xfer_cache = KMEM_CACHE(ptl_xfer, SLAB_ACCOUNT);
	return ptl_xfer_cache ? 0 : -ENOMEM;
}

void ptl_move_exit(void)
{
	kmem_cache_destroy(ptl_xfer_cache);
}
