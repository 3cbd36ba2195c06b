// SPDX-License-Identifier: GPL-2.0
/*
 * Portals messages over the reliable stream: eager and RTS/CTS.
 *
 *   eager (payload <= eager_max, and every ACK and REPLY):
 *     initiator                         target
 *       MSG(id, hdr, bytes 0..k)  ---->  ptl_rx_start: match, deposit
 *       DATA(id, k..)             ---->  deposit ... ptl_rx_done
 *                                 <----  (acks; ACK or REPLY as a MSG)
 *   RTS/CTS (a larger put):
 *       RTS(id, hdr)              ---->  ptl_rx_start: match
 *                                 <----  CTS(id, accept n | drop)
 *       DATA(id, 0..n)            ---->  deposit ... ptl_rx_done
 *
 * The target never buffers a message: the header matches an MD at once
 * and every payload byte is copied from the frame into the MD's pinned
 * pages in softirq (one copy), or discarded past what the MD accepts. A
 * CTS says how much the target accepted, so the initiator sends no more;
 * its data frames carry the initiator's pinned pages as fragments (no
 * copy). A message counts as sent when the peer has acknowledged all of
 * its frames: only then does the library post SEND_END (or whatever ends
 * it), and only then may the pages be unpinned. A message whose header is
 * processed and whose payload is still to come is open at the target; how
 * many may be, and for how long, is open.c's.
 *
 * Everything here runs with the peer's lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/skbuff.h>

#include "rtscts.h"
#include "rtscts_trace.h"

/* ---- sending ---- */

/* Queues a message (request or response) for @peer. */
void rtscts_queue_msg(struct rtscts_peer *peer, struct ptl_msg *msg)
{
	struct rtscts_mcb *mcb = rtscts_mcb(msg);
	u64 len = ptl_msg_len(msg);

	memset(mcb, 0, sizeof(*mcb));
	mcb->msg = msg;
	mcb->total = len;
	mcb->response = ptl_msg_is_response(msg);
	mcb->rts = !mcb->response && len > READ_ONCE(peer->rif->eager_max);
	mcb->msg_id = peer->next_msg_id++;
	mcb->state = RTSCTS_M_QUEUED;
	if (!rtscts_busy(peer))
		peer->last_progress = jiffies;
	if (rtscts_may_ride(mcb))
		rtscts_hold(peer, mcb);
	else
		list_add_tail(&mcb->node, rtscts_tx_queue(peer, mcb));
	peer->nmsgs++;
	peer->st.msgs_tx++;
	if (mcb->rts) {
		peer->st.rts++;
		rtscts_count(peer->rif, PTL_STAT_RTS, 1);
	}
	rtscts_count(peer->rif, PTL_STAT_MSGS_TX, 1);
	peer->last_active = jiffies;
	if (peer->state == PTL_PEER_UNREACHABLE)
		rtscts_peer_set_state(peer, peer->lladdr_valid ?
				      PTL_PEER_UP : PTL_PEER_RESOLVING);
}

/*
 * Who a peer made for @msg is charged to (peer.c): the Portals uid it is
 * sent for, its header's src_uid, which the sending kernel fills; no one
 * for a response (an ACK or REPLY answers a frame from the peer).
 */
static u32 rtscts_msg_owner(struct ptl_msg *msg)
{
	if (ptl_msg_is_response(msg))
		return RTSCTS_OWNER_NONE;
	return ptl_msg_src_uid(msg);
}

