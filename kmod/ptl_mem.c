// SPDX-License-Identifier: GPL-2.0
/*
 * MD memory: validation, pinning, RLIMIT_MEMLOCK accounting, deferred
 * unpinning, and the copies of the data path.
 *
 * Pinning policy. Every MD's memory is pinned (or found pinned in the pin
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
 * The pin cache (ptl_pincache.c). Pages are not pinned per MD but per
 * range of the process, by its pin cache: an MD segment over pages that
 * some range already pins (another MD's, or one an earlier MD left
 * behind) takes a reference on that range instead of pinning; a range no
 * MD uses stays pinned, up to the pincache_max_pages budget, for the next
 * MD. Every cached range has an mmu_interval_notifier: when the process
 * unmaps, remaps (mremap, mmap MAP_FIXED over), fork()s (COW), mprotects
 * or madvise(DONTNEED)s any of it, no new MD uses it again; a new MD over
 * that address pins what the process has there now.
 *
 * An MD that exists keeps the pages it was built on, as an RDMA memory
 * region without on-demand paging does: if the process unmaps or remaps
 * the memory under a live MD, data put into the MD lands in the old
 * pages and gets and puts from it send the old pages' contents, none of
 * which the process can see any more (after a fork, the pinned pages stay
 * the parent's: the kernel copies them for the child at fork time). The
 * old pages stay pinned, and charged, until the MD is unlinked or updated.
 * PtlMDUpdate with a new region, or unlink and a new MD, is how a program
 * points Portals at its new memory.
 *
 * Accounting follows RDMA's ib_umem: the pages of each pinned range are
 * charged once to the mm's pinned_vm (VmPin in /proc/PID/status), however
 * many MDs share them, and refused past RLIMIT_MEMLOCK unless the caller
 * has CAP_IPC_LOCK. Ranges the cache keeps with no MD still count; a pin
 * (or an EQ ring) that would pass the limit first unpins them, oldest
 * first (ptl_mem_charge()). The mm is grabbed so the charge can be
 * returned whenever the range goes. The bookkeeping of an MD (this file's
 * struct ptl_mem, plus a page pointer per page, as before the cache) is
 * charged to the user's max_user_kmem (ptl_user.c) even when it pins
 * nothing, and allocated with __GFP_ACCOUNT for the memory cgroup. Both
 * charges come before any allocation, so a user at a limit cannot make
 * the kernel allocate.
 *
 * Release. The core drops an MD's memory through the md_release hook with
 * its NI spinlock held (possibly in softirq). The hook hands the pages
 * back to the pin cache right there (a spinlock, no sleep); ranges that
 * must be unpinned (stale, over the budget, or the process has no NI
 * left) go to the cache's work item, since unpinning may sleep. Only an
 * MD holding the last reference on its user's accounting goes whole to
 * this file's work item. ptl_mem_flush() waits for both; unlink, update,
 * NI teardown, file release and module exit call it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/net.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <ptl/compat.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

/* Pages asked of pin_user_pages_fast() at once. */
#define PTL_PIN_BATCH		(1U << 16)
/* Pages copied between two cond_resched() calls. */
#define PTL_COPY_RESCHED	16

static LLIST_HEAD(ptl_unpin_list);
/* Memory on the list or being released by the work: ptl_mem_flush(). */
static atomic_t ptl_unpin_pending = ATOMIC_INIT(0);
static void ptl_unpin_work_fn(struct work_struct *work);
static DECLARE_WORK(ptl_unpin_work, ptl_unpin_work_fn);

/* ---- validation ---- */

/* Pages spanned by [addr, addr + len); 0 for an empty or bad range. */
static unsigned long ptl_seg_pages(u64 addr, u64 len)
{
	return (PAGE_ALIGN(addr + len) - (addr & PAGE_MASK)) >> PAGE_SHIFT;
}

