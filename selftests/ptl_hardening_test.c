// SPDX-License-Identifier: GPL-2.0
/*
 * Hardening before the network: the reproducers of an adversarial review
 * (a hostile local user) and of the reference implementation's programs,
 * each a test that failed before its fix.
 *
 *   - job ids cannot be forged by picking a pid;
 *   - what one user makes the kernel hold is capped (NIs, i.e. pids, and
 *     kernel memory of objects that pin nothing) and charged to its memory
 *     cgroup; RLIMIT_MEMLOCK is checked before anything is allocated;
 *   - device mappings (the EQ pages of /dev/portals itself) are never
 *     pinned;
 *   - a reply lands in any MD, attached or bound, whatever its op bits;
 *   - the library prints where the program points p3_out.
 *
 * Runs as root in a guest with ptl.ko loaded (selftests/run-in-guest.sh);
 * the hostile parts run in children that drop to uid 65534.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/portals.h>
#include <p3api/debug.h>
#include <p3utils.h>

#include "kselftest_harness.h"
#include "ptl_selftest.h"
#include "ptl_raw.h"

#define PAGE		4096UL
#define PARAMS		"/sys/module/ptl/parameters/"
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define NOBODY		65534
#define JOB		1234
#define PT		3

/* ---- small helpers ---- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int write_long(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return write_file(path, buf);
}

/* Drops every privilege for good: a hostile local user from now on. */
static void become(uid_t uid)
{
	CK(0, setresgid(uid, uid, uid));
	CK(0, setresuid(uid, uid, uid));
}

static int ni_status(int fd, uint32_t ni, uint32_t reg, uint64_t *v)
{
	struct ptl_ioc_ni_status a = { .size = sizeof(a), .ni_handle = ni,
				       .reg = reg };
	int rc = ioctl(fd, PTL_IOC_NI_STATUS, &a);

	*v = a.value;
	return rc;
}

static int identity(int fd, uint32_t ni, struct ptl_ioc_ni_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->size = sizeof(*id);
	id->ni_handle = ni;
	return ioctl(fd, PTL_IOC_NI_IDENTITY, id);
}

static int set_jid(int fd, uint32_t jid)
{
	struct ptl_ioc_set_jid j = { .size = sizeof(j), .jid = jid };

	return ioctl(fd, PTL_IOC_SET_JID, &j);
}

/* Runs fn() in a child and returns its exit status (or 128 + signal). */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

/* ---- job ids ---- */

/*
 * The victim: a launched job (jid 1234) whose ACL entry 1 admits "job 1234
 * from any uid", with a put MD on portal PT.
 */
FIXTURE(job) {
	int fd;
	uint32_t ni;
	struct ptl_ioc_ni_identity id;
	char *buf;
};

FIXTURE_SETUP(job)
{
	struct ptl_ioc_ac_entry ace = {
		.size = sizeof(ace), .ac_index = 1, .match_nid = PTL_NID_ANY,
		.match_pid = PTL_PID_ANY, .uid = PTL_UID_ANY, .jid = JOB,
		.pt_index = PTL_PT_INDEX_ANY,
	};
	uint32_t me, md;

	self->buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->fd = dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, set_jid(self->fd, JOB));
	ASSERT_EQ(PTL_OK, ni_init(self->fd, PTL_PID_ANY, &self->ni, NULL));
	ASSERT_EQ(PTL_OK, identity(self->fd, self->ni, &self->id));
	ASSERT_EQ(JOB, self->id.jid);
	ace.ni_handle = self->ni;
	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_AC_ENTRY, &ace));
	ASSERT_EQ(PTL_OK, me_attach(self->fd, self->ni, PT, 0, &me));
	ASSERT_EQ(PTL_OK, md_make(self->fd, me, false, self->buf, PAGE,
				  PTL_MD_OP_PUT, PTL_EQ_NONE, &md));
}

FIXTURE_TEARDOWN(job)
{
	close(self->fd);
}

struct attacker {
	const struct ptl_ioc_ni_identity *victim;
	uint32_t pid;		/* the Portals pid to ask for */
	bool launched;		/* SET_JID JOB before dropping privileges */
};

