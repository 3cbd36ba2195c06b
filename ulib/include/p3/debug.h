/* SPDX-License-Identifier: BSD-3-Clause */
/* printf formats for Portals types, as the reference test programs use them. */
#ifndef P3_DEBUG_H
#define P3_DEBUG_H

#include <inttypes.h>

#define FMT_SZ_T	"%zu"
#define FMT_SSZ_T	"%zd"
#define FMT_PSZ_T	"%" PRIu64
#define FMT_SEQ_T	"%" PRIu32
#define FMT_NID_T	"%" PRIu32
#define FMT_PID_T	"%" PRIu32
#define FMT_UID_T	"%" PRIu32
#define FMT_JID_T	"%" PRIu32
#define FMT_PTL_T	"%" PRIu32
#define FMT_HDL_T	"%" PRIx32

#define FMT_NIDPID	" nid " FMT_NID_T " pid " FMT_PID_T
#define FMT_NIDPIDPTL	" nid " FMT_NID_T " pid " FMT_PID_T " ptl " FMT_PTL_T
#define FMT_MBITS	" mb %" PRIx64
#define FMT_IBITS	" ib %" PRIx64
#define FMT_RLEN	" rlen " FMT_PSZ_T
#define FMT_MLEN	" mlen " FMT_PSZ_T
#define FMT_LEN		" len " FMT_PSZ_T

#endif /* P3_DEBUG_H */
