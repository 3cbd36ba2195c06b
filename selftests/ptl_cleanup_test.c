// SPDX-License-Identifier: GPL-2.0
/*
 * Cleanup: what a process leaves behind when it finishes, closes the
 * device, or is killed with -9 in the middle of things.
 *
 * Evidence comes from two places:
 *   - VmPin in /proc/<pid>/status: MD pages are charged to the process's
 *     pinned_vm while the MD lives (and only then);
 *   - the module's own counters under /sys/class/misc/portals/
 *     (pinned_pages, open_files, nis, mds, eqs, core_objects): after a
 *     process is gone they return to what they were before it started.
 * The module reference count (/sys/module/ptl/refcnt) shows that an open
 * device pins the module (rmmod refused) and that a killed process drops
 * its reference; run-in-guest.sh checks the rmmod itself at the end.
 */
#include "ptl_selftest.h"

#include <dirent.h>
#include <pthread.h>

#include "kselftest_harness.h"

#define PT 3
#define STATS_DIR "/sys/class/misc/portals"

static const char *const counters[] = {
	"pinned_pages", "open_files", "nis", "mds", "eqs", "core_objects",
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static void snapshot(long *v)
{
	size_t i;

	for (i = 0; i < NCOUNTERS; i++)
		v[i] = ptl_st_counter(counters[i]);
}

/*
 * Waits (up to 10 s: unpinning is deferred to a work item) until every
 * counter is back at @base; returns the index of one that is not, or -1.
 */
static int settle(const long *base, long *now)
{
	long long deadline = ptl_st_now_ms() + 10000;
	size_t i;
	int bad;

	do {
		snapshot(now);
		bad = -1;
		for (i = 0; i < NCOUNTERS; i++)
			if (now[i] != base[i])
				bad = (int)i;
		if (bad < 0)
			return -1;
		usleep(20 * 1000);
	} while (ptl_st_now_ms() < deadline);
	return bad;
}

static long module_refcnt(void)
{
	return ptl_st_read_long("/sys/module/ptl/refcnt");
}

TEST(module_counters_exist)
{
	size_t i;

	for (i = 0; i < NCOUNTERS; i++) {
		const char *name = counters[i];
		long v = ptl_st_counter(name);

		if (v < 0)
			TH_LOG(STATS_DIR "/%s is missing", name);
		EXPECT_LE(0, v);
	}
	EXPECT_LE(0, module_refcnt());
}

TEST(vmpin_follows_md_lifetime_and_fini)
{
	const size_t pages = 64;
	char *buf = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	long base, pinned0;
	ptl_handle_ni_t ni;
	ptl_handle_md_t md, md2;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	base = ptl_st_proc_status_kb(getpid(), "VmPin");
	pinned0 = ptl_st_counter("pinned_pages");
	ASSERT_LE(0, base);
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, pages * 4096, 1, 0,
						  PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	EXPECT_EQ(base + (long)pages * 4,
		  ptl_st_proc_status_kb(getpid(), "VmPin"));
	EXPECT_EQ(pinned0 + (long)pages, ptl_st_counter("pinned_pages"));
	ASSERT_EQ(PTL_OK, PtlMDUnlink(md));
	/* The pin cache keeps the pages, still charged, for the next MD. */
	EXPECT_EQ(base + (long)pages * 4,
		  ptl_st_proc_status_kb(getpid(), "VmPin"));

	/* MDs inside that range share it: nothing more is charged. */
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, 4096, 1, 0,
						  PTL_EQ_NONE),
				    PTL_RETAIN, &md2));
	ASSERT_EQ(PTL_OK, PtlMDUpdate(md2, NULL,
				      &(ptl_md_t){ .start = buf,
						   .length = 8 * 4096,
						   .threshold = 1,
						   .eq_handle = PTL_EQ_NONE },
				      PTL_EQ_NONE));
	EXPECT_EQ(base + (long)pages * 4,
		  ptl_st_proc_status_kb(getpid(), "VmPin"));
	EXPECT_EQ(pinned0 + (long)pages, ptl_st_counter("pinned_pages"));
	/* Fini of the last NI returns everything. */
	PtlFini();
	for (int i = 0; i < 500 && ptl_st_proc_status_kb(getpid(), "VmPin") !=
	     base; i++)
		usleep(10000);
	EXPECT_EQ(base, ptl_st_proc_status_kb(getpid(), "VmPin"));
	EXPECT_EQ(pinned0, ptl_st_counter("pinned_pages"));
	munmap(buf, pages * 4096);
}

static int pin_beyond_memlock(struct ptl_chan *c, void *arg)
{
	struct rlimit rl = { 16 * 4096, 16 * 4096 };
	char *buf = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;

	CK_TRUE(buf != MAP_FAILED);
	CK(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	/* Drop CAP_IPC_LOCK with root. */
	CK(0, setresgid(65534, 65534, 65534));
	CK(0, setresuid(65534, 65534, 65534));
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, 8 * 4096, 1, 0,
					      PTL_EQ_NONE), PTL_RETAIN, &md));
	CK_RC(PTL_MD_ILLEGAL, PtlMDBind(ni, ptl_st_md(buf, 64 * 4096, 1, 0,
						      PTL_EQ_NONE),
					PTL_RETAIN, &md));
	CK(32, ptl_st_proc_status_kb(getpid(), "VmPin"));
	return 0;
}

