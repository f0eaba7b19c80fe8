// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test module for the VM runner's own selftest: it WARNs on load so that the
 * runner can show that a kernel splat fails a run whose command passed.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init mrc_splat_init(void)
{
	WARN(1, "mrc_splat: deliberate warning for the VM runner selftest\n");
	return 0;
}

static void __exit mrc_splat_exit(void)
{
}

module_init(mrc_splat_init);
module_exit(mrc_splat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Deliberate WARN for the MRC VM runner selftest");
