// SPDX-License-Identifier: GPL-2.0
/* fields: the registry of report fields; see fields.h. */
#include "fields.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "report.h"
#include "syscalls.h"

#define CUT_MAX		1024	/* a cell being cut */
#define BRACKET_MIN	6	/* each side of a cut "before->after" */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

const char *mode_label(unsigned int mode)
{
	const char *s = sleepy_mode_name(mode);

	return s ? s : "other";
}

const char *dso_short(const char *dso)
{
	const char *slash;

	if (dso[0] != '/')
		return dso;
	slash = strrchr(dso, '/');
	return slash[1] ? slash + 1 : dso;
}

/* A line's text cell: "file:line" with the file's directories dropped. */
static const char *line_short(const char *line)
{
	const char *colon = strrchr(line, ':'), *slash = NULL;

	for (const char *p = line; colon && p < colon; p++)
		if (*p == '/')
			slash = p;
	return slash ? slash + 1 : line;
}

/* ------------------------------------------------------------ keys */

/* The bits of need, from the one word of e that has them. */
static int get_key(const struct field *f, struct report *rep, struct row *r,
		   const struct count_entry *e)
{
	const uint64_t words[] = { e->ip, e->a, e->b, e->c };
	const uint64_t masks[] = { f->need.ip, f->need.a, f->need.b,
				   f->need.c };

	(void)rep;
	for (size_t i = 0; i < 4; i++) {
		if (masks[i]) {
			ROW_KEY(r, f) = (words[i] & masks[i]) >>
				__builtin_ctzll(masks[i]);
			break;
		}
	}
	return 0;
}

/* Numbers are ordered by value. */
static int order_num(const struct field *f, const struct row *a,
		     const struct row *b, const struct report *rep)
{
	(void)rep;
	return cmp_u64(ROW_KEY(a, f), ROW_KEY(b, f));
}

/* Strings (strtab ids) are ordered by their text. */
static int order_str(const struct field *f, const struct row *a,
		     const struct row *b, const struct report *rep)
{
	return strcmp(strtab_get(rep->names, (uint32_t)ROW_KEY(a, f)),
		      strtab_get(rep->names, (uint32_t)ROW_KEY(b, f)));
}

static void cell_num(const struct field *f, const struct report *rep,
		     const struct row *r, char *buf, size_t size)
{
	(void)rep;
	snprintf(buf, size, f->format, ROW_KEY(r, f));
}

static void cell_str(const struct field *f, const struct report *rep,
		     const struct row *r, char *buf, size_t size)
{
	const char *s = strtab_get(rep->names, (uint32_t)ROW_KEY(r, f));

	snprintf(buf, size, "%s", f->shorten ? f->shorten(s) : s);
}

static void value_num(const struct field *f, const struct report *rep,
		      const struct row *r, unsigned int key, struct value *v)
{
	(void)rep;
	(void)key;
	v->type = VALUE_NUM;
	v->n = ROW_KEY(r, f);
}

/* The value is the text cell. */
static void value_cell(const struct field *f, const struct report *rep,
		       const struct row *r, unsigned int key, struct value *v)
{
	(void)key;
	f->cell(f, rep, r, v->buf, sizeof(v->buf));
	v->type = VALUE_STR;
	v->s = v->buf;
}

/* The whole string, not shortened. */
static void value_str(const struct field *f, const struct report *rep,
		      const struct row *r, unsigned int key, struct value *v)
{
	(void)key;
	v->type = VALUE_STR;
	v->s = strtab_get(rep->names, (uint32_t)ROW_KEY(r, f));
}

/* ------------------------------------------------------------ app, appid */

#define IS_APP(f)	((f) == &fields[F_APP])

/* Without an APPID record, an app is its appid: keys above the ids. */
#define APP_UNNAMED	(1ull << 32)

/* appid: its number; app: the id of its name (the appids of one name
 * merge), or APP_UNNAMED | appid. */
