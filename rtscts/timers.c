// SPDX-License-Identifier: GPL-2.0
/*
 * The one timer of each peer, and everything that runs on it:
 *
 *   - waiting for a link-layer address: ask ARP again after
 *     RTSCTS_RESOLVE_RETRY_MS, doubled per try up to 1.28 s (a full
 *     table of peers that never resolve cost 800,000 callbacks a second
 *     at 16384 peers with a fixed 20 ms; now about 13,000);
 *   - frames in flight: first a tail loss probe after two smoothed RTTs
 *     without an acknowledgement (reliable.c), then the retransmission
 *     timeout (rto_us, doubled per consecutive timeout up to
 *     max_rto_ms); either waits a tick more, once, when the timer fires
 *     late (rtscts_timer_late);
 *   - nothing in flight but something awaited from the peer (a CTS, the
 *     rest of a message it is sending): a probe (an ACK asking for an ACK)
 *     every max(rto, 100 ms), so that a live peer answers;
 *   - and in every case, a peer that has made no progress for
 *     peer_timeout_ms is unreachable: what is in flight with it fails
 *     (peer.c). That bound is what Documentation/wire-protocol.md
 *     promises: no operation waits on a dead peer longer;
 *   - frames held ahead of a gap that has not closed for peer_timeout_ms
 *     are freed (ooo.c), whether or not anything else is outstanding:
 *     the gap may be one that never closes, from a node that sends
 *     nothing else.
 *   - while the peer has an alternative address (incarnation.c: the one
 *     its address was learnt in place of, perhaps from a frame whose
 *     source was corrupted), what the timer sends goes there as well;
 *   - messages open from the peer (open.c) keep it running like anything
 *     else outstanding, also for a peer that only sends to us: one that
 *     falls silent for peer_timeout_ms is unreachable and they fail. Those
 *     whose NI is closing fail at the next expiry if cancel_rx missed them.
 * A peer with nothing outstanding and nothing held has no timer running.
 *
 * Besides, a high-resolution timer (softirq mode) sends the acknowledgement
 * of a message's last frame ack_delay_us after it arrived, unless a frame
 * to the peer carried it first (reliable.c), and the responses that waited
 * as long for a frame to ride on (riders.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/jiffies.h>

#include "rtscts.h"

#define RTSCTS_PROBE_MIN_MS	100

/* Something is outstanding with @peer (lock held). */
bool rtscts_busy(const struct rtscts_peer *peer)
{
	return peer->ninflight || !list_empty(&peer->ctlq) ||
	       !list_empty(&peer->txq) || !list_empty(&peer->txq_begun) ||
	       !list_empty(&peer->rspq) || !list_empty(&peer->rspq_short) ||
	       !list_empty(&peer->rspq_held) ||
	       !list_empty(&peer->await_cts) ||
	       !list_empty(&peer->rx_msgs);
}

static unsigned long rtscts_rto_jiffies(const struct rtscts_peer *peer)
{
	u64 us = (u64)peer->rto_us << peer->backoff;

	us = min_t(u64, us, (u64)rtscts_max_rto_ms * USEC_PER_MSEC);
	return max_t(unsigned long, usecs_to_jiffies(us), 1);
}

/* Two smoothed RTTs, at least a tick: when a tail loss probe is due. */
static unsigned long rtscts_pto_jiffies(const struct rtscts_peer *peer)
{
	return max_t(unsigned long, usecs_to_jiffies(2 * peer->srtt_us), 2);
}

/* Frames held ahead of a gap (lock held). */
static bool rtscts_holding(const struct rtscts_peer *peer)
{
	return !skb_queue_empty(&peer->ooo);
}

/* (Re)arms the timer for what @peer waits for now. Lock held. */
void rtscts_timer_arm(struct rtscts_peer *peer)
{
	unsigned long delay;

	if (peer->dead)
		return;
	peer->late_waited = false;
	if (!rtscts_busy(peer)) {
		if (rtscts_holding(peer))
			mod_timer(&peer->timer, rtscts_ooo_deadline(peer));
		return;
	}
	if (!peer->lladdr_valid)
		delay = msecs_to_jiffies(RTSCTS_RESOLVE_RETRY_MS <<
					 min_t(u8, peer->resolve_tries,
					       RTSCTS_RESOLVE_BACKOFF));
	else if (peer->ninflight && !peer->probed && peer->srtt_us)
		delay = min(rtscts_pto_jiffies(peer), rtscts_rto_jiffies(peer));
	else if (peer->ninflight)
		delay = rtscts_rto_jiffies(peer);
	else
		delay = max(rtscts_rto_jiffies(peer),
			    msecs_to_jiffies(RTSCTS_PROBE_MIN_MS));
	if (rtscts_holding(peer) &&
	    time_before(rtscts_ooo_deadline(peer), jiffies + delay))
		delay = max_t(long, rtscts_ooo_deadline(peer) - jiffies, 1);
	mod_timer(&peer->timer, jiffies + delay);
}

/* Since when has @peer made no progress on what is outstanding? */
static unsigned long rtscts_stalled_since(const struct rtscts_peer *peer)
{
	if (peer->ninflight || !peer->lladdr_valid)
		return peer->last_progress;
	return peer->last_rx;
}

