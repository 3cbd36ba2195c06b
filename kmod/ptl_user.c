// SPDX-License-Identifier: GPL-2.0
/*
 * What one user may make ptl.ko hold.
 *
 * Every unprivileged caller is assumed hostile, and descriptors are cheap:
 * without a cap per user, one user could take every Portals pid of an
 * interface (one NI per pid) or fill the kernel with MEs, MDs and EQs
 * that pin no page and so escape RLIMIT_MEMLOCK. Two caps per uid, shared
 * by all of that user's processes, as the kernel caps pipe buffers and
 * inotify instances per user:
 *
 *   max_user_nis    NIs (= pids held) of one user, all interfaces.
 *   max_user_kmem   bytes of kernel memory for the user's Portals objects:
 *                   everything the core allocates for its NIs, plus the
 *                   glue's per-MD bookkeeping (the page array, segment
 *                   table), whether or not the MD pins a page.
 *
 * Both answer PTL_NO_SPACE when exceeded. The same memory is also
 * allocated with __GFP_ACCOUNT, so it is charged to the caller's memory
 * cgroup as well: the cap bounds what a user holds across cgroups, the
 * memcg bounds what a container holds. Pinned pages and EQ rings stay
 * under RLIMIT_MEMLOCK (ptl_mem.c), as RDMA does.
 *
 * A file opened with CAP_SYS_RESOURCE is counted but not capped (the
 * caps are about fairness between users, which that capability
 * overrides everywhere else in the kernel too). The parameters are
 * writable at run time; lowering one refuses new objects, never takes
 * existing ones away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "ptl_internal.h"

/* Pids a user may hold: many ranks per node, far from the 64 Ki space. */
#define PTL_USER_NIS_DEFAULT	1024
/* The default byte cap is this fraction of RAM (at module load). */
#define PTL_USER_KMEM_RAM_SHIFT	4

static uint max_user_nis = PTL_USER_NIS_DEFAULT;
module_param(max_user_nis, uint, 0644);
MODULE_PARM_DESC(max_user_nis,
		 "NIs (Portals pids) one user may hold (default 1024)");

static ulong max_user_kmem;
module_param(max_user_kmem, ulong, 0644);
MODULE_PARM_DESC(max_user_kmem,
		 "Bytes of kernel memory one user's Portals objects may use (default: 1/16 of RAM)");

/* uid -> struct ptl_user; created at first open, freed at last put. */
static DEFINE_XARRAY(ptl_users);
static DEFINE_MUTEX(ptl_users_lock);

void ptl_users_init(void)
{
	if (!max_user_kmem)
		max_user_kmem = (totalram_pages() << PAGE_SHIFT) >>
				PTL_USER_KMEM_RAM_SHIFT;
}

void ptl_users_exit(void)
{
	/* Every file holds its user and pins the module. */
	WARN_ON(!xa_empty(&ptl_users));
	xa_destroy(&ptl_users);
}

/**
 * ptl_user_get - the accounting of @uid, created on first use
 * @uid: the user, as the opener's credentials say
 *
 * Return: a referenced struct ptl_user, or NULL without memory.
 * Process context.
 */
static struct ptl_user *ptl_user_get(kuid_t uid)
{
	unsigned long key = from_kuid(&init_user_ns, uid);
	struct ptl_user *u;

	mutex_lock(&ptl_users_lock);
	u = xa_load(&ptl_users, key);
	if (u) {
		refcount_inc(&u->ref);
		goto out;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		goto out;
	refcount_set(&u->ref, 1);
	u->uid = uid;
	if (xa_err(xa_store(&ptl_users, key, u, GFP_KERNEL_ACCOUNT))) {
		kfree(u);
		u = NULL;
	}
out:
	mutex_unlock(&ptl_users_lock);
	return u;
}

static void ptl_user_put(struct ptl_user *u)
{
	if (!refcount_dec_and_mutex_lock(&u->ref, &ptl_users_lock))
		return;
	xa_erase(&ptl_users, from_kuid(&init_user_ns, u->uid));
	mutex_unlock(&ptl_users_lock);
	WARN_ON(atomic_long_read(&u->nis) || atomic_long_read(&u->kmem));
	kfree(u);
}

/* Adds @n to @count unless that passes @limit; @capped false: no limit. */
static bool ptl_user_add(atomic_long_t *count, long n, unsigned long limit,
			 bool capped)
{
	long now = atomic_long_add_return(n, count);

	if (capped && (unsigned long)now > limit) {
		atomic_long_sub(n, count);
		return false;
	}
	return true;
}

/**
 * ptl_user_charge_kmem - account @bytes of kernel memory to @acct's user
 * @acct: whose; NULL for kernel-owned objects (never capped)
 * @bytes: > 0 to charge (may be refused), < 0 to return (never fails)
 *
 * Return: false if the charge would pass max_user_kmem. Any context for
 * returns; charges come from process context.
 */
bool ptl_user_charge_kmem(const struct ptl_acct *acct, long bytes)
{
	if (!acct || !acct->user)
		return true;
	if (bytes <= 0) {
		atomic_long_add(bytes, &acct->user->kmem);
		return true;
	}
	return ptl_user_add(&acct->user->kmem, bytes,
			    READ_ONCE(max_user_kmem), acct->capped);
}

/* One more NI (pid) for @acct's user; false past max_user_nis. */
bool ptl_user_add_ni(const struct ptl_acct *acct)
{
	if (!acct->user)
		return true;
	return ptl_user_add(&acct->user->nis, 1, READ_ONCE(max_user_nis),
			    acct->capped);
}

void ptl_user_del_ni(const struct ptl_acct *acct)
{
	if (acct->user)
		atomic_long_dec(&acct->user->nis);
}

/**
 * ptl_acct_init - the accounting of an open file
 * @acct: filled
 * @file: the open file; its credentials decide, not the caller's at
 *	each call (a descriptor passed on keeps its identity)
 *
 * Return: 0 or -ENOMEM.
 */
int ptl_acct_init(struct ptl_acct *acct, const struct file *file)
{
	acct->user = ptl_user_get(file->f_cred->euid);
	if (!acct->user)
		return -ENOMEM;
	acct->capped = !file_ns_capable(file, &init_user_ns,
					CAP_SYS_RESOURCE);
	return 0;
}

/* @dst accounts to the same user as @src, with a reference of its own. */
void ptl_acct_copy(struct ptl_acct *dst, const struct ptl_acct *src)
{
	*dst = *src;
	if (dst->user)
		refcount_inc(&dst->user->ref);
}

void ptl_acct_release(struct ptl_acct *acct)
{
	if (acct->user)
		ptl_user_put(acct->user);
	acct->user = NULL;
}
