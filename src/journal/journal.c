/*
 * journal.c: opening and reading the journal, the in-memory record lists
 * and their lookups. (Record text and the durable append are in
 * journal_write.c, the JSON reader in json.c.)
 *
 * Reading: every line must be "JSON #crc8"; the last line may be torn (no
 * newline) or corrupt (bad CRC, bad JSON): it is dropped, and journal_open
 * truncates the file back to the last good line so appends start clean. A
 * bad line anywhere else is an error naming the line, and nothing is
 * changed, so no record is ever lost to a repair. A record whose checksum
 * is right but whose content is not understood (a newer format version, a
 * missing field) is an error even on the last line: it was written whole.
 */
#define _GNU_SOURCE
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_internal.h"

/* ---------------------------------------------------------------------- */
/* Hash indexes: (trial, fold) -> folds[i], trial -> trials[i]              */

static uint64_t key_hash(const char *trial, int fold)
{
    uint64_t h = fs_fnv1a64(trial, strlen(trial), FS_FNV_OFFSET);
    uint32_t f = (uint32_t)fold;
    return fs_fnv1a64(&f, sizeof f, h);
}

static void index_put(int **tab, int *cap, int n_used, uint64_t h, int value,
                      uint64_t (*rehash)(const FsJournal *, int), const FsJournal *j)
{
    if ((n_used + 1) * 2 > *cap) { /* grow to keep the load under 1/2 */
        int ncap = *cap ? *cap * 2 : 64;
        int *nt = fs_malloc((size_t)ncap * sizeof *nt);
        for (int i = 0; i < ncap; i++) nt[i] = -1;
        for (int i = 0; i < *cap; i++) {
            if ((*tab)[i] < 0) continue;
            uint64_t hh = rehash(j, (*tab)[i]);
            int s = (int)(hh & (uint64_t)(ncap - 1));
            while (nt[s] >= 0) s = (s + 1) & (ncap - 1);
            nt[s] = (*tab)[i];
        }
        free(*tab);
        *tab = nt;
        *cap = ncap;
    }
    int s = (int)(h & (uint64_t)(*cap - 1));
    while ((*tab)[s] >= 0) s = (s + 1) & (*cap - 1);
    (*tab)[s] = value;
}

static uint64_t fold_rehash(const FsJournal *j, int i)
{
    return key_hash(j->folds[i].trial, j->folds[i].fold);
}
static uint64_t trial_rehash(const FsJournal *j, int i) { return key_hash(j->trials[i].trial, 0); }

const FsFoldRecord *journal_find_fold(const FsJournal *j, const char *trial, int fold)
{
    if (!j->fold_index_cap) return NULL;
    int m = j->fold_index_cap - 1;
    for (int s = (int)(key_hash(trial, fold) & (uint64_t)m); j->fold_index[s] >= 0;
         s = (s + 1) & m) {
        const FsFoldRecord *r = &j->folds[j->fold_index[s]];
        if (r->fold == fold && !strcmp(r->trial, trial)) return r;
    }
    return NULL;
}

const FsTrialRecord *journal_find_trial(const FsJournal *j, const char *trial)
{
    if (!j->trial_index_cap) return NULL;
    int m = j->trial_index_cap - 1;
    for (int s = (int)(key_hash(trial, 0) & (uint64_t)m); j->trial_index[s] >= 0; s = (s + 1) & m) {
        const FsTrialRecord *r = &j->trials[j->trial_index[s]];
        if (!strcmp(r->trial, trial)) return r;
    }
    return NULL;
}

const FsFailureRecord *journal_find_failure(const FsJournal *j, const char *trial)
{
    for (int i = 0; i < j->n_failures; i++)
        if (!strcmp(j->failures[i].trial, trial)) return &j->failures[i];
    return NULL;
}

const FsRunRecord *journal_last_run(const FsJournal *j)
{
    return j->n_runs ? &j->runs[j->n_runs - 1] : NULL;
}

