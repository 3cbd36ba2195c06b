// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel client against kernel client, on this node: every call of
 * include/ptl/kapi.h, its error paths, callback and drained EQs, kvec and
 * bio_vec MDs (vmalloc, kmalloc, highmem and multi-page entries), put, get,
 * getput, access control, unlink events, update and finalization.
 *
 * Each case returns 0 or fills @why and returns -1; "selftest" prints one
 * TAP line per case. A case that fails leaves nothing behind: its NIs are
 * finalized before its memory is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ptl_kapi_test.h"

#define KC_WHY_LEN	256
#define KC_PID_A	700
#define KC_PID_B	701
#define KC_RESERVED_PID	5

#define KC_WHY(fmt, ...) \
	snprintf(why, KC_WHY_LEN, "line %d: " fmt, __LINE__, ##__VA_ARGS__)

/* @call must return the Portals code @exp, else the case fails. */
#define KC_RC(exp, call) do {						\
	int __r = (call);						\
	if (__r != (exp)) {						\
		KC_WHY("%s returned %d, not %d", #call, __r, (int)(exp)); \
		goto out;						\
	}								\
} while (0)

#define KC_TRUE(cond) do {						\
	if (!(cond)) {							\
		KC_WHY("expected %s", #cond);				\
		goto out;						\
	}								\
} while (0)

static const ptl_process_id_t kc_any = { PTL_NID_ANY, PTL_PID_ANY };

/* Data nobody may describe as kvec memory: it has no page of its own. */
static u8 kc_module_data[64];

static int kc_open(u32 pid, struct ptl_kni **ni)
{
	struct ptl_kni_config cfg = {
		.version = PTL_KAPI_VERSION, .pid = pid, .jid = PTL_JID_NONE,
	};

	*ni = NULL;
	return ptl_kni_init(&cfg, ni);
}

static void kc_close(struct ptl_kni *ni)
{
	if (ni)
		ptl_kni_fini(ni);
}

static ptl_process_id_t kc_id(struct ptl_kni *ni)
{
	ptl_process_id_t id = {};

	ptl_kni_identity(ni, &id, NULL, NULL);
	return id;
}

/* An ME on @pt matching @bits with an MD over @md. */
static int kc_target(struct ptl_kni *ni, ptl_pt_index_t pt, u64 bits,
		     struct ptl_kmd *md, ptl_unlink_t unlink,
		     ptl_handle_md_t *h)
{
	ptl_handle_me_t me;
	int rc;

	rc = ptl_kme_attach(ni, pt, kc_any, bits, 0, unlink, PTL_INS_AFTER,
			    &me);
	return rc ? rc : ptl_kmd_attach(ni, me, md, unlink, h);
}

/* The next event of a drained EQ must be @kind. */
static int kc_next(struct ptl_kni *ni, ptl_handle_eq_t eq,
		   ptl_event_kind_t kind, ptl_event_t *ev)
{
	int rc = ptl_keq_get(ni, eq, ev);

	if (rc != PTL_OK)
		return rc;
	return ev->type == kind && ev->ni_fail_type == PTL_NI_OK ?
	       PTL_OK : PTL_FAIL;
}

/* ---- NIs ---- */

static int kc_init_errors(char *why)
{
	struct ptl_kni_config cfg = {
		.version = PTL_KAPI_VERSION, .pid = PTL_PID_ANY,
		.jid = PTL_JID_NONE,
	};
	struct ptl_kni *ni = NULL;
	int ret = -1;

	KC_RC(PTL_SEGV, ptl_kni_init(NULL, &ni));
	KC_RC(PTL_SEGV, ptl_kni_init(&cfg, NULL));
	cfg.version = PTL_KAPI_VERSION + 1;
	KC_RC(PTL_FAIL, ptl_kni_init(&cfg, &ni));
	cfg.version = PTL_KAPI_VERSION;
	cfg.iface = PTL_MAX_INTERFACES;
	KC_RC(PTL_IFACE_INVALID, ptl_kni_init(&cfg, &ni));
	cfg.iface = PTL_MAX_INTERFACES - 1;	/* never bound here */
	KC_RC(PTL_IFACE_INVALID, ptl_kni_init(&cfg, &ni));
	cfg.iface = 0;
	cfg.jid = PTL_JID_ANY;
	KC_RC(PTL_FAIL, ptl_kni_init(&cfg, &ni));
	cfg.jid = PTL_JID_NONE;
	cfg.pid = PTL_PID_MAX + 1;
	KC_RC(PTL_PID_INVALID, ptl_kni_init(&cfg, &ni));
	KC_TRUE(!ni);
	KC_RC(PTL_NI_INVALID, ptl_kni_fini(NULL));
	ret = 0;
out:
	kc_close(ni);
	return ret;
}

static int kc_identity(char *why)
{
	struct ptl_kni_config cfg = {
		.version = PTL_KAPI_VERSION, .pid = KC_RESERVED_PID, .jid = 77,
	};
	ptl_ni_limits_t want = { -1, -1, -1, -1, 7, -1, -1, -1 }, lim;
	struct ptl_kni *a = NULL, *b = NULL, *c = NULL;
	ptl_process_id_t id, other;
	unsigned long dist;
	ptl_sr_value_t v;
	ptl_uid_t uid;
	ptl_jid_t jid;
	int ret = -1;

	KC_RC(PTL_OK, kc_open(PTL_PID_ANY, &a));
	KC_RC(PTL_OK, ptl_kni_identity(a, &id, &uid, &jid));
	KC_TRUE(id.pid >= PTL_PID_EPHEMERAL_START && id.pid != PTL_PID_ANY);
	KC_TRUE(uid == 0 && jid == PTL_JID_NONE);
	/* Reserved pids need no capability; the job id is the client's. */
	cfg.desired = &want;
	KC_RC(PTL_OK, ptl_kni_init(&cfg, &b));
	KC_RC(PTL_OK, ptl_kni_identity(b, &id, NULL, &jid));
	KC_TRUE(id.pid == KC_RESERVED_PID && jid == 77);
	KC_RC(PTL_PID_INVALID, ptl_kni_init(&cfg, &c));
	KC_RC(PTL_OK, ptl_kni_limits(b, &lim));
	KC_TRUE(lim.max_pt_index == 7 && lim.max_md_iovecs > 2);
	KC_RC(PTL_OK, ptl_kni_fini(b));
	b = NULL;
	KC_RC(PTL_OK, ptl_kni_init(&cfg, &b));	/* the pid is free again */

	KC_RC(PTL_OK, ptl_kni_status(a, PTL_SR_DROP_COUNT, &v));
	KC_TRUE(v == 0);
	KC_RC(PTL_SR_INDEX_INVALID, ptl_kni_status(a, 1000, &v));
	KC_RC(PTL_SEGV, ptl_kni_status(a, PTL_SR_DROP_COUNT, NULL));
	KC_RC(PTL_OK, ptl_kni_dist(a, id, &dist));
	KC_TRUE(dist == 0);
	other = (ptl_process_id_t){ id.nid + 1, 1 };
	KC_RC(PTL_OK, ptl_kni_dist(a, other, &dist));
	KC_TRUE(dist == 1);
	KC_RC(PTL_PROCESS_INVALID, ptl_kni_dist(a, kc_any, &dist));
	KC_RC(PTL_SEGV, ptl_kni_dist(a, id, NULL));
	KC_RC(PTL_SEGV, ptl_kni_limits(a, NULL));

	KC_RC(PTL_NI_INVALID, ptl_kni_limits(NULL, &lim));
	KC_RC(PTL_NI_INVALID, ptl_kni_identity(NULL, &id, NULL, NULL));
	KC_RC(PTL_NI_INVALID, ptl_kni_status(NULL, 0, &v));
	KC_RC(PTL_NI_INVALID, ptl_kni_dist(NULL, id, &dist));
	KC_RC(PTL_NI_INVALID, ptl_kac_entry(NULL, 0, kc_any, 0, 0, 0));
	ret = 0;
out:
	kc_close(c);
	kc_close(b);
	kc_close(a);
	return ret;
}

/* ---- match entries ---- */

static int kc_me(char *why)
{
	struct ptl_kni *a = NULL, *b = NULL;
	ptl_handle_me_t me, me2, other;
	ptl_pt_index_t pt = 0;
	int ret = -1;

	KC_RC(PTL_OK, kc_open(KC_PID_A, &a));
	KC_RC(PTL_OK, kc_open(KC_PID_B, &b));
	KC_RC(PTL_OK, ptl_kme_attach(a, 3, kc_any, 1, 0, PTL_RETAIN,
				     PTL_INS_AFTER, &me));
	KC_RC(PTL_OK, ptl_kme_insert(a, me, kc_any, 2, 0, PTL_UNLINK,
				     PTL_INS_BEFORE, &me2));
	KC_RC(PTL_OK, ptl_kme_unlink(a, me2));
	KC_RC(PTL_ME_INVALID, ptl_kme_unlink(a, me2));
	KC_RC(PTL_OK, ptl_kme_attach_any(a, &pt, kc_any, 1, 0, PTL_RETAIN,
					 &me2));
	KC_TRUE(pt != 3);
	KC_RC(PTL_PT_INDEX_INVALID, ptl_kme_attach(a, 10000, kc_any, 1, 0,
						   PTL_RETAIN, PTL_INS_AFTER,
						   &me2));
	KC_RC(PTL_FAIL, ptl_kme_attach(a, 3, kc_any, 1, 0, 5, PTL_INS_AFTER,
				       &me2));
	KC_RC(PTL_FAIL, ptl_kme_attach(a, 3, kc_any, 1, 0, PTL_RETAIN, 9,
				       &me2));
	KC_RC(PTL_SEGV, ptl_kme_attach(a, 3, kc_any, 1, 0, PTL_RETAIN,
				       PTL_INS_AFTER, NULL));
	KC_RC(PTL_SEGV, ptl_kme_attach_any(a, NULL, kc_any, 1, 0, PTL_RETAIN,
					   &me2));
	KC_RC(PTL_ME_INVALID, ptl_kme_insert(a, PTL_INVALID_HANDLE, kc_any, 1,
					     0, PTL_RETAIN, PTL_INS_AFTER,
					     &me2));
	/* An ME of B: another object of the same type, not A's. */
	KC_RC(PTL_OK, ptl_kme_attach(b, 4, kc_any, 1, 0, PTL_RETAIN,
				     PTL_INS_AFTER, &other));
	KC_RC(PTL_NI_INVALID, ptl_kme_attach(NULL, 3, kc_any, 1, 0,
					     PTL_RETAIN, PTL_INS_AFTER, &me2));
	KC_RC(PTL_NI_INVALID, ptl_kme_unlink(NULL, me));
	KC_RC(PTL_AC_INDEX_INVALID, ptl_kac_entry(a, 1000, kc_any, 0, 0, 0));
	KC_RC(PTL_OK, ptl_kme_unlink(a, me));
	ret = 0;
out:
	kc_close(b);
	kc_close(a);
	return ret;
}

/* ---- memory descriptors ---- */

static int kc_md_errors(char *why)
{
	u8 *buf = kmalloc(64, GFP_KERNEL);
	struct kvec v = { buf, 64 };
	struct bio_vec bv = { .bv_page = NULL, .bv_len = 8 };
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = PTL_MD_THRESH_INF, .eq_handle = PTL_EQ_NONE,
	};
	struct ptl_kni *a = NULL;
	ptl_handle_me_t me;
	ptl_handle_md_t h;
	int ret = -1;

	KC_TRUE(buf);
	KC_RC(PTL_OK, kc_open(KC_PID_A, &a));
	KC_RC(PTL_SEGV, ptl_kmd_bind(a, NULL, PTL_RETAIN, &h));
	KC_RC(PTL_SEGV, ptl_kmd_bind(a, &md, PTL_RETAIN, NULL));
	KC_RC(PTL_FAIL, ptl_kmd_bind(a, &md, 7, &h));
	KC_RC(PTL_NI_INVALID, ptl_kmd_bind(NULL, &md, PTL_RETAIN, &h));
	md.type = 3;
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	md.type = PTL_KMD_KVEC;
	md.options = 0x1000;
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	md.options = PTL_MD_IOVEC;	/* implied, and allowed */
	md.nr_segs = 100000;
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	md.nr_segs = 1;
	md.kvec = NULL;
	KC_RC(PTL_SEGV, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	md.kvec = &v;
	v.iov_base = NULL;
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	v.iov_base = kc_module_data;	/* module memory: no page to use */
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	v.iov_base = buf;
	md.eq_handle = 12345;
	KC_RC(PTL_EQ_INVALID, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	md.eq_handle = PTL_EQ_NONE;
	md.type = PTL_KMD_BVEC;
	md.bvec = &bv;
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	md.nr_segs = 0;		/* an empty MD is legal (contract 15) */
	KC_RC(PTL_OK, ptl_kmd_bind(a, &md, PTL_RETAIN, &h));
	KC_RC(PTL_OK, ptl_kmd_unlink(a, h));
	KC_RC(PTL_MD_INVALID, ptl_kmd_unlink(a, h));
	KC_RC(PTL_NI_INVALID, ptl_kmd_unlink(NULL, h));

	md.type = PTL_KMD_KVEC;
	md.kvec = &v;
	md.nr_segs = 1;
	KC_RC(PTL_ME_INVALID, ptl_kmd_attach(a, PTL_INVALID_HANDLE, &md,
					     PTL_RETAIN, &h));
	KC_RC(PTL_OK, ptl_kme_attach(a, 0, kc_any, 0, 0, PTL_RETAIN,
				     PTL_INS_AFTER, &me));
	KC_RC(PTL_OK, ptl_kmd_attach(a, me, &md, PTL_RETAIN, &h));
	KC_RC(PTL_ME_IN_USE, ptl_kmd_attach(a, me, &md, PTL_RETAIN, &h));
	KC_RC(PTL_MD_INVALID, ptl_kmd_unlink(a, me));	/* an ME handle */
	KC_RC(PTL_OK, ptl_kme_unlink(a, me));	/* takes the MD along */
	KC_RC(PTL_MD_INVALID, ptl_kmd_unlink(a, h));
	ret = 0;
out:
	kc_close(a);
	kfree(buf);
	return ret;
}

/* ---- data ---- */

struct kc_pair {
	struct ptl_kni *a, *b;		/* target, initiator */
	struct kt_cb cb;		/* A's callback EQ */
	ptl_handle_eq_t acb, beq;	/* A's callback EQ, B's drained EQ */
};

static int kc_pair_open(struct kc_pair *p, u32 beq_count)
{
	int rc;

	if (!p)
		return PTL_NO_SPACE;
	kt_cb_init(&p->cb);
	rc = kc_open(KC_PID_A, &p->a);
	if (!rc)
		rc = kc_open(KC_PID_B, &p->b);
	if (!rc)
		rc = ptl_keq_alloc(p->a, 1, kt_cb_handler, &p->cb, &p->acb);
	if (!rc)
		rc = ptl_keq_alloc(p->b, beq_count, NULL, NULL, &p->beq);
	return rc;
}

static void kc_pair_close(struct kc_pair *p)
{
	if (!p)
		return;
	kc_close(p->b);
	kc_close(p->a);
	kfree(p);
}

/* kvec target (vmalloc, empty entry, kmalloc), bio_vec initiator. */
static int kc_put(char *why)
{
	void *vbuf = vzalloc(6000), *kbuf = kzalloc(2000, GFP_KERNEL);
	struct page *pages = alloc_pages(GFP_KERNEL, 1);
	struct kvec v[3] = { { vbuf, 6000 }, { NULL, 0 }, { kbuf, 2000 } };
	struct bio_vec bv = { .bv_page = pages, .bv_offset = 50,
			      .bv_len = 8000 };	/* spans two pages */
	struct ptl_kmd tmd = {
		.type = PTL_KMD_KVEC, .nr_segs = 3, .kvec = v,
		.threshold = PTL_MD_THRESH_INF, .options = PTL_MD_OP_PUT,
		.user_ptr = &tmd,
	};
	struct ptl_kmd imd = {
		.type = PTL_KMD_BVEC, .nr_segs = 1, .bvec = &bv,
		.threshold = PTL_MD_THRESH_INF,
	};
	struct kc_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	ptl_handle_md_t th, ih;
	ptl_event_t ev;
	int ret = -1;

	KC_TRUE(vbuf && kbuf && pages);
	kt_fill(page_address(pages) + 50, 8000, 9, 0);
	KC_RC(PTL_OK, kc_pair_open(p, 8));
	tmd.eq_handle = p->acb;
	imd.eq_handle = p->beq;
	KC_RC(PTL_OK, kc_target(p->a, 1, 0x1, &tmd, PTL_RETAIN, &th));
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &imd, PTL_RETAIN, &ih));
	KC_RC(PTL_FAIL, ptl_kput(p->b, ih, 9, kc_id(p->a), 1, 0, 0x1, 0, 0));
	KC_RC(PTL_NI_INVALID, ptl_kput(NULL, ih, PTL_ACK_REQ, kc_id(p->a), 1,
				       0, 0x1, 0, 0));
	KC_RC(PTL_MD_INVALID, ptl_kput(p->b, th, PTL_ACK_REQ, kc_id(p->a), 1,
				       0, 0x1, 0, 0));	/* A's MD, not B's */
	KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_ACK_REQ, kc_id(p->a), 1, 0, 0x1, 0,
			       0x1234));
	/* Intra-node: every event is posted before the call returns. */
	KC_RC(PTL_OK, kc_next(p->b, p->beq, PTL_EVENT_SEND_START, &ev));
	KC_RC(PTL_OK, kc_next(p->b, p->beq, PTL_EVENT_SEND_END, &ev));
	KC_RC(PTL_OK, kc_next(p->b, p->beq, PTL_EVENT_ACK, &ev));
	KC_TRUE(ev.mlength == 8000 && ev.initiator.pid == KC_PID_A);
	KC_RC(PTL_EQ_EMPTY, ptl_keq_get(p->b, p->beq, &ev));
	KC_TRUE(p->cb.n == 2 && p->cb.in_softirq == 0);
	KC_TRUE(p->cb.ev[0].type == PTL_EVENT_PUT_START);
	ev = p->cb.ev[1];
	KC_TRUE(ev.type == PTL_EVENT_PUT_END && ev.mlength == 8000 &&
		ev.hdr_data == 0x1234 && ev.initiator.pid == KC_PID_B &&
		ev.uid == 0 && ev.md.user_ptr == &tmd &&
		ev.md.start == v && ev.md.length == 3 &&
		(ev.md.options & PTL_MD_IOVEC) && ev.md_handle == th);
	KC_TRUE(kt_check(vbuf, 6000, 9, 0) < 0);
	KC_TRUE(kt_check(kbuf, 2000, 9, 6000) < 0);
	/* A region that leaves the MD. */
	KC_RC(PTL_MD_ILLEGAL, ptl_kput_region(p->b, ih, 7990, 100,
					      PTL_NO_ACK_REQ, kc_id(p->a), 1,
					      0, 0x1, 0, 0));
	ret = 0;
