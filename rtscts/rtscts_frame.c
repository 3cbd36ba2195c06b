// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Encoding and validation of RTS/CTS frame headers (layout in
 * rtscts_frame.h). Nothing here trusts the frame: every length is checked
 * against what the buffer holds before anything past it is read.
 */
#include "rtscts_frame.h"
#include <ptl/bytes.h>

enum {
	F_VERSION = 0,
	F_TYPE = 1,
	F_FLAGS = 2,
	F_FRAME_LEN = 4,
	F_CSUM_LEN = 6,
	F_CRC = 8,
	F_SRC_NID = 12,
	F_DST_NID = 16,
	F_SRC_INC = 20,
	F_DST_INC = 24,
	F_STREAM = 28,
	F_SEQ = 32,
	F_ACK_STREAM = 36,
	F_ACK = 40,
	F_WINDOW = 44,
	F_PCSUM = RTSCTS_PCSUM_OFF,
	F_SACK = 48,
	F_GRANT = 56,
	F_RIDERS = 60,
	F_RESERVED = 61,	/* 3 bytes */
	/* type headers, at RTSCTS_HDR_LEN */
	T_MSG_ID = 64,
	T_WORD = 68,		/* reserved, the CTS status, or MSG's and DATA's: */
	T_SEG_SIZE = 68,	/* u16 */
	T_SEGS = 70,		/* u8, then a reserved byte */
	T_LONG = 72,		/* CTS length, DATA offset */
	T_RESET_STREAM = 64,
	T_RESET_RESERVED = 68,
	T_NONCE = 64,
};

u16 rtscts_hdr_len(u8 type)
{
	switch (type) {
	case RTSCTS_MSG:
	case RTSCTS_RTS:
		return RTSCTS_MSG_HDR_LEN;
	case RTSCTS_CTS:
		return RTSCTS_CTS_HDR_LEN;
	case RTSCTS_DATA:
		return RTSCTS_DATA_HDR_LEN;
	case RTSCTS_ACK:
		return RTSCTS_HDR_LEN;
	case RTSCTS_RESET:
		return RTSCTS_RESET_HDR_LEN;
	case RTSCTS_CHALLENGE:
	case RTSCTS_CHALLENGE_ACK:
		return RTSCTS_CHALLENGE_HDR_LEN;
	default:
		return 0;
	}
}

u32 rtscts_frame_hdr_len(const u8 *buf)
{
	u16 len = rtscts_hdr_len(buf[F_TYPE]);
	u8 riders = buf[F_RIDERS];

	/* Too many is refused by the decoder: nothing to pull for them. */
	if (!len || riders > RTSCTS_MAX_RIDERS)
		return len;
	return len + riders * RTSCTS_RIDER_LEN;
}

/* What a frame of @type leaves of @mtu after its headers and tag. */
static u32 room_after_headers(u32 mtu, u8 type, bool auth)
{
	u32 room;

	if (mtu > RTSCTS_MAX_FRAME)
		mtu = RTSCTS_MAX_FRAME;
	if (check_sub_overflow(mtu, (u32)rtscts_hdr_len(type), &room) ||
	    check_sub_overflow(room, auth ? (u32)RTSCTS_AUTH_TAG_LEN : 0U,
			       &room))
		return 0;
	return room;
}

u32 rtscts_frame_room(u32 mtu, u8 type, bool auth)
{
	if (type != RTSCTS_MSG && type != RTSCTS_DATA)
		return 0;
	return room_after_headers(mtu, type, auth);
}

u32 rtscts_rider_room(u32 mtu, u8 type, bool auth, u32 payload)
{
	u32 room;

	if (!rtscts_type_reliable(type) ||
	    check_sub_overflow(room_after_headers(mtu, type, auth), payload,
			       &room))
		return 0;
	room /= RTSCTS_RIDER_LEN;
	return room < RTSCTS_MAX_RIDERS ? room : RTSCTS_MAX_RIDERS;
}

bool rtscts_type_reliable(u8 type)
{
	return type >= RTSCTS_MSG && type <= RTSCTS_DATA;
}

