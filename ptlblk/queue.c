// SPDX-License-Identifier: GPL-2.0
/*
 * blk-mq: a request becomes Portals operations, and ends when all of its
 * references are gone (struct ptlblk_cmd):
 *
 *   READ     bulk ME over the request's pages (puts only)  +  request put
 *            <- server puts the data there, status in hdr_data
 *            PUT_END (status) ... UNLINK (pages are ours again) => done
 *   WRITE    bulk ME over the request's pages (gets only)  +  request put
 *            <- server gets the data, writes it (durably for FUA)
 *            GET_END, UNLINK ... reply put on PTLBLK_PT_REPLY => done
 *   FLUSH, DISCARD: request put ... reply put => done
 *
 * The pages are handed to the library as they are (bio_vec MD): nothing is
 * copied on the client, nothing pinned (the block layer holds them until
 * the request ends, which is after the MD is gone). Reads land in them
 * straight from the transport's frames.
 *
 * Success needs the data: a READ or WRITE ends with BLK_STS_OK only if
 * the server said so and its bulk MD moved every byte (PTLBLK_CMD_MOVED).
 * A server that answers a READ on the reply portal, or a WRITE without
 * fetching it (all of it), gets an error, never a success for pages the
 * data never reached (ptlblk_complete()).
 *
 * Failures: a request put the network gave up on (SEND_END PTL_NI_FAIL),
 * or a request unanswered for the device's timeout, declares the device
 * dead (ptlblk_kill): its requests in flight fail at once
 * (BLK_STS_TRANSPORT), new ones are refused, and the admin detaches and
 * attaches again. A request is aborted by setting its status and unlinking
 * its bulk ME; if a transfer is using the ME right now (PTL_ME_IN_USE) the
 * transport ends that transfer within its peer timeout and the request
 * timer tries again. So every request ends within timeout_ms plus the
 * transport's bound, and no task hangs on a dead server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>

#include "ptlblk.h"

blk_status_t ptlblk_status_blk(u64 status)
{
	switch (status) {
	case PTLBLK_S_OK:
		return BLK_STS_OK;
	case PTLBLK_S_NOSPC:
		return BLK_STS_NOSPC;
	case PTLBLK_S_NOTSUPP:
		return BLK_STS_NOTSUPP;
	case PTLBLK_S_ROFS:
		return BLK_STS_PROTECTION;
	case PTLBLK_S_BUSY:
		return BLK_STS_TRANSPORT;
	default:
		return BLK_STS_IOERR;
	}
}

void ptlblk_cmd_put(struct ptlblk_cmd *cmd)
{
	/* atomic_dec_and_test orders cmd->status before the completion */
	if (atomic_dec_and_test(&cmd->pending))
		blk_mq_complete_request(blk_mq_rq_from_pdu(cmd));
}

/*
 * The first status wins (stored plus one: 0 is "none yet"); it drops the
 * status reference.
 */
void ptlblk_cmd_set_status(struct ptlblk_cmd *cmd, blk_status_t status)
{
	if (atomic_cmpxchg(&cmd->status, 0, (__force int)status + 1) == 0)
		ptlblk_cmd_put(cmd);
}

static bool ptlblk_cmd_has_status(struct ptlblk_cmd *cmd)
{
	return atomic_read(&cmd->status) != 0;
}

/*
 * An answer (or a failed request put) for the request named by a cookie.
 * Handler context. The tag's request is only trusted when its generation
 * matches and its status is still open: anything else is a late answer to
 * a request that already ended (which only happens after the device died:
 * requests end early only by abort).
 */
void ptlblk_reply(struct ptlblk_dev *dev, u32 cookie, u64 status,
		  bool send_failed)
{
	u32 tag = PTLBLK_COOKIE_TAG(cookie);
	struct ptlblk_cmd *cmd;
	struct request *rq;

	/* pairs with the release in ptlblk_add_disk(): the tag set is whole */
	if (!smp_load_acquire(&dev->ready) || tag >= dev->tag_set.queue_depth)
		return;
	rq = blk_mq_tag_to_rq(dev->tag_set.tags[0], tag);
	if (!rq || !blk_mq_request_started(rq))
		return;
	cmd = blk_mq_rq_to_pdu(rq);
	if (READ_ONCE(cmd->gen) != PTLBLK_COOKIE_GEN(cookie) ||
	    !atomic_inc_not_zero(&cmd->pending))
		return;
	if (send_failed) {
		ptlblk_cmd_set_status(cmd, BLK_STS_TRANSPORT);
		/* the bulk ME is unlinked by the abort of the dead device */
		ptlblk_kill(dev, "the network gave up on a request");
	} else {
		ptlblk_cmd_set_status(cmd, ptlblk_status_blk(status));
	}
	ptlblk_cmd_put(cmd);
}

