// SPDX-License-Identifier: GPL-2.0
/*
 * The Portals API for kernel clients (include/ptl/kapi.h): NIs, identity,
 * access control, match entries, MDs and data movement. Event queues are
 * in ptl_kapi_eq.c, kernel-memory MDs in ptl_kmem.c.
 *
 * Nothing here forks the semantics: every call is one core call (the
 * rules user processes get) on a struct ptl_ni built by ptl_ni_new() like
 * a process's, published in the same pid table, sending through the same
 * ptl_data_call() (intra-node copy or the interface's transport). What is
 * the kernel's own: who the NI is (uid 0, the job the client names,
 * reserved pids without a capability check), its hooks (kernel EQs,
 * kernel memory) and its lifetime, which follows the client module
 * rather than an open file.
 *
 * Lifetime and teardown order (see ptl_kapi.h): ptl_kni_fini() makes the
 * NI inactive (no new message finds it), stops handlers (kni->dead, then
 * synchronize_rcu(): handlers run under rcu_read_lock()), drops the
 * client's reference and waits until messages in flight dropped theirs.
 * The last put destroys the core NI and calls ptl_kapi_ni_release(). A
 * module notifier finalizes the NIs a client module left open when it is
 * unloaded (its exit function has run by then, its code is still there).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <net/net_namespace.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"
#include "ptl_kapi.h"
#include "ptl_request.h"

/* Every kernel client's NI, for the module notifier. */
static LIST_HEAD(ptl_knis);
static DEFINE_MUTEX(ptl_knis_lock);

/* Kernel clients are accounted to nobody and capped by nothing. */
static const struct ptl_acct ptl_kernel_acct;

static const struct ptlc_ops ptl_kapi_core_ops = {
	.md_release = ptl_md_release_hook,
	.eq_notify = ptl_keq_notify,
};

/* ---- NIs ---- */

static int ptl_kni_check(const struct ptl_kni_config *cfg,
			 struct ptl_kni **out)
{
	if (!cfg || !out)
		return PTL_SEGV;
	if (cfg->version != PTL_KAPI_VERSION) {
		pr_err("a kernel client speaks API version %u, not %u\n",
		       cfg->version, PTL_KAPI_VERSION);
		return PTL_FAIL;
	}
	if (cfg->jid == PTL_JID_ANY)
		return PTL_FAIL;
	if (cfg->iface >= PTL_MAX_INTERFACES)
		return PTL_IFACE_INVALID;
	return PTL_OK;
}

/* The NI of @kni on @iface, active and listed when this returns PTL_OK. */
static int ptl_kni_create(struct ptl_kni *kni, struct ptl_iface *iface,
			  const struct ptl_kni_config *cfg)
{
	struct ptl_ni_params p = {
		.iface = iface,
		.pid = cfg->pid,
		.acct = &ptl_kernel_acct,
		.uid = GLOBAL_ROOT_UID,
		.jid = cfg->jid,
		.trusted = true,
		.desired = cfg->desired,
		.ops = &ptl_kapi_core_ops,
	};
	struct ptl_ni *ni;
	int rc;

	p.wake = ptl_wake_alloc();
	if (!p.wake)
		return PTL_NO_SPACE;
	rc = ptl_ni_new(&p, &ni);
	ptl_wake_put(p.wake);		/* the NI holds its own */
	if (rc != PTL_OK)
		return rc;
	kni->ni = ni;
	ni->kni = kni;
	strscpy(ni->comm, cfg->name ? cfg->name :
		kni->owner ? module_name(kni->owner) : "kernel",
		sizeof(ni->comm));
	mutex_lock(&ptl_knis_lock);
	list_add_tail(&kni->node, &ptl_knis);
	mutex_unlock(&ptl_knis_lock);
	/* Senders find it by pid from now on (pairs with find_ni). */
	smp_store_release(&ni->active, true);
	return PTL_OK;
}

int __ptl_kni_init(const struct ptl_kni_config *cfg, struct module *owner,
		   struct ptl_kni **out)
{
	struct ptl_iface *iface;
	struct ptl_kni *kni;
	struct net *net;
	int rc;

