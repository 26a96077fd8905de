/*
 * html_svg.c: the HTML report's charts as inline SVG (no script, no
 * fonts to fetch).
 *
 * Each chart is a fixed viewBox (CSS scales it to the page's width, with a
 * minimum width under which its box scrolls, so text stays legible on a
 * phone). Curves are drawn in a scaled group: x in epochs, y in thousandths
 * of the axis, relative integer steps ("l1-12 1 3"), with
 * vector-effect="non-scaling-stroke" keeping lines one width. That keeps a
 * 300-trial report of 100-epoch curves at a few megabytes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

#define MAX_POINTS 120 /* per learning curve: more epochs are drawn every k-th */

/* ---------------------------------------------------------------------- */
/* Axes                                                                     */

/* Bounds widened to whole steps of 1, 2 or 5 x 10^k, about `want` ticks. */
HtmlAxis html_axis_nice(double lo, double hi, int want, int integer)
{
    HtmlAxis a;
    if (!(hi > lo)) {
        double pad = fabs(lo) > 0 ? fabs(lo) * 0.05 : 0.5;
        lo -= pad, hi += pad;
    }
    double raw = (hi - lo) / (want > 1 ? want : 1), p = pow(10, floor(log10(raw))), f = raw / p;
    a.step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
    if (integer && a.step < 1) a.step = 1;
    a.lo = floor(lo / a.step + 1e-9) * a.step;
    a.hi = ceil(hi / a.step - 1e-9) * a.step;
    if (a.hi <= a.lo) a.hi = a.lo + a.step;
    a.decimals = a.step >= 1 ? 0 : (int)ceil(-log10(a.step) - 1e-9);
    a.log = 0;
    return a;
}

double html_fx(const HtmlFrame *f, const HtmlAxis *a, double v) { return f->l + (v - a->lo) / (a->hi - a->lo) * (f->w - f->l - f->r); }
double html_fy(const HtmlFrame *f, const HtmlAxis *a, double v) { return f->h - f->b - (v - a->lo) / (a->hi - a->lo) * (f->h - f->t - f->b); }

void html_svg_open(FILE *out, const HtmlFrame *f, const char *kind, int series, const char *title)
{
    fprintf(out, "<figure><svg class=\"chart %s\" data-series=\"%d\" viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>",
            kind, series, f->w, f->h);
    html_esc(out, title);
    fputs("</title>\n", out);
}

void html_svg_close(FILE *out) { fputs("</svg></figure>\n", out); }

/* A tick's label at (x, y): the value with the axis' decimals, or on a
 * log axis (v a power of ten's exponent) the number itself. */
static void tick(FILE *out, const HtmlAxis *a, double x, double y, double v)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x, y);
    if (a->log) fprintf(out, "%g", pow(10, v));
    else fprintf(out, "%.*f", a->decimals, fabs(v) < a->step * 1e-9 ? 0.0 : v);
    fputs("</text>", out);
}

/* Horizontal grid lines (one path) and tick labels on the left (or right) edge. */
void html_axis_y(FILE *out, const HtmlFrame *f, const HtmlAxis *a, int right, const char *label)
{
    double x = right ? f->w - f->r : f->l;
    if (!right) {
        fputs("<path class=\"grid\" d=\"", out);
        for (double v = a->lo; v <= a->hi + a->step * 1e-6; v += a->step)
            fprintf(out, "M%.1f %.1fH%.1f", f->l, html_fy(f, a, v), f->w - f->r);
        fputs("\"/>\n", out);
    }
    fprintf(out, "<g class=\"tick\" text-anchor=\"%s\">", right ? "start" : "end");
    for (double v = a->lo; v <= a->hi + a->step * 1e-6; v += a->step)
        tick(out, a, right ? x + 5 : x - 5, html_fy(f, a, v) + 4, v);
    double cy = (f->t + f->h - f->b) / 2, lx = right ? f->w - 10 : 14;
    fprintf(out, "</g>\n<text class=\"label\" transform=\"translate(%.1f %.1f) rotate(%d)\" text-anchor=\"middle\">", lx,
            cy, right ? 90 : -90);
    html_esc(out, label);
    fputs("</text>\n", out);
}

