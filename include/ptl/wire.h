/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Portals message header on the wire: what a transport knows of it.
 *
 * A transport carries this header in front of each message's payload
 * (ptl_msg_hdr() gives it, ptl_rx_start() takes it) and otherwise treats it
 * as opaque bytes: ptl.ko encodes and checks it (kmod/core/ptl_wire.c).
 * A transport may use the length and the type below, for instance to check
 * that a frame of its own carries the message it must (an RDMA read
 * request carries a GET); for anything else it asks ptl.ko
 * (ptl_msg_src_uid(), ptl_msg_is_response(), include/ptl/transport.h).
 *
 * Layout, version 1: 96 bytes, every field little-endian, no padding.
 *
 *   off size field        meaning
 *     0   4  magic        0x334c5450 ("PTL3" as LE bytes 'P','T','L','3')
 *     4   1  version      1
 *     5   1  type         enum ptl_msg_type
 *     6   2  reserved     must be 0
 *     8   4  dst_nid      target process
 *    12   4  dst_pid
 *    16   4  src_nid      process that sends this header
 *    20   4  src_pid
 *    24   4  src_uid      filled by the sending kernel, not the user
 *    28   4  src_jid
 *    32   8  match_bits   PUT/GET/GETPUT: as sent; ACK/REPLY: echoed
 *    40   8  rlength      PUT/GETPUT: payload bytes; GET: bytes wanted;
 *                         ACK/REPLY: the length the request asked for
 *    48   8  mlength      ACK: bytes the target accepted; REPLY: payload
 *                         bytes; others 0
 *    56   8  offset       PUT/GET/GETPUT: remote offset; ACK: echoed;
 *                         REPLY: the initiator's return offset
 *    64   8  rtn_offset   GET/GETPUT: where the reply lands; others 0
 *    72   8  hdr_data     PUT/GETPUT: user data; others 0
 *    80   4  pt_index     PUT/GET/GETPUT: portal; ACK/REPLY: echoed
 *    84   4  ac_index     PUT/GET/GETPUT: access-control entry; others 0
 *    88   4  md_handle    PUT: MD to ack or PTL_HANDLE_NONE (no ack);
 *                         GET/GETPUT: MD for the reply; ACK/REPLY: the
 *                         initiator MD addressed
 *    92   4  md_gen       full 32-bit generation of that MD
 *
 * The payload that follows is rlength bytes for PUT and GETPUT, mlength
 * bytes for REPLY, nothing for GET and ACK.
 */
#ifndef PTL_WIRE_PUBLIC_H
#define PTL_WIRE_PUBLIC_H

#include <ptl/bytes.h>
#include <ptl/portable.h>

#define PTL_WIRE_MAGIC		0x334c5450U
#define PTL_WIRE_VERSION	1
#define PTL_WIRE_HDR_LEN	96
/* Offsets of the type byte and of rlength (u64). */
#define PTL_WIRE_OFF_TYPE	5
#define PTL_WIRE_OFF_RLENGTH	40

/*
 * Largest length any header may carry, and so the end of any payload
 * offset. Portals lengths are 64-bit but no MD can exceed the address
 * space; capping at 2^48 keeps every sum of a length and an offset far
 * from overflow.
 */
#define PTL_WIRE_MAX_LENGTH	(1ULL << 48)

enum ptl_msg_type {
	PTL_MSG_PUT = 1,
	PTL_MSG_GET = 2,
	PTL_MSG_REPLY = 3,
	PTL_MSG_ACK = 4,
	PTL_MSG_GETPUT = 5,
};

/* The type of the encoded header @hdr (PTL_WIRE_HDR_LEN bytes), unchecked. */
static inline u8 ptl_wire_type(const u8 *hdr)
{
	return hdr[PTL_WIRE_OFF_TYPE];
}

/* Its rlength (an ACK's: the length of the put it answers), unchecked. */
static inline u64 ptl_wire_rlength(const u8 *hdr)
{
	return get_le64(hdr + PTL_WIRE_OFF_RLENGTH);
}

#endif /* PTL_WIRE_PUBLIC_H */
