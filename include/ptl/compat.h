/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels the modules build
 * for (Debian 12's 6.1, 6.12 and 6.12 PREEMPT_RT are tested), in one place.
 *
 * Kernels are told apart by what they have, never by their version: Kbuild
 * compiles each probe of compat-probe.c against the headers of the kernel
 * being built for and writes HAVE_<NAME> for those that compile into the
 * generated ptl_compat_probed.h (in the build directory). The code calls
 * the wrappers below, which take the newer interface's shape; Kbuild finds
 * a header that moved by its path. A wrapper goes when the oldest kernel
 * supported has the newer interface.
 */
#ifndef PTL_COMPAT_H
#define PTL_COMPAT_H

#include "ptl_compat_probed.h"

#include <linux/blk-mq.h>
#include <linux/io_uring.h>
#include <linux/mm.h>
#include <net/genetlink.h>

#ifdef HAVE_IO_URING_CMD_H
/* 6.7: struct io_uring_cmd, io_uring_cmd_done(), IO_URING_F_* live here. */
#include <linux/io_uring/cmd.h>
#endif

/* pin_user_pages() lost its (always NULL here) vmas argument in 6.5. */
static inline long ptl_pin_user_pages(unsigned long start,
				      unsigned long nr_pages,
				      unsigned int gup_flags,
				      struct page **pages)
{
#ifdef HAVE_PIN_USER_PAGES_NO_VMAS
	return pin_user_pages(start, nr_pages, gup_flags, pages);
#else
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
#endif
}

/* vma->vm_flags is read-only since 6.3: set and clear through the mm. */
static inline void ptl_vm_flags_mod(struct vm_area_struct *vma,
				    vm_flags_t set, vm_flags_t clear)
{
#ifdef HAVE_VM_FLAGS_SET
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/* The parsed attributes of a generic netlink dump: info->info.attrs in 6.2. */
static inline struct nlattr **ptl_genl_dump_attrs(struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);

#ifdef HAVE_GENL_DUMPIT_INFO_INFO
	return info->info.attrs;
#else
	return info->attrs;
#endif
}

/* A uring_cmd's command area in the SQE: ioucmd->sqe since 6.5. */
static inline const void *ptl_uring_cmd_area(const struct io_uring_cmd *ioucmd)
{
#ifdef HAVE_IO_URING_SQE_CMD
	return io_uring_sqe_cmd(ioucmd->sqe);
#else
	return ioucmd->cmd;
#endif
}

/*
 * What a block driver says about its queue. Since 6.11 this is struct
 * queue_limits with its features, handed to blk_mq_alloc_disk(); before,
 * blk_queue_*() setters and queue flags on the allocated disk's queue.
 * FUA is only meaningful with a write cache (the block layer drops it
 * without one on every kernel), so it is only set with write_cache.
 */
struct ptl_disk_limits {
	unsigned int block_size;	/* logical = physical */
	unsigned int max_hw_sectors;
	unsigned short max_segments;
	unsigned int max_discard_sectors;	/* 0: no discard */
	unsigned int discard_granularity;
	bool write_cache;
	bool fua;
	bool rotational;
	bool stable_writes;
};

static inline struct gendisk *
ptl_blk_mq_alloc_disk(struct blk_mq_tag_set *set,
		      const struct ptl_disk_limits *pl, void *queuedata)
{
#ifdef HAVE_BLK_FEATURES
	struct queue_limits lim = {
		.logical_block_size	= pl->block_size,
		.physical_block_size	= pl->block_size,
		.max_hw_sectors		= pl->max_hw_sectors,
		.max_segments		= pl->max_segments,
	};

	if (pl->max_discard_sectors) {
		lim.max_hw_discard_sectors = pl->max_discard_sectors;
		lim.discard_granularity = pl->discard_granularity;
	}
	if (pl->write_cache)
		lim.features |= BLK_FEAT_WRITE_CACHE;
	if (pl->write_cache && pl->fua)
		lim.features |= BLK_FEAT_FUA;
	if (pl->rotational)
		lim.features |= BLK_FEAT_ROTATIONAL;
	if (pl->stable_writes)
		lim.features |= BLK_FEAT_STABLE_WRITES;
	return blk_mq_alloc_disk(set, &lim, queuedata);
#else
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, pl->block_size);
	blk_queue_physical_block_size(q, pl->block_size);
	blk_queue_max_hw_sectors(q, pl->max_hw_sectors);
	blk_queue_max_segments(q, pl->max_segments);
	blk_queue_write_cache(q, pl->write_cache, pl->write_cache && pl->fua);
	if (pl->max_discard_sectors) {
		blk_queue_max_discard_sectors(q, pl->max_discard_sectors);
		q->limits.discard_granularity = pl->discard_granularity;
	}
	if (pl->stable_writes)
		blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, q);
	if (!pl->rotational)
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	return disk;
#endif
}

#endif /* PTL_COMPAT_H */
