// SPDX-License-Identifier: GPL-2.0
/*
 * vm_selftest - a test module for the harness's own self-test
 * (tools/vm/selftest), not part of Portals.
 *
 * Loaded with no parameters it does nothing but load and unload cleanly,
 * which checks that an unsigned out-of-tree module's taint messages do not
 * fail a run.  With warn=1 it hits a real WARN_ON() at load time, which
 * with panic_on_warn=1 must panic the guest and fail the run.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "trigger a WARN_ON() at load time");

static int __init vm_selftest_init(void)
{
	pr_info("vm_selftest: loaded (warn=%d)\n", warn);
	WARN_ON(warn);
	return 0;
}

static void __exit vm_selftest_exit(void)
{
	pr_info("vm_selftest: unloaded\n");
}

module_init(vm_selftest_init);
module_exit(vm_selftest_exit);
MODULE_DESCRIPTION("tools/vm harness self-test module");
MODULE_LICENSE("GPL");
