/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl_rdma.ko: Portals messages over InfiniBand/RoCE reliable connections
 * (Documentation/rdma-transport.md).
 *
 * One struct prd_iface per binding: an rdma_cm listener on the IPv4
 * address of the bound netdev and the connections to peers. One struct
 * prd_conn per RC connection, with its own CQ, QP and a fixed ring of
 * pre-registered send buffers, so that what a peer can cost is bounded.
 * Receive buffers come from one shared receive queue per interface and
 * device (struct prd_rxq, srq.c), or where there is none from a ring per
 * connection with a PD of its own. Messages travel as one or more SEND
 * frames into the peer's posted receive buffers; credits piggybacked on
 * every frame (or sent alone in a NOOP) bound what each peer has in
 * flight.
 *
 * Locks: iface->lock (mutex) guards the list of connections and their
 * counts (nconns, nin, nin_pending, conn->in_pending); the xarray
 * iface->peers (its own lock) maps a nid to the connection messages for
 * it are sent on; conn->lock (spinlock, BH) guards a connection's send
 * side and state. The receive side of a connection is only touched by its
 * CQ's completion handler (serialised by the CQ) and, once the CQ is
 * freed, by the teardown work. pif->rxq_lock (mutex) guards the list of
 * receive queues, rxq->lock (spinlock, BH) one's buffers.
 */
#ifndef PRD_H
#define PRD_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/sched/mm.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <ptl/transport.h>

#define PRD_MAGIC		0x5052	/* "PR" */
#define PRD_VERSION		3	/* 2: CTS with off, rounds; 3: sinks, CLOSE */

/* Frame types (first byte after the magic). */
enum prd_frame_type {
	PRD_FRAME_FIRST = 1,	/* wire header + first payload bytes */
	PRD_FRAME_MORE = 2,	/* the next payload bytes of that message */
	PRD_FRAME_NOOP = 3,	/* only returns credits; consumes none */
	PRD_FRAME_RTS = 4,	/* wire header of a message to RDMA WRITE */
	PRD_FRAME_CTS = 5,	/* where to write it: struct prd_cts */
	PRD_FRAME_DONE = 6,	/* written (SEND with invalidate of the rkey) */
	PRD_FRAME_GETS = 7,	/* wire header of a GET + struct prd_sink */
	PRD_FRAME_SINK = 8,	/* the GET's REPLY is in the sink (or not) */
	PRD_FRAME_CLOSE = 9,	/* idle: may we close? (close.c) */
	PRD_FRAME_CLOSE_ACK = 10,	/* yes */
};

/* Frames other than these use a credit and carry (part of) a message. */
static inline bool prd_frame_is_ctl(u8 type)
{
	return type == PRD_FRAME_NOOP || type == PRD_FRAME_CLOSE ||
	       type == PRD_FRAME_CLOSE_ACK;
}

/*
 * After the wire header of a GETS frame: where the target may RDMA WRITE
 * the payload of the GET's REPLY, the initiator's registered reply region.
 */
struct prd_sink {
	__be64 addr;		/* of the initiator's sink MR */
	__be32 rkey;
	__be32 rsvd;		/* 0 */
	__be64 len;		/* bytes the MR takes: 1..PRD_RDMA_MAX */
};

/*
 * After the frame header of a CTS: where to write the round of the
 * payload that starts at @off (the frame's payload field: its bytes).
 */
struct prd_cts {
	__be64 addr;		/* of the target's MR */
	__be32 rkey;
	__be32 flags;		/* PRD_CTS_* */
	__be64 off;		/* of the round in the payload */
};

#define PRD_CTS_FRAMES		1	/* send the rest in MORE frames */
#define PRD_CTS_MORE		2	/* another CTS follows this round's DONE */

/* Every frame starts with this (big endian on the wire). */
struct prd_frame {
	__be16 magic;
	u8 type;
	u8 rsvd0;
	__be16 credits;		/* receive buffers reposted for the peer */
	__be16 rsvd1;
	__be32 len;		/* bytes after this header */
	/* RTS, CTS, DONE, MORE: the RDMA slot + 1; GETS, SINK: sink + 1 */
	__be32 cookie;
	/* FIRST, RTS: payload bytes; CTS: to write; SINK: bytes written */
	__be64 payload;
};

