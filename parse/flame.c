// SPDX-License-Identifier: GPL-2.0
/* flame: call trees as interactive SVG flame graphs; see flame.h. */
#include "flame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "fmt.h"

#define FG_WIDTH	1200	/* the image, px */
#define FG_PAD		10	/* left and right of the frames */
#define FG_TOP		50	/* title, subtitle, controls */
#define FG_ROW		16	/* a frame's row (a 1 px gap included) */
#define FG_BOTTOM	28	/* the status line */
#define FG_CHAR_W	7.3	/* a 12 px monospace character, about */
#define FG_MIN_PX	0.1	/* narrower frames are left out */
#define FG_NAME		1024	/* the longest name shown, with its NUL */

/* A kind's look: a hue family, the shade picked by the name's hash. */
struct kind_style {
	const char *cls;	/* the frame's class */
	const char *what;	/* in its title; NULL: none */
	double hue, spread;	/* hue .. hue + spread, degrees */
	double sat, light;	/* 0 to 1 */
};

static const struct kind_style kind_styles[NR_FRAME_KINDS] = {
	[FRAME_APP] = { "app", "application", 262, 36, 0.45, 0.72 },
	[FRAME_USER] = { "user", "user", 4, 46, 0.82, 0.62 },
	[FRAME_KERNEL] = { "kernel", "kernel", 182, 38, 0.58, 0.58 },
	[FRAME_LOGICAL] = { "logical", "logical", 92, 48, 0.50, 0.56 },
};

static const struct kind_style root_style = { "root", NULL, 0, 0, 0, 0.78 };

/* What XML needs escaped, in text and in attributes alike. */
static const char *const xml_escapes[128] = {
	['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
	['"'] = "&quot;", ['\''] = "&#39;",
};

struct flame {
	FILE *f;
	const struct calltree *t;
	const struct strtab *names;
	const struct flame_in *in;
	uint64_t all;		/* the root's samples (or off-CPU ns) */
	double scale;		/* px per sample (or ns) */
	unsigned int depth;	/* the deepest frame drawn */
	int top;		/* the frames' top: below the legend */
	char name[FG_NAME], label[FG_NAME];
};

/* Node n's width: its total samples, or its off-CPU time. */
static uint64_t weight(const struct flame *fl, uint32_t n)
{
	return fl->in->offcpu ? fl->t->v[n].off_total : fl->t->v[n].total;
}

/* s with XML's special characters escaped, other bytes as '?'. */
static void xml_put(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f)
			fputc('?', f);
		else if (xml_escapes[c])
			fputs(xml_escapes[c], f);
		else
			fputc(c, f);
	}
}

/* name cut to fit px: whole, or its start and "..", or nothing (the
 * script's label() does the same when it zooms). */
static void fit(char *dst, size_t size, const char *name, double px)
{
	const double room = (px - 6) / FG_CHAR_W;	/* floor: the cast */
	size_t len = strlen(name), n;

	n = room < 0 ? 0 : room >= (double)size ? size - 1 : (size_t)room;
	if (len <= n) {
		memcpy(dst, name, len + 1);
	} else if (n < 3) {
		dst[0] = '\0';
	} else {
		memcpy(dst, name, n - 2);
		memcpy(dst + n - 2, "..", 3);
	}
}

static double hsl_part(double p, double q, double h)
{
	h = h < 0 ? h + 1 : h > 1 ? h - 1 : h;
	if (h < 1.0 / 6)
		return p + (q - p) * 6 * h;
	if (h < 0.5)
		return q;
	if (h < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - h) * 6;
	return p;
}

/* The kind's colour for name, as #rrggbb into buf (8 bytes). */
static void colour(const struct kind_style *ks, const char *name, char *buf)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	double hue, l, s = ks->sat, q, p;

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	hue = ks->hue + ks->spread * (double)(h & 0xffff) / 65535.0;
	hue = (hue >= 360 ? hue - 360 : hue) / 360;
	l = ks->light + 0.08 * ((double)(h >> 24) / 255.0 - 0.5);
	q = l < 0.5 ? l * (1 + s) : l + s - l * s;
	p = 2 * l - q;
	snprintf(buf, 8, "#%02x%02x%02x",
		 (unsigned int)(255 * hsl_part(p, q, hue + 1.0 / 3) + 0.5),
		 (unsigned int)(255 * hsl_part(p, q, hue) + 0.5),
		 (unsigned int)(255 * hsl_part(p, q, hue - 1.0 / 3) + 0.5));
}

/* ------------------------------------------------------------ the tree */

/* Whether node n is drawn (its caller being drawn). */
static bool kept(const struct flame *fl, uint32_t n)
{
	const uint64_t total = weight(fl, n);

	return (double)total * fl->scale >= FG_MIN_PX &&
	       fmt_percent(total, fl->all) >= fl->in->min_percent;
}

