// SPDX-License-Identifier: GPL-2.0
/*
 * The object calls: PtlNIStatus, PtlNIDist, PtlNIHandle, PtlMEAttach[Any],
 * PtlMEInsert, PtlMEUnlink, PtlMDAttach, PtlMDBind, PtlMDUnlink,
 * PtlMDUpdate and PtlACEntry.
 *
 * Each looks up the NI named by the handle's slot in the calling file's
 * table (a handle of another process is simply not found there), takes a
 * reference for the duration of the call and lets the core validate the
 * object handle (type and generation). MD regions are pinned here, before
 * the core sees them (ptl_mem.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

long ptl_ioctl_ni_status(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_ni_status *args = arg;
	ptl_sr_value_t v = 0;
	struct ptl_ni *ni;
	long rc;

	ni = ptl_ni_lookup(pf, args->ni_handle);
	if (!ni)
		return PTL_NI_INVALID;
	rc = ptlc_ni_status(ni->core, args->reg, &v);
	args->value = v;
	ptl_ni_put(ni);
	return rc;
}

/*
 * PtlNIDist: 0 for a process on this node (intra-node delivery, one
 * copy), 1 for any other nid of the interface's network (one hop through
 * the transport). PTL_NID_ANY names no process.
 */
long ptl_ioctl_ni_dist(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_ni_dist *args = arg;
	struct ptl_ni *ni;
	long rc = PTL_OK;

	if (args->reserved)
		return -EINVAL;
	ni = ptl_ni_lookup(pf, args->ni_handle);
	if (!ni)
		return PTL_NI_INVALID;
	if (args->nid == PTL_NID_ANY)
		rc = PTL_PROCESS_INVALID;
	else
		args->distance = args->nid == ni->nid ? 0 : 1;
	ptl_ni_put(ni);
	return rc;
}

long ptl_ioctl_handle_ni(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_handle_ni *args = arg;
	ptl_handle_ni_t out;
	struct ptl_ni *ni;
	long rc;

	ni = ptl_ni_lookup_any(pf, args->handle);
	if (!ni)
		return PTL_HANDLE_INVALID;
	rc = ptlc_ni_handle_of(ni->core, args->handle, &out);
	if (rc == PTL_OK)
		args->ni_handle = out;
	ptl_ni_put(ni);
	return rc;
}

/* ---- match entries ---- */

static bool ptl_unlink_valid(u32 unlink)
{
	return unlink == PTL_RETAIN || unlink == PTL_UNLINK;
}

static long ptl_me_do_attach(struct ptl_ni *ni, struct ptl_ioc_me_attach *a)
{
	ptl_process_id_t id = { .nid = a->match_nid, .pid = a->match_pid };
	ptl_handle_me_t out = PTL_INVALID_HANDLE;
	ptl_pt_index_t pt = a->pt_index;
	long rc;

	if (a->flags & PTL_ME_INSERT)
		rc = ptlc_me_insert(ni->core, a->handle, id, a->match_bits,
				    a->ignore_bits, a->unlink, a->position,
				    &out);
	else if (a->flags & PTL_ME_ATTACH_ANY)
		rc = ptlc_me_attach_any(ni->core, &pt, id, a->match_bits,
					a->ignore_bits, a->unlink, &out);
	else
		rc = ptlc_me_attach(ni->core, pt, id, a->match_bits,
				    a->ignore_bits, a->unlink, a->position,
				    &out);
	if (rc == PTL_OK) {
		a->me_handle = out;
		a->pt_index = pt;
	}
	return rc;
}

long ptl_ioctl_me_attach(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_me_attach *args = arg;
	bool insert = args->flags & PTL_ME_INSERT;
	struct ptl_ni *ni;
	long rc;

	if (args->reserved || !ptl_unlink_valid(args->unlink) ||
	    (insert && (args->flags & PTL_ME_ATTACH_ANY)) ||
	    (!(args->flags & PTL_ME_ATTACH_ANY) &&
	     args->position != PTL_INS_BEFORE &&
	     args->position != PTL_INS_AFTER))
		return -EINVAL;
	if (insert)
		ni = ptl_ni_lookup_any(pf, args->handle);
	else
		ni = ptl_ni_lookup(pf, args->handle);
	if (!ni)
		return insert ? PTL_ME_INVALID : PTL_NI_INVALID;
	rc = ptl_me_do_attach(ni, args);
	ptl_ni_put(ni);
	return rc;
}

