// SPDX-License-Identifier: GPL-2.0
/*
 * Messages to and from other nodes: the library's half of
 * include/ptl/transport.h.
 *
 * Every message that crosses the wire is a struct ptl_msg: the core's
 * message state, a reference on the local NI it belongs to, the wire
 * header, and the transport's scratch area. One message lives through
 * one of these lives:
 *
 *   request  PtlPut/PtlGet/PtlGetPut on this node (ptl_remote_request, in the
 *            initiator's ioctl) -> ops->send -> ptl_msg_sent:
 *            SEND_END (put, getput); for a get, nothing unless the request
 *            failed, which ends the get with REPLY_END PTL_NI_FAIL.
 *   incoming a header from a peer (ptl_rx_start, softirq) -> deposits ->
 *            ptl_rx_done, which finalizes it (PUT_END, REPLY_END, ...) or
 *            turns it into a
 *   response the ACK of a put, the REPLY of a get or getput, sent back to
 *            the same peer by the transport -> ptl_msg_sent: GET_END,
 *            GETPUT_END once the reply's data has been delivered. A put's
 *            PUT_END is posted when its ACK is handed to the transport
 *            (the ACK "went out", spec 8.5): the ACK carries no data, so
 *            nothing of the MD is needed any more, and a put that asks for
 *            an ACK does not end an RTT after a later put that does not
 *            (the order of END events would otherwise depend on the ACK).
 *
 * The core message keeps its MD referenced (unlink answers
 * PTL_MD_IN_USE) and the NI reference keeps the NI, its pinned pages and
 * its rings alive until the message ends, whatever its process does: a
 * page the transport may still send is never unpinned. Ends that may come
 * in softirq drop the NI reference with ptl_ni_put_async().
 *
 * Requests are charged to their owner's max_user_kmem and memory cgroup.
 * Incoming messages are allocated in softirq on behalf of nobody (the
 * transport may make a memory cgroup the active one) and bounded by the
 * transport: a peer may hold only so many open (rtscts/open.c). Each
 * holds its NI until it ends, so an NI that closes has the transport
 * cancel them (ptl_remote_ni_closing()): its pid is free at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include <ptl/transport.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"
#include "ptl_request.h"
#include "ptl_trace.h"

enum ptl_msg_role {
	PTL_ROLE_REQUEST,	/* sent by this node's initiator */
	PTL_ROLE_INCOMING,	/* arriving; deposits go into core.md */
	PTL_ROLE_SWAP,		/* an arriving getput; deposits go to swap_in */
	PTL_ROLE_ACK,		/* response: a put's ACK (its put has ended) */
	PTL_ROLE_REPLY,		/* response: data from core.md */
	PTL_ROLE_SWAP_REPLY,	/* response: the bytes in swap_old */
};

struct ptl_msg {
	struct ptl_ni *ni;		/* referenced */
	struct ptlc_msg core;
	u8 hdr[PTL_WIRE_HDR_LEN];	/* what goes on the wire */
	u64 len;			/* payload bytes to send */
	u64 deposit;			/* incoming: bytes to take */
	u32 dst_nid;
	u8 role;			/* enum ptl_msg_role */
	bool charged;			/* to ni->acct (requests) */
	bool incoming;			/* counted in ni->incoming */
	u8 swap_in[PTLC_CAP_GETPUT_MD];
	u8 swap_old[PTLC_CAP_GETPUT_MD];
	unsigned long cb[PTL_MSG_CB_SIZE / sizeof(unsigned long)];
};

static struct kmem_cache *ptl_msg_cache;

/*
 * One freed message kept per CPU for the next: a ping-pong allocates and
 * frees one per message at each end, and every slab allocation is zeroed
 * on Debian's kernel (init_on_alloc), 750 bytes each time.
 */
static DEFINE_PER_CPU(struct ptl_msg *, ptl_msg_spare);

