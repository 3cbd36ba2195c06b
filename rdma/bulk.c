// SPDX-License-Identifier: GPL-2.0
/*
 * Large messages by RDMA WRITE, with no copy on either host.
 *
 * The initiator maps its payload's pinned pages and sends an RTS frame
 * (the wire header). The target matches it; it maps the deposit region of
 * the matched MD, registers it with a fast-registration work request
 * (ib_map_mr_sg + IB_WR_REG_MR) and answers with a CTS that carries the
 * MR's address and rkey and how many bytes to write. The initiator
 * registers its pages likewise, in an MR of its own, and RDMA WRITEs that
 * many bytes straight from them into the target's in one work request of
 * one scatter entry, then sends DONE as a SEND with invalidate of the
 * rkey: when the target sees
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

	/* Unsignalled WRITEs and registrations only complete in error. */
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

/* Unmaps the slot's pages, if mapped; the scatterlist stays. */
static void prd_slot_dma_unmap(struct prd_conn *conn, struct prd_slot *slot,
			       enum dma_data_direction dir)
{
	if (slot->mapped)
		ib_dma_unmap_sg(conn->id->device, slot->sgl, slot->nents, dir);
	slot->mapped = 0;
}

/* Unmaps the slot's pages, if mapped, and lets its scatterlist go. */
static void prd_slot_unmap(struct prd_conn *conn, struct prd_slot *slot,
			   enum dma_data_direction dir)
{
	prd_slot_dma_unmap(conn, slot, dir);
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

