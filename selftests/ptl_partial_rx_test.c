// SPDX-License-Identifier: GPL-2.0
/*
 * The server side of selftests/rtscts_partial_test.sh (issue 20, R2): an
 * ordinary process holding a well-known pid, with one MD that takes puts
 * of up to 1 MiB from anyone, while a forged node sends it puts that
 * announce 1 MiB and carry a byte, then falls silent.
 *
 * It counts what Portals tells it of those messages and keeps the counts
 * in PTL_PARTIAL_STATUS (rewritten whole, by rename, after every change):
 *
 *   pid N              the process serving (the harness's child: signal it)
 *   init OK            or the PtlNIInit code, e.g. PTL_PID_INVALID
 *   start N            PUT_START events: messages matched
 *   end_ok N           PUT_END with PTL_NI_OK
 *   end_fail N         PUT_END with PTL_NI_FAIL: the message failed
 *   dropped N          PTL_EQ_DROPPED: the event queue overflowed
 *
 * until SIGTERM (then PtlNIFini, exit 0) or SIGKILL (the process's exit
 * tears the NI down). The pid is PTL_PARTIAL_PID; without both variables
 * the test skips (run-in-guest.sh runs every *_test).
 *
 * The client side, a well-behaved sender: PTL_PARTIAL_TARGET (NID:PID)
 * gets PTL_PARTIAL_PUTS puts of PTL_PARTIAL_PUT_LEN bytes, all issued at
 * once (larger than eager_max, they go by RTS/CTS: each is open at the
 * target from its RTS to its last byte), and every one must end with
 * SEND_END PTL_NI_OK; the script checks that the target took them all.
 */
#include "ptl_selftest.h"
#include "kselftest_harness.h"

#define PARTIAL_PORTAL	4
#define PARTIAL_MD_LEN	(1UL << 20)
#define PARTIAL_EQ_LEN	8192

static volatile sig_atomic_t partial_stop;

static void partial_on_term(int sig)
{
	partial_stop = 1;
}

struct partial_counts {
	long start, end_ok, end_fail, dropped;
};

/* The counts, replacing @path whole (the reader never sees half). */
static void partial_write(const char *path, const char *init,
			  const struct partial_counts *c)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "pid %d\ninit %s\nstart %ld\nend_ok %ld\nend_fail %ld\n"
		"dropped %ld\n", getpid(), init, c->start, c->end_ok,
		c->end_fail, c->dropped);
	fclose(f);
	rename(tmp, path);
}

/* One event (or none within @ms) into @c; false if nothing changed. */
static bool partial_take(ptl_handle_eq_t eq, struct partial_counts *c,
			 int ms)
{
	ptl_event_t ev;
	int rc = ptl_st_next(eq, &ev, ms);

	if (rc == PTL_EQ_DROPPED)
		c->dropped++;
	else if (rc != PTL_OK)
		return false;
	if (ev.type == PTL_EVENT_PUT_START)
		c->start++;
	else if (ev.type == PTL_EVENT_PUT_END && ev.ni_fail_type == PTL_NI_OK)
		c->end_ok++;
	else if (ev.type == PTL_EVENT_PUT_END)
		c->end_fail++;
	return true;
}

/* The harness's 30 s per test would end a server the script still uses. */
FIXTURE(role) {
	int unused;
};

FIXTURE_SETUP(role)
{
}

FIXTURE_TEARDOWN(role)
{
}

TEST_F_TIMEOUT(role, serve_puts_and_count_their_events, 3600)
{
	const char *status = getenv("PTL_PARTIAL_STATUS");
	const char *pid = getenv("PTL_PARTIAL_PID");
	struct partial_counts c = { 0 };
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	void *buf;
	int rc;

	if (!status || !pid)
		SKIP(return, "run by rtscts_partial_test.sh (PTL_PARTIAL_STATUS, PTL_PARTIAL_PID)");
	signal(SIGTERM, partial_on_term);
	rc = ptl_st_open(atoi(pid), NULL, NULL, &ni);
	partial_write(status, PtlErrorStr(rc), &c);
	ASSERT_EQ(PTL_OK, rc);
	buf = calloc(1, PARTIAL_MD_LEN);
	ASSERT_NE(NULL, buf);
	/* Anyone on the wire: the forged node claims no uid of ours. */
	ASSERT_EQ(PTL_OK, PtlACEntry(ni, 0, ptl_st_any(), PTL_UID_ANY,
				     PTL_JID_ANY, PTL_PT_INDEX_ANY));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, PARTIAL_EQ_LEN, PTL_EQ_HANDLER_NONE,
				     &eq));
	ASSERT_EQ(PTL_OK, PtlMEAttach(ni, PARTIAL_PORTAL, ptl_st_any(), 0,
				      ~0ULL, PTL_RETAIN, PTL_INS_AFTER, &me));
	ASSERT_EQ(PTL_OK, PtlMDAttach(me, ptl_st_md(buf, PARTIAL_MD_LEN,
						    PTL_MD_THRESH_INF,
						    PTL_MD_OP_PUT |
						    PTL_MD_MANAGE_REMOTE, eq),
				      PTL_RETAIN, &md));
	while (!partial_stop) {
		if (partial_take(eq, &c, 200))
			partial_write(status, "OK", &c);
	}
	while (partial_take(eq, &c, 0))
		;
	partial_write(status, "OK", &c);
	EXPECT_EQ(PTL_OK, PtlNIFini(ni));
	PtlFini();
}

static long partial_env(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v ? strtol(v, NULL, 0) : dflt;
}

TEST_F_TIMEOUT(role, puts_issued_at_once_all_end_ok, 600)
{
	const char *target = getenv("PTL_PARTIAL_TARGET");
	long n = partial_env("PTL_PARTIAL_PUTS", 128), i, ok = 0;
	size_t len = partial_env("PTL_PARTIAL_PUT_LEN", 64 << 10);
	ptl_process_id_t to;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	unsigned int nid, pid;
	ptl_event_t ev;
	void *buf;

	if (!target || sscanf(target, "%u:%u", &nid, &pid) != 2)
		SKIP(return, "run by rtscts_partial_test.sh (PTL_PARTIAL_TARGET)");
	to.nid = nid;
	to.pid = pid;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 4 * n + 16, PTL_EQ_HANDLER_NONE, &eq));
	buf = calloc(1, len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, len, PTL_MD_THRESH_INF,
						  0, eq),
				    PTL_RETAIN, &md));
	for (i = 0; i < n; i++)
		ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NOACK_REQ, to, PARTIAL_PORTAL,
					 0, i, 0, 0));
	for (i = 0; i < n;) {
		ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS * 3));
		if (ev.type != PTL_EVENT_SEND_END)
			continue;
		i++;
		if (ev.ni_fail_type == PTL_NI_OK)
			ok++;
	}
	EXPECT_EQ(n, ok);
	EXPECT_EQ(PTL_OK, PtlNIFini(ni));
	PtlFini();
}

TEST_HARNESS_MAIN