/* The depth of the deepest frame drawn at or under node n, at depth d. */
static unsigned int max_depth(const struct flame *fl, uint32_t n,
			      unsigned int d)
{
	unsigned int m = d, k;

	for (uint32_t i = fl->t->v[n].child; i; i = fl->t->v[i].next) {
		if (!kept(fl, i))
			continue;
		k = max_depth(fl, i, d + 1);
		if (k > m)
			m = k;
	}
	return m;
}

/* A frame's title after its name and kind: its samples and their share,
 * its off-CPU time if the tree has any (or the other way round). */
static void title_counts(const struct flame *fl, const struct tnode *node)
{
	const uint64_t w = fl->in->offcpu ? node->off_total : node->total;
	const double pct = fmt_percent(w, fl->all);

	if (fl->in->offcpu)
		fprintf(fl->f, ": %.3fs off-CPU, %.2f%%; %" PRIu64 " sample%s",
			(double)w / 1e9, pct, node->total,
			node->total == 1 ? "" : "s");
	else
		fprintf(fl->f, ": %" PRIu64 " sample%s, %.2f%%", w,
			w == 1 ? "" : "s", pct);
	if (!fl->in->offcpu && fl->t->v[0].off_total)
		fprintf(fl->f, "; %.3fs off-CPU",
			(double)node->off_total / 1e9);
}

/* Node n at depth d, x samples from the left: a group with its title
 * (and the data the script zooms by), its box and its label. */
static void frame(struct flame *fl, uint32_t n, unsigned int d, uint64_t x)
{
	const struct tnode *node = &fl->t->v[n];
	const struct kind_style *ks = n ? &kind_styles[node->f.kind] :
		&root_style;
	const double px = FG_PAD + (double)x * fl->scale;
	const double w = (double)weight(fl, n) * fl->scale;
	const int y = fl->top + (int)(fl->depth - d) * FG_ROW;
	FILE *f = fl->f;
	char rgb[8];

	fmt_sanitize(fl->name, sizeof(fl->name), n ?
		     strtab_get(fl->names, node->f.name) : "all",
		     sizeof(fl->name) - 1);
	colour(ks, fl->name, rgb);
	fit(fl->label, sizeof(fl->label), fl->name, w);
	fprintf(f, "<g class=\"f %s\" data-x=\"%" PRIu64 "\" data-w=\"%"
		PRIu64 "\" data-d=\"%u\" data-n=\"", ks->cls, x, weight(fl, n),
		d);
	xml_put(f, fl->name);
	fputs("\"><title>", f);
	xml_put(f, fl->name);
	if (ks->what) {
		fprintf(f, " (%s", ks->what);
		if (node->f.dso) {
			fputs(", ", f);
			xml_put(f, strtab_get(fl->names, node->f.dso));
		}
		fputc(')', f);
	}
	title_counts(fl, node);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
		"height=\"%d\" rx=\"2\" fill=\"%s\"/><text x=\"%.2f\" y=\"%d\">", px, y, w,
		FG_ROW - 1, rgb, px + 3, y + FG_ROW - 4);
	xml_put(f, fl->label);
	fputs("</text></g>\n", f);
}

/* Node n and the frames it calls, callers first. 0, or -1 (memory). */
static int draw(struct flame *fl, uint32_t n, unsigned int d, uint64_t x)
{
	uint32_t *kids;
	ssize_t k;
	int rc = 0;

	frame(fl, n, d, x);
	k = calltree_children(&(struct tree_order){ fl->t, fl->names, false },
			      n, &kids);
	for (ssize_t i = 0; i < k && !rc; i++) {
		if (kept(fl, kids[i]))
			rc = draw(fl, kids[i], d + 1, x);
		x += weight(fl, kids[i]);
	}
	free(kids);
	return k < 0 ? -1 : rc;
}

/* ------------------------------------------------------------ the page */

static const char style[] =
	"<style><![CDATA[\n"
	"text{font-family:monospace;font-size:12px;fill:#000}\n"
	"text.title{font-family:sans-serif;font-size:16px}\n"
	"g.f{cursor:pointer}\n"
	"g.f text{pointer-events:none}\n"
	"g.f:hover rect{stroke:#000;stroke-width:0.5}\n"
	"g.match rect{fill:#e600e6}\n"
	".faded{opacity:0.45}\n"
	".hidden{display:none}\n"
	"#reset{cursor:pointer;fill:#0645ad}\n"
	"]]></style>\n";