static bool ptl_seg_ok(const struct ptlc_seg *seg)
{
	if (!seg->len)
		return true;
	return seg->addr + seg->len > seg->addr &&
	       seg->addr + seg->len <= TASK_SIZE;
}

/* Copies the user's ptl_md_iovec_t array in as core segments. */
static int ptl_iovec_copy_in(struct ptl_ni *ni, const struct ptl_ioc_md *umd,
			     struct ptlc_seg **out)
{
	ptl_ni_limits_t lim;
	struct ptlc_seg *segs;

	BUILD_BUG_ON(sizeof(ptl_md_iovec_t) != sizeof(struct ptlc_seg));
	ptlc_ni_limits(ni->core, &lim);
	if (umd->length > (u64)lim.max_md_iovecs)
		return PTL_MD_ILLEGAL;
	*out = NULL;
	if (!umd->length)
		return PTL_OK;
	segs = kvmalloc_array(umd->length, sizeof(*segs), GFP_KERNEL_ACCOUNT);
	if (!segs)
		return PTL_NO_SPACE;
	if (copy_from_user(segs, u64_to_user_ptr(umd->start),
			   umd->length * sizeof(*segs))) {
		kvfree(segs);
		return PTL_SEGV;
	}
	*out = segs;
	return PTL_OK;
}

/* ---- accounting ---- */

/*
 * Charges @npages to @mm's pinned_vm (VmPin), refused past RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK. Also used for EQ rings (ptl_eq.c).
 */
static bool ptl_mem_charge_once(struct mm_struct *mm, unsigned long npages)
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

/*
 * Past the limit, the pin cache's entries no MD uses (which still count
 * in pinned_vm) are unpinned, oldest first, before the charge is refused.
 * Process context, no lock held.
 */
bool ptl_mem_charge(struct mm_struct *mm, unsigned long npages)
{
	while (!ptl_mem_charge_once(mm, npages))
		if (mm != current->mm || !ptl_pincache_evict_one(mm))
			return false;
	return true;
}

void ptl_mem_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}

/* ---- pinning ---- */

/* Pages, and bytes of bookkeeping, of the MD over @segs. */
static unsigned long ptl_mem_npages(const struct ptlc_seg *segs,
				    unsigned int nsegs)
{
	unsigned long total = 0;
	unsigned int i;

	for (i = 0; i < nsegs; i++)
		if (segs[i].len)
			total += ptl_seg_pages(segs[i].addr, segs[i].len);
	return total;
}

static size_t ptl_mem_kmem(unsigned int nsegs, unsigned long npages)
{
	struct ptl_mem *mem;

	return struct_size(mem, segs, nsegs) +
	       npages * sizeof(*mem->pages);
}

/*
 * The bookkeeping of an MD over @segs; @with_pages: with a page array of
 * its own, still empty (kernel memory, ptl_kmem.c, where a segment's
 * address is a kernel address or an offset from its first page), else the
 * segments will point into pin cache entries.
 */
static struct ptl_mem *ptl_mem_layout(const struct ptlc_seg *segs,
				      unsigned int nsegs, bool with_pages)
{
	struct ptl_mem *mem;
	unsigned long total = 0;
	unsigned int i;

	mem = kzalloc(struct_size(mem, segs, nsegs), GFP_KERNEL_ACCOUNT);
	if (!mem)
		return NULL;
	mem->nsegs = nsegs;
	for (i = 0; i < nsegs; i++) {
		unsigned long n = segs[i].len ?
			ptl_seg_pages(segs[i].addr, segs[i].len) : 0;

		mem->segs[i].first = total;
		mem->segs[i].npages = n;
		mem->segs[i].page_off = segs[i].addr & ~PAGE_MASK;
		total += n;
	}
	mem->npages = total;
	if (!total || !with_pages)
		return mem;
	mem->pages = kvmalloc_array(total, sizeof(*mem->pages),
				    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!mem->pages) {
		kfree(mem);
		return NULL;
	}
	for (i = 0; i < nsegs; i++)
		mem->segs[i].pages = mem->pages + mem->segs[i].first;
	return mem;
}

