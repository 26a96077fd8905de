/*
 * state: what rank 0 (or a single process) knows about a run, and how a
 * finished fold becomes a journal record and a step of the progress line.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "report/report.h"
#include "run/state.h"

static long params_of(const FsArch *a)
{
    FsNet net;
    FsErr err = {0};
    return model_compile(&net, a, 1, &err) == 0 ? net.n_params : 0;
}

static double fold_metric(const FsSweep *sw, const FsFitResult *r)
{
    if (sw->metric == FS_METRIC_LOSS) return r->best_val_loss;
    FsMetrics m;
    metrics_from_confusion(&m, r->best_confusion);
    return m.q3;
}

void run_job_spec(FsTrainSpec *ts, const FsTrial *tr, int fold)
{
    *ts = tr->train;
    ts->seed[1] = strtoull(tr->id, NULL, 16);
    ts->seed[2] = (uint64_t)(fold + 1);
}

static void default_out(const char *sweep_path, char *out, size_t n)
{
    const char *base = strrchr(sweep_path, '/');
    base = base ? base + 1 : sweep_path;
    size_t len = strcspn(base, ".");
    snprintf(out, n, "runs/%.*s", (int)len, base);
}

static void print_errs(FsErrList *errs)
{
    for (int i = 0; i < errs->n; i++) fprintf(stderr, "foldsweep: %s\n", errs->msg[i]);
    errlist_free(errs);
}

/* The test set, refused before any training when it shares a protein with
 * the training data (its scores would be optimistic). */
static int open_test(RunState *st, const char *sweep_path)
{
    FsErrList errs = {0};
    const FsSweep *sw = &st->sw;
    if (sweep_load_test(sw, &st->test, &errs) != 0) {
        print_errs(&errs);
        return -1;
    }
    if (sw->test_sequences)
        snprintf(st->test_desc, sizeof st->test_desc, "%s", sw->test_sequences);
    for (int i = 0; i < sw->n_test_inputs && !sw->test_sequences; i++)
        snprintf(st->test_desc + strlen(st->test_desc), sizeof st->test_desc - strlen(st->test_desc), "%s%s",
                 i ? " " : "", sw->test_inputs[i]);
    uint32_t overlap = 0;
    char first[200] = "";
    for (uint32_t i = 0; i < st->test.n_prot; i++) {
        if (!data_hash_seen(st->seen, st->n_seen, data_protein_hash(&st->test, i))) continue;
        if (overlap++ < 3)
            snprintf(first + strlen(first), sizeof first - strlen(first), "%s%s", overlap > 1 ? ", " : "",
                     data_protein_name(&st->test, i));
    }
    if (overlap) {
        fprintf(stderr, "foldsweep: %s:%d:%d: test: %u protein%s identical to proteins of the training data (%s%s): "
                        "a test set must be held out; remove them from it\n",
                sweep_path, sw->test_line, sw->test_col, overlap, overlap == 1 ? " is" : "s are", first,
                overlap > 3 ? ", ..." : "");
        return -1;
    }
    return 0;
}

/* A resume must train on the data the folder's earlier folds saw: other
 * data gives other trial ids, so its results would sit beside the old ones
 * in one leaderboard. Journals older than the check carry no fingerprint. */
static int check_data(RunState *st, FsErr *err)
{
    const FsSweep *sw = &st->sw;
    for (int r = 0; r < st->j.n_runs; r++) {
        uint64_t was = st->j.runs[r].data_fingerprint;
        if (!was || was == st->ds.fingerprint) continue;
        const char *src = sw->prepared    ? sw->prepared
                          : sw->sequences ? sw->sequences
                          : sw->n_inputs  ? sw->inputs[0]
                                          : "the synthetic data (data.synth)";
        fs_err_set(err,
                   "%s: the training data changed since this folder's run began (data fingerprint %016llx then, "
                   "%016llx now, from %s%s): a resume would mix results on two data sets. Put the data back, use "
                   "another --out folder, or add --restart to set this folder's run aside (kept in %s/previous-N) "
                   "and start again",
                   st->dir, (unsigned long long)was, (unsigned long long)st->ds.fingerprint, src,
                   sw->n_inputs > 1 ? " and the other inputs" : "", st->dir);
        return -1;
    }
    return 0;
}