/* rdma_cm private data of the connect request and of its accept. */
struct prd_conn_data {
	__be16 magic;
	__be16 version;
	__be16 credits;		/* data frames the sender may have in flight */
	__be16 rsvd;
	__be32 src_nid;
	__be32 dst_nid;
	__be32 frame_size;	/* largest frame the sender accepts */
};

/*
 * rdma_cm private data of a reject (rdma_reject(), IB_CM_REJ_CONSUMER_DEFINED):
 * why the connect request was refused. Peers that do not know it see a
 * reject as before.
 */
struct prd_reject {
	__be16 magic;
	__be16 version;
	__be16 reason;		/* enum prd_reject_reason */
	__be16 rsvd;
};

enum prd_reject_reason {
	PRD_REJ_PROTO = 1,	/* bad private data or another version */
	PRD_REJ_DST_NID = 2,	/* dst_nid is not this interface's nid */
	PRD_REJ_SRC_NID = 3,	/* src_nid is not the address it came from */
	PRD_REJ_BUSY = 4,	/* max_conns, max_inbound(_pending) reached */
	PRD_REJ_NOMEM = 5,	/* no memory or adapter resources for it */
};

/*
 * Unanswered CLOSEs (close.c) after which an idle connection is freed
 * anyway: a peer that takes our frames but never answers would otherwise
 * keep it for ever.
 */
#define PRD_CLOSE_ASKS		3

/* Receive buffers posted beyond the credits, for NOOPs. */
#define PRD_NOOP_SPARE		4

/*
 * Send buffers a connection always has (demand.c): one, always either
 * free or on its way back, so a frame never waits for memory for ever.
 * A second costs an idle connection 8 KiB; without it, the second frame
 * in flight after a quiet second makes one (GFP_NOWAIT).
 */
#define PRD_TX_FLOOR		1

/* Quiet this long, a connection gives back what it made (demand.c). */
#define PRD_TRIM_MS		1000

enum prd_conn_state {
	PRD_CONN_CONNECTING,
	PRD_CONN_UP,
	PRD_CONN_DEAD,
};

struct prd_iface;
struct prd_conn;

/* Large messages by RDMA WRITE: slots per connection and direction. */
#define PRD_RDMA_SLOTS		8
#define PRD_RDMA_MAX		(1U << 20)	/* bytes per round (one MR) */
#define PRD_RDMA_PAGES		(PRD_RDMA_MAX / PAGE_SIZE + 1)

/* A message being received: by frames, inline or into a slot. */
struct prd_rx_state {
	struct ptl_msg *msg;	/* NULL: the bytes are discarded */
	u64 off, payload;
	bool busy, failed;
};

/*
 * One large message on its way, in rounds of at most PRD_RDMA_MAX bytes
 * (one CTS, its WRITE and a DONE each). Both ends register the round's
 * pages in the slot's @mr, so that a round is one WRITE of one scatter
 * entry (small send-queue entries: decisions.md, "RDMA memory per
 * peer"). Initiator: the round's payload, mapped from its CTS (the first
 * round's from the RTS) and registered with its WRITE, until the round's
 * DONE completes: before that the adapter may still read it, to
 * retransmit the WRITE. Target: the round's deposit pages, mapped and
 * registered from its CTS until its DONE arrives (the DONE invalidates
 * @mr's rkey), or the rest received in frames. Slot i of the initiator
 * is slot i of the target: the initiator reuses it only after its last
 * DONE completed, and the target frees it on that DONE, which RC
 * delivers before any later RTS.
 */
