// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/portals: the misc device, per-open state and ioctl dispatch.
 *
 * Every command's argument struct starts with { size, flags } (see
 * uapi/linux/portals.h). Dispatch copies the caller's struct in with
 * copy_struct_from_user()'s rules so older and newer callers both work,
 * refuses unknown flags, runs the handler on a kernel copy and, unless the
 * command only takes input, writes the struct back up to the caller's size.
 *
 * A handler that changes state (creates an ME, MD or EQ, updates an MD)
 * reports through that final copy-out, so a struct that cannot be written
 * must not leave a change behind that the caller never learns about.
 * Dispatch therefore writes the caller's own bytes back before running
 * such a handler (idempotent; a read-only struct fails here with EFAULT
 * and nothing is done), and if the copy-out still fails (another thread
 * unmapped or mprotected the struct meanwhile) the command's undo hook
 * destroys what the handler created, as RDMA's uobj_alloc_abort() does.
 * PTL_IOC_NI_INIT has no undo: PtlNIInit on an open interface returns the
 * same NI, so the caller can always learn its handle again (and PtlNIFini
 * it). Queries (EQ_WAIT among them) skip the first write: failing to
 * report loses nothing.
 *
 * The file also maps EQ rings (mmap) and reports them readable (poll);
 * both live in ptl_eq.c. io_uring commands (ptl_uring.c) run through
 * the same dispatch: ptl_dev_call_user() and ptl_dev_call_inline().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/nsproxy.h>
#include <net/net_namespace.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ptl_internal.h"

static long ptl_ioctl_version(struct ptl_file *pf, void *arg)
{
	struct ptl_ioc_version *args = arg;

	if (args->reserved)
		return -EINVAL;
	args->abi_version = PTL_ABI_VERSION;
	args->max_interfaces = PTL_MAX_INTERFACES;
	/* The library learns the launcher's job id from the kernel itself. */
	mutex_lock(&pf->lock);
	args->jid = pf->jid_set ? pf->jid : PTL_JID_ANY;
	mutex_unlock(&pf->lock);
	return PTL_OK;
}

/*
 * What a command does with its argument struct, which decides the copies:
 * IN commands write nothing back (the data call, one per message, and the
 * unlinks); QUERY commands write results back but change nothing, so a
 * struct that cannot be written back simply fails with EFAULT; UPDATE
 * commands change state and then report, so their struct is proven
 * writable before they run (and an object they created is undone if the
 * copy-out still fails).
 */
enum ptl_ioctl_kind {
	PTL_IOCTL_KIND_IN,
	PTL_IOCTL_KIND_QUERY,
	PTL_IOCTL_KIND_UPDATE,
};

struct ptl_ioctl_desc {
	long (*handler)(struct ptl_file *pf, void *arg);
	/*
	 * Destroys the object a successful handler created, when its
	 * handle could not be copied out; process context, no lock held.
	 */
	void (*undo)(struct ptl_file *pf, void *arg);
	/* copy_struct_from_user() and the copy back, sized per command. */
	int (*copy_in)(void *kargs, const void __user *uargs, u32 usize);
	int (*copy_out)(void __user *uargs, const void *kargs, u32 usize);
	u32 arg_size;		/* the kernel's sizeof() of the arg struct */
	u32 valid_flags;
	enum ptl_ioctl_kind kind;
};

/*
 * Hardened usercopy checks every copy whose size is not a compile-time
 * constant against the bounds of the kernel object (here the stack frame):
 * a few hundred instructions per copy, several copies per message. The
 * argument structs have fixed sizes, so each command gets copy helpers in
 * which the usual case, a caller of the same ABI size, copies a constant
 * size; other sizes take copy_struct_from_user()'s general path.
 */
#define PTL_IOCTL_COPY_FNS(tag)						\
static int ptl_copy_in_##tag(void *kargs, const void __user *uargs,	\
			     u32 usize)					\
{									\
	if (likely(usize == sizeof(struct tag)))			\
		return copy_from_user(kargs, uargs, sizeof(struct tag)) ?	\
		       -EFAULT : 0;					\
	return copy_struct_from_user(kargs, sizeof(struct tag), uargs,	\
				     usize);				\
}									\
static int ptl_copy_out_##tag(void __user *uargs, const void *kargs,	\
			      u32 usize)				\
{									\
	if (likely(usize >= sizeof(struct tag)))			\
		return copy_to_user(uargs, kargs, sizeof(struct tag)) ?	\
		       -EFAULT : 0;					\
	return copy_to_user(uargs, kargs, usize) ? -EFAULT : 0;	\
}

