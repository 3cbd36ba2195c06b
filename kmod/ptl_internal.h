/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl.ko internals shared between the files of the module. The Portals
 * semantics live in core/; this is the kernel glue around it.
 *
 * Objects and lifetimes
 *
 *   struct ptl_file   one open of /dev/portals (one process's library).
 *                     Holds its NIs in an RCU-published slot table.
 *   struct ptl_ni     one NI. kref: one for being published in the file,
 *                     one per ioctl working on it, one per intra-node
 *                     sender delivering to it. The last put destroys the
 *                     core NI (every MD, ME, EQ), releases the pid and
 *                     frees the struct after an RCU grace period. Under
 *                     RCU alone only the struct itself may be read, never
 *                     ni->core (freed at the last put, not RCU-deferred):
 *                     lookups compare the cached ni->handle, then take a
 *                     reference before anything touches the core.
 *   struct ptl_wake   the file's wait queue (EQ_WAIT and poll). Shared by
 *                     the file and its NIs (kref), because a sender in
 *                     another process wakes it holding only an NI
 *                     reference, and epoll keeps entries on it as long as
 *                     the file lives.
 *   struct ptl_eq_mem the ring and control page of one EQ. kref: one for
 *                     the NI's mmap table entry (dropped at PtlEQFree or NI
 *                     teardown, after the core stopped writing), one per
 *                     VMA mapping it. Freed when the last goes. Its
 *                     pages are charged to the creator's pinned_vm.
 *   struct ptl_mem    the pinned pages of one MD. Owned by the core MD
 *                     once attached; the md_release hook (atomic context,
 *                     NI lock held) returns its pages to the pin cache.
 *   struct ptl_pincache  one process's (mm's) pinned ranges, struct
 *                     ptl_pin, shared by its MDs and cached after them
 *                     (ptl_pincache.c). Users: its NIs (ni->pincache).
 *
 * Locking, outermost first
 *
 *   ptl_file.lock (mutex)   NI creation, PtlNIFini, SET_JID, release.
 *   RCU                     NI lookups by slot (file table) and by pid
 *                           (interface xarray), then kref_get_unless_zero.
 *   ptlc_ni.lock (core, spin_lock_bh)
 *                           taken by every core entry point; never held by
 *                           the glue. The core calls md_release and
 *                           eq_notify with it held: they only queue work,
 *                           bump counters, trace, wake, free memory and
 *                           take a pin cache's lock (irqsave, innermost).
 *   ptl_ni.swap_lock (spin_lock_bh)
 *                           serialises getput swaps on one target NI; no
 *                           other lock is taken inside it.
 *   wait queue lock         inside wake_up (from eq_notify).
 * Nothing here holds two NI locks at once: intra-node delivery calls the
 * initiator's core, then the target's, one after the other.
 */
#ifndef PTL_INTERNAL_H
#define PTL_INTERNAL_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/netdevice.h>

#include <linux/portals.h>
#include <p3api/types.h>
#include <p3/errno.h>
#include <p3/nal_types.h>

struct ptlc_ni;
struct ptl_xfer;
struct ptlc_md;
struct ptlc_md_spec;
struct ptlc_ops;
struct ptlc_seg;
struct ptlc_msg;
struct file;
struct net;
struct netlink_ext_ack;
struct sk_buff;
struct mm_struct;
struct page;
struct vm_area_struct;

struct ptl_net;
struct ptl_transport;
struct ptl_kni;
struct ptl_pincache;
struct ptl_pin;

/* Message counters of an interface's traffic with other nodes. */
struct ptl_iface_stats {
	atomic64_t msgs_tx;		/* requests and responses handed over */
	atomic64_t msgs_rx;		/* headers that matched */
	atomic64_t msgs_failed;		/* ended with PTL_NI_FAIL */
	atomic64_t drops;		/* headers dropped (any reason) */
	atomic64_t late_responses;	/* ACK/REPLY to a gone/recycled MD */
};

/*
 * A Portals interface of a node (a network namespace, ptl_iface.c).
 * Interface n answers to the NAL type PTL_NALTYPE_LINUX0 + n. Its pid
 * space is node-wide: a pid held by one process cannot be taken by another
 * until released (contract 2).
 */
