// SPDX-License-Identifier: GPL-2.0
/*
 * Data movement between two and more processes on one node, through the
 * real kernel: put, ack, get, reply, getput, truncation, thresholds and
 * auto-unlink cascades, max_size, iovecs, remotely managed offsets, the
 * access-control table and its counters, EQ overflow, PtlMDUpdate, event
 * options, matching rules, and the fields of every event (spec 8.5 table,
 * contract items 6-9).
 *
 * Each test's process is one Portals process (the harness's test child);
 * peers are fork()ed children that call PtlInit themselves and report
 * through pipes and their exit status (see ptl_selftest.h).
 */
#include "ptl_selftest.h"

#include "kselftest_harness.h"

#define PT 4

/* Who a process is on the interface. */
struct who {
	ptl_process_id_t id;
	ptl_uid_t uid;
	ptl_jid_t jid;
};

static void who_am_i(ptl_handle_ni_t ni, struct who *w)
{
	CK_RC(PTL_OK, PtlGetId(ni, &w->id));
	CK_RC(PTL_OK, PtlGetUid(ni, &w->uid));
	CK_RC(PTL_OK, PtlGetJid(ni, &w->jid));
}

/* Peer side: open an interface, send who we are, receive the test's. */
static ptl_handle_ni_t peer_open(struct ptl_chan *c, ptl_ni_limits_t *want,
				 struct who *self, struct who *test)
{
	ptl_handle_ni_t ni;

	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, want, NULL, &ni));
	who_am_i(ni, self);
	CHAN_SEND(c, *self);
	CHAN_RECV(c, *test);
	return ni;
}

/*
 * Counters over a transport settle a little after the call that caused them
 * (a bound MD goes when its send ends), so wait for [lo, hi] with a deadline.
 */
static ptl_sr_value_t wait_sr_within(ptl_handle_ni_t ni, ptl_sr_index_t reg,
				     ptl_sr_value_t lo, ptl_sr_value_t hi)
{
	long long deadline = ptl_st_now_ms() + 3000;
	ptl_sr_value_t v = 0;

	do {
		CK_RC(PTL_OK, PtlNIStatus(ni, reg, &v));
		if (v >= lo && v <= hi)
			break;
		usleep(1000);
	} while (ptl_st_now_ms() < deadline);
	return v;
}

static ptl_sr_value_t wait_sr(ptl_handle_ni_t ni, ptl_sr_index_t reg,
			      ptl_sr_value_t want)
{
	return wait_sr_within(ni, reg, want, UINT64_MAX);
}

static ptl_handle_me_t me_attach(ptl_handle_ni_t ni, ptl_match_bits_t bits,
				 ptl_unlink_t unlink)
{
	ptl_handle_me_t me;

	CK_RC(PTL_OK, PtlMEAttach(ni, PT, ptl_st_any(), bits, 0, unlink,
				  PTL_INS_AFTER, &me));
	return me;
}

static ptl_handle_eq_t eq_alloc(ptl_handle_ni_t ni, ptl_size_t n)
{
	ptl_handle_eq_t eq;

	CK_RC(PTL_OK, PtlEQAlloc(ni, n, PTL_EQ_HANDLER_NONE, &eq));
	return eq;
}

static void *page_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CK_TRUE(p != MAP_FAILED);
	return p;
}

/* Common shape: the test process with one interface, peers forked. */
FIXTURE(data) {
	ptl_handle_ni_t ni;
	struct who me;
	struct who peer;
	struct ptl_peer p;
};

FIXTURE_SETUP(data)
{
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &self->ni));
	who_am_i(self->ni, &self->me);
}

FIXTURE_TEARDOWN(data)
{
	PtlFini();
}

static int start_peer(struct __test_metadata *_metadata,
		      FIXTURE_DATA(data) *self,
		      int (*fn)(struct ptl_chan *, void *))
{
	ASSERT_EQ(0, ptl_peer_start(&self->p, fn, &self->me));
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &self->peer,
				   sizeof(self->peer)));
	ASSERT_EQ(0, ptl_peer_send(&self->p, &self->me, sizeof(self->me)));
	return 0;
}

static void tell_peer(struct ptl_peer *p, int cmd)
{
	CK(0, ptl_peer_send(p, &cmd, sizeof(cmd)));
}

static void chan_tell(struct ptl_chan *c, int cmd)
{
	CHAN_SEND(c, cmd);
}

static int wait_cmd(struct ptl_chan *c)
{
	int cmd = -1;

	CHAN_RECV(c, cmd);
	return cmd;
}

/* ---- put and ack ---- */

static int put_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 16);
	char *buf = page_buf(4096);
	ptl_handle_me_t mh;
	ptl_handle_md_t md;
	ptl_md_t d = ptl_st_md(buf, 4096, PTL_MD_THRESH_INF,
			       PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq);
	ptl_event_t s, e;

	d.user_ptr = (void *)0x77;
	CK_RC(PTL_OK, PtlMEAttach(ni, PT, test.id, 0x1234, 0, PTL_UNLINK,
				  PTL_INS_AFTER, &mh));
	CK_RC(PTL_OK, PtlMDAttach(mh, d, PTL_RETAIN, &md));
	chan_tell(c, 1);	/* ready */

	CK_NEXT(eq, s, PTL_EVENT_PUT_START);
	CK_NEXT(eq, e, PTL_EVENT_PUT_END);
	CK(test.id.nid, s.initiator.nid);
	CK(test.id.pid, s.initiator.pid);
	CK(test.uid, s.uid);
	CK(test.jid, s.jid);
	CK(PT, s.pt_index);
	CK(0x1234, s.match_bits);
	CK(1000, s.rlength);
	CK(1000, s.mlength);
	CK(100, s.offset);
	CK(0xfeedface, s.hdr_data);
	CK(md, s.md_handle);
	CK_TRUE(s.md.start == buf);
	CK_TRUE(s.md.user_ptr == (void *)0x77);
	CK(PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, s.md.options);
	CK(eq, s.md.eq_handle);
	CK(PTL_NI_OK, s.ni_fail_type);
	CK(s.sequence, s.link);
	/* END: same fields, link = its START, next sequence. */
	CK(test.id.pid, e.initiator.pid);
	CK(test.uid, e.uid);
	CK(PT, e.pt_index);
	CK(0x1234, e.match_bits);
	CK(1000, e.rlength);
	CK(1000, e.mlength);
	CK(100, e.offset);
	CK(0xfeedface, e.hdr_data);
	CK(md, e.md_handle);
	CK(PTL_NI_OK, e.ni_fail_type);
	CK(s.sequence, e.link);
	CK(s.sequence + 1, e.sequence);
	CK_EMPTY(eq);
	CK(-1, ptl_st_memchk(buf, 0, 100));
	CK(-1, ptl_st_check(buf + 100, 1000, 1, 0));
	CK(-1, ptl_st_memchk(buf + 1100, 0, 4096 - 1100));
	return 0;
}

