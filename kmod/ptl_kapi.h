/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl.ko's side of include/ptl/kapi.h, shared by ptl_kapi.c (NIs, MEs,
 * data movement), ptl_kapi_eq.c (event queues) and ptl_kmem.c (MDs over
 * kernel memory).
 *
 * A kernel client's NI is an ordinary struct ptl_ni (same pid table, same
 * core, same data path), created by ptl_ni_new() with hooks of its own:
 * MD memory is struct ptl_mem with mem->kernel set, and events go to
 * struct ptl_keq instead of a mapped ring. struct ptl_kni is what the
 * client holds; ptl_ni.kni points back at it.
 *
 * Lifetime: the client's pointer owns one reference on the ptl_ni.
 * ptl_kni_fini() stops the handlers, drops that reference and waits for
 * the last one (messages in flight hold theirs): ptl_ni_release() then
 * calls ptl_kapi_ni_release(), which frees the EQs and completes
 * @released. Only then are the kni and the namespace reference dropped.
 */
#ifndef PTL_KAPI_INTERNAL_H
#define PTL_KAPI_INTERNAL_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>

#include <ptl/kapi.h>

struct ptl_ni;
struct ptlc_md_spec;

struct ptl_kni {
	struct ptl_ni *ni;		/* the client's reference */
	struct module *owner;		/* the client (module notifier) */
	struct net *net;		/* referenced */
	struct list_head node;		/* in ptl_knis */
	struct mutex lock;		/* @eqs */
	struct list_head eqs;		/* struct ptl_keq */
	struct completion released;	/* the NI's last reference went */
	bool dead;			/* finalizing: call no handler */
};

/* ptl_kapi_eq.c */
void ptl_keq_notify(void *glue, void *eq_priv);
void ptl_keq_release_all(struct ptl_kni *kni);
int ptl_keq_consumer_seq(struct ptl_kni *kni, ptl_handle_eq_t eq,
			 ptl_seq_t *seq);

/* ptl_kmem.c */
int ptl_kmem_spec(struct ptl_ni *ni, const struct ptl_kmd *kmd,
		  struct ptlc_md_spec *spec);

#endif /* PTL_KAPI_INTERNAL_H */
