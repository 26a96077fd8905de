/*
 * run: orchestration of one `foldsweep run` on this process (the MPI
 * layer will hand it trials from rank 0 instead of the whole list).
 */
#define _GNU_SOURCE
#include "run/run.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "journal/journal.h"
#include "metrics/metrics.h"
#include "report/report.h"
#include "run/progress.h"

/* ---------------------------------------------------------------------- */
/* Run folder                                                              */

static int mkdir_p(const char *dir, FsErr *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return fs_err_set(err, "%s: path too long", dir), -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return fs_err_set(err, "%s: cannot create folder: %s", buf, strerror(errno)), -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return fs_err_set(err, "%s: cannot create folder: %s", buf, strerror(errno)), -1;
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *s = fs_malloc(cap);
    size_t k;
    while ((k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) s = fs_realloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = 0;
    return s;
}

static int write_file_atomic(const char *path, const char *text, FsErr *err)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return fs_err_set(err, "%s: cannot write: %s", tmp, strerror(errno)), -1;
    int ok = fputs(text, f) >= 0;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) return fs_err_set(err, "%s: cannot write: %s", path, strerror(errno)), -1;
    return 0;
}

/* Writes DIR/sweep.yaml, or checks that the one there is the same sweep. */
static int run_folder_claim(const char *dir, const FsSweep *sw, FILE *out, FsErr *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    char *old = read_file(path);
    if (!old) return write_file_atomic(path, sw->canonical, err);
    char diff[2048];
    int n = sweep_diff(old, sw->canonical, diff, sizeof diff);
    free(old);
    if (n > 0) {
        fs_err_set(err,
                   "%s holds a different sweep (%d difference%s); use another --out folder, or rerun the "
                   "sweep it holds:\n%s",
                   dir, n, n == 1 ? "" : "s", diff);
        return -1;
    }
    (void)out;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* State shared by the pool's hooks and the progress thread.               */

typedef struct {
    FsSweep *sw;
    FsJournal *j;
    FsProgress *prog;
    int n_fold_ids, fold_ids[256];
    FsJob *jobs;
    FsFitResult *res;
    FsTrainSpec *specs;
    int *job_trial;
    int *trial_written, *trial_folds, *trial_bad;
    double *trial_metric;
    long *trial_params;
    int io_failed;
    FsErr io_err;
    double busy, val, train_examples;
} RunState;

static long params_of(const FsArch *a)
{
    FsNet net;
    FsErr err = {0};
    return model_compile(&net, a, 1, &err) == 0 ? net.n_params : 0;
}

static void io_fail(RunState *st, const FsErr *e)
{
    if (!st->io_failed) st->io_err = *e;
    st->io_failed = 1;
    run_request_stop(0);
}

static void hook_started(int i, void *ctx)
{
    RunState *st = ctx;
    int t = st->job_trial[i];
    const FsTrial *tr = &st->sw->trials[t];
    if (!st->trial_written[t] && !journal_find_trial(st->j, tr->id)) {
        FsErr e = {0};
        if (journal_append_trial(st->j, tr->id, tr->index, st->trial_params[t], tr->config, &e) != 0) io_fail(st, &e);
    }
    st->trial_written[t] = 1;
    progress_fold_started(st->prog);
}

static double fold_metric(const FsSweep *sw, const FsFitResult *r)
{
    if (sw->metric == FS_METRIC_LOSS) return r->best_val_loss;
    FsMetrics m;
    metrics_from_confusion(&m, r->best_confusion);
    return m.q3;
}

static void hook_finished(int i, void *ctx)
{
    RunState *st = ctx;
    const FsFitResult *r = &st->res[i];
    int t = st->job_trial[i];
    const FsTrial *tr = &st->sw->trials[t];
    FsErr e = {0};
    if (r->status == FS_FIT_CANCELLED) {
        progress_fold_finished(st->prog, 0, NULL, 0.0, 0);
        return;
    }
    if (r->status == FS_FIT_FAILED) {
        if (!journal_find_failure(st->j, tr->id) && journal_append_failure(st->j, tr->id, r->message, &e) != 0)
            io_fail(st, &e);
        st->trial_bad[t] = 1;
    } else if (journal_append_fold(st->j, tr->id, st->jobs[i].fold, r, &e) != 0) {
        io_fail(st, &e);
        progress_fold_finished(st->prog, 0, NULL, 0.0, 0);
        return;
    }
    st->busy += r->seconds;
    st->val += r->val_seconds;
    st->train_examples += (double)r->train_examples;
    if (r->status != FS_FIT_OK) st->trial_bad[t] = 1;
    st->trial_folds[t]++;
    st->trial_metric[t] += fold_metric(st->sw, r);
    int complete = st->trial_folds[t] == st->n_fold_ids && !st->trial_bad[t];
    progress_fold_finished(st->prog, 1, tr->id, st->trial_metric[t] / st->n_fold_ids, complete);
}

/* ---------------------------------------------------------------------- */

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void default_out(const char *sweep_path, char *out, size_t n)
{
    const char *base = strrchr(sweep_path, '/');
    base = base ? base + 1 : sweep_path;
    size_t len = strcspn(base, ".");
    snprintf(out, n, "runs/%.*s", (int)len, base);
}

int run_sweep(const FsRunOptions *o)
{
    FILE *out = o->out ? o->out : stdout;
    double t0 = fs_now();
    FsSweep sw;
    FsErrList errs = {0};
    if (sweep_load_file(&sw, o->sweep_path, &errs) != 0) {
        for (int i = 0; i < errs.n; i++) fprintf(stderr, "foldsweep: %s\n", errs.msg[i]);
        errlist_free(&errs);
        return FS_EXIT_ERROR;
    }
    int backend = o->backend >= 0 ? o->backend : (int)sw.backend;
    if (backend == FS_BACKEND_CUDA) {
        fprintf(stderr, "foldsweep: backend cuda: this build has no CUDA backend yet; use --backend cpu or auto\n");
        sweep_free(&sw);
        return FS_EXIT_ERROR;
    }

    FsErr err = {0};
    FsDataset ds;
    if (sweep_load_data(&sw, &ds, &errs) != 0) {
        for (int i = 0; i < errs.n; i++) fprintf(stderr, "foldsweep: %s\n", errs.msg[i]);
        errlist_free(&errs);
        sweep_free(&sw);
        return FS_EXIT_ERROR;
    }
    sweep_assign_ids(&sw, ds.fingerprint);
    double t_data = fs_now() - t0;

    char dir[4096];
    if (o->out_dir)
        snprintf(dir, sizeof dir, "%s", o->out_dir);
    else if (sw.out_dir)
        snprintf(dir, sizeof dir, "%s", sw.out_dir);
    else
        default_out(o->sweep_path, dir, sizeof dir);
    FsJournal j;
    if (mkdir_p(dir, &err) != 0 || run_folder_claim(dir, &sw, out, &err) != 0 || journal_open(&j, dir, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        data_free(&ds);
        sweep_free(&sw);
        return FS_EXIT_ERROR;
    }
    if (journal_append_run(&j, sw.n_trials, sw.predefined ? 1 : (int)ds.n_folds, sweep_metric_name(sw.metric), &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        journal_close(&j);
        data_free(&ds);
        sweep_free(&sw);
        return FS_EXIT_ERROR;
    }
    if (sw.note && !o->quiet) fprintf(out, "note: %s\n", sw.note);
    if (j.dropped_tail && !o->quiet)
        fprintf(out, "note: the journal's last line was torn (a killed run); it was dropped and is retrained\n");

    /* The jobs: every (trial, fold) not already in the journal. */
    RunState st;
    memset(&st, 0, sizeof st);
    st.sw = &sw;
    st.j = &j;
    if (sw.predefined) {
        st.n_fold_ids = 1;
        st.fold_ids[0] = FS_FOLD_PREDEFINED;
    } else {
        st.n_fold_ids = (int)ds.n_folds;
        for (int f = 0; f < st.n_fold_ids; f++) st.fold_ids[f] = f;
    }
    int nt = sw.n_trials, cap = nt * st.n_fold_ids;
    st.jobs = fs_calloc((size_t)cap + 1, sizeof(FsJob));
    st.res = fs_calloc((size_t)cap + 1, sizeof(FsFitResult));
    st.specs = fs_calloc((size_t)cap + 1, sizeof(FsTrainSpec));
    st.job_trial = fs_calloc((size_t)cap + 1, sizeof(int));
    st.trial_written = fs_calloc((size_t)nt + 1, sizeof(int));
    st.trial_folds = fs_calloc((size_t)nt + 1, sizeof(int));
    st.trial_bad = fs_calloc((size_t)nt + 1, sizeof(int));
    st.trial_metric = fs_calloc((size_t)nt + 1, sizeof(double));
    st.trial_params = fs_calloc((size_t)nt + 1, sizeof(long));
    int n_jobs = 0, trials_done = 0;
    for (int t = 0; t < nt; t++) {
        FsTrial *tr = &sw.trials[t];
        st.trial_params[t] = params_of(&tr->arch);
        if (journal_find_failure(&j, tr->id)) {
            trials_done++;
            continue;
        }
        for (int k = 0; k < st.n_fold_ids; k++) {
            const FsFoldRecord *fr = journal_find_fold(&j, tr->id, st.fold_ids[k]);
            if (fr) {
                st.trial_folds[t]++;
                st.trial_metric[t] += fold_metric(&sw, &fr->r);
                if (fr->r.status != FS_FIT_OK) st.trial_bad[t] = 1;
                continue;
            }
            FsTrainSpec *ts = &st.specs[n_jobs];
            *ts = tr->train;
            ts->seed[1] = strtoull(tr->id, NULL, 16);
            ts->seed[2] = (uint64_t)(st.fold_ids[k] + 1);
            train_result_alloc(&st.res[n_jobs], ts->stop.max_epochs);
            st.jobs[n_jobs] = (FsJob){&tr->arch, ts, &ds, st.fold_ids[k], &st.res[n_jobs], NULL, run_cancel_flag()};
            st.job_trial[n_jobs] = t;
            n_jobs++;
        }
        if (st.trial_folds[t] == st.n_fold_ids) trials_done++;
    }

    int threads = o->threads > 0 ? o->threads : sw.threads > 0 ? sw.threads : default_threads();
    FsProgress prog;
    progress_init(&prog, out, o->quiet, nt, trials_done, st.n_fold_ids, n_jobs, o->grace);
    for (int t = 0; t < nt; t++)
        if (st.trial_folds[t] == st.n_fold_ids && !st.trial_bad[t])
            progress_seed_best(&prog, sw.trials[t].id, st.trial_metric[t] / st.n_fold_ids, sw.metric == FS_METRIC_LOSS);
    st.prog = &prog;
    if (!o->quiet)
        fprintf(out, "foldsweep: %d trials x %d fold%s, %d folds to train (%d already done), %d thread%s, run folder %s\n",
                nt, st.n_fold_ids, st.n_fold_ids == 1 ? "" : "s", n_jobs, nt * st.n_fold_ids - n_jobs, threads,
                threads == 1 ? "" : "s", dir);

    run_signals_install();
    FsPoolHooks hooks = {hook_started, hook_finished, &st, run_stop_flag()};
    double t_train = fs_now();
    progress_start(&prog);
    train_jobs_hooked(st.jobs, n_jobs, threads, &hooks);
    progress_stop(&prog);
    double train_wall = fs_now() - t_train;

    int rc = FS_EXIT_OK;
    int interrupted = *run_stop_flag() && !st.io_failed;
    if (st.io_failed) {
        fprintf(stderr, "foldsweep: %s\n", st.io_err.msg);
        rc = FS_EXIT_ERROR;
    } else if (interrupted) {
        fprintf(out, "foldsweep: interrupted; %d of %d folds of this run are in the journal. Rerun the same "
                     "command to resume.\n",
                prog.folds_done, n_jobs);
        rc = FS_EXIT_INTERRUPTED;
    }

    /* Leaderboard files and the profile, even after an interruption: what
     * is in the journal is ranked. */
    FsProfile prof = {t_data, st.busy - st.val, st.val, j.write_seconds, train_wall, threads,
                      st.train_examples, prog.folds_done};
    char perr[1024];
    if (report_write_files(dir, &j, &sw, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
    }
    if (profile_write(dir, &prof, perr, sizeof perr) != 0) {
        fprintf(stderr, "foldsweep: %s\n", perr);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
    }
    if (!o->quiet && rc != FS_EXIT_ERROR) {
        if (!interrupted) report_print_leaderboard(out, &j, &sw, 10);
        profile_print(out, &prof);
    }

    for (int i = 0; i < n_jobs; i++) train_result_free(&st.res[i]);
    free(st.jobs);
    free(st.res);
    free(st.specs);
    free(st.job_trial);
    free(st.trial_written);
    free(st.trial_folds);
    free(st.trial_bad);
    free(st.trial_metric);
    free(st.trial_params);
    journal_close(&j);
    data_free(&ds);
    sweep_free(&sw);
    return rc;
}
