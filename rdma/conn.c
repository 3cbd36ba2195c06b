// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: the rdma_cm listener of an interface, RC connections to
 * peers set up on demand, and their teardown.
 *
 * A peer's nid is the IPv4 address of its RDMA netdev (as for rtscts, a
 * binding's default nid is its netdev's address), so the first message
 * for a nid resolves that address and connects to prd_port there. The
 * connect request carries both nids; the acceptor checks the target nid
 * is its own and learns the initiator's from it. Two nodes that connect
 * to each other at once keep both connections: each sends its requests
 * on the one in iface->peers and answers on the one a request came by.
 *
 * Any error (an rdma_cm error event, a disconnect, the device's removal,
 * a completion in error, the connect timeout) kills a connection: it is
 * marked dead under its lock, so nothing more is posted, and the teardown
 * work destroys its QP, CQ, buffers, PD and cm_id, then fails the
 * messages left. Each step is bounded (the connect timeout, the QP's
 * retry count for a silent peer), so operations end with failure events
 * within a bounded time and nothing outlives the binding.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/in.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include <linux/portals_netlink.h>
#include <rdma/ib_cm.h>

#include "prd.h"

/* Local ACK timeout of the QPs: 4.096 us << 16 = 268 ms, 6 retries. */
#define PRD_ACK_TIMEOUT		16
#define PRD_RETRY_COUNT		6
/* ib_drain_qp() posts one more work request on each queue. */
#define PRD_DRAIN_WRS		1
#define PRD_RNR_RETRY_INFINITE	7
/*
 * How long a peer whose SEND found no receive buffer posted (the SRQ
 * empty) waits before its adapter tries again: the RNR NAK carries the
 * receiver's value. A buffer comes back as soon as the completion
 * handler has deposited a frame, so 0.64 ms, not the default 655 ms
 * (Soft-RoCE also counts its ACK timeouts during the wait against the
 * retry count, so long waits end the connection: rdma-transport.md).
 */
#define PRD_MIN_RNR_TIMER	IB_RNR_TIMER_000_64
/*
 * WRITE rounds (or sink replies) a connection's send queue holds at
 * least, besides a SEND per send buffer (more if the device rounds up):
 * 16 work requests, as a round is one WRITE of one MR (PRD_STEP_WRS).
 */
#define PRD_SQ_STEPS		4
#define PRD_LISTEN_BACKLOG	64

static void prd_conn_teardown(struct work_struct *work);
static int prd_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static void prd_conn_release(struct kref *ref)
{
	kfree(container_of(ref, struct prd_conn, ref));
}

void prd_conn_put(struct prd_conn *conn)
{
	kref_put(&conn->ref, prd_conn_release);
}

/* Marks @conn dead and has the teardown free it. conn->lock held. */
void __prd_conn_kill(struct prd_conn *conn)
{
	if (conn->state == PRD_CONN_DEAD)
		return;
	conn->state = PRD_CONN_DEAD;
	conn->killed_at = ktime_get();
	queue_work(prd_wq, &conn->kill_work);
}

void prd_conn_kill(struct prd_conn *conn)
{
	spin_lock_bh(&conn->lock);
	__prd_conn_kill(conn);
	spin_unlock_bh(&conn->lock);
}

static void prd_conn_timeout(struct work_struct *work)
{
	struct prd_conn *conn = container_of(to_delayed_work(work),
					     struct prd_conn, timer);
	int last = READ_ONCE(conn->last_event);

	spin_lock_bh(&conn->lock);
	if (conn->state == PRD_CONN_CONNECTING) {
		pr_info_ratelimited("nid %u: not connected after %u ms (last event: %s)\n",
				    conn->nid, prd_connect_timeout_ms,
				    last < 0 ? "none" : rdma_event_msg(last));
		prd_stat_add(conn->pif, PRD_ST_CONN_FAILS, 1);
		__prd_conn_kill(conn);
	}
	spin_unlock_bh(&conn->lock);
}

/*
 * Room for one more connection: max_conns in all, of which max_inbound
 * accepted from peers and max_inbound_pending of those not established.
 * What local senders and hosts on the fabric can make us hold is bounded,
 * and hosts on the fabric cannot take every place. pif->lock held.
 */