void html_axis_x(FILE *out, const HtmlFrame *f, const HtmlAxis *a, const char *label)
{
    double y = f->h - f->b;
    fprintf(out, "<path class=\"axis\" d=\"M%.1f %.1fH%.1f\"/><g class=\"tick\" text-anchor=\"middle\">", f->l, y,
            f->w - f->r);
    for (double v = a->lo; v <= a->hi + a->step * 1e-6; v += a->step)
        tick(out, a, html_fx(f, a, v), y + 16, v);
    fprintf(out, "</g>\n<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (f->l + f->w - f->r) / 2,
            f->h - 6);
    html_esc(out, label);
    fputs("</text>\n", out);
}

void html_axis_map(FILE *out, const char *attr, const HtmlFrame *f, const HtmlAxis *a, int x)
{
    double p0 = x ? html_fx(f, a, a->lo) : html_fy(f, a, a->lo), p1 = x ? html_fx(f, a, a->hi) : html_fy(f, a, a->hi);
    fprintf(out, " %s=\"%s%.9g %.3f %.9g %.3f\"", attr, a->log ? "log10 " : "", a->lo, p0, a->hi, p1);
}

/* A legend entry's width: its sample and its text. */
double html_legend_w(const char *text) { return 28 + 6.2 * (double)strlen(text); }

/* One legend entry at (*x, *y), a line sample (dash may be NULL), a
 * ring (ring 1) or a dot of CSS class `colour` (ring 2); an entry that would pass `right` starts a new row. With out NULL
 * it only advances (*x, *y): the layout, to size the chart first. */
void html_legend(FILE *out, double *x, double *y, double right, const char *colour, const char *dash, int ring,
                 const char *text)
{
    double w = html_legend_w(text);
    if (*x + w > right) *x = 8, *y += 15;
    if (!out) {
        *x += w + 2;
        return;
    }
    if (ring == 2) /* a chart's own mark: colour names its class */
        fprintf(out, "<circle class=\"key %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>", colour, *x + 9, *y - 4);
    else if (ring)
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"/>", *x + 9,
                *y - 4);
    else
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s%s%s/>", *x,
                *x + 18, *y - 4, *y - 4, colour, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
    fprintf(out, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", *x + 22, *y);
    html_esc(out, text);
    fputs("</text>", out);
    *x += w + 2;
}

/* ---------------------------------------------------------------------- */
/* Learning curves                                                          */

static void range_add(double *lo, double *hi, const float *v, int n)
{
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < *lo) *lo = v[i];
            if (v[i] > *hi) *hi = v[i];
        }
}

/* "#RRGGBB" mixed toward black (t < 0) or white (t > 0) by |t|, into out. */
static void shade(char out[8], const char *hex, double t)
{
    unsigned rgb = (unsigned)strtoul(hex + 1, NULL, 16), c[3];
    for (int i = 0; i < 3; i++) {
        double v = (rgb >> (16 - 8 * i)) & 0xFF;
        v = t < 0 ? v * (1 + t) : v + (255 - v) * t;
        c[i] = (unsigned)lround(v);
    }
    snprintf(out, 8, "#%02X%02X%02X", c[0], c[1], c[2]);
}

/* Fold i of n: its curves' shade of each series' colour, darkest first.
 * The series keep their hue and dash; the folds differ in lightness, the
 * cue that survives every colour-vision deficiency and greyscale print. */
static double fold_shade(int i, int n) { return n > 1 ? -0.45 + 0.9 * i / (n - 1) : 0; }

/* One series as a path in the scaled group: x = epoch, y = thousandths of
 * the axis, in colour `stroke`. Every `stride`-th epoch and the last are
 * drawn (long runs stay a few kilobytes per chart). */
static void curve_path(FILE *out, const float *v, int n, const HtmlAxis *a, double scale, int stride, const char *cls,
                       const char *stroke)
{
    fprintf(out, "<path class=\"series %s\" stroke=\"%s\" d=\"", cls, stroke);
    int prev_x = 0;
    long prev_y = 0, have = 0;
    for (int e = 1; e <= n; e = e + stride <= n || e == n ? e + stride : n) {
        double x = v[e - 1] * scale;
        if (!isfinite(v[e - 1])) {
            have = 0; /* a gap: the next finite point starts a new piece */
            continue;
        }
        double u = (x - a->lo) / (a->hi - a->lo) * 1000;
        long y = lround(u < -5 ? -5 : u > 1005 ? 1005 : u);
        if (!have) fprintf(out, "M%d %ld", e, y);
        else fprintf(out, "%s%d%s%ld", have == 1 ? "l" : " ", e - prev_x, y - prev_y < 0 ? "" : " ", y - prev_y);
        prev_x = e, prev_y = y, have++;
    }
    if (n == 1 && isfinite(v[0])) fputs("h0.01", out); /* one epoch: a dot (round caps) */
    fputs("\"/>", out);
}

