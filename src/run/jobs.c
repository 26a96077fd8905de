/*
 * jobs: the jobs of a run on rank 0 (or a single process), from listing to
 * record. A trial's folds not in the journal become jobs (state_add_trial);
 * the queue hands them out; a job that starts writes its trial's record
 * first; a finished one becomes a fold record with its model file, or a
 * restored model file, or a fold of a pruned trial that is dropped. The
 * progress line's sample and the --progress epoch lines are read from the
 * same counters.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "run/checkpoints.h"
#include "run/decide.h"
#include "run/state.h"

void state_list_job(RunState *st, int t, int k, int seed, int restore)
{
    const FsTrial *tr = &st->sw.trials[t];
    int fold = data_fold_id(&st->folds, k);
    RunJob *jb = &st->jobs[st->n_jobs++];
    jb->trial = t;
    jb->slot = k;
    jb->seed = seed;
    jb->restore = restore;
    jb->base = UINT64_MAX;
    sweep_seed_spec(&jb->spec, tr, fold, seed);
    train_result_alloc(&jb->res, jb->spec.stop.max_epochs);
    jb->job = (FsJob){&tr->arch, &jb->spec, &st->ds, fold, &jb->res, NULL, run_cancel_flag(),
                      &jb->prune, &jb->progress, &jb->examples, NULL, 0, 0};
    run_gpu_group_job(&st->gpu_groups, t, &jb->job);
    run_queue_add(&st->queue, st->n_jobs - 1);
}

int state_add_trial(RunState *st, int t, FsErr *err)
{
    FsSweep *sw = &st->sw;
    FsTrial *tr = &sw->trials[t];
    st->trials[t].params = sweep_trial_params(tr);
    if (journal_find_failure(&st->j, tr->id) || journal_find_cut(&st->j, tr->id)) {
        st->trials_done++;
        return 0;
    }
    for (int k = 0; k < st->folds.n; k++) {
        const FsFoldRecord *fr = journal_find_fold(&st->j, tr->id, data_fold_id(&st->folds, k));
        char why[256];
        int restore = 0;
        if (fr) {
            st->trials[t].folds++;
            if (fr->r.status != FS_FIT_OK) st->trials[t].bad = 1;
            if (run_model_check(st, fr, why, sizeof why) == 0) continue;
            /* Its scores stand; training it again (same seeds) restores the weights. */
            fprintf(stderr, "foldsweep: %s/%s is %s: trial %s fold %d is trained again to restore it\n", st->dir,
                    fr->model.file, why, tr->id, data_fold_id(&st->folds, k));
            restore = 1;
        }
        if (st->n_jobs >= st->cap_jobs) return fs_err_set(err, "internal: more jobs than the sweep's budget"), -1;
        state_list_job(st, t, k, 0, restore);
    }
    if (st->trials[t].folds == st->folds.n) st->trials_done++;
    /* Folds without their trial record (dropped by `foldsweep repair`):
     * the record is written again, so the leaderboard has its config. */
    if (st->trials[t].folds && !journal_find_trial(&st->j, tr->id) &&
        journal_append_trial(&st->j, tr->id, tr->index, st->trials[t].params, tr->config, err) != 0)
        return -1;
    return 0;
}

int state_work_left(const RunState *st) { return st->prog.folds_done < st->n_jobs; }

void state_job_requeue(RunState *st, int i)
{
    run_queue_requeue(&st->queue, i);
    progress_fold_finished(&st->prog, 0, 0); /* no longer in flight */
}

void state_fail(RunState *st, const FsErr *e)
{
    if (!st->io_failed) st->io_err = *e;
    st->io_failed = 1;
    run_request_stop(0);
}

void state_epochs_seen(RunState *st, int i, int upto)
{
    if (upto > st->jobs[i].seen) st->jobs[i].seen = upto;
}

/* --progress: one line per finished epoch of each fold (lock held). */
static void print_epochs(RunState *st, int i, int upto)
{
    const FsCurves *c = &st->jobs[i].res.curves;
    const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
    for (int e = st->jobs[i].printed + 1; e <= upto; e++)
        fprintf(st->prog.out, "%s%.8s fold %d epoch %d/%d: train loss %.4f, val loss %.4f, val Q3 %s%%, %.1f s\n",
                st->prog.redraw ? "\r\033[K" : "", tr->id, st->jobs[i].job.fold, e, st->jobs[i].spec.stop.max_epochs,
                c->train_loss[e - 1], c->val_loss[e - 1], fs_percent_text(c->val_q3[e - 1]), c->seconds[e - 1]);
    if (upto > st->jobs[i].printed) {
        st->jobs[i].printed = upto;
        fflush(st->prog.out);
    }
}