/* The ack timer fires @delay_us from now. Lock held. */
void rtscts_ack_timer_start(struct rtscts_peer *peer, unsigned int delay_us)
{
	hrtimer_start(&peer->ack_timer,
		      ns_to_ktime((u64)delay_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
}

/* The last frame of a message arrived: acknowledge it soon. Lock held. */
void rtscts_ack_soon(struct rtscts_peer *peer)
{
	unsigned int delay = READ_ONCE(rtscts_ack_delay_us);

	if (!delay) {
		peer->ack_now = true;
		return;
	}
	if (peer->ack_delayed)
		return;
	peer->ack_delayed = true;
	rtscts_ack_timer_start(peer, delay);
}

/*
 * A frame is carrying the acknowledgement: the ack timer has nothing left
 * to send unless a response waits for a frame (riders.c). Stopped now, it
 * does not fire for nothing once per message of a ping-pong. Lock held;
 * a callback already running finds nothing to do.
 */
void rtscts_ack_timer_idle(struct rtscts_peer *peer)
{
	if (list_empty(&peer->rspq_held))
		hrtimer_try_to_cancel(&peer->ack_timer);
}

enum hrtimer_restart rtscts_ack_timer_fn(struct hrtimer *t)
{
	struct rtscts_peer *peer = container_of(t, struct rtscts_peer,
						ack_timer);
	struct sk_buff_head xq;

	__skb_queue_head_init(&xq);
	spin_lock_bh(&peer->lock);
	if (peer->dead)
		goto out;
	/* Responses that found no frame to ride on go now (riders.c). */
	if (!list_empty(&peer->rspq_held)) {
		peer->held_due = true;
		rtscts_push(peer, &xq);
	}
	/* Nothing went the other way meanwhile to carry it. */
	if (peer->ack_delayed)
		rtscts_send_ack(peer, &xq, 0);
out:
	spin_unlock_bh(&peer->lock);
	rtscts_xmit(peer->rif, &xq);
	return HRTIMER_NORESTART;
}

/*
 * The loss timer fired well after its time: this host ran no softirq
 * meanwhile (a preempted vCPU, or ksoftirqd queued behind busy processes:
 * 16 MPI ranks on two vCPUs stalled it for 26 ms), and what arrived in
 * that time still waits in the receive queues, behind this timer: the
 * timer softirq runs before NET_RX. A probe or a timeout now would mostly
 * resend what the peer has, and a timeout would collapse cwnd for
 * nothing (a third of mpi_unexpected's frames at 16 ranks). Wait a tick
 * for those acknowledgements, once: true if the caller is to do nothing
 * now. The timer wheel fires a timer up to an eighth of its delay late on
 * its own (its coarser levels), hence the margin.
 */
static bool rtscts_timer_late(struct rtscts_peer *peer)
{
	unsigned long margin = 2 + rtscts_rto_jiffies(peer) / 8;

	if (peer->late_waited ||
	    !time_after(jiffies, peer->timer.expires + margin))
		return false;
	peer->late_waited = true;
	peer->st.late_timers++;
	rtscts_count(peer->rif, PTL_STAT_LATE_TIMERS, 1);
	mod_timer(&peer->timer, jiffies + 1);
	return true;
}

void rtscts_timer_fn(struct timer_list *t)
{
	struct rtscts_peer *peer = from_timer(peer, t, timer);
	struct rtscts_if *rif = peer->rif;
	unsigned long timeout = msecs_to_jiffies(rtscts_peer_timeout_ms);
	struct sk_buff_head xq;

	__skb_queue_head_init(&xq);
	spin_lock_bh(&peer->lock);
	if (peer->dead)
		goto out;
	rtscts_ooo_expire(peer);
	rtscts_rx_fail_orphans(peer);
	if (!rtscts_busy(peer)) {
		rtscts_timer_arm(peer);		/* for the gap, if one is open */
		goto out;
	}
	if (time_after(jiffies, rtscts_stalled_since(peer) + timeout)) {
		rtscts_peer_fail(peer, PTL_EVENT_PEER_UNREACHABLE);
		goto out;
	}
	if (!peer->lladdr_valid) {
		rtscts_push(peer, &xq);		/* resolves, or re-arms */
		goto out;
	}
	if (peer->ninflight && rtscts_timer_late(peer))
		goto out;
	if (peer->ninflight && !peer->probed && peer->srtt_us) {
		if (!rtscts_tail_probe(peer, &xq))
			rtscts_retransmit_oldest(peer, &xq);
	} else if (peer->ninflight) {
		rtscts_retransmit_oldest(peer, &xq);
	} else if (time_after(jiffies, peer->last_rx +
			      rtscts_rto_jiffies(peer))) {
		rtscts_send_ack(peer, &xq, RTSCTS_F_ACK_REQ);
	}
	rtscts_push(peer, &xq);
	/* Unanswered: it may be where we knew it before (incarnation.c). */
	if (peer->alt_valid)
		rtscts_copy_to_alt(peer, &xq);
	rtscts_timer_arm(peer);
out:
	spin_unlock_bh(&peer->lock);
	rtscts_xmit(rif, &xq);
}