struct ptl_mem *ptl_mem_alloc(const struct ptlc_seg *segs, unsigned int nsegs)
{
	return ptl_mem_layout(segs, nsegs, true);
}

static void ptl_mem_free(struct ptl_mem *mem);

/*
 * A process's one-segment MDs (most of them) reuse the bookkeeping of the
 * last one @ni freed, as the data calls reuse their ptl_xfer: an MD per
 * message then costs no allocation, memcg charge, zeroing by the
 * allocator and free (~0.8 us of an 8 B PtlMDBind in the icount guest).
 */
static struct ptl_mem *ptl_mem_user_alloc(struct ptl_ni *ni,
					  const struct ptlc_seg *segs,
					  unsigned int nsegs)
{
	struct ptl_mem *mem;

	if (nsegs != 1)
		return ptl_mem_layout(segs, nsegs, false);
	mem = xchg(&ni->spare_mem, NULL);
	if (!mem)
		return ptl_mem_layout(segs, nsegs, false);
	memset(mem, 0, struct_size(mem, segs, 1));
	mem->nsegs = 1;
	mem->segs[0].npages = segs[0].len ?
		ptl_seg_pages(segs[0].addr, segs[0].len) : 0;
	mem->segs[0].page_off = segs[0].addr & ~PAGE_MASK;
	mem->npages = mem->segs[0].npages;
	return mem;
}

/* Keeps @mem (a process's, released) as @ni's spare; any context. */
static void ptl_mem_recycle(struct ptl_ni *ni, struct ptl_mem *mem)
{
	if (mem->nsegs == 1 && !mem->pages)
		mem = xchg(&ni->spare_mem, mem);
	if (mem)
		ptl_mem_free(mem);
}