void state_job_started(RunState *st, int i)
{
    int t = st->jobs[i].trial;
    const FsTrial *tr = &st->sw.trials[t];
    if (!st->trials[t].written && !journal_find_trial(&st->j, tr->id)) {
        FsErr e = {0};
        if (journal_append_trial(&st->j, tr->id, tr->index, st->trials[t].params, tr->config, &e) != 0)
            state_fail(st, &e);
    }
    st->trials[t].written = 1;
    progress_fold_started(&st->prog);
}

/* A fold that was recorded before but whose model file was lost: only the
 * weights are new (a "model" record names them). */
static void job_restored(RunState *st, int i)
{
    const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
    FsModelRef ref;
    FsErr e = {0};
    if (st->jobs[i].res.status == FS_FIT_CANCELLED) {
        progress_fold_finished(&st->prog, 0, 0);
        return;
    }
    if (run_model_save(st, i, &ref, &e) != 0 ||
        (ref.file[0] && journal_append_model(&st->j, tr->id, st->jobs[i].job.fold, &ref, &e) != 0))
        state_fail(st, &e);
    else if (!ref.file[0])
        fprintf(stderr, "foldsweep: warning: trial %s fold %d did not train to a model this time (%s); its "
                        "recorded scores stand, its model file stays missing\n",
                tr->id, st->jobs[i].job.fold, train_status_name(st->jobs[i].res.status));
    train_result_drop_weights(&st->jobs[i].res);
    progress_fold_finished(&st->prog, 1, 0);
}

/* With pruning, a fold of a trial pruned at or before it is not recorded
 * (it counts as done). Returns 1 when the fold is dropped. */
static int pruned_fold(RunState *st, int i)
{
    if (!st->pruner || st->jobs[i].seed) return 0;
    int t = st->jobs[i].trial;
    if (st->jobs[i].slot < st->trials[t].cut) return 0;
    st->pruned_seconds += st->jobs[i].res.seconds;
    st->train_examples += (double)st->jobs[i].res.train_examples; /* work done, if thrown away */
    run_ckpt_remove(st->dir, st->sw.trials[t].id, st->jobs[i].job.fold);
    train_result_drop_weights(&st->jobs[i].res);
    progress_fold_finished(&st->prog, 1, 0);
    return 1;
}

/* Test hook KILL_AFTER_REPLICATE=N (util/faults.c): SIGKILL right after
 * the Nth seed replicate's record, for the resume tests of the replicates. */
static void maybe_die_after_replicate(void)
{
    static int count;
    const char *s = fs_test_fault("KILL_AFTER_REPLICATE");
    if (s && ++count == atoi(s)) {
        fflush(NULL);
        raise(SIGKILL);
    }
}

/* A seed replicate's result: a fold record with its seed index, whatever
 * its status (a failed replicate fails no trial), without a model file. */
static void record_replicate(RunState *st, int i)
{
    const FsFitResult *r = &st->jobs[i].res;
    const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
    FsErr e = {0};
    int rc = journal_append_fold_seed(&st->j, tr->id, st->jobs[i].job.fold, st->jobs[i].seed, r, NULL, &e);
    train_result_drop_weights(&st->jobs[i].res);
    if (rc != 0) {
        state_fail(st, &e);
        progress_fold_finished(&st->prog, 0, 0);
        return;
    }
    maybe_die_after_replicate();
    st->busy += r->seconds;
    st->val += r->val_seconds;
    st->train_examples += (double)r->train_examples;
    progress_fold_finished(&st->prog, 1, 0);
}

/* Job i's result into the journal and the counters (lock held). */
static void state_record_fold(RunState *st, int i)
{
    const FsFitResult *r = &st->jobs[i].res;
    int t = st->jobs[i].trial;
    if (st->jobs[i].seed) {
        record_replicate(st, i);
        return;
    }
    const FsTrial *tr = &st->sw.trials[t];
    FsErr e = {0};
    FsModelRef model;
    if (r->status == FS_FIT_FAILED) {
        if (!journal_find_failure(&st->j, tr->id) && journal_append_failure(&st->j, tr->id, r->message, &e) != 0)
            state_fail(st, &e);
        st->trials[t].bad = 1;
    } else if (run_model_save(st, i, &model, &e) != 0 ||
               journal_append_fold(&st->j, tr->id, st->jobs[i].job.fold, r, &model, &e) != 0) {
        /* Not recorded: the fold is trained again on resume. */
        state_fail(st, &e);
        train_result_drop_weights(&st->jobs[i].res);
        progress_fold_finished(&st->prog, 0, 0);
        return;
    }
    train_result_drop_weights(&st->jobs[i].res);
    run_ckpt_remove(st->dir, tr->id, st->jobs[i].job.fold); /* recorded: its checkpoint has served */
    st->busy += r->seconds;
    st->val += r->val_seconds;
    st->train_examples += (double)r->train_examples;
    if (r->status != FS_FIT_OK) st->trials[t].bad = 1;
    st->trials[t].folds++;
    int complete = st->trials[t].folds == st->folds.n && !st->trials[t].bad;
    progress_fold_finished(&st->prog, 1, complete);
    if (complete) run_offer_best(st, t);
    FsReportHtmlInfo live = {st->sw.path, 0, 1, 0, NULL};
    if (st->trials[t].folds == st->folds.n) report_html_write_run(st->dir, &st->j, &st->sw, &live, &e);
}

