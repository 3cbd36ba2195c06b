// SPDX-License-Identifier: GPL-2.0
/*
 * The Portals objects of one device and the handler of its events.
 *
 * A device has its own NI (an ephemeral pid on the chosen interface of the
 * attaching process's network namespace) and one callback EQ that every
 * MD of it names, so that completions need no thread: the handler runs
 * where the event is produced (softirq for traffic from another node) and
 * only records statuses and drops references (queue.c), which is all the
 * kernel API allows a handler to do.
 *
 *   req_md     empty, bound, infinite threshold: every request is a
 *              zero-length put from it. Its SEND_END events tell a request
 *              that never reached the server (PTL_NI_FAIL) from one that
 *              did; successful ones are ignored.
 *   reply_me   on PTLBLK_PT_REPLY, ignoring every match bit, with an empty
 *              MD of infinite threshold: the server's zero-length status
 *              puts land there, their match bits name the request. An
 *              empty MD never fills, so statuses cannot be dropped for
 *              lack of room.
 *   bulk MEs   one per READ or WRITE (queue.c), on PTLBLK_PT_BULK, match
 *              bits = the request's cookie, threshold 1 and auto-unlink:
 *              its UNLINK event is when the request's pages are the
 *              block layer's again.
 *
 * The events are told apart by the MD's user_ptr: &dev->req_md,
 * &dev->reply_md, dev->hello (the handshake), or the request's ptlblk_cmd.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>

#include "ptlblk.h"

/* A status from the wire, as an errno for the handshake and logs. */
int ptlblk_status_errno(u64 status)
{
	switch (status) {
	case PTLBLK_S_OK:
		return 0;
	case PTLBLK_S_INVAL:
		return -EINVAL;
	case PTLBLK_S_NOSPC:
		return -ENOSPC;
	case PTLBLK_S_ROFS:
		return -EROFS;
	case PTLBLK_S_NOTSUPP:
		return -EOPNOTSUPP;
	case PTLBLK_S_VERSION:
		return -EPROTO;
	case PTLBLK_S_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

static void ptlblk_hello_event(struct ptlblk_dev *dev, const ptl_event_t *ev)
{
	switch (ev->type) {
	case PTL_EVENT_PUT_END:
		if (ev->ni_fail_type != PTL_NI_OK)
			dev->hello_status = -EIO;
		else
			dev->hello_status = ptlblk_status_errno(ev->hdr_data);
		dev->hello_len = ev->mlength;
		break;
	case PTL_EVENT_UNLINK:
		complete(&dev->hello_done);
		break;
	default:
		break;
	}
}

/*
 * The READ's data came (PUT_END) or the WRITE's was taken (GET_END), all
 * of it: only then may the request end with success (ptlblk_complete()).
 * Before the UNLINK that drops the bulk reference, so seen by completion.
 */
static void ptlblk_bulk_moved(struct ptlblk_cmd *cmd, const ptl_event_t *ev)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	if (ev->ni_fail_type == PTL_NI_OK && ev->mlength == blk_rq_bytes(rq))
		set_bit(PTLBLK_CMD_MOVED, &cmd->flags);
}

static void ptlblk_bulk_event(struct ptlblk_cmd *cmd, const ptl_event_t *ev)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	if (ev->type == PTL_EVENT_PUT_END || ev->type == PTL_EVENT_GET_END)
		ptlblk_bulk_moved(cmd, ev);
	switch (ev->type) {
	case PTL_EVENT_PUT_END:
		/* READ data (or a refusal) with the status in hdr_data */
		if (ev->ni_fail_type != PTL_NI_OK)
			ptlblk_cmd_set_status(cmd, BLK_STS_TRANSPORT);
		else if (ev->hdr_data == PTLBLK_S_OK &&
			 ev->mlength != blk_rq_bytes(rq))
			ptlblk_cmd_set_status(cmd, BLK_STS_IOERR);
		else
			ptlblk_cmd_set_status(cmd,
					      ptlblk_status_blk(ev->hdr_data));
		break;
	case PTL_EVENT_UNLINK:
		/* auto-unlink: the pages are the block layer's again */
		if (test_and_clear_bit(PTLBLK_CMD_BULK, &cmd->flags))
			ptlblk_cmd_put(cmd);
		break;
	default:
		/* GET_END: the WRITE's status comes on PTLBLK_PT_REPLY */
		break;
	}
}

/*
 * Softirq or process context, bottom halves off, the NI's lock held: no
 * call into the kernel API, no sleeping (include/ptl/kapi.h, Handlers).
 */
