/*
 * decide: rank 0's decisions, applied in one place. The pruner (pruning.c)
 * and the sampler (sampler.c) say what they decided and change nothing
 * else; this file journals a pruned trial, drops its queued folds
 * (queue.c) and raises its running folds' prune flags (their trainers stop
 * at the next batch; the coordinator tells worker ranks), and lists the
 * jobs of a batch the sampler proposed (jobs.c). A finished job passes
 * through here too, since its values may prune its own trial before it is
 * recorded, and its record may finish the sampler's batch.
 */
#include <stdlib.h>

#include "report/report.h"
#include "run/decide.h"

/* Decision d: journal, queue, running folds. 0, or -1 (the run failed). */
static int apply_cut(RunState *st, const FsPruneDecision *d)
{
    int t = st->proposed[d->trial];
    FsCutRecord c;
    FsErr e = {0};
    run_pruning_record(st, d, &c);
    if (journal_append_cut(&st->j, &c, &e) != 0) {
        state_fail(st, &e);
        return -1;
    }
    int cut = run_pruning_cut_slot(st, t, &e);
    if (e.msg[0]) state_fail(st, &e);
    st->trials[t].cut = cut;
    for (int i = 0; i < st->n_jobs; i++)
        if (st->jobs[i].trial == t && st->jobs[i].slot >= cut && !st->jobs[i].seed) st->jobs[i].prune = 1;
    progress_trial_pruned(&st->prog, run_queue_drop(&st->queue, t, cut));
    st->cuts_made++;
    return 0;
}

/* The sampler's next batch, if one is due: its trials' jobs listed. */
static void add_batch(RunState *st)
{
    int first = st->n_proposed, jobs = st->n_jobs;
    if (run_sampler_next(st) == 0) return;
    FsErr e = {0};
    for (int k = first; k < st->n_proposed; k++)
        if (state_add_trial(st, st->proposed[k], &e) != 0) {
            state_fail(st, &e);
            break;
        }
    progress_add_folds(&st->prog, st->n_jobs - jobs);
    pthread_cond_broadcast(&st->cv);
}

/* With seed replicates recorded the leaderboard ranks a replicated trial
 * by its mean over the seeds: the progress line's best is its first row,
 * one rule for both (without them both are the mean of the trial's folds). */
static void board_spec(const RunState *st, FsReportSpec *spec)
{
    report_spec_from_sweep(spec, &st->sw);
    spec->folds = st->folds.n;
}

static void best_from_board(RunState *st)
{
    if (st->j.max_seed < 1) return;
    FsReportSpec spec;
    board_spec(st, &spec);
    FsReport rep;
    report_build(&rep, &st->j, &spec);
    const FsReportRow *first = rep.n_rows ? &rep.rows[0] : NULL;
    FsReportRank r;
    if (first && report_trial_rank(&st->j, &spec, first->id, &r)) {
        r.mean = first->mean; /* over the seeds, and ranked by it, as the board ranks the row */
        r.key = spec.metric == FS_METRIC_LOSS ? r.mean : -r.mean;
        progress_set_best(&st->prog, &r);
    }
    report_free(&rep);
}

void run_offer_best(RunState *st, int t)
{
    FsReportSpec spec;
    board_spec(st, &spec);
    FsReportRank r;
    if (report_trial_rank(&st->j, &spec, st->sw.trials[t].id, &r)) progress_offer_best(&st->prog, &r);
}

/* search.replicates: their jobs, once every job so far has its outcome
 * and the sampler proposes no more (replicates.c). */
static void add_replicates(RunState *st)
{
    if (!run_replicates_pending(st) || state_work_left(st) || run_sampler_more(st)) return;
    int jobs = st->n_jobs;
    FsErr e = {0};
    if (run_replicates_list(st, &e) != 0) state_fail(st, &e);
    best_from_board(st); /* a resume: the replicates recorded before */
    progress_add_folds(&st->prog, st->n_jobs - jobs);
    pthread_cond_broadcast(&st->cv);
}

/* The progress line's totals: the folds listed, and from the start those
 * still to come (the budget's trials not proposed yet, the replicates
 * until they are chosen), so that its total stays what it was. */
static void count_ahead(RunState *st)
{
    const int left = run_sampler_left(st), folds = st->folds.n;
    progress_ahead(&st->prog, st->n_proposed + left, left * folds,
                   run_replicates_pending(st) ? run_replicates_jobs(&st->sw, folds) : 0);
}

int run_decide(RunState *st)
{
    int pruned = 0;
    /* The progress line ranks as the leaderboard does (the first call is
     * state_open's, before any fold is recorded). */
    progress_rank_by(&st->prog, st->sw.metric == FS_METRIC_LOSS);
    if (st->pruner) {
        FsPruneDecision *d = fs_calloc((size_t)st->n_prunable + 1, sizeof *d);
        int n = run_pruning_decide(st, d);
        /* Last trial first: a kill between two of them leaves the earliest
         * unjournaled, so no checkpoint the journal settles lacks its cut
         * (a resume passes those as kept: pruner_replay). */
        for (int k = n - 1; k >= 0; k--) pruned += apply_cut(st, &d[k]) == 0;
        free(d);
        if (n) pthread_cond_broadcast(&st->cv); /* dropped folds: a waiting take may go on */
    }
    /* A pruned or recorded trial may finish the batch. */
    if (!*run_stop_flag() && !st->io_failed) add_batch(st);
    if (!*run_stop_flag() && !st->io_failed) add_replicates(st);
    count_ahead(st);
    return pruned;
}

void run_job_finished(RunState *st, int i)
{
    state_job_ended(st, i);
    if (st->pruner && !st->jobs[i].restore) run_decide(st);
    state_job_record(st, i);
    if (st->jobs[i].seed) best_from_board(st);
    run_decide(st);
}
