// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching a device: an NI in the attaching process's namespace, the
 * handshake (HELLO: what the server exports), then a blk-mq disk shaped by
 * the answer. Detaching: fail what is in flight, remove the disk (which
 * waits until every request ended), then finalize the NI, after which no
 * handler runs and nothing refers to the device.
 *
 * A device dies (ptlblk_kill) when the network gives up on a request or a
 * request times out: its I/O fails from then on, and the admin detaches
 * it and attaches again once the server is back. A dead device is never
 * revived in place: requests of the old server's life might still be
 * answered, and a fresh NI and disk are the simple way to know they are
 * not.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <ptl/compat.h>

#include "ptlblk.h"

static unsigned int hello_timeout_ms = 5000;
module_param(hello_timeout_ms, uint, 0644);
MODULE_PARM_DESC(hello_timeout_ms, "how long attach waits for the server's answer");

static const struct block_device_operations ptlblk_fops = {
	.owner = THIS_MODULE,
};

static void ptlblk_abort_dead(struct ptlblk_dev *dev);

void ptlblk_kill(struct ptlblk_dev *dev, const char *why)
{
	if (test_and_set_bit(PTLBLK_DEV_DEAD, &dev->flags))
		return;
	pr_warn("ptlblk%d: server %u:%u: %s: failing its I/O (detach, attach again)\n",
		dev->index, dev->server.nid, dev->server.pid, why);
	schedule_work(&dev->dead_work);
}

static bool ptlblk_abort_one(struct request *rq, void *data)
{
	ptlblk_cmd_abort(blk_mq_rq_to_pdu(rq), BLK_STS_TRANSPORT);
	return true;
}

static void ptlblk_abort_dead(struct ptlblk_dev *dev)
{
	blk_mq_tagset_busy_iter(&dev->tag_set, ptlblk_abort_one, NULL);
}

static void ptlblk_dead_work(struct work_struct *work)
{
	ptlblk_abort_dead(container_of(work, struct ptlblk_dev, dead_work));
}

static int ptlblk_handshake(struct ptlblk_dev *dev,
			    struct netlink_ext_ack *extack)
{
	struct kvec kv = { .iov_len = sizeof(*dev->hello) };
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC,
		.nr_segs = 1,
		.kvec = &kv,
		.threshold = 1,
		.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE,
		.eq_handle = dev->eq,
	};
	const struct ptlblk_hello *h;
	ptl_handle_me_t me;
	ptl_handle_md_t mdh;
	int rc;

	dev->hello = kzalloc(sizeof(*dev->hello), GFP_KERNEL);
	if (!dev->hello)
		return -ENOMEM;
	kv.iov_base = dev->hello;
	md.user_ptr = dev->hello;
	dev->hello_status = -EHOSTUNREACH;
	if (ptlblk_bulk_attach(dev, PTLBLK_HELLO_COOKIE, &md, &me, &mdh) !=
	    PTL_OK)
		return -ENOMEM;
	rc = ptlblk_send(dev, PTLBLK_MB(PTLBLK_OP_HELLO, 0, 0,
					PTLBLK_HELLO_COOKIE),
			 PTLBLK_PROTO_VERSION);
	if (rc != PTL_OK) {
		NL_SET_ERR_MSG(extack, "cannot send to the server");
		return -EHOSTUNREACH;
	}
	/*
	 * On a timeout the entry stays: ptl_kni_fini() frees it before the
	 * buffer is freed.
	 */
	if (!wait_for_completion_timeout(&dev->hello_done,
					 msecs_to_jiffies(hello_timeout_ms))) {
		NL_SET_ERR_MSG(extack, "no answer from the server (is ptlblk-server running there?)");
		return -EHOSTUNREACH;
	}
	rc = dev->hello_status;
	if (rc == -EHOSTUNREACH) {
		NL_SET_ERR_MSG(extack, "the server's node is unreachable");
		return rc;
	}
	if (rc == -EPROTO) {
		NL_SET_ERR_MSG(extack, "the server speaks another protocol version");
		return rc;
	}
	if (rc) {
		NL_SET_ERR_MSG(extack, "the server refused the handshake");
		return rc;
	}

	h = dev->hello;
	dev->size = le64_to_cpu(h->size);
	dev->block_size = le32_to_cpu(h->block_size);
	dev->max_xfer = le32_to_cpu(h->max_xfer);
	dev->max_inflight = le32_to_cpu(h->max_inflight);
	dev->features = le32_to_cpu(h->flags);
	if (dev->hello_len != sizeof(*h) ||
	    le32_to_cpu(h->magic) != PTLBLK_HELLO_MAGIC ||
	    le16_to_cpu(h->version) != PTLBLK_PROTO_VERSION ||
	    !is_power_of_2(dev->block_size) || dev->block_size < 512 ||
	    dev->block_size > PAGE_SIZE || !dev->size ||
	    dev->size % dev->block_size || dev->max_xfer < dev->block_size ||
	    !dev->max_inflight) {
		NL_SET_ERR_MSG(extack, "malformed answer from the server");
		return -EPROTO;
	}
	return 0;
}