static bool prd_conn_room(struct prd_iface *pif, bool active)
{
	if (pif->nconns >= READ_ONCE(prd_max_conns))
		return false;
	return active || (pif->nin < READ_ONCE(prd_max_inbound) &&
			  pif->nin_pending < READ_ONCE(prd_max_inbound_pending));
}

/* No room for a connection of ours to @nid: its message fails. */
static void prd_conn_refused(struct prd_iface *pif, u32 nid)
{
	pr_info_ratelimited("interface %u: %u connections, at max_conns: not connecting to nid %u\n",
			    ptl_binding_iface(pif->b), pif->nconns, nid);
	prd_stat_add(pif, PRD_ST_OUT_REFUSED, 1);
}

/*
 * A new connection on pif->conns (its reference); -ENETDOWN if the
 * interface is closing, -ENOSPC if there is no room for it. Either way,
 * near the cap the idlest connection is asked to close for the next one.
 */
static struct prd_conn *prd_conn_alloc(struct prd_iface *pif, u32 nid,
				       bool active)
{
	struct mem_cgroup *old = prd_charge(pif);
	struct prd_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);
	int err = -ENETDOWN;

	set_active_memcg(old);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	conn->kind = PRD_KIND_CONN;
	conn->pif = pif;
	conn->nid = nid;
	conn->active = active;
	conn->last_event = -1;
	kref_init(&conn->ref);
	spin_lock_init(&conn->lock);
	mutex_init(&conn->cm_mutex);
	conn->state = PRD_CONN_CONNECTING;
	conn->rx_allowed = prd_credits;	/* what we advertise at connect */
	INIT_LIST_HEAD(&conn->txq);
	INIT_LIST_HEAD(&conn->inflight);
	INIT_LIST_HEAD(&conn->acks_held);
	INIT_LIST_HEAD(&conn->tx_free);
	INIT_LIST_HEAD(&conn->tx_unmade);
	INIT_LIST_HEAD(&conn->rts_wait);
	INIT_LIST_HEAD(&conn->ctlq);
	INIT_DELAYED_WORK(&conn->timer, prd_conn_timeout);
	INIT_WORK(&conn->kill_work, prd_conn_teardown);
	INIT_WORK(&conn->mr_work, prd_mr_work);

	mutex_lock(&pif->lock);
	if (pif->closing)
		goto err_unlock;
	err = -ENOSPC;
	if (!prd_conn_room(pif, active)) {
		if (active)
			prd_conn_refused(pif, nid);
		prd_close_reclaim(pif);
		goto err_unlock;
	}
	if (!active) {
		pif->nin++;
		pif->nin_pending++;
		conn->in_pending = true;
	}
	list_add_tail(&conn->node, &pif->conns);
	pif->nconns++;
	prd_close_reclaim(pif);
	mutex_unlock(&pif->lock);
	return conn;

err_unlock:
	mutex_unlock(&pif->lock);
	kfree(conn);
	return ERR_PTR(err);
}

/* An inbound connection is established: no longer pending. */
static void prd_inbound_up(struct prd_conn *conn)
{
	struct prd_iface *pif = conn->pif;

	mutex_lock(&pif->lock);
	if (conn->in_pending) {
		conn->in_pending = false;
		pif->nin_pending--;
	}
	mutex_unlock(&pif->lock);
}

static void prd_conn_unlist(struct prd_conn *conn)
{
	struct prd_iface *pif = conn->pif;

	mutex_lock(&pif->lock);
	list_del(&conn->node);
	if (conn->in_pending)
		pif->nin_pending--;
	if (!conn->active)
		pif->nin--;
	if (!--pif->nconns)
		wake_up(&pif->idle);
	mutex_unlock(&pif->lock);
}

/*
 * The interface's receive queue on the device and its PD, or a PD of
 * the connection's own for a receive ring.
 */
static int prd_conn_setup_pd(struct prd_conn *conn, struct ib_device *dev)
{
	struct prd_rxq *rxq = prd_rxq_get(conn->pif, dev);

	/* A device that says it has SRQs but makes none: rings, then. */
	if (IS_ERR(rxq) && PTR_ERR(rxq) != -EOPNOTSUPP)
		return PTR_ERR(rxq);
	if (!IS_ERR_OR_NULL(rxq)) {
		conn->rxq = rxq;
		conn->pd = rxq->pd;
		return 0;
	}
	conn->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(conn->pd)) {
		int err = PTR_ERR(conn->pd);

		conn->pd = NULL;
		return err;
	}
	return 0;
}