/* The NI is being released: its spare goes. */
void ptl_mem_ni_release(struct ptl_ni *ni)
{
	struct ptl_mem *mem = xchg(&ni->spare_mem, NULL);

	if (mem)
		ptl_mem_free(mem);
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
 * ptl_mem_pin_range - pin pages of the calling process by the policy above
 * @addr: page-aligned user address
 * @npages: pages from there
 * @must_write: the MD accepts puts, so a read-only pin will not do
 * @pages: filled with the pinned pages
 * @writable: set to whether they were pinned for writing
 *
 * For writing where possible (see "Pinning policy"), else read-only.
 * Called by the pin cache for a new entry. Return: 0, or a negative errno
 * with nothing pinned.
 */
int ptl_mem_pin_range(unsigned long addr, unsigned long npages,
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

static void ptl_mem_free(struct ptl_mem *mem)
{
	kvfree(mem->pages);
	kfree(mem);
}

/* Drops the pin cache entries of @mem's segments; any context. */
static void ptl_mem_put_pins(struct ptl_mem *mem)
{
	bool written = READ_ONCE(mem->written);
	unsigned int i;

	for (i = 0; i < mem->nsegs; i++)
		if (mem->segs[i].pin)
			ptl_pin_put(mem->segs[i].pin, written);
}

/*
 * Takes each segment's pages from @pc (or pins them uncached if NULL);
 * on failure nothing stays referenced. A Portals code.
 */
static int ptl_mem_get_pins(struct ptl_mem *mem, struct ptl_pincache *pc,
			    const struct ptlc_seg *segs, bool must_write)
{
	bool writable = true;
	unsigned int i;
	int rc;

	for (i = 0; i < mem->nsegs; i++) {
		struct ptl_mem_seg *s = &mem->segs[i];
		unsigned long start = segs[i].addr & PAGE_MASK;

		if (!s->npages)
			continue;
		rc = ptl_pin_get(pc, start, s->npages, must_write, &s->pin);
		if (rc) {
			ptl_mem_put_pins(mem);
			return rc;
		}
		s->pages = ptl_pin_pages(s->pin, start);
		writable &= ptl_pin_writable(s->pin);
	}
	mem->writable = writable;
	return PTL_OK;
}

/*
 * Builds the memory of @segs on pinned pages from @ni's pin cache; a
 * Portals return code. The bookkeeping is charged to @acct's
 * max_user_kmem (PTL_NO_SPACE) before it is allocated; pages the cache
 * has to pin are charged to RLIMIT_MEMLOCK (PTL_MD_ILLEGAL, as an
 * unpinnable region) before they are (ptl_pincache.c).
 */
static int ptl_mem_create(struct ptl_ni *ni, const struct ptl_acct *acct,
			  const struct ptlc_seg *segs, unsigned int nsegs,
			  bool must_write, struct ptl_mem **out)
{
	unsigned long npages;
	struct ptl_mem *mem;
	unsigned int i;
	size_t kmem;
	int rc;

	for (i = 0; i < nsegs; i++)
		if (!ptl_seg_ok(&segs[i]))
			return PTL_MD_ILLEGAL;
	npages = ptl_mem_npages(segs, nsegs);
	if (npages > totalram_pages())
		return PTL_MD_ILLEGAL;
	kmem = ptl_mem_kmem(nsegs, npages);
	if (!ptl_user_charge_kmem(acct, kmem))
		return PTL_NO_SPACE;
	rc = PTL_NO_SPACE;
	mem = ptl_mem_user_alloc(ni, segs, nsegs);
	if (!mem)
		goto err_kmem;
	if (npages) {
		rc = ptl_mem_get_pins(mem, ptl_pincache_of(ni), segs,
				      must_write);
		if (rc)
			goto err_free;
	}
	ptl_acct_copy(&mem->acct, acct);
	mem->kmem = kmem;
	atomic_long_inc(&ptl_stats.mds);
	*out = mem;
	return PTL_OK;

err_free:
	ptl_mem_free(mem);
err_kmem:
	ptl_user_charge_kmem(acct, -(long)kmem);
	return rc;
}

static void ptl_md_from_ioc(const struct ptl_ioc_md *umd, ptl_md_t *md)
{
	/* A user address the core never dereferences: not __user. */
	md->start = (void *)(uintptr_t)umd->start;
	md->length = umd->length;
	md->threshold = umd->threshold;
	md->max_size = umd->max_size;
	md->options = umd->options;
	md->user_ptr = (void *)(uintptr_t)umd->user_ptr;
	md->eq_handle = umd->eq_handle;
}

/**
 * ptl_mem_pin - validate and pin the region of an MD
 * @ni: the NI the MD will live on (for its limits and owner)
 * @umd: the MD as the process gave it
 * @spec: filled for ptlc_md_attach/bind/update; spec->mem is ours
 *
 * Return: PTL_OK, after which the caller hands @spec to the core and calls
 * ptl_mem_spec_done() (and ptl_mem_release(spec->mem) if the core said
 * no); or PTL_MD_ILLEGAL, PTL_SEGV, PTL_NO_SPACE with nothing to undo.
 */
int ptl_mem_pin(struct ptl_ni *ni, const struct ptl_ioc_md *umd,
		struct ptlc_md_spec *spec)
{
	struct ptlc_seg one = {}, *segs = NULL;
	const struct ptlc_seg *pin = &one;
	unsigned int nsegs = 1;
	bool iovec = umd->options & PTL_MD_IOVEC;
	int rc;

	memset(spec, 0, sizeof(*spec));
	if (umd->options & ~PTL_MD_OPTIONS_ALL)
		return PTL_MD_ILLEGAL;
	ptl_md_from_ioc(umd, &spec->desc);
	if (iovec) {
		/* An empty iovec MD has no segment at all (segs is NULL). */
		rc = ptl_iovec_copy_in(ni, umd, &segs);
		if (rc)
			return rc;
		pin = segs;
		nsegs = umd->length;
	} else {
		one.addr = umd->start;
		one.len = umd->length;
	}
	rc = ptl_mem_create(ni, &ni->acct, pin, nsegs,
			    umd->options & PTL_MD_OP_PUT,
			    (struct ptl_mem **)&spec->mem);
	if (rc) {
		kvfree(segs);
		return rc;
	}
	spec->segs = segs;
	spec->nsegs = iovec ? nsegs : 0;
	return PTL_OK;
}

/**
 * ptl_mem_reuse_spec - an update that may keep the MD's pinned memory
 * @umd: the new MD as the process gave it
 * @spec: filled for ptlc_md_update() with reuse_mem and no mem
 *
 * put_pp's pattern, an update before every put over the same buffer,
 * then costs no pin cache lookup and no allocation: the core keeps the
 * memory if the bytes are the same and ptl_mem_reusable_hook() agrees.
 * Return: false for an MD that cannot be kept (iovec, unknown options):
 * pin it with ptl_mem_pin().
 */
bool ptl_mem_reuse_spec(const struct ptl_ioc_md *umd,
			struct ptlc_md_spec *spec)
{
	if (umd->options & (PTL_MD_IOVEC | ~PTL_MD_OPTIONS_ALL))
		return false;
	memset(spec, 0, sizeof(*spec));
	ptl_md_from_ioc(umd, &spec->desc);
	spec->reuse_mem = true;
	return true;
}

/*
 * ptlc_ops.mem_reusable: atomic context, NI lock held. The memory serves
 * the new MD only if every page is still what the caller has mapped there
 * (no munmap, mremap, fork or MAP_FIXED retired its pin cache entries:
 * the same rule as a new MD's pin cache lookup) and it is writable if
 * the new MD takes puts.
 */
bool ptl_mem_reusable_hook(void *glue, void *m, const ptl_md_t *desc)
{
	struct ptl_mem *mem = m;
	unsigned int i;

	if (mem->kernel || mem->returned)
		return false;
	if ((desc->options & PTL_MD_OP_PUT) && !mem->writable)
		return false;
	for (i = 0; i < mem->nsegs; i++) {
		struct ptl_mem_seg *s = &mem->segs[i];

		if (s->npages && (!s->pin || !ptl_pin_current(s->pin)))
			return false;
	}
	/* The core keeps it now: a hit, as a new MD's lookup would be. */
	atomic_long_inc(&ptl_stats.pincache_hits);
	return true;
}

void ptl_mem_spec_done(struct ptlc_md_spec *spec)
{
	kvfree(spec->segs);
	spec->segs = NULL;
}

/* ---- release ---- */

/*
 * Returns @mem's pages to the pin cache and uncharges its bookkeeping;
 * any context. The reference on its user (mem->acct) is the caller's.
 */
static void ptl_mem_release_pins(struct ptl_mem *mem)
{
	if (mem->returned)
		return;
	mem->returned = true;
	ptl_mem_put_pins(mem);
	atomic_long_dec(&ptl_stats.mds);
	ptl_user_charge_kmem(&mem->acct, -(long)mem->kmem);
}

/* Releases @mem; process context. */
void ptl_mem_release(struct ptl_mem *mem)
{
	if (!mem)
		return;
	if (mem->kernel) {	/* a kernel client's: nothing pinned */
		atomic_long_dec(&ptl_stats.mds);
		ptl_mem_free(mem);
		return;
	}
	ptl_mem_release_pins(mem);
	ptl_acct_release(&mem->acct);
	ptl_mem_free(mem);
}

static void ptl_unpin_work_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&ptl_unpin_list);
	struct ptl_mem *mem, *next;

	llist_for_each_entry_safe(mem, next, list, free_node) {
		ptl_mem_release(mem);
		atomic_dec(&ptl_unpin_pending);
		cond_resched();
	}
}

