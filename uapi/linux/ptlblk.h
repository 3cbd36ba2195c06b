/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * ptlblk: a block device over Portals. The wire protocol between the
 * kernel client (ptlblk.ko) and its server (ptlblk-server, a user process
 * over libptl-user), version 1. Documentation/ptlblk.md explains it; this
 * header is its reference: every constant, every limit and the one
 * structure that travels as data.
 *
 * Requests carry no payload: a request is a zero-length put from the
 * client to the server's request portal, and everything it says fits in
 * its match bits and header data:
 *
 *   match bits  63..60  opcode (PTLBLK_OP_*)
 *               59..56  flags (PTLBLK_RQ_FUA)
 *               55..32  length in 512-byte sectors (READ, WRITE, DISCARD)
 *               31..0   cookie: the client's request tag (15..0) and its
 *                       generation (31..16)
 *   hdr_data            byte offset (READ, WRITE, DISCARD);
 *                       PTLBLK_PROTO_VERSION (HELLO)
 *
 * The data moves by the server's initiative into or out of memory the
 * client exposed for that one request: a match entry on the client's
 * PTLBLK_PT_BULK portal whose match bits are the cookie, holding the
 * request's pages (READ: puts accepted; WRITE: gets accepted), used
 * exactly once. The server
 *
 *   READ      puts the data there, hdr_data = status (PTLBLK_S_*). On a
 *             failure it puts zero bytes with the status instead.
 *   WRITE     gets the data from there (zero bytes if it refuses the
 *             request), writes it, then puts zero bytes to the client's
 *             PTLBLK_PT_REPLY portal, match bits = cookie, hdr_data =
 *             status.
 *   FLUSH     makes every write it acknowledged durable, then replies on
 *             PTLBLK_PT_REPLY. A WRITE with PTLBLK_RQ_FUA is durable when
 *             its reply says PTLBLK_S_OK.
 *   DISCARD   deallocates the range (optional, PTLBLK_F_DISCARD), replies
 *             on PTLBLK_PT_REPLY.
 *   HELLO     puts a struct ptlblk_hello into the bulk entry (cookie
 *             PTLBLK_HELLO_COOKIE), hdr_data = status; a server that does
 *             not speak the client's version answers PTLBLK_S_VERSION
 *             with zero bytes.
 */
#ifndef _UAPI_LINUX_PTLBLK_H
#define _UAPI_LINUX_PTLBLK_H

#include <linux/types.h>

#define PTLBLK_PROTO_VERSION	1

/* Portal indexes: the server's, and the client's. */
#define PTLBLK_PT_REQUEST	16	/* server: requests */
#define PTLBLK_PT_BULK		17	/* client: one entry per request */
#define PTLBLK_PT_REPLY		18	/* client: statuses without data */

/* The server's default Portals pid (a system pid: CAP_NET_ADMIN). */
#define PTLBLK_SERVER_PID	42

enum ptlblk_op {
	PTLBLK_OP_HELLO = 1,
	PTLBLK_OP_READ = 2,
	PTLBLK_OP_WRITE = 3,
	PTLBLK_OP_FLUSH = 4,
	PTLBLK_OP_DISCARD = 5,
};

/* Request flags (match bits 59..56). */
#define PTLBLK_RQ_FUA		0x1

#define PTLBLK_MB_OP_SHIFT	60
#define PTLBLK_MB_FLAGS_SHIFT	56
#define PTLBLK_MB_LEN_SHIFT	32
#define PTLBLK_MB_LEN_MASK	0xffffffULL
#define PTLBLK_MB_COOKIE_MASK	0xffffffffULL
/* The largest request: 2^24 - 1 sectors. */
#define PTLBLK_MAX_SECTORS	0xffffffU
#define PTLBLK_SECTOR_SHIFT	9

#define PTLBLK_MB(op, flags, sectors, cookie)				\
	(((__u64)(op) << PTLBLK_MB_OP_SHIFT) |				\
	 ((__u64)((flags) & 0xf) << PTLBLK_MB_FLAGS_SHIFT) |		\
	 (((__u64)(sectors) & PTLBLK_MB_LEN_MASK) << PTLBLK_MB_LEN_SHIFT) | \
	 ((__u64)(cookie) & PTLBLK_MB_COOKIE_MASK))
#define PTLBLK_MB_OP(mb)	((unsigned int)((mb) >> PTLBLK_MB_OP_SHIFT))
#define PTLBLK_MB_FLAGS(mb)	((unsigned int)((mb) >> PTLBLK_MB_FLAGS_SHIFT) & 0xf)
#define PTLBLK_MB_SECTORS(mb)	\
	((__u32)(((mb) >> PTLBLK_MB_LEN_SHIFT) & PTLBLK_MB_LEN_MASK))
#define PTLBLK_MB_COOKIE(mb)	((__u32)((mb) & PTLBLK_MB_COOKIE_MASK))

/* Cookies: tag and generation. Tag 0xffff is the handshake's. */
#define PTLBLK_COOKIE(tag, gen)	((((__u32)(gen) & 0xffff) << 16) | ((tag) & 0xffff))
#define PTLBLK_COOKIE_TAG(c)	((c) & 0xffff)
#define PTLBLK_COOKIE_GEN(c)	(((c) >> 16) & 0xffff)
#define PTLBLK_HELLO_COOKIE	PTLBLK_COOKIE(0xffff, 0)
#define PTLBLK_MAX_TAGS		0xffff

/* Statuses (hdr_data of the server's answers). */
enum ptlblk_status {
	PTLBLK_S_OK = 0,
	PTLBLK_S_IO = 1,	/* the backing store failed */
	PTLBLK_S_INVAL = 2,	/* malformed request, range outside the export */
	PTLBLK_S_NOSPC = 3,	/* no space left (sparse backing file) */
	PTLBLK_S_ROFS = 4,	/* write to a read-only export */
	PTLBLK_S_NOTSUPP = 5,	/* operation not supported by this export */
	PTLBLK_S_VERSION = 6,	/* HELLO: protocol version not spoken */
	PTLBLK_S_BUSY = 7,	/* server shutting down */
};

/* Feature flags of struct ptlblk_hello. */
#define PTLBLK_F_READ_ONLY	0x1
#define PTLBLK_F_FLUSH		0x2	/* has a volatile cache: FLUSH means something */
#define PTLBLK_F_FUA		0x4
#define PTLBLK_F_DISCARD	0x8
#define PTLBLK_F_ROTATIONAL	0x10

#define PTLBLK_HELLO_MAGIC	0x4b4c4250	/* "PBLK" */

/*
 * What the server says about its export (little-endian, 64 bytes).
 * @size is a multiple of @block_size; @block_size a power of two in
 * 512 .. 4096; @max_xfer the largest READ or WRITE in bytes (a multiple
 * of @block_size, at most PTLBLK_MAX_SECTORS sectors); @max_inflight how
 * many requests of one client it works on at once (more queue at the
 * server); @discard_granularity in bytes (with PTLBLK_F_DISCARD).
 */
struct ptlblk_hello {
	__le32 magic;
	__le16 version;
	__le16 reserved0;
	__le64 size;
	__le32 block_size;
	__le32 max_xfer;
	__le32 max_inflight;
	__le32 flags;
	__le32 discard_granularity;
	__le32 reserved[7];
};

#endif /* _UAPI_LINUX_PTLBLK_H */