struct prd_slot {
	struct scatterlist *sgl;	/* PRD_RDMA_PAGES, while in use (demand.c) */
	int nents;		/* of sgl */
	int mapped;		/* DMA-mapped entries; 0: not mapped */
	bool busy;
	bool cts_ready;		/* target: a CTS to send (on ctlq) */
	bool frames;		/* target: the payload comes in frames */
	bool mr_wait;		/* target: its CTS waits for an MR (demand.c) */
	bool done_pending;	/* initiator: a round's DONE not completed */
	bool mr_used;		/* initiator: @mr registered since it was made */
	struct list_head ctl;	/* target: on conn->ctlq */
	struct ptl_msg *msg;	/* initiator */
	struct prd_rx_state rx;	/* target */
	struct ib_mr *mr;
	struct ib_send_wr inv;	/* LOCAL_INV before reg (prd_slot_reg_wrs()) */
	struct ib_reg_wr reg;
	u64 grant;		/* target: bytes it takes in all */
	u64 round_off;		/* the round: offset in the payload, */
	u64 round_len;		/* and bytes (initiator: mapped) */
	bool more;		/* initiator: another round follows */
	u64 raddr;		/* initiator: from the CTS */
	u32 rkey;
};

/*
 * Target: the sink a GETS announced, until the SINK frame that answers it
 * is posted (rsink_busy), as a peer's slots are.
 */
struct prd_rsink {
	u64 addr;
	u32 rkey;
	u32 len;
};

/* A send or receive buffer with its work request's completion. */
struct prd_buf {
	struct ib_cqe cqe;
	struct prd_conn *conn;
	struct ptl_msg *msg;	/* send: the message this frame ends */
	struct prd_slot *slot;	/* send: the DONE of this initiator slot */
	void *data;
	u64 dma;
	struct list_head free;	/* send: on conn->tx_free */
	/* send: the work requests its completion retires (send queue) */
	unsigned int sq_wrs;
};

/*
 * The receive buffers an interface's connections on one RDMA device
 * share: a PD (the connections' QPs and MRs are on it) and an SRQ
 * (srq.c). Referenced by each connection on the device.
 */
struct prd_rxq {
	struct kref ref;
	struct prd_iface *pif;
	struct ib_device *dev;
	struct list_head node;		/* on pif->rxqs */
	struct ib_pd *pd;
	struct ib_srq *srq;
	unsigned int size;		/* buffers kept posted */
	/*
	 * The receive completions of every connection's QP on the device,
	 * and the QP behind prd_rxq_barrier().
	 */
	struct ib_cq *cq;
	struct ib_qp *barrier_qp;
	struct mutex barrier_lock;

	spinlock_t lock;
	struct list_head posted;	/* in the order posted */
	struct list_head lost;		/* presumed lost, replaced */
	struct list_head idle;		/* a post failed: the sweep's */
	unsigned int nposted, nlost;
	u64 seq;			/* of the last buffer posted */
	u64 done_seq;			/* the highest one completed */
};

/* First member of what an rdma_cm_id's context points to. */
enum prd_kind {
	PRD_KIND_IFACE = 1,
	PRD_KIND_CONN,
};

struct prd_conn {
	enum prd_kind kind;
	struct prd_iface *pif;
	struct kref ref;
	struct rdma_cm_id *id;
	u32 nid;		/* the peer's */
	bool active;		/* we connected, rather than accepted */
	bool in_pending;	/* accepted, not yet up: pif->nin_pending */
	bool was_up;		/* established once: its end is news */
	int last_event;		/* rdma_cm's, for the connect timeout's log */
	/*
	 * Serialises rdma_cm's handler with the teardown: a connect that
	 * timed out is torn down while its ROUTE_RESOLVED handler may be
	 * building the QP and buffers the teardown frees.
	 */
	struct mutex cm_mutex;
	struct list_head node;	/* on pif->conns */

	struct prd_rxq *rxq;	/* its receive buffers; NULL: a ring */
	struct ib_pd *pd;	/* rxq's, or its own */
	struct ib_cq *cq;
	bool qp_created;
	unsigned int ntx, nrx;
	struct prd_buf *tx, *rx;

