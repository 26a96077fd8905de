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

/* The trials search.replicates chooses, best first, from the journal
 * alone: the leaderboard's ranking over each trial's own seeds (its
 * replicates left out), the complete ok trials, at most top of them;
 * their ids into ids (room for sw->replicate_top). Returns how many. */
static int choose_ids(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, char (*ids)[FS_TRIAL_ID_LEN + 1])
{
    if (sw->replicate_seeds < 2) return 0;
    FsReportSpec spec;
    report_spec_from_sweep(&spec, sw);
    spec.folds = folds->n;
    spec.own_seeds = 1;
    FsReport rep;
    report_build(&rep, j, &spec);
    int n = 0;
    for (int i = 0; i < rep.n_rows && n < sw->replicate_top; i++) /* ok rows come first */
        if (rep.rows[i].status == FS_TRIAL_OK && rep.rows[i].n_done == folds->n)
            snprintf(ids[n++], sizeof ids[0], "%s", rep.rows[i].id);
    report_free(&rep);
    return n;
}

int run_replicates_choose(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, int *top)
{
    char(*ids)[FS_TRIAL_ID_LEN + 1] = fs_calloc((size_t)sw->replicate_top + 1, sizeof *ids);
    int n = choose_ids(sw, j, folds, ids), m = 0;
    for (int i = 0; i < n; i++) {
        const FsTrialRecord *t = journal_find_trial(j, ids[i]);
        if (t && t->index >= 0 && t->index < sw->n_trials && !strcmp(sw->trials[t->index].id, ids[i]))
            top[m++] = t->index;
    }
    free(ids);
    return m;
}

void run_replicates_count(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, int own_done, long *planned,
                          long *done)
{
    *planned = run_replicates_jobs(sw, folds->n);
    *done = 0;
    if (*planned <= 0) return;
    char(*ids)[FS_TRIAL_ID_LEN + 1] = fs_calloc((size_t)sw->replicate_top + 1, sizeof *ids);
    int n = choose_ids(sw, j, folds, ids);
    for (int i = 0; i < n; i++)
        for (int s = 1; s < sw->replicate_seeds; s++)
            for (int k = 0; k < folds->n; k++) *done += journal_find_fold_seed(j, ids[i], data_fold_id(folds, k), s) != NULL;
    if (own_done) *planned = (long)n * (sw->replicate_seeds - 1) * folds->n;
    free(ids);
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
