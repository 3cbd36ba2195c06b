// SPDX-License-Identifier: GPL-2.0
/*
 * MDs over kernel memory (struct ptl_kmd): arrays of struct kvec or of
 * struct bio_vec that a kernel client hands over without copying or
 * pinning.
 *
 * They are the same struct ptl_mem as a process's pinned MD, so the data
 * path (ptl_mem_copy, ptl_mem_to/from_buf, ptl_mem_frags for zero-copy
 * transmit, ptl_mem_from_skb for receive) and the transports see no
 * difference: a page array plus, per segment, its first page and the
 * offset into it. Only how the page array is filled differs:
 *
 *   kvec    each entry is a kernel virtual address; its pages are looked
 *           up in the linear map (virt_to_page) or in vmalloc space
 *           (vmalloc_to_page). Anything else (module data, user or bogus
 *           addresses, ioremap) is refused with PTL_MD_ILLEGAL: there is
 *           no page behind it that the copies and skb fragments could use.
 *   bio_vec each entry names its page; an entry whose offset and length
 *           run past the page covers the pages that follow, as in a bio.
 *
 * Nothing is pinned, charged to RLIMIT_MEMLOCK or max_user_kmem (kernel
 * code is not a user to cap), or dirtied at release: the client owns the
 * memory and keeps it valid until the MD is gone (include/ptl/kapi.h,
 * "Memory"). mem->kernel tells ptl_mem_release() to free the bookkeeping
 * only, and ptl_mem_frags() to refuse slab pages, which an skb must not
 * reference (the transport copies those).
 *
 * The core sees an iovec MD: one segment per entry, whose address is the
 * kernel address (kvec) or the offset from the entry's page (bio_vec).
 * The core only adds offsets to it; the pages come from here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"
#include "ptl_kapi.h"

/* The page behind a kernel address the data path may use, or NULL. */
static struct page *ptl_kaddr_page(unsigned long addr)
{
	const void *p = (const void *)addr;

	if (is_vmalloc_addr(p))
		return vmalloc_to_page(p);
	if (virt_addr_valid(p))
		return virt_to_page(p);
	return NULL;
}

/* The core's segment for entry @i of @kmd; false if it is malformed. */
static bool ptl_kmem_seg(const struct ptl_kmd *kmd, unsigned int i,
			 struct ptlc_seg *seg)
{
	if (kmd->type == PTL_KMD_KVEC) {
		const struct kvec *v = &kmd->kvec[i];

		seg->addr = (unsigned long)v->iov_base;
		seg->len = v->iov_len;
		return !seg->len ||
		       (seg->addr && seg->addr + seg->len > seg->addr);
	}
	seg->addr = kmd->bvec[i].bv_offset;
	seg->len = kmd->bvec[i].bv_len;
	return !seg->len || kmd->bvec[i].bv_page;
}

/* Page @n of entry @i of @kmd, whose segment is @seg. */
static struct page *ptl_kmem_page(const struct ptl_kmd *kmd, unsigned int i,
				  const struct ptlc_seg *seg, unsigned long n)
{
	if (kmd->type == PTL_KMD_KVEC)
		return ptl_kaddr_page((seg->addr & PAGE_MASK) + n * PAGE_SIZE);
	return nth_page(kmd->bvec[i].bv_page, (seg->addr >> PAGE_SHIFT) + n);
}

/* Fills the page array of @mem; PTL_MD_ILLEGAL if a page is missing. */
static int ptl_kmem_fill(struct ptl_mem *mem, const struct ptl_kmd *kmd,
			 const struct ptlc_seg *segs)
{
	unsigned int i;
	unsigned long n;

	for (i = 0; i < mem->nsegs; i++) {
		const struct ptl_mem_seg *s = &mem->segs[i];

		for (n = 0; n < s->npages; n++) {
			struct page *pg = ptl_kmem_page(kmd, i, &segs[i], n);

			if (!pg)
				return PTL_MD_ILLEGAL;
			mem->pages[s->first + n] = pg;
		}
	}
	return PTL_OK;
}