int rtscts_send(struct ptl_binding *b, struct ptl_msg *msg, gfp_t gfp)
{
	struct rtscts_if *rif = ptl_binding_priv(b);
	struct rtscts_peer *peer;
	struct sk_buff_head xq;
	int err = 0;

	__skb_queue_head_init(&xq);
	rcu_read_lock();
	peer = rtscts_peer_get(rif, ptl_msg_dst_nid(msg), rtscts_msg_owner(msg),
			       GFP_ATOMIC);
	if (!peer) {
		rcu_read_unlock();
		rtscts_count(rif, PTL_STAT_NO_BUFFER, 1);
		return -ENOBUFS;
	}
	spin_lock_bh(&peer->lock);
	if (peer->dead) {
		err = -ENETUNREACH;
	} else {
		rtscts_queue_msg(peer, msg);
		rtscts_push(peer, &xq);
	}
	spin_unlock_bh(&peer->lock);
	rcu_read_unlock();
	rtscts_xmit(rif, &xq);
	return err;
}

/* @msg is done: @fail says how. It leaves every list of @peer. */
void rtscts_tx_done(struct rtscts_peer *peer, struct ptl_msg *msg, u32 fail)
{
	struct rtscts_mcb *mcb = rtscts_mcb(msg);

	list_del(&mcb->node);
	rtscts_tx_close(peer, mcb);
	peer->nmsgs--;
	if (mcb->response)
		rtscts_credit_answered(peer, mcb);
	if (fail != PTL_NI_OK) {
		peer->st.msgs_failed++;
		rtscts_count(peer->rif, PTL_STAT_MSGS_FAILED, 1);
	}
	ptl_msg_sent(msg, fail);
}

/*
 * Sizes @txf, the next frame of a message with @left bytes to frame: a
 * large frame of up to @seqs segments of @room bytes if the interface
 * sends them and more than one frame's worth is left, else one frame.
 */
static void rtscts_size_frame(struct rtscts_peer *peer, struct rtscts_txf *txf,
			      u64 left, u32 room, u32 seqs)
{
	u32 segs = 0;

	if (left > room && seqs >= 2)
		segs = rtscts_large_frame_segs(peer->rif, txf->type, room);
	if (segs >= 2) {
		segs = min_t(u64, min(segs, seqs), DIV_ROUND_UP_ULL(left, room));
		txf->segs = segs;
		txf->seg_size = room;
		txf->len = min_t(u64, left, (u64)segs * room);
		return;
	}
	txf->len = min_t(u64, left, room);
}

/*
 * The next frame of the message rtscts_tx_next() picks, taking at most
 * @seqs sequence numbers (at least 1).
 */
static struct rtscts_txf *rtscts_next_msg_frame(struct rtscts_peer *peer,
						u32 seqs)
{
	struct rtscts_mcb *mcb;
	struct rtscts_txf *txf;
	bool header;
	u32 room;
	u8 type;

	mcb = rtscts_tx_next(peer);
	if (!mcb)
		return NULL;
	txf = rtscts_txf_alloc();
	if (!txf)
		return NULL;
	txf->msg = mcb->msg;
	txf->msg_id = mcb->msg_id;
	if (!mcb->hdr_out && mcb->rts) {
		txf->type = RTSCTS_RTS;
		rtscts_credit_spend(peer);
		mcb->hdr_out = true;
		rtscts_tx_open(peer, mcb);
		mcb->unacked++;
		mcb->state = RTSCTS_M_AWAIT_CTS;
		list_move_tail(&mcb->node, &peer->await_cts);
		return txf;
	}
	type = mcb->hdr_out ? RTSCTS_DATA : RTSCTS_MSG;
	/*
	 * One read of the MTU sizes the frame, and it is never below
	 * RTSCTS_MIN_MTU (rtscts_set_mtu): there is room for a byte at least.
	 * Were there none, no frame would be made.
	 */
	room = rtscts_frame_room(rtscts_mtu(peer->rif), type, peer->rif->auth);
	if (!room) {
		rtscts_txf_free(txf);
		return NULL;
	}
	txf->type = type;
	txf->off = mcb->next_off;
	/*
	 * A MSG may be a large frame too: an eager message of a few frames
	 * of the MTU crosses the host as one, as at a jumbo MTU. Its
	 * segments are sized by the MSG's room, so that the first, the MSG
	 * itself, fits the link when cut; the DATA segments after it carry
	 * as much, a little less than they could.
	 */
	rtscts_size_frame(peer, txf, mcb->total - mcb->next_off, room, seqs);
	/* A header really framed: only now does a request take a credit. */
	header = !mcb->hdr_out;
	if (header && !mcb->response)
		rtscts_credit_spend(peer);
	mcb->hdr_out = true;
	mcb->next_off += txf->len;
	mcb->unacked++;
	if (mcb->next_off < mcb->total) {
		rtscts_tx_open(peer, mcb);
		/* A begun response stays at the head of rspq. */
		if (header && !mcb->response)
			list_move_tail(&mcb->node, &peer->txq_begun);
	} else {
		rtscts_tx_close(peer, mcb);
		txf->last = true;
		mcb->state = RTSCTS_M_WAIT_ACKS;
		list_move_tail(&mcb->node, &peer->wait_acks);
	}
	return txf;
}

