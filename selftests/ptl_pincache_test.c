// SPDX-License-Identifier: GPL-2.0
/*
 * The pin cache (kmod/ptl_pincache.c): MDs over memory the process has
 * already pinned reuse the pins, and a new MD never uses pages that are no
 * longer what the process has at the address.
 *
 * Every invalidation case (munmap and mmap again, mremap, mmap MAP_FIXED
 * over, fork with copy-on-write, madvise(MADV_DONTNEED)) first pins the
 * address through an MD that is then unlinked (so its pages sit in the
 * cache), changes the mapping, then proves with data that a new MD sends
 * what the process now reads there and that data put into a new MD there
 * is what the process then reads. Messages go from the test's NI to
 * itself, intra-node, so the receive buffer is checked byte for byte.
 * Also: the counters show the reuse, kill -9 leaves nothing pinned,
 * RLIMIT_MEMLOCK is honoured with unused cached pins unpinned first, and
 * an existing MD keeps the pages it was built on.
 */
#include "ptl_selftest.h"

#include <pthread.h>

#include "kselftest_harness.h"

#define PAGE		4096
#define NPAGES		4
#define LEN		(NPAGES * PAGE)
#define PT		9
#define BITS		0x9c
#define BUDGET_PARAM	"/sys/module/ptl/parameters/pincache_max_pages"

static long counter(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "pincache_%.40s", name);
	return ptl_st_counter(path);
}

/* A process's Portals: an NI, an EQ, a receive buffer on an ME. */
struct pc_ctx {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_process_id_t self;
	char *rx;		/* where puts to BITS land, LEN bytes */
	char *tx;		/* a send buffer of its own, LEN bytes */
	ptl_handle_md_t tx_md;
};

static void *map_pages(void *at, size_t len, int extra)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Any process: PtlInit, NI, EQ; rx and tx bound/attached. CK on failure. */
static void pc_open(struct pc_ctx *c)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md;

	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &c->ni));
	CK_RC(PTL_OK, PtlGetId(c->ni, &c->self));
	CK_RC(PTL_OK, PtlEQAlloc(c->ni, 64, PTL_EQ_HANDLER_NONE, &c->eq));
	c->rx = map_pages(NULL, LEN, 0);
	c->tx = map_pages(NULL, LEN, 0);
	CK_TRUE(c->rx && c->tx);
	CK_RC(PTL_OK, PtlMEAttach(c->ni, PT, ptl_st_any(), BITS, 0, PTL_RETAIN,
				  PTL_INS_AFTER, &me));
	CK_RC(PTL_OK, PtlMDAttach(me, ptl_st_md(c->rx, LEN, PTL_MD_THRESH_INF,
						PTL_MD_OP_PUT |
						PTL_MD_MANAGE_REMOTE |
						PTL_MD_EVENT_START_DISABLE,
						c->eq),
				  PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDBind(c->ni, ptl_st_md(c->tx, LEN, PTL_MD_THRESH_INF,
					      PTL_MD_EVENT_START_DISABLE,
					      c->eq),
				PTL_RETAIN, &c->tx_md));
}

/* Puts @len bytes of @md to this process's rx, and waits for both ends. */
static void pc_put_self(struct pc_ctx *c, ptl_handle_md_t md, size_t len,
			ptl_match_bits_t bits)
{
	ptl_event_t ev;

	CK_RC(PTL_OK, PtlPutRegion(md, 0, len, PTL_NO_ACK_REQ, c->self, PT, 0,
				   bits, 0, 0));
	for (int i = 0; i < 2; i++) {
		CK_RC(PTL_OK, ptl_st_next(c->eq, &ev, PTL_ST_TIMEOUT_MS));
		CK_TRUE(ev.type == PTL_EVENT_SEND_END ||
			ev.type == PTL_EVENT_PUT_END);
		CK(PTL_NI_OK, ev.ni_fail_type);
		CK(len, ev.mlength);
	}
}

/* A new MD bound over @at sends what the process reads there now. */
static void pc_check_send(struct pc_ctx *c, char *at, unsigned int seed)
{
	ptl_handle_md_t md;

	ptl_st_fill(at, LEN, seed);
	memset(c->rx, 0, LEN);
	CK_RC(PTL_OK, PtlMDBind(c->ni, ptl_st_md(at, LEN, PTL_MD_THRESH_INF,
					      PTL_MD_EVENT_START_DISABLE,
					      c->eq),
				PTL_RETAIN, &md));
	pc_put_self(c, md, LEN, BITS);
	CK(-1, ptl_st_check(c->rx, LEN, seed, 0));
	CK_RC(PTL_OK, PtlMDUnlink(md));
}

