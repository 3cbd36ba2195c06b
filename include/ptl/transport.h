/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between ptl.ko (the Portals library) and the transports
 * that carry Portals messages between nodes (ptl_rtscts.ko over Ethernet,
 * ptl_rdma.ko over InfiniBand/RoCE). Exported in the symbol namespace
 * PORTALS.
 *
 * A transport registers itself; ptlctl binds a Portals interface of a
 * network namespace to a network device through it, and the library then
 * hands it every message whose target nid is not this node's. The library
 * owns Portals semantics, memory and events; the transport owns frames,
 * peers, reliability and flow control. Neither reaches into the other's
 * structures: a message (struct ptl_msg) is opaque apart from the scratch
 * area ptl_msg_cb() gives the transport.
 *
 * Sending. ops->send(binding, msg) queues @msg for its target node. The
 * transport sends ptl_msg_hdr() (the 96-byte wire header of
 * include/ptl/wire.h) and then ptl_msg_len() bytes of payload, taken with
 * ptl_msg_copy(), attached with ptl_msg_frags() or DMA-mapped through
 * ptl_msg_payload_sg(); it calls ptl_msg_sent() exactly once, when the
 * target has acknowledged the whole message or the transport gave up on
 * it. The payload stays valid (pinned, the MD held)
 * until then, whatever the owning process does meanwhile.
 *
 * Receiving. For the first frame of a message the transport calls
 * ptl_rx_start() with the wire header; the library matches it and says
 * how many payload bytes to deposit (the rest is discarded). The transport
 * deposits them with ptl_msg_deposit() (in any order, each byte once), or
 * has the device write them into the pages of ptl_msg_deposit_sg(), and
 * then calls ptl_rx_done(), which may return a response to send back to
 * the same peer (an ACK, or a get's REPLY): the transport queues it like a
 * sent message and calls ptl_msg_sent() for it in turn.
 *
 * Order. A put's SEND_END comes before its ACK (spec 8.5): the transport
 * hands an ACK to ptl_rx_start() only after ptl_msg_sent() has returned
 * for the put it answers, even where the target's answer can overtake
 * the completion of the put's own send. ptl_rtscts takes the
 * acknowledgement a frame carries before its contents, and the frame
 * with the target's ACK acknowledges the put; ptl_rdma holds an ACK
 * until the messages sent before it came have ended (rdma/acks.c).
 *
 * Contexts and locks. ops->send is called in process context with no lock
 * held; @gfp says how it may allocate. Every ptl_* function below may be
 * called from any context (softirq included), also with the transport's
 * own spinlocks held: the library takes only its NI locks inside and never
 * calls back into the transport from them. ops->bind and ops->unbind run in
 * process context under RTNL. After ops->unbind returns, the transport has
 * called ptl_msg_sent() or ptl_rx_done() for every message it was given,
 * and calls nothing more for that binding.
 */
#ifndef PTL_TRANSPORT_H
#define PTL_TRANSPORT_H

#include <linux/bug.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>
#include <linux/types.h>
#include <net/netlink.h>

#include <linux/portals_netlink.h>
#include <ptl/wire.h>

/* Bumped on any incompatible change; a transport states what it expects. */
#define PTL_TRANSPORT_VERSION	4

struct net;
struct net_device;
struct netlink_callback;
struct sk_buff;
struct ptl_binding;
struct ptl_msg;
struct ptl_peer_dump;
struct scatterlist;

/* What ptlctl asked for when binding (PTL_CMD_SET_IFACE). */
struct ptl_bind_config {
	u32 nid;
	u32 eager_max;		/* 0: the transport's default */
	u16 ethertype;		/* 0: the transport's default */
	/*
	 * PTL_AUTH_KEY_LEN bytes that authenticate every frame, or NULL.
	 * Valid during ops->bind only: a transport keeps what it derives
	 * from it, never a copy. Given only to PTL_TRANSPORT_F_AUTH ones.
	 */
	const u8 *auth_key;
	u32 auth_key_len;
};

/* struct ptl_transport's features. */
#define PTL_TRANSPORT_F_AUTH	(1U << 0)	/* takes ptl_bind_config.auth_key */

struct ptl_transport_ops {
	/*
	 * Binds @b to @dev (referenced by the library while bound) and
	 * stores its state with ptl_binding_set_priv(). May reject the
	 * device or settings with an extack message.
	 */
	int (*bind)(struct ptl_binding *b, struct net_device *dev,
		    const struct ptl_bind_config *cfg,
		    struct netlink_ext_ack *extack);
	/* Changes settings of a bound interface (eager_max, ...). */
	int (*configure)(struct ptl_binding *b,
			 const struct ptl_bind_config *cfg,
			 struct netlink_ext_ack *extack);
	/* Fails everything in flight (see above) and frees its state. */
	void (*unbind)(struct ptl_binding *b);
	/*
	 * The bound device changed what a frame on it may be (RTNL held):
	 * NETDEV_CHANGEMTU, with the new dev->mtu in place. A negative
	 * errno refuses the change, and dev_set_mtu() puts the old MTU back
	 * (and calls this again with it); a change that cannot be refused
	 * must still leave every frame the transport builds within what it
	 * was told. Optional: a transport that reads nothing of the device
	 * per frame needs none. A device changing type is refused while
	 * bound, and unbound if it changes anyway.
	 */
	int (*dev_changed)(struct ptl_binding *b, unsigned long event,
			   struct netlink_ext_ack *extack);
	/* Queues @msg; 0, or a negative errno and the library fails it. */
	int (*send)(struct ptl_binding *b, struct ptl_msg *msg, gfp_t gfp);
	/*
	 * An NI of the interface is closing (its process exited, PtlNIFini,
	 * a kernel client's fini): end now, with ptl_rx_done(PTL_NI_FAIL),
	 * every incoming message for which ptl_msg_orphaned() is true, so
	 * that the NI is released and its pid is free again at once, rather
	 * than when a silent peer times out. Process context, no lock held;
	 * called only when the NI has incoming messages. Optional: without
	 * it they end when their peer finishes or fails them.
	 */
	void (*cancel_rx)(struct ptl_binding *b);
	/* Netlink: transport attributes of PTL_CMD_GET_IFACE ... */
	int (*fill_iface)(struct ptl_binding *b, struct sk_buff *skb);
	/* ... and its counters, inside the interface's PTL_A_STATS nest. */
	int (*fill_stats)(struct ptl_binding *b, struct sk_buff *skb);
	/*
	 * Netlink: PTL_CMD_GET_PEER. Reports the peers with
	 * ptl_peer_dump_add(), from where @d->pos says (below); 0 or a
	 * negative errno. ptl.ko writes the messages.
	 */
	int (*dump_peers)(struct ptl_binding *b, struct ptl_peer_dump *d);
	int (*add_peer)(struct ptl_binding *b, u32 nid, const u8 *lladdr,
			unsigned int addr_len, struct netlink_ext_ack *extack);
	int (*del_peer)(struct ptl_binding *b, u32 nid,
			struct netlink_ext_ack *extack);
};

struct ptl_transport {
	const char *name;
	struct module *owner;
	unsigned int version;		/* PTL_TRANSPORT_VERSION */
	const struct ptl_transport_ops *ops;
	unsigned int features;		/* PTL_TRANSPORT_F_* */
	struct list_head list;		/* the library's */
};

int ptl_transport_register(struct ptl_transport *t);
void ptl_transport_unregister(struct ptl_transport *t);

/* ---- bindings ---- */

void ptl_binding_set_priv(struct ptl_binding *b, void *priv);
void *ptl_binding_priv(const struct ptl_binding *b);
u32 ptl_binding_nid(const struct ptl_binding *b);
u32 ptl_binding_iface(const struct ptl_binding *b);
struct net *ptl_binding_net(const struct ptl_binding *b);

/* ---- peers, as ptlctl peer show reports them ---- */

/* Most transport-specific attributes and counters in one report. */
#define PTL_PEER_REPORT_ATTRS	12
#define PTL_PEER_REPORT_STATS	32

/*
 * One peer: what every transport knows of a peer, then what only some
 * do, as attribute-value pairs of uapi/linux/portals_netlink.h (u32
 * PTL_A_PEER_* attributes; PTL_STAT_* counters of its PTL_A_PEER_STATS
 * nest). The transport fills it, under its own locks (nothing here
 * sleeps); ptl.ko writes it out. Fields left zero are not reported.
 */
struct ptl_peer_report {
	u32 nid;
	u8 state;			/* PTL_PEER_* */
	u8 lladdr_len;			/* 0: no link-layer address */
	u8 lladdr[MAX_ADDR_LEN];
	u32 flags;			/* PTL_PEER_F_* */
	bool has_uid;			/* charged to a user: */
	u32 uid;			/* that one */
	u8 nattrs;
	u8 nstats;
	struct {
		u16 type;		/* PTL_A_PEER_* (NLA_U32) */
		u32 value;
	} attrs[PTL_PEER_REPORT_ATTRS];
	struct {
		u16 type;		/* PTL_STAT_* */
		u64 value;
	} stats[PTL_PEER_REPORT_STATS];
};

static inline void ptl_peer_report_attr(struct ptl_peer_report *r, u16 type,
					u32 value)
{
	if (WARN_ON_ONCE(r->nattrs >= PTL_PEER_REPORT_ATTRS))
		return;
	r->attrs[r->nattrs].type = type;
	r->attrs[r->nattrs++].value = value;
}

static inline void ptl_peer_report_stat(struct ptl_peer_report *r, u16 type,
					u64 value)
{
	if (WARN_ON_ONCE(r->nstats >= PTL_PEER_REPORT_STATS))
		return;
	r->stats[r->nstats].type = type;
	r->stats[r->nstats++].value = value;
}

/*
 * A PTL_CMD_GET_PEER dump in progress. ops->dump_peers reports its peers
 * from where @pos says (zeroes when the dump starts; what they mean is
 * the transport's), one at a time: it fills @report and calls
 * ptl_peer_dump_add(), which writes the peer's message and clears @report
 * for the next. -EMSGSIZE means this part of the dump is full: the
 * transport sets @pos to that peer and returns 0, and the next part starts
 * there. Peers that come and go between two parts may be shown twice or
 * not at all, as with any dump of a changing table.
 */
struct ptl_peer_dump {
	unsigned long pos[2];
	struct ptl_peer_report report;
};

int ptl_peer_dump_add(struct ptl_peer_dump *d);

/* One counter (PTL_STAT_*) into a PTL_A_STATS nest (ops->fill_stats). */
static inline int ptl_nla_put_stat(struct sk_buff *skb, int type, u64 value)
{
	return nla_put_u64_64bit(skb, type, value, PTL_STAT_PAD);
}

/* Events for ptlctl monitor (enum ptl_event of portals_netlink.h). */
void ptl_binding_peer_event(struct ptl_binding *b, u32 nid, u8 event,
			    u32 incarnation, u32 failed);

/* ---- messages ---- */

/*
 * Bytes of per-message scratch space the transport may use: zeroed when
 * the library creates a message (ops->send, ptl_rx_start()); a response
 * that ptl_rx_done() returns keeps the scratch of the incoming message it
 * answers.
 */
#define PTL_MSG_CB_SIZE		96

void *ptl_msg_cb(struct ptl_msg *msg);
u32 ptl_msg_dst_nid(const struct ptl_msg *msg);
/* The wire header (PTL_WIRE_HDR_LEN bytes, include/ptl/wire.h). */
const u8 *ptl_msg_hdr(const struct ptl_msg *msg);
/* Payload bytes that follow the header. */
u64 ptl_msg_len(const struct ptl_msg *msg);
/* True if this is a response (ACK or REPLY) returned by ptl_rx_done(). */
bool ptl_msg_is_response(const struct ptl_msg *msg);
/*
 * The Portals uid a message is sent for: its header's src_uid, which the
 * sending kernel filled from the sender's credentials (not the user).
 */
u32 ptl_msg_src_uid(const struct ptl_msg *msg);

/* Copies payload [@off, @off + @len) into @buf. 0 or -EFAULT. */
int ptl_msg_copy(struct ptl_msg *msg, u64 off, void *buf, size_t len);
/*
 * Attaches payload [@off, @off + @len) to @skb as page fragments (the
 * pages are referenced, not copied; SKBFL_SHARED_FRAG is set because the
 * owner may write them meanwhile). 0, -EMSGSIZE if more fragments are
 * needed than the skb has room for, or -EOPNOTSUPP if the payload is not
 * in pages (copy it instead).
 */
int ptl_msg_frags(struct ptl_msg *msg, u64 off, u32 len, struct sk_buff *skb);
/*
 * Zero copy by RDMA: payload [@off, @off + @len) of @msg as a scatterlist
 * over its pinned pages, for the transport to DMA-map (ib_dma_map_sg) for
 * the time of a transfer. @sgl has @nents entries, initialised with
 * sg_init_table(). The pages stay pinned until ptl_msg_sent(), whatever
 * the owning process does; unmap them before calling it. Returns the
 * entries used, -EMSGSIZE if more are needed, or -EOPNOTSUPP if the bytes
 * are not in pages (a getput's swapped bytes): copy them instead.
 */
int ptl_msg_payload_sg(struct ptl_msg *msg, u64 off, u64 len,
		       struct scatterlist *sgl, unsigned int nents);
/*
 * The same for the deposit region of an incoming message: bytes
 * [@off, @off + @len) of the first plan->deposit ones, for the device to
 * write (the MD is marked written). Pinned until ptl_rx_done(); unmap
 * first. -EACCES if the MD is read-only; else as ptl_msg_payload_sg().
 */
int ptl_msg_deposit_sg(struct ptl_msg *msg, u64 off, u64 len,
		       struct scatterlist *sgl, unsigned int nents);
/*
 * A get's reply by RDMA in one round trip: the transport registers the
 * get's reply region for the target to RDMA WRITE its REPLY's payload
 * into, and sends the region's address and key with the GET.
 *
 * ptl_msg_reply_len() is the length of the reply region of @msg, a get
 * sent by this node (ops->send), or 0 for any other message. Its REPLY
 * deposits at most that many bytes, at the start of the region.
 *
 * ptl_msg_reply_sg() describes the first @len bytes of that region as
 * ptl_msg_payload_sg() does a payload, for the device to write (the MD is
 * marked written). While the transport has not called ptl_msg_sent() for
 * the get, its MD stays held (an unlink answers PTL_MD_IN_USE) and the
 * pages pinned: end the get only once no device can write them any more
 * (the key invalidated, the pages unmapped). -EOPNOTSUPP if @msg is not a
 * get, -EFAULT if @len exceeds the region, -EACCES if the MD is pinned
 * read-only, -EMSGSIZE if more than @nents entries are needed.
 *
 * ptl_msg_reply_in_sink(): true if @reply, an incoming message that
 * ptl_rx_start() returned, deposits only into the first @len bytes of
 * @get's reply region, that is into the pages ptl_msg_reply_sg(@get,
 * @len) described: then its bytes are already in place and it is
 * completed with ptl_rx_done(). If not (a confused or hostile peer), fail
 * it with ptl_rx_done(PTL_NI_FAIL) rather than take bytes from elsewhere.
 * End the get with ptl_msg_sent(@get, PTL_NI_OK) before ptl_rx_done(),
 * once ptl_rx_start() has returned (the reply holds the MD then), so that
 * the reply's END is the last event of the MD, as when the get ends when
 * sent. A get ended with PTL_NI_FAIL has its REPLY_END posted with the
 * failure: do that only if no REPLY for it was handed to ptl_rx_start().
 */
u64 ptl_msg_reply_len(const struct ptl_msg *msg);
int ptl_msg_reply_sg(struct ptl_msg *msg, u64 len, struct scatterlist *sgl,
		     unsigned int nents);
bool ptl_msg_reply_in_sink(const struct ptl_msg *reply,
			   const struct ptl_msg *get, u64 len);
/* The transport is done with @msg: delivered (PTL_NI_OK) or failed. */
void ptl_msg_sent(struct ptl_msg *msg, u32 ni_fail_type);
/* An incoming message whose NI is closing: fail it (ops->cancel_rx). */
bool ptl_msg_orphaned(const struct ptl_msg *msg);

/* What ptl_rx_start() decided for the payload of a message. */
struct ptl_rx_plan {
	u64 payload;		/* bytes the header announces */
	u64 deposit;		/* the first bytes to deposit; discard the rest */
	u8 drop_reason;		/* 0, or why nothing is taken (for counters) */
};

/*
 * A message from @src_nid arrived on @b: @hdr is its wire header (@len
 * bytes, at least PTL_WIRE_HDR_LEN). Returns the message to deposit into
 * and complete with ptl_rx_done(), or NULL when it needs nothing more
 * (dropped: plan->drop_reason; or an ACK, fully handled), or
 * ERR_PTR(-ENOMEM) when it cannot be taken now: the transport must then
 * not acknowledge the frame, so that the peer sends it again. Never sleeps.
 */
struct ptl_msg *ptl_rx_start(struct ptl_binding *b, u32 src_nid,
			     const u8 *hdr, size_t len,
			     struct ptl_rx_plan *plan);
/*
 * The payload bytes the wire header @hdr (@len bytes) announces, 0 if it
 * is not a valid header; for a transport that must know, before
 * ptl_rx_start() matches a message, whether the rest of it will follow.
 */
u64 ptl_rx_payload_len(const u8 *hdr, size_t len);
/*
 * Deposits payload bytes [@off, @off + @len) found at @skb_off in @skb.
 * Bytes at or past plan->deposit are ignored. 0 or -EFAULT.
 */
int ptl_msg_deposit(struct ptl_msg *msg, u64 off, const struct sk_buff *skb,
		    int skb_off, u32 len);
/* Same from a kernel buffer (a transport that reassembles). */
int ptl_msg_deposit_buf(struct ptl_msg *msg, u64 off, const void *buf,
			u32 len);
/*
 * The payload has arrived (or @ni_fail_type says it cannot). Returns a
 * response to send to the same peer, or NULL.
 */
struct ptl_msg *ptl_rx_done(struct ptl_msg *msg, u32 ni_fail_type);

#endif /* PTL_TRANSPORT_H */
