// SPDX-License-Identifier: GPL-2.0
/* stats: the statistics' fields by name; see stats.h. */
#include "stats.h"

#include <string.h>

#define FIELD(type, name, sig) \
	{ #name, offsetof(type, name), sizeof(((type *)0)->name), sig }
#define S(name) FIELD(struct sample_stats, name, false)
#define C(name) FIELD(struct sleepy_cpu_stats, name, false)
/* The user walks' stops: an array there, a field per cause here. */
#define STOP(type, name, i) \
	{ #name, offsetof(type, user_stops) + (i) * sizeof(uint64_t), \
	  sizeof(uint64_t), false }
#define STOPS(type) \
	STOP(type, user_stop_depth, SLEEPY_USER_STOP_DEPTH), \
	STOP(type, user_stop_not_present, SLEEPY_USER_STOP_NOT_PRESENT), \
	STOP(type, user_stop_unmapped, SLEEPY_USER_STOP_UNMAPPED), \
	STOP(type, user_stop_not_up, SLEEPY_USER_STOP_NOT_UP)
/* The unwind tables' walks (version 6), in both structs. */
#define FALLBACK(type, name, i) \
	{ #name, offsetof(type, unwind_fallbacks) + (i) * sizeof(uint64_t), \
	  sizeof(uint64_t), false }
#define UNWIND(type, F) \
	F(unwind_frames), F(unwind_fp_frames), \
	FALLBACK(type, unwind_fallback_no_table, \
		 SLEEPY_UNWIND_FALLBACK_NO_TABLE), \
	FALLBACK(type, unwind_fallback_marked, SLEEPY_UNWIND_FALLBACK_MARKED)
/* The logical stacks' figures (version 4), in both structs. */
#define LSTACKS(F) \
	F(lstack_samples), F(lstack_retries), F(lstack_torn), \
	F(lstack_faults), F(lstack_truncated), F(offcpu_records), \
	F(offcpu_dropped)

static const struct stat_field session_v[] = {
	S(nr_cpus), S(appids), S(samples_taken), S(samples_written),
	S(dropped_no_buffer), S(dropped_no_appid), S(dropped_write_error),
	S(discarded_no_write), S(skipped_not_user), S(bytes_written),
	S(write_errors), FIELD(struct sample_stats, first_write_error, true),
	S(meta_dropped), S(pids_mapped), S(buffers_hwm), S(irq_ns_total),
	S(irq_ns_max), S(irq_calls), S(dropped_max_size), S(chains_defined),
	S(chains_truncated), STOPS(struct sample_stats), LSTACKS(S),
	S(syscalls_counted), S(syscalls_lost), S(syscall_restarts),
	S(syscall_records), S(syscall_records_dropped), S(latency_segments),
	S(latency_records_dropped), UNWIND(struct sample_stats, S),
	S(unwind_tables), S(unwind_refused), S(unwind_files),
	S(unwind_ranges_dropped), S(unwind_mem_hwm), S(unwind_wait_ns),
	S(unwind_waits), S(unwind_wait_timeouts), S(mmap_repeats),
	S(mmap_over_budget), S(offcpu_over_budget),
};

static const struct stat_field cpu_v[] = {
	C(cpu), C(buffers_hwm), C(samples_taken), C(dropped_no_buffer),
	C(dropped_no_appid), C(skipped_not_user), C(irq_ns_total),
	C(irq_ns_max), C(irq_calls), C(chains_defined), C(chains_truncated),
	STOPS(struct sleepy_cpu_stats), LSTACKS(C),
	UNWIND(struct sleepy_cpu_stats, C),
};

const struct stat_table session_stat_fields = {
	session_v, sizeof(session_v) / sizeof(session_v[0]),
};
const struct stat_table cpu_stat_fields = {
	cpu_v, sizeof(cpu_v) / sizeof(cpu_v[0]),
};

uint64_t stats_dropped(const struct sample_stats *s)
{
	return s->dropped_no_buffer + s->dropped_no_appid +
		s->dropped_write_error + s->dropped_max_size;
}

uint64_t stat_u64(const void *base, const struct stat_field *f)
{
	const unsigned char *p = (const unsigned char *)base + f->offset;
	uint32_t v32;
	uint64_t v64;

	if (f->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

int64_t stat_i64(const void *base, const struct stat_field *f)
{
	const uint64_t v = stat_u64(base, f);

	if (f->is_signed && f->size == sizeof(int32_t))
		return (int32_t)(uint32_t)v;
	return (int64_t)v;
}
