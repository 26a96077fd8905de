/*
 * top: --top K, the fold ensembles of the K best trials of one or more run
 * folders as one ensemble. Averaging a few strong architectures is the
 * field's cheapest gain (each errs differently); choosing them by the
 * leaderboard keeps the choice on validation data, never on the test set.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "predict/predict_int.h"

typedef struct {
    int dir;
    const FsReportRow *row;
    double key; /* lower first: the metric, negated where higher is better */
} Pick;

static int cmp_pick(const void *pa, const void *pb)
{
    const Pick *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->dir != b->dir) return a->dir < b->dir ? -1 : 1;
    return a->row->rank < b->row->rank ? -1 : a->row->rank > b->row->rank;
}

static uint64_t data_of(const PredictBoard *b)
{
    const FsRunRecord *r = journal_last_run(&b->j);
    return r ? r->data_fingerprint : 0;
}

/* Opens every folder's leaderboard, checked against the first's metric and
 * data. */
static int open_all(PredictBoard **b, const char *const *dirs, int n_dirs, FsErr *err)
{
    char abs[FS_PREDICT_MAX_RUNS][PATH_MAX];
    for (int d = 0; d < n_dirs; d++) {
        if (!predict_run_dir(dirs[d], abs[d], sizeof abs[d]))
            return fs_err_set(err, "%s: --top ranks the trials of run folders (with a journal.jsonl); give run "
                              "folders, or model files with --mixed", dirs[d]), -1;
        for (int e = 0; e < d; e++)
            if (!strcmp(abs[d], abs[e]))
                return fs_err_set(err, "%s and %s are one run folder: give each once", dirs[e], dirs[d]), -1;
        b[d] = fs_calloc(1, sizeof *b[d]);
        if (predict_board_open(b[d], dirs[d], err) != 0) return free(b[d]), b[d] = NULL, -1;
        if (b[d]->spec.metric != b[0]->spec.metric)
            return fs_err_set(err, "%s ranks by %s, %s by %s: --top compares trials on one metric", dirs[0],
                              metrics_kind_name(b[0]->spec.metric), dirs[d], metrics_kind_name(b[d]->spec.metric)), -1;
        if (data_of(b[d]) != data_of(b[0]))
            return fs_err_set(err, "%s trained on other data than %s (fingerprints %016llx and %016llx): their "
                              "validation scores do not compare", dirs[d], dirs[0], (unsigned long long)data_of(b[d]),
                              (unsigned long long)data_of(b[0])), -1;
    }
    return 0;
}

/* The trials that can serve: complete and ok, with their models kept. */
static Pick *candidates(PredictBoard **b, int n_dirs, int *n_picks)
{
    size_t n = 1;
    for (int d = 0; d < n_dirs; d++) n += (size_t)b[d]->rep.n_rows;
    Pick *picks = fs_calloc(n, sizeof *picks);
    for (int d = 0; d < n_dirs; d++)
        for (int i = 0; i < b[d]->rep.n_rows; i++) {
            const FsReportRow *row = &b[d]->rep.rows[i];
            if (row->status != FS_TRIAL_OK || !isfinite(row->mean) || journal_is_discarded(&b[d]->j, row->id)) continue;
            double key = b[d]->spec.metric == FS_METRIC_LOSS ? row->mean : -row->mean;
            picks[(*n_picks)++] = (Pick){d, row, key};
        }
    return picks;
}

/* The picks with a trial id seen before dropped (one trial offered by two
 * sweeps with the same config, on the same data): each trial counts once,
 * where it ranks best. Returns the count left. */
static int distinct(Pick *picks, int n_picks)
{
    int n = 0;
    for (int i = 0; i < n_picks; i++) {
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = !strcmp(picks[k].row->id, picks[i].row->id);
        if (!seen) picks[n++] = picks[i];
    }
    return n;
}

static int take(FsModelSet *set, PredictBoard **b, const char *const *dirs, int n_dirs, const Pick *picks, int n_picks,
                int k, FsErr *err)
{
    if (n_picks < k)
        return fs_err_set(err, "--top %d: %s%s %s %d trial%s with kept models, complete and ok (pruned, failed and "
                          "unfinished trials, and those run.keep_models removed, do not count)", k, dirs[0],
                          n_dirs > 1 ? " and the other run folders" : "", n_picks ? "hold only" : "hold", n_picks,
                          n_picks == 1 ? "" : "s"), -1;
    for (int i = 0; i < k; i++) {
        const int from = set->n;
        if (predict_board_add_folds(set, b[picks[i].dir], dirs[picks[i].dir], picks[i].row, -1, err) != 0) return -1;
        const int run = predict_set_add_run(set, dirs[picks[i].dir], picks[i].row->id);
        for (int m = from; m < set->n; m++) set->model_run[m] = run;
    }
    const FsReportRow *best = picks[0].row;
    snprintf(set->trial, sizeof set->trial, "%s", best->id);
    snprintf(set->metric, sizeof set->metric, "%s", metrics_kind_name(b[picks[0].dir]->spec.metric));
    set->rank = best->rank;
    set->mean = best->mean;
    set->std = best->std;
    set->top = k;
    predict_set_run(set, dirs[picks[0].dir]);
    return 0;
}

int predict_top_find(FsModelSet *set, const char *const *dirs, int n_dirs, int k, FsErr *err)
{
    if (n_dirs > FS_PREDICT_MAX_RUNS)
        return fs_err_set(err, "--top: %d run folders, at most %d", n_dirs, FS_PREDICT_MAX_RUNS), -1;
    if (set->n > 0) return fs_err_set(err, "--top: give run folders only"), -1;
    set->mean = set->std = NAN;
    PredictBoard *b[FS_PREDICT_MAX_RUNS] = {0};
    int n_picks = 0, rc = -1;
    Pick *picks = NULL;
    if (open_all(b, dirs, n_dirs, err) == 0) {
        picks = candidates(b, n_dirs, &n_picks);
        qsort(picks, (size_t)n_picks, sizeof *picks, cmp_pick);
        n_picks = distinct(picks, n_picks);
        rc = take(set, b, dirs, n_dirs, picks, n_picks, k, err);
    }
    for (int d = 0; d < n_dirs; d++)
        if (b[d]) predict_board_close(b[d]), free(b[d]);
    free(picks);
    return rc;
}
