/*
 * journal_write.c: record text and the durable append.
 *
 * A line is one JSON object and '\n'; its last member, "crc", is the
 * checksum of the bytes before it (frame.c). Field order is fixed; every
 * record has "v" (FS_JOURNAL_VERSION), "kind" and "time" (Unix seconds,
 * %.17g), and ends with "crc".
 *
 *   run:     v kind time pid host trials folds metric [data_fingerprint]
 *            [ranks backend device] (how the session runs) version
 *   trial:   v kind time trial index params config (the JSON object itself)
 *   fold:    v kind time trial fold status epochs best_epoch halted_by
 *            diverged_epoch diverged_step [monitor] best_val_loss confusion (3x3)
 *            train_examples val_examples seconds val_seconds
 *            curves {train_loss, val_loss, val_q3, seconds} (epochs entries) message
 *            [model {file bytes crc32}] (the saved weights, when kept);
 *            monitor "q3" when validation Q3 chose best_epoch (absent: the loss)
 *   model:   v kind time trial fold model {file bytes crc32}
 *   sweep:   v kind time text (the canonical sweep) val_residues (per fold)
 *   prune:   v kind time trial (its model files were discarded: run.keep_models;
 *            journal_append_discard)
 *   pruned:  v kind time trial fold epoch rule value threshold reason curve
 *            (the sweep's pruner stopped the trial there; src/prune)
 *   refit:   v kind time trial epochs model {file bytes crc32}
 *   evaluation: v kind time trial models source data data_fingerprint
 *            proteins scored overlap q3 q3_lo q3_hi sov identity_checked
 *            [identity_max identity_above [3] identity_left_out]
 *   failure: v kind time trial message
 *
 * Floats are written with %.9g and doubles with %.17g, so reading back with
 * strtof / strtod gives the same bits; a non-finite value is the string
 * "nan", "inf" or "-inf". status is "ok", "diverged" or "failed".
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

#ifndef FS_VERSION
#define FS_VERSION "0.1.0"
#endif

static void put_float(JBuf *b, float x)
{
    if (isnan(x))
        jbuf_lit(b, "\"nan\"");
    else if (isinf(x))
        jbuf_printf(b, "\"%sinf\"", x < 0 ? "-" : "");
    else
        jbuf_printf(b, "%.9g", (double)x);
}

static void put_double(JBuf *b, double x)
{
    if (isnan(x))
        jbuf_lit(b, "\"nan\"");
    else if (isinf(x))
        jbuf_printf(b, "\"%sinf\"", x < 0 ? "-" : "");
    else
        jbuf_printf(b, "%.17g", x);
}

static void put_curve(JBuf *b, const char *name, const float *xs, int n)
{
    jbuf_printf(b, "\"%s\":[", name);
    for (int i = 0; xs && i < n; i++) {
        if (i) jbuf_lit(b, ",");
        put_float(b, xs[i]);
    }
    jbuf_lit(b, "]");
}

double journal_wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void begin(JBuf *b, const char *kind, double t)
{
    b->n = 0;
    jbuf_printf(b, "{\"v\":%d,\"kind\":\"%s\",\"time\":", FS_JOURNAL_VERSION, kind);
    put_double(b, t);
}

static const char *status_text(FsFitStatus s)
{
    return s == FS_FIT_OK ? "ok" : s == FS_FIT_DIVERGED ? "diverged" : "failed";
}

void journal_model_json(JBuf *b, const FsModelRef *m)
{
    jbuf_lit(b, ",\"model\":{\"file\":");
    jbuf_string(b, m->file);
    jbuf_printf(b, ",\"bytes\":%llu,\"crc32\":\"%08x\"}", (unsigned long long)m->bytes, (unsigned)m->crc32);
}

void journal_fold_json(JBuf *b, const char *trial, int fold, const FsFitResult *r, const FsModelRef *model,
                       double t)
{
    begin(b, "fold", t);
    jbuf_lit(b, ",\"trial\":");
    jbuf_string(b, trial);
    int epochs = r->epochs > 0 ? r->epochs : 0;
    jbuf_printf(b,
                ",\"fold\":%d,\"status\":\"%s\",\"epochs\":%d,\"best_epoch\":%d,\"halted_by\":%d,"
                "\"diverged_epoch\":%d,\"diverged_step\":%ld",
                fold, status_text(r->status), epochs, r->best_epoch, r->halted_by,
                r->diverged_epoch, r->diverged_step);
    /* What chose best_epoch, when not the validation loss (the default,
     * and every record before training.monitor: absent means loss). */
    if (r->monitor != FS_MONITOR_LOSS) jbuf_printf(b, ",\"monitor\":\"%s\"", train_monitor_name(r->monitor));
    jbuf_lit(b, ",\"best_val_loss\":");
    put_float(b, r->best_val_loss);
    jbuf_lit(b, ",\"confusion\":[");
    for (int i = 0; i < 3; i++)
        jbuf_printf(b, "%s[%llu,%llu,%llu]", i ? "," : "",
                    (unsigned long long)r->best_confusion[i][0],
                    (unsigned long long)r->best_confusion[i][1],
                    (unsigned long long)r->best_confusion[i][2]);
    jbuf_printf(b, "],\"train_examples\":%llu,\"val_examples\":%llu,\"seconds\":",
                (unsigned long long)r->train_examples, (unsigned long long)r->val_examples);
    put_double(b, r->seconds);
    jbuf_lit(b, ",\"val_seconds\":");
    put_double(b, r->val_seconds);
    jbuf_lit(b, ",\"curves\":{");
    put_curve(b, "train_loss", r->curves.train_loss, epochs);
    jbuf_lit(b, ",");
    put_curve(b, "val_loss", r->curves.val_loss, epochs);
    jbuf_lit(b, ",");
    put_curve(b, "val_q3", r->curves.val_q3, epochs);
    jbuf_lit(b, ",");
    put_curve(b, "seconds", r->curves.seconds, epochs);
    char msg[sizeof r->message + 1];
    memcpy(msg, r->message, sizeof r->message);
    msg[sizeof r->message] = '\0';
    jbuf_lit(b, "},\"message\":");
    jbuf_string(b, msg);
    if (model && model->file[0]) journal_model_json(b, model);
    jbuf_lit(b, "}");
}

