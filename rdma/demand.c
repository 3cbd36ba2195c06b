// SPDX-License-Identifier: GPL-2.0
/*
 * What a connection needs only while it moves messages: made when a
 * message needs it, given back when the connection has been quiet for
 * PRD_TRIM_MS. An idle connected peer then costs its QP, its CQ and a
 * few kilobytes, not the ~600 KiB of buffers, scatterlists and MRs its
 * busiest moment needs (performance.md, "RDMA memory per connection").
 *
 * Send buffers. A connection has ntx of them, PRD_TX_FLOOR made at setup;
 * a frame that finds none free makes the next (GFP_NOWAIT: it is posted
 * from completion handlers and under conn->lock; charged to the binder,
 * prd_charge()). If that fails the frame waits for a buffer to come
 * back, and one will: the floor's are never given back, so every buffer
 * that is not free is in flight.
 *
 * Scatterlists. An RDMA slot's list of PRD_RDMA_PAGES entries (8 KiB)
 * exists while its pages are mapped: taken from a cache when they are
 * mapped, given back when they are unmapped. If none can be had the
 * message goes as it goes when its pages cannot be described: in frames.
 *
 * MRs. ib_alloc_mr() may sleep (on an adapter it is a firmware command),
 * and an RTS or a get is handled in softirq or under conn->lock. A target
 * slot whose RTS finds it without an MR has its CTS wait while mr_work
 * makes one; a message whose initiator slot has none (a large put, or a
 * REPLY to write into a sink) and a get whose sink has none wait likewise
 * (at the head of the send queue, which the work's kick resumes). If none
 * can be made, the payload comes in frames, the get's REPLY the old way.
 * A slot keeps its MR while the connection is busy and loses it to the
 * sweep when quiet; then
 * nothing of the connection's is on its send queue, which matters on
 * Soft-RoCE: it replays registrations behind an unacknowledged SEND
 * (bulk.c), and they must find their MR.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "prd.h"

static struct kmem_cache *prd_sgl_cache;

int prd_demand_init(void)
{
	prd_sgl_cache = kmem_cache_create("ptl_rdma_sgl",
					  PRD_RDMA_PAGES *
					  sizeof(struct scatterlist),
					  0, SLAB_ACCOUNT, NULL);
	return prd_sgl_cache ? 0 : -ENOMEM;
}

void prd_demand_exit(void)
{
	kmem_cache_destroy(prd_sgl_cache);
}

/*
 * Makes a send buffer for a frame that found none free, charged to the
 * binder; GFP_NOWAIT, not GFP_ATOMIC, whose __GFP_HIGH would overdraw
 * the cgroup. conn->lock held.
 */
bool prd_tx_make(struct prd_conn *conn)
{
	struct mem_cgroup *old = prd_charge(conn->pif);
	int err = prd_tx_buf_make(conn, GFP_NOWAIT | __GFP_NOWARN |
					__GFP_ACCOUNT);

	set_active_memcg(old);
	return !err;
}

/*
 * The slot's scatterlist, made if it has none, ready to be filled; NULL
 * if it cannot be made. prd_slot_sgl_put() (or the slot's unmapping)
 * gives it back.
 */
struct scatterlist *prd_slot_sgl(struct prd_conn *conn,
				 struct prd_slot *slot)
{
	struct mem_cgroup *old;

	if (!slot->sgl) {
		old = prd_charge(conn->pif);
		slot->sgl = kmem_cache_alloc(prd_sgl_cache,
					     GFP_NOWAIT | __GFP_NOWARN);
		set_active_memcg(old);
	}
	if (slot->sgl)
		sg_init_table(slot->sgl, PRD_RDMA_PAGES);
	return slot->sgl;
}

void prd_slot_sgl_put(struct prd_slot *slot)
{
	if (!slot->sgl)
		return;
	kmem_cache_free(prd_sgl_cache, slot->sgl);
	slot->sgl = NULL;
}

/*
 * Has mr_work run for a slot whose CTS waits, or for the initiator slots
 * or the sinks. Also on a connection not yet up: the peer's first frames
 * can be handled before rdma_cm's ESTABLISHED is, and the CTS then goes
 * when it is up. Not on one that is going: its teardown cancels the work
 * first, then fails what waited. conn->lock held.
 */
void prd_conn_want_mrs(struct prd_conn *conn)
{
	if (conn->state != PRD_CONN_DEAD)
		queue_work(prd_wq, &conn->mr_work);
}

/* An MR on the connection's PD for one round of a slot; NULL if none. */
static struct ib_mr *prd_mr_make(struct prd_conn *conn)
{
	struct ib_mr *mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG,
				       PRD_RDMA_PAGES);

	return IS_ERR(mr) ? NULL : mr;
}

/*
 * Target slots whose CTS waits for an MR: given one, then answered. A
 * slot that gets none is answered "frames", as if its pages could not be
 * registered. The slot is busy, so neither the sweep nor the receive path
 * touches it meanwhile.
 */
static void prd_mr_work_slots(struct prd_conn *conn)
{
	unsigned int i;

	for (i = 0; i < PRD_RDMA_SLOTS; i++) {
		struct prd_slot *slot = &conn->rxs[i];
		struct ib_mr *mr;

		if (!READ_ONCE(slot->mr_wait))
			continue;
		mr = slot->mr ? NULL : prd_mr_make(conn);
		spin_lock_bh(&conn->lock);
		if (mr)
			slot->mr = mr;
		slot->mr_wait = false;
		spin_unlock_bh(&conn->lock);
		prd_slot_answer(conn, slot);
	}
}

