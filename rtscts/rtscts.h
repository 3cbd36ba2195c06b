/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl_rtscts.ko internals: Portals messages over Ethernet frames, reliable
 * and flow-controlled, with RTS/CTS for large messages.
 *
 * Files, one concern each:
 *   main.c       module parameters, the transport's ops, init and exit
 *   link.c       the device binding: frames in (packet_type) and out,
 *                link-layer address resolution
 *   peer.c       per-peer state: lookup, creation, incarnations and
 *                streams, failure, reclaim, eviction, per-uid shares
 *   incarnation.c  which incarnation of a peer is believed: a claimed
 *                restart confirmed by a CHALLENGE; addresses learnt
 *   reliable.c   sequences, acknowledgements, the window, retransmission
 *   ooo.c        the out-of-order buffer: its caps, copies, expiry
 *   open.c       messages open between two nodes: the bound both ends
 *                keep, cancelling those of a closing NI
 *   timers.c     the per-peer timer: retransmission, probes, peer death
 *   proto.c      messages: eager, RTS/CTS, data placement, completion
 *   netlink.c    what ptlctl shows and changes
 *   auth.c       authenticated frames: the key, tags made and checked
 *   remember.c   keyed: where freed peers' streams stood (replays)
 *   rtscts_trace.h  tracepoints
 * rtscts_frame.[ch] is the wire format (also built for the fuzzer).
 *
 * Locking: each peer has a spinlock (taken with _bh: frames arrive in
 * softirq) that protects all of its state; no path holds two peer locks.
 * The library (ptl.ko) is called with a peer lock held (the transport
 * contract allows it); it never calls back. Frames are built under the
 * lock into a local queue and handed to the device after unlocking.
 * The peer table is an rhashtable with a spinlock for changes; peers are
 * removed only in process context (reclaim work, unbind, ptlctl), after
 * their timer is stopped, and freed after a grace period.
 */
#ifndef RTSCTS_H
#define RTSCTS_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/if_ether.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/rhashtable-types.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <linux/portals_netlink.h>
#include <p3api/misc.h>
#include <p3api/types.h>
#include <ptl/transport.h>

#include "rtscts_frame.h"

/* Limits and defaults (module parameters where noted, main.c). */
#define RTSCTS_MAX_WINDOW	1024	/* frames: cap of max_window */
#define RTSCTS_INIT_CWND	16	/* frames */
#define RTSCTS_MIN_CWND		2
#define RTSCTS_DUPACK_THRESH	3	/* frames sacked above a lost one */
#define RTSCTS_ACK_EVERY	4	/* frames received between ACKs */
#define RTSCTS_RESET_INTERVAL	(HZ / 10)	/* RESETs to one peer */
#define RTSCTS_RESOLVE_RETRY_MS	20	/* waiting for ARP: the first retry */
#define RTSCTS_RESOLVE_BACKOFF	6	/* ... doubled up to 20 << 6 = 1280 ms */
#define RTSCTS_EVICT_GRACE	HZ	/* unresolved or idle this long: evictable */
#define RTSCTS_EVICT_SCAN	64	/* peers looked at to find one to evict */
#define RTSCTS_OWNER_NONE	U32_MAX	/* a peer charged to no uid */
#define RTSCTS_RECLAIM_PERIOD	(5 * HZ)
#define RTSCTS_COPYBREAK	256	/* payload copied into the linear part */
/* Largest skb head (with its shared info) taken from page fragments. */
#define RTSCTS_FRAG_HEAD_MAX	2048
/*
 * Requests a node takes from one peer's stream before it is done with them
 * (no response, or its response acknowledged): the credit the grant field
 * advertises (proto.c). It bounds the responses queued to one peer.
 */
#define RTSCTS_REQ_CREDIT	256
#define RTSCTS_OOO_MAX_BYTES	(4U << 20)	/* buffered ahead, per peer (ooo.c) */
/* Messages a sender keeps open at a receiver: a rule of the protocol. */
#define RTSCTS_MAX_RX_OPEN	64

struct crypto_shash;

