// SPDX-License-Identifier: GPL-2.0
/*
 * The data path of a connection: Portals messages as SEND frames into
 * the peer's posted receive buffers, credits, completions.
 *
 * A message goes out as a FIRST frame (our frame header, the 96-byte wire
 * header, the first payload bytes) and as many MORE frames as its payload
 * needs, back to back: RC delivers them in order, so the receiver needs
 * no reassembly state beyond "the message being received". Each data
 * frame uses one credit, that is one receive buffer the peer holds for
 * us; the peer returns credits in the header of any frame it sends, or
 * alone in a NOOP when it owes half of them and has nothing to send.
 * NOOPs use none (a ring keeps PRD_NOOP_SPARE buffers for them), so
 * credits always come back. With a ring per connection a data frame
 * never finds no buffer; with the interface's shared receive queue
 * (srq.c) it may, and is then retried by the adapter (RNR) until one is
 * posted again. A peer that sends beyond its credits is cut off.
 *
 * A message is done (ptl_msg_sent) when the send of its last frame
 * completes: on RC that means the peer's adapter has acknowledged every
 * frame of it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/overflow.h>
#include <linux/slab.h>
#include <p3api/misc.h>
#include <p3api/types.h>

#include "prd.h"

static void prd_tx_done(struct ib_cq *cq, struct ib_wc *wc);
static void prd_rx_done(struct ib_cq *cq, struct ib_wc *wc);

static struct ib_device *prd_dev(struct prd_conn *conn)
{
	return conn->id->device;
}

/*
 * A buffer of frame_size bytes, DMA-mapped for @dev in direction @dir:
 * a connection's ring or the shared receive queue (srq.c). *@data is
 * NULL if it failed.
 */
int prd_frame_map(struct ib_device *dev, enum dma_data_direction dir,
		  void **data, u64 *dma, gfp_t gfp)
{
	*data = kmalloc(prd_frame_size, gfp);
	if (!*data)
		return -ENOMEM;
	*dma = ib_dma_map_single(dev, *data, prd_frame_size, dir);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(*data);
		*data = NULL;
		return -ENOMEM;
	}
	return 0;
}

void prd_frame_unmap(struct ib_device *dev, enum dma_data_direction dir,
		     void *data, u64 dma)
{
	ib_dma_unmap_single(dev, dma, prd_frame_size, dir);
	kfree(data);
}

static int prd_buf_init(struct prd_conn *conn, struct prd_buf *pb,
			enum dma_data_direction dir, gfp_t gfp)
{
	return prd_frame_map(prd_dev(conn), dir, &pb->data, &pb->dma, gfp);
}

void prd_buf_fini(struct prd_conn *conn, struct prd_buf *pb,
		  enum dma_data_direction dir)
{
	if (!pb->data)
		return;
	prd_frame_unmap(prd_dev(conn), dir, pb->data, pb->dma);
	pb->data = NULL;
}

/*
 * Gives an unmade send buffer its memory: at setup (GFP_KERNEL_ACCOUNT),
 * or when a frame finds none free (prd_tx_make()). conn->lock held after
 * setup; charged to the binder (prd_charge()) by the caller.
 */
int prd_tx_buf_make(struct prd_conn *conn, gfp_t gfp)
{
	struct prd_buf *tb = list_first_entry_or_null(&conn->tx_unmade,
						      struct prd_buf, free);
	int err;

	if (!tb)
		return -ENOBUFS;
	err = prd_buf_init(conn, tb, DMA_TO_DEVICE, gfp);
	if (err)
		return err;
	list_move(&tb->free, &conn->tx_free);
	conn->tx_made++;
	return 0;
}

/*
 * The send buffers, PRD_TX_FLOOR of them made (the rest when needed,
 * demand.c), and a receive ring unless the interface's shared receive
 * queue serves the connection. The caller charges them (prd_charge()).
 */
