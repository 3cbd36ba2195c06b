// SPDX-License-Identifier: GPL-2.0
/*
 * Large messages by RDMA WRITE, with no copy on either host.
 *
 * The initiator maps its payload's pinned pages and sends an RTS frame
 * (the wire header). The target matches it; it maps the deposit region of
 * the matched MD, registers it with a fast-registration work request
 * (ib_map_mr_sg + IB_WR_REG_MR) and answers with a CTS that carries the
 * MR's address and rkey and how many bytes to write. The initiator RDMA
 * WRITEs that many bytes straight from its pages into the target's, then
 * sends DONE as a SEND with invalidate of the rkey: when the target sees
 * DONE, its adapter has placed every byte and the MR no longer accepts
 * any, so the pages are unmapped and the message completed. A deposit of
 * more than PRD_RDMA_MAX bytes (one MR's worth) goes in rounds: each DONE
 * but the last is answered by the CTS of the next round. A message the
 * target drops gets a CTS of 0 bytes; one whose pages cannot be described
 * to the adapter (a deposit region with holes inside pages) gets a CTS
 * that says "frames", and its rest comes as MORE frames of its slot.
 *
 * Safety: pages are mapped and registered only while the library holds
 * the message (it holds the MD and its pins until ptl_msg_sent() or
 * ptl_rx_done()), and the transport calls those only after the MR is
 * invalidated and the pages unmapped, or after the QP is destroyed: an
 * unlink or the death of the owning process cannot free a page the
 * adapter may still touch.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <p3api/misc.h>
#include <p3api/types.h>

#include "prd.h"

static void prd_err_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct prd_conn *conn = container_of(wc->wr_cqe, struct prd_conn,
					     err_cqe);

	/* Unsignalled WRITEs and REG_MRs only complete in error. */
	prd_wc_error(conn, wc);
	prd_conn_kill(conn);
}

/*
 * The slots, with neither scatterlists nor MRs: those are made when a
 * message needs them (demand.c).
 */
int prd_slots_alloc(struct prd_conn *conn)
{
	BUILD_BUG_ON(PRD_RDMA_SLOTS > BITS_PER_LONG);	/* rsink_busy */
	conn->err_cqe.done = prd_err_done;
	conn->txs = kcalloc(PRD_RDMA_SLOTS, sizeof(*conn->txs),
			    GFP_KERNEL_ACCOUNT);
	conn->rxs = kcalloc(PRD_RDMA_SLOTS, sizeof(*conn->rxs),
			    GFP_KERNEL_ACCOUNT);
	conn->sinks = kcalloc(PRD_RDMA_SLOTS, sizeof(*conn->sinks),
			      GFP_KERNEL_ACCOUNT);
	if (!conn->txs || !conn->rxs || !conn->sinks)
		return -ENOMEM;
	return 0;
}

/* Unmaps the slot's pages, if mapped, and lets its scatterlist go. */
static void prd_slot_unmap(struct prd_conn *conn, struct prd_slot *slot,
			   enum dma_data_direction dir)
{
	if (slot->mapped)
		ib_dma_unmap_sg(conn->id->device, slot->sgl, slot->nents, dir);
	slot->mapped = 0;
	prd_slot_sgl_put(slot);
}

/* Teardown, QP and CQ gone: the pages go back before their messages. */
void prd_slots_unmap(struct prd_conn *conn)
{
	unsigned int i;

	for (i = 0; conn->txs && i < PRD_RDMA_SLOTS; i++)
		prd_slot_unmap(conn, &conn->txs[i], DMA_TO_DEVICE);
	for (i = 0; conn->rxs && i < PRD_RDMA_SLOTS; i++)
		prd_slot_unmap(conn, &conn->rxs[i], DMA_FROM_DEVICE);
	for (i = 0; conn->sinks && i < PRD_RDMA_SLOTS; i++)
		prd_slot_unmap(conn, &conn->sinks[i], DMA_FROM_DEVICE);
}

/*
 * Teardown: messages half received into slots fail, and so do the gets
 * whose REPLY did not come into their sink (the library then ends each
 * with a REPLY_END that says so).
 */
void prd_slots_fail(struct prd_conn *conn)
{
	unsigned int i;

	for (i = 0; conn->sinks && i < PRD_RDMA_SLOTS; i++) {
		struct prd_slot *sink = &conn->sinks[i];

		if (sink->msg)
			ptl_msg_sent(sink->msg, PTL_NI_FAIL);
		sink->msg = NULL;
	}

	for (i = 0; conn->rxs && i < PRD_RDMA_SLOTS; i++) {
		struct prd_slot *slot = &conn->rxs[i];

		if (slot->rx.msg)
			ptl_rx_done(slot->rx.msg, PTL_NI_FAIL);
		slot->rx.msg = NULL;
	}
}

