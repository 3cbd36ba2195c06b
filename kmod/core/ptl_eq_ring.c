// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Event queues (spec 6.6, 8.6): rings of N = 2^k events in memory the
 * glue provides (mapped read-only into the owning process), written only
 * here and read lock-free by uapi/p3api/eq_ring.h.
 *
 * Writer protocol, per event with sequence s into slot s % N:
 *   1. store s - 1 into slot.sequence ("being written": a reader waiting
 *      for s sees "empty", a reader of the old event sees a changed
 *      sequence and retries), then a write barrier;
 *   2. copy every other field;
 *   3. store-release s into slot.sequence.
 * Sequences start at -N (mod 2^32) and slot i is pre-filled with
 * -2N + i, so the very first lap already exercises wrap-around.
 */
#include "ptlc_internal.h"

#define EV_SEQ_OFFSET PTLC_OFFSETOF(ptl_event_t, sequence)

struct ptlc_eq *ptlc_eq_lookup(struct ptlc_ni *ni, ptl_handle_eq_t h)
{
	return ptlc_htab_lookup(&ni->eqs, h);
}

u32 ptlc_eq_slots_for(ptl_size_t count)
{
	u32 n = 2;

	if (!count || count > (1U << 31))
		return 0;
	while (n < count)
		n <<= 1;
	return n;
}

static u32 *slot_seq(ptl_event_t *slot)
{
	return (u32 *)((u8 *)slot + EV_SEQ_OFFSET);
}

static void ring_prefill(ptl_event_t *ring, u32 nslots)
{
	u32 i;

	ptl_memset(ring, 0, sizeof(*ring) * nslots);
	for (i = 0; i < nslots; i++)
		*slot_seq(&ring[i]) = i - 2 * nslots;
}

int ptlc_eq_alloc(struct ptlc_ni *ni, ptl_event_t *ring, u32 nslots,
		  ptl_eq_handler_t handler, void *eq_priv,
		  ptl_handle_eq_t *out)
{
	struct ptlc_eq *eq;
	void *spare = NULL;
	int rc;

	if (nslots < 2 || (nslots & (nslots - 1)) || !ring)
		return PTL_NO_SPACE;
	eq = ptlc_alloc(ni, sizeof(*eq));
	if (!eq)
		return PTL_NO_SPACE;
	ring_prefill(ring, nslots);
	eq->ring = ring;
	eq->mask = nslots - 1;
	eq->next_seq = 0U - nslots;
	eq->handler = handler;
	eq->priv = eq_priv;
	for (;;) {
		ptl_lock(&ni->lock);
		rc = ptlc_htab_insert(&ni->eqs, eq, &spare, &eq->index);
		if (rc != PTL_FAIL)
			break;
		ptl_unlock(&ni->lock);
		spare = ptlc_chunk_alloc(ni);
		if (!spare) {
			ptlc_free(ni, eq, sizeof(*eq));
			return PTL_NO_SPACE;
		}
	}
	if (rc == PTL_OK)
		*out = ptlc_htab_handle(&ni->eqs, eq->index);
	ptl_unlock(&ni->lock);
	ptlc_chunk_free(ni, spare);
	if (rc)
		ptlc_free(ni, eq, sizeof(*eq));
	return rc;
}

/*
 * MDs name their EQ by handle and look it up for every event, so removing
 * the EQ from the table is all it takes for them to post nothing more.
 */
void ptlc_eq_destroy(struct ptlc_ni *ni, struct ptlc_eq *eq)
{
	ptlc_htab_remove(&ni->eqs, eq->index);
	ptlc_free(ni, eq, sizeof(*eq));
}

int ptlc_eq_free(struct ptlc_ni *ni, ptl_handle_eq_t h, void **eq_priv)
{
	struct ptlc_eq *eq;
	int rc = PTL_OK;

	ptl_lock(&ni->lock);
	eq = ptlc_eq_lookup(ni, h);
	if (!eq) {
		rc = PTL_EQ_INVALID;
	} else {
		if (eq_priv)
			*eq_priv = eq->priv;
		ptlc_eq_destroy(ni, eq);
	}
	ptl_unlock(&ni->lock);
	return rc;
}

int ptlc_eq_info(struct ptlc_ni *ni, ptl_handle_eq_t h, u32 *nslots,
		 ptl_seq_t *next_seq, void **eq_priv)
{
	struct ptlc_eq *eq;
	int rc = PTL_OK;

	ptl_lock(&ni->lock);
	eq = ptlc_eq_lookup(ni, h);
	if (!eq) {
		rc = PTL_EQ_INVALID;
	} else {
		if (nslots)
			*nslots = eq->mask + 1;
		if (next_seq)
			*next_seq = eq->next_seq;
		if (eq_priv)
			*eq_priv = eq->priv;
	}
	ptl_unlock(&ni->lock);
	return rc;
}

/* Writes ev (its sequence field is ignored) and returns its sequence. */
ptl_seq_t ptlc_eq_write(struct ptlc_ni *ni, struct ptlc_eq *eq,
			const ptl_event_t *ev)
{
	ptl_seq_t seq = eq->next_seq++;
	ptl_event_t *slot = &eq->ring[seq & eq->mask];

	ptl_store_release_u32(slot_seq(slot), seq - 1);
	ptl_wmb();
	ptl_memcpy(slot, ev, EV_SEQ_OFFSET);
	ptl_store_release_u32(slot_seq(slot), seq);

	if (eq->handler) {
		ptl_event_t copy = *ev;

		*slot_seq(&copy) = seq;
		eq->handler(&copy);
	}
	if (ni->ops && ni->ops->eq_notify)
		ni->ops->eq_notify(ni->glue, eq->priv);
	return seq;
}