PTL_IOCTL_COPY_FNS(ptl_ioc_version)
PTL_IOCTL_COPY_FNS(ptl_ioc_ni_init)
PTL_IOCTL_COPY_FNS(ptl_ioc_ni_fini)
PTL_IOCTL_COPY_FNS(ptl_ioc_ni_identity)
PTL_IOCTL_COPY_FNS(ptl_ioc_ni_status)
PTL_IOCTL_COPY_FNS(ptl_ioc_ni_dist)
PTL_IOCTL_COPY_FNS(ptl_ioc_handle_ni)
PTL_IOCTL_COPY_FNS(ptl_ioc_me_attach)
PTL_IOCTL_COPY_FNS(ptl_ioc_handle)
PTL_IOCTL_COPY_FNS(ptl_ioc_md_attach)
PTL_IOCTL_COPY_FNS(ptl_ioc_md_update)
PTL_IOCTL_COPY_FNS(ptl_ioc_eq_alloc)
PTL_IOCTL_COPY_FNS(ptl_ioc_eq_wait)
PTL_IOCTL_COPY_FNS(ptl_ioc_ac_entry)
PTL_IOCTL_COPY_FNS(ptl_ioc_data)
PTL_IOCTL_COPY_FNS(ptl_ioc_set_jid)
PTL_IOCTL_COPY_FNS(ptl_ioc_me_post)

#define PTL_IOCTL_DESC(cmd, fn, tag, flags, undo_fn, how)		\
	[_IOC_NR(cmd)] = {						\
		.handler = fn,						\
		.undo = undo_fn,					\
		.copy_in = ptl_copy_in_##tag,				\
		.copy_out = ptl_copy_out_##tag,				\
		.arg_size = sizeof(struct tag),				\
		.valid_flags = flags,					\
		.kind = PTL_IOCTL_KIND_##how,				\
	}

#define PTL_IOCTL(cmd, fn, tag, flags, how)				\
	PTL_IOCTL_DESC(cmd, fn, tag, flags, NULL, how)

static const struct ptl_ioctl_desc ptl_ioctls[] = {
	PTL_IOCTL(PTL_IOC_VERSION, ptl_ioctl_version,
		  ptl_ioc_version, 0, QUERY),
	/* No undo: PtlNIInit again returns the same NI (see the top). */
	PTL_IOCTL(PTL_IOC_NI_INIT, ptl_ioctl_ni_init,
		  ptl_ioc_ni_init, PTL_NI_INIT_FLAGS_ALL, UPDATE),
	PTL_IOCTL(PTL_IOC_NI_FINI, ptl_ioctl_ni_fini,
		  ptl_ioc_ni_fini, 0, UPDATE),
	PTL_IOCTL(PTL_IOC_NI_IDENTITY, ptl_ioctl_ni_identity,
		  ptl_ioc_ni_identity, 0, QUERY),
	PTL_IOCTL(PTL_IOC_NI_STATUS, ptl_ioctl_ni_status,
		  ptl_ioc_ni_status, 0, QUERY),
	PTL_IOCTL(PTL_IOC_NI_DIST, ptl_ioctl_ni_dist,
		  ptl_ioc_ni_dist, 0, QUERY),
	PTL_IOCTL(PTL_IOC_HANDLE_NI, ptl_ioctl_handle_ni,
		  ptl_ioc_handle_ni, 0, QUERY),
	PTL_IOCTL_DESC(PTL_IOC_ME_ATTACH, ptl_ioctl_me_attach,
		       ptl_ioc_me_attach, PTL_ME_ATTACH_FLAGS_ALL,
		       ptl_undo_me_attach, UPDATE),
	PTL_IOCTL(PTL_IOC_ME_UNLINK, ptl_ioctl_me_unlink,
		  ptl_ioc_handle, 0, IN),
	PTL_IOCTL_DESC(PTL_IOC_MD_ATTACH, ptl_ioctl_md_attach,
		       ptl_ioc_md_attach, PTL_MD_ATTACH_FLAGS_ALL,
		       ptl_undo_md_attach, UPDATE),
	PTL_IOCTL(PTL_IOC_MD_UNLINK, ptl_ioctl_md_unlink,
		  ptl_ioc_handle, 0, IN),
	PTL_IOCTL(PTL_IOC_MD_UPDATE, ptl_ioctl_md_update,
		  ptl_ioc_md_update, PTL_MD_UPDATE_FLAGS_ALL, UPDATE),
	PTL_IOCTL_DESC(PTL_IOC_EQ_ALLOC, ptl_ioctl_eq_alloc,
		       ptl_ioc_eq_alloc, 0, ptl_undo_eq_alloc, UPDATE),
	PTL_IOCTL(PTL_IOC_EQ_FREE, ptl_ioctl_eq_free,
		  ptl_ioc_handle, 0, IN),
	PTL_IOCTL(PTL_IOC_EQ_WAIT, ptl_ioctl_eq_wait,
		  ptl_ioc_eq_wait, 0, QUERY),
	PTL_IOCTL(PTL_IOC_AC_ENTRY, ptl_ioctl_ac_entry,
		  ptl_ioc_ac_entry, 0, UPDATE),
	PTL_IOCTL(PTL_IOC_DATA, ptl_ioctl_data,
		  ptl_ioc_data, PTL_DATA_FLAGS_ALL, IN),
	PTL_IOCTL(PTL_IOC_SET_JID, ptl_ioctl_set_jid,
		  ptl_ioc_set_jid, 0, UPDATE),
	PTL_IOCTL_DESC(PTL_IOC_ME_POST, ptl_ioctl_me_post,
		       ptl_ioc_me_post, 0, ptl_undo_me_post, UPDATE),
};