void prd_slots_free(struct prd_conn *conn)
{
	unsigned int i;

	for (i = 0; conn->rxs && i < PRD_RDMA_SLOTS; i++)
		if (conn->rxs[i].mr)
			ib_dereg_mr(conn->rxs[i].mr);
	for (i = 0; conn->sinks && i < PRD_RDMA_SLOTS; i++)
		if (conn->sinks[i].mr)
			ib_dereg_mr(conn->sinks[i].mr);
	kfree(conn->txs);
	kfree(conn->rxs);
	kfree(conn->sinks);
	conn->txs = NULL;
	conn->rxs = NULL;
	conn->sinks = NULL;
}

/* ---- initiator ---- */

static struct prd_slot *prd_slot_free_tx(struct prd_conn *conn)
{
	unsigned int i;

	for (i = 0; i < PRD_RDMA_SLOTS; i++)
		if (!conn->txs[i].busy)
			return &conn->txs[i];
	return NULL;
}

/*
 * Whether every round after the first of @msg's payload can be described
 * to the adapter (the first is when it is mapped): a window of an iovec
 * MD may have more pieces than a slot has entries. Not: frames.
 */
static bool prd_payload_fits(struct prd_conn *conn, struct ptl_msg *msg,
			     struct prd_slot *slot)
{
	u64 len = ptl_msg_len(msg), off;
	int n;

	for (off = PRD_RDMA_MAX; off < len; off += PRD_RDMA_MAX) {
		if (!prd_slot_sgl(conn, slot))
			return false;
		n = ptl_msg_payload_sg(msg, off,
				       min_t(u64, len - off, PRD_RDMA_MAX),
				       slot->sgl, PRD_RDMA_PAGES);
		if (n <= 0)
			return false;
	}
	return true;
}

/* Maps the payload bytes [@off, @off + @len) of @msg for the WRITEs. */
static int prd_slot_map_tx(struct prd_conn *conn, struct prd_slot *slot,
			   struct ptl_msg *msg, u64 off, u64 len)
{
	int n;

	if (slot->mapped)
		prd_slot_unmap(conn, slot, DMA_TO_DEVICE);
	if (!prd_slot_sgl(conn, slot))
		return -ENOMEM;
	n = ptl_msg_payload_sg(msg, off, len, slot->sgl, PRD_RDMA_PAGES);
	if (n <= 0) {
		prd_slot_sgl_put(slot);
		return n ?: -EINVAL;
	}
	slot->nents = n;
	slot->mapped = ib_dma_map_sg(conn->id->device, slot->sgl, n,
				     DMA_TO_DEVICE);
	if (!slot->mapped) {
		prd_slot_sgl_put(slot);
		return -ENOMEM;
	}
	slot->round_off = off;
	return 0;
}

/*
 * Sends an RTS for the message at the head of txq if it is worth it and
 * its pages can be mapped; false: send it in frames. conn->lock held; a
 * send buffer and a credit are available.
 */
bool prd_try_rts(struct prd_conn *conn, struct prd_tx_cb *cb, int *err)
{
	u64 len = ptl_msg_len(cb->msg);
	struct prd_slot *slot;
	struct prd_buf *tb;
	struct prd_frame *f;

	if (cb->started || !prd_rdma_min || len <= prd_rdma_min)
		return false;
	slot = prd_slot_free_tx(conn);
	if (!slot)
		return false;
	if (!prd_payload_fits(conn, cb->msg, slot) ||
	    prd_slot_map_tx(conn, slot, cb->msg, 0,
			    min_t(u64, len, PRD_RDMA_MAX))) {
		prd_slot_sgl_put(slot);
		return false;
	}
	slot->round_len = 0;	/* the first CTS is for offset 0 */
	tb = list_first_entry(&conn->tx_free, struct prd_buf, free);
	f = tb->data;
	prd_frame_init(conn, f, PRD_FRAME_RTS);
	f->cookie = cpu_to_be32(slot - conn->txs + 1);
	f->payload = cpu_to_be64(len);
	f->len = cpu_to_be32(PTL_WIRE_HDR_LEN);
	memcpy(f + 1, ptl_msg_hdr(cb->msg), PTL_WIRE_HDR_LEN);
	tb->msg = NULL;
	tb->slot = NULL;
	*err = prd_post_send(conn, tb, sizeof(*f) + PTL_WIRE_HDR_LEN, NULL,
			     NULL);
	if (*err) {
		prd_slot_unmap(conn, slot, DMA_TO_DEVICE);
		return true;
	}
	slot->busy = true;
	slot->msg = cb->msg;
	cb->started = true;
	cb->cookie = slot - conn->txs + 1;
	list_move_tail(&cb->list, &conn->rts_wait);
	return true;
}

