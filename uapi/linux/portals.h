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

/* PTL_IOC_VERSION: what this kernel speaks, and this open file's job. */
struct ptl_ioc_version {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 abi_version;	/* out: PTL_ABI_VERSION */
	__u32 max_interfaces;	/* out: PTL_MAX_INTERFACES */
	__u32 jid;		/* out: set by PTL_IOC_SET_JID, else PTL_JID_ANY */
	__u32 reserved;		/* must be 0 */
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

/* PTL_IOC_NI_STATUS: PtlNIStatus. */
struct ptl_ioc_ni_status {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 ni_handle;
	__u32 reg;		/* ptl_sr_index_t */
	__u64 value;		/* out */
};

/* PTL_IOC_NI_DIST: PtlNIDist. */
struct ptl_ioc_ni_dist {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 ni_handle;
	__u32 nid;		/* the process asked about */
	__u32 pid;
	__u32 reserved;		/* must be 0 */
	__u64 distance;		/* out */
};

/* PTL_IOC_HANDLE_NI: PtlNIHandle. */
struct ptl_ioc_handle_ni {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 handle;		/* any object handle */
	__u32 ni_handle;	/* out */
};

/* ptl_ioc_me_attach.flags */
#define PTL_ME_ATTACH_ANY	(1U << 0)	/* PtlMEAttachAny: pick pt_index */
#define PTL_ME_INSERT		(1U << 1)	/* PtlMEInsert: @handle is base ME */
#define PTL_ME_ATTACH_FLAGS_ALL	(PTL_ME_ATTACH_ANY | PTL_ME_INSERT)

/*
 * PTL_IOC_ME_ATTACH: PtlMEAttach, PtlMEAttachAny (flag ANY; @pt_index is
 * an output) and PtlMEInsert (flag INSERT; @handle is the base ME).
 */
struct ptl_ioc_me_attach {
	__u32 size;
	__u32 flags;
	__u32 handle;		/* NI handle, or base ME with PTL_ME_INSERT */
	__u32 pt_index;		/* in; out with PTL_ME_ATTACH_ANY */
	__u32 match_nid;
	__u32 match_pid;
	__u64 match_bits;
	__u64 ignore_bits;
	__u32 unlink;		/* ptl_unlink_t */
	__u32 position;		/* ptl_ins_pos_t (ignored by ATTACH_ANY) */
	__u32 me_handle;	/* out */
	__u32 reserved;		/* must be 0 */
};

/* PTL_IOC_ME_UNLINK, PTL_IOC_MD_UNLINK, PTL_IOC_EQ_FREE: one handle. */
struct ptl_ioc_handle {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 handle;
	__u32 reserved;		/* must be 0 */
};

/*
 * A memory descriptor as ptl_md_t says, with fixed widths. With
 * PTL_MD_IOVEC, @start points at @length ptl_md_iovec_t entries.
 */
struct ptl_ioc_md {
	__u64 start;
	__u64 length;
	__s32 threshold;
	__u32 options;
	__u64 max_size;
	__u64 user_ptr;
	__u32 eq_handle;
	__u32 reserved;		/* must be 0 */
};

/* ptl_ioc_md_attach.flags */
#define PTL_MD_ATTACH_BIND	(1U << 0)	/* PtlMDBind: @handle is an NI */
#define PTL_MD_ATTACH_FLAGS_ALL	(PTL_MD_ATTACH_BIND)

/*
 * PTL_IOC_MD_ATTACH: PtlMDAttach (@handle is the ME) and PtlMDBind (flag
 * BIND; @handle is the NI). The region is validated and pinned here:
 * PTL_SEGV when @md.start's iovec array is unreadable, PTL_MD_ILLEGAL when
 * the region cannot be pinned (writable where the MD accepts puts/replies)
 * or exceeds RLIMIT_MEMLOCK.
 */
struct ptl_ioc_md_attach {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 unlink;		/* ptl_unlink_t */
	struct ptl_ioc_md md;
	__u32 md_handle;	/* out */
	__u32 reserved;		/* must be 0 */
};

/* ptl_ioc_md_update.flags */
#define PTL_MD_UPDATE_OLD	(1U << 0)	/* fill @old_md (and @old_iov) */
#define PTL_MD_UPDATE_NEW	(1U << 1)	/* @new_md is meaningful */
#define PTL_MD_UPDATE_FLAGS_ALL	(PTL_MD_UPDATE_OLD | PTL_MD_UPDATE_NEW)

/*
 * PTL_IOC_MD_UPDATE: PtlMDUpdate. The kernel cannot see how far the
 * process has read an EQ (its ring is mapped read-only), so the library
 * passes the sequence it expects next on @eq_handle as @eq_consumer_seq.
 * For an iovec MD, up to @old_iov_cap entries are written to @old_iov and
 * @old_nsegs says how many the MD has.
 */
struct ptl_ioc_md_update {
	__u32 size;
	__u32 flags;
	__u32 md_handle;
	__u32 eq_handle;
	__u32 eq_consumer_seq;
	__u32 old_iov_cap;
	__u64 old_iov;		/* ptl_md_iovec_t array, user pointer */
	struct ptl_ioc_md old_md;	/* out */
	struct ptl_ioc_md new_md;	/* in */
	__u32 old_nsegs;	/* out */
	__u32 reserved;		/* must be 0 */
};

/*
 * PTL_IOC_ME_POST: PtlMEMDPost (a Linux extension, <p3nal_linux.h>): an ME
 * inserted beside the ME @base and an MD attached to it, in one step, and
 * only if @eq_handle holds nothing past @eq_consumer_seq and no END is
 * promised on it (PtlMDUpdate's test); otherwise PTL_MD_NO_UPDATE and
 * nothing is created. PTL_EQ_NONE: unconditional. The region is pinned as
 * for PTL_IOC_MD_ATTACH.
 */
struct ptl_ioc_me_post {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 base;		/* ME handle */
	__u32 match_nid;
	__u32 match_pid;
	__u32 me_unlink;	/* ptl_unlink_t */
	__u64 match_bits;
	__u64 ignore_bits;
	__u32 position;		/* ptl_ins_pos_t */
	__u32 md_unlink;	/* ptl_unlink_t */
	struct ptl_ioc_md md;
	__u32 eq_handle;
	__u32 eq_consumer_seq;
	__u32 me_handle;	/* out */
	__u32 md_handle;	/* out */
};

/*
 * The consumer side of an EQ, in a page of its own that the process maps
 * read-write. The library stores the sequence it expects next after every
 * dequeue; the kernel reads it only to decide whether poll() reports the
 * device readable, never to decide what to write, so a process that lies
 * here only confuses its own poll().
 */
struct ptl_eq_ctl {
	__u32 consumer_seq;
	__u32 reserved;
};

/*
 * PTL_IOC_EQ_ALLOC: PtlEQAlloc. The ring lives in kernel memory; map it
 * with mmap(NULL, @ring_bytes, PROT_READ, MAP_SHARED, fd, @ring_offset)
 * (writable mappings are refused) and the control page with
 * mmap(NULL, @ctl_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
 * @ctl_offset). The ring holds @nslots ptl_event_t records; see
 * <p3api/eq_ring.h> for the reading protocol. Both mappings stay valid
 * (and are never written again by the kernel) after PtlEQFree until
 * munmap. @count 0 returns PTL_OK with @eq_handle PTL_EQ_NONE and no
 * mapping. The EQ handler runs in the library, never in the kernel.
 */
struct ptl_ioc_eq_alloc {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 ni_handle;
	__u32 eq_handle;	/* out */
	__u64 count;
	__u64 ring_offset;	/* out: mmap offset of the ring */
	__u64 ring_bytes;	/* out: page-rounded */
	__u64 ctl_offset;	/* out: mmap offset of struct ptl_eq_ctl */
	__u64 ctl_bytes;	/* out: one page */
	__u32 nslots;		/* out */
	__u32 reserved;		/* must be 0 */
};

/* One EQ a waiter watches, and the sequence its reader expects next. */
struct ptl_ioc_eq_watch {
	__u32 eq_handle;
	__u32 expected_seq;
};

/*
 * PTL_IOC_EQ_WAIT: sleep until one of @count watched EQs (all of one NI)
 * holds the event its reader expects, or was lapped, or @timeout_ms
 * (PTL_TIME_FOREVER: no limit) passes. Returns PTL_OK with @which set,
 * PTL_EQ_EMPTY on timeout, PTL_EQ_INVALID with @which naming the bad
 * entry. A signal ends the wait with -EINTR; the library retries with the
 * time left.
 */
struct ptl_ioc_eq_wait {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u64 watches;		/* struct ptl_ioc_eq_watch array, user pointer */
	__u32 count;
	__u32 timeout_ms;
	__s32 which;		/* out */
	__u32 reserved;		/* must be 0 */
};

/* PTL_IOC_AC_ENTRY: PtlACEntry. */
struct ptl_ioc_ac_entry {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 ni_handle;
	__u32 ac_index;
	__u32 match_nid;
	__u32 match_pid;
	__u32 uid;
	__u32 jid;
	__u32 pt_index;
	__u32 reserved;		/* must be 0 */
};

/* ptl_ioc_data.op */
#define PTL_DATA_PUT		0	/* PtlPut / PtlPutRegion */
#define PTL_DATA_GET		1	/* PtlGet / PtlGetRegion */
#define PTL_DATA_GETPUT		2	/* PtlGetPut */

/* ptl_ioc_data.flags */
#define PTL_DATA_REGION		(1U << 0)	/* honour local_offset/length */
#define PTL_DATA_FLAGS_ALL	(PTL_DATA_REGION)

/*
 * PTL_IOC_DATA: every data-movement call. For PTL_DATA_GETPUT, @md_handle
 * is the get MD and @put_md_handle the put MD. PTL_OK means initiated.
 */
struct ptl_ioc_data {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 md_handle;
	__u32 put_md_handle;
	__u32 ack_req;		/* ptl_ack_req_t */
	__u64 local_offset;
	__u64 length;
	__u32 target_nid;
	__u32 target_pid;
	__u32 pt_index;
	__u32 ac_index;
	__u64 match_bits;
	__u64 remote_offset;
	__u64 hdr_data;
};

/*
 * PTL_IOC_SET_JID: a trusted launcher (CAP_NET_ADMIN, else -EPERM) sets
 * the job id of every NI this open file will create; refused with -EBUSY
 * once an NI exists. Applications never set their own job id.
 */
struct ptl_ioc_set_jid {
	__u32 size;
	__u32 flags;		/* must be 0 */
	__u32 jid;
	__u32 reserved;		/* must be 0 */
};

#define PTL_IOC_VERSION		_IOWR(PTL_IOC_MAGIC, 0x00, struct ptl_ioc_version)
#define PTL_IOC_NI_INIT		_IOWR(PTL_IOC_MAGIC, 0x01, struct ptl_ioc_ni_init)
#define PTL_IOC_NI_FINI		_IOWR(PTL_IOC_MAGIC, 0x02, struct ptl_ioc_ni_fini)
#define PTL_IOC_NI_IDENTITY	_IOWR(PTL_IOC_MAGIC, 0x03, \
				      struct ptl_ioc_ni_identity)
