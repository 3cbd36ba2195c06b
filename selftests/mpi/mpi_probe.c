// SPDX-License-Identifier: GPL-2.0
/*
 * Looking at messages before receiving them, and taking receives back
 * (over the ptl provider: fi_trecvmsg with FI_PEEK, FI_PEEK|FI_CLAIM,
 * FI_CLAIM, and fi_cancel):
 *
 *  1. MPI_Iprobe finds nothing for a tag nobody sent (flag 0), also with
 *     MPI_ANY_SOURCE / MPI_ANY_TAG after every rank's traffic is received;
 *  2. MPI_Probe with MPI_ANY_SOURCE tells source, tag and count of an
 *     eager and a long (1 MiB) message from every other rank, without
 *     consuming it: a receive sized by the count gets it intact;
 *  3. MPI_Iprobe polled until a message from every other rank is seen,
 *     then received;
 *  4. MPI_Mprobe claims a message: a later MPI_Recv with the same match
 *     gets the next message, MPI_Mrecv the claimed one (eager and 1 MiB);
 *  5. MPI_Improbe polled, MPI_Imrecv, with any source, from every rank;
 *  6. MPI_Cancel of a posted receive nobody sends to: MPI_Wait returns,
 *     MPI_Test_cancelled is true, and a message sent afterwards with that
 *     tag is received by the next receive, not lost into the cancelled
 *     one;
 *  7. MPI_Cancel racing a message already there: either the receive got
 *     the message intact, or it was cancelled and the message is still
 *     there for the next receive (never lost, never both).
 * Every rank sends to rank 0, which probes; works with any rank count
 * >= 2. TAP on rank 0; exit status non-zero on any failure.
 */
#include "mpi_tap.h"

static int rank, size;

static uint32_t seed_of(int src, int tag, int seq)
{
	return (uint32_t)src * 1000003u + (uint32_t)tag * 7919u + (uint32_t)seq;
}

