/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the Portals selftests: opening the library, building
 * MDs, reading events with a deadline, and running a peer Portals process
 * (a fork()ed child with its own PtlInit) that talks to the test over
 * pipes.
 *
 * The kselftest harness runs every test in its own child; its ASSERT_*
 * macros must not be used in a peer process. Peers use CK()/CK_TRUE(),
 * which print what was expected and what came back and make the peer exit
 * with a non-zero status that the test then asserts on.
 */
#ifndef PTL_SELFTEST_H
#define PTL_SELFTEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/portals.h>
#include <p3nal_linux.h>
#include <portals3.h>

/* Seconds a peer or an event may take before the test gives up. */
#define PTL_ST_TIMEOUT_MS	20000

static inline unsigned int ptl_st_nid(void)
{
	const char *nid = getenv("PTL_TEST_NID");

	return nid ? (unsigned int)strtoul(nid, NULL, 0) : 0;
}

/*
 * A numeric argument of a helper program (decimal, 0x hex or 0 octal);
 * anything else ends @prog with status 2, its usage error.
 */
static inline unsigned long ptl_st_arg(const char *prog, const char *s,
				       const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (!*s || *end) {
		fprintf(stderr, "%s: %s '%s' is not a number\n", prog, what,
			s);
		exit(2);
	}
	return v;
}

static inline long long ptl_st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Rounds of a race or a hammering loop.  Such a loop ends after @max
 * rounds or after PTL_ST_ROUNDS_MS, whichever comes first: on the debug
 * kernel (KASAN, lockdep, kmemleak) or on a loaded host the same rounds
 * take many times longer, and the test must then do fewer rounds, not
 * run into the harness's 30 s limit.  What each round checks is asserted
 * as before; ptl_st_rounds_done() says how many ran.
 *
 *	struct ptl_st_rounds r = ptl_st_rounds(5000);
 *	while (ptl_st_round(&r)) { ... }
 */
#define PTL_ST_ROUNDS_MS	10000

struct ptl_st_rounds {
	long done, max;
	long long deadline_ms;
};

static inline struct ptl_st_rounds ptl_st_rounds(long max)
{
	struct ptl_st_rounds r = {
		.max = max,
		.deadline_ms = ptl_st_now_ms() + PTL_ST_ROUNDS_MS,
	};

	return r;
}

/* Whether to run another round; at least one always runs. */
static inline bool ptl_st_round(struct ptl_st_rounds *r)
{
	if (r->done >= r->max)
		return false;
	if (r->done && ptl_st_now_ms() >= r->deadline_ms)
		return false;
	r->done++;
	return true;
}

static inline void ptl_st_rounds_done(const struct ptl_st_rounds *r,
				      const char *what)
{
	printf("# %s: %ld of %ld rounds%s\n", what, r->done, r->max,
	       r->done < r->max ? " (time budget reached)" : "");
}

/* ---- checks usable in any process (peers included) ---- */

/* Exit status of a failed check: 10..109, never 0, 4 or 255 (skip). */
#define PTL_ST_FAIL_CODE	(10 + __LINE__ % 100)

#define CK(expected, seen) do { \
	long long __e = (long long)(expected), __s = (long long)(seen); \
	if (__e != __s) { \
		fprintf(stderr, "# [pid %d] %s:%d: %s == %s: expected %lld " \
			"(%#llx) but got %lld (%#llx)\n", getpid(), __FILE__, \
			__LINE__, #expected, #seen, __e, \
			(unsigned long long)__e, __s, \
			(unsigned long long)__s); \
		exit(PTL_ST_FAIL_CODE); \
	} \
} while (0)

#define CK_TRUE(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "# [pid %d] %s:%d: expected %s\n", getpid(), \
			__FILE__, __LINE__, #cond); \
		exit(PTL_ST_FAIL_CODE); \
	} \
} while (0)

/* CK on a Portals return code, printing its name. */
#define CK_RC(expected, call) do { \
	int __r = (call), __x = (expected); \
	if (__r != __x) { \
		fprintf(stderr, "# [pid %d] %s:%d: %s: expected %s but got " \
			"%s (%d)\n", getpid(), __FILE__, __LINE__, #call, \
			PtlErrorStr(__x), PtlErrorStr(__r), __r); \
		exit(PTL_ST_FAIL_CODE); \
	} \
} while (0)

static inline const char *ptl_st_kind(int kind)
{
	return PtlEventKindStr((ptl_event_kind_t)kind);
}

