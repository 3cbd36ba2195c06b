// SPDX-License-Identifier: GPL-2.0
/*
 * Event queue memory, mmap, waiting and poll.
 *
 * An EQ's ring is vmalloc memory that the core writes (under its NI
 * lock) and the process maps read-only; its consumer index lives in a
 * separate page the process maps read-write (struct ptl_eq_ctl), which the
 * kernel reads only to answer poll(). Both are in a refcounted struct
 * ptl_eq_mem: the NI's mmap table holds one reference until PtlEQFree or
 * NI teardown (after which the core never writes the ring again), every
 * VMA holds one until munmap. The struct and the memory are freed after an
 * RCU grace period because poll() reads them under rcu_read_lock().
 *
 * Accounting: ring and control page are kernel memory a process asks for
 * and keeps while it lives, so they are charged like pinned MD pages: to
 * the creator's pinned_vm (VmPin), refused with PTL_NO_SPACE past
 * RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK. The size is checked
 * before anything is allocated (a huge vmalloc that fails would log an
 * allocation warning); the charge is returned when the memory is released.
 * The memory is also allocated with __GFP_ACCOUNT, so the creator's memory
 * cgroup pays for it (vmalloc_user() would not charge it: hence
 * __vmalloc() and a mapping made page by page).
 *
 * mmap offsets name the NI slot, the EQ's id in that NI's table and the
 * part (ring or control page); see ptl_eq_key().
 *
 * Waiting: EQ_WAIT sleeps on the file's wait queue (struct ptl_wake) until
 * a watched EQ's next sequence differs from the one its reader expects.
 * The core's eq_notify hook, called after each event is written, wakes
 * the queue only when someone sleeps on it. A waiter looks its EQs up
 * once and holds their memory: each pass over them (before sleeping, and
 * after every wake-up) reads the posted count that eq_notify keeps there,
 * without the NI lock or a handle lookup, since a wait is part of every
 * small message.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <ptl/compat.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"
#include "ptl_trace.h"

/* mmap key (in pages): slot << 24 | id << 1 | part. */
#define PTL_MAP_SLOT_SHIFT	24
#define PTL_MAP_ID_MAX		((1U << (PTL_MAP_SLOT_SHIFT - 1)) - 1)
#define PTL_MAP_PART_CTL	1UL

/* Most EQs one EQ_WAIT may watch (PtlEQPoll's array). */
#define PTL_EQ_WAIT_MAX		65535U

static unsigned long ptl_eq_key(u32 slot, u32 id, unsigned long part)
{
	return ((unsigned long)slot << PTL_MAP_SLOT_SHIFT) |
	       ((unsigned long)id << 1) | part;
}

/* ---- EQ memory ---- */

/* Zeroed, charged to the caller's memory cgroup; see the top. */
static void *ptl_eq_vzalloc(size_t bytes)
{
	return __vmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
}

/* Maps @size bytes of vmalloc memory at @addr into @vma, from its start. */
static int ptl_eq_map_pages(struct vm_area_struct *vma, void *addr,
			    size_t size)
{
	size_t off;
	int err;

	for (off = 0; off < size; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(addr + off));
		if (err)
			return err;
	}
	return 0;
}

static void ptl_eq_mem_free_rcu(struct rcu_head *head)
{
	struct ptl_eq_mem *em = container_of(head, struct ptl_eq_mem, rcu);

	/* vfree() defers itself when called from softirq. */
	vfree(em->ring);
	vfree(em->ctl);
	kfree(em);
}

/* Process context: the last put is an ioctl, NI teardown or munmap. */
static void ptl_eq_mem_release(struct kref *ref)
{
	struct ptl_eq_mem *em = container_of(ref, struct ptl_eq_mem, ref);

	ptl_gup_uncharge(em->mm, em->charged);
	mmdrop(em->mm);
	atomic_long_dec(&ptl_stats.eqs);
	call_rcu(&em->rcu, ptl_eq_mem_free_rcu);
}

static void ptl_eq_mem_put(struct ptl_eq_mem *em)
{
	kref_put(&em->ref, ptl_eq_mem_release);
}

