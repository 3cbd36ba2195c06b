// SPDX-License-Identifier: GPL-2.0
/*
 * Network interfaces through the real kernel: PtlInit, PtlFini, PtlNIInit,
 * PtlNIFini, PtlGetId/Uid/Jid, the node-wide pid space, and the ioctl ABI
 * rules (sizes, flags, bad pointers) that every command shares.
 *
 * Runs as root in a guest with ptl.ko loaded with nid=$PTL_TEST_NID.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/portals.h>
#include <p3nal_linux.h>
#include <portals3.h>

#include "kselftest_harness.h"
#include "ptl_selftest.h"

static unsigned int expected_nid(void)
{
	const char *nid = getenv("PTL_TEST_NID");

	return nid ? (unsigned int)strtoul(nid, NULL, 0) : 0;
}

/* Runs @fn in a child process and returns its exit status. */
static int run_in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

FIXTURE(lib) {
	ptl_handle_ni_t ni;
	int max_ifaces;
};

FIXTURE_SETUP(lib)
{
	ASSERT_EQ(PTL_OK, PtlInit(&self->max_ifaces));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &self->ni));
}

FIXTURE_TEARDOWN(lib)
{
	PtlFini();
}

TEST_F(lib, init_reports_max_interfaces_and_is_idempotent)
{
	int again = -1;

	EXPECT_EQ(PTL_MAX_INTERFACES, self->max_ifaces);
	/* Already initialised: PTL_OK without touching the argument. */
	EXPECT_EQ(PTL_OK, PtlInit(&again));
	EXPECT_EQ(-1, again);
}

TEST_F(lib, get_id_returns_node_nid_and_ephemeral_pid)
{
	ptl_process_id_t id;

	ASSERT_EQ(PTL_OK, PtlGetId(self->ni, &id));
	EXPECT_EQ(expected_nid(), id.nid);
	EXPECT_GE(id.pid, PTL_PID_EPHEMERAL_START);
	EXPECT_LE(id.pid, PTL_PID_MAX);
}

/*
 * Without a launcher a process is in no job: its job id is PTL_JID_NONE,
 * never its pid (which any user could pick to pass a job's ACL entry).
 */
TEST_F(lib, uid_comes_from_credentials_and_jid_is_none_without_launcher)
{
	ptl_process_id_t id;
	ptl_uid_t uid;
	ptl_jid_t jid;

	ASSERT_EQ(PTL_OK, PtlGetId(self->ni, &id));
	ASSERT_EQ(PTL_OK, PtlGetUid(self->ni, &uid));
	ASSERT_EQ(PTL_OK, PtlGetJid(self->ni, &jid));
	EXPECT_EQ(geteuid(), uid);
	EXPECT_EQ(PTL_JID_NONE, jid);
}

TEST_F(lib, second_init_of_same_interface_returns_same_handle)
{
	ptl_ni_limits_t actual;
	ptl_handle_ni_t again;

	memset(&actual, 0, sizeof(actual));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL,
				    &actual, &again));
	EXPECT_EQ(self->ni, again);
	EXPECT_GT(actual.max_pt_index, 0);
}

TEST_F(lib, unknown_interfaces_are_iface_invalid)
{
	ptl_handle_ni_t ni;

	EXPECT_EQ(PTL_IFACE_INVALID, PtlNIInit(PTL_NALTYPE_UTCP, PTL_PID_ANY,
					       NULL, NULL, &ni));
	EXPECT_EQ(PTL_IFACE_INVALID, PtlNIInit(PTL_IFACE_LINUX1, PTL_PID_ANY,
					       NULL, NULL, &ni));
	EXPECT_EQ(PTL_IFACE_INVALID, PtlNIInit(0, PTL_PID_ANY, NULL, NULL,
					       &ni));
}

TEST_F(lib, fini_invalidates_the_handle_and_is_not_reference_counted)
{
	ptl_process_id_t id;
	ptl_handle_ni_t again;

	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &again));
	ASSERT_EQ(PTL_OK, PtlNIFini(self->ni));
	EXPECT_EQ(PTL_NI_INVALID, PtlGetId(self->ni, &id));
	EXPECT_EQ(PTL_NI_INVALID, PtlNIFini(self->ni));
	/* The interface can be opened again afterwards. */
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &again));
	EXPECT_EQ(PTL_OK, PtlGetId(again, &id));
}