/* Puts a page of 0xAB into the victim through ACL entry 1. */
static int attack(void *arg)
{
	const struct attacker *a = arg;
	struct ptl_ioc_ni_identity me;
	char *src = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t ni, md;
	int fd = dev_open();

	CK_TRUE(fd >= 0 && src != MAP_FAILED);
	if (a->launched)
		CK(0, set_jid(fd, JOB));	/* as ptlrun does, as root */
	become(NOBODY);
	memset(src, 0xab, PAGE);
	CK(PTL_OK, ni_init(fd, a->pid, &ni, NULL));
	CK(PTL_OK, identity(fd, ni, &me));
	CK(a->launched ? JOB : PTL_JID_NONE, me.jid);
	CK(PTL_OK, md_make(fd, ni, true, src, PAGE, 0, PTL_EQ_NONE, &md));
	{
		struct ptl_ioc_data d = {
			.size = sizeof(d), .op = PTL_DATA_PUT, .md_handle = md,
			.ack_req = PTL_NO_ACK_REQ,
			.target_nid = a->victim->nid,
			.target_pid = a->victim->pid,
			.pt_index = PT, .ac_index = 1,
		};

		CK(PTL_OK, ioctl(fd, PTL_IOC_DATA, &d));
	}
	return 0;
}

/*
 * Another user asks for the pid equal to the job id: once that made its
 * job id 1234, and its put passed the victim's ACL entry.
 */
TEST_F(job, forged_job_id_put_is_refused)
{
	struct attacker a = { .victim = &self->id, .pid = JOB };
	uint64_t denied = 0;

	ASSERT_EQ(0, in_child(attack, &a));
	ASSERT_EQ(PTL_OK, ni_status(self->fd, self->ni,
				    PTL_SR_NAL_REGS_START + 0, &denied));
	EXPECT_EQ(1, denied);
	EXPECT_EQ(-1, ptl_st_memchk(self->buf, 0, PAGE));
}

/* The control: a process the launcher put in job 1234 is admitted. */
TEST_F(job, launched_member_of_the_job_is_admitted)
{
	struct attacker a = { .victim = &self->id, .pid = PTL_PID_ANY,
			      .launched = true };
	uint64_t denied = 0;

	ASSERT_EQ(0, in_child(attack, &a));
	ASSERT_EQ(PTL_OK, ni_status(self->fd, self->ni,
				    PTL_SR_NAL_REGS_START + 0, &denied));
	EXPECT_EQ(0, denied);
	EXPECT_EQ(-1, ptl_st_memchk(self->buf, 0xab, PAGE));
}

TEST(launcher_cannot_set_the_wildcard_or_no_job)
{
	int fd = dev_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, set_jid(fd, PTL_JID_ANY));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, set_jid(fd, PTL_JID_NONE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, set_jid(fd, PTL_JID_NONE - 1));
	close(fd);
}

/* ---- per-user caps ---- */

/* Sets a module parameter for the test; the old value comes back after. */
struct param {
	const char *name;
	long old;
};

static int param_set(struct param *p, const char *name, long v)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	p->name = name;
	p->old = ptl_st_read_long(path);
	return p->old < 0 ? -1 : write_long(path, v);
}

static void param_restore(const struct param *p)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", p->name);
	write_long(path, p->old);
}

#define USER_NIS	4

/* Opens NIs as @uid until refused; returns how many it got. */
static int take_pids(void *arg)
{
	uid_t uid = (uid_t)(uintptr_t)arg;
	int fds[USER_NIS + 1], i, got = 0;
	uint32_t ni;

	become(uid);
	for (i = 0; i <= USER_NIS; i++) {
		int rc;

		fds[i] = dev_open();
		CK_TRUE(fds[i] >= 0);
		rc = ni_init(fds[i], PTL_PID_ANY, &ni, NULL);
		if (rc == PTL_OK)
			got++;
		else
			CK(PTL_NO_SPACE, rc);
	}
	CK(USER_NIS, got);
	/* Giving one back makes room for one more. */
	close(fds[0]);
	CK(PTL_OK, ni_init(fds[USER_NIS], PTL_PID_ANY, &ni, NULL));
	return 0;
}

TEST(one_user_cannot_take_every_pid)
{
	struct param p;
	long nis = ptl_st_counter("nis");

	ASSERT_EQ(0, param_set(&p, "max_user_nis", USER_NIS));
	/* Two users, one after the other: each gets its own share. */
	EXPECT_EQ(0, in_child(take_pids, (void *)(uintptr_t)NOBODY));
	EXPECT_EQ(0, in_child(take_pids, (void *)(uintptr_t)(NOBODY - 1)));
	param_restore(&p);
	EXPECT_EQ(nis, ptl_st_counter("nis"));
}

/* CAP_SYS_RESOURCE overrides the cap, as it does for other per-user caps. */
TEST(privileged_user_is_not_capped)
{
	int fds[USER_NIS + 2], i;
	struct param p;
	uint32_t ni;

	ASSERT_EQ(0, param_set(&p, "max_user_nis", USER_NIS));
	for (i = 0; i < USER_NIS + 2; i++) {
		fds[i] = dev_open();
		ASSERT_LE(0, fds[i]);
		EXPECT_EQ(PTL_OK, ni_init(fds[i], PTL_PID_ANY, &ni, NULL));
	}
	for (i = 0; i < USER_NIS + 2; i++)
		close(fds[i]);
	param_restore(&p);
}

