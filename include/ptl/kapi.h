/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Portals 3.3 API for kernel modules (filesystem and block protocols),
 * exported by ptl.ko in the symbol namespace PORTALS:
 *
 *	MODULE_IMPORT_NS(PORTALS);
 *
 * A kernel client is a peer of user processes: its NIs live on the same
 * interfaces, hold pids in the same node-wide pid space, match, check
 * access and post events by exactly the same rules (the same core code),
 * and talk to user processes on this node and to any process or kernel
 * client on other nodes over the same wire. Documentation/kernel-api.rst
 * has a worked example.
 *
 * What differs from the user API, and why:
 *
 *  - An NI is a pointer (struct ptl_kni *), not a handle: a kernel client
 *    has no file to keep a handle table in. ME, MD and EQ handles are the
 *    ordinary typed handles; every call takes the NI they belong to.
 *  - MDs describe kernel memory (struct ptl_kmd: an array of struct kvec
 *    or of struct bio_vec). The library neither copies nor pins it; see
 *    "Memory" below for the client's side of that bargain.
 *  - An EQ may carry a handler called for every event where the event is
 *    produced ("Handlers" below); or it is drained with ptl_keq_get() and
 *    ptl_keq_wait(). Nothing polls.
 *  - Identity: uid 0 (the kernel); the job id the client gives (or
 *    PTL_JID_NONE); reserved pids [0, 64) and pids reserved for other uids
 *    are available without a capability check: kernel code is trusted as
 *    a launcher is.
 *
 * Return values. Every function returns a Portals code (<p3/errno.h>,
 * PTL_OK is 0, errors are positive), never a negative errno, and checks
 * its arguments: a NULL pointer where one is required or a value out of
 * range is the code the user API gives for it (PTL_NI_INVALID for a NULL
 * NI, PTL_SEGV for a NULL output pointer, PTL_MD_ILLEGAL for a bad MD
 * description, ...). A handle of the wrong type, of another interface's
 * NI, or of a freed object is refused with its type's *_INVALID code. (A
 * handle of another kernel NI on the same interface is refused only as
 * far as its generation bits differ, which is likely but not certain:
 * keep each NI's handles with it.)
 *
 * Contexts. Unless a function says otherwise it may sleep: process context
 * with no spinlock held. ptl_keq_get() may also be called from softirq
 * context. No function may be called from a handler (see "Handlers").
 *
 * Handlers. ptl_keq_alloc() with a handler makes a callback EQ: the
 * handler is called once per event, in order, with the event, in the
 * context that produced it:
 *  - softirq (the transport's receive path): events of messages arriving
 *    from other nodes, and the completions (SEND_END, ACK, REPLY_END) of
 *    the client's own requests to other nodes;
 *  - process context of whoever initiated an intra-node operation: the
 *    client's own thread inside ptl_kput() & co., or a user process (or
 *    another kernel client) inside its put/get on this node.
 * Explicit unlinks (ptl_kmd_unlink(), ptl_kme_unlink()) post no UNLINK
 * event: only an MD that unlinks itself (threshold reached) posts one.
 * It is called with bottom halves disabled and the NI's internal spinlock
 * held, so it must not sleep, must not call any function of this header
 * (for any NI: it would deadlock or invert lock order), and must not take
 * a lock that the client holds while calling into this API (the handler
 * can run synchronously inside those calls). It may take its own
 * spinlocks with spin_lock() (or _bh), complete requests
 * (blk_mq_complete_request()), wake waiters and queue work, which is how
 * a client calls back into this API in response to an event. @ev is valid
 * during the call only.
 *
 * Memory. The library reads and writes an MD's memory from the moment the
 * MD is attached or bound until it is gone: ptl_kmd_unlink() or
 * ptl_kme_unlink() returned PTL_OK for it, ptl_kmd_update() replaced its
 * description, its UNLINK event was posted (auto-unlink; an MD without
 * an EQ or with both event kinds disabled unlinks silently, so a client
 * that needs to know must give it an EQ), or ptl_kni_fini() returned. The
 * client keeps the memory (and, for bio_vec MDs, the pages) valid until
 * then. Afterwards the library never touches it again, except that a
 * transport may still hold page references on pages of a finished send
 * for an Ethernet frame already queued (it reads them; the references
 * keep the pages from being freed). kvec memory must be in the kernel's
 * linear map (kmalloc, alloc_pages without __GFP_HIGHMEM) or in vmalloc
 * space; bio_vec pages may be any pages, highmem included. Neither is
 * pinned, charged to anyone's RLIMIT_MEMLOCK, or marked dirty: a client
 * that receives into page-cache pages dirties them itself.
 *
 * Lifetime. A module that uses these symbols holds a reference on ptl.ko
 * (the module loader takes it), so ptl.ko cannot be unloaded while a
 * client is loaded. An NI holds a reference on its network namespace.
 * ptl_kni_fini() frees every object of the NI, waits until every message
 * in flight on it has ended (a transport gives up within its peer
 * timeout), and returns; no handler runs after it returned, and no
 * handler that started before is still running. A client module that is
 * unloaded with NIs still open has them finalized for it (with a kernel
 * log message), after its exit function ran.
 */