struct ptl_iface {
	struct ptl_net *pn;
	u32 index;
	u32 nid;		/* changes only with no NI open (pn->lock) */
	bool configured;	/* interface 0, or bound once */
	atomic_t nis;		/* NIs open on it */
	struct xarray pids;	/* pid -> owning ptl_ni (for delivery) */
	struct list_head pidres;	/* reserved pid ranges */
	struct ptl_binding __rcu *binding;	/* RTNL; NULL: intra-node */
	struct ptl_iface_stats stats;
};

/* The Portals instance of one network namespace. */
struct ptl_net {
	struct net *net;
	struct mutex lock;	/* nids, NI counts, pid reservations */
	struct ptl_iface ifaces[PTL_MAX_INTERFACES];
};

/*
 * An interface bound to a network device through a transport
 * (ptl_transport.c). users: one for being published, one per sender
 * inside ops->send; idle completes when the last goes after unbinding.
 */
struct ptl_binding {
	struct ptl_iface *iface;
	struct ptl_transport *t;	/* its module referenced */
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	void *priv;			/* the transport's */
	refcount_t users;
	struct completion idle;
	struct rcu_head rcu;
};

/* What one user holds in ptl.ko, shared by its files (ptl_user.c). */
struct ptl_user {
	refcount_t ref;
	kuid_t uid;
	atomic_long_t nis;	/* NIs, i.e. pids held */
	atomic_long_t kmem;	/* bytes of Portals objects */
};

/* Whom an object is accounted to; user NULL: the kernel's own. */
struct ptl_acct {
	struct ptl_user *user;	/* referenced */
	bool capped;		/* the opener lacked CAP_SYS_RESOURCE */
};

/* The wait queue of one open file; see "Objects and lifetimes". */
struct ptl_wake {
	struct kref ref;
	wait_queue_head_t wq;
};

/*
 * One process's network interface (what a ptl_handle_ni_t names): the
 * core's NI plus what the kernel needs around it.
 */
struct ptl_ni {
	struct kref ref;
	struct rcu_head rcu;
	struct work_struct release_work;	/* last put from atomic context */
	struct ptl_iface *iface;
	struct ptlc_ni *core;	/* freed at the last put: never under RCU */
	ptl_handle_ni_t handle;	/* of the core NI, for lookups under RCU */
	struct ptl_wake *wake;
	struct ptl_acct acct;	/* its owner's, for the core's charges */
	spinlock_t swap_lock;	/* getput atomicity on this target */
	struct xarray eq_maps;	/* mmap id -> struct ptl_eq_mem */
	struct ptl_xfer *spare_xfer;	/* reused by data calls, see ptl_move.c */
	bool active;		/* false: senders and waiters skip it */
	atomic_t incoming;	/* messages from other nodes not yet done */
	u32 slot;
	u32 nid;		/* the interface's when it was created */
	u32 pid;
	struct pid *owner;	/* the creating process, for ptlctl */
	char comm[TASK_COMM_LEN];
	struct ptl_kni *kni;	/* a kernel client's NI (ptl_kapi.c) */
	struct ptl_pincache *pincache;	/* its MDs' pins (ptl_pincache.c) */
	struct ptl_mem *spare_mem;	/* a freed one-segment MD's, for reuse */
};

/* What ptl_ni_new() builds an NI from. */
struct ptl_ni_params {
	struct ptl_iface *iface;
	u32 pid;			/* or PTL_PID_ANY */
	const struct ptl_acct *acct;	/* its owner's caps */
	kuid_t uid;
	u32 jid;
	bool trusted;			/* a kernel client (pid reservations) */
	const ptl_ni_limits_t *desired;	/* or NULL */
	const struct ptlc_ops *ops;
	struct ptl_wake *wake;		/* referenced by the NI */
};

/*
 * State of one open of /dev/portals: the Portals library instance of one
 * process. NI pointers are published with RCU so the data path can look
 * them up without the mutex; the mutex serialises creation and teardown.
 */
struct ptl_file {
	struct mutex lock;
	struct net *net;	/* where it was opened: its Portals node */
	struct ptl_net *pn;
	struct ptl_ni __rcu *ni[PTL_MAX_INTERFACES];
	struct ptl_wake *wake;
	struct ptl_acct acct;	/* the opener's caps (ptl_user.c) */
	kuid_t euid;		/* credentials at open time */
	u32 jid;		/* from PTL_IOC_SET_JID */
	bool jid_set;
};

