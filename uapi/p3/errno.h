/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Portals 3.3 return codes. Shared by the kernel module, the semantics core
 * and libptl-user: the numeric values are ABI (they cross the ioctl boundary)
 * and match the Sandia reference implementation's p3/errno.h.
 *
 * One X-macro yields both the enum and the name table, so the two can never
 * drift apart.
 */
#ifndef P3_ERRNO_H
#define P3_ERRNO_H

#define PTL_ERRORS(X)			\
	X(PTL_OK)			\
	X(PTL_AC_INDEX_INVALID)		\
	X(PTL_EQ_DROPPED)		\
	X(PTL_EQ_EMPTY)			\
	X(PTL_EQ_INVALID)		\
	X(PTL_FAIL)			\
	X(PTL_HANDLE_INVALID)		\
	X(PTL_IFACE_INVALID)		\
	X(PTL_MD_ILLEGAL)		\
	X(PTL_MD_INVALID)		\
	X(PTL_MD_IN_USE)		\
	X(PTL_MD_NO_UPDATE)		\
	X(PTL_ME_INVALID)		\
	X(PTL_ME_IN_USE)		\
	X(PTL_ME_LIST_TOO_LONG)		\
	X(PTL_NI_INVALID)		\
	X(PTL_NO_INIT)			\
	X(PTL_NO_SPACE)			\
	X(PTL_PID_INVALID)		\
	X(PTL_PROCESS_INVALID)		\
	X(PTL_PT_FULL)			\
	X(PTL_PT_INDEX_INVALID)		\
	X(PTL_SEGV)			\
	X(PTL_SR_INDEX_INVALID)		\
	X(PTL_UNKNOWN_ERROR)		\
	X(PTL_MAX_ERRNO)

#define PTL_ERRNO_ENUM_ENTRY(name) name,

typedef enum {
	PTL_ERRORS(PTL_ERRNO_ENUM_ENTRY)
} ptl_err_t;

#undef PTL_ERRNO_ENUM_ENTRY

#ifndef __KERNEL__
#ifdef __cplusplus
extern "C" {
#endif
/* Names of the codes above, indexed by code ("PTL_OK", ...). */
extern const char *ptl_err_str[];
#ifdef __cplusplus
}
#endif
#endif

#endif /* P3_ERRNO_H */
