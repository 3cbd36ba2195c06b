/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ptl_rtscts.ko (events/rtscts/ in tracefs):
 *   rtscts_tx, rtscts_rx   a frame left, or arrived and passed its checks
 *   rtscts_retransmit      a frame was sent again
 *   rtscts_bad             a frame failed its checks (the reason)
 *   rtscts_peer_state      a peer became resolving, up or unreachable
 *   rtscts_peer_fail       operations with a peer failed (timeout, restart)
 *   rtscts_lladdr          a peer's link-layer address, or the alternative
 *                          kept beside it (incarnation.c), changed
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtscts

#if !defined(RTSCTS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RTSCTS_TRACE_H

#include <linux/tracepoint.h>

#include "rtscts.h"

DECLARE_EVENT_CLASS(rtscts_frame_class,
	TP_PROTO(const struct rtscts_if *rif, u32 peer,
		 const struct rtscts_frame *f),
	TP_ARGS(rif, peer, f),
	TP_STRUCT__entry(
		__field(u32, iface)
		__field(u32, peer)
		__field(u8, type)
		__field(u16, flags)
		__field(u32, stream)
		__field(u32, seq)
		__field(u32, ack)
		__field(u32, msg_id)
		__field(u16, len)
	),
	TP_fast_assign(
		__entry->iface = ptl_binding_iface(rif->b);
		__entry->peer = peer;
		__entry->type = f->type;
		__entry->flags = f->flags;
		__entry->stream = f->stream;
		__entry->seq = f->seq;
		__entry->ack = f->ack;
		__entry->msg_id = f->msg_id;
		__entry->len = f->frame_len;
	),
	TP_printk("if=%u peer=%u type=%u flags=%#x stream=%u seq=%u ack=%u id=%u len=%u",
		  __entry->iface, __entry->peer, __entry->type,
		  __entry->flags, __entry->stream, __entry->seq,
		  __entry->ack, __entry->msg_id, __entry->len)
);

DEFINE_EVENT(rtscts_frame_class, rtscts_tx,
	TP_PROTO(const struct rtscts_if *rif, u32 peer,
		 const struct rtscts_frame *f),
	TP_ARGS(rif, peer, f)
);

DEFINE_EVENT(rtscts_frame_class, rtscts_rx,
	TP_PROTO(const struct rtscts_if *rif, u32 peer,
		 const struct rtscts_frame *f),
	TP_ARGS(rif, peer, f)
);

TRACE_EVENT(rtscts_retransmit,
	TP_PROTO(const struct rtscts_if *rif, u32 peer, u32 seq, u8 type),
	TP_ARGS(rif, peer, seq, type),
	TP_STRUCT__entry(
		__field(u32, peer)
		__field(u32, seq)
		__field(u8, type)
	),
	TP_fast_assign(
		__entry->peer = peer;
		__entry->seq = seq;
		__entry->type = type;
	),
	TP_printk("peer=%u seq=%u type=%u", __entry->peer, __entry->seq,
		  __entry->type)
);

TRACE_EVENT(rtscts_bad,
	TP_PROTO(const struct rtscts_if *rif, int reason),
	TP_ARGS(rif, reason),
	TP_STRUCT__entry(
		__field(u32, iface)
		__field(int, reason)
	),
	TP_fast_assign(
		__entry->iface = ptl_binding_iface(rif->b);
		__entry->reason = reason;
	),
	TP_printk("if=%u reason=%d", __entry->iface, __entry->reason)
);

TRACE_EVENT(rtscts_peer_state,
	TP_PROTO(const struct rtscts_if *rif, u32 peer, u8 state),
	TP_ARGS(rif, peer, state),
	TP_STRUCT__entry(
		__field(u32, peer)
		__field(u8, state)
	),
	TP_fast_assign(
		__entry->peer = peer;
		__entry->state = state;
	),
	TP_printk("peer=%u state=%u", __entry->peer, __entry->state)
);

TRACE_EVENT(rtscts_lladdr,
	TP_PROTO(const struct rtscts_if *rif, u32 peer, const u8 *mac, bool alt),
	TP_ARGS(rif, peer, mac, alt),
	TP_STRUCT__entry(
		__field(u32, peer)
		__array(u8, mac, ETH_ALEN)
		__field(bool, alt)
	),
	TP_fast_assign(
		__entry->peer = peer;
		memcpy(__entry->mac, mac, ETH_ALEN);
		__entry->alt = alt;
	),
	TP_printk("peer=%u %s=%pM", __entry->peer,
		  __entry->alt ? "alt" : "lladdr", __entry->mac)
);

TRACE_EVENT(rtscts_peer_fail,
	TP_PROTO(const struct rtscts_if *rif, u32 peer, u8 event, u64 failed),
	TP_ARGS(rif, peer, event, failed),
	TP_STRUCT__entry(
		__field(u32, peer)
		__field(u8, event)
		__field(u64, failed)
	),
	TP_fast_assign(
		__entry->peer = peer;
		__entry->event = event;
		__entry->failed = failed;
	),
	TP_printk("peer=%u event=%u failed=%llu", __entry->peer,
		  __entry->event, __entry->failed)
);

#endif /* RTSCTS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rtscts_trace
#include <trace/define_trace.h>