	spinlock_t lock;
	enum prd_conn_state state;
	struct list_head txq;		/* messages not fully posted */
	struct list_head inflight;	/* fully posted, not yet completed */
	/*
	 * ACKs held until the messages sent before them have ended (acks.c):
	 * tx_seq numbers the messages put in flight, ended_seq is the last
	 * of them ended.
	 */
	u32 tx_seq, ended_seq;
	struct list_head acks_held;
	struct list_head tx_free;	/* idle send buffers */
	struct list_head tx_unmade;	/* send buffers with no memory yet */
	unsigned int tx_made;		/* send buffers with memory */
	unsigned int tx_credits;	/* data frames the peer can take */
	/*
	 * The send queue: sq_size work requests of ours (the drain's
	 * aside). A signalled SEND's completion retires it and the
	 * unsignalled ones before it (WRITEs, registrations), so a step
	 * is posted only when the queue has room for it.
	 */
	unsigned int sq_size, sq_used;
	unsigned int sq_unsignalled;	/* posted since the last SEND */
	unsigned int rx_owed;		/* credits to return to the peer */
	/*
	 * Data frames the peer may still send: the credits it was given
	 * (at connect and in our frames) less the frames it sent. One more
	 * breaks the protocol: with a shared receive queue it would take
	 * other peers' buffers.
	 */
	unsigned int rx_allowed;
	u32 frame_size;			/* largest frame the peer takes */

	/* Receive side: the message being reassembled. */
	struct prd_rx_state in;

	/* Large messages (PRD_RDMA_SLOTS each way). */
	struct prd_slot *txs, *rxs;
	struct list_head rts_wait;	/* messages waiting for their CTS */
	struct list_head ctlq;		/* target slots with a CTS to send */
	/*
	 * Gets whose REPLY the target RDMA WRITEs into our reply region:
	 * sinks[i] (a struct prd_slot: sgl, mr, reg, inv; msg = the get,
	 * round_len = the sink's bytes) from the GETS until the SINK frame
	 * or the teardown. Target: the peer's sinks, rsink_release the ones
	 * to release with a bare SINK frame (the GET had no REPLY).
	 */
	struct prd_slot *sinks;
	struct prd_rsink rsinks[PRD_RDMA_SLOTS];
	unsigned long rsink_busy, rsink_release;
	bool replays_local_ops;		/* see prd_slot_new_key() */
	struct ib_cqe err_cqe;		/* of unsignalled work requests */
	/* Makes the MRs slots and sinks wait for (demand.c). */
	struct work_struct mr_work;
	bool tx_mrs_wanted, sink_mrs_wanted;
	bool tx_mr_failed;	/* the waiting message goes in frames */
	bool sink_mr_failed;	/* the waiting get goes the old way */

	struct delayed_work timer;	/* connect timeout */
	/* Message frames completed (conn->lock), and the sweep's look. */
	u32 progress, sw_progress;
	bool sw_waiting;
	bool sw_probed;			/* a NOOP went for this wait */
	unsigned long sw_since;		/* jiffies: unchanged since */

	/* Idle close (close.c); conn->lock. */
	bool closing;			/* no new requests on it */
	bool close_asked;		/* we sent CLOSE */
	bool close_acked;		/* we sent CLOSE_ACK */
	bool close_done;		/* the peer's CLOSE_ACK: we disconnect */
	/* asked to make room at max_conns: answered soon or killed */
	bool close_reclaim;
	u8 close_asks;			/* CLOSEs sent since the last progress */
	u32 tx_msg_frames;		/* message frames posted */
	u32 close_mark;			/* tx_msg_frames at our CLOSE */
	struct work_struct kill_work;	/* teardown */
	ktime_t killed_at;		/* when the teardown was queued */

	/* ptlctl peer show -s: what went over this connection. */
	atomic64_t st_tx_frames, st_tx_bytes, st_rx_frames, st_rx_bytes;
	atomic64_t st_rdma_writes;
};

/* Work requests of a SEND after a registration: LOCAL_INV, REG_MR. */
#define PRD_REG_SEND_WRS	3

/*
 * Work requests the largest step of a message posts: an RDMA WRITE round
 * (LOCAL_INV, REG_MR, WRITE, then DONE or SINK).
 */
#define PRD_STEP_WRS		(PRD_REG_SEND_WRS + 1)

