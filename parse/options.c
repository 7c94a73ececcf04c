// SPDX-License-Identifier: GPL-2.0
/*
 * options: parse's command line, through getopt_long with one table of
 * options; see options.h.
 *
 * getopt_long runs in order ("-" first in its option string, so that FILE
 * may come anywhere) and silently (":"). Each argument is checked before
 * getopt_long reads it, so that only an option's full name is accepted (no
 * abbreviations, no "=" after an option without a value) and every error
 * is ours, with its own message.
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fields.h"
#include "reader.h"

#define PROG "parse"
#include "die.h"

static const char usage_text[] =
	"usage: parse [--by FIELDS] [filters] [--format text|csv|json] [--top N]\n"
	"             [--symfs DIR] [--kallsyms FILE | --vmlinux FILE]\n"
	"             [--sqlite OUT.db] [--plot OUT.svg] [--annotate SYMBOL]\n"
	"             [--tree [calls] [--inverted] [--min-percent P]] [--children]\n"
	"             [--tree lstack [--lstack-args] [--lstack-with-callchain]\n"
	"              [--offcpu] [--min-percent P]]\n"
	"             [--flamegraph OUT.svg [--inverted] [--min-percent P]]\n"
	"             [--pprof OUT.pb.gz]\n"
	"             FILE\n"
	"       parse --latency [--by app|appid] [--segments] [filters]\n"
	"             [--format text|csv|json] [--top N] [--plot OUT.svg]\n"
	"             [--compare OLD] FILE\n"
	"       parse --latency --peak APP:SYSCALL:N [--by FIELDS] [report\n"
	"             options] FILE\n"
	"\n"
	"Report the samples of a sleepy session file (\"-\" reads standard\n"
	"input). Without --by, the SLEEPY paper's two reports: samples per\n"
	"appid and EIP, and per appid.\n"
	"\n"
	"  --by FIELDS     group by a comma-separated list of:\n"
	"                  appid-eip  per appid (NAME#INSTANCE) and EIP\n"
	"                  appid      per appid\n"
	"                  app        per application (all its instances)\n"
	"                  eip        per instruction pointer\n"
	"                  symbol     per function (with its dso)\n"
	"                  dso        per executable or library\n"
	"                  line       per source line (with dso and symbol)\n"
	"                  tid        per thread\n"
	"                  cpu, mode  per CPU, per mode\n"
	"                  context    per kernel context: user, syscall,\n"
	"                             exception, hardirq, softirq, kthread,\n"
	"                             idle, kernel (no context: older files)\n"
	"                  syscall    per system call the sample was in (-:\n"
	"                             none); with --mode all or kernel\n"
	"                  e.g. --by appid,symbol or --by app,dso,symbol\n"
	"  --mode MODE     the samples counted: where the tick found the CPU,\n"
	"                  user (default), kernel (in the kernel for a process),\n"
	"                  irq, idle, or all\n"
	"  --app NAME      only appids of this binary name\n"
	"  --appid NAME#I  only this appid\n"
	"  --pid N         only samples of this process (thread group id)\n"
	"  --tid N         only samples of this thread\n"
	"  --cpu N         only samples taken on this CPU\n"
	"  --from S, --to S  only samples from S seconds after the session\n"
	"                  start (inclusive) to S seconds (exclusive)\n"
	"  --top N         print the N rows with the most samples\n"
	"  --format FMT    text (default: aligned columns with a summary of\n"
	"                  the session), csv, json, or folded (the call\n"
	"                  chains as folded stacks for flame graphs:\n"
	"                  app;outermost;...;leaf COUNT, kernel frames _[k])\n"
	"                  or perf-script (each sample and its frames as\n"
	"                  perf script prints them; FILE, not stdin)\n"
	"  --tree [calls]  the call tree of the call chains, top-down from\n"
	"                  the application (appid, or app with --by app),\n"
	"                  with total and self samples per frame\n"
	"  --tree lstack   (or --tree=lstack) the activity tree of the\n"
	"                  logical stacks (sessions of sample_start --lstack):\n"
	"                  per frame, on-CPU samples (total, self) and off-CPU\n"
	"                  time (total, self); all modes unless --mode is\n"
	"                  given; text, --format json (the tree) or folded;\n"
	"                  --flamegraph draws it\n"
	"  --lstack-args   --tree lstack: frames split by their arg: name(arg)\n"
	"  --lstack-with-callchain  --tree lstack: each sample's call chain\n"
	"                  (user frames outermost first, then kernel) above\n"
	"                  its logical frames\n"
	"  --offcpu        --tree lstack: weigh the folded stacks (in us) and\n"
	"                  the flame graph by off-CPU time, not samples\n"
	"  --inverted      --tree bottom-up: each function, then its callers\n"
	"  --min-percent P --tree: leave out nodes under P% of the samples\n"
	"                  (lstack: and under P% of the off-CPU time)\n"
	"                  (default 0.5)\n"
	"  --children      add each row's inclusive samples (with callers'\n"
	"                  rows), by the call chains, and sort by them; by\n"
	"                  symbol without --by\n"
	"  --symfs DIR     look the session's binaries up under DIR\n"
	"  --buildid-dir DIR  and, where a file is missing or another\n"
	"                  build, its copy of the recorded build-id in DIR\n"
	"                  (as --archive made it); debug files there too\n"
	"  --kallsyms F    kernel symbols from a /proc/kallsyms copy (default:\n"
	"                  FILE.kallsyms next to the session file)\n"
	"  --vmlinux F     kernel symbols from an uncompressed kernel image\n"
	"  --sqlite OUT.db also write the session to an SQLite database\n"
	"  --slice-ms N    its time slices (default 100 ms)\n"
	"  --plot OUT.svg  also draw the report as an SVG histogram\n"
	"  --flamegraph OUT.svg  also draw the call tree as an interactive\n"
	"                  SVG flame graph (click to zoom, search box);\n"
	"                  --inverted: callees first; --min-percent P: leave\n"
	"                  out frames under P% (default: none)\n"
	"  --pprof OUT     also write the samples and their call chains as a\n"
	"                  pprof profile (gzipped profile.proto, for go tool\n"
	"                  pprof), labelled pid, tid, appid; FILE, not stdin\n"
	"  --annotate SYM  disassemble function SYM with samples per\n"
	"                  instruction, instead of a report\n"
	"  --archive DIR   instead of a report, copy every ELF file the\n"
	"                  samples (that pass the filters) fall in, and its\n"
	"                  debug file, into DIR by build-id, for\n"
	"                  --buildid-dir DIR on this or another machine\n"
	"  --latency       instead of a report, the system call latency\n"
	"                  histograms (sessions of sample_start --latency):\n"
	"                  per app (--by app, default) or appid (--by appid)\n"
	"                  and system call, over the segments and CPUs, as bcc\n"
	"                  prints them, with count, mean, p50, p99, max and\n"
	"                  the peaks; --app, --appid, --pid choose appids,\n"
	"                  --from and --to the segments; csv: one row per\n"
	"                  bucket; --plot OUT.svg draws them\n"
	"  --segments      --latency: one set of histograms per time-lapse\n"
	"                  segment (sample_start --latency-interval)\n"
	"  --compare OLD   --latency: every (app, system call) of OLD and FILE,\n"
	"                  ranked by the Earth Mover's Distance of their\n"
	"                  distributions (in log2 buckets), with the change of\n"
	"                  calls and mean\n"
	"  --peak APP:SYSCALL:N  --latency: the report (--by, filters, formats)\n"
	"                  of the samples taken during the calls of peak N of\n"
	"                  that histogram (APP: a name or NAME#I; SYSCALL: a\n"
	"                  name or a number); all modes unless --mode is given;\n"
	"                  FILE, not stdin\n"
	"  -h, --help      this text\n"
	"\n"
	"Rows are sorted by samples, most first; percentages are of the\n"
	"samples that pass the filters. Appids without an APPID record show\n"
	"as ?appid=N. See Documentation/parse.md. Exit status: 0 done, 1 I/O\n"
	"error, 2 usage error or an invalid file.\n";

/* The --by vocabulary, as --help presents it. */
static const char by_list[] = "app, appid, tid, eip, appid-eip, symbol, dso, "
	"line, cpu, mode, context, syscall, or a comma-separated list";

