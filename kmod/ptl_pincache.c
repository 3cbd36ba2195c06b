// SPDX-License-Identifier: GPL-2.0
/*
 * The pin cache: pinned ranges of a process's memory, shared by its MDs
 * and kept for the next MD after the last one using them is gone, as the
 * registration caches of RDMA libraries (UCX, libfabric, uGNI) keep
 * registered memory.
 *
 * Why. Pinning (pin_user_pages with FOLL_LONGTERM, the VMA checks,
 * RLIMIT_MEMLOCK) and unpinning cost ~10 us for even one page in the
 * deterministic guest, against ~1.3 us for the cheapest ioctl, and Portals
 * programs pin on every message: put_pp updates its MD before each put,
 * MPI implementations bind an MD per send. The memory is nearly always the
 * same few buffers, already pinned by another MD or by the last message.
 *
 * What. One struct ptl_pincache per mm (per process; a forked child is
 * another mm), shared by the NIs of every /dev/portals file the process
 * has open: each NI takes a "user" reference the first time it pins
 * (ni->pincache) and drops it when it is released. It holds struct
 * ptl_pin entries, one pinned page range each ([start, start + npages
 * pages), page aligned, pinned writable or read-only by ptl_gup.c's
 * policy, charged once to the mm's pinned_vm), in an interval tree:
 *
 *   hit   an MD segment whose pages lie inside a valid entry of the right
 *         kind (writable; or read-only, for an MD that takes no puts, when
 *         there is no writable one) takes a reference on it and uses its
 *         page pointers: no GUP, no mmap lock, no charge;
 *   miss  a new entry is pinned for exactly the segment's pages and
 *         inserted (overlapping entries may coexist; nothing is merged);
 *   put   an entry no MD uses any more stays cached, on an LRU list, while
 *         the mm's unused cached pages fit in the pincache_max_pages
 *         module parameter (the oldest go first); it still counts in
 *         pinned_vm (VmPin), and when a new pin (or an EQ ring) would pass
 *         RLIMIT_MEMLOCK the unused entries are unpinned, oldest first,
 *         before the pin is refused (ptl_pincache_charge());
 *   stale every cached entry has an mmu_interval_notifier over its range.
 *         When the process unmaps, remaps (mremap, mmap MAP_FIXED over),
 *         write-protects for fork (COW), mprotects, or madvise(DONTNEED)s
 *         any of it (anything that invalidates the range's page table
 *         entries), the entry leaves the tree: no new MD can find it, and
 *         a new MD over the address pins whatever the process has there
 *         now. It is unpinned when the last MD using it goes.
 *
 * MDs that exist keep the pages they were built on (as an RDMA memory
 * region without ODP does): an MD over memory the process unmaps or
 * remaps goes on receiving into and sending from the old pages, which the
 * process can no longer see, until it is unlinked or updated. See
 * Documentation/kernel-internals.md, "Pin cache".
 *
 * Teardown. When the last NI of the mm goes (PtlNIFini, close, exit,
 * kill -9), the cache is unpublished and its unused entries are unpinned
 * at once; entries still used by MDs (a sender's message may hold an NI
 * beyond close) are unpinned when those MDs go. A killed process's
 * exit_mmap() invalidates every range first, so the cache never holds the
 * pages of a dead mm longer than its NIs live. Module exit finds nothing.
 *
 * Locking. pc->lock (spin_lock_irqsave) guards the tree, the LRU and each
 * entry's refs and state. It is taken by the invalidate callback (which
 * may not sleep and may run in reclaim), by puts from the core's
 * md_release hook (NI lock held, possibly in softirq) and by lookups; it
 * is never held around GUP, allocation, or anything that sleeps. Pinning
 * follows the mmu_interval_notifier protocol: the notifier is inserted
 * first, mmu_interval_read_begin() before GUP, and the entry becomes
 * visible only if mmu_interval_read_retry() under pc->lock says no
 * invalidation ran meanwhile (the callback calls mmu_interval_set_seq()
 * under the same lock); else the pages are dropped and pinned again.
 * Unpinning and mmu_interval_notifier_remove() sleep: an entry released
 * in atomic context goes on a lock-free list that a work item empties;
 * ptl_pincache_flush() waits for it. ptl_pincache_mutex guards the table
 * of caches and the user counts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/interval_tree.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "ptl_internal.h"

/* Debian's kernels have both; the debug guest kernel gets them too. */
#if !IS_ENABLED(CONFIG_MMU_NOTIFIER) || !IS_ENABLED(CONFIG_INTERVAL_TREE)
#error "the pin cache needs CONFIG_MMU_NOTIFIER and CONFIG_INTERVAL_TREE"
#endif