/*
 * Devices round their queues up (Soft-RoCE to a power of two, less one):
 * the send queue takes all the QP was given, as far as the CQ has room
 * for its completions too.
 */
static void prd_conn_sq_given(struct prd_conn *conn, unsigned int recv_cqes)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr qattr;
	unsigned int given;

	if (ib_query_qp(conn->id->qp, &qattr, IB_QP_CAP, &init))
		return;
	given = min_t(unsigned int, qattr.cap.max_send_wr,
		      conn->cq->cqe - recv_cqes);
	if (given > conn->sq_size + PRD_DRAIN_WRS)
		conn->sq_size = given - PRD_DRAIN_WRS;
}

/*
 * The QP's asynchronous events. On an accepted connection the peer may
 * send before its RTU arrives (it is established when it gets our REP):
 * the adapter reports COMM_EST at that first receive, and rdma_cm must be
 * told, or it raises ESTABLISHED (and we send) only once ib_cm has given
 * up waiting for a lost RTU and sent its REP again, seconds later, close
 * to connect_timeout_ms. Soft-RoCE never reports it. Errors need nothing
 * here: a QP in error flushes its sends as failed completions, and those
 * kill the connection.
 */
static void prd_qp_event(struct ib_event *ev, void *context)
{
	struct prd_conn *conn = context;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(conn->id, IB_EVENT_COMM_EST);
}

/* PD, CQ, QP and buffers on the device the cm_id resolved to. */
static int prd_conn_setup_qp(struct prd_conn *conn)
{
	struct ib_device *dev = conn->id->device;
	struct ib_qp_init_attr attr = {};
	struct mem_cgroup *old;
	unsigned int recv_cqes;
	int err;

	old = prd_charge(conn->pif);
	err = prd_conn_setup_pd(conn, dev) ?: prd_bufs_alloc(conn);
	set_active_memcg(old);
	if (err)
		return err;
	/*
	 * A SEND per send buffer and PRD_SQ_STEPS of the largest steps (an
	 * RDMA WRITE round) besides: what is posted waits for room
	 * (prd_can_post()), so the queue need not hold all a connection
	 * could have in flight. The driver's queue is the largest thing an
	 * idle connection costs: sized for everything (8 slots and 8 sinks
	 * three times over, 541 work requests of 16 scatter entries) it
	 * took 662 KiB on Soft-RoCE; with a round one WRITE of one entry,
	 * 64 slots of 256 bytes.
	 */
	conn->replays_local_ops = dev->ops.driver_id == RDMA_DRIVER_RXE;
	conn->sq_size = conn->ntx + PRD_SQ_STEPS * PRD_STEP_WRS;
	attr.cap.max_send_wr = conn->sq_size + PRD_DRAIN_WRS;
	if (conn->rxq) {
		/* Its receive completions go to the SRQ's CQ (srq.c). */
		attr.srq = conn->rxq->srq;
		recv_cqes = 0;
	} else {
		attr.cap.max_recv_wr = conn->nrx + PRD_DRAIN_WRS;
		recv_cqes = attr.cap.max_recv_wr;
	}
	/*
	 * A completion per work request at most, signalled or not: a QP in
	 * error flushes every one still queued, each with a completion. So
	 * the CQ holds its queues, and no more: with the receive queue's
	 * completions (which the SRQ's CQ now takes) it was as large as the
	 * send queue, 68 KiB on Soft-RoCE (entries of 128 bytes).
	 */
	conn->cq = ib_alloc_cq(dev, conn, attr.cap.max_send_wr + recv_cqes, 0,
			       IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		err = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return err;
	}
	attr.qp_context = conn;	/* for receive completions from the SRQ */
	attr.event_handler = prd_qp_event;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->rxq ? conn->rxq->cq : conn->cq;
	attr.cap.max_send_sge = 1;	/* a WRITE's pages are in an MR */
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = rdma_create_qp(conn->id, conn->pd, &attr);
	if (err)
		return err;
	conn->qp_created = true;
	prd_conn_sq_given(conn, recv_cqes);
	err = rdma_set_ack_timeout(conn->id, PRD_ACK_TIMEOUT) ?:
	      rdma_set_min_rnr_timer(conn->id, PRD_MIN_RNR_TIMER);
	if (err)
		return err;
	return prd_post_recvs(conn);
}

