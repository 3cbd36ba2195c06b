// SPDX-License-Identifier: GPL-2.0
/*
 * Findings of a kernel review of ptl.ko, as tests over the raw ioctl ABI.
 *
 * "Bad input gets a clear error and loses nothing": an ioctl whose
 * argument struct is readable but not writable (a const struct in .rodata,
 * or a page another thread made read-only) gets EFAULT from the copy-out
 * in ptl_ioctl(). The object the handler created must not outlive that
 * error, or a process can pin memory (and allocate EQ rings) it holds no
 * handle for, up to its limits, until it closes the device.
 *
 * The later cases race PtlNIFini and PtlEQFree against calls that look
 * the objects up or create them, and flip the argument page read-only
 * while the handler runs (the undo path of the dispatcher).
 *
 * Runs as root in a guest with ptl.ko loaded (selftests/run-in-guest.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/portals.h>
#include <p3api/types.h>
#include <p3api/misc.h>
#include <p3/errno.h>
#include <p3/nal_types.h>

#include "kselftest_harness.h"
#include "ptl_selftest.h"

#define PAGE		4096UL
#define SYSFS		"/sys/class/misc/portals/"

/*
 * Copies @len bytes to @dst unless the page is read-only right now (a
 * racing mprotect): false then. The write goes through the kernel, so a
 * read-only page gives EFAULT instead of SIGSEGV.
 */
static bool memcpy_ok(void *dst, const void *src, size_t len)
{
	static int fd[2] = { -1, -1 };

	if (fd[0] < 0 && pipe(fd))
		return false;
	if (write(fd[1], src, len) != (ssize_t)len)
		return false;
	if (read(fd[0], dst, len) == (ssize_t)len)
		return true;
	/* Drain what could not be read into @dst. */
	{
		char tmp[1024];

		if (read(fd[0], tmp, len) < 0)
			return false;
	}
	return false;
}

/* A copy of @len bytes of @src in a page of its own, then made read-only. */
static void *readonly_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, PAGE, PROT_READ)) {
		munmap(p, PAGE);
		return NULL;
	}
	return p;
}

FIXTURE(ro) {
	int fd;
	uint32_t ni;
};

FIXTURE_SETUP(ro)
{
	struct ptl_ioc_ni_init a = { .size = sizeof(a),
				     .iface = PTL_NALTYPE_LINUX0,
				     .pid = PTL_PID_ANY };

	self->fd = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_NI_INIT, &a));
	self->ni = a.ni_handle;
}

FIXTURE_TEARDOWN(ro)
{
	close(self->fd);
}

/* PtlMDBind with a read-only argument: EFAULT, and nothing stays pinned. */
TEST_F(ro, md_bind_efault_pins_nothing)
{
	char *buf = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct ptl_ioc_md_attach a = {
		.size = sizeof(a), .flags = PTL_MD_ATTACH_BIND,
		.handle = self->ni, .unlink = PTL_RETAIN,
		.md = { .start = (uintptr_t)buf, .length = 16 * PAGE,
			.threshold = PTL_MD_THRESH_INF,
			.eq_handle = PTL_EQ_NONE },
	};
	long mds = ptl_st_counter("mds");
	void *ro;

	ASSERT_NE(MAP_FAILED, buf);
	ro = readonly_copy(&a, sizeof(a));
	ASSERT_NE(NULL, ro);
	ASSERT_EQ(0, ptl_st_proc_status_kb(getpid(), "VmPin"));

	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_MD_ATTACH, ro));
	EXPECT_EQ(EFAULT, errno);
	/* The caller never learnt a handle: nothing may remain. */
	EXPECT_EQ(0, ptl_st_proc_status_kb(getpid(), "VmPin"));
	EXPECT_EQ(mds, ptl_st_counter("mds"));
}

/* PtlEQAlloc with a read-only argument: EFAULT, and no ring is left. */
TEST_F(ro, eq_alloc_efault_allocates_nothing)
{
	struct ptl_ioc_eq_alloc a = { .size = sizeof(a),
				      .ni_handle = self->ni, .count = 1024 };
	long eqs = ptl_st_counter("eqs");
	void *ro = readonly_copy(&a, sizeof(a));

	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_EQ_ALLOC, ro));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(eqs, ptl_st_counter("eqs"));
}

/* PtlMEAttach with a read-only argument: EFAULT, and no ME is left. */
TEST_F(ro, me_attach_efault_leaves_no_me)
{
	struct ptl_ioc_me_attach a = {
		.size = sizeof(a), .handle = self->ni, .pt_index = 3,
		.match_nid = PTL_NID_ANY, .match_pid = PTL_PID_ANY,
		.unlink = PTL_RETAIN, .position = PTL_INS_AFTER,
	};
	long objs = ptl_st_counter("core_objects");
	void *ro = readonly_copy(&a, sizeof(a));

	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_ME_ATTACH, ro));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(objs, ptl_st_counter("core_objects"));
}