static const char *const format_names[NR_FORMATS] = {
	[FORMAT_TEXT] = "text", [FORMAT_CSV] = "csv", [FORMAT_JSON] = "json",
	[FORMAT_FOLDED] = "folded", [FORMAT_PERF_SCRIPT] = "perf-script",
};

enum option_id {
	OPT_BY = 256, OPT_MODE, OPT_FORMAT, OPT_APP, OPT_APPID, OPT_PID,
	OPT_CPU, OPT_FROM, OPT_TO, OPT_TOP, OPT_SYMFS, OPT_KALLSYMS,
	OPT_VMLINUX, OPT_SQLITE, OPT_SLICE_MS, OPT_PLOT, OPT_ANNOTATE,
	OPT_TREE, OPT_INVERTED, OPT_MIN_PERCENT, OPT_CHILDREN,
	OPT_PPROF,
	OPT_FLAMEGRAPH, OPT_ARCHIVE, OPT_BUILDID_DIR, OPT_TID,
	OPT_LSTACK_ARGS, OPT_LSTACK_WITH_CALLCHAIN, OPT_OFFCPU,
	OPT_LATENCY, OPT_SEGMENTS, OPT_COMPARE, OPT_PEAK,
	OPT_END,
};

_Static_assert(OPT_END - OPT_BY <= 64, "an option's bit in seen");