void state_job_ended(RunState *st, int i)
{
    const RunJob *jb = &st->jobs[i];
    if (st->epoch_lines && jb->res.status != FS_FIT_CANCELLED) print_epochs(st, i, jb->res.epochs);
    run_queue_done(&st->queue, i);
    pthread_cond_broadcast(&st->cv);
    if (st->pruner && !jb->restore && !jb->seed && jb->res.status != FS_FIT_CANCELLED) run_pruning_job_finished(st, i);
}

void state_job_record(RunState *st, int i)
{
    const FsFitResult *r = &st->jobs[i].res;
    if (r->status == FS_FIT_CANCELLED && r->message[0]) { /* no memory for it here: the run stops, saying so */
        FsErr e = {0};
        fs_err_set(&e, "trial %s fold %d: %s", st->sw.trials[st->jobs[i].trial].id, st->jobs[i].job.fold,
                   r->message);
        state_fail(st, &e);
    }
    if (st->jobs[i].restore) {
        job_restored(st, i);
        return;
    }
    if (pruned_fold(st, i)) return;
    if (st->jobs[i].res.status == FS_FIT_CANCELLED) {
        progress_fold_finished(&st->prog, 0, 0);
        return;
    }
    if (!st->jobs[i].seed) run_trial_set_slot_done(&st->trials[st->jobs[i].trial], st->jobs[i].slot);
    state_record_fold(st, i);
}

void state_progress_sample(void *ctx, FsProgressSample *s)
{
    RunState *st = ctx;
    memset(s, 0, sizeof *s);
    s->eta = -1;
    pthread_mutex_lock(&st->lock);
    int first = -1;
    double frac_sum = 0.0;
    for (int i = 0; i < st->n_jobs; i++) {
        int k = st->jobs[i].slot;
        if (!st->slot_train[k]) st->slot_train[k] = data_examples(&st->ds, st->jobs[i].job.fold, 0, NULL) + 1;
        const double n_train = (double)(st->slot_train[k] - 1);
        const double plan = n_train * st->jobs[i].spec.stop.max_epochs;
        const FsFitResult *r = &st->jobs[i].res;
        uint64_t ex = 0;
        if (st->jobs[i].state == FS_JOB_QUEUED) {
            s->planned += plan;
            continue;
        }
        if (st->jobs[i].state == FS_JOB_DONE) {
            ex = r->status == FS_FIT_CANCELLED ? st->jobs[i].examples : r->train_examples;
            s->done += (double)ex;
            s->planned += r->status == FS_FIT_CANCELLED ? plan : (double)ex;
        } else {
            ex = st->jobs[i].examples;
            s->done += (double)ex;
            s->planned += plan;
            int seen = st->jobs[i].progress > st->jobs[i].seen ? st->jobs[i].progress : st->jobs[i].seen;
            if (st->epoch_lines && seen > st->jobs[i].printed) print_epochs(st, i, seen);
            double in_epoch = n_train > 0 ? (double)ex / n_train - seen : 0.0;
            if (in_epoch < 0) in_epoch = 0;
            if (first < 0) {
                first = i;
                snprintf(s->flight, sizeof s->flight, "epoch %d/%d %.0f%%", seen + 1 > st->jobs[i].spec.stop.max_epochs
                         ? st->jobs[i].spec.stop.max_epochs : seen + 1, st->jobs[i].spec.stop.max_epochs,
                         100.0 * (in_epoch > 1 ? 1 : in_epoch));
            }
            frac_sum += plan > 0 ? (double)ex / plan : 0.0;
            s->n_flight++;
        }
        /* What this run trained: the rise since the job was first seen (a
         * resumed fold starts at its checkpoint's count). */
        if (st->jobs[i].base == UINT64_MAX) st->jobs[i].base = st->jobs[i].state == FS_JOB_DONE ? 0 : ex;
        if (ex > st->jobs[i].base) s->trained += (double)(ex - st->jobs[i].base);
    }
    if (s->n_flight > 1)
        snprintf(s->flight, sizeof s->flight, "%.0f%% of their epochs", 100.0 * frac_sum / s->n_flight);
    pthread_mutex_unlock(&st->lock);
    double el = fs_now() - st->prog.t_start;
    if (s->trained > 0 && el > 0) s->eta = (s->planned - s->done) / (s->trained / el);
    if (s->eta < 0 && s->planned > 0 && s->done >= s->planned) s->eta = 0;
}

