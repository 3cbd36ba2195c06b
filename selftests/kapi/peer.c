// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel client that user processes talk to (selftests/ptl_kapi_test.c),
 * on this node or across the wire from another network namespace:
 *
 *   portal 9, match bits 0x10   bio_vec MD over three pages (10,092 bytes,
 *                               the first entry at offset 100): the
 *                               process puts into it
 *   portal 9, match bits 0x20   kvec MD, vmalloc + kmalloc (8,000 bytes of
 *                               pattern 7): the process gets it
 *   portal 9, match bits 0x30   16-byte kvec MD (pattern 3): getput target
 *
 * all on one callback EQ that records what it sees. "client" then makes
 * the kernel the initiator: it puts the bytes the process put (the same
 * pages, bound as a second MD) to the process's portal 10 with an ACK,
 * and gets 4,096 bytes of pattern 11 from its portal 11, waiting on a
 * drained EQ.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/net_namespace.h>

#include "ptl_kapi_test.h"

#define KT_SERVERS	4
#define KT_PT		9
#define KT_PUT_BITS	0x10
#define KT_GET_BITS	0x20
#define KT_SWAP_BITS	0x30
#define KT_BACK_PT	10
#define KT_BACK_BITS	0x40
#define KT_FETCH_PT	11
#define KT_FETCH_BITS	0x50
#define KT_PUT_LEN	10092
#define KT_VBUF_LEN	5000
#define KT_KBUF_LEN	3000
#define KT_SWAP_LEN	16
#define KT_FETCH_LEN	4096
#define KT_WAIT_MS	20000

struct kt_server {
	u32 pid;
	struct ptl_kni *ni;
	struct kt_cb cb;
	ptl_handle_eq_t eq;
	struct page *pages[3];
	struct bio_vec bvec[3];
	void *vbuf;
	void *kbuf;
	u8 *swap;
	struct kvec kvec[2];
	struct kvec swap_kvec;
};

static struct kt_server *kt_servers[KT_SERVERS];

static void kt_server_free(struct kt_server *s)
{
	int i;

	if (s->ni)
		ptl_kni_fini(s->ni);	/* before the memory goes */
	for (i = 0; i < 3; i++)
		if (s->pages[i])
			__free_page(s->pages[i]);
	vfree(s->vbuf);
	kfree(s->kbuf);
	kfree(s->swap);
	kfree(s);
}

static int kt_server_memory(struct kt_server *s)
{
	static const unsigned int off[3] = { 100, 0, 0 };
	/* The first entry ends where its page does. */
	static const unsigned int len[3] = { 3996, 4096, 2000 };
	int i;

	for (i = 0; i < 3; i++) {
		s->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!s->pages[i])
			return -ENOMEM;
		s->bvec[i] = (struct bio_vec){ .bv_page = s->pages[i],
					       .bv_len = len[i],
					       .bv_offset = off[i] };
	}
	s->vbuf = vmalloc(KT_VBUF_LEN);
	s->kbuf = kmalloc(KT_KBUF_LEN, GFP_KERNEL);
	s->swap = kmalloc(KT_SWAP_LEN, GFP_KERNEL);
	if (!s->vbuf || !s->kbuf || !s->swap)
		return -ENOMEM;
	kt_fill(s->vbuf, KT_VBUF_LEN, 7, 0);
	kt_fill(s->kbuf, KT_KBUF_LEN, 7, KT_VBUF_LEN);
	kt_fill(s->swap, KT_SWAP_LEN, 3, 0);
	s->kvec[0] = (struct kvec){ s->vbuf, KT_VBUF_LEN };
	s->kvec[1] = (struct kvec){ s->kbuf, KT_KBUF_LEN };
	s->swap_kvec = (struct kvec){ s->swap, KT_SWAP_LEN };
	return 0;
}

/* One ME on the server's portal with an MD over @md's memory. */
static int kt_server_me(struct kt_server *s, u64 bits, struct ptl_kmd *md)
{
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_me_t me;
	ptl_handle_md_t h;
	int rc;

	rc = ptl_kme_attach(s->ni, KT_PT, any, bits, 0, PTL_RETAIN,
			    PTL_INS_AFTER, &me);
	if (rc)
		return rc;
	md->threshold = PTL_MD_THRESH_INF;
	md->eq_handle = s->eq;
	return ptl_kmd_attach(s->ni, me, md, PTL_RETAIN, &h);
}

