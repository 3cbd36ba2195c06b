// SPDX-License-Identifier: GPL-2.0
/*
 * Receive buffers shared by an interface's connections: one shared
 * receive queue (SRQ) per interface and RDMA device, instead of a ring of
 * prd_credits + PRD_NOOP_SPARE buffers per connection
 * (Documentation/rdma-transport.md, "Receive buffers").
 *
 * The connections of an interface on one device share a PD, an SRQ of
 * srq_buffers buffers and a CQ for their receive completions; a QP
 * created with the SRQ takes the next buffer when a SEND starts, and its
 * receive completion names the QP, whose context is the connection.
 * The completion handler gives the buffer back to the SRQ once the frame
 * is processed, whatever became of the connection.
 *
 * The CQ holds a completion for every buffer, so however many frames a
 * hostile peer sends at once it cannot overflow (Soft-RoCE drops what
 * does not fit, the drain's marker included). A connection's teardown
 * must know when the CQ has been polled past its QP's last successful
 * completion (the last that uses the connection): after the QP's drain
 * has moved it to the error state, it waits at a barrier
 * (prd_rxq_barrier()): a receive posted to a QP of the queue's own, kept
 * in the error state on the same CQ, completes at once, flushed, behind
 * every completion already there, and a CQ is polled in order. Credits still bound
 * what each peer has in flight (msg.c), but the sum over peers may
 * exceed the SRQ: a SEND that finds it empty is refused with an RNR NAK
 * and retried by the peer's adapter (the retry count is infinite), so
 * nothing is lost, only delayed.
 *
 * A buffer a QP had taken when it was destroyed may never complete:
 * Soft-RoCE completes it (flushed) only if the QP's responder runs
 * before its last reference goes, and a completion left in a CQ that is
 * freed is dropped. Nothing says which buffer that was, but an SRQ hands
 * out buffers in the order they were posted: a buffer still out while
 * one posted after it has completed was taken, and one taken longer
 * than PRD_RXQ_LOST_MS (a SEND takes milliseconds; a connection that
 * stalls is closed after progress_timeout_ms) is presumed lost. It is
 * replaced by a new buffer and kept, since it may still be in use: if it
 * ever completes it is freed, and otherwise it is freed with the SRQ,
 * which goes when the interface's last connection on the device does.
 * At most srq_buffers / 4 are replaced that way; past that, the SRQ
 * shrinks until then.
 *
 * Locks: rxq->lock (spinlock, BH) guards the buffer lists and counts;
 * pif->rxq_lock (mutex) the interface's list of them and their
 * references.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/slab.h>

#include "prd.h"

/* Taken (a later buffer completed) and not completed this long: lost. */
#define PRD_RXQ_LOST_MS		30000

/* A receive buffer of the SRQ. */
struct prd_rxbuf {
	struct ib_cqe cqe;
	struct prd_rxq *rxq;
	void *data;
	u64 dma;
	struct list_head node;	/* on rxq->posted, ->lost or ->idle */
	u64 seq;		/* when posted: the SRQ hands out in order */
	unsigned long taken_since;	/* jiffies; 0: not seen taken */
	bool lost;
};

static void prd_rxq_recv_done(struct ib_cq *cq, struct ib_wc *wc);

static unsigned int prd_rxq_max_lost(void)
{
	return max(prd_srq_buffers / 4, 1U);
}

/* Buffers an SRQ of @size holds: those and the lost ones' stand-ins. */
static unsigned int prd_srq_depth(unsigned int size)
{
	return size + prd_rxq_max_lost();
}

static unsigned int prd_rxq_depth(const struct prd_rxq *rxq)
{
	return prd_srq_depth(rxq->size);
}

static struct prd_rxbuf *prd_rxbuf_alloc(struct prd_rxq *rxq)
{
	struct prd_rxbuf *rb = kzalloc(sizeof(*rb), GFP_KERNEL_ACCOUNT);

	if (!rb)
		return NULL;
	rb->rxq = rxq;
	rb->cqe.done = prd_rxq_recv_done;
	if (prd_frame_map(rxq->dev, DMA_FROM_DEVICE, &rb->data, &rb->dma,
			  GFP_KERNEL_ACCOUNT)) {
		kfree(rb);
		return NULL;
	}
	return rb;
}

static void prd_rxbuf_free(struct prd_rxbuf *rb)
{
	prd_frame_unmap(rb->rxq->dev, DMA_FROM_DEVICE, rb->data, rb->dma);
	kfree(rb);
}

/*
 * Posts @rb to the SRQ, or parks it on idle for the sweep to try again;
 * whether it went. rxq->lock held.
 */