TEST_F(data, put_with_ack_delivers_bytes_and_fills_every_event_field)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 16);
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	ptl_event_t ss, se, ack;
	int ready;

	start_peer(_metadata, self, put_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ptl_st_fill(src, 1000, 1);
	/* threshold 2: the send and the ACK (spec 8.3). */
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 1000, 2, 0, eq),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0,
				 0x1234, 100, 0xfeedface));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ss, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_SEND_START, ss.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &se, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_SEND_END, se.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ack, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_ACK, ack.type);

	/* SEND events: own identity, what was sent (spec 8.5 table). */
	EXPECT_EQ(self->me.id.pid, ss.initiator.pid);
	EXPECT_EQ(self->me.id.nid, ss.initiator.nid);
	EXPECT_EQ(PT, ss.pt_index);
	EXPECT_EQ(0x1234, ss.match_bits);
	EXPECT_EQ(1000, ss.rlength);
	EXPECT_EQ(1000, ss.mlength);
	EXPECT_EQ(100, ss.offset);
	EXPECT_EQ(0xfeedface, ss.hdr_data);
	EXPECT_EQ(md, ss.md_handle);
	EXPECT_EQ(ss.sequence, ss.link);
	EXPECT_EQ(ss.sequence, se.link);
	EXPECT_EQ(ss.sequence + 1, se.sequence);
	EXPECT_EQ(1000, se.mlength);
	EXPECT_EQ(PTL_NI_OK, se.ni_fail_type);
	/* ACK (contract 6). */
	EXPECT_EQ(self->peer.id.nid, ack.initiator.nid);
	EXPECT_EQ(self->peer.id.pid, ack.initiator.pid);
	EXPECT_EQ(self->peer.uid, ack.uid);
	EXPECT_EQ(self->peer.jid, ack.jid);
	EXPECT_EQ(PT, ack.pt_index);
	EXPECT_EQ(0x1234, ack.match_bits);
	EXPECT_EQ(100, ack.offset);
	EXPECT_EQ(1000, ack.rlength);
	EXPECT_EQ(1000, ack.mlength);
	EXPECT_EQ(0, ack.hdr_data);
	EXPECT_EQ(md, ack.md_handle);
	EXPECT_EQ(0, ack.md.threshold) TH_LOG("snapshot after the ACK");
	EXPECT_EQ(PTL_NI_OK, ack.ni_fail_type);
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(eq, &ack));
	/* Threshold used up: the MD is inactive (spec 8.3). */
	EXPECT_EQ(PTL_MD_INVALID, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id,
					 PT, 0, 0x1234, 0, 0));
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- get and reply ---- */

static int get_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 16);
	char *buf = page_buf(4096);
	ptl_handle_md_t md;
	ptl_event_t ev;

	ptl_st_fill(buf, 4096, 2);
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 7, PTL_RETAIN),
				  ptl_st_md(buf, 4096, PTL_MD_THRESH_INF,
					    PTL_MD_OP_GET |
					    PTL_MD_MANAGE_REMOTE, eq),
				  PTL_RETAIN, &md));
	CHAN_SEND(c, md);
	CK(2, wait_cmd(c));
	CK_NEXT(eq, ev, PTL_EVENT_GET_START);
	CK_NEXT(eq, ev, PTL_EVENT_GET_END);
	CK(test.id.pid, ev.initiator.pid);
	CK(test.uid, ev.uid);
	CK(PT, ev.pt_index);
	CK(7, ev.match_bits);
	CK(500, ev.rlength);
	CK(500, ev.mlength);
	CK(1000, ev.offset);
	CK(0, ev.hdr_data);
	CK(md, ev.md_handle);
	CK_NEXT(eq, ev, PTL_EVENT_GET_START);
	CK_NEXT(eq, ev, PTL_EVENT_GET_END);
	CK(50, ev.rlength);
	CK(50, ev.mlength);
	CK(2000, ev.offset);
	CK_EMPTY(eq);
	/* A get never changes the target's memory. */
	CK(-1, ptl_st_check(buf, 4096, 2, 0));
	return 0;
}

TEST_F(data, get_returns_target_bytes_with_reply_fields_and_unlink)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 16);
	char *dst = page_buf(4096);
	ptl_handle_md_t md, md2, tmd;
	ptl_event_t rs, re, un;

	start_peer(_metadata, self, get_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &tmd, sizeof(tmd)));
	/* threshold 1: the reply uses it up, then the MD auto-unlinks. */
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(dst, 500, 1, 0, eq),
				    PTL_UNLINK, &md));
	ASSERT_EQ(PTL_OK, PtlGet(md, self->peer.id, PT, 0, 7, 1000));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &rs, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_REPLY_START, rs.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &re, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_REPLY_END, re.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &un, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_UNLINK, un.type);
	/* REPLY (contract 7). */
	EXPECT_EQ(self->peer.id.pid, re.initiator.pid);
	EXPECT_EQ(self->peer.id.nid, re.initiator.nid);
	EXPECT_EQ(PT, re.pt_index);
	EXPECT_EQ(7, re.match_bits);
	EXPECT_EQ(500, re.rlength);
	EXPECT_EQ(500, re.mlength);
	EXPECT_EQ(0, re.offset);
	EXPECT_EQ(md, re.md_handle);
	EXPECT_EQ(rs.sequence, re.link);
	/* UNLINK carries the reply's fields, link = the END (contract 9). */
	EXPECT_EQ(500, un.mlength);
	EXPECT_EQ(7, un.match_bits);
	EXPECT_EQ(re.sequence, un.link);
	EXPECT_EQ(re.sequence + 1, un.sequence);
	EXPECT_EQ(-1, ptl_st_check(dst, 500, 2, 1000));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(md));

	/* GetRegion: 50 bytes from remote 2000 land at local offset 100. */
	memset(dst, 0, 4096);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(dst, 200,
							PTL_MD_THRESH_INF, 0,
							eq),
				    PTL_RETAIN, &md2));
	ASSERT_EQ(PTL_OK, PtlGetRegion(md2, 100, 50, self->peer.id, PT, 0, 7,
				       2000));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &rs, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_REPLY_START, rs.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &re, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_REPLY_END, re.type);
	EXPECT_EQ(50, re.rlength);
	EXPECT_EQ(50, re.mlength);
	EXPECT_EQ(100, re.offset);
	EXPECT_EQ(-1, ptl_st_memchk(dst, 0, 100));
	EXPECT_EQ(-1, ptl_st_check(dst + 100, 50, 2, 2000));
	EXPECT_EQ(-1, ptl_st_memchk(dst + 150, 0, 4096 - 150));
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(eq, &re));
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/*
 * A get's long REPLY must not hold up another's of 8 bytes asked for just
 * after it: the transport sends short frames before the data of messages
 * begun (ptl_rtscts framed a begun message to its end before, and the MPI
 * provider's liveness probes timed out behind bulk data between two
 * guests). Before large frames, 32 MiB did not end within the 20 s the
 * test waits in a loaded TCG guest; 16 MiB now takes well under a second.
 *
 * With large frames a 4 MiB transfer takes milliseconds and can end inside
 * the softirq that the first get's own transmission runs, before the
 * small request is even sent; then no order proves anything. So the bulk
 * is 16 MiB, and an attempt counts only if a quarter of it (4 MiB, ten
 * windows at MTU 1500) was still to land once the small message was out:
 * the byte there, which the sender holds as non-zero, is still zero.
 * Up to BULK_ATTEMPTS attempts; the sender's MDs are managed remotely, so
 * each get reads from offset 0.
 */
#define BULK_LEN	(16U << 20)
#define BULK_ATTEMPTS	5
#define BULK_BYTE	0x5a

static bool bulk_quarter_to_come(const char *bulk)
{
	/* The kernel writes it under us: one real load. */
	return __atomic_load_n(&bulk[BULK_LEN / 4 * 3], __ATOMIC_RELAXED) !=
	       BULK_BYTE;
}

static char *bulk_source(void)
{
	char *bulk = page_buf(BULK_LEN);

	memset(bulk, BULK_BYTE, BULK_LEN);
	return bulk;
}

static int bulk_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	char *bulk = bulk_source(), *small = page_buf(4096);
	ptl_handle_md_t md;

	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 20, PTL_RETAIN),
				  ptl_st_md(bulk, BULK_LEN, PTL_MD_THRESH_INF,
					    PTL_MD_OP_GET |
					    PTL_MD_MANAGE_REMOTE,
					    PTL_EQ_NONE),
				  PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 21, PTL_RETAIN),
				  ptl_st_md(small, 8, PTL_MD_THRESH_INF,
					    PTL_MD_OP_GET |
					    PTL_MD_MANAGE_REMOTE,
					    PTL_EQ_NONE),
				  PTL_RETAIN, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	return 0;
}

