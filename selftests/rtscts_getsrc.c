// SPDX-License-Identifier: GPL-2.0
/*
 * A helper of rtscts_credit_hostile_test.sh (not a test of its own): the
 * target of `ptl_inject credit`. One process with Portals pid PID on the
 * default interface exposes a 64 KiB buffer to gets on portal 0 (any match
 * bits, any initiator; the offset is the initiator's, so the buffer never
 * runs out however many gets come), and prints a line for each event of it:
 *
 *   rtscts_getsrc PID HOLD_MS
 *
 * "ready" once it listens; "start NID:PID" per GET_START (a get matched:
 * the node made a REPLY for it); "end ok|fail NID:PID" per GET_END (the
 * REPLY was acknowledged, or failed); "dropped" per PTL_EQ_DROPPED; then
 * "gets N" when HOLD_MS have passed (or a signal ends it first). Lines are
 * flushed as they are printed, so the script counts them while it runs.
 * Exit status 0, 1 if a Portals call failed (2: usage).
 */
#include "ptl_selftest.h"

#define GETSRC_EQ_LEN	8192

int main(int argc, char **argv)
{
	static char buf[65536];
	unsigned long count = 0;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	char *stop1, *stop2;
	ptl_event_t ev;
	long long end;
	long pid, hold;
	int rc;

	pid = argc == 3 ? strtol(argv[1], &stop1, 0) : -1;
	hold = argc == 3 ? strtol(argv[2], &stop2, 0) : -1;
	if (argc != 3 || !*argv[1] || *stop1 || !*argv[2] || *stop2 ||
	    pid < 0 || pid > 4095 || hold < 0) {
		fprintf(stderr, "usage: rtscts_getsrc PID HOLD_MS\n");
		return 2;
	}
	memset(buf, 0x5a, sizeof(buf));
	rc = ptl_st_sink((ptl_pid_t)pid, buf, sizeof(buf),
			 PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, GETSRC_EQ_LEN,
			 &ni, &eq);
	if (rc != PTL_OK) {
		fprintf(stderr, "rtscts_getsrc: opening: %s\n",
			PtlErrorStr(rc));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	end = ptl_st_now_ms() + hold;
	while ((rc = ptl_st_next_until(eq, &ev, end)) != PTL_EQ_EMPTY) {
		if (rc == PTL_EQ_DROPPED)
			printf("dropped\n");
		else if (rc != PTL_OK) {
			fprintf(stderr, "rtscts_getsrc: %s\n", PtlErrorStr(rc));
			return 1;
		}
		if (ev.type == PTL_EVENT_GET_START) {
			count++;
			printf("start %u:%u\n", (unsigned int)ev.initiator.nid,
			       (unsigned int)ev.initiator.pid);
		} else if (ev.type == PTL_EVENT_GET_END) {
			printf("end %s %u:%u\n",
			       ev.ni_fail_type == PTL_NI_OK ? "ok" : "fail",
			       (unsigned int)ev.initiator.nid,
			       (unsigned int)ev.initiator.pid);
		}
		fflush(stdout);
	}
	printf("gets %lu\n", count);
	return 0;
}