static unsigned long pincache_max_pages = 16384;
module_param(pincache_max_pages, ulong, 0644);
MODULE_PARM_DESC(pincache_max_pages,
		 "Pages a process may keep pinned in its pin cache that no MD uses (0: none)");

struct ptl_pincache {
	struct mm_struct *mm;		/* grabbed */
	struct hlist_node hnode;	/* in ptl_pincaches while users > 0 */
	unsigned int users;		/* NIs; under ptl_pincache_mutex */
	struct kref ref;		/* one for the users, one per entry */
	spinlock_t lock;
	struct rb_root_cached tree;	/* valid entries */
	struct list_head lru;		/* valid entries with no MD, oldest first */
	unsigned long lru_pages;
	bool dead;			/* no user left: cache nothing */
};

enum ptl_pin_state {
	PTL_PIN_NEW,		/* being pinned, not in the tree */
	PTL_PIN_VALID,		/* in the tree */
	PTL_PIN_STALE,		/* out of the tree for good */
};

struct ptl_pin {
	struct interval_tree_node node;		/* bytes [start, last] */
	struct mmu_interval_notifier notifier;	/* if pc */
	struct ptl_pincache *pc;		/* NULL: not cached */
	struct mm_struct *mm;			/* grabbed; pinned_vm charged */
	struct list_head lru;
	struct llist_node reap_node;
	unsigned int refs;			/* MD segments; pc->lock */
	enum ptl_pin_state state;		/* pc->lock */
	bool writable;
	bool dirty;				/* data landed: dirty at unpin */
	unsigned long npages;
	struct page *pages[];
};

static DEFINE_MUTEX(ptl_pincache_mutex);
static DEFINE_HASHTABLE(ptl_pincaches, 6);

static LLIST_HEAD(ptl_pin_reap_list);
/* Entries on the list or being unpinned by the work: ptl_pincache_flush(). */
static atomic_t ptl_pin_reap_pending = ATOMIC_INIT(0);
static void ptl_pin_reap_fn(struct work_struct *work);
static DECLARE_WORK(ptl_pin_reap_work, ptl_pin_reap_fn);

static void ptl_pincache_free(struct kref *ref)
{
	struct ptl_pincache *pc = container_of(ref, struct ptl_pincache, ref);

	mmdrop(pc->mm);
	kfree(pc);
}

/* Unpins, uncharges and frees @p; process context, no lock held. */
static void ptl_pin_free(struct ptl_pin *p)
{
	struct ptl_pincache *pc = p->pc;

	if (pc)
		mmu_interval_notifier_remove(&p->notifier);
	unpin_user_pages_dirty_lock(p->pages, p->npages, READ_ONCE(p->dirty));
	ptl_gup_uncharge(p->mm, p->npages);
	mmdrop(p->mm);
	atomic_long_sub(p->npages, &ptl_stats.pinned_pages);
	kvfree(p);
	if (pc)
		kref_put(&pc->ref, ptl_pincache_free);
}

/* Any context: @p (out of the tree and the LRU) is unpinned by the work. */
static void ptl_pin_reap(struct ptl_pin *p)
{
	atomic_inc(&ptl_pin_reap_pending);
	if (llist_add(&p->reap_node, &ptl_pin_reap_list))
		schedule_work(&ptl_pin_reap_work);
}

static void ptl_pin_reap_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&ptl_pin_reap_list);
	struct ptl_pin *p, *next;

	llist_for_each_entry_safe(p, next, list, reap_node) {
		ptl_pin_free(p);
		atomic_dec(&ptl_pin_reap_pending);
		cond_resched();
	}
}

