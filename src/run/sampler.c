/*
 * sampler: which trials a run trains. Without search.sampler: tpe every
 * trial of the sweep is proposed at once. With it, rank 0 proposes
 * search.batch trials at a time (src/sample), each batch once every trial
 * of the earlier batches is finished in the journal (decide.c lists their
 * jobs); on resume the same batches are proposed again from the journal,
 * so a resumed run (on any number of ranks) trains the same trials.
 */
#include <math.h>
#include <stdlib.h>

#include "sample/sample.h"
#include "run/state.h"

static int tpe(const RunState *st) { return st->sw.sampler == FS_SAMPLER_TPE; }

/* Finished: failed, pruned, or every fold recorded (from the journal). */
static int resolved(const RunState *st, int t)
{
    const FsTrial *tr = &st->sw.trials[t];
    if (journal_find_failure(&st->j, tr->id) || journal_find_cut(&st->j, tr->id)) return 1;
    for (int k = 0; k < st->folds.n; k++)
        if (!journal_find_fold(&st->j, tr->id, data_fold_id(&st->folds, k))) return 0;
    return 1;
}

/* Higher is better: the mean Q3 (or minus the mean loss) over its folds;
 * -inf for a trial that failed, diverged or was pruned. */
static double score(const RunState *st, int t)
{
    const FsTrial *tr = &st->sw.trials[t];
    if (journal_find_failure(&st->j, tr->id) || journal_find_cut(&st->j, tr->id)) return -INFINITY;
    double sum = 0;
    for (int k = 0; k < st->folds.n; k++) {
        const FsFoldRecord *fr = journal_find_fold(&st->j, tr->id, data_fold_id(&st->folds, k));
        if (!fr || fr->r.status != FS_FIT_OK || fr->r.best_epoch < 1) return -INFINITY;
        double v = train_result_metric(&fr->r, st->sw.metric);
        sum += st->sw.metric == FS_METRIC_LOSS ? -v : v;
    }
    return sum / st->folds.n;
}

/* Proposes the next batch; returns its size. */
static int propose(RunState *st)
{
    const FsSweep *sw = &st->sw;
    int want = sw->random_n - st->n_proposed;
    if (want > sw->batch) want = sw->batch;
    if (want <= 0) return 0;
    unsigned char *taken = fs_calloc((size_t)sw->n_trials + 1, 1);
    double *scores = fs_calloc((size_t)st->n_proposed + 1, sizeof(double));
    for (int k = 0; k < st->n_proposed; k++) {
        taken[st->proposed[k]] = 1;
        scores[k] = score(st, st->proposed[k]);
    }
    int n = sample_propose(sw, st->proposed, scores, st->n_proposed, taken, want, st->n_batches,
                           st->proposed + st->n_proposed);
    for (int k = st->n_proposed; k < st->n_proposed + n; k++) st->trials[st->proposed[k]].rank = k;
    st->n_proposed += n;
    st->n_batches++;
    free(taken);
    free(scores);
    return n;
}

void run_sampler_open(RunState *st)
{
    const FsSweep *sw = &st->sw;
    st->proposed = fs_calloc((size_t)sw->n_trials + 1, sizeof(int));
    for (int t = 0; t < sw->n_trials; t++) st->trials[t].rank = -1;
    if (!tpe(st)) {
        for (int t = 0; t < sw->n_trials; t++) st->trials[t].rank = st->n_proposed, st->proposed[st->n_proposed++] = t;
        return;
    }
    /* Replay: each batch from the journal's scores of the ones before, as
     * long as those are all finished. */
    for (;;) {
        int all = 1;
        for (int k = 0; k < st->n_proposed && all; k++) all = resolved(st, st->proposed[k]);
        if (!all || propose(st) == 0) break;
    }
}

int run_sampler_more(const RunState *st) { return tpe(st) && st->n_proposed < st->sw.random_n; }

int run_sampler_next(RunState *st)
{
    if (!run_sampler_more(st)) return 0;
    for (int k = 0; k < st->n_proposed; k++)
        if (!resolved(st, st->proposed[k])) return 0;
    return propose(st);
}
