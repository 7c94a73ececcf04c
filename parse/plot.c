// SPDX-License-Identifier: GPL-2.0
/* plot: SVG histograms of a report; see plot.h. */
#include "plot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"


void plot_xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20 || c >= 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
}

void plot_header(FILE *f, int w, int h, const char *title, const char *sub)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		w, h, w, h);
	fprintf(f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" "
		"font-family=\"sans-serif\" font-size=\"16\">", w / 2);
	plot_xml_text(f, title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" "
		PLOT_FONT ">", w / 2);
	plot_xml_text(f, sub);
	fputs("</text>\n", f);
}

/* A row's label: its key cells joined by two spaces. */
static void row_label(const struct report *rep, const struct row *r,
		      unsigned int skip, char *buf, size_t size)
{
	char cell[512];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NR_FIELDS && n + 1 < size; i++) {
		if (!(rep->fields & FB(i)) || (FB(i) & skip) ||
		    (rep->fields & fields[i].label_skip))
			continue;
		fields[i].cell(&fields[i], rep, r, cell, sizeof(cell));
		n += (size_t)snprintf(buf + n, size - n, "%s%s",
				      n ? "  " : "", cell);
	}
}

static int cmp_eip(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	return a->key[F_EIP] < b->key[F_EIP] ? -1 :
		a->key[F_EIP] > b->key[F_EIP];
}

static void eip_histogram(FILE *f, const struct report *rep,
			  const char *sub)
{
	const size_t n = rep->nrows < PLOT_MAX_BARS ? rep->nrows :
		PLOT_MAX_BARS;
	struct row *v = malloc((n ? n : 1) * sizeof(*v));
	const int left = 70, right = 20, top = 60, bottom = 110;
	const int plot_h = 320, w = 1000, h = top + plot_h + bottom;
	const double plot_w = w - left - right;
	uint64_t max = 1;
	char title[200];

	snprintf(title, sizeof(title), "Samples by EIP, %s: %" PRIu64
		 " samples%s", rep->mode_title, rep->total,
		 rep->nrows > n ? " (top EIPs)" : "");
	plot_header(f, w, h, title, sub);
	if (!v) {
		fputs("</svg>\n", f);
		return;
	}
	memcpy(v, rep->rows, n * sizeof(*v));	/* the top n, by samples */
	qsort(v, n, sizeof(*v), cmp_eip);
	for (size_t i = 0; i < n; i++)
		if (v[i].samples > max)
			max = v[i].samples;
	/* Axes, and the y axis's scale at 0, max/2, max. */
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		"stroke=\"black\"/>\n", left, top + plot_h, w - right,
		top + plot_h);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		"stroke=\"black\"/>\n", left, top, left, top + plot_h);
	for (int k = 0; k <= 2; k++)
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" " PLOT_FONT
			">%" PRIu64 "</text>\n", left - 4,
			top + plot_h - k * plot_h / 2 + 4, max * (uint64_t)k / 2);
	fprintf(f, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" "
		"text-anchor=\"middle\" " PLOT_FONT ">samples</text>\n",
		top + plot_h / 2, top + plot_h / 2);
	for (size_t i = 0; i < n; i++) {
		const double bw = plot_w / (double)n;
		const double x = left + bw * (double)i;
		const double bh = (double)plot_h * (double)v[i].samples /
			(double)max;
		char label[600];

		row_label(rep, &v[i], FB(F_EIP), label, sizeof(label));
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			"height=\"%.2f\" fill=\"steelblue\"><title>0x%" PRIx64
			" ", x + bw * 0.1, top + plot_h - bh, bw * 0.8, bh,
			v[i].key[F_EIP]);
		plot_xml_text(f, label);
		fprintf(f, ": %" PRIu64 " samples, %.2f%%</title></rect>\n",
			v[i].samples, fmt_percent(v[i].samples, rep->total));
		/* Label about 25 bars along the axis. */
		if (i % (n / 25 + 1) == 0)
			fprintf(f, "<text x=\"%.2f\" y=\"%d\" " PLOT_FONT
				" transform=\"rotate(60 %.2f %d)\">0x%" PRIx64
				"</text>\n", x + bw / 2, top + plot_h + 12,
				x + bw / 2, top + plot_h + 12, v[i].key[F_EIP]);
	}
	free(v);
	fputs("</svg>\n", f);
}

static void bar_chart(FILE *f, const struct report *rep, const char *sub)
{
	const struct row *rows = rep->rows;
	const size_t n = rep->nrows < PLOT_MAX_ROWS ? rep->nrows :
		PLOT_MAX_ROWS;
	const int label_w = 420, left = label_w + 10, bar_max = 420;
	const int row_h = 20, top = 60, w = left + bar_max + 150;
	const int h = top + row_h * (int)(n ? n : 1) + 20;
	uint64_t max = n ? rows[0].samples : 1;
	char title[300], t[160];

	fields_title(rep->fields, t, sizeof(t));
	snprintf(title, sizeof(title), "%s, %s: %" PRIu64 " samples%s", t,
		 rep->mode_title, rep->total,
		 rep->nrows > n ? " (top rows)" : "");
	plot_header(f, w, h, title, sub);
	for (size_t i = 0; i < n; i++) {
		const int y = top + row_h * (int)i;
		const double bw = (double)bar_max * (double)rows[i].samples /
			(double)(max ? max : 1);
		char label[600], cut[64];

		row_label(rep, &rows[i], 0, label, sizeof(label));
		fmt_sanitize(cut, sizeof(cut), label, 58);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" " PLOT_FONT
			"><title>", label_w, y + 14);
		plot_xml_text(f, label);
		fputs("</title>", f);
		plot_xml_text(f, cut);
		fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%.2f\" "
			"height=\"%d\" fill=\"steelblue\"/>\n", left, y + 3, bw,
			row_h - 6);
		fprintf(f, "<text x=\"%.2f\" y=\"%d\" " PLOT_FONT ">%" PRIu64
			" (%.2f%%)</text>\n", left + bw + 6, y + 14,
			rows[i].samples, fmt_percent(rows[i].samples,
						     rep->total));
	}
	if (n == 0)
		fprintf(f, "<text x=\"%d\" y=\"%d\" " PLOT_FONT ">(no samples)"
			"</text>\n", left, top + 14);
	fputs("</svg>\n", f);
}

int plot_file(const char *path, void (*draw)(FILE *f, const void *arg,
					      const char *sub),
	      const void *arg, const char *file, const char *filters,
	      char *err, size_t errsz)
{
	FILE *f = fopen(path, "we");
	char sub[700];

	if (!f) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(sub, sizeof(sub), "%s%s%s", file, filters[0] ? "; " : "",
		 filters);
	draw(f, arg, sub);
	if (ferror(f) | (fclose(f) != 0)) {
		snprintf(err, errsz, "%s: write failed", path);
		return -1;
	}
	return 0;
}

static void draw_report(FILE *f, const void *arg, const char *sub)
{
	const struct report *rep = arg;

	if ((rep->fields & FB(F_EIP)) && !report_symbolized(rep))
		eip_histogram(f, rep, sub);
	else
		bar_chart(f, rep, sub);
}

int plot_write(const char *path, const struct report *rep,
	       const char *file, const char *filters, char *err,
	       size_t errsz)
{
	return plot_file(path, draw_report, rep, file, filters, err, errsz);
}
