// SPDX-License-Identifier: GPL-2.0
/*
 * The periodic look at an interface's connections: the progress watchdog,
 * the return of what a quiet connection made, and the idle close.
 *
 * Progress watchdog. RC promises that a work request completes, or the
 * QP fails, within its retry budget (PRD_RETRY_COUNT times the ACK
 * timeout: under 2 s), and a live peer answers an RTS with a CTS, a CTS
 * with WRITEs and a DONE, and returns credits as soon as its receive
 * handler runs. So a connection that has work outstanding and sees no
 * message frame complete either way for progress_timeout_ms is broken,
 * whatever broke it:
 * a peer whose node died after acknowledging our CTS (nothing of ours is
 * in flight, so RC never tells us), a provider that stalled its send
 * queue without an error (Soft-RoCE has, rdma-transport.md), a send that
 * waits forever for a receive buffer (RNR retries are unlimited). Such a
 * connection is killed like any failed one, and its operations end with
 * failure events within a bounded time. Halfway there it is probed with a
 * NOOP (prd_conn_probe()), which often ends the wait sooner either way;
 * and a quiet connection whose CQ holds unprocessed completions gets one
 * at once (prd_conn_backlog()).
 *
 * Quiet. A connection that has moved nothing for PRD_TRIM_MS gives back
 * the send buffers and MRs it made for its traffic (demand.c).
 *
 * Idle close. Even quiet, a connection costs a QP and a CQ (some 100 KiB
 * on Soft-RoCE, rdma-transport.md); one to every peer ever talked to
 * would add up to gigabytes on a large machine. One that has been idle
 * for peer_idle_s is closed by the handshake of close.c, and made again
 * by the next message.
 *
 * Both judge a connection by what changed since the last look: the clock
 * restarts whenever a message frame completes (sent or received; NOOPs,
 * probes and CLOSEs do not count) and whenever the connection starts or
 * stops waiting for something, so neither fires on a busy connection,
 * and the watchdog never on an idle one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "prd.h"

/* At most this long between looks, and at least this long. */
#define PRD_SWEEP_MAX_MS	1000
#define PRD_SWEEP_MIN_MS	50

enum prd_verdict {
	PRD_CONN_FINE,
	PRD_CONN_SLOW,		/* half the timeout: probe it */
	PRD_CONN_BACKLOG,	/* quiet, with completions unprocessed */
	PRD_CONN_STALLED,
	PRD_CONN_IDLE,
	PRD_CONN_QUIET,		/* give back what it made: demand.c */
};

/* Something of ours or the peer's is under way. conn->lock held. */
bool prd_conn_waiting(struct prd_conn *conn)
{
	int i;

	if (!list_empty(&conn->txq) || !list_empty(&conn->inflight) ||
	    !list_empty(&conn->rts_wait) || !list_empty(&conn->ctlq) ||
	    READ_ONCE(conn->in.busy) || READ_ONCE(conn->rsink_busy) ||
	    READ_ONCE(conn->rsink_release))
		return true;
	/*
	 * A target slot waits for the initiator's WRITEs and DONE; a get
	 * held with its sink waits for the target's SINK frame.
	 */
	for (i = 0; conn->rxs && conn->sinks && i < PRD_RDMA_SLOTS; i++)
		if (READ_ONCE(conn->rxs[i].busy) ||
		    READ_ONCE(conn->sinks[i].busy))
			return true;
	return false;
}

/*
 * Quiet since the last look, yet its CQ holds completions: the event that
 * should have had them polled was lost, and nothing else will come to
 * poll them if neither end has more to send. Soft-RoCE under load has
 * been seen to sit like that for a minute, the peer's frames received
 * and acknowledged but not processed, both ends idle. Re-arming with
 * IB_CQ_REPORT_MISSED_EVENTS tells; arming an armed CQ changes nothing.
 */
static bool prd_conn_backlog(struct prd_conn *conn)
{
	return ib_req_notify_cq(conn->cq, IB_CQ_NEXT_COMP |
				IB_CQ_REPORT_MISSED_EVENTS) > 0;
}

/* What @conn has been doing since the last look. conn->lock held. */
static enum prd_verdict prd_conn_verdict(struct prd_conn *conn,
					 unsigned long now)
{
	unsigned int stall_ms = READ_ONCE(prd_progress_timeout_ms);
	unsigned int idle_s = READ_ONCE(prd_peer_idle_s);
	bool waiting;

	if (conn->state != PRD_CONN_UP)
		return PRD_CONN_FINE;
	waiting = prd_conn_waiting(conn);
	if (conn->progress != conn->sw_progress ||
	    waiting != conn->sw_waiting) {
		conn->sw_progress = conn->progress;
		conn->sw_waiting = waiting;
		conn->sw_probed = false;
		conn->sw_since = now;
		conn->close_asks = 0;	/* the peer is alive: close.c */
		return PRD_CONN_FINE;
	}
	/* First: kicks (no progress) must not put the bound off. */
	if (waiting && stall_ms &&
	    time_after_eq(now, conn->sw_since + msecs_to_jiffies(stall_ms)))
		return PRD_CONN_STALLED;
	if (prd_conn_backlog(conn))
		return PRD_CONN_BACKLOG;
	if (waiting && stall_ms && !conn->sw_probed &&
	    time_after_eq(now, conn->sw_since + msecs_to_jiffies(stall_ms / 2)))
		return PRD_CONN_SLOW;
	if (!waiting && idle_s &&
	    time_after_eq(now, conn->sw_since + idle_s * HZ))
		return PRD_CONN_IDLE;
	if (prd_conn_quiet(conn, now))
		return PRD_CONN_QUIET;
	return PRD_CONN_FINE;
}