/*
 * Frees what prd_conn_setup_qp() made. The QP goes first, so that the
 * adapter stops using the buffers; freeing the CQ waits for a completion
 * handler still running.
 *
 * Drained before it is destroyed, as the kernel's other RDMA clients do:
 * ib_drain_qp() moves it to the error state and returns once every work
 * request still queued has completed (flushed) and its handler has run,
 * which finds the connection dead and posts nothing. With a shared
 * receive queue only the send queue is drained: a buffer the QP had
 * taken from the SRQ completes later or never, and the SRQ's CQ is
 * polled past the QP's successful receives before it goes (srq.c,
 * prd_rxq_barrier()). (Soft-RoCE's
 * destroy also waits for the QP's packets still in the NIC's queue, up
 * to 50 s: rdma-transport.md, "Known problems".)
 */
static void prd_conn_free_res(struct prd_conn *conn)
{
	if (conn->qp_created) {
		ib_drain_qp(conn->id->qp);
		if (conn->rxq)
			prd_rxq_barrier(conn->rxq);
		rdma_destroy_qp(conn->id);
		conn->qp_created = false;
	}
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	prd_bufs_free(conn);	/* the slots' MRs are on the PD */
	if (conn->rxq) {
		prd_rxq_put(conn->rxq);
		conn->rxq = NULL;
	} else if (conn->pd) {
		ib_dealloc_pd(conn->pd);
	}
	conn->pd = NULL;
}

/*
 * A teardown should take milliseconds. One that took longer says where:
 * waiting to run (the workqueue or the CM handler's lock) or in the
 * device (the drain, the QP's destroy). Soft-RoCE has been seen to take
 * ~50 s and then time out its own wait (rdma-transport.md).
 */
static void prd_conn_teardown_report(struct prd_conn *conn, ktime_t locked,
				     ktime_t freed)
{
	s64 total = ktime_ms_delta(ktime_get(), conn->killed_at);

	if (total < 1000)
		return;
	pr_warn_ratelimited("nid %u: teardown took %lld ms: %lld to take the CM lock, %lld to free the QP and buffers\n",
			    conn->nid, total,
			    ktime_ms_delta(locked, conn->killed_at),
			    ktime_ms_delta(freed, locked));
}

static void prd_conn_teardown(struct work_struct *work)
{
	struct prd_conn *conn = container_of(work, struct prd_conn,
					     kill_work);
	struct prd_iface *pif = conn->pif;
	ktime_t locked, freed;
	unsigned int failed;

	xa_cmpxchg(&pif->peers, conn->nid, conn, NULL, 0);
	cancel_delayed_work_sync(&conn->timer);
	/* Dead: nothing queues it again; what waited for it fails below. */
	cancel_work_sync(&conn->mr_work);
	/*
	 * A handler that runs from here on sees the connection dead and does
	 * nothing; rdma_destroy_id() waits for one still running.
	 */
	mutex_lock(&conn->cm_mutex);
	locked = ktime_get();
	if (conn->qp_created)
		rdma_disconnect(conn->id);	/* the peer learns at once */
	prd_conn_free_res(conn);
	mutex_unlock(&conn->cm_mutex);
	freed = ktime_get();
	if (conn->id)
		rdma_destroy_id(conn->id);
	conn->id = NULL;
	prd_conn_teardown_report(conn, locked, freed);
	failed = prd_fail_msgs(conn);
	/* Lost, not let go of: an unbind or idle close is no news. */
	if (prd_conn_closed_idle(conn, failed))
		prd_stat_add(pif, PRD_ST_IDLE_CLOSES, 1);
	else if (conn->was_up && !READ_ONCE(pif->closing))
		ptl_binding_peer_event(pif->b, conn->nid,
				       PTL_EVENT_PEER_UNREACHABLE, 0, failed);
	prd_conn_unlist(conn);
	prd_conn_put(conn);
}