/*
 * The next frame to give sequence numbers, at most @seqs (at least 1): a
 * CTS first, then data.
 */
struct rtscts_txf *rtscts_next_frame(struct rtscts_peer *peer, u32 seqs)
{
	struct rtscts_txf *txf;

	txf = list_first_entry_or_null(&peer->ctlq, struct rtscts_txf, node);
	if (txf) {
		list_del(&txf->node);
		return txf;
	}
	return rtscts_next_msg_frame(peer, seqs);
}

/* The payload of @txf into @skb: copied if small, else page fragments. */
static int rtscts_add_payload(struct rtscts_txf *txf, struct sk_buff *skb,
			      bool copy)
{
	if (!txf->len)
		return 0;
	if (copy)
		return ptl_msg_copy(txf->msg, txf->off,
				    skb_put(skb, txf->len), txf->len);
	return ptl_msg_frags(txf->msg, txf->off, txf->len, skb);
}

static struct sk_buff *rtscts_build_one(struct rtscts_peer *peer,
					struct rtscts_txf *txf, bool copy)
{
	struct rtscts_frame f = {
		.type = txf->type,
		.stream = peer->tx_stream,
		.seq = txf->seq,
		.msg_id = txf->msg_id,
		.status = txf->cts_status,
		.length = txf->cts_len,
		.offset = txf->off,
		.segs = txf->segs,
		.seg_size = txf->seg_size,
	};
	u16 riders_off = rtscts_hdr_len(txf->type);
	/* At most 8 riders: no overflow of a u16. */
	u16 hdr_len = riders_off + txf->nriders * RTSCTS_RIDER_LEN;
	size_t linear;
	struct sk_buff *skb;

	if (!peer->tx_synced)
		f.flags |= RTSCTS_F_SYN;
	/* The end of a message, and a CTS, are acknowledged at once. */
	if (txf->last || txf->type == RTSCTS_CTS)
		f.flags |= RTSCTS_F_ACK_REQ;
	f.riders = txf->nriders;
	/* At most RTSCTS_MAX_FRAME: rtscts_alloc_skb() refuses more. */
	if (check_add_overflow((size_t)hdr_len, copy ? (size_t)txf->len : 0,
			       &linear))
		return ERR_PTR(-EMSGSIZE);
	skb = rtscts_alloc_skb(peer->rif, linear, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_put(skb, hdr_len);
	if (txf->type == RTSCTS_MSG || txf->type == RTSCTS_RTS)
		memcpy(skb->data + RTSCTS_PTL_HDR_OFF, ptl_msg_hdr(txf->msg),
		       PTL_WIRE_HDR_LEN);
	rtscts_riders_copy(txf, skb->data + riders_off);
	/* frame_len is 16 bits: a longer frame is never sent. */
	if (rtscts_add_payload(txf, skb, copy) ||
	    skb->len > RTSCTS_MAX_FRAME ||
	    rtscts_finish_frame(peer, skb, &f)) {
		kfree_skb(skb);
		return ERR_PTR(-EMSGSIZE);
	}
	if (f.segs) {
		f.hdr_len = hdr_len;
		rtscts_large_frame_mark(skb, &f);
	}
	return skb;
}

/**
 * rtscts_build - the skb of a frame in flight (first send or resend)
 * @peer: locked
 * @txf: the frame
 *
 * Return: the skb, or NULL without memory (the frame stays in flight and
 * is sent again on a timeout). A payload whose pages do not fit an skb's
 * fragments (many small iovec segments) is copied instead.
 */
struct sk_buff *rtscts_build(struct rtscts_peer *peer, struct rtscts_txf *txf)
{
	bool copy = txf->len <= RTSCTS_COPYBREAK;
	struct sk_buff *skb;

