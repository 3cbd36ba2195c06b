// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives (Open MPI's coll tuned/basic over point-to-point, so over
 * pml cm + mtl ofi when the ptl provider carries them), results checked
 * against what each must compute:
 *
 *  1. MPI_Barrier waits for the last rank: rank 0 enters 1 s late, and
 *     every other rank's barrier takes at least 0.5 s by its own clock
 *     (the slack is for ranks that leave the barrier before it late: 16
 *     ranks on two starved vCPUs left it up to ~100 ms apart);
 *  2. MPI_Bcast of 1 B, 4 KiB, 100 KiB and 1 MiB from every root, each
 *     byte checked;
 *  3. MPI_Reduce: MPI_SUM of 100,000 int64 and MPI_MAX of doubles to
 *     every root; MPI_Allreduce: MPI_SUM of 100,000 int64, MPI_MIN and
 *     MPI_PROD, MPI_BOR, and MPI_SUM on a split (even/odd) communicator;
 *  4. MPI_Allgather of 1 and of 10,000 ints per rank; MPI_Gather and
 *     MPI_Scatter of 1,000 ints from root size-1;
 *  5. MPI_Alltoall of 1 and of 5,000 ints per pair; MPI_Alltoallv with
 *     per-pair counts;
 *  6. MPI_Scan and MPI_Exscan of the ranks.
 * Works with any rank count >= 2. TAP on rank 0; exit status non-zero on
 * any failure.
 */
#include "mpi_tap.h"

static int rank, size;

static void test_barrier(void)
{
	int ok = 1;
	double t0, dt;

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		sleep_ms(1000);
	t0 = MPI_Wtime();
	MPI_OK(ok, MPI_Barrier(MPI_COMM_WORLD));
	dt = MPI_Wtime() - t0;
	if (rank)
		CHECK(ok, dt >= 0.5, "barrier returned after %.3f s, before rank 0 entered", dt);
	tap_result("MPI_Barrier: nobody leaves before the last rank (1 s late) enters", ok);
}

static void test_bcast(void)
{
	static const int lens[4] = { 1, 4096, 100 * 1024, 1 << 20 };
	int ok = 1;
	char *buf = xmalloc(1 << 20);

	for (int l = 0; l < 4; l++)
		for (int root = 0; root < size; root++) {
			uint32_t seed = (uint32_t)(root * 100 + l);

			if (rank == root)
				pat_fill(buf, lens[l], seed);
			else
				memset(buf, 0, lens[l]);
			MPI_OK(ok, MPI_Bcast(buf, lens[l], MPI_BYTE, root, MPI_COMM_WORLD));
			ok &= pat_check(buf, lens[l], seed, "bcast payload");
		}
	free(buf);
	tap_result("MPI_Bcast of 1 B .. 1 MiB from every root", ok);
}

static void test_reduce(void)
{
	const int n = 100000;
	int64_t *in = xmalloc(sizeof(int64_t) * n), *out = xmalloc(sizeof(int64_t) * n);
	double din[3], dout[3];
	int ok = 1;

	for (int i = 0; i < n; i++)
		in[i] = (int64_t)i * (rank + 1) + rank;
	for (int root = 0; root < size; root++) {
		memset(out, 0, sizeof(int64_t) * n);
		MPI_OK(ok, MPI_Reduce(in, out, n, MPI_INT64_T, MPI_SUM, root, MPI_COMM_WORLD));
		if (rank == root) {
			int64_t s1 = (int64_t)size * (size + 1) / 2, s0 = (int64_t)size * (size - 1) / 2;

			for (int i = 0; i < n && ok; i++)
				CHECK(ok, out[i] == (int64_t)i * s1 + s0, "sum[%d] = %lld, expected %lld",
				      i, (long long)out[i], (long long)((int64_t)i * s1 + s0));
		}
		din[0] = rank * 1.5;
		din[1] = -rank;
		din[2] = rank == root ? 1e9 : 0.25;
		MPI_OK(ok, MPI_Reduce(din, dout, 3, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD));
		if (rank == root)
			CHECK(ok, dout[0] == (size - 1) * 1.5 && dout[1] == 0 && dout[2] == 1e9,
			      "max: %g %g %g", dout[0], dout[1], dout[2]);
	}
	free(in);
	free(out);
	tap_result("MPI_Reduce: SUM of 100,000 int64 and MAX of doubles to every root", ok);
}

static void test_allreduce(void)
{
	const int n = 100000;
	int64_t *in = xmalloc(sizeof(int64_t) * n), *out = xmalloc(sizeof(int64_t) * n);
	int64_t s1 = (int64_t)size * (size + 1) / 2;
	int ok = 1, v, r;
	double d, dr;
	MPI_Comm half;

	for (int i = 0; i < n; i++)
		in[i] = (int64_t)(i % 1000) * (rank + 1);
	MPI_OK(ok, MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < n && ok; i++)
		CHECK(ok, out[i] == (int64_t)(i % 1000) * s1, "sum[%d] = %lld", i, (long long)out[i]);
	v = 100 - rank;
	MPI_OK(ok, MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	CHECK(ok, r == 100 - (size - 1), "min %d", r);
	d = rank % 2 ? 2.0 : 1.0;
	MPI_OK(ok, MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
	CHECK(ok, dr == (double)(1 << (size / 2)), "prod %g", dr);
	v = 1 << (rank % 31);
	MPI_OK(ok, MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD));
	CHECK(ok, r == (size >= 31 ? 0x7fffffff : (1 << size) - 1), "bor 0x%x", r);

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	v = rank;
	MPI_OK(ok, MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, half));
	{
		int want = 0;

		for (int i = rank % 2; i < size; i += 2)
			want += i;
		CHECK(ok, r == want, "split sum %d, expected %d", r, want);
	}
	MPI_Comm_free(&half);
	free(in);
	free(out);
	tap_result("MPI_Allreduce: SUM of 100,000 int64, MIN, PROD, BOR, SUM on a split comm", ok);
}

