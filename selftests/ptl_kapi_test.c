// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel API (include/ptl/kapi.h), driven through its test client
 * ptl_kapi_test.ko (selftests/kapi/) and its debugfs control file:
 *
 *  - every in-kernel case (kernel client against kernel client), one TAP
 *    line each, any "not ok" fails the test with its reason;
 *  - a client module pins ptl.ko: rmmod ptl is refused while it is loaded;
 *  - a client unloaded with an NI open has it finalized (pid free again,
 *    ptl.ko's counters back);
 *  - a user process and a kernel client exchange puts, gets and a getput
 *    in both directions, with the events each side must see. With
 *    PTL_PEER_NETNS set (selftests/run-net-tests.sh) the process runs in
 *    that namespace, another Portals node, so everything crosses the wire
 *    through ptl_rtscts, and the kernel's handler runs in softirq.
 *
 * The module is ptl_kapi_test.ko in PTL_MODULE_DIR (default: the
 * repository root, two levels above this binary).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/syscall.h>

#include <kselftest_harness.h>
#include "ptl_selftest.h"

#define KT_CTL		"/sys/kernel/debug/ptl_kapi_test/ctl"
#define KT_PID		640
#define KT_LEAK_PID	641
#define KT_OUT		65536

static char kt_out[KT_OUT];

/* Byte i of pattern @seed, as the module computes it (kt_pattern). */
static unsigned char kt_pat(unsigned int seed, size_t i)
{
	return (unsigned char)(i * seed + (seed >> 4));
}

static void kt_fill(void *buf, size_t len, unsigned int seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = kt_pat(seed, i);
}

static long kt_diff(const void *buf, size_t len, unsigned int seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != kt_pat(seed, i))
			return (long)i;
	return -1;
}

static void kt_module_path(char *path, size_t n)
{
	const char *dir = getenv("PTL_MODULE_DIR");
	char exe[PATH_MAX - 32];
	ssize_t len;

	if (dir && *dir) {
		snprintf(path, n, "%s/ptl_kapi_test.ko", dir);
		return;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	/* build/selftests/ptl_kapi_test -> the repository root */
	for (int i = 0; i < 3; i++) {
		char *slash = strrchr(exe, '/');

		if (slash)
			*slash = '\0';
	}
	snprintf(path, n, "%s/ptl_kapi_test.ko", exe);
}

/* 0 loaded, 1 not available (skip), -1 failed. */
static int kt_load(void)
{
	char path[PATH_MAX];
	int fd, rc;

	kt_module_path(path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	rc = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	if (rc && errno == EEXIST)
		return 0;
	if (rc)
		fprintf(stderr, "# loading %s: %s\n", path, strerror(errno));
	return rc ? -1 : 0;
}

static int kt_unload(void)
{
	return syscall(SYS_delete_module, "ptl_kapi_test", O_NONBLOCK);
}

/* Runs one command; its output is in kt_out. Returns write()'s errno. */
static int kt_cmd(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	ssize_t n;
	int fd, err = 0;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	kt_out[0] = '\0';
	fd = open(KT_CTL, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, line, strlen(line)) < 0)
		err = errno;
	n = pread(fd, kt_out, sizeof(kt_out) - 1, 0);
	kt_out[n > 0 ? n : 0] = '\0';
	close(fd);
	return err;
}

/* The value of "key=N" in the last output, or -1. */
static long kt_field(const char *key)
{
	char pat[64];
	const char *at;

	snprintf(pat, sizeof(pat), "%s=", key);
	at = strstr(kt_out, pat);
	return at ? strtol(at + strlen(pat), NULL, 10) : -1;
}

static const char *kt_counters[] = { "nis", "mds", "core_objects" };

static void kt_read_counters(long *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(kt_counters); i++)
		c[i] = ptl_st_counter(kt_counters[i]);
}

#define KT_LOAD() do { \
	int __l = kt_load(); \
	if (__l > 0) \
		SKIP(return, "ptl_kapi_test.ko not found"); \
	ASSERT_EQ(0, __l); \
} while (0)

