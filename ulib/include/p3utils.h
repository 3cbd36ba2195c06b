/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small helpers the reference test programs use: MIN/MAX, message output
 * and millisecond timeouts. Header-only except p3_out.
 */
#ifndef P3UTILS_H
#define P3UTILS_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include <p3/debug.h>

#undef MIN
#undef MAX
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define P3MSG_ERR	"ERR: "
#define P3MSG_WARNING	"WARNING: "
#define P3MSG_INFO	"INFO: "
#define P3MSG_DEBUG	"DEBUG: "

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where the library and these helpers print (debug dumps, traces, notes):
 * stderr until the program points it elsewhere (the reference programs'
 * "-e file" option does). Defined in libptl-user.
 */
extern FILE *p3_out;

#ifdef __cplusplus
}
#endif

#define p3_print(...)	fprintf(p3_out, __VA_ARGS__)
#define p3_flush()	fflush(p3_out)
#define PTL_ROAD()	abort()

/* A deadline; all-zero means "no timeout". */
typedef struct timeval timeout_val_t;

static inline void set_timeout(timeout_val_t *to, unsigned msec_delay)
{
	gettimeofday(to, NULL);
	to->tv_sec += msec_delay / 1000;
	to->tv_usec += (long)(msec_delay % 1000) * 1000;
	to->tv_sec += to->tv_usec / 1000000;
	to->tv_usec %= 1000000;
}

static inline void clear_timeout(timeout_val_t *to)
{
	to->tv_sec = 0;
	to->tv_usec = 0;
}

static inline int timeout_set(const timeout_val_t *to)
{
	return to->tv_sec != 0 || to->tv_usec != 0;
}

/* Non-zero once the deadline has passed; an unset timeout never expires. */
static inline int test_timeout(const timeout_val_t *to)
{
	struct timeval now;

	if (!timeout_set(to))
		return 0;
	gettimeofday(&now, NULL);
	return now.tv_sec > to->tv_sec ||
	       (now.tv_sec == to->tv_sec && now.tv_usec >= to->tv_usec);
}

#endif /* P3UTILS_H */
