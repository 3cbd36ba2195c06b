// SPDX-License-Identifier: GPL-2.0
/*
 * Closing an idle connection without losing a message either way.
 *
 * Either end starts when its sweep (sweep.c) finds the connection idle
 * for peer_idle_s; both may start at once.
 *
 * 1. The closer takes the connection out of iface->peers and marks it
 *    closing: a request of ours no longer goes on it (prd_enqueue()
 *    answers -EAGAIN and prd_send() makes a new connection), a response
 *    still does. It sends CLOSE and notes how many message frames it has
 *    posted so far.
 * 2. The peer, on CLOSE, marks the connection closing too (its sweep or
 *    its next request takes it out of its peers) and answers CLOSE_ACK
 *    if it waits for nothing. If it does wait, it stays silent and the
 *    closer asks again after another idle period.
 * 3. The closer, on CLOSE_ACK, disconnects if it waits for nothing and
 *    has posted no message frame since its CLOSE; otherwise it keeps the
 *    connection, closing, and asks again later. RC delivers in order, so
 *    when it disconnects every message frame either side sent has been
 *    taken by the other: the peer's came before its CLOSE_ACK, ours
 *    before our CLOSE, which the peer took before answering; and the peer
 *    sends none after its CLOSE_ACK, since its requests no longer take
 *    the connection and we sent nothing it could answer.
 *
 * CLOSE and CLOSE_ACK use no credit, as a NOOP does. A connection closed
 * so is counted as reclaimed, and its end is no news for ptlctl monitor.
 *
 * A peer that takes our CLOSEs (its adapter acknowledges them) and never
 * answers would keep the connection, its QP, CQ and buffers, for ever. So
 * after PRD_CLOSE_ASKS CLOSEs with no message frame completing either way
 * since (a live peer that is busy makes progress, and one that waits
 * answers once it is done), or when no send buffer is free to ask with
 * after idle_s (the peer takes none of our frames), the connection is
 * killed as a failed one: it holds no message of ours, and the peer learns
 * of it by the disconnect. Counted as close_timeouts.
 *
 * Near max_conns the same handshake makes room (prd_close_reclaim()):
 * the least recently busy idle connection is asked to close at once,
 * whatever peer_idle_s says, so that the next new connection finds room
 * while the handshake runs. A sixteenth of the cap is kept free for that
 * round trip. An idlest connection busy at that moment (or none idle) is
 * looked at again by the next sweep. A peer that has not answered within
 * connect_timeout_ms of the last CLOSE, with nothing moving, loses the
 * connection: one that never answers would otherwise hold a place for
 * three idle periods.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "prd.h"

/* Neither end may close while this end waits for something. Lock held. */
static bool prd_close_allowed(struct prd_conn *conn)
{
	return conn->state == PRD_CONN_UP && !prd_conn_waiting(conn);
}

/* Step 1: CLOSE, once more. conn->lock held, a send buffer free. */
static void prd_close_ask(struct prd_conn *conn)
{
	WRITE_ONCE(conn->closing, true);
	conn->close_asked = true;
	conn->close_asks++;
	conn->close_mark = conn->tx_msg_frames;
	if (prd_post_ctl(conn, PRD_FRAME_CLOSE))
		__prd_conn_kill(conn);
	conn->sw_since = jiffies;	/* ask again after idle_s */
}

/* The peer does not answer: the connection goes. conn->lock held. */
static void prd_close_give_up(struct prd_conn *conn)
{
	pr_info_ratelimited("nid %u: %u CLOSEs unanswered, nothing moving: closing the connection\n",
			    conn->nid, conn->close_asks);
	prd_stat_add(conn->pif, PRD_ST_CLOSE_TIMEOUTS, 1);
	__prd_conn_kill(conn);
}

/*
 * The peer has had its time to answer: PRD_CLOSE_ASKS idle periods, or
 * for a connection asked to make room connect_timeout_ms since the last
 * CLOSE. Progress restarts both (sweep.c zeroes close_asks). Lock held.
 */
static bool prd_close_overdue(struct prd_conn *conn, unsigned long now)
{
	unsigned int ms = READ_ONCE(prd_connect_timeout_ms);

	if (!conn->close_reclaim)
		return conn->close_asks >= PRD_CLOSE_ASKS;
	return conn->close_asks &&
	       time_after_eq(now, conn->sw_since + msecs_to_jiffies(ms));
}