/* The pinned pages of one MD segment, inside struct ptl_mem. */
struct ptl_mem_seg {
	struct page **pages;	/* its first page's pointer */
	struct ptl_pin *pin;	/* where they are from; NULL: kernel memory */
	unsigned long first;	/* index of its first page in mem->pages */
	unsigned long npages;
	unsigned int page_off;	/* offset of its start in the first page */
};

/* Pinned memory of one MD (ptl_mem.c). */
struct ptl_mem {
	struct llist_node free_node;
	struct ptl_acct acct;		/* max_user_kmem is charged here */
	size_t kmem;			/* ... this many bytes */
	struct page **pages;		/* kernel memory's; NULL: pin cache's */
	unsigned long npages;
	bool writable;			/* data may land (see ptl_mem.c) */
	bool written;			/* dirty the pages when unpinning */
	bool kernel;			/* a kernel client's: not pinned */
	bool returned;			/* pages back to the pin cache */
	unsigned int nsegs;
	struct ptl_mem_seg segs[];
};

/* The memory of one EQ (ptl_eq.c). */
struct ptl_eq_mem {
	struct kref ref;
	struct rcu_head rcu;
	ptl_event_t *ring;		/* vmalloc_user, mapped read-only */
	struct ptl_eq_ctl *ctl;		/* vmalloc_user page, mapped rw */
	size_t ring_bytes;
	struct mm_struct *mm;		/* grabbed: pinned_vm is charged here */
	unsigned long charged;		/* pages charged (ring + control) */
	u32 nslots;
	u32 id;				/* key in ptl_ni.eq_maps */
	ptl_handle_eq_t handle;
	u32 posted;			/* events written (under NI lock) */
	bool freed;			/* PtlEQFree'd: waiters find it invalid */
	u32 nid, pid;			/* of its NI, for tracing */
};

/* ptl_user.c */
void ptl_users_init(void);
void ptl_users_exit(void);
int ptl_acct_init(struct ptl_acct *acct, const struct file *file);
void ptl_acct_copy(struct ptl_acct *dst, const struct ptl_acct *src);
void ptl_acct_release(struct ptl_acct *acct);
bool ptl_user_charge_kmem(const struct ptl_acct *acct, long bytes);
bool ptl_user_add_ni(const struct ptl_acct *acct);
void ptl_user_del_ni(const struct ptl_acct *acct);

/* ptl_iface.c */
int ptl_ifaces_init(u32 default_nid);
void ptl_ifaces_exit(void);
struct ptl_net *ptl_net(const struct net *net);
struct ptl_iface *ptl_iface_get(struct ptl_net *pn, u32 index);
int ptl_iface_claim_pid(struct ptl_iface *iface, u32 pid, struct ptl_ni *ni,
			kuid_t uid, bool trusted, u32 *out_pid);
void ptl_iface_release_pid(struct ptl_iface *iface, u32 pid);
struct ptl_ni *ptl_iface_find_ni(struct ptl_iface *iface, u32 pid);
int ptl_iface_reserve_pids(struct ptl_iface *iface, u32 first, u32 last,
			   kuid_t uid);
int ptl_iface_unreserve_pids(struct ptl_iface *iface, u32 first);
bool ptl_iface_pidres_at(struct ptl_iface *iface, int idx, u32 *first,
			 u32 *last, kuid_t *uid);

/* ptl_transport.c */
struct ptl_bind_config;
int ptl_transport_init(void);
void ptl_transport_exit(void);
struct ptl_binding *ptl_binding_get(struct ptl_iface *iface);
void ptl_binding_put(struct ptl_binding *b);
int ptl_bind(struct ptl_iface *iface, struct net_device *dev,
	     const char *name, struct ptl_bind_config *cfg,
	     struct netlink_ext_ack *extack);
int ptl_unbind(struct ptl_iface *iface);
int ptl_iface_set_nid(struct ptl_iface *iface, u32 nid,
		      struct netlink_ext_ack *extack);

/* ptl_remote.c: messages to and from other nodes */
int ptl_remote_init(void);
void ptl_remote_exit(void);
void ptl_remote_ni_closing(struct ptl_ni *ni);