static struct ptl_eq_mem *ptl_eq_mem_alloc(u32 nslots)
{
	size_t ring_bytes = PAGE_ALIGN((size_t)nslots * sizeof(ptl_event_t));
	unsigned long npages = (ring_bytes >> PAGE_SHIFT) + 1;
	struct ptl_eq_mem *em;

	/* Refused before allocating: nothing to warn about. */
	if (npages > totalram_pages() ||
	    !ptl_pincache_charge(current->mm, npages))
		return NULL;
	em = kzalloc(sizeof(*em), GFP_KERNEL_ACCOUNT);
	if (!em)
		goto err_uncharge;
	em->nslots = nslots;
	em->ring_bytes = ring_bytes;
	em->ring = ptl_eq_vzalloc(em->ring_bytes);
	em->ctl = ptl_eq_vzalloc(PAGE_SIZE);
	if (!em->ring || !em->ctl) {
		vfree(em->ring);
		vfree(em->ctl);
		kfree(em);
		goto err_uncharge;
	}
	mmgrab(current->mm);
	em->mm = current->mm;
	em->charged = npages;
	/* The reader's first expected sequence: poll() starts "empty". */
	em->ctl->consumer_seq = 0U - nslots;
	kref_init(&em->ref);
	atomic_long_inc(&ptl_stats.eqs);
	return em;

err_uncharge:
	ptl_gup_uncharge(current->mm, npages);
	return NULL;
}

static void ptl_eq_fill_alloc_reply(struct ptl_ni *ni, struct ptl_eq_mem *em,
				    ptl_handle_eq_t h,
				    struct ptl_ioc_eq_alloc *args)
{
	args->eq_handle = h;
	args->nslots = em->nslots;
	args->ring_offset = ptl_eq_key(ni->slot, em->id, 0) << PAGE_SHIFT;
	args->ring_bytes = em->ring_bytes;
	args->ctl_offset = ptl_eq_key(ni->slot, em->id, PTL_MAP_PART_CTL)
			   << PAGE_SHIFT;
	args->ctl_bytes = PAGE_SIZE;
}

/*
 * The table entry (and its reference) exists before the core EQ does.
 * Once ptlc_eq_alloc() succeeded the handle is live and a sibling thread
 * may PtlEQFree it (handles are predictable), dropping the table's
 * reference: the creator holds its own until it is done with @em.
 */
static int ptl_eq_create(struct ptl_ni *ni, u32 nslots,
			 struct ptl_ioc_eq_alloc *args)
{
	struct ptl_eq_mem *em;
	ptl_handle_eq_t h;
	int rc;

	em = ptl_eq_mem_alloc(nslots);
	if (!em)
		return PTL_NO_SPACE;
	em->nid = ni->nid;
	em->pid = ni->pid;
	em->handle = PTL_EQ_NONE;
	if (xa_alloc(&ni->eq_maps, &em->id, em, XA_LIMIT(1, PTL_MAP_ID_MAX),
		     GFP_KERNEL_ACCOUNT)) {
		ptl_eq_mem_put(em);
		return PTL_NO_SPACE;
	}
	kref_get(&em->ref);		/* the creator's */
	rc = ptlc_eq_alloc(ni->core, em->ring, nslots, NULL, em, &h);
	if (rc) {
		xa_erase(&ni->eq_maps, em->id);
		ptl_eq_mem_put(em);
	} else {
		WRITE_ONCE(em->handle, h);
		ptl_eq_fill_alloc_reply(ni, em, h, args);
	}
	ptl_eq_mem_put(em);
	return rc;
}

long ptl_ioctl_eq_alloc(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_eq_alloc *args = arg;
	struct ptl_ni *ni;
	u32 nslots;
	long rc;

	if (args->reserved)
		return -EINVAL;
	ni = ptl_ni_lookup(pf, args->ni_handle);
	if (!ni)
		return PTL_NI_INVALID;
	args->eq_handle = PTL_EQ_NONE;
	args->nslots = 0;
	args->ring_offset = 0;
	args->ring_bytes = 0;
	args->ctl_offset = 0;
	args->ctl_bytes = 0;
	if (!args->count) {
		rc = PTL_OK;		/* contract 16 */
		goto out;
	}
	nslots = ptlc_eq_slots_for(args->count);
	if (!nslots || nslots > PTL_EQ_MAX_SLOTS) {
		rc = PTL_NO_SPACE;
		goto out;
	}
	rc = ptl_eq_create(ni, nslots, args);
out:
	ptl_ni_put(ni);
	return rc;
}