/* Module parameters (main.c). */
extern unsigned int rtscts_eager_max;
extern unsigned int rtscts_max_window;
extern unsigned int rtscts_peer_timeout_ms;
extern unsigned int rtscts_peer_idle_s;
extern unsigned int rtscts_max_peers;
extern unsigned int rtscts_user_peer_share;
extern unsigned int rtscts_min_rto_ms;
extern unsigned int rtscts_max_rto_ms;
extern unsigned int rtscts_ack_delay_us;
extern unsigned int rtscts_ride_max_bytes;
extern unsigned int rtscts_ooo_max_kb;
extern unsigned int rtscts_rx_open_max;
extern unsigned int rtscts_rx_reqs_max;
extern bool rtscts_superframes;
extern bool rtscts_large_frames;

/* One binding: a Portals interface on a network device. */
struct rtscts_if {
	struct ptl_binding *b;
	struct net_device *dev;
	struct packet_type pt;
	u16 ethertype;
	/*
	 * Bytes of a frame: the device's MTU, capped at RTSCTS_MAX_FRAME,
	 * never below RTSCTS_MIN_MTU. Copied at bind and on NETDEV_CHANGEMTU
	 * (RTNL), read once per frame built: never dev->mtu itself.
	 */
	u32 mtu;
	u32 eager_max;			/* <= RTSCTS_MAX_EAGER */
	bool superframes;		/* its ethertype has our offload (gso.c) */
	/*
	 * The keyed MAC of every frame, or NULL: frames are not
	 * authenticated. Set at bind, freed at unbind (auth.c).
	 */
	struct crypto_shash *auth;
	u32 incarnation;		/* ours, in every frame's src_inc */
	atomic_t next_stream;		/* stream ids of this incarnation */
	spinlock_t peers_lock;		/* changes of the table */
	struct rhashtable peers;	/* nid -> struct rtscts_peer */
	atomic_t npeers;
	struct list_head lru;		/* every peer, oldest looked at first */
	struct xarray owners;		/* uid -> value: peers charged to it */
	struct list_head evicted;	/* out of the table, to free: */
	struct work_struct evict_work;	/* ... here (process context) */
	struct delayed_work reclaim;
	bool dying;			/* unbinding: no new peers */
	unsigned long last_reset;	/* RESETs to nodes we keep no state for */
	atomic_long_t ooo_bytes;	/* held ahead of gaps, all peers (ooo.c) */
	struct mem_cgroup *memcg;	/* the binder's: charged for them */
	atomic_t rx_open;		/* open messages, all peers (open.c) */
	atomic_t rx_reqs;		/* requests taken, not done (credit.c) */
	struct xarray remembered;	/* keyed: nid -> freed peer (remember.c) */
	atomic_t nremembered;
	atomic64_t stats[__PTL_STAT_MAX];
};

/* Counters of one peer (under its lock). */
struct rtscts_peer_stats {
	u64 tx_frames, tx_bytes, rx_frames, rx_bytes;
	u64 retransmits, timeouts, duplicates, out_of_order;
	u64 stale, no_buffer, msgs_tx, msgs_rx, msgs_failed, rts;
	u64 ooo_dropped, ooo_expired, rx_open_dropped, late_timers;
};

/* Another node this interface exchanges frames with. */
struct rtscts_peer {
	struct rhash_head hnode;	/* in rif->peers (peers_lock) */
	struct list_head lru;		/* on rif->lru (peers_lock) */
	struct rcu_head rcu;
	struct rtscts_if *rif;
	spinlock_t lock;
	u32 nid;
	u32 owner;			/* uid charged, or RTSCTS_OWNER_NONE */
	u8 resolve_tries;		/* ARP asked: the retry backs off */
	u8 lladdr[ETH_ALEN];
	u8 state;			/* enum ptl_peer_state */
	bool lladdr_valid;
	bool is_static;
	bool dead;			/* removed: touch nothing more */
	/*
	 * Where else it may be (incarnation.c): the address it had before
	 * the last change, or one that authenticated frames not taught from
	 * came from; cleared once a frame that teaches confirms lladdr.
	 */
	bool alt_valid;
	u8 alt_lladdr[ETH_ALEN];
	u32 rx_inc;			/* its incarnation, 0 if unknown */
	bool chal_active;		/* another was claimed: asking it */
	u64 chal_nonce;			/* of our last CHALLENGE, 0: none */
	unsigned long chal_sent;	/* jiffies: when that went */
	unsigned long chal_first;	/* ... and the first of this claim */

