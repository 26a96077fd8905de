/*
 * journal_write.c: record text and the durable append.
 *
 * A line is one JSON object and '\n'; its last member, "crc", is the
 * checksum of the bytes before it (frame.c). Field order is fixed; every
 * record has "v" (FS_JOURNAL_VERSION), "kind" and "time" (Unix seconds,
 * %.17g), and ends with "crc".
 *
 *   run:     v kind time pid host trials folds metric [data_fingerprint]
 *            [ranks backend device] (how the session runs) [feature_columns]
 *            [sweep_file] (the sweep file, absolute: what status resumes with) version
 *   trial:   v kind time trial index params config (the JSON object itself)
 *   fold:    v kind time trial fold status epochs best_epoch halted_by
 *            diverged_epoch diverged_step [monitor] best_val_loss confusion (3x3)
 *            train_examples val_examples seconds val_seconds [gpu_path] [gpu_group]
 *            curves {train_loss, val_loss, val_q3, seconds} (epochs entries) message
 *            [model {file bytes crc32}] (the saved weights, when kept);
 *            [seed] (a seed replicate's index, 1..; absent: the trial's own seeds);
 *            monitor "q3" when validation Q3 chose best_epoch (absent: the loss);
 *            gpu_path "block" or "library": the GPU tier that trained it
 *            (absent: the CPU backend, and every record before #44);
 *            gpu_group with gpu_path "library": the models its group's
 *            library calls spanned, 1..FS_GPU_LIB_GROUP_MAX (absent before)
 *   model:   v kind time trial fold model {file bytes crc32}
 *   sweep:   v kind time text (the canonical sweep) val_residues (per fold)
 *   prune:   v kind time trial (its model files were discarded: run.keep_models;
 *            journal_append_discard)
 *   pruned:  v kind time trial fold epoch rule value threshold reason curve
 *            (the sweep's pruner stopped the trial there; src/prune)
 *   refit:   v kind time trial epochs model {file bytes crc32}
 *   evaluation: v kind time trial models source data data_fingerprint
 *            proteins scored overlap q3 q3_lo q3_hi sov identity_checked
 *            [identity_max identity_above [3] identity_left_out
 *            [coverage_max coverage_over]]
 *   failure: v kind time trial message
 *
 * Records are built with the json module's writer: floats with every digit
 * (json_num32_full, %.9g) and doubles too (json_num64_full, %.17g), so
 * reading back with strtof / strtod gives the same bits; a non-finite value
 * is the string "nan", "inf" or "-inf" (FS_JSON_NONFINITE_NAME). status is
 * "ok", "diverged" or "failed".
 *
 * Durability: the whole line goes out in one write() on an O_APPEND
 * descriptor, then fsync(); only then does the append return and the record
 * count in memory. A failed or short write is cut back off the file so the
 * next record starts on a clean line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal_internal.h"

static void put_curve(FsJsonOut *w, const char *name, const float *xs, int n)
{
    json_key(w, name);
    json_array_begin(w);
    for (int i = 0; xs && i < n; i++) json_num32_full(w, xs[i]);
    json_end(w);
}

double journal_wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A record's object, open, with its first members; journal_frame closes it. */
static void begin(FsJsonOut *w, const char *kind, double t)
{
    *w = (FsJsonOut){.nonfinite = FS_JSON_NONFINITE_NAME};
    json_object_begin(w);
    json_member_int(w, "v", FS_JOURNAL_VERSION);
    json_member_str(w, "kind", kind);
    json_key(w, "time");
    json_num64_full(w, t);
}

/* begin, then the trial id: a member of every record but run and sweep. */
static void begin_trial(FsJsonOut *w, const char *kind, double t, const char *trial)
{
    begin(w, kind, t);
    json_member_str(w, "trial", trial);
}

static const char *status_text(FsFitStatus s)
{
    return s == FS_FIT_OK ? "ok" : s == FS_FIT_DIVERGED ? "diverged" : "failed";
}