static long ptl_eq_free(struct ptl_file *pf, ptl_handle_eq_t h)
{
	struct ptl_eq_mem *em;
	struct ptl_ni *ni;
	void *priv;
	long rc;

	ni = ptl_ni_lookup_any(pf, h);
	if (!ni)
		return PTL_EQ_INVALID;
	rc = ptlc_eq_free(ni->core, h, &priv);
	if (rc == PTL_OK) {
		/* The core will not write the ring again (contract 14). */
		em = priv;
		WRITE_ONCE(em->freed, true);
		xa_erase(&ni->eq_maps, em->id);
		ptl_eq_mem_put(em);
		/* Waiters on it now find it invalid. */
		wake_up_all(&ni->wake->wq);
	}
	ptl_ni_put(ni);
	return rc;
}

long ptl_ioctl_eq_free(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_handle *args = arg;

	if (args->reserved)
		return -EINVAL;
	return ptl_eq_free(pf, args->handle);
}

/* The handle of a new EQ could not be copied out (ptl_dev.c): free it. */
void ptl_undo_eq_alloc(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_eq_alloc *args = arg;

	if (args->eq_handle != PTL_EQ_NONE)	/* count 0 allocates none */
		ptl_eq_free(pf, args->eq_handle);
}

/* The NI is being destroyed and its core EQs are gone. */
void ptl_eq_ni_teardown(struct ptl_ni *ni)
{
	struct ptl_eq_mem *em;
	unsigned long id;

	xa_for_each(&ni->eq_maps, id, em) {
		xa_erase(&ni->eq_maps, id);
		ptl_eq_mem_put(em);
	}
	xa_destroy(&ni->eq_maps);
}

/* ---- events ---- */

/* The sequence of the next event @em's ring will hold. */
static ptl_seq_t ptl_eq_mem_next(const struct ptl_eq_mem *em)
{
	return 0U - em->nslots + READ_ONCE(em->posted);
}

/* ptlc_ops.eq_notify: atomic context, the NI lock of @glue held. */
void ptl_eq_notify(void *glue, void *eq_priv)
{
	struct ptl_ni *ni = glue;
	struct ptl_eq_mem *em = eq_priv;
	ptl_seq_t seq = ptl_eq_mem_next(em);
	const ptl_event_t *slot = &em->ring[seq & (em->nslots - 1)];

	WRITE_ONCE(em->posted, em->posted + 1);
	trace_ptl_event_posted(em->nid, em->pid, em->handle, seq,
			       slot->type);
	/* wq_has_sleeper() orders the ring write before the check. */
	if (wq_has_sleeper(&ni->wake->wq))
		wake_up_interruptible_poll(&ni->wake->wq, EPOLLIN | EPOLLRDNORM);
}

/* ---- mmap ---- */

static void ptl_eq_vm_open(struct vm_area_struct *vma)
{
	struct ptl_eq_mem *em = vma->vm_private_data;

	kref_get(&em->ref);
}

static void ptl_eq_vm_close(struct vm_area_struct *vma)
{
	ptl_eq_mem_put(vma->vm_private_data);
}

static const struct vm_operations_struct ptl_eq_vm_ops = {
	.open = ptl_eq_vm_open,
	.close = ptl_eq_vm_close,
};

/* The EQ memory an mmap offset names, referenced; NULL if none. */
static struct ptl_eq_mem *ptl_eq_mem_find(struct ptl_file *pf,
					  unsigned long key)
{
	unsigned long slot = key >> PTL_MAP_SLOT_SHIFT;
	struct ptl_eq_mem *em = NULL;
	struct ptl_ni *ni;

	if (slot >= PTL_MAX_INTERFACES)
		return NULL;
	slot = array_index_nospec(slot, PTL_MAX_INTERFACES);
	rcu_read_lock();
	ni = rcu_dereference(pf->ni[slot]);
	if (ni)
		em = xa_load(&ni->eq_maps, (key & ((1UL << PTL_MAP_SLOT_SHIFT) -
						   1)) >> 1);
	if (em && !kref_get_unless_zero(&em->ref))
		em = NULL;
	rcu_read_unlock();
	return em;
}