#ifndef PTL_KAPI_H
#define PTL_KAPI_H

#include <linux/bvec.h>
#include <linux/module.h>
#include <linux/types.h>
#include <linux/uio.h>

#include <linux/portals.h>	/* PTL_MAX_INTERFACES, the pid ranges */
#include <p3api/misc.h>		/* PTL_SR_* */
#include <p3api/types.h>
#include <p3/errno.h>

/*
 * Version of this interface. A client passes the version it was built
 * against in struct ptl_kni_config; ptl_kni_init() refuses any other
 * (PTL_FAIL, with a kernel log message), so a client built against an
 * incompatible ptl.ko fails cleanly at load instead of misbehaving.
 */
#define PTL_KAPI_VERSION	1

struct net;

/* A kernel client's network interface (opaque). */
struct ptl_kni;

/**
 * struct ptl_kni_config - what ptl_kni_init() opens
 * @version: PTL_KAPI_VERSION
 * @iface: interface index, 0 .. PTL_MAX_INTERFACES - 1 (the user API's
 *	PTL_NALTYPE_LINUX0 + @iface); interface 0 always exists, the others
 *	once ptlctl bound them
 * @pid: the Portals pid to take, or PTL_PID_ANY for one from the
 *	ephemeral range
 * @jid: job id carried by the NI's messages; PTL_JID_NONE: no job
 * @net: network namespace whose Portals node the NI joins; NULL: the
 *	initial one. Referenced until the NI is finalized.
 * @desired: limits wished for (fields < 0: no wish), or NULL
 * @name: shown by ptlctl as the NI's owner; NULL: the client module's name
 */
struct ptl_kni_config {
	u32 version;
	u32 iface;
	ptl_pid_t pid;
	ptl_jid_t jid;
	struct net *net;
	const ptl_ni_limits_t *desired;
	const char *name;
};

int __ptl_kni_init(const struct ptl_kni_config *cfg, struct module *owner,
		   struct ptl_kni **out);

/**
 * ptl_kni_init - open a network interface for a kernel client
 * @cfg: what to open
 * @out: the NI
 *
 * Unlike PtlNIInit, every call makes a new NI (a client may hold several
 * pids on one interface). The NI is recorded as belonging to the calling
 * module (THIS_MODULE).
 *
 * Return: PTL_OK; PTL_FAIL for a wrong @cfg->version or a @cfg->jid of
 * PTL_JID_ANY; PTL_IFACE_INVALID for an interface that does not exist;
 * PTL_PID_INVALID for a pid out of range or held; PTL_NO_SPACE without
 * memory; PTL_SEGV for a NULL @cfg or @out.
 */
#define ptl_kni_init(cfg, out)	__ptl_kni_init(cfg, THIS_MODULE, out)

/**
 * ptl_kni_fini - close a network interface
 * @ni: the NI; gone when this returns
 *
 * Frees every ME, MD and EQ of @ni, waits for its messages in flight to
 * end and for running handlers to return, and releases its pid. No
 * handler of @ni runs after this returns.
 *
 * Return: PTL_OK, or PTL_NI_INVALID for NULL.
 */
int ptl_kni_fini(struct ptl_kni *ni);

