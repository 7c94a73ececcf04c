// SPDX-License-Identifier: GPL-2.0
/* hotpie: a position-independent executable with its own hot function. */
#include "hot.h"

unsigned long hot_pie_burn(unsigned long n);

__attribute__((noipa)) unsigned long hot_pie_burn(unsigned long n)
{
	unsigned long x = n;

	HOT_BURN(n, x);
	return x;
}

int main(int argc, char **argv)
{
	return hot_main(argc, argv, "hotpie", "hot_pie_burn", hot_pie_burn);
}