static void decode_common(const u8 *b, struct rtscts_frame *f)
{
	f->type = b[F_TYPE];
	f->flags = get_le16(b + F_FLAGS);
	f->frame_len = get_le16(b + F_FRAME_LEN);
	f->csum_len = get_le16(b + F_CSUM_LEN);
	f->crc = get_le32(b + F_CRC);
	f->src_nid = get_le32(b + F_SRC_NID);
	f->dst_nid = get_le32(b + F_DST_NID);
	f->src_inc = get_le32(b + F_SRC_INC);
	f->dst_inc = get_le32(b + F_DST_INC);
	f->stream = get_le32(b + F_STREAM);
	f->seq = get_le32(b + F_SEQ);
	f->ack_stream = get_le32(b + F_ACK_STREAM);
	f->ack = get_le32(b + F_ACK);
	f->window = get_le16(b + F_WINDOW);
	f->pcsum = get_le16(b + F_PCSUM);
	f->sack = get_le64(b + F_SACK);
	f->grant = get_le32(b + F_GRANT);
	f->riders = b[F_RIDERS];
}

/* The type header; false if a reserved word is set. */
static bool decode_type(const u8 *b, struct rtscts_frame *f)
{
	switch (f->type) {
	case RTSCTS_MSG:
	case RTSCTS_DATA:
		f->msg_id = get_le32(b + T_MSG_ID);
		f->seg_size = get_le16(b + T_SEG_SIZE);
		f->segs = b[T_SEGS];
		if (f->type == RTSCTS_DATA)
			f->offset = get_le64(b + T_LONG);
		return !b[T_SEGS + 1];
	case RTSCTS_RTS:
		f->msg_id = get_le32(b + T_MSG_ID);
		return !get_le32(b + T_WORD);
	case RTSCTS_CTS:
		f->msg_id = get_le32(b + T_MSG_ID);
		f->status = get_le32(b + T_WORD);
		f->length = get_le64(b + T_LONG);
		return true;
	case RTSCTS_RESET:
		f->reset_stream = get_le32(b + T_RESET_STREAM);
		return !get_le32(b + T_RESET_RESERVED);
	case RTSCTS_CHALLENGE:
	case RTSCTS_CHALLENGE_ACK:
		f->nonce = get_le64(b + T_NONCE);
		return true;
	default:
		return true;
	}
}

/*
 * A large frame's segs and seg_size: the payload fills all its segments
 * but the last, at least a byte of which it leaves. A single frame has
 * both 0.
 */
static int check_segs(const struct rtscts_frame *f)
{
	u32 full;

	if (!f->segs)
		return f->seg_size ? RTSCTS_FRAME_EFIELD : RTSCTS_FRAME_OK;
	if (f->segs < 2 || f->segs > RTSCTS_MAX_SEGS || !f->seg_size ||
	    f->riders || f->tag_len || f->pcsum)
		return RTSCTS_FRAME_EFIELD;
	/* At most 64 x 65535: no overflow of a u32. */
	full = (u32)(f->segs - 1) * f->seg_size;
	if (f->payload_len <= full || f->payload_len - full > f->seg_size)
		return RTSCTS_FRAME_EFIELD;
	return RTSCTS_FRAME_OK;
}

/* What a header's fields may hold for its type. */
static int check_fields(const struct rtscts_frame *f)
{
	bool reliable = rtscts_type_reliable(f->type);

	if (!f->src_nid || f->src_nid == 0xffffffffU ||
	    !f->dst_nid || f->dst_nid == 0xffffffffU || !f->src_inc)
		return RTSCTS_FRAME_ENID;
	if (reliable && !f->stream)
		return RTSCTS_FRAME_EFIELD;
	if (!reliable && (f->seq || (f->flags & RTSCTS_F_SYN)))
		return RTSCTS_FRAME_EFIELD;
	if (!reliable && f->type != RTSCTS_RESET && f->stream)
		return RTSCTS_FRAME_EFIELD;
	if (f->type == RTSCTS_RESET && (f->stream || !f->reset_stream))
		return RTSCTS_FRAME_EFIELD;
	if (!f->ack_stream && (f->ack || f->sack || f->grant))
		return RTSCTS_FRAME_EFIELD;
	if (f->riders && !reliable)
		return RTSCTS_FRAME_EFIELD;
	switch (f->type) {
	case RTSCTS_RTS:
	case RTSCTS_CTS:
		if (f->payload_len)
			return RTSCTS_FRAME_ELENGTH;
		if (f->type == RTSCTS_CTS &&
		    (f->status > RTSCTS_CTS_DROP ||
		     f->length > RTSCTS_MAX_OFFSET ||
		     (f->status == RTSCTS_CTS_DROP && f->length)))
			return RTSCTS_FRAME_EFIELD;
		break;
	case RTSCTS_MSG:
		return check_segs(f);
	case RTSCTS_DATA:
		if (!f->payload_len ||
		    f->offset > RTSCTS_MAX_OFFSET - f->payload_len)
			return RTSCTS_FRAME_EFIELD;
		return check_segs(f);
	case RTSCTS_CHALLENGE:
	case RTSCTS_CHALLENGE_ACK:
		if (!f->nonce)
			return RTSCTS_FRAME_EFIELD;
		fallthrough;
	case RTSCTS_ACK:
	case RTSCTS_RESET:
		if (f->payload_len)
			return RTSCTS_FRAME_ELENGTH;
		break;
	}
	return RTSCTS_FRAME_OK;
}