TEST_F(data, a_small_reply_is_not_held_behind_a_bulk_one)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 16);
	char *bulk = page_buf(BULK_LEN), *small = page_buf(4096);
	ptl_handle_md_t bulk_md, small_md;
	bool told = false;
	int attempt, ready;

	if (!ptl_st_two_nodes())
		SKIP(return, "needs two nodes (PTL_PEER_NETNS)");
	start_peer(_metadata, self, bulk_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	for (attempt = 0; attempt < BULK_ATTEMPTS && !told; attempt++) {
		ptl_handle_md_t first = PTL_INVALID_HANDLE;
		ptl_event_t ev;
		int ends = 0;

		memset(bulk, 0, BULK_LEN);
		ASSERT_EQ(PTL_OK, PtlMDBind(self->ni,
					    ptl_st_md(bulk, BULK_LEN, 1, 0, eq),
					    PTL_RETAIN, &bulk_md));
		ASSERT_EQ(PTL_OK, PtlMDBind(self->ni,
					    ptl_st_md(small, 8, 1, 0, eq),
					    PTL_RETAIN, &small_md));
		ASSERT_EQ(PTL_OK, PtlGet(bulk_md, self->peer.id, PT, 0, 20, 0));
		ASSERT_EQ(PTL_OK, PtlGet(small_md, self->peer.id, PT, 0, 21, 0));
		told = bulk_quarter_to_come(bulk);
		while (ends < 2) {
			ASSERT_EQ(PTL_OK,
				  ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS))
				TH_LOG("attempt %d, %d ends", attempt, ends);
			if (ev.type != PTL_EVENT_REPLY_END)
				continue;
			ASSERT_EQ(PTL_NI_OK, ev.ni_fail_type);
			if (!ends++)
				first = ev.md_handle;
		}
		/* The small one first, though asked for second. */
		if (told)
			EXPECT_EQ(small_md, first);
		EXPECT_EQ(PTL_OK, PtlMDUnlink(bulk_md));
		EXPECT_EQ(PTL_OK, PtlMDUnlink(small_md));
	}
	EXPECT_TRUE(told)
		TH_LOG("the bulk reply was 3/4 done before the small get was out, %d times",
		       BULK_ATTEMPTS);
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/*
 * And a request's header: a node sending a 16 MiB REPLY puts 8 bytes to
 * the same peer after the REPLY has begun; the put is delivered while the
 * REPLY still streams. The peer (the initiator of the get) reports which
 * of the two ended first, and whether a quarter of the REPLY was still to come
 * when it learnt that the put was out (commands: 1 get, 3 the put is out,
 * 2 done).
 */
static int bulk_getter(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 16);
	char *bulk = page_buf(BULK_LEN), *small = page_buf(4096);
	ptl_handle_md_t bulk_md, small_md;

	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 23, PTL_RETAIN),
				  ptl_st_md(small, 8, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT, eq),
				  PTL_RETAIN, &small_md));
	chan_tell(c, 1);
	while (wait_cmd(c) == 1) {
		ptl_match_bits_t first = 0;
		ptl_event_t ev;
		int ends = 0, quarter;

		memset(bulk, 0, BULK_LEN);
		CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(bulk, BULK_LEN, 1, 0, eq),
					PTL_RETAIN, &bulk_md));
		CK_RC(PTL_OK, PtlGet(bulk_md, test.id, PT, 0, 22, 0));
		CK(3, wait_cmd(c));
		quarter = bulk_quarter_to_come(bulk);
		while (ends < 2) {
			CK_RC(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
			if (ev.type != PTL_EVENT_REPLY_END &&
			    ev.type != PTL_EVENT_PUT_END)
				continue;
			CK(PTL_NI_OK, ev.ni_fail_type);
			if (!ends++)
				first = ev.type == PTL_EVENT_PUT_END ? 23 : 22;
		}
		CK_RC(PTL_OK, PtlMDUnlink(bulk_md));
		chan_tell(c, (int)first);
		chan_tell(c, quarter);
	}
	return 0;
}

TEST_F(data, a_small_put_is_not_held_behind_a_bulk_reply)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 16);
	char *bulk = bulk_source(), *small = page_buf(4096);
	ptl_handle_md_t bulk_md, small_md;
	int attempt, ready, told = 0;

	if (!ptl_st_two_nodes())
		SKIP(return, "needs two nodes (PTL_PEER_NETNS)");
	start_peer(_metadata, self, bulk_getter);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(small, 8,
							PTL_MD_THRESH_INF, 0,
							eq),
				    PTL_RETAIN, &small_md));
	for (attempt = 0; attempt < BULK_ATTEMPTS && !told; attempt++) {
		ptl_event_t ev;
		int first;

		ASSERT_EQ(PTL_OK, PtlMDAttach(me_attach(self->ni, 22,
							PTL_UNLINK),
					      ptl_st_md(bulk, BULK_LEN, 1,
							PTL_MD_OP_GET, eq),
					      PTL_UNLINK, &bulk_md));
		tell_peer(&self->p, 1);
		/* GET_START: the REPLY is queued, its first frames gone. */
		do {
			ASSERT_EQ(PTL_OK,
				  ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
		} while (ev.type != PTL_EVENT_GET_START);
		ASSERT_EQ(PTL_OK, PtlPut(small_md, PTL_NO_ACK_REQ,
					 self->peer.id, PT, 0, 23, 0, 0));
		tell_peer(&self->p, 3);
		ASSERT_EQ(0, ptl_peer_recv(&self->p, &first, sizeof(first)));
		ASSERT_EQ(0, ptl_peer_recv(&self->p, &told, sizeof(told)));
		/* The put first, though sent after the REPLY began. */
		if (told)
			EXPECT_EQ(23, first);
		/* Our own events of this attempt: the REPLY's end, the put's. */
		do {
			ASSERT_EQ(PTL_OK,
				  ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
		} while (ev.type != PTL_EVENT_GET_END);
	}
	EXPECT_TRUE(told)
		TH_LOG("the bulk reply was 3/4 done before the put was out, %d times",
		       BULK_ATTEMPTS);
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- getput ---- */

static int getput_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 16);
	ptl_handle_eq_t eq2 = eq_alloc(ni, 16);
	char *buf = page_buf(4096);
	ptl_handle_md_t md, md2;
	ptl_event_t s, e;
	ptl_sr_value_t drops;

	ptl_st_fill(buf, 64, 3);
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 9, PTL_RETAIN),
				  ptl_st_md(buf, 64, PTL_MD_THRESH_INF,
					    PTL_MD_OP_GET | PTL_MD_OP_PUT |
					    PTL_MD_MANAGE_REMOTE, eq),
				  PTL_RETAIN, &md));
	/* GetPut needs both op bits: this one only accepts puts. */
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 10, PTL_RETAIN),
				  ptl_st_md(buf + 2048, 64, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT, eq2),
				  PTL_RETAIN, &md2));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK_NEXT(eq, s, PTL_EVENT_GETPUT_START);
	CK_NEXT(eq, e, PTL_EVENT_GETPUT_END);
	CK(test.id.pid, e.initiator.pid);
	CK(test.uid, e.uid);
	CK(PT, e.pt_index);
	CK(9, e.match_bits);
	CK(16, e.rlength);
	CK(16, e.mlength);
	CK(8, e.offset);
	CK(0xabcdef, s.hdr_data);	/* contract 8 */
	CK(0xabcdef, e.hdr_data);
	CK(s.sequence, e.link);
	CK_EMPTY(eq);
	CK_EMPTY(eq2);
	CK(-1, ptl_st_check(buf, 8, 3, 0));
	CK(-1, ptl_st_check(buf + 8, 16, 4, 0));
	CK(-1, ptl_st_check(buf + 24, 40, 3, 24));
	drops = wait_sr(ni, PTL_SR_DROP_COUNT, 1);
	CK(1, drops);
	return 0;
}