/*
 * Process context, holding a reference on @cmd. An explicit unlink posts
 * no UNLINK event (only auto-unlink does), so when it succeeds the bulk
 * reference is the caller's to drop. The bit makes sure exactly one of
 * this and the UNLINK handler drops it.
 */
static int ptlblk_cmd_unlink(struct ptlblk_cmd *cmd)
{
	int rc = ptl_kme_unlink(cmd->dev->ni, cmd->me);

	if (rc == PTL_OK && test_and_clear_bit(PTLBLK_CMD_BULK, &cmd->flags))
		ptlblk_cmd_put(cmd);
	return rc;
}

/*
 * Process context. Ends @cmd with @status unless it has its status already,
 * unlinking its bulk ME. Returns false when a transfer holds the ME: it
 * will end within the transport's peer timeout, try again then.
 */
bool ptlblk_cmd_abort(struct ptlblk_cmd *cmd, blk_status_t status)
{
	bool done = true;

	if (!atomic_inc_not_zero(&cmd->pending))
		return true;
	ptlblk_cmd_set_status(cmd, status);
	if (test_bit(PTLBLK_CMD_BULK, &cmd->flags) &&
	    ptlblk_cmd_unlink(cmd) == PTL_ME_IN_USE)
		done = false;
	ptlblk_cmd_put(cmd);
	return done;
}

static void ptlblk_fill_bvecs(struct ptlblk_cmd *cmd, struct request *rq,
			      u32 *nr, bool *overflow)
{
	struct req_iterator iter;
	struct bio_vec bv, *last = NULL;
	u32 n = 0;

	*overflow = false;
	rq_for_each_bvec(bv, rq, iter) {
		/*
		 * Physically contiguous neighbours become one entry, as the
		 * block layer counted them as one segment.
		 */
		if (last && page_to_phys(last->bv_page) + last->bv_offset +
			    last->bv_len ==
			    page_to_phys(bv.bv_page) + bv.bv_offset) {
			last->bv_len += bv.bv_len;
			continue;
		}
		if (n == cmd->dev->max_segments) {
			*overflow = true;
			return;
		}
		cmd->bvecs[n] = bv;
		last = &cmd->bvecs[n++];
	}
	*nr = n;
}

static blk_status_t ptlblk_queue_rq(struct blk_mq_hw_ctx *hctx,
				    const struct blk_mq_queue_data *bd)
{
	struct request *rq = bd->rq;
	struct ptlblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct ptlblk_dev *dev = cmd->dev;
	struct ptl_kmd md = {
		.type = PTL_KMD_BVEC,
		.bvec = cmd->bvecs,
		.threshold = 1,
		.options = PTL_MD_EVENT_START_DISABLE,
		.user_ptr = cmd,
		.eq_handle = dev->eq,
	};
	unsigned int op, flags = 0;
	u32 cookie, sectors = 0;
	bool bulk = false, overflow;
	int rc;

	if (test_bit(PTLBLK_DEV_DEAD, &dev->flags))
		return BLK_STS_TRANSPORT;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = PTLBLK_OP_READ;
		md.options |= PTL_MD_OP_PUT;
		bulk = true;
		break;
	case REQ_OP_WRITE:
		op = PTLBLK_OP_WRITE;
		md.options |= PTL_MD_OP_GET;
		bulk = true;
		if (rq->cmd_flags & REQ_FUA)
			flags |= PTLBLK_RQ_FUA;
		break;
	case REQ_OP_FLUSH:
		op = PTLBLK_OP_FLUSH;
		break;
	case REQ_OP_DISCARD:
		op = PTLBLK_OP_DISCARD;
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (op != PTLBLK_OP_FLUSH)
		sectors = blk_rq_sectors(rq);
	if (bulk) {
		ptlblk_fill_bvecs(cmd, rq, &md.nr_segs, &overflow);
		if (overflow) {
			pr_err_ratelimited("%s: request of more than %u segments\n",
					   dev->disk->disk_name,
					   dev->max_segments);
			return BLK_STS_IOERR;
		}
	}

	cmd->gen++;
	cookie = PTLBLK_COOKIE(rq->tag, cmd->gen);
	atomic_set(&cmd->status, 0);
	cmd->flags = 0;
	/* status + issuing thread (+ bulk MD) */
	atomic_set(&cmd->pending, bulk ? 3 : 2);
	blk_mq_start_request(rq);

	if (bulk) {
		rc = ptlblk_bulk_attach(dev, cookie, &md, &cmd->me, &cmd->md);
		if (rc != PTL_OK) {
			pr_err_ratelimited("%s: bulk ME: %d\n",
					   dev->disk->disk_name, rc);
			atomic_dec(&cmd->pending);	/* no bulk MD */
			ptlblk_cmd_set_status(cmd, BLK_STS_IOERR);
			goto out;
		}
		set_bit(PTLBLK_CMD_BULK, &cmd->flags);
		/*
		 * An abort that ran before the bit was visible did not
		 * unlink the ME: pairs with ptlblk_cmd_abort()'s
		 * atomic_cmpxchg() (a full barrier) before its test_bit().
		 */
		smp_mb__after_atomic();
		if (ptlblk_cmd_has_status(cmd)) {
			ptlblk_cmd_unlink(cmd);
			goto out;
		}
	}
	rc = ptlblk_send(dev, PTLBLK_MB(op, flags, sectors, cookie),
			 (u64)blk_rq_pos(rq) << SECTOR_SHIFT);
	if (rc != PTL_OK) {
		pr_err_ratelimited("%s: request put: %d\n",
				   dev->disk->disk_name, rc);
		ptlblk_cmd_set_status(cmd, BLK_STS_IOERR);
		if (bulk)
			ptlblk_cmd_unlink(cmd);
	}
out:
	ptlblk_cmd_put(cmd);
	return BLK_STS_OK;
}