	rc = ptl_kni_check(cfg, out);
	if (rc)
		return rc;
	net = maybe_get_net(cfg->net ? cfg->net : &init_net);
	if (!net)
		return PTL_IFACE_INVALID;	/* the namespace is going */
	rc = PTL_IFACE_INVALID;
	iface = ptl_iface_get(ptl_net(net), cfg->iface);
	if (!iface)
		goto err_net;
	rc = PTL_NO_SPACE;
	kni = kzalloc(sizeof(*kni), GFP_KERNEL);
	if (!kni)
		goto err_net;
	kni->owner = owner;
	kni->net = net;
	mutex_init(&kni->lock);
	INIT_LIST_HEAD(&kni->eqs);
	init_completion(&kni->released);
	rc = ptl_kni_create(kni, iface, cfg);
	if (rc != PTL_OK)
		goto err_free;
	*out = kni;
	return PTL_OK;

err_free:
	kfree(kni);
err_net:
	put_net(net);
	return rc;
}
EXPORT_SYMBOL_NS_GPL(__ptl_kni_init, PORTALS);

/* ptl_ni_release() of a kernel client's NI: the core NI is destroyed. */
void ptl_kapi_ni_release(struct ptl_ni *ni)
{
	struct ptl_kni *kni = ni->kni;

	ptl_keq_release_all(kni);
	complete(&kni->released);	/* @kni may be freed from here on */
}

/* Tears @kni down (it is off ptl_knis); see the top of the file. */
static void ptl_kni_teardown(struct ptl_kni *kni)
{
	struct ptl_ni *ni = kni->ni;

	/* No new incoming message finds it (pairs with find_ni). */
	WRITE_ONCE(ni->active, false);
	WRITE_ONCE(kni->dead, true);
	/* Handlers that may not have seen @dead have returned after this. */
	synchronize_rcu();
	/* Incoming messages end now, those a silent peer left open too. */
	ptl_remote_ni_closing(ni);
	ptl_ni_put(ni);
	/* Messages in flight end (the transport's peer timeout bounds it). */
	wait_for_completion(&kni->released);
	put_net(kni->net);
	kfree(kni);
}

int ptl_kni_fini(struct ptl_kni *kni)
{
	if (!kni)
		return PTL_NI_INVALID;
	mutex_lock(&ptl_knis_lock);
	list_del(&kni->node);
	mutex_unlock(&ptl_knis_lock);
	ptl_kni_teardown(kni);
	return PTL_OK;
}
EXPORT_SYMBOL_NS_GPL(ptl_kni_fini, PORTALS);

/* The first NI @mod left open, taken off the list; NULL if none. */
static struct ptl_kni *ptl_kni_take_of(struct module *mod)
{
	struct ptl_kni *kni, *found = NULL;

	mutex_lock(&ptl_knis_lock);
	list_for_each_entry(kni, &ptl_knis, node) {
		if (kni->owner == mod) {
			list_del(&kni->node);
			found = kni;
			break;
		}
	}
	mutex_unlock(&ptl_knis_lock);
	return found;
}

/* A module is going (its exit ran, or its init failed): close its NIs. */
static int ptl_kapi_module_event(struct notifier_block *nb,
				 unsigned long action, void *data)
{
	struct module *mod = data;
	struct ptl_kni *kni;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	while ((kni = ptl_kni_take_of(mod))) {
		pr_notice("%s left NI pid %u of interface %u open: finalizing it\n",
			  module_name(mod), kni->ni->pid, kni->ni->slot);
		ptl_kni_teardown(kni);
	}
	return NOTIFY_DONE;
}

static struct notifier_block ptl_kapi_module_nb = {
	.notifier_call = ptl_kapi_module_event,
};

int ptl_kapi_init(void)
{
	return register_module_notifier(&ptl_kapi_module_nb);
}

void ptl_kapi_exit(void)
{
	unregister_module_notifier(&ptl_kapi_module_nb);
}

/* ---- identity, status, access control ---- */

int ptl_kni_limits(struct ptl_kni *kni, ptl_ni_limits_t *actual)
{
	if (!kni)
		return PTL_NI_INVALID;
	if (!actual)
		return PTL_SEGV;
	ptlc_ni_limits(kni->ni->core, actual);
	return PTL_OK;
}
EXPORT_SYMBOL_NS_GPL(ptl_kni_limits, PORTALS);