/* ---------------------------------------------------------------------- */
/* Adding records (first of a key wins)                                     */

#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 16;                                                          \
            (arr) = fs_realloc((arr), (size_t)(cap) * sizeof *(arr));                              \
        }                                                                                          \
    } while (0)

int journal_add_trial(FsJournal *j, const char *trial, int index, long n_params, const char *config,
                      double t)
{
    if (journal_find_trial(j, trial)) return 0;
    GROW(j->trials, j->n_trials, j->cap_trials);
    FsTrialRecord *r = &j->trials[j->n_trials];
    memset(r, 0, sizeof *r);
    snprintf(r->trial, sizeof r->trial, "%s", trial);
    r->index = index;
    r->n_params = n_params;
    r->config = fs_strdup(config);
    r->time = t;
    index_put(&j->trial_index, &j->trial_index_cap, j->n_trials, key_hash(trial, 0), j->n_trials,
              trial_rehash, j);
    j->n_trials++;
    return 1;
}

static void copy_curve(float *dst, const float *src, int n)
{
    if (src && n > 0) memcpy(dst, src, (size_t)n * sizeof *dst);
}

int journal_add_fold(FsJournal *j, const char *trial, int fold, const FsFitResult *r, double t)
{
    if (journal_find_fold(j, trial, fold)) return 0;
    GROW(j->folds, j->n_folds, j->cap_folds);
    FsFoldRecord *f = &j->folds[j->n_folds];
    memset(f, 0, sizeof *f);
    snprintf(f->trial, sizeof f->trial, "%s", trial);
    f->fold = fold;
    f->time = t;
    int epochs = r->epochs > 0 ? r->epochs : 0;
    train_result_alloc(&f->r, epochs);
    FsCurves c = f->r.curves;
    f->r = *r;
    f->r.curves = c;
    f->r.weights = NULL; /* the journal keeps scores, never weights */
    f->r.n_weights = 0;
    f->r.epochs = epochs;
    copy_curve(c.train_loss, r->curves.train_loss, epochs);
    copy_curve(c.val_loss, r->curves.val_loss, epochs);
    copy_curve(c.val_q3, r->curves.val_q3, epochs);
    copy_curve(c.seconds, r->curves.seconds, epochs);
    index_put(&j->fold_index, &j->fold_index_cap, j->n_folds, key_hash(trial, fold), j->n_folds,
              fold_rehash, j);
    j->n_folds++;
    return 1;
}

int journal_add_failure(FsJournal *j, const char *trial, const char *message, double t)
{
    if (journal_find_failure(j, trial)) return 0;
    GROW(j->failures, j->n_failures, j->cap_failures);
    FsFailureRecord *r = &j->failures[j->n_failures++];
    snprintf(r->trial, sizeof r->trial, "%s", trial);
    r->message = fs_strdup(message);
    r->time = t;
    return 1;
}

void journal_add_run(FsJournal *j, const FsRunRecord *run)
{
    GROW(j->runs, j->n_runs, j->cap_runs);
    j->runs[j->n_runs++] = *run;
}

int journal_set_model(FsJournal *j, const char *trial, int fold, const FsModelRef *m)
{
    FsFoldRecord *f = (FsFoldRecord *)journal_find_fold(j, trial, fold);
    if (!f) return -1;
    f->model = *m;
    return 0;
}

int journal_is_pruned(const FsJournal *j, const char *trial)
{
    for (int i = 0; i < j->n_pruned; i++)
        if (!strcmp(j->pruned[i], trial)) return 1;
    return 0;
}

void journal_add_eval(FsJournal *j, const FsEvalRecord *e)
{
    GROW(j->evals, j->n_evals, j->cap_evals);
    j->evals[j->n_evals++] = *e;
}