static const struct option options[] = {
	{ "by", required_argument, NULL, OPT_BY },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "app", required_argument, NULL, OPT_APP },
	{ "appid", required_argument, NULL, OPT_APPID },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "sqlite", required_argument, NULL, OPT_SQLITE },
	{ "slice-ms", required_argument, NULL, OPT_SLICE_MS },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "annotate", required_argument, NULL, OPT_ANNOTATE },
	{ "tree", optional_argument, NULL, OPT_TREE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
	{ "archive", required_argument, NULL, OPT_ARCHIVE },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "lstack-args", no_argument, NULL, OPT_LSTACK_ARGS },
	{ "lstack-with-callchain", no_argument, NULL,
	  OPT_LSTACK_WITH_CALLCHAIN },
	{ "offcpu", no_argument, NULL, OPT_OFFCPU },
	{ "latency", no_argument, NULL, OPT_LATENCY },
	{ "segments", no_argument, NULL, OPT_SEGMENTS },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "peak", required_argument, NULL, OPT_PEAK },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Options that exclude each other (like util-linux's ul_excl_t). */
static const int exclusive[][2] = {
	{ OPT_KALLSYMS, OPT_VMLINUX },
	{ OPT_TREE, OPT_SQLITE }, { OPT_TREE, OPT_PLOT },
	{ OPT_TREE, OPT_ANNOTATE }, { OPT_CHILDREN, OPT_TREE },
	{ OPT_CHILDREN, OPT_PLOT },
	{ OPT_CHILDREN, OPT_ANNOTATE },
	{ OPT_ARCHIVE, OPT_BY }, { OPT_ARCHIVE, OPT_FORMAT },
	{ OPT_ARCHIVE, OPT_TOP }, { OPT_ARCHIVE, OPT_ANNOTATE },
	{ OPT_ARCHIVE, OPT_TREE }, { OPT_ARCHIVE, OPT_CHILDREN },
	{ OPT_ARCHIVE, OPT_SQLITE }, { OPT_ARCHIVE, OPT_PLOT },
	{ OPT_ARCHIVE, OPT_PPROF }, { OPT_ARCHIVE, OPT_FLAMEGRAPH },
	{ OPT_LATENCY, OPT_ARCHIVE }, { OPT_COMPARE, OPT_PEAK },
	{ OPT_SEGMENTS, OPT_PEAK }, { OPT_SEGMENTS, OPT_COMPARE },
};

/* Options that need another: { option, what it needs, or this }. */
static const int needs[][3] = {
	{ OPT_INVERTED, OPT_TREE, OPT_FLAMEGRAPH },
	{ OPT_MIN_PERCENT, OPT_TREE, OPT_FLAMEGRAPH },
	{ OPT_SEGMENTS, OPT_LATENCY, OPT_LATENCY },
	{ OPT_COMPARE, OPT_LATENCY, OPT_LATENCY },
	{ OPT_PEAK, OPT_LATENCY, OPT_LATENCY },
};

#define SEEN(id)	(1ull << ((id) - OPT_BY))

/* --tree's kinds: --tree KIND takes the next word when it is one. */
static const char *const tree_kinds[] = { "calls", "lstack" };

#define NR_TREE_KINDS (sizeof(tree_kinds) / sizeof(tree_kinds[0]))

static bool is_tree_kind(const char *word)
{
	for (size_t i = 0; i < NR_TREE_KINDS; i++)
		if (!strcmp(word, tree_kinds[i]))
			return true;
	return false;
}

/* ------------------------------------------------------------ values */

/* The index of val among n names; dies listing them if none. */
static int choose(const char *opt, const char *val, const char *const *names,
		  size_t n)
{
	char list[128];
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(val, names[i]))
			return (int)i;
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len,
					"%s%s", i ? ", " : "", names[i]);
	die(2, "%s: unknown value '%s' (one of: %s)", opt, val, list);
}

