// SPDX-License-Identifier: GPL-2.0
/*
 * Network interfaces of one process: PtlNIInit, PtlNIFini and the identity
 * calls.
 *
 * Lifetime: an NI is published in its file's slot table with RCU and holds
 * one reference for being published. Every ioctl that works on an NI looks
 * it up under rcu_read_lock() and takes a reference, so PtlNIFini racing
 * with another thread's call on the same NI only unpublishes it; the last
 * reference releases the pid and frees the NI. Only struct ptl_ni is
 * RCU-freed: the core NI behind ni->core is destroyed at the last put, so
 * nothing reads it before holding a reference (lookups compare the NI
 * handle cached in struct ptl_ni instead).
 *
 * An NI also holds a reference on its file's wait queue (struct ptl_wake):
 * the core's eq_notify hook runs in whatever process posted the event and
 * may only touch memory that the NI reference it holds keeps alive.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/nospec.h>
#include <linux/stddef.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

/*
 * struct ptl_ioc_limits mirrors ptl_ni_limits_t field by field with fixed
 * widths; the build fails if the two ever differ.
 */
#define PTL_LIMITS_SAME_FIELD(f)					\
	BUILD_BUG_ON(offsetof(struct ptl_ioc_limits, f) !=		\
		     offsetof(ptl_ni_limits_t, f))

static void ptl_limits_check_layout(void)
{
	BUILD_BUG_ON(sizeof(struct ptl_ioc_limits) != sizeof(ptl_ni_limits_t));
	PTL_LIMITS_SAME_FIELD(max_mes);
	PTL_LIMITS_SAME_FIELD(max_mds);
	PTL_LIMITS_SAME_FIELD(max_eqs);
	PTL_LIMITS_SAME_FIELD(max_ac_index);
	PTL_LIMITS_SAME_FIELD(max_pt_index);
	PTL_LIMITS_SAME_FIELD(max_md_iovecs);
	PTL_LIMITS_SAME_FIELD(max_me_list);
	PTL_LIMITS_SAME_FIELD(max_getput_md);
}

/* ptlc_ops.charge: the core's allocations count against max_user_kmem. */
static bool ptl_ni_charge(void *glue, long bytes)
{
	struct ptl_ni *ni = glue;

	return ptl_user_charge_kmem(&ni->acct, bytes);
}

static const struct ptlc_ops ptl_core_ops = {
	.md_release = ptl_md_release_hook,
	.eq_notify = ptl_eq_notify,
	.charge = ptl_ni_charge,
	.mem_reusable = ptl_mem_reusable_hook,
};

struct ptl_wake *ptl_wake_alloc(void)
{
	struct ptl_wake *wake = kzalloc(sizeof(*wake), GFP_KERNEL_ACCOUNT);

	if (!wake)
		return NULL;
	kref_init(&wake->ref);
	init_waitqueue_head(&wake->wq);
	return wake;
}

static void ptl_wake_free(struct kref *ref)
{
	kfree(container_of(ref, struct ptl_wake, ref));
}

void ptl_wake_put(struct ptl_wake *wake)
{
	kref_put(&wake->ref, ptl_wake_free);
}

/*
 * The last put of an NI can come from a transport completing a message in
 * softirq (the process is gone, its messages were still in flight); the
 * release sleeps, so it runs from this workqueue then.
 */
static struct workqueue_struct *ptl_ni_wq;

static void ptl_ni_free_rcu(struct rcu_head *head)
{
	struct ptl_ni *ni = container_of(head, struct ptl_ni, rcu);

	put_pid(ni->owner);
	kfree(ni);
}

/*
 * The last reference is gone, so no ioctl and no intra-node message uses
 * the NI: every message was finalized before its sender dropped its
 * reference, as ptlc_ni_destroy() requires. Runs in process context.
 */