bool prd_tx_make(struct prd_conn *conn);

/*
 * The send queue has room for @wrs more work requests, and a send buffer
 * is free, made now if need be (demand.c). conn->lock held.
 */
static inline bool prd_can_post(struct prd_conn *conn, unsigned int wrs)
{
	return conn->sq_used + wrs <= conn->sq_size &&
	       (!list_empty(&conn->tx_free) || prd_tx_make(conn));
}

/* The send state of a message, in ptl_msg_cb(). */
struct prd_tx_cb {
	struct list_head list;
	struct ptl_msg *msg;
	u64 off;		/* payload bytes posted so far */
	bool started;		/* its FIRST (or RTS) frame is posted */
	bool failed;		/* payload could not be read */
	bool write;		/* CTS came: RDMA WRITE and DONE are next */
	u8 cookie;		/* slot + 1 once an RTS went; 0: inline */
	u32 seq;		/* in flight: prd_inflight_add() (acks.c) */
	/*
	 * A REPLY to a GETS: the initiator's sink + 1, for its payload to
	 * be written into. Set by prd_rx_gets() on the response, kept by
	 * prd_enqueue() (the library zeroes the scratch of new messages).
	 */
	u8 sink;
};

/* Counters of an interface (ptlctl iface show -s). */
enum prd_stat {
	PRD_ST_TX_FRAMES,
	PRD_ST_TX_BYTES,
	PRD_ST_RX_FRAMES,
	PRD_ST_RX_BYTES,
	PRD_ST_BAD_FRAMES,
	PRD_ST_NO_BUFFER,
	PRD_ST_CONNS,		/* connections set up */
	PRD_ST_CONN_FAILS,	/* connections that ended in error */
	PRD_ST_NOOPS,
	PRD_ST_CREDIT_STALLS,	/* a frame waited for a credit */
	PRD_ST_RDMA_WRITES,	/* messages moved by RDMA WRITE */
	PRD_ST_RDMA_BYTES,
	PRD_ST_RDMA_FALLBACKS,	/* RTS answered "send frames" */
	PRD_ST_STALLS,		/* connections the watchdog killed */
	PRD_ST_IDLE_CLOSES,	/* connections closed for idleness */
	PRD_ST_SINK_GETS,	/* REPLYs written into a sink, sent or received */
	PRD_ST_REFUSED,		/* inbound connections over a cap */
	PRD_ST_BAD_NID,		/* inbound: src_nid not the address */
	PRD_ST_CLOSE_TIMEOUTS,	/* freed after PRD_CLOSE_ASKS unanswered */
	PRD_ST_SRQ_LOST,	/* receive buffers presumed lost (srq.c) */
	PRD_ST_EVICTED,		/* idle ones asked to close at max_conns */
	PRD_ST_OUT_REFUSED,	/* our new ones refused at max_conns */
	PRD_ST_MAX
};

struct prd_iface {
	enum prd_kind kind;
	struct ptl_binding *b;
	struct net *net;
	__be32 addr;			/* IPv4 of the bound netdev */
	u32 eager_max;			/* reported only: all sizes are sent */
	struct rdma_cm_id *listen;	/* NULL once its device went away */
	struct work_struct listen_gone;

	struct mutex lock;
	struct list_head conns;
	unsigned int nconns;
	unsigned int nin;		/* inbound (accepted) connections */
	unsigned int nin_pending;	/* of which not yet established */
	bool closing;
	wait_queue_head_t idle;
	struct xarray peers;		/* nid -> struct prd_conn for sends */
	struct mutex rxq_lock;
	struct list_head rxqs;		/* struct prd_rxq, one per device */
	struct delayed_work sweep;	/* sweep.c */
	struct mem_cgroup *memcg;	/* the binder's: prd_charge() */

	atomic64_t stats[PRD_ST_MAX];
};