/* ---- memory cgroups ---- */

struct cgroup {
	char path[128];
};

/* A fresh memory cgroup, or -1 if this kernel has none to give. */
static int cgroup_make(struct cgroup *cg, const char *name)
{
	char ctl[160];

	snprintf(cg->path, sizeof(cg->path), CGROUP_ROOT "/%s-%d", name,
		 getpid());
	write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
	if (mkdir(cg->path, 0755) && errno != EEXIST)
		return -1;
	snprintf(ctl, sizeof(ctl), "%s/memory.current", cg->path);
	return access(ctl, R_OK) ? -1 : 0;
}

static long cgroup_read(const struct cgroup *cg, const char *file)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", cg->path, file);
	return ptl_st_read_long(path);
}

/* Moves the calling process into @cg (while still root). */
static void cgroup_join(const struct cgroup *cg)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path);
	CK(0, write_long(path, getpid()));
}

static void cgroup_remove(const struct cgroup *cg)
{
	rmdir(cg->path);
}

/* A hostile user in a memory cgroup with RLIMIT_MEMLOCK 0. */
static void hostile_in(const struct cgroup *cg)
{
	struct rlimit none = { 0, 0 };

	cgroup_join(cg);
	CK(0, setrlimit(RLIMIT_MEMLOCK, &none));
	become(NOBODY);
}

#define EMPTY_SEGS	1024
#define KMEM_CAP	(32L << 20)

/*
 * Iovec MDs of 1,024 empty segments pin nothing, so RLIMIT_MEMLOCK never
 * saw them, yet each costs ~40 KiB of kernel memory (the core's segment
 * table and the glue's page bookkeeping). 4,000 of them once took 160 MB of
 * unaccounted slab. Now they are stopped by max_user_kmem, and what they
 * took is charged to the user's memory cgroup.
 */
