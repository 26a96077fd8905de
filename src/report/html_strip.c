/*
 * html_strip.c: trial scores with their intervals, as inline SVG. The
 * strip plots of the parameter effects (html_effects.c gives each value's
 * mean and its interval) and the leaderboard's chart of the complete
 * trials' scores by rank. Each trial is a dot with its 95% interval
 * (report_ties: the corrected resampled variance) as a vertical bar under
 * it; the trials tied with the best (the table's shaded rows) are dots of
 * their own colour and outline, named in the legend and in each dot's
 * tooltip, so the group is told apart without colour too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

#define SCORES_TOP 50 /* the leaderboard's chart: the best complete trials */

static unsigned jitter_hash(unsigned v)
{
    v ^= v >> 16, v *= 0x7feb352dU, v ^= v >> 15, v *= 0x846ca68bU, v ^= v >> 16;
    return v;
}

static void widen(double *lo, double *hi, double v)
{
    if (isfinite(v)) *lo = fmin(*lo, v), *hi = fmax(*hi, v);
}

/* One value of a chart in axis units (y * scale of metric m, e.g. Q3 in %). */
typedef struct {
    FsMetricKind m;
    double scale;
} Units;

static void value_text(FILE *out, const Units *u, double v)
{
    char num[FS_PERCENT_TEXT];
    fprintf(out, "%s%s", report_metric_text(num, sizeof num, u->m, v / u->scale), u->m == FS_METRIC_LOSS ? "" : "%");
}

/* A trial: its interval as a vertical bar from lo to hi (NaN: none), its
 * dot at (x, y) linked to its section, in a group that names it. */
static void trial_mark(FILE *out, const HtmlFrame *f, const HtmlAxis *ay, const Units *u, double x, double y,
                       double lo, double hi, int tied, const char *id)
{
    int ci = isfinite(lo) && isfinite(hi);
    fputs("<g class=\"trial\" data-trial=\"", out);
    html_esc(out, id);
    fputs("\">", out);
    if (ci) {
        fprintf(out, "<line class=\"ci\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.2f\" y2=\"%.2f\"><title>", x, x,
                html_fy(f, ay, lo), html_fy(f, ay, hi));
        html_esc(out, id);
        fputs(": 95% interval ", out);
        value_text(out, u, lo), fputs(" to ", out), value_text(out, u, hi);
        fputs("</title></line>", out);
    }
    fputs("<a href=\"#t-", out);
    html_esc(out, id);
    fprintf(out, "\"><circle class=\"dot%s\" cx=\"%.1f\" cy=\"%.2f\" r=\"3.5\"><title>", tied ? " tied" : "", x,
            html_fy(f, ay, y));
    html_esc(out, id);
    fputs(": ", out);
    value_text(out, u, y);
    if (ci) fputs(", 95% interval ", out), value_text(out, u, lo), fputs(" to ", out), value_text(out, u, hi);
    fprintf(out, "%s</title></circle></a></g>", tied ? ", tied with the best" : "");
}

/* The legend of trial marks under the chart's title (out NULL: layout
 * only); `mean`: the strip plot's value means too. Returns the last row's y. */
static double marks_legend(FILE *out, const HtmlFrame *f, int mean)
{
    double x = f->l, y = 36, right = f->w - 4;
    html_legend(out, &x, &y, right, "dot tied", NULL, 2, "tied with the best (and the best)");
    html_legend(out, &x, &y, right, "dot", NULL, 2, "other trials");
    html_legend(out, &x, &y, right, "#555", NULL, 0, "a trial's 95% interval");
    if (mean) html_legend(out, &x, &y, right, "#000", NULL, 0, "mean of a value, and its 95% interval");
    return y;
}

/* ---------------------------------------------------------------------- */
/* Strip plot                                                               */