/*
 * PtlMEUnlink and PtlMDUnlink: one handle, one core call. Pages the call
 * released are unpinned before returning, so VmPin is exact afterwards.
 */
static long ptl_unlink_object(struct ptl_file *pf, struct ptl_ioc_handle *args,
			      int invalid,
			      int (*unlink)(struct ptlc_ni *, ptl_handle_any_t))
{
	struct ptl_ni *ni;
	long rc;

	if (args->reserved)
		return -EINVAL;
	ni = ptl_ni_lookup_any(pf, args->handle);
	if (!ni)
		return invalid;
	rc = unlink(ni->core, args->handle);
	ptl_ni_put(ni);
	if (rc == PTL_OK)
		ptl_mem_flush();
	return rc;
}

long ptl_ioctl_me_unlink(struct ptl_file *pf, void *arg)
{
	return ptl_unlink_object(pf, arg, PTL_ME_INVALID, ptlc_me_unlink);
}

/*
 * Undo of an attach whose handle could not be copied out (ptl_dev.c): the
 * caller never learnt @h, so it goes again. Best effort: if a message is
 * using it right now (IN_USE) or another thread guessed the handle and
 * unlinked it already, there is nothing more to do here; the object then
 * goes at PtlNIFini or close like any other.
 */
static void ptl_undo_unlink(struct ptl_file *pf, ptl_handle_any_t h,
			    int (*unlink)(struct ptlc_ni *, ptl_handle_any_t))
{
	struct ptl_ni *ni = ptl_ni_lookup_any(pf, h);

	if (!ni)
		return;
	unlink(ni->core, h);
	ptl_ni_put(ni);
	ptl_mem_flush();
}

void ptl_undo_me_attach(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_me_attach *args = arg;

	ptl_undo_unlink(pf, args->me_handle, ptlc_me_unlink);
}

/* ---- memory descriptors ---- */

static long ptl_md_do_attach(struct ptl_ni *ni, struct ptl_ioc_md_attach *a,
			     bool bind)
{
	struct ptlc_md_spec spec;
	ptl_handle_md_t out;
	long rc;

	rc = ptl_mem_pin(ni, &a->md, &spec);
	if (rc)
		return rc;
	if (bind)
		rc = ptlc_md_bind(ni->core, &spec, a->unlink, &out);
	else
		rc = ptlc_md_attach(ni->core, a->handle, &spec, a->unlink,
				    &out);
	if (rc == PTL_OK)
		a->md_handle = out;
	else
		ptl_mem_release(spec.mem);	/* still ours */
	ptl_mem_spec_done(&spec);
	return rc;
}

long ptl_ioctl_md_attach(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_md_attach *args = arg;
	bool bind = args->flags & PTL_MD_ATTACH_BIND;
	struct ptl_ni *ni;
	long rc;

	if (args->reserved || args->md.reserved ||
	    !ptl_unlink_valid(args->unlink))
		return -EINVAL;
	if (bind)
		ni = ptl_ni_lookup(pf, args->handle);
	else
		ni = ptl_ni_lookup_any(pf, args->handle);
	if (!ni)
		return bind ? PTL_NI_INVALID : PTL_ME_INVALID;
	rc = ptl_md_do_attach(ni, args, bind);
	ptl_ni_put(ni);
	return rc;
}

long ptl_ioctl_md_unlink(struct ptl_file *pf, void *arg)
{
	return ptl_unlink_object(pf, arg, PTL_MD_INVALID, ptlc_md_unlink);
}

void ptl_undo_md_attach(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_md_attach *args = arg;

	ptl_undo_unlink(pf, args->md_handle, ptlc_md_unlink);
}

/* ---- a receive posted in one step (PtlMEMDPost) ---- */