TEST_F(lib, forged_and_special_handles_are_ni_invalid)
{
	ptl_process_id_t id;
	ptl_uid_t uid;

	EXPECT_EQ(PTL_NI_INVALID, PtlGetId(PTL_INVALID_HANDLE, &id));
	EXPECT_EQ(PTL_NI_INVALID, PtlGetId(PTL_HANDLE_NONE, &id));
	EXPECT_EQ(PTL_NI_INVALID, PtlGetUid(PTL_EQ_NONE, &uid));
	EXPECT_EQ(PTL_NI_INVALID, PtlGetId(self->ni ^ 0x1, &id));
	EXPECT_EQ(PTL_NI_INVALID, PtlGetId(0, &id));
	EXPECT_EQ(PTL_NI_INVALID, PtlNIFini(self->ni + 0x100));
}

TEST_F(lib, null_outputs_are_segv)
{
	EXPECT_EQ(PTL_SEGV, PtlGetId(self->ni, NULL));
	EXPECT_EQ(PTL_SEGV, PtlGetUid(self->ni, NULL));
	EXPECT_EQ(PTL_SEGV, PtlGetJid(self->ni, NULL));
	EXPECT_EQ(PTL_SEGV, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL,
				      NULL, NULL));
}

TEST_F(lib, fini_then_calls_are_no_init_and_init_works_again)
{
	ptl_process_id_t id;
	int max;

	PtlFini();
	EXPECT_EQ(PTL_NO_INIT, PtlGetId(self->ni, &id));
	EXPECT_EQ(PTL_NO_INIT, PtlNIFini(self->ni));
	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &self->ni));
	EXPECT_EQ(PTL_OK, PtlGetId(self->ni, &id));
}

TEST(limits_are_negotiated_down_never_up)
{
	ptl_ni_limits_t desired, actual, lib;
	ptl_handle_ni_t ni;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, &lib,
				    &ni));
	ASSERT_EQ(PTL_OK, PtlNIFini(ni));

	memset(&desired, 0xff, sizeof(desired));	/* -1: no wish */
	desired.max_pt_index = 7;
	desired.max_mes = 10;
	desired.max_getput_md = 1 << 30;	/* more than offered */
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, &desired,
				    &actual, &ni));
	EXPECT_EQ(7, actual.max_pt_index);
	EXPECT_EQ(10, actual.max_mes);
	EXPECT_EQ(lib.max_getput_md, actual.max_getput_md);
	EXPECT_EQ(lib.max_mds, actual.max_mds);
	EXPECT_EQ(lib.max_ac_index, actual.max_ac_index);
	PtlFini();
}

static int claim_pid_in_child(void *arg)
{
	ptl_pid_t pid = *(ptl_pid_t *)arg;
	ptl_handle_ni_t ni;
	int max;

	if (PtlInit(&max) != PTL_OK)
		return 100;
	return PtlNIInit(PTL_IFACE_DEFAULT, pid, NULL, NULL, &ni);
}

TEST(pids_are_node_wide_and_released_with_the_interface)
{
	ptl_pid_t pid = 2000;
	ptl_process_id_t id;
	ptl_handle_ni_t ni;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, pid, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlGetId(ni, &id));
	EXPECT_EQ(pid, id.pid);
	/* Another process cannot take it while we hold it (contract 2). */
	EXPECT_EQ(PTL_PID_INVALID, run_in_child(claim_pid_in_child, &pid));
	ASSERT_EQ(PTL_OK, PtlNIFini(ni));
	EXPECT_EQ(PTL_OK, run_in_child(claim_pid_in_child, &pid));
	PtlFini();
}

TEST(closing_the_device_releases_the_pid)
{
	ptl_pid_t pid = 3001;
	ptl_handle_ni_t ni;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, pid, NULL, NULL, &ni));
	PtlFini();	/* no PtlNIFini: closing must be enough */
	EXPECT_EQ(PTL_OK, run_in_child(claim_pid_in_child, &pid));
}

