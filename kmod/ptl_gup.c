// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning a process's pages for its MDs (GUP), and charging them.
 *
 * Policy. Every MD's memory is pinned (or found pinned in the pin
 * cache) at PtlMDAttach/PtlMDBind/PtlMDUpdate
 * with FOLL_LONGTERM, so incoming data can land while the owner is not
 * running, and always with FOLL_WRITE first, even where no data will land:
 * a write pin breaks copy-on-write, so the pinned pages are the ones the
 * process reads and writes. (A read-only pin of untouched private memory
 * pins the shared zero page, or a page a later fork() write-protects; the
 * process's next write then goes to a fresh copy the MD never sees, and
 * gets are served stale data.) Only where the memory cannot be pinned for
 * writing is it pinned read-only instead:
 *   - never for an MD with PTL_MD_OP_PUT (puts and getputs write into it):
 *     PTL_MD_ILLEGAL;
 *   - any other MD may serve gets and send puts from read-only data; it
 *     can also receive the REPLY of a PtlGet or PtlGetPut (every MD can,
 *     attached or bound: the op bits govern incoming requests only), and a
 *     reply into a read-only one ends with ni_fail_type PTL_NI_FAIL
 *     instead of writing.
 * mem->writable means "pinned for writing": data may land. Whether a
 * request may land is the core's business (the MD's op bits).
 *
 * Some mappings are never pinned, for reading or writing:
 *   - device mappings (VM_IO, VM_PFNMAP, VM_MIXEDMAP): their pages belong
 *     to a driver, which may free or reuse them whatever the mapping says
 *     (the EQ ring and control pages of /dev/portals itself are such a
 *     mapping);
 *   - for writing, a shared file mapping other than shmem or hugetlbfs (a
 *     MAP_SHARED file on ext4, xfs, ...): the filesystem does not expect
 *     its pages to be dirtied long after writeback cleaned them (the RDMA
 *     class of bug: WARN_ON_ONCE(!folio_buffers) in ext4, lost data).
 *     Upstream GUP refuses such pins itself since 6.5; 6.1 does not.
 * So the VMAs are checked under mmap_read_lock, and the pages pinned,
 * before the lock is dropped. Shmem is recognised by its address space
 * operations (shmem_file()), not by the superblock magic, which devtmpfs
 * shares with tmpfs. Private file mappings are fine: the write pin breaks
 * COW into anonymous pages and the file is never written.
 *
 * A region that cannot be pinned is PTL_MD_ILLEGAL; an unreadable iovec
 * array is PTL_SEGV. Zero-length segments pin nothing (contract 15).
 *
 * Accounting follows RDMA's ib_umem: the pages of each pinned range are
 * charged once to the mm's pinned_vm (VmPin in /proc/PID/status), however
 * many MDs share them (the pin cache, ptl_pincache.c, pins ranges, not
 * MDs), and refused past RLIMIT_MEMLOCK unless the caller has
 * CAP_IPC_LOCK. The mm is grabbed so the charge can be returned whenever
 * the range goes.
 *
 * Nothing here knows of MDs or the cache: the pin cache calls in, never
 * the other way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>

#include <ptl/compat.h>

#include "ptl_internal.h"

/* Pages asked of pin_user_pages_fast() at once. */
#define PTL_PIN_BATCH		(1U << 16)

/*
 * Charges @npages to @mm's pinned_vm (VmPin), refused past RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK. The pin cache calls it (ptl_pincache_charge(),
 * which first unpins what no MD uses), for its ranges and for EQ rings.
 */
bool ptl_gup_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned;

	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return false;
	}
	return true;
}

void ptl_gup_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}


/*
 * May the pages of @vma be pinned long-term (for writing if @write)?
 * -ENODEV never (a device mapping), -EOPNOTSUPP not for writing (a shared
 * file mapping outside shmem and hugetlbfs), else 0. See the top.
 */
static int ptl_vma_pin_check(struct vm_area_struct *vma, bool write)
{
	if (vma->vm_flags & (VM_IO | VM_PFNMAP | VM_MIXEDMAP))
		return -ENODEV;
	if (!write || !(vma->vm_flags & VM_SHARED) ||
	    vma_is_anonymous(vma) || is_vm_hugetlb_page(vma))
		return 0;
	/* tmpfs, memfd, SysV shm and MAP_SHARED|MAP_ANONYMOUS are shmem. */
	return shmem_file(vma->vm_file) ? 0 : -EOPNOTSUPP;
}

/*
 * Pins [addr, addr + n pages) after checking the VMAs it covers, in one
 * mmap_read_lock section so the check holds for the pages pinned.
 * Returns what pin_user_pages() does, or the error of
 * ptl_vma_pin_check(). A hole ends the check: GUP stops there.
 */
static long ptl_pin_locked(unsigned long addr, unsigned long n,
			   unsigned int gup, struct page **pages)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = addr + n * PAGE_SIZE, at;
	struct vm_area_struct *vma;
	long got = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	for (at = addr; at < end; at = vma->vm_end) {
		vma = find_vma(mm, at);
		if (!vma || vma->vm_start > at)
			break;
		got = ptl_vma_pin_check(vma, gup & FOLL_WRITE);
		if (got)
			break;
	}
	if (!got)
		got = ptl_pin_user_pages(addr, n, gup, pages);
	mmap_read_unlock(mm);
	return got;
}

static int ptl_pin_range(unsigned long addr, unsigned long npages,
			 unsigned int gup, struct page **pages)
{
	unsigned long done = 0;

	while (done < npages) {
		unsigned long n = min_t(unsigned long, npages - done,
					PTL_PIN_BATCH);
		long got;

		got = ptl_pin_locked(addr + done * PAGE_SIZE, n, gup,
				     pages + done);
		if (got <= 0) {
			unpin_user_pages(pages, done);
			return got ? got : -EFAULT;
		}
		done += got;
		if (fatal_signal_pending(current)) {
			unpin_user_pages(pages, done);
			return -EINTR;
		}
	}
	return 0;
}

/**
 * ptl_gup_pin_range - pin pages of the calling process by the policy above
 * @addr: page-aligned user address
 * @npages: pages from there
 * @must_write: the MD accepts puts, so a read-only pin will not do
 * @pages: filled with the pinned pages
 * @writable: set to whether they were pinned for writing
 *
 * For writing where possible (see the top), else read-only.
 * Called by the pin cache for a new entry. Return: 0, or a negative errno
 * with nothing pinned.
 */
int ptl_gup_pin_range(unsigned long addr, unsigned long npages,
		      bool must_write, struct page **pages, bool *writable)
{
	int err = ptl_pin_range(addr, npages, FOLL_LONGTERM | FOLL_WRITE,
				pages);

	*writable = !err;
	/* Read-only pages, or a shared file mapping. */
	if ((err == -EFAULT || err == -EOPNOTSUPP) && !must_write)
		err = ptl_pin_range(addr, npages, FOLL_LONGTERM, pages);
	return err;
}