/*
 * The slots of @slots (initiator slots or sinks) without an MR get one,
 * for the message that waits and those to come. If none can be made,
 * *@failed sends the one that waits another way.
 */
static void prd_mr_work_fill(struct prd_conn *conn, struct prd_slot *slots,
			     bool *failed)
{
	unsigned int i;

	for (i = 0; i < PRD_RDMA_SLOTS; i++) {
		struct prd_slot *slot = &slots[i];
		struct ib_mr *mr;

		if (READ_ONCE(slot->mr))
			continue;
		mr = prd_mr_make(conn);
		if (!mr) {
			spin_lock_bh(&conn->lock);
			*failed = true;
			spin_unlock_bh(&conn->lock);
			return;
		}
		spin_lock_bh(&conn->lock);
		if (!slot->mr) {
			slot->mr = mr;
			mr = NULL;
		}
		spin_unlock_bh(&conn->lock);
		if (mr)
			ib_dereg_mr(mr);
	}
}

/*
 * Process context, as ib_alloc_mr() needs; without I/O, as ptlblk's
 * writeback may be what waits for it.
 */
void prd_mr_work(struct work_struct *work)
{
	struct prd_conn *conn = container_of(work, struct prd_conn, mr_work);
	unsigned int noio = memalloc_noio_save();

	prd_mr_work_slots(conn);
	if (READ_ONCE(conn->tx_mrs_wanted)) {
		WRITE_ONCE(conn->tx_mrs_wanted, false);
		prd_mr_work_fill(conn, conn->txs, &conn->tx_mr_failed);
	}
	if (READ_ONCE(conn->sink_mrs_wanted)) {
		WRITE_ONCE(conn->sink_mrs_wanted, false);
		prd_mr_work_fill(conn, conn->sinks, &conn->sink_mr_failed);
	}
	memalloc_noio_restore(noio);
	prd_kick(conn);
}

/*
 * It holds more than a connection at rest (send buffers beyond the
 * floor, MRs), and nothing is under way, nothing is on its send queue
 * and no message frame moved for PRD_TRIM_MS (sweep.c keeps sw_since).
 * conn->lock held.
 */
bool prd_conn_quiet(struct prd_conn *conn, unsigned long now)
{
	return conn->state == PRD_CONN_UP &&
	       (conn->tx_made > PRD_TX_FLOOR || prd_conn_mrs(conn)) &&
	       !conn->sq_used && !prd_conn_waiting(conn) &&
	       time_after_eq(now, conn->sw_since +
			     msecs_to_jiffies(PRD_TRIM_MS));
}

/* The send buffers beyond the floor, all free. conn->lock held. */
static void prd_trim_tx(struct prd_conn *conn)
{
	struct prd_buf *tb;

	while (conn->tx_made > PRD_TX_FLOOR &&
	       (tb = list_first_entry_or_null(&conn->tx_free, struct prd_buf,
					      free))) {
		prd_buf_fini(conn, tb, DMA_TO_DEVICE);
		list_move(&tb->free, &conn->tx_unmade);
		conn->tx_made--;
	}
}

/* MRs the connection holds now (ptlctl peer show). conn->lock held. */
unsigned int prd_conn_mrs(struct prd_conn *conn)
{
	unsigned int i, n = 0;

	for (i = 0; conn->txs && conn->rxs && conn->sinks &&
		    i < PRD_RDMA_SLOTS; i++)
		n += !!conn->txs[i].mr + !!conn->rxs[i].mr +
		     !!conn->sinks[i].mr;
	return n;
}

/* Takes the MRs of idle slots into @mrs. conn->lock held. */
static unsigned int prd_trim_mrs(struct prd_slot *slots, struct ib_mr **mrs)
{
	unsigned int i, n = 0;

	for (i = 0; i < PRD_RDMA_SLOTS; i++) {
		if (slots[i].busy || !slots[i].mr)
			continue;
		mrs[n++] = slots[i].mr;
		slots[i].mr = NULL;
		slots[i].mr_used = false;
	}
	return n;
}

/*
 * The sweep: a quiet connection gives back its send buffers beyond the
 * floor and its MRs. The CM lock (tried: the sweep holds pif->lock, which
 * the CM handler takes under it) keeps the teardown, and so the PD's
 * release, away while the MRs are deregistered.
 */
void prd_conn_trim(struct prd_conn *conn, unsigned long now)
{
	struct ib_mr *mrs[3 * PRD_RDMA_SLOTS];
	unsigned int n = 0;

	if (!mutex_trylock(&conn->cm_mutex))
		return;
	spin_lock_bh(&conn->lock);
	if (prd_conn_quiet(conn, now)) {
		prd_trim_tx(conn);
		n = prd_trim_mrs(conn->txs, mrs);
		n += prd_trim_mrs(conn->rxs, mrs + n);
		n += prd_trim_mrs(conn->sinks, mrs + n);
	}
	spin_unlock_bh(&conn->lock);
	while (n)
		ib_dereg_mr(mrs[--n]);
	mutex_unlock(&conn->cm_mutex);
}