int state_add_trial(RunState *st, int t, FsErr *err)
{
    FsSweep *sw = &st->sw;
    FsTrial *tr = &sw->trials[t];
    st->trial_params[t] = params_of(&tr->arch);
    if (journal_find_failure(&st->j, tr->id) || journal_find_cut(&st->j, tr->id)) {
        st->trials_done++;
        return 0;
    }
    for (int k = 0; k < st->n_fold_ids; k++) {
        const FsFoldRecord *fr = journal_find_fold(&st->j, tr->id, st->fold_ids[k]);
        char why[256];
        int restore = 0;
        if (fr) {
            st->trial_folds[t]++;
            st->trial_metric[t] += fold_metric(sw, &fr->r);
            if (fr->r.status != FS_FIT_OK) st->trial_bad[t] = 1;
            if (run_model_check(st, fr, why, sizeof why) == 0) continue;
            /* Its scores stand; training it again (same seeds) restores the weights. */
            fprintf(stderr, "foldsweep: %s/%s is %s: trial %s fold %d is trained again to restore it\n", st->dir,
                    fr->model.file, why, tr->id, st->fold_ids[k]);
            restore = 1;
        }
        if (st->n_jobs >= st->cap_jobs) return fs_err_set(err, "internal: more jobs than the sweep's budget"), -1;
        int i = st->n_jobs++;
        st->job_restore[i] = restore;
        run_job_spec(&st->specs[i], tr, st->fold_ids[k]);
        train_result_alloc(&st->res[i], st->specs[i].stop.max_epochs);
        st->jobs[i] = (FsJob){&tr->arch, &st->specs[i], &st->ds, st->fold_ids[k], &st->res[i], NULL,
                              run_cancel_flag(), NULL, NULL, NULL, NULL};
        st->job_trial[i] = t;
        if (st->job_state) run_queue_add(st, i); /* mid-run: the queue exists already */
    }
    if (st->trial_folds[t] == st->n_fold_ids) st->trials_done++;
    /* Folds without their trial record (dropped by `foldsweep repair`):
     * the record is written again, so the leaderboard has its config. */
    if (st->trial_folds[t] && !journal_find_trial(&st->j, tr->id) &&
        journal_append_trial(&st->j, tr->id, tr->index, st->trial_params[t], tr->config, err) != 0)
        return -1;
    return 0;
}