/*
 * ptlc_ops.md_release: atomic context, NI lock held. A process's MD is
 * released right here: its pages go back to the pin cache, which sleeps
 * for nothing (an entry to unpin goes to the cache's own work), so the
 * calls that end an MD (unlink, update) wake no worker and wait for none.
 * Only the last reference on its user's accounting (whose release takes a
 * mutex), and kernel memory (whose page array may be vmalloc'ed), are
 * left to the work item.
 */
void ptl_md_release_hook(void *glue, void *mem)
{
	struct ptl_mem *m = mem;
	struct ptl_user *u = m->acct.user;

	if (!m->kernel) {
		ptl_mem_release_pins(m);
		if (!u || refcount_dec_not_one(&u->ref)) {
			ptl_mem_recycle(glue, m);
			return;
		}
		/* The last reference on its user: dropped by the work. */
	}
	atomic_inc(&ptl_unpin_pending);
	if (llist_add(&m->free_node, &ptl_unpin_list))
		schedule_work(&ptl_unpin_work);
}

/*
 * Waits until every MD released so far is unpinned (or cached). Most
 * calls find nothing handed to a work item (the hook released it all),
 * and do not touch the workqueue at all.
 */
void ptl_mem_flush(void)
{
	if (atomic_read(&ptl_unpin_pending))
		flush_work(&ptl_unpin_work);
	ptl_pincache_flush();
}

