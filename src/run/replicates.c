/*
 * replicates: search.replicates {top: N, seeds: S}. Once the sweep's own
 * trials are all resolved (every proposed trial trained, failed or pruned,
 * and the sampler proposes no more), the best N complete ok trials by the
 * leaderboard's ranking over their own seeds train every fold again with
 * seed indexes 1 .. S - 1 (sweep_seed_spec), as jobs after the sweep's own.
 * The choice reads the journal alone and leaves the replicates' records
 * out of it, so a resume (at any rank count) lists the same jobs, and
 * those already recorded are not trained again. Replicates are never
 * pruned, checkpointed mid-fold or kept as model files: their scores are
 * what they are for (the leaderboard's seeds, report_seeds.c).
 */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "run/state.h"

int run_replicates_choose(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, int *top)
{
    if (sw->replicate_seeds < 2) return 0;
    FsReportSpec spec;
    report_spec_from_sweep(&spec, sw);
    spec.folds = folds->n;
    spec.own_seeds = 1;
    FsReport rep;
    report_build(&rep, j, &spec);
    int n = 0;
    for (int i = 0; i < rep.n_rows && n < sw->replicate_top; i++) {
        const FsReportRow *row = &rep.rows[i];
        if (row->status != FS_TRIAL_OK || row->n_done != folds->n) continue; /* ok rows come first */
        if (row->index < 0 || row->index >= sw->n_trials || strcmp(sw->trials[row->index].id, row->id) != 0) continue;
        top[n++] = row->index;
    }
    report_free(&rep);
    return n;
}

int run_replicates_jobs(const FsSweep *sw, int folds)
{
    if (sw->replicate_seeds < 2) return 0;
    int trials = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : sw->n_trials;
    long long n = (long long)(sw->replicate_top < trials ? sw->replicate_top : trials) * (sw->replicate_seeds - 1) * folds;
    return n > (long long)FS_SWEEP_MAX_TRIALS * FS_MAX_FOLDS ? -1 : (int)n;
}

int run_replicates_pending(const RunState *st)
{
    return st->sw.replicate_seeds > 1 && !st->replicates_listed && !st->io_failed;
}

int run_replicates_list(RunState *st, FsErr *err)
{
    const FsSweep *sw = &st->sw;
    st->replicates_listed = 1;
    st->first_replicate = st->n_jobs;
    int *top = fs_calloc((size_t)sw->replicate_top + 1, sizeof *top), recorded = 0;
    const int n = run_replicates_choose(sw, &st->j, &st->folds, top);
    st->n_replicate_trials = n;
    for (int r = 0; r < n; r++)
        for (int s = 1; s < sw->replicate_seeds; s++)
            for (int k = 0; k < st->folds.n; k++) {
                if (journal_find_fold_seed(&st->j, sw->trials[top[r]].id, data_fold_id(&st->folds, k), s)) {
                    recorded++;
                    continue;
                }
                if (st->n_jobs >= st->cap_jobs) {
                    free(top);
                    return fs_err_set(err, "internal: more replicate jobs than search.replicates allows"), -1;
                }
                state_list_job(st, top[r], k, s, 0);
            }
    free(top);
    progress_seed_done(&st->prog, st->prog.folds_earlier + recorded);
    return 0;
}
