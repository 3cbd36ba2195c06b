// SPDX-License-Identifier: GPL-2.0
/*
 * ptl.ko: the Portals 3.3 library for Linux.
 *
 * Module init and exit, in strict order, unwound in reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "ptl_internal.h"

static uint nid;
module_param(nid, uint, 0444);
MODULE_PARM_DESC(nid, "Portals nid of interface 0 until ptlctl sets one");

static int __init ptl_init(void)
{
	int err;

	if (nid == PTL_NID_ANY) {
		pr_err("nid %#x is the wildcard and cannot name a node\n", nid);
		return -EINVAL;
	}
	ptl_users_init();
	err = ptl_ni_init();
	if (err)
		return err;
	err = ptl_remote_init();
	if (err)
		goto err_ni;
	err = ptl_ifaces_init(nid);
	if (err)
		goto err_remote;
	err = ptl_transport_init();
	if (err)
		goto err_ifaces;
	err = ptl_netlink_init();
	if (err)
		goto err_transport;
	err = ptl_dev_init();
	if (err)
		goto err_netlink;
	err = ptl_kapi_init();
	if (err)
		goto err_dev;
	pr_info("Portals 3.3 ABI %d loaded, interface 0 nid %u\n",
		PTL_ABI_VERSION, nid);
	return 0;

err_dev:
	ptl_dev_exit();
err_netlink:
	ptl_netlink_exit();
err_transport:
	ptl_transport_exit();
err_ifaces:
	ptl_ifaces_exit();
err_remote:
	ptl_remote_exit();
err_ni:
	ptl_ni_exit();
	return err;
}

static void __exit ptl_exit(void)
{
	ptl_kapi_exit();
	ptl_dev_exit();
	ptl_netlink_exit();
	ptl_transport_exit();
	ptl_ni_flush_releases();
	ptl_ifaces_exit();
	/* NIs are freed after a grace period; wait for those callbacks. */
	rcu_barrier();
	ptl_mem_flush();	/* MDs released by work items, then their pins */
	ptl_pincache_exit();
	ptl_remote_exit();
	ptl_ni_exit();
	ptl_users_exit();
	pr_info("unloaded\n");
}

module_init(ptl_init);
module_exit(ptl_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sandia Portals 3.3 message passing");
MODULE_AUTHOR("Portals for Linux developers");
