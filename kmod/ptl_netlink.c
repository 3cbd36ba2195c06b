// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "portals" (uapi/linux/portals_netlink.h
 * documents every command and attribute; ptlctl is its tool).
 *
 * Each request works on the Portals instance of the requester's network
 * namespace. Commands that change something carry GENL_UNS_ADMIN_PERM:
 * CAP_NET_ADMIN over that namespace. Interface and peer changes run under
 * RTNL, which serialises binding changes (ptl_transport.c). Peers are the
 * transport's: adding and deleting one is handed on through the binding,
 * and a dump asks the transport for a struct ptl_peer_report of each,
 * which this file writes out.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/nospec.h>
#include <linux/pid.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include <linux/portals_netlink.h>
#include <ptl/compat.h>
#include <ptl/transport.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

/*
 * NLA_POLICY_MAX holds an s16: pids up to 65534 need a full range (not
 * const: 6.1's policy member is a plain pointer).
 */
static struct netlink_range_validation ptl_pid_range = {
	.max = PTL_PID_MAX,
};

static const struct nla_policy ptl_policy[PTL_A_MAX + 1] = {
	[PTL_A_IFACE] = NLA_POLICY_MAX(NLA_U32, PTL_MAX_INTERFACES - 1),
	[PTL_A_NID] = { .type = NLA_U32 },
	[PTL_A_IFINDEX] = { .type = NLA_U32 },
	[PTL_A_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[PTL_A_TRANSPORT] = { .type = NLA_NUL_STRING, .len = 31 },
	[PTL_A_EAGER_MAX] = { .type = NLA_U32 },
	[PTL_A_ETHERTYPE] = NLA_POLICY_MIN(NLA_U16, ETH_P_802_3_MIN),
	[PTL_A_PEER_LLADDR] = { .type = NLA_BINARY, .len = MAX_ADDR_LEN },
	[PTL_A_PID] = NLA_POLICY_FULL_RANGE(NLA_U32, &ptl_pid_range),
	[PTL_A_PID_LAST] = NLA_POLICY_FULL_RANGE(NLA_U32, &ptl_pid_range),
	[PTL_A_UID] = { .type = NLA_U32 },
	[PTL_A_AUTH_KEY] = NLA_POLICY_EXACT_LEN(PTL_AUTH_KEY_LEN),
};

static struct genl_family ptl_genl_family;

enum ptl_mcgrp { PTL_MCGRP_EVENTS };

static const struct genl_multicast_group ptl_mcgrps[] = {
	[PTL_MCGRP_EVENTS] = { .name = PTL_GENL_MCGRP_EVENTS },
};

static struct ptl_net *ptl_info_pn(struct genl_info *info)
{
	return ptl_net(genl_info_net(info));
}

static struct ptl_net *ptl_cb_pn(struct netlink_callback *cb)
{
	return ptl_net(sock_net(cb->skb->sk));
}

/* The interface an attribute names, configured or not. */
static struct ptl_iface *ptl_attr_iface(struct ptl_net *pn,
					struct nlattr **attrs,
					struct netlink_ext_ack *extack)
{
	u32 index;

	if (!attrs[PTL_A_IFACE]) {
		NL_SET_ERR_MSG(extack, "which interface? (PTL_A_IFACE)");
		return NULL;
	}
	index = nla_get_u32(attrs[PTL_A_IFACE]);
	return &pn->ifaces[array_index_nospec(index, PTL_MAX_INTERFACES)];
}

/* ---- interfaces ---- */

static int ptl_fill_iface_stats(struct sk_buff *skb, struct ptl_iface *iface,
				struct ptl_binding *b)
{
	struct ptl_iface_stats *s = &iface->stats;
	struct nlattr *nest = nla_nest_start(skb, PTL_A_STATS);

	if (!nest ||
	    (b && b->t->ops->fill_stats && b->t->ops->fill_stats(b, skb)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_MSGS_TX, atomic64_read(&s->msgs_tx)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_MSGS_RX, atomic64_read(&s->msgs_rx)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_MSGS_FAILED,
			 atomic64_read(&s->msgs_failed)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_DROPS, atomic64_read(&s->drops)) ||
	    ptl_nla_put_stat(skb, PTL_STAT_LATE_RESPONSES,
			 atomic64_read(&s->late_responses)))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* The binding's attributes; the transport adds its own. RTNL held. */
static int ptl_fill_binding(struct sk_buff *skb, struct ptl_binding *b)
{
	if (nla_put_u32(skb, PTL_A_IFINDEX, b->dev->ifindex) ||
	    nla_put_string(skb, PTL_A_IFNAME, b->dev->name) ||
	    nla_put_string(skb, PTL_A_TRANSPORT, b->t->name) ||
	    nla_put_u8(skb, PTL_A_STATE, netif_oper_up(b->dev) ?
		       PTL_IFACE_UP : PTL_IFACE_DOWN))
		return -EMSGSIZE;
	return b->t->ops->fill_iface ? b->t->ops->fill_iface(b, skb) : 0;
}

static int ptl_fill_iface(struct sk_buff *skb, struct ptl_iface *iface,
			  u32 portid, u32 seq, int flags)
{
	struct ptl_binding *b;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &ptl_genl_family, flags,
			  PTL_CMD_GET_IFACE);
	if (!hdr)
		return -EMSGSIZE;
	b = rtnl_dereference(iface->binding);
	if (nla_put_u32(skb, PTL_A_IFACE, iface->index) ||
	    nla_put_u32(skb, PTL_A_NID, READ_ONCE(iface->nid)) ||
	    nla_put_u32(skb, PTL_A_NIS, atomic_read(&iface->nis)) ||
	    (!b && nla_put_u8(skb, PTL_A_STATE, PTL_IFACE_LOCAL)) ||
	    (b && ptl_fill_binding(skb, b)) ||
	    ptl_fill_iface_stats(skb, iface, b)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int ptl_nl_get_iface_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ptl_iface *iface;
	struct sk_buff *msg;
	int err;

	iface = ptl_attr_iface(ptl_info_pn(info), info->attrs, info->extack);
	if (!iface)
		return -EINVAL;
	if (!READ_ONCE(iface->configured)) {
		NL_SET_ERR_MSG(info->extack, "interface not configured");
		return -ENODEV;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rtnl_lock();
	err = ptl_fill_iface(msg, iface, info->snd_portid, info->snd_seq, 0);
	rtnl_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int ptl_nl_get_iface_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct ptl_net *pn = ptl_cb_pn(cb);
	long i;

	rtnl_lock();
	for (i = cb->args[0]; i < PTL_MAX_INTERFACES; i++) {
		struct ptl_iface *iface = &pn->ifaces[i];

		if (!READ_ONCE(iface->configured))
			continue;
		if (ptl_fill_iface(skb, iface, NETLINK_CB(cb->skb).portid,
				   cb->nlh->nlmsg_seq, NLM_F_MULTI))
			break;
	}
	rtnl_unlock();
	cb->args[0] = i;
	return skb->len;
}

static struct net_device *ptl_attr_dev(struct net *net, struct nlattr **attrs)
{
	if (attrs[PTL_A_IFINDEX])
		return __dev_get_by_index(net,
					  nla_get_u32(attrs[PTL_A_IFINDEX]));
	if (attrs[PTL_A_IFNAME])
		return __dev_get_by_name(net, nla_data(attrs[PTL_A_IFNAME]));
	return NULL;
}

static void ptl_attr_bind_config(struct nlattr **attrs,
				 struct ptl_bind_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	if (attrs[PTL_A_NID])
		cfg->nid = nla_get_u32(attrs[PTL_A_NID]);
	if (attrs[PTL_A_EAGER_MAX])
		cfg->eager_max = nla_get_u32(attrs[PTL_A_EAGER_MAX]);
	if (attrs[PTL_A_ETHERTYPE])
		cfg->ethertype = nla_get_u16(attrs[PTL_A_ETHERTYPE]);
	if (attrs[PTL_A_AUTH_KEY]) {
		cfg->auth_key = nla_data(attrs[PTL_A_AUTH_KEY]);
		cfg->auth_key_len = nla_len(attrs[PTL_A_AUTH_KEY]);
	}
}

/* PTL_CMD_SET_IFACE on an interface already bound: settings only. */
static int ptl_reconfigure(struct ptl_binding *b, struct net_device *dev,
			   struct ptl_bind_config *cfg,
			   struct netlink_ext_ack *extack)
{
	if (dev && dev != b->dev) {
		NL_SET_ERR_MSG(extack,
			       "bound to another device: unbind it first");
		return -EBUSY;
	}
	if (cfg->nid && cfg->nid != READ_ONCE(b->iface->nid)) {
		NL_SET_ERR_MSG(extack,
			       "the nid of a bound interface cannot change: unbind it first");
		return -EBUSY;
	}
	if (cfg->auth_key) {
		NL_SET_ERR_MSG(extack,
			       "the key of a bound interface cannot change: unbind it first");
		return -EBUSY;
	}
	if (!b->t->ops->configure)
		return -EOPNOTSUPP;
	return b->t->ops->configure(b, cfg, extack);
}

static int ptl_nl_set_iface(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nlattr **attrs = info->attrs;
	const char *transport = "rtscts";
	struct ptl_bind_config cfg;
	struct ptl_iface *iface;
	struct net_device *dev;
	struct ptl_binding *b;
	int err;

	iface = ptl_attr_iface(ptl_net(net), attrs, info->extack);
	if (!iface)
		return -EINVAL;
	ptl_attr_bind_config(attrs, &cfg);
	if (attrs[PTL_A_TRANSPORT])
		transport = nla_data(attrs[PTL_A_TRANSPORT]);

	rtnl_lock();
	dev = ptl_attr_dev(net, attrs);
	b = rtnl_dereference(iface->binding);
	if ((attrs[PTL_A_IFINDEX] || attrs[PTL_A_IFNAME]) && !dev) {
		NL_SET_ERR_MSG(info->extack, "no such device in this namespace");
		err = -ENODEV;
	} else if (b) {
		err = ptl_reconfigure(b, dev, &cfg, info->extack);
	} else if (dev) {
		err = ptl_bind(iface, dev, transport, &cfg, info->extack);
	} else if (cfg.nid) {
		/* Not bound: only an intra-node nid to set. */
		err = ptl_iface_set_nid(iface, cfg.nid, info->extack);
	} else {
		NL_SET_ERR_MSG(info->extack, "nothing to do: give a device or a nid");
		err = -EINVAL;
	}
	rtnl_unlock();
	/* The transport keeps what it derived: no copy of the key stays. */
	if (attrs[PTL_A_AUTH_KEY])
		memzero_explicit(nla_data(attrs[PTL_A_AUTH_KEY]),
				 nla_len(attrs[PTL_A_AUTH_KEY]));
	return err;
}

static int ptl_nl_del_iface(struct sk_buff *skb, struct genl_info *info)
{
	struct ptl_iface *iface;
	int err;

	iface = ptl_attr_iface(ptl_info_pn(info), info->attrs, info->extack);
	if (!iface)
		return -EINVAL;
	rtnl_lock();
	err = ptl_unbind(iface);
	rtnl_unlock();
	if (err == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "interface not bound");
	return err;
}

/* ---- peers: each transport keeps its own, ptl.ko reports them ---- */

/* The binding a peer command names, referenced; NULL with an error. */
static struct ptl_binding *ptl_peer_binding(struct ptl_net *pn,
					    struct nlattr **attrs,
					    struct netlink_ext_ack *extack)
{
	struct ptl_iface *iface = ptl_attr_iface(pn, attrs, extack);
	struct ptl_binding *b = iface ? ptl_binding_get(iface) : NULL;

	if (iface && !b)
		NL_SET_ERR_MSG(extack, "interface not bound: no peers");
	return b;
}

/* A dump of one binding's peers: the transport's view, and ours. */
struct ptl_nl_peer_dump {
	struct ptl_peer_dump pub;
	struct ptl_binding *b;
	struct sk_buff *skb;
	struct netlink_callback *cb;
};

static int ptl_nl_put_peer(struct sk_buff *skb, u32 iface,
			   const struct ptl_peer_report *r)
{
	struct nlattr *nest;
	unsigned int i;

	if (nla_put_u32(skb, PTL_A_IFACE, iface) ||
	    nla_put_u32(skb, PTL_A_NID, r->nid) ||
	    (r->lladdr_len &&
	     nla_put(skb, PTL_A_PEER_LLADDR, r->lladdr_len, r->lladdr)) ||
	    nla_put_u8(skb, PTL_A_PEER_STATE, r->state) ||
	    nla_put_u32(skb, PTL_A_PEER_FLAGS, r->flags) ||
	    (r->has_uid && nla_put_u32(skb, PTL_A_UID, r->uid)))
		return -EMSGSIZE;
	for (i = 0; i < r->nattrs; i++)
		if (nla_put_u32(skb, r->attrs[i].type, r->attrs[i].value))
			return -EMSGSIZE;
	if (!r->nstats)
		return 0;
	nest = nla_nest_start(skb, PTL_A_PEER_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < r->nstats; i++)
		if (ptl_nla_put_stat(skb, r->stats[i].type, r->stats[i].value))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/**
 * ptl_peer_dump_add - write one peer of a PTL_CMD_GET_PEER dump
 * @pub: the dump ops->dump_peers was given, its report filled
 *
 * Writes the report as one message and clears it for the next peer.
 *
 * Return: 0, or -EMSGSIZE when this part of the dump is full (nothing of
 * the peer written: it goes first in the next part).
 */
int ptl_peer_dump_add(struct ptl_peer_dump *pub)
{
	struct ptl_nl_peer_dump *d = container_of(pub, struct ptl_nl_peer_dump,
						  pub);
	void *hdr = genlmsg_put(d->skb, NETLINK_CB(d->cb->skb).portid,
				d->cb->nlh->nlmsg_seq, &ptl_genl_family,
				NLM_F_MULTI, PTL_CMD_GET_PEER);

	if (!hdr)
		return -EMSGSIZE;
	if (ptl_nl_put_peer(d->skb, d->b->iface->index, &pub->report)) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(d->skb, hdr);
	memset(&pub->report, 0, sizeof(pub->report));
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ptl_peer_dump_add, PORTALS);

/* cb->args[2..3]: where the transport resumes (struct ptl_peer_dump). */
static int ptl_nl_dump_peers(struct ptl_binding *b, struct sk_buff *skb,
			     struct netlink_callback *cb)
{
	struct ptl_nl_peer_dump *d;
	int err;

	if (!b->t->ops->dump_peers)
		return 0;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->b = b;
	d->skb = skb;
	d->cb = cb;
	d->pub.pos[0] = cb->args[2];
	d->pub.pos[1] = cb->args[3];
	err = b->t->ops->dump_peers(b, &d->pub);
	cb->args[2] = d->pub.pos[0];
	cb->args[3] = d->pub.pos[1];
	kfree(d);
	return err;
}

static int ptl_nl_get_peer_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct ptl_binding *b;
	int err;

	b = ptl_peer_binding(ptl_cb_pn(cb), ptl_genl_dump_attrs(cb), cb->extack);
	if (!b)
		return cb->args[0] ? 0 : -ENOENT;
	cb->args[0] = 1;	/* an unbind between two parts ends the dump */
	err = ptl_nl_dump_peers(b, skb, cb);
	ptl_binding_put(b);
	return err < 0 ? err : skb->len;
}

static int ptl_nl_new_peer(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct ptl_binding *b;
	int err;

	if (!attrs[PTL_A_NID] || !attrs[PTL_A_PEER_LLADDR]) {
		NL_SET_ERR_MSG(info->extack, "a peer needs a nid and an lladdr");
		return -EINVAL;
	}
	b = ptl_peer_binding(ptl_info_pn(info), attrs, info->extack);
	if (!b)
		return -ENOENT;
	err = -EOPNOTSUPP;
	if (b->t->ops->add_peer)
		err = b->t->ops->add_peer(b, nla_get_u32(attrs[PTL_A_NID]),
					  nla_data(attrs[PTL_A_PEER_LLADDR]),
					  nla_len(attrs[PTL_A_PEER_LLADDR]),
					  info->extack);
	ptl_binding_put(b);
	return err;
}

static int ptl_nl_del_peer(struct sk_buff *skb, struct genl_info *info)
{
	struct ptl_binding *b;
	int err;

	if (!info->attrs[PTL_A_NID]) {
		NL_SET_ERR_MSG(info->extack, "which peer? (PTL_A_NID)");
		return -EINVAL;
	}
	b = ptl_peer_binding(ptl_info_pn(info), info->attrs, info->extack);
	if (!b)
		return -ENOENT;
	err = -EOPNOTSUPP;
	if (b->t->ops->del_peer)
		err = b->t->ops->del_peer(b,
					  nla_get_u32(info->attrs[PTL_A_NID]),
					  info->extack);
	ptl_binding_put(b);
	return err;
}

/* ---- NIs ---- */

static int ptl_fill_ni_stats(struct sk_buff *skb, struct ptl_ni *ni)
{
	static const struct { int stat; u32 reg; } regs[] = {
		{ PTL_STAT_NI_MES, PTL_SR_MES_CUR },
		{ PTL_STAT_NI_MDS, PTL_SR_MDS_CUR },
		{ PTL_STAT_NI_EQS, PTL_SR_EQS_CUR },
		{ PTL_STAT_NI_MSGS_IN_FLIGHT, PTL_SR_MSGS_CUR },
	};
	struct nlattr *nest = nla_nest_start(skb, PTL_A_STATS);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(regs); i++) {
		ptl_sr_value_t v = 0;

		ptlc_ni_status(ni->core, regs[i].reg, &v);
		if (ptl_nla_put_stat(skb, regs[i].stat, v))
			return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int ptl_fill_ni(struct sk_buff *skb, struct netlink_callback *cb,
		       struct ptl_ni *ni)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &ptl_genl_family,
				NLM_F_MULTI, PTL_CMD_GET_NI);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PTL_A_IFACE, ni->iface->index) ||
	    nla_put_u32(skb, PTL_A_NID, ni->nid) ||
	    nla_put_u32(skb, PTL_A_PID, ni->pid) ||
	    nla_put_u32(skb, PTL_A_UID, ptlc_ni_uid(ni->core)) ||
	    nla_put_u32(skb, PTL_A_JID, ptlc_ni_jid(ni->core)) ||
	    nla_put_u32(skb, PTL_A_OWNER_PID, pid_vnr(ni->owner)) ||
	    nla_put_string(skb, PTL_A_COMM, ni->comm) ||
	    ptl_fill_ni_stats(skb, ni)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: interface, args[1]: next pid. */
static int ptl_nl_get_ni_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct ptl_net *pn = ptl_cb_pn(cb);

	for (; cb->args[0] < PTL_MAX_INTERFACES; cb->args[0]++) {
		struct ptl_iface *iface = &pn->ifaces[cb->args[0]];
		unsigned long pid = cb->args[1];
		struct ptl_ni *ni;

		for (;;) {
			int err;

			rcu_read_lock();
			ni = xa_find(&iface->pids, &pid, ULONG_MAX,
				     XA_PRESENT);
			/* One being made has no core yet: skip it. */
			if (ni && !ptl_ni_tryget_active(ni))
				ni = ERR_PTR(-ENOENT);
			rcu_read_unlock();
			if (!ni)
				break;
			if (IS_ERR(ni)) {
				pid++;
				continue;
			}
			err = ptl_fill_ni(skb, cb, ni);
			ptl_ni_put(ni);
			if (err) {
				cb->args[1] = pid;
				return skb->len;
			}
			pid++;
		}
		cb->args[1] = 0;
	}
	return skb->len;
}

/* ---- statistics ---- */

static int ptl_nl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	static const struct { int stat; atomic_long_t *v; } counters[] = {
		{ PTL_STAT_OPEN_FILES, &ptl_stats.open_files },
		{ PTL_STAT_NIS, &ptl_stats.nis },
		{ PTL_STAT_MDS, &ptl_stats.mds },
		{ PTL_STAT_EQS, &ptl_stats.eqs },
		{ PTL_STAT_PINNED_PAGES, &ptl_stats.pinned_pages },
		{ PTL_STAT_INTRA_MSGS, &ptl_stats.intra_msgs },
		{ PTL_STAT_DROPS, &ptl_stats.drops },
	};
	struct nlattr *nest;
	struct sk_buff *msg;
	unsigned int i;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ptl_genl_family, 0,
				PTL_CMD_GET_STATS);
	nest = hdr ? nla_nest_start(msg, PTL_A_STATS) : NULL;
	if (!nest)
		goto err;
	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (ptl_nla_put_stat(msg, counters[i].stat,
				 atomic_long_read(counters[i].v)))
			goto err;
	if (ptl_nla_put_stat(msg, PTL_STAT_CORE_OBJECTS, ptlc_live_objects()))
		goto err;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---- pid reservations ---- */