static void prd_conn_data_init(struct prd_conn *conn,
			       struct prd_conn_data *d,
			       struct rdma_conn_param *param)
{
	memset(d, 0, sizeof(*d));
	d->magic = cpu_to_be16(PRD_MAGIC);
	d->version = cpu_to_be16(PRD_VERSION);
	d->credits = cpu_to_be16(prd_credits);
	d->src_nid = cpu_to_be32(ptl_binding_nid(conn->pif->b));
	d->dst_nid = cpu_to_be32(conn->nid);
	d->frame_size = cpu_to_be32(prd_frame_size);

	memset(param, 0, sizeof(*param));
	param->private_data = d;
	param->private_data_len = sizeof(*d);
	param->retry_count = PRD_RETRY_COUNT;
	/* Credits keep data frames from meeting no buffer; NOOPs may. */
	param->rnr_retry_count = PRD_RNR_RETRY_INFINITE;
	param->flow_control = 1;
}

/* Checks the peer's private data; the smaller frame size is used. */
static int prd_conn_data_check(const struct rdma_conn_param *param,
			       u32 *credits, u32 *frame_size)
{
	const struct prd_conn_data *d = param->private_data;
	u32 min_frame = sizeof(struct prd_frame) + 96 + 1;

	if (!d || param->private_data_len < sizeof(*d) ||
	    be16_to_cpu(d->magic) != PRD_MAGIC ||
	    be16_to_cpu(d->version) != PRD_VERSION ||
	    !be16_to_cpu(d->credits) ||
	    be32_to_cpu(d->frame_size) < min_frame)
		return -EPROTO;
	*credits = be16_to_cpu(d->credits);
	*frame_size = min(be32_to_cpu(d->frame_size), prd_frame_size);
	return 0;
}

/* ESTABLISHED: the connection may send. */
static void prd_conn_up(struct prd_conn *conn, struct rdma_cm_event *ev)
{
	u32 credits = 0, frame_size = 0;
	bool ok = true;

	if (conn->active)
		ok = !prd_conn_data_check(&ev->param.conn, &credits,
					  &frame_size);
	spin_lock_bh(&conn->lock);
	if (!ok) {
		__prd_conn_kill(conn);
	} else if (conn->state == PRD_CONN_CONNECTING) {
		if (conn->active) {
			/* Frames may have returned credits already. */
			conn->tx_credits += credits;
			conn->frame_size = frame_size;
		}
		conn->state = PRD_CONN_UP;
		conn->was_up = true;
		conn->sw_since = jiffies;	/* the sweep's clock */
		prd_stat_add(conn->pif, PRD_ST_CONNS, 1);
		__prd_kick(conn);
	}
	spin_unlock_bh(&conn->lock);
	cancel_delayed_work(&conn->timer);
	if (!conn->active)
		prd_inbound_up(conn);
	/* As rtscts does: ptlctl monitor sees peers come and go. */
	if (conn->was_up)
		ptl_binding_peer_event(conn->pif->b, conn->nid,
				       PTL_EVENT_PEER_UP, 0, 0);
}

static int prd_conn_route_resolved(struct prd_conn *conn)
{
	struct rdma_conn_param param;
	struct prd_conn_data d;
	int err;

	err = prd_conn_setup_qp(conn);
	if (err)
		return err;
	prd_conn_data_init(conn, &d, &param);
	/* In the event handler: its mutex is held. */
	return rdma_connect_locked(conn->id, &param);
}

/* Why the peer refused us, if it said so (struct prd_reject). */
static void prd_conn_rejected(struct prd_conn *conn,
			      const struct rdma_cm_event *ev)
{
	static const char * const why[] = {
		[PRD_REJ_PROTO] = "bad private data or another version",
		[PRD_REJ_DST_NID] = "it is not that nid",
		[PRD_REJ_SRC_NID] = "our nid is not our address",
		[PRD_REJ_BUSY] = "too many inbound connections",
		[PRD_REJ_NOMEM] = "no resources",
	};
	const struct prd_reject *rej = ev->param.conn.private_data;
	unsigned int reason = 0;

	if (rej && ev->param.conn.private_data_len >= sizeof(*rej) &&
	    be16_to_cpu(rej->magic) == PRD_MAGIC)
		reason = be16_to_cpu(rej->reason);
	pr_info_ratelimited("nid %u: refused: %s\n", conn->nid,
			    reason && reason < ARRAY_SIZE(why) ? why[reason] :
			    rdma_reject_msg(conn->id, ev->status));
}

