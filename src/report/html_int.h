/*
 * report/html_int.h: private to the report module. The pieces of the HTML
 * report (html.c) that the chart and parameter-effect files share: escaping,
 * number formatting and the SVG charts. Every chart is plain inline SVG
 * (no script draws anything), carries class "chart" and a data-series
 * attribute with the number of series it plots (the browser test counts
 * them), and says so in words when there is nothing to plot.
 *
 * Colours are the Okabe-Ito palette (readable with every common colour
 * vision deficiency), and every series is also told apart by its dash
 * pattern or marker, never by colour alone.
 */
#ifndef FS_REPORT_HTML_INT_H
#define FS_REPORT_HTML_INT_H

#include <stdio.h>

#include "json/json.h"
#include "report/report.h"

/* Okabe-Ito. */
#define HTML_BLUE "#0072B2"
#define HTML_VERMILLION "#D55E00"
#define HTML_GREEN "#009E73"
#define HTML_SKY "#56B4E9"
#define HTML_ORANGE "#E69F00"
#define HTML_PURPLE "#CC79A7"
#define HTML_YELLOW "#F0E442"

/* Text (html_text.c). Text or attribute value: & < > " ' escaped; bytes that are not valid
 * UTF-8 become U+FFFD, so a Latin-1 path cannot break the page's encoding. */
void html_esc(FILE *out, const char *s);
/* At most max bytes of s (cut at a character boundary, with an ellipsis), escaped. */
void html_esc_cut(FILE *out, const char *s, size_t max);
/* A value for a table cell: "-" for NaN, else printf(fmt, v * scale). */
void html_num(FILE *out, const char *fmt, double v, double scale);
/* Q3 or SOV for people: fs_format_percent's one decimal ("71.2"; "-" if not finite). */
void html_pct(FILE *out, double fraction);
/* Unix seconds as "YYYY-MM-DD HH:MM:SS UTC". */
void html_time(char *buf, size_t n, double t);
/* A paragraph saying why there is no chart. */
void html_no_chart(FILE *out, const char *why);

/* ---------------------------------------------------------------------- */
/* Charts (html_svg.c)                                                    */

/* A value axis: lo..hi in ticks of step; on a log axis (log 1) the values
 * are powers of ten's exponents and the ticks name the powers. */
typedef struct {
    double lo, hi, step;
    int decimals, log;
} HtmlAxis;
/* A chart's viewBox size and its plot's margins. */
typedef struct {
    double w, h, l, r, t, b;
} HtmlFrame;
/* Bounds widened to whole steps of 1, 2 or 5 x 10^k, about `want` ticks. */
HtmlAxis html_axis_nice(double lo, double hi, int want, int integer);
/* A value's x and y in the viewBox. */
double html_fx(const HtmlFrame *f, const HtmlAxis *a, double v);
double html_fy(const HtmlFrame *f, const HtmlAxis *a, double v);
/* <figure><svg class="chart KIND" data-series=...> with its title; and its end. */
void html_svg_open(FILE *out, const HtmlFrame *f, const char *kind, int series, const char *title);
void html_svg_close(FILE *out);
/* The y axis' grid and ticks (left, or right), the x axis and ticks, with their labels. */
void html_axis_y(FILE *out, const HtmlFrame *f, const HtmlAxis *a, int right, const char *label);
void html_axis_x(FILE *out, const HtmlFrame *f, const HtmlAxis *a, const char *label);
/* data-ymap="v0 y0 v1 y1" (and data-xmap): where two values of an axis
 * land in the viewBox, so a test can check a mark's place from its data. */
void html_axis_map(FILE *out, const char *attr, const HtmlFrame *f, const HtmlAxis *a, int x);
/* A legend entry (html_svg.c says which samples); out NULL: layout only. */
double html_legend_w(const char *text);
void html_legend(FILE *out, double *x, double *y, double right, const char *colour, const char *dash, int ring,
                 const char *text);

/* One fold's curves for the trial chart. */
typedef struct {
    const char *name; /* "fold 0", "validation split" */
    int epochs, best_epoch, halted, diverged_epoch;
    const float *train_loss, *val_loss, *val_q3; /* epochs entries each, or NULL (not plotted) */
    int pruned; /* the pruner stopped the trial after this fold's last epoch shown */
} HtmlFoldCurves;

