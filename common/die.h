/* SPDX-License-Identifier: GPL-2.0 */
/*
 * die.h: the one-line error exit shared by sleepy's user tools.
 *
 * Define PROG (the tool's name, a string literal) before including it.
 * die() flushes standard output, so that a report cut short is not
 * interleaved with the error, prints "PROG: <message>" as one line on
 * standard error and exits with the given status. warn() prints
 * "PROG: warning: <message>" and goes on.
 */
#ifndef SLEEPY_COMMON_DIE_H
#define SLEEPY_COMMON_DIE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PROG
#error "define PROG before including die.h"
#endif

__attribute__((format(printf, 2, 3), noreturn, unused))
static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

__attribute__((format(printf, 1, 2), unused))
static void warn(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#endif /* SLEEPY_COMMON_DIE_H */