int state_open(RunState *st, const FsRunOptions *o, FILE *out)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->cv, NULL);
    double t0 = fs_now();
    FsErrList errs = {0};
    FsErr err = {0};
    if (sweep_load_file(&st->sw, o->sweep_path, &errs) != 0) {
        print_errs(&errs);
        return FS_EXIT_ERROR;
    }
    FsSweep *sw = &st->sw;
    int backend = o->backend >= 0 ? o->backend : (int)sw->backend;
    if (run_choose_backend(backend, o->local_rank, &st->use_gpu, &st->gpu_device, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        return FS_EXIT_ERROR;
    }
    if (sweep_load_data(sw, &st->ds, &errs) != 0) {
        print_errs(&errs);
        return FS_EXIT_ERROR;
    }
    sweep_assign_ids(sw, st->ds.fingerprint);
    st->n_seen = data_seen_hashes(&st->ds, &st->seen);
    if (sw->has_test && open_test(st, o->sweep_path) != 0) return FS_EXIT_ERROR;
    st->t_data = fs_now() - t0;

    if (o->out_dir)
        snprintf(st->dir, sizeof st->dir, "%s", o->out_dir);
    else if (sw->out_dir)
        snprintf(st->dir, sizeof st->dir, "%s", sw->out_dir);
    else
        default_out(o->sweep_path, st->dir, sizeof st->dir);
    /* The journal's lock first: two runs started at once on a new folder
     * must not both write its sweep.yaml; the second gets "in use". */
    if (fs_mkdir_p(st->dir, &err) != 0 || journal_open(&st->j, st->dir, &err) != 0 ||
        (o->restart && run_folder_set_aside(st->dir, &st->j, out, &err) != 0) ||
        run_folder_claim(st->dir, sw, &err) != 0 || check_data(st, &err) != 0 ||
        run_folder_check_trials(st->dir, &st->j, sw, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        return FS_EXIT_ERROR;
    }
    if (sw->predefined) {
        st->n_fold_ids = 1;
        st->fold_ids[0] = FS_FOLD_PREDEFINED;
    } else {
        st->n_fold_ids = (int)st->ds.n_folds;
        for (int f = 0; f < st->n_fold_ids; f++) st->fold_ids[f] = f;
    }
    if (journal_append_run(&st->j, sw->sampler == FS_SAMPLER_TPE ? sw->random_n : sw->n_trials, st->n_fold_ids,
                           sweep_metric_name(sw->metric), st->ds.fingerprint,
                           &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        return FS_EXIT_ERROR;
    }
    if (sw->note && !o->quiet) fprintf(out, "note: %s\n", sw->note);
    if (st->j.dropped_tail && !o->quiet)
        fprintf(out, "note: the journal's last line was torn (a killed run); it was dropped and is retrained\n");

    /* The jobs: every (trial, fold) not already in the journal; with the
     * tpe sampler, of the trials proposed so far (more come batch by batch). */
    int nt = sw->n_trials, budget = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : nt;
    st->cap_jobs = budget * st->n_fold_ids + 1;
    st->jobs = fs_calloc((size_t)st->cap_jobs, sizeof(FsJob));
    st->res = fs_calloc((size_t)st->cap_jobs, sizeof(FsFitResult));
    st->specs = fs_calloc((size_t)st->cap_jobs, sizeof(FsTrainSpec));
    st->job_trial = fs_calloc((size_t)st->cap_jobs, sizeof(int));
    st->job_restore = fs_calloc((size_t)st->cap_jobs, sizeof(int));
    st->trial_written = fs_calloc((size_t)nt + 1, sizeof(int));
    st->trial_folds = fs_calloc((size_t)nt + 1, sizeof(int));
    st->trial_bad = fs_calloc((size_t)nt + 1, sizeof(int));
    st->trial_metric = fs_calloc((size_t)nt + 1, sizeof(double));
    st->trial_params = fs_calloc((size_t)nt + 1, sizeof(long));
    run_sampler_open(st);
    for (int k = 0; k < st->n_proposed; k++)
        if (state_add_trial(st, st->proposed[k], &err) != 0) {
            fprintf(stderr, "foldsweep: %s\n", err.msg);
            return FS_EXIT_ERROR;
        }
    nt = budget;
    progress_init(&st->prog, out, o->quiet, nt, st->trials_done, st->n_fold_ids, st->n_jobs, o->grace);
    for (int t = 0; t < sw->n_trials; t++)
        if (st->trial_folds[t] == st->n_fold_ids && !st->trial_bad[t] && !journal_find_cut(&st->j, sw->trials[t].id))
            progress_seed_best(&st->prog, sw->trials[t].id, st->trial_metric[t] / st->n_fold_ids,
                               sw->metric == FS_METRIC_LOSS);
    if (sw->prune.kind != FS_PRUNER_NONE && st->use_gpu) {
        /* The CUDA backend trains many folds in one launch and reports no
         * per-epoch values yet: a pruned run there could not be the same
         * as on the CPU. */
        fprintf(stderr, "foldsweep: search.pruner is not supported on the CUDA backend yet; run with --backend cpu\n");
        return FS_EXIT_ERROR;
    }
    run_pruning_open(st);
    size_t cap = (size_t)st->cap_jobs + 1;
    st->job_base = fs_malloc(cap * sizeof(uint64_t));
    for (size_t i = 0; i < cap; i++) st->job_base[i] = UINT64_MAX;
    st->job_printed = fs_calloc(cap, sizeof(int));
    st->job_seen = fs_calloc(cap, sizeof(int));
    st->epoch_lines = o->epoch_lines;
    st->prog.sample = state_progress_sample;
    st->prog.sample_ctx = st;
    st->prog.dir = st->dir;
    return FS_EXIT_OK;
}

void state_epochs_seen(RunState *st, int i, int upto)
{
    if (upto > st->job_seen[i]) st->job_seen[i] = upto;
}

/* --progress: one line per finished epoch of each fold (lock held). */
static void print_epochs(RunState *st, int i, int upto)
{
    const FsCurves *c = &st->res[i].curves;
    const FsTrial *tr = &st->sw.trials[st->job_trial[i]];
    for (int e = st->job_printed[i] + 1; e <= upto; e++)
        fprintf(st->prog.out, "%s%.8s fold %d epoch %d/%d: train loss %.4f, val loss %.4f, val Q3 %.4f, %.1f s\n",
                st->prog.tty ? "\r\033[K" : "", tr->id, st->jobs[i].fold, e, st->specs[i].stop.max_epochs,
                c->train_loss[e - 1], c->val_loss[e - 1], c->val_q3[e - 1], c->seconds[e - 1]);
    if (upto > st->job_printed[i]) {
        st->job_printed[i] = upto;
        fflush(st->prog.out);
    }
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
        int k = st->job_slot[i];
        if (!st->slot_train[k]) st->slot_train[k] = data_examples(&st->ds, st->jobs[i].fold, 0, NULL) + 1;
        const double n_train = (double)(st->slot_train[k] - 1);
        const double plan = n_train * st->specs[i].stop.max_epochs;
        const FsFitResult *r = &st->res[i];
        uint64_t ex = 0;
        if (st->job_state[i] == FS_JOB_QUEUED) {
            s->planned += plan;
            continue;
        }
        if (st->job_state[i] == FS_JOB_DONE) {
            ex = r->status == FS_FIT_CANCELLED ? st->job_examples[i] : r->train_examples;
            s->done += (double)ex;
            s->planned += r->status == FS_FIT_CANCELLED ? plan : (double)ex;
        } else {
            ex = st->job_examples[i];
            s->done += (double)ex;
            s->planned += plan;
            int seen = st->job_progress[i] > st->job_seen[i] ? st->job_progress[i] : st->job_seen[i];
            if (st->epoch_lines && seen > st->job_printed[i]) print_epochs(st, i, seen);
            double in_epoch = n_train > 0 ? (double)ex / n_train - seen : 0.0;
            if (in_epoch < 0) in_epoch = 0;
            if (first < 0) {
                first = i;
                snprintf(s->flight, sizeof s->flight, "epoch %d/%d %.0f%%", seen + 1 > st->specs[i].stop.max_epochs
                         ? st->specs[i].stop.max_epochs : seen + 1, st->specs[i].stop.max_epochs,
                         100.0 * (in_epoch > 1 ? 1 : in_epoch));
            }
            frac_sum += plan > 0 ? (double)ex / plan : 0.0;
            s->n_flight++;
        }
        /* What this run trained: the rise since the job was first seen (a
         * resumed fold starts at its checkpoint's count). */
        if (st->job_base[i] == UINT64_MAX) st->job_base[i] = st->job_state[i] == FS_JOB_DONE ? 0 : ex;
        if (ex > st->job_base[i]) s->trained += (double)(ex - st->job_base[i]);
    }
    if (s->n_flight > 1)
        snprintf(s->flight, sizeof s->flight, "%.0f%% of their epochs", 100.0 * frac_sum / s->n_flight);
    pthread_mutex_unlock(&st->lock);
    double el = fs_now() - st->prog.t_start;
    if (s->trained > 0 && el > 0) s->eta = (s->planned - s->done) / (s->trained / el);
    if (s->eta < 0 && s->planned > 0 && s->done >= s->planned) s->eta = 0;
}

void state_close(RunState *st)
{
    for (int i = 0; i < st->n_jobs; i++) train_result_free(&st->res[i]);
    free(st->jobs);
    free(st->res);
    free(st->specs);
    free(st->job_trial);
    free(st->job_restore);
    free(st->proposed);
    free(st->rank_of);
    run_pruning_close(st);
    free(st->job_base);
    free(st->job_printed);
    free(st->job_seen);
    free(st->seen);
    data_free(&st->test);
    free(st->trial_written);
    free(st->trial_folds);
    free(st->trial_bad);
    free(st->trial_metric);
    free(st->trial_params);
    if (st->j.path) journal_close(&st->j);
    data_free(&st->ds);
    sweep_free(&st->sw);
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->cv);
}