static int fill_with_empty_iovecs(void *arg)
{
	const struct cgroup *cg = arg;
	static ptl_md_iovec_t iov[EMPTY_SEGS];
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	long before, after;
	int made = 0, rc = PTL_OK;

	hostile_in(cg);
	CK(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	before = cgroup_read(cg, "memory.current");
	while (made < 4000) {
		rc = PtlMDBind(ni, ptl_st_md(iov, EMPTY_SEGS, PTL_MD_THRESH_INF,
					     PTL_MD_IOVEC, PTL_EQ_NONE),
			       PTL_RETAIN, &md);
		if (rc != PTL_OK)
			break;
		made++;
	}
	after = cgroup_read(cg, "memory.current");
	fprintf(stderr, "# %d empty iovec MDs until %s; memcg +%ld KiB (%ld B each)\n",
		made, PtlErrorStr(rc), (after - before) >> 10,
		made ? (after - before) / made : 0);
	CK(PTL_NO_SPACE, rc);
	CK_TRUE(made > 100 && made < 4000);
	/* Both tables (16 KiB + 24 KiB) of every MD reached the memcg. */
	CK_TRUE(after - before >= (long)made * (16 + 24) * 1024 * 95 / 100);
	PtlFini();
	return 0;
}

TEST(empty_iovec_mds_are_capped_and_charged_to_the_memcg)
{
	struct cgroup cg;
	struct param p;
	long mds = ptl_st_counter("mds");

	if (cgroup_make(&cg, "ptl-kmem"))
		SKIP(return, "no memory cgroup controller");
	ASSERT_EQ(0, param_set(&p, "max_user_kmem", KMEM_CAP));
	EXPECT_EQ(0, in_child(fill_with_empty_iovecs, &cg));
	param_restore(&p);
	cgroup_remove(&cg);
	EXPECT_EQ(mds, ptl_st_counter("mds"));
}

/*
 * An MD over 512 MiB of untouched memory needs a 1 MiB page array. With
 * RLIMIT_MEMLOCK 0 it is refused, and the array must never have been
 * allocated: the charge comes first.
 */
#define BIG_REGION	(512UL << 20)

static int refused_before_allocating(void *arg)
{
	const struct cgroup *cg = arg;
	void *big = mmap(NULL, BIG_REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	long start, peak;

	CK_TRUE(big != MAP_FAILED);
	hostile_in(cg);
	CK(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	start = cgroup_read(cg, "memory.current");
	CK(PTL_MD_ILLEGAL, PtlMDBind(ni, ptl_st_md(big, BIG_REGION,
						   PTL_MD_THRESH_INF, 0,
						   PTL_EQ_NONE),
				     PTL_RETAIN, &md));
	peak = cgroup_read(cg, "memory.peak");
	fprintf(stderr, "# memcg peak %ld KiB above the start\n",
		(peak - start) >> 10);
	CK_TRUE(peak - start < 512 * 1024);
	PtlFini();
	return 0;
}

TEST(rlimit_memlock_is_checked_before_the_page_array_is_allocated)
{
	struct cgroup cg;

	if (cgroup_make(&cg, "ptl-memlock"))
		SKIP(return, "no memory cgroup controller");
	if (cgroup_read(&cg, "memory.peak") < 0) {
		cgroup_remove(&cg);
		SKIP(return, "no memory.peak in this kernel");
	}
	EXPECT_EQ(0, in_child(refused_before_allocating, &cg));
	cgroup_remove(&cg);
}

/* ---- device mappings ---- */

/*
 * The EQ ring and control page of /dev/portals are the driver's pages: an
 * MD over them (the control page is even mapped writable) must be refused
 * for any kind of pin, or a process could long-term pin its own EQ's
 * kernel pages and have data land in them.
 */
TEST(md_over_a_device_mapping_is_refused)
{
	long mds = ptl_st_counter("mds");
	uint32_t ni, md;
	struct eq eq;
	int fd = dev_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(PTL_OK, ni_init(fd, PTL_PID_ANY, &ni, NULL));
	ASSERT_EQ(0, eq_alloc(fd, ni, 64, &eq));
	EXPECT_EQ(PTL_MD_ILLEGAL, md_make(fd, ni, true, eq.ctl, PAGE,
					  PTL_MD_OP_PUT, PTL_EQ_NONE, &md));
	EXPECT_EQ(PTL_MD_ILLEGAL, md_make(fd, ni, true, eq.ctl, PAGE,
					  PTL_MD_OP_GET, PTL_EQ_NONE, &md));
	EXPECT_EQ(PTL_MD_ILLEGAL, md_make(fd, ni, true, eq.ring, PAGE,
					  PTL_MD_OP_GET, PTL_EQ_NONE, &md));
	EXPECT_EQ(mds, ptl_st_counter("mds"));
	close(fd);
}

/* ---- replies ---- */

/*
 * The op bits of an MD govern incoming requests only: a get's reply is not
 * an incoming put, so it lands in an MD attached to an ME that accepts
 * only gets (it used to fail with PTL_NI_FAIL).
 */
TEST(reply_lands_in_an_attached_md_without_op_put)
{
	static char src[256], dst[256];
	ptl_handle_me_t me_src, me_dst;
	ptl_handle_md_t md_src, md_dst;
	ptl_process_id_t self_id;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_event_t ev;

	ptl_st_fill(src, sizeof(src), 7);
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlGetId(ni, &self_id));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq));
	ASSERT_EQ(PTL_OK, PtlMEAttach(ni, PT, ptl_st_any(), 0, 0, PTL_RETAIN,
				      PTL_INS_AFTER, &me_src));
	ASSERT_EQ(PTL_OK, PtlMDAttach(me_src, ptl_st_md(src, sizeof(src),
							PTL_MD_THRESH_INF,
							PTL_MD_OP_GET,
							PTL_EQ_NONE),
				      PTL_RETAIN, &md_src));
	ASSERT_EQ(PTL_OK, PtlMEAttach(ni, PT + 1, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &me_dst));
	ASSERT_EQ(PTL_OK, PtlMDAttach(me_dst, ptl_st_md(dst, sizeof(dst),
							PTL_MD_THRESH_INF,
							PTL_MD_OP_GET, eq),
				      PTL_RETAIN, &md_dst));

	/* A get's initiator sees only the reply's events. */
	ASSERT_EQ(PTL_OK, PtlGet(md_dst, self_id, PT, 0, 0, 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_REPLY_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_REPLY_END, ev.type);
	EXPECT_EQ(PTL_NI_OK, ev.ni_fail_type);
	EXPECT_EQ(sizeof(dst), ev.mlength);
	EXPECT_EQ(-1, ptl_st_check(dst, sizeof(dst), 7, 0));
	PtlFini();
}

/* ---- p3_out ---- */

/* The reference programs point p3_out at a file ("-e file"). */
TEST(library_prints_where_p3_out_points)
{
	ptl_handle_ni_t ni;
	char line[256] = "";
	FILE *f = tmpfile();

	ASSERT_NE(NULL, f);
	ASSERT_EQ(stderr, p3_out);	/* the default */
	p3_out = f;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlTblDump(ni, -1));
	p3_print("%s\n", "and the helpers");
	p3_flush();
	p3_out = stderr;
	rewind(f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_NE(NULL, strstr(line, "portal table"));
	while (fgets(line, sizeof(line), f))
		;
	EXPECT_STREQ("and the helpers\n", line);
	fclose(f);
	PtlFini();
}

TEST_HARNESS_MAIN
