// SPDX-License-Identifier: GPL-2.0
/*
 * One-sided communication through MPI_Win_create windows. Run with
 * `--mca osc pt2pt` Open MPI carries it as point-to-point messages (over
 * pml cm + mtl ofi with the ptl provider); results checked:
 *
 *  1. fence epochs: every rank MPI_Puts a pattern into its right
 *     neighbour's window (a slot per origin), fence, each window checked;
 *     MPI_Get of the left neighbour's slot, fence, checked;
 *  2. MPI_Accumulate (MPI_SUM) from every rank into every rank's window
 *     in one fence epoch: each element is the sum over the ranks;
 *  3. a 1 MiB MPI_Put and MPI_Get in fence epochs (past any eager limit);
 *  4. passive target: MPI_Win_lock(EXCLUSIVE) + MPI_Put + MPI_Win_unlock
 *     into rank 0's window from every rank, then each reads its slot back
 *     under MPI_LOCK_SHARED with MPI_Get; rank 0 sees all slots after a
 *     barrier (its own window read under a lock);
 *  5. a counter: every rank adds 1 to rank 0's counter 50 times, each
 *     under an exclusive lock with MPI_Accumulate, and also with
 *     MPI_Fetch_and_op (each fetched value distinct); the totals match;
 *  6. MPI_Compare_and_swap as a lock: each rank takes a flag on rank 0
 *     once and records its turn.
 * Works with any rank count >= 2. TAP on rank 0; exit status non-zero on
 * any failure.
 */
#include "mpi_tap.h"

static int rank, size;

#define SLOT 256 /* bytes per origin in the fence windows */