	/* sending: our stream to it */
	u32 tx_stream;
	u32 snd_una;			/* oldest unacknowledged */
	u32 snd_nxt;			/* next sequence to give */
	bool tx_synced;			/* it acknowledged this stream */
	u32 cwnd, ssthresh, cwnd_acc;
	u32 rwnd;			/* what it advertises */
	u32 srtt_us, rttvar_us, rto_us;
	u8 backoff;
	bool in_recovery;		/* cwnd halved until recovery_end */
	bool rto_recovery;		/* resending after a timeout, ditto */
	bool probed;			/* a tail loss probe is out */
	bool late_waited;		/* the loss timer fired late: waited once */
	u32 recovery_end;
	u32 next_msg_id;
	struct list_head inflight;	/* struct rtscts_txf, by seq */
	u32 ninflight;
	struct list_head ctlq;		/* CTS frames waiting for a sequence */
	struct list_head txq;		/* requests whose header is to go */
	struct list_head txq_begun;	/* ... whose header went, data to go */
	struct list_head rspq;		/* responses with frames to make */
	struct list_head rspq_short;	/* ... whole in one frame: first */
	struct list_head rspq_held;	/* ... without payload: riders */
	struct list_head await_cts;	/* RTS out, waiting for the CTS */
	struct list_head wait_acks;	/* every frame out, not all acked */
	bool held_due;			/* the riders' wait is over (riders.c) */
	u32 nmsgs;			/* messages on the eight lists above */
	u32 tx_open;			/* ... open at the peer (open.c) */
	u32 tx_reqs;			/* request headers framed on tx_stream */
	u32 tx_grant;			/* ... below which it takes them */

	/* receiving: its stream to us */
	u32 rx_stream;
	u32 rcv_nxt;
	struct sk_buff_head ooo;	/* ahead of rcv_nxt, by sequence */
	u32 ooo_bytes;			/* their truesize (copies: exact) */
	unsigned long ooo_since;	/* when rcv_nxt last moved or ooo filled */
	struct list_head rx_msgs;	/* partly received messages (open) */
	u32 rx_open;			/* how many (open.c) */
	u32 rx_reqs;			/* requests taken from rx_stream */
	u32 rx_reqs_done;		/* ... and done with */
	u32 grant_sent;			/* the grant our last frame carried */
	u16 rx_unacked;
	u8 rx_riders_done;		/* of the frame at rcv_nxt (riders.c) */
	bool ack_now;			/* answer with the next frames out */
	bool ack_delayed;		/* ack_timer will answer */
	struct hrtimer ack_timer;

	struct list_head gc;		/* on a list of peers to free */
	unsigned long last_active;	/* jiffies of the last frame or send */
	unsigned long last_rx;		/* jiffies of its last valid frame */
	unsigned long last_progress;	/* ... of the last ack progress */
	unsigned long last_reset;	/* ... of our last RESET to it */
	struct timer_list timer;
	struct rtscts_peer_stats st;
};

/* A reliable frame sent and not yet acknowledged (or queued: a CTS). */
struct rtscts_txf {
	struct list_head node;
	struct ptl_msg *msg;		/* MSG, RTS, DATA; NULL for CTS */
	u64 off;			/* payload offset (MSG, DATA) */
	u64 cts_len;			/* CTS */
	u32 len;			/* payload bytes (MSG, DATA) */
	u32 msg_id;
	u32 cts_status;
	u32 seq;
	u64 sent_ns;			/* for RTT samples */
	u16 seg_size;			/* a large frame's payload per segment */
	u8 segs;			/* frames a large frame stands for, or 0 */
	u8 type;
	bool sacked;
	bool retransmitted;
	bool last;			/* last frame of its message */
	u8 nriders;
	struct ptl_msg *riders[RTSCTS_MAX_RIDERS];	/* riders.c */
};

