/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Objects of the Portals core and the functions the core files share.
 * Nothing here is for the glue: it uses ptl_core.h.
 *
 * Every function declared here expects the NI lock to be held unless its
 * comment says otherwise.
 */
#ifndef PTLC_INTERNAL_H
#define PTLC_INTERNAL_H

#include "ptl_core.h"

#define PTLC_OFFSETOF(type, member) __builtin_offsetof(type, member)

/* ---- intrusive circular doubly-linked list ---- */

struct ptlc_list {
	struct ptlc_list *next;
	struct ptlc_list *prev;
};

static inline void ptlc_list_init(struct ptlc_list *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool ptlc_list_empty(const struct ptlc_list *head)
{
	return head->next == head;
}

/* Inserts item between prev and next. */
static inline void ptlc_list_add_between(struct ptlc_list *item,
					 struct ptlc_list *prev,
					 struct ptlc_list *next)
{
	item->prev = prev;
	item->next = next;
	prev->next = item;
	next->prev = item;
}

static inline void ptlc_list_del(struct ptlc_list *item)
{
	item->prev->next = item->next;
	item->next->prev = item->prev;
	item->next = item;
	item->prev = item;
}

#define PTLC_CONTAINER_OF(ptr, type, member) \
	((type *)((char *)(ptr) - PTLC_OFFSETOF(type, member)))

/* ---- handles and object tables (ptl_handle.c) ---- */

enum ptlc_obj_type {
	PTLC_OBJ_NI = 0,
	PTLC_OBJ_ME = 1,
	PTLC_OBJ_MD = 2,
	PTLC_OBJ_EQ = 3,
};

#define PTLC_H_INDEX_BITS	16
#define PTLC_H_SLOT_SHIFT	16
#define PTLC_H_SLOT_MASK	0x7U
#define PTLC_H_TYPE_SHIFT	19
#define PTLC_H_TYPE_MASK	0x3U
#define PTLC_H_GEN_SHIFT	21
#define PTLC_H_GEN_MASK		0x7ffU
#define PTLC_H_INDEX_NONE	0xffffU	/* never a valid index */

#define PTLC_CHUNK_SHIFT	8
#define PTLC_CHUNK_SLOTS	(1U << PTLC_CHUNK_SHIFT)
#define PTLC_NCHUNKS		(65536U / PTLC_CHUNK_SLOTS)
#define PTLC_NO_SLOT		0xffffffffU

struct ptlc_slot {
	void *obj;		/* NULL when free */
	u32 gen;		/* full generation, bumped on every free */
	u32 next_free;
};

/* Object table of one type: chunks of slots allocated on demand. */
struct ptlc_htab {
	struct ptlc_slot *chunks[PTLC_NCHUNKS];
	enum ptlc_obj_type type;
	u32 slot;		/* NI slot, for handles */
	u32 limit;		/* most live objects allowed */
	u32 nslots;		/* slots in allocated chunks */
	u32 free_head;
	u32 free_tail;
	u32 gen_seed;		/* first generation of new slots */
	u32 live;
	u64 allocs;
	u64 frees;
	u32 max_live;
};

ptl_handle_any_t ptlc_handle_make(u32 type, u32 slot, u32 gen, u32 index);
void ptlc_htab_init(struct ptlc_htab *tab, enum ptlc_obj_type type,
		    u32 slot, u32 limit, u32 gen_seed);
void ptlc_htab_destroy(struct ptlc_ni *ni, struct ptlc_htab *tab);
bool ptlc_htab_needs_chunk(const struct ptlc_htab *tab);
/* Stores obj; *spare (a zeroed chunk, may be NULL) is used if needed. */
int ptlc_htab_insert(struct ptlc_htab *tab, void *obj, void **spare,
		     u32 *index);
void ptlc_htab_remove(struct ptlc_htab *tab, u32 index);
ptl_handle_any_t ptlc_htab_handle(const struct ptlc_htab *tab, u32 index);
u32 ptlc_htab_gen(const struct ptlc_htab *tab, u32 index);
void *ptlc_htab_lookup(const struct ptlc_htab *tab, ptl_handle_any_t h);
void *ptlc_htab_lookup_gen(const struct ptlc_htab *tab, u32 index, u32 gen);
/* Next live object at index >= *pos (advanced past it); for teardown. */
void *ptlc_htab_next(const struct ptlc_htab *tab, u32 *pos);
void *ptlc_chunk_alloc(struct ptlc_ni *ni);
void ptlc_chunk_free(struct ptlc_ni *ni, void *chunk);

/* ---- objects ---- */

struct ptlc_pt {
	struct ptlc_list mes;	/* the match list, in search order */
	struct ptlc_list wild;	/* its entries not in the hash, in order */
	u32 len;
	u32 max_len;
};

/*
 * The exact-match index (ptl_pt.c): every ME without ignore bits sits in
 * a hash chain keyed on (portal, match_id as given, match_bits), every
 * other ME on its portal's wild list. Both keep list order by position
 * (ptlc_me.pos, increasing along the portal's list), so matching merges
 * them and still takes the first entry in list order.
 */
#define PTLC_MH_CLASSES		4	/* source given/ANY for nid and pid */
#define PTLC_MH_MIN_BUCKETS	64U
#define PTLC_MH_MAX_BUCKETS	65536U
#define PTLC_POS_GAP_SHIFT	32	/* default spacing of positions */
#define PTLC_MATCH_WALK_MAX	4	/* lists this short are walked */

struct ptlc_mh {
	struct ptlc_list *buckets;	/* NULL until the first exact ME */
	u32 mask;			/* nbuckets - 1 */
	u32 count;			/* MEs in the hash */
	u32 stranded;			/* exact MEs on wild lists (no table) */
	u32 nclass[PTLC_MH_CLASSES];	/* MEs in the hash per source class */
	u32 classes;			/* bit c: nclass[c] != 0 */
	u32 gap_shift;			/* tests shrink it to force relabels */
	u64 relabels;			/* entries renumbered, for tests */
};

struct ptlc_ace {
	ptl_process_id_t id;
	ptl_uid_t uid;
	ptl_jid_t jid;
	ptl_pt_index_t pt_index;
};

/* What matching reads comes first (56 bytes). */
struct ptlc_me {
	struct ptlc_list ilink;	/* a hash chain or the portal's wild list */
	u64 pos;		/* increases along the portal's list */
	ptl_match_bits_t match_bits;
	ptl_match_bits_t ignore_bits;
	ptl_process_id_t match_id;
	struct ptlc_md *md;
	struct ptlc_list link;	/* the portal's list */
	u32 index;
	ptl_pt_index_t pt_index;
	ptl_unlink_t unlink;
	bool hashed;
};

struct ptlc_md {
	u32 index;
	u32 gen;		/* full generation, also on the wire */
	ptl_md_t desc;		/* as given; threshold is the live count */
	struct ptlc_seg *segs;	/* &inline_seg or an allocated array */
	unsigned int nsegs;
	struct ptlc_seg inline_seg;
	u64 length;		/* bytes: sum of the segments */
	u64 local_offset;
	u32 pending;		/* operations in flight */
	ptl_unlink_t unlink_op;
	bool maxed;		/* inactive because of max_size */
	struct ptlc_me *me;	/* NULL for a bound MD */
	void *mem;		/* the glue's */
};

struct ptlc_eq {
	u32 index;
	ptl_event_t *ring;
	u32 mask;		/* nslots - 1 */
	ptl_seq_t next_seq;	/* sequence of the next event written */
	u32 promised;		/* operations whose END is still to come */
	ptl_eq_handler_t handler;
	void *priv;
};

struct ptlc_ni {
	ptl_lock_t lock;
	unsigned int slot;
	u32 gen;		/* of the NI handle */
	ptl_nid_t nid;
	ptl_pid_t pid;
	ptl_uid_t uid;
	ptl_jid_t jid;
	ptl_ni_limits_t limits;
	const struct ptlc_ops *ops;
	void *glue;
	struct ptlc_pt *pt;	/* max_pt_index + 1 entries */
	struct ptlc_ace *acl;	/* max_ac_index + 1 entries */
	u32 ptls_cur;
	u32 ptls_max;
	u64 msgs_alloc;
	u64 msgs_freed;
	u64 msgs_max;
	u64 sr[PTLC_SR_COUNT];
	struct ptlc_htab mes;
	struct ptlc_htab mds;
	struct ptlc_htab eqs;
	struct ptlc_mh mh;
};

/* ---- allocation with leak accounting (ptl_ni_state.c) ---- */

/*
 * Charged to the NI's owner (ptlc_ops.charge) before allocating; NULL if
 * refused or out of memory. Process context, no lock held.
 */
void *ptlc_alloc(struct ptlc_ni *ni, size_t size);
/* Frees what ptlc_alloc(ni, size) returned, uncharging size. Any context. */
void ptlc_free(struct ptlc_ni *ni, const void *p, size_t size);

/* ---- portal table and match list (ptl_pt.c) ---- */

int ptlc_pt_insert(struct ptlc_ni *ni, struct ptlc_me *me,
		   struct ptlc_list *prev, struct ptlc_list *next);
void ptlc_pt_remove(struct ptlc_ni *ni, struct ptlc_me *me);
int ptlc_pt_first_free(struct ptlc_ni *ni, ptl_pt_index_t *index);
/*
 * Grows the exact-match hash if it is due; NI lock NOT held, process
 * context. Never needed for correctness: without it (or when allocation
 * fails) entries wait on the wild lists or in longer chains.
 */
void ptlc_mh_grow(struct ptlc_ni *ni);
void ptlc_mh_destroy(struct ptlc_ni *ni);
static inline struct ptlc_me *ptlc_me_of_ilink(struct ptlc_list *l)
{
	return PTLC_CONTAINER_OF(l, struct ptlc_me, ilink);
}

u32 ptlc_mh_bucket(const struct ptlc_mh *mh, ptl_pt_index_t pt,
		   ptl_process_id_t id, ptl_match_bits_t bits);

/* ---- match entries (ptl_me.c) ---- */

void ptlc_me_destroy(struct ptlc_ni *ni, struct ptlc_me *me);
/*
 * An ME in three steps, for ptlc_me_md_post: allocated (unlinked; free it
 * with ptlc_free), then under the lock linked beside @base with a handle
 * (PTL_FAIL: the handle table needs the chunk *spare did not hold), and
 * undone again under the same lock if what follows fails.
 */
struct ptlc_me *ptlc_me_new(struct ptlc_ni *ni, ptl_process_id_t match_id,
			    ptl_match_bits_t match_bits,
			    ptl_match_bits_t ignore_bits, ptl_unlink_t unlink);
int ptlc_me_install_beside(struct ptlc_ni *ni, struct ptlc_me *me,
			   ptl_handle_me_t base, ptl_ins_pos_t pos,
			   void **spare);
void ptlc_me_uninstall(struct ptlc_ni *ni, struct ptlc_me *me);

/* ---- memory descriptors (ptl_md.c) ---- */

struct ptlc_md *ptlc_md_lookup(struct ptlc_ni *ni, ptl_handle_md_t h);
ptl_handle_md_t ptlc_md_handle(const struct ptlc_ni *ni,
			       const struct ptlc_md *md);
bool ptlc_md_active(const struct ptlc_md *md);
void ptlc_md_consume_threshold(struct ptlc_md *md);
void ptlc_md_snapshot(struct ptlc_ni *ni, const struct ptlc_md *md,
		      ptl_md_t *out);
/* Unlinks md and, if its ME asked for it, the ME. No event. */
void ptlc_md_destroy(struct ptlc_ni *ni, struct ptlc_md *md);
/* After an operation: unlinks md if it is used up and idle. */
void ptlc_md_maybe_auto_unlink(struct ptlc_ni *ni, struct ptlc_md *md,
			       const ptl_event_t *cause, ptl_seq_t link);
void ptlc_md_release_ref(struct ptlc_ni *ni, struct ptlc_md *md,
			 const ptl_event_t *cause, ptl_seq_t link);

/* ---- matching and acceptance (ptl_match.c) ---- */

struct ptlc_match {
	struct ptlc_md *md;
	u64 offset;
	u64 mlength;
};

bool ptlc_md_accepts(const struct ptlc_md *md, u32 op_bits, u64 req_offset,
		     u64 rlength, u64 *offset, u64 *mlength);
bool ptlc_me_matches(const struct ptlc_me *me, ptl_process_id_t src,
		     ptl_match_bits_t bits);
bool ptlc_match_request(struct ptlc_ni *ni, const struct ptl_hdr *hdr,
			u32 op_bits, struct ptlc_match *m);
void ptlc_md_advance(struct ptlc_md *md, u64 mlength);

/* ---- access control (ptl_acl.c) ---- */

void ptlc_acl_init(struct ptlc_ni *ni);
bool ptlc_acl_allows(const struct ptlc_ni *ni, const struct ptl_hdr *hdr);

/* ---- event queues and events (ptl_eq_ring.c, ptl_event.c) ---- */

struct ptlc_eq *ptlc_eq_lookup(struct ptlc_ni *ni, ptl_handle_eq_t h);
ptl_seq_t ptlc_eq_write(struct ptlc_ni *ni, struct ptlc_eq *eq,
			const ptl_event_t *ev);
void ptlc_eq_destroy(struct ptlc_ni *ni, struct ptlc_eq *eq);

bool ptlc_md_start_events(const struct ptlc_md *md);
bool ptlc_md_end_events(const struct ptlc_md *md);
bool ptlc_md_other_events(const struct ptlc_md *md);
void ptlc_event_init(struct ptlc_ni *ni, ptl_event_t *ev,
		     const struct ptlc_md *md);
bool ptlc_event_post_start(struct ptlc_ni *ni, const struct ptlc_md *md,
			   ptl_event_t *ev, ptl_seq_t *seq);
bool ptlc_event_post_end(struct ptlc_ni *ni, const struct ptlc_md *md,
			 ptl_event_t *ev, bool started, ptl_seq_t *seq);
bool ptlc_event_end(struct ptlc_ni *ni, const struct ptlc_md *md,
		    ptl_event_t *ev, bool started, ptl_handle_eq_t promised,
		    ptl_seq_t *seq);
bool ptlc_event_post_other(struct ptlc_ni *ni, const struct ptlc_md *md,
			   ptl_event_t *ev, ptl_seq_t *seq);
ptl_handle_eq_t ptlc_event_promise(struct ptlc_ni *ni,
				   const struct ptlc_md *md);

/* ---- messages (ptl_msg.c) ---- */

enum ptlc_msg_state {
	PTLC_ST_IDLE,
	PTLC_ST_SEND,		/* initiator put/getput/get request */
	PTLC_ST_TARGET,		/* put/get/getput data movement */
	PTLC_ST_ACK,		/* put target: ack handed to the glue */
	PTLC_ST_REPLY,		/* initiator: reply deposit */
};

#define PTLC_MSGF_ACK_OWED	0x100	/* put target: ACK after data */
#define PTLC_MSGF_EVENTS	0x200	/* START/END pair for this msg */
#define PTLC_MSGF_STARTED	0x400	/* START posted, start_seq valid */
#define PTLC_MSGF_GET_REQ	0x800	/* a get request: REPLY_END if it fails */

void ptlc_msg_reset(struct ptlc_msg *msg, struct ptlc_ni *ni);
void ptlc_msg_start(struct ptlc_ni *ni, struct ptlc_msg *msg,
		    struct ptlc_md *md, u32 state, bool events);
void ptlc_msg_post_start(struct ptlc_ni *ni, struct ptlc_msg *msg);

#endif /* PTLC_INTERNAL_H */
