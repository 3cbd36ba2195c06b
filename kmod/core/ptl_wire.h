/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Portals message header: its host form (struct ptl_hdr) and its
 * codec. The wire layout, its limits and the message types are the
 * transports' contract too: include/ptl/wire.h.
 */
#ifndef PTL_WIRE_H
#define PTL_WIRE_H

#include "ptl_platform.h"
#include <p3api/types.h>
#include <ptl/wire.h>

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
/* The src_uid of an encoded header (one that ptl_hdr_encode() wrote). */
u32 ptl_wire_src_uid(const u8 *buf);

#endif /* PTL_WIRE_H */