static bool prd_rxbuf_post(struct prd_rxq *rxq, struct prd_rxbuf *rb)
{
	struct ib_sge sge = {
		.addr = rb->dma,
		.length = prd_frame_size,
		.lkey = rxq->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &rb->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(rxq->dev, rb->dma, prd_frame_size,
				      DMA_FROM_DEVICE);
	rb->taken_since = 0;
	if (ib_post_srq_recv(rxq->srq, &wr, NULL)) {
		list_add_tail(&rb->node, &rxq->idle);
		return false;
	}
	rb->seq = ++rxq->seq;
	list_add_tail(&rb->node, &rxq->posted);
	rxq->nposted++;
	return true;
}

/*
 * A buffer is back from the SRQ: posted again, or freed if it was
 * presumed lost (a stand-in took its place).
 */
static void prd_rxq_recycle(struct prd_rxq *rxq, struct prd_rxbuf *rb)
{
	spin_lock_bh(&rxq->lock);
	list_del(&rb->node);
	if (rb->lost) {
		rxq->nlost--;
		spin_unlock_bh(&rxq->lock);
		prd_rxbuf_free(rb);
		return;
	}
	rxq->nposted--;
	rxq->done_seq = max(rxq->done_seq, rb->seq);
	prd_rxbuf_post(rxq, rb);
	spin_unlock_bh(&rxq->lock);
}

/*
 * Receive completion of a connection's QP. Only a successful one is
 * the connection's: it precedes the teardown's barrier, so the
 * connection is still there. A flushed one may come after the QP is gone
 * (and wc->qp with it), so it gives the buffer back and touches nothing
 * else; so does any other error, after which the QP is in error and the
 * connection ends by its sends or its peer.
 */
static void prd_rxq_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct prd_rxbuf *rb = container_of(wc->wr_cqe, struct prd_rxbuf,
					    cqe);
	struct prd_rxq *rxq = rb->rxq;

	if (wc->status == IB_WC_SUCCESS) {
		ib_dma_sync_single_for_cpu(rxq->dev, rb->dma, wc->byte_len,
					   DMA_FROM_DEVICE);
		prd_rx_frame_done(wc->qp->qp_context, wc, rb->data, NULL);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		pr_info_ratelimited("interface %u: receive failed: %s\n",
				    ptl_binding_iface(rxq->pif->b),
				    ib_wc_status_msg(wc->status));
	}
	prd_rxq_recycle(rxq, rb);
}

/* Frees the buffers on @list (not posted, or posted to a freed SRQ). */
static void prd_rxbufs_free(struct list_head *list)
{
	struct prd_rxbuf *rb, *tmp;

	list_for_each_entry_safe(rb, tmp, list, node) {
		list_del(&rb->node);
		prd_rxbuf_free(rb);
	}
}

/*
 * Allocates and posts @n buffers, charged to the binder; how many were
 * posted.
 */
static unsigned int prd_rxq_fill(struct prd_rxq *rxq, unsigned int n)
{
	struct mem_cgroup *old = prd_charge(rxq->pif);
	unsigned int i, posted = 0;
	struct prd_rxbuf *rb;

	for (i = 0; i < n; i++) {
		rb = prd_rxbuf_alloc(rxq);
		if (!rb)
			break;
		spin_lock_bh(&rxq->lock);
		posted += prd_rxbuf_post(rxq, rb);
		spin_unlock_bh(&rxq->lock);
	}
	set_active_memcg(old);
	return posted;
}

/* The barrier's receive completed: every completion before it did. */
struct prd_barrier {
	struct ib_cqe cqe;
	struct completion done;
};

static void prd_barrier_done(struct ib_cq *cq, struct ib_wc *wc)
{
	complete(&container_of(wc->wr_cqe, struct prd_barrier, cqe)->done);
}

/*
 * Returns once every completion on the receive CQ before it has been
 * handled: a connection's teardown calls it after its QP's drain. The CQ
 * is armed first, so that the barrier's completion gets it polled even
 * if the event of one before it was lost (Soft-RoCE has been seen to
 * lose some). If the receive cannot be posted (a device in trouble), a
 * second of the CQ's polling stands in for it.
 */