static int n_series(const HtmlFoldCurves *c)
{
    return c->epochs > 0 ? !!c->train_loss + !!c->val_loss + !!c->val_q3 : 0;
}

/* A vertical mark at epoch e over the plot. Marks and rings carry no
 * tooltip of their own (the fold table says the same): a 300-trial page
 * parses thousands fewer elements. */
static void vmark(FILE *out, const HtmlFrame *f, const HtmlAxis *ax, const char *cls, int e)
{
    fprintf(out, "<path class=\"%s\" d=\"M%.1f %.1fV%.1f\"/>", cls, html_fx(f, ax, e), f->t, f->h - f->b);
}

/* The folds' legend entries, a row of their own: each fold's shade of a
 * grey (the shade is what tells folds apart, whatever the series), or,
 * past FOLD_KEY_MAX folds, the first and the last. */
#define FOLD_KEY_GREY "#808080"
#define FOLD_KEY_MAX 8

/* The whole legend (out NULL: only laid out). Returns the last row's y. */
static double curves_legend(FILE *out, const HtmlFrame *f, const HtmlFoldCurves *fc, int n, const char *stop_rule,
                            int pruned, const char *kept, const char *acc)
{
    double x = f->l, y = 13, right = f->w - 4;
    char val_acc[16];
    snprintf(val_acc, sizeof val_acc, "val %s", acc); /* Q3, or Q8 for an 8-state model */
    html_legend(out, &x, &y, right, HTML_BLUE, "6 3", 0, "train loss");
    html_legend(out, &x, &y, right, HTML_VERMILLION, NULL, 0, "val loss");
    html_legend(out, &x, &y, right, HTML_GREEN, "2 2", 0, val_acc);
    html_legend(out, &x, &y, right, NULL, NULL, 1, kept);
    if (stop_rule) html_legend(out, &x, &y, right, HTML_PURPLE, "4 3", 0, stop_rule);
    if (pruned) html_legend(out, &x, &y, right, "#000", "1 3", 0, "pruned");
    x = right; /* the next entry starts a row */
    for (int i = 0; i < n && n > 1; i++) {
        if (n > FOLD_KEY_MAX && i > 0 && i < n - 1) continue;
        char c[8], text[48];
        shade(c, FOLD_KEY_GREY, fold_shade(i, n));
        snprintf(text, sizeof text, "%s%s", n > FOLD_KEY_MAX && i == n - 1 ? "... " : "", fc[i].name);
        html_legend(out, &x, &y, right, c, NULL, 0, text);
    }
    return y;
}

/* The chart's words: the kept epoch's rule, the title and the accuracy axis (acc: Q3 or Q8). */
static void curves_texts(int by_q3, const char *acc, char kept[48], char title[96], char axis[32])
{
    snprintf(kept, 48, "kept epoch: %s%s", by_q3 ? "highest val " : "lowest val loss", by_q3 ? acc : "");
    snprintf(title, 96, "Loss and validation %s per epoch, every fold (a shade per fold)", acc);
    snprintf(axis, 32, "validation %s (%%)", acc);
}

