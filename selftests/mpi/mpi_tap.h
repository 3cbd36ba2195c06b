/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the MPI test programs (selftests/mpi/, one per .c file): TAP lines
 * agreed on by every rank, payload patterns checked byte by byte, and a
 * few checks that say which rank saw what.
 *
 *   tap_result(name, ok)   every rank says whether its part of test
 *                          "name" passed; rank 0 prints "ok N - name" only
 *                          if all did, else "not ok N - name" (a rank
 *                          that failed prints why as a "# rank R: ..."
 *                          diagnostic before). Collective on
 *                          MPI_COMM_WORLD.
 *   tap_finish()           prints the plan "1..N" and returns the exit
 *                          status (1 if any test failed on any rank)
 *   pat_fill(buf, n, seed) a pattern that depends on the byte's offset
 *                          and on seed (say: source, tag, sequence)
 *   pat_check(...)         the first byte that differs, reported
 *
 * A test that hangs is caught by the caller's time limit (mpirun
 * --timeout, or the guest's).
 */
#ifndef MPI_TAP_H
#define MPI_TAP_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tap_n;
static int tap_failed;
static int tap_rank = -1;

static inline int tap_me(void)
{
	if (tap_rank < 0)
		MPI_Comm_rank(MPI_COMM_WORLD, &tap_rank);
	return tap_rank;
}

/* A diagnostic of this rank, as a TAP comment. */
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;
	char line[512];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("# rank %d: %s\n", tap_me(), line);
	fflush(stdout);
}

/* Collective: the test passed only if it passed on every rank. */
static inline int tap_result(const char *name, int ok)
{
	int all = 0, mine = ok ? 1 : 0;

	fflush(stdout);
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	tap_n++;
	if (!all)
		tap_failed++;
	if (tap_me() == 0) {
		printf("%sok %d - %s\n", all ? "" : "not ", tap_n, name);
		fflush(stdout);
	}
	return all;
}

/*
 * 0 if the environment's MPI_TEST_SKIP (words separated by commas) names
 * key: the test is then reported "ok N - key # SKIP", for bringing up a
 * transport one feature at a time. Else 1: run it.
 */
static inline int tap_want(const char *key)
{
	const char *skip = getenv("MPI_TEST_SKIP");
	size_t n = strlen(key);

	for (const char *p = skip; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, key, n)) {
			tap_n++;
			if (tap_me() == 0)
				printf("ok %d - %s # SKIP MPI_TEST_SKIP\n", tap_n, key);
			return 0;
		}
		p = end ? end + 1 : p + len;
	}
	return 1;
}

static inline int tap_finish(void)
{
	if (tap_me() == 0) {
		printf("1..%d\n", tap_n);
		if (tap_failed)
			printf("# %d of %d failed\n", tap_failed, tap_n);
		fflush(stdout);
	}
	return tap_failed ? 1 : 0;
}

static inline uint8_t pat_byte(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ (seed * 40503u + 0x9e37u);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)(x ^ (uint32_t)(i >> 8));
}

static inline void pat_fill(void *buf, size_t n, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i++)
		p[i] = pat_byte(i, seed);
}

/* 1 if buf holds n bytes of seed's pattern; else a diagnostic and 0. */
static inline int pat_check(const void *buf, size_t n, uint32_t seed, const char *what)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != pat_byte(i, seed)) {
			tap_diag("%s: byte %zu of %zu is 0x%02x, expected 0x%02x (seed %u)", what, i,
				 n, p[i], pat_byte(i, seed), seed);
			return 0;
		}
	}
	return 1;
}

/* 1 if n bytes at buf are all c (guard areas, untouched buffers). */
static inline int bytes_are(const void *buf, size_t n, uint8_t c, const char *what)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != c) {
			tap_diag("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, p[i], c);
			return 0;
		}
	}
	return 1;
}

/* MPI call that must succeed; on failure a diagnostic, and ok becomes 0. */
#define MPI_OK(ok, call)                                                        \
	do {                                                                    \
		int rc_ = (call);                                               \
		if (rc_ != MPI_SUCCESS) {                                       \
			char s_[MPI_MAX_ERROR_STRING];                          \
			int l_ = 0;                                             \
			MPI_Error_string(rc_, s_, &l_);                         \
			tap_diag("%s:%d: %s: %s", __FILE__, __LINE__, #call, s_); \
			(ok) = 0;                                               \
		}                                                               \
	} while (0)

/* A check; on failure a diagnostic with the values, and ok becomes 0. */
#define CHECK(ok, cond, ...)                                 \
	do {                                                 \
		if (!(cond)) {                               \
			tap_diag("%s:%d: %s", __FILE__, __LINE__, #cond); \
			tap_diag(__VA_ARGS__);               \
			(ok) = 0;                            \
		}                                            \
	} while (0)

static inline void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		tap_diag("out of memory (%zu bytes)", n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* Every rank must have at least n ranks; else a skip of the whole program. */
static inline void need_ranks(int n)
{
	int size;

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < n) {
		if (tap_me() == 0)
			printf("1..0 # SKIP needs %d ranks, have %d\n", n, size);
		MPI_Finalize();
		exit(0);
	}
}

/*
 * What every program's main() starts with: MPI up, errors returned (not
 * fatal) so that a test can report them, its rank and the world's size,
 * and at least two ranks.
 */
static inline void mpi_tap_init(int *argc, char ***argv, int *rank, int *size)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	need_ranks(2);
}

/* The plan line and MPI down; the program's exit status. */
static inline int mpi_tap_exit(void)
{
	int rc = tap_finish();

	MPI_Finalize();
	return rc;
}

#endif /* MPI_TAP_H */