enum rtscts_mstate {
	RTSCTS_M_QUEUED,		/* txq*, rspq*: frames to make */
	RTSCTS_M_AWAIT_CTS,		/* await_cts */
	RTSCTS_M_WAIT_ACKS,		/* wait_acks */
	RTSCTS_M_RX,			/* rx_msgs */
};

/* The transport's view of a message, in ptl_msg_cb(). */
struct rtscts_mcb {
	struct list_head node;		/* on one list of its peer */
	struct ptl_msg *msg;		/* the message this is the cb of */
	u64 next_off;			/* tx: next byte to frame; rx: got */
	u64 total;			/* tx: bytes to send; rx: to receive */
	u32 msg_id;
	u32 unacked;			/* tx: frames out, not acknowledged */
	u8 state;			/* enum rtscts_mstate */
	bool rts;			/* goes with RTS/CTS */
	bool hdr_out;			/* MSG or RTS framed */
	bool response;			/* an ACK or REPLY we send */
	bool open;			/* tx: counted in tx_open */
	bool request;			/* rx: a request, holding a credit */
	bool credit_wait;		/* tx: counted as waiting for one */
	u32 answers;			/* a response: rx_stream of its request */
};

/* Sequence numbers @txf takes: its segments if a large frame, else 1. */
static inline u32 rtscts_txf_seqs(const struct rtscts_txf *txf)
{
	return txf->segs ? txf->segs : 1;
}

/* A frame of a message that has ended (acknowledged otherwise, failed). */
static inline bool rtscts_txf_orphaned(const struct rtscts_txf *txf)
{
	return (txf->type == RTSCTS_MSG || txf->type == RTSCTS_RTS ||
		txf->type == RTSCTS_DATA) && !txf->msg;
}

static inline struct rtscts_mcb *rtscts_mcb(struct ptl_msg *msg)
{
	return ptl_msg_cb(msg);
}

static inline void rtscts_count(struct rtscts_if *rif, int stat, u64 n)
{
	atomic64_add(n, &rif->stats[stat]);
}

/*
 * gso.c; a super-frame is a fraglist GSO skb, a large frame a GSO skb
 * without a frag_list, anything else a frame
 */
static inline bool rtscts_is_superframe(const struct sk_buff *skb)
{
	return skb_is_gso(skb) && skb_has_frag_list(skb) &&
	       (skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST);
}

u32 rtscts_large_frame_segs(const struct rtscts_if *rif, u8 type, u32 room);
void rtscts_large_frame_mark(struct sk_buff *skb, const struct rtscts_frame *f);

void rtscts_gso_bind(struct rtscts_if *rif);
void rtscts_gso_unbind(struct rtscts_if *rif);
unsigned int rtscts_chain(struct rtscts_if *rif, struct sk_buff *head,
			  struct sk_buff_head *q);
int rtscts_unchain(struct sk_buff *skb, struct sk_buff_head *frames);

/* link.c */
int rtscts_bind(struct ptl_binding *b, struct net_device *dev,
		const struct ptl_bind_config *cfg,
		struct netlink_ext_ack *extack);
int rtscts_configure(struct ptl_binding *b, const struct ptl_bind_config *cfg,
		     struct netlink_ext_ack *extack);
void rtscts_unbind(struct ptl_binding *b);
int rtscts_dev_changed(struct ptl_binding *b, unsigned long event,
		       struct netlink_ext_ack *extack);
u32 rtscts_mtu(const struct rtscts_if *rif);
int rtscts_crc_init(void);
void rtscts_crc_exit(void);
u32 rtscts_crc32c(u32 seed, const u8 *p, size_t n);
bool rtscts_resolve(struct rtscts_peer *peer);
struct sk_buff *rtscts_alloc_skb(struct rtscts_if *rif, size_t linear,
				 gfp_t gfp);
void rtscts_pcsum_fill(struct sk_buff *skb);
int rtscts_seal_frame(struct rtscts_if *rif, struct sk_buff *skb,
		      struct rtscts_frame *f, const u8 *mac);