void journal_model_json(FsJsonOut *w, const FsModelRef *m)
{
    json_key(w, "model");
    json_object_begin(w);
    json_member_str(w, "file", m->file);
    json_member_uint(w, "bytes", (unsigned long long)m->bytes);
    json_key(w, "crc32");
    json_strf(w, "%08x", (unsigned)m->crc32);
    json_end(w);
}

/* The result's classes by its classes (3 x 3 as before 8 states, or 8 x 8:
 * the reader takes the class count from the rows). */
static void put_confusion(FsJsonOut *w, const uint64_t (*m)[FS_MAX_CLASSES], int classes)
{
    const int K = fs_classes(classes);
    json_key(w, "confusion");
    json_array_begin(w);
    for (int i = 0; i < K; i++) {
        json_array_begin(w);
        for (int k = 0; k < K; k++) json_uint(w, (unsigned long long)m[i][k]);
        json_end(w);
    }
    json_end(w);
}

void journal_fold_json(FsJsonOut *w, const char *trial, int fold, int seed, const FsFitResult *r,
                       const FsModelRef *model, double t)
{
    begin_trial(w, "fold", t, trial);
    int epochs = r->epochs > 0 ? r->epochs : 0;
    json_member_int(w, "fold", fold);
    if (seed) json_member_int(w, "seed", seed); /* absent: the trial's own seeds */
    json_member_str(w, "status", status_text(r->status));
    json_member_int(w, "epochs", epochs);
    json_member_int(w, "best_epoch", r->best_epoch);
    json_member_int(w, "halted_by", r->halted_by);
    json_member_int(w, "diverged_epoch", r->diverged_epoch);
    json_member_int(w, "diverged_step", r->diverged_step);
    /* What chose best_epoch, when not the validation loss (the default,
     * and every record before training.monitor: absent means loss). */
    if (r->monitor != FS_MONITOR_LOSS) json_member_str(w, "monitor", train_monitor_name(r->monitor));
    json_key(w, "best_val_loss");
    json_num32_full(w, r->best_val_loss);
    put_confusion(w, (const uint64_t(*)[FS_MAX_CLASSES])r->best_confusion, r->classes);
    json_member_uint(w, "train_examples", (unsigned long long)r->train_examples);
    json_member_uint(w, "val_examples", (unsigned long long)r->val_examples);
    json_key(w, "seconds");
    json_num64_full(w, r->seconds);
    json_key(w, "val_seconds");
    json_num64_full(w, r->val_seconds);
    if (r->gpu_path) json_member_str(w, "gpu_path", train_gpu_path_name(r->gpu_path));
    if (r->gpu_path == FS_GPU_PATH_LIBRARY && r->gpu_group > 0) json_member_uint(w, "gpu_group", (unsigned)r->gpu_group);
    json_key(w, "curves");
    json_object_begin(w);
    put_curve(w, "train_loss", r->curves.train_loss, epochs);
    put_curve(w, "val_loss", r->curves.val_loss, epochs);
    put_curve(w, "val_q3", r->curves.val_q3, epochs);
    put_curve(w, "seconds", r->curves.seconds, epochs);
    json_end(w);
    json_key(w, "message");
    json_strn(w, r->message, strnlen(r->message, sizeof r->message));
    if (model && model->file[0]) journal_model_json(w, model);
}

/* ---------------------------------------------------------------------- */
/* Durable append                                                           */

/* Appends the record in w (begun by begin: its object still open),
 * framed (journal_frame), with one write and an fsync; frees w. 0 or -1
 * with err. */