out:
	kc_pair_close(p);
	if (pages)
		__free_pages(pages, 1);
	kfree(kbuf);
	vfree(vbuf);
	return ret;
}

/* Fills a highmem page through a temporary mapping. */
static void kc_fill_page(struct page *pg, u32 seed, size_t from)
{
	void *v = kmap_local_page(pg);

	kt_fill(v, PAGE_SIZE, seed, from);
	kunmap_local(v);
}

static int kc_page_check(struct page *pg, size_t off, const void *want,
			 size_t len)
{
	void *v = kmap_local_page(pg);
	int diff = memcmp(v + off, want, len);

	kunmap_local(v);
	return diff;
}

/* bio_vec target over highmem pages; get, get region, getput. */
static int kc_get_getput(char *why)
{
	struct page *pg[2] = { alloc_page(GFP_HIGHUSER), alloc_page(GFP_HIGHUSER) };
	struct bio_vec bv[2] = {
		{ .bv_page = pg[0], .bv_len = PAGE_SIZE },
		{ .bv_page = pg[1], .bv_len = PAGE_SIZE },
	};
	u8 *buf = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	u8 swap_new[8] = "ABCDEFGH", swap_old[8] = {}, big[65] = {};
	struct kvec v = { buf, 2 * PAGE_SIZE }, vn = { swap_new, 8 },
		    vo = { swap_old, 8 }, vb = { big, sizeof(big) };
	struct ptl_kmd tmd = {
		.type = PTL_KMD_BVEC, .nr_segs = 2, .bvec = bv,
		.threshold = PTL_MD_THRESH_INF,
		.options = PTL_MD_OP_GET | PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
	};
	struct ptl_kmd imd = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = PTL_MD_THRESH_INF,
	};
	struct kc_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	ptl_handle_md_t th, ih, hn, ho, hb;
	ptl_event_t ev;
	int ret = -1;

	KC_TRUE(pg[0] && pg[1] && buf);
	kc_fill_page(pg[0], 5, 0);
	kc_fill_page(pg[1], 5, PAGE_SIZE);
	KC_RC(PTL_OK, kc_pair_open(p, 16));
	tmd.eq_handle = p->acb;
	imd.eq_handle = p->beq;
	KC_RC(PTL_OK, kc_target(p->a, 2, 0x2, &tmd, PTL_RETAIN, &th));
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &imd, PTL_RETAIN, &ih));
	KC_RC(PTL_OK, ptl_kget(p->b, ih, kc_id(p->a), 2, 0, 0x2, 0));
	do {
		KC_RC(PTL_OK, ptl_keq_get(p->b, p->beq, &ev));
	} while (ev.type != PTL_EVENT_REPLY_END);
	KC_TRUE(ev.mlength == 2 * PAGE_SIZE && ev.ni_fail_type == PTL_NI_OK);
	KC_TRUE(kt_check(buf, 2 * PAGE_SIZE, 5, 0) < 0);
	KC_TRUE(kt_cb_count(&p->cb, PTL_EVENT_GET_END) == 1);

	memset(buf, 0, 2 * PAGE_SIZE);
	KC_RC(PTL_OK, ptl_kget_region(p->b, ih, 200, 100, kc_id(p->a), 2, 0,
				      0x2, 300));
	KC_TRUE(kt_check(buf + 200, 100, 5, 300) < 0 && buf[199] == 0 &&
		buf[300] == 0);

	imd.kvec = &vn;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &imd, PTL_RETAIN, &hn));
	imd.kvec = &vo;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &imd, PTL_RETAIN, &ho));
	KC_RC(PTL_OK, ptl_kgetput(p->b, ho, hn, kc_id(p->a), 2, 0, 0x2, 16,
				  0x77));
	KC_TRUE(kt_check(swap_old, 8, 5, 16) < 0);
	KC_TRUE(!kc_page_check(pg[0], 16, "ABCDEFGH", 8));
	KC_TRUE(kt_cb_count(&p->cb, PTL_EVENT_GETPUT_END) == 1);
	imd.kvec = &vb;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &imd, PTL_RETAIN, &hb));
	KC_RC(PTL_MD_ILLEGAL, ptl_kgetput(p->b, ho, hb, kc_id(p->a), 2, 0, 0x2,
					  16, 0));
	ret = 0;
