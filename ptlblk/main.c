// SPDX-License-Identifier: GPL-2.0
/*
 * ptlblk.ko: module parameters (the defaults of an attach), the block
 * major, the registry of devices, init and exit.
 *
 * The registry is an allocating xarray (the index is the N of
 * /dev/ptlblkN) under a mutex that netlink takes to look devices up: a
 * device in it is alive, and one taken out of it is its remover's to
 * destroy. An attach reserves its index first and stores the device only
 * once it is complete, so lookups never see a half-made one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/xarray.h>

#include "ptlblk.h"

MODULE_IMPORT_NS(PORTALS);

static unsigned int queue_depth = 64;
module_param(queue_depth, uint, 0644);
MODULE_PARM_DESC(queue_depth, "default requests in flight per device (1..1024)");

static unsigned int max_sectors = 2048;
module_param(max_sectors, uint, 0644);
MODULE_PARM_DESC(max_sectors, "default largest request, 512-byte sectors");

static unsigned int timeout_ms = 30000;
module_param(timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "default: a request unanswered this long fails and the device is dead");

unsigned int ptlblk_major;

static DEFINE_MUTEX(ptlblk_mutex);
static DEFINE_XARRAY_ALLOC(ptlblk_devs);
/* index * PTLBLK_MINORS must fit the minor space */
#define PTLBLK_MAX_DEVICES	((1U << MINORBITS) / PTLBLK_MINORS)

void ptlblk_default_config(struct ptlblk_config *cfg)
{
	cfg->iface = 0;
	cfg->server.pid = PTLBLK_SERVER_PID;
	cfg->queue_depth = clamp(queue_depth, 1U, PTLBLK_MAX_QUEUE_DEPTH);
	cfg->max_sectors = clamp(max_sectors, 8U, PTLBLK_MAX_SECTORS);
	cfg->timeout_ms = max(timeout_ms, PTLBLK_MIN_TIMEOUT_MS);
}

struct mutex *ptlblk_registry_lock(void)
{
	return &ptlblk_mutex;
}

/* Reserves an index for @dev (stored by ptlblk_publish()). */
int ptlblk_register(struct ptlblk_dev *dev)
{
	u32 id;
	int rc;

	rc = xa_alloc(&ptlblk_devs, &id, NULL,
		      XA_LIMIT(0, PTLBLK_MAX_DEVICES - 1), GFP_KERNEL);
	if (rc)
		return rc == -EBUSY ? -ENOSPC : rc;
	dev->index = id;
	return 0;
}

void ptlblk_publish(struct ptlblk_dev *dev)
{
	mutex_lock(&ptlblk_mutex);
	xa_store(&ptlblk_devs, dev->index, dev, GFP_KERNEL);
	mutex_unlock(&ptlblk_mutex);
}

/* Registry lock held (or the index only reserved). */
struct ptlblk_dev *ptlblk_unregister(struct net *net, int index)
{
	struct ptlblk_dev *dev = xa_load(&ptlblk_devs, index);

	if (dev && !net_eq(dev->net, net))
		return NULL;
	xa_erase(&ptlblk_devs, index);
	return dev;
}

/* Registry lock held. */
struct ptlblk_dev *ptlblk_find(struct net *net, int index)
{
	struct ptlblk_dev *dev = xa_load(&ptlblk_devs, index);

	return dev && net_eq(dev->net, net) ? dev : NULL;
}

/* Registry lock held: the device of @net at or after *@index. */
struct ptlblk_dev *ptlblk_next(struct net *net, unsigned long *index)
{
	struct ptlblk_dev *dev;

	xa_for_each_start(&ptlblk_devs, *index, dev, *index) {
		if (net_eq(dev->net, net))
			return dev;
	}
	return NULL;
}

static int __init ptlblk_init(void)
{
	int rc;

	rc = register_blkdev(0, PTLBLK_NAME);
	if (rc < 0)
		return rc;
	ptlblk_major = rc;
	rc = ptlblk_netlink_init();
	if (rc)
		goto err_blkdev;
	pr_info("loaded (protocol version %d)\n", PTLBLK_PROTO_VERSION);
	return 0;

err_blkdev:
	unregister_blkdev(ptlblk_major, PTLBLK_NAME);
	return rc;
}

static void __exit ptlblk_exit(void)
{
	struct ptlblk_dev *dev;
	unsigned long index;

	/* no attach or detach can run once the family is gone */
	ptlblk_netlink_exit();
	xa_for_each(&ptlblk_devs, index, dev) {
		xa_erase(&ptlblk_devs, index);
		ptlblk_destroy(dev);
	}
	xa_destroy(&ptlblk_devs);
	unregister_blkdev(ptlblk_major, PTLBLK_NAME);
}

module_init(ptlblk_init);
module_exit(ptlblk_exit);
MODULE_DESCRIPTION("Block device over Portals");
MODULE_AUTHOR("Portals for Linux");
MODULE_LICENSE("GPL");