/*
 * RDMA WRITEs the slot's round_len mapped bytes to raddr/rkey (unsignalled:
 * the SEND that follows them completes after them). Bytes in *@done.
 */
static int prd_post_writes(struct prd_conn *conn, struct prd_slot *slot,
			   u64 *done)
{
	struct ib_sge sge[PRD_MAX_SGE];
	struct scatterlist *sg = slot->sgl;
	u64 left = slot->round_len;
	int i = 0, err;

	*done = 0;

	while (left && sg) {
		u32 n = min_t(u64, sg_dma_len(sg), left);
		struct ib_rdma_wr wr = {};

		sge[i].addr = sg_dma_address(sg);
		sge[i].length = n;
		sge[i].lkey = conn->pd->local_dma_lkey;
		left -= n;
		sg = sg_next(sg);
		if (++i < conn->max_sge && left && sg)
			continue;
		wr.wr.wr_cqe = &conn->err_cqe;
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.wr.sg_list = sge;
		wr.wr.num_sge = i;
		wr.remote_addr = slot->raddr + *done;
		wr.rkey = slot->rkey;
		err = ib_post_send(conn->id->qp, &wr.wr, NULL);
		if (err)
			return err;
		conn->sq_used++;	/* retired by the SEND that follows */
		conn->sq_unsignalled++;
		while (i)
			*done += sge[--i].length;
	}
	return 0;
}

/* CTS came: WRITE the round's bytes, then DONE. conn->lock held. */
int prd_post_write(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	struct prd_slot *slot = &conn->txs[cb->cookie - 1];
	struct prd_buf *tb = list_first_entry(&conn->tx_free, struct prd_buf,
					      free);
	struct prd_frame *f;
	u64 done;
	int err;

	err = prd_post_writes(conn, slot, &done);
	if (err)
		return err;
	f = tb->data;
	prd_frame_init(conn, f, PRD_FRAME_DONE);
	f->cookie = cpu_to_be32(cb->cookie);
	/* The last round's DONE ends the message and frees the slot. */
	tb->msg = slot->more ? NULL : cb->msg;
	tb->slot = slot->more ? NULL : slot;
	err = prd_post_send(conn, tb, sizeof(*f), NULL, &slot->rkey);
	if (err)
		return err;
	prd_conn_stat_add(conn, PRD_ST_RDMA_WRITES, !slot->more);
	prd_stat_add(conn->pif, PRD_ST_RDMA_BYTES, done);
	cb->write = false;
	if (slot->more)
		list_move_tail(&cb->list, &conn->rts_wait);
	else
		prd_inflight_add(conn, cb);
	return 0;
}

/* The DONE of an initiator slot completed: the slot is free again. */
void prd_tx_slot_done(struct prd_conn *conn, struct prd_slot *slot)
{
	prd_slot_unmap(conn, slot, DMA_TO_DEVICE);
	slot->msg = NULL;
	slot->busy = false;
}

static struct prd_tx_cb *prd_rts_waiting(struct prd_conn *conn, u8 cookie)
{
	struct prd_tx_cb *cb;

	list_for_each_entry(cb, &conn->rts_wait, list)
		if (cb->cookie == cookie)
			return cb;
	return NULL;
}

/*
 * A CTS for our slot @cookie. Returns the message if it ended here (the
 * target took no bytes); conn->lock held.
 */