int prd_bufs_alloc(struct prd_conn *conn)
{
	unsigned int i;
	int err;

	BUILD_BUG_ON(PRD_TX_FLOOR > PRD_NOOP_SPARE);
	conn->ntx = prd_credits + PRD_NOOP_SPARE;
	conn->nrx = conn->rxq ? 0 : prd_credits + PRD_NOOP_SPARE;
	conn->tx = kcalloc(conn->ntx, sizeof(*conn->tx), GFP_KERNEL_ACCOUNT);
	if (!conn->tx)
		return -ENOMEM;
	if (conn->nrx) {
		conn->rx = kcalloc(conn->nrx, sizeof(*conn->rx),
				   GFP_KERNEL_ACCOUNT);
		if (!conn->rx)
			return -ENOMEM;
	}
	for (i = 0; i < conn->ntx; i++) {
		conn->tx[i].conn = conn;
		conn->tx[i].cqe.done = prd_tx_done;
		list_add_tail(&conn->tx[i].free, &conn->tx_unmade);
	}
	for (i = 0; i < PRD_TX_FLOOR; i++) {
		err = prd_tx_buf_make(conn, GFP_KERNEL_ACCOUNT);
		if (err)
			return err;
	}
	for (i = 0; i < conn->nrx; i++) {
		conn->rx[i].conn = conn;
		conn->rx[i].cqe.done = prd_rx_done;
		err = prd_buf_init(conn, &conn->rx[i], DMA_FROM_DEVICE,
				   GFP_KERNEL_ACCOUNT);
		if (err)
			return err;
	}
	return prd_slots_alloc(conn);
}

/* After the QP and CQ are gone: nothing can use the buffers any more. */
void prd_bufs_free(struct prd_conn *conn)
{
	unsigned int i;

	prd_slots_unmap(conn);
	prd_slots_fail(conn);
	prd_slots_free(conn);
	for (i = 0; conn->tx && i < conn->ntx; i++)
		prd_buf_fini(conn, &conn->tx[i], DMA_TO_DEVICE);
	for (i = 0; conn->rx && i < conn->nrx; i++)
		prd_buf_fini(conn, &conn->rx[i], DMA_FROM_DEVICE);
	kfree(conn->tx);
	kfree(conn->rx);
	conn->tx = NULL;
	conn->rx = NULL;
	conn->tx_made = 0;
	INIT_LIST_HEAD(&conn->tx_free);
	INIT_LIST_HEAD(&conn->tx_unmade);
}

