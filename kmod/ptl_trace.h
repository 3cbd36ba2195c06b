/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ptl.ko (events/ptl/ in tracefs):
 *   ptl_put, ptl_get, ptl_getput  a request was initiated
 *   ptl_match                     a target accepted a request
 *   ptl_drop                      a message was dropped, with the reason
 *   ptl_event_posted              an event was written into an EQ ring
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ptl

#if !defined(PTL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define PTL_TRACE_H

#include <linux/tracepoint.h>

#include "core/ptl_core.h"

DECLARE_EVENT_CLASS(ptl_request,
	TP_PROTO(const struct ptl_hdr *hdr),
	TP_ARGS(hdr),
	TP_STRUCT__entry(
		__field(u32, src_nid)
		__field(u32, src_pid)
		__field(u32, dst_nid)
		__field(u32, dst_pid)
		__field(u32, pt_index)
		__field(u32, ac_index)
		__field(u64, match_bits)
		__field(u64, rlength)
		__field(u64, offset)
	),
	TP_fast_assign(
		__entry->src_nid = hdr->src.nid;
		__entry->src_pid = hdr->src.pid;
		__entry->dst_nid = hdr->dst.nid;
		__entry->dst_pid = hdr->dst.pid;
		__entry->pt_index = hdr->pt_index;
		__entry->ac_index = hdr->ac_index;
		__entry->match_bits = hdr->match_bits;
		__entry->rlength = hdr->rlength;
		__entry->offset = hdr->offset;
	),
	TP_printk("%u:%u -> %u:%u pt=%u ac=%u bits=%#llx len=%llu off=%llu",
		  __entry->src_nid, __entry->src_pid, __entry->dst_nid,
		  __entry->dst_pid, __entry->pt_index, __entry->ac_index,
		  __entry->match_bits, __entry->rlength, __entry->offset)
);

DEFINE_EVENT(ptl_request, ptl_put,
	TP_PROTO(const struct ptl_hdr *hdr),
	TP_ARGS(hdr)
);

DEFINE_EVENT(ptl_request, ptl_get,
	TP_PROTO(const struct ptl_hdr *hdr),
	TP_ARGS(hdr)
);

DEFINE_EVENT(ptl_request, ptl_getput,
	TP_PROTO(const struct ptl_hdr *hdr),
	TP_ARGS(hdr)
);

TRACE_EVENT(ptl_match,
	TP_PROTO(u32 nid, u32 pid, const struct ptl_hdr *hdr, u64 offset,
		 u64 mlength),
	TP_ARGS(nid, pid, hdr, offset, mlength),
	TP_STRUCT__entry(
		__field(u32, nid)
		__field(u32, pid)
		__field(u32, type)
		__field(u32, src_nid)
		__field(u32, src_pid)
		__field(u32, pt_index)
		__field(u64, match_bits)
		__field(u64, rlength)
		__field(u64, offset)
		__field(u64, mlength)
	),
	TP_fast_assign(
		__entry->nid = nid;
		__entry->pid = pid;
		__entry->type = hdr->type;
		__entry->src_nid = hdr->src.nid;
		__entry->src_pid = hdr->src.pid;
		__entry->pt_index = hdr->pt_index;
		__entry->match_bits = hdr->match_bits;
		__entry->rlength = hdr->rlength;
		__entry->offset = offset;
		__entry->mlength = mlength;
	),
	TP_printk("%u:%u type=%u from %u:%u pt=%u bits=%#llx rlen=%llu off=%llu mlen=%llu",
		  __entry->nid, __entry->pid, __entry->type, __entry->src_nid,
		  __entry->src_pid, __entry->pt_index, __entry->match_bits,
		  __entry->rlength, __entry->offset, __entry->mlength)
);

TRACE_EVENT(ptl_drop,
	TP_PROTO(u32 nid, u32 pid, const struct ptl_hdr *hdr, u32 reason),
	TP_ARGS(nid, pid, hdr, reason),
	TP_STRUCT__entry(
		__field(u32, nid)
		__field(u32, pid)
		__field(u32, type)
		__field(u32, src_nid)
		__field(u32, src_pid)
		__field(u32, pt_index)
		__field(u64, match_bits)
		__field(u64, length)
		__field(u32, reason)
	),
	TP_fast_assign(
		__entry->nid = nid;
		__entry->pid = pid;
		__entry->type = hdr->type;
		__entry->src_nid = hdr->src.nid;
		__entry->src_pid = hdr->src.pid;
		__entry->pt_index = hdr->pt_index;
		__entry->match_bits = hdr->match_bits;
		__entry->length = hdr->payload_length;
		__entry->reason = reason;
	),
	TP_printk("%u:%u type=%u from %u:%u pt=%u bits=%#llx len=%llu reason=%s",
		  __entry->nid, __entry->pid, __entry->type, __entry->src_nid,
		  __entry->src_pid, __entry->pt_index, __entry->match_bits,
		  __entry->length,
		  __print_symbolic(__entry->reason,
				   { PTLC_DROP_NONE, "none" },
				   { PTLC_DROP_WRONG_TARGET, "wrong_target" },
				   { PTLC_DROP_PT_INDEX, "pt_index" },
				   { PTLC_DROP_AC_INDEX, "ac_index" },
				   { PTLC_DROP_ACL, "acl" },
				   { PTLC_DROP_NO_MATCH, "no_match" },
				   { PTLC_DROP_STALE_MD, "stale_md" },
				   { PTLC_DROP_INACTIVE_MD, "inactive_md" },
				   { PTLC_DROP_REPLY_TOO_LONG, "reply_too_long" },
				   { PTLC_DROP_BAD_TYPE, "bad_type" }))
);

TRACE_EVENT(ptl_event_posted,
	TP_PROTO(u32 nid, u32 pid, u32 eq, u32 seq, u32 type),
	TP_ARGS(nid, pid, eq, seq, type),
	TP_STRUCT__entry(
		__field(u32, nid)
		__field(u32, pid)
		__field(u32, eq)
		__field(u32, seq)
		__field(u32, type)
	),
	TP_fast_assign(
		__entry->nid = nid;
		__entry->pid = pid;
		__entry->eq = eq;
		__entry->seq = seq;
		__entry->type = type;
	),
	TP_printk("%u:%u eq=%#x seq=%u type=%u", __entry->nid, __entry->pid,
		  __entry->eq, __entry->seq, __entry->type)
);

#endif /* PTL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ptl_trace
#include <trace/define_trace.h>