/* ---------------------------------------------------------------------- */
/* Durable append                                                           */

/* Appends the record in b, framed (journal_frame), with one write and an
 * fsync. 0 or -1 with err. */
static int append_line(FsJournal *j, JBuf *b, FsErr *err)
{
    if (j->read_only || j->fd < 0) {
        fs_err_set(err, "%s: the journal is open read-only", j->path ? j->path : "journal");
        return -1;
    }
    double t0 = fs_now();
    journal_frame(b);
    size_t done = 0;
    while (done < b->n) {
        ssize_t k = write(j->fd, b->p + done, b->n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            /* Cut a partial line back off so the next record starts clean. */
            if (done && ftruncate(j->fd, (off_t)j->size) == 0) (void)fsync(j->fd);
            fs_err_set(err, "%s: cannot append a record: %s", j->path, strerror(e));
            return -1;
        }
        done += (size_t)k;
    }
    if (fsync(j->fd) != 0) {
        int e = errno;
        if (ftruncate(j->fd, (off_t)j->size) == 0) (void)fsync(j->fd);
        fs_err_set(err, "%s: cannot sync the journal: %s", j->path, strerror(e));
        return -1;
    }
    j->size += (long long)b->n;
    j->lines++;
    j->write_seconds += fs_now() - t0;
    return 0;
}

