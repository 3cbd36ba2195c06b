// SPDX-License-Identifier: GPL-2.0
/*
 * Portals interfaces of each network namespace and their pid spaces.
 *
 * Portals state is per network namespace, as TIPC's and WireGuard's is: a
 * process uses the instance of the namespace it opened /dev/portals in, so
 * two namespaces on one host are two Portals nodes (and a container is a
 * node of its own). Each namespace has PTL_MAX_INTERFACES interfaces;
 * interface 0 always exists (intra-node traffic, nid from the module
 * parameter in the initial namespace, 0 elsewhere until ptlctl binds it),
 * the others once ptlctl has bound them to a device.
 *
 * An interface's pid space is node-wide (contract 2): pids live in an
 * xarray, claimed atomically (xa_insert / xa_alloc), so two processes
 * racing for one pid cannot both win. Administrators may reserve pid
 * ranges for one uid (PTL_CMD_NEW_PIDRES): the well-known pids of a
 * service cannot then be squatted by another user.
 *
 * Lifetime: struct ptl_net is the namespace's generic storage. Open files
 * hold a reference on the namespace; NIs may outlive their file while a
 * transport still holds messages of theirs, but every binding is undone
 * when its device goes (which happens before this subsystem's exit runs),
 * failing those messages, so by ptl_net_exit() no NI is left except those
 * whose release work is queued: it is flushed there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "ptl_internal.h"

static unsigned int ptl_net_id __read_mostly;
static u32 ptl_init_net_nid;

/* A reserved pid range (under ptl_net.lock; read under RCU). */
struct ptl_pidres {
	struct list_head node;
	struct rcu_head rcu;
	u32 first, last;
	kuid_t uid;
};

struct ptl_net *ptl_net(const struct net *net)
{
	return net_generic(net, ptl_net_id);
}

static void ptl_iface_setup(struct ptl_net *pn, u32 index, u32 nid)
{
	struct ptl_iface *iface = &pn->ifaces[index];

	iface->pn = pn;
	iface->index = index;
	iface->nid = nid;
	iface->configured = index == 0;
	xa_init_flags(&iface->pids, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&iface->pidres);
}

static int __net_init ptl_net_init(struct net *net)
{
	struct ptl_net *pn = ptl_net(net);
	u32 i;

	pn->net = net;
	mutex_init(&pn->lock);
	for (i = 0; i < PTL_MAX_INTERFACES; i++)
		ptl_iface_setup(pn, i, net_eq(net, &init_net) ?
				ptl_init_net_nid : 0);
	return 0;
}

static void __net_exit ptl_net_exit(struct net *net)
{
	struct ptl_net *pn = ptl_net(net);
	struct ptl_pidres *r, *tmp;
	u32 i;

	/* Devices went first, and with them every binding. */
	ptl_ni_flush_releases();
	for (i = 0; i < PTL_MAX_INTERFACES; i++) {
		struct ptl_iface *iface = &pn->ifaces[i];

		WARN_ON(rcu_access_pointer(iface->binding));
		WARN_ON(!xa_empty(&iface->pids));
		xa_destroy(&iface->pids);
		list_for_each_entry_safe(r, tmp, &iface->pidres, node) {
			list_del(&r->node);
			kfree(r);
		}
	}
	mutex_destroy(&pn->lock);
}

static struct pernet_operations ptl_net_ops = {
	.init = ptl_net_init,
	.exit = ptl_net_exit,
	.id = &ptl_net_id,
	.size = sizeof(struct ptl_net),
};

int ptl_ifaces_init(u32 default_nid)
{
	ptl_init_net_nid = default_nid;
	return register_pernet_subsys(&ptl_net_ops);
}

void ptl_ifaces_exit(void)
{
	unregister_pernet_subsys(&ptl_net_ops);
}

/**
 * ptl_iface_get - interface @index of the namespace of @pn, if it exists
 * @pn: the namespace's Portals state
 * @index: 0 .. PTL_MAX_INTERFACES - 1
 *
 * Return: the interface, or NULL if out of range or never configured.
 */
struct ptl_iface *ptl_iface_get(struct ptl_net *pn, u32 index)
{
	struct ptl_iface *iface;

	if (index >= PTL_MAX_INTERFACES)
		return NULL;
	iface = &pn->ifaces[array_index_nospec(index, PTL_MAX_INTERFACES)];
	return READ_ONCE(iface->configured) ? iface : NULL;
}