/* ptl_netlink.c */
int ptl_netlink_init(void);
void ptl_netlink_exit(void);
void ptl_netlink_peer_event(struct ptl_iface *iface, u32 nid, u8 event,
			    u32 incarnation, u32 failed);

/* ptl_ni.c */
int ptl_ni_new(const struct ptl_ni_params *p, struct ptl_ni **out);
long ptl_ioctl_ni_init(struct ptl_file *pf, void *arg);
long ptl_ioctl_ni_fini(struct ptl_file *pf, void *arg);
long ptl_ioctl_ni_identity(struct ptl_file *pf, void *arg);
long ptl_ioctl_set_jid(struct ptl_file *pf, void *arg);
struct ptl_ni *ptl_ni_lookup(struct ptl_file *pf, ptl_handle_ni_t handle);
struct ptl_ni *ptl_ni_lookup_any(struct ptl_file *pf, ptl_handle_any_t h);
void ptl_ni_put(struct ptl_ni *ni);

/*
 * A reference on @ni, found under RCU in a pid table, if it is active: an
 * NI holds its pid before its core exists (ptl_ni_new()) and keeps it a
 * while after it stops (ptl_ni_unpublish()).
 */
static inline bool ptl_ni_tryget_active(struct ptl_ni *ni)
{
	/* Pairs with the release that sets it once ni->core is set. */
	return smp_load_acquire(&ni->active) && kref_get_unless_zero(&ni->ref);
}
void ptl_ni_put_async(struct ptl_ni *ni);
void ptl_ni_flush_releases(void);
int ptl_ni_init(void);
void ptl_ni_exit(void);
void ptl_ni_for_each(struct ptl_net *pn,
		     int (*fn)(void *arg, struct ptl_ni *ni), void *arg,
		     long skip, long *visited);
void ptl_file_release_nis(struct ptl_file *pf);
struct ptl_wake *ptl_wake_alloc(void);
void ptl_wake_put(struct ptl_wake *wake);

/* ptl_obj.c: status, distance, handles, MEs, MDs, ACL */
long ptl_ioctl_ni_status(struct ptl_file *pf, void *arg);
long ptl_ioctl_ni_dist(struct ptl_file *pf, void *arg);
long ptl_ioctl_handle_ni(struct ptl_file *pf, void *arg);
long ptl_ioctl_me_attach(struct ptl_file *pf, void *arg);
long ptl_ioctl_me_unlink(struct ptl_file *pf, void *arg);
long ptl_ioctl_md_attach(struct ptl_file *pf, void *arg);
long ptl_ioctl_md_unlink(struct ptl_file *pf, void *arg);
long ptl_ioctl_md_update(struct ptl_file *pf, void *arg);
long ptl_ioctl_ac_entry(struct ptl_file *pf, void *arg);
void ptl_undo_me_attach(struct ptl_file *pf, void *arg);
void ptl_undo_md_attach(struct ptl_file *pf, void *arg);
long ptl_ioctl_me_post(struct ptl_file *pf, void *arg);
void ptl_undo_me_post(struct ptl_file *pf, void *arg);

/* ptl_mem.c */
int ptl_mem_pin(struct ptl_ni *ni, const struct ptl_ioc_md *umd,
		struct ptlc_md_spec *spec);
void ptl_mem_spec_done(struct ptlc_md_spec *spec);
struct ptl_mem *ptl_mem_alloc(const struct ptlc_seg *segs, unsigned int nsegs);
void ptl_mem_release(struct ptl_mem *mem);
void ptl_md_release_hook(void *glue, void *mem);
bool ptl_mem_reusable_hook(void *glue, void *mem, const ptl_md_t *desc);
bool ptl_mem_reuse_spec(const struct ptl_ioc_md *umd,
			struct ptlc_md_spec *spec);
void ptl_mem_flush(void);
void ptl_mem_ni_release(struct ptl_ni *ni);

/* ptl_gup.c */
int ptl_gup_pin_range(unsigned long addr, unsigned long npages,
		      bool must_write, struct page **pages, bool *writable);
bool ptl_gup_charge(struct mm_struct *mm, unsigned long npages);
void ptl_gup_uncharge(struct mm_struct *mm, unsigned long npages);

