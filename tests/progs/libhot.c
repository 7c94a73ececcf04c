// SPDX-License-Identifier: GPL-2.0
/* libhot.so: a shared library whose exported hot function burns CPU. */
#include "hot.h"

unsigned long hot_lib_burn(unsigned long n);

unsigned long hot_lib_burn(unsigned long n)
{
	unsigned long x = n;

	HOT_BURN(n, x);
	return x;
}