static int ptlblk_add_disk(struct ptlblk_dev *dev,
			   const struct ptlblk_config *cfg)
{
	ptl_ni_limits_t limits;
	struct ptl_disk_limits lim;
	struct gendisk *disk;
	u32 bytes, segs;
	int rc;

	if (ptl_kni_limits(dev->ni, &limits) != PTL_OK)
		return -EINVAL;
	dev->queue_depth = min(cfg->queue_depth, dev->max_inflight);
	dev->max_sectors = min3(cfg->max_sectors,
				dev->max_xfer >> SECTOR_SHIFT,
				PTLBLK_MAX_SECTORS);
	dev->max_sectors = round_down(dev->max_sectors,
				      dev->block_size >> SECTOR_SHIFT);
	bytes = dev->max_sectors << SECTOR_SHIFT;
	/* every page its own segment, plus one for an unaligned start */
	segs = max_t(u32, DIV_ROUND_UP(bytes, PAGE_SIZE) + 1, 16);
	dev->max_segments = min_t(u32, segs, limits.max_md_iovecs);
	dev->timeout_ms = cfg->timeout_ms;

	dev->tag_set.ops = &ptlblk_mq_ops;
	dev->tag_set.nr_hw_queues = 1;
	dev->tag_set.queue_depth = dev->queue_depth;
	dev->tag_set.numa_node = NUMA_NO_NODE;
	dev->tag_set.cmd_size = sizeof(struct ptlblk_cmd);
	/*
	 * The kernel API may sleep: queue_rq runs where it can. No I/O
	 * scheduler by default: with one (and BLK_MQ_F_BLOCKING) every
	 * dispatch is handed to a kblockd worker, one more context switch
	 * per request; the server orders its own work. An admin can still
	 * pick one in /sys/block/ptlblkN/queue/scheduler.
	 */
	dev->tag_set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING |
			     BLK_MQ_F_NO_SCHED_BY_DEFAULT;
	dev->tag_set.driver_data = dev;
	dev->tag_set.timeout = msecs_to_jiffies(dev->timeout_ms);
	rc = blk_mq_alloc_tag_set(&dev->tag_set);
	if (rc)
		return rc;

	/*
	 * Written pages go on the wire as they are (skb fragments, CRC32C
	 * per frame, retransmitted from the same pages): they must not
	 * change while the write is in flight (stable_writes).
	 */
	lim = (struct ptl_disk_limits){
		.block_size = dev->block_size,
		.max_hw_sectors = dev->max_sectors,
		.max_segments = dev->max_segments,
		.write_cache = dev->features & PTLBLK_F_FLUSH,
		.fua = dev->features & PTLBLK_F_FUA,
		.rotational = dev->features & PTLBLK_F_ROTATIONAL,
		.stable_writes = true,
	};
	if (dev->features & PTLBLK_F_DISCARD) {
		u32 gran = le32_to_cpu(dev->hello->discard_granularity);

		lim.max_discard_sectors = round_down(PTLBLK_MAX_SECTORS,
						     dev->block_size >> SECTOR_SHIFT);
		lim.discard_granularity = max(gran, dev->block_size);
	}
	disk = ptl_blk_mq_alloc_disk(&dev->tag_set, &lim, dev);
	if (IS_ERR(disk)) {
		rc = PTR_ERR(disk);
		goto err_tags;
	}
	disk->major = ptlblk_major;
	disk->first_minor = dev->index * PTLBLK_MINORS;
	disk->minors = PTLBLK_MINORS;
	disk->fops = &ptlblk_fops;
	disk->private_data = dev;
	snprintf(disk->disk_name, DISK_NAME_LEN, PTLBLK_NAME "%d", dev->index);

	set_capacity(disk, dev->size >> SECTOR_SHIFT);
	if (dev->features & PTLBLK_F_READ_ONLY)
		set_disk_ro(disk, true);

	dev->disk = disk;
	rc = add_disk(disk);
	if (rc)
		goto err_disk;
	/* answers may be matched to requests from now on (ptlblk_reply) */
	smp_store_release(&dev->ready, true);
	return 0;

err_disk:
	dev->disk = NULL;
	put_disk(disk);
err_tags:
	blk_mq_free_tag_set(&dev->tag_set);
	return rc;
}