static int prd_post_recv(struct prd_conn *conn, struct prd_buf *rb)
{
	struct ib_sge sge = {
		.addr = rb->dma,
		.length = prd_frame_size,
		.lkey = conn->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &rb->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(prd_dev(conn), rb->dma, prd_frame_size,
				      DMA_FROM_DEVICE);
	return ib_post_recv(conn->id->qp, &wr, NULL);
}

/* Before connecting: the peer may send as soon as it is connected. */
int prd_post_recvs(struct prd_conn *conn)
{
	unsigned int i;
	int err;

	for (i = 0; i < conn->nrx; i++) {
		err = prd_post_recv(conn, &conn->rx[i]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Posts the frame in @tb (@len bytes), after the chain @before if not NULL
 * (a registration), as a SEND with invalidate of *@inv_rkey if not NULL.
 */
int prd_post_send(struct prd_conn *conn, struct prd_buf *tb, u32 len,
		  struct ib_send_wr *before, const u32 *inv_rkey)
{
	struct ib_sge sge = {
		.addr = tb->dma,
		.length = len,
		.lkey = conn->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &tb->cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	unsigned int wrs = 1;
	int err;

	if (inv_rkey) {
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = *inv_rkey;
	}
	if (before) {
		struct ib_send_wr *last = before;

		for (wrs++; last->next; wrs++)
			last = last->next;
		last->next = &wr;
	}
	ib_dma_sync_single_for_device(prd_dev(conn), tb->dma, len,
				      DMA_TO_DEVICE);
	err = ib_post_send(conn->id->qp, before ?: &wr, NULL);
	if (!err) {
		const struct prd_frame *f = tb->data;

		/* It returned what we owed; message frames use a credit. */
		conn->rx_allowed += be16_to_cpu(f->credits);
		conn->rx_owed = 0;
		tb->sq_wrs = conn->sq_unsignalled + wrs;
		conn->sq_used += wrs;
		conn->sq_unsignalled = 0;
		if (!prd_frame_is_ctl(f->type)) {
			conn->tx_credits--;
			conn->tx_msg_frames++;
		}
		list_del(&tb->free);
		prd_conn_stat_add(conn, PRD_ST_TX_FRAMES, 1);
		prd_conn_stat_add(conn, PRD_ST_TX_BYTES, len);
	}
	return err;
}

void prd_frame_init(struct prd_conn *conn, struct prd_frame *f, u8 type)
{
	memset(f, 0, sizeof(*f));
	f->magic = cpu_to_be16(PRD_MAGIC);
	f->type = type;
	/* Every frame returns what we owe: fewer NOOPs. */
	f->credits = cpu_to_be16(conn->rx_owed);
}

/* Posts the next frame of the message at the head of txq. */
static int prd_post_data(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	struct prd_buf *tb = list_first_entry(&conn->tx_free, struct prd_buf,
					      free);
	struct ptl_msg *msg = cb->msg;
	u64 len = ptl_msg_len(msg);
	struct prd_frame *f = tb->data;
	u8 *p = (u8 *)(f + 1);
	u32 hdrs = sizeof(*f) + (cb->started ? 0 : PTL_WIRE_HDR_LEN);
	u32 room, chunk;
	int err;

	/*
	 * Both ends' frame_size holds a FIRST frame and a byte
	 * (prd_conn_data_check, prd_init): there is room. Checked all the
	 * same, so that a frame never outgrows its buffer.
	 */
	if (check_sub_overflow(conn->frame_size, hdrs, &room) || !room)
		return -EPROTO;
	prd_frame_init(conn, f, cb->started ? PRD_FRAME_MORE : PRD_FRAME_FIRST);
	if (!cb->started) {
		f->payload = cpu_to_be64(len);
		memcpy(p, ptl_msg_hdr(msg), PTL_WIRE_HDR_LEN);
		p += PTL_WIRE_HDR_LEN;
	}
	chunk = min_t(u64, room, len - cb->off);
	/* Pinned memory cannot fault; if it did, the frame still goes. */
	if (chunk && ptl_msg_copy(msg, cb->off, p, chunk)) {
		memset(p, 0, chunk);
		cb->failed = true;
	}
	p += chunk;
	f->len = cpu_to_be32(p - (u8 *)(f + 1));
	f->cookie = cpu_to_be32(cb->cookie);
	tb->msg = cb->off + chunk == len ? msg : NULL;
	tb->slot = tb->msg && cb->cookie ? &conn->txs[cb->cookie - 1] : NULL;
	err = prd_post_send(conn, tb, p - (u8 *)f, NULL, NULL);
	if (err)
		return err;
	cb->started = true;
	cb->off += chunk;
	if (tb->msg)
		prd_inflight_add(conn, cb);
	return 0;
}

/* A frame of @type with no payload: NOOP, CLOSE, CLOSE_ACK. */
int prd_post_ctl(struct prd_conn *conn, u8 type)
{
	struct prd_buf *tb = list_first_entry(&conn->tx_free, struct prd_buf,
					      free);

	prd_frame_init(conn, tb->data, type);
	tb->msg = NULL;
	tb->slot = NULL;
	return prd_post_send(conn, tb, sizeof(struct prd_frame), NULL, NULL);
}

int prd_post_noop(struct prd_conn *conn)
{
	int err = prd_post_ctl(conn, PRD_FRAME_NOOP);

	if (!err)
		prd_stat_add(conn->pif, PRD_ST_NOOPS, 1);
	return err;
}

/* The next step of the message at the head of txq. */
static int prd_post_next(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	int err = 0;

	if (cb->write)
		return prd_post_write(conn, cb);
	if (cb->sink)
		return prd_post_sink_reply(conn, cb);
	if (prd_try_sink(conn, cb, &err) || prd_try_rts(conn, cb, &err))
		return err;
	return prd_post_data(conn, cb);
}

/* Sends what credits and free buffers allow. conn->lock held. */
void __prd_kick(struct prd_conn *conn)
{
	bool sent = false;
	int err = 0;

	if (conn->state != PRD_CONN_UP)
		return;
	/* Sinks to release and CTSs first: they let the peer's move. */
	while (!err && READ_ONCE(conn->rsink_release) &&
	       prd_can_post(conn, 1) && conn->tx_credits) {
		err = prd_post_release(conn);
		sent = true;
	}
	while (!err && !list_empty(&conn->ctlq) &&
	       prd_can_post(conn, PRD_REG_SEND_WRS) && conn->tx_credits) {
		err = prd_post_cts(conn, list_first_entry(&conn->ctlq,
							  struct prd_slot,
							  ctl));
		sent = true;
	}
	while (!err && !list_empty(&conn->txq) &&
	       prd_can_post(conn, PRD_STEP_WRS)) {
		if (!conn->tx_credits) {
			prd_stat_add(conn->pif, PRD_ST_CREDIT_STALLS, 1);
			break;
		}
		err = prd_post_next(conn, list_first_entry(&conn->txq,
							   struct prd_tx_cb,
							   list));
		sent |= err != -EAGAIN;
	}
	/* It waits for an MR (mr_work kicks again) or a completion. */
	if (err == -EAGAIN)
		err = 0;
	if (!err && !sent && conn->rx_owed >= max(prd_credits / 2, 1U) &&
	    prd_can_post(conn, 1))
		err = prd_post_noop(conn);
	if (err)
		__prd_conn_kill(conn);
}

void prd_kick(struct prd_conn *conn)
{
	spin_lock_bh(&conn->lock);
	__prd_kick(conn);
	spin_unlock_bh(&conn->lock);
}

static void __prd_enqueue(struct prd_conn *conn, struct ptl_msg *msg)
{
	struct prd_tx_cb *cb = prd_cb(msg);
	u8 sink = cb->sink;	/* of a REPLY: prd_rx_gets() */

	memset(cb, 0, sizeof(*cb));
	cb->msg = msg;
	cb->sink = sink;
	list_add_tail(&cb->list, &conn->txq);
}

/*
 * Queues the request @msg on @conn; -EAGAIN if it is being closed for
 * idleness (close.c), -ENOTCONN if it failed. Closing comes first: the
 * handshake may have ended a connection prd_conn_get() found open, and
 * the message then belongs on a new one, not failed.
 */
int prd_enqueue(struct prd_conn *conn, struct ptl_msg *msg)
{
	int err = 0;

	spin_lock_bh(&conn->lock);
	if (conn->closing) {
		err = -EAGAIN;
	} else if (conn->state == PRD_CONN_DEAD) {
		err = -ENOTCONN;
	} else {
		__prd_enqueue(conn, msg);
		__prd_kick(conn);
	}
	spin_unlock_bh(&conn->lock);
	return err;
}

/* Teardown, once the CQ is freed: whatever is left fails; how many. */
unsigned int prd_fail_msgs(struct prd_conn *conn)
{
	struct prd_tx_cb *cb, *tmp;
	unsigned int n = 0;
	LIST_HEAD(failed);

	spin_lock_bh(&conn->lock);
	list_splice_tail_init(&conn->txq, &failed);
	list_splice_tail_init(&conn->inflight, &failed);
	list_splice_tail_init(&conn->rts_wait, &failed);
	spin_unlock_bh(&conn->lock);
	list_for_each_entry_safe(cb, tmp, &failed, list) {
		list_del(&cb->list);
		ptl_msg_sent(cb->msg, PTL_NI_FAIL);
		n++;
	}
	if (conn->in.msg) {
		ptl_rx_done(conn->in.msg, PTL_NI_FAIL);
		conn->in.msg = NULL;
		n++;
	}
	prd_acks_drop(conn);
	return n;
}

/* A completion in error: the connection is over. */
void prd_wc_error(struct prd_conn *conn, const struct ib_wc *wc)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info_ratelimited("nid %u: %s\n", conn->nid,
				    ib_wc_status_msg(wc->status));
}

static void prd_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct prd_buf *tb = container_of(wc->wr_cqe, struct prd_buf, cqe);
	struct prd_conn *conn = tb->conn;
	struct ptl_msg *done = NULL;
	bool failed = false;
	u32 seq = 0;

	spin_lock_bh(&conn->lock);
	/* Progress is a message frame's; a NOOP or probe proves nothing. */
	if (!prd_frame_is_ctl(((struct prd_frame *)tb->data)->type))
		conn->progress++;
	list_add(&tb->free, &conn->tx_free);
	conn->sq_used -= tb->sq_wrs;
	if (wc->status != IB_WC_SUCCESS) {
		/* Its message stays on inflight: the teardown fails it. */
		prd_wc_error(conn, wc);
		__prd_conn_kill(conn);
		spin_unlock_bh(&conn->lock);
		return;
	}
	/* Unmaps its pages; the last frame of its message frees it. */
	if (tb->slot)
		prd_tx_slot_done(conn, tb->slot, tb->msg);
	tb->slot = NULL;
	if (tb->msg) {
		done = tb->msg;
		failed = prd_cb(done)->failed;
		seq = prd_cb(done)->seq;
		list_del(&prd_cb(done)->list);
		tb->msg = NULL;
	}
	__prd_kick(conn);
	spin_unlock_bh(&conn->lock);
	if (done) {
		ptl_msg_sent(done, failed ? PTL_NI_FAIL : PTL_NI_OK);
		prd_msg_ended(conn, seq);	/* the ACKs it held back */
	}
}

/* The payload bytes @p[0..@len) of the message received into @rs. */
static int prd_rx_payload(struct prd_rx_state *rs, const u8 *p, u32 len,
			  struct ptl_msg **resp)
{
	struct ptl_msg *msg = rs->msg;

	if (len > rs->payload - rs->off)
		return -EPROTO;
	if (msg && len && ptl_msg_deposit_buf(msg, rs->off, p, len))
		rs->failed = true;
	rs->off += len;
	if (rs->off < rs->payload)
		return 0;
	rs->busy = false;
	rs->msg = NULL;
	if (msg)
		*resp = ptl_rx_done(msg, rs->failed ? PTL_NI_FAIL : PTL_NI_OK);
	return 0;
}

/* Matches the wire header at @hdr: the message, or NULL to drop it. */
struct ptl_msg *prd_rx_match(struct prd_conn *conn, const u8 *hdr,
			     struct ptl_rx_plan *plan)
{
	struct ptl_msg *msg = ptl_rx_start(conn->pif->b, conn->nid, hdr,
					   PTL_WIRE_HDR_LEN, plan);

	/*
	 * No memory for the message (an atomic allocation failed). The
	 * peer's adapter has acknowledged the frame already, so there is no
	 * asking for it again: Portals drops it, as it drops a message that
	 * matches nothing, and the connection with the other messages on it
	 * goes on. Its payload is discarded (an RTS gets a CTS of 0 bytes).
	 */
	if (IS_ERR(msg)) {
		prd_stat_add(conn->pif, PRD_ST_NO_BUFFER, 1);
		return NULL;
	}
	return msg;
}

/*
 * A message of no payload whose header @hdr came earlier and was held
 * (acks.c): delivered now, outside the frame that brought it.
 */
void prd_rx_bare(struct prd_conn *conn, const u8 *hdr)
{
	struct prd_rx_state rs = { .payload = 0, .busy = true };
	struct ptl_msg *resp = NULL;
	struct ptl_rx_plan plan;

	rs.msg = prd_rx_match(conn, hdr, &plan);
	prd_rx_payload(&rs, NULL, 0, &resp);
	if (resp) {
		spin_lock_bh(&conn->lock);
		__prd_enqueue(conn, resp);
		__prd_kick(conn);
		spin_unlock_bh(&conn->lock);
	}
}

static int prd_rx_first(struct prd_conn *conn, const struct prd_frame *f,
			const u8 *p, u32 len, struct ptl_msg **resp)
{
	struct ptl_rx_plan plan;
	struct ptl_msg *msg;

	if (conn->in.busy || len < PTL_WIRE_HDR_LEN)
		return -EPROTO;
	/* An ACK may have to wait for its put's SEND_END (acks.c). */
	if (len == PTL_WIRE_HDR_LEN && !f->payload && prd_ack_hold(conn, p))
		return PRD_RX_HELD;
	msg = prd_rx_match(conn, p, &plan);
	conn->in = (struct prd_rx_state) {
		.msg = msg,
		.payload = be64_to_cpu(f->payload),
		.busy = true,
	};
	return prd_rx_payload(&conn->in, p + PTL_WIRE_HDR_LEN,
			      len - PTL_WIRE_HDR_LEN, resp);
}

/* A MORE frame: of the inline message, or of a slot's (cookie). */
static int prd_rx_more(struct prd_conn *conn, const struct prd_frame *f,
		       const u8 *p, u32 len, struct ptl_msg **resp)
{
	u32 cookie = be32_to_cpu(f->cookie);
	struct prd_rx_state *rs;
	int err;

	rs = cookie ? prd_slot_rx(conn, cookie) : &conn->in;
	if (!rs || !rs->busy)
		return -EPROTO;
	err = prd_rx_payload(rs, p, len, resp);
	if (!err && cookie)
		prd_slot_rx_check(conn, cookie);
	return err;
}

/* A CTS: under the lock, since it moves a message between lists. */
static int prd_rx_cts_locked(struct prd_conn *conn, const struct prd_frame *f,
			     const u8 *p, u32 len)
{
	struct ptl_msg *ended = NULL;
	int err;

	spin_lock_bh(&conn->lock);
	err = prd_rx_cts(conn, f, p, len, &ended);
	spin_unlock_bh(&conn->lock);
	if (ended)
		ptl_msg_sent(ended, PTL_NI_OK);
	return err;
}

/*
 * One received frame; *data says whether it used a credit. PRD_RX_HELD:
 * it was kept for later (acks.c), and so is its credit.
 */
static int prd_rx_frame(struct prd_conn *conn, const struct ib_wc *wc,
			const void *buf, u32 len, struct ptl_msg **resp,
			unsigned int *credits, bool *data)
{
	const struct prd_frame *f = buf;
	const u8 *p = (const u8 *)(f + 1);
	u32 flen;

	if (len < sizeof(*f) || be16_to_cpu(f->magic) != PRD_MAGIC)
		return -EPROTO;
	flen = be32_to_cpu(f->len);
	if (flen > len - sizeof(*f))
		return -EPROTO;
	*credits = be16_to_cpu(f->credits);
	*data = !prd_frame_is_ctl(f->type);
	prd_conn_stat_add(conn, PRD_ST_RX_FRAMES, 1);
	prd_conn_stat_add(conn, PRD_ST_RX_BYTES, len);
	switch (f->type) {
	case PRD_FRAME_NOOP:
		return 0;
	case PRD_FRAME_FIRST:
		return prd_rx_first(conn, f, p, flen, resp);
	case PRD_FRAME_MORE:
		return prd_rx_more(conn, f, p, flen, resp);
	case PRD_FRAME_RTS:
		return prd_rx_rts(conn, f, p, flen, resp);
	case PRD_FRAME_CTS:
		return prd_rx_cts_locked(conn, f, p, flen);
	case PRD_FRAME_DONE:
		return prd_rx_done_frame(conn, f, wc, resp);
	case PRD_FRAME_GETS:
		return prd_rx_gets(conn, f, p, flen, resp);
	case PRD_FRAME_SINK:
		return prd_rx_sink(conn, f, p, flen, wc, resp);
	case PRD_FRAME_CLOSE:
		return prd_rx_close(conn);
	case PRD_FRAME_CLOSE_ACK:
		return prd_rx_close_ack(conn);
	default:
		return -EPROTO;
	}
}

/*
 * The frame @buf that @conn received (the completion @wc): processed,
 * and the credits and response it brings applied. A frame from the
 * connection's own ring (@ring_buf) goes back to the ring; one from the
 * shared receive queue is the caller's to give back.
 */
void prd_rx_frame_done(struct prd_conn *conn, const struct ib_wc *wc,
		       const void *buf, struct prd_buf *ring_buf)
{
	struct ptl_msg *resp = NULL;
	unsigned int credits = 0;
	bool data = false, held;
	int err;

	err = prd_rx_frame(conn, wc, buf, wc->byte_len, &resp, &credits,
			   &data);
	if (err == -EPROTO)
		prd_stat_add(conn->pif, PRD_ST_BAD_FRAMES, 1);
	held = err == PRD_RX_HELD;
	if (held)
		err = 0;

	spin_lock_bh(&conn->lock);
	if (data) {
		conn->progress++;
		if (!conn->rx_allowed) {
			pr_info_ratelimited("nid %u: a data frame beyond its credits: closing the connection\n",
					    conn->nid);
			prd_stat_add(conn->pif, PRD_ST_BAD_FRAMES, 1);
			err = -EPROTO;
		} else {
			conn->rx_allowed--;
		}
	}
	conn->tx_credits += credits;
	if (resp)	/* failed by the teardown if the connection is dead */
		__prd_enqueue(conn, resp);
	if (!err && ring_buf && conn->state != PRD_CONN_DEAD)
		err = prd_post_recv(conn, ring_buf);
	if (err) {
		__prd_conn_kill(conn);
	} else {
		if (data && !held)	/* a held frame's: when it goes */
			conn->rx_owed++;
		__prd_kick(conn);
	}
	spin_unlock_bh(&conn->lock);
}

/* Receive completion of a buffer of the connection's own ring. */
static void prd_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct prd_buf *rb = container_of(wc->wr_cqe, struct prd_buf, cqe);
	struct prd_conn *conn = rb->conn;

	if (wc->status != IB_WC_SUCCESS) {
		prd_wc_error(conn, wc);
		prd_conn_kill(conn);
		return;
	}
	ib_dma_sync_single_for_cpu(prd_dev(conn), rb->dma, wc->byte_len,
				   DMA_FROM_DEVICE);
	prd_rx_frame_done(conn, wc, rb->data, rb);
}
