// SPDX-License-Identifier: GPL-2.0
/*
 * Progress without polling (seed 000, Fig. 5/6), under any MPI transport:
 * rank 1 posts MPI_Irecv of COUNT messages of SIZE bytes from rank 0,
 * then computes for a while without calling MPI (a busy loop on the
 * clock) while rank 0 sends them, starting a tenth of the interval into
 * the compute. Right after the loop, before any
 * MPI_Test/MPI_Wait, rank 1 counts how many bytes of its receive
 * buffers already hold what was sent: that share arrived with no help
 * from the receiving process. A transport whose data moves only when the
 * application calls the library (a TCP stream read in MPI's progress
 * loop) shows ~0 %; one whose network layer writes straight into the
 * posted buffers (Portals) shows ~100 % once the compute outlasts the
 * transfer.
 *
 *   mpi_progress [-n COUNT] [-s SIZE] [-r REPEATS] [-t LABEL] MS...
 *
 * MS: compute intervals in milliseconds (default 50 200 1000). Rank 1
 * prints one line per interval and repetition:
 *   progress LABEL COMPUTE_MS SHARE_PERCENT WAIT_US
 * (WAIT_US: the MPI_Waitall after the compute, what the application
 * still waits for), then "progress LABEL COMPUTE_MS mean SHARE" per
 * interval. Exit status 1 on a data error after MPI_Waitall.
 * Two ranks exactly.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Never 0, so a zeroed buffer never looks delivered; differs per run. */
static inline uint8_t pat(size_t off, int msg, int run)
{
	return (uint8_t)((off * 131 + msg * 17 + run * 29) % 255 + 1);
}

/* The application's work: no MPI call, no system call but the clock. */
static volatile uint64_t sink;
static void compute(double seconds)
{
	double end = now() + seconds;
	uint64_t x = 1;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(int argc, char **argv)
{
	int count = 10, size = 50000, repeats = 3, opt, rank, np, bad = 0;
	const char *label = "mpi";
	double intervals[16];
	int nint = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	while ((opt = getopt(argc, argv, "n:s:r:t:")) != -1) {
		switch (opt) {
		case 'n':
			count = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'r':
			repeats = atoi(optarg);
			break;
		case 't':
			label = optarg;
			break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpi_progress [-n COUNT] [-s SIZE] [-r REPEATS] [-t LABEL] MS...\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	for (; optind < argc && nint < 16; optind++)
		intervals[nint++] = atof(argv[optind]) / 1000;
	if (!nint) {
		intervals[nint++] = 0.05;
		intervals[nint++] = 0.2;
		intervals[nint++] = 1.0;
	}
	if (np != 2 || count < 1 || count > 1000 || size < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_progress: 2 ranks, 1..1000 messages\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	uint8_t *buf = malloc((size_t)count * size);
	MPI_Request *req = malloc(count * sizeof(*req));

	if (!buf || !req)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int iv = 0; iv < nint; iv++) {
		double sum = 0;

		for (int r = 0; r < repeats; r++) {
			int run = iv * repeats + r;

			if (rank == 1) {
				memset(buf, 0, (size_t)count * size);
				for (int m = 0; m < count; m++)
					MPI_Irecv(buf + (size_t)m * size, size, MPI_BYTE, 0, m,
						  MPI_COMM_WORLD, &req[m]);
			} else {
				for (int m = 0; m < count; m++)
					for (size_t o = 0; o < (size_t)size; o++)
						buf[(size_t)m * size + o] = pat(o, m, run);
			}
			/* The receives are posted before the first byte is sent. */
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 0) {
				/*
				 * Leave the barrier's own progress loop behind on the
				 * receiver, so that everything arrives while it computes.
				 */
				usleep(intervals[iv] * 1e5);
				for (int m = 0; m < count; m++)
					MPI_Isend(buf + (size_t)m * size, size, MPI_BYTE, 1, m,
						  MPI_COMM_WORLD, &req[m]);
				MPI_Waitall(count, req, MPI_STATUSES_IGNORE);
			} else {
				size_t got = 0;
				double t;

				compute(intervals[iv]);
				/* What is there now came without an MPI call. */
				for (int m = 0; m < count; m++)
					for (size_t o = 0; o < (size_t)size; o++)
						got += buf[(size_t)m * size + o] == pat(o, m, run);
				t = now();
				MPI_Waitall(count, req, MPI_STATUSES_IGNORE);
				t = now() - t;
				for (int m = 0; m < count; m++)
					for (size_t o = 0; o < (size_t)size; o++)
						if (buf[(size_t)m * size + o] != pat(o, m, run)) {
							fprintf(stderr, "mpi_progress: message %d byte %zu wrong\n",
								m, o);
							bad = 1;
							o = size;
						}
				double share = 100.0 * got / ((double)count * size);

				sum += share;
				printf("progress %s %.0f %.1f %.0f\n", label, intervals[iv] * 1000,
				       share, t * 1e6);
				fflush(stdout);
			}
			/* The next run's receives are posted after this one is over. */
			MPI_Barrier(MPI_COMM_WORLD);
		}
		if (rank == 1) {
			printf("progress %s %.0f mean %.1f\n", label, intervals[iv] * 1000,
			       sum / repeats);
			fflush(stdout);
		}
	}
	free(req);
	free(buf);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return bad;
}
