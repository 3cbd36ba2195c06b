/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The platform shim of the Portals semantics core.
 *
 * The core is plain C that runs in two places: inside ptl.ko (where the
 * receive path runs in softirq context) and inside the user-space unit tests
 * and fuzzer. Everything it needs from its environment is declared here and
 * provided by exactly one of two small headers:
 *
 *   kernel:     ../ptl_platform_kernel.h  (kzalloc, spinlock_t with _bh, ...)
 *   user space: ptl_platform_user.h       (calloc, pthread mutex, __atomic)
 *
 * Contract (each implementation provides these names):
 *
 *   types     u8 u16 u32 u64 s32 s64, bool, size_t, NULL (both from
 *             include/ptl/portable.h, with check_*_overflow below)
 *   alloc     void *ptl_zalloc(size_t size, enum ptl_gfp gfp);
 *             void ptl_free(const void *p);            NULL is a no-op
 *             PTL_GFP_SLEEP may sleep; PTL_GFP_ATOMIC never sleeps.
 *   lock      ptl_lock_t; ptl_lock_init/destroy/lock/unlock(ptl_lock_t *)
 *             Kernel: a spinlock taken with _bh, because the receive path
 *             runs in softirq context. Never held across sleeping calls.
 *   memory    ptl_memcpy(d, s, n), ptl_memset(d, c, n)
 *   ordering  ptl_store_release_u32(u32 *p, u32 v)
 *             u32 ptl_load_acquire_u32(const u32 *p)
 *             ptl_wmb()                     orders plain stores
 *             ptl_read_once_u32(p)          single untorn load
 *   counters  ptl_atomic_t; ptl_atomic_inc/dec/read (long)
 *   bytes     ptl_cpu_to_le16/32/64, ptl_le16/32/64_to_cpu (values only;
 *             the wire codec works on byte arrays via ptl_wire.c helpers)
 *   hints     likely(x), unlikely(x), fallthrough
 *   overflow  check_add_overflow(a, b, d), check_sub_overflow(a, b, d),
 *             check_mul_overflow(a, b, d): *d = a op b, true if it wrapped
 *   checks    PTL_WARN_ON(cond) evaluates to cond and reports when true;
 *             PTL_BUILD_BUG_ON(cond) fails the build when cond is true.
 */
#ifndef PTL_PLATFORM_H
#define PTL_PLATFORM_H

enum ptl_gfp {
	PTL_GFP_SLEEP,		/* process context, no spinlock held */
	PTL_GFP_ATOMIC,		/* softirq or under a spinlock */
};

#ifdef __KERNEL__
#include "../ptl_platform_kernel.h"
#else
#include "ptl_platform_user.h"
#endif

#define PTL_BUILD_BUG_ON(cond) \
	((void)sizeof(char[1 - 2 * !!(cond)]))

#endif /* PTL_PLATFORM_H */