int rtscts_finish_frame(struct rtscts_peer *peer, struct sk_buff *skb,
			struct rtscts_frame *f);
void __rtscts_xmit(struct rtscts_if *rif, struct sk_buff_head *q);

/* Sends @q's frames; most callers have none to send. */
static inline void rtscts_xmit(struct rtscts_if *rif, struct sk_buff_head *q)
{
	if (!skb_queue_empty(q))
		__rtscts_xmit(rif, q);
}

/* peer.c */
int rtscts_peers_init(void);
void rtscts_peers_exit(void);
struct rtscts_peer *rtscts_peer_lookup(struct rtscts_if *rif, u32 nid);
struct rtscts_peer *rtscts_peer_get(struct rtscts_if *rif, u32 nid, u32 owner,
				    gfp_t gfp);
int rtscts_peers_bind(struct rtscts_if *rif);
void rtscts_walk_peers(struct rtscts_if *rif,
		       void (*fn)(struct rtscts_peer *, void *), void *arg);
u32 rtscts_user_max_peers(void);

/* What the peers of an interface are doing: gauges for ptlctl. */
struct rtscts_census {
	u32 unresolved;			/* no link-layer address */
	u32 timers;			/* a timer running (timers.c) */
	/*
	 * What the transport holds for its peers, in bytes: their state,
	 * the frames in flight to them and what is held ahead of gaps.
	 */
	u64 mem_bytes;
	u64 inflight;			/* frames in flight, all peers */
};

void rtscts_peers_census(struct rtscts_if *rif, struct rtscts_census *c);
void rtscts_peer_fail(struct rtscts_peer *peer, u8 event);
void rtscts_peer_new_stream(struct rtscts_peer *peer);
void rtscts_peer_reset_rx(struct rtscts_peer *peer);
bool rtscts_peer_idle(const struct rtscts_peer *peer);
void rtscts_reclaim_work(struct work_struct *work);
void rtscts_peers_destroy(struct rtscts_if *rif);
int rtscts_peer_add_static(struct rtscts_if *rif, u32 nid, const u8 *lladdr);
int rtscts_peer_remove(struct rtscts_if *rif, u32 nid);
void rtscts_peer_set_state(struct rtscts_peer *peer, u8 state);

/* incarnation.c */
void rtscts_answer_challenge(struct rtscts_if *rif,
			     const struct rtscts_frame *f, const u8 *mac,
			     struct sk_buff_head *xq);
bool rtscts_rx_incarnation(struct rtscts_peer *peer,
			   const struct rtscts_frame *f,
			   struct sk_buff_head *xq);
/*
 * May @f, a sequenced frame of a stream other than the one @peer follows,
 * start a new one (reliable.c, rtscts_rx_stream)? It carries SYN, is not
 * older than the stream followed and, on a keyed interface, names our
 * incarnation (remember.c).
 */
static inline bool rtscts_stream_may_start(const struct rtscts_peer *peer,
					   const struct rtscts_frame *f)
{
	return (f->flags & RTSCTS_F_SYN) &&
	       (!peer->rx_stream ||
		!rtscts_seq_before(f->stream, peer->rx_stream)) &&
	       (!peer->rif->auth || f->dst_inc);
}

bool rtscts_frame_news(const struct rtscts_peer *peer,
		       const struct rtscts_frame *f);
bool rtscts_learn_lladdr(struct rtscts_peer *peer, const struct sk_buff *skb,
			 const struct rtscts_frame *f, bool news);
void rtscts_copy_to_alt(struct rtscts_peer *peer, struct sk_buff_head *xq);

/* reliable.c */
int rtscts_txf_init(void);
void rtscts_txf_exit(void);
unsigned int rtscts_txf_size(void);
struct rtscts_txf *rtscts_txf_alloc(void);
void rtscts_txf_free(struct rtscts_txf *txf);
void rtscts_fill_ack(struct rtscts_peer *peer, struct rtscts_frame *f);
void rtscts_on_ack(struct rtscts_peer *peer, const struct rtscts_frame *f,
		   struct sk_buff_head *xq);