/*
 * From the sweep (pif->lock held): takes a closing connection out of the
 * peers, and asks the peer to close it if it has been @idle, or at once if
 * it is to make room and has not been asked since it last moved (or gives
 * up on a peer that never answers).
 */
void prd_close_idle(struct prd_conn *conn, bool idle)
{
	bool reclaim = READ_ONCE(conn->close_reclaim);

	/* Only compared, never followed. Before the flag: see step 1. */
	xa_cmpxchg(&conn->pif->peers, conn->nid, conn, NULL, 0);
	if (!idle && !reclaim)
		return;
	spin_lock_bh(&conn->lock);
	if (!prd_close_allowed(conn))
		goto out;
	if (prd_close_overdue(conn, jiffies))
		prd_close_give_up(conn);
	else if (idle || !conn->close_asks) {
		if (prd_can_post(conn, 1))
			prd_close_ask(conn);
		else if (idle)	/* the peer takes none of our frames */
			prd_close_give_up(conn);
	}
out:
	spin_unlock_bh(&conn->lock);
}

/*
 * Connections neither closing nor dying (those give their place back
 * soon), and the one idle the longest. pif->lock held.
 */
static unsigned int prd_conns_open(struct prd_iface *pif,
				   struct prd_conn **idlest)
{
	unsigned int open = 0;
	struct prd_conn *conn;

	*idlest = NULL;
	list_for_each_entry(conn, &pif->conns, node) {
		spin_lock_bh(&conn->lock);
		if (!conn->closing && conn->state != PRD_CONN_DEAD) {
			open++;
			/* The sweep's view: unchanged since sw_since. */
			if (conn->state == PRD_CONN_UP && !conn->sw_waiting &&
			    (!*idlest ||
			     time_before(conn->sw_since, (*idlest)->sw_since)))
				*idlest = conn;
		}
		spin_unlock_bh(&conn->lock);
	}
	return open;
}

/*
 * As a connection is made or refused, and from the sweep (pif->lock
 * held): past max_conns less its reserve, asks the idlest connection to
 * close.
 */
void prd_close_reclaim(struct prd_iface *pif)
{
	unsigned int cap = READ_ONCE(prd_max_conns);
	unsigned int keep = cap - min(cap, max(1U, cap / 16));
	struct prd_conn *conn;
	bool asked = false;

	if (pif->nconns <= keep || prd_conns_open(pif, &conn) <= keep || !conn)
		return;
	spin_lock_bh(&conn->lock);
	if (prd_close_allowed(conn) && prd_can_post(conn, 1)) {
		WRITE_ONCE(conn->close_reclaim, true);
		prd_close_ask(conn);
		asked = true;
	}
	spin_unlock_bh(&conn->lock);
	if (!asked)
		return;
	/* On pif->conns, so not freed: no other connection can be at @conn. */
	xa_cmpxchg(&pif->peers, conn->nid, conn, NULL, 0);
	prd_stat_add(pif, PRD_ST_EVICTED, 1);
}

/* The peer asks to close (step 2). */
int prd_rx_close(struct prd_conn *conn)
{
	int err = 0;

	spin_lock_bh(&conn->lock);
	WRITE_ONCE(conn->closing, true);
	if (prd_close_allowed(conn) && prd_can_post(conn, 1)) {
		err = prd_post_ctl(conn, PRD_FRAME_CLOSE_ACK);
		if (!err)
			conn->close_acked = true;
	}
	spin_unlock_bh(&conn->lock);
	return err;
}

/* The peer agrees (step 3); unasked for, it changes nothing. */
int prd_rx_close_ack(struct prd_conn *conn)
{
	spin_lock_bh(&conn->lock);
	if (conn->close_asked && prd_close_allowed(conn) &&
	    conn->tx_msg_frames == conn->close_mark) {
		conn->close_done = true;
		__prd_conn_kill(conn);
	}
	spin_unlock_bh(&conn->lock);
	return 0;
}

/* At teardown: closed by the handshake, nothing failed. */
bool prd_conn_closed_idle(struct prd_conn *conn, unsigned int failed)
{
	return (conn->close_done || conn->close_acked) && !failed;
}
