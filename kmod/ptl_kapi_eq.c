// SPDX-License-Identifier: GPL-2.0
/*
 * Event queues of kernel clients: callback EQs and drained EQs.
 *
 * The core writes every event into a ring (kmod/core/ptl_eq_ring.c) under its
 * NI lock and then calls the eq_notify hook, here ptl_keq_notify(), still
 * under that lock and in the context that produced the event (softirq for
 * traffic from other nodes, the initiator's process for intra-node
 * traffic, the caller of an unlink). So:
 *
 *   callback EQ  the hook calls the client's handler with the slot just
 *                written. The core never writes a slot twice while it
 *                holds the lock, so the handler reads it in place (no copy)
 *                and a two-slot ring is all the core needs. Handlers run
 *                inside rcu_read_lock(): ptl_kni_fini() sets kni->dead and
 *                then synchronize_rcu(), after which no handler runs or
 *                will run. ptl_keq_free() needs nothing of the sort: once
 *                ptlc_eq_free() returned, the hook is never called for
 *                that EQ again, and a running one held the lock it took.
 *   drained EQ   the client reads the ring as libptl-user reads a mapped
 *                one (uapi/p3api/eq_ring.h: sequence numbers published
 *                last, overflow reported as PTL_EQ_DROPPED), under a
 *                spinlock of its own so that concurrent readers take
 *                different events. Waiters sleep on the NI's wait queue;
 *                the hook wakes it only when someone sleeps there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"
#include "ptl_kapi.h"
#include "ptl_trace.h"

/* Ring slots of a callback EQ: the core's minimum; nothing waits in it. */
#define PTL_KEQ_CALLBACK_SLOTS	2
/* Reads of a slot being written before a reader gives up (as eq_ring.h). */
#define PTL_KEQ_READ_TRIES	(1U << 20)

struct ptl_keq {
	struct list_head node;		/* in kni->eqs */
	struct ptl_kni *kni;
	ptl_event_t *ring;
	u32 nslots;
	u32 posted;			/* events written (NI lock) */
	ptl_handle_eq_t handle;		/* for tracing */
	ptl_keq_handler_t handler;	/* NULL: drained */
	void *priv;
	spinlock_t read_lock;		/* drained: @expected */
	ptl_seq_t expected;		/* the next sequence to take */
};

/* ptlc_ops.eq_notify of kernel NIs: NI lock held, bottom halves off. */
void ptl_keq_notify(void *glue, void *eq_priv)
{
	struct ptl_ni *ni = glue;
	struct ptl_keq *q = eq_priv;
	ptl_seq_t seq = 0U - q->nslots + q->posted;
	const ptl_event_t *ev = &q->ring[seq & (q->nslots - 1)];

	WRITE_ONCE(q->posted, q->posted + 1);
	trace_ptl_event_posted(ni->nid, ni->pid, q->handle, seq, ev->type);
	if (q->handler) {
		rcu_read_lock();
		if (!READ_ONCE(q->kni->dead))
			q->handler(q->priv, ev);
		rcu_read_unlock();
		return;
	}
	/* wq_has_sleeper() orders the ring write before the check. */
	if (wq_has_sleeper(&ni->wake->wq))
		wake_up_all(&ni->wake->wq);
}

static void ptl_keq_destroy(struct ptl_keq *q)
{
	kvfree(q->ring);
	kfree(q);
}

int ptl_keq_alloc(struct ptl_kni *kni, ptl_size_t count,
		  ptl_keq_handler_t handler, void *priv, ptl_handle_eq_t *out)
{
	struct ptl_keq *q;
	u32 nslots;
	int rc;

	if (!kni)
		return PTL_NI_INVALID;
	if (!out)
		return PTL_SEGV;
	*out = PTL_EQ_NONE;
	if (!count)
		return PTL_OK;		/* contract 16 */
	nslots = handler ? PTL_KEQ_CALLBACK_SLOTS : ptlc_eq_slots_for(count);
	if (!nslots || nslots > PTL_EQ_MAX_SLOTS)
		return PTL_NO_SPACE;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return PTL_NO_SPACE;
	q->ring = kvcalloc(nslots, sizeof(*q->ring), GFP_KERNEL);
	if (!q->ring) {
		kfree(q);
		return PTL_NO_SPACE;
	}
	q->kni = kni;
	q->nslots = nslots;
	q->handler = handler;
	q->priv = priv;
	q->handle = PTL_EQ_NONE;
	spin_lock_init(&q->read_lock);
	q->expected = 0U - nslots;
	mutex_lock(&kni->lock);
	rc = ptlc_eq_alloc(kni->ni->core, q->ring, nslots, NULL, q, out);
	if (rc == PTL_OK) {
		WRITE_ONCE(q->handle, *out);
		list_add_tail(&q->node, &kni->eqs);
	}
	mutex_unlock(&kni->lock);
	if (rc != PTL_OK)
		ptl_keq_destroy(q);
	return rc;
}
EXPORT_SYMBOL_NS_GPL(ptl_keq_alloc, PORTALS);

int ptl_keq_free(struct ptl_kni *kni, ptl_handle_eq_t eq)
{
	void *priv;
	int rc;

	if (!kni)
		return PTL_NI_INVALID;
	mutex_lock(&kni->lock);
	rc = ptlc_eq_free(kni->ni->core, eq, &priv);
	if (rc == PTL_OK)
		list_del(&((struct ptl_keq *)priv)->node);
	mutex_unlock(&kni->lock);
	/* The core no longer writes the ring, nor calls the hook for it. */
	if (rc == PTL_OK)
		ptl_keq_destroy(priv);
	return rc;
}
EXPORT_SYMBOL_NS_GPL(ptl_keq_free, PORTALS);