/*
 * The argument page turns read-only while the handler runs (another
 * thread's mprotect): the copy-out fails after the MD was created, and
 * the dispatcher's undo hook must destroy it. Whatever the interleaving,
 * every EFAULT leaves nothing and every success yields a handle.
 */
struct flipper {
	void *page;
	volatile bool stop;
};

static void *flip_protection(void *arg)
{
	struct flipper *f = arg;

	while (!f->stop) {
		mprotect(f->page, PAGE, PROT_READ);
		mprotect(f->page, PAGE, PROT_READ | PROT_WRITE);
	}
	return NULL;
}

TEST_F(ro, mprotect_race_with_attach_leaks_nothing)
{
	char *buf = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct flipper f = { .stop = false };
	struct ptl_ioc_md_attach *a;
	struct ptl_ioc_eq_alloc *e;
	long mds = ptl_st_counter("mds"), eqs = ptl_st_counter("eqs");
	struct ptl_st_rounds rounds = ptl_st_rounds(3000);
	int ok = 0, efault = 0;
	pthread_t t;

	ASSERT_NE(MAP_FAILED, buf);
	f.page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, f.page);
	a = f.page;
	e = (struct ptl_ioc_eq_alloc *)((char *)f.page + 1024);
	ASSERT_EQ(0, pthread_create(&t, NULL, flip_protection, &f));
	while (ptl_st_round(&rounds)) {
		struct ptl_ioc_md_attach init = {
			.size = sizeof(init), .flags = PTL_MD_ATTACH_BIND,
			.handle = self->ni, .unlink = PTL_RETAIN,
			.md = { .start = (uintptr_t)buf, .length = 4 * PAGE,
				.threshold = PTL_MD_THRESH_INF,
				.eq_handle = PTL_EQ_NONE },
		};
		struct ptl_ioc_eq_alloc einit = { .size = sizeof(einit),
						  .ni_handle = self->ni,
						  .count = 64 };
		struct ptl_ioc_handle h = { .size = sizeof(h) };
		bool is_eq = rounds.done & 1;
		int rc;

		/* The page may be read-only right now: retry the setup. */
		while (is_eq ? !memcpy_ok(e, &einit, sizeof(einit)) :
			       !memcpy_ok(a, &init, sizeof(init)))
			;
		rc = ioctl(self->fd, is_eq ? PTL_IOC_EQ_ALLOC :
					     PTL_IOC_MD_ATTACH,
			   is_eq ? (void *)e : (void *)a);
		if (rc == -1) {
			ASSERT_EQ(EFAULT, errno);
			efault++;
			continue;
		}
		ASSERT_EQ(PTL_OK, rc);
		ok++;
		h.handle = is_eq ? e->eq_handle : a->md_handle;
		ASSERT_EQ(PTL_OK, ioctl(self->fd, is_eq ? PTL_IOC_EQ_FREE :
						    PTL_IOC_MD_UNLINK, &h));
	}
	f.stop = true;
	pthread_join(t, NULL);
	TH_LOG("%d created and freed, %d EFAULT", ok, efault);
	EXPECT_EQ(mds, ptl_st_counter("mds"));
	EXPECT_EQ(eqs, ptl_st_counter("eqs"));
	/* At most buf's pages, kept by the pin cache until close. */
	EXPECT_GE(4 * PAGE / 1024, ptl_st_proc_status_kb(getpid(), "VmPin"));
	close(self->fd);
	self->fd = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	EXPECT_EQ(0, ptl_st_proc_status_kb(getpid(), "VmPin"));
}

/*
 * PtlMDUpdate whose old_iov cannot be written: PTL_SEGV, decided before
 * the MD is touched; the MD must still describe the old region.
 */
