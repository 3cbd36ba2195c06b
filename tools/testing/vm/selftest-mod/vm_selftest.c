// SPDX-License-Identifier: GPL-2.0
/*
 * vm_selftest - a test module for the harness's own self-test
 * (tools/testing/vm/selftest), not part of Portals.
 *
 * Loaded with no parameters it does nothing but load and unload cleanly,
 * which checks that an unsigned out-of-tree module's taint messages do not
 * fail a run.  Each parameter plants one real bug at load time, so that
 * the self-test can show the harness catching it:
 *
 *   warn=1     a WARN_ON(); with panic_on_warn=1 the guest panics
 *   uaf=1      a read after kfree() (KASAN on the debug kernel)
 *   leak=1     a kmalloc() nobody frees (kmemleak on the debug kernel)
 *   lockdep=1  two mutexes taken in both orders (lockdep)
 *   ubsan=1    a shift by more than the type's width (UBSAN)
 *
 * The last four are silent on Debian's kernel, which has none of these
 * checkers: the self-test uses them with --kernel debug only.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/compiler.h>

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "trigger a WARN_ON() at load time");

static bool uaf;
module_param(uaf, bool, 0444);
MODULE_PARM_DESC(uaf, "read freed memory at load time");

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "leak an allocation at load time");

static bool lockdep;
module_param(lockdep, bool, 0444);
MODULE_PARM_DESC(lockdep, "take two mutexes in both orders at load time");

static bool ubsan;
module_param(ubsan, bool, 0444);
MODULE_PARM_DESC(ubsan, "shift out of bounds at load time");

static DEFINE_MUTEX(lock_a);
static DEFINE_MUTEX(lock_b);

static noinline void plant_uaf(void)
{
	char *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	/* Hide the pointer's history from the compiler's own warnings. */
	OPTIMIZER_HIDE_VAR(p);
	pr_info("vm_selftest: read after free: %d\n", READ_ONCE(p[8]));
}

static noinline void plant_leak(void)
{
	void *p = kmalloc(128, GFP_KERNEL);

	/* The pointer dies with this frame: nothing references the object. */
	OPTIMIZER_HIDE_VAR(p);
	pr_info("vm_selftest: leaking an object (%s)\n", p ? "allocated" : "none");
}

static noinline void plant_lock_inversion(void)
{
	/* One thread, so no deadlock; lockdep still sees A->B and B->A. */
	mutex_lock(&lock_a);
	mutex_lock(&lock_b);
	mutex_unlock(&lock_b);
	mutex_unlock(&lock_a);

	mutex_lock(&lock_b);
	mutex_lock(&lock_a);
	mutex_unlock(&lock_a);
	mutex_unlock(&lock_b);
}

static noinline void plant_bad_shift(void)
{
	int width = 40;
	int one = 1;

	OPTIMIZER_HIDE_VAR(width);
	pr_info("vm_selftest: 1 << %d = %d\n", width, one << width);
}

static int __init vm_selftest_init(void)
{
	pr_info("vm_selftest: loaded (warn=%d uaf=%d leak=%d lockdep=%d ubsan=%d)\n",
		warn, uaf, leak, lockdep, ubsan);
	WARN_ON(warn);
	if (uaf)
		plant_uaf();
	if (leak)
		plant_leak();
	if (lockdep)
		plant_lock_inversion();
	if (ubsan)
		plant_bad_shift();
	return 0;
}

static void __exit vm_selftest_exit(void)
{
	pr_info("vm_selftest: unloaded\n");
}

module_init(vm_selftest_init);
module_exit(vm_selftest_exit);
MODULE_DESCRIPTION("tools/testing/vm harness self-test module");
MODULE_LICENSE("GPL");