out:
	kc_pair_close(p);
	kfree(buf);
	if (pg[0])
		__free_page(pg[0]);
	if (pg[1])
		__free_page(pg[1]);
	return ret;
}

/* An ACL entry that does not admit the kernel's uid drops the put. */
static int kc_acl(char *why)
{
	u8 *buf = kzalloc(64, GFP_KERNEL);
	struct kvec v = { buf, 64 };
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = PTL_MD_THRESH_INF, .options = PTL_MD_OP_PUT,
	};
	struct kc_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	ptl_handle_md_t th, ih;
	ptl_sr_value_t drops;
	int ret = -1;

	KC_TRUE(buf);
	KC_RC(PTL_OK, kc_pair_open(p, 8));
	md.eq_handle = p->acb;
	KC_RC(PTL_OK, kc_target(p->a, 1, 0, &md, PTL_RETAIN, &th));
	md.eq_handle = p->beq;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &md, PTL_RETAIN, &ih));
	KC_RC(PTL_OK, ptl_kac_entry(p->a, 1, kc_any, 4242, PTL_JID_ANY,
				    PTL_PT_INDEX_ANY));
	KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_NO_ACK_REQ, kc_id(p->a), 1, 1, 0,
			       0, 0));
	KC_TRUE(p->cb.n == 0);
	KC_RC(PTL_OK, ptl_kni_status(p->a, PTL_SR_DROP_COUNT, &drops));
	KC_TRUE(drops == 1);
	KC_RC(PTL_OK, ptl_kac_entry(p->a, 1, kc_any, 0, PTL_JID_ANY,
				    PTL_PT_INDEX_ANY));
	KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_NO_ACK_REQ, kc_id(p->a), 1, 1, 0,
			       0, 0));
	KC_TRUE(kt_cb_count(&p->cb, PTL_EVENT_PUT_END) == 1);
	ret = 0;
