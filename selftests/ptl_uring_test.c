// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring extension (<portals/ptl_uring.h>, kmod/ptl_uring.c): a
 * batch of data-movement calls gives the same return codes and the same
 * events as the plain calls, bad handles inside a batch included; a batch
 * spans PtlNIFini like plain calls do; an MD bound in a batch serves the
 * next put; an EQ wait completes in the application's own ring next to a
 * socket; and a process killed with entries in flight and EQ waits armed
 * exits at once and leaves nothing behind. Each with and without SQPOLL.
 *
 * Every test is one Portals process that sends to itself (intra-node
 * delivery runs the target's side in the sender's call), except the exit
 * tests, whose victim is a fork()ed child.
 */
#include "ptl_selftest.h"

#include <liburing.h>
#include <sys/socket.h>
#include <portals/ptl_uring.h>

#include "kselftest_harness.h"

#define PT 4
#define BAD_PT 200
#define BITS 7
#define NOBODY_PID 4000

/* Creating a ring may be refused (SQPOLL without privileges, no io_uring). */
static ptl_uring_t *uring_or_skip(ptl_handle_ni_t ni, unsigned int depth,
				  unsigned int flags)
{
	ptl_uring_t *u = NULL;
	int rc = PtlUringCreate(ni, depth, flags, &u);

	if (rc != PTL_OK) {
		printf("# PtlUringCreate(flags %u): %s\n", flags,
		       PtlErrorStr(rc));
		return NULL;
	}
	return u;
}

/* Puts @n completions tagged 0..n-1 at their tag's index. */
static void by_user_data(ptl_uring_cqe_t *cqe, unsigned int n)
{
	ptl_uring_cqe_t sorted[128];
	unsigned int i;

	CK_TRUE(n <= 128);
	for (i = 0; i < n; i++) {
		CK_TRUE(cqe[i].user_data < n);
		sorted[cqe[i].user_data] = cqe[i];
	}
	for (i = 0; i < n; i++)
		CK(i, sorted[i].user_data);
	memcpy(cqe, sorted, n * sizeof(*cqe));
}

/* One Portals process talking to itself. */
struct self {
	ptl_handle_ni_t ni;
	ptl_process_id_t me;
	ptl_handle_eq_t ini_eq, tgt_eq;
	ptl_handle_md_t send_md, get_md, put_md, recv_md;
	ptl_handle_me_t me_h;
	char sendbuf[16], getbuf[8], putbuf[8];
	char recvbuf[64];
};

static void self_open(struct self *s)
{
	ptl_md_t md;

	memset(s, 0, sizeof(*s));
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &s->ni));
	CK_RC(PTL_OK, PtlGetId(s->ni, &s->me));
	CK_RC(PTL_OK, PtlEQAlloc(s->ni, 1024, PTL_EQ_HANDLER_NONE,
				 &s->ini_eq));
	CK_RC(PTL_OK, PtlEQAlloc(s->ni, 1024, PTL_EQ_HANDLER_NONE,
				 &s->tgt_eq));
	memcpy(s->sendbuf, "0123456789abcdef", 16);
	md = ptl_st_md(s->sendbuf, sizeof(s->sendbuf), PTL_MD_THRESH_INF, 0,
		       s->ini_eq);
	CK_RC(PTL_OK, PtlMDBind(s->ni, md, PTL_RETAIN, &s->send_md));
	md = ptl_st_md(s->getbuf, sizeof(s->getbuf), PTL_MD_THRESH_INF, 0,
		       s->ini_eq);
	CK_RC(PTL_OK, PtlMDBind(s->ni, md, PTL_RETAIN, &s->get_md));
	memcpy(s->putbuf, "SWAPSWAP", 8);
	md = ptl_st_md(s->putbuf, sizeof(s->putbuf), PTL_MD_THRESH_INF, 0,
		       s->ini_eq);
	CK_RC(PTL_OK, PtlMDBind(s->ni, md, PTL_RETAIN, &s->put_md));
	CK_RC(PTL_OK, PtlMEAttach(s->ni, PT, ptl_st_any(), BITS, 0,
				  PTL_RETAIN, PTL_INS_AFTER, &s->me_h));
	md = ptl_st_md(s->recvbuf, sizeof(s->recvbuf), PTL_MD_THRESH_INF,
		       PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE,
		       s->tgt_eq);
	CK_RC(PTL_OK, PtlMDAttach(s->me_h, md, PTL_RETAIN, &s->recv_md));
}

