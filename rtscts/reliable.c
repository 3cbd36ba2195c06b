// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability and flow control, per peer and direction.
 *
 * Every MSG, RTS, CTS and DATA frame gets the next sequence number of our
 * stream to the peer and stays on the inflight list until the peer's
 * cumulative acknowledgement passes it; only then does its message count
 * it as delivered. The receiver processes frames strictly in sequence:
 * one ahead of a gap waits in a bounded buffer (ooo), an old one is a
 * duplicate and is dropped, so every frame is delivered exactly once and
 * in order, whatever the link does (loss, reordering, duplication).
 *
 * Acknowledgements ride on every frame (ack_stream, ack, sack). A gap, a
 * duplicate, a probe or every RTSCTS_ACK_EVERY frames (a large frame
 * counting its segments, unless it ends a message) make the receiver
 * answer at once, with a standalone ACK if it has nothing to send. The
 * last frame of a message (ACK_REQ) is answered within ack_delay_us: a
 * process that replies to a message (a ping-pong, a get's REPLY) usually
 * does so sooner, and its reply carries the acknowledgement, so a round
 * trip costs two frames instead of four (timers.c).
 *
 * The sender keeps at most min(cwnd, the peer's window) frames in flight.
 * cwnd grows as TCP Reno's does (slow start, then one frame per window)
 * and shrinks on loss: to half once per recovery episode, to
 * RTSCTS_MIN_CWND on a timeout. Loss is found from the SACK bits as in
 * RFC 6675: a frame with RTSCTS_DUPACK_THRESH frames sacked above it
 * (fewer when fewer are in flight, RFC 5827's early retransmit) is lost
 * and sent again at once, and again if its resend is not acknowledged
 * within an RTO. A loss no SACK can reveal, the last frames of a burst, is
 * found by a tail loss probe (RFC 8985): when nothing has been
 * acknowledged for two smoothed RTTs, the newest frame goes again with
 * ACK_REQ, and the answer's SACK bits show the holes; only if that too
 * stays unanswered does the retransmission timeout collapse the window.
 * After a timeout every frame in flight not sacked is taken as lost and
 * goes again from the oldest, as fast as the acks reopen cwnd (slow
 * start), each asking for an ACK, until the frames that were in flight
 * at the timeout are acknowledged. The timeout adapts (RFC 6298 smoothed
 * RTT and variance, Karn's rule: no sample from a resent frame, nor from
 * an ack that covers one, since the frames behind a resend waited in the
 * peer's buffer for it) within [min_rto_ms, max_rto_ms] and doubles on
 * each timeout.
 *
 * SACK bits are advice for choosing what to resend, never proof of
 * delivery: a receiver may drop what it buffered ahead (memory pressure,
 * a restarted stream), so completion waits for the cumulative ack.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "rtscts.h"
#include "rtscts_trace.h"

static struct kmem_cache *rtscts_txf_cache;

int rtscts_txf_init(void)
{
	rtscts_txf_cache = KMEM_CACHE(rtscts_txf, 0);
	return rtscts_txf_cache ? 0 : -ENOMEM;
}

void rtscts_txf_exit(void)
{
	kmem_cache_destroy(rtscts_txf_cache);
}

/* Bytes one frame in flight holds (ptlctl's mem_bytes). */
unsigned int rtscts_txf_size(void)
{
	return kmem_cache_size(rtscts_txf_cache);
}

struct rtscts_txf *rtscts_txf_alloc(void)
{
	return kmem_cache_zalloc(rtscts_txf_cache, GFP_ATOMIC);
}

void rtscts_txf_free(struct rtscts_txf *txf)
{
	kmem_cache_free(rtscts_txf_cache, txf);
}

/* Frames a peer may have in flight, and what we accept ahead of a gap. */
u32 rtscts_window(void)
{
	return clamp_t(u32, READ_ONCE(rtscts_max_window), RTSCTS_MIN_CWND,
		       RTSCTS_MAX_WINDOW);
}

/* ---- acknowledgements we send ---- */

/* Our ack fields for @peer's stream; sending them settles what was owed. */
void rtscts_fill_ack(struct rtscts_peer *peer, struct rtscts_frame *f)
{
	struct sk_buff *skb;

	f->window = rtscts_window();
	if (!peer->rx_stream)
		return;
	peer->ack_delayed = false;
	f->ack_stream = peer->rx_stream;
	f->ack = peer->rcv_nxt;
	skb_queue_walk(&peer->ooo, skb) {
		u32 d = rtscts_ooo_seq(skb) - peer->rcv_nxt - 1;
		u32 n = rtscts_ooo_seqs(skb);

		for (; n && d < 64; n--, d++)
			f->sack |= 1ULL << d;
	}
	rtscts_credit_fill(peer, f);
	peer->ack_now = false;
	peer->rx_unacked = 0;
	rtscts_ack_timer_idle(peer);
}

/* A frame of just headers (ACK), to @peer. */
void rtscts_send_ack(struct rtscts_peer *peer, struct sk_buff_head *xq,
		     u16 flags)
{
	struct rtscts_frame f = { .type = RTSCTS_ACK, .flags = flags };
	struct sk_buff *skb;

	if (!peer->lladdr_valid)
		return;
	skb = rtscts_alloc_skb(peer->rif, RTSCTS_HDR_LEN, GFP_ATOMIC);
	if (!skb)
		return;
	skb_put(skb, RTSCTS_HDR_LEN);
	if (rtscts_finish_frame(peer, skb, &f)) {
		kfree_skb(skb);
		return;
	}
	__skb_queue_tail(xq, skb);
}

/**
 * rtscts_send_reset - tell a node we keep no state for its stream
 * @rif: our interface
 * @f: its frame (we answer to its nid and incarnation, about its stream)
 * @mac: its link-layer address
 * @last: when we last sent a RESET from this state (rate limit)
 * @xq: where the frame goes
 */
void rtscts_send_reset(struct rtscts_if *rif, const struct rtscts_frame *f,
		       const u8 *mac, unsigned long *last,
		       struct sk_buff_head *xq)
{
	struct rtscts_frame r = {
		.type = RTSCTS_RESET,
		.src_nid = ptl_binding_nid(rif->b),
		.dst_nid = f->src_nid,
		.src_inc = rif->incarnation,
		.dst_inc = f->src_inc,
		.reset_stream = f->stream,
		.window = rtscts_window(),
		.frame_len = RTSCTS_RESET_HDR_LEN,
		.csum_len = RTSCTS_RESET_HDR_LEN,
	};

	if (time_before(jiffies, READ_ONCE(*last) + RTSCTS_RESET_INTERVAL))
		return;
	WRITE_ONCE(*last, jiffies);
	rtscts_queue_lone(rif, &r, mac, xq);
}

/**
 * rtscts_queue_lone - a frame of headers only, sent outside any peer's state
 * @rif: our interface
 * @f: the frame, every field set (frame_len = csum_len = its headers)
 * @mac: where it goes
 * @xq: queued there
 */
void rtscts_queue_lone(struct rtscts_if *rif, const struct rtscts_frame *f,
		       const u8 *mac, struct sk_buff_head *xq)
{
	struct rtscts_frame lone = *f;	/* sealing sets lengths and flags */
	struct sk_buff *skb = rtscts_alloc_skb(rif, lone.frame_len, GFP_ATOMIC);

	if (!skb)
		return;
	skb_put(skb, lone.frame_len);
	if (rtscts_seal_frame(rif, skb, &lone, mac)) {
		kfree_skb(skb);
		return;
	}
	trace_rtscts_tx(rif, lone.dst_nid, &lone);
	__skb_queue_tail(xq, skb);
}

/* ---- acknowledgements we receive ---- */

static void rtscts_rtt_sample(struct rtscts_peer *peer, u64 sent_ns)
{
	u32 r = min_t(u64, div_u64(ktime_get_ns() - sent_ns, NSEC_PER_USEC),
		      U32_MAX / 8);
	u32 rto;

	if (!peer->srtt_us) {
		peer->srtt_us = r;
		peer->rttvar_us = r / 2;
	} else {
		u32 err = abs((s32)(peer->srtt_us - r));

		peer->rttvar_us = (3 * peer->rttvar_us + err) / 4;
		peer->srtt_us = (7 * peer->srtt_us + r) / 8;
	}
	rto = peer->srtt_us + max_t(u32, 4 * peer->rttvar_us,
				    jiffies_to_usecs(1));
	peer->rto_us = clamp_t(u32, rto, rtscts_min_rto_ms * USEC_PER_MSEC,
			       rtscts_max_rto_ms * USEC_PER_MSEC);
}

/* Reno: slow start below ssthresh, then about a frame per window. */
static void rtscts_cwnd_grow(struct rtscts_peer *peer, u32 acked)
{
	u32 max = rtscts_window();

	if (peer->cwnd < peer->ssthresh) {
		peer->cwnd = min(peer->cwnd + acked, max);
		return;
	}
	peer->cwnd_acc += acked;
	if (peer->cwnd_acc >= peer->cwnd) {
		peer->cwnd_acc -= peer->cwnd;
		peer->cwnd = min(peer->cwnd + 1, max);
	}
}

static struct sk_buff *rtscts_rebuild(struct rtscts_peer *peer,
				      struct rtscts_txf *txf)
{
	txf->retransmitted = true;
	txf->sent_ns = ktime_get_ns();
	peer->st.retransmits++;
	rtscts_count(peer->rif, PTL_STAT_RETRANSMITS, 1);
	trace_rtscts_retransmit(peer->rif, peer->nid, txf->seq, txf->type);
	return rtscts_build(peer, txf);
}

/* Halves cwnd once per episode of loss (until snd_una passes its end). */
static void rtscts_enter_recovery(struct rtscts_peer *peer)
{
	/*
	 * Not after a timeout: cwnd is at its floor already, and halving
	 * it again would freeze it there until the whole window is acked.
	 */
	if (peer->in_recovery || peer->rto_recovery)
		return;
	peer->in_recovery = true;
	peer->recovery_end = peer->snd_nxt;
	peer->ssthresh = max_t(u32, peer->cwnd / 2, RTSCTS_MIN_CWND);
	peer->cwnd = peer->ssthresh;
}

/* The RTO in nanoseconds, without back-off. */
static u64 rtscts_rto_ns(const struct rtscts_peer *peer)
{
	return (u64)peer->rto_us * NSEC_PER_USEC;
}

/*
 * Resends what the SACK bits show lost: frames with RTSCTS_DUPACK_THRESH
 * frames sacked above them, not resent within the last RTO.
 */
static void rtscts_sack_recover(struct rtscts_peer *peer,
				struct sk_buff_head *xq)
{
	u64 now = ktime_get_ns(), rto = rtscts_rto_ns(peer);
	u32 thresh = clamp_t(u32, peer->ninflight - 1, 1,
			     RTSCTS_DUPACK_THRESH);
	struct rtscts_txf *txf;
	struct sk_buff *skb;
	u32 above = 0;

	list_for_each_entry_reverse(txf, &peer->inflight, node) {
		if (txf->sacked) {
			above += rtscts_txf_seqs(txf);
			continue;
		}
		if (above < thresh)
			continue;
		if (txf->retransmitted && now - txf->sent_ns < rto)
			continue;
		rtscts_enter_recovery(peer);
		skb = rtscts_rebuild(peer, txf);
		if (skb)
			__skb_queue_tail(xq, skb);
	}
}

/*
 * After a timeout, every frame in flight that the peer has not sacked is
 * taken as lost (RFC 6675's loss recovery): they go again from the
 * oldest, as many as cwnd allows counting the resends still out (pipe).
 * Without this only the timeout resent them, cwnd frames per RTO, since
 * the lost frames keep ninflight above cwnd and rtscts_push sends
 * nothing: after a burst of loss recovery crawled at a few frames a
 * second on a quiet link. Each resend asks for an ACK (ACK_REQ), or the
 * peer, taking it in order, would wait for RTSCTS_ACK_EVERY frames and
 * the next step would cost another timeout.
 */
static void rtscts_resend_lost(struct rtscts_peer *peer,
			       struct sk_buff_head *xq)
{
	u64 now = ktime_get_ns(), rto = rtscts_rto_ns(peer);
	struct rtscts_txf *txf;
	struct sk_buff *skb;
	u32 pipe = 0;

	list_for_each_entry(txf, &peer->inflight, node)
		if (!txf->sacked && txf->retransmitted &&
		    now - txf->sent_ns < rto)
			pipe += rtscts_txf_seqs(txf);
	list_for_each_entry(txf, &peer->inflight, node) {
		if (pipe >= peer->cwnd)
			break;
		if (txf->sacked ||
		    (txf->retransmitted && now - txf->sent_ns < rto))
			continue;
		txf->last = true;	/* ACK_REQ */
		skb = rtscts_rebuild(peer, txf);
		if (skb)
			__skb_queue_tail(xq, skb);
		pipe += rtscts_txf_seqs(txf);
	}
}

/* Is every sequence of @txf among the SACK bits? */
static bool rtscts_txf_sacked(const struct rtscts_txf *txf, u32 ack, u64 sack)
{
	u32 d = txf->seq - ack - 1, n = rtscts_txf_seqs(txf);

	if (d >= 64 || n > 64 - d)
		return false;
	return (sack >> d & GENMASK_ULL(n - 1, 0)) == GENMASK_ULL(n - 1, 0);
}

/* Marks what the SACK bits say arrived. */
static void rtscts_mark_sacked(struct rtscts_peer *peer, u32 ack, u64 sack)
{
	struct rtscts_txf *txf;

	list_for_each_entry(txf, &peer->inflight, node)
		if (rtscts_txf_sacked(txf, ack, sack))
			txf->sacked = true;
}

/*
 * The first @n sequences of the large frame @txf are acknowledged: the
 * rest of it stays in flight, as the frame its remaining segments make
 * (DATA, if it was a MSG: the peer has the header).
 */
static void rtscts_txf_trim(struct rtscts_txf *txf, u32 n)
{
	u32 bytes = n * txf->seg_size;

	if (txf->type == RTSCTS_MSG)
		txf->type = RTSCTS_DATA;
	txf->seq += n;
	txf->off += bytes;
	txf->len -= bytes;
	txf->segs -= n;
	if (txf->segs == 1) {
		txf->segs = 0;
		txf->seg_size = 0;
	}
}

/**
 * rtscts_on_ack - the ack fields of a frame from @peer
 * @peer: locked
 * @f: the frame
 * @xq: for fast retransmissions
 */
void rtscts_on_ack(struct rtscts_peer *peer, const struct rtscts_frame *f,
		   struct sk_buff_head *xq)
{
	struct rtscts_txf *txf, *tmp;
	bool resent = false;
	u64 newest_ns = 0;
	u32 acked = 0;

	if (!f->ack_stream || f->ack_stream != peer->tx_stream)
		return;
	peer->rwnd = f->window;
	rtscts_credit_on_grant(peer, f);
	/* An ack beyond what we sent is a lie: ignore it. */
	if (rtscts_seq_after(f->ack, peer->snd_nxt))
		return;
	peer->tx_synced = true;
	list_for_each_entry_safe(txf, tmp, &peer->inflight, node) {
		u32 seqs = rtscts_txf_seqs(txf);

		if (!rtscts_seq_before(txf->seq, f->ack))
			break;
		if (txf->retransmitted)
			resent = true;
		else
			newest_ns = txf->sent_ns;
		/* Part of a large frame: its segments cut and some lost. */
		if (rtscts_seq_before(f->ack, txf->seq + seqs)) {
			seqs = f->ack - txf->seq;
			rtscts_txf_trim(txf, seqs);
			peer->ninflight -= seqs;
			acked += seqs;
			break;
		}
		list_del(&txf->node);
		peer->ninflight -= seqs;
		acked += seqs;
		rtscts_frame_acked(peer, txf);
		rtscts_txf_free(txf);
	}
	if (acked) {
		peer->snd_una = f->ack;
		peer->last_progress = jiffies;
		peer->backoff = 0;
		peer->probed = false;
		/*
		 * Karn's rule, for the whole ack: when it covers a resent
		 * frame, the frames after it were held in the peer's ooo
		 * buffer until the resend filled the gap, so their age
		 * measures our recovery, not the path. Such a sample (seconds
		 * after a burst loss) would pin the RTO at max_rto_ms and the
		 * tail loss probe at two of those, and recovery would crawl
		 * at a frame or two a second on an idle link.
		 */
		if (newest_ns && !resent)
			rtscts_rtt_sample(peer, newest_ns);
		if ((peer->in_recovery || peer->rto_recovery) &&
		    !rtscts_seq_before(peer->snd_una, peer->recovery_end)) {
			peer->in_recovery = false;
			peer->rto_recovery = false;
		}
		if (!peer->in_recovery)
			rtscts_cwnd_grow(peer, acked);
		rtscts_timer_arm(peer);
	}
	if (f->sack) {
		rtscts_mark_sacked(peer, f->ack, f->sack);
		rtscts_sack_recover(peer, xq);
	}
	if (peer->rto_recovery && (acked || f->sack))
		rtscts_resend_lost(peer, xq);
}

/* ---- sending ---- */

/* Sends new frames while the window allows, then any ACK still owed. */
void rtscts_push(struct rtscts_peer *peer, struct sk_buff_head *xq)
{
	u32 limit = min3(peer->cwnd, peer->rwnd, rtscts_window());
	bool was_idle = !peer->ninflight;
	struct rtscts_txf *txf;
	struct sk_buff *skb;

	if (!rtscts_resolve(peer)) {
		rtscts_timer_arm(peer);
		return;
	}
	while (peer->ninflight < limit) {
		txf = rtscts_next_frame(peer, limit - peer->ninflight);
		if (!txf) {
			/* Nothing to ride on: one rider carries the others. */
			if (!rtscts_held_due(peer))
				break;
			rtscts_unhold_one(peer);
			continue;
		}
		txf->seq = peer->snd_nxt;
		peer->snd_nxt += rtscts_txf_seqs(txf);
		txf->sent_ns = ktime_get_ns();
		list_add_tail(&txf->node, &peer->inflight);
		peer->ninflight += rtscts_txf_seqs(txf);
		rtscts_riders_board(peer, txf);
		/* A frame that cannot be built now goes out on a timeout. */
		skb = rtscts_build(peer, txf);
		if (skb)
			__skb_queue_tail(xq, skb);
	}
	if (was_idle && peer->ninflight) {
		peer->last_progress = jiffies;	/* a new busy period */
		rtscts_timer_arm(peer);
	}
	if (peer->ack_now)
		rtscts_send_ack(peer, xq, 0);
}

/*
 * Tail loss probe: the newest frame the peer does not have goes again,
 * asking for an immediate answer. True if one was sent.
 */
bool rtscts_tail_probe(struct rtscts_peer *peer, struct sk_buff_head *xq)
{
	struct rtscts_txf *txf;
	struct sk_buff *skb;

	list_for_each_entry_reverse(txf, &peer->inflight, node) {
		if (txf->sacked)
			continue;
		peer->probed = true;
		txf->last = true;	/* carries ACK_REQ from now on */
		skb = rtscts_rebuild(peer, txf);
		if (skb)
			__skb_queue_tail(xq, skb);
		return true;
	}
	return false;
}

/*
 * The timer expired with frames in flight: resend the oldest frames the
 * peer does not have, as many as the collapsed window allows. SACK bits
 * are forgotten (RFC 2018: the receiver may have dropped what it held).
 */
void rtscts_retransmit_oldest(struct rtscts_peer *peer,
			      struct sk_buff_head *xq)
{
	struct rtscts_txf *txf;
	struct sk_buff *skb;
	u32 sent = 0;

	if (list_empty(&peer->inflight))
		return;
	peer->st.timeouts++;
	rtscts_count(peer->rif, PTL_STAT_TIMEOUTS, 1);
	peer->ssthresh = max_t(u32, peer->cwnd / 2, RTSCTS_MIN_CWND);
	peer->cwnd = RTSCTS_MIN_CWND;
	peer->in_recovery = false;
	/* The acks of these resends send the rest (rtscts_resend_lost). */
	peer->rto_recovery = true;
	peer->recovery_end = peer->snd_nxt;
	if (peer->backoff < 16)
		peer->backoff++;
	list_for_each_entry(txf, &peer->inflight, node) {
		if (txf->sacked) {
			txf->sacked = false;
			continue;
		}
		if (sent >= peer->cwnd)
			continue;
		sent += rtscts_txf_seqs(txf);
		txf->last = true;	/* ACK_REQ: see rtscts_resend_lost */
		skb = rtscts_rebuild(peer, txf);
		if (skb)
			__skb_queue_tail(xq, skb);
	}
}

/*
 * The peer has no state for our stream (it sent RESET): nothing it has not
 * acknowledged was delivered, so every frame in flight goes again, in
 * order, in a new stream.
 */
void rtscts_restart_stream(struct rtscts_peer *peer, struct sk_buff_head *xq)
{
	struct rtscts_txf *txf, *tmp;
	struct sk_buff *skb;

	rtscts_peer_new_stream(peer);
	list_for_each_entry_safe(txf, tmp, &peer->inflight, node) {
		/*
		 * A frame of a message that ended (an RTS whose CTS came)
		 * cannot be built again: given a sequence number it would
		 * never go, and the peer would wait for it for ever.
		 */
		if (rtscts_txf_orphaned(txf)) {
			list_del(&txf->node);
			peer->ninflight -= rtscts_txf_seqs(txf);
			rtscts_txf_free(txf);
			continue;
		}
		txf->seq = peer->snd_nxt;
		peer->snd_nxt += rtscts_txf_seqs(txf);
		txf->sacked = false;
		rtscts_credit_resent(peer, txf);
		skb = rtscts_rebuild(peer, txf);
		if (skb)
			__skb_queue_tail(xq, skb);
	}
	rtscts_timer_arm(peer);
}

/* ---- receiving ---- */

static void rtscts_count_dup(struct rtscts_peer *peer)
{
	peer->st.duplicates++;
	rtscts_count(peer->rif, PTL_STAT_DUPLICATES, 1);
}

/*
 * @f seen from sequence @nxt on, for a frame that arrived at or behind it
 * (a large frame of which the first segments came before, cut): false if
 * nothing of it is new.
 */
static bool rtscts_frame_from(struct rtscts_frame *f, u32 nxt)
{
	if (!rtscts_seq_after(f->seq + rtscts_frame_seqs(f), nxt))
		return false;
	if (rtscts_seq_before(f->seq, nxt))
		rtscts_frame_skip_segs(f, nxt - f->seq);
	return true;
}

/* Delivers the in-sequence frame @skb; false: not now, keep rcv_nxt. */
static bool rtscts_in_order(struct rtscts_peer *peer, struct sk_buff *skb,
			    const struct rtscts_frame *f)
{
	if (!rtscts_deliver(peer, skb, f)) {
		peer->st.no_buffer++;
		rtscts_count(peer->rif, PTL_STAT_NO_BUFFER, 1);
		return false;
	}
	peer->rcv_nxt += rtscts_frame_seqs(f);
	peer->rx_riders_done = 0;
	peer->ooo_since = jiffies;	/* the gap ahead, if any, is younger */
	/*
	 * A frame that ends a message counts once: it is answered within
	 * ack_delay_us anyway, by the reply that usually comes sooner. A
	 * message of a few frames of the MTU sent as one large frame would
	 * otherwise cost a standalone ACK where one frame of a jumbo MTU
	 * costs none. A large frame inside a message counts its segments,
	 * so that a stream is acknowledged per 64 KiB.
	 */
	peer->rx_unacked += f->flags & RTSCTS_F_ACK_REQ ?
			    1 : rtscts_frame_seqs(f);
	if (peer->rx_unacked >= RTSCTS_ACK_EVERY)
		peer->ack_now = true;
	else if (f->flags & RTSCTS_F_ACK_REQ)
		rtscts_ack_soon(peer);
	return true;
}

/* Delivers what waited for the gap that just closed. */
static void rtscts_drain_ooo(struct rtscts_peer *peer)
{
	struct rtscts_frame f;
	struct sk_buff *skb;

	while ((skb = skb_peek(&peer->ooo))) {
		u32 seq = rtscts_ooo_seq(skb);

		if (rtscts_seq_after(seq, peer->rcv_nxt))
			break;
		skb = rtscts_ooo_pop(peer);
		/* Checked when it arrived; decoded again to spare skb->cb. */
		if (rtscts_frame_decode(skb->data, skb_headlen(skb), skb->len,
					&f) ||
		    !rtscts_frame_from(&f, peer->rcv_nxt)) {
			kfree_skb(skb);
			continue;
		}
		if (!rtscts_in_order(peer, skb, &f)) {
			rtscts_ooo_unpop(peer, skb);
			break;
		}
	}
}

/* Is @f's stream the one we follow? Starts a new one if it may. */
static bool rtscts_rx_stream(struct rtscts_peer *peer,
			     const struct rtscts_frame *f,
			     struct sk_buff_head *xq, const u8 *mac)
{
	if (f->stream == peer->rx_stream)
		return true;
	if (peer->rx_stream && rtscts_seq_before(f->stream, peer->rx_stream)) {
		peer->st.stale++;
		rtscts_count(peer->rif, PTL_STAT_STALE_FRAMES, 1);
		return false;
	}
	if (!(f->flags & RTSCTS_F_SYN)) {
		/* Mid-stream and we know nothing of it: ask for a restart. */
		rtscts_send_reset(peer->rif, f, mac, &peer->last_reset, xq);
		return false;
	}
	if (peer->rif->auth && !f->dst_inc) {
		/*
		 * Keyed, a stream must name this incarnation of us: one that
		 * does not may be a recording from before we were bound
		 * (remember.c). The RESET tells the sender who we are.
		 */
		rtscts_count(peer->rif, PTL_STAT_NO_DST_INC, 1);
		rtscts_send_reset(peer->rif, f, mac, &peer->last_reset, xq);
		return false;
	}
	rtscts_peer_reset_rx(peer);
	peer->rx_stream = f->stream;
	peer->rcv_nxt = 0;
	rtscts_credit_rx_reset(peer, 0);
	return true;
}

/* A sequenced frame from @peer (locked); takes @skb. */
static void rtscts_rx_seq(struct rtscts_peer *peer, struct sk_buff *skb,
			  const struct rtscts_frame *f,
			  struct sk_buff_head *xq)
{
	bool delivered;

	if (!rtscts_rx_stream(peer, f, xq, eth_hdr(skb)->h_source))
		goto drop;
	if (!rtscts_seq_after(f->seq + rtscts_frame_seqs(f), peer->rcv_nxt)) {
		rtscts_count_dup(peer);
		peer->ack_now = true;	/* our ack may have been lost */
		goto drop;
	}
	if (rtscts_seq_after(f->seq, peer->rcv_nxt)) {
		/* Takes the skb: kept (a copy), or dropped and counted. */
		int err = rtscts_ooo_insert(peer, skb, f);

		peer->ack_now = true;
		if (err == -EEXIST) {
			rtscts_count_dup(peer);
		} else if (err == -ENOBUFS) {
			peer->st.no_buffer++;
			rtscts_count(peer->rif, PTL_STAT_NO_BUFFER, 1);
		}
		return;
	}
	if (rtscts_seq_before(f->seq, peer->rcv_nxt)) {
		/* A large frame of which we have the first segments: the rest. */
		struct rtscts_frame rest = *f;

		rtscts_frame_skip_segs(&rest, peer->rcv_nxt - f->seq);
		delivered = rtscts_in_order(peer, skb, &rest);
	} else {
		delivered = rtscts_in_order(peer, skb, f);
	}
	if (!delivered)
		goto drop;
	rtscts_drain_ooo(peer);
	return;
drop:
	kfree_skb(skb);
}

/**
 * rtscts_rx_frame - a checked frame from @peer
 * @peer: locked
 * @skb: the frame (taken)
 * @f: its decoded headers
 * @xq: frames to send in answer
 *
 * What the frame calls for is sent by rtscts_rx_done, after the last of
 * the peer's frames that arrived together (a super-frame's), so that they
 * are acknowledged once.
 * Return: true if it came from the peer's alternative address (the
 * answers go there too).
 */
bool rtscts_rx_frame(struct rtscts_peer *peer, struct sk_buff *skb,
		     const struct rtscts_frame *f, struct sk_buff_head *xq)
{
	struct rtscts_if *rif = peer->rif;
	/* Keyed: no address from a replay (incarnation.c). */
	bool news = !rif->auth || rtscts_frame_news(peer, f);
	bool from_alt;

	if (!rtscts_rx_incarnation(peer, f, xq)) {
		kfree_skb(skb);
		return false;
	}
	from_alt = rtscts_learn_lladdr(peer, skb, f, news);
	peer->last_rx = jiffies;
	peer->last_active = jiffies;
	peer->st.rx_frames++;
	peer->st.rx_bytes += f->frame_len;
	rtscts_count(rif, PTL_STAT_RX_FRAMES, 1);
	rtscts_count(rif, PTL_STAT_RX_BYTES, f->frame_len);
	if (f->segs)	/* a large frame: counted as a super-frame */
		rtscts_count(rif, PTL_STAT_RX_SUPERFRAMES, 1);
	trace_rtscts_rx(rif, peer->nid, f);
	if (peer->state != PTL_PEER_UP && peer->lladdr_valid)
		rtscts_peer_set_state(peer, PTL_PEER_UP);
	rtscts_on_ack(peer, f, xq);

	switch (f->type) {
	case RTSCTS_ACK:
		if (f->flags & RTSCTS_F_ACK_REQ)	/* a probe */
			peer->ack_now = true;
		consume_skb(skb);
		break;
	case RTSCTS_CHALLENGE_ACK:			/* incarnation.c */
		consume_skb(skb);
		break;
	case RTSCTS_RESET:
		if (f->reset_stream == peer->tx_stream) {
			rtscts_restart_stream(peer, xq);
			ptl_binding_peer_event(rif->b, peer->nid,
					       PTL_EVENT_PEER_RESET,
					       peer->rx_inc, 0);
		}
		consume_skb(skb);
		break;
	default:
		rtscts_rx_seq(peer, skb, f, xq);
		break;
	}
	return from_alt;
}

/**
 * rtscts_rx_done - answer the frames just received from @peer
 * @peer: locked
 * @xq: frames to send: new data the acks made room for, an ACK if owed
 * @from_alt: one of them came from the peer's alternative address
 */
void rtscts_rx_done(struct rtscts_peer *peer, struct sk_buff_head *xq,
		    bool from_alt)
{
	rtscts_push(peer, xq);
	if (from_alt)
		rtscts_copy_to_alt(peer, xq);
}