static int append_line(FsJournal *j, FsJsonOut *w, FsErr *err)
{
    int rc = -1;
    double t0 = fs_now();
    journal_frame(w);
    size_t done = 0;
    if (j->read_only || j->fd < 0) {
        fs_err_set(err, "%s: the journal is open read-only", j->path ? j->path : "journal");
        goto out;
    }
    if (json_out_error(w)) { /* a bug: the record's fields are checked before */
        fs_err_set(err, "%s: a record could not be written as JSON (%s)", j->path, json_out_error(w));
        goto out;
    }
    while (done < w->n) {
        ssize_t k = write(j->fd, w->p + done, w->n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            /* Cut a partial line back off so the next record starts clean. */
            if (done && ftruncate(j->fd, (off_t)j->size) == 0) (void)fsync(j->fd);
            fs_err_set(err, "%s: cannot append a record: %s", j->path, strerror(e));
            goto out;
        }
        done += (size_t)k;
    }
    if (fsync(j->fd) != 0) {
        int e = errno;
        if (ftruncate(j->fd, (off_t)j->size) == 0) (void)fsync(j->fd);
        fs_err_set(err, "%s: cannot sync the journal: %s", j->path, strerror(e));
        goto out;
    }
    j->size += (long long)w->n;
    j->lines++;
    j->write_seconds += fs_now() - t0;
    rc = 0;
out:
    json_out_free(w);
    return rc;
}

static int check_id(const char *trial, FsErr *err)
{
    size_t n = strlen(trial);
    if (n == 0 || n > FS_TRIAL_ID_LEN) {
        fs_err_set(err, "journal: trial id '%s' must be 1 to %d characters", trial, FS_TRIAL_ID_LEN);
        return -1;
    }
    return 0;
}

int journal_append_trial(FsJournal *j, const char *trial, int index, long n_params,
                         const char *config, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (journal_find_trial(j, trial)) return 0;
    FsJsonDoc doc;
    char why[128];
    const char *cfg = config ? config : "{}";
    if (json_parse(&doc, cfg, strlen(cfg), why, sizeof why)) {
        fs_err_set(err, "journal: trial %s: the config is not JSON (%s)", trial, why);
        return -1;
    }
    /* Verbatim unless a raw newline (only possible between tokens) would split the line. */
    char *compact = strpbrk(cfg, "\n\r") ? json_compact(doc.root) : fs_strdup(cfg);
    json_free(&doc);
    double t = journal_wall_time();
    FsJsonOut w;
    begin_trial(&w, "trial", t, trial);
    json_member_int(&w, "index", index);
    json_member_int(&w, "params", n_params);
    json_key(&w, "config");
    json_raw(&w, compact);
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_add_trial(j, trial, index, n_params, compact, t);
    free(compact);
    return rc;
}

int journal_append_fold(FsJournal *j, const char *trial, int fold, const FsFitResult *r,
                        const FsModelRef *model, FsErr *err)
{
    return journal_append_fold_seed(j, trial, fold, 0, r, model, err);
}

int journal_append_fold_seed(FsJournal *j, const char *trial, int fold, int seed, const FsFitResult *r,
                             const FsModelRef *model, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (seed < 0 || seed >= FS_MAX_SEEDS)
        return fs_err_set(err, "journal: trial %s fold %d: seed %d out of range 0..%d", trial, fold, seed,
                          FS_MAX_SEEDS - 1), -1;
    if (r->status != FS_FIT_OK && r->status != FS_FIT_DIVERGED && r->status != FS_FIT_FAILED) {
        /* A cancelled fold is no result: it is trained again on resume. */
        fs_err_set(err, "journal: trial %s fold %d: status %s is not a result to record", trial,
                   fold, train_status_name(r->status));
        return -1;
    }
    if (journal_find_fold_seed(j, trial, fold, seed)) return 0;
    char why[160];
    if (train_result_check(r, why, sizeof why) != 0) {
        fs_err_set(err, "journal: trial %s fold %d: %s: not written (it could not be read back)", trial, fold, why);
        return -1;
    }
    double t = journal_wall_time();
    FsJsonOut w;
    journal_fold_json(&w, trial, fold, seed, r, model, t);
    int rc = append_line(j, &w, err);
    /* A replicate's weights are not kept: its record names no model file. */
    if (rc == 0 && journal_add_fold(j, trial, fold, seed, r, t) && model && !seed)
        journal_set_model(j, trial, fold, model);
    return rc;
}