/* Checks an event's kind, printing names. */
#define CK_KIND(expected, ev) do { \
	int __k = (int)(ev).type, __x = (int)(expected); \
	if (__k != __x) { \
		fprintf(stderr, "# [pid %d] %s:%d: expected event %s but got " \
			"%s (%d)\n", getpid(), __FILE__, __LINE__, \
			ptl_st_kind(__x), ptl_st_kind(__k), __k); \
		exit(PTL_ST_FAIL_CODE); \
	} \
} while (0)

/* ---- library ---- */

/* PtlInit + PtlNIInit on the default interface; returns a Portals code. */
static inline int ptl_st_open(ptl_pid_t pid, ptl_ni_limits_t *desired,
			      ptl_ni_limits_t *actual, ptl_handle_ni_t *ni)
{
	int max, rc = PtlInit(&max);

	if (rc != PTL_OK)
		return rc;
	return PtlNIInit(PTL_IFACE_DEFAULT, pid, desired, actual, ni);
}

/* Limits with no wishes (-1 everywhere). */
static inline ptl_ni_limits_t ptl_st_no_wish(void)
{
	ptl_ni_limits_t l;

	memset(&l, 0xff, sizeof(l));
	return l;
}

static inline ptl_md_t ptl_st_md(void *start, ptl_size_t length,
				 int threshold, unsigned int options,
				 ptl_handle_eq_t eq)
{
	ptl_md_t md;

	memset(&md, 0, sizeof(md));
	md.start = start;
	md.length = length;
	md.threshold = threshold;
	md.max_size = 0;
	md.options = options;
	md.user_ptr = NULL;
	md.eq_handle = eq;
	return md;
}

static inline ptl_process_id_t ptl_st_any(void)
{
	ptl_process_id_t id = { PTL_NID_ANY, PTL_PID_ANY };

	return id;
}

/* Next event of one EQ, waiting up to @ms. Returns the Portals code. */
static inline int ptl_st_next(ptl_handle_eq_t eq, ptl_event_t *ev, int ms)
{
	int which = -1;

	return PtlEQPoll(&eq, 1, (ptl_time_t)ms, ev, &which);
}

/* Next event before the time @end_ms (ptl_st_now_ms()); PTL_EQ_EMPTY after. */
static inline int ptl_st_next_until(ptl_handle_eq_t eq, ptl_event_t *ev,
				    long long end_ms)
{
	long long left = end_ms - ptl_st_now_ms();

	return left > 0 ? ptl_st_next(eq, ev, (int)left) : PTL_EQ_EMPTY;
}

/*
 * A sink for the helpers of the rtscts suites: an NI on @pid, an EQ of
 * @eq_len events, and @len bytes at @buf on portal 0 for anyone (any
 * match bits), retained, with @options. Returns the Portals code.
 */
static inline int ptl_st_sink(ptl_pid_t pid, void *buf, ptl_size_t len,
			      unsigned int options, ptl_size_t eq_len,
			      ptl_handle_ni_t *ni, ptl_handle_eq_t *eq)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	int rc = ptl_st_open(pid, NULL, NULL, ni);

	if (rc == PTL_OK)
		rc = PtlEQAlloc(*ni, eq_len, PTL_EQ_HANDLER_NONE, eq);
	if (rc == PTL_OK)
		rc = PtlMEAttach(*ni, 0, ptl_st_any(), 0, ~(ptl_match_bits_t)0,
				 PTL_RETAIN, PTL_INS_AFTER, &me);
	if (rc == PTL_OK)
		rc = PtlMDAttach(me, ptl_st_md(buf, len, PTL_MD_THRESH_INF,
					       options, *eq),
				 PTL_RETAIN, &md);
	return rc;
}

/* Next event, which must exist (OK) and be of @kind; exits otherwise. */
#define CK_NEXT(eq, ev, kind) do { \
	CK_RC(PTL_OK, ptl_st_next((eq), &(ev), PTL_ST_TIMEOUT_MS)); \
	CK_KIND((kind), (ev)); \
} while (0)

/* The EQ holds nothing more (after a short grace period). */
#define CK_EMPTY(eq) do { \
	ptl_event_t __ev; \
	int __rc = ptl_st_next((eq), &__ev, 50); \
	if (__rc != PTL_EQ_EMPTY) { \
		fprintf(stderr, "# [pid %d] %s:%d: expected an empty EQ but " \
			"got %s with event %s\n", getpid(), __FILE__, \
			__LINE__, PtlErrorStr(__rc), \
			ptl_st_kind(__ev.type)); \
		exit(PTL_ST_FAIL_CODE); \
	} \
} while (0)

static inline void ptl_st_fill(void *buf, size_t len, unsigned int seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long ptl_st_check(const void *buf, size_t len, unsigned int seed,
				size_t pattern_offset)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		size_t j = i + pattern_offset;

		if (p[i] != (unsigned char)(seed * 131 + j * 7 + (j >> 8)))
			return (long)i;
	}
	return -1;
}