static void ptl_ni_release(struct kref *ref)
{
	struct ptl_ni *ni = container_of(ref, struct ptl_ni, ref);

	ptlc_ni_destroy(ni->core);	/* MDs go back to the pin cache */
	ptl_mem_ni_release(ni);		/* its spare MD bookkeeping */
	ptl_pincache_ni_release(ni);	/* the last NI of an mm empties it */
	ptl_eq_ni_teardown(ni);		/* the core no longer writes rings */
	ptl_iface_release_pid(ni->iface, ni->pid);
	atomic_dec(&ni->iface->nis);
	ptl_user_del_ni(&ni->acct);
	ptl_acct_release(&ni->acct);
	ptl_wake_put(ni->wake);
	ptl_move_ni_release(ni);
	atomic_long_dec(&ptl_stats.nis);
	/* A kernel client's EQs, and its ptl_kni_fini() may return now. */
	if (ni->kni)
		ptl_kapi_ni_release(ni);
	call_rcu(&ni->rcu, ptl_ni_free_rcu);
}

void ptl_ni_put(struct ptl_ni *ni)
{
	kref_put(&ni->ref, ptl_ni_release);
}

static void ptl_ni_release_work(struct work_struct *work)
{
	ptl_ni_put(container_of(work, struct ptl_ni, release_work));
}

/* Any context: a last put is finished by ptl_ni_wq. */
void ptl_ni_put_async(struct ptl_ni *ni)
{
	if (!refcount_dec_not_one(&ni->ref.refcount))
		queue_work(ptl_ni_wq, &ni->release_work);
}

/* Waits for every release queued so far. */
void ptl_ni_flush_releases(void)
{
	flush_workqueue(ptl_ni_wq);
}

int ptl_ni_init(void)
{
	ptl_ni_wq = alloc_workqueue("ptl_ni", WQ_UNBOUND, 0);
	return ptl_ni_wq ? 0 : -ENOMEM;
}

void ptl_ni_exit(void)
{
	destroy_workqueue(ptl_ni_wq);
}

/* The file slot a handle names, or -1; safe to index pf->ni[] with. */
static int ptl_ni_slot_of(ptl_handle_any_t h)
{
	int slot = ptlc_handle_slot(h);

	if (slot < 0 || slot >= PTL_MAX_INTERFACES)
		return -1;
	return array_index_nospec(slot, PTL_MAX_INTERFACES);
}

/*
 * The NI in the slot that @h names, referenced; with @whole_handle, only if
 * @h is that NI's own handle. Under RCU only struct ptl_ni is safe to read
 * (a concurrent PtlNIFini may be destroying ni->core), so the handle is
 * checked against the copy cached in it.
 */
static struct ptl_ni *ptl_ni_get(struct ptl_file *pf, ptl_handle_any_t h,
				 bool whole_handle)
{
	struct ptl_ni *ni;
	int slot;

	slot = ptl_ni_slot_of(h);
	if (slot < 0)
		return NULL;
	rcu_read_lock();
	ni = rcu_dereference(pf->ni[slot]);
	if (ni && ((whole_handle && READ_ONCE(ni->handle) != h) ||
		   !kref_get_unless_zero(&ni->ref)))
		ni = NULL;
	rcu_read_unlock();
	return ni;
}

/* The NI that the object handle @h belongs to; the core checks @h itself. */
struct ptl_ni *ptl_ni_lookup_any(struct ptl_file *pf, ptl_handle_any_t h)
{
	return ptl_ni_get(pf, h, false);
}

/* The NI named by the NI handle @handle. */
struct ptl_ni *ptl_ni_lookup(struct ptl_file *pf, ptl_handle_ni_t handle)
{
	return ptl_ni_get(pf, handle, true);
}

static void ptl_ni_fill_init_reply(const struct ptl_ni *ni,
				   struct ptl_ioc_ni_init *args)
{
	ptl_limits_check_layout();
	ptlc_ni_limits(ni->core, (ptl_ni_limits_t *)&args->actual);
	args->ni_handle = ni->handle;
	args->nid = ni->nid;
	args->out_pid = ni->pid;
}

/**
 * ptl_ni_new - build an NI holding a pid, not yet active
 * @p: what it is (interface, pid, identity, owner's accounting, hooks)
 * @out: the NI, with one reference: the caller publishes it and sets
 *	ni->active, or drops it with ptl_ni_put()
 *
 * Shared by PtlNIInit (ptl_ni_create) and kernel clients (ptl_kapi.c).
 * Return: a Portals code.
 */