static unsigned long long number(const char *opt, const char *v,
				 unsigned long long max)
{
	unsigned long long x;
	char *end;

	errno = 0;
	if (!*v || *v < '0' || *v > '9')
		die(2, "%s: invalid number '%s'", opt, v);
	x = strtoull(v, &end, 10);
	if (*end || errno || x > max)
		die(2, "%s: invalid number '%s'", opt, v);
	return x;
}

static uint64_t seconds(const char *opt, const char *v)
{
	double x;
	char *end;

	errno = 0;
	x = strtod(v, &end);
	if (!*v || *end || errno || !(x >= 0) || x > 1e9)
		die(2, "%s: invalid number of seconds '%s'", opt, v);
	return (uint64_t)(x * 1e9 + 0.5);
}

/* A percentage, 0 to 100. */
static double percent(const char *opt, const char *v)
{
	double x;
	char *end;

	errno = 0;
	x = strtod(v, &end);
	if (!*v || *end || errno || !(x >= 0) || x > 100)
		die(2, "%s: invalid percentage '%s' (0 to 100)", opt, v);
	return x;
}

/* --by's comma-separated list: its fields, normalized. */
static unsigned int parse_by(const char *opt, const char *v)
{
	char *copy = strdup(v), *save = NULL, *tok;
	const struct field *a, *b;
	unsigned int set = 0, f;

	if (!copy)
		die(1, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		f = fields_lookup(tok);
		if (!f)
			die(2, "%s: unknown value '%s' (one of: %s)", opt, tok,
			    by_list);
		set |= f;
	}
	free(copy);
	if (!set)
		die(2, "%s: unknown value '%s' (one of: %s)", opt, v, by_list);
	if (fields_conflict(set, &a, &b))
		die(2, "%s: %s and %s exclude each other", opt, a->name,
		    b->name);
	return fields_normalize(set);
}

static int parse_mode(const char *opt, const char *v)
{
	const char *names[NR_MODES + 1];
	int m;

	for (unsigned int i = 0; i < NR_MODES; i++)
		names[i] = sleepy_mode_name(i);
	names[NR_MODES] = "all";
	m = choose(opt, v, names, NR_MODES + 1);
	return m == NR_MODES ? MODE_ALL : m;
}

static void parse_appid(struct options *o, const char *opt, const char *v)
{
	const char *hash = strrchr(v, '#');
	char *name;

	if (!hash || hash == v)
		die(2, "%s: '%s' is not NAME#INSTANCE", opt, v);
	o->appid_instance = (long)number(opt, hash + 1, UINT32_MAX);
	name = strndup(v, (size_t)(hash - v));
	if (!name)
		die(1, "out of memory");
	o->appid = name;
}

/* The options whose value is kept as given (or, below, that set a
 * flag). */
static const struct {
	int id;
	size_t offset;
} string_options[] = {
	{ OPT_APP, offsetof(struct options, app) },
	{ OPT_SYMFS, offsetof(struct options, symfs) },
	{ OPT_KALLSYMS, offsetof(struct options, kallsyms) },
	{ OPT_VMLINUX, offsetof(struct options, vmlinux) },
	{ OPT_SQLITE, offsetof(struct options, sqlite) },
	{ OPT_PPROF, offsetof(struct options, pprof) },
	{ OPT_PLOT, offsetof(struct options, plot) },
	{ OPT_FLAMEGRAPH, offsetof(struct options, flamegraph) },
	{ OPT_ANNOTATE, offsetof(struct options, annotate) },
	{ OPT_ARCHIVE, offsetof(struct options, archive) },
	{ OPT_BUILDID_DIR, offsetof(struct options, buildid_dir) },
	{ OPT_COMPARE, offsetof(struct options, compare) },
	{ OPT_PEAK, offsetof(struct options, peak) },
};

