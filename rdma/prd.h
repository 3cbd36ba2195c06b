/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl_rdma.ko: Portals messages over InfiniBand/RoCE reliable connections
 * (Documentation/rdma-transport.md).
 *
 * One struct prd_iface per binding: an rdma_cm listener on the IPv4
 * address of the bound netdev and the connections to peers. One struct
 * prd_conn per RC connection, with its own PD, CQ, QP and a fixed ring of
 * pre-registered send and receive buffers, so that what a peer can cost
 * is bounded. Messages travel as one or more SEND frames into the peer's
 * posted receive buffers; credits piggybacked on every frame (or sent
 * alone in a NOOP) guarantee a buffer is posted for each data frame.
 *
 * Locks: iface->lock (mutex) guards the list of connections; the xarray
 * iface->peers (its own lock) maps a nid to the connection messages for
 * it are sent on; conn->lock (spinlock, BH) guards a connection's send
 * side and state. The receive side of a connection is only touched by its
 * CQ's completion handler (serialised by the CQ) and, once the CQ is
 * freed, by the teardown work.
 */
#ifndef PRD_H
#define PRD_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <ptl/transport.h>

#define PRD_MAGIC		0x5052	/* "PR" */
#define PRD_VERSION		1

/* Frame types (first byte after the magic). */
enum prd_frame_type {
	PRD_FRAME_FIRST = 1,	/* wire header + first payload bytes */
	PRD_FRAME_MORE = 2,	/* the next payload bytes of that message */
	PRD_FRAME_NOOP = 3,	/* only returns credits; consumes none */
};

/* Every frame starts with this (big endian on the wire). */
struct prd_frame {
	__be16 magic;
	u8 type;
	u8 rsvd0;
	__be16 credits;		/* receive buffers reposted for the peer */
	__be16 rsvd1;
	__be32 len;		/* bytes after this header */
	__be32 rsvd2;
	__be64 payload;		/* FIRST: payload bytes of the whole message */
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

/* Receive buffers posted beyond the credits, for NOOPs. */
#define PRD_NOOP_SPARE		4

enum prd_conn_state {
	PRD_CONN_CONNECTING,
	PRD_CONN_UP,
	PRD_CONN_DEAD,
};

struct prd_iface;
struct prd_conn;

/* A send or receive buffer with its work request's completion. */
struct prd_buf {
	struct ib_cqe cqe;
	struct prd_conn *conn;
	struct ptl_msg *msg;	/* send: the message this frame ends */
	void *data;
	u64 dma;
	struct list_head free;	/* send: on conn->tx_free */
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
	int last_event;		/* rdma_cm's, for the connect timeout's log */
	struct list_head node;	/* on pif->conns */

	struct ib_pd *pd;
	struct ib_cq *cq;
	bool qp_created;
	unsigned int ntx, nrx;
	struct prd_buf *tx, *rx;

	spinlock_t lock;
	enum prd_conn_state state;
	struct list_head txq;		/* messages not fully posted */
	struct list_head inflight;	/* fully posted, not yet completed */
	struct list_head tx_free;	/* idle send buffers */
	unsigned int tx_credits;	/* data frames the peer can take */
	unsigned int rx_owed;		/* credits to return to the peer */
	u32 frame_size;			/* largest frame the peer takes */

	/* Receive side: the message being reassembled. */
	struct ptl_msg *rx_msg;
	u64 rx_off, rx_payload;
	bool rx_busy, rx_failed;

	struct delayed_work timer;	/* connect timeout */
	struct work_struct kill_work;	/* teardown */
};

/* The send state of a message, in ptl_msg_cb(). */
struct prd_tx_cb {
	struct list_head list;
	struct ptl_msg *msg;
	u64 off;		/* payload bytes posted so far */
	bool started;		/* its FIRST frame is posted */
	bool failed;		/* payload could not be read */
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
	bool closing;
	wait_queue_head_t idle;
	struct xarray peers;		/* nid -> struct prd_conn for sends */

	atomic64_t stats[PRD_ST_MAX];
};

extern unsigned int prd_credits;
extern unsigned int prd_frame_size;
extern unsigned int prd_port;
extern unsigned int prd_connect_timeout_ms;
extern struct workqueue_struct *prd_wq;

static inline void prd_stat_add(struct prd_iface *pif, enum prd_stat s,
				u64 v)
{
	atomic64_add(v, &pif->stats[s]);
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

/* msg.c */
int prd_post_recvs(struct prd_conn *conn);
int prd_enqueue(struct prd_conn *conn, struct ptl_msg *msg);
void prd_kick(struct prd_conn *conn);
void __prd_kick(struct prd_conn *conn);
void prd_fail_msgs(struct prd_conn *conn);
int prd_bufs_alloc(struct prd_conn *conn);
void prd_bufs_free(struct prd_conn *conn);

#endif /* PRD_H */