static void strip_column(FILE *out, const HtmlStrip *s, const HtmlFrame *f, const HtmlAxis *ay, int c, int tilt)
{
    const Units u = {FS_METRIC_Q3, 100};
    double base = f->h - f->b, band = (f->w - f->l - f->r) / s->n_cat, cx = f->l + band * (c + 0.5);
    fprintf(out, "<g class=\"group\" data-value=\"");
    html_esc(out, s->cat[c]);
    fputs("\">", out);
    for (int i = 0; i < s->n; i++) {
        if (s->point_cat[i] != c || !isfinite(s->y[i])) continue;
        double jit = ((jitter_hash((unsigned)i * 2654435761U + (unsigned)c) % 1000) / 1000.0 - 0.5) * band * 0.5;
        trial_mark(out, f, ay, &u, cx + jit, s->y[i], s->lo ? s->lo[i] : NAN, s->hi ? s->hi[i] : NAN,
                   s->tied && s->tied[i] == 1, s->link[i]);
    }
    double mean = s->cat_mean[c], lo = s->cat_lo[c], hi = s->cat_hi[c];
    if (isfinite(mean)) {
        double my = html_fy(f, ay, mean);
        fprintf(out, "<line class=\"mean\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.2f\" y2=\"%.2f\"><title>mean %s%%</title></line>",
                cx - band * 0.35, cx + band * 0.35, my, my, fs_percent_text(mean / 100));
    }
    if (isfinite(lo) && isfinite(hi)) {
        double ex = cx + band * 0.4;
        fprintf(out, "<line class=\"effect-ci\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.2f\" y2=\"%.2f\"><title>mean ", ex, ex,
                html_fy(f, ay, lo), html_fy(f, ay, hi));
        value_text(out, &u, mean), fputs(", 95% interval ", out);
        value_text(out, &u, lo), fputs(" to ", out), value_text(out, &u, hi);
        fputs("</title></line>", out);
    }
    if (tilt) fprintf(out, "<text class=\"tick\" transform=\"translate(%.1f %.1f) rotate(-35)\" text-anchor=\"end\">", cx + 4, base + 14);
    else fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", cx, base + 16);
    html_esc_cut(out, s->cat[c], tilt ? 18 : (size_t)(band / 6.5));
    fputs("</text>", out);
    if (s->notes && s->notes[c] && !tilt) {
        fprintf(out, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", cx, base + 31);
        html_esc(out, s->notes[c]);
        fputs("</text>", out);
    }
    fputs("</g>\n", out);
}

void html_chart_strip(FILE *out, const HtmlStrip *s)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < s->n; i++)
        if (isfinite(s->y[i])) {
            widen(&lo, &hi, s->y[i]);
            if (s->lo) widen(&lo, &hi, s->lo[i]), widen(&lo, &hi, s->hi[i]);
        }
    if (!isfinite(lo) || s->n_cat < 1) {
        html_no_chart(out, "No complete trial has a Q3 for this option's values.");
        return;
    }
    for (int c = 0; c < s->n_cat; c++) widen(&lo, &hi, s->cat_lo[c]), widen(&lo, &hi, s->cat_hi[c]);
    int tilt = s->n_cat > 6;
    HtmlFrame f = {560, tilt ? 330 : 290, 58, 16, 30, tilt ? 108 : 66};
    double rows_y = marks_legend(NULL, &f, 1);
    f.t += rows_y - 20, f.h += rows_y - 20; /* the plot starts under the legend */
    HtmlAxis ay = html_axis_nice(lo, hi, 5, 0);
    html_svg_open(out, &f, "strip", s->n_cat, s->title);
    fprintf(out, "<text class=\"ctitle\" x=\"%.1f\" y=\"18\">", f.l);
    html_esc(out, s->title);
    fputs("</text>\n", out);
    marks_legend(out, &f, 1);
    html_axis_y(out, &f, &ay, 0, s->ylabel);
    fprintf(out, "\n<path class=\"axis\" d=\"M%.1f %.1fH%.1f\"/>\n<g class=\"marks\"", f.l, f.h - f.b, f.w - f.r);
    html_axis_map(out, "data-ymap", &f, &ay, 0);
    fputs(">\n", out);
    for (int c = 0; c < s->n_cat; c++) strip_column(out, s, &f, &ay, c, tilt);
    fprintf(out, "</g>\n<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (f.l + f.w - f.r) / 2,
            f.h - 6);
    html_esc(out, s->xlabel);
    fputs("</text>\n", out);
    html_svg_close(out);
}