int ptl_kni_identity(struct ptl_kni *kni, ptl_process_id_t *id,
		     ptl_uid_t *uid, ptl_jid_t *jid)
{
	if (!kni)
		return PTL_NI_INVALID;
	if (id)
		ptlc_ni_id(kni->ni->core, id);
	if (uid)
		*uid = ptlc_ni_uid(kni->ni->core);
	if (jid)
		*jid = ptlc_ni_jid(kni->ni->core);
	return PTL_OK;
}
EXPORT_SYMBOL_NS_GPL(ptl_kni_identity, PORTALS);

int ptl_kni_status(struct ptl_kni *kni, ptl_sr_index_t reg,
		   ptl_sr_value_t *value)
{
	if (!kni)
		return PTL_NI_INVALID;
	if (!value)
		return PTL_SEGV;
	return ptlc_ni_status(kni->ni->core, reg, value);
}
EXPORT_SYMBOL_NS_GPL(ptl_kni_status, PORTALS);

/* As PtlNIDist for processes (ptl_obj.c): one hop to any other nid. */
int ptl_kni_dist(struct ptl_kni *kni, ptl_process_id_t id,
		 unsigned long *distance)
{
	if (!kni)
		return PTL_NI_INVALID;
	if (!distance)
		return PTL_SEGV;
	if (id.nid == PTL_NID_ANY)
		return PTL_PROCESS_INVALID;
	*distance = id.nid == kni->ni->nid ? 0 : 1;
	return PTL_OK;
}
EXPORT_SYMBOL_NS_GPL(ptl_kni_dist, PORTALS);

int ptl_kac_entry(struct ptl_kni *kni, ptl_ac_index_t ac_index,
		  ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
		  ptl_pt_index_t pt_index)
{
	if (!kni)
		return PTL_NI_INVALID;
	return ptlc_ac_entry(kni->ni->core, ac_index, match_id, uid, jid,
			     pt_index);
}
EXPORT_SYMBOL_NS_GPL(ptl_kac_entry, PORTALS);

/* ---- match entries ---- */

/* Arguments every ME call shares; PTL_OK or the code to return. */
static int ptl_kme_check(struct ptl_kni *kni, ptl_unlink_t unlink,
			 ptl_ins_pos_t pos, ptl_handle_me_t *me)
{
	if (!kni)
		return PTL_NI_INVALID;
	if (!me)
		return PTL_SEGV;
	if ((unlink != PTL_RETAIN && unlink != PTL_UNLINK) ||
	    (pos != PTL_INS_BEFORE && pos != PTL_INS_AFTER))
		return PTL_FAIL;
	return PTL_OK;
}

int ptl_kme_attach(struct ptl_kni *kni, ptl_pt_index_t pt_index,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *me)
{
	int rc = ptl_kme_check(kni, unlink, pos, me);

	if (rc)
		return rc;
	return ptlc_me_attach(kni->ni->core, pt_index, match_id, match_bits,
			      ignore_bits, unlink, pos, me);
}
EXPORT_SYMBOL_NS_GPL(ptl_kme_attach, PORTALS);

int ptl_kme_attach_any(struct ptl_kni *kni, ptl_pt_index_t *pt_index,
		       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		       ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		       ptl_handle_me_t *me)
{
	int rc = ptl_kme_check(kni, unlink, PTL_INS_AFTER, me);

	if (rc)
		return rc;
	if (!pt_index)
		return PTL_SEGV;
	return ptlc_me_attach_any(kni->ni->core, pt_index, match_id,
				  match_bits, ignore_bits, unlink, me);
}
EXPORT_SYMBOL_NS_GPL(ptl_kme_attach_any, PORTALS);

int ptl_kme_insert(struct ptl_kni *kni, ptl_handle_me_t base,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_ins_pos_t pos, ptl_handle_me_t *me)
{
	int rc = ptl_kme_check(kni, unlink, pos, me);

	if (rc)
		return rc;
	return ptlc_me_insert(kni->ni->core, base, match_id, match_bits,
			      ignore_bits, unlink, pos, me);
}
EXPORT_SYMBOL_NS_GPL(ptl_kme_insert, PORTALS);