int ptl_ni_new(const struct ptl_ni_params *p, struct ptl_ni **out)
{
	struct ptl_iface *iface = p->iface;
	struct ptlc_ni_config cfg = {};
	struct ptl_ni *ni;
	int rc;

	/* Each NI holds a pid: max_user_nis keeps one user from taking all. */
	if (!ptl_user_add_ni(p->acct))
		return PTL_NO_SPACE;
	ni = kzalloc(sizeof(*ni), GFP_KERNEL_ACCOUNT);
	if (!ni) {
		ptl_user_del_ni(p->acct);
		return PTL_NO_SPACE;
	}
	kref_init(&ni->ref);
	INIT_WORK(&ni->release_work, ptl_ni_release_work);
	ni->iface = iface;
	ni->slot = iface->index;
	ptl_acct_copy(&ni->acct, p->acct);
	spin_lock_init(&ni->swap_lock);
	xa_init_flags(&ni->eq_maps, XA_FLAGS_ALLOC1);

	/* The nid cannot change while the interface counts an NI. */
	mutex_lock(&iface->pn->lock);
	rc = ptl_iface_claim_pid(iface, p->pid, ni, p->uid, p->trusted,
				 &ni->pid);
	if (rc == PTL_OK) {
		atomic_inc(&iface->nis);
		cfg.nid = iface->nid;
	}
	mutex_unlock(&iface->pn->lock);
	if (rc != PTL_OK)
		goto err_free;

	cfg.slot = ni->slot;
	cfg.pid = ni->pid;
	cfg.uid = from_kuid_munged(&init_user_ns, p->uid);
	cfg.jid = p->jid;
	cfg.desired = p->desired;
	cfg.ops = p->ops;
	cfg.glue = ni;
	rc = ptlc_ni_create(&cfg, &ni->core);
	if (rc != PTL_OK)
		goto err_pid;
	ni->handle = ptlc_ni_handle(ni->core);
	ni->nid = cfg.nid;
	kref_get(&p->wake->ref);
	ni->wake = p->wake;
	atomic_long_inc(&ptl_stats.nis);
	*out = ni;
	return PTL_OK;

err_pid:
	ptl_iface_release_pid(iface, ni->pid);
	atomic_dec(&iface->nis);
err_free:
	ptl_user_del_ni(&ni->acct);
	ptl_acct_release(&ni->acct);
	/* A sender may have seen it (inactive) in the pid table. */
	call_rcu(&ni->rcu, ptl_ni_free_rcu);
	return rc;
}

static int ptl_ni_create(struct ptl_file *pf, struct ptl_iface *iface,
			 struct ptl_ioc_ni_init *args)
{
	struct ptl_ni_params p = {
		.iface = iface,
		.pid = args->pid,
		.acct = &pf->acct,
		.uid = pf->euid,
		/*
		 * Job ids come only from a trusted launcher. Without one the
		 * NI is in no job: PTL_JID_NONE, which no pid can equal, so
		 * no process can pass an ACL entry naming a job by picking a
		 * pid (decisions.md).
		 */
		.jid = pf->jid_set ? pf->jid : PTL_JID_NONE,
		.ops = &ptl_core_ops,
		.wake = pf->wake,
	};
	struct ptl_ni *ni;
	int rc;

	if (args->flags & PTL_NI_INIT_DESIRED)
		p.desired = (const ptl_ni_limits_t *)&args->desired;
	rc = ptl_ni_new(&p, &ni);
	if (rc != PTL_OK)
		return rc;
	ni->owner = get_pid(task_tgid(current));
	get_task_comm(ni->comm, current);
	rcu_assign_pointer(pf->ni[ni->slot], ni);
	/* Intra-node senders find it by pid from now on. */
	smp_store_release(&ni->active, true);
	ptl_ni_fill_init_reply(ni, args);
	return PTL_OK;
}