	for (i = 0; conn->txs && i < PRD_RDMA_SLOTS; i++)
		if (conn->txs[i].mr)
			ib_dereg_mr(conn->txs[i].mr);
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

/* ---- registration, at both ends ---- */

/*
 * The key the slot's MR is registered with next. Normally a new one each
 * time, so that a late WRITE with the old one fails; the DONE's remote
 * invalidation (target), or the LOCAL_INV chained before the REG_MR
 * (initiator), has freed the MR for its next REG_MR.
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
 * Prepares the registration of the slot's mapped entries in its MR, with
 * @access (prd_slot_reg_wrs() gives the work requests); false if they
 * cannot be described in it.
 */
static bool prd_slot_reg(struct prd_conn *conn, struct prd_slot *slot,
			 int access)
{
	u32 old_key = slot->mr->lkey;

	prd_slot_new_key(conn, slot);
	if (ib_map_mr_sg(slot->mr, slot->sgl, slot->mapped, NULL,
			 PAGE_SIZE) != slot->mapped)
		return false;
	slot->reg = (struct ib_reg_wr) {
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_cqe = &conn->err_cqe,
		.mr = slot->mr,
		.key = slot->mr->rkey,
		.access = access,
	};
	slot->inv = (struct ib_send_wr) {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = &conn->err_cqe,
		.ex.invalidate_rkey = old_key,
		.next = &slot->reg.wr,
	};
	return true;
}

/*
 * The work requests that register a slot's MR, in order: a LOCAL_INV
 * first on Soft-RoCE (prd_slot_new_key()) and for an initiator's MR
 * registered before, which nothing else invalidates.
 */
static struct ib_send_wr *prd_slot_reg_wrs(struct prd_conn *conn,
					   struct prd_slot *slot)
{
	return conn->replays_local_ops || slot->mr_used ?
	       &slot->inv : &slot->reg.wr;
}

/*
 * Maps the first @n entries of the slot's sgl for the device; on failure
 * the sgl goes back, as it does when they cannot be described at all.
 */
static bool prd_slot_dma_map(struct prd_conn *conn, struct prd_slot *slot,
			     int n, enum dma_data_direction dir)
{
	slot->nents = n;
	slot->mapped = ib_dma_map_sg(conn->id->device, slot->sgl, n, dir);
	if (!slot->mapped)
		prd_slot_sgl_put(slot);
	return slot->mapped > 0;
}

/*
 * Maps the @n entries of the slot's sgl for the device to write and
 * prepares their registration in the slot's MR; false if they cannot be.
 */
static bool prd_slot_map_reg(struct prd_conn *conn, struct prd_slot *slot,
			     int n)
{
	if (n <= 0) {
		prd_slot_sgl_put(slot);
		return false;
	}
	if (!prd_slot_dma_map(conn, slot, n, DMA_FROM_DEVICE))
		return false;
	if (!prd_slot_reg(conn, slot,
			  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)) {
		prd_slot_unmap(conn, slot, DMA_FROM_DEVICE);
		return false;
	}
	return true;
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
 * Whether the @n entries of @sgl can be registered in one MR of PAGE_SIZE
 * pages: only the first may start inside a page, only the last end inside
 * one (ib_map_mr_sg()'s rule, without its merging of contiguous entries).
 */
static bool prd_sgl_registrable(struct scatterlist *sgl, int n)
{
	struct scatterlist *sg;
	int i;

	for_each_sg(sgl, sg, n, i) {
		if (i && sg->offset)
			return false;
		if (i < n - 1 && !PAGE_ALIGNED(sg->offset + sg->length))
			return false;
	}
	return true;
}

/*
 * Whether every round after the first of @msg's payload can be described
 * to the adapter (the first is when it is mapped): a window of an iovec
 * MD may have more pieces than a slot has entries, or pieces that do not
 * fill their pages. Not: frames.
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
		if (n <= 0 || !prd_sgl_registrable(slot->sgl, n))
			return false;
	}
	return true;
}

/*
 * Maps the payload bytes [@off, @off + @len) of @msg for the WRITE, if
 * they can be registered.
 */
static int prd_slot_map_tx(struct prd_conn *conn, struct prd_slot *slot,
			   struct ptl_msg *msg, u64 off, u64 len)
{
	int n;

	prd_slot_dma_unmap(conn, slot, DMA_TO_DEVICE);
	if (!prd_slot_sgl(conn, slot))
		return -ENOMEM;
	n = ptl_msg_payload_sg(msg, off, len, slot->sgl, PRD_RDMA_PAGES);
	if (n <= 0 || !prd_sgl_registrable(slot->sgl, n)) {
		prd_slot_sgl_put(slot);
		return n < 0 ? n : -EINVAL;
	}
	if (!prd_slot_dma_map(conn, slot, n, DMA_TO_DEVICE))
		return -ENOMEM;
	slot->round_off = off;
	return 0;
}

/*
 * Whether @slot (an initiator slot or a sink) has its MR: 0; -EAGAIN if
 * the message at the head of txq waits for mr_work (*@wanted), whose kick
 * resumes it; -ENOMEM if none could be made (*@failed), and the message
 * goes another way. conn->lock held.
 */
static int prd_slot_mr(struct prd_conn *conn, struct prd_slot *slot,
		       bool *wanted, bool *failed)
{
	if (slot->mr)
		return 0;
	if (*failed) {
		*failed = false;
		return -ENOMEM;
	}
	*wanted = true;
	prd_conn_want_mrs(conn);
	return -EAGAIN;
}

static int prd_tx_slot_mr(struct prd_conn *conn, struct prd_slot *slot)
{
	return prd_slot_mr(conn, slot, &conn->tx_mrs_wanted,
			   &conn->tx_mr_failed);
}

/*
 * Sends an RTS for the message at the head of txq if it is worth it and
 * its pages can be mapped; false: send it in frames. True with -EAGAIN in
 * *@err: it waits for its slot's MR. conn->lock held; a send buffer and a
 * credit are available.
 */
bool prd_try_rts(struct prd_conn *conn, struct prd_tx_cb *cb, int *err)
{
	u64 len = ptl_msg_len(cb->msg);
	struct prd_slot *slot;
	struct prd_buf *tb;
	struct prd_frame *f;
	int mr;

	if (cb->started || !prd_rdma_min || len <= prd_rdma_min)
		return false;
	slot = prd_slot_free_tx(conn);
	if (!slot)
		return false;
	mr = prd_tx_slot_mr(conn, slot);
	if (mr == -EAGAIN) {
		*err = mr;
		return true;
	}
	if (mr || !prd_payload_fits(conn, cb->msg, slot) ||
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
 * Registers the slot's mapped round in its MR and posts the work requests
 * that RDMA WRITE it to raddr/rkey, then @tb (@len bytes), the frame that
 * ends the round, as a SEND with invalidate of the target's rkey. The
 * registration and the WRITE are unsignalled: the SEND completes after
 * them, and until it has, the adapter may read the pages again (to
 * retransmit), so the slot's MR and mapping stay (done_pending).
 */
static int prd_post_round(struct prd_conn *conn, struct prd_slot *slot,
			  struct prd_buf *tb, u32 len)
{
	struct ib_send_wr *first;
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int err;

	if (!prd_slot_reg(conn, slot, 0))	/* local read only */
		return -EIO;
	first = prd_slot_reg_wrs(conn, slot);
	sge.addr = slot->mr->iova;
	sge.length = slot->round_len;
	sge.lkey = slot->mr->lkey;
	wr.wr.wr_cqe = &conn->err_cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = slot->raddr;
	wr.rkey = slot->rkey;
	slot->reg.wr.next = &wr.wr;
	err = prd_post_send(conn, tb, len, first, &slot->rkey);
	if (err)
		return err;
	slot->mr_used = true;
	slot->done_pending = true;
	return 0;
}

/*
 * CTS came: WRITE the round's bytes, then DONE. A later round's pages are
 * mapped once the DONE of the round before has completed (-EAGAIN until
 * then: that completion kicks). conn->lock held.
 */
int prd_post_write(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	struct prd_slot *slot = &conn->txs[cb->cookie - 1];
	struct prd_buf *tb;
	struct prd_frame *f;
	int err;

	if (slot->done_pending)
		return -EAGAIN;
	/* The first round's pages are mapped from the RTS. */
	if (!slot->mapped) {
		err = prd_slot_map_tx(conn, slot, cb->msg, slot->round_off,
				      slot->round_len);
		if (err)
			return err;
	}
	tb = list_first_entry(&conn->tx_free, struct prd_buf, free);
	f = tb->data;
	prd_frame_init(conn, f, PRD_FRAME_DONE);
	f->cookie = cpu_to_be32(cb->cookie);
	/* The last round's DONE ends the message and frees the slot. */
	tb->msg = slot->more ? NULL : cb->msg;
	tb->slot = slot;
	err = prd_post_round(conn, slot, tb, sizeof(*f));
	if (err)
		return err;
	prd_conn_stat_add(conn, PRD_ST_RDMA_WRITES, !slot->more);
	prd_stat_add(conn->pif, PRD_ST_RDMA_BYTES, slot->round_len);
	cb->write = false;
	if (slot->more)
		list_move_tail(&cb->list, &conn->rts_wait);
	else
		prd_inflight_add(conn, cb);
	return 0;
}

/*
 * The frame that ended a round of an initiator slot (DONE, or the SINK
 * frame of a REPLY) completed: the adapter reads its pages no more. The
 * @last frame of its message frees the slot.
 */
void prd_tx_slot_done(struct prd_conn *conn, struct prd_slot *slot,
		      bool last)
{
	slot->done_pending = false;
	if (!last) {
		prd_slot_dma_unmap(conn, slot, DMA_TO_DEVICE);
		return;
	}
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
		/*
		 * The rest follows in MORE frames of this slot; the pages of a
		 * round before go when its DONE has completed.
		 */
		prd_stat_add(conn->pif, PRD_ST_RDMA_FALLBACKS, 1);
		if (!slot->done_pending)
			prd_slot_unmap(conn, slot, DMA_TO_DEVICE);
		cb->off = off;
		list_move_tail(&cb->list, &conn->txq);
		return 0;
	}
	/* Only the first CTS may take nothing (the message was dropped). */
	if (bytes > PRD_RDMA_MAX || bytes > msg_len - off || (!bytes && off) ||
	    ((flags & PRD_CTS_MORE) && (!bytes || off + bytes == msg_len)))
		return -EPROTO;
	if (!bytes) {
		list_del(&cb->list);
		prd_tx_slot_done(conn, slot, true);
		*ended = cb->msg;
		return 0;
	}
	/* A later round's pages are mapped by prd_post_write(). */
	slot->round_off = off;
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
	int mr;

	if (cb->started || !prd_rdma_min || len <= prd_rdma_min ||
	    len > PRD_RDMA_MAX)
		return false;
	for (i = 0; i < PRD_RDMA_SLOTS && !sink; i++)
		if (!conn->sinks[i].busy)
			sink = &conn->sinks[i];
	if (!sink)
		return false;
	/* Without an MR the get waits for one, or goes the old way. */
	mr = prd_slot_mr(conn, sink, &conn->sink_mrs_wanted,
			 &conn->sink_mr_failed);
	if (mr == -EAGAIN) {
		*err = mr;
		return true;
	}
	if (mr || !prd_slot_sgl(conn, sink) ||
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
 * written into the sink (from an initiator slot's registration, which the
 * SINK frame's completion releases with the message), then the SINK
 * frame carries the REPLY's wire header, as a SEND with invalidate of the
 * sink's rkey. A payload larger than the sink (not from a correct peer),
 * or one that cannot be registered (no free slot, not in whole pages, no
 * MR), goes the old way after a bare SINK frame that releases the sink;
 * -EAGAIN: it waits for its slot's MR. conn->lock held; a buffer and a
 * credit free.
 */
int prd_post_sink_reply(struct prd_conn *conn, struct prd_tx_cb *cb)
{
	unsigned int i = cb->sink - 1;
	struct prd_rsink *rs = &conn->rsinks[i];
	u64 len = ptl_msg_len(cb->msg);
	struct prd_slot *slot = NULL;
	u32 size;
	struct prd_buf *tb;
	struct prd_frame *f;
	int err;

	if (len > rs->len)
		goto release;
	if (len) {
		slot = prd_slot_free_tx(conn);
		if (!slot)
			goto release;
		err = prd_tx_slot_mr(conn, slot);
		if (err == -EAGAIN)
			return err;
		if (err || prd_slot_map_tx(conn, slot, cb->msg, 0, len))
			goto release;
		slot->raddr = rs->addr;
		slot->rkey = rs->rkey;
		slot->round_len = len;
		slot->busy = true;
		slot->msg = cb->msg;
	}
	tb = prd_sink_frame(conn, i, len);
	f = tb->data;
	f->len = cpu_to_be32(PTL_WIRE_HDR_LEN);
	memcpy(f + 1, ptl_msg_hdr(cb->msg), PTL_WIRE_HDR_LEN);
	tb->msg = cb->msg;	/* its completion ends the REPLY ... */
	tb->slot = slot;	/* ... and unmaps its payload */
	size = sizeof(*f) + PTL_WIRE_HDR_LEN;
	err = slot ? prd_post_round(conn, slot, tb, size) :
		     prd_post_send(conn, tb, size, NULL, &rs->rkey);
	if (err)
		return err;
	cb->started = true;
	cb->off = len;
	prd_conn_stat_add(conn, PRD_ST_SINK_GETS, 1);
	prd_conn_stat_add(conn, PRD_ST_RDMA_WRITES, 1);
	prd_stat_add(conn->pif, PRD_ST_RDMA_BYTES, len);
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
