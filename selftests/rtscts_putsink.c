// SPDX-License-Identifier: GPL-2.0
/*
 * A helper of rtscts_replay_test.sh (not a test of its own): the target
 * of rtscts_putmany. One process with Portals pid 10 on the default
 * interface accepts every put to portal 0 (any match bits, any sender)
 * into one buffer, and prints a line for each put that arrived:
 *
 *   rtscts_putsink HOLD_MS
 *
 * "ready" once it listens, then "put NID:PID LENGTH" per PUT_END, then
 * "puts N" when HOLD_MS have passed. Lines are flushed as they are
 * printed, so the script counts the puts so far while it runs. Exit
 * status 0, 1 if a Portals call failed (2: usage).
 */
#include "ptl_selftest.h"

#define SINK_PID	10

int main(int argc, char **argv)
{
	static char buf[4096];
	unsigned long count = 0;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	long long end;
	char *stop;
	long hold;
	int rc;

	hold = argc == 2 ? strtol(argv[1], &stop, 0) : -1;
	if (argc != 2 || !*argv[1] || *stop || hold < 0) {
		fprintf(stderr, "usage: rtscts_putsink HOLD_MS\n");
		return 2;
	}
	rc = ptl_st_sink(SINK_PID, buf, sizeof(buf),
			 PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE |
			 PTL_MD_EVENT_START_DISABLE, 1024, &ni, &eq);
	if (rc != PTL_OK) {
		fprintf(stderr, "rtscts_putsink: opening: %s\n",
			PtlErrorStr(rc));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	end = ptl_st_now_ms() + hold;
	while ((rc = ptl_st_next_until(eq, &ev, end)) != PTL_EQ_EMPTY) {
		if (rc != PTL_OK && rc != PTL_EQ_DROPPED) {
			fprintf(stderr, "rtscts_putsink: %s\n", PtlErrorStr(rc));
			return 1;
		}
		if (ev.type != PTL_EVENT_PUT_END)
			continue;
		count++;
		printf("put %u:%u %llu\n", (unsigned int)ev.initiator.nid,
		       (unsigned int)ev.initiator.pid,
		       (unsigned long long)ev.mlength);
		fflush(stdout);
	}
	printf("puts %lu\n", count);
	return 0;
}
