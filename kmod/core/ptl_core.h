/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Portals 3.3 semantics core: the API the glue calls.
 *
 * The core owns every Portals rule (portal table, match lists, MDs, EQs,
 * access control, counters, events) and nothing else: it never touches
 * user memory, never sleeps while holding its lock and never talks to a
 * network. The glue (ptl.ko, or a unit test) owns file descriptors, pinned
 * pages, EQ ring memory, transports and NI lifetime.
 *
 * Naming: core objects are "ptlc_*" so they cannot collide with the glue's
 * own structures (the glue's struct ptl_ni wraps a struct ptlc_ni).
 *
 * Locking. Every entry point that takes a struct ptlc_ni takes that NI's
 * lock itself; the glue holds no core lock across calls. The core never
 * holds two NI locks at once: an intra-node message is an initiator-side
 * call on one NI followed by target-side calls on the other. While holding
 * the lock the core calls only these hooks, which must not sleep and must
 * not call back into the core:
 *   - ptlc_ops.md_release (an MD is destroyed; may run in softirq),
 *   - ptlc_ops.eq_notify  (an event was written; wake sleepers),
 *   - the EQ's ptl_eq_handler_t (kernel clients; runs after the write).
 * Entry points marked "may sleep" allocate with PTL_GFP_SLEEP before they
 * lock; the receive and finalize paths never allocate.
 *
 * Memory accounting. Every byte the core allocates for an NI is first
 * offered to ptlc_ops.charge (positive count, process context, no lock
 * held), which may refuse: the call then fails with PTL_NO_SPACE and
 * nothing is allocated. Frees return the same count (negative, any
 * context, possibly under the NI lock). The glue uses it to cap what one
 * user makes the kernel hold.
 *
 * Handles (32 bits, see ptl_handle.c): index 0..15 (0xffff never valid),
 * NI slot 16..18, object type 19..20, generation 21..31. PTL_INVALID_HANDLE,
 * PTL_HANDLE_NONE and PTL_EQ_NONE therefore never name an object. Every MD
 * also has a full 32-bit generation that travels on the wire.
 *
 * Message protocol (struct ptlc_msg is storage the glue provides, e.g.
 * inside its transport descriptor; the core keeps all state in it):
 *
 *   initiator:  ptlc_put/ptlc_get/ptlc_getput fill msg (action SEND: send
 *               msg->hdr followed by msg->mlength bytes of msg->md from
 *               msg->offset), post SEND_START. When the transport is done
 *               with the local buffer: ptlc_msg_finalize(msg, fail)
 *               -> SEND_END [, UNLINK]; returns PTLC_MSG_DONE.
 *   receiver:   ptlc_receive(ni, hdr, msg) returns the first action:
 *     DROP        discard the payload (counted, nothing else to do).
 *     DONE        header-only message (ACK) fully handled.
 *     DEPOSIT     copy the first msg->mlength payload bytes into msg->md at
 *                 msg->offset (ptlc_md_iter), discard the remaining
 *                 hdr->payload_length - mlength bytes, then finalize.
 *     SEND_REPLY  (get) send msg->hdr followed by msg->mlength bytes read
 *                 from msg->md at msg->offset, then finalize.
 *     SWAP        (getput) receive the payload (<= max_getput_md bytes)
 *                 into a private buffer; then, with no other access to
 *                 the region in between, copy the old msg->mlength bytes of
 *                 msg->md at msg->offset out, write the first mlength
 *                 incoming bytes in; send msg->hdr followed by the old
 *                 bytes; then finalize.
 *   ptlc_msg_finalize(ni, msg, ni_fail_type) posts what follows and returns
 *   the next action: SEND_ACK (send msg->hdr, no payload, then call
 *   finalize again: the PUT_END is posted only after the ACK went out, as
 *   spec table 8.5 asks) or DONE. Every message that did not end in DROP or
 *   DONE must be finalized exactly once per returned action, also on
 *   failure (pass PTL_NI_FAIL) and before ptlc_ni_destroy.
 *
 *   Self/intra-node sends: call ptlc_receive with PTLC_RECV_DEFER_START,
 *   copy, finalize the initiator message, then finalize the target
 *   message: this yields the reference order SEND_START, SEND_END,
 *   PUT_START, PUT_END (the deferred PUT_START carries the state at match
 *   time) and SEND_END before ACK.
 *
 * MD memory: an MD is described by segments (user address, length): one
 * for a plain MD, one per entry for PTL_MD_IOVEC (validated and copied in
 * by the glue). The glue may attach an opaque "mem" (pinned pages) it owns;
 * the core hands it back through ops->md_release when the MD dies. While a
 * message holds an MD (between the action that names it and its final
 * finalize) the MD, its segments and its mem stay valid: unlink returns
 * PTL_MD_IN_USE/PTL_ME_IN_USE and update returns PTL_MD_NO_UPDATE.
 */
#ifndef PTL_CORE_H
#define PTL_CORE_H

#include "ptl_platform.h"
#include "ptl_wire.h"
#include <p3api/types.h>
#include <p3api/misc.h>
#include <p3/errno.h>

struct ptlc_ni;
struct ptlc_md;

/* Hard caps of the core; actual limits are min(cap, desired). */
#define PTLC_MAX_NI_SLOTS	8
#define PTLC_CAP_OBJECTS	65535	/* per type per NI: index 0xffff unused */
#define PTLC_CAP_PT_INDEX	255
#define PTLC_CAP_AC_INDEX	255
#define PTLC_CAP_MD_IOVECS	1024
#define PTLC_CAP_ME_LIST	65535
#define PTLC_CAP_GETPUT_MD	64

/* Core-private status registers, from PTL_SR_NAL_REGS_START on. */
#define PTLC_SR_PERM_VIOLATIONS	(PTL_SR_NAL_REGS_START + 0)	/* ACL denials */
#define PTLC_SR_ACK_DROPS	(PTL_SR_NAL_REGS_START + 1)	/* uncounted ACKs */
#define PTLC_SR_COUNT		(PTL_SR_NAL_REGS_START + 2)

/* Hooks the glue gives at NI creation; see "Locking" above. */
struct ptlc_ops {
	/* An MD died; release its mem. Atomic context, NI lock held. */
	void (*md_release)(void *glue, void *mem);
	/* An event was written into an EQ. Atomic context, NI lock held. */
	void (*eq_notify)(void *glue, void *eq_priv);
	/*
	 * May be NULL. bytes > 0: about to allocate, false refuses (process
	 * context). bytes < 0: freed (any context, must not fail or sleep).
	 */
	bool (*charge)(void *glue, long bytes);
	/*
	 * May be NULL (never reuse). An update keeps an MD's region: may its
	 * current mem serve @desc (e.g. its pages are still what the process
	 * has mapped there, writable if @desc takes puts)? Atomic context,
	 * NI lock held.
	 */
	bool (*mem_reusable)(void *glue, void *mem, const ptl_md_t *desc);
};

struct ptlc_ni_config {
	unsigned int slot;		/* 0..7, chosen by the glue */
	ptl_nid_t nid;
	ptl_pid_t pid;
	ptl_uid_t uid;
	ptl_jid_t jid;
	const ptl_ni_limits_t *desired;	/* NULL or <0 fields: no wish */
	const struct ptlc_ops *ops;	/* may be NULL */
	void *glue;			/* first argument of the hooks */
};

/* One segment of an MD: a user virtual address and a byte count. */
struct ptlc_seg {
	u64 addr;
	u64 len;
};

/*
 * What the glue passes to create or update an MD. For a plain MD, segs may
 * be NULL: the core uses {desc.start, desc.length}. For PTL_MD_IOVEC, segs
 * holds desc.length entries (nsegs must equal it). The core copies segs.
 */
struct ptlc_md_spec {
	ptl_md_t desc;			/* as the user gave it */
	const struct ptlc_seg *segs;
	unsigned int nsegs;
	void *mem;			/* glue-owned; core owns it on success */
	/*
	 * Update only, with mem NULL: keep the MD's mem if the new plain MD
	 * covers the same bytes and ops->mem_reusable agrees; otherwise the
	 * update fails with PTLC_MD_NEEDS_MEM and changes nothing.
	 */
	bool reuse_mem;
};

/*
 * Not a Portals code: a reuse_mem update could not keep the memory; the
 * glue prepares new memory and updates again. Never reaches a caller.
 */
#define PTLC_MD_NEEDS_MEM	(PTL_MAX_ERRNO + 1)

/* ---- NI (ptl_ni_state.c) ---- */

/* May sleep. Returns PTL_OK, PTL_NO_SPACE or PTL_FAIL (bad slot). */
int ptlc_ni_create(const struct ptlc_ni_config *cfg, struct ptlc_ni **out);
/*
 * May sleep. Releases every ME, MD (md_release hook) and EQ (contract 17).
 * The glue must have finalized its messages and must not use the NI after.
 */
void ptlc_ni_destroy(struct ptlc_ni *ni);
ptl_handle_ni_t ptlc_ni_handle(const struct ptlc_ni *ni);
void ptlc_ni_limits(const struct ptlc_ni *ni, ptl_ni_limits_t *actual);
void ptlc_ni_id(const struct ptlc_ni *ni, ptl_process_id_t *id);
ptl_uid_t ptlc_ni_uid(const struct ptlc_ni *ni);
ptl_jid_t ptlc_ni_jid(const struct ptlc_ni *ni);
/* PTL_OK or PTL_SR_INDEX_INVALID. */
int ptlc_ni_status(struct ptlc_ni *ni, ptl_sr_index_t reg, ptl_sr_value_t *v);

/* Objects (MEs, MDs, EQs, NIs and their tables) alive in all NIs. */
long ptlc_live_objects(void);

/* ---- Handles (ptl_handle.c) ---- */

/* NI slot named by any handle; -1 for the reserved values. */
int ptlc_handle_slot(ptl_handle_any_t h);
/*
 * PtlNIHandle on the NI that the glue found through ptlc_handle_slot:
 * PTL_OK with *out set if h names a live object (or the NI) of this NI,
 * else PTL_HANDLE_INVALID.
 */
int ptlc_ni_handle_of(struct ptlc_ni *ni, ptl_handle_any_t h,
		      ptl_handle_ni_t *out);
/* True if h is this NI's own handle (current incarnation). */
bool ptlc_ni_handle_valid(const struct ptlc_ni *ni, ptl_handle_ni_t h);

/* ---- Access control (ptl_acl.c) ---- */

int ptlc_ac_entry(struct ptlc_ni *ni, ptl_ac_index_t ac_index,
		  ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
		  ptl_pt_index_t pt_index);

/* ---- Match entries (ptl_me.c) ---- */

/* All may sleep. */
int ptlc_me_attach(struct ptlc_ni *ni, ptl_pt_index_t pt_index,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *out);
int ptlc_me_attach_any(struct ptlc_ni *ni, ptl_pt_index_t *pt_index,
		       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		       ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		       ptl_handle_me_t *out);
int ptlc_me_insert(struct ptlc_ni *ni, ptl_handle_me_t base,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *out);
int ptlc_me_unlink(struct ptlc_ni *ni, ptl_handle_me_t me);

/* ---- Memory descriptors (ptl_md.c) ---- */

/* May sleep. On error the glue keeps spec->mem. */
int ptlc_md_attach(struct ptlc_ni *ni, ptl_handle_me_t me,
		   const struct ptlc_md_spec *spec, ptl_unlink_t unlink_op,
		   ptl_handle_md_t *out);
int ptlc_md_bind(struct ptlc_ni *ni, const struct ptlc_md_spec *spec,
		 ptl_unlink_t unlink_op, ptl_handle_md_t *out);
int ptlc_md_unlink(struct ptlc_ni *ni, ptl_handle_md_t md);

/*
 * PtlMDUpdate. old_md (may be NULL) is always filled when the handle is
 * valid; for an iovec MD, up to old_segs_cap segments are copied into
 * old_segs (the glue copies them out entry by entry) and *old_nsegs tells
 * how many the MD has. new_spec NULL: read only. eq == PTL_EQ_NONE:
 * unconditional; otherwise eq must be live (PTL_EQ_INVALID) and empty:
 * eq_consumer_seq (the reader's next expected sequence) equals the next
 * sequence to be written, no END is promised on it, and the MD has no
 * operation in flight; else PTL_MD_NO_UPDATE. An MD with an operation in
 * flight is never updated (its segments are in use): PTL_MD_NO_UPDATE.
 * May sleep. On error the glue keeps new_spec->mem. With
 * new_spec->reuse_mem, PTLC_MD_NEEDS_MEM as above.
 */
int ptlc_md_update(struct ptlc_ni *ni, ptl_handle_md_t md, ptl_md_t *old_md,
		   struct ptlc_seg *old_segs, unsigned int old_segs_cap,
		   unsigned int *old_nsegs,
		   const struct ptlc_md_spec *new_spec, ptl_handle_eq_t eq,
		   ptl_seq_t eq_consumer_seq);

/*
 * PtlMEMDPost: an ME inserted beside @base and an MD attached to it, in
 * one step and only if @test_eq is empty as ptlc_md_update() means it
 * (PTL_EQ_NONE: unconditionally); otherwise nothing is created and the
 * answer is PTL_MD_NO_UPDATE. Errors as PtlMEInsert and PtlMDAttach give
 * them. May sleep. On error the glue keeps spec->mem.
 */
struct ptlc_post_args {
	ptl_handle_me_t base;
	ptl_process_id_t match_id;
	ptl_match_bits_t match_bits;
	ptl_match_bits_t ignore_bits;
	ptl_unlink_t me_unlink;
	ptl_ins_pos_t pos;
	ptl_unlink_t md_unlink;
	ptl_handle_eq_t test_eq;
	ptl_seq_t consumer_seq;		/* the reader's next expected sequence */
};

int ptlc_me_md_post(struct ptlc_ni *ni, const struct ptlc_post_args *p,
		    const struct ptlc_md_spec *spec, ptl_handle_me_t *me_out,
		    ptl_handle_md_t *md_out);

/*
 * Walks [offset, offset + length) of an MD as chunks that never cross a
 * segment: (segment index, offset in segment, user address, length).
 * Valid while the message holding the MD is not finally finalized.
 */
struct ptlc_md_iter {
	const struct ptlc_seg *segs;
	unsigned int nsegs;
	unsigned int seg;
	u64 seg_off;
	u64 left;
};

struct ptlc_chunk {
	unsigned int seg;
	u64 seg_off;
	u64 addr;		/* segs[seg].addr + seg_off */
	u64 len;
};

void ptlc_md_iter_init(struct ptlc_md_iter *it, const struct ptlc_md *md,
		       u64 offset, u64 length);
bool ptlc_md_iter_next(struct ptlc_md_iter *it, struct ptlc_chunk *chunk);
/* The glue's mem of an MD (for the data movement of a message). */
void *ptlc_md_mem(const struct ptlc_md *md);

/* ---- Event queues (ptl_eq_ring.c) ---- */

/* Ring slots for a requested count: power of two >= 2; 0 if too large. */
u32 ptlc_eq_slots_for(ptl_size_t count);
/*
 * ring: nslots (power of two >= 2) events of glue memory; the core
 * pre-fills it (spec 8.6). eq_priv is passed to ops->eq_notify. May sleep.
 */
int ptlc_eq_alloc(struct ptlc_ni *ni, ptl_event_t *ring, u32 nslots,
		  ptl_eq_handler_t handler, void *eq_priv,
		  ptl_handle_eq_t *out);
/*
 * After PTL_OK nothing writes the ring any more (MDs naming the EQ post
 * nothing, contract 14); *eq_priv (if not NULL) gets the EQ's eq_priv so
 * the glue can free the ring.
 */
int ptlc_eq_free(struct ptlc_ni *ni, ptl_handle_eq_t eq, void **eq_priv);
/* The EQ's ring geometry, for the glue's mmap and waits. */
int ptlc_eq_info(struct ptlc_ni *ni, ptl_handle_eq_t eq, u32 *nslots,
		 ptl_seq_t *next_seq, void **eq_priv);

/* ---- Messages (ptl_send.c, ptl_recv.c, ptl_msg.c) ---- */

enum ptlc_action {
	PTLC_MSG_DONE,
	PTLC_MSG_DROP,
	PTLC_MSG_SEND,		/* initiator: send hdr + data from md */
	PTLC_MSG_DEPOSIT,	/* receive payload into md */
	PTLC_MSG_SEND_REPLY,	/* get target: send hdr + data from md */
	PTLC_MSG_SWAP,		/* getput target: swap, send old data */
	PTLC_MSG_SEND_ACK,	/* send hdr (no data), then finalize */
};

/* Why a message was dropped (for tracepoints); counters are in the NI. */
enum ptlc_drop {
	PTLC_DROP_NONE,
	PTLC_DROP_WRONG_TARGET,	/* dst nid/pid is not this NI */
	PTLC_DROP_PT_INDEX,
	PTLC_DROP_AC_INDEX,
	PTLC_DROP_ACL,		/* permission violation */
	PTLC_DROP_NO_MATCH,	/* no ME/MD accepted */
	PTLC_DROP_STALE_MD,	/* ack/reply to a gone or recycled MD */
	PTLC_DROP_INACTIVE_MD,	/* ack/reply to an inactive MD */
	PTLC_DROP_REPLY_TOO_LONG,
	PTLC_DROP_BAD_TYPE,
};

#define PTLC_RECV_DEFER_START	0x1	/* post START at finalize (self) */

/*
 * Message state. The glue reads the fields in the first block and hdr; the
 * rest is private to the core.
 *
 * Every operation that starts a message clears the fields before hdr and
 * leaves hdr and ev alone: each is built whole (zeroed, then filled) on
 * the paths that use it, and no path reads either before building it. So
 * the ~260 bytes of the two are zeroed once per message, not twice (a
 * cost that counts on the small-message path: Documentation/performance.md,
 * finding 4). The user-space build poisons them instead, so that a read
 * before the build shows in the core's tests.
 */
struct ptlc_msg {
	enum ptlc_action action;
	enum ptlc_drop drop;
	struct ptlc_md *md;		/* memory of the data movement */
	u64 offset;			/* ... in md */
	u64 mlength;			/* ... bytes */

	/* private */
	struct ptlc_ni *ni;
	u32 md_index;
	u32 md_gen;
	u32 state;
	u32 flags;
	ptl_seq_t start_seq;
	ptl_handle_eq_t promised_eq;	/* EQ expecting our END */
	bool start_owed;		/* START deferred to finalize */

	/* built before use; see above */
	struct ptl_hdr hdr;		/* header to send (SEND*, SWAP) */
	ptl_event_t ev;			/* fields of the END/UNLINK to come */
};

/*
 * Initiator side. All return PTL_OK with msg->action == PTLC_MSG_SEND, or
 * PTL_MD_INVALID (bad handle or inactive MD), PTL_MD_ILLEGAL (region out of
 * bounds, getput limits or MDs of different NIs). Never sleep.
 */
struct ptlc_put_args {
	ptl_handle_md_t md;
	ptl_size_t local_offset;
	ptl_size_t length;
	ptl_ack_req_t ack_req;
	ptl_process_id_t target;
	ptl_pt_index_t pt_index;
	ptl_ac_index_t ac_index;
	ptl_match_bits_t match_bits;
	ptl_size_t remote_offset;
	ptl_hdr_data_t hdr_data;
};

/* PtlPut: length = whole MD; pass region = false. */
int ptlc_put(struct ptlc_ni *ni, const struct ptlc_put_args *a, bool region,
	     struct ptlc_msg *msg);
/* PtlGet[Region]: ack_req and hdr_data are ignored. */
int ptlc_get(struct ptlc_ni *ni, const struct ptlc_put_args *a, bool region,
	     struct ptlc_msg *msg);
/* PtlGetPut: a->md is the put MD; get_md receives the old data. */
int ptlc_getput(struct ptlc_ni *ni, ptl_handle_md_t get_md,
		const struct ptlc_put_args *a, struct ptlc_msg *msg);

/*
 * Target side: hdr was decoded by ptl_hdr_decode and carries the payload
 * length it announces. Returns the first action (see the protocol above).
 * Never sleeps, never allocates. flags: PTLC_RECV_*.
 */
enum ptlc_action ptlc_receive(struct ptlc_ni *ni, const struct ptl_hdr *hdr,
			      unsigned int flags, struct ptlc_msg *msg);

/* Completes the current action; returns the next one. Never sleeps. */
enum ptlc_action ptlc_msg_finalize(struct ptlc_msg *msg,
				   ptl_ni_fail_t ni_fail_type);

#endif /* PTL_CORE_H */