#define PTL_IOC_NI_STATUS	_IOWR(PTL_IOC_MAGIC, 0x04, \
				      struct ptl_ioc_ni_status)
#define PTL_IOC_NI_DIST		_IOWR(PTL_IOC_MAGIC, 0x05, struct ptl_ioc_ni_dist)
#define PTL_IOC_HANDLE_NI	_IOWR(PTL_IOC_MAGIC, 0x06, \
				      struct ptl_ioc_handle_ni)
#define PTL_IOC_ME_ATTACH	_IOWR(PTL_IOC_MAGIC, 0x07, \
				      struct ptl_ioc_me_attach)
#define PTL_IOC_ME_UNLINK	_IOWR(PTL_IOC_MAGIC, 0x08, struct ptl_ioc_handle)
#define PTL_IOC_MD_ATTACH	_IOWR(PTL_IOC_MAGIC, 0x09, \
				      struct ptl_ioc_md_attach)
#define PTL_IOC_MD_UNLINK	_IOWR(PTL_IOC_MAGIC, 0x0a, struct ptl_ioc_handle)
#define PTL_IOC_MD_UPDATE	_IOWR(PTL_IOC_MAGIC, 0x0b, \
				      struct ptl_ioc_md_update)
#define PTL_IOC_EQ_ALLOC	_IOWR(PTL_IOC_MAGIC, 0x0c, \
				      struct ptl_ioc_eq_alloc)