static int get_appid(const struct field *f, struct report *rep,
		     struct row *r, const struct count_entry *e)
{
	uint32_t name;

	r->appid = CE_APPID(e);
	r->info = appids_find(rep->appids, r->appid);
	ROW_KEY(r, f) = r->appid;
	if (!IS_APP(f))
		return 0;
	if (!r->info) {
		ROW_KEY(r, f) = APP_UNNAMED | r->appid;
		return 0;
	}
	name = strtab_intern(rep->names, r->info->name);
	ROW_KEY(r, f) = name;
	return name == STRTAB_NOMEM ? -1 : 0;
}

/* By name, then (appid) instance and number; without a record last. */
static int order_appid(const struct field *f, const struct row *a,
		       const struct row *b, const struct report *rep)
{
	(void)rep;
	return appids_order(a->info, a->appid, b->info, b->appid, IS_APP(f));
}

static void cell_appid(const struct field *f, const struct report *rep,
		       const struct row *r, char *buf, size_t size)
{
	(void)rep;
	if (!r->info)
		snprintf(buf, size, "?appid=%" PRIu32, r->appid);
	else if (IS_APP(f))
		snprintf(buf, size, "%s", r->info->name);
	else
		snprintf(buf, size, "%s#%" PRIu32, r->info->name,
			 r->info->instance);
}

/* A cut appid keeps its #instance when there is room for it. */
static void fit_appid(const struct row *r, const char *cell, char *dst,
		      size_t size, size_t width)
{
	char suffix[16];
	size_t tail;

	if (r->info) {
		tail = (size_t)snprintf(suffix, sizeof(suffix), "#%" PRIu32,
					r->info->instance);
		if (width > tail + 4) {
			fmt_sanitize(dst, size - tail, r->info->name,
				     width - tail);
			strcat(dst, suffix);
			return;
		}
	}
	fmt_sanitize(dst, size, cell, width);
}

/* "app": the name, or ?appid=N; "instance", "pid": null without a
 * record. */
static void value_appid(const struct field *f, const struct report *rep,
			const struct row *r, unsigned int key,
			struct value *v)
{
	(void)f;
	(void)rep;
	if (key == 0) {
		v->type = VALUE_STR;
		v->s = r->info ? r->info->name : v->buf;
		if (!r->info)
			snprintf(v->buf, sizeof(v->buf), "?appid=%" PRIu32,
				 r->appid);
	} else if (r->info) {
		v->type = VALUE_NUM;
		v->n = key == 1 ? r->info->instance : r->info->pid;
	} else {
		v->type = VALUE_NULL;
	}
}

/* ------------------------------------------------------------ mode */

static void cell_mode(const struct field *f, const struct report *rep,
		      const struct row *r, char *buf, size_t size)
{
	(void)rep;
	snprintf(buf, size, "%s", mode_label((unsigned int)ROW_KEY(r, f)));
}

/* Not grouped by mode: the --mode filter. */
static void unset_mode(const struct report *rep, struct value *v)
{
	v->type = VALUE_STR;
	v->s = rep->mode;
}

/* ------------------------------------------------------------ context */

/* context: the sample's (enum sample_context), from its mode and kctx. */
static int get_context(const struct field *f, struct report *rep,
		       struct row *r, const struct count_entry *e)
{
	(void)rep;
	ROW_KEY(r, f) = sample_context(CE_MODE(e), CE_KCTX(e));
	return 0;
}

static void cell_context(const struct field *f, const struct report *rep,
			 const struct row *r, char *buf, size_t size)
{
	(void)rep;
	snprintf(buf, size, "%s", context_name((unsigned int)ROW_KEY(r, f)));
}

/* syscall: the call's number + 1, 0 for a sample in none. */
static int get_syscall(const struct field *f, struct report *rep,
		       struct row *r, const struct count_entry *e)
{
	(void)rep;
	ROW_KEY(r, f) = sample_context(CE_MODE(e), CE_KCTX(e)) ==
		CTX_SYSCALL ? CE_KCTX(e) : 0;
	return 0;
}

