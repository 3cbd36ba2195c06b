// SPDX-License-Identifier: GPL-2.0
/*
 * ptl.ko's tracepoints fire where Documentation/admin-guide.md says:
 * ptl_put and ptl_get when a request leaves, ptl_match when it matches an
 * MD, ptl_drop (with its reason) when nothing accepts it, ptl_event_posted
 * for every event written into a ring.
 *
 * Needs tracefs (the test guest mounts it at /sys/kernel/tracing).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ptl_selftest.h"

#define TRACING "/sys/kernel/tracing/"

static int tracefs_write(const char *file, const char *value)
{
	int fd = open(file, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* Appends the whole trace buffer to @buf (NUL-terminated). */
static void tracefs_read(char *buf, size_t size)
{
	int fd = open(TRACING "trace", O_RDONLY);
	size_t len = 0;
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return;
	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fd);
}

/* True if one line of @log holds both @a and @b. */
static bool line_has(const char *log, const char *a, const char *b)
{
	const char *p = log;

	while ((p = strstr(p, a))) {
		const char *bol = p, *eol = strchr(p, '\n');

		while (bol > log && bol[-1] != '\n')
			bol--;
		if (!eol)
			eol = p + strlen(p);
		for (const char *q = bol; q + strlen(b) <= eol; q++)
			if (!strncmp(q, b, strlen(b)))
				return true;
		p = eol;
	}
	return false;
}

FIXTURE(trace) {
	ptl_handle_ni_t ni;
	ptl_process_id_t me;
	ptl_handle_eq_t eq;
	ptl_handle_md_t src;
	char target[64];
	char source[64];
};

FIXTURE_SETUP(trace)
{
	ptl_handle_me_t me_h;
	ptl_handle_md_t md_h;

	if (access(TRACING "events/ptl/enable", W_OK))
		SKIP(return, "no tracefs with the ptl events");
	ASSERT_EQ(0, tracefs_write(TRACING "trace", ""));	/* clear */
	ASSERT_EQ(0, tracefs_write(TRACING "events/ptl/enable", "1"));

	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &self->ni));
	ASSERT_EQ(PTL_OK, PtlGetId(self->ni, &self->me));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 16, PTL_EQ_HANDLER_NONE,
				     &self->eq));
	/* Portal 1 takes puts and gets from anyone; portal 2 has no ME. */
	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, 1, ptl_st_any(), 0, ~0ULL,
				      PTL_RETAIN, PTL_INS_AFTER, &me_h));
	ASSERT_EQ(PTL_OK, PtlMDAttach(me_h, ptl_st_md(self->target,
		  sizeof(self->target), PTL_MD_THRESH_INF,
		  PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, self->eq),
		  PTL_RETAIN, &md_h));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->source,
		  sizeof(self->source), PTL_MD_THRESH_INF, 0, PTL_EQ_NONE),
		  PTL_RETAIN, &self->src));
}

FIXTURE_TEARDOWN(trace)
{
	tracefs_write(TRACING "events/ptl/enable", "0");
	PtlFini();
}

TEST_F(trace, put_get_match_drop_and_event_posted_fire)
{
	static char log[1 << 20];

	ASSERT_EQ(PTL_OK, PtlPut(self->src, PTL_NO_ACK_REQ, self->me, 1, 0,
				 0x5eed, 0, 0));
	ASSERT_EQ(PTL_OK, PtlGet(self->src, self->me, 1, 0, 0x5eed, 0));
	ASSERT_EQ(PTL_OK, PtlPut(self->src, PTL_NO_ACK_REQ, self->me, 2, 0,
				 0xd209, 0, 0));	/* nobody listens */
	tracefs_read(log, sizeof(log));

	EXPECT_TRUE(line_has(log, "ptl_put:", "pt=1 ac=0 bits=0x5eed"));
	EXPECT_TRUE(line_has(log, "ptl_get:", "pt=1 ac=0 bits=0x5eed"));
	EXPECT_TRUE(line_has(log, "ptl_match:", "bits=0x5eed"));
	EXPECT_TRUE(line_has(log, "ptl_drop:", "bits=0xd209"));
	EXPECT_TRUE(line_has(log, "ptl_drop:", "reason=no_match"));
	EXPECT_TRUE(line_has(log, "ptl_event_posted:", "type="));
	/* The matched put and get were not dropped. */
	EXPECT_FALSE(line_has(log, "ptl_drop:", "bits=0x5eed"));
}

TEST_HARNESS_MAIN
