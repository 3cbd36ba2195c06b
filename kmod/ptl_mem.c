// SPDX-License-Identifier: GPL-2.0
/*
 * MD memory: validation of what an MD describes, its bookkeeping (struct
 * ptl_mem) over pin cache entries, reuse, and release (deferred when it
 * must sleep).
 *
 * Pinning pages (which mappings may be pinned; for writing first) and
 * charging them to RLIMIT_MEMLOCK are ptl_gup.c's, sharing pinned ranges
 * between MDs the pin cache's (ptl_pincache.c), copying to and from an MD
 * ptl_copy.c's. The arrows run one way: this file -> pin cache -> GUP.
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
 * Accounting. The bookkeeping of an MD (this file's struct ptl_mem, plus
 * a page pointer per page, as before the cache) is charged to the user's
 * max_user_kmem (ptl_user.c) even when it pins nothing, and allocated
 * with __GFP_ACCOUNT for the memory cgroup; the pages are charged to
 * RLIMIT_MEMLOCK by the pin cache (ptl_gup.c). Both charges come before
 * any allocation, so a user at a limit cannot make the kernel allocate.
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

#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

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