/**
 * ptl_kni_limits - the limits in force on an NI
 * @ni: the NI
 * @actual: filled
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_SEGV.
 */
int ptl_kni_limits(struct ptl_kni *ni, ptl_ni_limits_t *actual);

/**
 * ptl_kni_identity - PtlGetId, PtlGetUid and PtlGetJid in one
 * @ni: the NI
 * @id: filled with its nid and pid, if not NULL
 * @uid: filled with its uid (0), if not NULL
 * @jid: filled with its job id, if not NULL
 *
 * Return: PTL_OK or PTL_NI_INVALID.
 */
int ptl_kni_identity(struct ptl_kni *ni, ptl_process_id_t *id,
		     ptl_uid_t *uid, ptl_jid_t *jid);

/**
 * ptl_kni_status - PtlNIStatus: read a status register
 * @ni: the NI
 * @reg: PTL_SR_* index
 * @value: filled
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_SEGV, PTL_SR_INDEX_INVALID.
 */
int ptl_kni_status(struct ptl_kni *ni, ptl_sr_index_t reg,
		   ptl_sr_value_t *value);

/**
 * ptl_kni_dist - PtlNIDist: how far a process is
 * @ni: the NI
 * @id: the process
 * @distance: 0 on this node, 1 on another
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_SEGV, PTL_PROCESS_INVALID for
 * PTL_NID_ANY.
 */
int ptl_kni_dist(struct ptl_kni *ni, ptl_process_id_t id,
		 unsigned long *distance);

/**
 * ptl_kac_entry - PtlACEntry: set an access-control entry
 * @ni: the NI
 * @ac_index: the entry
 * @match_id: initiators admitted (PTL_NID_ANY / PTL_PID_ANY wildcards)
 * @uid: uid admitted, or PTL_UID_ANY
 * @jid: job admitted, or PTL_JID_ANY
 * @pt_index: portal admitted, or PTL_PT_INDEX_ANY
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_AC_INDEX_INVALID,
 * PTL_PT_INDEX_INVALID.
 */
int ptl_kac_entry(struct ptl_kni *ni, ptl_ac_index_t ac_index,
		  ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
		  ptl_pt_index_t pt_index);

/* ---- match entries ---- */

/**
 * ptl_kme_attach - PtlMEAttach: add a match entry to a portal's list
 * @ni: the NI
 * @pt_index: the portal
 * @match_id: initiators it matches (wildcards allowed)
 * @match_bits: bits to match ...
 * @ignore_bits: ... except these
 * @unlink: PTL_UNLINK: unlink it when its MD unlinks; or PTL_RETAIN
 * @pos: PTL_INS_AFTER (end of the list) or PTL_INS_BEFORE (start)
 * @me: filled with its handle
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_PT_INDEX_INVALID, PTL_PROCESS_INVALID,
 * PTL_ME_LIST_TOO_LONG, PTL_NO_SPACE, PTL_SEGV, PTL_FAIL for a bad
 * @unlink or @pos.
 */
int ptl_kme_attach(struct ptl_kni *ni, ptl_pt_index_t pt_index,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *me);

/**
 * ptl_kme_attach_any - PtlMEAttachAny: attach to any free portal
 * @ni: the NI
 * @pt_index: filled with the portal chosen
 * @match_id: as ptl_kme_attach()
 * @match_bits: as ptl_kme_attach()
 * @ignore_bits: as ptl_kme_attach()
 * @unlink: as ptl_kme_attach()
 * @me: filled with its handle
 *
 * Return: as ptl_kme_attach(), and PTL_PT_FULL if no portal is free.
 */
int ptl_kme_attach_any(struct ptl_kni *ni, ptl_pt_index_t *pt_index,
		       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		       ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		       ptl_handle_me_t *me);

/**
 * ptl_kme_insert - PtlMEInsert: add a match entry next to another
 * @ni: the NI
 * @base: the entry to insert before or after
 * @match_id: as ptl_kme_attach()
 * @match_bits: as ptl_kme_attach()
 * @ignore_bits: as ptl_kme_attach()
 * @unlink: as ptl_kme_attach()
 * @pos: PTL_INS_BEFORE or PTL_INS_AFTER @base
 * @me: filled with its handle
 *
 * Return: as ptl_kme_attach(), and PTL_ME_INVALID for a bad @base.
 */