out:
	kc_pair_close(p);
	kfree(buf);
	return ret;
}

/* ---- event queues ---- */

static int kc_eq(char *why)
{
	u8 *buf = kzalloc(64, GFP_KERNEL);
	struct kvec v = { buf, 64 };
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = PTL_MD_THRESH_INF, .options = PTL_MD_OP_PUT,
		.eq_handle = PTL_EQ_NONE,
	};
	struct kc_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	ptl_handle_eq_t eq, small;
	ptl_handle_md_t th, ih;
	unsigned long t0;
	ptl_event_t ev;
	ptl_seq_t seq;
	int ret = -1, i;

	KC_TRUE(buf);
	KC_RC(PTL_OK, kc_pair_open(p, 8));
	KC_RC(PTL_OK, ptl_keq_alloc(p->b, 0, NULL, NULL, &eq));
	KC_TRUE(eq == PTL_EQ_NONE);		/* contract 16 */
	KC_RC(PTL_SEGV, ptl_keq_alloc(p->b, 4, NULL, NULL, NULL));
	KC_RC(PTL_NI_INVALID, ptl_keq_alloc(NULL, 4, NULL, NULL, &eq));
	KC_RC(PTL_NO_SPACE, ptl_keq_alloc(p->b, 1ULL << 40, NULL, NULL, &eq));
	KC_RC(PTL_EQ_EMPTY, ptl_keq_get(p->b, p->beq, &ev));
	KC_RC(PTL_SEGV, ptl_keq_get(p->b, p->beq, NULL));
	KC_RC(PTL_EQ_INVALID, ptl_keq_get(p->a, p->acb, &ev));	/* callback */
	KC_RC(PTL_NI_INVALID, ptl_keq_get(NULL, p->beq, &ev));
	t0 = jiffies;
	KC_RC(PTL_EQ_EMPTY, ptl_keq_wait(p->b, p->beq, &ev, 50));
	KC_TRUE(time_after_eq(jiffies, t0 + msecs_to_jiffies(50) - 1));

	/* Overflow: 6 events into 2 slots (contract 10). */
	KC_RC(PTL_OK, ptl_keq_alloc(p->b, 2, NULL, NULL, &small));
	KC_RC(PTL_OK, kc_target(p->a, 1, 0, &md, PTL_RETAIN, &th));
	md.eq_handle = small;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &md, PTL_RETAIN, &ih));
	for (i = 0; i < 3; i++)
		KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_NO_ACK_REQ, kc_id(p->a), 1,
				       0, 0, 0, 0));
	KC_RC(PTL_EQ_DROPPED, ptl_keq_get(p->b, small, &ev));
	KC_TRUE(ev.type == PTL_EVENT_SEND_START);	/* the third put's */
	seq = ev.sequence;
	KC_RC(PTL_OK, ptl_keq_wait(p->b, small, &ev, PTL_TIME_FOREVER));
	KC_TRUE(ev.type == PTL_EVENT_SEND_END && ev.sequence == seq + 1);
	KC_RC(PTL_EQ_EMPTY, ptl_keq_get(p->b, small, &ev));

	KC_RC(PTL_OK, ptl_keq_free(p->b, small));	/* MDs still name it */
	KC_RC(PTL_EQ_INVALID, ptl_keq_free(p->b, small));
	KC_RC(PTL_NI_INVALID, ptl_keq_free(NULL, small));
	KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_NO_ACK_REQ, kc_id(p->a), 1, 0, 0,
			       0, 0));	/* posts nothing (contract 14) */
	ret = 0;