static void cell_syscall(const struct field *f, const struct report *rep,
			 const struct row *r, char *buf, size_t size)
{
	char label[SYSCALL_LABEL_MAX];

	(void)rep;
	if (!ROW_KEY(r, f))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%s", syscall_label(
				 (unsigned int)ROW_KEY(r, f) - 1, label));
}

/* By name ("-" first). */
static int order_syscall(const struct field *f, const struct row *a,
			 const struct row *b, const struct report *rep)
{
	char ca[SYSCALL_LABEL_MAX], cb[SYSCALL_LABEL_MAX];

	cell_syscall(f, rep, a, ca, sizeof(ca));
	cell_syscall(f, rep, b, cb, sizeof(cb));
	return strcmp(ca, cb);
}

/* Its name; null outside a call. */
static void value_syscall(const struct field *f, const struct report *rep,
			  const struct row *r, unsigned int key,
			  struct value *v)
{
	if (!ROW_KEY(r, f)) {
		v->type = VALUE_NULL;
		return;
	}
	value_cell(f, rep, r, key, v);
}

/* ------------------------------------------------------------ line */

/* dso, symbol and line come from the symbolization (report.c); a line
 * that DWARF does not give is "??". */
static int get_line(const struct field *f, struct report *rep,
		    struct row *r, const struct count_entry *e)
{
	(void)e;
	if (!ROW_KEY(r, f)) {
		ROW_KEY(r, f) = rep->sym->qq;
		rep->unresolved_lines += r->samples;
	}
	return 0;
}

/* A cut "before->after" bracket keeps both of its ends. */
static void fit_symbol(const struct row *r, const char *cell, char *dst,
		       size_t size, size_t width)
{
	const char *arrow = strstr(cell, "->");

	if (r->kind == KIND_BRACKET && arrow &&
	    width >= 2 * BRACKET_MIN + 2) {
		size_t half = (width - 2) / 2;
		char left[CUT_MAX], right[CUT_MAX];

		snprintf(left, sizeof(left), "%.*s", (int)(arrow - cell),
			 cell);
		fmt_sanitize(left, sizeof(left), left, half);
		fmt_sanitize(right, sizeof(right), arrow + 2,
			     width - 2 - strlen(left));
		if (strlen(left) + strlen(right) + 3 <= size) {
			snprintf(dst, size, "%s->%s", left, right);
			return;
		}
	}
	fmt_sanitize(dst, size, cell, width);
}

/* ------------------------------------------------------------ the table */

#define ALL_BITS	UINT64_MAX
#define SYMBOLS		{ ALL_BITS, MASK_APPID, 0 }	/* appid, ip */

