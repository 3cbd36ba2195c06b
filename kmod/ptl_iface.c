// SPDX-License-Identifier: GPL-2.0
/*
 * Interfaces of this node and their node-wide Portals pid spaces.
 *
 * Until link drivers register interfaces, interface 0 always exists with
 * the nid given as a module parameter. Pids are kept in an xarray per
 * interface: claiming is atomic (xa_insert / xa_alloc), so two processes
 * racing for one pid cannot both win.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/nospec.h>
#include <linux/slab.h>

#include "ptl_internal.h"

static struct ptl_iface *ptl_ifaces[PTL_MAX_INTERFACES];

int ptl_ifaces_init(u32 default_nid)
{
	struct ptl_iface *iface;

	iface = kzalloc(sizeof(*iface), GFP_KERNEL);
	if (!iface)
		return -ENOMEM;
	iface->index = 0;
	iface->nid = default_nid;
	xa_init_flags(&iface->pids, XA_FLAGS_ALLOC);
	ptl_ifaces[0] = iface;
	return 0;
}

void ptl_ifaces_exit(void)
{
	int i;

	for (i = 0; i < PTL_MAX_INTERFACES; i++) {
		struct ptl_iface *iface = ptl_ifaces[i];

		if (!iface)
			continue;
		/* Every open file pins the module, so no pid can remain. */
		WARN_ON(!xa_empty(&iface->pids));
		xa_destroy(&iface->pids);
		kfree(iface);
		ptl_ifaces[i] = NULL;
	}
}

struct ptl_iface *ptl_iface_get(u32 index)
{
	if (index >= PTL_MAX_INTERFACES)
		return NULL;
	return ptl_ifaces[array_index_nospec(index, PTL_MAX_INTERFACES)];
}

/**
 * ptl_iface_claim_pid - take a Portals pid on @iface for @ni
 * @iface: the interface
 * @pid: the wanted pid, or PTL_PID_ANY for one from the ephemeral range
 * @ni: the owner, recorded for delivery lookups
 * @out_pid: the pid obtained
 *
 * Return: PTL_OK, or PTL_PID_INVALID when the pid is out of range, taken,
 * reserved for privileged services, or the ephemeral range is exhausted;
 * PTL_NO_SPACE when memory runs out.
 */
int ptl_iface_claim_pid(struct ptl_iface *iface, u32 pid, struct ptl_ni *ni,
			u32 *out_pid)
{
	struct xa_limit ephemeral = XA_LIMIT(PTL_PID_EPHEMERAL_START,
					     PTL_PID_MAX);
	int err;

	if (pid == PTL_PID_ANY) {
		err = xa_alloc(&iface->pids, out_pid, ni, ephemeral,
			       GFP_KERNEL_ACCOUNT);
		if (err == -ENOMEM)
			return PTL_NO_SPACE;
		return err ? PTL_PID_INVALID : PTL_OK;
	}
	if (pid > PTL_PID_MAX)
		return PTL_PID_INVALID;
	if (pid < PTL_PID_RESERVED_END && !capable(CAP_NET_ADMIN))
		return PTL_PID_INVALID;
	err = xa_insert(&iface->pids, pid, ni, GFP_KERNEL_ACCOUNT);
	if (err == -ENOMEM)
		return PTL_NO_SPACE;
	if (err)
		return PTL_PID_INVALID;
	*out_pid = pid;
	return PTL_OK;
}

void ptl_iface_release_pid(struct ptl_iface *iface, u32 pid)
{
	xa_erase(&iface->pids, pid);
}

/**
 * ptl_iface_find_ni - the NI holding @pid on @iface, for delivery
 * @iface: the interface
 * @pid: the target's Portals pid
 *
 * Return: the NI with a reference taken, or NULL if no active NI holds the
 * pid. Any context.
 */
struct ptl_ni *ptl_iface_find_ni(struct ptl_iface *iface, u32 pid)
{
	struct ptl_ni *ni;

	rcu_read_lock();
	ni = xa_load(&iface->pids, pid);
	/*
	 * Pairs with the release in ptl_ni_create(): ni->core is set. Only
	 * the struct is RCU-protected: ni->core is not read before the
	 * reference is taken.
	 */
	if (ni && (!smp_load_acquire(&ni->active) ||
		   !kref_get_unless_zero(&ni->ref)))
		ni = NULL;
	rcu_read_unlock();
	return ni;
}
