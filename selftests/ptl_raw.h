/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers over the raw ioctl ABI of /dev/portals, for tests that must see
 * exactly what the kernel answers (no library in between): open, NI, EQ
 * with its mapped ring, ME, MD, data calls and identity.
 */
#ifndef PTL_RAW_H
#define PTL_RAW_H

#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/portals.h>
#include <p3api/eq_ring.h>
#include <p3/nal_types.h>

struct eq {
	uint32_t handle;
	uint32_t nslots;
	ptl_event_t *ring;
	struct ptl_eq_ctl *ctl;
	ptl_seq_t expected;
};

static inline int dev_open(void)
{
	return open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

static inline int ni_init(int fd, uint32_t pid, uint32_t *ni,
			  uint32_t *out_pid)
{
	struct ptl_ioc_ni_init a = { .size = sizeof(a),
				     .iface = PTL_NALTYPE_LINUX0, .pid = pid };
	int rc = ioctl(fd, PTL_IOC_NI_INIT, &a);

	*ni = a.ni_handle;
	if (out_pid)
		*out_pid = a.out_pid;
	return rc;
}

static inline int eq_alloc(int fd, uint32_t ni, uint64_t count,
			   struct eq *eq)
{
	struct ptl_ioc_eq_alloc a = { .size = sizeof(a), .ni_handle = ni,
				      .count = count };
	int rc = ioctl(fd, PTL_IOC_EQ_ALLOC, &a);

	if (rc)
		return rc;
	eq->handle = a.eq_handle;
	eq->nslots = a.nslots;
	eq->ring = mmap(NULL, a.ring_bytes, PROT_READ, MAP_SHARED, fd,
			a.ring_offset);
	eq->ctl = mmap(NULL, a.ctl_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, a.ctl_offset);
	if (eq->ring == MAP_FAILED || eq->ctl == MAP_FAILED)
		return -100;
	eq->expected = ptl_eq_ring_first_seq(eq->nslots);
	return 0;
}

static inline int eq_get(struct eq *eq, ptl_event_t *ev)
{
	int rc = ptl_eq_ring_get(eq->ring, eq->nslots, &eq->expected, ev);

	eq->ctl->consumer_seq = eq->expected;
	return rc;
}

static inline int me_attach(int fd, uint32_t ni, uint32_t pt,
			    uint64_t bits, uint32_t *me)
{
	struct ptl_ioc_me_attach a = {
		.size = sizeof(a), .handle = ni, .pt_index = pt,
		.match_nid = PTL_NID_ANY, .match_pid = PTL_PID_ANY,
		.match_bits = bits, .unlink = PTL_RETAIN,
		.position = PTL_INS_AFTER,
	};
	int rc = ioctl(fd, PTL_IOC_ME_ATTACH, &a);

	*me = a.me_handle;
	return rc;
}

/* Attach to @handle (an ME), or bind to it (an NI) with @bind. */
static inline int md_make(int fd, uint32_t handle, bool bind, void *start,
			  uint64_t len, uint32_t options, uint32_t eq,
			  uint32_t *md)
{
	struct ptl_ioc_md_attach a = {
		.size = sizeof(a), .flags = bind ? PTL_MD_ATTACH_BIND : 0,
		.handle = handle, .unlink = PTL_RETAIN,
		.md = { .start = (uintptr_t)start, .length = len,
			.threshold = PTL_MD_THRESH_INF, .options = options,
			.eq_handle = eq },
	};
	int rc = ioctl(fd, PTL_IOC_MD_ATTACH, &a);

	*md = a.md_handle;
	return rc;
}

static inline int handle_op(int fd, unsigned long cmd, uint32_t h)
{
	struct ptl_ioc_handle a = { .size = sizeof(a), .handle = h };

	return ioctl(fd, cmd, &a);
}

static inline int data_op(int fd, uint32_t op, uint32_t md,
			  uint32_t put_md, uint32_t ack, uint32_t nid,
			  uint32_t pid, uint32_t pt, uint64_t bits)
{
	struct ptl_ioc_data a = {
		.size = sizeof(a), .op = op, .md_handle = md,
		.put_md_handle = put_md, .ack_req = ack, .target_nid = nid,
		.target_pid = pid, .pt_index = pt, .match_bits = bits,
		.hdr_data = 0x1234,
	};

	return ioctl(fd, PTL_IOC_DATA, &a);
}

static inline uint32_t my_nid(int fd, uint32_t ni)
{
	struct ptl_ioc_ni_identity a = { .size = sizeof(a), .ni_handle = ni };

	ioctl(fd, PTL_IOC_NI_IDENTITY, &a);
	return a.nid;
}

#endif /* PTL_RAW_H */
