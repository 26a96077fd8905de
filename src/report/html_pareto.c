/*
 * html_pareto.c: run.objectives as a picture. The first objective (y)
 * against the second (x) for every trial the front was decided over (ok
 * with every fold: report_ties), the front's points marked and joined by a
 * step line. Between two neighbours on the front the line turns at the
 * corner that is worse than both in both objectives, so it is the edge of
 * what the front dominates and passes through the front's points and no
 * other. Parameter counts span decades: their axis is logarithmic when the
 * largest is ten times the smallest or more.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "report/report_int.h"

static const char *const AXIS_LABEL[FS_OBJ_COUNT] = {
    [FS_OBJ_Q3] = "validation Q3 (%, mean over folds)",
    [FS_OBJ_LOSS] = "validation loss (mean over folds)",
    [FS_OBJ_PARAMS] = "trainable parameters",
    [FS_OBJ_TRAIN_SECONDS] = "training seconds (all folds)",
    [FS_OBJ_PREDICT_US] = "forward time per residue (us, validation passes)",
};

typedef struct {
    const FsReportRow *row;
    double x, y; /* in axis units: Q3 in %, a log axis' values as exponents */
} Pt;

typedef struct {
    FsObjective o;
    int log;
    HtmlAxis a;
} Dim;

static double on_axis(const Dim *d, double v) { return d->o == FS_OBJ_Q3 ? v * 100 : d->log ? log10(v) : v; }

/* The worse of two axis values of d's objective. */
static double worse(const Dim *d, double a, double b)
{
    return metrics_objective_higher(d->o) ? fmin(a, b) : fmax(a, b);
}

static void obj_text(FILE *out, FsObjective o, double v)
{
    if (o == FS_OBJ_Q3) fprintf(out, "%s%%", fs_percent_text(v));
    else if (o == FS_OBJ_LOSS) fprintf(out, "%.4f", v);
    else if (o == FS_OBJ_PARAMS) fprintf(out, "%.0f", v);
    else fprintf(out, "%.1f s", v);
}

/* The axis of objective o over the values v (natural units). */
static void dim_fit(Dim *d, const double *v, int n)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    d->log = d->o == FS_OBJ_PARAMS && lo > 0 && hi >= 10 * lo;
    d->a = html_axis_nice(on_axis(d, lo), on_axis(d, hi), 5, d->log);
    d->a.log = d->log;
}

static int by_x(const void *pa, const void *pb)
{
    const Pt *a = pa, *b = pb;
    return (a->x > b->x) - (a->x < b->x);
}

/* The step line through the front's points (sorted by x here). */
static void front_line(FILE *out, const HtmlFrame *f, const Dim *dx, const Dim *dy, Pt *front, int nf)
{
    qsort(front, (size_t)nf, sizeof *front, by_x);
    fputs("<path class=\"front-line\" d=\"", out);
    for (int i = 0; i < nf; i++) {
        if (i) {
            double cx = worse(dx, front[i - 1].x, front[i].x), cy = worse(dy, front[i - 1].y, front[i].y);
            fprintf(out, "L%.2f %.2f", html_fx(f, &dx->a, cx), html_fy(f, &dy->a, cy));
        }
        fprintf(out, "%c%.2f %.2f", i ? 'L' : 'M', html_fx(f, &dx->a, front[i].x), html_fy(f, &dy->a, front[i].y));
    }
    fputs("\"><title>the Pareto front</title></path>\n", out);
}

static void point(FILE *out, const HtmlFrame *f, const Dim *dx, const Dim *dy, const Pt *p, const double *v)
{
    int on = p->row->pareto == 1;
    fputs("<a href=\"#t-", out);
    html_esc(out, p->row->id);
    fprintf(out, "\"><circle class=\"dot%s\" data-trial=\"", on ? " front" : "");
    html_esc(out, p->row->id);
    fprintf(out, "\" cx=\"%.2f\" cy=\"%.2f\" r=\"%s\"><title>", html_fx(f, &dx->a, p->x), html_fy(f, &dy->a, p->y),
            on ? "4.5" : "3.5");
    html_esc(out, p->row->id);
    fprintf(out, ": %s ", metrics_objective_names[dy->o]);
    obj_text(out, dy->o, v[0]);
    fprintf(out, ", %s ", metrics_objective_names[dx->o]);
    obj_text(out, dx->o, v[1]);
    fprintf(out, "%s</title></circle></a>", on ? ", on the front" : "");
}