const FsEvalRecord *journal_find_eval(const FsJournal *j, const char *trial, const char *models, const char *source,
                                      uint64_t data_fingerprint)
{
    for (int i = j->n_evals - 1; i >= 0; i--) {
        const FsEvalRecord *e = &j->evals[i];
        if (!strcmp(e->trial, trial) && !strcmp(e->models, models) && !strcmp(e->source, source) &&
            e->data_fingerprint == data_fingerprint)
            return e;
    }
    return NULL;
}

void journal_add_refit(FsJournal *j, const FsRefitRecord *r)
{
    GROW(j->refits, j->n_refits, j->cap_refits);
    j->refits[j->n_refits++] = *r;
}

const FsRefitRecord *journal_find_refit(const FsJournal *j, const char *trial)
{
    for (int i = j->n_refits - 1; i >= 0; i--)
        if (!strcmp(j->refits[i].trial, trial)) return &j->refits[i];
    return NULL;
}

void journal_add_cut(FsJournal *j, const FsCutRecord *c)
{
    if (journal_find_cut(j, c->trial)) return;
    GROW(j->cuts, j->n_cuts, j->cap_cuts);
    FsCutRecord *k = &j->cuts[j->n_cuts++];
    *k = *c;
    k->curve = fs_calloc((size_t)c->n_curve + 1, sizeof(float));
    if (c->n_curve) memcpy(k->curve, c->curve, sizeof(float) * (size_t)c->n_curve);
}

const FsCutRecord *journal_find_cut(const FsJournal *j, const char *trial)
{
    for (int i = 0; i < j->n_cuts; i++)
        if (!strcmp(j->cuts[i].trial, trial)) return &j->cuts[i];
    return NULL;
}

void journal_add_prune(FsJournal *j, const char *trial)
{
    if (journal_is_pruned(j, trial)) return;
    GROW(j->pruned, j->n_pruned, j->cap_pruned);
    snprintf(j->pruned[j->n_pruned++], 17, "%s", trial);
}

/* ---------------------------------------------------------------------- */
/* Decoding one line                                                        */

enum { LINE_OK = 0, LINE_CORRUPT = -1, LINE_INVALID = -2 };

static int get_int(const FsJson *rec, const char *key, long long lo, long long hi, long long *out)
{
    return journal_json_i64(journal_json_get(rec, key), out) || *out < lo || *out > hi ? -1 : 0;
}

static int get_id(const FsJson *rec, char out[17])
{
    const FsJson *v = journal_json_get(rec, "trial");
    if (!v || v->type != FS_JSON_STRING || v->len == 0 || v->len > 16 || strlen(v->str) != v->len)
        return -1;
    memcpy(out, v->str, v->len + 1);
    return 0;
}

static int get_curve(const FsJson *curves, const char *key, float *dst, int epochs)
{
    const FsJson *a = journal_json_get(curves, key);
    if (!a) return 0; /* absent: zeros */
    if (a->type != FS_JSON_ARRAY || a->n > epochs) return -1;
    int i = 0;
    for (const FsJson *c = a->child; c; c = c->next, i++)
        if (journal_json_f32(c, &dst[i])) return -1;
    return 0;
}

/* "model": {"file": relative path, "bytes": N, "crc32": "8 hex digits"} */
static int get_model(const FsJson *rec, FsModelRef *m)
{
    const FsJson *o = journal_json_get(rec, "model"), *f, *c;
    memset(m, 0, sizeof *m);
    if (!o) return 0;
    f = journal_json_get(o, "file");
    c = journal_json_get(o, "crc32");
    if (o->type != FS_JSON_OBJECT || !f || f->type != FS_JSON_STRING || f->len == 0 ||
        f->len >= sizeof m->file || strlen(f->str) != f->len || strstr(f->str, "..") || f->str[0] == '/' ||
        journal_json_u64(journal_json_get(o, "bytes"), &m->bytes) || !c || c->type != FS_JSON_STRING ||
        c->len != 8 || strspn(c->str, "0123456789abcdef") != 8)
        return -1;
    memcpy(m->file, f->str, f->len + 1);
    m->crc32 = (uint32_t)strtoul(c->str, NULL, 16);
    return 0;
}

