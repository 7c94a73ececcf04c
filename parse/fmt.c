// SPDX-License-Identifier: GPL-2.0
/* fmt: shared number and cell formatting; see fmt.h. */
#include "fmt.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

double fmt_percent(uint64_t part, uint64_t total)
{
	if (total == 0)
		return 0.0;
	/* part * 100 is exact below 2^53: one correctly rounded division. */
	if (part <= UINT64_MAX / 100)
		return (double)(part * 100) / (double)total;
	return (double)part * 100.0 / (double)total;
}

int fmt_digits(uint64_t v)
{
	char buf[24];

	return snprintf(buf, sizeof(buf), "%" PRIu64, v);
}

char *fmt_u64(char *buf, uint64_t v)
{
	char *p = buf + 20;

	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

void fmt_sanitize(char *dst, size_t dst_size, const char *s, size_t width)
{
	size_t len = strlen(s), keep = len, i;

	if (width >= dst_size)
		width = dst_size - 1;
	if (len > width)
		keep = width > 3 ? width - 3 : width;
	for (i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	if (len > width && width > 3) {
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
}

const char *fmt_duration(char *buf, size_t size, double ns)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" },
	};
	const size_t n = sizeof(units) / sizeof(units[0]);
	size_t i = 0;
	double v;

	/* A unit from 0.9995 of it on: 999.7ns is 1us, not 1e+03ns. */
	while (i + 1 < n && ns < units[i].scale * 0.9995)
		i++;
	v = ns / units[i].scale;
	snprintf(buf, size, v < 999.5 ? "%.3g%s" : "%.0f%s", v, units[i].unit);
	return buf;
}
