// SPDX-License-Identifier: GPL-2.0
/*
 * Responses that ride on other frames (wire version 4).
 *
 * A Portals ACK, or a REPLY of no bytes, is a 96-byte header the peer's
 * library waits on, yet as a MSG frame of its own it costs what a frame
 * costs on both hosts. An eager MPI message asks for an ACK, so an 8 B MPI
 * ping-pong sent two frames per message where a put ping-pong sends one
 * (Documentation/performance.md). Such responses are riders: queued on
 * rspq_held, they wait at most ack_delay_us (the delayed acknowledgement's
 * own timer, timers.c) for a reliable frame to the same peer, and board
 * the first that has room after its own headers and payload, up to
 * RTSCTS_MAX_RIDERS. In a ping-pong that frame is the pong. When the wait
 * is over, or an acknowledgement is owed at once, one of them goes as a
 * MSG frame of its own and takes the others with it.
 *
 * Responses keep the order they were made in, as when each was a frame
 * of its own: the receiver takes a frame's riders before its own message,
 * so riders are always older than a carrier that is itself a short
 * response (msg_id, given in queueing order, tells), and the one that
 * carries the others when the wait ends is the newest of those that fit.
 *
 * A rider is part of its frame from then on: sent again with it, and done
 * (its message acknowledged) when the frame is. Only an RTS carries none:
 * its CTS may end its message before the peer acknowledges the frame
 * (proto.c), and a frame whose message ended is never sent again.
 *
 * The receiver delivers a frame's riders before the frame's own message,
 * each as if it had come alone. They need no credit and Portals orders
 * them against nothing else (each answers a request matched before), so
 * carrying them after a later frame's headers reorders nothing Portals
 * orders. A rider that is not a response is refused: it would pass the
 * credit that bounds what this node answers (credit.c).
 *
 * Everything here runs with the peer's lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "rtscts.h"

/* ---- sending ---- */

/*
 * Is @mcb a response that may wait for a frame to ride on? Only the ACK
 * of a small put: the initiator of a larger one may wait for its ACK to
 * complete an operation (MPI's long protocol does, over this node's reply
 * to it), and a large put gains little from one frame less. Never a
 * REPLY, even of no bytes: it is what the initiator of a get waits for,
 * and the target of a get has, as a rule, nothing else to send it (a
 * 0-byte get took 37 us instead of 9 across a veth, held ack_delay_us).
 * It still carries the ACKs held when it goes.
 */
bool rtscts_may_ride(const struct rtscts_mcb *mcb)
{
	const u8 *hdr = ptl_msg_hdr(mcb->msg);

	return mcb->response && !mcb->total && READ_ONCE(rtscts_ack_delay_us) &&
	       ptl_wire_type(hdr) == PTL_MSG_ACK &&
	       ptl_wire_rlength(hdr) <= READ_ONCE(rtscts_ride_max_bytes);
}

/*
 * @mcb waits on rspq_held for a frame, at most ack_delay_us: the timer
 * that sends a delayed acknowledgement ends the wait, whatever it was
 * started for.
 */
void rtscts_hold(struct rtscts_peer *peer, struct rtscts_mcb *mcb)
{
	list_add_tail(&mcb->node, &peer->rspq_held);
	if (!hrtimer_is_queued(&peer->ack_timer))
		rtscts_ack_timer_start(peer, READ_ONCE(rtscts_ack_delay_us));
}

/*
 * Must the riders go without waiting further for a frame? When their wait
 * is over, and when an acknowledgement is owed now: the frame they make
 * carries it.
 */
bool rtscts_held_due(struct rtscts_peer *peer)
{
	if (list_empty(&peer->rspq_held)) {
		peer->held_due = false;
		return false;
	}
	return peer->held_due || peer->ack_now;
}

/* Riders a frame of @type with @len bytes of payload has room for. */
static u32 rtscts_peer_rider_room(const struct rtscts_peer *peer, u8 type,
				  u32 len)
{
	return rtscts_rider_room(rtscts_mtu(peer->rif), type, peer->rif->auth,
				 len);
}

/*
 * One held response goes as a message of its own: the one right after as
 * many of the oldest as can ride on it, so that all of them arrive in
 * order (riders first).
 */
void rtscts_unhold_one(struct rtscts_peer *peer)
{
	u32 room = rtscts_peer_rider_room(peer, RTSCTS_MSG, 0);
	struct rtscts_mcb *mcb;

	list_for_each_entry(mcb, &peer->rspq_held, node)
		if (!room-- || list_is_last(&mcb->node, &peer->rspq_held))
			break;
	list_move_tail(&mcb->node, &peer->rspq_short);
}