static int decode_fold(FsJournal *j, const FsJson *rec, double t, const char **what)
{
    char trial[17];
    long long fold, epochs, best, halted = 0, dep = 0, dstep = 0;
    const FsJson *st = journal_json_get(rec, "status");
    *what = "a fold record with trial, fold, status, epochs, best_epoch, best_val_loss, confusion";
    if (get_id(rec, trial) || get_int(rec, "fold", -1, 1 << 20, &fold) || !st ||
        st->type != FS_JSON_STRING || get_int(rec, "epochs", 0, FS_TRAIN_MAX_EPOCHS, &epochs) ||
        get_int(rec, "best_epoch", 0, epochs, &best))
        return -1;
    FsFitStatus status;
    if (!strcmp(st->str, "ok"))
        status = FS_FIT_OK;
    else if (!strcmp(st->str, "diverged"))
        status = FS_FIT_DIVERGED;
    else if (!strcmp(st->str, "failed"))
        status = FS_FIT_FAILED;
    else
        return *what = "status ok, diverged or failed", -1;
    if (journal_json_get(rec, "halted_by") && get_int(rec, "halted_by", 0, 1, &halted)) return -1;
    if (journal_json_get(rec, "diverged_epoch") && get_int(rec, "diverged_epoch", 0, epochs + 1, &dep))
        return -1;
    if (journal_json_get(rec, "diverged_step") &&
        get_int(rec, "diverged_step", 0, (long long)1 << 62, &dstep))
        return -1;
    FsFitResult r;
    train_result_alloc(&r, (int)epochs);
    r.status = status;
    r.epochs = (int)epochs;
    r.best_epoch = (int)best;
    r.halted_by = (int)halted;
    r.diverged_epoch = (int)dep;
    r.diverged_step = (long)dstep;
    int bad = journal_json_f32(journal_json_get(rec, "best_val_loss"), &r.best_val_loss);
    const FsJson *cm = journal_json_get(rec, "confusion");
    for (int a = 0; a < 3 && !bad; a++)
        for (int b = 0; b < 3 && !bad; b++)
            bad = journal_json_u64(journal_json_at(journal_json_at(cm, a), b),
                                   &r.best_confusion[a][b]);
    const FsJson *v;
    if (!bad && (v = journal_json_get(rec, "train_examples")))
        bad = journal_json_u64(v, &r.train_examples);
    if (!bad && (v = journal_json_get(rec, "val_examples")))
        bad = journal_json_u64(v, &r.val_examples);
    if (!bad && (v = journal_json_get(rec, "seconds"))) bad = journal_json_f64(v, &r.seconds);
    if (!bad && (v = journal_json_get(rec, "val_seconds")))
        bad = journal_json_f64(v, &r.val_seconds);
    const FsJson *cv = journal_json_get(rec, "curves");
    if (!bad && cv) {
        bad = cv->type != FS_JSON_OBJECT ||
              get_curve(cv, "train_loss", r.curves.train_loss, r.epochs) ||
              get_curve(cv, "val_loss", r.curves.val_loss, r.epochs) ||
              get_curve(cv, "val_q3", r.curves.val_q3, r.epochs) ||
              get_curve(cv, "seconds", r.curves.seconds, r.epochs);
        if (bad) *what = "curves of at most 'epochs' numbers each";
    }
    if (!bad && (v = journal_json_get(rec, "message"))) {
        if (v->type != FS_JSON_STRING)
            bad = 1;
        else
            snprintf(r.message, sizeof r.message, "%s", v->str);
    }
    FsModelRef model;
    if (!bad && get_model(rec, &model)) {
        bad = 1;
        *what = "model {file (relative), bytes, crc32 (8 hex digits)}";
    }
    if (!bad) {
        if (!journal_add_fold(j, trial, (int)fold, &r, t))
            j->duplicates++;
        else if (model.file[0])
            journal_set_model(j, trial, (int)fold, &model);
    }
    train_result_free(&r);
    return bad ? -1 : 0;
}