/* ---------------------------------------------------------------------- */
/* The leaderboard's chart                                                  */

static int complete_ok(const FsReport *rep, const FsReportRow *r)
{
    return r->status == FS_TRIAL_OK && r->n_done == rep->spec.folds && isfinite(r->mean);
}

void html_chart_scores(FILE *out, const FsReport *rep)
{
    const int loss = rep->spec.metric == FS_METRIC_LOSS;
    const Units u = {rep->spec.metric, loss ? 1 : 100};
    int at[SCORES_TOP], m = 0, total = 0, with_ci = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < rep->n_rows; i++) {
        const FsReportRow *r = &rep->rows[i];
        if (!complete_ok(rep, r) || total++ >= SCORES_TOP) continue;
        at[m++] = i, with_ci += r->has_ci;
        widen(&lo, &hi, r->mean * u.scale), widen(&lo, &hi, r->ci_lo * u.scale), widen(&lo, &hi, r->ci_hi * u.scale);
    }
    if (!m) {
        html_no_chart(out, "No trial is complete yet: no scores to plot.");
        return;
    }
    char title[160];
    snprintf(title, sizeof title, "Mean validation %s by rank, with 95%% intervals%s",
             loss ? "loss" : rep->spec.metric == FS_METRIC_Q8 ? "Q8" : "Q3",
             total > m ? " (the best complete trials)" : "");
    HtmlFrame f = {560, 290, 58, 16, 30, 44};
    double rows_y = marks_legend(NULL, &f, 0);
    f.t += rows_y - 20, f.h += rows_y - 20;
    HtmlAxis ay = html_axis_nice(lo, hi, 5, 0);
    html_svg_open(out, &f, "scores", 1, title);
    fprintf(out, "<text class=\"ctitle\" x=\"%.1f\" y=\"18\">", f.l);
    html_esc(out, title);
    fputs("</text>\n", out);
    marks_legend(out, &f, 0);
    html_axis_y(out, &f, &ay, 0,
                loss                                ? "validation loss (mean over folds)"
                : rep->spec.metric == FS_METRIC_Q8 ? "validation Q8 (%, mean over folds)"
                                                    : "validation Q3 (%, mean over folds)");
    double base = f.h - f.b, band = (f.w - f.l - f.r) / m;
    int every = (m + 14) / 15; /* about 15 rank labels */
    fprintf(out, "<path class=\"axis\" d=\"M%.1f %.1fH%.1f\"/><g class=\"tick\" text-anchor=\"middle\">", f.l, base,
            f.w - f.r);
    for (int j = 0; j < m; j += every)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%d</text>", f.l + band * (j + 0.5), base + 16, rep->rows[at[j]].rank);
    fputs("</g>\n<g class=\"marks\"", out);
    html_axis_map(out, "data-ymap", &f, &ay, 0);
    fputs(">\n", out);
    for (int j = 0; j < m; j++) {
        const FsReportRow *r = &rep->rows[at[j]];
        trial_mark(out, &f, &ay, &u, f.l + band * (j + 0.5), r->mean * u.scale, r->ci_lo * u.scale, r->ci_hi * u.scale,
                   r->tied == 1, r->id);
    }
    fprintf(out, "</g>\n<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">rank (%d of %d complete "
                 "trials)</text>\n",
            (f.l + f.w - f.r) / 2, f.h - 6, m, total);
    html_svg_close(out);
    if (!with_ci)
        html_no_chart(out, rep->spec.folds < 2 ? "A single validation split gives no interval: the dots stand alone."
                                               : "No complete trial has an interval yet.");
}
