// SPDX-License-Identifier: GPL-2.0
/*
 * Copies to and from an MD's pinned pages, for the data path: between two
 * MDs (intra-node delivery), to and from a kernel buffer, and the forms a
 * transport takes (page fragments of an skb, a scatterlist, an skb's
 * bytes). Each walks the MD with the core's iterator (ptlc_md_iter), one
 * piece inside one page at a time, over the pages struct ptl_mem holds;
 * nothing here pins, charges or frees.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/skbuff.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

/* Pages copied between two cond_resched() calls. */
#define PTL_COPY_RESCHED	16

/* A position in an MD, walked page piece by page piece. */
struct ptl_cursor {
	struct ptlc_md_iter it;
	struct ptlc_chunk ch;
	struct ptl_mem *mem;
	u64 pos;		/* bytes of ch already consumed */
};

static int ptl_cursor_init(struct ptl_cursor *c, struct ptlc_md *md,
			   u64 off, u64 len)
{
	c->mem = ptlc_md_mem(md);
	if (!c->mem)
		return -EFAULT;
	ptlc_md_iter_init(&c->it, md, off, len);
	c->ch.len = 0;
	c->pos = 0;
	return 0;
}

/*
 * The next contiguous piece (inside one page) of the walk: its page, the
 * offset in that page and its length. False at the end or if the MD's
 * segments and pinned pages disagree (cannot happen; never trusted).
 */
static bool ptl_cursor_piece(struct ptl_cursor *c, struct page **page,
			     unsigned int *off, size_t *len)
{
	const struct ptl_mem_seg *s;
	unsigned long idx;
	u64 at;

	while (c->pos == c->ch.len) {
		if (!ptlc_md_iter_next(&c->it, &c->ch))
			return false;
		c->pos = 0;
	}
	if (c->ch.seg >= c->mem->nsegs)
		return false;
	s = &c->mem->segs[c->ch.seg];
	at = s->page_off + c->ch.seg_off + c->pos;
	idx = at >> PAGE_SHIFT;
	if (idx >= s->npages)
		return false;
	*page = s->pages[idx];
	*off = at & ~PAGE_MASK;
	*len = min_t(u64, c->ch.len - c->pos, PAGE_SIZE - *off);
	return true;
}

/**
 * ptl_mem_copy - copy bytes between the pinned pages of two MDs
 * @dst: destination MD (held by a message)
 * @dst_off: offset in @dst
 * @src: source MD (held by a message)
 * @src_off: offset in @src
 * @len: bytes; both ranges must lie inside their MDs (the core checked)
 *
 * Process context, no lock held: reschedules between pages, and stops
 * when the caller gets a fatal signal (a killed process does not go on
 * copying gigabytes; the operation then ends with PTL_NI_FAIL).
 * Return: 0, -EACCES if @dst is pinned read-only, -EINTR if the caller was
 * killed, -EFAULT on inconsistency.
 */
int ptl_mem_copy(struct ptlc_md *dst, u64 dst_off, struct ptlc_md *src,
		 u64 src_off, u64 len)
{
	struct ptl_cursor d, s;
	unsigned int n = 0;

	if (!len)
		return 0;
	if (ptl_cursor_init(&d, dst, dst_off, len) ||
	    ptl_cursor_init(&s, src, src_off, len))
		return -EFAULT;
	if (!d.mem->writable)
		return -EACCES;
	WRITE_ONCE(d.mem->written, true);
	while (len) {
		struct page *dp, *sp;
		unsigned int doff, soff;
		size_t dlen, slen, chunk;
		void *dv, *sv;

		if (!ptl_cursor_piece(&d, &dp, &doff, &dlen) ||
		    !ptl_cursor_piece(&s, &sp, &soff, &slen))
			return -EFAULT;
		chunk = min3(dlen, slen, (size_t)len);
		dv = kmap_local_page(dp);
		sv = kmap_local_page(sp);
		memcpy(dv + doff, sv + soff, chunk);
		kunmap_local(sv);
		kunmap_local(dv);
		d.pos += chunk;
		s.pos += chunk;
		len -= chunk;
		if (len && fatal_signal_pending(current))
			return -EINTR;
		if (++n % PTL_COPY_RESCHED == 0)
			cond_resched();
	}
	return 0;
}

/* Copies between an MD and a kernel buffer; atomic context is fine. */
static int ptl_mem_buf(struct ptlc_md *md, u64 off, void *buf, u64 len,
		       bool to_md)
{
	struct ptl_cursor c;
	u8 *p = buf;

	if (!len)
		return 0;
	if (ptl_cursor_init(&c, md, off, len))
		return -EFAULT;
	if (to_md) {
		if (!c.mem->writable)
			return -EACCES;
		WRITE_ONCE(c.mem->written, true);
	}
	while (len) {
		struct page *pg;
		unsigned int poff;
		size_t plen;
		void *v;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		plen = min_t(u64, plen, len);
		v = kmap_local_page(pg);
		if (to_md)
			memcpy(v + poff, p, plen);
		else
			memcpy(p, v + poff, plen);
		kunmap_local(v);
		c.pos += plen;
		p += plen;
		len -= plen;
	}
	return 0;
}

int ptl_mem_to_buf(void *buf, struct ptlc_md *src, u64 off, u64 len)
{
	return ptl_mem_buf(src, off, buf, len, false);
}

int ptl_mem_from_buf(struct ptlc_md *dst, u64 off, const void *buf, u64 len)
{
	return ptl_mem_buf(dst, off, (void *)buf, len, true);
}