static int get_str(const FsJson *rec, const char *key, char *out, size_t n)
{
    const FsJson *v = journal_json_get(rec, key);
    if (!v || v->type != FS_JSON_STRING || v->len >= n || strlen(v->str) != v->len) return -1;
    memcpy(out, v->str, v->len + 1);
    return 0;
}

static int decode_eval(FsJournal *j, const FsJson *rec, double t)
{
    FsEvalRecord e;
    char fp[20];
    memset(&e, 0, sizeof e);
    e.time = t;
    e.q3_lo = e.q3_hi = e.sov = NAN;
    if (get_id(rec, e.trial) || get_str(rec, "models", e.models, sizeof e.models) ||
        get_str(rec, "source", e.source, sizeof e.source) || get_str(rec, "data", e.data, sizeof e.data) ||
        get_str(rec, "data_fingerprint", fp, sizeof fp) || strlen(fp) != 16 ||
        strspn(fp, "0123456789abcdef") != 16 || journal_json_f64(journal_json_get(rec, "q3"), &e.q3))
        return -1;
    e.data_fingerprint = strtoull(fp, NULL, 16);
    const FsJson *v;
    if ((v = journal_json_get(rec, "proteins")) && journal_json_u64(v, &e.proteins)) return -1;
    if ((v = journal_json_get(rec, "scored")) && journal_json_u64(v, &e.scored)) return -1;
    if ((v = journal_json_get(rec, "overlap")) && journal_json_u64(v, &e.overlap)) return -1;
    if ((v = journal_json_get(rec, "q3_lo")) && journal_json_f64(v, &e.q3_lo)) return -1;
    if ((v = journal_json_get(rec, "q3_hi")) && journal_json_f64(v, &e.q3_hi)) return -1;
    if ((v = journal_json_get(rec, "sov")) && journal_json_f64(v, &e.sov)) return -1;
    journal_add_eval(j, &e);
    return 0;
}

static int decode_cut(FsJournal *j, const FsJson *rec, double t)
{
    FsCutRecord c = {.time = t};
    long long fold, epoch;
    const FsJson *cv = journal_json_get(rec, "curve");
    if (get_id(rec, c.trial) || get_int(rec, "fold", FS_FOLD_PREDEFINED, 255, &fold) ||
        get_int(rec, "epoch", 0, FS_TRAIN_MAX_EPOCHS, &epoch) || get_str(rec, "rule", c.rule, sizeof c.rule) ||
        get_str(rec, "reason", c.reason, sizeof c.reason) ||
        journal_json_f64(journal_json_get(rec, "value"), &c.value) ||
        journal_json_f64(journal_json_get(rec, "threshold"), &c.threshold) || !cv || cv->type != FS_JSON_ARRAY ||
        cv->n > epoch)
        return -1;
    c.fold = (int)fold;
    c.epoch = (int)epoch;
    float curve[1];
    c.n_curve = cv->n;
    c.curve = cv->n ? fs_calloc((size_t)cv->n, sizeof(float)) : curve;
    int bad = get_curve(rec, "curve", c.curve, c.n_curve);
    if (!bad) journal_add_cut(j, &c);
    if (c.curve != curve) free(c.curve);
    return bad;
}