int ptl_kme_unlink(struct ptl_kni *kni, ptl_handle_me_t me)
{
	if (!kni)
		return PTL_NI_INVALID;
	return ptlc_me_unlink(kni->ni->core, me);
}
EXPORT_SYMBOL_NS_GPL(ptl_kme_unlink, PORTALS);

/* ---- memory descriptors ---- */

/* PtlMDAttach (@bind false, on @me) or PtlMDBind. */
static int ptl_kmd_create(struct ptl_kni *kni, bool bind, ptl_handle_me_t me,
			  const struct ptl_kmd *md, ptl_unlink_t unlink,
			  ptl_handle_md_t *out)
{
	struct ptlc_md_spec spec;
	int rc;

	if (!kni)
		return PTL_NI_INVALID;
	if (!out)
		return PTL_SEGV;
	if (unlink != PTL_RETAIN && unlink != PTL_UNLINK)
		return PTL_FAIL;
	rc = ptl_kmem_spec(kni->ni, md, &spec);
	if (rc)
		return rc;
	if (bind)
		rc = ptlc_md_bind(kni->ni->core, &spec, unlink, out);
	else
		rc = ptlc_md_attach(kni->ni->core, me, &spec, unlink, out);
	if (rc != PTL_OK)
		ptl_mem_release(spec.mem);	/* still ours */
	ptl_mem_spec_done(&spec);
	return rc;
}

int ptl_kmd_attach(struct ptl_kni *kni, ptl_handle_me_t me,
		   const struct ptl_kmd *md, ptl_unlink_t unlink,
		   ptl_handle_md_t *out)
{
	return ptl_kmd_create(kni, false, me, md, unlink, out);
}
EXPORT_SYMBOL_NS_GPL(ptl_kmd_attach, PORTALS);

int ptl_kmd_bind(struct ptl_kni *kni, const struct ptl_kmd *md,
		 ptl_unlink_t unlink, ptl_handle_md_t *out)
{
	return ptl_kmd_create(kni, true, PTL_INVALID_HANDLE, md, unlink, out);
}
EXPORT_SYMBOL_NS_GPL(ptl_kmd_bind, PORTALS);

int ptl_kmd_unlink(struct ptl_kni *kni, ptl_handle_md_t md)
{
	if (!kni)
		return PTL_NI_INVALID;
	return ptlc_md_unlink(kni->ni->core, md);
}
EXPORT_SYMBOL_NS_GPL(ptl_kmd_unlink, PORTALS);

int ptl_kmd_update(struct ptl_kni *kni, ptl_handle_md_t md, ptl_md_t *old,
		   const struct ptl_kmd *new_md, ptl_handle_eq_t eq)
{
	struct ptlc_md_spec spec, *new_spec = NULL;
	ptl_seq_t consumer = 0;
	unsigned int nsegs = 0;
	int rc;

	if (!kni)
		return PTL_NI_INVALID;
	if (eq != PTL_EQ_NONE &&
	    ptl_keq_consumer_seq(kni, eq, &consumer) != PTL_OK)
		return PTL_EQ_INVALID;
	if (new_md) {
		rc = ptl_kmem_spec(kni->ni, new_md, &spec);
		if (rc) {	/* the old MD is still reported (contract 12) */
			ptlc_md_update(kni->ni->core, md, old, NULL, 0, &nsegs,
				       NULL, PTL_EQ_NONE, 0);
			return rc;
		}
		new_spec = &spec;
	}
	rc = ptlc_md_update(kni->ni->core, md, old, NULL, 0, &nsegs, new_spec,
			    eq, consumer);
	if (new_spec) {
		if (rc != PTL_OK)
			ptl_mem_release(spec.mem);
		ptl_mem_spec_done(&spec);
	}
	return rc;
}
EXPORT_SYMBOL_NS_GPL(ptl_kmd_update, PORTALS);

/* ---- data movement ---- */

/* One data call, checked as PTL_IOC_DATA checks a process's. */
static int ptl_kdata(struct ptl_kni *kni, const struct ptl_data_req *req)
{
	if (!kni)
		return PTL_NI_INVALID;
	if (req->args.ack_req != PTL_ACK_REQ &&
	    req->args.ack_req != PTL_NO_ACK_REQ)
		return PTL_FAIL;
	return ptl_data_call(kni->ni, req);
}