out:
	kc_pair_close(p);
	kfree(buf);
	return ret;
}

/* Auto-unlink with its UNLINK event; PtlMDUpdate. */
static int kc_unlink_update(char *why)
{
	u8 *buf = kzalloc(64, GFP_KERNEL);
	struct kvec v = { buf, 64 }, v2 = { buf, 32 };
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = 1, .options = PTL_MD_OP_PUT,
	};
	struct kc_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	ptl_handle_md_t th, ih;
	ptl_event_t ev;
	ptl_md_t old;
	int ret = -1;

	KC_TRUE(buf);
	KC_RC(PTL_OK, kc_pair_open(p, 8));
	md.eq_handle = p->acb;
	KC_RC(PTL_OK, kc_target(p->a, 1, 0, &md, PTL_UNLINK, &th));
	md.threshold = PTL_MD_THRESH_INF;
	md.eq_handle = p->beq;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &md, PTL_RETAIN, &ih));
	KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_NO_ACK_REQ, kc_id(p->a), 1, 0, 0,
			       0, 0));
	KC_TRUE(kt_cb_count(&p->cb, PTL_EVENT_UNLINK) == 1);
	KC_RC(PTL_MD_INVALID, ptl_kmd_unlink(p->a, th));	/* gone */

	/* B's EQ holds SEND_START and SEND_END: a conditional update waits. */
	md.kvec = &v2;
	KC_RC(PTL_MD_NO_UPDATE, ptl_kmd_update(p->b, ih, &old, &md, p->beq));
	KC_TRUE(old.length == 1 && old.start == &v);
	KC_RC(PTL_OK, ptl_keq_get(p->b, p->beq, &ev));
	KC_RC(PTL_OK, ptl_keq_get(p->b, p->beq, &ev));
	KC_RC(PTL_OK, ptl_kmd_update(p->b, ih, &old, &md, p->beq));
	KC_RC(PTL_OK, ptl_kmd_update(p->b, ih, &old, NULL, PTL_EQ_NONE));
	KC_TRUE(old.start == &v2);
	KC_RC(PTL_EQ_INVALID, ptl_kmd_update(p->b, ih, &old, NULL, 4242));
	md.type = 9;
	KC_RC(PTL_MD_ILLEGAL, ptl_kmd_update(p->b, ih, &old, &md,
					     PTL_EQ_NONE));
	KC_TRUE(old.start == &v2);	/* still reported (contract 12) */
	KC_RC(PTL_NI_INVALID, ptl_kmd_update(NULL, ih, &old, NULL,
					     PTL_EQ_NONE));
	ret = 0;