/* Training and validation loss (left axis) and validation Q3 (right axis)
 * per epoch, up to three series per fold: a series' colour and dash are
 * its own, fold i of n is a shade of them (darkest first), with a legend
 * entry per fold; the kept epoch is a ring on the curve that chose it
 * (monitor: validation loss or Q3, named in the legend), the stop rule's
 * decision a vertical mark labelled stop_rule, the pruner's another. */
/* acc: what the accuracy curve is, "Q3" (or "Q8": an 8-state run's accuracy over its classes). */
void html_chart_curves(FILE *out, const HtmlFoldCurves *f, int n, const char *stop_rule, FsMonitor monitor,
                       const char *acc);

/* A strip plot (html_strip.c): one column per category, one dot per value
 * (y in %) with its 95% interval as a vertical bar, the dots of trials tied
 * with the best marked (a colour and an outline of their own, in the
 * legend), and each column's mean as a bar with that mean's 95% interval
 * beside it. point_cat[i] is the column of value i, link[i] the trial id a
 * dot names (its tooltip and link). notes[c] goes under column c. */
typedef struct {
    const char *title, *xlabel, *ylabel;
    int n_cat;
    const char *const *cat;
    const char *const *notes;
    int n;
    const double *y;
    const int *point_cat;
    const char *const *link;
    const double *lo, *hi; /* value i's interval in % (NULL, or NaN: none) */
    const int *tied;       /* value i: 1 tied with the best, else not marked (NULL: none) */
    const double *cat_mean, *cat_lo, *cat_hi; /* column c's mean and its interval (NaN: none) */
} HtmlStrip;
void html_chart_strip(FILE *out, const HtmlStrip *s);

/* The leaderboard's chart (html_strip.c): the ranking metric's mean of the
 * best complete trials by rank, each with its 95% interval (report_ties)
 * as a bar, the trials tied with the best marked as in the strip plots. */
void html_chart_scores(FILE *out, const FsReport *rep);

/* run.objectives (html_pareto.c): the first objective against the second
 * for the trials on which the front was decided, the front's points marked
 * and joined by a step line; nothing without two objectives. */
void html_pareto(FILE *out, const FsReport *rep);

/* Horizontal bars with their value written beside each (fmt, unit). */
void html_chart_bars(FILE *out, const char *title, const char *xlabel, int n, const char *const *label,
                     const double *v, const char *fmt, const char *unit);

/* Points y over x with an optional horizontal reference line (NaN: none). */
void html_chart_scatter(FILE *out, const char *title, const char *xlabel, const char *ylabel, int n, const double *x,
                        const double *y, double ref, const char *ref_label);

/* ---------------------------------------------------------------------- */
/* The page's parts beside the leaderboard and the trials (html_parts.c)   */

typedef struct {
    const char *dir;
    const FsJournal *j;
    const FsReport *rep;
    const double *q3; /* per row: mean validation Q3 of a complete trial, else NaN */
    const FsReportHtmlInfo *info;
    double now;
} HtmlDoc;

/* Live, incomplete or damaged: said at the top of the page. */
void html_banner(FILE *out, const HtmlDoc *d);
/* Sweep, data fingerprint, version, machine, ranks, backend, sessions. */
void html_identity(FILE *out, const HtmlDoc *d);
/* DIR/profile.json as bars, and each fold's training throughput. */
void html_profile(FILE *out, const HtmlDoc *d);
/* The best complete trials' confusion matrices (folds pooled) and per-class scores. */
void html_confusion(FILE *out, const HtmlDoc *d);
/* Every evaluation on test data and every refit in the journal (html_test.c). */
void html_test(FILE *out, const HtmlDoc *d);

/* ---------------------------------------------------------------------- */
/* Parameter effects (html_effects.c)                                     */

/* For each option that differs between the rows' configs: trial Q3 by
 * value (strip plots) and the share of Q3's variance its values explain.
 * q3[i] is row i's mean validation Q3 over its folds (NaN: not complete). */
void html_effects(FILE *out, const FsReport *rep, const double *q3);

#endif
