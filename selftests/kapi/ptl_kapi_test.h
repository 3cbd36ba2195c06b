/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl_kapi_test.ko: a kernel client of include/ptl/kapi.h that tests it.
 *
 *   main.c   module init/exit, the debugfs control file, output buffer
 *   cases.c  kernel client against kernel client: every call, its error
 *            paths, callback and drained EQs, kvec and bio_vec MDs
 *   peer.c   a kernel "server" NI that a user process (the kselftest
 *            selftests/ptl_kapi_test.c) puts to and gets from, on this
 *            node or from another network namespace, and that puts and
 *            gets back to the process on command
 */
#ifndef PTL_KAPI_TEST_H
#define PTL_KAPI_TEST_H

#include <linux/spinlock.h>
#include <linux/types.h>

#include <ptl/kapi.h>

/* Events a callback EQ handler keeps for a test to look at. */
#define KT_CB_EVENTS	32

struct kt_cb {
	spinlock_t lock;
	unsigned int n;			/* events seen (may exceed the array) */
	unsigned int in_softirq;	/* ... of which in softirq */
	unsigned int counts[PTL_EVENT_KIND_COUNT];
	ptl_event_t ev[KT_CB_EVENTS];
};

void kt_cb_init(struct kt_cb *cb);
void kt_cb_handler(void *priv, const ptl_event_t *ev);
unsigned int kt_cb_count(struct kt_cb *cb, ptl_event_kind_t kind);

/* Appends to the output of the current command (main.c). */
__printf(1, 2) void kt_out(const char *fmt, ...);

/* Byte @i of the test patterns (as the user-space test computes them). */
static inline u8 kt_pattern(u32 seed, size_t i)
{
	return (u8)(i * seed + (seed >> 4));
}

void kt_fill(void *buf, size_t len, u32 seed, size_t from);
/* Index of the first byte that differs from the pattern, or -1. */
long kt_check(const void *buf, size_t len, u32 seed, size_t from);

/* cases.c: runs every case, appends TAP lines; returns failures. */
int kt_run_cases(void);

/* peer.c: the commands of the user-process tests. */
int kt_peer_serve(u32 pid);
int kt_peer_status(u32 pid);
int kt_peer_client(u32 pid, u32 unid, u32 upid);
int kt_peer_stop(u32 pid);
int kt_peer_leak(u32 pid);
void kt_peer_exit(void);

#endif /* PTL_KAPI_TEST_H */