/* Waits until every entry released so far is unpinned. */
void ptl_pincache_flush(void)
{
	if (atomic_read(&ptl_pin_reap_pending))
		flush_work(&ptl_pin_reap_work);
}

/* Takes a valid entry out of the tree for good; pc->lock held. */
static void ptl_pin_retire(struct ptl_pincache *pc, struct ptl_pin *p)
{
	interval_tree_remove(&p->node, &pc->tree);
	p->state = PTL_PIN_STALE;
}

/* Takes an unused entry off the LRU and out of the tree; pc->lock held. */
static void ptl_pin_evict_locked(struct ptl_pincache *pc, struct ptl_pin *p)
{
	list_del(&p->lru);
	pc->lru_pages -= p->npages;
	atomic_long_sub(p->npages, &ptl_stats.pincache_cached_pages);
	ptl_pin_retire(pc, p);
}

/*
 * The process changed what is mapped at (part of) @sub's range, or is
 * about to: no new MD may use the entry. Never sleeps.
 */
static bool ptl_pin_invalidate(struct mmu_interval_notifier *sub,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq)
{
	struct ptl_pin *p = container_of(sub, struct ptl_pin, notifier);
	struct ptl_pincache *pc = p->pc;
	unsigned long flags;
	bool reap = false;

	spin_lock_irqsave(&pc->lock, flags);
	mmu_interval_set_seq(sub, cur_seq);
	if (p->state == PTL_PIN_VALID) {
		atomic_long_inc(&ptl_stats.pincache_invalidations);
		if (p->refs) {
			ptl_pin_retire(pc, p);
		} else {
			ptl_pin_evict_locked(pc, p);
			reap = true;
		}
	}
	spin_unlock_irqrestore(&pc->lock, flags);
	if (reap)
		ptl_pin_reap(p);
	return true;
}

static const struct mmu_interval_notifier_ops ptl_pin_ops = {
	.invalidate = ptl_pin_invalidate,
};

/* ---- caches and their users ---- */

/* The cache of @mm with a user reference, created if need be; or NULL. */
static struct ptl_pincache *ptl_pincache_get(struct mm_struct *mm)
{
	struct ptl_pincache *pc;

	mutex_lock(&ptl_pincache_mutex);
	hash_for_each_possible(ptl_pincaches, pc, hnode, (unsigned long)mm) {
		if (pc->mm == mm) {
			pc->users++;
			goto out;
		}
	}
	pc = kzalloc(sizeof(*pc), GFP_KERNEL_ACCOUNT);
	if (!pc)
		goto out;
	mmgrab(mm);
	pc->mm = mm;
	pc->users = 1;
	kref_init(&pc->ref);
	spin_lock_init(&pc->lock);
	pc->tree = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&pc->lru);
	hash_add(ptl_pincaches, &pc->hnode, (unsigned long)mm);
out:
	mutex_unlock(&ptl_pincache_mutex);
	return pc;
}

/* Unpins every entry of @list (linked by lru); process context. */
static void ptl_pin_free_list(struct list_head *list)
{
	struct ptl_pin *p, *next;

	list_for_each_entry_safe(p, next, list, lru) {
		list_del(&p->lru);
		ptl_pin_free(p);
	}
}

/*
 * Drops a user of @pc. The last one unpublishes it and unpins what no MD
 * uses; later puts unpin at once. Process context.
 */
static void ptl_pincache_user_put(struct ptl_pincache *pc)
{
	struct ptl_pin *p, *next;
	unsigned long flags;
	LIST_HEAD(unused);

	mutex_lock(&ptl_pincache_mutex);
	if (--pc->users) {
		mutex_unlock(&ptl_pincache_mutex);
		return;
	}
	hash_del(&pc->hnode);
	mutex_unlock(&ptl_pincache_mutex);

	spin_lock_irqsave(&pc->lock, flags);
	pc->dead = true;
	list_for_each_entry_safe(p, next, &pc->lru, lru) {
		ptl_pin_evict_locked(pc, p);
		list_add_tail(&p->lru, &unused);
	}
	spin_unlock_irqrestore(&pc->lock, flags);
	ptl_pin_free_list(&unused);
	kref_put(&pc->ref, ptl_pincache_free);
}