TEST_F(data, getput_swaps_target_bytes_and_returns_the_old_ones)
{
	ptl_handle_eq_t geq = eq_alloc(self->ni, 16);
	ptl_handle_eq_t peq = eq_alloc(self->ni, 16);
	char *buf = page_buf(4096);
	ptl_handle_md_t gmd, pmd, pmd2;
	ptl_event_t ev;
	int ready;

	start_peer(_metadata, self, getput_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	memset(buf, 0, 4096);
	ptl_st_fill(buf + 1024, 16, 4);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(buf, 16, 1, 0, geq),
				    PTL_RETAIN, &gmd));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(buf + 1024, 16, 1, 0,
							peq),
				    PTL_RETAIN, &pmd));
	ASSERT_EQ(PTL_OK, PtlGetPut(gmd, pmd, self->peer.id, PT, 0, 9, 8,
				    0xabcdef));
	ASSERT_EQ(PTL_OK, ptl_st_next(peq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(peq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
	EXPECT_EQ(pmd, ev.md_handle);
	ASSERT_EQ(PTL_OK, ptl_st_next(geq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_REPLY_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(geq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_REPLY_END, ev.type);
	EXPECT_EQ(gmd, ev.md_handle);
	EXPECT_EQ(16, ev.mlength);
	EXPECT_EQ(self->peer.id.pid, ev.initiator.pid);
	EXPECT_EQ(9, ev.match_bits);
	/* The old target bytes [8, 24) came back. */
	EXPECT_EQ(-1, ptl_st_check(buf, 16, 3, 8));
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(geq, &ev));
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(peq, &ev));

	/* To an MD without PTL_MD_OP_GET: dropped, no reply. */
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(buf + 1024, 16, 1, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &pmd2));
	ASSERT_EQ(PTL_OK, PtlMDUpdate(gmd, NULL,
				      &(ptl_md_t){ .start = buf, .length = 16,
						   .threshold = 1,
						   .eq_handle = geq },
				      PTL_EQ_NONE));
	ASSERT_EQ(PTL_OK, PtlGetPut(gmd, pmd2, self->peer.id, PT, 0, 10, 0,
				    0));
	EXPECT_EQ(PTL_EQ_EMPTY, ptl_st_next(geq, &ev, 300));
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- truncation and rejection ---- */

static int truncate_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t ea = eq_alloc(ni, 16), eb = eq_alloc(ni, 16);
	ptl_handle_eq_t ec = eq_alloc(ni, 16);
	char *buf = page_buf(8192);
	ptl_handle_md_t md;
	ptl_event_t ev;

	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 1, PTL_RETAIN),
				  ptl_st_md(buf, 100, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT | PTL_MD_TRUNCATE,
					    ea), PTL_RETAIN, &md));
	/* Too small and no truncation: refused, the search goes on. */
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 2, PTL_RETAIN),
				  ptl_st_md(buf + 1024, 100, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT, eb),
				  PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 2, PTL_RETAIN),
				  ptl_st_md(buf + 2048, 1000,
					    PTL_MD_THRESH_INF, PTL_MD_OP_PUT,
					    ec), PTL_RETAIN, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK_NEXT(ea, ev, PTL_EVENT_PUT_START);
	CK_NEXT(ea, ev, PTL_EVENT_PUT_END);
	CK(300, ev.rlength);
	CK(100, ev.mlength);
	/* The MD is full now: truncation gives a 0-byte match. */
	CK_NEXT(ea, ev, PTL_EVENT_PUT_START);
	CK_NEXT(ea, ev, PTL_EVENT_PUT_END);
	CK(300, ev.rlength);
	CK(0, ev.mlength);
	CK(100, ev.offset);
	CK_EMPTY(ea);
	CK_EMPTY(eb);
	CK_NEXT(ec, ev, PTL_EVENT_PUT_START);
	CK_NEXT(ec, ev, PTL_EVENT_PUT_END);
	CK(300, ev.mlength);
	CK_EMPTY(ec);
	CK(-1, ptl_st_check(buf, 100, 5, 0));
	CK(-1, ptl_st_memchk(buf + 100, 0, 924));
	CK(-1, ptl_st_memchk(buf + 1024, 0, 1024));
	CK(-1, ptl_st_check(buf + 2048, 300, 5, 0));
	/* The unmatched put was dropped and counted with its length. */
	CK(1, wait_sr(ni, PTL_SR_DROP_COUNT, 1));
	{
		ptl_sr_value_t len;

		CK_RC(PTL_OK, PtlNIStatus(ni, PTL_SR_DROP_LENGTH, &len));
		CK(300, len);
	}
	return 0;
}

TEST_F(data, truncate_cuts_long_puts_and_non_truncating_mds_pass_them_on)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 64);
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	ptl_event_t ev;
	int ready, acks = 0;
	ptl_size_t ml[3] = { 0 };

	start_peer(_metadata, self, truncate_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ptl_st_fill(src, 300, 5);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 300,
							PTL_MD_THRESH_INF,
							PTL_MD_EVENT_START_DISABLE,
							eq),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0, 1, 0,
				 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0, 1, 0,
				 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0, 2, 0,
				 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0, 3, 0,
				 0));
	while (acks < 3 && ptl_st_next(eq, &ev, 3000) == PTL_OK) {
		if (ev.type == PTL_EVENT_ACK) {
			EXPECT_EQ(300, ev.rlength);
			ml[acks++] = ev.mlength;
		}
	}
	ASSERT_EQ(3, acks);
	EXPECT_EQ(100, ml[0]);
	EXPECT_EQ(0, ml[1]);
	EXPECT_EQ(300, ml[2]);
	/* No ACK for the dropped put. */
	while (ptl_st_next(eq, &ev, 300) == PTL_OK)
		EXPECT_NE(PTL_EVENT_ACK, ev.type);
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- threshold, auto-unlink cascades ---- */