static int kt_server_mes(struct kt_server *s)
{
	struct ptl_kmd put = {
		.type = PTL_KMD_BVEC, .nr_segs = 3, .bvec = s->bvec,
		.options = PTL_MD_OP_PUT | PTL_MD_OP_GET,
	};
	struct ptl_kmd get = {
		.type = PTL_KMD_KVEC, .nr_segs = 2, .kvec = s->kvec,
		.options = PTL_MD_OP_GET,
	};
	struct ptl_kmd swap = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &s->swap_kvec,
		.options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE,
	};
	int rc;

	rc = ptl_kme_attach(s->ni, KT_PT, (ptl_process_id_t){ 0, 0 }, 0, 0,
			    PTL_RETAIN, PTL_INS_AFTER, NULL);
	if (rc != PTL_SEGV)	/* a NULL output pointer is refused */
		return PTL_FAIL;
	rc = kt_server_me(s, KT_PUT_BITS, &put);
	if (!rc)
		rc = kt_server_me(s, KT_GET_BITS, &get);
	if (!rc)
		rc = kt_server_me(s, KT_SWAP_BITS, &swap);
	return rc;
}

static int kt_slot_of(u32 pid)
{
	int i;

	for (i = 0; i < KT_SERVERS; i++)
		if (kt_servers[i] && kt_servers[i]->pid == pid)
			return i;
	return -1;
}