int ptl_kme_insert(struct ptl_kni *ni, ptl_handle_me_t base,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *me);

/**
 * ptl_kme_unlink - PtlMEUnlink: remove a match entry and its MD
 * @ni: the NI
 * @me: the entry
 *
 * The attached MD goes too, whatever its unlink option (contract 13); its
 * memory is the client's again when this returns PTL_OK. No UNLINK event
 * is posted for it. An entry whose MD reached its threshold is already
 * unlinked (PTL_ME_INVALID) while the message that used it may still be
 * running: its memory is the client's after that MD's UNLINK event.
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_ME_INVALID, PTL_ME_IN_USE (a message
 * is using its MD: try again after its END event).
 */
int ptl_kme_unlink(struct ptl_kni *ni, ptl_handle_me_t me);

/* ---- memory descriptors ---- */

/* ptl_kmd.type */
enum ptl_kmd_type {
	PTL_KMD_KVEC = 1,	/* @kvec: kernel virtual addresses */
	PTL_KMD_BVEC = 2,	/* @bvec: pages, offsets, lengths */
};

/**
 * struct ptl_kmd - a memory descriptor over kernel memory (ptl_md_t)
 * @type: PTL_KMD_KVEC or PTL_KMD_BVEC
 * @nr_segs: entries in the array (0: an empty MD, contract 15), at most
 *	the NI's max_md_iovecs
 * @kvec: the array, for PTL_KMD_KVEC
 * @bvec: the array, for PTL_KMD_BVEC (a multi-page entry, bv_offset +
 *	bv_len past PAGE_SIZE, covers the pages that follow bv_page, as in a
 *	bio)
 * @threshold: operations it accepts before it is inactive, or
 *	PTL_MD_THRESH_INF
 * @max_size: with PTL_MD_MAX_SIZE
 * @options: PTL_MD_* (PTL_MD_IOVEC is implied and may be given)
 * @user_ptr: passed back in its events
 * @eq_handle: its EQ, or PTL_EQ_NONE
 *
 * The arrays are read at attach, bind and update only: the client may
 * reuse them afterwards. Events show the MD as a ptl_md_t whose start is
 * the array's address, length @nr_segs and options include PTL_MD_IOVEC.
 * Offsets in an MD run over its entries in order, as in an iovec MD.
 */
struct ptl_kmd {
	u32 type;
	u32 nr_segs;
	union {
		const struct kvec *kvec;
		const struct bio_vec *bvec;
	};
	int threshold;
	ptl_size_t max_size;
	unsigned int options;
	void *user_ptr;
	ptl_handle_eq_t eq_handle;
};

/**
 * ptl_kmd_attach - PtlMDAttach: give a match entry its memory
 * @ni: the NI
 * @me: the match entry (which must have no MD)
 * @md: the description
 * @unlink: PTL_UNLINK: unlink when its threshold reaches 0; or PTL_RETAIN
 * @out: filled with the MD's handle
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_ME_INVALID, PTL_ME_IN_USE (it has an
 * MD), PTL_MD_ILLEGAL (bad type, unknown options, too many entries, an
 * entry with no memory behind it), PTL_EQ_INVALID, PTL_NO_SPACE, PTL_SEGV.
 */
int ptl_kmd_attach(struct ptl_kni *ni, ptl_handle_me_t me,
		   const struct ptl_kmd *md, ptl_unlink_t unlink,
		   ptl_handle_md_t *out);

/**
 * ptl_kmd_bind - PtlMDBind: a free-floating MD (to put from, get into)
 * @ni: the NI
 * @md: the description
 * @unlink: as ptl_kmd_attach()
 * @out: filled with the MD's handle
 *
 * Return: as ptl_kmd_attach() without the ME codes.
 */
int ptl_kmd_bind(struct ptl_kni *ni, const struct ptl_kmd *md,
		 ptl_unlink_t unlink, ptl_handle_md_t *out);

/**
 * ptl_kmd_unlink - PtlMDUnlink
 * @ni: the NI
 * @md: the MD; its memory is the client's again when this returns PTL_OK
 *
 * No UNLINK event is posted for it.
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_MD_INVALID, PTL_MD_IN_USE (a message
 * is using it: try again after its END event).
 */
