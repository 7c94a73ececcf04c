// SPDX-License-Identifier: GPL-2.0
/* latplot: the latency histograms as SVG; see latplot.h. */
#include "latplot.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "fmt.h"
#include "plot.h"
#include "syscalls.h"

#define PANEL_W		480
#define PANEL_H		250
#define LEFT		56	/* the y axis's labels */
#define TOP		78	/* the page's titles */
#define PLOT_TOP	48	/* a panel's title and peak marks */
#define PLOT_H		(PANEL_H - PLOT_TOP - 46)
#define PLOT_W		(PANEL_W - LEFT - 14)
#define COLUMNS		2

static const char *const peak_fills[] = {
	"#4682b4", "#d2691e", "#2e8b57", "#9932cc", "#b8860b", "#dc143c",
};
#define NR_FILLS (sizeof(peak_fills) / sizeof(peak_fills[0]))

/* The buckets every panel shows. */
struct axis {
	unsigned int first, last;
	double bw;		/* a bucket's width */
	unsigned int step;	/* buckets between labels */
};

/* "1ns" ... "512ns", "1us" ...: 2^b ns, 2^10 taken as 1000. */
static void bucket_label(unsigned int b, char *buf, size_t size)
{
	static const char *const units[] = { "ns", "us", "ms", "s", "ks" };

	snprintf(buf, size, "%u%s", 1u << (b % 10), units[b / 10]);
}

static struct axis make_axis(const struct lat_report *rep, size_t n)
{
	struct axis a = { LAT_BUCKETS - 1, 0, 0, 1 };
	unsigned int f, l;

	for (size_t i = 0; i < n; i++) {
		if (lat_range(&rep->rows[i].h, &f, &l))
			continue;
		a.first = f < a.first ? f : a.first;
		a.last = l > a.last ? l : a.last;
	}
	if (a.first > a.last)
		a.first = a.last = 0;
	a.first = a.first > 0 ? a.first - 1 : 0;
	a.last = a.last + 1 < LAT_BUCKETS ? a.last + 1 : a.last;
	a.bw = (double)PLOT_W / (a.last - a.first + 1);
	while (a.step * a.bw < 34)
		a.step = a.step == 1 ? 2 : a.step == 2 ? 5 : a.step * 2;
	return a;
}

/* The axes of a panel at (x, y): x labels, log-scale y ticks to top. */
static void panel_axes(FILE *f, int x, int y, const struct axis *a,
		       uint64_t top)
{
	const int y0 = y + PLOT_TOP + PLOT_H;
	const double scale = log10((double)top + 1);
	char label[16];

	fprintf(f, "<path d=\"M%d %d V%d H%d\" stroke=\"black\" fill=\"none\""
		"/>\n", x + LEFT, y + PLOT_TOP, y0, x + LEFT + PLOT_W);
	for (uint64_t t = 1; t <= top; t *= 10) {
		const double ty = y0 - PLOT_H * log10((double)t + 1) / scale;

		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
			PLOT_FONT ">%" PRIu64 "</text>\n", x + LEFT - 4,
			ty + 4, t);
		if (t > UINT64_MAX / 10)
			break;
	}
	for (unsigned int b = a->first; b <= a->last; b++) {
		if (b % a->step)
			continue;
		bucket_label(b, label, sizeof(label));
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
			PLOT_FONT ">%s</text>\n", x + LEFT + a->bw *
			(b - a->first), y0 + 16, label);
	}
}

/* A bar per non-empty bucket, in its peak's colour (grey outside one). */
static void panel_bars(FILE *f, int x, int y, const struct axis *a,
		       const struct lat_row *r, uint64_t top)
{
	const int y0 = y + PLOT_TOP + PLOT_H;
	const double scale = log10((double)top + 1);

	for (unsigned int b = a->first; b <= a->last; b++) {
		const uint64_t c = r->h.counts[b];
		const unsigned int k = lat_peak_of(r->peaks, r->npeaks, b);
		const double h = PLOT_H * log10((double)c + 1) / scale;

		if (!c)
			continue;
		fprintf(f, "<rect class=\"bar\" data-bucket=\"%u\" data-count=\""
			"%" PRIu64 "\" data-peak=\"%u\" x=\"%.2f\" y=\"%.2f\" "
			"width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%"
			PRIu64 " -> %" PRIu64 " ns: %" PRIu64 " calls",
			b, c, k, x + LEFT + a->bw * (b - a->first) + 1,
			y0 - h, a->bw - 2, h,
			k ? peak_fills[(k - 1) % NR_FILLS] : "#999999",
			lat_bucket_lo(b), lat_bucket_hi(b) - 1, c);
		if (k)
			fprintf(f, " (peak %u)", k);
		fputs("</title></rect>\n", f);
	}
}