TEST(pinning_beyond_rlimit_memlock_is_md_illegal_for_the_unprivileged)
{
	struct ptl_peer p;

	ASSERT_EQ(0, ptl_peer_start(&p, pin_beyond_memlock, NULL));
	EXPECT_EQ(0, ptl_peer_wait(&p));
}

TEST(an_open_device_holds_a_module_reference)
{
	long base = module_refcnt();
	int fd;

	ASSERT_LE(0, base);
	fd = open(PTL_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(base + 1, module_refcnt());
	close(fd);
	EXPECT_EQ(base, module_refcnt());
}

/*
 * The victim: thousands of pinned MDs (attached and bound), MEs, EQs
 * with unread events, and threads that keep putting (to itself and to
 * the test) and reading events until it is killed.
 */
#define VICTIM_MDS 1500
#define VICTIM_PAGES 4

struct victim {
	ptl_handle_ni_t ni;
	ptl_process_id_t self;
	ptl_process_id_t test;
	ptl_handle_md_t src;
	ptl_handle_eq_t eq;
};

static void *victim_putter(void *arg)
{
	struct victim *v = arg;
	ptl_event_t ev;
	unsigned long i;

	for (i = 0;; i++) {
		PtlPut(v->src, PTL_ACK_REQ, (i & 1) ? v->self : v->test, PT, 0,
		       i % VICTIM_MDS, 0, i);
		PtlGet(v->src, v->self, PT, 0, i % VICTIM_MDS, 0);
		PtlEQGet(v->eq, &ev);
	}
	return NULL;
}

static int victim(struct ptl_chan *c, void *arg)
{
	ptl_ni_limits_t want = ptl_st_no_wish();
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	char *mem = mmap(NULL, (size_t)VICTIM_MDS * VICTIM_PAGES * 4096,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	struct victim v;
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	pthread_t t[2];
	long pin;
	int i, ready = 1;

	CK_TRUE(mem != MAP_FAILED);
	setrlimit(RLIMIT_MEMLOCK, &rl);
	want.max_me_list = VICTIM_MDS * 2;
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, &want, NULL, &v.ni));
	CK_RC(PTL_OK, PtlGetId(v.ni, &v.self));
	CHAN_RECV(c, v.test);
	CK_RC(PTL_OK, PtlEQAlloc(v.ni, 64, PTL_EQ_HANDLER_NONE, &v.eq));
	for (i = 0; i < VICTIM_MDS; i++) {
		char *b = mem + (size_t)i * VICTIM_PAGES * 4096;

		CK_RC(PTL_OK, PtlMEAttach(v.ni, PT, ptl_st_any(), i, 0,
					  PTL_UNLINK, PTL_INS_AFTER, &me));
		CK_RC(PTL_OK, PtlMDAttach(me, ptl_st_md(b, VICTIM_PAGES * 4096,
							PTL_MD_THRESH_INF,
							PTL_MD_OP_PUT |
							PTL_MD_OP_GET, v.eq),
					  PTL_RETAIN, &md));
		if (i % 3 == 0)
			CK_RC(PTL_OK, PtlMDBind(v.ni,
						ptl_st_md(b, VICTIM_PAGES *
							  4096,
							  PTL_MD_THRESH_INF,
							  0, v.eq),
						PTL_RETAIN, &md));
	}
	CK_RC(PTL_OK, PtlMDBind(v.ni, ptl_st_md(mem, 4096, PTL_MD_THRESH_INF,
						0, v.eq),
				PTL_RETAIN, &v.src));
	pin = ptl_st_proc_status_kb(getpid(), "VmPin");
	/* Attached MDs, 4 pages each (the bound ones share their pins). */
	CK_TRUE(pin >= VICTIM_MDS * VICTIM_PAGES * 4);
	for (i = 0; i < 2; i++)
		CK(0, pthread_create(&t[i], NULL, victim_putter, &v));
	CHAN_SEND(c, v.self);
	CHAN_SEND(c, pin);
	CHAN_SEND(c, ready);
	for (;;)
		pause();
}

/* Puts into the victim until it is gone, and keeps working after. */
static int bystander(struct ptl_chan *c, void *arg)
{
	ptl_process_id_t target;
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	char buf[4096];
	unsigned long i;
	int cmd = 0;

	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	CHAN_RECV(c, target);
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, sizeof(buf),
					      PTL_MD_THRESH_INF, 0,
					      PTL_EQ_NONE),
				PTL_RETAIN, &md));
	CHAN_SEND(c, cmd);
	for (i = 0;; i++) {
		struct pollfd pfd = { .fd = c->rd, .events = POLLIN };

		int rc;

		/*
		 * Initiated while the target lives; once it is gone the
		 * kernel may also say so at once (spec 6.8).
		 */
		rc = PtlPut(md, PTL_ACK_REQ, target, PT, 0, i % VICTIM_MDS, 0,
			    i);
		CK_TRUE(rc == PTL_OK || rc == PTL_PROCESS_INVALID);
		rc = PtlGet(md, target, PT, 0, i % VICTIM_MDS, 0);
		CK_TRUE(rc == PTL_OK || rc == PTL_PROCESS_INVALID);
		if (poll(&pfd, 1, 0) > 0)
			break;
	}
	CHAN_RECV(c, cmd);
	return cmd == 7 ? 0 : 1;
}

FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

TEST_F_TIMEOUT(slow, kill_9_with_thousands_of_pinned_mds_leaves_nothing_behind,
	       180)
{
	long base[NCOUNTERS], now[NCOUNTERS], busy[NCOUNTERS];
	long refcnt = module_refcnt(), pin;
	struct ptl_peer vp, bp;
	ptl_process_id_t vid;
	int ready, bad, stop = 7;
	ptl_handle_ni_t ni;
	ptl_process_id_t me;

	/* The test's own interface, as a target of the victim's puts. */
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlGetId(ni, &me));
	snapshot(base);
	ASSERT_LE(0, base[0]) TH_LOG("no counters under " STATS_DIR);

	ASSERT_EQ(0, ptl_peer_start(&vp, victim, NULL));
	ASSERT_EQ(0, ptl_peer_send(&vp, &me, sizeof(me)));
	ASSERT_EQ(0, ptl_st_read(vp.rd, &vid, sizeof(vid), 120000));
	ASSERT_EQ(0, ptl_peer_recv(&vp, &pin, sizeof(pin)));
	ASSERT_EQ(0, ptl_peer_recv(&vp, &ready, sizeof(ready)));
	TH_LOG("victim pid %d (Portals pid %u) pins %ld kB", vp.pid, vid.pid,
	       pin);
	EXPECT_EQ(pin, ptl_st_proc_status_kb(vp.pid, "VmPin"));

	ASSERT_EQ(0, ptl_peer_start(&bp, bystander, NULL));
	ASSERT_EQ(0, ptl_peer_send(&bp, &vid, sizeof(vid)));
	ASSERT_EQ(0, ptl_peer_recv(&bp, &ready, sizeof(ready)));
	usleep(300 * 1000);	/* everybody busy */

	snapshot(busy);
	/* VmPin also counts the victim's EQ: 64 slots and a control page. */
	EXPECT_GE(busy[0], base[0] + pin / 4 -
		  (long)((64 * sizeof(ptl_event_t) + 4095) / 4096 + 1))
		TH_LOG("pinned_pages");
	EXPECT_GE(busy[3], base[3] + 1500) TH_LOG("mds");

	ASSERT_EQ(0, kill(vp.pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, ptl_peer_wait(&vp));
	usleep(200 * 1000);	/* the bystander keeps putting at the corpse */
	ASSERT_EQ(0, ptl_peer_send(&bp, &stop, sizeof(stop)));
	EXPECT_EQ(0, ptl_peer_wait(&bp));

	bad = settle(base, now);
	EXPECT_EQ(-1, bad) TH_LOG("%s: %ld before, %ld after",
				  bad >= 0 ? counters[bad] : "-",
				  bad >= 0 ? base[bad] : 0,
				  bad >= 0 ? now[bad] : 0);
	/* The victim's pid is free again (contract 2). */
	PtlFini();
	EXPECT_EQ(refcnt, module_refcnt()) TH_LOG("module references");
	{
		ptl_handle_ni_t again;

		ASSERT_EQ(PTL_OK, ptl_st_open(vid.pid, NULL, NULL, &again));
		PtlFini();
	}
}

TEST(exit_without_fini_and_close_release_everything)
{
	long base[NCOUNTERS], now[NCOUNTERS];
	int i, bad;

	snapshot(base);
	for (i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			static char buf[16 * 4096];
			ptl_handle_ni_t ni;
			ptl_handle_me_t me;
			ptl_handle_md_t md;
			ptl_handle_eq_t eq;

			if (ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni) ||
			    PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq) ||
			    PtlMEAttach(ni, PT, ptl_st_any(), 0, 0, PTL_UNLINK,
					PTL_INS_AFTER, &me) ||
			    PtlMDAttach(me, ptl_st_md(buf, sizeof(buf), 1,
						      PTL_MD_OP_PUT, eq),
					PTL_UNLINK, &md))
				_exit(1);
			/* Odd ones close the fd by PtlFini, even ones exit. */
			if (i & 1)
				PtlFini();
			_exit(0);
		}
		ASSERT_LT(0, pid);
		{
			int status;

			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			ASSERT_TRUE(WIFEXITED(status));
			ASSERT_EQ(0, WEXITSTATUS(status));
		}
	}
	bad = settle(base, now);
	EXPECT_EQ(-1, bad) TH_LOG("%s: %ld before, %ld after",
				  bad >= 0 ? counters[bad] : "-",
				  bad >= 0 ? base[bad] : 0,
				  bad >= 0 ? now[bad] : 0);
}

TEST_HARNESS_MAIN