/* An event of a live connection; cm_mutex held. */
static void prd_conn_event_locked(struct prd_conn *conn,
				  struct rdma_cm_event *ev)
{
	int err = 0;

	WRITE_ONCE(conn->last_event, ev->event);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(conn->id, prd_connect_timeout_ms);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = prd_conn_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		prd_conn_up(conn, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		prd_conn_kill(conn);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		break;
	case RDMA_CM_EVENT_REJECTED:
		prd_conn_rejected(conn, ev);
		err = -ECONNREFUSED;
		break;
	default:	/* errors, rejects, device removal, address change */
		pr_info_ratelimited("nid %u: %s (%d)\n", conn->nid,
				    rdma_event_msg(ev->event), ev->status);
		err = -ENOTCONN;
		break;
	}
	if (err) {
		prd_stat_add(conn->pif, PRD_ST_CONN_FAILS, 1);
		prd_conn_kill(conn);
	}
}

static int prd_conn_event(struct prd_conn *conn, struct rdma_cm_event *ev)
{
	mutex_lock(&conn->cm_mutex);
	/* Dead: the teardown owns (or has freed) everything an event uses. */
	if (READ_ONCE(conn->state) != PRD_CONN_DEAD)
		prd_conn_event_locked(conn, ev);
	mutex_unlock(&conn->cm_mutex);
	/* The teardown destroys the cm_id, never rdma_cm on our return. */
	return 0;
}

/*
 * Undoes a connection refused before it was up; a message queued on it
 * meanwhile (an accepted one is in the peers already) fails.
 */
static void prd_conn_abort(struct prd_conn *conn)
{
	spin_lock_bh(&conn->lock);
	conn->state = PRD_CONN_DEAD;	/* completion handlers: kill no-op */
	spin_unlock_bh(&conn->lock);
	prd_conn_free_res(conn);
	prd_fail_msgs(conn);
	conn->id = NULL;
	prd_conn_unlist(conn);
	prd_conn_put(conn);
}

/*
 * Refuses a connect request: a reject whose private data says why, then
 * non-zero, for rdma_cm to destroy the id.
 */
static int prd_cm_refuse(struct prd_iface *pif, struct rdma_cm_id *id,
			 enum prd_reject_reason reason, enum prd_stat st,
			 int err)
{
	struct prd_reject rej = {
		.magic = cpu_to_be16(PRD_MAGIC),
		.version = cpu_to_be16(PRD_VERSION),
		.reason = cpu_to_be16(reason),
	};

	prd_stat_add(pif, st, 1);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	return err;
}

/*
 * The nid of the address a connect request came from, as rdma_cm reports
 * it (the new id's destination); 0 if it is not IPv4.
 */
static u32 prd_cm_peer_nid(struct rdma_cm_id *id)
{
	const struct sockaddr_in *sin =
		(const struct sockaddr_in *)&id->route.addr.dst_addr;

	if (sin->sin_family != AF_INET)
		return 0;
	return be32_to_cpu(sin->sin_addr.s_addr);
}

/*
 * Who may connect: a request in our protocol, for our nid, from the
 * address its src_nid names. A nid is its node's address, and our
 * requests to that nid may take the connection: a host that could claim
 * any nid would receive them, and its messages would pass as that node's.
 * 0, or the reject's reason.
 */
static int prd_cm_admit(struct prd_iface *pif, struct rdma_cm_id *id,
			struct rdma_cm_event *ev, u32 *credits,
			u32 *frame_size)
{
	const struct prd_conn_data *d = ev->param.conn.private_data;
	u32 src;

	if (prd_conn_data_check(&ev->param.conn, credits, frame_size))
		return PRD_REJ_PROTO;
	if (be32_to_cpu(d->dst_nid) != ptl_binding_nid(pif->b))
		return PRD_REJ_DST_NID;
	src = be32_to_cpu(d->src_nid);
	if (src != prd_cm_peer_nid(id)) {
		pr_info_ratelimited("interface %u: a connect request from %pISc claims nid %u: refused\n",
				    ptl_binding_iface(pif->b),
				    &id->route.addr.dst_addr, src);
		return PRD_REJ_SRC_NID;
	}
	return 0;
}