/* ---- data movement ---- */

/* A position in an MD, walked page piece by page piece. */
struct ptl_cursor {
	struct ptlc_md_iter it;
	struct ptlc_chunk ch;
	struct ptl_mem *mem;
	u64 pos;		/* bytes of ch already consumed */
};

static int ptl_cursor_init(struct ptl_cursor *c, struct ptlc_md *md,
			   u64 off, u64 len)
{
	c->mem = ptlc_md_mem(md);
	if (!c->mem)
		return -EFAULT;
	ptlc_md_iter_init(&c->it, md, off, len);
	c->ch.len = 0;
	c->pos = 0;
	return 0;
}

/*
 * The next contiguous piece (inside one page) of the walk: its page, the
 * offset in that page and its length. False at the end or if the MD's
 * segments and pinned pages disagree (cannot happen; never trusted).
 */
static bool ptl_cursor_piece(struct ptl_cursor *c, struct page **page,
			     unsigned int *off, size_t *len)
{
	const struct ptl_mem_seg *s;
	unsigned long idx;
	u64 at;

	while (c->pos == c->ch.len) {
		if (!ptlc_md_iter_next(&c->it, &c->ch))
			return false;
		c->pos = 0;
	}
	if (c->ch.seg >= c->mem->nsegs)
		return false;
	s = &c->mem->segs[c->ch.seg];
	at = s->page_off + c->ch.seg_off + c->pos;
	idx = at >> PAGE_SHIFT;
	if (idx >= s->npages)
		return false;
	*page = s->pages[idx];
	*off = at & ~PAGE_MASK;
	*len = min_t(u64, c->ch.len - c->pos, PAGE_SIZE - *off);
	return true;
}

/**
 * ptl_mem_copy - copy bytes between the pinned pages of two MDs
 * @dst: destination MD (held by a message)
 * @dst_off: offset in @dst
 * @src: source MD (held by a message)
 * @src_off: offset in @src
 * @len: bytes; both ranges must lie inside their MDs (the core checked)
 *
 * Process context, no lock held: reschedules between pages, and stops
 * when the caller gets a fatal signal (a killed process does not go on
 * copying gigabytes; the operation then ends with PTL_NI_FAIL).
 * Return: 0, -EACCES if @dst is pinned read-only, -EINTR if the caller was
 * killed, -EFAULT on inconsistency.
 */