int rtscts_frame_decode(const u8 *buf, size_t avail, size_t wire_len,
			struct rtscts_frame *f)
{
	size_t end;

	memset(f, 0, sizeof(*f));
	if (avail < RTSCTS_HDR_LEN || wire_len < avail)
		return RTSCTS_FRAME_ESHORT;
	if (buf[F_VERSION] != RTSCTS_VERSION)
		return RTSCTS_FRAME_EVERSION;
	decode_common(buf, f);
	f->riders_off = rtscts_hdr_len(f->type);
	if (!f->riders_off)
		return RTSCTS_FRAME_ETYPE;
	if (f->flags & ~RTSCTS_F_ALL)
		return RTSCTS_FRAME_EFLAGS;
	if (f->riders > RTSCTS_MAX_RIDERS)
		return RTSCTS_FRAME_EFIELD;
	/* At most 8 x 96 bytes more: no overflow of a u16. */
	f->hdr_len = f->riders_off + f->riders * RTSCTS_RIDER_LEN;
	if (f->flags & RTSCTS_F_AUTH)
		f->tag_len = RTSCTS_AUTH_TAG_LEN;
	/* The tag, if any, lies after frame_len: both within the frame. */
	if (f->frame_len < f->hdr_len ||
	    check_add_overflow((size_t)f->frame_len, (size_t)f->tag_len,
			       &end) || end > wire_len ||
	    f->csum_len < f->hdr_len || f->csum_len > f->frame_len)
		return RTSCTS_FRAME_ELENGTH;
	/* Nothing beyond the crc: nothing for pcsum to cover. */
	if (f->csum_len == f->frame_len && f->pcsum)
		return RTSCTS_FRAME_ERESERVED;
	/* The tag replaces both checksums. */
	if (f->tag_len && (f->crc || f->pcsum))
		return RTSCTS_FRAME_ERESERVED;
	if (avail < f->hdr_len)
		return RTSCTS_FRAME_ESHORT;
	if (buf[F_RESERVED] || get_le16(buf + F_RESERVED + 1) ||
	    !decode_type(buf, f))
		return RTSCTS_FRAME_ERESERVED;
	f->payload_len = f->frame_len - f->hdr_len;
	return check_fields(f);
}