static int ptl_nl_new_pidres(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct ptl_iface *iface;
	u32 first, last;
	kuid_t uid;
	int err;

	iface = ptl_attr_iface(ptl_info_pn(info), attrs, info->extack);
	if (!iface)
		return -EINVAL;
	if (!attrs[PTL_A_PID] || !attrs[PTL_A_UID]) {
		NL_SET_ERR_MSG(info->extack, "a reservation needs a pid and a uid");
		return -EINVAL;
	}
	first = nla_get_u32(attrs[PTL_A_PID]);
	last = attrs[PTL_A_PID_LAST] ? nla_get_u32(attrs[PTL_A_PID_LAST]) :
				       first;
	uid = make_kuid(current_user_ns(), nla_get_u32(attrs[PTL_A_UID]));
	if (!uid_valid(uid)) {
		NL_SET_ERR_MSG(info->extack, "no such uid in this user namespace");
		return -EINVAL;
	}
	err = ptl_iface_reserve_pids(iface, first, last, uid);
	if (err == -EEXIST)
		NL_SET_ERR_MSG(info->extack, "overlaps a reserved range");
	else if (err == -EINVAL)
		NL_SET_ERR_MSG(info->extack, "empty pid range");
	return err;
}

static int ptl_nl_del_pidres(struct sk_buff *skb, struct genl_info *info)
{
	struct ptl_iface *iface;
	int err;

	iface = ptl_attr_iface(ptl_info_pn(info), info->attrs, info->extack);
	if (!iface)
		return -EINVAL;
	if (!info->attrs[PTL_A_PID]) {
		NL_SET_ERR_MSG(info->extack, "which range? (PTL_A_PID, its first pid)");
		return -EINVAL;
	}
	err = ptl_iface_unreserve_pids(iface,
				       nla_get_u32(info->attrs[PTL_A_PID]));
	if (err)
		NL_SET_ERR_MSG(info->extack, "no range starts at that pid");
	return err;
}

