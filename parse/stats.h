/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats: the figures of the STATS record (struct sample_stats) and of the
 * CPU_STATS records (struct sleepy_cpu_stats) as tables of named fields,
 * in the structs' order, so that the writers (JSON, SQLite) list every
 * figure under its member's name without naming each one again.
 */
#ifndef SLEEPY_PARSE_STATS_H
#define SLEEPY_PARSE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

struct stat_field {
	const char *name;	/* the struct member's */
	size_t offset;
	size_t size;		/* 4 or 8 bytes */
	bool is_signed;
};

struct stat_table {
	const struct stat_field *v;
	size_t n;
};

extern const struct stat_table session_stat_fields;	/* sample_stats */
extern const struct stat_table cpu_stat_fields;		/* sleepy_cpu_stats */

/* Samples dropped, for all causes. */
uint64_t stats_dropped(const struct sample_stats *s);

/* The field's value in the struct at base (a signed one sign-extended). */
int64_t stat_i64(const void *base, const struct stat_field *f);
/* An unsigned field's value. */
uint64_t stat_u64(const void *base, const struct stat_field *f);

#endif /* SLEEPY_PARSE_STATS_H */