/*
 * The cache the calling process's MDs on @ni use, or NULL (pin without
 * caching): an NI uses the cache of the process that first pinned through
 * it; a forked child calling on its parent's NI pins uncached.
 */
struct ptl_pincache *ptl_pincache_of(struct ptl_ni *ni)
{
	struct ptl_pincache *pc = READ_ONCE(ni->pincache);
	struct mm_struct *mm = current->mm;

	if (likely(pc))
		return pc->mm == mm ? pc : NULL;
	if (!mm)
		return NULL;
	pc = ptl_pincache_get(mm);
	if (!pc)
		return NULL;
	if (cmpxchg(&ni->pincache, NULL, pc)) {
		/* Another thread's call on this NI was first. */
		ptl_pincache_user_put(pc);
		pc = READ_ONCE(ni->pincache);
		return pc->mm == mm ? pc : NULL;
	}
	return pc;
}

/* ptl_ni_release(): the NI's user reference goes. */
void ptl_pincache_ni_release(struct ptl_ni *ni)
{
	if (ni->pincache)
		ptl_pincache_user_put(ni->pincache);
	ni->pincache = NULL;
}

/*
 * Unpins the oldest entry of @mm's cache that no MD uses. False if there
 * is none. Process context, no lock held (ptl_pincache_charge()).
 */
static bool ptl_pincache_evict_one(struct mm_struct *mm)
{
	struct ptl_pincache *pc, *found = NULL;
	struct ptl_pin *p = NULL;
	unsigned long flags;

	mutex_lock(&ptl_pincache_mutex);
	hash_for_each_possible(ptl_pincaches, pc, hnode, (unsigned long)mm) {
		if (pc->mm == mm) {
			found = pc;
			kref_get(&pc->ref);
			break;
		}
	}
	mutex_unlock(&ptl_pincache_mutex);
	if (!found)
		return false;
	spin_lock_irqsave(&found->lock, flags);
	p = list_first_entry_or_null(&found->lru, struct ptl_pin, lru);
	if (p)
		ptl_pin_evict_locked(found, p);
	spin_unlock_irqrestore(&found->lock, flags);
	if (p) {
		atomic_long_inc(&ptl_stats.pincache_evictions);
		ptl_pin_free(p);
	}
	kref_put(&found->ref, ptl_pincache_free);
	return p;
}

/**
 * ptl_pincache_charge - charge pinned pages of @mm to RLIMIT_MEMLOCK
 * @mm: whose pinned_vm
 * @npages: pages to charge
 *
 * Past the limit, the entries of @mm's cache that no MD uses (which still
 * count in pinned_vm) are unpinned, oldest first, before the charge is
 * refused. For the cache's ranges and for EQ rings (ptl_eq.c); undone with
 * ptl_gup_uncharge(). Process context, no lock held.
 *
 * Return: true if charged.
 */
bool ptl_pincache_charge(struct mm_struct *mm, unsigned long npages)
{
	while (!ptl_gup_charge(mm, npages))
		if (mm != current->mm || !ptl_pincache_evict_one(mm))
			return false;
	return true;
}

/* ---- entries ---- */

/*
 * A valid entry covering bytes [start, last], writable if @must_write
 * (else writable if there is one, read-only otherwise); pc->lock held.
 */
static struct ptl_pin *ptl_pincache_find(struct ptl_pincache *pc,
					 unsigned long start, unsigned long last,
					 bool must_write)
{
	struct interval_tree_node *n;
	struct ptl_pin *ro = NULL;

	for (n = interval_tree_iter_first(&pc->tree, start, last); n;
	     n = interval_tree_iter_next(n, start, last)) {
		struct ptl_pin *p = container_of(n, struct ptl_pin, node);

		if (n->start > start || n->last < last)
			continue;
		if (p->writable)
			return p;
		if (!must_write && !ro)
			ro = p;
	}
	return ro;
}