/* The script: zoom, search, the status line (FG comes before it). */
static const char script[] =
	"(function () {\n"
	"'use strict';\n"
	"var doc = document, svg = doc.documentElement;\n"
	"var status = doc.getElementById('status');\n"
	"var matched = doc.getElementById('matched');\n"
	"var reset = doc.getElementById('reset');\n"
	"var input = doc.getElementById('search');\n"
	"var hint = status.textContent;\n"
	"var frames = [].map.call(doc.querySelectorAll('g.f'), function (g) {\n"
	"  var f = { g: g, x: +g.getAttribute('data-x'),\n"
	"    w: +g.getAttribute('data-w'), d: +g.getAttribute('data-d'),\n"
	"    n: g.getAttribute('data-n'), r: g.querySelector('rect'),\n"
	"    t: g.querySelector('text'),\n"
	"    tip: g.querySelector('title').textContent };\n"
	"  g.fgFrame = f;\n"
	"  return f;\n"
	"});\n"
	"/* As flame.c's fit(): whole, cut with '..', or nothing. */\n"
	"function label(name, px) {\n"
	"  var n = Math.floor((px - 6) / FG.charWidth);\n"
	"  if (name.length <= n) return name;\n"
	"  return n < 3 ? '' : name.slice(0, n - 2) + '..';\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  f.r.setAttribute('x', (FG.pad + x).toFixed(2));\n"
	"  f.r.setAttribute('width', w.toFixed(2));\n"
	"  f.t.setAttribute('x', (FG.pad + x + 3).toFixed(2));\n"
	"  f.t.textContent = label(f.n, w);\n"
	"}\n"
	"/* z fills the width; its callers span it, faded; the rest is\n"
	"   hidden. Intervals of samples nest as the calls do. */\n"
	"function zoom(z) {\n"
	"  if (z && z.d === 0) z = null;\n"
	"  var zx = z ? z.x : 0, zw = z ? z.w : FG.total, zd = z ? z.d : 0;\n"
	"  var s = FG.width / zw;\n"
	"  frames.forEach(function (f) {\n"
	"    var caller = f.d < zd && f.x <= zx && f.x + f.w >= zx + zw;\n"
	"    var inside = f.d >= zd && f.x >= zx && f.x + f.w <= zx + zw;\n"
	"    f.g.classList.toggle('faded', caller);\n"
	"    f.g.classList.toggle('hidden', !caller && !inside);\n"
	"    if (caller) place(f, 0, FG.width);\n"
	"    else if (inside) place(f, (f.x - zx) * s, f.w * s);\n"
	"  });\n"
	"  reset.classList.toggle('hidden', !z);\n"
	"}\n"
	"/* Frames whose name matches term (a regular expression, else a\n"
	"   substring); the share of all samples under any of them. */\n"
	"function search(term) {\n"
	"  var test = null, hits = [], sum = 0, end = -1;\n"
	"  if (term) {\n"
	"    try {\n"
	"      var re = new RegExp(term);\n"
	"      test = function (s) { return re.test(s); };\n"
	"    } catch (e) {\n"
	"      test = function (s) { return s.indexOf(term) >= 0; };\n"
	"    }\n"
	"  }\n"
	"  frames.forEach(function (f) {\n"
	"    var hit = test !== null && f.d > 0 && test(f.n);\n"
	"    f.g.classList.toggle('match', hit);\n"
	"    if (hit) hits.push(f);\n"
	"  });\n"
	"  hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
	"  hits.forEach(function (f) {\n"
	"    if (f.x >= end) { sum += f.w; end = f.x + f.w; }\n"
	"  });\n"
	"  matched.textContent = test === null ? '' : 'Matched: ' +\n"
	"    (100 * sum / FG.total).toFixed(2) + '% of all ' + FG.what +\n"
	"    ' (' + hits.length + (hits.length === 1 ? ' frame)' :\n"
	"    ' frames)');\n"
	"}\n"
	"function frameOf(e) {\n"
	"  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
	"  return g ? g.fgFrame : null;\n"
	"}\n"
	"svg.addEventListener('click', function (e) {\n"
	"  var f = frameOf(e);\n"
	"  if (f) zoom(f);\n"
	"});\n"
	"svg.addEventListener('mouseover', function (e) {\n"
	"  var f = frameOf(e);\n"
	"  status.textContent = f ? f.tip : hint;\n"
	"});\n"
	"reset.addEventListener('click', function () { zoom(null); });\n"
	"input.addEventListener('input', function () { search(input.value); });\n"
	"doc.addEventListener('keydown', function (e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') {\n"
	"    e.preventDefault();\n"
	"    input.focus();\n"
	"  } else if (e.key === 'Escape') {\n"
	"    input.value = '';\n"
	"    search('');\n"
	"    zoom(null);\n"
	"  }\n"
	"});\n"
	"})();\n";

