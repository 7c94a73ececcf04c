// SPDX-License-Identifier: GPL-2.0
/* syscalls: system call names and sample contexts; see syscalls.h. */
#include "syscalls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number every call the kernel has no call of is noted as. */
static const char nosys_name[] = "enosys";

const char *syscall_name(unsigned int nr)
{
	if (nr == SLEEPY_KCTX_SYSCALL_NONE)
		return nosys_name;
	return nr < syscall_table_size ? syscall_table[nr] : NULL;
}

const char *syscall_label(unsigned int nr, char *buf)
{
	const char *name = syscall_name(nr);

	if (name)
		return name;
	snprintf(buf, SYSCALL_LABEL_MAX, "sys_%u", nr);
	return buf;
}

long syscall_lookup(const char *s)
{
	unsigned long v;
	char *end;

	if (*s >= '0' && *s <= '9') {
		errno = 0;
		v = strtoul(s, &end, 10);
		return *end || errno || v > SLEEPY_KCTX_SYSCALL_MAX ? -1 :
			(long)v;
	}
	if (!strncmp(s, "sys_", 4) && s[4] >= '0' && s[4] <= '9')
		return syscall_lookup(s + 4);
	if (!strcmp(s, nosys_name))
		return SLEEPY_KCTX_SYSCALL_NONE;
	for (unsigned int nr = 0; nr < syscall_table_size; nr++)
		if (syscall_table[nr] && !strcmp(syscall_table[nr], s))
			return nr;
	return -1;
}

/* The contexts of the kernel's special kctx values, from
 * SLEEPY_KCTX_EXCEPTION on. */
static const enum sample_context special[] = {
	CTX_EXCEPTION, CTX_HARDIRQ, CTX_SOFTIRQ, CTX_KTHREAD,
};

enum sample_context sample_context(unsigned int mode, unsigned int key)
{
	unsigned int k;

	if (mode == SLEEPY_MODE_USER)
		return CTX_USER;
	if (mode == SLEEPY_MODE_IDLE)
		return CTX_IDLE;
	if (!key)
		return CTX_KERNEL;
	if (key - 1 <= SLEEPY_KCTX_SYSCALL_MAX)
		return CTX_SYSCALL;
	k = key - 1 - SLEEPY_KCTX_EXCEPTION;
	return k < sizeof(special) / sizeof(special[0]) ? special[k] :
		CTX_KERNEL;
}

const char *context_name(unsigned int ctx)
{
	static const char *const names[NR_CONTEXTS] = {
		[CTX_USER] = "user", [CTX_SYSCALL] = "syscall",
		[CTX_EXCEPTION] = "exception", [CTX_HARDIRQ] = "hardirq",
		[CTX_SOFTIRQ] = "softirq", [CTX_KTHREAD] = "kthread",
		[CTX_IDLE] = "idle", [CTX_KERNEL] = "kernel",
	};

	return ctx < NR_CONTEXTS ? names[ctx] : "kernel";
}
