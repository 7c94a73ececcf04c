// SPDX-License-Identifier: GPL-2.0
/* hotstatic: a statically linked program with its own hot function. */
#include "hot.h"

unsigned long hot_static_burn(unsigned long n);

__attribute__((noipa)) unsigned long hot_static_burn(unsigned long n)
{
	unsigned long x = n;

	HOT_BURN(n, x);
	return x;
}

int main(int argc, char **argv)
{
	return hot_main(argc, argv, "hotstatic", "hot_static_burn",
			hot_static_burn);
}