/* The NI is gone (ptlc_ni_destroy ran): free the EQs it still had. */
void ptl_keq_release_all(struct ptl_kni *kni)
{
	struct ptl_keq *q, *tmp;

	mutex_lock(&kni->lock);
	list_for_each_entry_safe(q, tmp, &kni->eqs, node) {
		list_del(&q->node);
		ptl_keq_destroy(q);
	}
	mutex_unlock(&kni->lock);
}

/* The drained EQ @eq of @kni, or NULL (bad handle, callback EQ). */
static struct ptl_keq *ptl_keq_lookup(struct ptl_kni *kni, ptl_handle_eq_t eq)
{
	void *priv;

	if (ptlc_eq_info(kni->ni->core, eq, NULL, NULL, &priv) != PTL_OK)
		return NULL;
	return ((struct ptl_keq *)priv)->handler ? NULL : priv;
}

/**
 * ptl_keq_consumer_seq - where the reader of a kernel EQ stands
 * @kni: the NI
 * @eq: the EQ
 * @seq: the next sequence its reader takes (for PtlMDUpdate's test)
 *
 * A callback EQ has taken everything written so far.
 * Return: PTL_OK or PTL_EQ_INVALID.
 */
int ptl_keq_consumer_seq(struct ptl_kni *kni, ptl_handle_eq_t eq,
			 ptl_seq_t *seq)
{
	struct ptl_keq *q;
	void *priv;

	if (ptlc_eq_info(kni->ni->core, eq, NULL, seq, &priv) != PTL_OK)
		return PTL_EQ_INVALID;
	q = priv;
	if (!q->handler)
		*seq = READ_ONCE(q->expected);
	return PTL_OK;
}

/* Copies slot @s, published as @seq; false if it was overwritten meanwhile. */
static bool ptl_keq_copy(const ptl_event_t *s, ptl_seq_t seq, ptl_event_t *ev)
{
	memcpy(ev, (const void *)s, sizeof(*ev));
	smp_rmb();	/* the copy before the re-check */
	if (READ_ONCE(s->sequence) != seq)
		return false;
	ev->sequence = seq;
	return true;
}

/*
 * The writer lapped the reader and slot @s holds sequence @s: the oldest
 * event still held follows the newest run of consecutive sequences.
 */
static ptl_seq_t ptl_keq_oldest(const struct ptl_keq *q, ptl_seq_t s)
{
	u32 j;

	for (j = 1; j < q->nslots; j++) {
		ptl_seq_t next = s + j;
		const ptl_event_t *slot = &q->ring[next & (q->nslots - 1)];

		/* Pairs with the core's store-release of the sequence. */
		if (smp_load_acquire(&slot->sequence) != next)
			return next - q->nslots;
	}
	return s;
}

/* One read attempt; -EAGAIN when a write was in progress. */
static int ptl_keq_try(struct ptl_keq *q, ptl_event_t *ev)
{
	u32 mask = q->nslots - 1;
	ptl_seq_t e = q->expected;
	ptl_seq_t s, d, oldest;

	/* Pairs with the core's store-release: the fields are written. */
	s = smp_load_acquire(&q->ring[e & mask].sequence);
	d = s - e;

	if (d == 0) {
		if (!ptl_keq_copy(&q->ring[e & mask], e, ev))
			return -EAGAIN;
		q->expected = e + 1;
		return PTL_OK;
	}
	if (d == 0U - q->nslots || d == (ptl_seq_t)-1)
		return PTL_EQ_EMPTY;
	if ((s32)d <= 0 || (d & mask))
		return -EAGAIN;		/* torn: a write is in progress */
	oldest = ptl_keq_oldest(q, s);
	if (!ptl_keq_copy(&q->ring[oldest & mask], oldest, ev))
		return -EAGAIN;
	q->expected = oldest + 1;
	return PTL_EQ_DROPPED;
}

int ptl_keq_get(struct ptl_kni *kni, ptl_handle_eq_t eq, ptl_event_t *ev)
{
	struct ptl_keq *q;
	u32 tries;
	int rc = PTL_EQ_EMPTY;

	if (!kni)
		return PTL_NI_INVALID;
	if (!ev)
		return PTL_SEGV;
	q = ptl_keq_lookup(kni, eq);
	if (!q)
		return PTL_EQ_INVALID;
	spin_lock_bh(&q->read_lock);
	for (tries = 0; tries < PTL_KEQ_READ_TRIES; tries++) {
		rc = ptl_keq_try(q, ev);
		if (rc != -EAGAIN)
			break;
		cpu_relax();
	}
	spin_unlock_bh(&q->read_lock);
	return rc == -EAGAIN ? PTL_EQ_EMPTY : rc;
}
EXPORT_SYMBOL_NS_GPL(ptl_keq_get, PORTALS);

int ptl_keq_wait(struct ptl_kni *kni, ptl_handle_eq_t eq, ptl_event_t *ev,
		 ptl_time_t timeout_ms)
{
	long timeout = timeout_ms == PTL_TIME_FOREVER ? MAX_SCHEDULE_TIMEOUT :
		       msecs_to_jiffies(timeout_ms);
	int rc;

	rc = ptl_keq_get(kni, eq, ev);
	if (rc != PTL_EQ_EMPTY || !timeout_ms)
		return rc;
	/* A fatal signal ends the wait like the timeout: rc stays EMPTY. */
	wait_event_killable_timeout(kni->ni->wake->wq,
				    (rc = ptl_keq_get(kni, eq, ev)) !=
				    PTL_EQ_EMPTY, timeout);
	return rc;
}
EXPORT_SYMBOL_NS_GPL(ptl_keq_wait, PORTALS);
