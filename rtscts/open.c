// SPDX-License-Identifier: GPL-2.0
/*
 * Open messages: those whose header a node has processed and whose
 * payload has not all arrived (an eager MSG whose DATA frames are still
 * to come, an RTS waiting for its DATA). The receiver holds each on its
 * peer's rx_msgs with a struct ptl_msg, which references the target's NI
 * (and so its pid) and MD (an unlink answers PTL_MD_IN_USE) until the
 * message ends. Anyone on the segment can open messages (a MSG announcing
 * 1 MiB and carrying a byte) and never finish them, so they are bounded:
 *
 *   - per peer, RTSCTS_MAX_RX_OPEN, a rule of the protocol: a sender
 *     keeps at most that many of its messages open at a receiver (below),
 *     so a well-behaved one never meets the cap;
 *   - per interface, rx_open_max (module parameter), all peers together;
 *   - in time: a peer silent for peer_timeout_ms while messages from it
 *     are open is unreachable, and they fail (timers.c: its timer runs
 *     while rx_msgs is not empty), with PUT_END or REPLY_END PTL_NI_FAIL;
 *   - by their target: when an NI closes (its process exits, PtlNIFini, a
 *     kernel client's fini), the library asks the transport to cancel
 *     them (ops->cancel_rx), so that the NI is released and its pid is
 *     free at once; the timer sweeps any a race let through.
 * A message over a cap is not matched: a MSG that would stay open is
 * discarded with its DATA, an RTS is answered with a CTS that drops it.
 * Both are counted (rx_open_dropped). The ptl_msg is charged to the memory
 * cgroup of the process that bound the interface, like the frames held
 * ahead of a gap (ooo.c).
 *
 * The sender's side of the rule: a message opens at the receiver when its
 * header frame is sequenced (an RTS; a MSG that does not carry all of the
 * payload) and closes with its last frame (or when it ends otherwise). A
 * receiver processes frames in sequence order, so it never holds more of
 * a sender's messages open than the sender counted when it sequenced a
 * frame. A request that would open one too many waits at the head of txq,
 * and so does every request queued behind it (headers keep their order);
 * the DATA of messages already open (after their CTS) is framed first.
 * Responses wait in the same way on their own queue, rspq.
 *
 * Everything here runs with the peer's lock held, but cancel_rx.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/sched/mm.h>

#include "rtscts.h"

static int rtscts_rx_open_cap(void)
{
	return min_t(unsigned int, READ_ONCE(rtscts_rx_open_max), INT_MAX);
}

/* ---- receiving ---- */

/* Room for one more open message from @peer. */
bool rtscts_rx_room(const struct rtscts_peer *peer)
{
	return peer->rx_open < RTSCTS_MAX_RX_OPEN &&
	       atomic_read(&peer->rif->rx_open) < rtscts_rx_open_cap();
}

/* A message from @peer not taken: over a cap. */
void rtscts_rx_refused(struct rtscts_peer *peer)
{
	peer->st.rx_open_dropped++;
	rtscts_count(peer->rif, PTL_STAT_RX_OPEN_DROPPED, 1);
}

/*
 * The Portals header @wire of a MSG carrying @carried payload bytes, from
 * @peer, to ptl_rx_start(): NULL (and refused) if it would stay open and
 * there is no room for it. The message is allocated in the binder's
 * memory cgroup.
 */
struct ptl_msg *rtscts_rx_start(struct rtscts_peer *peer, const u8 *wire,
				u32 carried, bool rts,
				struct ptl_rx_plan *plan)
{
	struct rtscts_if *rif = peer->rif;
	struct mem_cgroup *old;
	struct ptl_msg *msg;

	/* Decoding the header twice only when a cap is reached. */
	if (!rtscts_rx_room(peer) &&
	    (rts || ptl_rx_payload_len(wire, PTL_WIRE_HDR_LEN) > carried)) {
		memset(plan, 0, sizeof(*plan));
		rtscts_rx_refused(peer);
		return NULL;
	}
	old = set_active_memcg(rif->memcg);
	msg = ptl_rx_start(rif->b, peer->nid, wire, PTL_WIRE_HDR_LEN, plan);
	set_active_memcg(old);
	return msg;
}

/*
 * @mcb's message stays open on rx_msgs; false if that is one too many
 * (another CPU took the interface's last place meanwhile): then it is not
 * listed, and the caller fails it.
 */
bool rtscts_rx_open(struct rtscts_peer *peer, struct rtscts_mcb *mcb)
{
	struct rtscts_if *rif = peer->rif;

	if (peer->rx_open >= RTSCTS_MAX_RX_OPEN ||
	    atomic_inc_return(&rif->rx_open) > rtscts_rx_open_cap()) {
		if (peer->rx_open < RTSCTS_MAX_RX_OPEN)
			atomic_dec(&rif->rx_open);
		rtscts_rx_refused(peer);
		return false;
	}
	peer->rx_open++;
	list_add_tail(&mcb->node, &peer->rx_msgs);
	/*
	 * A peer that only sends to us has no timer running otherwise. One
	 * that is running is left alone (it re-arms for whatever is
	 * outstanding when it fires): moving it would postpone a
	 * retransmission every time a message opens.
	 */
	if (peer->rx_open == 1 && !timer_pending(&peer->timer))
		rtscts_timer_arm(peer);
	return true;
}

/* @mcb's message is no longer open (it is ending). */
void rtscts_rx_close(struct rtscts_peer *peer, struct rtscts_mcb *mcb)
{
	list_del(&mcb->node);
	peer->rx_open--;
	atomic_dec(&peer->rif->rx_open);
}