static struct ptl_msg *ptl_msg_alloc(struct ptl_ni *ni, gfp_t gfp,
				     bool charge)
{
	struct ptl_msg *msg;

	if (charge && !ptl_user_charge_kmem(&ni->acct, sizeof(*msg)))
		return NULL;
	msg = this_cpu_xchg(ptl_msg_spare, NULL);
	if (!msg)
		msg = kmem_cache_alloc(ptl_msg_cache, gfp);
	if (!msg) {
		if (charge)
			ptl_user_charge_kmem(&ni->acct, -(long)sizeof(*msg));
		return NULL;
	}
	msg->ni = ni;
	msg->charged = charge;
	msg->incoming = false;
	msg->len = 0;
	msg->deposit = 0;
	memset(msg->cb, 0, sizeof(msg->cb));
	return msg;
}

/* Frees @msg and drops its NI reference; any context. */
static void ptl_msg_free(struct ptl_msg *msg)
{
	struct ptl_ni *ni = msg->ni;

	if (msg->charged)
		ptl_user_charge_kmem(&ni->acct, -(long)sizeof(*msg));
	msg = this_cpu_xchg(ptl_msg_spare, msg);
	if (msg)
		kmem_cache_free(ptl_msg_cache, msg);
	ptl_ni_put_async(ni);
}

/* Wire header and length of what @msg sends, from the core's state. */
static void ptl_msg_prepare_tx(struct ptl_msg *msg, u8 role, u64 len)
{
	msg->role = role;
	msg->len = len;
	msg->dst_nid = msg->core.hdr.dst.nid;
	ptl_hdr_encode(&msg->core.hdr, msg->hdr);
}

static void ptl_count_fail(struct ptl_msg *msg, u32 fail)
{
	if (fail != PTL_NI_OK)
		atomic64_inc(&msg->ni->iface->stats.msgs_failed);
}

/* ---- requests from this node ---- */

/* Hands @msg to the interface's transport; fails it if there is none. */
static void ptl_remote_send(struct ptl_iface *iface, struct ptl_msg *msg)
{
	struct ptl_binding *b = ptl_binding_get(iface);
	int err = -ENETUNREACH;

	if (b) {
		atomic64_inc(&iface->stats.msgs_tx);
		err = b->t->ops->send(b, msg, GFP_KERNEL);
		ptl_binding_put(b);
	}
	if (err)
		ptl_msg_sent(msg, PTL_NI_FAIL);
}

/**
 * ptl_remote_request - send a call to another node
 * @ni: the initiator NI (the caller's reference)
 * @req: the call
 *
 * Return: what the core says of the arguments; PTL_OK means initiated,
 * also when the network then fails it (with an event).
 */
long ptl_remote_request(struct ptl_ni *ni, const struct ptl_data_req *req)
{
	struct ptl_msg *msg;
	int rc;

	msg = ptl_msg_alloc(ni, GFP_KERNEL_ACCOUNT, true);
	if (!msg)
		return PTL_NO_SPACE;
	kref_get(&ni->ref);
	rc = ptl_request_build(ni, req, &msg->core);
	if (rc != PTL_OK) {
		ptl_msg_free(msg);
		return rc;
	}
	ptl_msg_prepare_tx(msg, PTL_ROLE_REQUEST, msg->core.mlength);
	ptl_remote_send(ni->iface, msg);
	return PTL_OK;
}

/* ---- what transports read of a message ---- */

void *ptl_msg_cb(struct ptl_msg *msg)
{
	return msg->cb;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_cb, PORTALS);

u32 ptl_msg_dst_nid(const struct ptl_msg *msg)
{
	return msg->dst_nid;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_dst_nid, PORTALS);

const u8 *ptl_msg_hdr(const struct ptl_msg *msg)
{
	return msg->hdr;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_hdr, PORTALS);

u64 ptl_msg_len(const struct ptl_msg *msg)
{
	return msg->len;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_len, PORTALS);

bool ptl_msg_is_response(const struct ptl_msg *msg)
{
	return msg->role != PTL_ROLE_REQUEST;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_is_response, PORTALS);

u32 ptl_msg_src_uid(const struct ptl_msg *msg)
{
	return ptl_wire_src_uid(msg->hdr);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_src_uid, PORTALS);

static bool ptl_msg_range_ok(const struct ptl_msg *msg, u64 off, u64 len)
{
	return off <= msg->len && len <= msg->len - off;
}

