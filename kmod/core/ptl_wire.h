/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Portals message header: its host form (struct ptl_hdr) and its wire
 * encoding. Every transport (intra-node, rtscts) carries this header in
 * front of the payload.
 *
 * Wire layout, version 1: 96 bytes, every field little-endian, no padding.
 *
 *   off size field        meaning
 *     0   4  magic        0x334c5450 ("PTL3" as LE bytes 'P','T','L','3')
 *     4   1  version      1
 *     5   1  type         1 PUT, 2 GET, 3 REPLY, 4 ACK, 5 GETPUT
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
 * bytes for REPLY, nothing for GET and ACK (struct ptl_hdr.payload_length).
 */
#ifndef PTL_WIRE_H
#define PTL_WIRE_H

#include "ptl_platform.h"
#include <p3api/types.h>

#define PTL_WIRE_MAGIC		0x334c5450U
#define PTL_WIRE_VERSION	1
#define PTL_WIRE_HDR_LEN	96

/*
 * Largest length any header may carry. Portals lengths are 64-bit but no
 * MD can exceed the address space; capping at 2^48 keeps every sum of a
 * length and an offset far from overflow.
 */
#define PTL_WIRE_MAX_LENGTH	(1ULL << 48)

enum ptl_msg_type {
	PTL_MSG_PUT = 1,
	PTL_MSG_GET = 2,
	PTL_MSG_REPLY = 3,
	PTL_MSG_ACK = 4,
	PTL_MSG_GETPUT = 5,
};

/* Decoded header, host byte order. */
struct ptl_hdr {
	u32 type;			/* enum ptl_msg_type */
	ptl_process_id_t dst;
	ptl_process_id_t src;
	ptl_uid_t src_uid;
	ptl_jid_t src_jid;
	ptl_match_bits_t match_bits;
	u64 rlength;
	u64 mlength;
	u64 offset;
	u64 rtn_offset;
	ptl_hdr_data_t hdr_data;
	ptl_pt_index_t pt_index;
	ptl_ac_index_t ac_index;
	ptl_handle_md_t md_handle;
	u32 md_gen;
	u64 payload_length;		/* derived: bytes after the header */
};

/* Distinct reasons for ptl_hdr_decode() to refuse a header. */
enum ptl_wire_err {
	PTL_WIRE_OK = 0,
	PTL_WIRE_ESHORT = -1,		/* fewer than PTL_WIRE_HDR_LEN bytes */
	PTL_WIRE_EMAGIC = -2,
	PTL_WIRE_EVERSION = -3,
	PTL_WIRE_ETYPE = -4,
	PTL_WIRE_ERESERVED = -5,	/* reserved bits set */
	PTL_WIRE_ELENGTH = -6,		/* length/offset out of range */
	PTL_WIRE_EFIELD = -7,		/* field not allowed for the type */
};

/* Encodes hdr into buf[PTL_WIRE_HDR_LEN]. hdr must be well formed. */
void ptl_hdr_encode(const struct ptl_hdr *hdr, u8 *buf);
/* Decodes len bytes at buf; PTL_WIRE_OK or a negative ptl_wire_err. */
int ptl_hdr_decode(const u8 *buf, size_t len, struct ptl_hdr *hdr);
/* Payload bytes that follow a header of this type. */
u64 ptl_hdr_payload_length(const struct ptl_hdr *hdr);

#endif /* PTL_WIRE_H */