int ptl_eq_mmap(struct ptl_file *pf, struct vm_area_struct *vma)
{
	unsigned long key = vma->vm_pgoff;
	unsigned long size = vma->vm_end - vma->vm_start;
	struct ptl_eq_mem *em;
	void *addr;
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* Events and a counter: nothing to execute. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	em = ptl_eq_mem_find(pf, key);
	if (!em)
		return -EINVAL;
	if (key & PTL_MAP_PART_CTL) {
		addr = em->ctl;
		err = size > PAGE_SIZE ? -EINVAL : 0;
	} else {
		/* Only the kernel writes the ring. */
		addr = em->ring;
		err = size > em->ring_bytes ? -EINVAL :
		      (vma->vm_flags & VM_WRITE) ? -EPERM : 0;
		ptl_vm_flags_mod(vma, 0, VM_MAYWRITE);
	}
	if (!err)
		err = ptl_eq_map_pages(vma, addr, size);
	if (err) {
		ptl_eq_mem_put(em);
		return err;
	}
	ptl_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYEXEC);
	vma->vm_private_data = em;	/* the reference taken above */
	vma->vm_ops = &ptl_eq_vm_ops;
	return 0;
}

/* ---- waiting ---- */

/*
 * The memory of the EQ @w watches, referenced, or NULL if @w names no EQ
 * of @ni. RCU keeps @em readable between the lookup and the reference.
 */
static struct ptl_eq_mem *ptl_eq_watch_get(struct ptl_ni *ni,
					   const struct ptl_ioc_eq_watch *w)
{
	struct ptl_eq_mem *em = NULL;
	void *priv;

	if (ptlc_handle_slot(w->eq_handle) != (int)ni->slot)
		return NULL;
	rcu_read_lock();
	if (ptlc_eq_info(ni->core, w->eq_handle, NULL, NULL, &priv) == PTL_OK &&
	    kref_get_unless_zero(&((struct ptl_eq_mem *)priv)->ref))
		em = priv;
	rcu_read_unlock();
	return em;
}

/*
 * One pass over the watched EQs: PTL_OK with *which set if one holds the
 * event its reader expects (or lapped it), PTL_EQ_INVALID with *which set
 * for an EQ freed meanwhile, else PTL_EQ_EMPTY.
 */
static int ptl_eq_scan(struct ptl_ni *ni, struct ptl_eq_mem *const *ems,
		       const struct ptl_ioc_eq_watch *w, u32 count, s32 *which)
{
	u32 i;

	if (!READ_ONCE(ni->active)) {
		*which = 0;
		return PTL_EQ_INVALID;
	}
	for (i = 0; i < count; i++) {
		if (READ_ONCE(ems[i]->freed)) {
			*which = i;
			return PTL_EQ_INVALID;
		}
		if (ptl_eq_mem_next(ems[i]) != w[i].expected_seq) {
			*which = i;
			return PTL_OK;
		}
	}
	return PTL_EQ_EMPTY;
}

/*
 * A finite wait ends by an hrtimer on CLOCK_MONOTONIC, the clock the
 * caller measures its timeout on, never early: a timer-wheel timeout in
 * jiffies may end up to a jiffy early, and a 200 ms wait was seen to end
 * after 185 (by the caller's clock) on a loaded PREEMPT_RT guest.
 */
static long ptl_eq_wait_on(struct ptl_ni *ni, struct ptl_eq_mem *const *ems,
			   const struct ptl_ioc_eq_watch *w,
			   struct ptl_ioc_eq_wait *args)
{
	int rc = PTL_EQ_EMPTY;
	long ret;