static int threshold_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 32), eq2 = eq_alloc(ni, 16);
	char *buf = page_buf(8192);
	ptl_handle_me_t me5, me6, me8;
	ptl_handle_md_t md5, md6, md8, again;
	ptl_event_t ev, end;
	int i;

	me5 = me_attach(ni, 5, PTL_UNLINK);
	CK_RC(PTL_OK, PtlMDAttach(me5, ptl_st_md(buf, 192, 3, PTL_MD_OP_PUT,
						 eq), PTL_UNLINK, &md5));
	me6 = me_attach(ni, 6, PTL_RETAIN);
	CK_RC(PTL_OK, PtlMDAttach(me6, ptl_st_md(buf + 1024, 64, 1,
						 PTL_MD_OP_PUT, eq2),
				  PTL_UNLINK, &md6));
	/* No EQ: auto-unlink still happens (contract 9). */
	me8 = me_attach(ni, 8, PTL_UNLINK);
	CK_RC(PTL_OK, PtlMDAttach(me8, ptl_st_md(buf + 2048, 64, 1,
						 PTL_MD_OP_PUT, PTL_EQ_NONE),
				  PTL_UNLINK, &md8));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));

	for (i = 0; i < 3; i++) {
		CK_NEXT(eq, ev, PTL_EVENT_PUT_START);
		CK_NEXT(eq, end, PTL_EVENT_PUT_END);
		CK(i, end.hdr_data);
		CK(i * 64, end.offset);
		CK(2 - i, end.md.threshold);
	}
	CK_NEXT(eq, ev, PTL_EVENT_UNLINK);
	CK(end.sequence, ev.link);
	CK(end.sequence + 1, ev.sequence);
	CK(2, ev.hdr_data);
	CK(128, ev.offset);
	CK(64, ev.mlength);
	CK(md5, ev.md_handle);
	CK(test.id.pid, ev.initiator.pid);
	CK_EMPTY(eq);
	/* The MD and its PTL_UNLINK ME are gone. */
	CK_RC(PTL_MD_INVALID, PtlMDUnlink(md5));
	CK_RC(PTL_ME_INVALID, PtlMEUnlink(me5));
	/* The PTL_RETAIN ME stays, MD-less, and takes a new MD. */
	CK_NEXT(eq2, ev, PTL_EVENT_PUT_START);
	CK_NEXT(eq2, end, PTL_EVENT_PUT_END);
	CK_NEXT(eq2, ev, PTL_EVENT_UNLINK);
	CK(end.sequence, ev.link);
	CK_EMPTY(eq2);
	CK_RC(PTL_MD_INVALID, PtlMDUnlink(md6));
	CK_RC(PTL_OK, PtlMDAttach(me6, ptl_st_md(buf, 8, 1, PTL_MD_OP_PUT,
						 PTL_EQ_NONE),
				  PTL_RETAIN, &again));
	CK_RC(PTL_MD_INVALID, PtlMDUnlink(md8));
	CK_RC(PTL_ME_INVALID, PtlMEUnlink(me8));
	/* The 4th put to bits 5 and the 2nd to bits 8 found nothing. */
	CK(2, wait_sr(ni, PTL_SR_DROP_COUNT, 2));
	CK(-1, ptl_st_check(buf, 192, 6, 0));
	return 0;
}

TEST_F(data, threshold_reached_auto_unlinks_md_and_me_with_unlink_event)
{
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	int ready, i;

	start_peer(_metadata, self, threshold_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ptl_st_fill(src, 192, 6);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(PTL_OK, PtlMDBind(self->ni,
					    ptl_st_md(src + (i % 3) * 64, 64, 1,
						      0, PTL_EQ_NONE),
					    PTL_UNLINK, &md));
		ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT,
					 0, 5, 0, i));
	}
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 64,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 6,
				 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 8,
				 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 8,
				 0, 0));
	/* Bound MDs with PTL_UNLINK and threshold 1 are gone too. */
	EXPECT_EQ(1, wait_sr_within(self->ni, PTL_SR_MDS_CUR, 1, 1));
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- max_size ---- */

static int max_size_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 32);
	char *buf = page_buf(4096);
	ptl_handle_me_t mh = me_attach(ni, 10, PTL_UNLINK);
	ptl_handle_md_t md;
	ptl_md_t d = ptl_st_md(buf, 1000, PTL_MD_THRESH_INF,
			       PTL_MD_OP_PUT | PTL_MD_MAX_SIZE |
			       PTL_MD_EVENT_START_DISABLE, eq);
	ptl_event_t ev;
	int i;

	d.max_size = 300;
	CK_RC(PTL_OK, PtlMDAttach(mh, d, PTL_UNLINK, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	for (i = 0; i < 3; i++) {
		CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
		CK(i * 300, ev.offset);
		CK(300, ev.mlength);
		CK(i, ev.hdr_data);
	}
	/* 100 bytes left < max_size 300: inactive, unlinked. */
	CK_NEXT(eq, ev, PTL_EVENT_UNLINK);
	CK(2, ev.hdr_data);
	CK_EMPTY(eq);
	CK_RC(PTL_ME_INVALID, PtlMEUnlink(mh));
	CK(1, wait_sr(ni, PTL_SR_DROP_COUNT, 1));
	for (i = 0; i < 3; i++)
		CK(-1, ptl_st_check(buf + i * 300, 300, 20 + i, 0));
	CK(-1, ptl_st_memchk(buf + 900, 0, 100));
	return 0;
}

TEST_F(data, max_size_deactivates_the_md_before_it_could_truncate)
{
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	int ready, i;

	start_peer(_metadata, self, max_size_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	for (i = 0; i < 4; i++) {
		ptl_st_fill(src + i * 300, 300, 20 + i);
		ASSERT_EQ(PTL_OK, PtlMDBind(self->ni,
					    ptl_st_md(src + i * 300, 300, 1, 0,
						      PTL_EQ_NONE),
					    PTL_UNLINK, &md));
		ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT,
					 0, 10, 0, i));
	}
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- iovecs ---- */

static int iovec_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 16);
	char *pages = page_buf(6 * 4096);
	ptl_md_iovec_t iov[3] = {
		{ pages + 4096 - 100, 100 },	/* ends at a page boundary */
		{ pages + 3 * 4096, 50 },
		{ pages + 5 * 4096 + 10, 200 },
	};
	ptl_handle_md_t md;
	ptl_event_t ev;

	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 11, PTL_RETAIN),
				  ptl_st_md(iov, 3, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT | PTL_MD_OP_GET |
					    PTL_MD_IOVEC |
					    PTL_MD_MANAGE_REMOTE |
					    PTL_MD_EVENT_START_DISABLE, eq),
				  PTL_RETAIN, &md));
	/* The MD keeps its own copy of the array. */
	memset(iov, 0, sizeof(iov));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK(330, ev.mlength);
	CK(10, ev.offset);
	CK_NEXT(eq, ev, PTL_EVENT_GET_END);
	CK(350, ev.mlength);
	CK(0, ev.offset);
	CK_EMPTY(eq);
	/* The 330 bytes at offset 10 of 100 + 50 + 200. */
	CK(-1, ptl_st_memchk(pages + 4096 - 100, 0, 10));
	CK(-1, ptl_st_check(pages + 4096 - 90, 90, 7, 0));
	CK(-1, ptl_st_check(pages + 3 * 4096, 50, 7, 90));
	CK(-1, ptl_st_check(pages + 5 * 4096 + 10, 190, 7, 140));
	CK(-1, ptl_st_memchk(pages + 5 * 4096 + 200, 0, 10));
	CK(-1, ptl_st_memchk(pages + 3 * 4096 + 50, 0, 4096 - 50));
	return 0;
}

