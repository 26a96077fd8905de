/*
 * report_ties: which trials the folds cannot tell from the best
 * (docs/statistics.md). Each ok trial with its metric on every one of the
 * k >= 2 folds gets the 95% interval of its mean with the corrected
 * resampled variance; against rows[0] (the best, when it is such a trial
 * too) the corrected paired t-test over the same folds, its p-values
 * Holm-adjusted over the trials compared, and tied = adjusted p >=
 * run.alpha (report_alpha). Incomplete, pruned, diverged and failed trials are not
 * compared: their folds are not the best's.
 */
#include <math.h>
#include <stdlib.h>

#include "metrics/metrics.h"
#include "report/report_int.h"

/* The row's metric on every fold (with seed replicates, each split's mean
 * over the seeds: report_seeds.c), and its folds' validation / training
 * examples; 0 when some fold lacks it (then it is not compared). */
static int row_scores(const FsReport *rep, const FsReportRow *row, double *x, double *ratio)
{
    const int k = rep->spec.folds;
    if (row->status != FS_TRIAL_OK || k < 2) return 0;
    double tr = 0.0, va = 0.0;
    for (int s = 0; s < k; s++) {
        const FsReportFold *f = &row->folds[s];
        x[s] = row->seeds > 1 ? row->split[s] : report_fold_metric(&rep->spec, f);
        if (!f->present || f->status != FS_FIT_OK || !isfinite(x[s])) return 0;
        tr += (double)f->train_examples;
        va += (double)f->val_examples;
    }
    *ratio = tr > 0.0 ? va / tr : NAN;
    return isfinite(*ratio);
}

/* A trial's folds as the objectives read them (train_result_objective's,
 * the sampler's too), given to value: metrics_objective or
 * metrics_objective_score. */
static double row_objective(const FsReport *rep, const FsReportRow *row, FsObjective o,
                            double (*value)(FsObjective, const FsObjectiveFold *, int, double))
{
    const int k = rep->spec.folds;
    FsObjectiveFold *f = fs_malloc(sizeof *f * (size_t)(k > 0 ? k : 1));
    for (int s = 0; s < k; s++) f[s] = row->folds[s].obj;
    const double v = value(o, f, k, (double)row->n_params);
    free(f);
    return v;
}

/* Objective o of a trial, in o's own units. */
double report_objective(const FsReport *rep, const FsReportRow *row, FsObjective o)
{
    return row_objective(rep, row, o, metrics_objective);
}

/* Objective o of a trial with every fold ok, higher-is-better. */
static double objective(const FsReport *rep, const FsReportRow *row, FsObjective o)
{
    return row_objective(rep, row, o, metrics_objective_score);
}

/* run.objectives: the Pareto front of the ok trials with every fold, in
 * rank order (ties to the better-ranked). */
static void pareto(FsReport *rep)
{
    const int n = rep->n_rows, m = rep->spec.n_objectives;
    for (int i = 0; i < n; i++) rep->rows[i].pareto = -1;
    if (m < 2 || n == 0) return;
    double *v = fs_malloc(sizeof(double) * (size_t)n * (size_t)m);
    int *at = fs_malloc(sizeof(int) * (size_t)n), c = 0;
    for (int i = 0; i < n; i++) {
        const FsReportRow *row = &rep->rows[i];
        int ok = row->status == FS_TRIAL_OK && row->n_done == rep->spec.folds;
        for (int s = 0; ok && s < rep->spec.folds; s++) ok = row->folds[s].status == FS_FIT_OK;
        if (!ok) continue;
        for (int k = 0; k < m; k++) v[(size_t)c * m + k] = objective(rep, row, (FsObjective)rep->spec.objectives[k]);
        at[c++] = i;
    }
    unsigned char *front = fs_malloc((size_t)c + 1);
    metrics_pareto(v, c, m, front);
    for (int i = 0; i < c; i++) rep->rows[at[i]].pareto = front[i];
    free(front), free(at), free(v);
}

/* The paired differences x - best the test weighs: their mean and 95%
 * corrected interval (the table's "vs best"). x is overwritten. */
static void diff_interval(FsReportRow *row, double *x, const double *best, int k, double ratio)
{
    double sum = 0.0;
    for (int s = 0; s < k; s++) x[s] -= best[s], sum += x[s];
    if (metrics_ci_corrected(x, k, ratio, 0.95, &row->diff_lo, &row->diff_hi) == 0) row->diff = sum / k;
}

double report_alpha(const FsReportSpec *spec) { return spec->alpha > 0.0 ? spec->alpha : FS_ALPHA_DEFAULT; }

void report_ties(FsReport *rep)
{
    const int k = rep->spec.folds, n = rep->n_rows;
    for (int i = 0; i < n; i++) {
        FsReportRow *row = &rep->rows[i];
        row->has_ci = 0;
        row->ci_lo = row->ci_hi = row->p_vs_best = row->diff = row->diff_lo = row->diff_hi = NAN;
        row->tied = -1;
    }
    pareto(rep);
    if (n == 0 || k < 2) return;
    double *best = fs_malloc(sizeof(double) * (size_t)k), *x = fs_malloc(sizeof(double) * (size_t)k);
    double *p = fs_malloc(sizeof(double) * (size_t)n);
    double ratio;
    const int have_best = row_scores(rep, &rep->rows[0], best, &ratio);
    for (int i = 0; i < n; i++) {
        FsReportRow *row = &rep->rows[i];
        double r;
        p[i] = NAN;
        if (!row_scores(rep, row, x, &r)) continue;
        row->has_ci = metrics_ci_corrected(x, k, r, 0.95, &row->ci_lo, &row->ci_hi) == 0;
        /* The best against itself is no comparison: it stays out of Holm's
         * count and is tied by definition. */
        if (have_best && i > 0) {
            p[i] = metrics_ttest_corrected(x, best, k, ratio);
            diff_interval(row, x, best, k, ratio);
        }
    }
    metrics_holm(p, n);
    for (int i = 0; have_best && i < n; i++) {
        FsReportRow *row = &rep->rows[i];
        if (!row->has_ci) continue;
        row->p_vs_best = i == 0 ? 1.0 : p[i];
        if (!isnan(row->p_vs_best)) row->tied = row->p_vs_best >= report_alpha(&rep->spec);
    }
    free(best);
    free(x);
    free(p);
}