/* No room for an inbound connection: the reject says so. */
static int prd_cm_busy(struct prd_iface *pif, struct rdma_cm_id *id)
{
	pr_info_ratelimited("interface %u: %u connections, %u inbound, %u not yet established: refusing %pISc\n",
			    ptl_binding_iface(pif->b), READ_ONCE(pif->nconns),
			    READ_ONCE(pif->nin), READ_ONCE(pif->nin_pending),
			    &id->route.addr.dst_addr);
	return prd_cm_refuse(pif, id, PRD_REJ_BUSY, PRD_ST_REFUSED, -EBUSY);
}

/* CONNECT_REQUEST on the listener; non-zero has rdma_cm destroy the id. */
static int prd_cm_request(struct prd_iface *pif, struct rdma_cm_id *id,
			  struct rdma_cm_event *ev)
{
	const struct prd_conn_data *d = ev->param.conn.private_data;
	u32 credits, frame_size;
	struct rdma_conn_param param;
	struct prd_conn_data mine;
	struct prd_conn *conn;
	bool kept;
	int err;

	err = prd_cm_admit(pif, id, ev, &credits, &frame_size);
	if (err)
		return prd_cm_refuse(pif, id, err, err == PRD_REJ_SRC_NID ?
				     PRD_ST_BAD_NID : PRD_ST_BAD_FRAMES,
				     -EPROTO);
	conn = prd_conn_alloc(pif, be32_to_cpu(d->src_nid), false);
	if (IS_ERR(conn) && PTR_ERR(conn) == -ENOSPC)
		return prd_cm_busy(pif, id);
	if (IS_ERR(conn))
		return prd_cm_refuse(pif, id, PRD_REJ_NOMEM, PRD_ST_CONN_FAILS,
				     PTR_ERR(conn));
	conn->id = id;
	conn->tx_credits = credits;
	conn->frame_size = frame_size;
	/* An unbind's teardown waits until the QP is built (or abandoned). */
	mutex_lock(&conn->cm_mutex);
	err = prd_conn_setup_qp(conn);
	mutex_unlock(&conn->cm_mutex);
	if (err) {
		prd_conn_abort(conn);
		return prd_cm_refuse(pif, id, PRD_REJ_NOMEM, PRD_ST_CONN_FAILS,
				     err);
	}
	prd_conn_data_init(conn, &mine, &param);
	/*
	 * Requests to the peer go this way unless a connection is there
	 * already (-EBUSY: both connected at once); this one then carries
	 * the peer's requests and our responses only. Before the accept: the
	 * answers to the peer's first messages must find it, not open a
	 * second connection.
	 */
	err = xa_insert(&pif->peers, conn->nid, conn, GFP_KERNEL);
	kept = !err;
	if (err && err != -EBUSY)
		pr_debug("nid %u: not kept for sends (%d)\n", conn->nid, err);
	err = rdma_accept(id, &param);
	if (err) {
		if (kept)
			xa_cmpxchg(&pif->peers, conn->nid, conn, NULL, 0);
		prd_conn_abort(conn);	/* rdma_cm destroys the id */
		return err;
	}
	id->context = conn;
	queue_delayed_work(prd_wq, &conn->timer,
			   msecs_to_jiffies(prd_connect_timeout_ms));
	return 0;
}

static int prd_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	enum prd_kind *kind = id->context;
	struct prd_iface *pif;

	if (*kind == PRD_KIND_CONN)
		return prd_conn_event(id->context, ev);
	pif = id->context;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return prd_cm_request(pif, id, ev);
	/* The listener's device is going away: let go of it. */
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		queue_work(prd_wq, &pif->listen_gone);
	return 0;
}

static struct rdma_cm_id *prd_listen_take(struct prd_iface *pif)
{
	struct rdma_cm_id *id;

	mutex_lock(&pif->lock);
	id = pif->listen;
	pif->listen = NULL;
	mutex_unlock(&pif->lock);
	return id;
}