/* The core's segments of @kmd, in @segs (nr_segs entries). */
static int ptl_kmem_segs(const struct ptl_kmd *kmd, struct ptlc_seg *segs)
{
	unsigned int i;

	for (i = 0; i < kmd->nr_segs; i++)
		if (!ptl_kmem_seg(kmd, i, &segs[i]))
			return PTL_MD_ILLEGAL;
	return PTL_OK;
}

/* What needs no allocation: type, options, entry count, array. */
static int ptl_kmd_check(struct ptl_ni *ni, const struct ptl_kmd *kmd)
{
	ptl_ni_limits_t lim;

	if (!kmd)
		return PTL_SEGV;
	if ((kmd->type != PTL_KMD_KVEC && kmd->type != PTL_KMD_BVEC) ||
	    (kmd->options & ~PTL_MD_OPTIONS_ALL))
		return PTL_MD_ILLEGAL;
	ptlc_ni_limits(ni->core, &lim);
	if (kmd->nr_segs > (u32)lim.max_md_iovecs)
		return PTL_MD_ILLEGAL;
	if (kmd->nr_segs && !kmd->kvec)	/* either member of the union */
		return PTL_SEGV;
	return PTL_OK;
}

static void ptl_kmem_desc(const struct ptl_kmd *kmd, ptl_md_t *d)
{
	d->start = (void *)(uintptr_t)kmd->kvec;
	d->length = kmd->nr_segs;
	d->threshold = kmd->threshold;
	d->max_size = kmd->max_size;
	d->options = kmd->options | PTL_MD_IOVEC;
	d->user_ptr = kmd->user_ptr;
	d->eq_handle = kmd->eq_handle;
}

/* The bookkeeping of an MD over @segs, its pages filled in. */
static int ptl_kmem_build(const struct ptl_kmd *kmd,
			  const struct ptlc_seg *segs, struct ptl_mem **out)
{
	struct ptl_mem *mem;
	int rc;

	mem = ptl_mem_alloc(segs, kmd->nr_segs);
	if (!mem)
		return PTL_NO_SPACE;
	mem->kernel = true;
	mem->writable = true;
	atomic_long_inc(&ptl_stats.mds);
	rc = ptl_kmem_fill(mem, kmd, segs);
	if (rc) {
		ptl_mem_release(mem);
		return rc;
	}
	*out = mem;
	return PTL_OK;
}

/**
 * ptl_kmem_spec - the core's description of a kernel client's MD
 * @ni: the NI it will live on (its limits)
 * @kmd: the client's description
 * @spec: filled for ptlc_md_attach/bind/update
 *
 * Process context. Return: PTL_OK, after which the caller hands @spec to
 * the core and calls ptl_mem_spec_done() (and ptl_mem_release(spec->mem)
 * if the core refused it); or PTL_MD_ILLEGAL, PTL_SEGV, PTL_NO_SPACE with
 * nothing to undo.
 */
int ptl_kmem_spec(struct ptl_ni *ni, const struct ptl_kmd *kmd,
		  struct ptlc_md_spec *spec)
{
	struct ptlc_seg *segs;
	struct ptl_mem *mem;
	int rc;

	memset(spec, 0, sizeof(*spec));
	rc = ptl_kmd_check(ni, kmd);
	if (rc)
		return rc;
	/* One spare entry: never a zero-byte allocation. */
	segs = kvmalloc_array(kmd->nr_segs + 1, sizeof(*segs), GFP_KERNEL);
	if (!segs)
		return PTL_NO_SPACE;
	rc = ptl_kmem_segs(kmd, segs);
	if (!rc)
		rc = ptl_kmem_build(kmd, segs, &mem);
	if (rc) {
		kvfree(segs);
		return rc;
	}
	ptl_kmem_desc(kmd, &spec->desc);
	spec->segs = segs;
	spec->nsegs = kmd->nr_segs;
	spec->mem = mem;
	return PTL_OK;
}