int prd_rx_cts(struct prd_conn *conn, const struct prd_frame *f,
	       const u8 *p, u32 len, struct ptl_msg **ended)
{
	u32 cookie = be32_to_cpu(f->cookie);
	const struct prd_cts *cts = (const void *)p;
	u64 off, bytes, msg_len;
	struct prd_slot *slot;
	struct prd_tx_cb *cb;
	u32 flags;
	int err;

	if (len < sizeof(*cts) || !cookie || cookie > PRD_RDMA_SLOTS)
		return -EPROTO;
	cb = prd_rts_waiting(conn, cookie);
	if (!cb)
		return -EPROTO;
	slot = &conn->txs[cookie - 1];
	msg_len = ptl_msg_len(cb->msg);
	off = be64_to_cpu(cts->off);
	bytes = be64_to_cpu(f->payload);
	flags = be32_to_cpu(cts->flags);
	/* Rounds come in order, each where the one before ended. */
	if (off != slot->round_off + slot->round_len || off > msg_len)
		return -EPROTO;
	if (flags & PRD_CTS_FRAMES) {
		/* The rest follows in MORE frames of this slot. */
		prd_stat_add(conn->pif, PRD_ST_RDMA_FALLBACKS, 1);
		prd_slot_unmap(conn, slot, DMA_TO_DEVICE);
		cb->off = off;
		list_move_tail(&cb->list, &conn->txq);
		return 0;
	}
	if (bytes > PRD_RDMA_MAX || bytes > msg_len - off ||
	    ((flags & PRD_CTS_MORE) && (!bytes || off + bytes == msg_len)))
		return -EPROTO;
	if (!bytes) {
		list_del(&cb->list);
		prd_tx_slot_done(conn, slot);
		*ended = cb->msg;
		return 0;
	}
	if (off != slot->round_off) {
		/* A later round: the last one's WRITEs preceded its DONE. */
		err = prd_slot_map_tx(conn, slot, cb->msg, off, bytes);
		if (err)
			return err;
	}
	slot->round_len = bytes;
	slot->more = flags & PRD_CTS_MORE;
	slot->raddr = be64_to_cpu(cts->addr);
	slot->rkey = be32_to_cpu(cts->rkey);
	cb->write = true;
	list_move_tail(&cb->list, &conn->txq);
	return 0;
}

/* ---- target ---- */

/*
 * The key the slot's MR is registered with next. Normally a new one each
 * time, so that a late WRITE with the old one fails; the DONE's remote
 * invalidation has freed the MR for its next REG_MR.
 *
 * Soft-RoCE (rdma_rxe, at least up to 6.1) replays the local work requests
 * (REG_MR, LOCAL_INV) behind the oldest unacknowledged SEND when it
 * retransmits after an ACK timeout; a replayed REG_MR finds its MR valid
 * ("rxe_reg_fast_mr: ... not free"), fails, and the connection stalls
 * without a completion. There, each registration is a LOCAL_INV and a
 * REG_MR with the MR's one key, which a replay repeats harmlessly. Over
 * one RC connection a late WRITE cannot follow its DONE, so the fixed
 * key costs nothing but this defence in depth against a broken peer.
 */
static void prd_slot_new_key(struct prd_conn *conn, struct prd_slot *slot)
{
	struct ib_mr *mr = slot->mr;

	if (!conn->replays_local_ops)
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	else if (mr->rkey != mr->lkey)	/* its first use */
		ib_update_fast_reg_key(mr, mr->lkey & 0xff);
}

/*
 * Maps the @n entries of the slot's sgl for the device to write and
 * prepares their registration in the slot's MR (prd_slot_reg_wrs());
 * false if they cannot be.
 */