void rtscts_frame_encode(const struct rtscts_frame *f, u8 *b)
{
	u16 len = rtscts_hdr_len(f->type);

	if (!len)
		return;		/* an unknown type has no encoding */
	/* The Portals header of MSG and RTS is the caller's. */
	if (f->type == RTSCTS_MSG || f->type == RTSCTS_RTS)
		len -= PTL_WIRE_HDR_LEN;
	memset(b, 0, len);
	b[F_VERSION] = RTSCTS_VERSION;
	b[F_TYPE] = f->type;
	put_le16(b + F_FLAGS, f->flags);
	put_le16(b + F_FRAME_LEN, f->frame_len);
	put_le16(b + F_CSUM_LEN, f->csum_len);
	put_le32(b + F_SRC_NID, f->src_nid);
	put_le32(b + F_DST_NID, f->dst_nid);
	put_le32(b + F_SRC_INC, f->src_inc);
	put_le32(b + F_DST_INC, f->dst_inc);
	put_le32(b + F_STREAM, f->stream);
	put_le32(b + F_SEQ, f->seq);
	put_le32(b + F_ACK_STREAM, f->ack_stream);
	put_le32(b + F_ACK, f->ack);
	put_le16(b + F_WINDOW, f->window);
	put_le16(b + F_PCSUM, f->pcsum);
	put_le64(b + F_SACK, f->sack);
	put_le32(b + F_GRANT, f->grant);
	b[F_RIDERS] = f->riders;
	switch (f->type) {
	case RTSCTS_MSG:
	case RTSCTS_DATA:
		put_le32(b + T_MSG_ID, f->msg_id);
		put_le16(b + T_SEG_SIZE, f->seg_size);
		b[T_SEGS] = f->segs;
		if (f->type == RTSCTS_DATA)
			put_le64(b + T_LONG, f->offset);
		break;
	case RTSCTS_RTS:
		put_le32(b + T_MSG_ID, f->msg_id);
		break;
	case RTSCTS_CTS:
		put_le32(b + T_MSG_ID, f->msg_id);
		put_le32(b + T_WORD, f->status);
		put_le64(b + T_LONG, f->length);
		break;
	case RTSCTS_RESET:
		put_le32(b + T_RESET_STREAM, f->reset_stream);
		break;
	case RTSCTS_CHALLENGE:
	case RTSCTS_CHALLENGE_ACK:
		put_le64(b + T_NONCE, f->nonce);
		break;
	}
}

/*
 * Past its first segment a large MSG is the rest of its message: DATA of
 * the same msg_id (MSG's offset is 0). Only the type and the headers'
 * length change; the caller moves offset and sequence.
 */
static void msg_rest_as_data(struct rtscts_frame *f)
{
	if (f->type != RTSCTS_MSG)
		return;
	f->type = RTSCTS_DATA;
	f->hdr_len = RTSCTS_DATA_HDR_LEN;
	f->riders_off = RTSCTS_DATA_HDR_LEN;
}

void rtscts_frame_segment(const struct rtscts_frame *lf, u32 i,
			  struct rtscts_frame *seg)
{
	u32 start = i * lf->seg_size, left = lf->payload_len - start;

	*seg = *lf;
	seg->segs = 0;
	seg->seg_size = 0;
	if (i)
		msg_rest_as_data(seg);
	seg->seq = lf->seq + i;
	seg->offset = lf->offset + start;
	seg->payload_len = left < lf->seg_size ? left : lf->seg_size;
	seg->frame_len = seg->hdr_len + seg->payload_len;
	seg->csum_len = seg->hdr_len;
	seg->pcsum = 0;
	if (i + 1 < lf->segs)
		seg->flags &= ~RTSCTS_F_ACK_REQ;
}

void rtscts_frame_skip_segs(struct rtscts_frame *f, u32 skip)
{
	u32 bytes = skip * f->seg_size;
	u16 payload_at = f->hdr_len;

	if (!skip || skip >= f->segs)
		return;
	msg_rest_as_data(f);
	f->seq += skip;
	f->offset += bytes;
	f->hdr_len = payload_at + bytes;
	f->payload_len -= bytes;
	f->segs -= skip;
	if (f->segs == 1) {
		f->segs = 0;
		f->seg_size = 0;
	}
}

void rtscts_frame_set_crc(u8 *buf, u32 crc)
{
	put_le32(buf + F_CRC, crc);
}

/*
 * Two passes, not four: the bytes up to the end of pcsum from a copy with
 * the crc and pcsum fields zeroed, then the rest. Each pass is a call
 * through the crypto API in the module, which costs more than the few
 * bytes it covers.
 */
u32 rtscts_frame_crc(const u8 *buf, u16 len,
		     u32 (*crc32c)(u32 seed, const u8 *p, size_t n))
{
	u8 head[F_PCSUM + 2];
	u32 crc;

	if (len < RTSCTS_HDR_LEN)
		return 0;
	memcpy(head, buf, F_PCSUM);
	memset(head + F_CRC, 0, 4);
	memset(head + F_PCSUM, 0, 2);
	crc = crc32c(~0U, head, sizeof(head));
	crc = crc32c(crc, buf + sizeof(head), len - sizeof(head));
	return ~crc;
}

u32 rtscts_frame_crc_unsealed(const u8 *buf, u16 len,
			      u32 (*crc32c)(u32 seed, const u8 *p, size_t n))
{
	if (len < RTSCTS_HDR_LEN)
		return 0;
	return ~crc32c(~0U, buf, len);
}