TEST_F(data, iovec_mds_scatter_and_gather_across_segments)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 16);
	char *pages = page_buf(8 * 4096), *back = page_buf(4096);
	char *flat = page_buf(4096);
	ptl_md_iovec_t iov[3] = {
		{ pages + 4096 - 30, 30 },
		{ pages + 2 * 4096 + 7, 200 },
		{ pages + 6 * 4096, 100 },
	};
	ptl_handle_md_t md, gmd;
	ptl_event_t ev;
	int ready, i;

	start_peer(_metadata, self, iovec_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ptl_st_fill(flat, 330, 7);
	for (i = 0; i < 3; i++)
		memcpy(iov[i].iov_base,
		       flat + (i == 0 ? 0 : i == 1 ? 30 : 230),
		       iov[i].iov_len);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(iov, 3, 1,
							PTL_MD_IOVEC, eq),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 11,
				 10, 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_SEND_END, ev.type);
	EXPECT_EQ(330, ev.mlength);
	/* Read the whole 350-byte target back through a get. */
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(back, 350, 1, 0, eq),
				    PTL_RETAIN, &gmd));
	ASSERT_EQ(PTL_OK, PtlGet(gmd, self->peer.id, PT, 0, 11, 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_REPLY_END, ev.type);
	EXPECT_EQ(350, ev.mlength);
	EXPECT_EQ(-1, ptl_st_memchk(back, 0, 10));
	EXPECT_EQ(-1, ptl_st_check(back + 10, 330, 7, 0));
	EXPECT_EQ(-1, ptl_st_memchk(back + 340, 0, 10));
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- offsets ---- */

static int offsets_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t er = eq_alloc(ni, 16), el = eq_alloc(ni, 16);
	char *buf = page_buf(8192);
	ptl_handle_md_t md;
	ptl_event_t ev;

	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 12, PTL_RETAIN),
				  ptl_st_md(buf, 4096, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT |
					    PTL_MD_MANAGE_REMOTE |
					    PTL_MD_EVENT_START_DISABLE, er),
				  PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 13, PTL_RETAIN),
				  ptl_st_md(buf + 4096, 4096,
					    PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT |
					    PTL_MD_EVENT_START_DISABLE, el),
				  PTL_RETAIN, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK_NEXT(er, ev, PTL_EVENT_PUT_END);
	CK(1000, ev.offset);
	CK_NEXT(er, ev, PTL_EVENT_PUT_END);
	CK(0, ev.offset);
	CK_EMPTY(er);
	/* Locally managed: the remote offset is ignored. */
	CK_NEXT(el, ev, PTL_EVENT_PUT_END);
	CK(0, ev.offset);
	CK_NEXT(el, ev, PTL_EVENT_PUT_END);
	CK(100, ev.offset);
	CK_EMPTY(el);
	CK(-1, ptl_st_check(buf, 100, 31, 0));
	CK(-1, ptl_st_memchk(buf + 100, 0, 900));
	CK(-1, ptl_st_check(buf + 1000, 100, 30, 0));
	CK(-1, ptl_st_check(buf + 4096, 100, 30, 0));
	CK(-1, ptl_st_check(buf + 4196, 100, 31, 0));
	/* 200 bytes at remote offset 4000 do not fit: dropped. */
	CK(1, wait_sr(ni, PTL_SR_DROP_COUNT, 1));
	CK(-1, ptl_st_memchk(buf + 1100, 0, 4096 - 1100));
	return 0;
}

TEST_F(data, remote_managed_offsets_come_from_the_request)
{
	char *src = page_buf(4096);
	ptl_handle_md_t a, b, big;
	int ready;

	start_peer(_metadata, self, offsets_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ptl_st_fill(src, 100, 30);
	ptl_st_fill(src + 1024, 100, 31);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 100,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &a));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src + 1024, 100,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &b));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src + 2048, 200,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &big));
	ASSERT_EQ(PTL_OK, PtlPut(a, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 12,
				 1000, 0));
	ASSERT_EQ(PTL_OK, PtlPut(b, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 12,
				 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(big, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 12,
				 4000, 0));
	ASSERT_EQ(PTL_OK, PtlPut(a, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 13,
				 3000, 0));
	ASSERT_EQ(PTL_OK, PtlPut(b, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 13,
				 50, 0));
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- access control ---- */

static int acl_target(struct ptl_chan *c, void *arg)
{
	ptl_ni_limits_t want = ptl_st_no_wish();
	struct who me, test;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	char *buf = page_buf(4096);
	ptl_handle_md_t md;
	ptl_sr_value_t v;
	ptl_event_t ev;
	ptl_process_id_t wrong;

	want.max_ac_index = 3;
	ni = peer_open(c, &want, &me, &test);
	eq = eq_alloc(ni, 16);
	wrong = test.id;
	wrong.pid = test.id.pid + 1;
	CK_RC(PTL_OK, PtlACEntry(ni, 1, wrong, PTL_UID_ANY, PTL_JID_ANY,
				 PTL_PT_INDEX_ANY));
	CK_RC(PTL_OK, PtlACEntry(ni, 2, ptl_st_any(), PTL_UID_ANY,
				 PTL_JID_ANY, PT + 1));
	CK_TRUE(test.jid != 4242);
	CK_RC(PTL_OK, PtlACEntry(ni, 3, ptl_st_any(), PTL_UID_ANY, 4242,
				 PTL_PT_INDEX_ANY));
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 14, PTL_RETAIN),
				  ptl_st_md(buf, 4096, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT | PTL_MD_OP_GET |
					    PTL_MD_EVENT_START_DISABLE, eq),
				  PTL_RETAIN, &md));
	chan_tell(c, 1);

	CK(2, wait_cmd(c));	/* three denied puts and one denied get */
	CK(4, wait_sr(ni, PTL_SR_DROP_COUNT, 4));
	CK_RC(PTL_OK, PtlNIStatus(ni, PTL_SR_NAL_REGS_START + 0, &v));
	CK(4, v);
	CK_RC(PTL_OK, PtlNIStatus(ni, PTL_SR_DROP_LENGTH, &v));
	CK(4 * 64, v);
	CK_EMPTY(eq);
	CK(-1, ptl_st_memchk(buf, 0, 4096));
	chan_tell(c, 3);

	CK(4, wait_cmd(c));	/* ac 7 (out of range), then ac 0 */
	CK(5, wait_sr(ni, PTL_SR_DROP_COUNT, 5));
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK(test.id.pid, ev.initiator.pid);
	CK_EMPTY(eq);
	/* Entries can be opened up: now the wrong pid passes entry 1. */
	CK_RC(PTL_OK, PtlACEntry(ni, 1, ptl_st_any(), test.uid, test.jid,
				 PT));
	chan_tell(c, 5);
	CK(6, wait_cmd(c));
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK_EMPTY(eq);
	CK(5, wait_sr(ni, PTL_SR_DROP_COUNT, 5));
	return 0;
}

TEST_F(data, acl_denials_are_dropped_and_counted)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 32);
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	ptl_event_t ev;
	int ready, ac;

	start_peer(_metadata, self, acl_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 64,
							PTL_MD_THRESH_INF,
							PTL_MD_EVENT_START_DISABLE,
							eq),
				    PTL_RETAIN, &md));
	for (ac = 1; ac <= 3; ac++)
		ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT,
					 ac, 14, 0, 0));
	ASSERT_EQ(PTL_OK, PtlGet(md, self->peer.id, PT, 1, 14, 0));
	tell_peer(&self->p, 2);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(3, ready);
	/* Denied requests get no ACK and no REPLY. */
	while (ptl_st_next(eq, &ev, 200) == PTL_OK)
		EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 7, 14,
				 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 14,
				 0, 0));
	tell_peer(&self->p, 4);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(5, ready);
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 1, 14,
				 0, 0));
	tell_peer(&self->p, 6);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* An unprivileged peer: entry 0 admits only the target's own user. */
static int nobody_puts(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	char buf[64];
	int cmd;

	CK(0, setresgid(65534, 65534, 65534));
	CK(0, setresuid(65534, 65534, 65534));
	ni = peer_open(c, NULL, &me, &test);
	CK(65534, me.uid);
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, 64, PTL_MD_THRESH_INF, 0,
					      PTL_EQ_NONE),
				PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, test.id, PT, 0, 15, 0, 0));
	cmd = 1;
	CHAN_SEND(c, cmd);
	CK(2, wait_cmd(c));
	CK_RC(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, test.id, PT, 1, 15, 0, 0));
	CHAN_SEND(c, cmd);
	CK(3, wait_cmd(c));
	return 0;
}

