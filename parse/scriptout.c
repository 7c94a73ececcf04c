// SPDX-License-Identifier: GPL-2.0
/* scriptout: --format perf-script; see scriptout.h. */
#include "scriptout.h"

#include <inttypes.h>

#include "fmt.h"
#include "session.h"

/* One frame's line: "\tADDR SYMBOL+0xOFF (DSO)". */
static int frame_line(FILE *out, const struct stack_source *src,
		      uint32_t appid, uint64_t addr)
{
	char name[1024], dso[1024];
	struct symres s;

	if (!addr) {
		fputs("\t0 [unknown] ([unknown])\n", out);
		return 0;
	}
	if (symbolize(src->sym, appid, addr, &s))
		return -1;
	fmt_sanitize(name, sizeof(name), strtab_get(src->names, s.sym),
		     sizeof(name) - 1);
	fmt_sanitize(dso, sizeof(dso), strtab_get(src->names, s.dso),
		     sizeof(dso) - 1);
	if (s.kind == KIND_SYMBOL)
		fprintf(out, "\t%" PRIx64 " %s+0x%" PRIx64 " (%s)\n", addr,
			name, (addr >= KERNEL_IP_MIN ? addr : s.vaddr) -
			s.sym_start, dso);
	else
		fprintf(out, "\t%" PRIx64 " [unknown] (%s)\n", addr,
			s.kind == KIND_UNRESOLVED ? dso : name);
	return 0;
}

/* A sample: its header line, its frames, a blank line. */
static int sample_lines(FILE *out, const struct stack_source *src,
			const struct sleepy_file_header *h,
			const struct sleepy_sample *x)
{
	const struct appid_info *a = appids_find(src->appids, x->appid);
	const uint64_t t = h->start_mono_ns + x->time_ns;
	struct count_entry e = {
		.ip = x->ip, .a = x->appid, .count = 1,
	};
	uint64_t addrs[STACK_MAX_FRAMES];
	char comm[300];
	int n;

	if (x->flags & SLEEPY_SAMPLE_F_CHAIN)
		e.b = chains_lookup(src->chains, x->cpu, x->chain);
	n = stack_addrs(src, &e, addrs);
	if (n < 0)
		return -1;
	fmt_sanitize(comm, sizeof(comm), a ? a->name : "?", sizeof(comm) - 1);
	fprintf(out, "%s %" PRIu32 "/%" PRIu32 " [%03u] %" PRIu64 ".%06"
		PRIu64 ": %" PRIu32 " cpu-clock:\n", comm, x->pid, x->tid,
		x->cpu, t / 1000000000u, t % 1000000000u / 1000u,
		h->hz ? 1000000000u / h->hz : 0);
	for (int i = 0; i < n; i++)
		if (frame_line(out, src, x->appid, addrs[i]))
			return -1;
	fputc('\n', out);
	return 0;
}

int script_write(FILE *out, struct sleepy_reader *r, const struct options *o,
		 const struct stack_source *src)
{
	const struct sleepy_file_header *h = sleepy_reader_header(r);
	struct sleepy_sample x;
	int rc;

	while ((rc = session_next_wanted(r, o, src->appids, src->windows,
					  &x)) > 0)
		if (sample_lines(out, src, h, &x))
			return -1;
	return rc < 0 ? -2 : 0;
}
