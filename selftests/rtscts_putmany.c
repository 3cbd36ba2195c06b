// SPDX-License-Identifier: GPL-2.0
/*
 * A helper of rtscts_peers_test.sh (not a test of its own): one process
 * puts 8 bytes to each of COUNT nodes FIRST_NID, FIRST_NID + 1, ... (pid
 * 10, portal 0, no Portals ACK) on the default interface, then counts
 * how the puts end within WAIT_MS: each SEND_END event is "ok" (the
 * transport delivered it) or "failed" (PTL_NI_FAIL: no room for the
 * peer, or its address never resolved); the rest are "pending". It then
 * keeps its NI open for HOLD_MS, so that puts still queued stay queued.
 *
 *   rtscts_putmany FIRST_NID COUNT [WAIT_MS [HOLD_MS]]
 *
 * Prints one line: "puts COUNT ok X failed Y pending Z". Exit status 0
 * when every put was initiated, 1 otherwise (2: usage).
 */
#include "ptl_selftest.h"

#define TARGET_PID	10

static unsigned long arg(const char *s, const char *what)
{
	return ptl_st_arg("rtscts_putmany", s, what);
}

int main(int argc, char **argv)
{
	static char buf[8];
	unsigned long first, count, wait_ms = 0, hold_ms = 0, i;
	unsigned long ok = 0, failed = 0, ended = 0;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_event_t ev;
	long long end;
	int rc;

	if (argc < 3 || argc > 5) {
		fprintf(stderr,
			"usage: rtscts_putmany FIRST_NID COUNT [WAIT_MS [HOLD_MS]]\n");
		return 2;
	}
	first = arg(argv[1], "FIRST_NID");
	count = arg(argv[2], "COUNT");
	if (argc > 3)
		wait_ms = arg(argv[3], "WAIT_MS");
	if (argc > 4)
		hold_ms = arg(argv[4], "HOLD_MS");
	rc = ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni);
	if (rc == PTL_OK)
		rc = PtlEQAlloc(ni, 2 * count + 16, PTL_EQ_HANDLER_NONE, &eq);
	if (rc == PTL_OK)
		rc = PtlMDBind(ni, ptl_st_md(buf, sizeof(buf),
					     PTL_MD_THRESH_INF, 0, eq),
			       PTL_RETAIN, &md);
	if (rc != PTL_OK) {
		fprintf(stderr, "rtscts_putmany: opening: %s\n",
			PtlErrorStr(rc));
		return 1;
	}
	for (i = 0; i < count; i++) {
		ptl_process_id_t to = { (ptl_nid_t)(first + i), TARGET_PID };

		rc = PtlPutRegion(md, 0, sizeof(buf), PTL_NO_ACK_REQ, to, 0,
				  0, 0, 0, 0);
		if (rc != PTL_OK) {
			fprintf(stderr, "rtscts_putmany: put %lu: %s\n", i,
				PtlErrorStr(rc));
			return 1;
		}
	}
	end = ptl_st_now_ms() + (long long)wait_ms;
	while (ended < count) {
		long long left = end - ptl_st_now_ms();

		if (left < 0 ||
		    ptl_st_next(eq, &ev, left > 0 ? (int)left : 0) != PTL_OK)
			break;
		if (ev.type != PTL_EVENT_SEND_END)
			continue;
		ended++;
		if (ev.ni_fail_type == PTL_NI_OK)
			ok++;
		else
			failed++;
	}
	printf("puts %lu ok %lu failed %lu pending %lu\n", count, ok, failed,
	       count - ended);
	fflush(stdout);
	if (hold_ms)
		usleep(hold_ms * 1000);
	return 0;
}