static int check_id(const char *trial, FsErr *err)
{
    size_t n = strlen(trial);
    if (n == 0 || n > 16) {
        fs_err_set(err, "journal: trial id '%s' must be 1 to 16 characters", trial);
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
    if (journal_json_parse(&doc, cfg, strlen(cfg), why, sizeof why)) {
        fs_err_set(err, "journal: trial %s: the config is not JSON (%s)", trial, why);
        return -1;
    }
    /* Verbatim unless a raw newline (only possible between tokens) would split the line. */
    char *compact = strpbrk(cfg, "\n\r") ? journal_json_compact(doc.root) : fs_strdup(cfg);
    journal_json_free(&doc);
    double t = journal_wall_time();
    JBuf b = {0};
    begin(&b, "trial", t);
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, trial);
    jbuf_printf(&b, ",\"index\":%d,\"params\":%ld,\"config\":", index, n_params);
    jbuf_put(&b, compact, strlen(compact));
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
    if (rc == 0) journal_add_trial(j, trial, index, n_params, compact, t);
    free(compact);
    return rc;
}

int journal_append_fold(FsJournal *j, const char *trial, int fold, const FsFitResult *r,
                        const FsModelRef *model, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (r->status != FS_FIT_OK && r->status != FS_FIT_DIVERGED && r->status != FS_FIT_FAILED) {
        /* A cancelled fold is no result: it is trained again on resume. */
        fs_err_set(err, "journal: trial %s fold %d: status %s is not a result to record", trial,
                   fold, train_status_name(r->status));
        return -1;
    }
    if (journal_find_fold(j, trial, fold)) return 0;
    char why[160];
    if (train_result_check(r, why, sizeof why) != 0) {
        fs_err_set(err, "journal: trial %s fold %d: %s: not written (it could not be read back)", trial, fold, why);
        return -1;
    }
    double t = journal_wall_time();
    JBuf b = {0};
    journal_fold_json(&b, trial, fold, r, model, t);
    int rc = append_line(j, &b, err);
    free(b.p);
    if (rc == 0 && journal_add_fold(j, trial, fold, r, t) && model) journal_set_model(j, trial, fold, model);
    return rc;
}

int journal_append_model(FsJournal *j, const char *trial, int fold, const FsModelRef *model, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (!journal_find_fold(j, trial, fold)) {
        fs_err_set(err, "journal: trial %s fold %d: a model record needs the fold's record first", trial, fold);
        return -1;
    }
    double t = journal_wall_time();
    JBuf b = {0};
    begin(&b, "model", t);
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, trial);
    jbuf_printf(&b, ",\"fold\":%d", fold);
    journal_model_json(&b, model);
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
    if (rc == 0) journal_set_model(j, trial, fold, model);
    return rc;
}

int journal_append_refit(FsJournal *j, const char *trial, int epochs, const FsModelRef *model, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    FsRefitRecord r = {.epochs = epochs, .model = *model, .time = journal_wall_time()};
    snprintf(r.trial, sizeof r.trial, "%s", trial);
    JBuf b = {0};
    begin(&b, "refit", r.time);
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, trial);
    jbuf_printf(&b, ",\"epochs\":%d", epochs);
    journal_model_json(&b, model);
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
    if (rc == 0) journal_add_refit(j, &r);
    return rc;
}