	if (args->timeout_ms == PTL_TIME_FOREVER)
		ret = wait_event_interruptible(ni->wake->wq,
			(rc = ptl_eq_scan(ni, ems, w, args->count,
					  &args->which)) != PTL_EQ_EMPTY);
	else
		ret = wait_event_interruptible_hrtimeout(ni->wake->wq,
			(rc = ptl_eq_scan(ni, ems, w, args->count,
					  &args->which)) != PTL_EQ_EMPTY,
			ms_to_ktime(args->timeout_ms));
	if (ret == -ERESTARTSYS)
		return -EINTR;	/* the library retries with the time left */
	return rc;
}

/* Looks up the watched EQs (@ems has room for all), waits, lets go. */
static long ptl_eq_wait_ni(struct ptl_ni *ni, struct ptl_ioc_eq_wait *args,
			   const struct ptl_ioc_eq_watch *w,
			   struct ptl_eq_mem **ems)
{
	long rc = PTL_EQ_INVALID;
	u32 i, n;

	for (n = 0; n < args->count; n++) {
		ems[n] = ptl_eq_watch_get(ni, &w[n]);
		if (!ems[n]) {
			args->which = n;
			goto out;
		}
	}
	rc = ptl_eq_wait_on(ni, ems, w, args);
out:
	for (i = 0; i < n; i++)
		ptl_eq_mem_put(ems[i]);
	return rc;
}

static long ptl_eq_wait_watches(struct ptl_file *pf,
				struct ptl_ioc_eq_wait *args,
				const struct ptl_ioc_eq_watch *w)
{
	struct ptl_eq_mem *one, **ems = &one;
	struct ptl_ni *ni;
	long rc;

	ni = ptl_ni_lookup_any(pf, w[0].eq_handle);
	if (!ni)
		return PTL_EQ_INVALID;
	if (args->count > 1) {
		ems = kvmalloc_array(args->count, sizeof(*ems),
				     GFP_KERNEL_ACCOUNT);
		if (!ems) {
			ptl_ni_put(ni);
			return -ENOMEM;
		}
	}
	rc = ptl_eq_wait_ni(ni, args, w, ems);
	if (ems != &one)
		kvfree(ems);
	ptl_ni_put(ni);
	return rc;
}

long ptl_ioctl_eq_wait(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_eq_wait *args = arg;
	void __user *uwatches = u64_to_user_ptr(args->watches);
	struct ptl_ioc_eq_watch one, *w;
	long rc;

	if (args->reserved)
		return -EINVAL;
	args->which = 0;
	if (!args->count || args->count > PTL_EQ_WAIT_MAX)
		return PTL_EQ_INVALID;
	/*
	 * PtlEQWait and a PtlEQPoll of one EQ, a sleep per message: a
	 * constant-size copy, no allocation.
	 */
	if (args->count == 1) {
		if (copy_from_user(&one, uwatches, sizeof(one)))
			return -EFAULT;
		return ptl_eq_wait_watches(pf, args, &one);
	}
	/* Up to 64 Ki entries (512 KiB): kvmalloc, not kmalloc. */
	w = vmemdup_user(uwatches, (size_t)args->count * sizeof(*w));
	if (IS_ERR(w))
		return PTR_ERR(w);
	rc = ptl_eq_wait_watches(pf, args, w);
	kvfree(w);
	return rc;
}

/* ---- poll ---- */

/* True if some EQ of @ni holds events its reader has not taken. */
static bool ptl_eq_ni_readable(struct ptl_ni *ni)
{
	struct ptl_eq_mem *em;
	unsigned long id;

	xa_for_each(&ni->eq_maps, id, em) {
		if (ptl_eq_mem_next(em) != READ_ONCE(em->ctl->consumer_seq))
			return true;
	}
	return false;
}

/* Called after poll_wait(); the memory is RCU-freed. */
__poll_t ptl_eq_poll(struct ptl_file *pf)
{
	__poll_t mask = 0;
	u32 slot;

	rcu_read_lock();
	for (slot = 0; slot < PTL_MAX_INTERFACES && !mask; slot++) {
		struct ptl_ni *ni = rcu_dereference(pf->ni[slot]);

		if (ni && ptl_eq_ni_readable(ni))
			mask = EPOLLIN | EPOLLRDNORM;
	}
	rcu_read_unlock();
	return mask;
}