TEST(pids_out_of_range_are_invalid)
{
	ptl_handle_ni_t ni;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	EXPECT_EQ(PTL_PID_INVALID, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_MAX + 1,
					     NULL, NULL, &ni));
	EXPECT_EQ(PTL_PID_INVALID, PtlNIInit(PTL_IFACE_DEFAULT, 0x7fffffff,
					     NULL, NULL, &ni));
	PtlFini();
}

static int claim_reserved_pid_unprivileged(void *arg)
{
	ptl_pid_t pid = *(ptl_pid_t *)arg;

	/* Become nobody: CAP_NET_ADMIN is gone with the root uid. */
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 101;
	return claim_pid_in_child(&pid);
}

TEST(reserved_pids_need_cap_net_admin)
{
	ptl_pid_t reserved = 5, ordinary = 700;

	ASSERT_EQ(0, geteuid()) TH_LOG("selftests run as root");
	EXPECT_EQ(PTL_OK, run_in_child(claim_pid_in_child, &reserved));
	EXPECT_EQ(PTL_PID_INVALID,
		  run_in_child(claim_reserved_pid_unprivileged, &reserved));
	EXPECT_EQ(PTL_OK,
		  run_in_child(claim_reserved_pid_unprivileged, &ordinary));
}

static int child_uses_parent_state(void *arg)
{
	ptl_handle_ni_t ni = *(ptl_handle_ni_t *)arg;
	ptl_process_id_t id;

	/* After fork the child has no library until it calls PtlInit. */
	if (PtlGetId(ni, &id) != PTL_NO_INIT)
		return 1;
	PtlFini();	/* must not tear down the parent's interface */
	return 0;
}

TEST(fork_child_does_not_share_or_destroy_parent_state)
{
	ptl_process_id_t id;
	ptl_handle_ni_t ni;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &ni));
	EXPECT_EQ(0, run_in_child(child_uses_parent_state, &ni));
	EXPECT_EQ(PTL_OK, PtlGetId(ni, &id));
	PtlFini();
}

struct blocked_waiter {
	ptl_handle_eq_t eq;
	int rc;
};

static void *wait_forever(void *arg)
{
	struct blocked_waiter *w = arg;
	ptl_event_t ev;

	w->rc = PtlEQWait(w->eq, &ev);
	return NULL;
}

TEST(fini_wakes_a_thread_blocked_in_eq_wait_and_releases_the_pid)
{
	struct blocked_waiter w = { .rc = -1 };
	ptl_pid_t pid = 3100;
	ptl_handle_ni_t ni;
	pthread_t thread;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, pid, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &w.eq));
	ASSERT_EQ(0, pthread_create(&thread, NULL, wait_forever, &w));
	usleep(200 * 1000);	/* let it block in the kernel */
	PtlFini();
	ASSERT_EQ(0, pthread_join(thread, NULL));
	/* The waiter ended with an error, not an event. */
	EXPECT_NE(PTL_OK, w.rc);
	EXPECT_NE(PTL_EQ_DROPPED, w.rc);
	/* And the interface really is gone: its pid is free again. */
	EXPECT_EQ(PTL_OK, run_in_child(claim_pid_in_child, &pid));
}

/* Raw ioctl ABI: the rules every command shares. */
FIXTURE(abi) {
	int fd;
};

FIXTURE_SETUP(abi)
{
	self->fd = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(abi)
{
	close(self->fd);
}

TEST_F(abi, version_reports_abi_and_interfaces)
{
	struct ptl_ioc_version v = { .size = sizeof(v) };

	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_VERSION, &v));
	EXPECT_EQ(PTL_ABI_VERSION, v.abi_version);
	EXPECT_EQ(PTL_MAX_INTERFACES, v.max_interfaces);
}