out:
	kc_pair_close(p);
	kfree(buf);
	return ret;
}

/* Finalizing frees every object, releases the pid, calls no handler. */
static int kc_fini(char *why)
{
	u8 *buf = kzalloc(64, GFP_KERNEL);
	struct kvec v = { buf, 64 };
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = PTL_MD_THRESH_INF, .options = PTL_MD_OP_PUT,
	};
	struct kc_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	ptl_handle_md_t th, ih;
	unsigned int n;
	int ret = -1;

	KC_TRUE(buf);
	KC_RC(PTL_OK, kc_pair_open(p, 8));
	md.eq_handle = p->acb;
	KC_RC(PTL_OK, kc_target(p->a, 1, 0, &md, PTL_RETAIN, &th));
	md.eq_handle = p->beq;
	KC_RC(PTL_OK, ptl_kmd_bind(p->b, &md, PTL_RETAIN, &ih));
	KC_RC(PTL_OK, ptl_kni_fini(p->a));
	p->a = NULL;
	n = p->cb.n;
	/* Nobody holds the pid: the put is lost, no handler runs. */
	KC_RC(PTL_OK, ptl_kput(p->b, ih, PTL_NO_ACK_REQ,
			       (ptl_process_id_t){ kc_id(p->b).nid, KC_PID_A },
			       1, 0, 0, 0, 0));
	KC_TRUE(p->cb.n == n);
	KC_RC(PTL_OK, kc_open(KC_PID_A, &p->a));
	ret = 0;
