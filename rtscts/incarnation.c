// SPDX-License-Identifier: GPL-2.0
/*
 * Which incarnation of a peer its frames are believed from.
 *
 * A frame claiming a new incarnation of a known peer means, if true, that
 * the peer restarted: everything in flight with it fails and both streams
 * start again (peer.c). Anyone on the segment can send such a frame, and
 * of two forged incarnations X and X + 2^31 one is always "newer"; so a
 * claim is not believed on its own word (issue 20, R4). It is checked
 * with the genuine peer, as TCP checks a RST against its window: the
 * frame is dropped, and a CHALLENGE with a random 64-bit nonce goes to the
 * link-layer address the peer is known at, with dst_inc 0 so that the
 * node there answers whatever its incarnation. Its CHALLENGE_ACK echoes
 * the nonce from its current incarnation: if that is the claimed new one,
 * the restart is believed; if it is the one we knew, the claim was false
 * and nothing changes. A host elsewhere on a switched segment sees neither
 * the nonce nor the answer.
 *
 * A peer that does not answer (a node of an earlier version of this
 * protocol, which drops the unknown type, or one that is gone) is
 * believed to have restarted once its current incarnation has sent
 * nothing for peer_timeout_ms since the first challenge: what a forger
 * can take over then is a peer that has stopped answering, as after the
 * unreachable timeout. The first frames from a node we keep no state for
 * are believed as they come (nothing is known to check them against);
 * only an authenticated interface protects that.
 *
 * Link-layer addresses are learnt only from frames believed here, and of
 * reliable ones only those of the stream followed or a new one that
 * starts with SYN (rtscts_learn_lladdr), never before these checks. On a
 * keyed interface, only from frames that tell the peer's state something
 * new (rtscts_frame_news): the Ethernet header is outside the tag, and a
 * recorded frame replayed from another address must not move the peer.
 * What protects against an address that was learnt wrong all the same
 * (a corrupted source) is told at rtscts_learn_lladdr.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/random.h>

#include "rtscts.h"
#include "rtscts_trace.h"

/* A CHALLENGE or CHALLENGE_ACK, alone in an skb, to @mac. */
static void rtscts_send_chal(struct rtscts_if *rif, u8 type, u32 dst_nid,
			     u32 dst_inc, u64 nonce, const u8 *mac,
			     struct sk_buff_head *xq)
{
	struct rtscts_frame f = {
		.type = type,
		.src_nid = ptl_binding_nid(rif->b),
		.dst_nid = dst_nid,
		.src_inc = rif->incarnation,
		.dst_inc = dst_inc,
		.nonce = nonce,
		.window = rtscts_window(),
		.frame_len = RTSCTS_CHALLENGE_HDR_LEN,
		.csum_len = RTSCTS_CHALLENGE_HDR_LEN,
	};

	rtscts_queue_lone(rif, &f, mac, xq);
}

/*
 * A CHALLENGE to us: answer from our incarnation, echoing the nonce, to
 * the address it came from. No state: one frame answers one frame.
 */
void rtscts_answer_challenge(struct rtscts_if *rif,
			     const struct rtscts_frame *f, const u8 *mac,
			     struct sk_buff_head *xq)
{
	rtscts_send_chal(rif, RTSCTS_CHALLENGE_ACK, f->src_nid, f->src_inc,
			 f->nonce, mac, xq);
}

/* Asks @peer, at its known address, which incarnation it is. Lock held. */
static void rtscts_challenge(struct rtscts_peer *peer, struct sk_buff_head *xq)
{
	unsigned long now = jiffies;

	if (!peer->chal_active) {
		peer->chal_active = true;
		peer->chal_first = now;
	} else if (peer->chal_nonce &&
		   time_before(now, peer->chal_sent + RTSCTS_RESET_INTERVAL)) {
		return;		/* one out already: at most ten a second */
	}
	if (!peer->lladdr_valid)
		return;
	peer->chal_nonce = get_random_u64() | 1;
	peer->chal_sent = now;
	rtscts_count(peer->rif, PTL_STAT_CHALLENGES, 1);
	rtscts_send_chal(peer->rif, RTSCTS_CHALLENGE, peer->nid, 0,
			 peer->chal_nonce, peer->lladdr, xq);
}

/* Believes @inc from now on: a restart, if another was known. */
static void rtscts_believe(struct rtscts_peer *peer, u32 inc)
{
	if (peer->rx_inc)
		rtscts_peer_fail(peer, PTL_EVENT_PEER_RESTARTED);
	peer->rx_inc = inc;
	peer->chal_active = false;
	peer->chal_nonce = 0;
}

/**
 * rtscts_rx_incarnation - is @f from the incarnation of @peer we believe?
 * @peer: locked
 * @f: a checked frame from it
 * @xq: frames to send in answer (a CHALLENGE)
 *
 * Return: true to process the frame; false to drop it (counted stale).
 */
bool rtscts_rx_incarnation(struct rtscts_peer *peer,
			   const struct rtscts_frame *f,
			   struct sk_buff_head *xq)
{
	unsigned long timeout = msecs_to_jiffies(rtscts_peer_timeout_ms);

