// SPDX-License-Identifier: GPL-2.0
/*
 * Feature probes of include/ptl/compat.h, never linked into a module.
 *
 * Kbuild compiles this file once per probe, with -DPTL_PROBE_<NAME> and
 * the flags of the kernel being built for (-fsyntax-only -Werror), and
 * writes "#define HAVE_<NAME> 1" into ptl_compat_probed.h for each probe
 * that compiles (headers that moved are found by path, in Kbuild, and
 * defined here too). A probe is named after the newer interface, so HAVE_<NAME>
 * means "this kernel has it". Each section says which kernel change it
 * detects; kernels are tested, never their version numbers.
 */
#if defined(PTL_PROBE_PIN_USER_PAGES_NO_VMAS)
/* 6.5, "mm/gup: remove vmas parameter from pin_user_pages()". */
#include <linux/mm.h>
static inline long ptl_probe(struct page **pages)
{
	return pin_user_pages(0, 1, 0, pages);
}

#elif defined(PTL_PROBE_VM_FLAGS_SET)
/* 6.3, "mm: introduce vma->vm_flags wrapper functions"; vm_flags is const. */
#include <linux/mm.h>
static inline void ptl_probe(struct vm_area_struct *vma)
{
	vm_flags_mod(vma, VM_DONTDUMP, VM_MAYEXEC);
}

#elif defined(PTL_PROBE_GENL_DUMPIT_INFO_INFO)
/* 6.2, "genetlink: use struct genl_info for dumps": info->info.attrs. */
#include <net/genetlink.h>
static inline struct nlattr **ptl_probe(const struct genl_dumpit_info *info)
{
	return info->info.attrs;
}

#elif defined(PTL_PROBE_IO_URING_SQE_CMD)
/* 6.5, "io_uring: Pass whole sqe to commands": ioucmd->sqe, not ->cmd. */
#include <linux/io_uring.h>
#ifdef HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#endif
static inline const void *ptl_probe(struct io_uring_cmd *ioucmd)
{
	return io_uring_sqe_cmd(ioucmd->sqe);
}

#elif defined(PTL_PROBE_BLK_FEATURES)
/*
 * 6.11: the queue flags a driver sets became queue_limits->features
 * (BLK_FEAT_*) and the blk_queue_*() limit setters went away; a driver
 * describes its queue in struct queue_limits and hands it to
 * blk_mq_alloc_disk(), which takes limits since 6.9.
 */
#include <linux/blk-mq.h>
static inline void ptl_probe(struct queue_limits *lim)
{
	lim->features |= BLK_FEAT_STABLE_WRITES;
}

#else
#error "no or unknown PTL_PROBE_* defined"
#endif