static inline long ptl_st_memchk(const void *buf, int c, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)c)
			return (long)i;
	return -1;
}

/* ---- peer processes ---- */

/*
 * Two-node runs (selftests/run-net-tests.sh): the peers of a test live on
 * another Portals node, the network namespace PTL_PEER_NETNS names (a
 * path such as /run/netns/b), joined by a link the transport crosses. The
 * same tests then prove the same semantics between nodes. Returns the
 * namespace's fd, or -1 when the run is on one node.
 */
static inline int ptl_st_peer_netns(void)
{
	const char *path = getenv("PTL_PEER_NETNS");

	return path && *path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

/* In a fresh peer process: become a process of the peer node. */
static inline void ptl_st_enter_peer_node(void)
{
	const char *path = getenv("PTL_PEER_NETNS");
	int fd = ptl_st_peer_netns();

	if (!path || !*path)
		return;
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "# cannot enter %s: %s\n", path,
			strerror(errno));
		exit(PTL_ST_FAIL_CODE);
	}
	close(fd);
}

/* True when the peers of this run are on another node. */
static inline bool ptl_st_two_nodes(void)
{
	const char *path = getenv("PTL_PEER_NETNS");

	return path && *path;
}

struct ptl_peer {
	pid_t pid;
	int rd;		/* from the peer */
	int wr;		/* to the peer */
};

/* Inside the peer: its end of the pipes. */
struct ptl_chan {
	int rd;
	int wr;
};

static inline int ptl_st_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly @len bytes within @ms; -1 on EOF, error or timeout. */
static inline int ptl_st_read(int fd, void *buf, size_t len, int ms)
{
	char *p = buf;
	long long deadline = ptl_st_now_ms() + ms;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - ptl_st_now_ms();
		ssize_t n;

		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -1;
		if (!(pfd.revents & (POLLIN | POLLHUP)))
			continue;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#define CHAN_SEND(c, val) CK(0, ptl_st_write((c)->wr, &(val), sizeof(val)))
#define CHAN_RECV(c, val) \
	CK(0, ptl_st_read((c)->rd, &(val), sizeof(val), PTL_ST_TIMEOUT_MS))

/*
 * Starts a peer running fn(chan, arg); the peer's exit status is fn's
 * return value (CK failures exit early with the failing line).
 */
static inline int ptl_peer_start(struct ptl_peer *p,
				 int (*fn)(struct ptl_chan *, void *),
				 void *arg)
{
	int to[2], from[2];

	signal(SIGPIPE, SIG_IGN);	/* a dead peer fails the read instead */
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -1;
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		struct ptl_chan c = { .rd = to[0], .wr = from[1] };

		close(to[1]);
		close(from[0]);
		ptl_st_enter_peer_node();
		/* Not in the harness's process group games: die with it. */
		exit(fn(&c, arg));
	}
	close(to[0]);
	close(from[1]);
	p->rd = from[0];
	p->wr = to[1];
	return 0;
}

static inline int ptl_peer_send(struct ptl_peer *p, const void *v, size_t n)
{
	return ptl_st_write(p->wr, v, n);
}

static inline int ptl_peer_recv(struct ptl_peer *p, void *v, size_t n)
{
	return ptl_st_read(p->rd, v, n, PTL_ST_TIMEOUT_MS);
}

/*
 * Waits for the peer (killing it after @ms) and returns its exit status,
 * 128 + signal if it was killed, or -1.
 */
static inline int ptl_peer_wait_ms(struct ptl_peer *p, int ms)
{
	long long deadline = ptl_st_now_ms() + ms;
	int status;

	close(p->wr);
	close(p->rd);
	for (;;) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);

		if (r == p->pid)
			break;
		if (r < 0)
			return -1;
		if (ptl_st_now_ms() > deadline) {
			fprintf(stderr, "# peer %d timed out, killing it\n",
				p->pid);
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &status, 0);
			return -1;
		}
		usleep(2000);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static inline int ptl_peer_wait(struct ptl_peer *p)
{
	return ptl_peer_wait_ms(p, PTL_ST_TIMEOUT_MS + 10000);
}

/* Value of "Key:  N kB" from /proc/<pid>/status, or -1. */
/* The number at the start of a file (sysfs, /proc), or -1. */
static inline long ptl_st_read_long(const char *path)
{
	char buf[64];
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		val = strtol(buf, NULL, 10);
	fclose(f);
	return val;
}

/* A counter of ptl.ko in /sys/class/misc/portals/, or -1. */
static inline long ptl_st_counter(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/portals/%s", name);
	return ptl_st_read_long(path);
}

static inline long ptl_st_proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

#endif /* PTL_SELFTEST_H */