/* Fails the open message of @mcb, with its events. */
void rtscts_rx_fail(struct rtscts_peer *peer, struct rtscts_mcb *mcb)
{
	bool request = mcb->request;	/* mcb goes with the message */
	struct ptl_msg *resp;

	rtscts_rx_close(peer, mcb);
	peer->st.msgs_failed++;
	rtscts_count(peer->rif, PTL_STAT_MSGS_FAILED, 1);
	resp = ptl_rx_done(mcb->msg, PTL_NI_FAIL);
	if (resp)	/* never for a failure; be safe */
		ptl_msg_sent(resp, PTL_NI_FAIL);
	rtscts_credit_ended(peer, request, NULL);
}

/* Open messages from @peer whose NI is closing fail. */
void rtscts_rx_fail_orphans(struct rtscts_peer *peer)
{
	struct rtscts_mcb *mcb, *tmp;

	list_for_each_entry_safe(mcb, tmp, &peer->rx_msgs, node)
		if (ptl_msg_orphaned(mcb->msg))
			rtscts_rx_fail(peer, mcb);
}

static void rtscts_cancel_rx_peer(struct rtscts_peer *peer, void *unused)
{
	spin_lock_bh(&peer->lock);
	if (!peer->dead)
		rtscts_rx_fail_orphans(peer);
	spin_unlock_bh(&peer->lock);
}

/**
 * rtscts_cancel_rx - ops->cancel_rx: an NI of the interface is closing
 * @b: the binding
 *
 * Its open messages fail now, and with them its last references. Process
 * context; a walk of the peer table, made only when the closing NI had
 * incoming messages.
 */
void rtscts_cancel_rx(struct ptl_binding *b)
{
	rtscts_walk_peers(ptl_binding_priv(b), rtscts_cancel_rx_peer, NULL);
}

/* ---- sending ---- */

/* Would framing the header of @mcb open it at the receiver? */
static bool rtscts_tx_opens(const struct rtscts_peer *peer,
			    const struct rtscts_mcb *mcb)
{
	const struct rtscts_if *rif = peer->rif;

	return mcb->rts ||
	       mcb->total > rtscts_frame_room(rtscts_mtu(rif), RTSCTS_MSG,
					      rif->auth);
}

/* May @mcb's header go, as far as messages open at the peer go? */
static bool rtscts_tx_may_open(const struct rtscts_peer *peer,
			       const struct rtscts_mcb *mcb)
{
	return peer->tx_open < RTSCTS_MAX_RX_OPEN ||
	       !rtscts_tx_opens(peer, mcb);
}

/*
 * May @req's header go, as far as credit goes (credit.c)? A request that
 * must wait is counted once.
 */
static bool rtscts_tx_credit(struct rtscts_peer *peer, struct rtscts_mcb *req)
{
	if (rtscts_credit_left(peer))
		return true;
	if (!req->credit_wait) {
		req->credit_wait = true;
		rtscts_credit_wait(peer);
	}
	return false;
}

/*
 * The list a new message waits on for its frames: requests on txq, in
 * order; responses whole in one frame on rspq_short, the others on rspq.
 * Nothing orders responses among themselves (each answers a request
 * already matched), so the short ones may pass the long.
 */
struct list_head *rtscts_tx_queue(struct rtscts_peer *peer,
				  const struct rtscts_mcb *mcb)
{
	if (!mcb->response)
		return &peer->txq;
	return rtscts_tx_opens(peer, mcb) ? &peer->rspq : &peer->rspq_short;
}

/*
 * The message to frame next: small frames before bulk ones.
 *
 * First a response whole in one frame (rspq_short: an ACK, a short
 * REPLY), then the header of the request at the head of txq (a GET, a
 * short put, an RTS, the first frame of an eager message), if it has
 * room to open at the peer and credit. Neither ever waits behind the
 * megabytes of a message begun before it: a liveness probe or a short MPI
 * message is answered in about a round trip while bulk data streams.
 * Their number is bounded by the requests the peer may have outstanding,
 * and by our own credit and open messages.
 *
 * Then the response at the head of rspq (responses begin only there),
 * its header if it has room to open; then the data of the requests begun
 * (txq_begun: an eager message's rest, those whose CTS came), in the
 * order they began. What waits at the head of a queue holds back what is
 * behind it: requests' headers keep their order.
 */
struct rtscts_mcb *rtscts_tx_next(struct rtscts_peer *peer)
{
	struct rtscts_mcb *mcb;

	mcb = list_first_entry_or_null(&peer->rspq_short, struct rtscts_mcb,
				       node);
	if (mcb)	/* begun only if the MTU shrank since it was queued */
		return mcb;
	mcb = list_first_entry_or_null(&peer->txq, struct rtscts_mcb, node);
	if (mcb && rtscts_tx_may_open(peer, mcb) && rtscts_tx_credit(peer, mcb))
		return mcb;
	mcb = list_first_entry_or_null(&peer->rspq, struct rtscts_mcb, node);
	if (mcb && (mcb->hdr_out || rtscts_tx_may_open(peer, mcb)))
		return mcb;
	return list_first_entry_or_null(&peer->txq_begun, struct rtscts_mcb,
					node);
}

/* The header of @mcb is framed and not all of its payload: it is open. */
void rtscts_tx_open(struct rtscts_peer *peer, struct rtscts_mcb *mcb)
{
	if (mcb->open)
		return;
	mcb->open = true;
	peer->tx_open++;
}

/* Its last frame is framed, or it ended: no longer open. */
void rtscts_tx_close(struct rtscts_peer *peer, struct rtscts_mcb *mcb)
{
	if (!mcb->open)
		return;
	mcb->open = false;
	peer->tx_open--;
}