static void prd_listen_gone(struct work_struct *work)
{
	struct prd_iface *pif = container_of(work, struct prd_iface,
					     listen_gone);
	struct rdma_cm_id *id = prd_listen_take(pif);

	if (id) {
		pr_info("interface %u: its RDMA device is gone\n",
			ptl_binding_iface(pif->b));
		rdma_destroy_id(id);
	}
}

/* Listens on the interface's address: fails if no RDMA device has it. */
int prd_listen(struct prd_iface *pif, struct netlink_ext_ack *extack)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(prd_port),
		.sin_addr.s_addr = pif->addr,
	};
	struct rdma_cm_id *id;
	int err;

	INIT_WORK(&pif->listen_gone, prd_listen_gone);
	id = rdma_create_id(pif->net, prd_cm_handler, pif, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	err = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (err) {
		NL_SET_ERR_MSG(extack,
			       "no RDMA device has this device's IPv4 address");
		goto err_id;
	}
	err = rdma_listen(id, PRD_LISTEN_BACKLOG);
	if (err) {
		NL_SET_ERR_MSG(extack, "cannot listen on the RDMA port");
		goto err_id;
	}
	pif->listen = id;
	return 0;

err_id:
	rdma_destroy_id(id);
	return err;
}

void prd_stop_listening(struct prd_iface *pif)
{
	struct rdma_cm_id *id;

	cancel_work_sync(&pif->listen_gone);
	id = prd_listen_take(pif);
	if (id)
		rdma_destroy_id(id);
}

/* Starts connecting to @nid; the connection with a reference for us. */
static struct prd_conn *prd_conn_connect(struct prd_iface *pif, u32 nid)
{
	struct sockaddr_in src = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = pif->addr,
	};
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_port = htons(prd_port),
		.sin_addr.s_addr = htonl(nid),
	};
	struct prd_conn *conn;
	int err;

	conn = prd_conn_alloc(pif, nid, true);
	if (IS_ERR(conn))
		return conn;
	conn->id = rdma_create_id(pif->net, prd_cm_handler, conn,
				  RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(conn->id)) {
		err = PTR_ERR(conn->id);
		conn->id = NULL;
		prd_conn_abort(conn);
		return ERR_PTR(err);
	}
	err = xa_insert(&pif->peers, nid, conn, GFP_KERNEL);
	if (err) {	/* -EBUSY: raced with another sender or an accept */
		prd_conn_kill(conn);
		return ERR_PTR(err);
	}
	kref_get(&conn->ref);
	queue_delayed_work(prd_wq, &conn->timer,
			   msecs_to_jiffies(prd_connect_timeout_ms));
	err = rdma_resolve_addr(conn->id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst,
				prd_connect_timeout_ms);
	if (err) {
		prd_stat_add(pif, PRD_ST_CONN_FAILS, 1);
		prd_conn_kill(conn);
	}
	return conn;
}

/* The connection to send to @nid on, referenced; made if there is none. */
struct prd_conn *prd_conn_get(struct prd_iface *pif, u32 nid)
{
	struct prd_conn *conn;
	bool closing;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		xa_lock(&pif->peers);
		conn = xa_load(&pif->peers, nid);
		closing = conn && READ_ONCE(conn->closing);
		if (conn && !closing)
			kref_get(&conn->ref);
		xa_unlock(&pif->peers);
		if (closing)	/* only compared: no reference needed */
			xa_cmpxchg(&pif->peers, nid, conn, NULL, 0);
		else if (conn)
			return conn;
		conn = prd_conn_connect(pif, nid);
		if (!IS_ERR(conn) || PTR_ERR(conn) != -EBUSY)
			return conn;
	}
	return ERR_PTR(-EBUSY);
}

/* Unbind: every connection is torn down; returns when all are gone. */
void prd_kill_all(struct prd_iface *pif)
{
	struct prd_conn *conn;

	mutex_lock(&pif->lock);
	pif->closing = true;
	list_for_each_entry(conn, &pif->conns, node)
		prd_conn_kill(conn);
	mutex_unlock(&pif->lock);
	wait_event(pif->idle, !READ_ONCE(pif->nconns));
	/* The last teardowns may still be leaving prd_conn_unlist(). */
	flush_workqueue(prd_wq);
}