static bool prd_slot_map_reg(struct prd_conn *conn, struct prd_slot *slot,
			     int n)
{
	struct ib_device *dev = conn->id->device;

	if (n <= 0) {
		prd_slot_sgl_put(slot);
		return false;
	}
	slot->nents = n;
	slot->mapped = ib_dma_map_sg(dev, slot->sgl, n, DMA_FROM_DEVICE);
	if (!slot->mapped) {
		prd_slot_sgl_put(slot);
		return false;
	}
	prd_slot_new_key(conn, slot);
	if (ib_map_mr_sg(slot->mr, slot->sgl, slot->mapped, NULL,
			 PAGE_SIZE) != slot->mapped) {
		prd_slot_unmap(conn, slot, DMA_FROM_DEVICE);
		return false;
	}
	slot->reg = (struct ib_reg_wr) {
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_cqe = &conn->err_cqe,
		.mr = slot->mr,
		.key = slot->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	slot->inv = (struct ib_send_wr) {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = &conn->err_cqe,
		.ex.invalidate_rkey = slot->mr->rkey,
		.next = &slot->reg.wr,
	};
	return true;
}

/*
 * Maps and registers the deposit pages of the slot's round; false: have
 * the rest sent in frames (also when the slot has no MR or scatterlist:
 * none could be made).
 */
static bool prd_slot_register(struct prd_conn *conn, struct prd_slot *slot)
{
	if (!slot->mr || !prd_slot_sgl(conn, slot))
		return false;
	return prd_slot_map_reg(conn, slot,
				ptl_msg_deposit_sg(slot->rx.msg,
						   slot->round_off,
						   slot->round_len, slot->sgl,
						   PRD_RDMA_PAGES));
}

/* The work requests that register a target slot's MR, in order. */
static struct ib_send_wr *prd_slot_reg_wrs(struct prd_conn *conn,
					   struct prd_slot *slot)
{
	return conn->replays_local_ops ? &slot->inv : &slot->reg.wr;
}

/* The next CTS of target slot @slot, for its round. */
static void prd_slot_queue_cts(struct prd_conn *conn, struct prd_slot *slot)
{
	if (!slot->grant || slot->frames)
		slot->round_len = 0;
	slot->cts_ready = true;
	spin_lock_bh(&conn->lock);
	list_add_tail(&slot->ctl, &conn->ctlq);
	spin_unlock_bh(&conn->lock);
}

/*
 * An RTS into target slot @cookie: match it, then queue the CTS. Returns
 * a response if the message ended at once (nothing to take).
 */
int prd_rx_rts(struct prd_conn *conn, const struct prd_frame *f,
	       const u8 *p, u32 len, struct ptl_msg **resp)
{
	u32 cookie = be32_to_cpu(f->cookie);
	struct ptl_rx_plan plan;
	struct prd_slot *slot;
	struct ptl_msg *msg;
	bool busy;

	if (len < PTL_WIRE_HDR_LEN || !cookie || cookie > PRD_RDMA_SLOTS)
		return -EPROTO;
	slot = &conn->rxs[cookie - 1];
	/* Busy, its MR is the slot's: the sweep leaves it (demand.c). */
	spin_lock_bh(&conn->lock);
	busy = slot->busy;
	slot->busy = true;
	spin_unlock_bh(&conn->lock);
	if (busy)
		return -EPROTO;
	msg = prd_rx_match(conn, p, &plan);
	slot->rx = (struct prd_rx_state) {
		.msg = msg,
		.payload = be64_to_cpu(f->payload),
		.busy = true,
	};
	slot->grant = msg ? min(plan.deposit, slot->rx.payload) : 0;
	slot->round_off = 0;
	slot->round_len = min_t(u64, slot->grant, PRD_RDMA_MAX);
	slot->frames = false;
	if (!slot->grant) {
		/* Nothing to write: it ends now, the CTS says so. */
		slot->rx.msg = NULL;
		if (msg)
			*resp = ptl_rx_done(msg, PTL_NI_OK);
	} else if (!slot->mr) {
		/* The CTS waits for an MR, which may sleep: mr_work. */
		spin_lock_bh(&conn->lock);
		slot->mr_wait = true;
		prd_conn_want_mrs(conn);
		spin_unlock_bh(&conn->lock);
		return 0;
	}
	prd_slot_answer(conn, slot);
	return 0;
}

/*
 * The CTS of a matched target slot's first round: the pages registered,
 * or "frames" if they cannot be (or nothing is to be written).
 */
void prd_slot_answer(struct prd_conn *conn, struct prd_slot *slot)
{
	if (slot->grant && !prd_slot_register(conn, slot))
		slot->frames = true;
	prd_slot_queue_cts(conn, slot);
}

/* Posts the CTS (after the MR's registration) of a target slot. */
int prd_post_cts(struct prd_conn *conn, struct prd_slot *slot)
{
	struct prd_buf *tb = list_first_entry(&conn->tx_free, struct prd_buf,
					      free);
	struct prd_frame *f = tb->data;
	struct prd_cts *cts = (void *)(f + 1);

	prd_frame_init(conn, f, PRD_FRAME_CTS);
	f->cookie = cpu_to_be32(slot - conn->rxs + 1);
	f->payload = cpu_to_be64(slot->round_len);
	f->len = cpu_to_be32(sizeof(*cts));
	memset(cts, 0, sizeof(*cts));
	cts->off = cpu_to_be64(slot->round_off);
	if (slot->frames) {
		cts->flags = cpu_to_be32(PRD_CTS_FRAMES);
	} else if (slot->grant) {
		cts->addr = cpu_to_be64(slot->mr->iova);
		cts->rkey = cpu_to_be32(slot->mr->rkey);
		if (slot->round_off + slot->round_len < slot->grant)
			cts->flags = cpu_to_be32(PRD_CTS_MORE);
	}
	tb->msg = NULL;
	tb->slot = NULL;
	/*
	 * The answer to this CTS may be processed on another CPU before
	 * ib_post_send() returns: the slot's state comes first. An error
	 * kills the connection, so there is nothing to undo.
	 */
	list_del(&slot->ctl);
	slot->cts_ready = false;
	if (!slot->grant)	/* a dropped message: nothing will come */
		slot->busy = false;
	return prd_post_send(conn, tb, sizeof(*f) + sizeof(*cts),
			     slot->grant && !slot->frames ?
			     prd_slot_reg_wrs(conn, slot) : NULL, NULL);
}

/* The receive state MORE frames of target slot @cookie go to. */
struct prd_rx_state *prd_slot_rx(struct prd_conn *conn, u32 cookie)
{
	struct prd_slot *slot;

	if (cookie > PRD_RDMA_SLOTS)
		return NULL;
	slot = &conn->rxs[cookie - 1];
	if (!slot->busy || !slot->frames || slot->cts_ready)
		return NULL;
	return &slot->rx;
}

/* After a MORE frame of a slot: free it if its message is complete. */
void prd_slot_rx_check(struct prd_conn *conn, u32 cookie)
{
	struct prd_slot *slot = &conn->rxs[cookie - 1];

	if (!slot->rx.busy)
		slot->busy = false;
}

/*
 * DONE: every byte of the round is in place and the rkey is invalidated.
 * The next round's CTS, or the end of the message.
 */
int prd_rx_done_frame(struct prd_conn *conn, const struct prd_frame *f,
		      const struct ib_wc *wc, struct ptl_msg **resp)
{
	u32 cookie = be32_to_cpu(f->cookie);
	struct prd_slot *slot;
	struct ptl_msg *msg;

	if (!cookie || cookie > PRD_RDMA_SLOTS)
		return -EPROTO;
	slot = &conn->rxs[cookie - 1];
	if (!slot->busy || slot->frames || slot->cts_ready ||
	    slot->mr_wait || !slot->mr ||
	    !(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
	    wc->ex.invalidate_rkey != slot->mr->rkey)
		return -EPROTO;
	prd_slot_unmap(conn, slot, DMA_FROM_DEVICE);
	prd_stat_add(conn->pif, PRD_ST_RDMA_BYTES, slot->round_len);
	slot->round_off += slot->round_len;
	if (slot->round_off < slot->grant) {
		slot->round_len = min_t(u64, slot->grant - slot->round_off,
					PRD_RDMA_MAX);
		if (!prd_slot_register(conn, slot)) {
			slot->frames = true;
			slot->rx.off = slot->round_off;
		}
		prd_slot_queue_cts(conn, slot);
		return 0;
	}
	msg = slot->rx.msg;
	slot->rx.msg = NULL;
	slot->busy = false;
	prd_conn_stat_add(conn, PRD_ST_RDMA_WRITES, 1);
	*resp = ptl_rx_done(msg, PTL_NI_OK);
	return 0;
}

/* ---- gets: the REPLY written into the initiator's sink ---- */

/*
 * Initiator. A GET whose reply region is larger than rdma_min (and at most
 * PRD_RDMA_MAX) goes as a GETS frame when a sink is free and the region
 * can be registered in one MR: the region's pages are mapped and
 * registered (REG_MR chained before the GETS), and the get is held in the
 * sink, not ended, until the SINK frame answers it or the connection
 * ends. Holding it holds its MD and the MD's pinned pages. conn->lock
 * held; a send buffer and a credit are available. False: send it the
 * old way; -EAGAIN in *@err: it waits for its sink's MR (demand.c).
 */
bool prd_try_sink(struct prd_conn *conn, struct prd_tx_cb *cb, int *err)
{
	u64 len = ptl_msg_reply_len(cb->msg);
	struct prd_slot *sink = NULL;
	struct prd_sink *desc;
	struct prd_buf *tb;
	struct prd_frame *f;
	unsigned int i;

	if (cb->started || !prd_rdma_min || len <= prd_rdma_min ||
	    len > PRD_RDMA_MAX)
		return false;
	for (i = 0; i < PRD_RDMA_SLOTS && !sink; i++)
		if (!conn->sinks[i].busy)
			sink = &conn->sinks[i];
	if (!sink)
		return false;
	if (!sink->mr) {
		/*
		 * The get waits for mr_work, whose kick sends it; if no MR
		 * could be made, it goes the old way.
		 */
		if (conn->sink_mr_failed) {
			conn->sink_mr_failed = false;
			return false;
		}
		conn->sink_mrs_wanted = true;
		prd_conn_want_mrs(conn);
		*err = -EAGAIN;
		return true;
	}
	if (!prd_slot_sgl(conn, sink) ||
	    !prd_slot_map_reg(conn, sink,
			      ptl_msg_reply_sg(cb->msg, len, sink->sgl,
					       PRD_RDMA_PAGES)))
		return false;
	tb = list_first_entry(&conn->tx_free, struct prd_buf, free);
	f = tb->data;
	prd_frame_init(conn, f, PRD_FRAME_GETS);
	f->cookie = cpu_to_be32(sink - conn->sinks + 1);
	f->len = cpu_to_be32(PTL_WIRE_HDR_LEN + sizeof(*desc));
	memcpy(f + 1, ptl_msg_hdr(cb->msg), PTL_WIRE_HDR_LEN);
	desc = (void *)((u8 *)(f + 1) + PTL_WIRE_HDR_LEN);
	desc->addr = cpu_to_be64(sink->mr->iova);
	desc->rkey = cpu_to_be32(sink->mr->rkey);
	desc->rsvd = 0;
	desc->len = cpu_to_be64(len);
	tb->msg = NULL;		/* the SINK frame ends the get, not this */
	tb->slot = NULL;
	/*
	 * The SINK frame may be handled on another CPU before
	 * ib_post_send() returns, and end the get: the sink holds it first.
	 * An error kills the connection; the teardown unmaps the sink and
	 * fails the get from there.
	 */
	sink->busy = true;
	sink->round_len = len;
	sink->msg = cb->msg;
	cb->started = true;
	list_del(&cb->list);
	*err = prd_post_send(conn, tb, sizeof(*f) + PTL_WIRE_HDR_LEN +
			     sizeof(*desc), prd_slot_reg_wrs(conn, sink), NULL);
	return true;
}

/*
 * Target: a GETS. Matches the GET; its REPLY, if any, is marked for the
 * sink (cb->sink); else the sink is to be released with a bare SINK
 * frame. Either way the GETS gets exactly one SINK frame.
 */
int prd_rx_gets(struct prd_conn *conn, const struct prd_frame *f,
		const u8 *p, u32 len, struct ptl_msg **resp)
{
	const struct prd_sink *desc = (const void *)(p + PTL_WIRE_HDR_LEN);
	u32 cookie = be32_to_cpu(f->cookie);
	struct ptl_rx_plan plan;
	struct prd_rsink *rs;
	struct ptl_msg *msg;
	u64 slen;

	if (len != PTL_WIRE_HDR_LEN + sizeof(*desc) || f->payload ||
	    !cookie || cookie > PRD_RDMA_SLOTS ||
	    ptl_wire_type(p) != PTL_MSG_GET || desc->rsvd)
		return -EPROTO;
	slen = be64_to_cpu(desc->len);
	if (!slen || slen > PRD_RDMA_MAX ||
	    test_and_set_bit(cookie - 1, &conn->rsink_busy))
		return -EPROTO;
	rs = &conn->rsinks[cookie - 1];
	rs->addr = be64_to_cpu(desc->addr);
	rs->rkey = be32_to_cpu(desc->rkey);
	rs->len = slen;
	msg = prd_rx_match(conn, p, &plan);
	/* A GET deposits nothing: its REPLY is ready at once. */
	if (msg)
		*resp = ptl_rx_done(msg, PTL_NI_OK);
	if (*resp)
		prd_cb(*resp)->sink = cookie;
	else
		set_bit(cookie - 1, &conn->rsink_release);
	return 0;
}

/* The SINK frame for sink @i, header and flags set but the rest. */
static struct prd_buf *prd_sink_frame(struct prd_conn *conn, unsigned int i,
				      u64 written)
{
	struct prd_buf *tb = list_first_entry(&conn->tx_free, struct prd_buf,
					      free);
	struct prd_frame *f = tb->data;

	prd_frame_init(conn, f, PRD_FRAME_SINK);
	f->cookie = cpu_to_be32(i + 1);
	f->payload = cpu_to_be64(written);
	tb->msg = NULL;
	tb->slot = NULL;
	/*
	 * The initiator may reuse the sink as soon as this arrives, maybe
	 * before ib_post_send() returns: free it first. An error kills the
	 * connection.
	 */
	clear_bit(i, &conn->rsink_busy);
	return tb;
}

/*
 * Target: releases a sink that gets no REPLY (the GET was dropped, or its
 * REPLY goes the old way): a SINK frame with no header, as a SEND with
 * invalidate of its rkey. conn->lock held; a buffer and a credit free.
 */
int prd_post_release(struct prd_conn *conn)
{
	unsigned int i = __ffs(READ_ONCE(conn->rsink_release));
	struct prd_buf *tb;

	clear_bit(i, &conn->rsink_release);
	tb = prd_sink_frame(conn, i, 0);
	return prd_post_send(conn, tb, sizeof(struct prd_frame), NULL,
			     &conn->rsinks[i].rkey);
}

/*
 * Target: the REPLY to a GETS, at the head of txq. Its payload is RDMA
 * written into the sink (from an initiator slot's mapping, which the
 * SINK frame's completion releases with the message), then the SINK
 * frame carries the REPLY's wire header, as a SEND with invalidate of the
 * sink's rkey. A payload larger than the sink (not from a correct peer),
 * or one that cannot be mapped (no free slot, not in pages), goes the old
 * way after a bare SINK frame that releases the sink. conn->lock held; a
 * buffer and a credit free.
 */
int prd_post_sink_reply(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	unsigned int i = cb->sink - 1;
	struct prd_rsink *rs = &conn->rsinks[i];
	u64 len = ptl_msg_len(cb->msg), done = 0;
	struct prd_slot *slot = NULL;
	struct prd_buf *tb;
	struct prd_frame *f;
	int err;

	if (len > rs->len)
		goto release;
	if (len) {
		slot = prd_slot_free_tx(conn);
		if (!slot || prd_slot_map_tx(conn, slot, cb->msg, 0, len))
			goto release;
		slot->raddr = rs->addr;
		slot->rkey = rs->rkey;
		slot->round_len = len;
		slot->busy = true;
		slot->msg = cb->msg;
		err = prd_post_writes(conn, slot, &done);
		if (err)
			return err;
	}
	tb = prd_sink_frame(conn, i, len);
	f = tb->data;
	f->len = cpu_to_be32(PTL_WIRE_HDR_LEN);
	memcpy(f + 1, ptl_msg_hdr(cb->msg), PTL_WIRE_HDR_LEN);
	tb->msg = cb->msg;	/* its completion ends the REPLY ... */
	tb->slot = slot;	/* ... and unmaps its payload */
	err = prd_post_send(conn, tb, sizeof(*f) + PTL_WIRE_HDR_LEN, NULL,
			    &rs->rkey);
	if (err)
		return err;
	cb->started = true;
	cb->off = len;
	prd_conn_stat_add(conn, PRD_ST_SINK_GETS, 1);
	prd_conn_stat_add(conn, PRD_ST_RDMA_WRITES, 1);
	prd_stat_add(conn->pif, PRD_ST_RDMA_BYTES, done);
	prd_inflight_add(conn, cb);
	return 0;

release:
	tb = prd_sink_frame(conn, i, 0);
	err = prd_post_send(conn, tb, sizeof(struct prd_frame), NULL,
			    &rs->rkey);
	cb->sink = 0;		/* the next kick sends it the old way */
	return err;
}

/*
 * Initiator: the SINK frame of sink @cookie, a SEND that invalidated the
 * sink's rkey (checked: else a protocol error, and the teardown unmaps
 * the sink after destroying the QP). With a REPLY header, the REPLY's
 * payload is in the sink: it must deposit into exactly those pages (the
 * region the library would deposit into, or a prefix), else it fails.
 * The get ends here (PTL_NI_OK: its REPLY came, or comes the old way).
 */
int prd_rx_sink(struct prd_conn *conn, const struct prd_frame *f,
		const u8 *p, u32 len, const struct ib_wc *wc,
		struct ptl_msg **resp)
{
	u32 cookie = be32_to_cpu(f->cookie);
	u64 written = be64_to_cpu(f->payload);
	struct ptl_msg *get, *reply = NULL;
	struct ptl_rx_plan plan;
	struct prd_slot *sink;
	bool ok = true;

	if (!cookie || cookie > PRD_RDMA_SLOTS)
		return -EPROTO;
	sink = &conn->sinks[cookie - 1];
	if (!sink->msg || !sink->mr ||
	    !(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
	    wc->ex.invalidate_rkey != sink->mr->rkey)
		return -EPROTO;
	if (len ? len != PTL_WIRE_HDR_LEN || written > sink->round_len ||
		  ptl_wire_type(p) != PTL_MSG_REPLY : written)
		return -EPROTO;
	/* The rkey is invalid: no device writes these pages any more. */
	prd_slot_unmap(conn, sink, DMA_FROM_DEVICE);
	get = sink->msg;
	sink->msg = NULL;
	if (len) {
		reply = prd_rx_match(conn, p, &plan);
		ok = !reply || (plan.payload == written &&
				ptl_msg_reply_in_sink(reply, get,
						      sink->round_len));
		prd_conn_stat_add(conn, PRD_ST_SINK_GETS, 1);
		prd_conn_stat_add(conn, PRD_ST_RDMA_WRITES, 1);
		prd_stat_add(conn->pif, PRD_ST_RDMA_BYTES, written);
	}
	/* The reply, if any, holds the MD now: its END comes last. */
	ptl_msg_sent(get, PTL_NI_OK);
	if (reply)
		*resp = ptl_rx_done(reply, ok ? PTL_NI_OK : PTL_NI_FAIL);
	spin_lock_bh(&conn->lock);
	sink->busy = false;
	spin_unlock_bh(&conn->lock);
	return ok ? 0 : -EPROTO;
}