/* Every other rank sends rank 0 one message of len bytes with tag. */
static void send_to_root(int len, int tag, int seq, int *ok)
{
	char *buf;

	if (rank == 0)
		return;
	buf = xmalloc(len);
	pat_fill(buf, len, seed_of(rank, tag, seq));
	MPI_OK(*ok, MPI_Send(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
	free(buf);
}

static void test_iprobe_nothing(void)
{
	int ok = 1, flag = 1;
	MPI_Status st;

	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(ok, MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
	CHECK(ok, !flag, "Iprobe found a message with tag 999 from %d", st.MPI_SOURCE);
	MPI_OK(ok, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
	CHECK(ok, !flag, "Iprobe(any, any) found a message: source %d tag %d", st.MPI_SOURCE,
	      st.MPI_TAG);
	tap_result("MPI_Iprobe finds nothing where nothing was sent", ok);
}

static void test_probe(int len)
{
	int ok = 1, tag = 100 + (len > 4096);
	char name[96];

	if (rank) {
		send_to_root(len, tag, len, &ok);
	} else {
		for (int i = 1; i < size; i++) {
			MPI_Status st;
			int count = -1, c = -1;
			char *buf;

			MPI_OK(ok, MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
			MPI_Get_count(&st, MPI_BYTE, &count);
			CHECK(ok, st.MPI_SOURCE > 0 && st.MPI_SOURCE < size && st.MPI_TAG == tag &&
					  count == len,
			      "probe: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
			if (!ok)
				break;
			/* a second probe of that source sees the same message */
			MPI_OK(ok, MPI_Probe(st.MPI_SOURCE, tag, MPI_COMM_WORLD, &st));
			MPI_Get_count(&st, MPI_BYTE, &c);
			CHECK(ok, c == count, "probe again: count %d, then %d", count, c);
			buf = xmalloc(count);
			MPI_OK(ok, MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD,
					    MPI_STATUS_IGNORE));
			ok &= pat_check(buf, count, seed_of(st.MPI_SOURCE, tag, len), "probed payload");
			free(buf);
		}
	}
	snprintf(name, sizeof(name),
		 "MPI_Probe(any source) of %d B: source, tag, count right, message still there", len);
	tap_result(name, ok);
}

static void test_iprobe_poll(void)
{
	int ok = 1, tag = 110, len = 3000;

	if (rank) {
		send_to_root(len, tag, 0, &ok);
	} else {
		int got = 0;
		double t0 = MPI_Wtime();
		char *buf = xmalloc(len);

		while (got < size - 1 && ok) {
			MPI_Status st;
			int flag = 0;

			MPI_OK(ok, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
			if (!flag) {
				CHECK(ok, MPI_Wtime() - t0 < 120, "Iprobe saw %d of %d in 120 s", got,
				      size - 1);
				continue;
			}
			CHECK(ok, st.MPI_TAG == tag, "Iprobe: tag %d", st.MPI_TAG);
			MPI_OK(ok, MPI_Recv(buf, len, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
					    MPI_STATUS_IGNORE));
			ok &= pat_check(buf, len, seed_of(st.MPI_SOURCE, tag, 0), "iprobed payload");
			got++;
		}
		free(buf);
	}
	tap_result("MPI_Iprobe polled until every rank's message shows, then received", ok);
}

/* Each other rank sends two messages with one tag; rank 0 claims the
 * first with MPI_Mprobe, receives the second with MPI_Recv, then the
 * claimed one with MPI_Mrecv. */
static void test_mprobe(int len)
{
	int ok = 1, tag = 120 + (len > 4096);
	char name[112];

	if (rank) {
		/* Isend: a long first message completes only once received */
		char *a = xmalloc(len), *b = xmalloc(len);
		MPI_Request r[2];

		pat_fill(a, len, seed_of(rank, tag, 1));
		pat_fill(b, len, seed_of(rank, tag, 2));
		MPI_OK(ok, MPI_Isend(a, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r[0]));
		MPI_OK(ok, MPI_Isend(b, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r[1]));
		MPI_OK(ok, MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
		free(a);
		free(b);
	} else {
		char *a = xmalloc(len), *b = xmalloc(len);

		for (int i = 1; i < size && ok; i++) {
			MPI_Message msg;
			MPI_Status st;
			int src, c = -1;

			MPI_OK(ok, MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &msg, &st));
			src = st.MPI_SOURCE;
			MPI_Get_count(&st, MPI_BYTE, &c);
			CHECK(ok, src > 0 && src < size && c == len, "mprobe: source %d count %d", src,
			      c);
			if (!ok)
				break;
			memset(a, 0, len);
			memset(b, 0, len);
			MPI_OK(ok, MPI_Recv(b, len, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			MPI_OK(ok, MPI_Mrecv(a, len, MPI_BYTE, &msg, &st));
			CHECK(ok, msg == MPI_MESSAGE_NULL, "Mrecv left the message handle set");
			ok &= pat_check(a, len, seed_of(src, tag, 1), "claimed (first) message");
			ok &= pat_check(b, len, seed_of(src, tag, 2), "received (second) message");
		}
		free(a);
		free(b);
	}
	snprintf(name, sizeof(name),
		 "MPI_Mprobe/Mrecv of %d B: the claimed message is not matched by a later receive", len);
	tap_result(name, ok);
}

static void test_improbe(void)
{
	int ok = 1, tag = 130, len = 70000;

	if (rank) {
		send_to_root(len, tag, 3, &ok);
	} else {
		char *buf = xmalloc(len);
		double t0 = MPI_Wtime();
		int got = 0;

		while (got < size - 1 && ok) {
			MPI_Message msg;
			MPI_Request r;
			MPI_Status st;
			int flag = 0, c = -1;

			MPI_OK(ok, MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg,
					       &st));
			if (!flag) {
				CHECK(ok, MPI_Wtime() - t0 < 120, "Improbe saw %d of %d in 120 s", got,
				      size - 1);
				continue;
			}
			memset(buf, 0, len);
			MPI_OK(ok, MPI_Imrecv(buf, len, MPI_BYTE, &msg, &r));
			MPI_OK(ok, MPI_Wait(&r, &st));
			MPI_Get_count(&st, MPI_BYTE, &c);
			CHECK(ok, c == len && st.MPI_TAG == tag, "imrecv: %d bytes tag %d", c, st.MPI_TAG);
			ok &= pat_check(buf, len, seed_of(st.MPI_SOURCE, tag, 3), "improbed payload");
			got++;
		}
		free(buf);
	}
	tap_result("MPI_Improbe polled, MPI_Imrecv (70000 B) from every rank", ok);
}

static void test_cancel_posted(void)
{
	int ok = 1, tag = 140, len = 500;

	if (rank == 0) {
		MPI_Request r;
		MPI_Status st;
		int cancelled = 0;
		char *buf = xmalloc(len);

		memset(buf, 0x3c, len);
		MPI_OK(ok, MPI_Irecv(buf, len, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r));
		MPI_OK(ok, MPI_Cancel(&r));
		MPI_OK(ok, MPI_Wait(&r, &st));
		MPI_OK(ok, MPI_Test_cancelled(&st, &cancelled));
		CHECK(ok, cancelled, "a receive nobody sends to was not cancelled");
		ok &= bytes_are(buf, len, 0x3c, "buffer of the cancelled receive");
		/* now the senders may send with that tag */
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 1; i < size; i++) {
			MPI_OK(ok, MPI_Recv(buf, len, MPI_BYTE, i, tag, MPI_COMM_WORLD, &st));
			ok &= pat_check(buf, len, seed_of(i, tag, 4), "message after the cancel");
		}
		free(buf);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		send_to_root(len, tag, 4, &ok);
	}
	tap_result("MPI_Cancel of a posted receive: cancelled, and later messages not lost to it", ok);
}

static void test_cancel_race(void)
{
	int ok = 1, tag = 150, len = 2000, ncancelled = 0;

	if (rank) {
		send_to_root(len, tag, 5, &ok);
	} else {
		char *buf = xmalloc(len);

		for (int i = 1; i < size; i++) {
			MPI_Request r;
			MPI_Status st;
			int cancelled = 0;

			/* the message is there before the receive is posted */
			MPI_OK(ok, MPI_Probe(i, tag, MPI_COMM_WORLD, &st));
			memset(buf, 0, len);
			MPI_OK(ok, MPI_Irecv(buf, len, MPI_BYTE, i, tag, MPI_COMM_WORLD, &r));
			MPI_OK(ok, MPI_Cancel(&r));
			MPI_OK(ok, MPI_Wait(&r, &st));
			MPI_OK(ok, MPI_Test_cancelled(&st, &cancelled));
			if (cancelled) {
				ncancelled++;
				MPI_OK(ok, MPI_Recv(buf, len, MPI_BYTE, i, tag, MPI_COMM_WORLD, &st));
			}
			ok &= pat_check(buf, len, seed_of(i, tag, 5), "message the cancel raced");
		}
		printf("# cancel racing a present message: %d of %d cancelled\n", ncancelled,
		       size - 1);
		free(buf);
	}
	tap_result("MPI_Cancel racing a message: received once, intact, either way", ok);
}

int main(int argc, char **argv)
{
	mpi_tap_init(&argc, &argv, &rank, &size);

	if (tap_want("iprobe_nothing"))
		test_iprobe_nothing();
	if (tap_want("probe"))
		test_probe(200);
	if (tap_want("probe"))
		test_probe(1 << 20);
	if (tap_want("iprobe_poll"))
		test_iprobe_poll();
	if (tap_want("mprobe"))
		test_mprobe(300);
	if (tap_want("mprobe"))
		test_mprobe(1 << 20);
	if (tap_want("improbe"))
		test_improbe();
	if (tap_want("cancel_posted"))
		test_cancel_posted();
	if (tap_want("cancel_race"))
		test_cancel_race();
	if (tap_want("iprobe_nothing"))
		test_iprobe_nothing();

	return mpi_tap_exit();
}