	if (rtscts_txf_orphaned(txf))
		return NULL;	/* its message ended: nothing to resend */
	skb = rtscts_build_one(peer, txf, copy);
	if (IS_ERR(skb) && !copy)
		skb = rtscts_build_one(peer, txf, true);
	return IS_ERR(skb) ? NULL : skb;
}

/* The peer acknowledged @txf: its message may be done. */
void rtscts_frame_acked(struct rtscts_peer *peer, struct rtscts_txf *txf)
{
	struct rtscts_mcb *mcb;

	rtscts_riders_acked(peer, txf);
	if (!txf->msg)
		return;
	mcb = rtscts_mcb(txf->msg);
	if (--mcb->unacked == 0 && mcb->state == RTSCTS_M_WAIT_ACKS)
		rtscts_tx_done(peer, txf->msg, PTL_NI_OK);
}

/* Frames still in flight no longer point at @msg (it is ending). */
static void rtscts_detach_frames(struct rtscts_peer *peer,
				 struct ptl_msg *msg)
{
	struct rtscts_txf *txf;

	list_for_each_entry(txf, &peer->inflight, node)
		if (txf->msg == msg)
			txf->msg = NULL;
	rtscts_mcb(msg)->unacked = 0;
}

/* ---- receiving ---- */

/*
 * A message that has all its payload ends; its response is queued. A
 * @request gives its credit back now, or when that response is done.
 */
void rtscts_rx_complete(struct rtscts_peer *peer, struct ptl_msg *msg,
			bool request, u32 fail)
{
	struct ptl_msg *resp = ptl_rx_done(msg, fail);

	if (fail != PTL_NI_OK) {
		peer->st.msgs_failed++;
		rtscts_count(peer->rif, PTL_STAT_MSGS_FAILED, 1);
	}
	if (resp)
		rtscts_queue_msg(peer, resp);
	rtscts_credit_ended(peer, request, resp);
}

/* Waits for the rest of its payload on rx_msgs (open.c), or fails. */
static void rtscts_rx_wait(struct rtscts_peer *peer, struct ptl_msg *msg,
			   bool request, u32 msg_id, u64 got, u64 total)
{
	struct rtscts_mcb *mcb = rtscts_mcb(msg);

	memset(mcb, 0, sizeof(*mcb));
	mcb->msg = msg;
	mcb->msg_id = msg_id;
	mcb->next_off = got;
	mcb->total = total;
	mcb->state = RTSCTS_M_RX;
	mcb->request = request;
	if (!rtscts_rx_open(peer, mcb))
		rtscts_rx_complete(peer, msg, request, PTL_NI_FAIL);
}

/*
 * The Portals header of a MSG or RTS frame, to the library. A @request
 * taken holds a credit; one dropped (NULL) is done with at once.
 */
static struct ptl_msg *rtscts_rx_hdr(struct rtscts_peer *peer,
				     struct sk_buff *skb,
				     const struct rtscts_frame *f,
				     bool request, struct ptl_rx_plan *plan)
{
	struct ptl_msg *msg;

	msg = rtscts_rx_start(peer, skb->data + RTSCTS_PTL_HDR_OFF,
			      f->payload_len, f->type == RTSCTS_RTS, plan);
	if (IS_ERR(msg))
		return msg;
	peer->st.msgs_rx++;
	rtscts_count(peer->rif, PTL_STAT_MSGS_RX, 1);
	if (request)
		rtscts_credit_take(peer);
	if (!msg)
		rtscts_credit_ended(peer, request, NULL);
	return msg;
}

static bool rtscts_rx_msg(struct rtscts_peer *peer, struct sk_buff *skb,
			  const struct rtscts_frame *f, bool request)
{
	struct ptl_rx_plan plan;
	struct ptl_msg *msg;

	msg = rtscts_rx_hdr(peer, skb, f, request, &plan);
	if (IS_ERR(msg))
		return false;
	if (msg) {
		if (f->payload_len > plan.payload ||
		    ptl_msg_deposit(msg, 0, skb, f->hdr_len, f->payload_len))
			rtscts_rx_complete(peer, msg, request, PTL_NI_FAIL);
		else if (f->payload_len == plan.payload)
			rtscts_rx_complete(peer, msg, request, PTL_NI_OK);
		else
			rtscts_rx_wait(peer, msg, request, f->msg_id,
				       f->payload_len, plan.payload);
	}
	consume_skb(skb);
	return true;
}

static bool rtscts_rx_rts(struct rtscts_peer *peer, struct sk_buff *skb,
			  const struct rtscts_frame *f, bool request)
{
	struct rtscts_txf *cts = rtscts_txf_alloc();
	struct ptl_rx_plan plan;
	struct ptl_msg *msg;

	if (!cts)
		return false;
	msg = rtscts_rx_hdr(peer, skb, f, request, &plan);
	if (IS_ERR(msg)) {
		rtscts_txf_free(cts);
		return false;
	}
	cts->type = RTSCTS_CTS;
	cts->msg_id = f->msg_id;
	cts->cts_status = msg ? RTSCTS_CTS_ACCEPT : RTSCTS_CTS_DROP;
	cts->cts_len = msg ? plan.deposit : 0;
	list_add_tail(&cts->node, &peer->ctlq);
	if (msg && plan.deposit)
		rtscts_rx_wait(peer, msg, request, f->msg_id, 0, plan.deposit);
	else if (msg)
		rtscts_rx_complete(peer, msg, request, PTL_NI_OK);
	consume_skb(skb);
	return true;
}

static struct rtscts_mcb *rtscts_find(struct list_head *list, u32 msg_id)
{
	struct rtscts_mcb *mcb;

