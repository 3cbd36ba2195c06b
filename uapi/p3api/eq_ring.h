/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Reader side of a Portals event-queue ring (spec 8.6, contract 10).
 *
 * The ring is N = 2^k ptl_event_t slots that the kernel writes and the
 * process maps read-only. The writer (kmod/core/ptl_eq_ring.c) publishes event s
 * into slot s % N as: sequence = s - 1 ("being written"), write barrier,
 * every other field, then a store-release of sequence = s. Sequences start
 * at -N (mod 2^32) and slot i starts as -2N + i.
 *
 * The reader keeps the sequence it expects next (start: -N, see
 * ptl_eq_ring_first_seq) and, for slot value s = load-acquire(sequence):
 *   s == expected         copy the event, re-check the sequence (a writer
 *                         may have overwritten it meanwhile): deliver, OK;
 *   s == expected - N     nothing new: PTL_EQ_EMPTY;
 *   s == expected - 1     being written right now: PTL_EQ_EMPTY;
 *   s == expected + kN    the writer lapped us: find the oldest event still
 *                         in the ring, deliver it with PTL_EQ_DROPPED and
 *                         go on from there (later reads return the rest in
 *                         order, with consecutive sequences);
 *   anything else         torn read: retry (bounded; a reader whose
 *                         expected value is not from this ring gets
 *                         PTL_EQ_EMPTY rather than a hang).
 * User space only (C and C++): it uses the GCC __atomic builtins.
 */
#ifndef P3API_EQ_RING_H
#define P3API_EQ_RING_H

#include <p3api/types.h>
#include <p3/errno.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first sequence a reader of an N-slot ring expects. */
static inline ptl_seq_t ptl_eq_ring_first_seq(uint32_t nslots)
{
	return (ptl_seq_t)0 - nslots;
}

static inline ptl_seq_t ptl_eq_ring_load_seq(const ptl_event_t *slot)
{
	return __atomic_load_n(&slot->sequence,
			       __ATOMIC_ACQUIRE);
}

/*
 * Copies slot into *out and checks that seq is still published there
 * afterwards, so a copy torn by a concurrent overwrite is never returned.
 */
static inline int ptl_eq_ring_copy(const ptl_event_t *slot, ptl_seq_t seq,
				   ptl_event_t *out)
{
	memcpy(out, (const void *)slot, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&slot->sequence,
			    __ATOMIC_RELAXED) != seq)
		return 0;
	out->sequence = seq;
	return 1;
}

/*
 * The writer is at least a lap ahead and slot "s" holds sequence s. The
 * oldest event still in the ring follows the newest: walk forward from s
 * while the slots hold consecutive newer sequences.
 */
static inline ptl_seq_t ptl_eq_ring_oldest(const ptl_event_t *ring,
					   uint32_t nslots, ptl_seq_t s)
{
	uint32_t j;

	for (j = 1; j < nslots; j++) {
		ptl_seq_t next = s + j;

		if (ptl_eq_ring_load_seq(&ring[next & (nslots - 1)]) != next)
			return next - nslots;
	}
	return s;	/* s..s+N-1 all present: s itself is the oldest */
}

/*
 * Non-blocking dequeue. Returns PTL_OK or PTL_EQ_DROPPED with *out filled
 * and *expected advanced, or PTL_EQ_EMPTY.
 */
static inline int ptl_eq_ring_get(const ptl_event_t *ring, uint32_t nslots,
				  ptl_seq_t *expected, ptl_event_t *out)
{
	const uint32_t mask = nslots - 1;
	uint32_t tries;

	/*
	 * A write in progress finishes within a few hundred cycles; a slot
	 * that never settles means *expected is not a position of this ring.
	 */
	for (tries = 0; tries < (1U << 20); tries++) {
		ptl_seq_t e = *expected;
		ptl_seq_t s = ptl_eq_ring_load_seq(&ring[e & mask]);
		ptl_seq_t d = s - e;
		ptl_seq_t oldest;

		if (d == 0) {
			if (!ptl_eq_ring_copy(&ring[e & mask], e, out))
				continue;
			*expected = e + 1;
			return PTL_OK;
		}
		if (d == (ptl_seq_t)0 - nslots || d == (ptl_seq_t)-1)
			return PTL_EQ_EMPTY;
		if ((int32_t)d <= 0 || (d & mask) != 0)
			continue;	/* torn: a write is in progress */
		oldest = ptl_eq_ring_oldest(ring, nslots, s);
		if (!ptl_eq_ring_copy(&ring[oldest & mask], oldest, out))
			continue;
		*expected = oldest + 1;
		return PTL_EQ_DROPPED;
	}
	return PTL_EQ_EMPTY;
}

#ifdef __cplusplus
}
#endif

#endif /* P3API_EQ_RING_H */
