/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Portals for Linux: the ioctl ABI of /dev/portals.
 *
 * Conventions, identical for every command:
 *
 *  - The argument is a struct whose first two fields are
 *    { __u32 size; __u32 flags; }. @size is sizeof() the struct as the caller
 *    compiled it. The kernel accepts a smaller size from an older caller (the
 *    missing tail reads as zero) and a larger one from a newer caller as long
 *    as the bytes it does not know are zero (else E2BIG), exactly like
 *    copy_struct_from_user(). Output fields are copied back up to @size.
 *  - @flags bits the kernel does not know are refused with EINVAL.
 *  - The command number's _IOC_SIZE is informational; dispatch uses
 *    _IOC_TYPE and _IOC_NR and the in-struct @size.
 *  - Return value: negative errno for an ABI-level failure (EFAULT for an
 *    unreadable argument struct, EINVAL for bad size or flags, ENOTTY for an
 *    unknown command, EPERM for a privileged command), otherwise a
 *    non-negative Portals return code (ptl_err_t, <p3/errno.h>) - PTL_OK is 0.
 *
 * Only 64-bit processes are supported; there is no compat_ioctl.
 */
#ifndef _UAPI_LINUX_PORTALS_H
#define _UAPI_LINUX_PORTALS_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PTL_DEVICE_NAME		"portals"
#define PTL_DEVICE_PATH		"/dev/portals"

/* Bumped only for incompatible changes; growth uses the size fields. */
#define PTL_ABI_VERSION		1

/* Processes may open this many interfaces at once (PtlInit's answer). */
#define PTL_MAX_INTERFACES	8

/*
 * Portals pid space of one interface (node-wide, see Documentation):
 *   [0, PTL_PID_RESERVED_END)      system services, need CAP_NET_ADMIN
 *   [PTL_PID_RESERVED_END, PTL_PID_EPHEMERAL_START)
 *                                  well-known pids any process may claim
 *   [PTL_PID_EPHEMERAL_START, PTL_PID_MAX]
 *                                  handed out for PTL_PID_ANY
 */
#define PTL_PID_RESERVED_END	64
#define PTL_PID_EPHEMERAL_START	1024
#define PTL_PID_MAX		65534

#define PTL_IOC_MAGIC		0xB8

/* Common head of every argument struct. */
struct ptl_ioc_head {
	__u32 size;
	__u32 flags;
};

/* PTL_IOC_VERSION: what this kernel speaks (PtlInit). */
struct ptl_ioc_version {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 abi_version;	/* out: PTL_ABI_VERSION */
	__u32 max_interfaces;	/* out: PTL_MAX_INTERFACES */
};

/* Mirror of ptl_ni_limits_t with fixed-width fields. */
struct ptl_ioc_limits {
	__s32 max_mes;
	__s32 max_mds;
	__s32 max_eqs;
	__s32 max_ac_index;
	__s32 max_pt_index;
	__s32 max_md_iovecs;
	__s32 max_me_list;
	__s32 max_getput_md;
};

/* ptl_ioc_ni_init.flags */
#define PTL_NI_INIT_DESIRED	(1U << 0)	/* @desired is meaningful */
#define PTL_NI_INIT_FLAGS_ALL	(PTL_NI_INIT_DESIRED)

/* PTL_IOC_NI_INIT: PtlNIInit. */
struct ptl_ioc_ni_init {
	__u32 size;
	__u32 flags;
	__u32 iface;			/* in: PTL_NALTYPE_LINUX0.. */
	__u32 pid;			/* in: wanted pid or PTL_PID_ANY */
	struct ptl_ioc_limits desired;	/* in, if PTL_NI_INIT_DESIRED */
	struct ptl_ioc_limits actual;	/* out */
	__u32 ni_handle;		/* out */
	__u32 nid;			/* out: this process's id on it */
	__u32 out_pid;			/* out */
	__u32 reserved;			/* must be 0 */
};

/* PTL_IOC_NI_FINI: PtlNIFini. */
struct ptl_ioc_ni_fini {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 ni_handle;
	__u32 reserved;		/* must be 0 */
};

/* PTL_IOC_NI_IDENTITY: PtlGetId, PtlGetUid, PtlGetJid in one call. */
struct ptl_ioc_ni_identity {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 ni_handle;	/* in */
	__u32 nid;		/* out */
	__u32 pid;		/* out */
	__u32 uid;		/* out */
	__u32 jid;		/* out */
	__u32 reserved;		/* must be 0 */
};

#define PTL_IOC_VERSION		_IOWR(PTL_IOC_MAGIC, 0x00, struct ptl_ioc_version)
#define PTL_IOC_NI_INIT		_IOWR(PTL_IOC_MAGIC, 0x01, struct ptl_ioc_ni_init)
#define PTL_IOC_NI_FINI		_IOWR(PTL_IOC_MAGIC, 0x02, struct ptl_ioc_ni_fini)
#define PTL_IOC_NI_IDENTITY	_IOWR(PTL_IOC_MAGIC, 0x03, \
				      struct ptl_ioc_ni_identity)

/* Largest argument struct the kernel will ever read (sanity bound). */
#define PTL_IOC_MAX_ARG_SIZE	4096

#endif /* _UAPI_LINUX_PORTALS_H */