int ptl_msg_copy(struct ptl_msg *msg, u64 off, void *buf, size_t len)
{
	if (!ptl_msg_range_ok(msg, off, len))
		return -EFAULT;
	if (msg->role == PTL_ROLE_SWAP_REPLY) {
		memcpy(buf, msg->swap_old + off, len);
		return 0;
	}
	return ptl_mem_to_buf(buf, msg->core.md, msg->core.offset + off, len);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_copy, PORTALS);

int ptl_msg_frags(struct ptl_msg *msg, u64 off, u32 len, struct sk_buff *skb)
{
	if (!ptl_msg_range_ok(msg, off, len))
		return -EFAULT;
	if (msg->role == PTL_ROLE_SWAP_REPLY)
		return -EOPNOTSUPP;
	return ptl_mem_frags(msg->core.md, msg->core.offset + off, len, skb);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_frags, PORTALS);

int ptl_msg_payload_sg(struct ptl_msg *msg, u64 off, u64 len,
		       struct scatterlist *sgl, unsigned int nents)
{
	if (!ptl_msg_range_ok(msg, off, len))
		return -EFAULT;
	if (msg->role == PTL_ROLE_SWAP_REPLY)
		return -EOPNOTSUPP;
	return ptl_mem_sg(msg->core.md, msg->core.offset + off, len, sgl,
			  nents, false);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_payload_sg, PORTALS);

int ptl_msg_deposit_sg(struct ptl_msg *msg, u64 off, u64 len,
		       struct scatterlist *sgl, unsigned int nents)
{
	if (off > msg->deposit || len > msg->deposit - off)
		return -EFAULT;
	if (msg->role == PTL_ROLE_SWAP)
		return -EOPNOTSUPP;
	return ptl_mem_sg(msg->core.md, msg->core.offset + off, len, sgl,
			  nents, true);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_deposit_sg, PORTALS);

/*
 * A get sent by this node. Its REPLY lands where recv_reply() puts it: in
 * the get's MD (held by the request until ptl_msg_sent()) at the return
 * offset, core.offset; the region [offset, offset + rlength) lies inside
 * the MD (md_region()), and the MD cannot change while it is held.
 */
static bool ptl_msg_is_get(const struct ptl_msg *msg)
{
	return msg->role == PTL_ROLE_REQUEST &&
	       msg->core.hdr.type == PTL_MSG_GET;
}

u64 ptl_msg_reply_len(const struct ptl_msg *msg)
{
	return ptl_msg_is_get(msg) ? msg->core.hdr.rlength : 0;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_reply_len, PORTALS);

int ptl_msg_reply_sg(struct ptl_msg *msg, u64 len, struct scatterlist *sgl,
		     unsigned int nents)
{
	if (!ptl_msg_is_get(msg))
		return -EOPNOTSUPP;
	if (len > msg->core.hdr.rlength)
		return -EFAULT;
	return ptl_mem_sg(msg->core.md, msg->core.offset, len, sgl, nents,
			  true);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_reply_sg, PORTALS);

bool ptl_msg_reply_in_sink(const struct ptl_msg *reply,
			   const struct ptl_msg *get, u64 len)
{
	return ptl_msg_is_get(get) && reply->role == PTL_ROLE_INCOMING &&
	       len <= get->core.hdr.rlength &&
	       reply->core.md == get->core.md &&
	       reply->core.offset == get->core.offset &&
	       reply->deposit <= len;
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_reply_in_sink, PORTALS);

/* ---- ends ---- */

void ptl_msg_sent(struct ptl_msg *msg, u32 ni_fail_type)
{
	u32 fail = ni_fail_type == PTL_NI_OK ? PTL_NI_OK : PTL_NI_FAIL;

	ptl_count_fail(msg, fail);
	/* An ACK's put ended when it was handed over; the rest end now. */
	if (msg->role != PTL_ROLE_ACK)
		ptlc_msg_finalize(&msg->core, fail);
	ptl_msg_free(msg);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_sent, PORTALS);

/* ---- incoming ---- */

static void ptl_rx_drop(struct ptl_iface *iface, struct ptl_ni *ni,
			const struct ptl_hdr *hdr, enum ptlc_drop why,
			struct ptl_rx_plan *plan)
{
	atomic_long_inc(&ptl_stats.drops);
	atomic64_inc(&iface->stats.drops);
	if ((hdr->type == PTL_MSG_ACK || hdr->type == PTL_MSG_REPLY) &&
	    (why == PTLC_DROP_STALE_MD || why == PTLC_DROP_INACTIVE_MD))
		atomic64_inc(&iface->stats.late_responses);
	trace_ptl_drop(READ_ONCE(iface->nid), ni ? ni->pid : hdr->dst.pid,
		       hdr, why);
	plan->drop_reason = why ? why : PTLC_DROP_WRONG_TARGET;
}

