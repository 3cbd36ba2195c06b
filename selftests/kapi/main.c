// SPDX-License-Identifier: GPL-2.0
/*
 * ptl_kapi_test.ko: module init/exit and the control file
 * /sys/kernel/debug/ptl_kapi_test/ctl.
 *
 * A test writes one command line and reads back what it printed:
 *
 *   selftest                 every in-kernel case; TAP lines, one per case
 *   serve PID                a kernel server NI with PID in the writer's
 *                            network namespace; prints "nid N pid P"
 *   status PID               what the server's callback EQ saw
 *   client PID UNID UPID     the server puts what it received back to the
 *                            process UNID:UPID and gets from it; "ok" or
 *                            "not ok: why"
 *   stop PID                 ptl_kni_fini() of the server
 *   leak PID                 an NI left open on purpose: module unload
 *                            must finalize it
 *
 * A command that fails returns -EIO from write(), so a test cannot miss it;
 * the reason is in the output. One command at a time (a mutex).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ptl_kapi_test.h"

#define KT_OUT_SIZE	(64 * 1024)
#define KT_CMD_SIZE	128

static DEFINE_MUTEX(kt_lock);
static char *kt_buf;		/* output of the last command */
static size_t kt_len;
static struct dentry *kt_dir;

void kt_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_len += vscnprintf(kt_buf + kt_len, KT_OUT_SIZE - kt_len, fmt, ap);
	va_end(ap);
}

void kt_fill(void *buf, size_t len, u32 seed, size_t from)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = kt_pattern(seed, from + i);
}

long kt_check(const void *buf, size_t len, u32 seed, size_t from)
{
	const u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != kt_pattern(seed, from + i))
			return i;
	return -1;
}

void kt_cb_init(struct kt_cb *cb)
{
	memset(cb, 0, sizeof(*cb));
	spin_lock_init(&cb->lock);
}

/* A callback EQ handler: BH off, NI lock held; only records. */
void kt_cb_handler(void *priv, const ptl_event_t *ev)
{
	struct kt_cb *cb = priv;

	spin_lock(&cb->lock);
	if (cb->n < KT_CB_EVENTS)
		cb->ev[cb->n] = *ev;
	cb->n++;
	if (in_serving_softirq())
		cb->in_softirq++;
	if (ev->type < PTL_EVENT_KIND_COUNT)
		cb->counts[ev->type]++;
	spin_unlock(&cb->lock);
}

unsigned int kt_cb_count(struct kt_cb *cb, ptl_event_kind_t kind)
{
	unsigned int n;

	spin_lock_bh(&cb->lock);
	n = cb->counts[kind];
	spin_unlock_bh(&cb->lock);
	return n;
}

/* Runs one command line; 0 or a negative errno. */
static int kt_command(char *line)
{
	char cmd[16];
	u32 a = 0, b = 0, c = 0;
	int n;

	n = sscanf(line, "%15s %u %u %u", cmd, &a, &b, &c);
	if (n < 1)
		return -EINVAL;
	if (!strcmp(cmd, "selftest"))
		return kt_run_cases() ? -EIO : 0;
	if (!strcmp(cmd, "serve") && n == 2)
		return kt_peer_serve(a);
	if (!strcmp(cmd, "status") && n == 2)
		return kt_peer_status(a);
	if (!strcmp(cmd, "client") && n == 4)
		return kt_peer_client(a, b, c);
	if (!strcmp(cmd, "stop") && n == 2)
		return kt_peer_stop(a);
	if (!strcmp(cmd, "leak") && n == 2)
		return kt_peer_leak(a);
	return -EINVAL;
}

static ssize_t kt_ctl_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char line[KT_CMD_SIZE];
	int err;

	if (count >= sizeof(line))
		return -EINVAL;
	if (copy_from_user(line, ubuf, count))
		return -EFAULT;
	line[count] = '\0';
	mutex_lock(&kt_lock);
	kt_len = 0;
	kt_buf[0] = '\0';
	err = kt_command(line);
	mutex_unlock(&kt_lock);
	return err ? err : count;
}

static ssize_t kt_ctl_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	ssize_t n;

	mutex_lock(&kt_lock);
	n = simple_read_from_buffer(ubuf, count, ppos, kt_buf, kt_len);
	mutex_unlock(&kt_lock);
	return n;
}

static const struct file_operations kt_ctl_fops = {
	.owner = THIS_MODULE,
	.write = kt_ctl_write,
	.read = kt_ctl_read,
	.llseek = default_llseek,
};

static int __init kt_init(void)
{
	kt_buf = kzalloc(KT_OUT_SIZE, GFP_KERNEL);
	if (!kt_buf)
		return -ENOMEM;
	kt_dir = debugfs_create_dir("ptl_kapi_test", NULL);
	debugfs_create_file("ctl", 0600, kt_dir, NULL, &kt_ctl_fops);
	return 0;
}

/*
 * NIs opened by "leak" are deliberately left for ptl.ko to finalize when
 * this module is gone (include/ptl/kapi.h, "Lifetime").
 */
static void __exit kt_exit(void)
{
	debugfs_remove_recursive(kt_dir);
	kt_peer_exit();
	kfree(kt_buf);
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Tests of the Portals kernel API");
MODULE_IMPORT_NS(PORTALS);
