// SPDX-License-Identifier: GPL-2.0
/* hotdyn: a dynamically linked program whose hot function is in libhot.so. */
#include "hot.h"

unsigned long hot_lib_burn(unsigned long n);

int main(int argc, char **argv)
{
	return hot_main(argc, argv, "hotdyn", "hot_lib_burn (libhot.so)",
			hot_lib_burn);
}
