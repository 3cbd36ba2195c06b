// SPDX-License-Identifier: GPL-2.0
/*
 * A helper of rtscts_riders_test.sh (not a test of its own): one side of
 * two nodes that exchange puts asking for ACKs, on pid 31, portal 0 (any
 * match bits, any sender):
 *
 *   rtscts_pingack ping PEER_NID COUNT WAIT_MS   put, wait for the pong,
 *                                                COUNT times
 *   rtscts_pingack pong PEER_NID COUNT WAIT_MS   wait for a put, put back,
 *                                                COUNT times
 *   rtscts_pingack burst PEER_NID COUNT WAIT_MS  COUNT puts at once
 *   rtscts_pingack sink PEER_NID COUNT WAIT_MS   take COUNT puts
 *
 * Every put asks for an ACK and carries its number in its match bits,
 * which the ACK echoes. Each side then waits, up to WAIT_MS from its
 * start, for every SEND_END and ACK of its own puts and every PUT_END it
 * expects, and checks that each put's SEND_END came before its ACK (spec
 * 8.5; a transport that completes sends and receives on separate queues
 * must keep that order). pong and sink print "ready" once they listen.
 *
 * Prints "sent N send_end S acks A received R failed F early E ms T"
 * (E: ACKs before their put's SEND_END). Exit status 0 when all ended
 * well within WAIT_MS and none early, 1 otherwise (2: usage).
 */
#include "ptl_selftest.h"

#define PINGACK_PID	31

struct side {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_process_id_t peer;
	unsigned long sent, send_end, acks, received, failed, early;
	unsigned char *ended;	/* per put: its SEND_END came */
	unsigned long count;
};

static unsigned long arg(const char *s, const char *what)
{
	return ptl_st_arg("rtscts_pingack", s, what);
}

/* The listening entry, and the MD every put goes from (8 bytes). */
static int side_open(struct side *s, unsigned long count, void *rx, void *tx)
{
	ptl_handle_me_t me;
	ptl_handle_md_t rx_md;
	int rc;

	rc = ptl_st_open(PINGACK_PID, NULL, NULL, &s->ni);
	if (rc == PTL_OK)
		rc = PtlEQAlloc(s->ni, 4 * count + 64, PTL_EQ_HANDLER_NONE,
				&s->eq);
	if (rc == PTL_OK)
		rc = PtlMEAttach(s->ni, 0, ptl_st_any(), 0,
				 ~(ptl_match_bits_t)0, PTL_RETAIN,
				 PTL_INS_AFTER, &me);
	if (rc == PTL_OK)
		rc = PtlMDAttach(me, ptl_st_md(rx, 8, PTL_MD_THRESH_INF,
					       PTL_MD_OP_PUT |
					       PTL_MD_MANAGE_REMOTE |
					       PTL_MD_EVENT_START_DISABLE,
					       s->eq),
				 PTL_RETAIN, &rx_md);
	if (rc == PTL_OK)
		rc = PtlMDBind(s->ni, ptl_st_md(tx, 8, PTL_MD_THRESH_INF,
						 PTL_MD_EVENT_START_DISABLE,
						 s->eq),
			       PTL_RETAIN, &s->md);
	return rc;
}

static int side_put(struct side *s)
{
	int rc = PtlPut(s->md, PTL_ACK_REQ, s->peer, 0, 0, s->sent, 0,
			s->sent);

	if (rc == PTL_OK)
		s->sent++;
	else
		fprintf(stderr, "rtscts_pingack: put %lu: %s\n", s->sent,
			PtlErrorStr(rc));
	return rc;
}

static void side_send_end(struct side *s, ptl_match_bits_t put)
{
	s->send_end++;
	if (put < s->count)
		s->ended[put] = 1;
}

static void side_ack(struct side *s, ptl_match_bits_t put)
{
	s->acks++;
	if (put >= s->count || !s->ended[put]) {
		if (!s->early)
			fprintf(stderr,
				"rtscts_pingack: the ACK of put %llu came before its SEND_END\n",
				(unsigned long long)put);
		s->early++;
	}
}