void state_fail(RunState *st, const FsErr *e)
{
    if (!st->io_failed) st->io_err = *e;
    st->io_failed = 1;
    run_request_stop(0);
}

int state_take_job(RunState *st) { return run_pruning_take(st); }

int state_work_left(const RunState *st) { return st->prog.folds_done < st->n_jobs; }

int state_queue_empty(const RunState *st) { return st->n_queued == 0; }

int state_running(const RunState *st)
{
    for (int i = 0; i < st->n_jobs; i++)
        if (st->job_state[i] == FS_JOB_RUNNING) return 1;
    return 0;
}

void state_job_requeue(RunState *st, int i)
{
    st->job_state[i] = FS_JOB_QUEUED;
    st->n_queued++;
    progress_fold_finished(&st->prog, 0, NULL, 0.0, 0); /* no longer in flight */
}

void state_job_started(RunState *st, int i)
{
    int t = st->job_trial[i];
    const FsTrial *tr = &st->sw.trials[t];
    if (!st->trial_written[t] && !journal_find_trial(&st->j, tr->id)) {
        FsErr e = {0};
        if (journal_append_trial(&st->j, tr->id, tr->index, st->trial_params[t], tr->config, &e) != 0)
            state_fail(st, &e);
    }
    st->trial_written[t] = 1;
    progress_fold_started(&st->prog);
}