TEST_F(ro, md_update_efault_leaves_the_md_alone)
{
	char *a = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ptl_md_iovec_t iov[2] = { { a, PAGE }, { a + 2 * PAGE, PAGE } };
	struct ptl_ioc_md_attach m = {
		.size = sizeof(m), .flags = PTL_MD_ATTACH_BIND,
		.handle = self->ni, .unlink = PTL_RETAIN,
		.md = { .start = (uintptr_t)iov, .length = 2,
			.threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_IOVEC, .eq_handle = PTL_EQ_NONE },
	};
	struct ptl_ioc_md_update u = {
		.size = sizeof(u),
		.flags = PTL_MD_UPDATE_OLD | PTL_MD_UPDATE_NEW,
		.eq_handle = PTL_EQ_NONE, .old_iov_cap = 2,
		.new_md = { .start = (uintptr_t)(a + 3 * PAGE), .length = PAGE,
			    .threshold = PTL_MD_THRESH_INF,
			    .eq_handle = PTL_EQ_NONE },
	};
	struct ptl_ioc_md_update q = { .size = sizeof(q),
				       .flags = PTL_MD_UPDATE_OLD,
				       .eq_handle = PTL_EQ_NONE };
	ptl_md_iovec_t zero[2] = {};
	void *ro = readonly_copy(zero, sizeof(zero));

	ASSERT_NE(MAP_FAILED, a);
	ASSERT_NE(NULL, ro);
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_MD_ATTACH, &m));
	u.md_handle = m.md_handle;
	u.old_iov = (uintptr_t)ro;

	EXPECT_EQ(PTL_SEGV, ioctl(self->fd, PTL_IOC_MD_UPDATE, &u));

	q.md_handle = m.md_handle;
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_MD_UPDATE, &q));
	EXPECT_EQ((uintptr_t)iov, q.old_md.start);
	EXPECT_EQ(PTL_MD_IOVEC, q.old_md.options & PTL_MD_IOVEC);
}

/*
 * An iovec MD with no entries is legal and pins nothing (contract 15).
 * ptl_mem_pin() hands ptl_mem_create() an uninitialised stack segment in
 * that case; only CONFIG_INIT_STACK_ALL_ZERO makes this pass.
 */
TEST_F(ro, empty_iovec_md_pins_nothing)
{
	ptl_md_iovec_t iov[1];
	struct ptl_ioc_md_attach m = {
		.size = sizeof(m), .flags = PTL_MD_ATTACH_BIND,
		.handle = self->ni, .unlink = PTL_RETAIN,
		.md = { .start = (uintptr_t)iov, .length = 0,
			.threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_IOVEC, .eq_handle = PTL_EQ_NONE },
	};

	EXPECT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_MD_ATTACH, &m));
	EXPECT_EQ(0, ptl_st_proc_status_kb(getpid(), "VmPin"));
}

/*
 * A get-only MD is pinned read-only (FOLL_LONGTERM without FOLL_WRITE).
 * Over anonymous memory the process has not written yet, that pins the
 * shared zero page; the process's later writes go to a fresh COW page the
 * MD never sees, and every get is served zeros. (Touching src before the
 * attach makes this pass.) Attaching first and filling afterwards is the
 * usual order, so it must work.
 */
TEST_F(ro, get_only_md_attached_before_fill_serves_the_data)
{
	struct ptl_ioc_ni_init ia = { .size = sizeof(ia),
				      .iface = PTL_NALTYPE_LINUX0,
				      .pid = PTL_PID_ANY };
	struct ptl_ioc_ni_identity id = { .size = sizeof(id),
					  .ni_handle = self->ni };
	struct ptl_ioc_me_attach me = {
		.size = sizeof(me), .handle = self->ni, .pt_index = 0,
		.match_nid = PTL_NID_ANY, .match_pid = PTL_PID_ANY,
		.unlink = PTL_RETAIN, .position = PTL_INS_AFTER,
	};
	char *src = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct ptl_ioc_md_attach tmd = {
		.size = sizeof(tmd), .unlink = PTL_RETAIN,
		.md = { .start = (uintptr_t)src, .length = PAGE,
			.threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_GET, .eq_handle = PTL_EQ_NONE },
	};
	struct ptl_ioc_md_attach imd = {
		.size = sizeof(imd), .flags = PTL_MD_ATTACH_BIND,
		.unlink = PTL_RETAIN,
		.md = { .start = (uintptr_t)dst, .length = PAGE,
			.threshold = PTL_MD_THRESH_INF,
			.eq_handle = PTL_EQ_NONE },
	};
	struct ptl_ioc_data d = { .size = sizeof(d), .op = PTL_DATA_GET,
				  .ack_req = PTL_NO_ACK_REQ };
	int fd2 = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_NE(MAP_FAILED, src);
	ASSERT_NE(MAP_FAILED, dst);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_NI_IDENTITY, &id));
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_ME_ATTACH, &me));
	tmd.handle = me.me_handle;
	/* src is untouched: its pte (if any) maps the shared zero page. */
	ASSERT_EQ(0, src[0]);
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_MD_ATTACH, &tmd));
	memset(src, 'X', PAGE);

	ASSERT_EQ(PTL_OK, ioctl(fd2, PTL_IOC_NI_INIT, &ia));
	imd.handle = ia.ni_handle;
	ASSERT_EQ(PTL_OK, ioctl(fd2, PTL_IOC_MD_ATTACH, &imd));
	d.md_handle = imd.md_handle;
	d.target_nid = id.nid;
	d.target_pid = id.pid;
	ASSERT_EQ(PTL_OK, ioctl(fd2, PTL_IOC_DATA, &d));
	EXPECT_EQ('X', dst[0]);
	EXPECT_EQ('X', dst[PAGE - 1]);
	close(fd2);
}

