// SPDX-License-Identifier: GPL-2.0
/*
 * Application bypass (contract 5): a receiver that does not run, or runs
 * but never calls the library, still receives every message. A sender puts
 * 1,000 messages (with ACKs) into the receiver's memory descriptor while
 * the receiver is
 *   - stopped with SIGSTOP, or
 *   - spinning in a compute loop that never enters the library;
 * every ACK comes back while the receiver is still stopped or busy, and
 * when it resumes every byte is in its buffer and every event, in order,
 * in its event queue. While it is still stopped or busy, a get reads the
 * whole buffer back (the reply, too, needs no help from the receiver).
 */
#include "ptl_selftest.h"

#include "kselftest_harness.h"

#define PT 6
#define NMSG 1000
#define MSG 64
#define BITS 0xb1ba55

struct who {
	ptl_process_id_t id;
};

static volatile sig_atomic_t resume;

static void on_usr1(int sig)
{
	resume = 1;
}

/* What the receiver checks once it runs again. */
static int check_everything(ptl_handle_eq_t eq, ptl_handle_md_t md,
			    const char *buf, ptl_process_id_t sender)
{
	ptl_event_t ev;
	ptl_seq_t prev = 0;
	int i;

	for (i = 0; i < NMSG; i++) {
		/* Nothing may be missing: no waiting, the events are there. */
		CK_RC(PTL_OK, PtlEQGet(eq, &ev));
		CK_KIND(PTL_EVENT_PUT_START, ev);
		if (i)
			CK((ptl_seq_t)(prev + 1), ev.sequence);
		CK(i, ev.hdr_data);
		CK_RC(PTL_OK, PtlEQGet(eq, &ev));
		CK_KIND(PTL_EVENT_PUT_END, ev);
		CK(i, ev.hdr_data);
		CK(i * MSG, ev.offset);
		CK(MSG, ev.mlength);
		CK(sender.pid, ev.initiator.pid);
		CK(md, ev.md_handle);
		prev = ev.sequence;
	}
	/* The sender then read the whole buffer back with one get. */
	CK_RC(PTL_OK, PtlEQGet(eq, &ev));
	CK_KIND(PTL_EVENT_GET_START, ev);
	/*
	 * GET_END is posted once the transport knows the reply was delivered
	 * (kmod/ptl_remote.c), which may be after the sender saw REPLY_END
	 * and let this process resume: it may still be on its way, and it
	 * needs the receiver no more than the puts did.
	 */
	CK_NEXT(eq, ev, PTL_EVENT_GET_END);
	CK(NMSG * MSG, ev.mlength);
	CK(sender.pid, ev.initiator.pid);
	CK_RC(PTL_EQ_EMPTY, PtlEQGet(eq, &ev));
	for (i = 0; i < NMSG; i++)
		CK(-1, ptl_st_check(buf + i * MSG, MSG, (unsigned int)i, 0));
	return 0;
}

struct mode {
	int stop;	/* 1: SIGSTOP; 0: busy loop */
};

