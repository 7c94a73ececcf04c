// SPDX-License-Identifier: GPL-2.0-only
/*
 * The splats sleepy_splat_test cannot provoke, for recording the kernel
 * logs of tests/data/vm/ (see its README.md): loading it with provoke=kasan
 * reads freed memory, provoke=leak loses an allocation for kmemleak to
 * find, provoke=oops dereferences NULL (with oops=panic: a panic). Built
 * out of tree against the debug kernel; never part of the images.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *provoke = "none";
module_param(provoke, charp, 0444);

static void *leaked;

static int __init splat_extra_init(void)
{
	char *p;
	volatile int *null = NULL;

	if (!strcmp(provoke, "kasan")) {
		p = kmalloc(32, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		kfree(p);
		pr_info("splat_extra: read %d\n", ((volatile char *)p)[8]);
	} else if (!strcmp(provoke, "leak")) {
		p = kmalloc(64, GFP_KERNEL);
		WRITE_ONCE(leaked, p);
		WRITE_ONCE(leaked, NULL);
	} else if (!strcmp(provoke, "oops")) {
		*null = 1;
	} else {
		return -EINVAL;
	}
	return 0;
}

static void __exit splat_extra_exit(void)
{
}

module_init(splat_extra_init);
module_exit(splat_extra_exit);
MODULE_DESCRIPTION("Provoke KASAN, kmemleak and an oops for recording logs");
MODULE_LICENSE("GPL");