static int ptl_fill_pidres(struct sk_buff *skb, struct netlink_callback *cb,
			   u32 iface, u32 first, u32 last, kuid_t uid)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &ptl_genl_family,
				NLM_F_MULTI, PTL_CMD_GET_PIDRES);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PTL_A_IFACE, iface) ||
	    nla_put_u32(skb, PTL_A_PID, first) ||
	    nla_put_u32(skb, PTL_A_PID_LAST, last) ||
	    nla_put_u32(skb, PTL_A_UID,
			from_kuid_munged(current_user_ns(), uid))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: interface, args[1]: the next range of it. */
static int ptl_nl_get_pidres_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	struct ptl_net *pn = ptl_cb_pn(cb);
	u32 first, last;
	kuid_t uid;

	for (; cb->args[0] < PTL_MAX_INTERFACES; cb->args[0]++) {
		struct ptl_iface *iface = &pn->ifaces[cb->args[0]];

		while (ptl_iface_pidres_at(iface, cb->args[1], &first, &last,
					   &uid)) {
			if (ptl_fill_pidres(skb, cb, iface->index, first, last,
					    uid))
				return skb->len;
			cb->args[1]++;
		}
		cb->args[1] = 0;
	}
	return skb->len;
}

/* ---- events ---- */

/* Multicasts a peer event to ptlctl monitor; any context. */
void ptl_netlink_peer_event(struct ptl_iface *iface, u32 nid, u8 event,
			    u32 incarnation, u32 failed)
{
	struct sk_buff *skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	void *hdr;

	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &ptl_genl_family, 0, PTL_CMD_PEER_EVENT);
	if (!hdr ||
	    nla_put_u32(skb, PTL_A_IFACE, iface->index) ||
	    nla_put_u32(skb, PTL_A_NID, nid) ||
	    nla_put_u8(skb, PTL_A_EVENT, event) ||
	    nla_put_u32(skb, PTL_A_PEER_INCARNATION, incarnation) ||
	    nla_put_u32(skb, PTL_A_FAILED, failed)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&ptl_genl_family, iface->pn->net, skb, 0,
				PTL_MCGRP_EVENTS, GFP_ATOMIC);
}