/* Data put into a new MD attached over @at is what the process reads. */
static void pc_check_recv(struct pc_ctx *c, char *at, unsigned int seed)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md;

	memset(at, 0, LEN);
	ptl_st_fill(c->tx, LEN, seed);
	CK_RC(PTL_OK, PtlMEAttach(c->ni, PT, ptl_st_any(), BITS + 1, 0,
				  PTL_RETAIN, PTL_INS_BEFORE, &me));
	CK_RC(PTL_OK, PtlMDAttach(me, ptl_st_md(at, LEN, PTL_MD_THRESH_INF,
						PTL_MD_OP_PUT |
						PTL_MD_MANAGE_REMOTE |
						PTL_MD_EVENT_START_DISABLE,
						c->eq),
				  PTL_RETAIN, &md));
	pc_put_self(c, c->tx_md, LEN, BITS + 1);
	CK(-1, ptl_st_check(at, LEN, seed, 0));
	CK_RC(PTL_OK, PtlMEUnlink(me));
}

/* Both directions through new MDs over @at; the pins end up cached. */
static void pc_check_current(struct pc_ctx *c, char *at, unsigned int seed)
{
	pc_check_send(c, at, seed);
	pc_check_recv(c, at, seed + 1);
}

/*
 * An MD bound over @at before the change, updated to the same bytes after
 * it, sends what the process reads there now: the update may keep an MD's
 * pinned pages only while they still are the process's.
 */
static void pc_check_update(struct pc_ctx *c, ptl_handle_md_t md, char *at,
			    unsigned int seed)
{
	ptl_md_t same = ptl_st_md(at, LEN, PTL_MD_THRESH_INF,
				  PTL_MD_EVENT_START_DISABLE, c->eq);

	ptl_st_fill(at, LEN, seed);
	memset(c->rx, 0, LEN);
	CK_RC(PTL_OK, PtlMDUpdate(md, NULL, &same, PTL_EQ_NONE));
	pc_put_self(c, md, LEN, BITS);
	CK(-1, ptl_st_check(c->rx, LEN, seed, 0));
	CK_RC(PTL_OK, PtlMDUnlink(md));
}

struct pc_case {
	void (*change)(struct pc_ctx *c, char **at);
};

/*
 * Runs @change(at) between two rounds of checks of new MDs over the same
 * address, in a process of its own (CK-style checks), and asserts the
 * change made at least one cached range stale.
 */
static int pc_invalidation_case(struct ptl_chan *ch, void *arg)
{
	const struct pc_case *pcase = arg;
	ptl_handle_md_t upd;
	struct pc_ctx c;
	char *at;
	long inval;

	pc_open(&c);
	at = map_pages(NULL, LEN, 0);
	CK_TRUE(at);
	pc_check_current(&c, at, 10);
	pc_check_current(&c, at, 20);	/* same memory: cache hits */
	CK_RC(PTL_OK, PtlMDBind(c.ni, ptl_st_md(at, LEN, PTL_MD_THRESH_INF,
						PTL_MD_EVENT_START_DISABLE,
						c.eq),
				PTL_RETAIN, &upd));
	inval = counter("invalidations");
	pcase->change(&c, &at);
	CK_TRUE(counter("invalidations") > inval);
	pc_check_update(&c, upd, at, 25);
	pc_check_current(&c, at, 30);
	PtlFini();
	return 0;
}

static int run_case(void (*change)(struct pc_ctx *c, char **at))
{
	struct pc_case pcase = { change };
	struct ptl_peer p;

	if (ptl_peer_start(&p, pc_invalidation_case, &pcase))
		return -1;
	return ptl_peer_wait(&p);
}

/* ---- reuse ---- */