/* The uid a reservation gives @pid to, if any (under RCU). */
static bool ptl_pid_reserved_for_other(struct ptl_iface *iface, u32 pid,
				       kuid_t uid)
{
	struct ptl_pidres *r;
	bool other = false;

	rcu_read_lock();
	list_for_each_entry_rcu(r, &iface->pidres, node) {
		if (pid >= r->first && pid <= r->last) {
			other = !uid_eq(r->uid, uid);
			break;
		}
	}
	rcu_read_unlock();
	return other;
}

/**
 * ptl_iface_claim_pid - take a Portals pid on @iface for @ni
 * @iface: the interface
 * @pid: the wanted pid, or PTL_PID_ANY for one from the ephemeral range
 * @ni: the owner, recorded for delivery lookups
 * @uid: the claimant's uid (for reserved ranges)
 * @trusted: a kernel client: reserved pids need no CAP_NET_ADMIN
 * @out_pid: the pid obtained
 *
 * Return: PTL_OK, or PTL_PID_INVALID when the pid is out of range, taken,
 * reserved for privileged services or for another uid, or the ephemeral
 * range is exhausted; PTL_NO_SPACE when memory runs out.
 */
int ptl_iface_claim_pid(struct ptl_iface *iface, u32 pid, struct ptl_ni *ni,
			kuid_t uid, bool trusted, u32 *out_pid)
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
	if ((pid < PTL_PID_RESERVED_END ||
	     ptl_pid_reserved_for_other(iface, pid, uid)) &&
	    !capable(CAP_NET_ADMIN))
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
	 * Only the struct is RCU-protected: ni->core is not read before the
	 * reference is taken.
	 */
	if (ni && !ptl_ni_tryget_active(ni))
		ni = NULL;
	rcu_read_unlock();
	return ni;
}

/* ---- pid reservations (netlink, CAP_NET_ADMIN) ---- */

/**
 * ptl_iface_reserve_pids - reserve [@first, @last] of @iface for @uid
 * @iface: the interface
 * @first: first pid
 * @last: last pid, >= @first
 * @uid: the only uid that may claim them without CAP_NET_ADMIN
 *
 * Return: 0, -EINVAL for a bad range, -EEXIST if it overlaps another,
 * -ENOMEM. Pids already held stay with their holders.
 */
int ptl_iface_reserve_pids(struct ptl_iface *iface, u32 first, u32 last,
			   kuid_t uid)
{
	struct ptl_net *pn = iface->pn;
	struct ptl_pidres *r, *n;
	int err = 0;

	if (first > last || last > PTL_PID_MAX)
		return -EINVAL;
	n = kzalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
	if (!n)
		return -ENOMEM;
	n->first = first;
	n->last = last;
	n->uid = uid;
	mutex_lock(&pn->lock);
	list_for_each_entry(r, &iface->pidres, node) {
		if (first <= r->last && last >= r->first) {
			err = -EEXIST;
			break;
		}
	}
	if (!err)
		list_add_tail_rcu(&n->node, &iface->pidres);
	mutex_unlock(&pn->lock);
	if (err)
		kfree(n);
	return err;
}

/* Removes the reservation that starts at @first; -ENOENT if none. */
int ptl_iface_unreserve_pids(struct ptl_iface *iface, u32 first)
{
	struct ptl_net *pn = iface->pn;
	struct ptl_pidres *r;
	int err = -ENOENT;

	mutex_lock(&pn->lock);
	list_for_each_entry(r, &iface->pidres, node) {
		if (r->first == first) {
			list_del_rcu(&r->node);
			kfree_rcu(r, rcu);
			err = 0;
			break;
		}
	}
	mutex_unlock(&pn->lock);
	return err;
}

/*
 * The @idx-th reservation of @iface, for a netlink dump that resumes by
 * index (there are few). False past the last.
 */
bool ptl_iface_pidres_at(struct ptl_iface *iface, int idx, u32 *first,
			 u32 *last, kuid_t *uid)
{
	struct ptl_pidres *r;
	bool found = false;

	mutex_lock(&iface->pn->lock);
	list_for_each_entry(r, &iface->pidres, node) {
		if (idx-- == 0) {
			*first = r->first;
			*last = r->last;
			*uid = r->uid;
			found = true;
			break;
		}
	}
	mutex_unlock(&iface->pn->lock);
	return found;
}
