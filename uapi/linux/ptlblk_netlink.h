/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * ptlblk: the generic netlink family "ptlblk", version 1, which attaches
 * and detaches block devices served over Portals (ptlblk.ko). The tool is
 * `ptlctl blk`. A device belongs to the network namespace of the process
 * that attached it: its Portals NI lives there, and only requests from
 * that namespace see or detach it. Reading needs nothing; attaching and
 * detaching need CAP_SYS_ADMIN (a new block device is a system-wide
 * object) in the initial user namespace.
 *
 * PTLBLK_CMD_ATTACH (admin): connects to a server and adds /dev/ptlblkN.
 *     PTLBLK_A_SERVER_NID   u32  required
 *     PTLBLK_A_SERVER_PID   u32  default PTLBLK_SERVER_PID
 *     PTLBLK_A_IFACE        u32  Portals interface, default 0
 *     PTLBLK_A_QUEUE_DEPTH  u32  requests in flight (1 .. 1024, also
 *                                capped by the server's max_inflight)
 *     PTLBLK_A_MAX_SECTORS  u32  largest request in 512-byte sectors (8 ..
 *                                PTLBLK_MAX_SECTORS, capped by the server)
 *     PTLBLK_A_TIMEOUT_MS   u32  a request unanswered this long fails and
 *                                the device is declared dead (1000 ..)
 *   The reply is a PTLBLK_CMD_GET message of the new device. Errors:
 *   EHOSTUNREACH (no answer to the handshake), EPROTO (a server speaking
 *   another protocol version, a malformed answer), ENODEV (no such
 *   Portals interface).
 *
 * PTLBLK_CMD_DETACH (admin): PTLBLK_A_INDEX. Fails EBUSY while the device
 *   is open (mounted): I/O to a dead server fails within the timeout, so
 *   unmount first. In-flight requests fail.
 *
 * PTLBLK_CMD_GET (do with PTLBLK_A_INDEX, or dump): one message per device
 *   of the namespace:
 *     PTLBLK_A_INDEX, PTLBLK_A_NAME (string "ptlblk0"), PTLBLK_A_SERVER_NID,
 *     PTLBLK_A_SERVER_PID, PTLBLK_A_IFACE, PTLBLK_A_LOCAL_PID (u32, the
 *     client NI's Portals pid), PTLBLK_A_STATE (u8 enum ptlblk_state),
 *     PTLBLK_A_SIZE (u64 bytes), PTLBLK_A_BLOCK_SIZE (u32),
 *     PTLBLK_A_FEATURES (u32 PTLBLK_F_* of the server), PTLBLK_A_QUEUE_DEPTH,
 *     PTLBLK_A_MAX_SECTORS, PTLBLK_A_TIMEOUT_MS, PTLBLK_A_INFLIGHT (u32),
 *     PTLBLK_A_STATS (nest of u64 counters, enum ptlblk_stat).
 */
#ifndef _UAPI_LINUX_PTLBLK_NETLINK_H
#define _UAPI_LINUX_PTLBLK_NETLINK_H

#define PTLBLK_GENL_NAME	"ptlblk"
#define PTLBLK_GENL_VERSION	1

enum ptlblk_genl_cmd {
	PTLBLK_CMD_UNSPEC,
	PTLBLK_CMD_ATTACH,
	PTLBLK_CMD_DETACH,
	PTLBLK_CMD_GET,
	__PTLBLK_CMD_MAX,
};
#define PTLBLK_CMD_MAX		(__PTLBLK_CMD_MAX - 1)

enum ptlblk_genl_attr {
	PTLBLK_A_UNSPEC,
	PTLBLK_A_PAD,
	PTLBLK_A_INDEX,
	PTLBLK_A_NAME,
	PTLBLK_A_SERVER_NID,
	PTLBLK_A_SERVER_PID,
	PTLBLK_A_IFACE,
	PTLBLK_A_LOCAL_PID,
	PTLBLK_A_STATE,
	PTLBLK_A_SIZE,
	PTLBLK_A_BLOCK_SIZE,
	PTLBLK_A_FEATURES,
	PTLBLK_A_QUEUE_DEPTH,
	PTLBLK_A_MAX_SECTORS,
	PTLBLK_A_TIMEOUT_MS,
	PTLBLK_A_INFLIGHT,
	PTLBLK_A_STATS,
	__PTLBLK_A_MAX,
};
#define PTLBLK_A_MAX		(__PTLBLK_A_MAX - 1)

enum ptlblk_state {
	PTLBLK_STATE_UP = 1,	/* requests go to the server */
	PTLBLK_STATE_DEAD = 2,	/* the server stopped answering: I/O fails */
};

enum ptlblk_stat {
	PTLBLK_STAT_UNSPEC,
	PTLBLK_STAT_PAD,
	PTLBLK_STAT_READS,
	PTLBLK_STAT_WRITES,
	PTLBLK_STAT_FLUSHES,
	PTLBLK_STAT_DISCARDS,
	PTLBLK_STAT_READ_BYTES,
	PTLBLK_STAT_WRITE_BYTES,
	PTLBLK_STAT_ERRORS,	/* requests that ended with an error */
	PTLBLK_STAT_TIMEOUTS,	/* requests the timeout ended */
	__PTLBLK_STAT_MAX,
};
#define PTLBLK_STAT_MAX		(__PTLBLK_STAT_MAX - 1)

#endif /* _UAPI_LINUX_PTLBLK_NETLINK_H */
