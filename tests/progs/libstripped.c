// SPDX-License-Identifier: GPL-2.0
/*
 * libstripped.so: a library installed with strip --strip-all, so only its
 * exported (.dynsym) symbols remain. The CPU burns in a static helper
 * placed between the exported stripped_entry and stripped_after (the
 * file's order is kept: -fno-toplevel-reorder), so a symbolizer that sees
 * only .dynsym must report the bracket stripped_entry->stripped_after.
 */
#include "hot.h"

unsigned long stripped_entry(unsigned long n);
unsigned long stripped_after(unsigned long n);

static unsigned long stripped_helper_burn(unsigned long n);

__attribute__((noipa)) unsigned long stripped_entry(unsigned long n)
{
	return stripped_helper_burn(n) + 1;
}

__attribute__((noipa)) static unsigned long
stripped_helper_burn(unsigned long n)
{
	unsigned long x = n;

	HOT_BURN(n, x);
	return x;
}

__attribute__((noipa)) unsigned long stripped_after(unsigned long n)
{
	return n * 3;
}