int ptl_mem_copy(struct ptlc_md *dst, u64 dst_off, struct ptlc_md *src,
		 u64 src_off, u64 len)
{
	struct ptl_cursor d, s;
	unsigned int n = 0;

	if (!len)
		return 0;
	if (ptl_cursor_init(&d, dst, dst_off, len) ||
	    ptl_cursor_init(&s, src, src_off, len))
		return -EFAULT;
	if (!d.mem->writable)
		return -EACCES;
	WRITE_ONCE(d.mem->written, true);
	while (len) {
		struct page *dp, *sp;
		unsigned int doff, soff;
		size_t dlen, slen, chunk;
		void *dv, *sv;

		if (!ptl_cursor_piece(&d, &dp, &doff, &dlen) ||
		    !ptl_cursor_piece(&s, &sp, &soff, &slen))
			return -EFAULT;
		chunk = min3(dlen, slen, (size_t)len);
		dv = kmap_local_page(dp);
		sv = kmap_local_page(sp);
		memcpy(dv + doff, sv + soff, chunk);
		kunmap_local(sv);
		kunmap_local(dv);
		d.pos += chunk;
		s.pos += chunk;
		len -= chunk;
		if (len && fatal_signal_pending(current))
			return -EINTR;
		if (++n % PTL_COPY_RESCHED == 0)
			cond_resched();
	}
	return 0;
}

/* Copies between an MD and a kernel buffer; atomic context is fine. */
static int ptl_mem_buf(struct ptlc_md *md, u64 off, void *buf, u64 len,
		       bool to_md)
{
	struct ptl_cursor c;
	u8 *p = buf;

	if (!len)
		return 0;
	if (ptl_cursor_init(&c, md, off, len))
		return -EFAULT;
	if (to_md) {
		if (!c.mem->writable)
			return -EACCES;
		WRITE_ONCE(c.mem->written, true);
	}
	while (len) {
		struct page *pg;
		unsigned int poff;
		size_t plen;
		void *v;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		plen = min_t(u64, plen, len);
		v = kmap_local_page(pg);
		if (to_md)
			memcpy(v + poff, p, plen);
		else
			memcpy(p, v + poff, plen);
		kunmap_local(v);
		c.pos += plen;
		p += plen;
		len -= plen;
	}
	return 0;
}

int ptl_mem_to_buf(void *buf, struct ptlc_md *src, u64 off, u64 len)
{
	return ptl_mem_buf(src, off, buf, len, false);
}

int ptl_mem_from_buf(struct ptlc_md *dst, u64 off, const void *buf, u64 len)
{
	return ptl_mem_buf(dst, off, (void *)buf, len, true);
}

/**
 * ptl_mem_frags - attach bytes of an MD to an skb as page fragments
 * @md: the MD (held by a message)
 * @off: offset in it
 * @len: bytes; the range lies inside the MD (the caller checked)
 * @skb: where; its fragments take page references of their own
 *
 * Zero-copy transmit: the skb points at the pinned pages. Its fragments
 * reference the pages, so they stay allocated while the skb lives even if
 * the MD is unpinned meanwhile; SKBFL_SHARED_FRAG tells the stack the
 * owner may write them (no in-place checksumming). Any context.
 * Return: 0, -EMSGSIZE if the skb runs out of fragment slots (the caller
 * frees it), -EOPNOTSUPP for kernel memory in slab pages (copy it
 * instead), -EFAULT on inconsistency.
 */