/* A checked record. Returns LINE_OK, or LINE_INVALID with why. */
static int decode_record(FsJournal *j, const FsJson *rec, const char *src, char *why, size_t why_n)
{
    long long v;
    const char *what = "a JSON object with v, kind and time";
    const FsJson *kind = journal_json_get(rec, "kind");
    double t = 0;
    if (get_int(rec, "v", 1, 1 << 30, &v) || !kind || kind->type != FS_JSON_STRING ||
        journal_json_f64(journal_json_get(rec, "time"), &t)) {
        snprintf(why, why_n, "expected %s", what);
        return LINE_INVALID;
    }
    if (v > FS_JOURNAL_VERSION) {
        snprintf(why, why_n, "record format %lld is newer than this foldsweep reads (%d): upgrade",
                 v, FS_JOURNAL_VERSION);
        return LINE_INVALID;
    }
    int bad = 0;
    char trial[17];
    if (!strcmp(kind->str, "fold")) {
        bad = decode_fold(j, rec, t, &what);
    } else if (!strcmp(kind->str, "trial")) {
        long long index, params;
        const FsJson *cfg = journal_json_get(rec, "config");
        what = "a trial record with trial, index, params and config";
        bad = get_id(rec, trial) || get_int(rec, "index", 0, 1 << 30, &index) ||
              get_int(rec, "params", 0, (long long)1 << 62, &params) || !cfg;
        if (!bad) { /* verbatim: the config round-trips byte for byte */
            size_t len = cfg->end - cfg->off;
            char *c = fs_malloc(len + 1);
            memcpy(c, src + cfg->off, len);
            c[len] = '\0';
            if (!journal_add_trial(j, trial, (int)index, (long)params, c, t)) j->duplicates++;
            free(c);
        }
    } else if (!strcmp(kind->str, "failure")) {
        const FsJson *m = journal_json_get(rec, "message");
        what = "a failure record with trial and message";
        bad = get_id(rec, trial) || !m || m->type != FS_JSON_STRING;
        if (!bad && !journal_add_failure(j, trial, m->str, t)) j->duplicates++;
    } else if (!strcmp(kind->str, "model")) {
        long long fold;
        FsModelRef model;
        what = "a model record with trial, fold and model {file, bytes, crc32} after the fold's record";
        bad = get_id(rec, trial) || get_int(rec, "fold", -1, 1 << 20, &fold) || get_model(rec, &model) ||
              !model.file[0] || journal_set_model(j, trial, (int)fold, &model) != 0;
    } else if (!strcmp(kind->str, "refit")) {
        FsRefitRecord r = {.time = t};
        long long epochs;
        what = "a refit record with trial, epochs and model {file, bytes, crc32}";
        bad = get_id(rec, r.trial) || get_int(rec, "epochs", 1, FS_TRAIN_MAX_EPOCHS, &epochs) || get_model(rec, &r.model) ||
              !r.model.file[0];
        if (!bad) {
            r.epochs = (int)epochs;
            journal_add_refit(j, &r);
        }
    } else if (!strcmp(kind->str, "evaluation")) {
        what = "an evaluation record with trial, models, source, data, data_fingerprint and q3";
        bad = decode_eval(j, rec, t);
    } else if (!strcmp(kind->str, "pruned")) {
        what = "a pruned record with trial, fold, epoch, rule, value, threshold, reason and curve";
        bad = decode_cut(j, rec, t);
    } else if (!strcmp(kind->str, "prune")) {
        what = "a prune record with trial";
        bad = get_id(rec, trial);
        if (!bad) journal_add_prune(j, trial);
    } else if (!strcmp(kind->str, "run")) {
        FsRunRecord run = {.time = t};
        long long x;
        const FsJson *s;
        if (!get_int(rec, "pid", 0, (long long)1 << 40, &x)) run.pid = (long)x;
        if (!get_int(rec, "trials", 0, 1 << 30, &x)) run.n_trials = (int)x;
        if (!get_int(rec, "folds", 0, 1 << 20, &x)) run.folds = (int)x;
        if ((s = journal_json_get(rec, "host")) && s->type == FS_JSON_STRING)
            snprintf(run.host, sizeof run.host, "%s", s->str);
        if ((s = journal_json_get(rec, "metric")) && s->type == FS_JSON_STRING)
            snprintf(run.metric, sizeof run.metric, "%s", s->str);
        char fp[24];
        if (journal_json_get(rec, "data_fingerprint")) {
            if (get_str(rec, "data_fingerprint", fp, sizeof fp) || strlen(fp) != 16 || strspn(fp, "0123456789abcdef") != 16) {
                snprintf(why, why_n, "expected a run record whose data_fingerprint is 16 hex digits");
                return LINE_INVALID;
            }
            run.data_fingerprint = strtoull(fp, NULL, 16);
        }
        journal_add_run(j, &run);
    } /* another kind of this version: written by a newer build, skipped */
    if (bad) {
        snprintf(why, why_n, "expected %s", what);
        return LINE_INVALID;
    }
    return LINE_OK;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One line without its newline. */
static int decode_line(FsJournal *j, const char *s, size_t n, char *why, size_t why_n)
{
    if (n < 12 || s[n - 10] != ' ' || s[n - 9] != '#') {
        snprintf(why, why_n, "expected 'JSON #crc32' (the line is torn or not a record)");
        return LINE_CORRUPT;
    }
    uint32_t want = 0;
    for (size_t i = n - 8; i < n; i++) {
        int h = hexval(s[i]);
        if (h < 0) {
            snprintf(why, why_n, "expected 8 lowercase hex digits of CRC-32 after '#'");
            return LINE_CORRUPT;
        }
        want = want << 4 | (uint32_t)h;
    }
    size_t jn = n - 10;
    uint32_t got = fs_crc32(s, jn, 0);
    if (got != want) {
        snprintf(why, why_n, "checksum mismatch (record says %08x, content gives %08x)",
                 (unsigned)want, (unsigned)got);
        return LINE_CORRUPT;
    }
    FsJsonDoc doc;
    char jwhy[128];
    if (journal_json_parse(&doc, s, jn, jwhy, sizeof jwhy)) {
        snprintf(why, why_n, "bad JSON: %s", jwhy);
        return LINE_CORRUPT;
    }
    int rc =
        doc.root->type == FS_JSON_OBJECT ? decode_record(j, doc.root, s, why, why_n) : LINE_INVALID;
    if (doc.root->type != FS_JSON_OBJECT) snprintf(why, why_n, "expected a JSON object");
    journal_json_free(&doc);
    return rc;
}

int journal_check_line(FsJournal *scratch, const char *s, size_t n, char *why, size_t why_n)
{
    return decode_line(scratch, s, n, why, why_n) == LINE_OK ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* Open, read, close                                                        */

int journal_read_fd(int fd, char **out, size_t *n)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = fs_malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = fs_realloc(buf, cap *= 2);
        ssize_t k = read(fd, buf + len, cap - 1 - len);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            free(buf);
            return -1;
        }
        if (k == 0) break;
        len += (size_t)k;
    }
    *out = buf;
    *n = len;
    return 0;
}