int journal_append_model(FsJournal *j, const char *trial, int fold, const FsModelRef *model, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (!journal_find_fold(j, trial, fold)) {
        fs_err_set(err, "journal: trial %s fold %d: a model record needs the fold's record first", trial, fold);
        return -1;
    }
    FsJsonOut w;
    begin_trial(&w, "model", journal_wall_time(), trial);
    json_member_int(&w, "fold", fold);
    journal_model_json(&w, model);
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_set_model(j, trial, fold, model);
    return rc;
}

int journal_append_refit(FsJournal *j, const char *trial, int epochs, const FsModelRef *model, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    FsRefitRecord r = {.epochs = epochs, .model = *model, .time = journal_wall_time()};
    snprintf(r.trial, sizeof r.trial, "%s", trial);
    FsJsonOut w;
    begin_trial(&w, "refit", r.time, trial);
    json_member_int(&w, "epochs", epochs);
    journal_model_json(&w, model);
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_add_refit(j, &r);
    return rc;
}

int journal_append_eval(FsJournal *j, const FsEvalRecord *e, FsErr *err)
{
    if (check_id(e->trial, err)) return -1;
    FsEvalRecord r = *e;
    r.time = journal_wall_time();
    FsJsonOut w;
    begin_trial(&w, "evaluation", r.time, r.trial);
    json_member_str(&w, "models", r.models);
    json_member_str(&w, "source", r.source);
    json_member_str(&w, "data", r.data);
    json_key(&w, "data_fingerprint");
    json_strf(&w, "%016llx", (unsigned long long)r.data_fingerprint);
    json_member_uint(&w, "proteins", (unsigned long long)r.proteins);
    json_member_uint(&w, "scored", (unsigned long long)r.scored);
    json_member_uint(&w, "overlap", (unsigned long long)r.overlap);
    const char *names[] = {"q3", "q3_lo", "q3_hi", "sov"};
    const double vals[] = {r.q3, r.q3_lo, r.q3_hi, r.sov};
    for (int i = 0; i < 4; i++) {
        json_key(&w, names[i]);
        json_num64_full(&w, vals[i]);
    }
    if (r.classes == FS_CLASSES8) { /* 8-state models only: a 3-state record is as before */
        json_key(&w, "q8");
        json_num64_full(&w, r.q8);
    }
    json_key(&w, "identity_checked");
    json_bool(&w, r.identity_checked > 0);
    if (r.identity_checked > 0) {
        json_key(&w, "identity_max");
        json_num64_full(&w, r.identity_max);
        json_key(&w, "identity_above");
        json_array_begin(&w);
        for (int i = 0; i < FS_IDENTITY_LEVELS; i++) json_uint(&w, (unsigned long long)r.identity_above[i]);
        json_end(&w);
        json_member_uint(&w, "identity_left_out", (unsigned long long)r.identity_left_out);
        json_key(&w, "coverage_max");
        json_num64_full(&w, r.coverage_max);
        json_member_uint(&w, "coverage_over", (unsigned long long)r.coverage_over);
    }
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_add_eval(j, &r);
    return rc;
}

int journal_append_discard(FsJournal *j, const char *trial, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (journal_is_discarded(j, trial)) return 0;
    FsJsonOut w;
    begin_trial(&w, "prune", journal_wall_time(), trial); /* the kind's name on disk (journal.h) */
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_add_discard(j, trial);
    return rc;
}

