// SPDX-License-Identifier: GPL-2.0
/*
 * Request credit: how many requests one peer may have outstanding here.
 *
 * A request (PUT, GET, GETPUT) may make this node queue a response (ACK,
 * REPLY) to its sender, and that response waits for the sender to take
 * it. A node cannot queue responses to a peer without bound, so it takes
 * at most RTSCTS_REQ_CREDIT requests from each peer's stream before it is
 * done with them: done when no response was made, or when the response
 * made has been acknowledged. Every frame carries the count below which
 * the receiver of the frame may send request headers on its stream
 * (grant: requests done + RTSCTS_REQ_CREDIT, cumulative from the
 * stream's start, mod 2^32), and a sender frames a request's header only
 * below the last grant it heard. Responses never wait for credit, and
 * pass requests that do (requests keep their order among themselves).
 *
 * Why the sender keeps count, not the receiver alone: a receiver that
 * refuses a peer's frames (they come again) stalls that peer's in-order
 * stream, responses and all. When two nodes flood each other with
 * requests, each one's responses then sit behind frames the other
 * refuses, neither queue drains, and both wait until the peer timeout
 * (the 4-rank mpi_unexpected hang, Documentation/wire-protocol.md). With
 * the grant an honest sender is never refused: its responses flow, the
 * peer's acknowledgements of them return the credit, and refusing is
 * left for a sender that ignores the grant.
 *
 * The credit is per peer, and anyone on the segment can be many peers
 * (forged nids, up to max_peers): so the interface also bounds the
 * requests it holds from all peers together (rx_reqs_max, module
 * parameter). Past that it refuses requests whatever their sender's
 * credit, honest senders' too: they send them again, later. Each request
 * held costs about a ptl_msg (its response), charged to the binder's
 * memory cgroup.
 *
 * Everything here runs with the peer's lock held.
 */
#include "rtscts.h"

/* ---- sending: our stream to the peer ---- */

/* Our stream starts afresh: the peer grants a full credit to a new one. */
void rtscts_credit_tx_reset(struct rtscts_peer *peer)
{
	peer->tx_reqs = 0;
	peer->tx_grant = RTSCTS_REQ_CREDIT;
}

/* May the header of another request be framed now? */
bool rtscts_credit_left(const struct rtscts_peer *peer)
{
	return rtscts_seq_before(peer->tx_reqs, peer->tx_grant);
}

/* The header of a request is framed: it holds a credit at the peer. */
void rtscts_credit_spend(struct rtscts_peer *peer)
{
	peer->tx_reqs++;
}

/*
 * @txf, in flight, goes again on a new stream (rtscts_restart_stream): a
 * request's header there is the peer's to count again, and so ours.
 */
void rtscts_credit_resent(struct rtscts_peer *peer,
			  const struct rtscts_txf *txf)
{
	if ((txf->type == RTSCTS_MSG || txf->type == RTSCTS_RTS) &&
	    txf->msg && !rtscts_mcb(txf->msg)->response)
		peer->tx_reqs++;
}

/* A request waits for the peer's grant: counted once per wait. */
void rtscts_credit_wait(struct rtscts_peer *peer)
{
	rtscts_count(peer->rif, PTL_STAT_CREDIT_WAITS, 1);
}

/*
 * The grant of a frame about our stream (@f->ack_stream is tx_stream).
 * Frames may arrive out of order, so only a larger grant counts; one past
 * what a full credit allows is a lie, and ignored.
 */
void rtscts_credit_on_grant(struct rtscts_peer *peer,
			    const struct rtscts_frame *f)
{
	if (rtscts_seq_after(f->grant, peer->tx_grant) &&
	    !rtscts_seq_after(f->grant, peer->tx_reqs + RTSCTS_REQ_CREDIT))
		peer->tx_grant = f->grant;
}

/* ---- receiving: the peer's stream to us ---- */

