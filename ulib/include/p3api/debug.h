/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-spec debugging calls of Portals 3.3 implementations (API reference
 * 4.7 and 5). In Portals for Linux the library state lives in ptl.ko; these
 * calls print what the user library knows (NIs, EQ rings, match-list
 * lengths) to stderr.
 */
#ifndef P3API_DEBUG_H
#define P3API_DEBUG_H

#include <p3api/types.h>

#define PTL_DBG_NONE		0x00000000U
#define PTL_DBG_ALL		0x0000ffffU
#define PTL_DBG_API		0x00000001U
#define PTL_DBG_PARSE		0x00000002U
#define PTL_DBG_MOVE		0x00000004U
#define PTL_DBG_DROP		0x00000008U
#define PTL_DBG_REQUEST		0x00000010U
#define PTL_DBG_DELIVERY	0x00000020U
#define PTL_DBG_MD		0x00000040U
#define PTL_DBG_ME		0x00000080U
#define PTL_DBG_UNLINK		0x00000100U
#define PTL_DBG_EQ		0x00000200U
#define PTL_DBG_EVENT		0x00000400U
#define PTL_DBG_MEMORY		0x00000800U
#define PTL_DBG_SETUP		0x00001000U
#define PTL_DBG_SHUTDOWN	0x00002000U

/* Reserved for the network interface (NAL) layer. */
#define PTL_DBG_NI_ALL		0xffff0000U
#define PTL_DBG_NI_00		0x00010000U
#define PTL_DBG_NI_01		0x00020000U
#define PTL_DBG_NI_02		0x00040000U
#define PTL_DBG_NI_03		0x00080000U
#define PTL_DBG_NI_04		0x00100000U
#define PTL_DBG_NI_05		0x00200000U
#define PTL_DBG_NI_06		0x00400000U
#define PTL_DBG_NI_07		0x00800000U
#define PTL_DBG_NI_08		0x01000000U
#define PTL_DBG_NI_09		0x02000000U
#define PTL_DBG_NI_10		0x04000000U
#define PTL_DBG_NI_11		0x08000000U
#define PTL_DBG_NI_12		0x10000000U
#define PTL_DBG_NI_13		0x20000000U
#define PTL_DBG_NI_14		0x40000000U
#define PTL_DBG_NI_15		0x80000000U

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Sets the debug mask of an NI and returns the previous one. With
 * PTL_INVALID_HANDLE it sets the mask NIs created later start with.
 * Honoured: PTL_DBG_EVENT (print every dequeued event), PTL_DBG_EQ (EQ
 * allocation, release and overflow), PTL_DBG_SETUP / PTL_DBG_SHUTDOWN (NI
 * creation and release), PTL_DBG_API (failing calls on the NI).
 */
unsigned int PtlNIDebug(ptl_handle_ni_t ni_handle, unsigned int mask);

/* Match-list length of one portal (pt_index >= 0) or of all (-1). */
int PtlTblDump(ptl_handle_ni_t ni_handle, int pt_index);

/* The ME's handle and the NI that owns it. */
int PtlMEDump(ptl_handle_me_t me_handle);

/* Every EQ of the NI: size, next expected sequence, events waiting. */
int PtlNIEqDump(ptl_handle_ni_t ni_handle);

#ifdef __cplusplus
}
#endif

#endif /* P3API_DEBUG_H */
