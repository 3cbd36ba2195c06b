/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptlblk.ko: a blk-mq block device whose reads and writes are Portals
 * operations to a remote server (uapi/linux/ptlblk.h has the protocol,
 * Documentation/ptlblk.md the design). Files, one per concern:
 *
 *   main.c     module parameters, init and exit, the device registry
 *   device.c   attach (handshake, gendisk) and detach
 *   portals.c  the device's Portals objects and the event handler
 *   queue.c    blk-mq: issuing requests, completing them, timeouts
 *   netlink.c  the "ptlblk" generic netlink family
 */
#ifndef PTLBLK_H
#define PTLBLK_H

#include <linux/blk-mq.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include <ptl/kapi.h>
#include <linux/ptlblk.h>

#define PTLBLK_NAME		"ptlblk"
#define PTLBLK_MINORS		16	/* partitions per device */
#define PTLBLK_MAX_QUEUE_DEPTH	1024
#define PTLBLK_MIN_TIMEOUT_MS	1000

/* What an attach asks for (from netlink, defaults from the parameters). */
struct netlink_ext_ack;

struct ptlblk_config {
	struct net *net;
	u32 iface;
	ptl_process_id_t server;
	u32 queue_depth;
	u32 max_sectors;
	u32 timeout_ms;
};

enum ptlblk_stat_idx {
	PTLBLK_ST_READS,
	PTLBLK_ST_WRITES,
	PTLBLK_ST_FLUSHES,
	PTLBLK_ST_DISCARDS,
	PTLBLK_ST_READ_BYTES,
	PTLBLK_ST_WRITE_BYTES,
	PTLBLK_ST_ERRORS,
	PTLBLK_ST_TIMEOUTS,
	PTLBLK_ST_COUNT,
};

/* ptlblk_dev.flags */
#define PTLBLK_DEV_DEAD		0

struct ptlblk_dev {
	int index;
	struct net *net;		/* referenced (the NI holds it too) */
	u32 iface;
	ptl_process_id_t server;
	ptl_pid_t local_pid;

	/* Portals objects (portals.c); all die with ni */
	struct ptl_kni *ni;
	ptl_handle_eq_t eq;		/* callback EQ: ptlblk_event() */
	ptl_handle_md_t req_md;		/* empty MD every request is put from */
	ptl_handle_me_t reply_me;	/* PTLBLK_PT_REPLY, any cookie */
	ptl_handle_md_t reply_md;	/* empty, statuses arrive here */

	/* handshake (device.c) */
	struct ptlblk_hello *hello;
	struct completion hello_done;
	int hello_status;		/* -errno or PTLBLK_S_* */
	u32 hello_len;

	/* what the server exports, host order */
	u64 size;
	u32 block_size;
	u32 features;
	u32 max_xfer;
	u32 max_inflight;

	u32 queue_depth;
	u32 max_sectors;
	u32 max_segments;
	u32 timeout_ms;

	unsigned long flags;		/* PTLBLK_DEV_* */
	bool ready;			/* the disk exists (release/acquire) */
	struct work_struct dead_work;	/* fails what is in flight */

	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;

	atomic64_t stats[PTLBLK_ST_COUNT];
};

/* ptlblk_cmd.flags */
#define PTLBLK_CMD_BULK		0	/* its bulk ME is (or may be) linked */
#define PTLBLK_CMD_MOVED	1	/* every byte moved through the bulk MD */

/* Per request (the blk-mq pdu). */
struct ptlblk_cmd {
	struct ptlblk_dev *dev;
	struct bio_vec *bvecs;		/* max_segments entries */
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	u16 gen;			/* cookie generation */
	/*
	 * References that keep the request from completing: the status
	 * (an answer, a failure or the timeout), the bulk MD until its
	 * UNLINK event (the library owns the pages until then), and the
	 * issuing thread while queue_rq runs. The last one completes it.
	 */
	atomic_t pending;
	unsigned long flags;		/* PTLBLK_CMD_* */
	atomic_t status;		/* blk_status_t + 1; 0: none yet */
};

/* main.c */
extern unsigned int ptlblk_major;
void ptlblk_default_config(struct ptlblk_config *cfg);
int ptlblk_register(struct ptlblk_dev *dev);
void ptlblk_publish(struct ptlblk_dev *dev);
struct ptlblk_dev *ptlblk_unregister(struct net *net, int index);
struct mutex *ptlblk_registry_lock(void);
struct ptlblk_dev *ptlblk_find(struct net *net, int index);
struct ptlblk_dev *ptlblk_next(struct net *net, unsigned long *index);

/* device.c */
struct ptlblk_dev *ptlblk_attach(const struct ptlblk_config *cfg,
				 struct netlink_ext_ack *extack);
int ptlblk_detach(struct ptlblk_dev *dev);
void ptlblk_destroy(struct ptlblk_dev *dev);
void ptlblk_kill(struct ptlblk_dev *dev, const char *why);

/* portals.c */
int ptlblk_portals_open(struct ptlblk_dev *dev);
void ptlblk_portals_close(struct ptlblk_dev *dev);
int ptlblk_send(struct ptlblk_dev *dev, u64 match_bits, u64 hdr_data);
int ptlblk_bulk_attach(struct ptlblk_dev *dev, u32 cookie,
		       const struct ptl_kmd *md, ptl_handle_me_t *me,
		       ptl_handle_md_t *mdh);
int ptlblk_status_errno(u64 status);

/* queue.c */
extern const struct blk_mq_ops ptlblk_mq_ops;
void ptlblk_cmd_set_status(struct ptlblk_cmd *cmd, blk_status_t status);
void ptlblk_cmd_put(struct ptlblk_cmd *cmd);
void ptlblk_reply(struct ptlblk_dev *dev, u32 cookie, u64 status,
		  bool send_failed);
bool ptlblk_cmd_abort(struct ptlblk_cmd *cmd, blk_status_t status);
blk_status_t ptlblk_status_blk(u64 status);
unsigned int ptlblk_inflight(struct ptlblk_dev *dev);

/* netlink.c */
int ptlblk_netlink_init(void);
void ptlblk_netlink_exit(void);

#endif /* PTLBLK_H */