	list_for_each_entry(mcb, list, node)
		if (mcb->msg_id == msg_id)
			return mcb;
	return NULL;
}

/* The target answered our RTS. */
static void rtscts_rx_cts(struct rtscts_peer *peer,
			  const struct rtscts_frame *f)
{
	struct rtscts_mcb *mcb = rtscts_find(&peer->await_cts, f->msg_id);
	struct ptl_msg *msg;

	if (!mcb) {
		rtscts_count(peer->rif, PTL_STAT_BAD_FRAMES, 1);
		return;
	}
	msg = mcb->msg;
	/* The CTS proves the RTS arrived, acknowledged or not. */
	rtscts_detach_frames(peer, msg);
	mcb->total = min_t(u64, f->length, ptl_msg_len(msg));
	if (f->status == RTSCTS_CTS_DROP || !mcb->total) {
		rtscts_tx_done(peer, msg, PTL_NI_OK);
		return;
	}
	mcb->next_off = 0;
	mcb->state = RTSCTS_M_QUEUED;
	/* Begun: its data follows that of the requests begun before it. */
	list_move_tail(&mcb->node, &peer->txq_begun);
}

static void rtscts_rx_data(struct rtscts_peer *peer, struct sk_buff *skb,
			   const struct rtscts_frame *f)
{
	struct rtscts_mcb *mcb = rtscts_find(&peer->rx_msgs, f->msg_id);
	struct ptl_msg *msg;

	/* The rest of a message that was dropped or failed: discard it. */
	if (!mcb)
		goto out;
	msg = mcb->msg;
	if (f->offset != mcb->next_off ||
	    f->payload_len > mcb->total - mcb->next_off ||
	    ptl_msg_deposit(msg, f->offset, skb, f->hdr_len,
			    f->payload_len)) {
		rtscts_rx_close(peer, mcb);
		rtscts_rx_complete(peer, msg, mcb->request, PTL_NI_FAIL);
		goto out;
	}
	mcb->next_off += f->payload_len;
	if (mcb->next_off == mcb->total) {
		rtscts_rx_close(peer, mcb);
		rtscts_rx_complete(peer, msg, mcb->request, PTL_NI_OK);
	}
out:
	consume_skb(skb);
}

/**
 * rtscts_deliver - the in-sequence frame @skb of @peer
 * @peer: locked
 * @skb: the frame (taken if true is returned)
 * @f: its headers
 *
 * Return: false if it cannot be taken now (no memory, a request past the
 * peer's credit): the caller drops it unacknowledged and the peer sends it
 * again.
 */
bool rtscts_deliver(struct rtscts_peer *peer, struct sk_buff *skb,
		    const struct rtscts_frame *f)
{
	bool request = false;

	if (f->type == RTSCTS_MSG || f->type == RTSCTS_RTS) {
		request = rtscts_credit_is_request(skb, f);
		if (request && !rtscts_credit_may_take(peer))
			return false;
	}
	/* Riders first: the frame may still be refused after them. */
	if (f->riders && !rtscts_rx_riders(peer, skb, f))
		return false;
	switch (f->type) {
	case RTSCTS_MSG:
		return rtscts_rx_msg(peer, skb, f, request);
	case RTSCTS_RTS:
		return rtscts_rx_rts(peer, skb, f, request);
	case RTSCTS_CTS:
		rtscts_rx_cts(peer, f);
		consume_skb(skb);
		return true;
	default:
		rtscts_rx_data(peer, skb, f);
		return true;
	}
}

/* ---- failure ---- */

/* Messages partly received from @peer fail. */
void rtscts_fail_rx(struct rtscts_peer *peer)
{
	struct rtscts_mcb *mcb, *tmp;

	list_for_each_entry_safe(mcb, tmp, &peer->rx_msgs, node)
		rtscts_rx_fail(peer, mcb);
}

static void rtscts_fail_list(struct rtscts_peer *peer, struct list_head *list)
{
	struct rtscts_mcb *mcb, *tmp;

	list_for_each_entry_safe(mcb, tmp, list, node)
		rtscts_tx_done(peer, mcb->msg, PTL_NI_FAIL);
}

/**
 * rtscts_fail_msgs - everything @peer holds fails
 * @peer: locked
 * @rx_too: also the messages partly received from it
 *
 * Frames in flight are forgotten first (they only point at messages),
 * then each message ends once, from the one list that holds it.
 */
void rtscts_fail_msgs(struct rtscts_peer *peer, bool rx_too)
{
	struct rtscts_txf *txf, *tmp;

	list_for_each_entry_safe(txf, tmp, &peer->inflight, node) {
		list_del(&txf->node);
		rtscts_txf_free(txf);
	}
	peer->ninflight = 0;
	list_for_each_entry_safe(txf, tmp, &peer->ctlq, node) {
		list_del(&txf->node);
		rtscts_txf_free(txf);
	}
	rtscts_fail_list(peer, &peer->rspq_held);
	rtscts_fail_list(peer, &peer->rspq_short);
	rtscts_fail_list(peer, &peer->rspq);
	rtscts_fail_list(peer, &peer->txq);
	rtscts_fail_list(peer, &peer->txq_begun);
	rtscts_fail_list(peer, &peer->await_cts);
	rtscts_fail_list(peer, &peer->wait_acks);
	if (rx_too)
		rtscts_fail_rx(peer);
}
