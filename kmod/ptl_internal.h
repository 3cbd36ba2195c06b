/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptl.ko internals shared between the files of the module. The Portals
 * semantics live in core/; this is the kernel glue around it.
 */
#ifndef PTL_INTERNAL_H
#define PTL_INTERNAL_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <linux/portals.h>
#include <p3api/types.h>
#include <p3/errno.h>
#include <p3/nal_types.h>

/*
 * A Portals interface of this node. Interface n answers to the NAL type
 * PTL_NALTYPE_LINUX0 + n. Its pid space is node-wide: a pid held by one
 * process cannot be taken by another until released (contract 2).
 */
struct ptl_iface {
	u32 index;
	u32 nid;
	struct xarray pids;	/* pid -> owning ptl_ni (for delivery) */
};

struct ptlc_ni;

/*
 * One process's network interface (what a ptl_handle_ni_t names): the
 * core's NI plus what the kernel needs around it.
 */
struct ptl_ni {
	struct kref ref;
	struct rcu_head rcu;
	struct ptl_iface *iface;
	struct ptlc_ni *core;
	u32 slot;
	u32 pid;
};

/*
 * State of one open of /dev/portals: the Portals library instance of one
 * process. NI pointers are published with RCU so the data path can look
 * them up without the mutex; the mutex serialises creation and teardown.
 */
struct ptl_file {
	struct mutex lock;
	struct ptl_ni __rcu *ni[PTL_MAX_INTERFACES];
	kuid_t euid;		/* credentials at open time */
};

/* ptl_iface.c */
int ptl_ifaces_init(u32 default_nid);
void ptl_ifaces_exit(void);
struct ptl_iface *ptl_iface_get(u32 index);
int ptl_iface_claim_pid(struct ptl_iface *iface, u32 pid, struct ptl_ni *ni,
			u32 *out_pid);
void ptl_iface_release_pid(struct ptl_iface *iface, u32 pid);

/* ptl_ni.c */
long ptl_ioctl_ni_init(struct ptl_file *pf, void *arg);
long ptl_ioctl_ni_fini(struct ptl_file *pf, void *arg);
long ptl_ioctl_ni_identity(struct ptl_file *pf, void *arg);
struct ptl_ni *ptl_ni_lookup(struct ptl_file *pf, ptl_handle_ni_t handle);
void ptl_ni_put(struct ptl_ni *ni);
void ptl_file_release_nis(struct ptl_file *pf);

/* ptl_dev.c */
int ptl_dev_init(void);
void ptl_dev_exit(void);

#endif /* PTL_INTERNAL_H */
