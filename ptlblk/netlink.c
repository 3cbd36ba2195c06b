// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "ptlblk" (uapi/linux/ptlblk_netlink.h
 * documents every command and attribute; `ptlctl blk` is its tool).
 *
 * Requests work on the devices of the requester's network namespace.
 * ATTACH and DETACH make and remove block devices, system-wide objects:
 * they need CAP_SYS_ADMIN in the initial user namespace on top of
 * GENL_ADMIN_PERM (CAP_NET_ADMIN: the device talks on the network). The
 * family runs its operations in parallel: an attach waits for the
 * server's answer without holding anyone's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include <linux/portals.h>
#include <linux/ptlblk_netlink.h>

#include "ptlblk.h"

static struct netlink_range_validation ptlblk_pid_range = {
	.max = PTL_PID_MAX,
};

static const struct nla_policy ptlblk_policy[PTLBLK_A_MAX + 1] = {
	[PTLBLK_A_INDEX] = { .type = NLA_U32 },
	[PTLBLK_A_SERVER_NID] = { .type = NLA_U32 },
	[PTLBLK_A_SERVER_PID] = NLA_POLICY_FULL_RANGE(NLA_U32, &ptlblk_pid_range),
	[PTLBLK_A_IFACE] = NLA_POLICY_MAX(NLA_U32, PTL_MAX_INTERFACES - 1),
	[PTLBLK_A_QUEUE_DEPTH] = NLA_POLICY_RANGE(NLA_U32, 1, PTLBLK_MAX_QUEUE_DEPTH),
	[PTLBLK_A_MAX_SECTORS] = { .type = NLA_U32 },
	[PTLBLK_A_TIMEOUT_MS] = { .type = NLA_U32 },
};

static struct genl_family ptlblk_genl_family;