void prd_rxq_barrier(struct prd_rxq *rxq)
{
	struct prd_barrier b = { .cqe.done = prd_barrier_done };
	struct ib_recv_wr wr = { .wr_cqe = &b.cqe };
	int err;

	init_completion(&b.done);
	mutex_lock(&rxq->barrier_lock);
	ib_req_notify_cq(rxq->cq, IB_CQ_NEXT_COMP);
	err = ib_post_recv(rxq->barrier_qp, &wr, NULL);
	if (!err)
		wait_for_completion(&b.done);
	mutex_unlock(&rxq->barrier_lock);
	if (err) {
		pr_warn_ratelimited("interface %u: no barrier on the receive CQ (%d): waiting 1 s instead\n",
				    ptl_binding_iface(rxq->pif->b), err);
		msleep(1000);
	}
}

/*
 * The barrier's QP: never connected, moved to the error state, in which
 * a receive posted to it completes at once (flushed).
 */
static int prd_rxq_barrier_init(struct prd_rxq *rxq)
{
	struct ib_qp_init_attr init = {
		.send_cq = rxq->cq,
		.recv_cq = rxq->cq,
		.cap.max_send_wr = 1,
		.cap.max_recv_wr = 1,
		.cap.max_send_sge = 1,
		.cap.max_recv_sge = 1,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = rdma_start_port(rxq->dev),
	};
	struct ib_qp *qp = ib_create_qp(rxq->pd, &init);

	if (IS_ERR(qp))
		return PTR_ERR(qp);
	rxq->barrier_qp = qp;
	/* Reset to error is not a transition: through init. */
	if (ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			 IB_QP_PORT | IB_QP_ACCESS_FLAGS))
		return -EIO;
	attr.qp_state = IB_QPS_ERR;
	return ib_modify_qp(qp, &attr, IB_QP_STATE) ? -EIO : 0;
}

static void prd_rxq_destroy(struct prd_rxq *rxq)
{
	/* No QP uses the SRQ any more, and no completion can come. */
	if (rxq->barrier_qp)
		ib_destroy_qp(rxq->barrier_qp);
	if (rxq->srq)
		ib_destroy_srq(rxq->srq);
	if (rxq->cq)
		ib_free_cq(rxq->cq);
	prd_rxbufs_free(&rxq->posted);
	prd_rxbufs_free(&rxq->lost);
	prd_rxbufs_free(&rxq->idle);
	if (rxq->pd)
		ib_dealloc_pd(rxq->pd);
	kfree(rxq);
}

static struct prd_rxq *prd_rxq_create(struct prd_iface *pif,
				      struct ib_device *dev)
{
	struct ib_srq_init_attr attr = {
		.srq_type = IB_SRQT_BASIC,
		.attr.max_sge = 1,
	};
	struct prd_rxq *rxq = kzalloc(sizeof(*rxq), GFP_KERNEL_ACCOUNT);
	int err;

	if (!rxq)
		return ERR_PTR(-ENOMEM);
	kref_init(&rxq->ref);
	rxq->pif = pif;
	rxq->dev = dev;
	rxq->size = prd_srq_buffers;
	spin_lock_init(&rxq->lock);
	mutex_init(&rxq->barrier_lock);
	INIT_LIST_HEAD(&rxq->posted);
	INIT_LIST_HEAD(&rxq->lost);
	INIT_LIST_HEAD(&rxq->idle);
	rxq->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(rxq->pd)) {
		err = PTR_ERR(rxq->pd);
		rxq->pd = NULL;
		goto err_destroy;
	}
	/* A completion per buffer, and the barrier's. */
	rxq->cq = ib_alloc_cq(dev, rxq, prd_rxq_depth(rxq) + 1, 0,
			      IB_POLL_SOFTIRQ);
	if (IS_ERR(rxq->cq)) {
		err = PTR_ERR(rxq->cq);
		rxq->cq = NULL;
		goto err_destroy;
	}
	err = prd_rxq_barrier_init(rxq);
	if (err)
		goto err_destroy;
	attr.attr.max_wr = prd_rxq_depth(rxq);
	attr.srq_context = rxq;
	rxq->srq = ib_create_srq(rxq->pd, &attr);
	if (IS_ERR(rxq->srq)) {
		err = PTR_ERR(rxq->srq);
		rxq->srq = NULL;
		goto err_destroy;
	}
	err = -ENOMEM;
	if (prd_rxq_fill(rxq, rxq->size) < rxq->size)
		goto err_destroy;
	return rxq;

err_destroy:
	prd_rxq_destroy(rxq);
	return ERR_PTR(err);
}

/*
 * Whether @dev can give the interface's connections an SRQ of
 * srq_buffers: not if the parameter is 0 or the device has no SRQs, or
 * too small ones; the connections then keep a ring each.
 */
static bool prd_rxq_fits(struct ib_device *dev)
{
	return prd_srq_buffers && dev->ops.create_srq &&
	       dev->attrs.max_srq > 0 &&
	       dev->attrs.max_srq_wr >= prd_srq_depth(prd_srq_buffers);
}