/*
 * PtlNIFini racing with lookups of the same NI: the lookup must not read
 * the core NI that the last put frees (only struct ptl_ni is RCU-freed).
 * Without KASAN a use-after-free shows only as garbage or a crash; this
 * keeps the window busy so the guest's splat detector has a chance.
 */
struct ni_race {
	int fd;
	volatile uint32_t ni;
	volatile bool stop;
};

static void *ni_reinit_loop(void *arg)
{
	struct ni_race *r = arg;

	while (!r->stop) {
		struct ptl_ioc_ni_init a = { .size = sizeof(a),
					     .iface = PTL_NALTYPE_LINUX0,
					     .pid = PTL_PID_ANY };
		struct ptl_ioc_ni_fini f = { .size = sizeof(f) };

		if (ioctl(r->fd, PTL_IOC_NI_INIT, &a) != PTL_OK)
			break;
		r->ni = a.ni_handle;
		f.ni_handle = a.ni_handle;
		ioctl(r->fd, PTL_IOC_NI_FINI, &f);
	}
	return NULL;
}

TEST(ni_lookup_races_ni_fini)
{
	struct ni_race r = { .fd = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC) };
	long nis = ptl_st_counter("nis");
	struct ptl_st_rounds rounds = ptl_st_rounds(20000);
	pthread_t t;
	int found = 0;

	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, ni_reinit_loop, &r));
	while (ptl_st_round(&rounds)) {
		bool alloc = rounds.done & 1;
		struct ptl_ioc_ni_status st = { .size = sizeof(st),
						.ni_handle = r.ni,
						.reg = PTL_SR_DROP_COUNT };
		struct ptl_ioc_eq_alloc e = { .size = sizeof(e),
					      .ni_handle = r.ni, .count = 2 };
		int rc = ioctl(r.fd, alloc ? PTL_IOC_EQ_ALLOC :
					     PTL_IOC_NI_STATUS,
			       alloc ? (void *)&e : (void *)&st);

		ASSERT_TRUE(rc == PTL_OK || rc == PTL_NI_INVALID);
		found += rc == PTL_OK;
	}
	r.stop = true;
	pthread_join(t, NULL);
	TH_LOG("%d of %ld lookups found the NI", found, rounds.done);
	close(r.fd);
	EXPECT_EQ(nis, ptl_st_counter("nis"));
}

/*
 * PtlEQFree of a handle that PtlEQAlloc has not returned yet (handles are
 * predictable: the next one reuses the index with the next generation).
 * The creator must not touch the EQ memory after the table's reference is
 * gone.
 */
struct eq_race {
	int fd;
	uint32_t ni;
	volatile uint32_t last;
	volatile bool stop;
};

static void *eq_free_ahead(void *arg)
{
	struct eq_race *r = arg;

	while (!r->stop) {
		struct ptl_ioc_handle h = { .size = sizeof(h) };
		uint32_t last = r->last;
		int g;

		/* The next generations of the last handle's index. */
		for (g = 1; g <= 2; g++) {
			h.handle = (last & 0x1fffff) |
				   ((((last >> 21) + g) & 0x7ff) << 21);
			ioctl(r->fd, PTL_IOC_EQ_FREE, &h);
		}
	}
	return NULL;
}

TEST_F(ro, eq_alloc_races_eq_free_of_its_handle)
{
	struct eq_race r = { .fd = self->fd, .ni = self->ni };
	struct ptl_st_rounds rounds = ptl_st_rounds(5000);
	long eqs = ptl_st_counter("eqs");
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, eq_free_ahead, &r));
	while (ptl_st_round(&rounds)) {
		struct ptl_ioc_eq_alloc e = { .size = sizeof(e),
					      .ni_handle = self->ni,
					      .count = 2 };
		struct ptl_ioc_handle h = { .size = sizeof(h) };
		int rc = ioctl(self->fd, PTL_IOC_EQ_ALLOC, &e);

		ASSERT_EQ(PTL_OK, rc);
		r.last = e.eq_handle;
		h.handle = e.eq_handle;
		rc = ioctl(self->fd, PTL_IOC_EQ_FREE, &h);
		ASSERT_TRUE(rc == PTL_OK || rc == PTL_EQ_INVALID);
	}
	r.stop = true;
	pthread_join(t, NULL);
	ptl_st_rounds_done(&rounds, "EQ allocations raced");
	EXPECT_EQ(eqs, ptl_st_counter("eqs"));
}

TEST_HARNESS_MAIN
