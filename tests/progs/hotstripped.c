// SPDX-License-Identifier: GPL-2.0
/* hotstripped: a dynamic program whose hot code is in libstripped.so. */
#include "hot.h"

unsigned long stripped_entry(unsigned long n);

int main(int argc, char **argv)
{
	return hot_main(argc, argv, "hotstripped",
			"libstripped.so's static helper", stripped_entry);
}
