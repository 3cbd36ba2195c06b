// SPDX-License-Identifier: GPL-2.0
/*
 * Messages that arrive before their receives (over the ptl provider: the
 * overflow buffers behind the posted receives, and long messages kept
 * as headers and pulled when the receive comes):
 *
 *  1. many unexpected messages at once: every rank but 0 sends rank 0
 *     its share of 2,000 messages (UNEXPECTED_COUNT overrides), sizes
 *     0 B .. 1 KiB with every 50th one 40 KiB (past an eager limit), all
 *     with MPI_Isend, while rank 0 sleeps; then rank 0 receives them in
 *     reverse order of tag (each one searched for), every payload
 *     checked, nothing missing, and the senders' requests complete;
 *  2. the same, received with MPI_ANY_SOURCE / MPI_ANY_TAG: each
 *     sender's messages in the order sent (one tag per sender, the
 *     sequence in the payload);
 *  3. a receiver that posts late: each other rank sends a small message,
 *     a 4 MiB one and another small one with three tags (blocking sends)
 *     while rank 0 sleeps 2 s, then rank 0 receives the large one first,
 *     then the last small one, then the first;
 *  4. both directions at once: every rank sends every other rank 200
 *     messages before anyone receives (MPI_Isend), then all receive.
 * Works with any rank count >= 2. TAP on rank 0; exit status non-zero on
 * any failure.
 */
#include "mpi_tap.h"

static int rank, size;

static uint32_t seed_of(int src, int tag, int seq)
{
	return (uint32_t)src * 1000003u + (uint32_t)tag * 7919u + (uint32_t)seq;
}

static int len_of(int i)
{
	return i % 50 == 49 ? 40 * 1024 : (i * 131) % 1025;
}

/* The number of messages sender src sends (of total, shared out). */
static int share(int total, int src)
{
	int senders = size - 1;

	return total / senders + (src - 1 < total % senders);
}