int journal_append_cut(FsJournal *j, const FsCutRecord *c, FsErr *err)
{
    if (check_id(c->trial, err)) return -1;
    if (journal_find_cut(j, c->trial)) return 0;
    if (c->fold < FS_FOLD_PREDEFINED || c->fold >= FS_MAX_FOLDS || c->epoch < 0 || c->epoch > FS_TRAIN_MAX_EPOCHS ||
        c->n_curve < 0 || c->n_curve > c->epoch)
        return fs_err_set(err, "%s: pruned record for trial %s out of range (fold %d, epoch %d, %d values)", j->path,
                          c->trial, c->fold, c->epoch, c->n_curve),
               -1;
    double t = journal_wall_time();
    FsJsonOut w;
    begin_trial(&w, "pruned", t, c->trial);
    json_member_int(&w, "fold", c->fold);
    json_member_int(&w, "epoch", c->epoch);
    json_member_str(&w, "rule", c->rule);
    json_key(&w, "value");
    json_num64_full(&w, c->value);
    json_key(&w, "threshold");
    json_num64_full(&w, c->threshold);
    json_member_str(&w, "reason", c->reason);
    put_curve(&w, "curve", c->curve, c->n_curve);
    int rc = append_line(j, &w, err);
    if (rc == 0) {
        FsCutRecord k = *c;
        k.time = t;
        journal_add_cut(j, &k);
    }
    return rc;
}

int journal_append_failure(FsJournal *j, const char *trial, const char *message, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (journal_find_failure(j, trial)) return 0;
    double t = journal_wall_time();
    FsJsonOut w;
    begin_trial(&w, "failure", t, trial);
    json_member_str(&w, "message", message ? message : "");
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_add_failure(j, trial, message ? message : "", t);
    return rc;
}

int journal_append_run(FsJournal *j, int n_trials, int folds, const char *metric, uint64_t data_fingerprint,
                       FsErr *err)
{
    FsRunRecord run = {.n_trials = n_trials, .folds = folds, .data_fingerprint = data_fingerprint};
    snprintf(run.metric, sizeof run.metric, "%s", metric ? metric : "");
    return journal_append_run_record(j, &run, err);
}

int journal_append_run_record(FsJournal *j, const FsRunRecord *what, FsErr *err)
{
    FsRunRecord run = *what;
    run.time = journal_wall_time();
    run.pid = (long)getpid();
    if (gethostname(run.host, sizeof run.host - 1) != 0) run.host[0] = '\0';
    run.host[sizeof run.host - 1] = '\0';
    FsJsonOut w;
    begin(&w, "run", run.time);
    json_member_int(&w, "pid", run.pid);
    json_member_str(&w, "host", run.host);
    json_member_int(&w, "trials", run.n_trials);
    json_member_int(&w, "folds", run.folds);
    json_member_str(&w, "metric", run.metric);
    if (run.data_fingerprint) {
        json_key(&w, "data_fingerprint");
        json_strf(&w, "%016llx", (unsigned long long)run.data_fingerprint);
    }
    if (run.ranks > 0) json_member_int(&w, "ranks", run.ranks);
    if (run.backend[0]) json_member_str(&w, "backend", run.backend);
    if (run.device[0]) json_member_str(&w, "device", run.device);
    if (run.feature_columns > 0) json_member_int(&w, "feature_columns", run.feature_columns);
    if (run.sweep_file[0]) json_member_str(&w, "sweep_file", run.sweep_file);
    json_member_str(&w, "version", FS_VERSION);
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_add_run(j, &run);
    return rc;
}

static int same_sweep(const FsJournal *j, const char *canonical, const uint64_t *val, int n_val)
{
    return j->sweep_text && !strcmp(j->sweep_text, canonical) && j->n_sweep_val == n_val &&
           (n_val == 0 || !memcmp(j->sweep_val, val, sizeof *val * (size_t)n_val));
}

int journal_append_sweep(FsJournal *j, const char *canonical, const uint64_t *val_residues, int n_val, FsErr *err)
{
    if (same_sweep(j, canonical, val_residues, n_val)) return 0;
    FsJsonOut w;
    begin(&w, "sweep", journal_wall_time());
    json_member_str(&w, "text", canonical);
    json_key(&w, "val_residues");
    json_array_begin(&w);
    for (int k = 0; k < n_val; k++) json_uint(&w, (unsigned long long)val_residues[k]);
    json_end(&w);
    int rc = append_line(j, &w, err);
    if (rc == 0) journal_set_sweep_record(j, canonical, val_residues, n_val);
    return rc;
}