static long ptl_me_do_post(struct ptl_ni *ni, struct ptl_ioc_me_post *a)
{
	struct ptlc_post_args p = {
		.base = a->base,
		.match_id = { .nid = a->match_nid, .pid = a->match_pid },
		.match_bits = a->match_bits,
		.ignore_bits = a->ignore_bits,
		.me_unlink = a->me_unlink,
		.pos = a->position,
		.md_unlink = a->md_unlink,
		.test_eq = a->eq_handle,
		.consumer_seq = a->eq_consumer_seq,
	};
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	struct ptlc_md_spec spec;
	long rc;

	rc = ptl_mem_pin(ni, &a->md, &spec);
	if (rc)
		return rc;
	rc = ptlc_me_md_post(ni->core, &p, &spec, &me, &md);
	if (rc == PTL_OK) {
		a->me_handle = me;
		a->md_handle = md;
	} else {
		ptl_mem_release(spec.mem);	/* still ours */
	}
	ptl_mem_spec_done(&spec);
	return rc;
}

long ptl_ioctl_me_post(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_me_post *args = arg;
	struct ptl_ni *ni;
	long rc;

	if (args->md.reserved || !ptl_unlink_valid(args->me_unlink) ||
	    !ptl_unlink_valid(args->md_unlink) ||
	    (args->position != PTL_INS_BEFORE &&
	     args->position != PTL_INS_AFTER))
		return -EINVAL;
	ni = ptl_ni_lookup_any(pf, args->base);
	if (!ni)
		return PTL_ME_INVALID;
	rc = ptl_me_do_post(ni, args);
	ptl_ni_put(ni);
	return rc;
}

/* The handles could not be copied out: the ME goes, and its MD with it. */
void ptl_undo_me_post(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_me_post *args = arg;

	ptl_undo_unlink(pf, args->me_handle, ptlc_me_unlink);
}

static void ptl_md_to_ioc(const ptl_md_t *md, struct ptl_ioc_md *umd)
{
	memset(umd, 0, sizeof(*umd));
	umd->start = (u64)(uintptr_t)md->start;
	umd->length = md->length;
	umd->threshold = md->threshold;
	umd->options = md->options;
	umd->max_size = md->max_size;
	umd->user_ptr = (u64)(uintptr_t)md->user_ptr;
	umd->eq_handle = md->eq_handle;
}

/* Old iovec entries, read back for the caller (contract 12). */
struct ptl_md_old {
	ptl_md_t md;
	struct ptlc_seg *segs;
	unsigned int cap;
	unsigned int nsegs;
};

static int ptl_md_old_prepare(struct ptl_ni *ni, struct ptl_ioc_md_update *a,
			      struct ptl_md_old *old)
{
	ptl_ni_limits_t lim;

	memset(old, 0, sizeof(*old));
	if (!(a->flags & PTL_MD_UPDATE_OLD) || !a->old_iov || !a->old_iov_cap)
		return 0;
	ptlc_ni_limits(ni->core, &lim);
	old->cap = min_t(u32, a->old_iov_cap, lim.max_md_iovecs);
	old->segs = kvmalloc_array(old->cap, sizeof(*old->segs),
				   GFP_KERNEL_ACCOUNT);
	return old->segs ? 0 : -ENOMEM;
}

/*
 * old_iov is an output array, written only if the MD is an iovec MD (for
 * a plain one the library passes whatever old_md->start held). If the
 * entries the call will write cannot be written, say so before the MD is
 * touched: PTL_SEGV, instead of an error for an update that happened. A
 * read-only look at the MD tells which entries; a sibling thread updating
 * the same MD in between is covered by the check after the update.
 */
static int ptl_md_old_probe(struct ptl_ni *ni, struct ptl_ioc_md_update *a,
			    struct ptl_md_old *old)
{
	unsigned int nsegs = 0;
	ptl_md_t md;

	if (!old->segs)
		return 0;
	if (ptlc_md_update(ni->core, a->md_handle, &md, NULL, 0, &nsegs, NULL,
			   PTL_EQ_NONE, 0) != PTL_OK)
		return 0;	/* the update itself reports it */
	if (!(md.options & PTL_MD_IOVEC) || !nsegs)
		return 0;
	if (clear_user(u64_to_user_ptr(a->old_iov),
		       (size_t)min(old->cap, nsegs) * sizeof(ptl_md_iovec_t)))
		return PTL_SEGV;
	return 0;
}