static void ptlblk_event(void *priv, const ptl_event_t *ev)
{
	struct ptlblk_dev *dev = priv;
	void *what = ev->md.user_ptr;

	if (what == &dev->reply_md) {
		if (ev->type == PTL_EVENT_PUT_END && ev->ni_fail_type == PTL_NI_OK)
			ptlblk_reply(dev, PTLBLK_MB_COOKIE(ev->match_bits),
				     ev->hdr_data, false);
	} else if (what == &dev->req_md) {
		if (ev->type != PTL_EVENT_SEND_END ||
		    ev->ni_fail_type == PTL_NI_OK)
			return;
		if (PTLBLK_MB_COOKIE(ev->match_bits) == PTLBLK_HELLO_COOKIE) {
			dev->hello_status = -EHOSTUNREACH;
			complete(&dev->hello_done);
			return;
		}
		ptlblk_reply(dev, PTLBLK_MB_COOKIE(ev->match_bits), PTLBLK_S_IO,
			     true);
	} else if (what == dev->hello) {
		ptlblk_hello_event(dev, ev);
	} else if (what) {
		ptlblk_bulk_event(what, ev);
	}
}

int ptlblk_portals_open(struct ptlblk_dev *dev)
{
	struct ptl_kni_config cfg = {
		.version = PTL_KAPI_VERSION,
		.iface = dev->iface,
		.pid = PTL_PID_ANY,
		.jid = PTL_JID_NONE,
		.net = dev->net,
		.name = PTLBLK_NAME,
	};
	ptl_process_id_t id;
	struct ptl_kmd req = {
		.type = PTL_KMD_KVEC,
		.nr_segs = 0,
		.threshold = PTL_MD_THRESH_INF,
		.options = PTL_MD_EVENT_START_DISABLE,
		.user_ptr = &dev->req_md,
	};
	struct ptl_kmd reply = {
		.type = PTL_KMD_KVEC,
		.nr_segs = 0,
		.threshold = PTL_MD_THRESH_INF,
		.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE,
		.user_ptr = &dev->reply_md,
	};
	int rc;

	rc = ptl_kni_init(&cfg, &dev->ni);
	if (rc != PTL_OK) {
		dev->ni = NULL;
		return rc == PTL_IFACE_INVALID ? -ENODEV : -ENOMEM;
	}
	rc = ptl_kni_identity(dev->ni, &id, NULL, NULL);
	if (rc == PTL_OK) {
		dev->local_pid = id.pid;
		rc = ptl_keq_alloc(dev->ni, 1, ptlblk_event, dev, &dev->eq);
	}
	if (rc == PTL_OK) {
		req.eq_handle = dev->eq;
		rc = ptl_kmd_bind(dev->ni, &req, PTL_RETAIN, &dev->req_md);
	}
	/* Only the server may answer. */
	if (rc == PTL_OK)
		rc = ptl_kme_attach(dev->ni, PTLBLK_PT_REPLY, dev->server, 0,
				    ~0ULL, PTL_RETAIN, PTL_INS_AFTER,
				    &dev->reply_me);
	if (rc == PTL_OK) {
		reply.eq_handle = dev->eq;
		rc = ptl_kmd_attach(dev->ni, dev->reply_me, &reply, PTL_RETAIN,
				    &dev->reply_md);
	}
	if (rc != PTL_OK) {
		pr_err("Portals objects of a device: %d\n", rc);
		ptlblk_portals_close(dev);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Frees every object of the NI; no handler runs afterwards (kapi.h). Every
 * request has ended before (del_gendisk waited for them), so no bulk MD
 * holds a request's pages.
 */
void ptlblk_portals_close(struct ptlblk_dev *dev)
{
	if (dev->ni)
		ptl_kni_fini(dev->ni);
	dev->ni = NULL;
}

/* A request: a zero-length put whose match bits and hdr_data say it all. */
int ptlblk_send(struct ptlblk_dev *dev, u64 match_bits, u64 hdr_data)
{
	return ptl_kput(dev->ni, dev->req_md, PTL_NO_ACK_REQ, dev->server,
			PTLBLK_PT_REQUEST, 0, match_bits, 0, hdr_data);
}

/*
 * The entry the server moves one request's data through: only the server,
 * only this cookie, used once, then unlinked (posting UNLINK).
 */
int ptlblk_bulk_attach(struct ptlblk_dev *dev, u32 cookie,
		       const struct ptl_kmd *md, ptl_handle_me_t *me,
		       ptl_handle_md_t *mdh)
{
	int rc;

	rc = ptl_kme_attach(dev->ni, PTLBLK_PT_BULK, dev->server, cookie, 0,
			    PTL_UNLINK, PTL_INS_AFTER, me);
	if (rc != PTL_OK)
		return rc;
	rc = ptl_kmd_attach(dev->ni, *me, md, PTL_UNLINK, mdh);
	if (rc != PTL_OK)
		ptl_kme_unlink(dev->ni, *me);
	return rc;
}
