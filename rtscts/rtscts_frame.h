/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The frames of the RTS/CTS transport: layout, limits and codec.
 * Documentation/wire-protocol.md is the specification; this header is its
 * single source in code. OS-independent C (include/ptl/portable.h), so
 * that the parser is also fuzzed in user space.
 *
 * A frame is an Ethernet frame of the transport's ethertype (default
 * 0x88B5) whose payload starts with this 64-byte header, every field
 * little-endian:
 *
 *   off size field       meaning
 *     0   1  version     RTSCTS_VERSION (5)
 *     1   1  type        enum rtscts_type
 *     2   2  flags       RTSCTS_F_*
 *     4   2  frame_len   bytes from offset 0 to the end of the payload
 *                        (Ethernet padding excluded)
 *     6   2  csum_len    bytes from offset 0 covered by crc (>= the
 *                        headers of the type, <= frame_len)
 *     8   4  crc         CRC32C (Castagnoli, reflected, init ~0, final
 *                        xor ~0) of bytes [0, csum_len), this field and
 *                        pcsum as 0
 *    12   4  src_nid     sending node
 *    16   4  dst_nid     receiving node
 *    20   4  src_inc     sender's incarnation (when its interface was bound)
 *    24   4  dst_inc     receiver's incarnation as the sender knows it, 0
 *                        if it has never heard from the receiver
 *    28   4  stream      sender's stream to this receiver (reliable
 *                        frames; 0 in ACK and RESET)
 *    32   4  seq         position of a reliable frame in its stream
 *    36   4  ack_stream  the receiver's stream the ack fields are about,
 *                        0 if none
 *    40   4  ack         next sequence expected in ack_stream (cumulative)
 *    44   2  window      frames the sender of this frame accepts beyond ack
 *    46   2  pcsum       Internet checksum (RFC 1071) of bytes
 *                        [46, frame_len), this field and every byte after
 *                        it: stored so that the range sums to 0xffff
 *                        (csum_fold() of its sum is 0). Present when
 *                        payload lies outside the crc (csum_len <
 *                        frame_len: sent from pages), else 0. The crc
 *                        counts it as 0, so that the sending host's
 *                        device may fill it in after the crc is sealed
 *                        (CHECKSUM_PARTIAL)
 *    48   8  sack        bit i set: sequence ack + 1 + i has arrived
 *    56   4  grant       requests the receiver of this frame may have sent
 *                        on ack_stream before it waits (cumulative, mod
 *                        2^32, from the stream's start); 0 without ack_stream
 *    60   1  riders      responses carried after the type header (reliable
 *                        types only, at most RTSCTS_MAX_RIDERS)
 *    61   3  reserved    0
 *
 * Type headers follow at offset 64:
 *   MSG   msg_id u32, seg_size u16, segs u8, reserved u8 (0), Portals
 *         header (96 bytes), then the first bytes of the message's
 *         payload (eager). segs and seg_size as DATA's
 *   RTS   msg_id u32, reserved u32 (0), Portals header (96 bytes)
 *   CTS   msg_id u32 (the RTS's), status u32 (RTSCTS_CTS_*), length u64
 *         (payload bytes the target accepts)
 *   DATA  msg_id u32, seg_size u16, segs u8, reserved u8 (0), offset
 *         u64, then payload bytes [offset, offset + n) of the message
 *         (offset + n <= 2^48). segs 0 (and seg_size 0): one frame. segs
 *         from 2 to RTSCTS_MAX_SEGS: a large frame (below)
 *   ACK   nothing: acknowledges (ack fields) or, with RTSCTS_F_ACK_REQ,
 *         asks for an ACK (a liveness probe)
 *   RESET stream u32 (the receiver's stream this node has no state for),
 *         reserved u32 (0)
 *   CHALLENGE  nonce u64 (nonzero): "which incarnation are you?", sent to
 *         the link-layer address a peer is known at when a frame claims
 *         that it restarted; dst_inc 0
 *   CHALLENGE_ACK  nonce u64: the answer, echoing the challenge's nonce,
 *         from the answering node's current incarnation
 * MSG, RTS, CTS and DATA are reliable: sequenced, acknowledged, sent again
 * until acknowledged. ACK, RESET, CHALLENGE and CHALLENGE_ACK are not.
 *
 * Riders: a reliable frame may carry, right after its type header and
 * before its payload, `riders` Portals headers (96 bytes each) of
 * responses without payload (a Portals ACK, a REPLY of 0 bytes) to the
 * same node. Each is delivered as if it had come in a frame of its own,
 * before the frame's own message, and is acknowledged with the frame.
 * They count in the frame's headers (hdr_len), so the crc or tag covers
 * them.
 *
 * Large frames: a DATA frame with segs >= 2 stands for the segs DATA
 * frames a sender would have sent on a link whose frames carry seg_size
 * bytes of payload: sequences seq .. seq + segs - 1, segment i carrying
 * payload bytes [i * seg_size, min((i + 1) * seg_size, n)) at message
 * offset (offset + i * seg_size), each with this frame's fields but segs and
 * seg_size 0, and RTSCTS_F_ACK_REQ on the last only. Its payload is more
 * than (segs - 1) * seg_size bytes and at most segs * seg_size; it
 * carries no riders and no tag. A large MSG is the same with segment 0 a
 * MSG (its Portals header, the first seg_size bytes) and segments 1 on
 * DATA frames of its msg_id, offset i * seg_size, and DATA's shorter
 * headers. A large frame never crosses a wire: the sending
 * host's stack cuts it into those frames (rtscts/gso.c) where a device
 * cannot carry it whole, and a receiver on the same host takes it whole
 * or, out of order, cut the same way. So a node of this version takes
 * the frames of any other node of version 5 and sends it none it would
 * refuse.
 *
 * Authenticated frames (flag RTSCTS_F_AUTH, on interfaces bound with a
 * key) carry a RTSCTS_AUTH_TAG_LEN-byte tag right after frame_len: the
 * first 16 bytes of HMAC-SHA256(key, bytes [0, frame_len)). Their crc and
 * pcsum are 0: the tag covers every byte, headers and payload.
 */
#ifndef RTSCTS_FRAME_H
#define RTSCTS_FRAME_H

#include <ptl/portable.h>
#include <ptl/wire.h>

/*
 * 5: large frames (DATA segs, seg_size). 4: responses without payload ride
 * on reliable frames (riders). 3: pcsum
 * covers bytes from its own field on, and the crc leaves it out (a device
 * may compute it). 2 added grant; 1 is the first.
 */
#define RTSCTS_VERSION		5
#define RTSCTS_HDR_LEN		64
#define RTSCTS_MSG_HDR_LEN	(RTSCTS_HDR_LEN + 8 + PTL_WIRE_HDR_LEN)
#define RTSCTS_CTS_HDR_LEN	(RTSCTS_HDR_LEN + 16)
#define RTSCTS_DATA_HDR_LEN	(RTSCTS_HDR_LEN + 16)
#define RTSCTS_RESET_HDR_LEN	(RTSCTS_HDR_LEN + 8)
#define RTSCTS_CHALLENGE_HDR_LEN (RTSCTS_HDR_LEN + 8)
#define RTSCTS_MAX_FRAME	65535	/* frame_len is 16 bits */
/* Responses one frame carries besides its own message. */
#define RTSCTS_MAX_RIDERS	8
#define RTSCTS_RIDER_LEN	PTL_WIRE_HDR_LEN
/* Frames one large frame stands for, at most. */
#define RTSCTS_MAX_SEGS		64
/* The tag after an authenticated frame: HMAC-SHA256 truncated to 128 bits. */
#define RTSCTS_AUTH_TAG_LEN	16
/* Smallest frame a link must carry: a MSG with a byte of payload ... */
#define RTSCTS_MIN_MTU		(RTSCTS_MSG_HDR_LEN + 1)
/* ... and its tag, on an authenticated interface. */
#define RTSCTS_MIN_MTU_AUTH	(RTSCTS_MIN_MTU + RTSCTS_AUTH_TAG_LEN)
/*
 * Largest eager_max: an eager message goes whole before the target has
 * said it takes any of it, and above this RTS/CTS's one round trip costs
 * little. Also keeps every eager length far from a u32's end.
 */
#define RTSCTS_MAX_EAGER	(1U << 20)
/* Payload offsets are below this: no message is longer. */
#define RTSCTS_MAX_OFFSET	PTL_WIRE_MAX_LENGTH

enum rtscts_type {
	RTSCTS_MSG = 1,
	RTSCTS_RTS = 2,
	RTSCTS_CTS = 3,
	RTSCTS_DATA = 4,
	RTSCTS_ACK = 5,
	RTSCTS_RESET = 6,
	RTSCTS_CHALLENGE = 7,
	RTSCTS_CHALLENGE_ACK = 8,
};

/* Acknowledge this frame at once (the last frame of a message, probes). */
#define RTSCTS_F_ACK_REQ	0x0001
/* The stream has not been acknowledged yet: it starts at sequence 0. */
#define RTSCTS_F_SYN		0x0002
/* A tag follows frame_len; crc and pcsum are 0 (rtscts/auth.c). */
#define RTSCTS_F_AUTH		0x0004
#define RTSCTS_F_ALL		(RTSCTS_F_ACK_REQ | RTSCTS_F_SYN | RTSCTS_F_AUTH)

#define RTSCTS_CTS_ACCEPT	0	/* send `length` bytes */
#define RTSCTS_CTS_DROP		1	/* the target dropped it: send nothing */

/* A decoded frame header (host order). */
struct rtscts_frame {
	u8 type;
	u16 flags;
	u16 frame_len;
	u16 csum_len;
	u32 crc;
	u32 src_nid;
	u32 dst_nid;
	u32 src_inc;
	u32 dst_inc;
	u32 stream;
	u32 seq;
	u32 ack_stream;
	u32 ack;
	u16 window;
	u16 pcsum;
	u64 sack;
	u32 grant;
	u8 riders;
	/* type header */
	u32 msg_id;		/* MSG, RTS, CTS, DATA */
	u32 status;		/* CTS */
	u64 length;		/* CTS */
	u64 offset;		/* DATA */
	u16 seg_size;		/* MSG, DATA: a large frame's payload per segment */
	u8 segs;		/* MSG, DATA: frames a large frame stands for, or 0 */
	u32 reset_stream;	/* RESET */
	u64 nonce;		/* CHALLENGE, CHALLENGE_ACK */
	/*
	 * Bytes of headers, riders included: the Portals header of MSG and
	 * RTS starts at RTSCTS_PTL_HDR_OFF, the riders at riders_off, the
	 * payload of MSG and DATA at hdr_len.
	 */
	u16 hdr_len;
	u16 riders_off;		/* the type's headers: where riders start */
	u16 payload_len;	/* frame_len - hdr_len */
	u16 tag_len;		/* after frame_len: RTSCTS_AUTH_TAG_LEN or 0 */
};

/* Distinct reasons to refuse a frame, for counters and tracing. */
enum rtscts_frame_err {
	RTSCTS_FRAME_OK = 0,
	RTSCTS_FRAME_ESHORT = -1,	/* fewer bytes than the headers */
	RTSCTS_FRAME_EVERSION = -2,
	RTSCTS_FRAME_ETYPE = -3,
	RTSCTS_FRAME_EFLAGS = -4,
	RTSCTS_FRAME_ELENGTH = -5,	/* frame_len/csum_len inconsistent */
	RTSCTS_FRAME_ERESERVED = -6,
	RTSCTS_FRAME_EFIELD = -7,	/* a field wrong for the type */
	RTSCTS_FRAME_ENID = -8,		/* a wildcard or zero nid */
	/*
	 * Not the codec's: a tag missing (the interface has a key), present
	 * (it has none) or wrong. Counted apart (auth_failed).
	 */
	RTSCTS_FRAME_EAUTH = -9,
};

/* Where the Portals header of a MSG or RTS is. */
#define RTSCTS_PTL_HDR_OFF	(RTSCTS_HDR_LEN + 8)

/* Headers of a frame of @type, without riders (0 for an unknown type). */
u16 rtscts_hdr_len(u8 type);
/*
 * Headers of the frame whose first RTSCTS_HDR_LEN bytes are at @buf, its
 * riders included: what a receiver makes contiguous before decoding. 0
 * for an unknown type; a count of riders the decoder refuses adds none.
 */
u32 rtscts_frame_hdr_len(const u8 *buf);
/*
 * Payload bytes one frame of @type carries on a link of @mtu bytes (capped
 * at RTSCTS_MAX_FRAME), with a tag after it if @auth: 0 when its headers
 * (and tag) do not fit, or for a type that carries no payload. The one
 * place frame room is computed.
 */
u32 rtscts_frame_room(u32 mtu, u8 type, bool auth);
/*
 * Riders a frame of @type carrying @payload bytes has room for on such a
 * link, at most RTSCTS_MAX_RIDERS: 0 for a type that carries none, or
 * when the payload leaves no room.
 */
u32 rtscts_rider_room(u32 mtu, u8 type, bool auth, u32 payload);
/*
 * The headers of segment @i (below lf->segs) of the large frame @lf,
 * decoded: @lf's fields with the segment's sequence, offset and lengths,
 * segs and seg_size 0, RTSCTS_F_ACK_REQ on the last segment only, and
 * csum_len the headers' (its payload lies outside the crc). Past segment
 * 0 of a large MSG: a DATA frame, whose headers (hdr_len) are shorter.
 */
void rtscts_frame_segment(const struct rtscts_frame *lf, u32 i,
			  struct rtscts_frame *seg);
/*
 * @f (decoded) seen from its segment @skip on, as if the segments before
 * it had not been sent: sequence, offset, and where its payload starts
 * (hdr_len) and how long it is. A large frame of which one segment is
 * left is a single frame (segs 0); a large MSG seen past its first
 * segment is DATA.
 */
void rtscts_frame_skip_segs(struct rtscts_frame *f, u32 skip);

/* Sequence numbers @f takes: its segments if a large frame, else 1. */
static inline u32 rtscts_frame_seqs(const struct rtscts_frame *f)
{
	return f->segs ? f->segs : 1;
}

/* True for the reliable (sequenced) types. */
bool rtscts_type_reliable(u8 type);

/*
 * Decodes the headers at @buf (@avail bytes are readable, at least
 * RTSCTS_HDR_LEN to learn the type; the caller pulls
 * rtscts_frame_hdr_len() more). @wire_len is the frame's length on the wire (Ethernet padding
 * included). Checks everything that needs no state; the checksum is the
 * caller's (rtscts_frame_crc), and so is the tag of an authenticated frame
 * (tag_len bytes at frame_len, which this checks lie within @wire_len).
 * Returns RTSCTS_FRAME_OK or an error.
 */
int rtscts_frame_decode(const u8 *buf, size_t avail, size_t wire_len,
			struct rtscts_frame *f);
/*
 * Encodes f's headers (rtscts_hdr_len(f->type) bytes) with crc 0, except
 * the Portals header of MSG and RTS, which the caller places at
 * RTSCTS_PTL_HDR_OFF, and the riders after them (f->riders of them, the
 * caller's too): this leaves both alone.
 */
void rtscts_frame_encode(const struct rtscts_frame *f, u8 *buf);
/* Where pcsum is, and where the bytes it covers start. */
#define RTSCTS_PCSUM_OFF	46
/* Stores the checksum of the first csum_len bytes of an encoded frame. */
void rtscts_frame_set_crc(u8 *buf, u32 crc);
/*
 * The checksum of the first @len bytes of a frame, computed with
 * @crc32c(seed, bytes, n) (the kernel's or a test's), its crc and pcsum
 * fields as 0.
 */
u32 rtscts_frame_crc(const u8 *buf, u16 len,
		     u32 (*crc32c)(u32 seed, const u8 *p, size_t n));
/*
 * The same checksum in one pass, for a frame whose crc and pcsum fields
 * still hold 0: what the sender seals (pcsum is filled in later).
 */
u32 rtscts_frame_crc_unsealed(const u8 *buf, u16 len,
			      u32 (*crc32c)(u32 seed, const u8 *p, size_t n));

/* Serial-number arithmetic on 32-bit sequences (RFC 1982). */
static inline bool rtscts_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool rtscts_seq_after(u32 a, u32 b)
{
	return rtscts_seq_before(b, a);
}

#endif /* RTSCTS_FRAME_H */