void html_chart_curves(FILE *out, const HtmlFoldCurves *fc, int n, const char *stop_rule, FsMonitor monitor,
                       const char *acc)
{
    char kept[48], title[96], axis[32];
    curves_texts(monitor == FS_MONITOR_Q3, acc, kept, title, axis);
    int max_e = 0, series = 0, any_ok = 0, pruned = 0;
    for (int i = 0; i < n; i++) {
        if (n_series(&fc[i]) && fc[i].epochs > max_e) max_e = fc[i].epochs;
        series += n_series(&fc[i]);
        any_ok |= n_series(&fc[i]) && !fc[i].diverged_epoch;
        pruned |= fc[i].pruned && fc[i].epochs > 0;
    }
    double llo = INFINITY, lhi = -INFINITY, qlo = INFINITY, qhi = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (!n_series(&fc[i]) || (any_ok && fc[i].diverged_epoch)) continue; /* a blow-up would flatten the rest */
        if (fc[i].train_loss) range_add(&llo, &lhi, fc[i].train_loss, fc[i].epochs);
        if (fc[i].val_loss) range_add(&llo, &lhi, fc[i].val_loss, fc[i].epochs);
        if (fc[i].val_q3) range_add(&qlo, &qhi, fc[i].val_q3, fc[i].epochs);
    }
    if (!series || (!isfinite(llo) && !isfinite(qlo))) {
        html_no_chart(out, series ? "No finite value was recorded: nothing to plot." : "No epoch was recorded for this trial.");
        return;
    }
    if (!isfinite(llo)) llo = 0, lhi = 1;
    if (!isfinite(qlo)) qlo = 0, qhi = 1;
    /* The plot starts below the legend's last row (laid out first). */
    HtmlFrame f = {560, 300, 58, 58, 34, 44};
    double rows_y = curves_legend(NULL, &f, fc, n, stop_rule, pruned, kept, acc);
    f.t += rows_y - 13;
    f.h += rows_y - 13;
    HtmlAxis ax = html_axis_nice(max_e > 1 ? 1 : 0, max_e > 1 ? max_e : 2, 8, 1), al = html_axis_nice(llo, lhi, 5, 0),
         aq = html_axis_nice(qlo * 100, qhi * 100, 5, 0);
    if (max_e > 1 && ax.lo < 1) ax.lo = 1; /* epochs start at 1 */
    html_svg_open(out, &f, "curves", series, title);
    html_axis_y(out, &f, &al, 0, "loss (cross-entropy, nats)");
    html_axis_y(out, &f, &aq, 1, axis);
    html_axis_x(out, &f, &ax, "epoch");
    curves_legend(out, &f, fc, n, stop_rule, pruned, kept, acc);
    double pw = f.w - f.l - f.r, ph = f.h - f.t - f.b, sx = pw / (ax.hi - ax.lo);
    fprintf(out, "<g class=\"curves\" transform=\"matrix(%.4f 0 0 %.5f %.3f %.3f)\">\n", sx, -ph / 1000, f.l - ax.lo * sx,
            f.h - f.b);
    int stride = (max_e + MAX_POINTS - 1) / MAX_POINTS;
    for (int i = 0; i < n; i++) { /* one group per fold: its name is the tooltip */
        const HtmlFoldCurves *c = &fc[i];
        if (!n_series(c)) continue;
        char ct[8], cv[8], cq[8];
        shade(ct, HTML_BLUE, fold_shade(i, n));
        shade(cv, HTML_VERMILLION, fold_shade(i, n));
        shade(cq, HTML_GREEN, fold_shade(i, n));
        fputs("<g><title>", out);
        html_esc(out, c->name);
        fputs("</title>", out);
        if (c->train_loss) curve_path(out, c->train_loss, c->epochs, &al, 1, stride, "train", ct);
        if (c->val_loss) curve_path(out, c->val_loss, c->epochs, &al, 1, stride, "val", cv);
        if (c->val_q3) curve_path(out, c->val_q3, c->epochs, &aq, 100, stride, "q3", cq);
        fputs("</g>\n", out);
    }
    fputs("</g>\n", out);
    for (int i = 0; i < n; i++) {
        const HtmlFoldCurves *c = &fc[i];
        /* The ring sits on the curve that chose the epoch. */
        int b = c->best_epoch;
        const float *on = monitor == FS_MONITOR_Q3 ? c->val_q3 : c->val_loss;
        const HtmlAxis *a = monitor == FS_MONITOR_Q3 ? &aq : &al;
        if (on && b >= 1 && b <= c->epochs && isfinite(on[b - 1])) {
            double v = on[b - 1] * (monitor == FS_MONITOR_Q3 ? 100.0 : 1.0);
            v = v > a->hi ? a->hi : v < a->lo ? a->lo : v;
            fprintf(out, "<circle class=\"kept\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"/>", html_fx(&f, &ax, b), html_fy(&f, a, v));
        }
        if (c->halted && c->epochs >= 1) vmark(out, &f, &ax, "stop", c->epochs);
        if (c->pruned && c->epochs >= 1) vmark(out, &f, &ax, "pruned", c->epochs);
        if (c->diverged_epoch >= 1) {
            int e = c->diverged_epoch <= max_e ? c->diverged_epoch : max_e;
            fprintf(out, "<text class=\"diverged\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">&#x2715;<title>",
                    html_fx(&f, &ax, e), f.t + 12);
            html_esc(out, c->name);
            fprintf(out, ": diverged in epoch %d</title></text>\n", c->diverged_epoch);
        }
    }
    html_svg_close(out);
}

