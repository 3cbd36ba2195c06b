/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Status registers and network-interface failure codes (sections 3.5.3 and
 * 3.11). Register numbers follow the Sandia reference implementation.
 */
#ifndef P3API_MISC_H
#define P3API_MISC_H

#include <p3api/types.h>

#define PTL_NI_FAIL		1

#define PTL_SR_DROP_COUNT	0
#define PTL_SR_DROP_LENGTH	1
#define PTL_SR_RECV_COUNT	2
#define PTL_SR_RECV_LENGTH	3
#define PTL_SR_SEND_COUNT	4
#define PTL_SR_SEND_LENGTH	5
#define PTL_SR_PTLS_MAX		6
#define PTL_SR_PTLS_CUR		7
#define PTL_SR_MSGS_ALLOC	8
#define PTL_SR_MSGS_FREED	9
#define PTL_SR_MSGS_MAX		10
#define PTL_SR_MSGS_CUR		11
#define PTL_SR_MES_ALLOC	12
#define PTL_SR_MES_FREED	13
#define PTL_SR_MES_MAX		14
#define PTL_SR_MES_CUR		15
#define PTL_SR_MDS_ALLOC	16
#define PTL_SR_MDS_FREED	17
#define PTL_SR_MDS_MAX		18
#define PTL_SR_MDS_CUR		19
#define PTL_SR_EQS_ALLOC	20
#define PTL_SR_EQS_FREED	21
#define PTL_SR_EQS_MAX		22
#define PTL_SR_EQS_CUR		23
#define PTL_SR_MD_ALIGN_128	24
#define PTL_SR_MD_ALIGN_64	25
#define PTL_SR_MD_ALIGN_32	26
#define PTL_SR_MD_ALIGN_16	27
#define PTL_SR_MD_ALIGN_8	28
#define PTL_SR_NAL_REGS_START	29

/*
 * Per-portal match-list length registers. The reference header spelled the
 * MAX variant with an undefined name; this one works (spec intent).
 */
#define PTL_SR_MLIST_FLAG	(1U << 31)
#define PTL_SR_MLIST_LEN(pt) \
	((ptl_sr_index_t)(((pt) << 16) | PTL_SR_MES_CUR | PTL_SR_MLIST_FLAG))
#define PTL_SR_MLIST_MAX(pt) \
	((ptl_sr_index_t)(((pt) << 16) | PTL_SR_MES_MAX | PTL_SR_MLIST_FLAG))

#endif /* P3API_MISC_H */
