/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lockdown.h: why the kernel said EPERM to a caller that has the
 * capability. A kernel locked down for confidentiality refuses
 * sample_start and the sleepy_pmu counters, as it refuses perf
 * (LOCKDOWN_PERF).
 */
#ifndef SLEEPY_COMMON_LOCKDOWN_H
#define SLEEPY_COMMON_LOCKDOWN_H

#include <stdio.h>
#include <string.h>

/* Is the kernel locked down for confidentiality? 0 if it cannot tell. */
__attribute__((unused))
static int sleepy_locked_down(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[confidentiality]") != NULL;
}

#define SLEEPY_LOCKDOWN_WHY \
	"the kernel is locked down for confidentiality, which refuses it " \
	"as it refuses perf"

#endif /* SLEEPY_COMMON_LOCKDOWN_H */
