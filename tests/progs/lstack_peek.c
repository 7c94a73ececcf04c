// SPDX-License-Identifier: GPL-2.0
/*
 * lstack_peek: runs libsleepy_lstack's operations given as arguments and
 * prints what each did, for the host tests of the library.
 *
 *   lstack_peek [OP...]
 *     push:ID:ARG   SLEEPY_LSTACK_PUSH(ID, ARG), then the area
 *     pushn:N       N pushes (ids 1..N, args 10 x id), then the area
 *     pop           SLEEPY_LSTACK_POP(), then the area
 *     popn:N        N pops, then the area
 *     show          the area: "depth=D count=C reserved=R frames=ID:ARG,..."
 *                   (the frames stored: at most SLEEPY_LSTACK_FRAMES)
 *     register      sleepy_lstack_register(): "register=0" or
 *                   "register=-1 ERRNO" (its name, e.g. ENOSYS)
 *     unregister    sleepy_lstack_unregister(), printed the same way
 *     name:ID:NAME  sleepy_lstack_name(ID, NAME): "name=0" or "name=-1 ERRNO"
 *
 * The first line is "pid=PID" (the names file is
 * /tmp/sleepy-lstack-PID.names). Exit status 2 for a bad argument.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsleepy_lstack.h"

#define PROG "lstack_peek"
#include "die.h"

static const char usage_text[] =
	"usage: lstack_peek [OP...]\n"
	"Runs each OP on this thread's logical stack and prints the result:\n"
	"  push:ID:ARG  pushn:N  pop  popn:N  show  register  unregister\n"
	"  name:ID:NAME\n";

static void show(void)
{
	const struct sleepy_lstack_area *a = &sleepy_lstack_tls;
	unsigned int depth = sleepy_lstack_depth();

	printf("depth=%u count=%" PRIu64 " reserved=%" PRIu64 " frames=", depth,
	       a->state >> 16, a->reserved);
	for (unsigned int i = 0; i < depth && i < SLEEPY_LSTACK_FRAMES; i++)
		printf("%s%" PRIu64 ":%" PRIu64, i ? "," : "",
		       (uint64_t)a->frames[i].id, (uint64_t)a->frames[i].arg);
	putchar('\n');
}

static void result(const char *what, int r)
{
	if (r)
		printf("%s=%d %s\n", what, r, strerrorname_np(errno));
	else
		printf("%s=0\n", what);
}

static uint64_t number(const char *s, const char *op)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != ':'))
		die(2, "%s: bad number", op);
	return v;
}

static void name_op(const char *op)
{
	const char *id = op + 5, *name = strchr(id, ':');

	if (!name)
		die(2, "%s: expected name:ID:NAME", op);
	result("name", sleepy_lstack_name(number(id, op), name + 1));
}

static void push_op(const char *op)
{
	const char *id = op + 5, *arg = strchr(id, ':');

	if (!arg)
		die(2, "%s: expected push:ID:ARG", op);
	SLEEPY_LSTACK_PUSH(number(id, op), number(arg + 1, op));
	show();
}

static void run(const char *op)
{
	if (!strncmp(op, "push:", 5)) {
		push_op(op);
	} else if (!strncmp(op, "pushn:", 6)) {
		for (uint64_t i = 1, n = number(op + 6, op); i <= n; i++)
			SLEEPY_LSTACK_PUSH(i, 10 * i);
		show();
	} else if (!strcmp(op, "pop")) {
		SLEEPY_LSTACK_POP();
		show();
	} else if (!strncmp(op, "popn:", 5)) {
		for (uint64_t n = number(op + 5, op); n; n--)
			SLEEPY_LSTACK_POP();
		show();
	} else if (!strcmp(op, "show")) {
		show();
	} else if (!strcmp(op, "register")) {
		result("register", sleepy_lstack_register());
	} else if (!strcmp(op, "unregister")) {
		result("unregister", sleepy_lstack_unregister());
	} else if (!strncmp(op, "name:", 5)) {
		name_op(op);
	} else {
		die(2, "%s: unknown operation (see --help)", op);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	printf("pid=%ld\n", (long)getpid());
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return 0;
}