extern unsigned int prd_credits;
extern unsigned int prd_frame_size;
extern unsigned int prd_port;
extern unsigned int prd_connect_timeout_ms;
extern unsigned int prd_rdma_min;
extern unsigned int prd_progress_timeout_ms;
extern unsigned int prd_peer_idle_s;
extern unsigned int prd_max_conns;
extern unsigned int prd_max_inbound;
extern unsigned int prd_max_inbound_pending;
extern unsigned int prd_srq_buffers;
extern struct workqueue_struct *prd_wq;

static inline void prd_stat_add(struct prd_iface *pif, enum prd_stat s,
				u64 v)
{
	atomic64_add(v, &pif->stats[s]);
}

/* Counts on the interface and, if shown per peer, on the connection. */
static inline void prd_conn_stat_add(struct prd_conn *conn,
				     enum prd_stat s, u64 v)
{
	atomic64_t *c;

	prd_stat_add(conn->pif, s, v);
	switch (s) {
	case PRD_ST_TX_FRAMES:
		c = &conn->st_tx_frames;
		break;
	case PRD_ST_TX_BYTES:
		c = &conn->st_tx_bytes;
		break;
	case PRD_ST_RX_FRAMES:
		c = &conn->st_rx_frames;
		break;
	case PRD_ST_RX_BYTES:
		c = &conn->st_rx_bytes;
		break;
	case PRD_ST_RDMA_WRITES:
		c = &conn->st_rdma_writes;
		break;
	default:
		return;
	}
	atomic64_add(v, c);
}

/*
 * What peers make an interface hold (connections, their buffers and
 * slots, the shared receive queue) is charged to the memory cgroup of the
 * process that bound it, as rtscts' buffers are: allocated with
 * __GFP_ACCOUNT between prd_charge() and set_active_memcg(old), in
 * process or softirq context. In a namespace of its own, a user who binds
 * an interface pays for it, and its memory.max bounds it. What the RDMA
 * driver allocates for QPs, CQs and MRs is the driver's, not charged.
 */
static inline struct mem_cgroup *prd_charge(struct prd_iface *pif)
{
	return set_active_memcg(pif->memcg);
}

static inline struct prd_tx_cb *prd_cb(struct ptl_msg *msg)
{
	return ptl_msg_cb(msg);
}

/* conn.c */
int prd_listen(struct prd_iface *pif, struct netlink_ext_ack *extack);
void prd_stop_listening(struct prd_iface *pif);
struct prd_conn *prd_conn_get(struct prd_iface *pif, u32 nid);
void prd_conn_put(struct prd_conn *conn);
void prd_conn_kill(struct prd_conn *conn);
void __prd_conn_kill(struct prd_conn *conn);
void prd_kill_all(struct prd_iface *pif);

/* srq.c */
struct prd_rxq *prd_rxq_get(struct prd_iface *pif, struct ib_device *dev);
void prd_rxq_put(struct prd_rxq *rxq);
void prd_rxq_sweep(struct prd_iface *pif);
void prd_rxq_barrier(struct prd_rxq *rxq);

/* sweep.c */
bool prd_conn_waiting(struct prd_conn *conn);
void prd_sweep_start(struct prd_iface *pif);
void prd_sweep_stop(struct prd_iface *pif);

/* close.c */
void prd_close_idle(struct prd_conn *conn, bool idle);
void prd_close_reclaim(struct prd_iface *pif);
int prd_rx_close(struct prd_conn *conn);
int prd_rx_close_ack(struct prd_conn *conn);
bool prd_conn_closed_idle(struct prd_conn *conn, unsigned int failed);

/* netlink.c */
int prd_dump_peers(struct ptl_binding *b, struct ptl_peer_dump *d);

/* bulk.c */
int prd_slots_alloc(struct prd_conn *conn);
void prd_slots_unmap(struct prd_conn *conn);
void prd_slots_fail(struct prd_conn *conn);
void prd_slots_free(struct prd_conn *conn);
bool prd_try_rts(struct prd_conn *conn, struct prd_tx_cb *cb, int *err);
int prd_post_write(struct prd_conn *conn, struct prd_tx_cb *cb);
void prd_tx_slot_done(struct prd_conn *conn, struct prd_slot *slot,
		      bool last);