/* A cached entry for the range, referenced, or NULL. */
static struct ptl_pin *ptl_pincache_lookup(struct ptl_pincache *pc,
					   unsigned long start,
					   unsigned long npages,
					   bool must_write)
{
	unsigned long flags;
	struct ptl_pin *p;

	spin_lock_irqsave(&pc->lock, flags);
	p = ptl_pincache_find(pc, start, start + npages * PAGE_SIZE - 1,
			      must_write);
	if (p && !p->refs++) {
		list_del(&p->lru);
		pc->lru_pages -= p->npages;
		atomic_long_sub(p->npages, &ptl_stats.pincache_cached_pages);
	}
	spin_unlock_irqrestore(&pc->lock, flags);
	return p;
}

/*
 * Pins @p's range for @pc (or uncached if NULL) following the
 * mmu_interval_notifier protocol. On success a cached entry is in the
 * tree with one reference. Returns 0 or a negative errno.
 */
static int ptl_pin_fill(struct ptl_pincache *pc, struct ptl_pin *p,
			bool must_write)
{
	unsigned long start = p->node.start, flags, seq = 0;
	int err;

	for (;;) {
		if (pc)
			seq = mmu_interval_read_begin(&p->notifier);
		err = ptl_gup_pin_range(start, p->npages, must_write, p->pages,
					&p->writable);
		if (err || !pc)
			return err;
		spin_lock_irqsave(&pc->lock, flags);
		if (!mmu_interval_read_retry(&p->notifier, seq)) {
			interval_tree_insert(&p->node, &pc->tree);
			p->state = PTL_PIN_VALID;
			spin_unlock_irqrestore(&pc->lock, flags);
			return 0;
		}
		spin_unlock_irqrestore(&pc->lock, flags);
		/* Changed under us: these pages may not be the process's. */
		unpin_user_pages(p->pages, p->npages);
		if (fatal_signal_pending(current))
			return -EINTR;
	}
}

/*
 * A new entry for [start, start + npages pages) of current->mm, pinned and
 * charged; cached in @pc unless NULL. Returns a Portals code.
 */
static int ptl_pin_new(struct ptl_pincache *pc, unsigned long start,
		       unsigned long npages, bool must_write,
		       struct ptl_pin **out)
{
	struct mm_struct *mm = current->mm;
	struct ptl_pin *p;
	int err;

	/* Charged before anything is allocated (see ptl_mem.c). */
	if (!ptl_pincache_charge(mm, npages))
		return PTL_MD_ILLEGAL;
	p = kvzalloc(struct_size(p, pages, npages),
		     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!p) {
		ptl_gup_uncharge(mm, npages);
		return PTL_NO_SPACE;
	}
	p->node.start = start;
	p->node.last = start + npages * PAGE_SIZE - 1;
	p->npages = npages;
	p->refs = 1;
	p->state = PTL_PIN_NEW;
	if (pc) {
		/*
		 * The notifier may fire as soon as it is inserted (another
		 * thread unmapping the range): it needs p->pc by then.
		 */
		p->pc = pc;
		kref_get(&pc->ref);
		err = mmu_interval_notifier_insert(&p->notifier, mm, start,
						   npages * PAGE_SIZE,
						   &ptl_pin_ops);
		if (err) {
			kref_put(&pc->ref, ptl_pincache_free);
			p->pc = NULL;
			pc = NULL;	/* pin it uncached instead */
		}
	}
	err = ptl_pin_fill(pc, p, must_write);
	if (err) {
		if (pc) {
			mmu_interval_notifier_remove(&p->notifier);
			kref_put(&pc->ref, ptl_pincache_free);
		}
		ptl_gup_uncharge(mm, npages);
		kvfree(p);
		return PTL_MD_ILLEGAL;
	}
	mmgrab(mm);
	p->mm = mm;
	atomic_long_add(npages, &ptl_stats.pinned_pages);
	*out = p;
	return PTL_OK;
}

