// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Wire encoding of the Portals header (layout table in include/ptl/wire.h).
 *
 * Fields are written byte by byte, so the code is the same on any host
 * byte order and never makes an unaligned access. Decoding checks
 * everything that can be checked without an NI; values that index NI
 * tables (pt_index, ac_index, md_handle) are checked again where used.
 */
#include "ptl_wire.h"
#include <ptl/bytes.h>

/* Offsets of the fields in the wire header. */
enum {
	W_MAGIC = 0,
	W_VERSION = 4,
	W_TYPE = PTL_WIRE_OFF_TYPE,
	W_RESERVED = 6,
	W_DST_NID = 8,
	W_DST_PID = 12,
	W_SRC_NID = 16,
	W_SRC_PID = 20,
	W_SRC_UID = 24,
	W_SRC_JID = 28,
	W_MATCH_BITS = 32,
	W_RLENGTH = PTL_WIRE_OFF_RLENGTH,
	W_MLENGTH = 48,
	W_OFFSET = 56,
	W_RTN_OFFSET = 64,
	W_HDR_DATA = 72,
	W_PT_INDEX = 80,
	W_AC_INDEX = 84,
	W_MD_HANDLE = 88,
	W_MD_GEN = 92,
	W_END = 96,
};

u64 ptl_hdr_payload_length(const struct ptl_hdr *hdr)
{
	switch (hdr->type) {
	case PTL_MSG_PUT:
	case PTL_MSG_GETPUT:
		return hdr->rlength;
	case PTL_MSG_REPLY:
		return hdr->mlength;
	default:
		return 0;
	}
}

void ptl_hdr_encode(const struct ptl_hdr *hdr, u8 *buf)
{
	PTL_BUILD_BUG_ON(W_END != PTL_WIRE_HDR_LEN);

	put_le32(buf + W_MAGIC, PTL_WIRE_MAGIC);
	buf[W_VERSION] = PTL_WIRE_VERSION;
	buf[W_TYPE] = (u8)hdr->type;
	put_le16(buf + W_RESERVED, 0);
	put_le32(buf + W_DST_NID, hdr->dst.nid);
	put_le32(buf + W_DST_PID, hdr->dst.pid);
	put_le32(buf + W_SRC_NID, hdr->src.nid);
	put_le32(buf + W_SRC_PID, hdr->src.pid);
	put_le32(buf + W_SRC_UID, hdr->src_uid);
	put_le32(buf + W_SRC_JID, hdr->src_jid);
	put_le64(buf + W_MATCH_BITS, hdr->match_bits);
	put_le64(buf + W_RLENGTH, hdr->rlength);
	put_le64(buf + W_MLENGTH, hdr->mlength);
	put_le64(buf + W_OFFSET, hdr->offset);
	put_le64(buf + W_RTN_OFFSET, hdr->rtn_offset);
	put_le64(buf + W_HDR_DATA, hdr->hdr_data);
	put_le32(buf + W_PT_INDEX, hdr->pt_index);
	put_le32(buf + W_AC_INDEX, hdr->ac_index);
	put_le32(buf + W_MD_HANDLE, hdr->md_handle);
	put_le32(buf + W_MD_GEN, hdr->md_gen);
}

static bool type_known(u32 type)
{
	return type >= PTL_MSG_PUT && type <= PTL_MSG_GETPUT;
}

/* Lengths and offsets must stay below PTL_WIRE_MAX_LENGTH. */
static int check_lengths(const struct ptl_hdr *h)
{
	if (h->rlength > PTL_WIRE_MAX_LENGTH ||
	    h->mlength > PTL_WIRE_MAX_LENGTH ||
	    h->offset > PTL_WIRE_MAX_LENGTH ||
	    h->rtn_offset > PTL_WIRE_MAX_LENGTH)
		return PTL_WIRE_ELENGTH;
	/* An ack or reply never reports more than was asked for. */
	if ((h->type == PTL_MSG_ACK || h->type == PTL_MSG_REPLY) &&
	    h->mlength > h->rlength)
		return PTL_WIRE_ELENGTH;
	return PTL_WIRE_OK;
}

/* Fields that a type does not use must be zero, so they can grow later. */
static int check_unused_fields(const struct ptl_hdr *h)
{
	switch (h->type) {
	case PTL_MSG_PUT:
		if (h->mlength || h->rtn_offset)
			return PTL_WIRE_EFIELD;
		break;
	case PTL_MSG_GET:
		if (h->mlength || h->hdr_data)
			return PTL_WIRE_EFIELD;
		break;
	case PTL_MSG_GETPUT:
		if (h->mlength)
			return PTL_WIRE_EFIELD;
		break;
	case PTL_MSG_REPLY:
	case PTL_MSG_ACK:
		if (h->rtn_offset || h->hdr_data || h->ac_index)
			return PTL_WIRE_EFIELD;
		break;
	}
	return PTL_WIRE_OK;
}

int ptl_hdr_decode(const u8 *buf, size_t len, struct ptl_hdr *h)
{
	int err;

	if (len < PTL_WIRE_HDR_LEN)
		return PTL_WIRE_ESHORT;
	if (get_le32(buf + W_MAGIC) != PTL_WIRE_MAGIC)
		return PTL_WIRE_EMAGIC;
	if (buf[W_VERSION] != PTL_WIRE_VERSION)
		return PTL_WIRE_EVERSION;
	if (!type_known(buf[W_TYPE]))
		return PTL_WIRE_ETYPE;
	if (get_le16(buf + W_RESERVED) != 0)
		return PTL_WIRE_ERESERVED;

	h->type = buf[W_TYPE];
	h->dst.nid = get_le32(buf + W_DST_NID);
	h->dst.pid = get_le32(buf + W_DST_PID);
	h->src.nid = get_le32(buf + W_SRC_NID);
	h->src.pid = get_le32(buf + W_SRC_PID);
	h->src_uid = get_le32(buf + W_SRC_UID);
	h->src_jid = get_le32(buf + W_SRC_JID);
	h->match_bits = get_le64(buf + W_MATCH_BITS);
	h->rlength = get_le64(buf + W_RLENGTH);
	h->mlength = get_le64(buf + W_MLENGTH);
	h->offset = get_le64(buf + W_OFFSET);
	h->rtn_offset = get_le64(buf + W_RTN_OFFSET);
	h->hdr_data = get_le64(buf + W_HDR_DATA);
	h->pt_index = get_le32(buf + W_PT_INDEX);
	h->ac_index = get_le32(buf + W_AC_INDEX);
	h->md_handle = get_le32(buf + W_MD_HANDLE);
	h->md_gen = get_le32(buf + W_MD_GEN);

	err = check_lengths(h);
	if (err)
		return err;
	err = check_unused_fields(h);
	if (err)
		return err;
	h->payload_length = ptl_hdr_payload_length(h);
	return PTL_WIRE_OK;
}

u32 ptl_wire_src_uid(const u8 *buf)
{
	return get_le32(buf + W_SRC_UID);
}