/*
 * The status a request ends with: the server's, unless it claims success
 * for a READ or WRITE whose data did not move.
 */
static blk_status_t ptlblk_cmd_status(struct ptlblk_cmd *cmd,
				      struct request *rq)
{
	blk_status_t status;

	status = (__force blk_status_t)(atomic_read(&cmd->status) - 1);
	if (status != BLK_STS_OK || test_bit(PTLBLK_CMD_MOVED, &cmd->flags) ||
	    (req_op(rq) != REQ_OP_READ && req_op(rq) != REQ_OP_WRITE))
		return status;
	pr_err_ratelimited("%s: the server answered a %s of %u bytes with success, but its data did not move: failing it\n",
			   cmd->dev->disk->disk_name,
			   req_op(rq) == REQ_OP_READ ? "READ" : "WRITE",
			   blk_rq_bytes(rq));
	return BLK_STS_IOERR;
}

static void ptlblk_complete(struct request *rq)
{
	struct ptlblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct ptlblk_dev *dev = cmd->dev;
	unsigned int bytes = blk_rq_bytes(rq);
	blk_status_t status;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		atomic64_inc(&dev->stats[PTLBLK_ST_READS]);
		atomic64_add(bytes, &dev->stats[PTLBLK_ST_READ_BYTES]);
		break;
	case REQ_OP_WRITE:
		atomic64_inc(&dev->stats[PTLBLK_ST_WRITES]);
		atomic64_add(bytes, &dev->stats[PTLBLK_ST_WRITE_BYTES]);
		break;
	case REQ_OP_FLUSH:
		atomic64_inc(&dev->stats[PTLBLK_ST_FLUSHES]);
		break;
	default:
		atomic64_inc(&dev->stats[PTLBLK_ST_DISCARDS]);
		break;
	}
	status = ptlblk_cmd_status(cmd, rq);
	if (status != BLK_STS_OK)
		atomic64_inc(&dev->stats[PTLBLK_ST_ERRORS]);
	blk_mq_end_request(rq, status);
}

static enum blk_eh_timer_return ptlblk_timeout(struct request *rq)
{
	struct ptlblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct ptlblk_dev *dev = cmd->dev;

	if (!ptlblk_cmd_has_status(cmd)) {
		atomic64_inc(&dev->stats[PTLBLK_ST_TIMEOUTS]);
		ptlblk_kill(dev, "a request timed out");
	}
	return ptlblk_cmd_abort(cmd, BLK_STS_IOERR) ? BLK_EH_DONE :
						      BLK_EH_RESET_TIMER;
}

static int ptlblk_init_request(struct blk_mq_tag_set *set, struct request *rq,
			       unsigned int hctx_idx, unsigned int numa_node)
{
	struct ptlblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct ptlblk_dev *dev = set->driver_data;

	cmd->dev = dev;
	cmd->bvecs = kcalloc_node(dev->max_segments, sizeof(*cmd->bvecs),
				  GFP_KERNEL, numa_node);
	return cmd->bvecs ? 0 : -ENOMEM;
}

static void ptlblk_exit_request(struct blk_mq_tag_set *set, struct request *rq,
				unsigned int hctx_idx)
{
	struct ptlblk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	kfree(cmd->bvecs);
}

const struct blk_mq_ops ptlblk_mq_ops = {
	.queue_rq = ptlblk_queue_rq,
	.complete = ptlblk_complete,
	.timeout = ptlblk_timeout,
	.init_request = ptlblk_init_request,
	.exit_request = ptlblk_exit_request,
};

static bool ptlblk_count_busy(struct request *rq, void *data)
{
	(*(unsigned int *)data)++;
	return true;
}

unsigned int ptlblk_inflight(struct ptlblk_dev *dev)
{
	unsigned int n = 0;

	if (dev->disk)
		blk_mq_tagset_busy_iter(&dev->tag_set, ptlblk_count_busy, &n);
	return n;
}