/* A server NI in the writer's namespace, on interface 0. */
int kt_peer_serve(u32 pid)
{
	struct ptl_kni_config cfg = {
		.version = PTL_KAPI_VERSION, .iface = 0, .pid = pid,
		.jid = PTL_JID_NONE, .net = current->nsproxy->net_ns,
		.name = "kapi_test_srv",
	};
	ptl_process_id_t id;
	struct kt_server *s;
	int slot, rc;

	for (slot = 0; slot < KT_SERVERS && kt_servers[slot]; slot++)
		;
	if (kt_slot_of(pid) >= 0 || slot == KT_SERVERS) {
		kt_out("not ok: pid %u served already or no room\n", pid);
		return -EBUSY;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	kt_cb_init(&s->cb);
	rc = kt_server_memory(s) ? PTL_NO_SPACE :
	     ptl_kni_init(&cfg, &s->ni);
	if (!rc)
		rc = ptl_keq_alloc(s->ni, 1, kt_cb_handler, &s->cb, &s->eq);
	if (!rc)
		rc = kt_server_mes(s);
	if (rc) {
		kt_out("not ok: server setup: Portals code %d\n", rc);
		kt_server_free(s);
		return -EIO;
	}
	ptl_kni_identity(s->ni, &id, NULL, NULL);
	kt_servers[slot] = s;
	kt_out("nid %u pid %u\n", id.nid, id.pid);
	return 0;
}

int kt_peer_status(u32 pid)
{
	int slot = kt_slot_of(pid);
	struct kt_server *s;
	long bad;

	if (slot < 0)
		return -ENOENT;
	s = kt_servers[slot];
	spin_lock_bh(&s->cb.lock);
	kt_out("events=%u softirq=%u put_end=%u get_end=%u getput_end=%u\n",
	       s->cb.n, s->cb.in_softirq, s->cb.counts[PTL_EVENT_PUT_END],
	       s->cb.counts[PTL_EVENT_GET_END],
	       s->cb.counts[PTL_EVENT_GETPUT_END]);
	spin_unlock_bh(&s->cb.lock);
	/* What the process put, as seen through the pages. */
	bad = kt_check(page_address(s->pages[0]) + 100, 3996, 13, 0);
	if (bad < 0)
		bad = kt_check(page_address(s->pages[1]), 4096, 13, 3996);
	if (bad < 0)
		bad = kt_check(page_address(s->pages[2]), 2000, 13, 8092);
	kt_out("put_data=%s\n", bad < 0 ? "ok" : "bad");
	return 0;
}

/* Waits for an event of @kind on @eq; checks ni_fail_type. */
static int kt_wait_kind(struct ptl_kni *ni, ptl_handle_eq_t eq,
			ptl_event_kind_t kind, ptl_event_t *ev)
{
	int rc;

	do {
		rc = ptl_keq_wait(ni, eq, ev, KT_WAIT_MS);
		if (rc != PTL_OK)
			return rc;
		if (ev->ni_fail_type != PTL_NI_OK)
			return PTL_FAIL;
	} while (ev->type != kind);
	return PTL_OK;
}

/* The server puts back what it received, with an ACK. */
static int kt_client_put(struct kt_server *s, ptl_process_id_t to,
			 ptl_handle_eq_t eq)
{
	struct ptl_kmd md = {
		.type = PTL_KMD_BVEC, .nr_segs = 3, .bvec = s->bvec,
		.threshold = PTL_MD_THRESH_INF, .eq_handle = eq,
	};
	ptl_handle_md_t h;
	ptl_event_t ev;
	int rc;

	rc = ptl_kmd_bind(s->ni, &md, PTL_RETAIN, &h);
	if (!rc)
		rc = ptl_kput(s->ni, h, PTL_ACK_REQ, to, KT_BACK_PT, 0,
			      KT_BACK_BITS, 0, 0xbeef);
	if (!rc)
		rc = kt_wait_kind(s->ni, eq, PTL_EVENT_ACK, &ev);
	if (!rc && ev.mlength != KT_PUT_LEN) {
		kt_out("not ok: ACK mlength %llu\n", ev.mlength);
		rc = PTL_FAIL;
	}
	/* SEND_END may come after the ACK over the wire: the MD is held. */
	while (!rc && ptl_kmd_unlink(s->ni, h) == PTL_MD_IN_USE)
		rc = kt_wait_kind(s->ni, eq, PTL_EVENT_SEND_END, &ev);
	return rc;
}

/* The server gets 4,096 bytes of pattern 11 from the process. */
static int kt_client_get(struct kt_server *s, ptl_process_id_t from,
			 ptl_handle_eq_t eq)
{
	struct kvec v;
	struct ptl_kmd md = {
		.type = PTL_KMD_KVEC, .nr_segs = 1, .kvec = &v,
		.threshold = PTL_MD_THRESH_INF, .eq_handle = eq,
	};
	ptl_handle_md_t h;
	ptl_event_t ev;
	long bad;
	int rc;

	v.iov_len = KT_FETCH_LEN;
	v.iov_base = kzalloc(KT_FETCH_LEN, GFP_KERNEL);
	if (!v.iov_base)
		return PTL_NO_SPACE;
	rc = ptl_kmd_bind(s->ni, &md, PTL_RETAIN, &h);
	if (!rc)
		rc = ptl_kget(s->ni, h, from, KT_FETCH_PT, 0, KT_FETCH_BITS, 0);
	if (!rc)
		rc = kt_wait_kind(s->ni, eq, PTL_EVENT_REPLY_END, &ev);
	if (!rc) {
		bad = kt_check(v.iov_base, KT_FETCH_LEN, 11, 0);
		if (ev.mlength != KT_FETCH_LEN || bad >= 0) {
			kt_out("not ok: get: mlength %llu, byte %ld differs\n",
			       ev.mlength, bad);
			rc = PTL_FAIL;
		}
	}
	if (!rc)
		rc = ptl_kmd_unlink(s->ni, h);
	if (rc) {
		/* The get may still be in flight: nothing touches v after. */
		ptl_kni_fini(s->ni);
		s->ni = NULL;
	}
	kfree(v.iov_base);
	return rc;
}

int kt_peer_client(u32 pid, u32 unid, u32 upid)
{
	ptl_process_id_t to = { unid, upid };
	int slot = kt_slot_of(pid);
	struct kt_server *s;
	ptl_handle_eq_t eq;
	int rc;

	if (slot < 0)
		return -ENOENT;
	s = kt_servers[slot];
	rc = ptl_keq_alloc(s->ni, 8, NULL, NULL, &eq);
	if (rc)
		goto out;
	rc = kt_client_put(s, to, eq);
	if (!rc)
		rc = kt_client_get(s, to, eq);
	if (rc) {
		/* Finalized before its memory goes (kt_server_free). */
		kt_out("not ok: client: Portals code %d\n", rc);
		kt_servers[slot] = NULL;
		kt_server_free(s);
		return -EIO;
	}
	ptl_keq_free(s->ni, eq);
out:
	kt_out(rc ? "not ok: code %d\n" : "ok\n", rc);
	return rc ? -EIO : 0;
}

int kt_peer_stop(u32 pid)
{
	int slot = kt_slot_of(pid);

	if (slot < 0)
		return -ENOENT;
	kt_server_free(kt_servers[slot]);
	kt_servers[slot] = NULL;
	kt_out("ok\n");
	return 0;
}

/* An NI this module never finalizes: ptl.ko must, at unload. */
int kt_peer_leak(u32 pid)
{
	struct ptl_kni_config cfg = {
		.version = PTL_KAPI_VERSION, .pid = pid, .jid = PTL_JID_NONE,
	};
	struct ptl_kni *ni;
	ptl_handle_eq_t eq;
	int rc;

	rc = ptl_kni_init(&cfg, &ni);
	if (!rc)	/* with an object, so there is something to free */
		rc = ptl_keq_alloc(ni, 4, NULL, NULL, &eq);
	kt_out(rc ? "not ok: code %d\n" : "ok\n", rc);
	return rc ? -EIO : 0;
}

void kt_peer_exit(void)
{
	int i;

	for (i = 0; i < KT_SERVERS; i++) {
		if (kt_servers[i])
			kt_server_free(kt_servers[i]);
		kt_servers[i] = NULL;
	}
}