static int ptlblk_put_stats(struct sk_buff *skb, struct ptlblk_dev *dev)
{
	static const u16 ids[PTLBLK_ST_COUNT] = {
		[PTLBLK_ST_READS] = PTLBLK_STAT_READS,
		[PTLBLK_ST_WRITES] = PTLBLK_STAT_WRITES,
		[PTLBLK_ST_FLUSHES] = PTLBLK_STAT_FLUSHES,
		[PTLBLK_ST_DISCARDS] = PTLBLK_STAT_DISCARDS,
		[PTLBLK_ST_READ_BYTES] = PTLBLK_STAT_READ_BYTES,
		[PTLBLK_ST_WRITE_BYTES] = PTLBLK_STAT_WRITE_BYTES,
		[PTLBLK_ST_ERRORS] = PTLBLK_STAT_ERRORS,
		[PTLBLK_ST_TIMEOUTS] = PTLBLK_STAT_TIMEOUTS,
	};
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(skb, PTLBLK_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < PTLBLK_ST_COUNT; i++) {
		if (nla_put_u64_64bit(skb, ids[i],
				      atomic64_read(&dev->stats[i]),
				      PTLBLK_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int ptlblk_fill(struct sk_buff *skb, struct ptlblk_dev *dev, u32 portid,
		       u32 seq, int flags)
{
	void *hdr;
	u8 state;

	hdr = genlmsg_put(skb, portid, seq, &ptlblk_genl_family, flags,
			  PTLBLK_CMD_GET);
	if (!hdr)
		return -EMSGSIZE;
	state = test_bit(PTLBLK_DEV_DEAD, &dev->flags) ? PTLBLK_STATE_DEAD :
							  PTLBLK_STATE_UP;
	if (nla_put_u32(skb, PTLBLK_A_INDEX, dev->index) ||
	    nla_put_string(skb, PTLBLK_A_NAME, dev->disk->disk_name) ||
	    nla_put_u32(skb, PTLBLK_A_SERVER_NID, dev->server.nid) ||
	    nla_put_u32(skb, PTLBLK_A_SERVER_PID, dev->server.pid) ||
	    nla_put_u32(skb, PTLBLK_A_IFACE, dev->iface) ||
	    nla_put_u32(skb, PTLBLK_A_LOCAL_PID, dev->local_pid) ||
	    nla_put_u8(skb, PTLBLK_A_STATE, state) ||
	    nla_put_u64_64bit(skb, PTLBLK_A_SIZE, dev->size, PTLBLK_A_PAD) ||
	    nla_put_u32(skb, PTLBLK_A_BLOCK_SIZE, dev->block_size) ||
	    nla_put_u32(skb, PTLBLK_A_FEATURES, dev->features) ||
	    nla_put_u32(skb, PTLBLK_A_QUEUE_DEPTH, dev->queue_depth) ||
	    nla_put_u32(skb, PTLBLK_A_MAX_SECTORS, dev->max_sectors) ||
	    nla_put_u32(skb, PTLBLK_A_TIMEOUT_MS, dev->timeout_ms) ||
	    nla_put_u32(skb, PTLBLK_A_INFLIGHT, ptlblk_inflight(dev)) ||
	    ptlblk_put_stats(skb, dev)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int ptlblk_reply_dev(struct genl_info *info, struct ptlblk_dev *dev)
{
	struct sk_buff *msg;
	int rc;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rc = ptlblk_fill(msg, dev, info->snd_portid, info->snd_seq, 0);
	if (rc) {
		nlmsg_free(msg);
		return rc;
	}
	return genlmsg_reply(msg, info);
}

static u32 ptlblk_attr_u32(struct genl_info *info, int type, u32 dflt)
{
	return info->attrs[type] ? nla_get_u32(info->attrs[type]) : dflt;
}

static int ptlblk_nl_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct ptlblk_config cfg;
	struct ptlblk_dev *dev;
	int rc;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (GENL_REQ_ATTR_CHECK(info, PTLBLK_A_SERVER_NID))
		return -EINVAL;
	ptlblk_default_config(&cfg);
	cfg.net = genl_info_net(info);
	cfg.server.nid = nla_get_u32(info->attrs[PTLBLK_A_SERVER_NID]);
	cfg.server.pid = ptlblk_attr_u32(info, PTLBLK_A_SERVER_PID,
					 cfg.server.pid);
	cfg.iface = ptlblk_attr_u32(info, PTLBLK_A_IFACE, cfg.iface);
	cfg.queue_depth = ptlblk_attr_u32(info, PTLBLK_A_QUEUE_DEPTH,
					  cfg.queue_depth);
	cfg.max_sectors = ptlblk_attr_u32(info, PTLBLK_A_MAX_SECTORS,
					  cfg.max_sectors);
	cfg.timeout_ms = ptlblk_attr_u32(info, PTLBLK_A_TIMEOUT_MS,
					 cfg.timeout_ms);
	if (cfg.server.nid == PTL_NID_ANY || cfg.server.pid == PTL_PID_ANY) {
		NL_SET_ERR_MSG(info->extack, "the server must be one process");
		return -EINVAL;
	}
	if (cfg.max_sectors < 8 || cfg.max_sectors > PTLBLK_MAX_SECTORS) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[PTLBLK_A_MAX_SECTORS],
				    "max_sectors out of range (8 .. 16777215)");
		return -ERANGE;
	}
	if (cfg.timeout_ms < PTLBLK_MIN_TIMEOUT_MS) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[PTLBLK_A_TIMEOUT_MS],
				    "timeout below 1000 ms");
		return -ERANGE;
	}

	dev = ptlblk_attach(&cfg, info->extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	mutex_lock(ptlblk_registry_lock());
	/* it may be detached already: then there is nothing to report */
	if (ptlblk_find(cfg.net, dev->index) == dev)
		rc = ptlblk_reply_dev(info, dev);
	else
		rc = 0;
	mutex_unlock(ptlblk_registry_lock());
	return rc;
}

static int ptlblk_nl_detach(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct ptlblk_dev *dev;
	int rc;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (GENL_REQ_ATTR_CHECK(info, PTLBLK_A_INDEX))
		return -EINVAL;
	mutex_lock(ptlblk_registry_lock());
	dev = ptlblk_find(net, nla_get_u32(info->attrs[PTLBLK_A_INDEX]));
	if (!dev) {
		rc = -ENODEV;
		NL_SET_ERR_MSG(info->extack, "no such device in this namespace");
	} else {
		rc = ptlblk_detach(dev);
		if (rc)
			NL_SET_ERR_MSG(info->extack, "the device is open (mounted?)");
		else
			ptlblk_unregister(net, dev->index);
	}
	mutex_unlock(ptlblk_registry_lock());
	if (!rc)
		ptlblk_destroy(dev);
	return rc;
}

static int ptlblk_nl_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ptlblk_dev *dev;
	int rc;

	if (GENL_REQ_ATTR_CHECK(info, PTLBLK_A_INDEX))
		return -EINVAL;
	mutex_lock(ptlblk_registry_lock());
	dev = ptlblk_find(genl_info_net(info),
			  nla_get_u32(info->attrs[PTLBLK_A_INDEX]));
	rc = dev ? ptlblk_reply_dev(info, dev) : -ENODEV;
	mutex_unlock(ptlblk_registry_lock());
	return rc;
}

static int ptlblk_nl_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	unsigned long index = cb->args[0];
	struct ptlblk_dev *dev;
	int rc = 0;

	mutex_lock(ptlblk_registry_lock());
	while ((dev = ptlblk_next(sock_net(cb->skb->sk), &index))) {
		rc = ptlblk_fill(skb, dev, NETLINK_CB(cb->skb).portid,
				 cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (rc)
			break;
		index++;
	}
	mutex_unlock(ptlblk_registry_lock());
	cb->args[0] = index;
	/* a full message ends this part of the dump; the rest follows */
	return rc == -EMSGSIZE && skb->len ? skb->len : rc ? rc : skb->len;
}

static const struct genl_small_ops ptlblk_genl_ops[] = {
	{
		.cmd = PTLBLK_CMD_ATTACH,
		.doit = ptlblk_nl_attach,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PTLBLK_CMD_DETACH,
		.doit = ptlblk_nl_detach,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PTLBLK_CMD_GET,
		.doit = ptlblk_nl_get_doit,
		.dumpit = ptlblk_nl_get_dumpit,
	},
};

static struct genl_family ptlblk_genl_family __ro_after_init = {
	.name = PTLBLK_GENL_NAME,
	.version = PTLBLK_GENL_VERSION,
	.maxattr = PTLBLK_A_MAX,
	.policy = ptlblk_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.small_ops = ptlblk_genl_ops,
	.n_small_ops = ARRAY_SIZE(ptlblk_genl_ops),
	.resv_start_op = PTLBLK_CMD_GET + 1,
};

int ptlblk_netlink_init(void)
{
	return genl_register_family(&ptlblk_genl_family);
}

void ptlblk_netlink_exit(void)
{
	genl_unregister_family(&ptlblk_genl_family);
}