void rtscts_push(struct rtscts_peer *peer, struct sk_buff_head *xq);
void rtscts_send_ack(struct rtscts_peer *peer, struct sk_buff_head *xq,
		     u16 flags);
void rtscts_send_reset(struct rtscts_if *rif, const struct rtscts_frame *f,
		       const u8 *mac, unsigned long *last,
		       struct sk_buff_head *xq);
void rtscts_queue_lone(struct rtscts_if *rif, const struct rtscts_frame *f,
		       const u8 *mac, struct sk_buff_head *xq);
bool rtscts_rx_frame(struct rtscts_peer *peer, struct sk_buff *skb,
		     const struct rtscts_frame *f, struct sk_buff_head *xq);
void rtscts_rx_done(struct rtscts_peer *peer, struct sk_buff_head *xq,
		    bool from_alt);
void rtscts_retransmit_oldest(struct rtscts_peer *peer,
			      struct sk_buff_head *xq);
bool rtscts_tail_probe(struct rtscts_peer *peer, struct sk_buff_head *xq);
void rtscts_restart_stream(struct rtscts_peer *peer, struct sk_buff_head *xq);
u32 rtscts_window(void);

/* ooo.c */
void rtscts_ooo_bind(struct rtscts_if *rif);
void rtscts_ooo_unbind(struct rtscts_if *rif);
int rtscts_ooo_insert(struct rtscts_peer *peer, struct sk_buff *skb,
		      const struct rtscts_frame *f);
u32 rtscts_ooo_seq(const struct sk_buff *skb);
u32 rtscts_ooo_seqs(const struct sk_buff *skb);
struct sk_buff *rtscts_ooo_pop(struct rtscts_peer *peer);
void rtscts_ooo_unpop(struct rtscts_peer *peer, struct sk_buff *skb);
u32 rtscts_ooo_purge(struct rtscts_peer *peer);
unsigned long rtscts_ooo_deadline(const struct rtscts_peer *peer);
void rtscts_ooo_expire(struct rtscts_peer *peer);

/* open.c */
bool rtscts_rx_room(const struct rtscts_peer *peer);
void rtscts_rx_refused(struct rtscts_peer *peer);
struct ptl_msg *rtscts_rx_start(struct rtscts_peer *peer, const u8 *wire,
				u32 carried, bool rts,
				struct ptl_rx_plan *plan);
bool rtscts_rx_open(struct rtscts_peer *peer, struct rtscts_mcb *mcb);
void rtscts_rx_close(struct rtscts_peer *peer, struct rtscts_mcb *mcb);
void rtscts_rx_fail(struct rtscts_peer *peer, struct rtscts_mcb *mcb);
void rtscts_rx_fail_orphans(struct rtscts_peer *peer);
void rtscts_cancel_rx(struct ptl_binding *b);
struct list_head *rtscts_tx_queue(struct rtscts_peer *peer,
				  const struct rtscts_mcb *mcb);
struct rtscts_mcb *rtscts_tx_next(struct rtscts_peer *peer);
void rtscts_tx_open(struct rtscts_peer *peer, struct rtscts_mcb *mcb);
void rtscts_tx_close(struct rtscts_peer *peer, struct rtscts_mcb *mcb);

/* timers.c */
void rtscts_timer_fn(struct timer_list *t);
void rtscts_timer_arm(struct rtscts_peer *peer);
void rtscts_ack_timer_start(struct rtscts_peer *peer, unsigned int delay_us);
void rtscts_ack_soon(struct rtscts_peer *peer);
void rtscts_ack_timer_idle(struct rtscts_peer *peer);
enum hrtimer_restart rtscts_ack_timer_fn(struct hrtimer *t);

/* riders.c */
bool rtscts_may_ride(const struct rtscts_mcb *mcb);
void rtscts_hold(struct rtscts_peer *peer, struct rtscts_mcb *mcb);
bool rtscts_held_due(struct rtscts_peer *peer);
void rtscts_unhold_one(struct rtscts_peer *peer);
void rtscts_riders_board(struct rtscts_peer *peer, struct rtscts_txf *txf);
void rtscts_riders_copy(const struct rtscts_txf *txf, u8 *dst);
void rtscts_riders_acked(struct rtscts_peer *peer, struct rtscts_txf *txf);
bool rtscts_rx_riders(struct rtscts_peer *peer, struct sk_buff *skb,
		      const struct rtscts_frame *f);