static void send_many(int total, int tag_base, int one_tag, int *ok)
{
	int n = share(total, rank);
	MPI_Request *r = xmalloc(sizeof(*r) * n);
	char **bufs = xmalloc(sizeof(*bufs) * n);

	for (int i = 0; i < n; i++) {
		int tag = one_tag ? tag_base : tag_base + i;

		bufs[i] = xmalloc(len_of(i) + sizeof(int));
		pat_fill(bufs[i], len_of(i) + sizeof(int), seed_of(rank, tag_base, i));
		memcpy(bufs[i], &i, sizeof(i));
		MPI_OK(*ok, MPI_Isend(bufs[i], len_of(i) + sizeof(int), MPI_BYTE, 0, tag,
				      MPI_COMM_WORLD, &r[i]));
	}
	/* Everything is in flight before rank 0 starts receiving. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(*ok, MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
	for (int i = 0; i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(r);
}

/* Checks message i of src: its sequence number and its pattern. */
static int check_msg(char *buf, MPI_Status *st, int src, int tag_base, int i)
{
	int ok = 1, seq = -1, c = -1;

	memcpy(&seq, buf, sizeof(seq));
	MPI_Get_count(st, MPI_BYTE, &c);
	if (seq != i || c != len_of(i) + (int)sizeof(int)) {
		tap_diag("from %d tag %d: sequence %d (expected %d), %d bytes (expected %zu)", src,
			 st->MPI_TAG, seq, i, c, len_of(i) + sizeof(int));
		return 0;
	}
	pat_fill(buf, sizeof(int), seed_of(src, tag_base, i));
	ok &= pat_check(buf, c, seed_of(src, tag_base, i), "unexpected message's payload");
	return ok;
}

static void test_many(int total, int any)
{
	int ok = 1, tag_base = any ? 5000 : 1000;
	char name[128];

	if (rank) {
		send_many(total, tag_base, any, &ok);
	} else {
		char *buf = xmalloc(40 * 1024 + sizeof(int));
		int *next = xmalloc(sizeof(int) * size), got = 0;
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		sleep_ms(1000); /* let them all arrive unexpected */
		t0 = MPI_Wtime();
		if (!any) {
			for (int src = 1; src < size && ok; src++)
				for (int i = share(total, src) - 1; i >= 0 && ok; i--) {
					MPI_Status st;

					MPI_OK(ok, MPI_Recv(buf, 40 * 1024 + sizeof(int), MPI_BYTE, src,
							    tag_base + i, MPI_COMM_WORLD, &st));
					ok &= check_msg(buf, &st, src, tag_base, i);
					got++;
				}
		} else {
			memset(next, 0, sizeof(int) * size);
			for (int k = 0; k < total && ok; k++) {
				MPI_Status st;
				int src;

				MPI_OK(ok, MPI_Recv(buf, 40 * 1024 + sizeof(int), MPI_BYTE,
						    MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
				src = st.MPI_SOURCE;
				CHECK(ok, src > 0 && src < size && st.MPI_TAG == tag_base,
				      "source %d tag %d", src, st.MPI_TAG);
				if (!ok)
					break;
				ok &= check_msg(buf, &st, src, tag_base, next[src]++);
				got++;
			}
		}
		CHECK(ok, got == total, "received %d of %d", got, total);
		printf("# %d unexpected messages from %d ranks received in %.2f s\n", got, size - 1,
		       MPI_Wtime() - t0);
		free(buf);
		free(next);
	}
	if (any)
		snprintf(name, sizeof(name),
			 "%d unexpected messages, any source/any tag: each sender's in order", total);
	else
		snprintf(name, sizeof(name),
			 "%d unexpected messages from %d ranks, received in reverse tag order", total,
			 size - 1);
	tap_result(name, ok);
}

static void test_late_receiver(void)
{
	const int big = 4 << 20, small = 64, tag = 300;
	int ok = 1;
	char *buf = xmalloc(big);

	if (rank) {
		pat_fill(buf, small, seed_of(rank, tag, 1));
		MPI_OK(ok, MPI_Send(buf, small, MPI_BYTE, 0, tag + 1, MPI_COMM_WORLD));
		pat_fill(buf, big, seed_of(rank, tag, 2));
		MPI_OK(ok, MPI_Send(buf, big, MPI_BYTE, 0, tag + 2, MPI_COMM_WORLD));
		pat_fill(buf, small, seed_of(rank, tag, 3));
		MPI_OK(ok, MPI_Send(buf, small, MPI_BYTE, 0, tag + 3, MPI_COMM_WORLD));
	} else {
		sleep_ms(2000);
		for (int src = 1; src < size; src++) {
			static const int order[3] = { 2, 3, 1 };

			for (int k = 0; k < 3; k++) {
				int t = order[k], len = t == 2 ? big : small, c = -1;
				MPI_Status st;

				memset(buf, 0, len);
				MPI_OK(ok, MPI_Recv(buf, big, MPI_BYTE, src, tag + t, MPI_COMM_WORLD, &st));
				MPI_Get_count(&st, MPI_BYTE, &c);
				CHECK(ok, c == len, "late receive of tag %d from %d: %d bytes", tag + t,
				      src, c);
				ok &= pat_check(buf, len, seed_of(src, tag, t), "late receiver's payload");
			}
		}
	}
	free(buf);
	tap_result("a receiver 2 s late: 4 MiB first, then the small messages sent around it", ok);
}

static void test_all_to_all_unexpected(void)
{
	const int per = 200, tag = 400;
	int ok = 1, n = per * (size - 1), k = 0;
	MPI_Request *r = xmalloc(sizeof(*r) * n);
	int *sbuf = xmalloc(sizeof(int) * 4 * n), rbuf[4];

	for (int d = 0; d < size; d++) {
		if (d == rank)
			continue;
		for (int i = 0; i < per; i++, k++) {
			int *m = sbuf + 4 * k;

			m[0] = rank;
			m[1] = d;
			m[2] = i;
			m[3] = (int)seed_of(rank, d, i);
			MPI_OK(ok, MPI_Isend(m, 4, MPI_INT, d, tag, MPI_COMM_WORLD, &r[k]));
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int s = 0; s < size; s++) {
		if (s == rank)
			continue;
		for (int i = 0; i < per && ok; i++) {
			MPI_OK(ok, MPI_Recv(rbuf, 4, MPI_INT, s, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(ok,
			      rbuf[0] == s && rbuf[1] == rank && rbuf[2] == i &&
				      rbuf[3] == (int)seed_of(s, rank, i),
			      "from %d message %d: %d %d %d %d", s, i, rbuf[0], rbuf[1], rbuf[2], rbuf[3]);
		}
	}
	MPI_OK(ok, MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
	free(r);
	free(sbuf);
	tap_result("every rank sends every other 200 messages before anyone receives", ok);
}

int main(int argc, char **argv)
{
	const char *env = getenv("UNEXPECTED_COUNT");
	int total = env ? atoi(env) : 2000;

	mpi_tap_init(&argc, &argv, &rank, &size);
	if (total < size - 1)
		total = size - 1;

	if (tap_want("many"))
		test_many(total, 0);
	if (tap_want("many"))
		test_many(total, 1);
	if (tap_want("late_receiver"))
		test_late_receiver();
	if (tap_want("all_to_all_unexpected"))
		test_all_to_all_unexpected();

	return mpi_tap_exit();
}