/* Requests of @peer's stream taken and not done. */
static u32 rtscts_credit_held(const struct rtscts_peer *peer)
{
	return peer->rx_reqs - peer->rx_reqs_done;
}

/*
 * A new stream from the peer, or one recalled with @taken requests. What
 * the old stream held no longer counts: its responses, if they are still
 * queued, return no credit (rtscts_credit_answered).
 */
void rtscts_credit_rx_reset(struct rtscts_peer *peer, u32 taken)
{
	atomic_sub(rtscts_credit_held(peer), &peer->rif->rx_reqs);
	peer->rx_reqs = taken;
	peer->rx_reqs_done = taken;
	peer->grant_sent = taken + RTSCTS_REQ_CREDIT;
}

/* Our grant, into a frame that acknowledges the peer's stream. */
void rtscts_credit_fill(struct rtscts_peer *peer, struct rtscts_frame *f)
{
	f->grant = peer->rx_reqs_done + RTSCTS_REQ_CREDIT;
	peer->grant_sent = f->grant;
}

/* True for a MSG or RTS frame whose Portals header is a request's. */
bool rtscts_credit_is_request(const struct sk_buff *skb,
			      const struct rtscts_frame *f)
{
	u8 type = ptl_wire_type(skb->data + RTSCTS_PTL_HDR_OFF);

	return type == PTL_MSG_PUT || type == PTL_MSG_GET ||
	       type == PTL_MSG_GETPUT;
}

/*
 * May a request from the peer be taken? Not past its credit: the peer
 * ignored our grant, and its frame is dropped unacknowledged.
 */
bool rtscts_credit_may_take(struct rtscts_peer *peer)
{
	if (rtscts_credit_held(peer) < RTSCTS_REQ_CREDIT &&
	    atomic_read(&peer->rif->rx_reqs) <
	    min_t(unsigned int, READ_ONCE(rtscts_rx_reqs_max), INT_MAX))
		return true;
	rtscts_count(peer->rif, PTL_STAT_CREDIT_REFUSED, 1);
	return false;
}

/* A request from the peer is taken (its header delivered). */
void rtscts_credit_take(struct rtscts_peer *peer)
{
	peer->rx_reqs++;
	atomic_inc(&peer->rif->rx_reqs);
}

/*
 * We are done with a request from the peer. A sender waiting for credit
 * hears of it in our next frame; when a quarter of a credit has come back
 * since the last grant we sent, that frame goes now (an ACK if nothing
 * else is going), as a window update does. One lost is made good when the
 * waiting sender probes us (timers.c).
 */
void rtscts_credit_done(struct rtscts_peer *peer)
{
	peer->rx_reqs_done++;
	atomic_dec(&peer->rif->rx_reqs);
	if (peer->rx_reqs_done + RTSCTS_REQ_CREDIT - peer->grant_sent >=
	    RTSCTS_REQ_CREDIT / 4)
		peer->ack_now = true;
}

/*
 * A request from the peer ended (@request false: it was a response) and
 * made @resp, just queued, or none: done now, or when @resp has been
 * acknowledged (rtscts_credit_answered).
 */
void rtscts_credit_ended(struct rtscts_peer *peer, bool request,
			 struct ptl_msg *resp)
{
	if (!request)
		return;
	if (resp)
		rtscts_mcb(resp)->answers = peer->rx_stream;
	else
		rtscts_credit_done(peer);
}

/* Our response @mcb ended, acknowledged or failed. */
void rtscts_credit_answered(struct rtscts_peer *peer,
			    const struct rtscts_mcb *mcb)
{
	/* A request of an earlier stream of the peer counts no more. */
	if (mcb->answers && mcb->answers == peer->rx_stream)
		rtscts_credit_done(peer);
}

/*
 * @peer goes, all of its messages failed (which made its requests done):
 * whatever it still held leaves the interface's count.
 */
void rtscts_credit_release(struct rtscts_peer *peer)
{
	rtscts_credit_rx_reset(peer, peer->rx_reqs);
}
