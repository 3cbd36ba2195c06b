// SPDX-License-Identifier: GPL-2.0
/*
 * Adaptive polling (PTL_EQ_SPIN_US): a waiter whose EQ is empty polls the
 * mapped ring for that long before it sleeps in the kernel.
 *
 * What proves that the spin took the event, and not a sleep: the waiter
 * runs under a seccomp filter that fails every ioctl with EPERM, so a
 * PtlEQWait that reached PTL_IOC_EQ_WAIT returns PTL_FAIL. Without the
 * variable the same wait must fail that way (the default does not spin,
 * and the test can tell). The spin never outlasts the caller's timeout,
 * and a spin that finds nothing still sleeps and gets the event.
 */
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "ptl_selftest.h"
#include "kselftest_harness.h"

#if defined(__x86_64__)
#define SPIN_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SPIN_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#else
#error "the seccomp filter below needs this architecture's AUDIT_ARCH"
#endif

/* Longer than any delay below: the event comes while the peer spins. */
#define SPIN_US		"1000000"

struct spin_peer {
	const char *spin_us;	/* PTL_EQ_SPIN_US, or NULL */
	bool deny_ioctl;	/* wait under the filter */
	int timeout_ms;		/* of the wait: PTL_TIME_FOREVER or ms */
};

/* What the waiting peer reports. */
struct spin_report {
	int rc;
	int kind;
	long long waited_ms;
};

static int cpus_allowed(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) ? 0 : CPU_COUNT(&set);
}

/* Every ioctl of this process fails with EPERM from here on. */
static int deny_ioctl(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SPIN_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(filter),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * The receiver: a sink on portal 0, its id sent to the test, then (once
 * the test says go) one wait for the first event, reported.
 */
static int waiter(struct ptl_chan *c, void *arg)
{
	const struct spin_peer *how = arg;
	static char buf[64];
	struct spin_report r = { 0 };
	ptl_process_id_t id;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	long long start;
	int go, which;

	if (how->spin_us)
		CK(0, setenv("PTL_EQ_SPIN_US", how->spin_us, 1));
	CK_RC(PTL_OK, ptl_st_sink(PTL_PID_ANY, buf, sizeof(buf),
				  PTL_MD_OP_PUT, 16, &ni, &eq));
	CK_RC(PTL_OK, PtlGetId(ni, &id));
	if (how->deny_ioctl)
		CK(0, deny_ioctl());
	CHAN_SEND(c, id);
	CHAN_RECV(c, go);
	start = ptl_st_now_ms();
	r.rc = PtlEQPoll(&eq, 1, (ptl_time_t)how->timeout_ms, &ev, &which);
	r.waited_ms = ptl_st_now_ms() - start;
	r.kind = r.rc == PTL_OK ? (int)ev.type : -1;
	CHAN_SEND(c, r);
	return 0;
}

/*
 * Starts a waiter configured by @how, tells it to wait, puts 8 bytes to it
 * after @delay_ms (none if negative) and returns its report.
 */
static int wait_for_put(struct spin_peer *how, int delay_ms,
			struct spin_report *r)
{
	static char payload[8] = "spin";
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	ptl_process_id_t to;
	struct ptl_peer p;
	int go = 1;

	if (ptl_peer_start(&p, waiter, how) || ptl_peer_recv(&p, &to, sizeof(to)))
		return -1;
	if (ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni) ||
	    PtlMDBind(ni, ptl_st_md(payload, sizeof(payload), PTL_MD_THRESH_INF,
				    0, PTL_EQ_NONE), PTL_RETAIN, &md) ||
	    ptl_peer_send(&p, &go, sizeof(go)))
		return -2;
	if (delay_ms >= 0) {
		usleep((useconds_t)delay_ms * 1000);
		if (PtlPut(md, PTL_NO_ACK_REQ, to, 0, 0, 0, 0, 0))
			return -3;
	}
	if (ptl_peer_recv(&p, r, sizeof(*r)))
		return -4;
	return ptl_peer_wait(&p);
}

TEST(a_spinning_wait_takes_an_event_on_its_way_without_sleeping)
{
	struct spin_peer how = { SPIN_US, true, PTL_TIME_FOREVER };
	struct spin_report r;

	if (cpus_allowed() < 2)
		SKIP(return, "one CPU: the library does not spin there");
	ASSERT_EQ(0, wait_for_put(&how, 50, &r));
	/* A sleep would have been an ioctl, refused: PTL_FAIL. */
	EXPECT_EQ(PTL_OK, r.rc);
	EXPECT_EQ(PTL_EVENT_PUT_START, r.kind);
	TH_LOG("event after %lld ms of spinning", r.waited_ms);
}

TEST(without_the_variable_a_wait_sleeps_in_the_kernel)
{
	struct spin_peer how = { NULL, true, PTL_TIME_FOREVER };
	struct spin_report r;

	ASSERT_EQ(0, wait_for_put(&how, 50, &r));
	EXPECT_EQ(PTL_FAIL, r.rc);
}

TEST(a_bad_value_is_ignored_and_the_wait_sleeps)
{
	static const char *const bad[] = { "", "x", "-1", "1000001", "5us" };
	struct spin_report r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct spin_peer how = { bad[i], true, PTL_TIME_FOREVER };

		ASSERT_EQ(0, wait_for_put(&how, 50, &r));
		EXPECT_EQ(PTL_FAIL, r.rc) TH_LOG("PTL_EQ_SPIN_US='%s'", bad[i]);
	}
}

TEST(the_spin_never_outlasts_the_timeout)
{
	struct spin_peer how = { SPIN_US, false, 100 };
	struct spin_report r;

	if (cpus_allowed() < 2)
		SKIP(return, "one CPU: the library does not spin there");
	ASSERT_EQ(0, wait_for_put(&how, -1, &r));
	EXPECT_EQ(PTL_EQ_EMPTY, r.rc);
	EXPECT_LE(100, r.waited_ms);
	EXPECT_GT(900, r.waited_ms);
}

TEST(a_spin_that_finds_nothing_sleeps_and_still_gets_the_event)
{
	struct spin_peer how = { "20000", false, PTL_TIME_FOREVER };
	struct spin_report r;

	if (cpus_allowed() < 2)
		SKIP(return, "one CPU: the library does not spin there");
	ASSERT_EQ(0, wait_for_put(&how, 300, &r));
	EXPECT_EQ(PTL_OK, r.rc);
	EXPECT_EQ(PTL_EVENT_PUT_START, r.kind);
	EXPECT_LE(250, r.waited_ms);
}

TEST(on_one_cpu_a_wait_does_not_spin)
{
	struct spin_peer how = { SPIN_US, true, PTL_TIME_FOREVER };
	struct spin_report r;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	/* The waiter inherits the mask: its PtlInit sees one CPU. */
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, wait_for_put(&how, 50, &r));
	EXPECT_EQ(PTL_FAIL, r.rc);
}

TEST_HARNESS_MAIN