/* Reads every line; on success sets j->size to the good bytes. A damaged
 * line before the last is an error, or with tolerant skipped and counted. */
static int load(FsJournal *j, int fd, int tolerant, FsErr *err)
{
    char *buf;
    size_t n;
    if (journal_read_fd(fd, &buf, &n)) {
        fs_err_set(err, "%s: cannot read: %s", j->path, strerror(errno));
        return -1;
    }
    size_t pos = 0;
    long line = 0;
    int rc = 0;
    while (pos < n) {
        line++;
        char *nl = memchr(buf + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - buf) : n;
        int last = !nl || end + 1 == n;
        char why[256];
        int lr = nl ? decode_line(j, buf + pos, end - pos, why, sizeof why) : LINE_CORRUPT;
        if (!nl) snprintf(why, sizeof why, "torn record (no newline)");
        if (lr == LINE_CORRUPT && last) {
            j->dropped_tail = 1;
            break;
        }
        if (lr != LINE_OK && tolerant) {
            if (!j->bad_lines++) {
                j->first_bad_line = line;
                snprintf(j->first_bad_why, sizeof j->first_bad_why, "%s", why);
            }
        } else if (lr != LINE_OK) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%.*s", (int)(strlen(j->path) - strlen("/journal.jsonl")), j->path);
            fs_err_at(err, j->path, line, 0,
                      "%s. This line is damaged and more records follow it: `foldsweep repair %s` writes a "
                      "journal without the damaged lines and keeps this one beside it (nothing is deleted); "
                      "`foldsweep status` shows what the rest holds",
                      why, dir);
            rc = -1;
            break;
        }
        pos = end + 1;
        j->size = (long long)pos;
        j->lines = line;
    }
    free(buf);
    return rc;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = fs_malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void sync_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
}