/* The options without a value that set a flag. */
static const struct {
	int id;
	size_t offset;
} flag_options[] = {
	{ OPT_INVERTED, offsetof(struct options, inverted) },
	{ OPT_CHILDREN, offsetof(struct options, children) },
	{ OPT_LSTACK_ARGS, offsetof(struct options, lstack_args) },
	{ OPT_LSTACK_WITH_CALLCHAIN,
	  offsetof(struct options, lstack_with_callchain) },
	{ OPT_OFFCPU, offsetof(struct options, offcpu) },
	{ OPT_LATENCY, offsetof(struct options, latency) },
	{ OPT_SEGMENTS, offsetof(struct options, segments) },
};

static void set_from_tables(struct options *o, int id, const char *v)
{
	for (size_t i = 0; i < sizeof(string_options) /
	     sizeof(string_options[0]); i++)
		if (string_options[i].id == id)
			*(const char **)((char *)o +
					 string_options[i].offset) = v;
	for (size_t i = 0; i < sizeof(flag_options) /
	     sizeof(flag_options[0]); i++)
		if (flag_options[i].id == id)
			*(bool *)((char *)o + flag_options[i].offset) = true;
}

static void set_option(struct options *o, int id, const char *opt,
		       const char *v)
{
	switch (id) {
	case OPT_BY:
		o->fields = parse_by(opt, v);
		break;
	case OPT_MODE:
		o->mode = parse_mode(opt, v);
		break;
	case OPT_FORMAT:
		o->format = (enum format)choose(opt, v, format_names,
						NR_FORMATS);
		break;
	case OPT_APPID:
		parse_appid(o, opt, v);
		break;
	case OPT_PID:
		o->pid = (long long)number(opt, v, UINT32_MAX);
		break;
	case OPT_TID:
		o->tid = (long long)number(opt, v, UINT32_MAX);
		break;
	case OPT_CPU:
		o->cpu = (long long)number(opt, v, UINT16_MAX);
		break;
	case OPT_FROM:
		o->from_ns = seconds(opt, v);
		o->have_from = true;
		break;
	case OPT_TO:
		o->to_ns = seconds(opt, v);
		o->have_to = true;
		break;
	case OPT_TOP:
		o->top = (size_t)number(opt, v, SIZE_MAX / 2);
		if (!o->top)
			die(2, "%s: must be at least 1", opt);
		break;
	case OPT_TREE:
		o->tree = true;
		o->lstack = v && choose(opt, v, tree_kinds, NR_TREE_KINDS) == 1;
		break;
	case OPT_MIN_PERCENT:
		o->min_percent = percent(opt, v);
		o->have_min_percent = true;
		break;
	case OPT_SLICE_MS:
		o->slice_ns = number(opt, v, 86400000ull) * 1000000ull;
		if (!o->slice_ns)
			die(2, "%s: must be at least 1", opt);
		break;
	default:
		set_from_tables(o, id, v);
		break;
	}
}

/* ------------------------------------------------------------ the line */

/*
 * Die unless arg, about to be read by getopt_long, is FILE, "-", "--",
 * "-h" or an option's full name ("--name", or "--name=VALUE" for an
 * option with a value): getopt_long would take abbreviations and
 * clusters, and word its own errors.
 */
static void check_spelling(const char *arg)
{
	size_t len;

	if (arg[0] != '-' || !strcmp(arg, "-") || !strcmp(arg, "--") ||
	    !strcmp(arg, "-h"))
		return;
	if (arg[1] == '-') {
		len = strcspn(arg + 2, "=");
		for (const struct option *p = options; p->name; p++)
			if (strlen(p->name) == len &&
			    !strncmp(arg + 2, p->name, len) &&
			    (arg[2 + len] == '\0' ||
			     p->has_arg != no_argument))
				return;
	}
	die(2, "%s: unknown option (see --help)", arg);
}

static const char *option_name(int id)
{
	const struct option *p = options;

	while (p->name && p->val != id)
		p++;
	return p->name;
}