/* ptl_copy.c */
int ptl_mem_copy(struct ptlc_md *dst, u64 dst_off, struct ptlc_md *src,
		 u64 src_off, u64 len);
int ptl_mem_to_buf(void *buf, struct ptlc_md *src, u64 off, u64 len);
int ptl_mem_from_buf(struct ptlc_md *dst, u64 off, const void *buf, u64 len);
int ptl_mem_frags(struct ptlc_md *md, u64 off, u64 len, struct sk_buff *skb);
int ptl_mem_sg(struct ptlc_md *md, u64 off, u64 len, struct scatterlist *sgl,
	       unsigned int nents, bool to_md);
int ptl_mem_from_skb(struct ptlc_md *dst, u64 off, const struct sk_buff *skb,
		     int skb_off, u64 len);

/* ptl_pincache.c */
struct ptl_pincache *ptl_pincache_of(struct ptl_ni *ni);
void ptl_pincache_ni_release(struct ptl_ni *ni);
bool ptl_pincache_charge(struct mm_struct *mm, unsigned long npages);
void ptl_pincache_flush(void);
void ptl_pincache_exit(void);
int ptl_pin_get(struct ptl_pincache *pc, unsigned long start,
		unsigned long npages, bool must_write, struct ptl_pin **out);
struct page **ptl_pin_pages(struct ptl_pin *p, unsigned long addr);
bool ptl_pin_writable(const struct ptl_pin *p);
bool ptl_pin_current(struct ptl_pin *p);
void ptl_pin_put(struct ptl_pin *p, bool written);

/* ptl_eq.c */
long ptl_ioctl_eq_alloc(struct ptl_file *pf, void *arg);
long ptl_ioctl_eq_free(struct ptl_file *pf, void *arg);
long ptl_ioctl_eq_wait(struct ptl_file *pf, void *arg);
void ptl_undo_eq_alloc(struct ptl_file *pf, void *arg);
void ptl_eq_notify(void *glue, void *eq_priv);
void ptl_eq_ni_teardown(struct ptl_ni *ni);
int ptl_eq_mmap(struct ptl_file *pf, struct vm_area_struct *vma);
__poll_t ptl_eq_poll(struct ptl_file *pf);

/* ptl_data.c */
long ptl_ioctl_data(struct ptl_file *pf, void *arg);

/* ptl_move.c */
void ptl_move_ni_release(struct ptl_ni *ni);
int ptl_move_init(void);
void ptl_move_exit(void);

/* ptl_kapi.c, ptl_kapi_eq.c, ptl_kmem.c: the API for kernel clients */
int ptl_kapi_init(void);
void ptl_kapi_exit(void);
void ptl_kapi_ni_release(struct ptl_ni *ni);

/* ptl_stats.c: module-wide counters, shown in sysfs */
struct ptl_stats {
	atomic_long_t pinned_pages;	/* by pin cache entries */
	atomic_long_t open_files;
	atomic_long_t nis;
	atomic_long_t mds;		/* live struct ptl_mem */
	atomic_long_t eqs;		/* live struct ptl_eq_mem */
	atomic_long_t intra_msgs;	/* intra-node messages delivered */
	atomic_long_t drops;		/* messages dropped by a target */
	atomic_long_t pincache_hits;	/* MD segments on cached pins */
	atomic_long_t pincache_misses;	/* ... that had to pin */
	atomic_long_t pincache_invalidations;	/* cached ranges made stale */
	atomic_long_t pincache_evictions;	/* unused ones unpinned early */
	atomic_long_t pincache_cached_pages;	/* pinned, cached, unused */
};

extern struct ptl_stats ptl_stats;
extern const struct attribute_group *ptl_attr_groups[];

/* ptl_dev.c */
int ptl_dev_init(void);
void ptl_dev_exit(void);
long ptl_dev_call_user(struct ptl_file *pf, unsigned int cmd,
		       void __user *argp);
long ptl_dev_call_inline(struct ptl_file *pf, unsigned int cmd,
			 const void *buf, u32 len);

/* ptl_uring.c: io_uring commands on /dev/portals */
struct io_uring_cmd;
int ptl_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

#endif /* PTL_INTERNAL_H */