long ptl_ioctl_ni_init(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_ni_init *args = arg;
	struct ptl_iface *iface;
	struct ptl_ni *ni;
	long rc;

	if (args->reserved)
		return -EINVAL;
	if (args->iface < PTL_NALTYPE_LINUX0 ||
	    args->iface >= PTL_NALTYPE_LINUX0 + PTL_MAX_INTERFACES)
		return PTL_IFACE_INVALID;
	iface = ptl_iface_get(pf->pn, args->iface - PTL_NALTYPE_LINUX0);
	if (!iface)
		return PTL_IFACE_INVALID;

	mutex_lock(&pf->lock);
	ni = rcu_dereference_protected(pf->ni[iface->index],
				       lockdep_is_held(&pf->lock));
	if (ni) {
		/* Re-initialising an open interface returns the same NI. */
		ptl_ni_fill_init_reply(ni, args);
		rc = PTL_OK;
	} else {
		rc = ptl_ni_create(pf, iface, args);
	}
	mutex_unlock(&pf->lock);
	return rc;
}

/* Unpublish the NI in @slot; the caller holds pf->lock. */
static struct ptl_ni *ptl_ni_unpublish(struct ptl_file *pf, u32 slot)
{
	struct ptl_ni *ni;

	ni = rcu_dereference_protected(pf->ni[slot],
				       lockdep_is_held(&pf->lock));
	RCU_INIT_POINTER(pf->ni[slot], NULL);
	if (ni) {
		/* Threads waiting on its EQs give up, senders skip it. */
		WRITE_ONCE(ni->active, false);
		wake_up_all(&ni->wake->wq);
	}
	return ni;
}

long ptl_ioctl_ni_fini(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_ni_fini *args = arg;
	struct ptl_ni *ni;
	int slot;

	if (args->reserved)
		return -EINVAL;
	slot = ptl_ni_slot_of(args->ni_handle);
	if (slot < 0)
		return PTL_NI_INVALID;
	mutex_lock(&pf->lock);
	ni = rcu_dereference_protected(pf->ni[slot],
				       lockdep_is_held(&pf->lock));
	if (ni && ni->handle == args->ni_handle)
		ni = ptl_ni_unpublish(pf, slot);
	else
		ni = NULL;
	mutex_unlock(&pf->lock);
	if (!ni)
		return PTL_NI_INVALID;
	ptl_remote_ni_closing(ni);	/* messages a silent peer left open */
	ptl_ni_put(ni);
	ptl_mem_flush();	/* unpinned on return unless a sender holds it */
	return PTL_OK;
}

long ptl_ioctl_ni_identity(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_ni_identity *args = arg;
	ptl_process_id_t id;
	struct ptl_ni *ni;

	if (args->reserved)
		return -EINVAL;
	ni = ptl_ni_lookup(pf, args->ni_handle);
	if (!ni)
		return PTL_NI_INVALID;
	ptlc_ni_id(ni->core, &id);
	args->nid = id.nid;
	args->pid = id.pid;
	args->uid = ptlc_ni_uid(ni->core);
	args->jid = ptlc_ni_jid(ni->core);
	ptl_ni_put(ni);
	return PTL_OK;
}

/*
 * PTL_IOC_SET_JID: only a trusted launcher sets the job id, and only
 * before the NIs that will carry it exist.
 */
long ptl_ioctl_set_jid(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_set_jid *args = arg;
	long rc = PTL_OK;
	u32 slot;

	if (args->reserved)
		return -EINVAL;
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	/* The wildcard and "no job" are not jobs a process can be in. */
	if (args->jid == PTL_JID_ANY || args->jid == PTL_JID_NONE)
		return -EINVAL;
	mutex_lock(&pf->lock);
	for (slot = 0; slot < PTL_MAX_INTERFACES; slot++) {
		if (rcu_access_pointer(pf->ni[slot]))
			rc = -EBUSY;
	}
	if (!rc) {
		pf->jid = args->jid;
		pf->jid_set = true;
	}
	mutex_unlock(&pf->lock);
	return rc;
}

/* The file is going away: drop every NI it still holds. */
void ptl_file_release_nis(struct ptl_file *pf)
{
	u32 slot;

	for (slot = 0; slot < PTL_MAX_INTERFACES; slot++) {
		struct ptl_ni *ni;

		mutex_lock(&pf->lock);
		ni = ptl_ni_unpublish(pf, slot);
		mutex_unlock(&pf->lock);
		if (ni) {
			/* Its pid is free when the process is gone. */
			ptl_remote_ni_closing(ni);
			ptl_ni_put(ni);
		}
	}
}