#define PTL_IOC_EQ_FREE		_IOWR(PTL_IOC_MAGIC, 0x0d, struct ptl_ioc_handle)
#define PTL_IOC_EQ_WAIT		_IOWR(PTL_IOC_MAGIC, 0x0e, struct ptl_ioc_eq_wait)
#define PTL_IOC_AC_ENTRY	_IOWR(PTL_IOC_MAGIC, 0x0f, \
				      struct ptl_ioc_ac_entry)
#define PTL_IOC_DATA		_IOWR(PTL_IOC_MAGIC, 0x10, struct ptl_ioc_data)
#define PTL_IOC_SET_JID		_IOWR(PTL_IOC_MAGIC, 0x11, struct ptl_ioc_set_jid)
#define PTL_IOC_ME_POST		_IOWR(PTL_IOC_MAGIC, 0x12, struct ptl_ioc_me_post)

/*
 * io_uring commands: IORING_OP_URING_CMD on a /dev/portals descriptor, the
 * command in sqe->cmd_op, its argument in the SQE's command area (16 bytes,
 * or 80 with IORING_SETUP_SQE128). Each command runs when io_uring issues
 * it, in the submitter's context (or io_uring's SQ thread or worker, for the
 * same process), with the identity of the open file, as its ioctl would;
 * cqe->res is what the ioctl would return: a Portals code (>= 0; PTL_OK
 * means initiated) or a negative errno for an ABI-level failure (an unknown
 * command, a bad size or flag, an unreadable struct, EOPNOTSUPP for a
 * command that cannot go through io_uring). An entry that fails does not
 * stop the others. Linked entries (IOSQE_IO_LINK) go on after a Portals
 * code other than PTL_OK; a negative errno cancels the rest of the link.
 *
 * PTL_URING_DATA: the command area is a struct ptl_ioc_data (needs
 *   IORING_SETUP_SQE128: the struct is 80 bytes); no user memory is read.
 * PTL_URING_IOCTL: struct ptl_uring_ioctl, which fits a 64-byte SQE: one
 *   of PTL_IOC_DATA, PTL_IOC_ME_ATTACH, PTL_IOC_ME_UNLINK, PTL_IOC_MD_ATTACH
 *   (so also PtlMDBind), PTL_IOC_MD_UNLINK, PTL_IOC_MD_UPDATE with its
 *   struct in user memory, exactly as the ioctl (outputs copied back).
 * PTL_URING_DATA_MDREF: struct ptl_uring_mdref: a PTL_IOC_DATA struct in
 *   user memory whose @md_handle is read, when the entry runs, from the
 *   __u32 that @md_handle points at. Linked (IOSQE_IO_LINK) behind a
 *   PTL_URING_IOCTL bind and pointed at that bind's
 *   ptl_ioc_md_attach.md_handle, it sends from the MD just bound.
 *
 * To wait for events in a ring, poll the descriptor (IORING_OP_POLL_ADD,
 * POLLIN): it is readable while some EQ of the file holds events its
 * reader has not taken, as for poll(2).
 */
struct ptl_uring_ioctl {
	__u32 cmd;		/* PTL_IOC_* */
	__u32 reserved;		/* must be 0 */
	__u64 arg;		/* its argument struct, user pointer */
};

struct ptl_uring_mdref {
	__u64 data;		/* struct ptl_ioc_data, user pointer */
	__u64 md_handle;	/* __u32 MD handle, user pointer */
};

#define PTL_URING_DATA		_IOW(PTL_IOC_MAGIC, 0x40, struct ptl_ioc_data)
#define PTL_URING_IOCTL		_IOW(PTL_IOC_MAGIC, 0x41, \
				     struct ptl_uring_ioctl)
#define PTL_URING_DATA_MDREF	_IOW(PTL_IOC_MAGIC, 0x42, \
				     struct ptl_uring_mdref)

/* Most EQ slots one ring may have (2^20 events, 144 MiB). */
#define PTL_EQ_MAX_SLOTS	(1U << 20)

/* Largest argument struct the kernel will ever read (sanity bound). */
#define PTL_IOC_MAX_ARG_SIZE	4096

#endif /* _UAPI_LINUX_PORTALS_H */