/* Each compared row's two objectives (vy[i], vx[i]) and its point. */
static int collect(const FsReport *rep, Dim *dy, Dim *dx, Pt *pts, double *vy, double *vx)
{
    int n = 0;
    for (int i = 0; i < rep->n_rows; i++) {
        const FsReportRow *r = &rep->rows[i];
        if (r->pareto < 0) continue;
        vy[n] = report_objective(rep, r, dy->o), vx[n] = report_objective(rep, r, dx->o);
        pts[n++].row = r;
    }
    dim_fit(dy, vy, n), dim_fit(dx, vx, n);
    for (int i = 0; i < n; i++) pts[i].y = on_axis(dy, vy[i]), pts[i].x = on_axis(dx, vx[i]);
    return n;
}

static void pareto_chart(FILE *out, const Dim *dy, const Dim *dx, const Pt *pts, int n, const double *vy,
                         const double *vx)
{
    char title[160];
    snprintf(title, sizeof title, "%s against %s: the Pareto front", metrics_objective_names[dy->o],
             metrics_objective_names[dx->o]);
    HtmlFrame f = {560, 300, 70, 20, 50, 44};
    html_svg_open(out, &f, "pareto", 2, title);
    fprintf(out, "<text class=\"ctitle\" x=\"%.1f\" y=\"18\">", f.l);
    html_esc(out, title);
    fputs("</text>\n", out);
    double lx = f.l, ly = 36;
    html_legend(out, &lx, &ly, f.w - 4, "dot front", NULL, 2, "on the front");
    html_legend(out, &lx, &ly, f.w - 4, "dot", NULL, 2, "dominated");
    html_legend(out, &lx, &ly, f.w - 4, HTML_VERMILLION, NULL, 0, "the front's edge");
    html_axis_y(out, &f, &dy->a, 0, AXIS_LABEL[dy->o]);
    char xl[96];
    snprintf(xl, sizeof xl, "%s%s", AXIS_LABEL[dx->o], dx->log ? " (log scale)" : "");
    html_axis_x(out, &f, &dx->a, xl);
    fputs("<g class=\"marks\"", out);
    html_axis_map(out, "data-xmap", &f, &dx->a, 1);
    html_axis_map(out, "data-ymap", &f, &dy->a, 0);
    fputs(">\n", out);
    Pt *front = fs_calloc((size_t)n + 1, sizeof *front);
    int nf = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].row->pareto == 1) front[nf++] = pts[i];
    if (nf) front_line(out, &f, dx, dy, front, nf);
    for (int i = 0; i < n; i++) {
        double pv[2] = {vy[i], vx[i]};
        point(out, &f, dx, dy, &pts[i], pv);
    }
    fputs("</g>\n", out);
    html_svg_close(out);
    free(front);
}

void html_pareto(FILE *out, const FsReport *rep)
{
    if (rep->spec.n_objectives < 2) return;
    Dim dy = {(FsObjective)rep->spec.objectives[0], 0, {0, 0, 0, 0, 0}};
    Dim dx = {(FsObjective)rep->spec.objectives[1], 0, {0, 0, 0, 0, 0}};
    fprintf(out, "<h3 id=\"pareto\">Pareto front: %s against %s</h3>\n<p class=\"why\">run.objectives weighs ",
            metrics_objective_names[dy.o], metrics_objective_names[dx.o]);
    for (int k = 0; k < rep->spec.n_objectives; k++)
        fprintf(out, "%s%s", k ? ", " : "", metrics_objective_names[rep->spec.objectives[k]]);
    fputs(" (Q3 higher, the others lower is better). A trial is on the front when no other complete trial is at "
          "least as good in every objective and better in one; the step line is the edge of what the front "
          "dominates",
          out);
    fputs(rep->spec.n_objectives > 2 ? ". Only the first two are plotted: a point off the line may be on the front "
                                       "by a third.</p>\n"
                                     : ".</p>\n",
          out);
    int n = rep->n_rows;
    Pt *pts = fs_calloc((size_t)n + 1, sizeof *pts);
    double *v = fs_calloc(2 * (size_t)n + 1, sizeof *v), *vx = v + n;
    n = collect(rep, &dy, &dx, pts, v, vx);
    if (!n) html_no_chart(out, "No trial is complete with every fold yet: no front to plot.");
    else pareto_chart(out, &dy, &dx, pts, n, v, vx);
    free(pts), free(v);
}