/* A NOOP if a send buffer is free; a failure to post kills. Lock held. */
static void prd_conn_send_noop(struct prd_conn *conn)
{
	if (prd_can_post(conn, 1) && prd_post_noop(conn))
		__prd_conn_kill(conn);
}

/*
 * Half the timeout without progress: a NOOP, not counted as progress.
 * Its completion makes the CQ deliver an event, which gets any
 * completion whose event was lost processed (Soft-RoCE has been seen to
 * leave received frames unprocessed for a minute until something else
 * completed); and against a peer that is gone it exhausts RC's retries,
 * so the connection fails in about 2 s rather than at the timeout.
 */
static void prd_conn_probe(struct prd_conn *conn)
{
	conn->sw_probed = true;
	prd_conn_send_noop(conn);
}

/*
 * A NOOP's completion raises a CQ event, and the poll it schedules takes
 * the backlog too.
 */
static void prd_conn_nudge(struct prd_conn *conn)
{
	pr_info_ratelimited("nid %u: completions unprocessed on a quiet connection: kicking its CQ\n",
			    conn->nid);
	prd_conn_send_noop(conn);
}

/* A bit per slot of @slots that is busy, or that waits for an MR. */
static unsigned int prd_slot_bits(const struct prd_slot *slots, bool mr_wait)
{
	unsigned int i, bits = 0;

	for (i = 0; slots && i < PRD_RDMA_SLOTS; i++)
		if (mr_wait ? slots[i].mr_wait : slots[i].busy)
			bits |= 1U << i;
	return bits;
}

/*
 * What a stalled connection waited for, for the log: which queues hold
 * something, which slots are busy (and wait for an MR), its credits and
 * send queue. conn->lock held.
 */
static void prd_conn_stall_report(struct prd_conn *conn)
{
	pr_info_ratelimited("nid %u: txq %d inflight %d rts_wait %d ctlq %d rx %d; slots busy %#x mr_wait %#x sinks busy %#x; peer sinks %#lx release %#lx; credits %u owed %u allowed %u; send queue %u/%u, buffers %u\n",
			    conn->nid, !list_empty(&conn->txq),
			    !list_empty(&conn->inflight),
			    !list_empty(&conn->rts_wait),
			    !list_empty(&conn->ctlq), conn->in.busy,
			    prd_slot_bits(conn->rxs, false),
			    prd_slot_bits(conn->rxs, true),
			    prd_slot_bits(conn->sinks, false),
			    conn->rsink_busy, conn->rsink_release,
			    conn->tx_credits, conn->rx_owed, conn->rx_allowed,
			    conn->sq_used, conn->sq_size, conn->tx_made);
}

static void prd_conn_stalled(struct prd_conn *conn)
{
	pr_warn_ratelimited("nid %u: no progress for %u ms with work outstanding: closing the connection\n",
			    conn->nid, READ_ONCE(prd_progress_timeout_ms));
	prd_conn_stall_report(conn);
	prd_stat_add(conn->pif, PRD_ST_STALLS, 1);
	prd_stat_add(conn->pif, PRD_ST_CONN_FAILS, 1);
	__prd_conn_kill(conn);
}

static void prd_sweep_conns(struct prd_iface *pif)
{
	unsigned long now = jiffies;
	struct prd_conn *conn;
	enum prd_verdict v;

	mutex_lock(&pif->lock);
	list_for_each_entry(conn, &pif->conns, node) {
		spin_lock_bh(&conn->lock);
		v = prd_conn_verdict(conn, now);
		if (v == PRD_CONN_SLOW)
			prd_conn_probe(conn);
		else if (v == PRD_CONN_BACKLOG)
			prd_conn_nudge(conn);
		else if (v == PRD_CONN_STALLED)
			prd_conn_stalled(conn);
		spin_unlock_bh(&conn->lock);
		if (v == PRD_CONN_QUIET)
			prd_conn_trim(conn, now);
		if (v == PRD_CONN_IDLE || READ_ONCE(conn->closing))
			prd_close_idle(conn, v == PRD_CONN_IDLE);
	}
	/* The idlest may have been busy when a connection came: ask again. */
	prd_close_reclaim(pif);
	mutex_unlock(&pif->lock);
}

/* A quarter of the shorter limit, within [MIN, MAX]. */
static unsigned long prd_sweep_period(void)
{
	unsigned int ms = PRD_SWEEP_MAX_MS * 4;
	unsigned int stall_ms = READ_ONCE(prd_progress_timeout_ms);
	unsigned int idle_s = READ_ONCE(prd_peer_idle_s);

	if (stall_ms)
		ms = min(ms, stall_ms);
	if (idle_s)
		ms = min(ms, idle_s * 1000);
	return msecs_to_jiffies(clamp(ms / 4, PRD_SWEEP_MIN_MS,
				      PRD_SWEEP_MAX_MS));
}

static void prd_sweep(struct work_struct *work)
{
	struct prd_iface *pif = container_of(to_delayed_work(work),
					     struct prd_iface, sweep);

	prd_sweep_conns(pif);
	prd_rxq_sweep(pif);
	queue_delayed_work(prd_wq, &pif->sweep, prd_sweep_period());
}

void prd_sweep_start(struct prd_iface *pif)
{
	INIT_DELAYED_WORK(&pif->sweep, prd_sweep);
	queue_delayed_work(prd_wq, &pif->sweep, prd_sweep_period());
}

void prd_sweep_stop(struct prd_iface *pif)
{
	cancel_delayed_work_sync(&pif->sweep);
}