/* The next event, counted; PTL_EQ_EMPTY past @end (ms). */
static int side_event(struct side *s, long long end)
{
	long long left = end - ptl_st_now_ms();
	ptl_event_t ev;
	int rc;

	if (left <= 0)
		return PTL_EQ_EMPTY;
	rc = ptl_st_next(s->eq, &ev, (int)left);
	if (rc != PTL_OK)
		return rc;
	if (ev.ni_fail_type != PTL_NI_OK)
		s->failed++;
	else if (ev.type == PTL_EVENT_SEND_END)
		side_send_end(s, ev.match_bits);
	else if (ev.type == PTL_EVENT_ACK)
		side_ack(s, ev.match_bits);
	else if (ev.type == PTL_EVENT_PUT_END)
		s->received++;
	return PTL_OK;
}

/* Events until @received puts arrived, a failure, or @end. */
static int side_wait_received(struct side *s, unsigned long received,
			      long long end)
{
	int rc = PTL_OK;

	while (s->received < received && !s->failed && rc == PTL_OK)
		rc = side_event(s, end);
	return s->failed ? PTL_FAIL : rc;
}

/* Events until every put of ours ended (SEND_END and ACK). */
static int side_wait_acked(struct side *s, long long end)
{
	int rc = PTL_OK;

	while ((s->send_end < s->sent || s->acks < s->sent) && !s->failed &&
	       rc == PTL_OK)
		rc = side_event(s, end);
	return s->failed ? PTL_FAIL : rc;
}

static int run(struct side *s, const char *role, unsigned long count,
	       long long end)
{
	unsigned long i;
	int rc = PTL_OK;

	if (!strcmp(role, "ping")) {
		for (i = 0; i < count && rc == PTL_OK; i++) {
			rc = side_put(s);
			if (rc == PTL_OK)
				rc = side_wait_received(s, i + 1, end);
		}
	} else if (!strcmp(role, "pong")) {
		for (i = 0; i < count && rc == PTL_OK; i++) {
			rc = side_wait_received(s, i + 1, end);
			if (rc == PTL_OK)
				rc = side_put(s);
		}
	} else if (!strcmp(role, "burst")) {
		for (i = 0; i < count && rc == PTL_OK; i++)
			rc = side_put(s);
	} else {
		rc = side_wait_received(s, count, end);
	}
	return rc == PTL_OK ? side_wait_acked(s, end) : rc;
}

int main(int argc, char **argv)
{
	static char rx[8], tx[8];
	struct side s = { 0 };
	unsigned long count;
	long long start;
	const char *role;
	int rc;

	if (argc != 5) {
		fprintf(stderr,
			"usage: rtscts_pingack ping|pong|burst|sink PEER_NID COUNT WAIT_MS\n");
		return 2;
	}
	role = argv[1];
	if (strcmp(role, "ping") && strcmp(role, "pong") &&
	    strcmp(role, "burst") && strcmp(role, "sink")) {
		fprintf(stderr, "rtscts_pingack: unknown role '%s'\n", role);
		return 2;
	}
	s.peer.nid = arg(argv[2], "PEER_NID");
	s.peer.pid = PINGACK_PID;
	count = arg(argv[3], "COUNT");
	s.count = count;
	s.ended = calloc(count ? count : 1, 1);
	if (!s.ended || side_open(&s, count, rx, tx) != PTL_OK) {
		fprintf(stderr, "rtscts_pingack: opening failed\n");
		return 1;
	}
	if (!strcmp(role, "pong") || !strcmp(role, "sink")) {
		printf("ready\n");
		fflush(stdout);
	}
	start = ptl_st_now_ms();
	rc = run(&s, role, count, start + (long long)arg(argv[4], "WAIT_MS"));
	printf("sent %lu send_end %lu acks %lu received %lu failed %lu early %lu ms %lld\n",
	       s.sent, s.send_end, s.acks, s.received, s.failed, s.early,
	       ptl_st_now_ms() - start);
	PtlNIFini(s.ni);
	PtlFini();
	free(s.ended);
	return rc == PTL_OK && !s.failed && !s.early ? 0 : 1;
}
