// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring commands on /dev/portals (IORING_OP_URING_CMD): many
 * data-movement calls submitted with one io_uring_enter.
 *
 * Every command runs through the ioctl dispatch (ptl_dev.c) with the same
 * argument checks and handlers, and completes when io_uring issues it: the
 * handler's return value is the CQE's res, as it would be the ioctl's. No
 * command is ever left pending, which is what makes process exit and ring
 * teardown safe on 6.1: io_uring there cannot cancel a pending uring_cmd
 * (IORING_URING_CMD_CANCELABLE is 6.7), so a command that waited (for an
 * event, say) would hold the ring and this file open past the process's
 * death. Waiting for events in a ring is a poll of the descriptor instead
 * (IORING_OP_POLL_ADD), which io_uring cancels itself; the device's poll
 * is level-triggered on unread events (ptl_eq.c).
 *
 * Identity: a command may run in the submitter, in io_uring's SQ thread
 * (IORING_SETUP_SQPOLL) or in an io-wq worker. Everything that decides who
 * the caller is comes from the open file (file->private_data: its NIs, its
 * accounting, its credentials at open), never from current, exactly as for
 * the ioctl; the SQ thread and the workers share the submitter's memory
 * and run with the ring creator's credentials, so the user pointers of
 * PTL_URING_IOCTL and an MD bind's pinning mean what they mean in the
 * submitter. Commands that create or destroy NIs or EQs, set the job id or
 * sleep (PTL_IOC_EQ_WAIT) are refused with EOPNOTSUPP.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/uaccess.h>

#include <ptl/compat.h>

#include "ptl_internal.h"

/* The SQE's command area: 16 bytes, 80 with IORING_SETUP_SQE128. */
#define PTL_URING_CMD_BYTES	16
#define PTL_URING_CMD128_BYTES	80

/* What PTL_URING_IOCTL may carry: data movement and its MEs and MDs. */
static bool ptl_uring_ioctl_allowed(unsigned int cmd)
{
	switch (cmd) {
	case PTL_IOC_DATA:
	case PTL_IOC_ME_ATTACH:
	case PTL_IOC_ME_UNLINK:
	case PTL_IOC_MD_ATTACH:
	case PTL_IOC_MD_UNLINK:
	case PTL_IOC_MD_UPDATE:
	case PTL_IOC_ME_POST:
		return true;
	default:
		return false;
	}
}

static long ptl_uring_ioctl(struct ptl_file *pf, const void *area)
{
	const struct ptl_uring_ioctl *u = area;

	if (u->reserved)
		return -EINVAL;
	if (!ptl_uring_ioctl_allowed(u->cmd))
		return -EOPNOTSUPP;
	return ptl_dev_call_user(pf, u->cmd, u64_to_user_ptr(u->arg));
}

static long ptl_uring_mdref(struct ptl_file *pf, const void *area)
{
	const struct ptl_uring_mdref *u = area;
	void __user *argp = u64_to_user_ptr(u->data);
	struct ptl_ioc_data d;
	u32 usize;
	int err;

	if (get_user(usize, (u32 __user *)argp))
		return -EFAULT;
	if (usize < sizeof(struct ptl_ioc_head) || usize > PTL_IOC_MAX_ARG_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(&d, sizeof(d), argp, usize);
	if (err)
		return err;
	if (get_user(d.md_handle, (u32 __user *)u64_to_user_ptr(u->md_handle)))
		return -EFAULT;
	d.size = sizeof(d);
	return ptl_dev_call_inline(pf, PTL_IOC_DATA, &d, sizeof(d));
}

static long ptl_uring_issue(struct io_uring_cmd *ioucmd,
			    unsigned int issue_flags)
{
	struct ptl_file *pf = ioucmd->file->private_data;
	u8 area[PTL_URING_CMD128_BYTES];
	u32 len = issue_flags & IO_URING_F_SQE128 ? PTL_URING_CMD128_BYTES :
						    PTL_URING_CMD_BYTES;

	/* The ring is shared with the process: read it once. */
	memcpy(area, ptl_uring_cmd_area(ioucmd), len);
	switch (ioucmd->cmd_op) {
	case PTL_URING_DATA:
		return ptl_dev_call_inline(pf, PTL_IOC_DATA, area, len);
	case PTL_URING_IOCTL:
		return ptl_uring_ioctl(pf, area);
	case PTL_URING_DATA_MDREF:
		return ptl_uring_mdref(pf, area);
	default:
		return -ENOTTY;
	}
}

/**
 * ptl_uring_cmd - file_operations.uring_cmd of /dev/portals
 * @ioucmd: the command; ->cmd points into the submission ring
 * @issue_flags: IO_URING_F_*
 *
 * Every command completes here, with the CQE's res a Portals code or a
 * negative errno. PTL_OK and errnos are returned. io_uring takes any other
 * non-zero return for a failure (io_queue_async() on 6.1) and cancels the
 * entries linked behind it, whereas a Portals code is the call's answer,
 * not a failure of the entry: those complete through io_uring_cmd_done(),
 * as ublk completes a command it refuses, so that a bind that fails and
 * the put linked behind it answer as the two plain calls would.
 */
int ptl_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	long rc = ptl_uring_issue(ioucmd, issue_flags);

	if (rc <= 0)
		return rc;
	io_uring_cmd_done(ioucmd, rc, 0, issue_flags);
	return -EIOCBQUEUED;
}