int prd_rx_cts(struct prd_conn *conn, const struct prd_frame *f,
	       const u8 *p, u32 len, struct ptl_msg **ended);
int prd_rx_rts(struct prd_conn *conn, const struct prd_frame *f,
	       const u8 *p, u32 len, struct ptl_msg **resp);
int prd_post_cts(struct prd_conn *conn, struct prd_slot *slot);
void prd_slot_answer(struct prd_conn *conn, struct prd_slot *slot);
struct prd_rx_state *prd_slot_rx(struct prd_conn *conn, u32 cookie);
void prd_slot_rx_check(struct prd_conn *conn, u32 cookie);
int prd_rx_done_frame(struct prd_conn *conn, const struct prd_frame *f,
		      const struct ib_wc *wc, struct ptl_msg **resp);
bool prd_try_sink(struct prd_conn *conn, struct prd_tx_cb *cb, int *err);
int prd_rx_gets(struct prd_conn *conn, const struct prd_frame *f,
		const u8 *p, u32 len, struct ptl_msg **resp);
int prd_post_sink_reply(struct prd_conn *conn, struct prd_tx_cb *cb);
int prd_post_release(struct prd_conn *conn);
int prd_rx_sink(struct prd_conn *conn, const struct prd_frame *f,
		const u8 *p, u32 len, const struct ib_wc *wc,
		struct ptl_msg **resp);

/* demand.c */
int prd_demand_init(void);
void prd_demand_exit(void);
struct scatterlist *prd_slot_sgl(struct prd_conn *conn,
				 struct prd_slot *slot);
void prd_slot_sgl_put(struct prd_slot *slot);
void prd_conn_want_mrs(struct prd_conn *conn);
void prd_mr_work(struct work_struct *work);
bool prd_conn_quiet(struct prd_conn *conn, unsigned long now);
unsigned int prd_conn_mrs(struct prd_conn *conn);
void prd_conn_trim(struct prd_conn *conn, unsigned long now);

/* acks.c */
#define PRD_RX_HELD	1	/* a frame kept for later, with its credit */
void prd_inflight_add(struct prd_conn *conn, struct prd_tx_cb *cb);
bool prd_ack_hold(struct prd_conn *conn, const u8 *hdr);
void prd_msg_ended(struct prd_conn *conn, u32 seq);
void prd_acks_drop(struct prd_conn *conn);

/* msg.c */
void prd_rx_bare(struct prd_conn *conn, const u8 *hdr);
int prd_post_send(struct prd_conn *conn, struct prd_buf *tb, u32 len,
		  struct ib_send_wr *before, const u32 *inv_rkey);
void prd_frame_init(struct prd_conn *conn, struct prd_frame *f, u8 type);
int prd_post_ctl(struct prd_conn *conn, u8 type);
int prd_post_noop(struct prd_conn *conn);
void prd_wc_error(struct prd_conn *conn, const struct ib_wc *wc);
struct ptl_msg *prd_rx_match(struct prd_conn *conn, const u8 *hdr,
			     struct ptl_rx_plan *plan);
int prd_post_recvs(struct prd_conn *conn);
int prd_frame_map(struct ib_device *dev, enum dma_data_direction dir,
		  void **data, u64 *dma, gfp_t gfp);
void prd_frame_unmap(struct ib_device *dev, enum dma_data_direction dir,
		     void *data, u64 dma);
void prd_rx_frame_done(struct prd_conn *conn, const struct ib_wc *wc,
		       const void *buf, struct prd_buf *ring_buf);
int prd_enqueue(struct prd_conn *conn, struct ptl_msg *msg);
void prd_kick(struct prd_conn *conn);
void __prd_kick(struct prd_conn *conn);
unsigned int prd_fail_msgs(struct prd_conn *conn);
int prd_bufs_alloc(struct prd_conn *conn);
void prd_bufs_free(struct prd_conn *conn);
int prd_tx_buf_make(struct prd_conn *conn, gfp_t gfp);
void prd_buf_fini(struct prd_conn *conn, struct prd_buf *pb,
		  enum dma_data_direction dir);

#endif /* PRD_H */