/* A fold that was recorded before but whose model file was lost: only the
 * weights are new (a "model" record names them). */
static void job_restored(RunState *st, int i)
{
    const FsTrial *tr = &st->sw.trials[st->job_trial[i]];
    FsModelRef ref;
    FsErr e = {0};
    if (st->res[i].status == FS_FIT_CANCELLED) {
        progress_fold_finished(&st->prog, 0, NULL, 0.0, 0);
        return;
    }
    if (run_model_save(st, i, &ref, &e) != 0 ||
        (ref.file[0] && journal_append_model(&st->j, tr->id, st->jobs[i].fold, &ref, &e) != 0))
        state_fail(st, &e);
    else if (!ref.file[0])
        fprintf(stderr, "foldsweep: warning: trial %s fold %d did not train to a model this time (%s); its "
                        "recorded scores stand, its model file stays missing\n",
                tr->id, st->jobs[i].fold, train_status_name(st->res[i].status));
    train_result_drop_weights(&st->res[i]);
    progress_fold_finished(&st->prog, 1, NULL, 0.0, 0);
}

/* With pruning: the fold's values go to the pruner, and a fold of a trial
 * pruned at or before it is not recorded (it counts as done). Returns 1
 * when the fold is dropped. */
static int pruned_fold(RunState *st, int i)
{
    if (!st->pruner) return 0;
    int t = st->job_trial[i];
    if (st->res[i].status != FS_FIT_CANCELLED) run_pruning_job_finished(st, i);
    run_pruning_decide(st);
    if (st->job_slot[i] < run_pruning_cut_slot(st, t)) return 0;
    st->pruned_seconds += st->res[i].seconds;
    st->train_examples += (double)st->res[i].train_examples; /* work done, if thrown away */
    run_ckpt_remove(st->dir, st->sw.trials[t].id, st->jobs[i].fold);
    train_result_drop_weights(&st->res[i]);
    progress_fold_finished(&st->prog, 1, NULL, 0.0, 0);
    return 1;
}

/* Job i's result into the journal and the counters (lock held). */
static void state_record_fold(RunState *st, int i)
{
    const FsFitResult *r = &st->res[i];
    int t = st->job_trial[i];
    const FsTrial *tr = &st->sw.trials[t];
    FsErr e = {0};
    FsModelRef model;
    if (r->status == FS_FIT_FAILED) {
        if (!journal_find_failure(&st->j, tr->id) && journal_append_failure(&st->j, tr->id, r->message, &e) != 0)
            state_fail(st, &e);
        st->trial_bad[t] = 1;
    } else if (run_model_save(st, i, &model, &e) != 0 ||
               journal_append_fold(&st->j, tr->id, st->jobs[i].fold, r, &model, &e) != 0) {
        /* Not recorded: the fold is trained again on resume. */
        state_fail(st, &e);
        train_result_drop_weights(&st->res[i]);
        progress_fold_finished(&st->prog, 0, NULL, 0.0, 0);
        return;
    }
    train_result_drop_weights(&st->res[i]);
    run_ckpt_remove(st->dir, tr->id, st->jobs[i].fold); /* recorded: its checkpoint has served */
    st->busy += r->seconds;
    st->val += r->val_seconds;
    st->train_examples += (double)r->train_examples;
    if (r->status != FS_FIT_OK) st->trial_bad[t] = 1;
    st->trial_folds[t]++;
    st->trial_metric[t] += fold_metric(&st->sw, r);
    int complete = st->trial_folds[t] == st->n_fold_ids && !st->trial_bad[t];
    progress_fold_finished(&st->prog, 1, tr->id, st->trial_metric[t] / st->n_fold_ids, complete);
    FsReportHtmlInfo live = {st->sw.path, st->use_gpu ? "cuda" : "cpu", 0, 0, 1};
    if (st->trial_folds[t] == st->n_fold_ids) report_html_write_run(st->dir, &st->j, &st->sw, &live, &e);
}