/* ---- the calls, plain or queued ---- */

enum op_kind { OP_PUT, OP_PUT_REGION, OP_GET, OP_GET_REGION, OP_GETPUT };

struct op {
	enum op_kind kind;
	int bad_md;		/* use a handle that names nothing */
	ptl_ack_req_t ack;
	ptl_pid_t pid;		/* 0: ourselves */
	ptl_pt_index_t pt;
	ptl_match_bits_t bits;
	ptl_size_t loff, len, roff;
};

/* Good calls and bad ones mixed: the bad must not stop the good. */
static const struct op ops[] = {
	{ OP_PUT, 0, PTL_ACK_REQ, 0, PT, BITS, 0, 0, 0 },
	{ OP_PUT, 1, PTL_ACK_REQ, 0, PT, BITS, 0, 0, 0 },
	{ OP_PUT_REGION, 0, PTL_NO_ACK_REQ, 0, PT, BITS, 2, 3, 16 },
	{ OP_PUT, 0, PTL_NO_ACK_REQ, 0, BAD_PT, BITS, 0, 0, 0 },
	{ OP_GET, 0, PTL_NO_ACK_REQ, 0, PT, BITS, 0, 0, 8 },
	{ OP_PUT, 0, (ptl_ack_req_t)7, 0, PT, BITS, 0, 0, 0 },
	{ OP_GET_REGION, 0, PTL_NO_ACK_REQ, 0, PT, BITS, 1, 4, 20 },
	{ OP_GET, 1, PTL_NO_ACK_REQ, 0, PT, BITS, 0, 0, 0 },
	{ OP_GETPUT, 0, PTL_NO_ACK_REQ, 0, PT, BITS, 0, 0, 32 },
	{ OP_PUT, 0, PTL_NO_ACK_REQ, 0, PT, 99, 0, 0, 0 },	/* no match */
	{ OP_PUT, 0, PTL_ACK_REQ, NOBODY_PID, PT, BITS, 0, 0, 0 },
	{ OP_GETPUT, 1, PTL_NO_ACK_REQ, 0, PT, BITS, 0, 0, 0 },
	{ OP_PUT, 0, PTL_ACK_REQ, 0, PT, BITS, 0, 0, 40 },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

static ptl_handle_md_t op_md(const struct self *s, const struct op *o,
			     ptl_handle_md_t good)
{
	/* A handle of the right NI slot and type whose object is not there. */
	return o->bad_md ? (good ^ 0x7fU) : good;
}

static ptl_process_id_t op_target(const struct self *s, const struct op *o)
{
	ptl_process_id_t t = s->me;

	if (o->pid)
		t.pid = o->pid;
	return t;
}

static int plain_call(struct self *s, const struct op *o, ptl_hdr_data_t hdr)
{
	ptl_process_id_t t = op_target(s, o);

	switch (o->kind) {
	case OP_PUT:
		return PtlPut(op_md(s, o, s->send_md), o->ack, t, o->pt, 0,
			      o->bits, o->roff, hdr);
	case OP_PUT_REGION:
		return PtlPutRegion(op_md(s, o, s->send_md), o->loff, o->len,
				    o->ack, t, o->pt, 0, o->bits, o->roff,
				    hdr);
	case OP_GET:
		return PtlGet(op_md(s, o, s->send_md), t, o->pt, 0, o->bits,
			      o->roff);
	case OP_GET_REGION:
		return PtlGetRegion(op_md(s, o, s->send_md), o->loff, o->len,
				    t, o->pt, 0, o->bits, o->roff);
	default:
		return PtlGetPut(op_md(s, o, s->get_md), s->put_md, t, o->pt,
				 0, o->bits, o->roff, hdr);
	}
}

static int queue_call(ptl_uring_t *u, uint64_t tag, struct self *s,
		      const struct op *o, ptl_hdr_data_t hdr)
{
	ptl_process_id_t t = op_target(s, o);

	switch (o->kind) {
	case OP_PUT:
		return PtlUringPut(u, tag, op_md(s, o, s->send_md), o->ack, t,
				   o->pt, 0, o->bits, o->roff, hdr);
	case OP_PUT_REGION:
		return PtlUringPutRegion(u, tag, op_md(s, o, s->send_md),
					 o->loff, o->len, o->ack, t, o->pt, 0,
					 o->bits, o->roff, hdr);
	case OP_GET:
		return PtlUringGet(u, tag, op_md(s, o, s->send_md), t, o->pt,
				   0, o->bits, o->roff);
	case OP_GET_REGION:
		return PtlUringGetRegion(u, tag, op_md(s, o, s->send_md),
					 o->loff, o->len, t, o->pt, 0, o->bits,
					 o->roff);
	default:
		return PtlUringGetPut(u, tag, op_md(s, o, s->get_md),
				      s->put_md, t, o->pt, 0, o->bits, o->roff,
				      hdr);
	}
}

/* What of an event must be equal between the two runs. */
struct ev_key {
	int type;
	ptl_process_id_t initiator;
	ptl_uid_t uid;
	ptl_jid_t jid;
	ptl_pt_index_t pt;
	ptl_match_bits_t bits;
	ptl_size_t rlength, mlength, offset;
	ptl_handle_md_t md;
	ptl_hdr_data_t hdr;
	int fail;
};

#define MAX_EVENTS 256

struct trace {
	int rc[NOPS];
	int nini, ntgt;
	struct ev_key ini[MAX_EVENTS], tgt[MAX_EVENTS];
	char recvbuf[64], getbuf[8], putbuf[8];
};

static int drain(ptl_handle_eq_t eq, struct ev_key *out)
{
	ptl_event_t ev;
	int n = 0, rc;

	while ((rc = PtlEQGet(eq, &ev)) == PTL_OK && n < MAX_EVENTS) {
		memset(&out[n], 0, sizeof(out[n]));
		out[n].type = ev.type;
		out[n].initiator = ev.initiator;
		out[n].uid = ev.uid;
		out[n].jid = ev.jid;
		out[n].pt = ev.pt_index;
		out[n].bits = ev.match_bits;
		out[n].rlength = ev.rlength;
		out[n].mlength = ev.mlength;
		out[n].offset = ev.offset;
		out[n].md = ev.md_handle;
		out[n].hdr = ev.hdr_data;
		out[n].fail = ev.ni_fail_type;
		n++;
	}
	CK_RC(PTL_EQ_EMPTY, rc);
	return n;
}

static void reset_buffers(struct self *s)
{
	memcpy(s->sendbuf, "0123456789abcdef", 16);
	memset(s->recvbuf, 'r', sizeof(s->recvbuf));
	memset(s->getbuf, 'g', sizeof(s->getbuf));
	memcpy(s->putbuf, "SWAPSWAP", 8);
}

static void finish_trace(struct self *s, struct trace *t)
{
	t->nini = drain(s->ini_eq, t->ini);
	t->ntgt = drain(s->tgt_eq, t->tgt);
	memcpy(t->recvbuf, s->recvbuf, sizeof(t->recvbuf));
	memcpy(t->getbuf, s->getbuf, sizeof(t->getbuf));
	memcpy(t->putbuf, s->putbuf, sizeof(t->putbuf));
}

static void run_plain(struct self *s, struct trace *t)
{
	size_t i;

	reset_buffers(s);
	for (i = 0; i < NOPS; i++)
		t->rc[i] = plain_call(s, &ops[i], 1000 + i);
	finish_trace(s, t);
}

static void run_uring(struct self *s, ptl_uring_t *u, struct trace *t)
{
	ptl_uring_cqe_t cqe[NOPS];
	unsigned int n, got = 0, i;

	reset_buffers(s);
	for (i = 0; i < NOPS; i++)
		CK_RC(PTL_OK, queue_call(u, 100 + i, s, &ops[i], 1000 + i));
	CK_RC(PTL_OK, PtlUringSubmit(u, &n));
	CK(NOPS, n);
	while (got < NOPS) {
		CK_RC(PTL_OK, PtlUringReap(u, cqe + got, NOPS - got,
					   NOPS - got, &n));
		got += n;
	}
	for (i = 0; i < NOPS; i++) {
		CK_TRUE(cqe[i].user_data >= 100 && cqe[i].user_data < 100 + NOPS);
		t->rc[cqe[i].user_data - 100] = cqe[i].rc;
		/* Only ABI-level failures carry an errno. */
		CK_TRUE(cqe[i].err == 0 || cqe[i].rc == PTL_FAIL);
	}
	finish_trace(s, t);
}

static void check_same(const struct trace *a, const struct trace *b)
{
	size_t i;

	for (i = 0; i < NOPS; i++)
		CK(a->rc[i], b->rc[i]);
	CK(a->nini, b->nini);
	CK(a->ntgt, b->ntgt);
	for (i = 0; i < (size_t)a->nini; i++)
		CK(0, memcmp(&a->ini[i], &b->ini[i], sizeof(a->ini[i])));
	for (i = 0; i < (size_t)a->ntgt; i++)
		CK(0, memcmp(&a->tgt[i], &b->tgt[i], sizeof(a->tgt[i])));
	CK(0, memcmp(a->recvbuf, b->recvbuf, sizeof(a->recvbuf)));
	CK(0, memcmp(a->getbuf, b->getbuf, sizeof(a->getbuf)));
	CK(0, memcmp(a->putbuf, b->putbuf, sizeof(a->putbuf)));
}

/* The plain run itself shows what the batch must reproduce. */
static void check_plain_sane(const struct trace *p)
{
	CK_RC(PTL_OK, p->rc[0]);
	CK_RC(PTL_MD_INVALID, p->rc[1]);
	CK_RC(PTL_FAIL, p->rc[5]);		/* ack_req 7: EINVAL */
	CK_RC(PTL_MD_INVALID, p->rc[7]);
	CK_RC(PTL_OK, p->rc[8]);
	CK_RC(PTL_MD_INVALID, p->rc[11]);
	CK_TRUE(p->nini >= 10);
	CK_TRUE(p->ntgt >= 10);
}

static int equal_to_plain(unsigned int flags)
{
	static struct trace plain, batch;
	struct self s;
	ptl_uring_t *u;
	int round;

	self_open(&s);
	u = uring_or_skip(s.ni, 64, flags);
	if (!u)
		return KSFT_SKIP;
	/* Twice: a context is reusable once reaped. */
	for (round = 0; round < 2; round++) {
		memset(&plain, 0, sizeof(plain));
		memset(&batch, 0, sizeof(batch));
		run_plain(&s, &plain);
		check_plain_sane(&plain);
		run_uring(&s, u, &batch);
		check_same(&plain, &batch);
	}
	CK_RC(PTL_OK, PtlUringDestroy(u));
	return 0;
}

TEST(batch_equals_plain_calls)
{
	ASSERT_EQ(0, equal_to_plain(0));
}

TEST(batch_equals_plain_calls_sqpoll)
{
	int rc = equal_to_plain(PTL_URING_SQPOLL);

	if (rc == KSFT_SKIP)
		SKIP(return, "SQPOLL ring refused");
	ASSERT_EQ(0, rc);
}

/* ---- a batch across PtlNIFini ---- */

static int across_fini(unsigned int flags)
{
	ptl_uring_cqe_t cqe[64];
	unsigned int n, got = 0, i, oks = 0;
	struct self s;
	ptl_uring_t *u;
	bool failed = false;
	int plain;

	self_open(&s);
	u = uring_or_skip(s.ni, 128, flags);
	if (!u)
		return KSFT_SKIP;
	/* Half before, reaped; then the NI goes; then the rest. */
	for (i = 0; i < 4; i++)
		CK_RC(PTL_OK, PtlUringPut(u, i, s.send_md, PTL_NO_ACK_REQ,
					  s.me, PT, 0, BITS, 0, 0));
	CK_RC(PTL_OK, PtlUringSubmit(u, &n));
	CK_RC(PTL_OK, PtlUringReap(u, cqe, 4, 4, &n));
	CK(4, n);
	for (i = 0; i < 4; i++)
		CK_RC(PTL_OK, cqe[i].rc);
	/*
	 * Submitted, unreaped: 32 that have run (one completion seen), then
	 * 32 more and at once PtlNIFini. Without SQPOLL those ran in the
	 * submit; an SQ thread is usually not there yet when the NI goes.
	 */
	for (i = 0; i < 64; i++) {
		CK_RC(PTL_OK, PtlUringPut(u, i, s.send_md, PTL_NO_ACK_REQ,
					  s.me, PT, 0, BITS, 0, 0));
		if (i == 31) {
			CK_RC(PTL_OK, PtlUringSubmit(u, &n));
			CK_RC(PTL_OK, PtlUringReap(u, cqe, 1, 1, &got));
			CK(1, got);
		}
	}
	CK_RC(PTL_OK, PtlUringSubmit(u, &n));
	CK_RC(PTL_OK, PtlNIFini(s.ni));
	while (got < 64) {
		CK_RC(PTL_OK, PtlUringReap(u, cqe + got, 64 - got, 64 - got,
					   &n));
		got += n;
	}
	by_user_data(cqe, 64);
	/* In order: initiated until the NI went, invalid after. */
	for (i = 0; i < 64; i++) {
		if (cqe[i].rc == PTL_OK) {
			CK_TRUE(!failed);
			oks++;
		} else {
			CK_RC(PTL_MD_INVALID, cqe[i].rc);
			failed = true;
		}
	}
	printf("# %u of 64 ran before PtlNIFini\n", oks);
	/* After it, exactly what a plain call says. */
	plain = PtlPut(s.send_md, PTL_NO_ACK_REQ, s.me, PT, 0, BITS, 0, 0);
	CK_RC(PTL_MD_INVALID, plain);
	CK_RC(PTL_OK, PtlUringPut(u, 7, s.send_md, PTL_NO_ACK_REQ, s.me, PT,
				  0, BITS, 0, 0));
	CK_RC(PTL_OK, PtlUringSubmit(u, &n));
	CK_RC(PTL_OK, PtlUringReap(u, cqe, 1, 1, &n));
	CK(1, n);
	CK_RC(plain, cqe[0].rc);
	CK_RC(PTL_OK, PtlUringDestroy(u));
	return 0;
}

TEST(batch_spans_ni_fini)
{
	ASSERT_EQ(0, across_fini(0));
}

TEST(batch_spans_ni_fini_sqpoll)
{
	int rc = across_fini(PTL_URING_SQPOLL);

	if (rc == KSFT_SKIP)
		SKIP(return, "SQPOLL ring refused");
	ASSERT_EQ(0, rc);
}

/* ---- an MD bound in the batch, used by the next put ---- */

static int bind_then_put(unsigned int flags)
{
	ptl_handle_md_t bound = PTL_INVALID_HANDLE, bad = 0;
	ptl_uring_cqe_t cqe[4];
	char msg[5] = "hello";
	unsigned int n, got = 0;
	struct self s;
	ptl_uring_t *u;
	ptl_event_t ev;
	ptl_md_t md;

	self_open(&s);
	u = uring_or_skip(s.ni, 16, flags);
	if (!u)
		return KSFT_SKIP;
	memset(s.recvbuf, 0, sizeof(s.recvbuf));
	md = ptl_st_md(msg, sizeof(msg), PTL_MD_THRESH_INF, 0, s.ini_eq);
	CK_RC(PTL_OK, PtlUringMDBind(u, 1, s.ni, md, PTL_RETAIN, &bound));
	CK_RC(PTL_OK, PtlUringPut(u, 2, PTL_URING_MD_BOUND, PTL_NO_ACK_REQ,
				  s.me, PT, 0, BITS, 0, 0));
	/* A bind that fails: the put behind it finds no MD. */
	CK_RC(PTL_OK, PtlUringMDBind(u, 3, s.ni ^ 0x7fU, md, PTL_RETAIN,
				     &bad));
	CK_RC(PTL_OK, PtlUringPut(u, 4, PTL_URING_MD_BOUND, PTL_NO_ACK_REQ,
				  s.me, PT, 0, BITS, 0, 0));
	CK_RC(PTL_OK, PtlUringSubmit(u, &n));
	CK(4, n);
	while (got < 4) {
		CK_RC(PTL_OK, PtlUringReap(u, cqe + got, 4 - got, 4 - got,
					   &n));
		got += n;
	}
	/* Linked entries complete in any order: sort them. */
	for (n = 0; n < 4; n++)
		cqe[n].user_data--;
	by_user_data(cqe, 4);
	for (n = 0; n < 4; n++)
		cqe[n].user_data++;
	CK(1, cqe[0].user_data);
	CK_RC(PTL_OK, cqe[0].rc);
	CK(2, cqe[1].user_data);
	CK_RC(PTL_OK, cqe[1].rc);
	CK(3, cqe[2].user_data);
	CK_RC(PTL_NI_INVALID, cqe[2].rc);
	CK(4, cqe[3].user_data);
	CK_RC(PTL_MD_INVALID, cqe[3].rc);
	CK(0, bad);			/* untouched: the bind failed */
	CK(0, memcmp(s.recvbuf, "hello", 5));
	CK_NEXT(s.ini_eq, ev, PTL_EVENT_SEND_START);
	CK(bound, ev.md_handle);
	/* The handle is the MD's: plain calls take it. */
	CK_RC(PTL_OK, PtlMDUnlink(bound));
	CK_RC(PTL_OK, PtlUringDestroy(u));
	return 0;
}

TEST(md_bind_for_the_next_put)
{
	ASSERT_EQ(0, bind_then_put(0));
}

TEST(md_bind_for_the_next_put_sqpoll)
{
	int rc = bind_then_put(PTL_URING_SQPOLL);

	if (rc == KSFT_SKIP)
		SKIP(return, "SQPOLL ring refused");
	ASSERT_EQ(0, rc);
}

/* ---- raw commands: what the kernel refuses ---- */

TEST(kernel_refuses_bad_commands)
{
	struct io_uring ring, ring128;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct ptl_uring_ioctl ioc;
	struct ptl_ioc_ni_fini fini;
	struct ptl_ioc_data d;
	struct self s;
	int fd, i;
	/* Expected res of each command, in order. */
	static const int want[] = { -ENOTTY, -EINVAL, -EOPNOTSUPP, -EINVAL,
				    -EOPNOTSUPP };

	self_open(&s);
	fd = open("/dev/portals", O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	ASSERT_EQ(0, io_uring_queue_init(8, &ring128, IORING_SETUP_SQE128));

	/* An unknown command. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = 0x12345;
	/* PTL_URING_DATA without room for its struct (64-byte SQE). */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTL_URING_DATA;
	memset(sqe->cmd, 0, 16);
	((struct ptl_ioc_head *)sqe->cmd)->size = sizeof(d);
	/* PtlNIFini through io_uring: refused. */
	memset(&fini, 0, sizeof(fini));
	fini.size = sizeof(fini);
	fini.ni_handle = s.ni;
	memset(&ioc, 0, sizeof(ioc));
	ioc.cmd = PTL_IOC_NI_FINI;
	ioc.arg = (uintptr_t)&fini;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTL_URING_IOCTL;
	memcpy(sqe->cmd, &ioc, sizeof(ioc));
	/* A reserved field set. */
	ioc.reserved = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTL_URING_IOCTL;
	memcpy(sqe->cmd, &ioc, sizeof(ioc));
	/* EQ_WAIT would sleep in the submitter: refused. */
	ioc.reserved = 0;
	ioc.cmd = PTL_IOC_EQ_WAIT;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTL_URING_IOCTL;
	memcpy(sqe->cmd, &ioc, sizeof(ioc));
	ASSERT_EQ(5, io_uring_submit_and_wait(&ring, 5));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, io_uring_peek_cqe(&ring, &cqe));
		EXPECT_EQ(want[i], cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}

	/*
	 * SQE128: an unknown flag is EINVAL, a larger struct with a
	 * non-zero tail E2BIG, a struct of another file's NI PTL_MD_INVALID
	 * (this descriptor has no NI: handles do not cross files).
	 */
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.op = PTL_DATA_PUT;
	d.md_handle = s.send_md;
	d.ack_req = PTL_NO_ACK_REQ;
	d.target_nid = s.me.nid;
	d.target_pid = s.me.pid;
	d.pt_index = PT;
	d.match_bits = BITS;
	d.flags = 0x80;
	sqe = io_uring_get_sqe(&ring128);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTL_URING_DATA;
	memcpy(sqe->cmd, &d, sizeof(d));
	d.flags = 0;
	sqe = io_uring_get_sqe(&ring128);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTL_URING_DATA;
	memcpy(sqe->cmd, &d, sizeof(d));
	ASSERT_EQ(2, io_uring_submit_and_wait(&ring128, 2));
	ASSERT_EQ(0, io_uring_peek_cqe(&ring128, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring128, cqe);
	ASSERT_EQ(0, io_uring_peek_cqe(&ring128, &cqe));
	EXPECT_EQ(PTL_MD_INVALID, cqe->res);
	io_uring_cqe_seen(&ring128, cqe);
	/* Nothing arrived anywhere. */
	CK_EMPTY(s.tgt_eq);
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&ring128);
	close(fd);
}

/* ---- waiting for events in the application's ring ---- */

TEST(eq_wait_in_the_applications_ring)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
	struct self s;
	ptl_event_t ev;
	char byte = 0;
	int sv[2];

	self_open(&s);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	ASSERT_EQ(PTL_OK, PtlUringArmEQWait(&ring, 1));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, sv[0], &byte, 1, 0);
	io_uring_sqe_set_data64(sqe, 2);
	ASSERT_EQ(2, io_uring_submit(&ring));

	/* Nothing yet. */
	ASSERT_EQ(-ETIME, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	/* The socket completes its own entry, not the EQ wait. */
	ASSERT_EQ(1, write(sv[1], "x", 1));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(2, cqe->user_data);
	EXPECT_EQ(1, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	ASSERT_EQ(-ETIME, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));

	/* An event completes the wait. */
	ASSERT_EQ(PTL_OK, PtlPut(s.send_md, PTL_NO_ACK_REQ, s.me, PT, 0,
				 BITS, 0, 0));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(1, cqe->user_data);
	EXPECT_TRUE(cqe->res & POLLIN);
	io_uring_cqe_seen(&ring, cqe);

	/* Level-triggered: armed again with events unread, it fires. */
	ASSERT_EQ(PTL_OK, PtlUringArmEQWait(&ring, 3));
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	EXPECT_EQ(3, cqe->user_data);
	io_uring_cqe_seen(&ring, cqe);

	/* Drained, it waits again; and io_uring cancels it. */
	CK_NEXT(s.ini_eq, ev, PTL_EVENT_SEND_START);
	CK_NEXT(s.ini_eq, ev, PTL_EVENT_SEND_END);
	CK_NEXT(s.tgt_eq, ev, PTL_EVENT_PUT_START);
	CK_NEXT(s.tgt_eq, ev, PTL_EVENT_PUT_END);
	ASSERT_EQ(PTL_OK, PtlUringArmEQWait(&ring, 4));
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(-ETIME, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_remove(sqe, 4);
	io_uring_sqe_set_data64(sqe, 5);
	ASSERT_EQ(1, io_uring_submit(&ring));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		if (cqe->user_data == 4) {
			EXPECT_EQ(-ECANCELED, cqe->res);
		} else {
			EXPECT_EQ(0, cqe->res);
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	close(sv[0]);
	close(sv[1]);
}

/* ---- kill -9 with entries in flight and EQ waits armed ---- */

static const char *const counters[] = {
	"open_files", "nis", "mds", "eqs", "pinned_pages",
};

#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static int victim(struct ptl_chan *c, void *arg)
{
	unsigned int flags = *(unsigned int *)arg, n, i;
	struct io_uring ring;
	ptl_uring_cqe_t cqe[128];
	ptl_uring_t *u;
	struct self s;
	char ready = 'r';

	self_open(&s);
	u = uring_or_skip(s.ni, 256, flags);
	if (!u) {
		ready = 's';
		CHAN_SEND(c, ready);
		return 0;
	}
	/* EQ waits in the application's ring (with an SQ thread too). */
	CK(0, io_uring_queue_init(8, &ring, flags & PTL_URING_SQPOLL ?
				  IORING_SETUP_SQPOLL : 0));
	CK_RC(PTL_OK, PtlUringArmEQWait(&ring, 1));
	CK(1, io_uring_submit(&ring));
	/* Queued and never submitted. */
	for (i = 0; i < 64; i++)
		CK_RC(PTL_OK, PtlUringPut(u, i, s.send_md, PTL_NO_ACK_REQ,
					  s.me, BAD_PT, 0, BITS, 0, 0));
	CK_RC(PTL_OK, PtlUringSubmit(u, &n));
	CHAN_SEND(c, ready);
	/* Batches in flight until killed. */
	for (;;) {
		for (i = 0; i < 128; i++)
			PtlUringPut(u, i, s.send_md, PTL_NO_ACK_REQ, s.me,
				    PT, 0, 99, 0, 0);
		PtlUringSubmit(u, &n);
		PtlUringReap(u, cqe, 128, 64, &n);
		PtlUringReap(u, cqe, 128, 0, &n);
	}
	return 0;
}

static int killed_in_flight(struct __test_metadata *_metadata,
			    unsigned int flags)
{
	long before[NCOUNTERS], now[NCOUNTERS];
	long long t0, deadline;
	struct ptl_peer p;
	bool same = false;
	int status;
	size_t i;
	char ready;

	for (i = 0; i < NCOUNTERS; i++)
		before[i] = ptl_st_counter(counters[i]);
	if (ptl_peer_start(&p, victim, &flags))
		return -1;
	if (ptl_peer_recv(&p, &ready, 1))
		return -1;
	if (ready == 's') {
		ptl_peer_wait(&p);
		return KSFT_SKIP;
	}
	usleep(200 * 1000);
	t0 = ptl_st_now_ms();
	kill(p.pid, SIGKILL);
	/* It must die at once: nothing in the kernel waits for an entry. */
	status = ptl_peer_wait_ms(&p, 5000);
	printf("# killed in %lld ms\n", ptl_st_now_ms() - t0);
	if (status != 128 + SIGKILL)
		return -1;
	/* The ring's teardown is asynchronous: give it a moment. */
	deadline = ptl_st_now_ms() + 10000;
	while (!same && ptl_st_now_ms() < deadline) {
		same = true;
		for (i = 0; i < NCOUNTERS; i++) {
			now[i] = ptl_st_counter(counters[i]);
			if (now[i] != before[i])
				same = false;
		}
		if (!same)
			usleep(10 * 1000);
	}
	printf("# released after %lld ms\n", ptl_st_now_ms() - t0);
	for (i = 0; i < NCOUNTERS; i++)
		EXPECT_EQ(before[i], now[i]) TH_LOG("%s", counters[i]);
	return same ? 0 : -1;
}

TEST(kill_with_entries_in_flight)
{
	ASSERT_EQ(0, killed_in_flight(_metadata, 0));
}

TEST(kill_with_entries_in_flight_sqpoll)
{
	int rc = killed_in_flight(_metadata, PTL_URING_SQPOLL);

	if (rc == KSFT_SKIP)
		SKIP(return, "SQPOLL ring refused");
	ASSERT_EQ(0, rc);
}

TEST_HARNESS_MAIN
