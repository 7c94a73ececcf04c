/* SPDX-License-Identifier: GPL-2.0 */
/*
 * appids: what the session's APPID records say, by numeric appid. APPID
 * records may come anywhere in the file, so reports resolve appids only
 * once the whole file is read.
 */
#ifndef SLEEPY_PARSE_APPIDS_H
#define SLEEPY_PARSE_APPIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "reader.h"

struct appid_info {
	uint32_t appid;
	uint32_t instance;
	uint32_t pid;
	uint32_t parent_appid;
	uint8_t origin;
	uint8_t flags;
	uint64_t time_ns;
	char *name;		/* owned, NUL-terminated */
	char *path;		/* owned, "" when unknown */
};

struct appid_table {
	struct appid_info *v;	/* in the order first seen */
	size_t n, cap;
	struct hindex index;	/* by appid: position in v + 1 */
	size_t duplicates;	/* APPID records for an appid seen before */
};

void appids_init(struct appid_table *t);
void appids_free(struct appid_table *t);
/*
 * Record an appid (copying its strings). A later record for the same appid
 * replaces the earlier one. Returns 0, or -1 when out of memory.
 */
int appids_add(struct appid_table *t, const struct sleepy_appid *a);
/* The appid's record, or NULL when the file has none. */
/*
 * Report order of two appids: by binary name, then (unless names_only)
 * instance, then appid number; appids without an APPID record last.
 */
int appids_order(const struct appid_info *a, uint32_t appid_a,
		 const struct appid_info *b, uint32_t appid_b, bool names_only);

const struct appid_info *appids_find(const struct appid_table *t,
				     uint32_t appid);

#endif /* SLEEPY_PARSE_APPIDS_H */