/**
 * ptl_pin_get - the pinned pages of a range of the calling process
 * @pc: its pin cache (ptl_pincache_of()), or NULL to pin uncached
 * @start: page-aligned user address
 * @npages: pages from there (at least one)
 * @must_write: the MD takes puts: only a writable pin will do
 * @out: the entry, referenced; release with ptl_pin_put()
 *
 * Process context. Return: PTL_OK, PTL_MD_ILLEGAL (cannot be pinned,
 * or past RLIMIT_MEMLOCK even with the cache's unused entries unpinned),
 * PTL_NO_SPACE.
 */
int ptl_pin_get(struct ptl_pincache *pc, unsigned long start,
		unsigned long npages, bool must_write, struct ptl_pin **out)
{
	struct ptl_pin *p;

	if (pc) {
		p = ptl_pincache_lookup(pc, start, npages, must_write);
		if (p) {
			atomic_long_inc(&ptl_stats.pincache_hits);
			*out = p;
			return PTL_OK;
		}
		atomic_long_inc(&ptl_stats.pincache_misses);
	}
	return ptl_pin_new(pc, start, npages, must_write, out);
}

/* The page of @p holding user address @addr (inside its range). */
struct page **ptl_pin_pages(struct ptl_pin *p, unsigned long addr)
{
	return p->pages + ((addr - p->node.start) >> PAGE_SHIFT);
}

bool ptl_pin_writable(const struct ptl_pin *p)
{
	return p->writable;
}

/*
 * Whether @p still holds what the calling process has mapped over its
 * range: an entry of the caller's own cache that no invalidation has
 * retired since. Any context (an MD update asks under the NI lock).
 */
bool ptl_pin_current(struct ptl_pin *p)
{
	struct ptl_pincache *pc = p->pc;
	unsigned long flags;
	bool valid;

	if (!pc || pc->mm != current->mm)
		return false;
	spin_lock_irqsave(&pc->lock, flags);
	valid = p->state == PTL_PIN_VALID;
	spin_unlock_irqrestore(&pc->lock, flags);
	return valid;
}

/*
 * Drops an MD's reference on @p; @written: data landed in it. Any context
 * (the core's md_release hook, NI lock held). An entry nobody uses stays
 * cached if it is valid and fits the budget; otherwise it is unpinned by
 * the work ptl_pincache_flush() waits for.
 */
void ptl_pin_put(struct ptl_pin *p, bool written)
{
	struct ptl_pincache *pc = p->pc;
	unsigned long budget = READ_ONCE(pincache_max_pages), flags;
	bool reap = false;

	if (written && !READ_ONCE(p->dirty))
		WRITE_ONCE(p->dirty, true);
	if (!pc) {
		ptl_pin_reap(p);
		return;
	}
	spin_lock_irqsave(&pc->lock, flags);
	if (--p->refs) {
		spin_unlock_irqrestore(&pc->lock, flags);
		return;
	}
	if (p->state == PTL_PIN_VALID && !pc->dead && p->npages <= budget) {
		list_add_tail(&p->lru, &pc->lru);
		pc->lru_pages += p->npages;
		atomic_long_add(p->npages, &ptl_stats.pincache_cached_pages);
		while (pc->lru_pages > budget) {
			struct ptl_pin *old = list_first_entry(&pc->lru,
							       struct ptl_pin,
							       lru);

			ptl_pin_evict_locked(pc, old);
			atomic_long_inc(&ptl_stats.pincache_evictions);
			ptl_pin_reap(old);
		}
	} else {
		if (p->state == PTL_PIN_VALID)
			ptl_pin_retire(pc, p);
		reap = true;
	}
	spin_unlock_irqrestore(&pc->lock, flags);
	if (reap)
		ptl_pin_reap(p);
}

/*
 * Module exit, after ptl_mem_flush(): every NI and MD is gone, so every
 * cache and entry must be.
 */
void ptl_pincache_exit(void)
{
	struct ptl_pincache *pc;
	int bkt;

	ptl_pincache_flush();
	mutex_lock(&ptl_pincache_mutex);
	hash_for_each(ptl_pincaches, bkt, pc, hnode)
		pr_err("pin cache of mm %p left with %u users\n", pc->mm,
		       pc->users);
	mutex_unlock(&ptl_pincache_mutex);
	WARN_ON(atomic_long_read(&ptl_stats.pinned_pages));
}