/* PtlPut (@region false) and PtlPutRegion. */
static int ptl_kput_op(struct ptl_kni *kni, bool region, ptl_handle_md_t md,
		       ptl_size_t local_offset, ptl_size_t length,
		       ptl_ack_req_t ack, ptl_process_id_t target,
		       ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		       ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		       ptl_hdr_data_t hdr_data)
{
	struct ptl_data_req req = {
		.op = PTL_DATA_PUT, .region = region,
		.args = {
			.md = md, .local_offset = local_offset,
			.length = length, .ack_req = ack, .target = target,
			.pt_index = pt_index, .ac_index = ac_index,
			.match_bits = match_bits,
			.remote_offset = remote_offset, .hdr_data = hdr_data,
		},
	};

	return ptl_kdata(kni, &req);
}

int ptl_kput_region(struct ptl_kni *kni, ptl_handle_md_t md,
		    ptl_size_t local_offset, ptl_size_t length,
		    ptl_ack_req_t ack, ptl_process_id_t target,
		    ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		    ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		    ptl_hdr_data_t hdr_data)
{
	return ptl_kput_op(kni, true, md, local_offset, length,
			   ack, target, pt_index, ac_index, match_bits,
			   remote_offset, hdr_data);
}
EXPORT_SYMBOL_NS_GPL(ptl_kput_region, PORTALS);

int ptl_kput(struct ptl_kni *kni, ptl_handle_md_t md, ptl_ack_req_t ack,
	     ptl_process_id_t target, ptl_pt_index_t pt_index,
	     ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	     ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
	return ptl_kput_op(kni, false, md, 0, 0, ack, target, pt_index, ac_index,
			   match_bits, remote_offset, hdr_data);
}
EXPORT_SYMBOL_NS_GPL(ptl_kput, PORTALS);

/* PtlGet (@region false) and PtlGetRegion. */
static int ptl_kget_op(struct ptl_kni *kni, bool region, ptl_handle_md_t md,
		       ptl_size_t local_offset, ptl_size_t length,
		       ptl_process_id_t target, ptl_pt_index_t pt_index,
		       ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		       ptl_size_t remote_offset)
{
	struct ptl_data_req req = {
		.op = PTL_DATA_GET, .region = region,
		.args = {
			.md = md, .local_offset = local_offset,
			.length = length, .ack_req = PTL_NO_ACK_REQ,
			.target = target, .pt_index = pt_index,
			.ac_index = ac_index, .match_bits = match_bits,
			.remote_offset = remote_offset,
		},
	};

	return ptl_kdata(kni, &req);
}

int ptl_kget_region(struct ptl_kni *kni, ptl_handle_md_t md,
		    ptl_size_t local_offset, ptl_size_t length,
		    ptl_process_id_t target, ptl_pt_index_t pt_index,
		    ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		    ptl_size_t remote_offset)
{
	return ptl_kget_op(kni, true, md, local_offset, length,
			   target, pt_index, ac_index, match_bits,
			   remote_offset);
}
EXPORT_SYMBOL_NS_GPL(ptl_kget_region, PORTALS);

int ptl_kget(struct ptl_kni *kni, ptl_handle_md_t md, ptl_process_id_t target,
	     ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
	     ptl_match_bits_t match_bits, ptl_size_t remote_offset)
{
	return ptl_kget_op(kni, false, md, 0, 0, target, pt_index, ac_index,
			   match_bits, remote_offset);
}
EXPORT_SYMBOL_NS_GPL(ptl_kget, PORTALS);

int ptl_kgetput(struct ptl_kni *kni, ptl_handle_md_t get_md,
		ptl_handle_md_t put_md, ptl_process_id_t target,
		ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		ptl_hdr_data_t hdr_data)
{
	struct ptl_data_req req = {
		.op = PTL_DATA_GETPUT, .get_md = get_md,
		.args = {
			.md = put_md, .ack_req = PTL_NO_ACK_REQ,
			.target = target, .pt_index = pt_index,
			.ac_index = ac_index, .match_bits = match_bits,
			.remote_offset = remote_offset, .hdr_data = hdr_data,
		},
	};

	return ptl_kdata(kni, &req);
}
EXPORT_SYMBOL_NS_GPL(ptl_kgetput, PORTALS);