int ptl_mem_frags(struct ptlc_md *md, u64 off, u64 len, struct sk_buff *skb)
{
	struct ptl_cursor c;
	unsigned int room;

	if (!len)
		return 0;
	/* skb->len, data_len and truesize are 32 bits: none may wrap. */
	if (check_add_overflow(skb->truesize, (unsigned int)len, &room) ||
	    len > UINT_MAX)
		return -EMSGSIZE;
	if (ptl_cursor_init(&c, md, off, len))
		return -EFAULT;
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	while (len) {
		int i = skb_shinfo(skb)->nr_frags;
		struct page *pg;
		unsigned int poff;
		size_t plen;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		/*
		 * A kernel client's kmalloc memory lives in slab pages, which
		 * must not be referenced by an skb: the caller copies instead.
		 */
		if (c.mem->kernel && !sendpage_ok(pg))
			return -EOPNOTSUPP;
		plen = min_t(u64, plen, len);
		if (i && skb_can_coalesce(skb, i, pg, poff)) {
			skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], plen);
		} else {
			if (i >= MAX_SKB_FRAGS)
				return -EMSGSIZE;
			get_page(pg);
			skb_fill_page_desc(skb, i, pg, poff, plen);
		}
		skb->len += plen;
		skb->data_len += plen;
		skb->truesize += plen;
		c.pos += plen;
		len -= plen;
	}
	return 0;
}

/**
 * ptl_mem_sg - describe bytes of an MD as a scatterlist, for DMA
 * @md: the MD (held by a message)
 * @off: offset in it
 * @len: bytes; the range lies inside the MD (the caller checked)
 * @sgl: @nents entries, initialised with sg_init_table()
 * @nents: their number
 * @to_md: the device will write the bytes (a deposit)
 *
 * Zero copy over RDMA: the pages stay pinned while the message that holds
 * @md lives, so the caller maps them for the time of the transfer only.
 * Adjacent bytes of one page share an entry. Any context.
 * Return: entries used (the last one marked), -EMSGSIZE if more are
 * needed, -EACCES if @to_md and the MD is pinned read-only, -EFAULT on
 * inconsistency.
 */
int ptl_mem_sg(struct ptlc_md *md, u64 off, u64 len, struct scatterlist *sgl,
	       unsigned int nents, bool to_md)
{
	struct scatterlist *sg = NULL;
	struct ptl_cursor c;
	unsigned int n = 0;

	if (!len)
		return 0;
	if (ptl_cursor_init(&c, md, off, len))
		return -EFAULT;
	if (to_md) {
		if (!c.mem->writable)
			return -EACCES;
		WRITE_ONCE(c.mem->written, true);
	}
	while (len) {
		struct page *pg;
		unsigned int poff;
		size_t plen;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		plen = min_t(u64, plen, len);
		if (sg && sg_page(sg) == pg && sg->offset + sg->length == poff) {
			sg->length += plen;
		} else {
			if (n == nents)
				return -EMSGSIZE;
			sg = sg ? sg_next(sg) : sgl;
			sg_set_page(sg, pg, plen, poff);
			n++;
		}
		c.pos += plen;
		len -= plen;
	}
	sg_mark_end(sg);
	return n;
}

/**
 * ptl_mem_from_skb - copy bytes of an skb into an MD
 * @dst: the MD (held by a message)
 * @off: offset in it
 * @skb: source
 * @skb_off: offset in the skb
 * @len: bytes; the range lies inside the MD (the core checked)
 *
 * The single copy of the receive path, in softirq: from the frame straight
 * into the pinned pages. Return: 0, -EACCES if @dst is pinned read-only,
 * -EFAULT on inconsistency or a short skb.
 */
int ptl_mem_from_skb(struct ptlc_md *dst, u64 off, const struct sk_buff *skb,
		     int skb_off, u64 len)
{
	struct ptl_cursor c;

	if (!len)
		return 0;
	if (ptl_cursor_init(&c, dst, off, len))
		return -EFAULT;
	if (!c.mem->writable)
		return -EACCES;
	WRITE_ONCE(c.mem->written, true);
	while (len) {
		struct page *pg;
		unsigned int poff;
		size_t plen;
		void *v;
		int err;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		plen = min_t(u64, plen, len);
		v = kmap_local_page(pg);
		err = skb_copy_bits(skb, skb_off, v + poff, plen);
		kunmap_local(v);
		if (err)
			return -EFAULT;
		c.pos += plen;
		skb_off += plen;
		len -= plen;
	}
	return 0;
}