int ptl_kmd_unlink(struct ptl_kni *ni, ptl_handle_md_t md);

/**
 * ptl_kmd_update - PtlMDUpdate
 * @ni: the NI
 * @md: the MD
 * @old: filled with its current description, if not NULL (also when the
 *	update is refused)
 * @new_md: its new description, or NULL to only read
 * @eq: PTL_EQ_NONE: update unconditionally; else only if this EQ (a
 *	drained one; a callback EQ is always empty) holds no event its
 *	reader has not taken
 *
 * The old memory is the client's again when this returns PTL_OK with a
 * @new_md.
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_MD_INVALID, PTL_MD_ILLEGAL,
 * PTL_EQ_INVALID, PTL_MD_NO_UPDATE (not empty, or an operation is using
 * the MD), PTL_NO_SPACE.
 */
int ptl_kmd_update(struct ptl_kni *ni, ptl_handle_md_t md, ptl_md_t *old,
		   const struct ptl_kmd *new_md, ptl_handle_eq_t eq);

/* ---- event queues ---- */

/**
 * typedef ptl_keq_handler_t - called for every event of a callback EQ
 * @priv: what the client gave ptl_keq_alloc()
 * @ev: the event, valid during the call only
 *
 * See "Handlers" at the top for the context and what it may not do.
 */
typedef void (*ptl_keq_handler_t)(void *priv, const ptl_event_t *ev);

/**
 * ptl_keq_alloc - PtlEQAlloc
 * @ni: the NI
 * @count: events the EQ holds (a drained EQ; rounded up to a power of
 *	two); 0 returns PTL_OK and PTL_EQ_NONE (contract 16). A callback EQ
 *	holds nothing: any count > 0 will do.
 * @handler: the handler of a callback EQ, or NULL for a drained EQ
 * @priv: its first argument
 * @out: filled with the EQ's handle
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_NO_SPACE, PTL_SEGV.
 */
int ptl_keq_alloc(struct ptl_kni *ni, ptl_size_t count,
		  ptl_keq_handler_t handler, void *priv,
		  ptl_handle_eq_t *out);

/**
 * ptl_keq_free - PtlEQFree
 * @ni: the NI
 * @eq: the EQ
 *
 * MDs that still name @eq post nothing afterwards (contract 14). Its
 * handler is not running and is never called again when this returns.
 * Must not race ptl_keq_get() or ptl_keq_wait() on the same EQ.
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_EQ_INVALID.
 */
int ptl_keq_free(struct ptl_kni *ni, ptl_handle_eq_t eq);

/**
 * ptl_keq_get - PtlEQGet: take the next event of a drained EQ
 * @ni: the NI
 * @eq: the EQ
 * @ev: filled with the event
 *
 * Never sleeps; process or softirq context. Concurrent readers of one EQ
 * each get different events.
 *
 * Return: PTL_OK; PTL_EQ_DROPPED (the EQ overflowed: @ev is the oldest
 * event still held, contract 10); PTL_EQ_EMPTY; PTL_NI_INVALID;
 * PTL_EQ_INVALID (also for a callback EQ); PTL_SEGV.
 */
int ptl_keq_get(struct ptl_kni *ni, ptl_handle_eq_t eq, ptl_event_t *ev);

/**
 * ptl_keq_wait - PtlEQWait with a timeout: the next event, sleeping
 * @ni: the NI
 * @eq: the EQ
 * @ev: filled with the event
 * @timeout_ms: how long to wait; PTL_TIME_FOREVER: until an event comes
 *
 * Sleeps (killable) until an event is there. A fatal signal ends the wait
 * as a timeout does.
 *
 * Return: as ptl_keq_get(); PTL_EQ_EMPTY after the timeout.
 */
int ptl_keq_wait(struct ptl_kni *ni, ptl_handle_eq_t eq, ptl_event_t *ev,
		 ptl_time_t timeout_ms);

/* ---- data movement ---- */