/* proto.c */
int rtscts_send(struct ptl_binding *b, struct ptl_msg *msg, gfp_t gfp);
void rtscts_queue_msg(struct rtscts_peer *peer, struct ptl_msg *msg);
void rtscts_tx_done(struct rtscts_peer *peer, struct ptl_msg *msg, u32 fail);
void rtscts_rx_complete(struct rtscts_peer *peer, struct ptl_msg *msg,
			bool request, u32 fail);
struct sk_buff *rtscts_build(struct rtscts_peer *peer, struct rtscts_txf *txf);
struct rtscts_txf *rtscts_next_frame(struct rtscts_peer *peer, u32 seqs);
void rtscts_frame_acked(struct rtscts_peer *peer, struct rtscts_txf *txf);
bool rtscts_busy(const struct rtscts_peer *peer);
bool rtscts_deliver(struct rtscts_peer *peer, struct sk_buff *skb,
		    const struct rtscts_frame *f);
void rtscts_fail_msgs(struct rtscts_peer *peer, bool rx_too);
void rtscts_fail_rx(struct rtscts_peer *peer);

/* credit.c */
void rtscts_credit_tx_reset(struct rtscts_peer *peer);
bool rtscts_credit_left(const struct rtscts_peer *peer);
void rtscts_credit_spend(struct rtscts_peer *peer);
void rtscts_credit_resent(struct rtscts_peer *peer,
			  const struct rtscts_txf *txf);
void rtscts_credit_wait(struct rtscts_peer *peer);
void rtscts_credit_on_grant(struct rtscts_peer *peer,
			    const struct rtscts_frame *f);
void rtscts_credit_rx_reset(struct rtscts_peer *peer, u32 taken);
void rtscts_credit_fill(struct rtscts_peer *peer, struct rtscts_frame *f);
bool rtscts_credit_is_request(const struct sk_buff *skb,
			      const struct rtscts_frame *f);
bool rtscts_credit_may_take(struct rtscts_peer *peer);
void rtscts_credit_take(struct rtscts_peer *peer);
void rtscts_credit_done(struct rtscts_peer *peer);
void rtscts_credit_release(struct rtscts_peer *peer);
void rtscts_credit_ended(struct rtscts_peer *peer, bool request,
			 struct ptl_msg *resp);
void rtscts_credit_answered(struct rtscts_peer *peer,
			    const struct rtscts_mcb *mcb);

/* auth.c */
int rtscts_auth_bind(struct rtscts_if *rif, const u8 *key, u32 key_len,
		     struct netlink_ext_ack *extack);
void rtscts_auth_unbind(struct rtscts_if *rif);
const char *rtscts_auth_name(const struct rtscts_if *rif);
int rtscts_auth_seal(struct rtscts_if *rif, struct sk_buff *skb);
bool rtscts_auth_verify(struct rtscts_if *rif, struct sk_buff *skb,
			u16 frame_len);

/* remember.c */
void rtscts_remember_bind(struct rtscts_if *rif);
void rtscts_remember(struct rtscts_peer *peer);
void rtscts_recall(struct rtscts_peer *peer);
u32 rtscts_remembered(struct rtscts_if *rif);
void rtscts_remember_unbind(struct rtscts_if *rif);

/* netlink.c */
int rtscts_fill_iface(struct ptl_binding *b, struct sk_buff *skb);
int rtscts_fill_stats(struct ptl_binding *b, struct sk_buff *skb);
int rtscts_dump_peers(struct ptl_binding *b, struct ptl_peer_dump *d);
int rtscts_add_peer(struct ptl_binding *b, u32 nid, const u8 *lladdr,
		    unsigned int addr_len, struct netlink_ext_ack *extack);
int rtscts_del_peer(struct ptl_binding *b, u32 nid,
		    struct netlink_ext_ack *extack);

#endif /* RTSCTS_H */