out:
	kc_pair_close(p);
	kfree(buf);
	return ret;
}

static const struct {
	const char *name;
	int (*fn)(char *why);
} kc_cases[] = {
	{ "ni_init refuses bad configurations", kc_init_errors },
	{ "identity, reserved pids, limits, status, distance", kc_identity },
	{ "match entries and their errors", kc_me },
	{ "kernel-memory MDs and their errors", kc_md_errors },
	{ "put: kvec target, bio_vec initiator, callback and drained EQs",
	  kc_put },
	{ "get, get region, getput on highmem bio_vec pages", kc_get_getput },
	{ "ACL denies and admits the kernel's uid", kc_acl },
	{ "drained EQs: empty, timeout, overflow, free", kc_eq },
	{ "auto-unlink event and MD update", kc_unlink_update },
	{ "fini frees everything and releases the pid", kc_fini },
};

int kt_run_cases(void)
{
	char *why = kzalloc(KC_WHY_LEN, GFP_KERNEL);
	int i, failed = 0;

	if (!why)
		return -ENOMEM;
	kt_out("1..%zu\n", ARRAY_SIZE(kc_cases));
	for (i = 0; i < ARRAY_SIZE(kc_cases); i++) {
		why[0] = '\0';
		if (kc_cases[i].fn(why)) {
			failed++;
			kt_out("not ok %d - %s # %s\n", i + 1, kc_cases[i].name,
			       why);
		} else {
			kt_out("ok %d - %s\n", i + 1, kc_cases[i].name);
		}
	}
	kfree(why);
	return failed;
}
