/* SPDX-License-Identifier: GPL-2.0 */
/*
 * syscalls: the names of the x86-64 system calls, from the kernel's
 * syscall_64.tbl (a table generated at build time: syscall_names.awk),
 * and the kernel context of a sample (format version 5): where the tick
 * found a task in the kernel, from its mode and its SLEEPY_SAMPLE_F_KCTX
 * value.
 *
 * The count keys hold a sample's kernel context as a "kctx key": 0 for a
 * sample without one, else its value + 1 (kctx_key()).
 */
#ifndef SLEEPY_PARSE_SYSCALLS_H
#define SLEEPY_PARSE_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* The generated table: names by number, NULL where there is none. */
extern const char *const syscall_table[];
extern const unsigned int syscall_table_size;

/* Room for a label: a name, or "sys_NNNNN". */
#define SYSCALL_LABEL_MAX	64

/* The name of system call nr, or NULL when the table has none. */
const char *syscall_name(unsigned int nr);
/* Its name, or "sys_NNN" (in buf, SYSCALL_LABEL_MAX bytes). */
const char *syscall_label(unsigned int nr, char *buf);
/* The number of a call given by name or number; -1 if it names none. */
long syscall_lookup(const char *s);

/* Where the tick found a sample (--by context). */
enum sample_context {
	CTX_USER,
	CTX_SYSCALL,		/* in a system call: kctx is its number */
	CTX_EXCEPTION,		/* page faults, exceptions, the way out */
	CTX_HARDIRQ,
	CTX_SOFTIRQ,
	CTX_KTHREAD,
	CTX_IDLE,
	CTX_KERNEL,		/* in the kernel, no context (before version 5) */
	NR_CONTEXTS,
};

/* A sample's kctx key: 0 without SLEEPY_SAMPLE_F_KCTX, else kctx + 1. */
static inline uint16_t kctx_key(const struct sleepy_sample *x)
{
	if (!(x->flags & SLEEPY_SAMPLE_F_KCTX))
		return 0;
	return x->kctx < UINT16_MAX ? (uint16_t)(x->kctx + 1) : UINT16_MAX;
}

/* The context of a sample of mode with kctx key key. */
enum sample_context sample_context(unsigned int mode, unsigned int key);
/* "user", "syscall", "exception", ... */
const char *context_name(unsigned int ctx);

#endif /* SLEEPY_PARSE_SYSCALLS_H */
