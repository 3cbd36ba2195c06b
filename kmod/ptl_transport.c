// SPDX-License-Identifier: GPL-2.0
/*
 * Transports and bindings: the interface of include/ptl/transport.h, seen
 * from the library.
 *
 * A transport module registers a struct ptl_transport (version checked).
 * ptlctl binds a Portals interface to a network device through it
 * (PTL_CMD_SET_IFACE): the binding holds a reference on the transport's
 * module and on the device, and is published in the interface with RCU.
 * Senders take a reference on the binding for the duration of ops->send,
 * so unbinding first unpublishes it, waits until no sender is inside the
 * transport, and only then asks the transport to fail what it holds and
 * free its state.
 *
 * Binding changes run under RTNL: netlink takes it, and the netdevice
 * notifier runs under it. The notifier unbinds a device being unregistered
 * (ip link del, its namespace going away, module unload of its driver) or
 * one that changed type, refuses a type change while bound, and hands an
 * MTU change to the transport, which refuses one its frames cannot live
 * with (ptl_netdev_event).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include <ptl/transport.h>

#include "ptl_internal.h"

static LIST_HEAD(ptl_transports);
static DEFINE_MUTEX(ptl_transports_lock);

int ptl_transport_register(struct ptl_transport *t)
{
	struct ptl_transport *other;
	int err = 0;

	if (t->version != PTL_TRANSPORT_VERSION) {
		pr_err("transport %s speaks interface version %u, not %u\n",
		       t->name, t->version, PTL_TRANSPORT_VERSION);
		return -EINVAL;
	}
	mutex_lock(&ptl_transports_lock);
	list_for_each_entry(other, &ptl_transports, list) {
		if (!strcmp(other->name, t->name))
			err = -EEXIST;
	}
	if (!err)
		list_add_tail(&t->list, &ptl_transports);
	mutex_unlock(&ptl_transports_lock);
	if (!err)
		pr_info("transport %s registered\n", t->name);
	return err;
}
EXPORT_SYMBOL_NS_GPL(ptl_transport_register, PORTALS);

/* Bindings hold the transport's module: none can exist any more. */
void ptl_transport_unregister(struct ptl_transport *t)
{
	mutex_lock(&ptl_transports_lock);
	list_del(&t->list);
	mutex_unlock(&ptl_transports_lock);
}
EXPORT_SYMBOL_NS_GPL(ptl_transport_unregister, PORTALS);

/* The transport called @name, with a module reference; NULL if none. */
static struct ptl_transport *ptl_transport_get(const char *name)
{
	struct ptl_transport *t, *found = NULL;

	mutex_lock(&ptl_transports_lock);
	list_for_each_entry(t, &ptl_transports, list) {
		if (!strcmp(t->name, name) && try_module_get(t->owner)) {
			found = t;
			break;
		}
	}
	mutex_unlock(&ptl_transports_lock);
	return found;
}

/* ---- accessors for transports ---- */

void ptl_binding_set_priv(struct ptl_binding *b, void *priv)
{
	b->priv = priv;
}
EXPORT_SYMBOL_NS_GPL(ptl_binding_set_priv, PORTALS);

void *ptl_binding_priv(const struct ptl_binding *b)
{
	return b->priv;
}
EXPORT_SYMBOL_NS_GPL(ptl_binding_priv, PORTALS);

u32 ptl_binding_nid(const struct ptl_binding *b)
{
	return READ_ONCE(b->iface->nid);
}
EXPORT_SYMBOL_NS_GPL(ptl_binding_nid, PORTALS);

u32 ptl_binding_iface(const struct ptl_binding *b)
{
	return b->iface->index;
}
EXPORT_SYMBOL_NS_GPL(ptl_binding_iface, PORTALS);

struct net *ptl_binding_net(const struct ptl_binding *b)
{
	return b->iface->pn->net;
}
EXPORT_SYMBOL_NS_GPL(ptl_binding_net, PORTALS);

/* ---- senders ---- */