/* The payload the core's first action asks for, and the role it gives. */
static void ptl_rx_plan_for(struct ptl_msg *msg, enum ptlc_action act,
			    const struct ptl_hdr *hdr,
			    struct ptl_rx_plan *plan)
{
	plan->payload = hdr->payload_length;
	switch (act) {
	case PTLC_MSG_SWAP:
		msg->role = PTL_ROLE_SWAP;
		msg->deposit = hdr->payload_length;	/* <= max_getput_md */
		break;
	case PTLC_MSG_SEND_REPLY:
		msg->role = PTL_ROLE_INCOMING;
		msg->deposit = 0;
		break;
	default:
		msg->role = PTL_ROLE_INCOMING;
		msg->deposit = msg->core.mlength;
		break;
	}
	plan->deposit = msg->deposit;
}

struct ptl_msg *ptl_rx_start(struct ptl_binding *b, u32 src_nid,
			     const u8 *wire, size_t len,
			     struct ptl_rx_plan *plan)
{
	struct ptl_iface *iface = b->iface;
	enum ptlc_action act;
	struct ptl_msg *msg;
	struct ptl_hdr hdr;
	struct ptl_ni *ni;

	memset(plan, 0, sizeof(*plan));
	if (ptl_hdr_decode(wire, len, &hdr) != PTL_WIRE_OK ||
	    hdr.src.nid != src_nid || hdr.dst.nid != READ_ONCE(iface->nid)) {
		atomic64_inc(&iface->stats.drops);
		plan->drop_reason = PTLC_DROP_WRONG_TARGET;
		return NULL;
	}
	plan->payload = hdr.payload_length;
	ni = ptl_iface_find_ni(iface, hdr.dst.pid);
	if (!ni) {
		ptl_rx_drop(iface, NULL, &hdr, PTLC_DROP_WRONG_TARGET, plan);
		return NULL;
	}
	msg = ptl_msg_alloc(ni, GFP_ATOMIC, false);
	if (!msg) {
		ptl_ni_put_async(ni);
		plan->drop_reason = PTLC_DROP_NONE;
		return ERR_PTR(-ENOMEM);
	}
	act = ptlc_receive(ni->core, &hdr, 0, &msg->core);
	if (act == PTLC_MSG_DROP || act == PTLC_MSG_DONE) {
		if (act == PTLC_MSG_DROP)
			ptl_rx_drop(iface, ni, &hdr, msg->core.drop, plan);
		ptl_msg_free(msg);
		return NULL;
	}
	atomic64_inc(&iface->stats.msgs_rx);
	trace_ptl_match(ni->nid, ni->pid, &hdr, msg->core.offset,
			msg->core.mlength);
	ptl_rx_plan_for(msg, act, &hdr, plan);
	msg->incoming = true;
	atomic_inc(&ni->incoming);
	return msg;
}
EXPORT_SYMBOL_NS_GPL(ptl_rx_start, PORTALS);

u64 ptl_rx_payload_len(const u8 *wire, size_t len)
{
	struct ptl_hdr hdr;

	if (ptl_hdr_decode(wire, len, &hdr) != PTL_WIRE_OK)
		return 0;
	return hdr.payload_length;
}
EXPORT_SYMBOL_NS_GPL(ptl_rx_payload_len, PORTALS);

bool ptl_msg_orphaned(const struct ptl_msg *msg)
{
	return !READ_ONCE(msg->ni->active);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_orphaned, PORTALS);

/**
 * ptl_remote_ni_closing - @ni no longer takes messages (inactive)
 * @ni: the closing NI, still referenced by the caller
 *
 * Its incoming messages that the transport holds open, waiting for the
 * rest of a payload that may never come, end now, so that the caller's
 * put can be the last and the pid is free when the close returns.
 * Process context.
 */