/* Each peak: a bracket over its buckets, numbered. */
static void panel_peaks(FILE *f, int x, int y, const struct axis *a,
			const struct lat_row *r)
{
	for (size_t k = 0; k < r->npeaks; k++) {
		const struct lat_peak *p = &r->peaks[k];
		const double x0 = x + LEFT + a->bw * (p->first - a->first) + 1;
		const double x1 = x + LEFT + a->bw * (p->last + 1 - a->first) -
			1;
		const int py = y + PLOT_TOP - 8;

		fprintf(f, "<g class=\"peak\" data-n=\"%zu\"><title>peak %zu: %"
			PRIu64 " calls</title><path d=\"M%.2f %d V%d H%.2f V%d"
			"\" stroke=\"%s\" fill=\"none\"/><text x=\"%.2f\" y=\""
			"%d\" text-anchor=\"middle\" " PLOT_FONT ">%zu</text>"
			"</g>\n", k + 1, k + 1, p->calls, x0, py + 6, py, x1,
			py + 6, peak_fills[k % NR_FILLS], (x0 + x1) / 2, py - 3,
			k + 1);
	}
}

static void panel(FILE *f, const struct lat_report *rep, size_t i,
		  const struct axis *a)
{
	const struct lat_row *r = &rep->rows[i];
	const int x = (int)(i % COLUMNS) * PANEL_W;
	const int y = TOP + (int)(i / COLUMNS) * PANEL_H;
	char label[SYSCALL_LABEL_MAX], t[300], p50[32];
	uint64_t top = 1;

	for (unsigned int b = 0; b < LAT_BUCKETS; b++)
		top = r->h.counts[b] > top ? r->h.counts[b] : top;
	snprintf(t, sizeof(t), "%s: %s, %" PRIu64 " calls, p50 %s",
		 strtab_get(rep->names, r->group), syscall_label(r->nr, label),
		 r->h.calls, fmt_duration(p50, sizeof(p50),
					  lat_percentile(&r->h, 50)));
	fprintf(f, "<g class=\"hist\" data-nr=\"%u\"><text x=\"%d\" y=\"%d\" "
		PLOT_FONT ">", r->nr, x + LEFT, y + 16);
	plot_xml_text(f, t);
	fputs("</text>\n", f);
	panel_axes(f, x, y, a, top);
	panel_bars(f, x, y, a, r, top);
	panel_peaks(f, x, y, a, r);
	fputs("</g>\n", f);
}

static void draw(FILE *f, const void *arg, const char *sub)
{
	const struct lat_report *rep = arg;
	const size_t n = rep->nrows < PLOT_MAX_ROWS ? rep->nrows :
		PLOT_MAX_ROWS;
	const struct axis a = make_axis(rep, n);
	const int rows = (int)((n ? n : 1) + COLUMNS - 1) / COLUMNS;
	char title[200];

	snprintf(title, sizeof(title), "System call latency by %s: %zu "
		 "histograms%s (log2 buckets, log-scale counts)",
		 rep->by_appid ? "appid" : "app", rep->nrows,
		 n < rep->nrows ? ", the first shown" : "");
	plot_header(f, COLUMNS * PANEL_W, TOP + rows * PANEL_H, title, sub);
	for (size_t i = 0; i < n; i++)
		panel(f, rep, i, &a);
	if (!n)
		fprintf(f, "<text x=\"%d\" y=\"%d\" " PLOT_FONT ">(no "
			"histograms)</text>\n", LEFT, TOP + 20);
	fputs("</svg>\n", f);
}

int latplot_write(const char *path, const struct lat_report *rep,
		  const char *file, const char *filters, char *err,
		  size_t errsz)
{
	return plot_file(path, draw, rep, file, filters, err, errsz);
}