TEST_F(data, default_acl_entry_admits_only_the_same_user)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 16);
	char *buf = page_buf(4096);
	ptl_handle_me_t mh;
	ptl_handle_md_t md;
	ptl_sr_value_t v;
	ptl_event_t ev;
	int done;

	ASSERT_EQ(0, geteuid());
	mh = me_attach(self->ni, 15, PTL_RETAIN);
	ASSERT_EQ(PTL_OK, PtlMDAttach(mh, ptl_st_md(buf, 4096,
						    PTL_MD_THRESH_INF,
						    PTL_MD_OP_PUT |
						    PTL_MD_EVENT_START_DISABLE,
						    eq),
				      PTL_RETAIN, &md));
	start_peer(_metadata, self, nobody_puts);
	EXPECT_EQ(65534, self->peer.uid);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &done, sizeof(done)));
	v = wait_sr(self->ni, PTL_SR_DROP_COUNT, 1);
	EXPECT_EQ(1, v);
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_NAL_REGS_START, &v));
	EXPECT_EQ(1, v);
	EXPECT_EQ(PTL_EQ_EMPTY, ptl_st_next(eq, &ev, 100));
	ASSERT_EQ(PTL_OK, PtlACEntry(self->ni, 1, ptl_st_any(), 65534,
				     PTL_JID_ANY, PTL_PT_INDEX_ANY));
	tell_peer(&self->p, 2);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &done, sizeof(done)));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_PUT_END, ev.type);
	EXPECT_EQ(65534, ev.uid);
	EXPECT_EQ(self->peer.id.pid, ev.initiator.pid);
	tell_peer(&self->p, 3);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- EQ overflow ---- */

static int overflow_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 8);
	char *buf = page_buf(4096);
	ptl_handle_md_t md;
	ptl_event_t ev;
	ptl_seq_t prev;
	int i;

	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 16, PTL_RETAIN),
				  ptl_st_md(buf, 4096, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT |
					    PTL_MD_EVENT_START_DISABLE, eq),
				  PTL_RETAIN, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK(20, wait_sr(ni, PTL_SR_RECV_COUNT, 20));
	usleep(200 * 1000);	/* let the last PUT_END land */
	/* 20 events into 8 slots: 12..19 survive (contract 10). */
	CK_RC(PTL_EQ_DROPPED, PtlEQGet(eq, &ev));
	CK(PTL_EVENT_PUT_END, ev.type);
	CK(12, ev.hdr_data);
	CK(12 * 16, ev.offset);
	prev = ev.sequence;
	for (i = 13; i < 20; i++) {
		CK_RC(PTL_OK, PtlEQGet(eq, &ev));
		CK(i, ev.hdr_data);
		CK((ptl_seq_t)(prev + 1), ev.sequence);
		prev = ev.sequence;
	}
	CK_RC(PTL_EQ_EMPTY, PtlEQGet(eq, &ev));
	/* The ring works normally afterwards. */
	chan_tell(c, 3);
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK(20, ev.hdr_data);
	CK((ptl_seq_t)(prev + 1), ev.sequence);
	CK_EMPTY(eq);
	return 0;
}

TEST_F(data, eq_overflow_reports_dropped_then_the_rest_in_order)
{
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	int ready, i;

	start_peer(_metadata, self, overflow_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 16,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT,
					 0, 16, 0, i));
	tell_peer(&self->p, 2);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 16,
				 0, 20));
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- PtlMDUpdate against arriving messages ---- */

static int update_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 16);
	char *buf = page_buf(4096);
	ptl_handle_md_t md;
	ptl_md_t old, armed = ptl_st_md(buf, 4096, 1, PTL_MD_OP_PUT, eq);
	ptl_event_t ev;

	/* Threshold 0: attached inactive, as MPI does (spec 8.7). */
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 17, PTL_RETAIN),
				  ptl_st_md(buf, 4096, 0, PTL_MD_OP_PUT, eq),
				  PTL_RETAIN, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));		/* a put to the inactive MD */
	CK(1, wait_sr(ni, PTL_SR_DROP_COUNT, 1));
	CK_EMPTY(eq);
	CK_RC(PTL_OK, PtlMDUpdate(md, &old, &armed, eq));
	CK(0, old.threshold);
	chan_tell(c, 3);

	CK(4, wait_cmd(c));		/* a put that is accepted */
	CK(1, wait_sr(ni, PTL_SR_RECV_COUNT, 1));
	usleep(100 * 1000);
	memset(&old, 0x5a, sizeof(old));
	CK_RC(PTL_MD_NO_UPDATE, PtlMDUpdate(md, &old, &armed, eq));
	CK(0, old.threshold);		/* filled anyway (contract 12) */
	CK_TRUE(old.start == buf);
	CK(4096, old.length);
	CK_NEXT(eq, ev, PTL_EVENT_PUT_START);
	CK_RC(PTL_MD_NO_UPDATE, PtlMDUpdate(md, &old, &armed, eq));
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK(-1, ptl_st_check(buf, 64, 40, 0));
	CK_RC(PTL_OK, PtlMDUpdate(md, &old, &armed, eq));
	chan_tell(c, 5);
	CK(6, wait_cmd(c));		/* accepted again, at offset 0 */
	CK_NEXT(eq, ev, PTL_EVENT_PUT_START);
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK(0, ev.offset);
	CK(1, wait_sr(ni, PTL_SR_DROP_COUNT, 1));
	return 0;
}

TEST_F(data, md_update_is_refused_while_events_are_unread)
{
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	int r;

	start_peer(_metadata, self, update_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &r, sizeof(r)));
	ptl_st_fill(src, 64, 40);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 64,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 17,
				 0, 0));
	tell_peer(&self->p, 2);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &r, sizeof(r)));
	ASSERT_EQ(3, r);
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 17,
				 0, 0));
	tell_peer(&self->p, 4);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &r, sizeof(r)));
	ASSERT_EQ(5, r);
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 17,
				 0, 0));
	tell_peer(&self->p, 6);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- ACK and event options ---- */

static int options_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t e[4];
	char *buf = page_buf(4096);
	ptl_handle_me_t me_none;
	ptl_handle_md_t md;
	ptl_event_t ev;
	int i;

	for (i = 0; i < 4; i++)
		e[i] = eq_alloc(ni, 16);
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 20, PTL_RETAIN),
				  ptl_st_md(buf, 64, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT | PTL_MD_ACK_DISABLE |
					    PTL_MD_MANAGE_REMOTE, e[0]),
				  PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 21, PTL_RETAIN),
				  ptl_st_md(buf, 64, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT |
					    PTL_MD_MANAGE_REMOTE |
					    PTL_MD_EVENT_START_DISABLE, e[1]),
				  PTL_RETAIN, &md));
	CK_RC(PTL_OK, PtlMDAttach(me_attach(ni, 22, PTL_RETAIN),
				  ptl_st_md(buf, 64, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT |
					    PTL_MD_MANAGE_REMOTE |
					    PTL_MD_EVENT_END_DISABLE, e[2]),
				  PTL_RETAIN, &md));
	/* Both kinds disabled: no events at all, not even UNLINK. */
	me_none = me_attach(ni, 23, PTL_UNLINK);
	CK_RC(PTL_OK, PtlMDAttach(me_none,
				  ptl_st_md(buf, 64, 1,
					    PTL_MD_OP_PUT |
					    PTL_MD_EVENT_START_DISABLE |
					    PTL_MD_EVENT_END_DISABLE, e[3]),
				  PTL_UNLINK, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK_NEXT(e[0], ev, PTL_EVENT_PUT_START);
	CK_NEXT(e[0], ev, PTL_EVENT_PUT_END);
	CK_EMPTY(e[0]);
	CK_NEXT(e[1], ev, PTL_EVENT_PUT_END);
	CK_NEXT(e[1], ev, PTL_EVENT_PUT_END);
	CK_EMPTY(e[1]);
	CK_NEXT(e[2], ev, PTL_EVENT_PUT_START);
	CK_EMPTY(e[2]);
	CK_EMPTY(e[3]);
	CK_RC(PTL_ME_INVALID, PtlMEUnlink(me_none));
	CK_RC(PTL_MD_INVALID, PtlMDUnlink(md));
	return 0;
}

TEST_F(data, ack_and_event_options_suppress_exactly_what_they_say)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 64);
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	ptl_event_t ev;
	int ready, acks = 0;
	ptl_match_bits_t acked = 0;

	start_peer(_metadata, self, options_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 32,
							PTL_MD_THRESH_INF,
							PTL_MD_EVENT_START_DISABLE,
							eq),
				    PTL_RETAIN, &md));
	/* ACK_DISABLE at the target: no ACK although one was asked for. */
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0, 20, 0,
				 0));
	/* No ACK asked for: none comes. */
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 21,
				 0, 0));
	/* Asked for and allowed: exactly one ACK. */
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, self->peer.id, PT, 0, 21, 0,
				 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 22,
				 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0, 23,
				 0, 0));
	while (ptl_st_next(eq, &ev, 500) == PTL_OK) {
		if (ev.type == PTL_EVENT_ACK) {
			acks++;
			acked = ev.match_bits;
		} else {
			EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
		}
	}
	EXPECT_EQ(1, acks);
	EXPECT_EQ(21, acked);
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- matching ---- */