void state_job_finished(RunState *st, int i)
{
    if (st->epoch_lines && st->res[i].status != FS_FIT_CANCELLED) print_epochs(st, i, st->res[i].epochs);
    st->job_state[i] = FS_JOB_DONE;
    pthread_cond_broadcast(&st->cv);
    if (st->job_restore[i]) {
        job_restored(st, i);
        return;
    }
    if (pruned_fold(st, i)) return;
    if (st->res[i].status == FS_FIT_CANCELLED) {
        progress_fold_finished(&st->prog, 0, NULL, 0.0, 0);
        return;
    }
    if (st->slot_done) st->slot_done[st->job_trial[i] * st->n_fold_ids + st->job_slot[i]] = 1;
    state_record_fold(st, i);
    run_sampler_step(st);
}

int state_report(RunState *st, const FsRunOptions *o, FILE *out, int rc, double train_wall, int threads,
                 int ranks)
{
    int interrupted = rc == FS_EXIT_INTERRUPTED;
    if (st->io_failed) {
        fprintf(stderr, "foldsweep: %s\n", st->io_err.msg);
        rc = FS_EXIT_ERROR;
    } else if (interrupted) {
        fprintf(out, "foldsweep: interrupted; %d of %d folds of this run are in the journal. Rerun the same "
                     "command to resume.\n",
                st->prog.folds_done, st->n_jobs);
    }
    /* Leaderboard files and the profile, even after an interruption: what
     * is in the journal is ranked. */
    FsProfile prof = {st->t_data, st->busy - st->val, st->val, st->j.write_seconds, train_wall, threads,
                      st->train_examples, st->prog.folds_done, st->pruned_seconds};
    FsErr err = {0};
    /* A finished sweep keeps no checkpoints (a pruned trial's folds from an
     * earlier run may have left some). */
    if (!st->io_failed && !state_work_left(st))
        for (int t = 0; t < st->sw.n_trials; t++)
            for (int k = 0; k < st->n_fold_ids; k++) run_ckpt_remove(st->dir, st->sw.trials[t].id, st->fold_ids[k]);
    if (!st->io_failed && run_models_prune(st, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
        memset(&err, 0, sizeof err);
    }
    if (report_write_files(st->dir, &st->j, &st->sw, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
        memset(&err, 0, sizeof err);
    }
    if (profile_write(st->dir, &prof, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
        memset(&err, 0, sizeof err);
    }
    FsReportHtmlInfo html = {st->sw.path, st->use_gpu ? "cuda" : "cpu", ranks, threads, 0};
    if (report_html_write_run(st->dir, &st->j, &st->sw, &html, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
    }
    if (!o->quiet && rc != FS_EXIT_ERROR) {
        if (!interrupted) report_print_leaderboard(out, &st->j, &st->sw, 10);
        if (st->models_pruned && st->sw.keep_models > 0)
            fprintf(out, "models: removed the fold models of %d trial%s outside the best %d (run.keep_models)\n",
                    st->models_pruned, st->models_pruned == 1 ? "" : "s", st->sw.keep_models);
        else if (st->models_pruned)
            fprintf(out, "models: removed the fold models of %d trial%s (run.keep_models: none)\n",
                    st->models_pruned, st->models_pruned == 1 ? "" : "s");
        profile_print(out, &prof);
    }
    return rc;
}
