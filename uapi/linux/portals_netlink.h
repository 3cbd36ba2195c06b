/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Portals for Linux: the generic netlink family "portals", version 1, which
 * configures and inspects the Portals instance of the caller's network
 * namespace (interfaces, peers, NIs, pid reservations, counters). The tool
 * is ptlctl(8). Reading needs nothing; every command that changes
 * something needs CAP_NET_ADMIN in the user namespace owning the network
 * namespace (GENL_UNS_ADMIN_PERM).
 *
 * Every message is a genlmsghdr followed by attributes of the single
 * attribute space enum ptl_attr. Integers are host order; PTL_A_STATS and
 * PTL_A_PEER_STATS nest counters of enum ptl_stat as u64. Dumps may be
 * interrupted and resumed (NLM_F_DUMP); a dump whose objects changed
 * meanwhile is flagged NLM_F_DUMP_INTR, as usual.
 *
 * PTL_CMD_GET_IFACE (do with PTL_A_IFACE, or dump): one message per
 *   configured Portals interface of the namespace (interface 0 always;
 *   interfaces 1 .. PTL_MAX_INTERFACES - 1 once they have been given a
 *   nid or bound; do on another answers ENODEV):
 *     PTL_A_IFACE        u32   index; PtlNIInit's iface is
 *                              PTL_NALTYPE_LINUX0 + index
 *     PTL_A_NID          u32   this node's nid on it
 *     PTL_A_STATE        u8    enum ptl_iface_state
 *     PTL_A_IFINDEX      u32   bound network device (if bound)
 *     PTL_A_IFNAME       string
 *     PTL_A_TRANSPORT    string  "rtscts", ...
 *     PTL_A_MTU          u32   largest frame the transport sends
 *     PTL_A_EAGER_MAX    u32   payload bytes sent eagerly, larger use RTS/CTS
 *                              (rtscts: at most 1048576, more is EINVAL)
 *     PTL_A_ETHERTYPE    u16
 *     PTL_A_NIS          u32   NIs open on it
 *     PTL_A_PEERS        u32   peers the transport keeps state for
 *     PTL_A_AUTH         string  how frames are authenticated
 *                              ("hmac(sha256)"); absent: they are not
 *     PTL_A_STATS        nest  interface counters (enum ptl_stat)
 *
 * PTL_CMD_SET_IFACE (admin): on an unbound interface, with a device
 *   (PTL_A_IFNAME or PTL_A_IFINDEX), binds it through transport
 *   PTL_A_TRANSPORT (default "rtscts"); PTL_A_NID sets the nid, without it
 *   the nid is the device's first IPv4 address (host order), which lets
 *   peers find each other through ARP with no configuration; optional
 *   PTL_A_EAGER_MAX and PTL_A_ETHERTYPE (default 0x88B5), and
 *   PTL_A_AUTH_KEY (PTL_AUTH_KEY_LEN bytes): every frame of the interface
 *   is then authenticated with that key, which both ends must share
 *   (rtscts only: another transport answers EOPNOTSUPP). The key is never
 *   reported back; it is forgotten when the interface is unbound. Without a
 *   device, PTL_A_NID alone sets the nid of an unbound interface (for
 *   intra-node use; this configures interfaces 1..7). On a bound
 *   interface it changes settings: PTL_A_EAGER_MAX only; another device,
 *   another nid, another ethertype or a key need an unbind first (EBUSY),
 *   PTL_A_TRANSPORT is ignored. A nid cannot change while NIs are open on
 *   the interface (EBUSY); nids 0 and 0xffffffff are invalid.
 *
 * PTL_CMD_DEL_IFACE (admin): unbinds PTL_A_IFACE. Operations in flight on
 *   it end with failure events (ni_fail_type PTL_NI_FAIL); the interface
 *   stays usable for intra-node traffic.
 *
 * PTL_CMD_GET_PEER (dump, PTL_A_IFACE required): one message per peer:
 *     PTL_A_IFACE, PTL_A_NID (the peer's), PTL_A_PEER_LLADDR (binary,
 *     dev->addr_len bytes), PTL_A_PEER_STATE (u8 enum ptl_peer_state),
 *     PTL_A_PEER_FLAGS (u32 PTL_PEER_F_*), PTL_A_PEER_INCARNATION (u32),
 *     PTL_A_PEER_RTT_US, PTL_A_PEER_RTTVAR_US, PTL_A_PEER_RTO_US,
 *     PTL_A_PEER_CWND, PTL_A_PEER_INFLIGHT, PTL_A_PEER_QUEUED (u32 each),
 *     PTL_A_PEER_IDLE_MS (u32, since the last frame from it),
 *     PTL_A_UID (u32, rtscts: the uid the peer is charged to, the sender
 *     of the first message to it; absent for a peer created by a frame
 *     from it or by ptlctl), PTL_A_PEER_STATS (nest of enum ptl_stat).
 *   Transport rdma: one message per connection (two for a peer when both
 *   nodes connected at once): PTL_A_IFACE, PTL_A_NID, PTL_A_PEER_STATE
 *   (PTL_PEER_CONNECTING, PTL_PEER_UP or PTL_PEER_DEAD), PTL_A_PEER_FLAGS
 *   (PTL_PEER_F_ACTIVE, PTL_PEER_F_SENDS), PTL_A_PEER_CREDITS,
 *   PTL_A_PEER_CREDITS_OWED, PTL_A_PEER_TX_BUFS, PTL_A_PEER_MRS (u32
 *   each: the last two are what the connection holds now, made while it
 *   moves messages and given back when it is quiet), PTL_A_PEER_STATS
 *   (frames and bytes each way; PTL_STAT_RTS counts messages moved by
 *   RDMA WRITE).
 *
 * PTL_CMD_NEW_PEER (admin): a static link-layer address for a nid:
 *   PTL_A_IFACE, PTL_A_NID, PTL_A_PEER_LLADDR (it replaces what was known
 *   of that peer's address). Static peers are never resolved nor
 *   reclaimed. PTL_CMD_DEL_PEER (admin): PTL_A_IFACE, PTL_A_NID: forget
 *   the peer (operations in flight to it fail).
 *
 * PTL_CMD_GET_NI (dump): one message per NI of the namespace: PTL_A_IFACE,
 *   PTL_A_NID, PTL_A_PID (Portals pid), PTL_A_UID, PTL_A_JID,
 *   PTL_A_OWNER_PID (u32 tgid of the process that created it, in the
 *   caller's pid namespace; 0 if it has exited or is not visible there),
 *   PTL_A_COMM (string), PTL_A_STATS (nest: PTL_STAT_NI_*).
 *
 * PTL_CMD_GET_STATS (do): PTL_A_STATS with the counters of the module,
 *   all namespaces together (PTL_STAT_OPEN_FILES .. PTL_STAT_CORE_OBJECTS).
 *
 * PTL_CMD_NEW_PIDRES (admin): reserves the Portals pids PTL_A_PID ..
 *   PTL_A_PID_LAST (default PTL_A_PID) of interface PTL_A_IFACE for the uid
 *   PTL_A_UID (in the requester's user namespace): only processes of that
 *   uid (or with CAP_NET_ADMIN) may claim them; pids below 64 stay
 *   CAP_NET_ADMIN's whatever the reservation says. Ranges may not overlap
 *   (EEXIST). PTL_CMD_DEL_PIDRES (admin): PTL_A_IFACE, PTL_A_PID (first pid
 *   of the range). PTL_CMD_GET_PIDRES (dump, of every interface):
 *   PTL_A_IFACE, PTL_A_PID, PTL_A_PID_LAST, PTL_A_UID.
 *
 * Multicast group PTL_GENL_MCGRP_EVENTS: PTL_CMD_PEER_EVENT messages with
 *   PTL_A_IFACE, PTL_A_NID (the peer), PTL_A_EVENT (u8 enum ptl_event),
 *   PTL_A_PEER_INCARNATION, PTL_A_FAILED (u32: operations failed by it).
 */
#ifndef _UAPI_LINUX_PORTALS_NETLINK_H
#define _UAPI_LINUX_PORTALS_NETLINK_H

#include <linux/portals.h>	/* PTL_MAX_INTERFACES, PTL_PID_MAX */

#define PTL_GENL_NAME		"portals"
#define PTL_GENL_VERSION	1
#define PTL_GENL_MCGRP_EVENTS	"events"

/* Bytes of a key that authenticates an interface's frames (PTL_A_AUTH_KEY). */
#define PTL_AUTH_KEY_LEN	32

/* The IEEE 802 local experimental ethertype; configurable per interface. */
#define PTL_ETHERTYPE_DEFAULT	0x88B5

enum ptl_cmd {
	PTL_CMD_UNSPEC,
	PTL_CMD_GET_IFACE,
	PTL_CMD_SET_IFACE,
	PTL_CMD_DEL_IFACE,
	PTL_CMD_GET_PEER,
	PTL_CMD_NEW_PEER,
	PTL_CMD_DEL_PEER,
	PTL_CMD_GET_NI,
	PTL_CMD_GET_STATS,
	PTL_CMD_NEW_PIDRES,
	PTL_CMD_DEL_PIDRES,
	PTL_CMD_GET_PIDRES,
	PTL_CMD_PEER_EVENT,		/* notification only */
	__PTL_CMD_MAX
};
#define PTL_CMD_MAX		(__PTL_CMD_MAX - 1)

enum ptl_attr {
	PTL_A_UNSPEC,
	PTL_A_PAD,			/* for 64-bit alignment */
	PTL_A_IFACE,			/* u32 */
	PTL_A_NID,			/* u32 */
	PTL_A_STATE,			/* u8 enum ptl_iface_state */
	PTL_A_IFINDEX,			/* u32 */
	PTL_A_IFNAME,			/* string */
	PTL_A_TRANSPORT,		/* string */
	PTL_A_MTU,			/* u32 */
	PTL_A_EAGER_MAX,		/* u32 */
	PTL_A_ETHERTYPE,		/* u16 */
	PTL_A_NIS,			/* u32 */
	PTL_A_PEERS,			/* u32 */
	PTL_A_STATS,			/* nest of enum ptl_stat, u64 */
	PTL_A_PEER_LLADDR,		/* binary */
	PTL_A_PEER_STATE,		/* u8 enum ptl_peer_state */
	PTL_A_PEER_FLAGS,		/* u32 PTL_PEER_F_* */
	PTL_A_PEER_INCARNATION,		/* u32 */
	PTL_A_PEER_RTT_US,		/* u32 */
	PTL_A_PEER_RTTVAR_US,		/* u32 */
	PTL_A_PEER_RTO_US,		/* u32 */
	PTL_A_PEER_CWND,		/* u32, frames */
	PTL_A_PEER_INFLIGHT,		/* u32, frames sent and not acknowledged */
	PTL_A_PEER_QUEUED,		/* u32, messages waiting to be sent */
	PTL_A_PEER_IDLE_MS,		/* u32 */
	PTL_A_PEER_STATS,		/* nest of enum ptl_stat, u64 */
	PTL_A_PID,			/* u32 */
	PTL_A_PID_LAST,			/* u32 */
	PTL_A_UID,			/* u32 */
	PTL_A_JID,			/* u32 */
	PTL_A_OWNER_PID,		/* u32 */
	PTL_A_COMM,			/* string */
	PTL_A_EVENT,			/* u8 enum ptl_event */
	PTL_A_FAILED,			/* u32 */
	PTL_A_PEER_CREDITS,		/* u32, data frames the peer can take now */
	PTL_A_PEER_CREDITS_OWED,	/* u32, credits not yet returned to it */
	PTL_A_AUTH_KEY,			/* binary, PTL_AUTH_KEY_LEN; set only */
	PTL_A_AUTH,			/* string, the frames' MAC */
	PTL_A_PEER_TX_BUFS,		/* u32, send buffers with memory */
	PTL_A_PEER_MRS,			/* u32, memory regions held */
	__PTL_A_MAX
};
#define PTL_A_MAX		(__PTL_A_MAX - 1)

enum ptl_iface_state {
	PTL_IFACE_LOCAL,		/* not bound: intra-node traffic only */
	PTL_IFACE_UP,			/* bound, device up */
	PTL_IFACE_DOWN,			/* bound, device down (no carrier) */
};

enum ptl_peer_state {
	PTL_PEER_RESOLVING,		/* waiting for its link-layer address */
	PTL_PEER_UP,			/* its address known (heard from, resolved
					 * or static), not timed out */
	PTL_PEER_UNREACHABLE,		/* timed out; operations to it failed */
	PTL_PEER_CONNECTING,		/* rdma: the connection is being set up */
	PTL_PEER_DEAD,			/* rdma: failed or closed, being freed */
};

#define PTL_PEER_F_STATIC	(1U << 0)	/* configured, never reclaimed */
#define PTL_PEER_F_ACTIVE	(1U << 1)	/* rdma: we connected, not it */
#define PTL_PEER_F_SENDS	(1U << 2)	/* rdma: our requests go this way */
#define PTL_PEER_F_CLOSING	(1U << 3)	/* rdma: idle, being closed */

enum ptl_event {
	PTL_EVENT_PEER_UP,		/* first frame, or back after a failure */
	PTL_EVENT_PEER_UNREACHABLE,	/* no answer within the peer timeout */
	PTL_EVENT_PEER_RESTARTED,	/* a new incarnation of the peer */
	PTL_EVENT_PEER_RESET,		/* it lost the state of our stream */
};

/*
 * Counters, in PTL_A_STATS (interface, namespace, module) and
 * PTL_A_PEER_STATS (peer). Each object reports the ones that apply.
 */
enum ptl_stat {
	PTL_STAT_UNSPEC,
	PTL_STAT_PAD,
	PTL_STAT_TX_FRAMES,		/* frames sent, retransmissions included */
	PTL_STAT_TX_BYTES,
	PTL_STAT_RX_FRAMES,		/* frames received and accepted */
	PTL_STAT_RX_BYTES,
	PTL_STAT_RETRANSMITS,		/* frames sent again */
	PTL_STAT_TIMEOUTS,		/* retransmission timer expiries */
	PTL_STAT_DUPLICATES,		/* frames received twice, dropped */
	PTL_STAT_OUT_OF_ORDER,		/* frames received ahead of a gap */
	PTL_STAT_BAD_FRAMES,		/* malformed, bad checksum, wrong node */
	PTL_STAT_STALE_FRAMES,		/* from an old incarnation or stream */
	PTL_STAT_NO_BUFFER,		/* dropped for lack of memory or window */
	PTL_STAT_MSGS_TX,		/* Portals messages sent */
	PTL_STAT_MSGS_RX,		/* Portals messages received */
	PTL_STAT_MSGS_FAILED,		/* operations ended with PTL_NI_FAIL */
	PTL_STAT_RTS,			/* messages sent with RTS/CTS */
	PTL_STAT_LATE_RESPONSES,	/* ACK/REPLY to a gone or recycled MD */
	PTL_STAT_PEER_RESTARTS,		/* new incarnations seen */
	PTL_STAT_PEERS_RECLAIMED,	/* idle peers freed */
	/* module and namespace counters (PTL_CMD_GET_STATS) */
	PTL_STAT_OPEN_FILES,
	PTL_STAT_NIS,
	PTL_STAT_MDS,
	PTL_STAT_EQS,
	PTL_STAT_PINNED_PAGES,
	PTL_STAT_INTRA_MSGS,
	PTL_STAT_DROPS,
	PTL_STAT_CORE_OBJECTS,
	/* per NI (PTL_CMD_GET_NI) */
	PTL_STAT_NI_MES,
	PTL_STAT_NI_MDS,
	PTL_STAT_NI_EQS,
	PTL_STAT_NI_MSGS_IN_FLIGHT,
	/* ptl_rdma: REPLYs written into the initiator's reply region */
	PTL_STAT_SINK_GETS,
	/* ptl_rtscts: frames held ahead of a gap (interface and peer) */
	PTL_STAT_OOO_BYTES,		/* bytes held now (a gauge) */
	PTL_STAT_OOO_DROPPED,		/* not held: over a cap or the memcg limit */
	PTL_STAT_OOO_EXPIRED,		/* freed: their gap stayed open too long */
	/* ptl_rdma: inbound connections (interface) */
	PTL_STAT_CONNS_REFUSED,		/* over max_conns, max_inbound(_pending) */
	PTL_STAT_CONNS_BAD_NID,		/* src_nid not the connecting address */
	PTL_STAT_CLOSE_TIMEOUTS,	/* freed: CLOSE never answered */
	/* frames dropped: tag missing, wrong, or where no key is set */
	PTL_STAT_AUTH_FAILED,
	/* ptl_rtscts: incoming messages held open (interface and peer) */
	PTL_STAT_RX_OPEN,		/* partly received now (a gauge) */
	PTL_STAT_RX_OPEN_DROPPED,	/* not taken: a peer's or the interface's cap */
	/* ptl_rtscts: the peer table (interface) */
	PTL_STAT_PEERS_EVICTED,		/* unresolved or idle peers freed for a new one */
	PTL_STAT_PEERS_REFUSED,		/* new peers refused: table or uid share full */
	PTL_STAT_PEERS_UNRESOLVED,	/* peers whose address is unknown (a gauge) */
	PTL_STAT_PEERS_MAX,		/* the table's cap (max_peers) */
	PTL_STAT_PEERS_USER_MAX,	/* peers one uid may hold (user_peer_share) */
	PTL_STAT_RESOLVE_TRIES,		/* times an unknown address was asked for */
	PTL_STAT_CHALLENGES,		/* claimed restarts checked with the peer */
	/* ptl_rtscts, keyed: replays after a peer is freed (interface) */
	PTL_STAT_PEERS_REMEMBERED,	/* freed peers whose streams are kept (a gauge) */
	PTL_STAT_PEERS_RECALLED,	/* ... that came back to a new peer */
	PTL_STAT_PEERS_FORGOTTEN,	/* freed, not remembered: cap or memory */
	PTL_STAT_NO_DST_INC,		/* streams that did not name us: RESET */
	/* ptl_rtscts: request credit (interface) */
	PTL_STAT_CREDIT_WAITS,		/* requests that waited for a peer's grant */
	PTL_STAT_CREDIT_REFUSED,	/* refused: past the credit or rx_reqs_max */
	PTL_STAT_RX_REQS,		/* requests held now: taken, not done (a gauge) */
	/* ptl_rtscts: the peer table (interface) */
	PTL_STAT_PEERS_TIMERS,		/* peers with a timer running now (a gauge) */
	/* ptl_rtscts: bytes held for peers: state, frames in flight, ahead of gaps */
	PTL_STAT_MEM_BYTES,		/* a gauge */
	/* ptl_rtscts: skbs that carried several frames (super-frames) */
	PTL_STAT_TX_SUPERFRAMES,
	PTL_STAT_RX_SUPERFRAMES,
	/* ptl_rtscts: responses carried by another message's frame */
	PTL_STAT_TX_RIDERS,
	PTL_STAT_RX_RIDERS,
	/* ptl_rtscts: loss timers that fired late (the host stalled) and waited */
	PTL_STAT_LATE_TIMERS,
	__PTL_STAT_MAX
};
#define PTL_STAT_MAX		(__PTL_STAT_MAX - 1)

#endif /* _UAPI_LINUX_PORTALS_NETLINK_H */
