// SPDX-License-Identifier: GPL-2.0
/*
 * A put's SEND_END before its ACK (spec 8.5).
 *
 * A message this node sends ends (ptl_msg_sent(), SEND_END for a put)
 * when the completion of its last SEND is handled; the target's ACK of the
 * put comes back as a receive. Nothing orders the two: the receive may be
 * handled first when receives complete on another CQ than sends, and on
 * one CQ when the adapter takes the peer's reply before the RC
 * acknowledgement that completes our SEND (a retransmission does that on
 * Soft-RoCE). A Portals program may rely on the order: Open MPI over the
 * libfabric provider frees a send's bounce slot at its ACK and completes
 * the send at its SEND_END, and hung when the ACK came first.
 *
 * So an ACK that arrives while messages posted before it are still in
 * flight is held until they have ended. A message put on conn->inflight
 * (its last SEND posted) gets the next number, tx_seq; the completions of
 * a QP's sends come in posting order and are handled one at a time, so
 * messages end in that order, and ended_seq, the number of the last whose
 * ptl_msg_sent() has returned, says which have. An ACK waits for the
 * number of the last message in flight when it came, behind the ACKs held
 * before it, so ACKs keep their order too. The wait is for completions
 * already on their way: the peer answered the put, so its adapter took
 * every SEND of it.
 *
 * A held ACK keeps the credit its frame used until it is delivered, so a
 * peer cannot make us hold more than the credits it was given (each a
 * 96-byte header, charged to the binder's memory cgroup). The ACKs held
 * when the connection dies are dropped: the puts they answer end with
 * PTL_NI_FAIL, and an ACK after that would contradict it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "prd.h"

struct prd_held_ack {
	struct list_head list;
	u32 wait;			/* tx_seq when it came */
	u8 hdr[PTL_WIRE_HDR_LEN];
};

/* Have the messages up to @seq ended? */
static bool prd_ended(const struct prd_conn *conn, u32 seq)
{
	return (s32)(conn->ended_seq - seq) >= 0;
}

/* @cb's last SEND is posted: it is in flight. conn->lock held. */
void prd_inflight_add(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	BUILD_BUG_ON(sizeof(*cb) > PTL_MSG_CB_SIZE);
	cb->seq = ++conn->tx_seq;
	list_move_tail(&cb->list, &conn->inflight);
}

/*
 * The frame holds the header @hdr of a message with no payload: true if it
 * is an ACK that must wait (kept here), false to deliver it now. With no
 * memory to keep it, it goes now, out of order but not lost.
 */
bool prd_ack_hold(struct prd_conn *conn, const u8 *hdr)
{
	struct prd_held_ack *ha = NULL;
	struct mem_cgroup *old;

	if (ptl_wire_type(hdr) != PTL_MSG_ACK)
		return false;
	spin_lock_bh(&conn->lock);
	if (!list_empty(&conn->acks_held) || !prd_ended(conn, conn->tx_seq)) {
		old = prd_charge(conn->pif);
		ha = kmalloc(sizeof(*ha), GFP_ATOMIC | __GFP_ACCOUNT);
		set_active_memcg(old);
	}
	if (ha) {
		ha->wait = conn->tx_seq;
		memcpy(ha->hdr, hdr, PTL_WIRE_HDR_LEN);
		list_add_tail(&ha->list, &conn->acks_held);
	}
	spin_unlock_bh(&conn->lock);
	return ha;
}

/*
 * The message @seq has ended (its ptl_msg_sent() returned): the ACKs that
 * waited for it are delivered, in the order they came, and their credits
 * given back.
 */
void prd_msg_ended(struct prd_conn *conn, u32 seq)
{
	struct prd_held_ack *ha, *tmp;
	LIST_HEAD(ready);

	spin_lock_bh(&conn->lock);
	conn->ended_seq = seq;
	list_for_each_entry_safe(ha, tmp, &conn->acks_held, list) {
		if (!prd_ended(conn, ha->wait))
			break;
		list_move_tail(&ha->list, &ready);
		conn->rx_owed++;
	}
	if (!list_empty(&ready))
		__prd_kick(conn);
	spin_unlock_bh(&conn->lock);
	list_for_each_entry_safe(ha, tmp, &ready, list) {
		prd_rx_bare(conn, ha->hdr);
		kfree(ha);
	}
}

/* Teardown, no completion can come: the ACKs held are dropped. */
void prd_acks_drop(struct prd_conn *conn)
{
	struct prd_held_ack *ha, *tmp;

	list_for_each_entry_safe(ha, tmp, &conn->acks_held, list) {
		list_del(&ha->list);
		kfree(ha);
	}
}
