/*
 * pruning: the sweep's pruner (src/prune) inside a run, on rank 0. The
 * pruner gets every fold's per-epoch validation metric as it appears (rank
 * 0's own models through their progress counters, worker ranks' through
 * EPOCH messages, finished folds from their results and the journal) and
 * makes its decisions in trial order. It returns them (run_pruning_decide)
 * and applies none: decide.c journals each one, drops the trial's queued
 * folds (queue.c) and cuts its running ones.
 *
 * With pruning on, a trial's folds run one after another (the queue's
 * serial mode), so a trial pruned in fold k never starts the folds after
 * it; the queue is fold-major for the per-epoch rules (every trial's fold
 * 0 first: the values a decision waits for come early) and trial-major for
 * the folds rule (which waits for whole trials).
 */
#include <stdlib.h>
#include <string.h>

#include "run/state.h"

static const float *metric_curve(const RunState *st, const FsFitResult *r)
{
    return st->sw.metric == FS_METRIC_LOSS ? r->curves.val_loss : r->curves.val_q3;
}

/* The pruner orders trials as they were proposed (the sweep's order, or
 * the tpe sampler's): its index for grid trial t. */
static int prank(const RunState *st, int t) { return st->trials[t].rank; }

/* A finished fold: its epochs, then its end. */
static void feed_result(RunState *st, int t, int slot, const FsFitResult *r)
{
    const float *c = metric_curve(st, r);
    for (int e = 1; c && e <= r->epochs; e++) pruner_epoch(st->pruner, prank(st, t), slot, e, c[e - 1]);
    pruner_fold_end(st->pruner, prank(st, t), slot, r->status == FS_FIT_FAILED ? 0 : r->epochs,
                    train_result_metric(r, st->sw.metric), r->status == FS_FIT_OK && r->best_epoch > 0);
}

/* The slot of a trial's pruning record's fold; -1 with err when the record
 * names a fold the sweep does not have (the journal refuses those on
 * reading, journal_set_sweep: this is the last guard). */
static int cut_fold_slot(const RunState *st, const FsCutRecord *c, FsErr *err)
{
    FsErr why = {0};
    int slot = data_fold_slot(&st->folds, c->fold, &why);
    if (slot >= 0) return slot;
    fs_err_set(err, "%s: the pruned record of trial %s: %s; `%s repair %s` drops it", st->j.path, c->trial,
               why.msg, fs_program(), st->dir);
    return -1;
}

int run_pruning_cut_slot(const RunState *st, int t, FsErr *err)
{
    const FsCutRecord *c = journal_find_cut(&st->j, st->sw.trials[t].id);
    int slot = c ? cut_fold_slot(st, c, err) : -1;
    if (slot < 0) return st->folds.n;
    return c->epoch ? slot : slot + 1;
}

int run_pruning_decide(RunState *st, FsPruneDecision *d)
{
    return st->pruner ? pruner_decide(st->pruner, d, st->n_prunable) : 0;
}

void run_pruning_record(const RunState *st, const FsPruneDecision *d, FsCutRecord *c)
{
    int t = st->proposed[d->trial];
    memset(c, 0, sizeof *c);
    snprintf(c->trial, sizeof c->trial, "%s", st->sw.trials[t].id);
    c->fold = data_fold_id(&st->folds, d->fold);
    c->epoch = d->epoch;
    snprintf(c->rule, sizeof c->rule, "%s", d->rule);
    c->value = d->value;
    c->threshold = d->threshold;
    snprintf(c->reason, sizeof c->reason, "%s", d->reason);
    /* The decided fold's values up to the checkpoint, for the decisions
     * after a resume (the fold itself is not kept). */
    float *curve = NULL;
    for (int i = 0; i < st->n_jobs && d->epoch; i++)
        if (st->jobs[i].trial == t && st->jobs[i].job.fold == c->fold && !st->jobs[i].seed)
            curve = (float *)metric_curve(st, &st->jobs[i].res);
    c->curve = curve;
    c->n_curve = curve ? d->epoch : 0;
}

