/*
 * report_seeds: a trial's seed replicates (search.replicates) in its
 * leaderboard row. Fold and seed are two factors: each split (repeat,
 * fold) is averaged over the trial's seeds first, and the mean, spread,
 * interval and paired test are over those n split means (report_ties.c),
 * so the seeds' noise enters the split means' variance (as s_seed^2 / S)
 * and the splits' overlap keeps its correction (docs/statistics.md says
 * why this and not k x r x S separate splits). The seed spread is shown
 * apart: the pooled standard deviation across seeds within a split.
 * Only seeds whose every fold is ok with its metric count (a replicate
 * still training, or one that diverged, does not).
 */
#include <math.h>
#include <stdlib.h>

#include "data/data.h"
#include "report/report_int.h"

/* Seed s's metric on every split into x (spec->folds entries); 0 if a fold
 * is missing, not ok, or without the metric. */
static int seed_scores(const FsJournal *j, const FsReportRow *row, const FsReportSpec *spec, int s, double *x)
{
    for (int k = 0; k < spec->folds; k++) {
        const FsReportFold *own = &row->folds[k];
        const FsFoldRecord *fr = journal_find_fold_seed(j, row->id, own->fold, s);
        if (!fr || fr->r.status != FS_FIT_OK || fr->r.best_epoch < 1) return 0;
        FsMetrics m;
        metrics_from_classes(&m, fr->r.classes, fr->r.best_confusion);
        x[k] = spec->metric == FS_METRIC_LOSS ? (double)fr->r.best_val_loss
               : !m.n                         ? NAN
               : spec->metric == FS_METRIC_Q8 ? m.q8
                                              : m.q3;
        if (!isfinite(x[k])) return 0;
    }
    return 1;
}

/* The split means of the S seeds' scores x (S rows of n) into row. */
static void seed_stats(FsReportRow *row, const double *x, int seeds, int n)
{
    double *m = fs_calloc((size_t)n, sizeof *m), mean = 0.0, ss = 0.0, within = 0.0;
    for (int k = 0; k < n; k++) {
        for (int s = 0; s < seeds; s++) m[k] += x[(size_t)s * n + k];
        m[k] /= seeds;
        mean += m[k];
    }
    mean /= n;
    for (int k = 0; k < n; k++) {
        ss += (m[k] - mean) * (m[k] - mean);
        for (int s = 0; s < seeds; s++) within += (x[(size_t)s * n + k] - m[k]) * (x[(size_t)s * n + k] - m[k]);
    }
    row->seeds = seeds;
    row->split = m;
    row->mean = mean;
    row->std = sqrt(ss / n); /* population, as over the folds */
    row->seed_sd = sqrt(within / ((double)n * (seeds - 1))); /* pooled: n (S - 1) degrees of freedom */
}

void report_seeds(FsReportRow *row, const FsJournal *j, const FsReportSpec *spec)
{
    const int n = spec->folds;
    if (row->n_done != n) return;
    double *x = fs_calloc((size_t)(j->max_seed + 1) * (size_t)n, sizeof *x);
    int seeds = 1;
    for (int k = 0; k < n; k++) {
        x[k] = report_fold_metric(spec, &row->folds[k]);
        if (!isfinite(x[k])) seeds = 0;
    }
    for (int s = 1; seeds && s <= j->max_seed; s++) seeds += seed_scores(j, row, spec, s, x + (size_t)seeds * n);
    if (seeds >= 2) seed_stats(row, x, seeds, n);
    free(x);
}