static void add_file(struct options *o, const char *arg)
{
	if (o->file)
		die(2, "%s: unexpected argument (one FILE only; see --help)",
		    arg);
	o->file = arg;
}

/* The call-chain views: text trees or folded stacks, by app or appid. */
static void check_stacks(const struct options *o)
{
	if (!options_stacks(o))
		return;
	if (o->lstack && o->format != FORMAT_TEXT &&
	    o->format != FORMAT_JSON && o->format != FORMAT_FOLDED)
		die(2, "--tree lstack: prints text, json or folded");
	if (o->tree && !o->lstack && o->format != FORMAT_TEXT)
		die(2, "--tree: prints text (--format folded writes the "
		    "stacks)");
	if (o->fields && o->fields != FB(F_APP) && o->fields != FB(F_APPID))
		die(2, "--by: the call chains' views start at the application: "
		    "app or appid only");
	if (o->sqlite || o->plot || o->annotate)
		die(2, "--format %s: not with --sqlite, --plot or --annotate",
		    format_names[o->format]);
	if (o->format == FORMAT_PERF_SCRIPT && !strcmp(o->file, "-"))
		die(2, "--format perf-script: reads FILE twice, so not "
		    "standard input");
}

/*
 * --children: rows by fields every stack frame has (not cpu or mode, which
 * the stacks do not keep); by symbol without --by.
 */
static void check_children(struct options *o)
{
	const unsigned int ok = FB(F_APP) | FB(F_APPID) | FB(F_EIP) |
				FB(F_DSO) | FB(F_SYMBOL) | FB(F_LINE);

	if (!o->children)
		return;
	if (o->format == FORMAT_FOLDED || o->format == FORMAT_PERF_SCRIPT)
		die(2, "--children: not with --format %s",
		    format_names[o->format]);
	if (!o->fields)
		o->fields = fields_normalize(FB(F_SYMBOL));
	if (o->fields & ~ok)
		die(2, "--children: group by app, appid, eip, dso, symbol or "
		    "line (the stacks keep no cpu or mode)");
}

/* The activity tree's options need it; all modes unless --mode. */
static void check_lstack(struct options *o, uint64_t seen)
{
	static const int lstack_only[] = {
		OPT_LSTACK_ARGS, OPT_LSTACK_WITH_CALLCHAIN, OPT_OFFCPU,
	};

	for (size_t i = 0; i < sizeof(lstack_only) / sizeof(lstack_only[0]);
	     i++)
		if ((seen & SEEN(lstack_only[i])) && !o->lstack)
			die(2, "--%s needs --tree lstack",
			    option_name(lstack_only[i]));
	if (!o->lstack)
		return;
	if (o->inverted)
		die(2, "--inverted: not with --tree lstack");
	if (o->offcpu && o->format != FORMAT_FOLDED && !o->flamegraph)
		die(2, "--offcpu: weighs the folded stacks and the flame graph "
		    "by off-CPU time: needs --format folded or --flamegraph");
	if (!(seen & SEEN(OPT_MODE)))
		o->mode = MODE_ALL;
}

/*
 * --latency: the histograms (by app or appid; text, CSV, JSON; not the
 * samples' views nor their filters), or with --peak a report of samples
 * (all modes unless --mode; FILE read twice).
 */
static void check_latency(struct options *o, uint64_t seen)
{
	static const int samples_only[] = {
		OPT_MODE, OPT_TID, OPT_CPU, OPT_TREE, OPT_ANNOTATE,
		OPT_CHILDREN, OPT_PPROF, OPT_FLAMEGRAPH, OPT_SQLITE,
		OPT_SLICE_MS, OPT_SYMFS, OPT_KALLSYMS, OPT_VMLINUX,
	};

	if (o->peak) {
		if (!strcmp(o->file, "-"))
			die(2, "--peak: reads FILE twice, so not standard input");
		if (!(seen & SEEN(OPT_MODE)))
			o->mode = MODE_ALL;
	}
	if (!options_histograms(o))
		return;
	for (size_t i = 0; i < sizeof(samples_only) / sizeof(samples_only[0]);
	     i++)
		if (seen & SEEN(samples_only[i]))
			die(2, "--%s: not with --latency (the histograms are "
			    "per appid and system call; --peak reports "
			    "samples)", option_name(samples_only[i]));
	if (o->fields && o->fields != FB(F_APP) && o->fields != FB(F_APPID))
		die(2, "--by: the latency histograms are by app or appid");
	if (o->format != FORMAT_TEXT && o->format != FORMAT_CSV &&
	    o->format != FORMAT_JSON)
		die(2, "--latency: prints text, csv or json");
}