TEST(update_and_bind_over_pinned_memory_reuse_the_pin)
{
	struct pc_ctx c;
	ptl_handle_md_t md;
	ptl_md_t md8;
	long hits, misses, pinned, vmpin;

	pc_open(&c);
	md8 = ptl_st_md(c.tx + 100, 8, PTL_MD_THRESH_INF,
			PTL_MD_EVENT_START_DISABLE, c.eq);
	hits = counter("hits");
	misses = counter("misses");
	pinned = ptl_st_counter("pinned_pages");
	vmpin = ptl_st_proc_status_kb(getpid(), "VmPin");
	ASSERT_EQ(PTL_OK, PtlMDBind(c.ni, md8, PTL_RETAIN, &md));
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(PTL_OK, PtlMDUpdate(md, NULL, &md8, PTL_EQ_NONE));
		ASSERT_EQ(PTL_OK, PtlMDUnlink(md));
		ASSERT_EQ(PTL_OK, PtlMDBind(c.ni, md8, PTL_RETAIN, &md));
	}
	/* 201 MDs over pages c.tx_md pins: no pin of their own. */
	EXPECT_LE(hits + 201, counter("hits"));
	EXPECT_EQ(misses, counter("misses"));
	EXPECT_EQ(pinned, ptl_st_counter("pinned_pages"));
	EXPECT_EQ(vmpin, ptl_st_proc_status_kb(getpid(), "VmPin"));
	/* And the data is right: 8 B from the middle of the page. */
	ptl_st_fill(c.tx + 100, 8, 7);
	memset(c.rx, 0, LEN);
	pc_put_self(&c, md, 8, BITS);
	EXPECT_EQ(-1, ptl_st_check(c.rx, 8, 7, 0));
	PtlFini();
}