int journal_append_eval(FsJournal *j, const FsEvalRecord *e, FsErr *err)
{
    if (check_id(e->trial, err)) return -1;
    FsEvalRecord r = *e;
    r.time = journal_wall_time();
    JBuf b = {0};
    begin(&b, "evaluation", r.time);
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, r.trial);
    jbuf_lit(&b, ",\"models\":");
    jbuf_string(&b, r.models);
    jbuf_lit(&b, ",\"source\":");
    jbuf_string(&b, r.source);
    jbuf_lit(&b, ",\"data\":");
    jbuf_string(&b, r.data);
    jbuf_printf(&b, ",\"data_fingerprint\":\"%016llx\",\"proteins\":%llu,\"scored\":%llu,\"overlap\":%llu,\"q3\":",
                (unsigned long long)r.data_fingerprint, (unsigned long long)r.proteins,
                (unsigned long long)r.scored, (unsigned long long)r.overlap);
    put_double(&b, r.q3);
    jbuf_lit(&b, ",\"q3_lo\":");
    put_double(&b, r.q3_lo);
    jbuf_lit(&b, ",\"q3_hi\":");
    put_double(&b, r.q3_hi);
    jbuf_lit(&b, ",\"sov\":");
    put_double(&b, r.sov);
    jbuf_printf(&b, ",\"identity_checked\":%s", r.identity_checked > 0 ? "true" : "false");
    if (r.identity_checked > 0) {
        jbuf_lit(&b, ",\"identity_max\":");
        put_double(&b, r.identity_max);
        jbuf_printf(&b, ",\"identity_above\":[%llu,%llu,%llu],\"identity_left_out\":%llu",
                    (unsigned long long)r.identity_above[0], (unsigned long long)r.identity_above[1],
                    (unsigned long long)r.identity_above[2], (unsigned long long)r.identity_left_out);
    }
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
    if (rc == 0) journal_add_eval(j, &r);
    return rc;
}

int journal_append_discard(FsJournal *j, const char *trial, FsErr *err)
{
    if (check_id(trial, err)) return -1;
    if (journal_is_discarded(j, trial)) return 0;
    double t = journal_wall_time();
    JBuf b = {0};
    begin(&b, "prune", t); /* the kind's name on disk (journal.h) */
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, trial);
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
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
    JBuf b = {0};
    begin(&b, "pruned", t);
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, c->trial);
    jbuf_printf(&b, ",\"fold\":%d,\"epoch\":%d,\"rule\":", c->fold, c->epoch);
    jbuf_string(&b, c->rule);
    jbuf_lit(&b, ",\"value\":");
    put_double(&b, c->value);
    jbuf_lit(&b, ",\"threshold\":");
    put_double(&b, c->threshold);
    jbuf_lit(&b, ",\"reason\":");
    jbuf_string(&b, c->reason);
    jbuf_lit(&b, ",");
    put_curve(&b, "curve", c->curve, c->n_curve);
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
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
    JBuf b = {0};
    begin(&b, "failure", t);
    jbuf_lit(&b, ",\"trial\":");
    jbuf_string(&b, trial);
    jbuf_lit(&b, ",\"message\":");
    jbuf_string(&b, message ? message : "");
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
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
    JBuf b = {0};
    begin(&b, "run", run.time);
    jbuf_printf(&b, ",\"pid\":%ld,\"host\":", run.pid);
    jbuf_string(&b, run.host);
    jbuf_printf(&b, ",\"trials\":%d,\"folds\":%d,\"metric\":", run.n_trials, run.folds);
    jbuf_string(&b, run.metric);
    if (run.data_fingerprint)
        jbuf_printf(&b, ",\"data_fingerprint\":\"%016llx\"", (unsigned long long)run.data_fingerprint);
    if (run.ranks > 0) jbuf_printf(&b, ",\"ranks\":%d", run.ranks);
    if (run.backend[0]) jbuf_lit(&b, ",\"backend\":"), jbuf_string(&b, run.backend);
    if (run.device[0]) jbuf_lit(&b, ",\"device\":"), jbuf_string(&b, run.device);
    jbuf_lit(&b, ",\"version\":");
    jbuf_string(&b, FS_VERSION);
    jbuf_lit(&b, "}");
    int rc = append_line(j, &b, err);
    free(b.p);
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
    JBuf b = {0};
    begin(&b, "sweep", journal_wall_time());
    jbuf_lit(&b, ",\"text\":");
    jbuf_string(&b, canonical);
    jbuf_lit(&b, ",\"val_residues\":[");
    for (int k = 0; k < n_val; k++) jbuf_printf(&b, "%s%llu", k ? "," : "", (unsigned long long)val_residues[k]);
    jbuf_lit(&b, "]}");
    int rc = append_line(j, &b, err);
    free(b.p);
    if (rc == 0) journal_set_sweep_record(j, canonical, val_residues, n_val);
    return rc;
}