/* A folder option's value must be a folder. */
static void check_dir(const char *opt, const char *dir)
{
	struct stat st;

	if (!dir)
		return;
	if (stat(dir, &st))
		die(2, "%s: %s: %s", opt, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die(2, "%s: %s: not a directory", opt, dir);
}

/* What can only be checked once every option is read. */
static void check_options(struct options *o, uint64_t seen)
{
	const char *dot;

	if (!o->file)
		die(2, "missing FILE (see --help)");
	check_dir("--symfs", o->symfs);
	check_dir("--buildid-dir", o->buildid_dir);
	for (size_t i = 0; i < sizeof(exclusive) / sizeof(exclusive[0]); i++)
		if ((seen & SEEN(exclusive[i][0])) &&
		    (seen & SEEN(exclusive[i][1])))
			die(2, "--%s and --%s exclude each other",
			    option_name(exclusive[i][0]),
			    option_name(exclusive[i][1]));
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if ((seen & SEEN(needs[i][0])) &&
		    !(seen & (SEEN(needs[i][1]) | SEEN(needs[i][2]))))
			die(2, needs[i][1] == needs[i][2] ? "--%s needs --%s" :
			    "--%s needs --%s or --%s",
			    option_name(needs[i][0]), option_name(needs[i][1]),
			    option_name(needs[i][2]));
	check_lstack(o, seen);
	check_latency(o, seen);
	check_stacks(o);
	check_children(o);
	if (o->pprof && !strcmp(o->file, "-"))
		die(2, "--pprof: reads FILE twice, so not standard input");
	if (o->have_from && o->have_to && o->to_ns <= o->from_ns)
		die(2, "--to must be after --from");
	if (!o->have_to)
		o->to_ns = UINT64_MAX;
	dot = o->plot ? strrchr(o->plot, '.') : NULL;
	if (dot && !strcasecmp(dot, ".png"))
		die(2, "--plot: PNG is not supported: write an .svg "
		    "(rsvg-convert or a browser converts it)");
	if (o->plot && (!dot || strcasecmp(dot, ".svg")))
		die(2, "--plot: '%s': the file name must end in .svg",
		    o->plot);
}

struct options options_parse(int argc, char **argv)
{
	struct options o = {
		.mode = SLEEPY_MODE_USER, .format = FORMAT_TEXT,
		.pid = -1, .tid = -1, .cpu = -1, .slice_ns = 100000000ull,
		.min_percent = 0.5,
	};
	uint64_t seen = 0;
	char opt[32];
	int c, li;

	opterr = 0;
	for (;;) {
		if (optind < argc)
			check_spelling(argv[optind]);
		c = getopt_long(argc, argv, "-:h", options, &li);
		if (c == -1)
			break;
		if (c == 1) {
			add_file(&o, optarg);
		} else if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		} else if (c == ':') {
			die(2, "%s: missing value", argv[optind - 1]);
		} else if (c >= OPT_BY) {
			snprintf(opt, sizeof(opt), "--%s", options[li].name);
			seen |= SEEN(c);
			set_option(&o, c, opt, optarg);
			/* --tree KIND: the next word, if it names one. */
			if (c == OPT_TREE && !optarg && optind < argc &&
			    is_tree_kind(argv[optind]))
				set_option(&o, c, opt, argv[optind++]);
		} else {
			die(2, "%s: unknown option (see --help)",
			    argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++)	/* after "--" */
		add_file(&o, argv[optind]);
	check_options(&o, seen);
	return o;
}

const char *options_mode(const struct options *o)
{
	return o->mode == MODE_ALL ? "all" :
		sleepy_mode_name((unsigned int)o->mode);
}

const char *options_mode_title(const struct options *o, char *buf,
			       size_t size)
{
	if (o->mode == MODE_ALL)
		return "all modes";
	snprintf(buf, size, "%s mode", options_mode(o));
	return buf;
}