static void head(struct flame *fl, int h)
{
	FILE *f = fl->f;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n%s"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n"
		"<text class=\"title\" x=\"%d\" y=\"22\" "
		"text-anchor=\"middle\">", FG_WIDTH, h, FG_WIDTH, h, style,
		FG_WIDTH / 2);
	xml_put(f, fl->in->title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\">",
		FG_WIDTH / 2);
	xml_put(f, fl->in->file);
	if (fl->in->filters[0]) {
		fputs("; ", f);
		xml_put(f, fl->in->filters);
	}
	fprintf(f, "</text>\n<text id=\"reset\" class=\"hidden\" x=\"%d\" "
		"y=\"22\">Reset zoom</text>\n<foreignObject x=\"%d\" y=\"6\" "
		"width=\"220\" height=\"24\"><input "
		"xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" "
		"type=\"search\" placeholder=\"Search (regular expression)\" "
		"style=\"width:100%%;box-sizing:border-box;font:12px "
		"monospace\"/></foreignObject>\n", FG_PAD,
		FG_WIDTH - FG_PAD - 220);
}

/* The kinds' colours, named, in a row above the frames. */
static void legend(struct flame *fl)
{
	static const enum frame_kind order[] = {
		FRAME_APP, FRAME_LOGICAL, FRAME_USER, FRAME_KERNEL,
	};
	static const char *const what[NR_FRAME_KINDS] = {
		[FRAME_APP] = "application", [FRAME_USER] = "user function",
		[FRAME_KERNEL] = "kernel function",
		[FRAME_LOGICAL] = "logical frame",
	};
	const int y = FG_TOP - 2;
	int x = FG_PAD;
	char rgb[8];

	fputs("<g id=\"legend\">", fl->f);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const struct kind_style *ks = &kind_styles[order[i]];

		colour(ks, ks->what, rgb);
		fprintf(fl->f, "<g class=\"key %s\"><rect x=\"%d\" y=\"%d\" "
			"width=\"12\" height=\"12\" fill=\"%s\"/><text "
			"x=\"%d\" y=\"%d\">%s</text></g>", ks->cls, x, y, rgb,
			x + 16, y + 10, what[order[i]]);
		x += 16 + (int)(strlen(what[order[i]]) * FG_CHAR_W) + 20;
	}
	fputs("</g>\n", fl->f);
}

static void tail(struct flame *fl, int h)
{
	const char *what = fl->in->offcpu ? "off-CPU time" : "samples";

	fprintf(fl->f, "<text id=\"status\" x=\"%d\" y=\"%d\">",
		FG_PAD, h - 10);
	if (fl->all)
		fputs("Click a frame to zoom; Ctrl+F to search; Escape resets",
		      fl->f);
	else
		fprintf(fl->f, "(no %s)", what);
	fprintf(fl->f, "</text>\n<text id=\"matched\" x=\"%d\" y=\"%d\" "
		"text-anchor=\"end\"></text>\n<script><![CDATA[\nvar FG = { "
		"width: %d, pad: %d, charWidth: %g, total: %" PRIu64 ", what: "
		"'%s' };\n%s]]></script>\n</svg>\n", FG_WIDTH - FG_PAD, h - 10,
		FG_WIDTH - 2 * FG_PAD, FG_PAD, FG_CHAR_W,
		fl->all ? fl->all : 1, what, script);
}

/* The whole image. 0, or -1 when out of memory. */
static int write_svg(struct flame *fl)
{
	int h, rc = 0;

	fl->all = weight(fl, 0);
	fl->scale = fl->all ? (FG_WIDTH - 2.0 * FG_PAD) / (double)fl->all :
		0;
	fl->depth = fl->all ? max_depth(fl, 0, 0) : 0;
	fl->top = FG_TOP + (fl->in->legend ? FG_ROW : 0);
	h = fl->top + (int)(fl->depth + 1) * FG_ROW + FG_BOTTOM;
	head(fl, h);
	if (fl->in->legend)
		legend(fl);
	if (fl->all)
		rc = draw(fl, 0, 0, 0);
	tail(fl, h);
	return rc;
}

int flame_write(const char *path, const struct calltree *t,
		const struct strtab *names, const struct flame_in *in,
		char *err, size_t errsz)
{
	struct flame *fl = calloc(1, sizeof(*fl));
	char *tmp = malloc(strlen(path) + 5);
	int rc = -1;

	if (!fl || !tmp) {
		snprintf(err, errsz, "%s: out of memory", path);
		goto out;
	}
	sprintf(tmp, "%s.tmp", path);
	*fl = (struct flame){ .f = fopen(tmp, "we"), .t = t, .names = names,
			      .in = in };
	if (!fl->f) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (write_svg(fl))
		snprintf(err, errsz, "%s: out of memory", path);
	else if (ferror(fl->f))
		snprintf(err, errsz, "%s: write failed", path);
	else
		rc = 0;
	if (fclose(fl->f) && !rc) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (!rc && rename(tmp, path)) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(tmp);
out:
	free(tmp);
	free(fl);
	return rc;
}