TEST(kernel_client_cases)
{
	long before[3], after[3];
	char *line, *save = NULL;
	int failed = 0, passed = 0, err;

	kt_read_counters(before);
	KT_LOAD();
	err = kt_cmd("selftest");
	for (line = strtok_r(kt_out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		TH_LOG("%s", line);
		if (!strncmp(line, "not ok", 6))
			failed++;
		else if (!strncmp(line, "ok", 2))
			passed++;
	}
	EXPECT_EQ(0, failed);
	EXPECT_EQ(10, passed);
	EXPECT_EQ(0, err);
	ASSERT_EQ(0, kt_unload());
	kt_read_counters(after);
	for (size_t i = 0; i < ARRAY_SIZE(kt_counters); i++) {
		EXPECT_EQ(before[i], after[i]) {
			TH_LOG("counter %s", kt_counters[i]);
		}
	}
}

TEST(client_module_pins_ptl)
{
	KT_LOAD();
	EXPECT_EQ(0, access("/sys/module/ptl/holders/ptl_kapi_test", F_OK));
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "ptl", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(0, access("/dev/portals", F_OK));
	ASSERT_EQ(0, kt_unload());
}

TEST(unload_finalizes_open_nis)
{
	ptl_handle_ni_t ni;
	long nis;

	KT_LOAD();
	nis = ptl_st_counter("nis");
	ASSERT_EQ(0, kt_cmd("leak %d", KT_LEAK_PID)) TH_LOG("%s", kt_out);
	EXPECT_EQ(nis + 1, ptl_st_counter("nis"));
	/* The pid is the kernel client's while it lives ... */
	ASSERT_EQ(PTL_PID_INVALID, ptl_st_open(KT_LEAK_PID, NULL, NULL, &ni));
	ASSERT_EQ(0, kt_unload());
	/* ... and free once its module is gone. */
	EXPECT_EQ(nis, ptl_st_counter("nis"));
	ASSERT_EQ(PTL_OK, ptl_st_open(KT_LEAK_PID, NULL, NULL, &ni));
	EXPECT_EQ(PTL_OK, PtlNIFini(ni));
	PtlFini();
}

/* The next event of @kind on @eq (others skipped); exits on failure. */
static void kt_wait(ptl_handle_eq_t eq, ptl_event_kind_t kind,
		    ptl_event_t *ev)
{
	do {
		CK_RC(PTL_OK, ptl_st_next(eq, ev, PTL_ST_TIMEOUT_MS));
		CK(PTL_NI_OK, ev->ni_fail_type);
	} while (ev->type != kind);
}

static ptl_handle_md_t kt_bind(ptl_handle_ni_t ni, void *buf, size_t len,
			       ptl_handle_eq_t eq)
{
	ptl_md_t md = ptl_st_md(buf, len, PTL_MD_THRESH_INF, 0, eq);
	ptl_handle_md_t h;

	CK_RC(PTL_OK, PtlMDBind(ni, md, PTL_RETAIN, &h));
	return h;
}

/* The process's side: puts, gets and a getput to the kernel server. */
static void kt_user_initiates(ptl_handle_ni_t ni, ptl_handle_eq_t eq,
			      ptl_process_id_t srv)
{
	static unsigned char put[10092], get[8000], nb[8] = "newbytes", ob[8];
	ptl_event_t ev;

	kt_fill(put, sizeof(put), 13);
	CK_RC(PTL_OK, PtlPut(kt_bind(ni, put, sizeof(put), eq), PTL_ACK_REQ,
			     srv, 9, 0, 0x10, 0, 0xfeed));
	kt_wait(eq, PTL_EVENT_ACK, &ev);
	CK(sizeof(put), ev.mlength);
	CK(srv.pid, ev.initiator.pid);
	CK(0, ev.uid);
	CK_RC(PTL_OK, PtlGet(kt_bind(ni, get, sizeof(get), eq), srv, 9, 0,
			     0x20, 0));
	kt_wait(eq, PTL_EVENT_REPLY_END, &ev);
	CK(sizeof(get), ev.mlength);
	CK(-1, kt_diff(get, sizeof(get), 7));
	CK_RC(PTL_OK, PtlGetPut(kt_bind(ni, ob, 8, eq), kt_bind(ni, nb, 8, eq),
				srv, 9, 0, 0x30, 0, 0));
	kt_wait(eq, PTL_EVENT_REPLY_END, &ev);
	CK(-1, kt_diff(ob, 8, 3));
	CK_RC(PTL_OK, PtlGet(kt_bind(ni, ob, 8, eq), srv, 9, 0, 0x30, 0));
	kt_wait(eq, PTL_EVENT_REPLY_END, &ev);
	CK(0, memcmp(ob, "newbytes", 8));
}

/* What the kernel put and got back, seen from the process. */
static void kt_kernel_initiates(ptl_handle_ni_t ni, ptl_handle_eq_t eq,
				ptl_process_id_t srv, ptl_process_id_t me)
{
	static unsigned char back[10092], serve[4096];
	ptl_handle_me_t me_back, me_serve;
	ptl_handle_md_t h;
	ptl_event_t ev;
	ptl_md_t md;

	kt_fill(serve, sizeof(serve), 11);
	CK_RC(PTL_OK, PtlMEAttach(ni, 10, srv, 0x40, 0, PTL_RETAIN,
				  PTL_INS_AFTER, &me_back));
	md = ptl_st_md(back, sizeof(back), 1, PTL_MD_OP_PUT, eq);
	CK_RC(PTL_OK, PtlMDAttach(me_back, md, PTL_UNLINK, &h));
	CK_RC(PTL_OK, PtlMEAttach(ni, 11, srv, 0x50, 0, PTL_RETAIN,
				  PTL_INS_AFTER, &me_serve));
	md = ptl_st_md(serve, sizeof(serve), 1, PTL_MD_OP_GET, eq);
	CK_RC(PTL_OK, PtlMDAttach(me_serve, md, PTL_UNLINK, &h));
	if (kt_cmd("client %u %u %u", KT_PID, me.nid, me.pid)) {
		fprintf(stderr, "# client: %s", kt_out);
		exit(PTL_ST_FAIL_CODE);
	}
	kt_wait(eq, PTL_EVENT_PUT_END, &ev);
	CK(sizeof(back), ev.mlength);
	CK(srv.nid, ev.initiator.nid);
	CK(srv.pid, ev.initiator.pid);
	CK(0, ev.uid);
	CK(PTL_JID_NONE, ev.jid);
	CK(0xbeef, ev.hdr_data);
	CK(-1, kt_diff(back, sizeof(back), 13));
	kt_wait(eq, PTL_EVENT_GET_END, &ev);
	CK(sizeof(serve), ev.mlength);
}

/* The user half, in a child that may live on the other node. */
static void kt_user_side(ptl_process_id_t srv)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_process_id_t me;

	ptl_st_enter_peer_node();
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	CK_RC(PTL_OK, PtlGetId(ni, &me));
	CK_RC(PTL_OK, PtlEQAlloc(ni, 256, PTL_EQ_HANDLER_NONE, &eq));
	kt_user_initiates(ni, eq, srv);
	kt_kernel_initiates(ni, eq, srv, me);
	CK_RC(PTL_OK, PtlNIFini(ni));
	PtlFini();
	exit(0);
}