static void ptlblk_free(struct ptlblk_dev *dev)
{
	kfree(dev->hello);
	put_net(dev->net);
	kfree(dev);
}

struct ptlblk_dev *ptlblk_attach(const struct ptlblk_config *cfg,
				 struct netlink_ext_ack *extack)
{
	struct ptlblk_dev *dev;
	int rc, i;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->net = get_net(cfg->net);
	dev->iface = cfg->iface;
	dev->server = cfg->server;
	init_completion(&dev->hello_done);
	INIT_WORK(&dev->dead_work, ptlblk_dead_work);
	for (i = 0; i < PTLBLK_ST_COUNT; i++)
		atomic64_set(&dev->stats[i], 0);

	rc = ptlblk_register(dev);	/* reserves the index */
	if (rc)
		goto err_free;
	rc = ptlblk_portals_open(dev);
	if (rc) {
		if (rc == -ENODEV)
			NL_SET_ERR_MSG(extack, "no such Portals interface in this namespace");
		else
			NL_SET_ERR_MSG(extack, "cannot open a Portals NI");
		goto err_index;
	}
	rc = ptlblk_handshake(dev, extack);
	if (rc)
		goto err_ni;
	rc = ptlblk_add_disk(dev, cfg);
	if (rc)
		goto err_ni;
	pr_info("%s: %llu bytes from server %u:%u, block %u, %u in flight, %u KiB requests, features 0x%x\n",
		dev->disk->disk_name, dev->size, dev->server.nid,
		dev->server.pid, dev->block_size, dev->queue_depth,
		dev->max_sectors >> 1, dev->features);
	ptlblk_publish(dev);
	return dev;

err_ni:
	ptlblk_portals_close(dev);
err_index:
	ptlblk_unregister(dev->net, dev->index);
err_free:
	ptlblk_free(dev);
	return ERR_PTR(rc);
}

/* After ptlblk_unregister(): nobody else can reach the device. */
void ptlblk_destroy(struct ptlblk_dev *dev)
{
	/* dead: new requests are refused, the ones in flight fail */
	set_bit(PTLBLK_DEV_DEAD, &dev->flags);
	ptlblk_abort_dead(dev);
	/*
	 * Waits until every request ended (an abort that found a transfer
	 * running ends with it, within the transport's peer timeout).
	 */
	del_gendisk(dev->disk);
	/*
	 * Whoever declared the device dead queued dead_work before its
	 * request could end, so none is queued after this flush.
	 */
	flush_work(&dev->dead_work);
	ptlblk_portals_close(dev);
	put_disk(dev->disk);
	blk_mq_free_tag_set(&dev->tag_set);
	pr_info("ptlblk%d: detached\n", dev->index);
	ptlblk_free(dev);
}

/* Registry lock held. */
int ptlblk_detach(struct ptlblk_dev *dev)
{
	if (disk_openers(dev->disk))
		return -EBUSY;
	return 0;
}
