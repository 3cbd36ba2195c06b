// SPDX-License-Identifier: GPL-2.0
/*
 * The library's fast paths never enter the kernel: PtlEQGet (with or
 * without an event) and a PtlEQPoll that finds an event read the mapped
 * ring only. Proved with seccomp strict mode, under which any system call
 * but read, write, exit and sigreturn kills the process.
 */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <p3nal_linux.h>
#include <portals3.h>

#include "kselftest_harness.h"

#define PUTS	3

struct fastpath_result {
	int get_rc[PUTS];
	int poll_rc[PUTS];
	int empty_rc;
	ptl_event_kind_t kinds[2 * PUTS];
};

/* Three puts to ourselves: six events (PUT_START, PUT_END) in our EQ. */
static int fill_eq(ptl_handle_eq_t *eq)
{
	static char target[64], source[64] = "fast path";
	ptl_md_t md = { .length = sizeof(target), .threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE };
	ptl_md_t src = { .start = source, .length = sizeof(source),
			 .threshold = PTL_MD_THRESH_INF, .eq_handle = PTL_EQ_NONE };
	ptl_handle_md_t md_h, src_h;
	ptl_process_id_t me;
	ptl_handle_ni_t ni;
	ptl_handle_me_t me_h;
	int i, max;

	md.start = target;
	if (PtlInit(&max) || PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL,
				       NULL, &ni) ||
	    PtlGetId(ni, &me) || PtlEQAlloc(ni, 64, PTL_EQ_HANDLER_NONE, eq))
		return 1;
	md.eq_handle = *eq;
	if (PtlMEAttach(ni, 0, me, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me_h) ||
	    PtlMDAttach(me_h, md, PTL_RETAIN, &md_h) ||
	    PtlMDBind(ni, src, PTL_RETAIN, &src_h))
		return 2;
	for (i = 0; i < PUTS; i++)
		if (PtlPut(src_h, PTL_NO_ACK_REQ, me, 0, 0, 0, 0, 0))
			return 3;
	return 0;
}

static void run_strict(int out)
{
	struct fastpath_result r;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	int i, which;

	if (fill_eq(&eq))
		syscall(SYS_exit, 10);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		syscall(SYS_exit, 11);
	/* From here on any other system call is SIGKILL. */
	for (i = 0; i < PUTS; i++) {
		r.get_rc[i] = PtlEQGet(eq, &ev);
		r.kinds[2 * i] = ev.type;
		r.poll_rc[i] = PtlEQPoll(&eq, 1, 0, &ev, &which);
		r.kinds[2 * i + 1] = ev.type;
	}
	r.empty_rc = PtlEQGet(eq, &ev);
	if (write(out, &r, sizeof(r)) != sizeof(r))
		syscall(SYS_exit, 12);
	syscall(SYS_exit, 0);	/* exit_group is not allowed in strict mode */
}

TEST(eq_get_and_a_poll_that_finds_an_event_make_no_system_call)
{
	struct fastpath_result r;
	int fds[2], status, i;
	pid_t child;

	ASSERT_EQ(0, pipe(fds));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(fds[0]);
		run_strict(fds[1]);
	}
	close(fds[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) {
		TH_LOG("killed by signal %d: a system call on the fast path",
		       WTERMSIG(status));
	}
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(sizeof(r), read(fds[0], &r, sizeof(r)));
	for (i = 0; i < PUTS; i++) {
		EXPECT_EQ(PTL_OK, r.get_rc[i]);
		EXPECT_EQ(PTL_OK, r.poll_rc[i]);
		EXPECT_EQ(PTL_EVENT_PUT_START, r.kinds[2 * i]);
		EXPECT_EQ(PTL_EVENT_PUT_END, r.kinds[2 * i + 1]);
	}
	EXPECT_EQ(PTL_EQ_EMPTY, r.empty_rc);
	close(fds[0]);
}

TEST_HARNESS_MAIN