TEST(unlinked_mds_leave_their_pins_cached_until_fini)
{
	struct pc_ctx c;
	char *buf = map_pages(NULL, 8 * PAGE, 0);
	long vm0 = ptl_st_proc_status_kb(getpid(), "VmPin");
	ptl_handle_md_t md;
	long base, misses, cached;

	ASSERT_NE(NULL, buf);
	pc_open(&c);
	base = ptl_st_proc_status_kb(getpid(), "VmPin");
	cached = counter("cached_pages");
	ASSERT_EQ(PTL_OK, PtlMDBind(c.ni, ptl_st_md(buf, 8 * PAGE, 1, 0,
						    PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlMDUnlink(md));
	/* Still pinned and charged, but unused: cached. */
	EXPECT_EQ(base + 32, ptl_st_proc_status_kb(getpid(), "VmPin"));
	EXPECT_EQ(cached + 8, counter("cached_pages"));
	misses = counter("misses");
	ASSERT_EQ(PTL_OK, PtlMDBind(c.ni, ptl_st_md(buf + PAGE, 2 * PAGE, 1, 0,
						    PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	EXPECT_EQ(misses, counter("misses"));
	EXPECT_EQ(cached, counter("cached_pages"));
	ASSERT_EQ(PTL_OK, PtlMDUnlink(md));
	EXPECT_EQ(cached + 8, counter("cached_pages"));
	PtlFini();
	/* The last NI of the process empties its cache. */
	for (int i = 0; i < 500 &&
	     ptl_st_proc_status_kb(getpid(), "VmPin") != vm0; i++)
		usleep(10000);
	EXPECT_EQ(vm0, ptl_st_proc_status_kb(getpid(), "VmPin"));
	EXPECT_EQ(cached, counter("cached_pages"));
}

/* ---- invalidation: new MDs see the process's current memory ---- */

static void change_munmap_mmap(struct pc_ctx *c, char **at)
{
	ptl_handle_md_t old;
	char *again;

	/* An MD that outlives the mapping keeps the old pages. */
	ptl_st_fill(*at, LEN, 77);
	CK_RC(PTL_OK, PtlMDBind(c->ni, ptl_st_md(*at, LEN, PTL_MD_THRESH_INF,
					      PTL_MD_EVENT_START_DISABLE,
					      c->eq),
				PTL_RETAIN, &old));
	CK(0, munmap(*at, LEN));
	again = map_pages(*at, LEN, MAP_FIXED_NOREPLACE);
	CK_TRUE(again == *at);
	CK(-1, ptl_st_memchk(again, 0, LEN));	/* fresh zero pages */
	memset(c->rx, 0, LEN);
	pc_put_self(c, old, LEN, BITS);
	CK(-1, ptl_st_check(c->rx, LEN, 77, 0));
	CK_RC(PTL_OK, PtlMDUnlink(old));
}

static void change_mremap(struct pc_ctx *c, char **at)
{
	char *to = map_pages(NULL, LEN, 0), *moved;

	CK_TRUE(to);
	ptl_st_fill(*at, LEN, 55);
	moved = mremap(*at, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	CK_TRUE(moved == to);
	/* The pages moved: a new MD at the new address sends them. */
	CK(-1, ptl_st_check(moved, LEN, 55, 0));
	memset(c->rx, 0, LEN);
	pc_check_current(c, moved, 60);
	/* And fresh memory at the old address. */
	CK_TRUE(map_pages(*at, LEN, MAP_FIXED_NOREPLACE) == *at);
}

static void change_map_fixed_over(struct pc_ctx *c, char **at)
{
	CK_TRUE(map_pages(*at, LEN, MAP_FIXED) == *at);
	CK(-1, ptl_st_memchk(*at, 0, LEN));
}

static void change_fork_cow(struct pc_ctx *c, char **at)
{
	int go[2];
	pid_t child;
	char x;

	ptl_st_fill(*at, LEN, 40);
	CK(0, pipe(go));
	child = fork();
	CK_TRUE(child >= 0);
	if (child == 0) {
		/* Keeps the COW sharing alive; sees the pre-fork bytes. */
		close(go[1]);
		if (read(go[0], &x, 1) != 0)
			_exit(1);
		_exit(ptl_st_check(*at, LEN, 40, 0) == -1 ? 0 : 2);
	}
	close(go[0]);
	/* The parent writes after the fork (the checks that follow do). */
	ptl_st_fill(*at, LEN, 41);
	c->tx[0] ^= 1;
	pc_check_current(c, *at, 45);
	close(go[1]);
	{
		int status;

		CK(child, waitpid(child, &status, 0));
		CK_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

static void change_dontneed(struct pc_ctx *c, char **at)
{
	CK(0, madvise(*at, LEN, MADV_DONTNEED));
	CK(-1, ptl_st_memchk(*at, 0, LEN));
}

TEST(munmap_then_mmap_at_the_same_address)
{
	EXPECT_EQ(0, run_case(change_munmap_mmap));
}

TEST(mremap_moves_the_pages_away)
{
	EXPECT_EQ(0, run_case(change_mremap));
}

TEST(mmap_map_fixed_over_the_range)
{
	EXPECT_EQ(0, run_case(change_map_fixed_over));
}

TEST(fork_with_copy_on_write_then_parent_writes)
{
	EXPECT_EQ(0, run_case(change_fork_cow));
}

TEST(madvise_dontneed)
{
	EXPECT_EQ(0, run_case(change_dontneed));
}

/*
 * One thread binds and unlinks MDs over a range while another maps fresh
 * memory over it again and again (MAP_FIXED is atomic: the range is never
 * a hole): pins race invalidations (the retry of ptl_pin_fill()), entries
 * go stale while MDs use them. Afterwards a new MD still sees the
 * process's memory, and fini leaves nothing pinned.
 */
struct pc_race {
	char *at;
	volatile int stop;
};

static void *remap_loop(void *arg)
{
	struct pc_race *r = arg;

	while (!r->stop)
		if (map_pages(r->at, LEN, MAP_FIXED) != r->at)
			return (void *)1;
	return NULL;
}

static int race_case(struct ptl_chan *ch, void *arg)
{
	long pinned = ptl_st_counter("pinned_pages");
	struct pc_race r = { 0 };
	struct pc_ctx c;
	pthread_t t;
	void *ret;

	pc_open(&c);
	r.at = map_pages(NULL, LEN, 0);
	CK_TRUE(r.at);
	CK(0, pthread_create(&t, NULL, remap_loop, &r));
	for (int i = 0; i < 3000; i++) {
		ptl_handle_md_t md;

		CK_RC(PTL_OK, PtlMDBind(c.ni, ptl_st_md(r.at, LEN, 1, 0,
						       PTL_EQ_NONE),
					PTL_RETAIN, &md));
		if (i % 3)
			CK_RC(PTL_OK, PtlMDUnlink(md));
	}
	r.stop = 1;
	CK(0, pthread_join(t, &ret));
	CK_TRUE(ret == NULL);
	pc_check_current(&c, r.at, 90);
	PtlFini();
	for (int i = 0; i < 500 && ptl_st_counter("pinned_pages") != pinned;
	     i++)
		usleep(10000);
	CK(pinned, ptl_st_counter("pinned_pages"));
	return 0;
}

TEST(pins_racing_remaps_stay_right_and_leave_nothing)
{
	struct ptl_peer p;

	ASSERT_EQ(0, ptl_peer_start(&p, race_case, NULL));
	EXPECT_EQ(0, ptl_peer_wait(&p));
}

/* ---- limits and teardown ---- */

static int pin_and_wait(struct ptl_chan *ch, void *arg)
{
	struct pc_ctx c;
	char *buf = map_pages(NULL, 32 * PAGE, 0);
	ptl_handle_md_t md;
	int ready = 1;

	CK_TRUE(buf);
	pc_open(&c);
	/* Some pins used by live MDs, some cached by unlinked ones. */
	for (int i = 0; i < 8; i++) {
		CK_RC(PTL_OK, PtlMDBind(c.ni, ptl_st_md(buf + i * 4 * PAGE,
						      4 * PAGE, 1, 0,
						      PTL_EQ_NONE),
					PTL_RETAIN, &md));
		if (i % 2)
			CK_RC(PTL_OK, PtlMDUnlink(md));
	}
	CHAN_SEND(ch, ready);
	pause();
	return 0;
}

TEST(kill_9_leaves_nothing_pinned)
{
	long pinned = ptl_st_counter("pinned_pages");
	long cached = counter("cached_pages");
	struct ptl_peer p;
	int ready = 0;

	ASSERT_EQ(0, ptl_peer_start(&p, pin_and_wait, NULL));
	ASSERT_EQ(0, ptl_peer_recv(&p, &ready, sizeof(ready)));
	EXPECT_LT(pinned + 32, ptl_st_counter("pinned_pages"));
	EXPECT_EQ(cached + 16, counter("cached_pages"));
	kill(p.pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, ptl_peer_wait(&p));
	for (int i = 0; i < 500 && ptl_st_counter("pinned_pages") != pinned;
	     i++)
		usleep(10000);
	EXPECT_EQ(pinned, ptl_st_counter("pinned_pages"));
	EXPECT_EQ(cached, counter("cached_pages"));
}

static int memlock_evicts_unused_first(struct ptl_chan *ch, void *arg)
{
	struct rlimit rl = { 16 * PAGE, 16 * PAGE };
	char *x = map_pages(NULL, 8 * PAGE, 0), *y = map_pages(NULL, 12 * PAGE, 0);
	ptl_handle_ni_t ni;
	ptl_handle_md_t md, keep;
	long evictions;

	CK_TRUE(x && y);
	CK(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	/* Drop CAP_IPC_LOCK with root. */
	CK(0, setresgid(65534, 65534, 65534));
	CK(0, setresuid(65534, 65534, 65534));
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(x, 8 * PAGE, 1, 0, PTL_EQ_NONE),
				PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDUnlink(md));
	CK(32, ptl_st_proc_status_kb(getpid(), "VmPin"));	/* cached */
	evictions = counter("evictions");
	/* 8 cached + 12 > 16 pages: the cached 8 go first. */
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(y, 12 * PAGE, 1, 0,
					      PTL_EQ_NONE),
				PTL_RETAIN, &keep));
	CK(48, ptl_st_proc_status_kb(getpid(), "VmPin"));
	CK_TRUE(counter("evictions") > evictions);
	/* Nothing unused is left to evict: refused, nothing changed. */
	CK_RC(PTL_MD_ILLEGAL, PtlMDBind(ni, ptl_st_md(x, 8 * PAGE, 1, 0,
						      PTL_EQ_NONE),
					PTL_RETAIN, &md));
	CK(48, ptl_st_proc_status_kb(getpid(), "VmPin"));
	/* Within the limit, still fine (and a hit on y's pages). */
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(y + PAGE, PAGE, 1, 0,
					      PTL_EQ_NONE),
				PTL_RETAIN, &md));
	CK(48, ptl_st_proc_status_kb(getpid(), "VmPin"));
	return 0;
}

TEST(rlimit_memlock_evicts_unused_cached_pins_first)
{
	struct ptl_peer p;

	ASSERT_EQ(0, ptl_peer_start(&p, memlock_evicts_unused_first, NULL));
	EXPECT_EQ(0, ptl_peer_wait(&p));
}

static int budget_zero_caches_nothing(struct ptl_chan *ch, void *arg)
{
	char *buf = map_pages(NULL, 8 * PAGE, 0);
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	long base;

	CK_TRUE(buf);
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	base = ptl_st_proc_status_kb(getpid(), "VmPin");
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, 8 * PAGE, 1, 0,
					      PTL_EQ_NONE),
				PTL_RETAIN, &md));
	CK(base + 32, ptl_st_proc_status_kb(getpid(), "VmPin"));
	CK_RC(PTL_OK, PtlMDUnlink(md));
	CK(base, ptl_st_proc_status_kb(getpid(), "VmPin"));
	return 0;
}

TEST(a_zero_budget_caches_no_unused_pin)
{
	long old = ptl_st_read_long(BUDGET_PARAM);
	struct ptl_peer p;
	FILE *f;

	ASSERT_LE(0, old);
	f = fopen(BUDGET_PARAM, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "0\n");
	fclose(f);
	ASSERT_EQ(0, ptl_peer_start(&p, budget_zero_caches_nothing, NULL));
	EXPECT_EQ(0, ptl_peer_wait(&p));
	f = fopen(BUDGET_PARAM, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "%ld\n", old);
	fclose(f);
}

TEST_HARNESS_MAIN