void ptl_remote_ni_closing(struct ptl_ni *ni)
{
	struct ptl_binding *b;

	if (!atomic_read(&ni->incoming))
		return;
	b = ptl_binding_get(ni->iface);
	if (!b)
		return;
	if (b->t->ops->cancel_rx)
		b->t->ops->cancel_rx(b);
	ptl_binding_put(b);
}

int ptl_msg_deposit(struct ptl_msg *msg, u64 off, const struct sk_buff *skb,
		    int skb_off, u32 len)
{
	if (off >= msg->deposit)
		return 0;
	len = min_t(u64, len, msg->deposit - off);
	if (msg->role == PTL_ROLE_SWAP)
		return skb_copy_bits(skb, skb_off, msg->swap_in + off, len);
	return ptl_mem_from_skb(msg->core.md, msg->core.offset + off, skb,
				skb_off, len);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_deposit, PORTALS);

int ptl_msg_deposit_buf(struct ptl_msg *msg, u64 off, const void *buf,
			u32 len)
{
	if (off >= msg->deposit)
		return 0;
	len = min_t(u64, len, msg->deposit - off);
	if (msg->role == PTL_ROLE_SWAP) {
		memcpy(msg->swap_in + off, buf, len);
		return 0;
	}
	return ptl_mem_from_buf(msg->core.md, msg->core.offset + off, buf,
				len);
}
EXPORT_SYMBOL_NS_GPL(ptl_msg_deposit_buf, PORTALS);

/* Swaps the target bytes of a getput; no other getput on this NI between. */
static int ptl_rx_swap(struct ptl_msg *msg)
{
	struct ptl_ni *ni = msg->ni;
	u64 len = msg->core.mlength;
	int err;

	if (len > msg->deposit)
		return -EINVAL;
	spin_lock_bh(&ni->swap_lock);
	err = ptl_mem_to_buf(msg->swap_old, msg->core.md, msg->core.offset,
			     len);
	if (!err)
		err = ptl_mem_from_buf(msg->core.md, msg->core.offset,
				       msg->swap_in, len);
	spin_unlock_bh(&ni->swap_lock);
	return err;
}

struct ptl_msg *ptl_rx_done(struct ptl_msg *msg, u32 ni_fail_type)
{
	u32 fail = ni_fail_type == PTL_NI_OK ? PTL_NI_OK : PTL_NI_FAIL;

	if (msg->incoming) {
		msg->incoming = false;
		atomic_dec(&msg->ni->incoming);
	}

	if (msg->role == PTL_ROLE_SWAP && fail == PTL_NI_OK &&
	    ptl_rx_swap(msg))
		fail = PTL_NI_FAIL;
	if (fail != PTL_NI_OK)
		goto finish;

	switch (msg->core.action) {
	case PTLC_MSG_SEND_REPLY:	/* a get: reply with the MD's bytes */
		ptl_msg_prepare_tx(msg, PTL_ROLE_REPLY, msg->core.mlength);
		return msg;
	case PTLC_MSG_SWAP:		/* reply with the bytes swapped out */
		ptl_msg_prepare_tx(msg, PTL_ROLE_SWAP_REPLY,
				   msg->core.mlength);
		return msg;
	default:
		break;
	}
	if (ptlc_msg_finalize(&msg->core, fail) == PTLC_MSG_SEND_ACK) {
		ptl_msg_prepare_tx(msg, PTL_ROLE_ACK, 0);
		ptlc_msg_finalize(&msg->core, PTL_NI_OK);	/* PUT_END */
		return msg;
	}
	ptl_msg_free(msg);
	return NULL;

finish:
	ptl_count_fail(msg, fail);
	ptlc_msg_finalize(&msg->core, fail);
	ptl_msg_free(msg);
	return NULL;
}
EXPORT_SYMBOL_NS_GPL(ptl_rx_done, PORTALS);

int ptl_remote_init(void)
{
	ptl_msg_cache = KMEM_CACHE(ptl_msg, SLAB_ACCOUNT);
	return ptl_msg_cache ? 0 : -ENOMEM;
}

void ptl_remote_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct ptl_msg *spare = per_cpu(ptl_msg_spare, cpu);

		if (spare)
			kmem_cache_free(ptl_msg_cache, spare);
	}
	kmem_cache_destroy(ptl_msg_cache);
}