void ptl_binding_peer_event(struct ptl_binding *b, u32 nid, u8 event,
			    u32 incarnation, u32 failed)
{
	ptl_netlink_peer_event(b->iface, nid, event, incarnation, failed);
}
EXPORT_SYMBOL_NS_GPL(ptl_binding_peer_event, PORTALS);

/* ---- the family ---- */

static const struct genl_small_ops ptl_genl_ops[] = {
	{
		.cmd = PTL_CMD_GET_IFACE,
		.doit = ptl_nl_get_iface_doit,
		.dumpit = ptl_nl_get_iface_dumpit,
	},
	{
		.cmd = PTL_CMD_SET_IFACE,
		.doit = ptl_nl_set_iface,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = PTL_CMD_DEL_IFACE,
		.doit = ptl_nl_del_iface,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = PTL_CMD_GET_PEER,
		.dumpit = ptl_nl_get_peer_dumpit,
	},
	{
		.cmd = PTL_CMD_NEW_PEER,
		.doit = ptl_nl_new_peer,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = PTL_CMD_DEL_PEER,
		.doit = ptl_nl_del_peer,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = PTL_CMD_GET_NI,
		.dumpit = ptl_nl_get_ni_dumpit,
	},
	{
		.cmd = PTL_CMD_GET_STATS,
		.doit = ptl_nl_get_stats,
	},
	{
		.cmd = PTL_CMD_NEW_PIDRES,
		.doit = ptl_nl_new_pidres,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = PTL_CMD_DEL_PIDRES,
		.doit = ptl_nl_del_pidres,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = PTL_CMD_GET_PIDRES,
		.dumpit = ptl_nl_get_pidres_dumpit,
	},
};

static struct genl_family ptl_genl_family __ro_after_init = {
	.name = PTL_GENL_NAME,
	.version = PTL_GENL_VERSION,
	.maxattr = PTL_A_MAX,
	.policy = ptl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.small_ops = ptl_genl_ops,
	.n_small_ops = ARRAY_SIZE(ptl_genl_ops),
	.resv_start_op = PTL_CMD_PEER_EVENT,
	.mcgrps = ptl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ptl_mcgrps),
};

int ptl_netlink_init(void)
{
	return genl_register_family(&ptl_genl_family);
}

void ptl_netlink_exit(void)
{
	genl_unregister_family(&ptl_genl_family);
}
