/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel implementation of the core's platform shim (see
 * core/ptl_platform.h). Deliberately thin: each name maps to the kernel
 * facility a reviewer expects.
 */
#ifndef PTL_PLATFORM_KERNEL_H
#define PTL_PLATFORM_KERNEL_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/barrier.h>
#include <asm/byteorder.h>

/*
 * Sleeping allocations are made for the calling process's objects: charge
 * them to its memory cgroup. Atomic ones (none today) would run in softirq
 * on behalf of nobody in particular.
 */
static inline void *ptl_zalloc(size_t size, enum ptl_gfp gfp)
{
	return kzalloc(size, gfp == PTL_GFP_SLEEP ? GFP_KERNEL_ACCOUNT :
						   GFP_ATOMIC);
}

static inline void ptl_free(const void *p)
{
	kfree(p);
}

/* Receive runs in softirq context: every holder disables bottom halves. */
typedef spinlock_t ptl_lock_t;
#define ptl_lock_init(l)	spin_lock_init(l)
#define ptl_lock_destroy(l)	do { } while (0)
#define ptl_lock(l)		spin_lock_bh(l)
#define ptl_unlock(l)		spin_unlock_bh(l)

#define ptl_memcpy(d, s, n)	memcpy((d), (s), (n))
#define ptl_memset(d, c, n)	memset((d), (c), (n))
/* The user-space tests poison what the core must build; not here. */
#define PTLC_POISON_UNBUILT(d, n)	do { } while (0)

/*
 * The EQ ring protocol (core/ptl_eq_ring.c, uapi/p3api/eq_ring.h): the writer
 * publishes a slot's sequence with a release store after its fields, the
 * reader loads it with acquire; smp_wmb() orders the "being written"
 * marker before the fields.
 */
#define ptl_store_release_u32(p, v)	smp_store_release((p), (v)) /* ring */
#define ptl_load_acquire_u32(p)		smp_load_acquire(p) /* ring */
#define ptl_read_once_u32(p)		READ_ONCE(*(p))
#define ptl_wmb()			smp_wmb() /* ring: marker, fields */

typedef atomic_long_t ptl_atomic_t;
#define ptl_atomic_inc(a)	atomic_long_inc(a)
#define ptl_atomic_dec(a)	atomic_long_dec(a)
#define ptl_atomic_read(a)	atomic_long_read(a)

#define ptl_cpu_to_le16(x)	((u16)cpu_to_le16(x))
#define ptl_cpu_to_le32(x)	((u32)cpu_to_le32(x))
#define ptl_cpu_to_le64(x)	((u64)cpu_to_le64(x))
#define ptl_le16_to_cpu(x)	le16_to_cpu((__force __le16)(x))
#define ptl_le32_to_cpu(x)	le32_to_cpu((__force __le32)(x))
#define ptl_le64_to_cpu(x)	le64_to_cpu((__force __le64)(x))

#define PTL_WARN_ON(cond)	WARN_ON(cond)

#endif /* PTL_PLATFORM_KERNEL_H */