/*
 * Kernels built to zero every stack variable (Debian's:
 * CONFIG_INIT_STACK_ALL_ZERO) would clear this union on every call, one
 * per message; copy_struct_from_user() fills (and zero-extends) the part
 * a command uses, and nothing reads past it.
 */
#if __has_attribute(__uninitialized__)
#define __ptl_noinit __attribute__((__uninitialized__))
#else
#define __ptl_noinit
#endif

/* Large enough for any argument struct; kept off the heap. */
union ptl_ioctl_args {
	struct ptl_ioc_head head;
	struct ptl_ioc_version version;
	struct ptl_ioc_ni_init ni_init;
	struct ptl_ioc_ni_fini ni_fini;
	struct ptl_ioc_ni_identity ni_identity;
	struct ptl_ioc_ni_status ni_status;
	struct ptl_ioc_ni_dist ni_dist;
	struct ptl_ioc_handle_ni handle_ni;
	struct ptl_ioc_me_attach me_attach;
	struct ptl_ioc_handle handle;
	struct ptl_ioc_md_attach md_attach;
	struct ptl_ioc_md_update md_update;
	struct ptl_ioc_eq_alloc eq_alloc;
	struct ptl_ioc_eq_wait eq_wait;
	struct ptl_ioc_ac_entry ac_entry;
	struct ptl_ioc_data data;
	struct ptl_ioc_set_jid set_jid;
	struct ptl_ioc_me_post me_post;
};

static const struct ptl_ioctl_desc *ptl_ioctl_find(unsigned int cmd)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != PTL_IOC_MAGIC || nr >= ARRAY_SIZE(ptl_ioctls))
		return NULL;
	nr = array_index_nospec(nr, ARRAY_SIZE(ptl_ioctls));
	if (!ptl_ioctls[nr].handler)
		return NULL;
	return &ptl_ioctls[nr];
}

/**
 * ptl_dev_call_user - one command with its argument struct in user memory
 * @pf: the file's state (the caller's identity: never current's)
 * @cmd: the ioctl command
 * @argp: the argument struct
 *
 * The ioctl path, shared with io_uring's PTL_URING_IOCTL (ptl_uring.c).
 * Return: a Portals code, or a negative errno for an ABI-level failure.
 */
long ptl_dev_call_user(struct ptl_file *pf, unsigned int cmd,
		       void __user *argp)
{
	const struct ptl_ioctl_desc *desc;
	union ptl_ioctl_args args __ptl_noinit;
	u32 usize;
	long rc;
	int err;

	desc = ptl_ioctl_find(cmd);
	if (!desc)
		return -ENOTTY;
	if (get_user(usize, (u32 __user *)argp))
		return -EFAULT;
	if (usize < sizeof(struct ptl_ioc_head) || usize > PTL_IOC_MAX_ARG_SIZE)
		return -EINVAL;
	err = desc->copy_in(&args, argp, usize);
	if (err)
		return err;
	if (args.head.flags & ~desc->valid_flags)
		return -EINVAL;
	if (desc->kind == PTL_IOCTL_KIND_IN)
		return desc->handler(pf, &args);
	/* The reply must be deliverable before anything is done. */
	if (desc->kind == PTL_IOCTL_KIND_UPDATE &&
	    desc->copy_out(argp, &args, usize))
		return -EFAULT;

	rc = desc->handler(pf, &args);
	if (rc < 0)
		return rc;
	if (desc->copy_out(argp, &args, usize)) {
		if (rc == PTL_OK && desc->undo)
			desc->undo(pf, &args);
		return -EFAULT;
	}
	return rc;
}