/* The update itself; on a pinning failure the old MD is still read. */
static long ptl_md_do_update(struct ptl_ni *ni, struct ptl_ioc_md_update *a,
			     struct ptl_md_old *old)
{
	ptl_md_t *old_md = (a->flags & PTL_MD_UPDATE_OLD) ? &old->md : NULL;
	struct ptlc_md_spec spec, *new_spec = NULL;
	long rc;

	if ((a->flags & PTL_MD_UPDATE_NEW) &&
	    ptl_mem_reuse_spec(&a->new_md, &spec)) {
		rc = ptlc_md_update(ni->core, a->md_handle, old_md, old->segs,
				    old->cap, &old->nsegs, &spec, a->eq_handle,
				    a->eq_consumer_seq);
		if (rc != PTLC_MD_NEEDS_MEM)
			return rc;
	}
	if (a->flags & PTL_MD_UPDATE_NEW) {
		rc = ptl_mem_pin(ni, &a->new_md, &spec);
		if (rc) {
			ptlc_md_update(ni->core, a->md_handle, old_md,
				       old->segs, old->cap, &old->nsegs, NULL,
				       PTL_EQ_NONE, 0);
			return rc;
		}
		new_spec = &spec;
	}
	rc = ptlc_md_update(ni->core, a->md_handle, old_md, old->segs,
			    old->cap, &old->nsegs, new_spec, a->eq_handle,
			    a->eq_consumer_seq);
	if (new_spec) {
		if (rc != PTL_OK)
			ptl_mem_release(spec.mem);
		ptl_mem_spec_done(&spec);
	}
	return rc;
}

long ptl_ioctl_md_update(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_md_update *args = arg;
	struct ptl_md_old old;
	struct ptl_ni *ni;
	long rc;

	if (args->reserved || args->new_md.reserved)
		return -EINVAL;
	ni = ptl_ni_lookup_any(pf, args->md_handle);
	if (!ni)
		return PTL_MD_INVALID;
	rc = ptl_md_old_prepare(ni, args, &old);
	if (rc)
		goto out;
	rc = ptl_md_old_probe(ni, args, &old);
	if (rc)
		goto out_free;
	rc = ptl_md_do_update(ni, args, &old);
	if (args->flags & PTL_MD_UPDATE_OLD)
		ptl_md_to_ioc(&old.md, &args->old_md);
	/* Entries are written only for an iovec MD, never for a plain one. */
	if (!(old.md.options & PTL_MD_IOVEC))
		old.nsegs = 0;
	args->old_nsegs = old.nsegs;
	/*
	 * old_iov was writable a moment ago; this fails only if another
	 * thread unmapped or protected it since. The update (if any) stands:
	 * PTL_SEGV tells the caller that old_iov holds nothing useful.
	 */
	if (old.segs && old.nsegs &&
	    copy_to_user(u64_to_user_ptr(args->old_iov), old.segs,
			 min(old.cap, old.nsegs) * sizeof(*old.segs)))
		rc = PTL_SEGV;
out_free:
	kvfree(old.segs);
out:
	ptl_ni_put(ni);
	/* Whatever the outcome, a replaced region is unpinned on return. */
	if (args->flags & PTL_MD_UPDATE_NEW)
		ptl_mem_flush();
	return rc;
}

/* ---- access control ---- */

long ptl_ioctl_ac_entry(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_ac_entry *args = arg;
	ptl_process_id_t id = { .nid = args->match_nid,
				.pid = args->match_pid };
	struct ptl_ni *ni;
	long rc;

	if (args->reserved)
		return -EINVAL;
	ni = ptl_ni_lookup(pf, args->ni_handle);
	if (!ni)
		return PTL_NI_INVALID;
	rc = ptlc_ac_entry(ni->core, args->ac_index, id, args->uid, args->jid,
			   args->pt_index);
	ptl_ni_put(ni);
	return rc;
}