const struct field fields[NR_FIELDS] = {
	[F_APP] = {
		.name = "app", .head = "app", .title = "app",
		.excludes = FB(F_APPID),
		.flags = FIELD_FLEX | FIELD_CSV | FIELD_MERGES,
		.align = ALIGN_LEFT, .shrink = { 1, 1 },
		.need = { 0, MASK_APPID, 0 }, .keys = { "app" },
		.extract = get_appid, .order = order_appid,
		.cell = cell_appid, .value = value_appid,
	},
	[F_APPID] = {
		.name = "appid", .head = "appid", .title = "appid",
		.flags = FIELD_FLEX | FIELD_CSV,
		.align = ALIGN_LEFT, .shrink = { 1, 1 },
		.need = { 0, MASK_APPID, 0 },
		.keys = { "app", "instance", "pid" },
		.extract = get_appid, .order = order_appid,
		.cell = cell_appid, .fit = fit_appid, .value = value_appid,
	},
	[F_MODE] = {
		.name = "mode", .head = "mode", .title = "mode",
		.flags = FIELD_CSV, .align = ALIGN_LEFT,
		.need = { 0, 0, MASK_MODE }, .keys = { "mode" },
		.extract = get_key, .order = order_num,
		.cell = cell_mode, .value = value_cell, .unset = unset_mode,
	},
	[F_CONTEXT] = {
		.name = "context", .head = "context", .title = "context",
		.flags = FIELD_MERGES | FIELD_OWN_KEYS, .align = ALIGN_LEFT,
		.need = { 0, 0, MASK_MODE | MASK_KCTX }, .keys = { "context" },
		.extract = get_context, .order = order_num,
		.cell = cell_context, .value = value_cell,
	},
	[F_SYSCALL] = {
		.name = "syscall", .head = "syscall", .title = "system call",
		.flags = FIELD_MERGES | FIELD_OWN_KEYS, .align = ALIGN_LEFT,
		.need = { 0, 0, MASK_MODE | MASK_KCTX }, .keys = { "syscall" },
		.extract = get_syscall, .order = order_syscall,
		.cell = cell_syscall, .value = value_syscall,
	},
	[F_TID] = {
		.name = "tid", .head = "tid", .title = "thread",
		.align = ALIGN_NUMBER,
		.need = { 0, 0, 0, MASK_TID }, .keys = { "tid" },
		.format = "%" PRIu64,
		.extract = get_key, .order = order_num,
		.cell = cell_num, .value = value_num,
	},
	[F_CPU] = {
		.name = "cpu", .head = "cpu", .title = "CPU",
		.align = ALIGN_NUMBER,
		.need = { 0, 0, MASK_CPU }, .keys = { "cpu" },
		.format = "%" PRIu64,
		.extract = get_key, .order = order_num,
		.cell = cell_num, .value = value_num,
	},
	[F_EIP] = {
		.name = "eip", .head = "eip", .title = "EIP",
		.align = ALIGN_NUMBER,
		.need = { ALL_BITS, 0, 0 }, .keys = { "eip" },
		.format = "0x%" PRIx64,
		.extract = get_key, .order = order_num,
		.cell = cell_num, .value = value_cell,
	},
	[F_DSO] = {
		.name = "dso", .head = "dso", .title = "DSO",
		.label_skip = FB(F_SYMBOL),
		.flags = FIELD_FLEX | FIELD_SYMBOLS | FIELD_MERGES,
		.align = ALIGN_LEFT, .shrink = { 1, 1 },
		.need = SYMBOLS, .keys = { "dso" }, .shorten = dso_short,
		.order = order_str,
		.cell = cell_str, .value = value_str,
	},
	[F_SYMBOL] = {
		.name = "symbol", .head = "symbol", .title = "symbol",
		.implies = FB(F_DSO),
		.flags = FIELD_FLEX | FIELD_SYMBOLS | FIELD_MERGES,
		.align = ALIGN_LEFT, .shrink = { 2, 3 },
		.need = SYMBOLS, .keys = { "symbol" },
		.order = order_str,
		.cell = cell_str, .fit = fit_symbol, .value = value_str,
	},
	[F_LINE] = {
		.name = "line", .head = "line", .title = "source line",
		.implies = FB(F_SYMBOL) | FB(F_DSO),
		.flags = FIELD_FLEX | FIELD_SYMBOLS | FIELD_LINES |
			FIELD_MERGES,
		.align = ALIGN_LEFT, .shrink = { 1, 1 },
		.need = SYMBOLS, .keys = { "line" }, .shorten = line_short,
		.extract = get_line, .order = order_str,
		.cell = cell_str, .value = value_str,
	},
};

/* The text columns of the base reports that are not fields. */
static void cell_pid(const struct field *f, const struct report *rep,
		     const struct row *r, char *buf, size_t size)
{
	(void)f;
	(void)rep;
	if (r->info)
		snprintf(buf, size, "%" PRIu32, r->info->pid);
	else
		snprintf(buf, size, "-");
}

static void cell_appids(const struct field *f, const struct report *rep,
			const struct row *r, char *buf, size_t size)
{
	(void)f;
	(void)rep;
	snprintf(buf, size, "%" PRIu32, r->nappids);
}