/* May @rider go before the message of @txf without passing it? */
static bool rtscts_rider_before(const struct rtscts_mcb *rider,
				const struct rtscts_txf *txf)
{
	if (!txf->msg || !rtscts_mcb(txf->msg)->response)
		return true;	/* a CTS, a request's frame */
	return rtscts_seq_before(rider->msg_id, txf->msg_id);
}

/**
 * rtscts_riders_board - held responses board a frame just given a sequence
 * @peer: locked
 * @txf: a reliable frame, sent for the first time next
 *
 * As many as fit in the MTU after its headers and payload.
 */
void rtscts_riders_board(struct rtscts_peer *peer, struct rtscts_txf *txf)
{
	struct rtscts_mcb *mcb, *tmp;
	u32 room;

	/* Every frame passes here: most find nothing held. */
	if (list_empty(&peer->rspq_held) || txf->type == RTSCTS_RTS ||
	    txf->segs)
		return;
	room = rtscts_peer_rider_room(peer, txf->type, txf->len);
	list_for_each_entry_safe(mcb, tmp, &peer->rspq_held, node) {
		if (txf->nriders == room || !rtscts_rider_before(mcb, txf))
			break;
		mcb->hdr_out = true;
		mcb->unacked = 1;
		mcb->state = RTSCTS_M_WAIT_ACKS;
		list_move_tail(&mcb->node, &peer->wait_acks);
		txf->riders[txf->nriders++] = mcb->msg;
	}
	if (list_empty(&peer->rspq_held))
		peer->held_due = false;
	if (txf->nriders)
		rtscts_count(peer->rif, PTL_STAT_TX_RIDERS, txf->nriders);
}

/* The riders' Portals headers, into a frame being built at @dst. */
void rtscts_riders_copy(const struct rtscts_txf *txf, u8 *dst)
{
	u8 i;

	for (i = 0; i < txf->nriders; i++)
		memcpy(dst + i * RTSCTS_RIDER_LEN, ptl_msg_hdr(txf->riders[i]),
		       RTSCTS_RIDER_LEN);
}

/* The peer acknowledged @txf: its riders are done. */
void rtscts_riders_acked(struct rtscts_peer *peer, struct rtscts_txf *txf)
{
	u8 i;

	for (i = 0; i < txf->nriders; i++)
		rtscts_tx_done(peer, txf->riders[i], PTL_NI_OK);
	txf->nriders = 0;
}

/* ---- receiving ---- */

/* One rider, at @wire; false if it cannot be taken now (no memory). */
static bool rtscts_rx_rider(struct rtscts_peer *peer, const u8 *wire)
{
	u8 type = ptl_wire_type(wire);
	struct ptl_rx_plan plan;
	struct ptl_msg *msg;

	if (type != PTL_MSG_ACK && type != PTL_MSG_REPLY) {
		rtscts_count(peer->rif, PTL_STAT_BAD_FRAMES, 1);
		return true;
	}
	msg = rtscts_rx_start(peer, wire, 0, false, &plan);
	if (IS_ERR(msg))
		return false;
	peer->st.msgs_rx++;
	rtscts_count(peer->rif, PTL_STAT_MSGS_RX, 1);
	rtscts_count(peer->rif, PTL_STAT_RX_RIDERS, 1);
	/* A REPLY that says it has payload has none here: it fails. */
	if (msg)
		rtscts_rx_complete(peer, msg, false,
				   plan.payload ? PTL_NI_FAIL : PTL_NI_OK);
	return true;
}

/**
 * rtscts_rx_riders - deliver the riders of the in-sequence frame @skb
 * @peer: locked
 * @skb: the frame, its headers (riders included) linear
 * @f: its headers
 *
 * Return: false if one cannot be taken now: the frame is dropped and comes
 * again, and rx_riders_done says which of its riders were delivered
 * already, so that none is delivered twice.
 */
bool rtscts_rx_riders(struct rtscts_peer *peer, struct sk_buff *skb,
		      const struct rtscts_frame *f)
{
	while (peer->rx_riders_done < f->riders) {
		if (!rtscts_rx_rider(peer, skb->data + f->riders_off +
				     peer->rx_riders_done * RTSCTS_RIDER_LEN))
			return false;
		peer->rx_riders_done++;
	}
	return true;
}