static int match_target(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t ea = eq_alloc(ni, 16), eb = eq_alloc(ni, 16);
	ptl_handle_eq_t ec = eq_alloc(ni, 16);
	char *buf = page_buf(4096);
	ptl_process_id_t other = test.id;
	ptl_handle_me_t head, a, b, cme;
	ptl_handle_md_t md;
	ptl_event_t ev;

	other.pid = test.id.pid + 1000;
	/* An ME without an MD matches everything but is skipped. */
	CK_RC(PTL_OK, PtlMEAttach(ni, PT, ptl_st_any(), 0, ~0ULL, PTL_RETAIN,
				  PTL_INS_AFTER, &head));
	/* Right bits, wrong initiator. */
	CK_RC(PTL_OK, PtlMEAttach(ni, PT, other, 0xf5, 0, PTL_RETAIN,
				  PTL_INS_AFTER, &a));
	CK_RC(PTL_OK, PtlMDAttach(a, ptl_st_md(buf, 64, PTL_MD_THRESH_INF,
					       PTL_MD_OP_PUT, ea),
				  PTL_RETAIN, &md));
	/* 0xf0 with the low nibble ignored. */
	CK_RC(PTL_OK, PtlMEAttach(ni, PT, test.id, 0xf0, 0x0f, PTL_RETAIN,
				  PTL_INS_AFTER, &b));
	CK_RC(PTL_OK, PtlMDAttach(b, ptl_st_md(buf + 64, 64,
					       PTL_MD_THRESH_INF,
					       PTL_MD_OP_PUT, eb),
				  PTL_RETAIN, &md));
	/* Exactly 0xf5, inserted before b: it wins for 0xf5. */
	CK_RC(PTL_OK, PtlMEInsert(b, ptl_st_any(), 0xf5, 0, PTL_RETAIN,
				  PTL_INS_BEFORE, &cme));
	CK_RC(PTL_OK, PtlMDAttach(cme, ptl_st_md(buf + 128, 64,
						 PTL_MD_THRESH_INF,
						 PTL_MD_OP_PUT, ec),
				  PTL_RETAIN, &md));
	chan_tell(c, 1);
	CK(2, wait_cmd(c));
	CK_EMPTY(ea);
	CK_NEXT(ec, ev, PTL_EVENT_PUT_START);
	CK(0xf5, ev.match_bits);
	CK_NEXT(ec, ev, PTL_EVENT_PUT_END);
	CK_EMPTY(ec);
	CK_NEXT(eb, ev, PTL_EVENT_PUT_START);
	CK(0xf7, ev.match_bits);
	CK_NEXT(eb, ev, PTL_EVENT_PUT_END);
	CK_EMPTY(eb);
	CK(1, wait_sr(ni, PTL_SR_DROP_COUNT, 1));	/* 0xe5 */
	return 0;
}

TEST_F(data, matching_honours_ids_ignore_bits_order_and_md_less_mes)
{
	char *src = page_buf(4096);
	ptl_handle_md_t md;
	int ready;

	start_peer(_metadata, self, match_target);
	ASSERT_EQ(0, ptl_peer_recv(&self->p, &ready, sizeof(ready)));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 8,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0,
				 0xf5, 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0,
				 0xf7, 0, 0));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->peer.id, PT, 0,
				 0xe5, 0, 0));
	tell_peer(&self->p, 2);
	EXPECT_EQ(0, ptl_peer_wait(&self->p));
}

/* ---- more than two processes ---- */

#define SENDERS 3
#define PER_SENDER 40

static int sender(struct ptl_chan *c, void *arg)
{
	struct who me, test;
	ptl_handle_ni_t ni = peer_open(c, NULL, &me, &test);
	ptl_handle_eq_t eq = eq_alloc(ni, 256);
	int idx = *(int *)arg;
	char buf[32];
	ptl_handle_md_t md;
	ptl_event_t ev;
	int i, acks = 0;

	CK(1, wait_cmd(c));
	ptl_st_fill(buf, sizeof(buf), 50 + idx);
	CK_RC(PTL_OK, PtlMDBind(ni, ptl_st_md(buf, sizeof(buf),
					      PTL_MD_THRESH_INF,
					      PTL_MD_EVENT_START_DISABLE, eq),
				PTL_RETAIN, &md));
	for (i = 0; i < PER_SENDER; i++)
		CK_RC(PTL_OK, PtlPut(md, PTL_ACK_REQ, test.id, PT, 0, 30,
				     0, (ptl_hdr_data_t)idx << 32 | i));
	while (acks < PER_SENDER) {
		CK_RC(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
		if (ev.type == PTL_EVENT_ACK)
			acks++;
	}
	return 0;
}

TEST_F(data, several_senders_reach_one_target_with_their_own_identity)
{
	ptl_handle_eq_t eq = eq_alloc(self->ni, 1024);
	char *buf = page_buf(SENDERS * PER_SENDER * 32);
	struct ptl_peer peers[SENDERS];
	struct who who[SENDERS];
	int next[SENDERS] = { 0 };
	ptl_handle_md_t md;
	ptl_event_t ev;
	int i, s, go = 1;

	ASSERT_EQ(PTL_OK, PtlMDAttach(me_attach(self->ni, 30, PTL_RETAIN),
				      ptl_st_md(buf, SENDERS * PER_SENDER * 32,
						PTL_MD_THRESH_INF,
						PTL_MD_OP_PUT |
						PTL_MD_EVENT_START_DISABLE,
						eq),
				      PTL_RETAIN, &md));
	for (s = 0; s < SENDERS; s++) {
		ASSERT_EQ(0, ptl_peer_start(&peers[s], sender, &s));
		ASSERT_EQ(0, ptl_peer_recv(&peers[s], &who[s],
					   sizeof(who[s])));
		ASSERT_EQ(0, ptl_peer_send(&peers[s], &self->me,
					   sizeof(self->me)));
	}
	for (s = 0; s < SENDERS; s++)
		ASSERT_EQ(0, ptl_peer_send(&peers[s], &go, sizeof(go)));
	for (i = 0; i < SENDERS * PER_SENDER; i++) {
		ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
		ASSERT_EQ(PTL_EVENT_PUT_END, ev.type);
		s = (int)(ev.hdr_data >> 32);
		ASSERT_LT(s, SENDERS);
		EXPECT_EQ(who[s].id.pid, ev.initiator.pid);
		EXPECT_EQ(who[s].jid, ev.jid);
		/* Each sender's messages arrive in its order. */
		EXPECT_EQ(next[s], (int)(ev.hdr_data & 0xffffffff));
		next[s]++;
		EXPECT_EQ(-1, ptl_st_check(buf + ev.offset, 32, 50 + s, 0));
	}
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(eq, &ev));
	for (s = 0; s < SENDERS; s++)
		EXPECT_EQ(0, ptl_peer_wait(&peers[s]));
}

TEST_HARNESS_MAIN