const struct field column_pid = {
	.head = "pid", .align = ALIGN_RIGHT, .cell = cell_pid,
};

const struct field column_appids = {
	.head = "appids", .align = ALIGN_RIGHT, .cell = cell_appids,
};

/* Names of --by that are not fields. */
static const struct {
	const char *name;
	unsigned int set;
} aliases[] = {
	{ "appid-eip", FB(F_APPID) | FB(F_EIP) },
};

/* ------------------------------------------------------------ queries */

unsigned int fields_lookup(const char *name)
{
	for (size_t i = 0; i < NR_FIELDS; i++)
		if (!strcmp(name, fields[i].name))
			return FB(i);
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].name))
			return aliases[i].set;
	return 0;
}

unsigned int fields_normalize(unsigned int set)
{
	for (size_t i = 0; i < NR_FIELDS; i++)
		if (set & FB(i))
			set |= fields[i].implies;
	return set;
}

int fields_conflict(unsigned int set, const struct field **a,
		    const struct field **b)
{
	for (size_t i = 0; i < NR_FIELDS; i++) {
		unsigned int x = set & FB(i) ? set & fields[i].excludes : 0;

		for (size_t k = 0; x && k < NR_FIELDS; k++) {
			if (x & FB(k)) {
				*a = &fields[i];
				*b = &fields[k];
				return 1;
			}
		}
	}
	return 0;
}

unsigned int fields_with(unsigned int set, unsigned int flags)
{
	unsigned int out = 0;

	for (size_t i = 0; i < NR_FIELDS; i++)
		if ((set & FB(i)) && (fields[i].flags & flags) == flags)
			out |= FB(i);
	return out;
}

struct count_mask fields_need(unsigned int set)
{
	struct count_mask m = { 0, 0, 0, 0 };

	for (size_t i = 0; i < NR_FIELDS; i++) {
		if (!(set & FB(i)))
			continue;
		m.ip |= fields[i].need.ip;
		m.a |= fields[i].need.a;
		m.b |= fields[i].need.b;
		m.c |= fields[i].need.c;
	}
	return m;
}

void fields_title(unsigned int set, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "Samples by");
	unsigned int shown = 0, count = 0, named = set;

	/* Name the most specific only: not a field another one implies. */
	for (size_t i = 0; i < NR_FIELDS; i++)
		if (set & FB(i))
			named &= ~fields[i].implies;
	for (size_t i = 0; i < NR_FIELDS; i++)
		count += !!(named & FB(i));
	for (size_t i = 0; i < NR_FIELDS && n < size; i++) {
		if (!(named & FB(i)))
			continue;
		shown++;
		n += (size_t)snprintf(buf + n, size - n, "%s%s",
				      shown == 1 ? " " : shown == count ?
				      " and " : ", ", fields[i].title);
	}
}

size_t fields_columns(struct out_column *cols, const struct report *rep)
{
	size_t n = 0;

	for (size_t i = 0; i < NR_FIELDS; i++) {
		const struct field *f = &fields[i];

		if ((f->flags & FIELD_OWN_KEYS) && !(rep->fields & FB(i)))
			continue;
		for (unsigned int k = 0; f->keys[k]; k++) {
			size_t c = 0;

			while (c < n && strcmp(cols[c].key, f->keys[k]))
				c++;
			if (c == n) {
				memset(&cols[n++], 0, sizeof(cols[0]));
				cols[c].key = f->keys[k];
			}
			cols[c].from |= FB(i);
			if (rep->fields & FB(i)) {
				cols[c].src = f;
				cols[c].src_key = k;
			} else if (f->unset) {
				cols[c].unset = f->unset;
			}
		}
	}
	return n;
}

void fields_value(const struct out_column *c, const struct report *rep,
		  const struct row *r, struct value *v)
{
	if (c->src)
		c->src->value(c->src, rep, r, c->src_key, v);
	else if (c->unset)
		c->unset(rep, v);
	else
		v->type = VALUE_NULL;
}