/* The binding of @iface with a sender's reference, or NULL if unbound. */
struct ptl_binding *ptl_binding_get(struct ptl_iface *iface)
{
	struct ptl_binding *b;

	rcu_read_lock();
	b = rcu_dereference(iface->binding);
	if (b && !refcount_inc_not_zero(&b->users))
		b = NULL;
	rcu_read_unlock();
	return b;
}

void ptl_binding_put(struct ptl_binding *b)
{
	if (refcount_dec_and_test(&b->users))
		complete(&b->idle);
}

/* ---- bind and unbind (RTNL) ---- */

/* The first IPv4 address of @dev in host order, or 0. */
static u32 ptl_dev_ipv4_nid(struct net_device *dev)
{
	struct in_device *in_dev = __in_dev_get_rtnl(dev);
	const struct in_ifaddr *ifa;

	if (!in_dev)
		return 0;
	in_dev_for_each_ifa_rtnl(ifa, in_dev)
		return ntohl(ifa->ifa_local);
	return 0;
}

/* Sets the nid of @iface; refused while NIs carry the old one. */
int ptl_iface_set_nid(struct ptl_iface *iface, u32 nid,
			     struct netlink_ext_ack *extack)
{
	int err = 0;

	if (nid == PTL_NID_ANY || !nid) {
		NL_SET_ERR_MSG(extack, "that nid cannot name a node");
		return -EINVAL;
	}
	mutex_lock(&iface->pn->lock);
	if (nid != iface->nid && atomic_read(&iface->nis)) {
		NL_SET_ERR_MSG(extack,
			       "NIs are open with the old nid: close them first");
		err = -EBUSY;
	} else {
		WRITE_ONCE(iface->nid, nid);
		WRITE_ONCE(iface->configured, true);
	}
	mutex_unlock(&iface->pn->lock);
	return err;
}

/**
 * ptl_bind - bind @iface to @dev through transport @name
 * @iface: the Portals interface (not bound)
 * @dev: the network device, in the interface's namespace
 * @name: transport name
 * @cfg: settings; cfg->nid 0 means "the device's IPv4 address"
 * @extack: for error messages
 *
 * Return: 0 or a negative errno. Called under RTNL.
 */
int ptl_bind(struct ptl_iface *iface, struct net_device *dev,
	     const char *name, struct ptl_bind_config *cfg,
	     struct netlink_ext_ack *extack)
{
	struct ptl_transport *t;
	struct ptl_binding *b;
	int err;

	ASSERT_RTNL();
	if (rtnl_dereference(iface->binding)) {
		NL_SET_ERR_MSG(extack, "interface already bound: unbind it first");
		return -EBUSY;
	}
	if (!cfg->nid)
		cfg->nid = ptl_dev_ipv4_nid(dev);
	if (!cfg->nid) {
		NL_SET_ERR_MSG(extack,
			       "the device has no IPv4 address: give a nid");
		return -EADDRNOTAVAIL;
	}
	t = ptl_transport_get(name);
	if (!t) {
		NL_SET_ERR_MSG(extack, "no such transport: is its module loaded?");
		return -ENOENT;
	}
	err = -EOPNOTSUPP;
	if (cfg->auth_key && !(t->features & PTL_TRANSPORT_F_AUTH)) {
		NL_SET_ERR_MSG(extack,
			       "this transport cannot authenticate frames: bind without a key");
		goto err_module;
	}
	err = -ENOMEM;
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		goto err_module;
	err = ptl_iface_set_nid(iface, cfg->nid, extack);
	if (err)
		goto err_free;
	b->iface = iface;
	b->t = t;
	b->dev = dev;
	refcount_set(&b->users, 1);
	init_completion(&b->idle);
	netdev_hold(dev, &b->dev_tracker, GFP_KERNEL);
	err = t->ops->bind(b, dev, cfg, extack);
	if (err)
		goto err_dev;
	rcu_assign_pointer(iface->binding, b);
	pr_info("interface %u of netns %u bound to %s via %s, nid %u\n",
		iface->index, iface->pn->net->ns.inum, netdev_name(dev),
		t->name, cfg->nid);
	return 0;

err_dev:
	netdev_put(dev, &b->dev_tracker);
err_free:
	kfree(b);
err_module:
	module_put(t->owner);
	return err;
}