/* mkdir -p; the parent of every created folder is synced. */
static int make_dirs(const char *dir, FsErr *err)
{
    char *p = fs_strdup(dir);
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) == 0) {
            char *slash = strrchr(p, '/');
            if (slash && slash != p) {
                *slash = '\0';
                sync_dir(p);
                *slash = '/';
            } else {
                sync_dir(slash ? "/" : ".");
            }
        } else if (errno != EEXIST) {
            fs_err_set(err, "%s: cannot create the folder: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        p[i] = c;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fs_err_set(err, "%s: not a folder", dir);
        return -1;
    }
    return 0;
}

static void init(FsJournal *j, const char *dir)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    j->path = join_path(dir, "journal.jsonl");
}

int journal_open(FsJournal *j, const char *dir, FsErr *err)
{
    init(j, dir);
    if (make_dirs(dir, err)) goto fail;
    int created = 1;
    j->fd = open(j->path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (j->fd < 0 && errno == EEXIST) {
        created = 0;
        j->fd = open(j->path, O_RDWR | O_APPEND | O_CLOEXEC);
    }
    if (j->fd < 0) {
        fs_err_set(err, "%s: cannot open: %s", j->path, strerror(errno));
        goto fail;
    }
    if (created) sync_dir(dir); /* the new file's name is durable too */
    if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            fs_err_set(err, "%s: another foldsweep run is writing this folder", j->path);
        else
            fs_err_set(err, "%s: cannot lock: %s", j->path, strerror(errno));
        goto fail;
    }
    if (load(j, j->fd, 0, err)) goto fail;
    if (j->dropped_tail) {
        if (ftruncate(j->fd, (off_t)j->size) != 0 || fsync(j->fd) != 0) {
            fs_err_set(err, "%s: cannot drop the torn last line: %s", j->path, strerror(errno));
            goto fail;
        }
    }
    return 0;
fail:
    journal_close(j);
    return -1;
}

int journal_read(FsJournal *j, const char *dir, FsErr *err)
{
    init(j, dir);
    j->read_only = 1;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fs_err_set(err, "%s: no such run folder", dir);
        goto fail;
    }
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fs_err_set(err, "%s: cannot open: %s", j->path, strerror(errno));
        goto fail;
    }
    int rc = load(j, fd, 1, err);
    close(fd);
    if (rc) goto fail;
    return 0;
fail:
    journal_close(j);
    return -1;
}

int journal_is_locked(const char *dir)
{
    char *path = join_path(dir, "journal.jsonl");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0) return -1;
    int rc = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) rc = errno == EWOULDBLOCK ? 1 : -1;
    close(fd); /* drops our shared lock, if taken */
    return rc;
}

void journal_close(FsJournal *j)
{
    if (j->fd >= 0) close(j->fd);
    for (int i = 0; i < j->n_folds; i++) train_result_free(&j->folds[i].r);
    for (int i = 0; i < j->n_trials; i++) free(j->trials[i].config);
    for (int i = 0; i < j->n_failures; i++) free(j->failures[i].message);
    free(j->folds);
    free(j->trials);
    free(j->failures);
    free(j->runs);
    free(j->pruned);
    free(j->evals);
    free(j->refits);
    for (int i = 0; i < j->n_cuts; i++) free(j->cuts[i].curve);
    free(j->cuts);
    free(j->fold_index);
    free(j->trial_index);
    free(j->path);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}
