// SPDX-License-Identifier: GPL-2.0
/*
 * A helper of rtscts_flood_test.sh (not a test of its own): one side of
 * two nodes that flood each other with puts asking for ACKs. It listens
 * on pid 30, portal 0 (any match bits, any sender), prints "ready", waits
 * until the file GO_FILE exists, then puts COUNT messages of SIZE bytes
 * with PTL_ACK_REQ to pid 30 of PEER_NID, all at once, and waits up to
 * WAIT_MS for every one to end (SEND_END and ACK) and for COUNT puts from
 * the peer (PUT_END):
 *
 *   rtscts_flood PEER_NID COUNT SIZE WAIT_MS GO_FILE
 *
 * Prints "sent N send_end S acks A received R failed F ms T". Exit status
 * 0 when all ended well within WAIT_MS, 1 otherwise (2: usage).
 */
#include "ptl_selftest.h"

#define FLOOD_PID	30

struct flood {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	unsigned long count, send_end, acks, received, failed;
};

static unsigned long arg(const char *s, const char *what)
{
	return ptl_st_arg("rtscts_flood", s, what);
}

/* The listening entry, and the MD every put goes from. */
static int flood_open(struct flood *fl, void *rx, void *tx, ptl_size_t size)
{
	ptl_handle_me_t me;
	ptl_handle_md_t rx_md;
	int rc;

	rc = ptl_st_open(FLOOD_PID, NULL, NULL, &fl->ni);
	if (rc == PTL_OK)
		rc = PtlEQAlloc(fl->ni, 4 * fl->count + 64,
				PTL_EQ_HANDLER_NONE, &fl->eq);
	if (rc == PTL_OK)
		rc = PtlMEAttach(fl->ni, 0, ptl_st_any(), 0,
				 ~(ptl_match_bits_t)0, PTL_RETAIN,
				 PTL_INS_AFTER, &me);
	if (rc == PTL_OK)
		rc = PtlMDAttach(me, ptl_st_md(rx, size, PTL_MD_THRESH_INF,
					       PTL_MD_OP_PUT |
					       PTL_MD_MANAGE_REMOTE |
					       PTL_MD_EVENT_START_DISABLE,
					       fl->eq),
				 PTL_RETAIN, &rx_md);
	if (rc == PTL_OK)
		rc = PtlMDBind(fl->ni, ptl_st_md(tx, size, PTL_MD_THRESH_INF,
						 PTL_MD_EVENT_START_DISABLE,
						 fl->eq),
			       PTL_RETAIN, &fl->md);
	return rc;
}

/* One event: counted by kind; any failure counts as such. */
static void flood_count(struct flood *fl, const ptl_event_t *ev)
{
	if (ev->ni_fail_type != PTL_NI_OK)
		fl->failed++;
	else if (ev->type == PTL_EVENT_SEND_END)
		fl->send_end++;
	else if (ev->type == PTL_EVENT_ACK)
		fl->acks++;
	else if (ev->type == PTL_EVENT_PUT_END)
		fl->received++;
}

static bool flood_done(const struct flood *fl)
{
	return fl->send_end == fl->count && fl->acks == fl->count &&
	       fl->received == fl->count;
}

/* Events until all are in, a failure, or @end (ms). */
static int flood_wait(struct flood *fl, long long end)
{
	ptl_event_t ev;
	int rc;

	while (!flood_done(fl) && !fl->failed) {
		long long left = end - ptl_st_now_ms();

		if (left <= 0)
			return PTL_EQ_EMPTY;
		rc = ptl_st_next(fl->eq, &ev, (int)left);
		if (rc == PTL_EQ_EMPTY)
			return rc;
		if (rc != PTL_OK)
			return rc;
		flood_count(fl, &ev);
	}
	return PTL_OK;
}

int main(int argc, char **argv)
{
	struct flood fl = { 0 };
	unsigned long peer, size, wait_ms, i;
	ptl_process_id_t to;
	long long start, end, posted;
	char *rx, *tx;
	int rc = PTL_OK;

	if (argc != 6) {
		fprintf(stderr,
			"usage: rtscts_flood PEER_NID COUNT SIZE WAIT_MS GO_FILE\n");
		return 2;
	}
	peer = arg(argv[1], "PEER_NID");
	fl.count = arg(argv[2], "COUNT");
	size = arg(argv[3], "SIZE");
	wait_ms = arg(argv[4], "WAIT_MS");
	rx = calloc(1, size ? size : 1);
	tx = calloc(1, size ? size : 1);
	if (!rx || !tx || flood_open(&fl, rx, tx, size) != PTL_OK) {
		fprintf(stderr, "rtscts_flood: opening failed\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (access(argv[5], F_OK))
		usleep(10000);
	to.nid = peer;
	to.pid = FLOOD_PID;
	start = ptl_st_now_ms();
	end = start + wait_ms;
	for (i = 0; i < fl.count && rc == PTL_OK; i++)
		rc = PtlPut(fl.md, PTL_ACK_REQ, to, 0, 0, 0, 0, i);
	posted = ptl_st_now_ms() - start;
	if (rc != PTL_OK)
		fprintf(stderr, "rtscts_flood: put %lu: %s\n", i,
			PtlErrorStr(rc));
	else
		rc = flood_wait(&fl, end);
	printf("sent %lu send_end %lu acks %lu received %lu failed %lu ms %lld posted_ms %lld\n",
	       i, fl.send_end, fl.acks, fl.received, fl.failed,
	       ptl_st_now_ms() - start, posted);
	PtlNIFini(fl.ni);
	PtlFini();
	return rc == PTL_OK && flood_done(&fl) && !fl.failed ? 0 : 1;
}