static void test_fence_put_get(void)
{
	int ok = 1, right = (rank + 1) % size, left = (rank + size - 1) % size;
	char *base = xmalloc((size_t)SLOT * size), *src = xmalloc(SLOT), *got = xmalloc(SLOT);
	MPI_Win win;

	memset(base, 0, (size_t)SLOT * size);
	MPI_OK(ok, MPI_Win_create(base, (MPI_Aint)SLOT * size, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
				  &win));
	MPI_OK(ok, MPI_Win_fence(0, win));
	pat_fill(src, SLOT, (uint32_t)(rank * 31 + right));
	MPI_OK(ok, MPI_Put(src, SLOT, MPI_BYTE, right, (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win));
	MPI_OK(ok, MPI_Win_fence(0, win));
	ok &= pat_check(base + (size_t)left * SLOT, SLOT, (uint32_t)(left * 31 + rank),
			"slot the left neighbour put");
	for (int r = 0; r < size; r++)
		if (r != left)
			ok &= bytes_are(base + (size_t)r * SLOT, SLOT, 0, "slot nobody put");
	/* read back what we put into the right neighbour */
	memset(got, 0, SLOT);
	MPI_OK(ok, MPI_Get(got, SLOT, MPI_BYTE, right, (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win));
	MPI_OK(ok, MPI_Win_fence(0, win));
	ok &= pat_check(got, SLOT, (uint32_t)(rank * 31 + right), "got back from the right");
	MPI_OK(ok, MPI_Win_free(&win));
	free(base);
	free(src);
	free(got);
	tap_result("fence: MPI_Put into the right neighbour, MPI_Get back, every slot checked", ok);
}

static void test_fence_accumulate(void)
{
	const int n = 1000;
	int64_t *base = xmalloc(sizeof(int64_t) * n), *v = xmalloc(sizeof(int64_t) * n);
	int64_t s1 = (int64_t)size * (size + 1) / 2;
	int ok = 1;
	MPI_Win win;

	memset(base, 0, sizeof(int64_t) * n);
	MPI_OK(ok, MPI_Win_create(base, sizeof(int64_t) * n, sizeof(int64_t), MPI_INFO_NULL,
				  MPI_COMM_WORLD, &win));
	for (int i = 0; i < n; i++)
		v[i] = (int64_t)(rank + 1) * (i + 1);
	MPI_OK(ok, MPI_Win_fence(0, win));
	for (int t = 0; t < size; t++)
		MPI_OK(ok, MPI_Accumulate(v, n, MPI_INT64_T, t, 0, n, MPI_INT64_T, MPI_SUM, win));
	MPI_OK(ok, MPI_Win_fence(0, win));
	for (int i = 0; i < n && ok; i++)
		CHECK(ok, base[i] == s1 * (i + 1), "element %d: %lld, expected %lld", i,
		      (long long)base[i], (long long)(s1 * (i + 1)));
	MPI_OK(ok, MPI_Win_free(&win));
	free(base);
	free(v);
	tap_result("fence: MPI_Accumulate SUM of 1,000 int64 from every rank into every window", ok);
}

static void test_fence_large(void)
{
	const int len = 1 << 20;
	int ok = 1, right = (rank + 1) % size, left = (rank + size - 1) % size;
	char *base = xmalloc(len), *src = xmalloc(len), *got = xmalloc(len);
	MPI_Win win;

	memset(base, 0, len);
	MPI_OK(ok, MPI_Win_create(base, len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	pat_fill(src, len, (uint32_t)(7000 + rank));
	MPI_OK(ok, MPI_Win_fence(0, win));
	MPI_OK(ok, MPI_Put(src, len, MPI_BYTE, right, 0, len, MPI_BYTE, win));
	MPI_OK(ok, MPI_Win_fence(0, win));
	ok &= pat_check(base, len, (uint32_t)(7000 + left), "1 MiB put");
	memset(got, 0, len);
	MPI_OK(ok, MPI_Get(got, len, MPI_BYTE, left, 0, len, MPI_BYTE, win));
	MPI_OK(ok, MPI_Win_fence(0, win));
	/* the left neighbour's window holds what its own left put */
	ok &= pat_check(got, len, (uint32_t)(7000 + (left + size - 1) % size), "1 MiB get");
	MPI_OK(ok, MPI_Win_free(&win));
	free(base);
	free(src);
	free(got);
	tap_result("fence: 1 MiB MPI_Put and MPI_Get", ok);
}

static void test_lock_put_get(void)
{
	int ok = 1;
	char *base = xmalloc((size_t)SLOT * size), *src = xmalloc(SLOT), *got = xmalloc(SLOT);
	MPI_Win win;

	memset(base, 0, (size_t)SLOT * size);
	MPI_OK(ok, MPI_Win_create(base, (MPI_Aint)SLOT * size, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
				  &win));
	pat_fill(src, SLOT, (uint32_t)(9000 + rank));
	MPI_OK(ok, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
	MPI_OK(ok, MPI_Put(src, SLOT, MPI_BYTE, 0, (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win));
	MPI_OK(ok, MPI_Win_unlock(0, win));
	/* our own put is complete at the target: read it back */
	memset(got, 0, SLOT);
	MPI_OK(ok, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_OK(ok, MPI_Get(got, SLOT, MPI_BYTE, 0, (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win));
	MPI_OK(ok, MPI_Win_unlock(0, win));
	ok &= pat_check(got, SLOT, (uint32_t)(9000 + rank), "locked get of our own put");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_OK(ok, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		for (int r = 0; r < size; r++)
			ok &= pat_check(base + (size_t)r * SLOT, SLOT, (uint32_t)(9000 + r),
					"rank 0's window after the locked puts");
		MPI_OK(ok, MPI_Win_unlock(0, win));
	}
	MPI_OK(ok, MPI_Win_free(&win));
	free(base);
	free(src);
	free(got);
	tap_result("lock/unlock: MPI_Put into rank 0 under an exclusive lock, MPI_Get back shared",
		   ok);
}

static void test_lock_counter(void)
{
	const int rounds = 50;
	int64_t counter[2] = { 0, 0 }, one = 1, fetched;
	int64_t *all = xmalloc(sizeof(int64_t) * rounds * size), *mine = xmalloc(sizeof(int64_t) * rounds);
	int ok = 1;
	MPI_Win win;

	MPI_OK(ok, MPI_Win_create(counter, sizeof(counter), sizeof(int64_t), MPI_INFO_NULL,
				  MPI_COMM_WORLD, &win));
	for (int i = 0; i < rounds; i++) {
		MPI_OK(ok, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
		MPI_OK(ok, MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, win));
		MPI_OK(ok, MPI_Win_unlock(0, win));
		MPI_OK(ok, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		MPI_OK(ok, MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 0, 1, MPI_SUM, win));
		MPI_OK(ok, MPI_Win_unlock(0, win));
		mine[i] = fetched;
	}
	MPI_Allgather(mine, rounds, MPI_INT64_T, all, rounds, MPI_INT64_T, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int64_t total = (int64_t)rounds * size;
		char *seen = xmalloc(total);

		MPI_OK(ok, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		CHECK(ok, counter[0] == total && counter[1] == total,
		      "counters %lld and %lld, expected %lld", (long long)counter[0],
		      (long long)counter[1], (long long)total);
		MPI_OK(ok, MPI_Win_unlock(0, win));
		memset(seen, 0, total);
		for (int64_t i = 0; i < total && ok; i++) {
			CHECK(ok, all[i] >= 0 && all[i] < total && !seen[all[i]],
			      "fetch_and_op returned %lld twice or out of range", (long long)all[i]);
			if (ok)
				seen[all[i]] = 1;
		}
		free(seen);
	}
	MPI_OK(ok, MPI_Win_free(&win));
	free(all);
	free(mine);
	tap_result("lock: 50 MPI_Accumulate and 50 MPI_Fetch_and_op per rank on one counter", ok);
}

static void test_cas(void)
{
	int64_t flag_and_turn[2] = { -1, 0 }, me = rank, none = -1, prev, turn, one = 1;
	int64_t *turns = xmalloc(sizeof(int64_t) * size);
	int ok = 1, tries = 0;
	MPI_Win win;

	MPI_OK(ok, MPI_Win_create(flag_and_turn, sizeof(flag_and_turn), sizeof(int64_t),
				  MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_OK(ok, MPI_Win_lock_all(0, win));
	do {	/* take the flag: -1 -> me */
		MPI_OK(ok, MPI_Compare_and_swap(&me, &none, &prev, MPI_INT64_T, 0, 0, win));
		MPI_OK(ok, MPI_Win_flush(0, win));
		tries++;
	} while (prev != -1 && ok && tries < 1000000);
	MPI_OK(ok, MPI_Fetch_and_op(&one, &turn, MPI_INT64_T, 0, 1, MPI_SUM, win));
	MPI_OK(ok, MPI_Win_flush(0, win));
	/* give it back: me -> -1 */
	MPI_OK(ok, MPI_Compare_and_swap(&none, &me, &prev, MPI_INT64_T, 0, 0, win));
	MPI_OK(ok, MPI_Win_flush(0, win));
	CHECK(ok, prev == me, "the flag held %lld while we had it", (long long)prev);
	MPI_OK(ok, MPI_Win_unlock_all(win));
	MPI_Allgather(&turn, 1, MPI_INT64_T, turns, 1, MPI_INT64_T, MPI_COMM_WORLD);
	for (int a = 0; a < size; a++)
		for (int b = a + 1; b < size; b++)
			CHECK(ok, turns[a] != turns[b], "ranks %d and %d both had turn %lld", a, b,
			      (long long)turns[a]);
	MPI_OK(ok, MPI_Win_free(&win));
	free(turns);
	tap_result("MPI_Compare_and_swap as a lock: each rank holds it alone, once", ok);
}

int main(int argc, char **argv)
{
	mpi_tap_init(&argc, &argv, &rank, &size);

	if (tap_want("fence_put_get"))
		test_fence_put_get();
	if (tap_want("fence_accumulate"))
		test_fence_accumulate();
	if (tap_want("fence_large"))
		test_fence_large();
	if (tap_want("lock_put_get"))
		test_lock_put_get();
	if (tap_want("lock_counter"))
		test_lock_counter();
	if (tap_want("cas"))
		test_cas();

	return mpi_tap_exit();
}