static int receiver(struct ptl_chan *c, void *arg)
{
	const struct mode *m = arg;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	struct who self, sender;
	char *buf = mmap(NULL, NMSG * MSG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile unsigned long spins = 0;

	CK_TRUE(buf != MAP_FAILED);
	signal(SIGUSR1, on_usr1);
	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	CK_RC(PTL_OK, PtlGetId(ni, &self.id));
	CK_RC(PTL_OK, PtlEQAlloc(ni, 2 * NMSG + 2, PTL_EQ_HANDLER_NONE, &eq));
	CK_RC(PTL_OK, PtlMEAttach(ni, PT, ptl_st_any(), BITS, 0, PTL_RETAIN,
				  PTL_INS_AFTER, &me));
	CK_RC(PTL_OK, PtlMDAttach(me, ptl_st_md(buf, NMSG * MSG,
						PTL_MD_THRESH_INF,
						PTL_MD_OP_PUT | PTL_MD_OP_GET |
						PTL_MD_MANAGE_REMOTE, eq),
				  PTL_RETAIN, &md));
	CHAN_SEND(c, self);
	CHAN_RECV(c, sender);
	if (m->stop) {
		raise(SIGSTOP);
	} else {
		/* Compute without a single library call or syscall. */
		while (!resume)
			spins++;
	}
	return check_everything(eq, md, buf, sender.id);
}

static char proc_state(pid_t pid)
{
	char path[64], line[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p)
		return '?';
	p = strrchr(line, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void send_all(struct __test_metadata *_metadata, pid_t rpid,
		     ptl_process_id_t target, char want_state)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md, gmd;
	ptl_event_t ev;
	char *src = malloc(NMSG * MSG), *back;
	int i, acks = 0, ends = 0;

	ASSERT_NE(NULL, src);
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &ni));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 4 * NMSG, PTL_EQ_HANDLER_NONE, &eq));
	for (i = 0; i < NMSG; i++)
		ptl_st_fill(src + i * MSG, MSG, (unsigned int)i);
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(src, NMSG * MSG,
						  PTL_MD_THRESH_INF,
						  PTL_MD_EVENT_START_DISABLE,
						  eq),
				    PTL_RETAIN, &md));
	for (i = 0; i < NMSG; i++)
		ASSERT_EQ(PTL_OK, PtlPutRegion(md, i * MSG, MSG, PTL_ACK_REQ,
					       target, PT, 0, BITS, i * MSG,
					       i));
	/* Every ACK means the data is in the receiver's buffer. */
	while (acks < NMSG) {
		ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS))
			TH_LOG("%d ACKs, %d SEND_ENDs so far", acks, ends);
		if (ev.type == PTL_EVENT_ACK) {
			EXPECT_EQ(target.pid, ev.initiator.pid);
			EXPECT_EQ(MSG, ev.mlength);
			acks++;
		} else {
			ASSERT_EQ(PTL_EVENT_SEND_END, ev.type);
			ends++;
		}
	}
	EXPECT_EQ(NMSG, ends);
	/* A get is answered by the receiver's kernel too (contract 5). */
	back = calloc(1, NMSG * MSG);
	ASSERT_NE(NULL, back);
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(back, NMSG * MSG, 1,
						  PTL_MD_EVENT_START_DISABLE,
						  eq),
				    PTL_RETAIN, &gmd));
	ASSERT_EQ(PTL_OK, PtlGet(gmd, target, PT, 0, BITS, 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_EVENT_REPLY_END, ev.type);
	EXPECT_EQ(NMSG * MSG, ev.mlength);
	EXPECT_EQ(0, memcmp(src, back, NMSG * MSG));
	/* ... and it all happened while the receiver was not in the library. */
	EXPECT_EQ(want_state, proc_state(rpid));
	free(back);
	free(src);
}

TEST(stopped_receiver_gets_every_message_and_event)
{
	struct mode m = { .stop = 1 };
	struct ptl_peer p;
	struct who rcv, me;
	ptl_handle_ni_t ni;
	int status, max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(0, ptl_peer_start(&p, receiver, &m));
	ASSERT_EQ(0, ptl_peer_recv(&p, &rcv, sizeof(rcv)));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &ni));
	ASSERT_EQ(PTL_OK, PtlGetId(ni, &me.id));
	ASSERT_EQ(0, ptl_peer_send(&p, &me, sizeof(me)));
	ASSERT_EQ(p.pid, waitpid(p.pid, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	send_all(_metadata, p.pid, rcv.id, 'T');
	ASSERT_EQ(0, kill(p.pid, SIGCONT));
	EXPECT_EQ(0, ptl_peer_wait(&p));
	PtlFini();
}

TEST(busy_receiver_gets_every_message_and_event)
{
	struct mode m = { .stop = 0 };
	struct ptl_peer p;
	struct who rcv, me;
	ptl_handle_ni_t ni;
	int max;

	ASSERT_EQ(PTL_OK, PtlInit(&max));
	ASSERT_EQ(0, ptl_peer_start(&p, receiver, &m));
	ASSERT_EQ(0, ptl_peer_recv(&p, &rcv, sizeof(rcv)));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &ni));
	ASSERT_EQ(PTL_OK, PtlGetId(ni, &me.id));
	ASSERT_EQ(0, ptl_peer_send(&p, &me, sizeof(me)));
	usleep(50 * 1000);	/* let it enter the loop */
	send_all(_metadata, p.pid, rcv.id, 'R');
	ASSERT_EQ(0, kill(p.pid, SIGUSR1));
	EXPECT_EQ(0, ptl_peer_wait(&p));
	PtlFini();
}

TEST_HARNESS_MAIN
