// SPDX-License-Identifier: GPL-2.0
/*
 * A put of 2^32 - 1 bytes to another node ends cleanly, whatever the
 * interface's settings: the payload of every frame, and the skb that
 * carries it, are sized with checked arithmetic (issue 20, R5).
 *
 * The MD is 1,024 iovec segments over one 4 MiB buffer (only 4 MiB is
 * pinned), so that the message is longer than a u32 length can say once a
 * header is added. Before the fix, with `eager 4294967295` and the MTU of
 * the bound veth lowered to 68 after binding, rtscts_frame_room() wrapped,
 * the skb's size hdr_len + len wrapped to a few bytes, and ptl_msg_copy()
 * wrote 4 GiB into its 512-byte head (an Oops in memcpy_erms, the user's
 * bytes in a page table).
 *
 * Run by selftests/rtscts_mtu_test.sh, which sets the scene (unprivileged,
 * in a user and network namespace of its own) and names the target in
 * PTL_HUGE_PUT_NID; without it the test skips. The MD counts 2^20 pages
 * against the guest's RAM (ptl_mem_create() refuses an MD of more pages
 * than the machine has): with less than 4 GiB it skips too.
 */
#include "ptl_selftest.h"
#include "kselftest_harness.h"

#define HUGE_SEGS	1024
#define HUGE_SEG_LEN	(4UL << 20)
#define HUGE_PID	100	/* not a reserved one (< 64) */

static bool huge_enough_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	return pages > 0 && (unsigned long long)pages * psize >
			    (unsigned long long)HUGE_SEGS * HUGE_SEG_LEN;
}

TEST(put_of_4gib_minus_1_from_iovec_md_ends)
{
	const char *nid = getenv("PTL_HUGE_PUT_NID");
	static ptl_md_iovec_t iov[HUGE_SEGS];
	ptl_process_id_t target;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_event_t ev;
	ptl_md_t desc;
	void *buf;
	int i, rc;

	if (!nid)
		SKIP(return, "needs a target node (PTL_HUGE_PUT_NID)");
	if (!huge_enough_ram())
		SKIP(return, "needs more than 4 GiB of RAM for the MD's pages");
	ASSERT_EQ(PTL_OK, ptl_st_open(HUGE_PID, NULL, NULL, &ni));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq));
	buf = mmap(NULL, HUGE_SEG_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 'A', HUGE_SEG_LEN);
	for (i = 0; i < HUGE_SEGS; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = HUGE_SEG_LEN;
	}
	iov[HUGE_SEGS - 1].iov_len--;		/* 4294967295 bytes */
	desc = ptl_st_md(iov, HUGE_SEGS, PTL_MD_THRESH_INF, PTL_MD_IOVEC, eq);
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, desc, PTL_RETAIN, &md));

	target.nid = strtoul(nid, NULL, 0);
	target.pid = HUGE_PID;
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, target, 0, 0, 0, 0, 0));
	/*
	 * Nobody holds the pid there: the target drops the put (an RTS
	 * answered by a dropping CTS), or the peer times out. Either way the
	 * put ends with SEND_START and SEND_END; what it carried matters not.
	 */
	rc = ptl_st_next(eq, &ev, 60000);
	ASSERT_EQ(PTL_OK, rc);
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	rc = ptl_st_next(eq, &ev, 60000);
	ASSERT_EQ(PTL_OK, rc);
	EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
	TH_LOG("SEND_END: ni_fail_type %d, mlength %llu", ev.ni_fail_type,
	       (unsigned long long)ev.mlength);
	EXPECT_EQ(PTL_OK, PtlMDUnlink(md));
	EXPECT_EQ(PTL_OK, PtlNIFini(ni));
	munmap(buf, HUGE_SEG_LEN);
}

TEST_HARNESS_MAIN