TEST(user_process_and_kernel_client)
{
	ptl_process_id_t srv;
	long before[3], after[3];
	int status;
	pid_t child;

	kt_read_counters(before);
	KT_LOAD();
	ASSERT_EQ(0, kt_cmd("serve %d", KT_PID)) TH_LOG("%s", kt_out);
	ASSERT_EQ(2, sscanf(kt_out, "nid %u pid %u", &srv.nid, &srv.pid));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		kt_user_side(srv);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("the process's side failed");
	ASSERT_EQ(0, kt_cmd("status %d", KT_PID));
	TH_LOG("kernel side: %s", kt_out);
	EXPECT_EQ(1, kt_field("put_end"));
	EXPECT_EQ(2, kt_field("get_end"));
	EXPECT_EQ(1, kt_field("getput_end"));
	EXPECT_NE(NULL, strstr(kt_out, "put_data=ok"));
	/* From another node the handler runs in the receive softirq. */
	if (ptl_st_two_nodes()) {
		EXPECT_LT(0, kt_field("softirq"));
	} else {
		EXPECT_EQ(0, kt_field("softirq"));
	}
	EXPECT_EQ(0, kt_cmd("stop %d", KT_PID));
	ASSERT_EQ(0, kt_unload());
	kt_read_counters(after);
	for (size_t i = 0; i < ARRAY_SIZE(kt_counters); i++) {
		EXPECT_EQ(before[i], after[i]) {
			TH_LOG("counter %s", kt_counters[i]);
		}
	}
}

TEST_HARNESS_MAIN