/*
 * The interface's receive queue on @dev, referenced: made if it has
 * none there. NULL if the connections on @dev keep a ring each.
 */
struct prd_rxq *prd_rxq_get(struct prd_iface *pif, struct ib_device *dev)
{
	struct prd_rxq *rxq;

	if (!prd_rxq_fits(dev))
		return NULL;
	mutex_lock(&pif->rxq_lock);
	list_for_each_entry(rxq, &pif->rxqs, node) {
		if (rxq->dev == dev) {
			kref_get(&rxq->ref);
			goto out;
		}
	}
	rxq = prd_rxq_create(pif, dev);
	if (!IS_ERR(rxq))
		list_add(&rxq->node, &pif->rxqs);
out:
	mutex_unlock(&pif->rxq_lock);
	return rxq;
}

static void prd_rxq_release(struct kref *ref)
{
	struct prd_rxq *rxq = container_of(ref, struct prd_rxq, ref);

	list_del(&rxq->node);
	mutex_unlock(&rxq->pif->rxq_lock);
	prd_rxq_destroy(rxq);
}

/*
 * After the connection's QP and CQ are gone. The last connection on the
 * device takes the SRQ with it: the device may be going away, and the
 * buffers presumed lost are freed only then.
 */
void prd_rxq_put(struct prd_rxq *rxq)
{
	kref_put_mutex(&rxq->ref, prd_rxq_release, &rxq->pif->rxq_lock);
}

/*
 * Presumes lost the buffers taken longer than PRD_RXQ_LOST_MS ago; how
 * many stand-ins to post. rxq->lock held.
 */
static unsigned int prd_rxq_find_lost(struct prd_rxq *rxq,
				      unsigned long now)
{
	unsigned long limit = msecs_to_jiffies(PRD_RXQ_LOST_MS);
	struct prd_rxbuf *rb, *tmp;
	unsigned int n = 0;

	list_for_each_entry_safe(rb, tmp, &rxq->posted, node) {
		if (rb->seq >= rxq->done_seq)
			break;	/* this one and those after: not taken */
		if (!rb->taken_since) {
			rb->taken_since = now ?: 1;
			continue;
		}
		if (time_before(now, rb->taken_since + limit) ||
		    rxq->nlost >= prd_rxq_max_lost())
			continue;
		rb->lost = true;
		list_move_tail(&rb->node, &rxq->lost);
		rxq->nposted--;
		rxq->nlost++;
		n++;
	}
	return n;
}

/*
 * Posts again what failed to post, presumes lost what was taken too long
 * ago, and brings the SRQ back to its size: stand-ins for the lost, and
 * buffers that could not be allocated before. Not while a post fails:
 * the SRQ is broken, and more buffers would not help.
 */
static void prd_rxq_sweep_one(struct prd_rxq *rxq, unsigned long now)
{
	unsigned int lost, missing = 0;
	struct prd_rxbuf *rb, *tmp;

	spin_lock_bh(&rxq->lock);
	list_for_each_entry_safe(rb, tmp, &rxq->idle, node) {
		list_del(&rb->node);
		prd_rxbuf_post(rxq, rb);
	}
	lost = prd_rxq_find_lost(rxq, now);
	if (list_empty(&rxq->idle) && rxq->nposted < rxq->size)
		missing = rxq->size - rxq->nposted;
	spin_unlock_bh(&rxq->lock);
	if (lost) {
		prd_stat_add(rxq->pif, PRD_ST_SRQ_LOST, lost);
		pr_info_ratelimited("interface %u: %u receive buffers presumed lost with their connections: replaced\n",
				    ptl_binding_iface(rxq->pif->b), lost);
	}
	if (missing)
		prd_rxq_fill(rxq, missing);
	/*
	 * A receive completion whose event was lost (Soft-RoCE has been
	 * seen to leave frames unprocessed until something else completed):
	 * re-armed, and polled behind the barrier's.
	 */
	if (ib_req_notify_cq(rxq->cq, IB_CQ_NEXT_COMP |
			     IB_CQ_REPORT_MISSED_EVENTS) > 0)
		prd_rxq_barrier(rxq);
}

void prd_rxq_sweep(struct prd_iface *pif)
{
	unsigned long now = jiffies;
	struct prd_rxq *rxq;

	mutex_lock(&pif->rxq_lock);
	list_for_each_entry(rxq, &pif->rxqs, node)
		prd_rxq_sweep_one(rxq, now);
	mutex_unlock(&pif->rxq_lock);
}