/* ---------------------------------------------------------------------- */
/* Strip plot, bars, scatter                                               */

void html_chart_bars(FILE *out, const char *title, const char *xlabel, int n, const char *const *label, const double *v,
                     const char *fmt, const char *unit)
{
    double hi = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > hi) hi = v[i];
    if (n < 1) {
        html_no_chart(out, "Nothing to show.");
        return;
    }
    HtmlFrame f = {560, 34 + 26.0 * n + 44, 170, 70, 34, 44};
    HtmlAxis ax = html_axis_nice(0, hi > 0 ? hi : 1, 5, 0);
    ax.lo = 0;
    html_svg_open(out, &f, "bars", 1, title);
    fprintf(out, "<text class=\"ctitle\" x=\"%.1f\" y=\"18\">", 4.0);
    html_esc(out, title);
    fputs("</text>\n", out);
    fputs("<path class=\"grid\" d=\"", out);
    for (double t = ax.lo; t <= ax.hi + ax.step * 1e-6; t += ax.step)
        fprintf(out, "M%.1f %.1fV%.1f", html_fx(&f, &ax, t), f.t, f.h - f.b);
    fputs("\"/>", out);
    html_axis_x(out, &f, &ax, xlabel);
    for (int i = 0; i < n; i++) {
        double y = f.t + 26.0 * i + 4, w = isfinite(v[i]) && v[i] > 0 ? html_fx(&f, &ax, v[i]) - f.l : 0;
        fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", f.l - 6, y + 13);
        html_esc_cut(out, label[i], 26);
        fprintf(out, "</text><rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"18\"><title>", f.l, y, w);
        html_esc(out, label[i]);
        fputs("</title></rect>", out);
        fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">", f.l + w + 5, y + 13);
        html_num(out, fmt, v[i], 1);
        fprintf(out, "%s</text>\n", unit);
    }
    html_svg_close(out);
}

void html_chart_scatter(FILE *out, const char *title, const char *xlabel, const char *ylabel, int n, const double *x,
                        const double *y, double ref, const char *ref_label)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            xlo = fmin(xlo, x[i]), xhi = fmax(xhi, x[i]), ylo = fmin(ylo, y[i]), yhi = fmax(yhi, y[i]);
    if (!isfinite(xlo)) {
        html_no_chart(out, "No fold recorded its training time: nothing to plot.");
        return;
    }
    if (isfinite(ref)) ylo = fmin(ylo, ref), yhi = fmax(yhi, ref);
    HtmlFrame f = {560, 290, 70, 30, 30, 44};
    HtmlAxis ax = html_axis_nice(xlo, xhi, 6, 0), ay = html_axis_nice(ylo > 0 ? 0 : ylo, yhi, 5, 0);
    html_svg_open(out, &f, "scatter", isfinite(ref) ? 2 : 1, title);
    fprintf(out, "<text class=\"ctitle\" x=\"%.1f\" y=\"18\">", f.l);
    html_esc(out, title);
    fputs("</text>\n", out);
    html_axis_y(out, &f, &ay, 0, ylabel);
    html_axis_x(out, &f, &ax, xlabel);
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            fprintf(out, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>", html_fx(&f, &ax, x[i]), html_fy(&f, &ay, y[i]));
    if (isfinite(ref)) {
        double ry = html_fy(&f, &ay, ref);
        fprintf(out, "\n<line class=\"ref\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", f.l, f.w - f.r, ry, ry);
        fprintf(out, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", f.w - f.r - 4, ry - 5);
        html_esc(out, ref_label);
        fputs("</text>", out);
    }
    fputs("\n", out);
    html_svg_close(out);
}
