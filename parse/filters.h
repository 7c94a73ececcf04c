/* SPDX-License-Identifier: GPL-2.0 */
/*
 * filters: the filters that need APPID records (--app, --appid), applied
 * to the counts once the whole file is read (APPID records may come after
 * the samples), and the text that describes every filter in effect.
 */
#ifndef SLEEPY_PARSE_FILTERS_H
#define SLEEPY_PARSE_FILTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "appids.h"
#include "counts.h"
#include "options.h"

/*
 * Drop the keys of unwanted appids from counts; *total: the samples left.
 * Returns 0, or -1 when out of memory.
 */
int filters_apply(const struct options *o, const struct appid_table *appids,
		  struct count_table *counts, uint64_t *total);

/* Whether an appid passes --app and --appid. */
bool filters_appid_wanted(const struct options *o,
			  const struct appid_table *appids, uint32_t appid);

/* The filters in effect, e.g. "app loop, cpu 1" ("" for none). */
void filters_describe(const struct options *o, char *buf, size_t size);

#endif /* SLEEPY_PARSE_FILTERS_H */