	if (f->src_inc == peer->rx_inc) {
		/* Its current self spoke: any claim of another was false. */
		peer->chal_active = false;
		if (f->type == RTSCTS_CHALLENGE_ACK && f->nonce == peer->chal_nonce)
			peer->chal_nonce = 0;
		return true;
	}
	if (!peer->rx_inc) {
		rtscts_believe(peer, f->src_inc);	/* first contact */
		return true;
	}
	if (f->type == RTSCTS_CHALLENGE_ACK && peer->chal_nonce &&
	    f->nonce == peer->chal_nonce) {
		rtscts_believe(peer, f->src_inc);	/* it confirmed */
		return true;
	}
	if (peer->chal_active &&
	    time_after(jiffies, peer->chal_first + timeout) &&
	    time_after(jiffies, peer->last_rx + timeout)) {
		/* Its known self has been silent since we asked. */
		rtscts_believe(peer, f->src_inc);
		return true;
	}
	peer->st.stale++;
	rtscts_count(peer->rif, PTL_STAT_STALE_FRAMES, 1);
	if (f->type != RTSCTS_CHALLENGE_ACK)
		rtscts_challenge(peer, xq);
	return false;
}

/**
 * rtscts_frame_news - could only a live sender have sent @f now?
 * @peer: locked; its state before @f is processed (a CHALLENGE_ACK's
 *	nonce is still the one we wait for)
 * @f: a checked frame from it
 *
 * A frame that moves the peer's state forward: a sequenced frame not yet
 * received (or a new stream that may start), an ACK of something not yet
 * acknowledged, the answer to our last CHALLENGE, a RESET of the stream
 * we send on. A recording of any of them, replayed, is none of these.
 */
bool rtscts_frame_news(const struct rtscts_peer *peer,
		       const struct rtscts_frame *f)
{
	switch (f->type) {
	case RTSCTS_ACK:
		return f->ack_stream && f->ack_stream == peer->tx_stream &&
		       rtscts_seq_after(f->ack, peer->snd_una) &&
		       !rtscts_seq_after(f->ack, peer->snd_nxt);
	case RTSCTS_CHALLENGE_ACK:
		return peer->chal_nonce && f->nonce == peer->chal_nonce;
	case RTSCTS_RESET:
		return f->reset_stream == peer->tx_stream;
	default:
		if (f->stream == peer->rx_stream)
			return !rtscts_seq_before(f->seq, peer->rcv_nxt);
		return rtscts_stream_may_start(peer, f);
	}
}

/* @mac is where @peer may be instead (lock held). */
static void rtscts_set_alt(struct rtscts_peer *peer, const u8 *mac)
{
	if (peer->alt_valid && ether_addr_equal(peer->alt_lladdr, mac))
		return;
	trace_rtscts_lladdr(peer->rif, peer->nid, mac, true);
	ether_addr_copy(peer->alt_lladdr, mac);
	peer->alt_valid = true;
}

/**
 * rtscts_learn_lladdr - where @peer is, from a frame that came from it
 * @peer: locked
 * @skb: the frame; it passed every check (its incarnation above)
 * @f: its headers
 * @news: it moves the peer's state forward (rtscts_frame_news; always on
 *	an interface without a key)
 *
 * The source of a frame that teaches becomes the peer's address, unless
 * ptlctl fixed that; of reliable frames, only those of the stream followed
 * or of one that may start. The address it replaces is kept as the
 * alternative until a frame that teaches comes from the new one again.
 *
 * Why keep it: the Ethernet header is outside the checksum and the tag,
 * so the frame that taught may have had its source corrupted on the way
 * (or forged by a host that raced the genuine frame). Our answers then go
 * nowhere, the peer sends its frames again, and on a keyed interface
 * those repeat what we have (not news): nothing would ever teach the true
 * address again, and both ends would stall until the peer timeout. So an
 * authenticated frame that does not teach still names the alternative,
 * and while there is one, the answers to such frames and whatever the
 * timer sends go there as well (rtscts_copy_to_alt): once the peer hears
 * us, its next new frame teaches. A replayed frame moves nothing; its
 * sender gets copies of our answers and of our frames sent again after a
 * timeout, which anyone on the path could read anyway (frames are
 * authenticated, not encrypted).
 *
 * Return: true if @skb came from the alternative and was not taught from:
 * its answers should go there too.
 */
bool rtscts_learn_lladdr(struct rtscts_peer *peer, const struct sk_buff *skb,
			 const struct rtscts_frame *f, bool news)
{
	const u8 *src = eth_hdr(skb)->h_source;

	if (peer->is_static)
		return false;
	if (rtscts_type_reliable(f->type) && f->stream != peer->rx_stream &&
	    !rtscts_stream_may_start(peer, f))
		return false;
	if (peer->lladdr_valid && ether_addr_equal(peer->lladdr, src)) {
		if (news)
			peer->alt_valid = false;	/* confirmed */
		return false;
	}
	if (!news) {
		if (!peer->lladdr_valid)
			return false;
		rtscts_set_alt(peer, src);
		return true;
	}
	if (peer->lladdr_valid)
		rtscts_set_alt(peer, peer->lladdr);
	trace_rtscts_lladdr(peer->rif, peer->nid, src, false);
	ether_addr_copy(peer->lladdr, src);
	peer->lladdr_valid = true;
	return false;
}

/**
 * rtscts_copy_to_alt - the frames of @xq go to @peer's alternative too
 * @peer: locked, with an alternative address (alt_valid)
 * @xq: frames to it, sealed for its address; a copy of each is added
 *
 * Only the link header differs: the tag and checksums do not cover it.
 */
void rtscts_copy_to_alt(struct rtscts_peer *peer, struct sk_buff_head *xq)
{
	struct sk_buff_head copies;
	struct sk_buff *skb, *copy;

	__skb_queue_head_init(&copies);
	skb_queue_walk(xq, skb) {
		copy = pskb_copy(skb, GFP_ATOMIC);
		if (!copy)
			break;
		ether_addr_copy(eth_hdr(copy)->h_dest, peer->alt_lladdr);
		__skb_queue_tail(&copies, copy);
	}
	skb_queue_splice_tail(&copies, xq);
}
