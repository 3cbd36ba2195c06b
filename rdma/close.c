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
 * From the sweep (pif->lock held): takes a closing connection out of the
 * peers, and asks the peer to close it if it has been @idle (or gives up
 * on a peer that never answers).
 */
void prd_close_idle(struct prd_conn *conn, bool idle)
{
	/* Only compared, never followed. Before the flag: see step 1. */
	xa_cmpxchg(&conn->pif->peers, conn->nid, conn, NULL, 0);
	if (!idle)
		return;
	spin_lock_bh(&conn->lock);
	if (prd_close_allowed(conn)) {
		if (conn->close_asks >= PRD_CLOSE_ASKS ||
		    !prd_can_post(conn, 1))
			prd_close_give_up(conn);
		else
			prd_close_ask(conn);
	}
	spin_unlock_bh(&conn->lock);
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