void run_pruning_feed_epochs(RunState *st, int i, int upto)
{
    if (!st->pruner || st->jobs[i].seed) return; /* a seed replicate is never pruned */
    const float *c = metric_curve(st, &st->jobs[i].res);
    for (int e = st->jobs[i].fed + 1; c && e <= upto; e++)
        pruner_epoch(st->pruner, prank(st, st->jobs[i].trial), st->jobs[i].slot, e, c[e - 1]);
    if (upto > st->jobs[i].fed) st->jobs[i].fed = upto;
}

void run_pruning_poll_local(RunState *st)
{
    if (!st->pruner) return;
    for (int i = 0; i < st->n_jobs; i++) {
        if (st->jobs[i].state != FS_JOB_RUNNING) continue;
        int p = st->jobs[i].progress;
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the curves were written before the counter moved */
        if (p > st->jobs[i].fed) run_pruning_feed_epochs(st, i, p);
    }
}

void run_pruning_job_finished(RunState *st, int i)
{
    if (!st->pruner || st->jobs[i].seed || st->jobs[i].res.status == FS_FIT_CANCELLED) return;
    feed_result(st, st->jobs[i].trial, st->jobs[i].slot, &st->jobs[i].res);
}

/* Trial t (proposed as `rank`) as the journal knows it, fed in any order:
 * the pruner sorts it out. 0, or -1 with err (its pruned record refused). */
static int feed_journal(RunState *st, int rank, FsErr *err)
{
    int t = st->proposed[rank], K = st->folds.n;
    const FsTrial *tr = &st->sw.trials[t];
    FsErr e = {0};
    st->trials[t].cut = run_pruning_cut_slot(st, t, &e);
    const FsCutRecord *c = journal_find_cut(&st->j, tr->id);
    /* Folds recorded under an earlier sweep version (this pruner added or
     * changed by an extension) stand: the pruner decides from here on. A
     * finished run extended with a pruner cut 8 of its 12 complete trials
     * and removed their models. */
    const int version = st->j.n_sweep_versions > 1 ? st->j.n_sweep_versions : 1;
    for (int k = 0; k < K; k++) {
        const FsFoldRecord *fr = journal_find_fold(&st->j, tr->id, data_fold_id(&st->folds, k));
        if (fr) run_trial_set_slot_done(&st->trials[t], k);
        if (fr && !(c && k >= st->trials[t].cut)) feed_result(st, t, k, &fr->r);
        if (fr && fr->version < version) pruner_settle(st->pruner, rank, k);
    }
    if (journal_find_failure(&st->j, tr->id))
        for (int k = 0; k < K; k++) {
            pruner_fold_end(st->pruner, rank, k, 0, 0.0, 0);
            run_trial_set_slot_done(&st->trials[t], k);
        }
    int slot = c ? cut_fold_slot(st, c, &e) : -1;
    if (slot >= 0) {
        for (int ep = 1; ep <= c->n_curve; ep++) pruner_epoch(st->pruner, rank, slot, ep, c->curve[ep - 1]);
        FsPruneDecision d = {.trial = rank, .fold = slot, .epoch = c->epoch, .value = c->value,
                             .threshold = c->threshold};
        snprintf(d.rule, sizeof d.rule, "%s", c->rule);
        pruner_restore(st->pruner, &d);
    }
    if (!e.msg[0]) return 0;
    if (!err->msg[0]) *err = e;
    return -1;
}

int run_pruning_open(RunState *st, FsErr *err)
{
    const FsSweep *sw = &st->sw;
    int nt = sw->n_trials, K = st->folds.n, rc = 0;
    if (sw->prune.kind == FS_PRUNER_NONE) return 0;
    int max_epochs = 1;
    for (int t = 0; t < nt; t++)
        if (sw->trials[t].train.stop.max_epochs > max_epochs) max_epochs = sw->trials[t].train.stop.max_epochs;
    st->n_prunable = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : nt;
    st->pruner = pruner_new(&sw->prune, st->n_prunable, K, max_epochs, sw->metric != FS_METRIC_LOSS);
    pruner_set_metric(st->pruner, sw->metric);
    for (int rank = 0; rank < st->n_proposed; rank++) rc |= feed_journal(st, rank, err);
    /* What the journal settles was decided when it was written (its cuts
     * are restored above): kept as it was, even by a run journaled under
     * another value rule (finished folds once counted at their best epoch). */
    pruner_replay(st->pruner);
    return rc;
}

void run_pruning_close(RunState *st)
{
    pruner_free(st->pruner);
    st->pruner = NULL;
}