TEST_F(abi, bad_sizes_are_einval)
{
	struct ptl_ioc_version v = { .size = 0 };

	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
	v.size = 4;
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
	v.size = PTL_IOC_MAX_ARG_SIZE + 1;
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(abi, unknown_flags_and_reserved_fields_are_einval)
{
	struct ptl_ioc_version v = { .size = sizeof(v), .flags = 1 };
	struct ptl_ioc_ni_init init = {
		.size = sizeof(init),
		.flags = PTL_NI_INIT_DESIRED << 1,
		.iface = PTL_IFACE_DEFAULT,
		.pid = PTL_PID_ANY,
	};

	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_NI_INIT, &init));
	EXPECT_EQ(EINVAL, errno);
	init.flags = 0;
	init.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_NI_INIT, &init));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(abi, unknown_commands_are_enotty)
{
	struct ptl_ioc_version v = { .size = sizeof(v) };

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(PTL_IOC_MAGIC, 0x7f,
					    struct ptl_ioc_version), &v));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('x', 0, struct ptl_ioc_version),
			    &v));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(abi, bad_pointers_are_efault)
{
	void *unmapped = mmap(NULL, 4096, PROT_NONE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, unmapped);
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_NI_INIT, unmapped));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_VERSION, (void *)-4096L));
	EXPECT_EQ(EFAULT, errno);
	munmap(unmapped, 4096);
}

TEST_F(abi, newer_callers_pass_if_their_extra_tail_is_zero)
{
	struct {
		struct ptl_ioc_ni_identity id;
		__u64 future[4];
	} big;
	struct ptl_ioc_ni_init init = {
		.size = sizeof(init),
		.iface = PTL_IFACE_DEFAULT,
		.pid = PTL_PID_ANY,
	};

	ASSERT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_NI_INIT, &init));
	memset(&big, 0, sizeof(big));
	big.id.size = sizeof(big);
	big.id.ni_handle = init.ni_handle;
	EXPECT_EQ(PTL_OK, ioctl(self->fd, PTL_IOC_NI_IDENTITY, &big));
	EXPECT_EQ(init.out_pid, big.id.pid);
	EXPECT_EQ(0, big.future[0]);

	big.future[3] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, PTL_IOC_NI_IDENTITY, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(abi, older_callers_get_zero_for_what_they_did_not_send)
{
	/* Only size and flags: the handle reads as 0, which is no NI. */
	struct ptl_ioc_head head = { .size = sizeof(head) };

	EXPECT_EQ(PTL_NI_INVALID, ioctl(self->fd, PTL_IOC_NI_IDENTITY, &head));
}

/* Threads hammering one NI while another thread closes and reopens it. */
struct hammer {
	ptl_handle_ni_t ni;	/* current handle, read with __atomic_load */
	int stop;
	int bad;
};

static void *hammer_get_id(void *arg)
{
	struct hammer *h = arg;
	ptl_process_id_t id;

	while (!__atomic_load_n(&h->stop, __ATOMIC_RELAXED)) {
		ptl_handle_ni_t ni = __atomic_load_n(&h->ni, __ATOMIC_ACQUIRE);
		int rc = PtlGetId(ni, &id);

		/* Either the NI is open or it was just finished: never junk. */
		if (rc != PTL_OK && rc != PTL_NI_INVALID)
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST(concurrent_calls_race_safely_with_fini)
{
	struct ptl_st_rounds rounds = ptl_st_rounds(2000);
	struct hammer h = { 0 };
	pthread_t threads[3];
	ptl_process_id_t id;
	int i, max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &h.ni));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, hammer_get_id,
					    &h));
	while (ptl_st_round(&rounds)) {
		ptl_handle_ni_t old = h.ni, ni;

		ASSERT_EQ(PTL_OK, PtlNIFini(old));
		ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY,
					    NULL, NULL, &ni));
		/* A reopened interface is a new incarnation (contract 1). */
		ASSERT_NE(old, ni);
		ASSERT_EQ(PTL_NI_INVALID, PtlGetId(old, &id));
		__atomic_store_n(&h.ni, ni, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	ptl_st_rounds_done(&rounds, "NI reopens raced");
	EXPECT_EQ(0, h.bad);
	PtlFini();
}

TEST_HARNESS_MAIN