/**
 * ptl_unbind - undo ptl_bind(): operations in flight on @iface fail
 * @iface: the interface
 *
 * Return: 0, or -ENOENT if it was not bound. Called under RTNL.
 */
int ptl_unbind(struct ptl_iface *iface)
{
	struct ptl_binding *b = rtnl_dereference(iface->binding);
	struct ptl_transport *t;

	ASSERT_RTNL();
	if (!b)
		return -ENOENT;
	t = b->t;
	RCU_INIT_POINTER(iface->binding, NULL);
	/* No new sender can find it; wait for those inside ops->send. */
	ptl_binding_put(b);
	wait_for_completion(&b->idle);
	t->ops->unbind(b);
	pr_info("interface %u of netns %u unbound from %s\n", iface->index,
		iface->pn->net->ns.inum, netdev_name(b->dev));
	netdev_put(b->dev, &b->dev_tracker);
	kfree_rcu(b, rcu);
	module_put(t->owner);
	return 0;
}

/* The transport checks the device's new MTU; an error refuses it. */
static int ptl_dev_changed(struct ptl_iface *iface, struct ptl_binding *b,
			   unsigned long event)
{
	int err;

	if (!b->t->ops->dev_changed)
		return 0;
	err = b->t->ops->dev_changed(b, event, NULL);
	if (err)
		net_info_ratelimited("%s is bound to Portals interface %u through %s, which refuses MTU %u (%d)\n",
				     netdev_name(b->dev), iface->index,
				     b->t->name, READ_ONCE(b->dev->mtu), err);
	return err;
}

/* @event for the binding @b of @iface to the device; an error refuses it. */
static int ptl_binding_event(struct ptl_iface *iface, struct ptl_binding *b,
			     unsigned long event)
{
	switch (event) {
	case NETDEV_UNREGISTER:
	case NETDEV_POST_TYPE_CHANGE:
		ptl_unbind(iface);
		return 0;
	case NETDEV_PRE_TYPE_CHANGE:
		net_info_ratelimited("%s is bound to Portals interface %u: its type cannot change\n",
				     netdev_name(b->dev), iface->index);
		return -EBUSY;
	case NETDEV_CHANGEMTU:
		return ptl_dev_changed(iface, b, event);
	default:
		return 0;
	}
}

/*
 * What a frame on a bound device may be is the transport's to check, and
 * it must hear of every change: an MTU (refused if its frames would not
 * fit: dev_set_mtu() then restores the old one), a type (refused; a
 * device that changes type anyway, like one that goes away, is unbound).
 * Every interface of the device's namespace bound to it is told, until
 * one refuses.
 */
static int ptl_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct ptl_net *pn;
	u32 i;

	if (event != NETDEV_UNREGISTER && event != NETDEV_POST_TYPE_CHANGE &&
	    event != NETDEV_PRE_TYPE_CHANGE && event != NETDEV_CHANGEMTU)
		return NOTIFY_DONE;
	pn = ptl_net(dev_net(dev));
	for (i = 0; i < PTL_MAX_INTERFACES; i++) {
		struct ptl_binding *b;
		int err;

		b = rtnl_dereference(pn->ifaces[i].binding);
		if (!b || b->dev != dev)
			continue;
		err = ptl_binding_event(&pn->ifaces[i], b, event);
		if (err)
			return notifier_from_errno(err);
	}
	return NOTIFY_DONE;
}

static struct notifier_block ptl_netdev_notifier = {
	.notifier_call = ptl_netdev_event,
};

int ptl_transport_init(void)
{
	return register_netdevice_notifier(&ptl_netdev_notifier);
}

void ptl_transport_exit(void)
{
	unregister_netdevice_notifier(&ptl_netdev_notifier);
}