static void test_gathers(void)
{
	const int n = 10000, g = 1000, root = size - 1;
	int *in = xmalloc(sizeof(int) * n), *out = xmalloc(sizeof(int) * n * size);
	int ok = 1, one = rank * 7 + 1;

	MPI_OK(ok, MPI_Allgather(&one, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD));
	for (int r = 0; r < size; r++)
		CHECK(ok, out[r] == r * 7 + 1, "allgather[%d] = %d", r, out[r]);
	for (int i = 0; i < n; i++)
		in[i] = rank * n + i;
	memset(out, 0, sizeof(int) * n * size);
	MPI_OK(ok, MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < n * size && ok; i++)
		CHECK(ok, out[i] == i, "allgather of %d ints: [%d] = %d", n, i, out[i]);

	memset(out, 0, sizeof(int) * n * size);
	MPI_OK(ok, MPI_Gather(in, g, MPI_INT, out, g, MPI_INT, root, MPI_COMM_WORLD));
	if (rank == root)
		for (int r = 0; r < size && ok; r++)
			for (int i = 0; i < g && ok; i++)
				CHECK(ok, out[r * g + i] == r * n + i, "gather [%d][%d] = %d", r, i,
				      out[r * g + i]);
	if (rank == root)
		for (int i = 0; i < g * size; i++)
			out[i] = -i;
	memset(in, 0, sizeof(int) * g);
	MPI_OK(ok, MPI_Scatter(out, g, MPI_INT, in, g, MPI_INT, root, MPI_COMM_WORLD));
	for (int i = 0; i < g && ok; i++)
		CHECK(ok, in[i] == -(rank * g + i), "scatter [%d] = %d", i, in[i]);
	free(in);
	free(out);
	tap_result("MPI_Allgather (1 and 10,000 ints), MPI_Gather and MPI_Scatter (1,000 ints)", ok);
}

static void test_alltoall(void)
{
	const int n = 5000;
	int *in = xmalloc(sizeof(int) * n * size), *out = xmalloc(sizeof(int) * n * size);
	int *sc = xmalloc(sizeof(int) * size), *sd = xmalloc(sizeof(int) * size);
	int *rc = xmalloc(sizeof(int) * size), *rd = xmalloc(sizeof(int) * size);
	int ok = 1;

	for (int d = 0; d < size; d++)
		in[d] = rank * 1000 + d;
	MPI_OK(ok, MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD));
	for (int s = 0; s < size; s++)
		CHECK(ok, out[s] == s * 1000 + rank, "alltoall [%d] = %d", s, out[s]);

	for (int d = 0; d < size; d++)
		for (int i = 0; i < n; i++)
			in[d * n + i] = (rank * size + d) * n + i;
	memset(out, 0, sizeof(int) * n * size);
	MPI_OK(ok, MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD));
	for (int s = 0; s < size && ok; s++)
		for (int i = 0; i < n && ok; i++)
			CHECK(ok, out[s * n + i] == (s * size + rank) * n + i, "alltoall %d: [%d][%d] = %d",
			      n, s, i, out[s * n + i]);

	/* v: rank r sends (r + d) % 7 * 100 ints to d */
	for (int d = 0, off = 0; d < size; d++) {
		sc[d] = (rank + d) % 7 * 100;
		sd[d] = off;
		for (int i = 0; i < sc[d]; i++)
			in[off + i] = rank * 100000 + d * 1000 + i;
		off += sc[d];
	}
	for (int s = 0, off = 0; s < size; s++) {
		rc[s] = (s + rank) % 7 * 100;
		rd[s] = off;
		off += rc[s];
	}
	MPI_OK(ok, MPI_Alltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int s = 0; s < size && ok; s++)
		for (int i = 0; i < rc[s] && ok; i++)
			CHECK(ok, out[rd[s] + i] == s * 100000 + rank * 1000 + i,
			      "alltoallv [%d][%d] = %d", s, i, out[rd[s] + i]);
	free(in);
	free(out);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	tap_result("MPI_Alltoall (1 and 5,000 ints per pair), MPI_Alltoallv", ok);
}

static void test_scan(void)
{
	int ok = 1, v = rank + 1, r = -1, e = -1;

	MPI_OK(ok, MPI_Scan(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(ok, r == (rank + 1) * (rank + 2) / 2, "scan %d", r);
	MPI_OK(ok, MPI_Exscan(&v, &e, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (rank)
		CHECK(ok, e == rank * (rank + 1) / 2, "exscan %d", e);
	tap_result("MPI_Scan and MPI_Exscan", ok);
}

int main(int argc, char **argv)
{
	mpi_tap_init(&argc, &argv, &rank, &size);

	if (tap_want("barrier"))
		test_barrier();
	if (tap_want("bcast"))
		test_bcast();
	if (tap_want("reduce"))
		test_reduce();
	if (tap_want("allreduce"))
		test_allreduce();
	if (tap_want("gathers"))
		test_gathers();
	if (tap_want("alltoall"))
		test_alltoall();
	if (tap_want("scan"))
		test_scan();

	return mpi_tap_exit();
}
