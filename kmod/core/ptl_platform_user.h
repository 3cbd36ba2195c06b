/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * User-space implementation of the core's platform shim (see
 * ptl_platform.h), used by the unit tests, the fuzzer and the benchmark.
 * Only this file may use libc in the core.
 */
#ifndef PTL_PLATFORM_USER_H
#define PTL_PLATFORM_USER_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ptl/portable.h>	/* types, memcpy, checked arithmetic */

static inline void *ptl_zalloc(size_t size, enum ptl_gfp gfp)
{
	(void)gfp;
	return calloc(1, size ? size : 1);
}

static inline void ptl_free(const void *p)
{
	free((void *)(uintptr_t)p);
}

typedef pthread_mutex_t ptl_lock_t;

static inline void ptl_lock_init(ptl_lock_t *l)
{
	pthread_mutex_init(l, NULL);
}

static inline void ptl_lock_destroy(ptl_lock_t *l)
{
	pthread_mutex_destroy(l);
}

static inline void ptl_lock(ptl_lock_t *l)
{
	pthread_mutex_lock(l);
}

static inline void ptl_unlock(ptl_lock_t *l)
{
	pthread_mutex_unlock(l);
}

#define ptl_memcpy(d, s, n)	memcpy((d), (s), (n))
#define ptl_memset(d, c, n)	memset((d), (c), (n))
/* Memory the core must write before reading: poisoned in the tests. */
#define PTLC_POISON_UNBUILT(d, n)	memset((d), 0xa5, (n))

static inline void ptl_store_release_u32(u32 *p, u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline u32 ptl_load_acquire_u32(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline u32 ptl_read_once_u32(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

#define ptl_wmb()	__atomic_thread_fence(__ATOMIC_RELEASE)

typedef struct {
	long v;
} ptl_atomic_t;

static inline void ptl_atomic_inc(ptl_atomic_t *a)
{
	__atomic_add_fetch(&a->v, 1, __ATOMIC_RELAXED);
}

static inline void ptl_atomic_dec(ptl_atomic_t *a)
{
	__atomic_sub_fetch(&a->v, 1, __ATOMIC_RELAXED);
}

static inline long ptl_atomic_read(const ptl_atomic_t *a)
{
	return __atomic_load_n(&a->v, __ATOMIC_RELAXED);
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the user-space shim assumes a little-endian host"
#endif
#define ptl_cpu_to_le16(x)	((u16)(x))
#define ptl_cpu_to_le32(x)	((u32)(x))
#define ptl_cpu_to_le64(x)	((u64)(x))
#define ptl_le16_to_cpu(x)	((u16)(x))
#define ptl_le32_to_cpu(x)	((u32)(x))
#define ptl_le64_to_cpu(x)	((u64)(x))

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

/*
 * Tests want a broken invariant to be loud but not fatal (ASan and the
 * fuzzer abort on their own when memory is really at stake); the fuzzer
 * defines PTL_WARN_ABORT so that any warning counts as a crash.
 */
static inline int ptl_warn(int cond, const char *what, const char *file,
			   int line)
{
	if (cond) {
		fprintf(stderr, "PTL_WARN_ON(%s) at %s:%d\n", what, file, line);
#ifdef PTL_WARN_ABORT
		abort();
#endif
	}
	return cond;
}

#define PTL_WARN_ON(cond) ptl_warn(!!(cond), #cond, __FILE__, __LINE__)

#endif /* PTL_PLATFORM_USER_H */