/**
 * ptl_dev_call_inline - an input-only command whose struct is in the kernel
 * @pf: the file's state
 * @cmd: the ioctl command; only commands that write nothing back qualify
 * @buf: a kernel copy of the caller's struct (an io_uring SQE's command area)
 * @len: bytes in @buf
 *
 * The same rules as copy_struct_from_user(): @size may be smaller than the
 * kernel's struct (the tail reads as zero) or larger if the excess is zero.
 * Return: a Portals code, or a negative errno as for the ioctl.
 */
long ptl_dev_call_inline(struct ptl_file *pf, unsigned int cmd,
			 const void *buf, u32 len)
{
	const struct ptl_ioctl_desc *desc = ptl_ioctl_find(cmd);
	union ptl_ioctl_args args __ptl_noinit;
	u32 usize;

	if (!desc || desc->kind != PTL_IOCTL_KIND_IN)
		return -EOPNOTSUPP;
	if (len < sizeof(struct ptl_ioc_head))
		return -EINVAL;
	usize = ((const struct ptl_ioc_head *)buf)->size;
	if (usize < sizeof(struct ptl_ioc_head) || usize > len)
		return -EINVAL;
	if (usize > desc->arg_size &&
	    memchr_inv(buf + desc->arg_size, 0, usize - desc->arg_size))
		return -E2BIG;
	memcpy(&args, buf, min(usize, desc->arg_size));
	if (usize < desc->arg_size)
		memset((void *)&args + usize, 0, desc->arg_size - usize);
	if (args.head.flags & ~desc->valid_flags)
		return -EINVAL;
	return desc->handler(pf, &args);
}

static long ptl_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	return ptl_dev_call_user(file->private_data, cmd,
				 (void __user *)uarg);
}

static int ptl_open(struct inode *inode, struct file *file)
{
	struct ptl_file *pf;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	if (ptl_acct_init(&pf->acct, file)) {
		kfree(pf);
		return -ENOMEM;
	}
	pf->wake = ptl_wake_alloc();
	if (!pf->wake) {
		ptl_acct_release(&pf->acct);
		kfree(pf);
		return -ENOMEM;
	}
	mutex_init(&pf->lock);
	/* The namespace it is opened in is the Portals node it belongs to. */
	pf->net = get_net(current->nsproxy->net_ns);
	pf->pn = ptl_net(pf->net);
	pf->euid = file->f_cred->euid;
	file->private_data = pf;
	atomic_long_inc(&ptl_stats.open_files);
	return 0;
}

/*
 * close(), exit or kill -9: every NI goes, with its MEs, MDs and EQs.
 * Unpinning is deferred by the core's release hook; wait for it so that
 * the process's pinned pages are back when its last close returns.
 */
static int ptl_release(struct inode *inode, struct file *file)
{
	struct ptl_file *pf = file->private_data;

	ptl_file_release_nis(pf);
	ptl_mem_flush();
	ptl_wake_put(pf->wake);
	ptl_acct_release(&pf->acct);
	put_net(pf->net);
	mutex_destroy(&pf->lock);
	kfree(pf);
	atomic_long_dec(&ptl_stats.open_files);
	return 0;
}

static __poll_t ptl_poll(struct file *file, struct poll_table_struct *wait)
{
	struct ptl_file *pf = file->private_data;

	poll_wait(file, &pf->wake->wq, wait);
	/* Pairs with wq_has_sleeper() in ptl_eq_notify(). */
	smp_mb();
	return ptl_eq_poll(pf);
}

static int ptl_mmap(struct file *file, struct vm_area_struct *vma)
{
	return ptl_eq_mmap(file->private_data, vma);
}

static const struct file_operations ptl_fops = {
	.owner = THIS_MODULE,
	.open = ptl_open,
	.release = ptl_release,
	.unlocked_ioctl = ptl_ioctl,
	.uring_cmd = ptl_uring_cmd,
	.poll = ptl_poll,
	.mmap = ptl_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice ptl_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = PTL_DEVICE_NAME,
	.fops = &ptl_fops,
	.groups = ptl_attr_groups,
	/* Any user may use Portals; privileged operations check caps. */
	.mode = 0666,
};

int ptl_dev_init(void)
{
	int err;

	err = ptl_move_init();
	if (err)
		return err;
	err = misc_register(&ptl_miscdev);
	if (err)
		ptl_move_exit();
	return err;
}

void ptl_dev_exit(void)
{
	misc_deregister(&ptl_miscdev);
	/* No file is open: every NI was released; finish their unpinning. */
	ptl_mem_flush();
	ptl_move_exit();
}