/**
 * ptl_mem_frags - attach bytes of an MD to an skb as page fragments
 * @md: the MD (held by a message)
 * @off: offset in it
 * @len: bytes; the range lies inside the MD (the caller checked)
 * @skb: where; its fragments take page references of their own
 *
 * Zero-copy transmit: the skb points at the pinned pages. Its fragments
 * reference the pages, so they stay allocated while the skb lives even if
 * the MD is unpinned meanwhile; SKBFL_SHARED_FRAG tells the stack the
 * owner may write them (no in-place checksumming). Any context.
 * Return: 0, -EMSGSIZE if the skb runs out of fragment slots (the caller
 * frees it), -EOPNOTSUPP for kernel memory in slab pages (copy it
 * instead), -EFAULT on inconsistency.
 */
int ptl_mem_frags(struct ptlc_md *md, u64 off, u64 len, struct sk_buff *skb)
{
	struct ptl_cursor c;
	unsigned int room;

	if (!len)
		return 0;
	/* skb->len, data_len and truesize are 32 bits: none may wrap. */
	if (check_add_overflow(skb->truesize, (unsigned int)len, &room) ||
	    len > UINT_MAX)
		return -EMSGSIZE;
	if (ptl_cursor_init(&c, md, off, len))
		return -EFAULT;
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	while (len) {
		int i = skb_shinfo(skb)->nr_frags;
		struct page *pg;
		unsigned int poff;
		size_t plen;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		/*
		 * A kernel client's kmalloc memory lives in slab pages, which
		 * must not be referenced by an skb: the caller copies instead.
		 */
		if (c.mem->kernel && !sendpage_ok(pg))
			return -EOPNOTSUPP;
		plen = min_t(u64, plen, len);
		if (i && skb_can_coalesce(skb, i, pg, poff)) {
			skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], plen);
		} else {
			if (i >= MAX_SKB_FRAGS)
				return -EMSGSIZE;
			get_page(pg);
			skb_fill_page_desc(skb, i, pg, poff, plen);
		}
		skb->len += plen;
		skb->data_len += plen;
		skb->truesize += plen;
		c.pos += plen;
		len -= plen;
	}
	return 0;
}

/**
 * ptl_mem_sg - describe bytes of an MD as a scatterlist, for DMA
 * @md: the MD (held by a message)
 * @off: offset in it
 * @len: bytes; the range lies inside the MD (the caller checked)
 * @sgl: @nents entries, initialised with sg_init_table()
 * @nents: their number
 * @to_md: the device will write the bytes (a deposit)
 *
 * Zero copy over RDMA: the pages stay pinned while the message that holds
 * @md lives, so the caller maps them for the time of the transfer only.
 * Adjacent bytes of one page share an entry. Any context.
 * Return: entries used (the last one marked), -EMSGSIZE if more are
 * needed, -EACCES if @to_md and the MD is pinned read-only, -EFAULT on
 * inconsistency.
 */
int ptl_mem_sg(struct ptlc_md *md, u64 off, u64 len, struct scatterlist *sgl,
	       unsigned int nents, bool to_md)
{
	struct scatterlist *sg = NULL;
	struct ptl_cursor c;
	unsigned int n = 0;

	if (!len)
		return 0;
	if (ptl_cursor_init(&c, md, off, len))
		return -EFAULT;
	if (to_md) {
		if (!c.mem->writable)
			return -EACCES;
		WRITE_ONCE(c.mem->written, true);
	}
	while (len) {
		struct page *pg;
		unsigned int poff;
		size_t plen;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		plen = min_t(u64, plen, len);
		if (sg && sg_page(sg) == pg && sg->offset + sg->length == poff) {
			sg->length += plen;
		} else {
			if (n == nents)
				return -EMSGSIZE;
			sg = sg ? sg_next(sg) : sgl;
			sg_set_page(sg, pg, plen, poff);
			n++;
		}
		c.pos += plen;
		len -= plen;
	}
	sg_mark_end(sg);
	return n;
}

/**
 * ptl_mem_from_skb - copy bytes of an skb into an MD
 * @dst: the MD (held by a message)
 * @off: offset in it
 * @skb: source
 * @skb_off: offset in the skb
 * @len: bytes; the range lies inside the MD (the core checked)
 *
 * The single copy of the receive path, in softirq: from the frame straight
 * into the pinned pages. Return: 0, -EACCES if @dst is pinned read-only,
 * -EFAULT on inconsistency or a short skb.
 */
int ptl_mem_from_skb(struct ptlc_md *dst, u64 off, const struct sk_buff *skb,
		     int skb_off, u64 len)
{
	struct ptl_cursor c;

	if (!len)
		return 0;
	if (ptl_cursor_init(&c, dst, off, len))
		return -EFAULT;
	if (!c.mem->writable)
		return -EACCES;
	WRITE_ONCE(c.mem->written, true);
	while (len) {
		struct page *pg;
		unsigned int poff;
		size_t plen;
		void *v;
		int err;

		if (!ptl_cursor_piece(&c, &pg, &poff, &plen))
			return -EFAULT;
		plen = min_t(u64, plen, len);
		v = kmap_local_page(pg);
		err = skb_copy_bits(skb, skb_off, v + poff, plen);
		kunmap_local(v);
		if (err)
			return -EFAULT;
		c.pos += plen;
		skb_off += plen;
		len -= plen;
	}
	return 0;
}