/**
 * ptl_kput - PtlPut: send the whole of an MD
 * @ni: the NI
 * @md: the MD (bound or attached)
 * @ack: PTL_ACK_REQ or PTL_NO_ACK_REQ
 * @target: destination process (this node's nid: intra-node)
 * @pt_index: portal at the target
 * @ac_index: access-control entry at the target
 * @match_bits: bits the target matches
 * @remote_offset: offset at the target (MANAGE_REMOTE MDs)
 * @hdr_data: 64 bits delivered with the events at the target
 *
 * PTL_OK means initiated: the outcome arrives as events (SEND_END with
 * ni_fail_type PTL_NI_FAIL when the network gave up). Intra-node
 * operations complete, with all their events, before this returns.
 *
 * Return: PTL_OK, PTL_NI_INVALID, PTL_MD_INVALID, PTL_MD_ILLEGAL,
 * PTL_PROCESS_INVALID, PTL_NO_SPACE, PTL_FAIL for a bad @ack.
 */
int ptl_kput(struct ptl_kni *ni, ptl_handle_md_t md, ptl_ack_req_t ack,
	     ptl_process_id_t target, ptl_pt_index_t pt_index,
	     ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	     ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);

/**
 * ptl_kput_region - PtlPutRegion: send part of an MD
 * @ni: the NI
 * @md: the MD
 * @local_offset: first byte of the MD to send
 * @length: bytes to send
 * @ack: as ptl_kput()
 * @target: as ptl_kput()
 * @pt_index: as ptl_kput()
 * @ac_index: as ptl_kput()
 * @match_bits: as ptl_kput()
 * @remote_offset: as ptl_kput()
 * @hdr_data: as ptl_kput()
 *
 * Return: as ptl_kput(); PTL_MD_ILLEGAL when the region leaves the MD.
 */
int ptl_kput_region(struct ptl_kni *ni, ptl_handle_md_t md,
		    ptl_size_t local_offset, ptl_size_t length,
		    ptl_ack_req_t ack, ptl_process_id_t target,
		    ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		    ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		    ptl_hdr_data_t hdr_data);

/**
 * ptl_kget - PtlGet: fetch into the whole of an MD
 * @ni: the NI
 * @md: the MD the reply lands in
 * @target: as ptl_kput()
 * @pt_index: as ptl_kput()
 * @ac_index: as ptl_kput()
 * @match_bits: as ptl_kput()
 * @remote_offset: as ptl_kput()
 *
 * The data has landed when REPLY_END is posted on @md's EQ.
 *
 * Return: as ptl_kput() (without the @ack code).
 */
int ptl_kget(struct ptl_kni *ni, ptl_handle_md_t md, ptl_process_id_t target,
	     ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
	     ptl_match_bits_t match_bits, ptl_size_t remote_offset);

/**
 * ptl_kget_region - PtlGetRegion: fetch into part of an MD
 * @ni: the NI
 * @md: the MD
 * @local_offset: where in the MD the reply lands
 * @length: bytes to fetch
 * @target: as ptl_kput()
 * @pt_index: as ptl_kput()
 * @ac_index: as ptl_kput()
 * @match_bits: as ptl_kput()
 * @remote_offset: as ptl_kput()
 *
 * Return: as ptl_kget(); PTL_MD_ILLEGAL when the region leaves the MD.
 */
int ptl_kget_region(struct ptl_kni *ni, ptl_handle_md_t md,
		    ptl_size_t local_offset, ptl_size_t length,
		    ptl_process_id_t target, ptl_pt_index_t pt_index,
		    ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		    ptl_size_t remote_offset);

/**
 * ptl_kgetput - PtlGetPut: atomically swap bytes at the target
 * @ni: the NI
 * @get_md: receives the target's old bytes
 * @put_md: the new bytes (at most the NI's max_getput_md)
 * @target: as ptl_kput()
 * @pt_index: as ptl_kput()
 * @ac_index: as ptl_kput()
 * @match_bits: as ptl_kput()
 * @remote_offset: as ptl_kput()
 * @hdr_data: as ptl_kput()
 *
 * Return: as ptl_kput(); PTL_MD_ILLEGAL for a @put_md that is too long or
 * MDs of different NIs.
 */
int ptl_kgetput(struct ptl_kni *ni, ptl_handle_md_t get_md,
		ptl_handle_md_t put_md, ptl_process_id_t target,
		ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		ptl_hdr_data_t hdr_data);

#endif /* PTL_KAPI_H */
