/*
 * decode.c: one journal line into a record. The line's checksum is
 * checked first (frame.c), then its JSON is parsed, the record's fields
 * are range-checked by its kind's decoder (`kinds`: a row per kind, with
 * what a record of that kind must hold) and the record is added to the
 * in-memory lists (records.c). What is wrong comes back as text, for the error that names
 * the line (journal.c) and for `foldsweep repair`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "journal/journal_internal.h"

/* ---------------------------------------------------------------------- */
/* Decoding one line                                                        */

static int get_int(const FsJson *rec, const char *key, long long lo, long long hi, long long *out)
{
    return json_i64(json_get(rec, key), out) || *out < lo || *out > hi ? -1 : 0;
}

static int get_id(const FsJson *rec, char out[FS_TRIAL_ID_LEN + 1])
{
    const FsJson *v = json_get(rec, "trial");
    if (!v || v->type != FS_JSON_STRING || v->len == 0 || v->len > FS_TRIAL_ID_LEN ||
        strlen(v->str) != v->len)
        return -1;
    memcpy(out, v->str, v->len + 1);
    return 0;
}

static int get_curve(const FsJson *curves, const char *key, float *dst, int epochs)
{
    const FsJson *a = json_get(curves, key);
    if (!a) return 0; /* absent: zeros */
    if (a->type != FS_JSON_ARRAY || a->n > epochs) return -1;
    int i = 0;
    for (const FsJson *c = a->child; c; c = c->next, i++)
        if (json_f32(c, &dst[i])) return -1;
    return 0;
}

/* "model": {"file": relative path, "bytes": N, "crc32": "8 hex digits"} */
static int get_model(const FsJson *rec, FsModelRef *m)
{
    const FsJson *o = json_get(rec, "model"), *f, *c;
    memset(m, 0, sizeof *m);
    if (!o) return 0;
    f = json_get(o, "file");
    c = json_get(o, "crc32");
    if (o->type != FS_JSON_OBJECT || !f || f->type != FS_JSON_STRING || f->len == 0 ||
        f->len >= sizeof m->file || strlen(f->str) != f->len || strstr(f->str, "..") || f->str[0] == '/' ||
        json_u64(json_get(o, "bytes"), &m->bytes) || !c || c->type != FS_JSON_STRING ||
        c->len != 8 || strspn(c->str, "0123456789abcdef") != 8)
        return -1;
    memcpy(m->file, f->str, f->len + 1);
    m->crc32 = (uint32_t)strtoul(c->str, NULL, 16);
    return 0;
}

/* A fold record's fields that come before its result: which trial and
 * fold, how it ended, its epoch counts, the monitored value. */
typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    long long fold, seed, epochs, best, halted, dep, dstep;
    FsFitStatus status;
    FsMonitor monitor;
    int gpu_path; /* FsGpuPath: the GPU tier that trained it, 0 (absent) on the CPU */
    long long gpu_group; /* the library tier's group width, 0 (absent) elsewhere and before it */
} FoldHead;

static int fold_head(const FsJson *rec, FoldHead *h, const char **what)
{
    const FsJson *st = json_get(rec, "status");
    h->halted = h->dep = h->dstep = h->seed = 0;
    *what = "a fold record with trial, fold, status, epochs, best_epoch, best_val_loss, confusion";
    if (get_id(rec, h->trial) || get_int(rec, "fold", -1, 1 << 20, &h->fold) || !st ||
        st->type != FS_JSON_STRING || get_int(rec, "epochs", 0, FS_TRAIN_MAX_EPOCHS, &h->epochs) ||
        get_int(rec, "best_epoch", 0, h->epochs, &h->best))
        return -1;
    if (!strcmp(st->str, "ok"))
        h->status = FS_FIT_OK;
    else if (!strcmp(st->str, "diverged"))
        h->status = FS_FIT_DIVERGED;
    else if (!strcmp(st->str, "failed"))
        h->status = FS_FIT_FAILED;
    else
        return *what = "status ok, diverged or failed", -1;
    if (json_get(rec, "halted_by") && get_int(rec, "halted_by", 0, 1, &h->halted)) return -1;
    /* A seed replicate's index (search.replicates); absent: the trial's own seeds. */
    if (json_get(rec, "seed") && get_int(rec, "seed", 0, FS_MAX_SEEDS - 1, &h->seed))
        return *what = "seed: a seed replicate's index in range", -1;
    if (json_get(rec, "diverged_epoch") && get_int(rec, "diverged_epoch", 0, h->epochs + 1, &h->dep))
        return -1;
    if (json_get(rec, "diverged_step") &&
        get_int(rec, "diverged_step", 0, (long long)1 << 62, &h->dstep))
        return -1;
    /* training.monitor: absent (the loss) in records before it and in default sweeps. */
    int monitor = FS_MONITOR_LOSS;
    const FsJson *mo = json_get(rec, "monitor");
    if (mo) {
        monitor = -1;
        for (int m = 0; m < FS_MONITOR_COUNT && mo->type == FS_JSON_STRING; m++)
            if (!strcmp(mo->str, train_monitor_names[m])) monitor = m;
        if (monitor < 0) return *what = "monitor loss or q3", -1;
    }
    h->monitor = (FsMonitor)monitor;
    /* The GPU tier (#44): absent on the CPU backend and before #44. */
    const FsJson *gp = json_get(rec, "gpu_path");
    h->gpu_path = FS_GPU_PATH_AUTO;
    for (int p = FS_GPU_PATH_BLOCK; gp && p < FS_GPU_PATH_COUNT; p++)
        if (gp->type == FS_JSON_STRING && !strcmp(gp->str, train_gpu_path_name(p))) h->gpu_path = p;
    if (gp && !h->gpu_path) return *what = "gpu_path block or library (absent: the CPU backend)", -1;
    h->gpu_group = 0;
    if (json_get(rec, "gpu_group") && (h->gpu_path != FS_GPU_PATH_LIBRARY ||
                                       get_int(rec, "gpu_group", 1, FS_GPU_LIB_GROUP_MAX, &h->gpu_group)))
        return *what = "gpu_group: the library tier's group width (1 to 32), with gpu_path library", -1;
    return 0;
}

/* A fold record's result: the best epoch's loss and confusion, counts,
 * timings, curves, message. 1 if one is malformed. */
static int fold_result(const FsJson *rec, FsFitResult *r, const char **what)
{
    int bad = json_f32(json_get(rec, "best_val_loss"), &r->best_val_loss);
    const FsJson *cm = json_get(rec, "confusion");
    /* 3 x 3, or 8 x 8 in an 8-state run: the rows say which. */
    r->classes = cm && cm->type == FS_JSON_ARRAY && cm->n == FS_CLASSES8 ? FS_CLASSES8 : FS_CLASSES;
    for (int a = 0; a < r->classes && !bad; a++) {
        bad = r->classes == FS_CLASSES8 && json_at(cm, a) && json_at(cm, a)->n != r->classes;
        for (int b = 0; b < r->classes && !bad; b++) bad = json_u64(json_at(json_at(cm, a), b), &r->best_confusion[a][b]);
    }
    const FsJson *v;
    if (!bad && (v = json_get(rec, "train_examples")))
        bad = json_u64(v, &r->train_examples);
    if (!bad && (v = json_get(rec, "val_examples")))
        bad = json_u64(v, &r->val_examples);
    if (!bad && (v = json_get(rec, "seconds"))) bad = json_f64(v, &r->seconds);
    if (!bad && (v = json_get(rec, "val_seconds")))
        bad = json_f64(v, &r->val_seconds);
    const FsJson *cv = json_get(rec, "curves");
    if (!bad && cv) {
        bad = cv->type != FS_JSON_OBJECT ||
              get_curve(cv, "train_loss", r->curves.train_loss, r->epochs) ||
              get_curve(cv, "val_loss", r->curves.val_loss, r->epochs) ||
              get_curve(cv, "val_q3", r->curves.val_q3, r->epochs) ||
              get_curve(cv, "seconds", r->curves.seconds, r->epochs);
        if (bad) *what = "curves of at most 'epochs' numbers each";
    }
    if (!bad && (v = json_get(rec, "message"))) {
        if (v->type != FS_JSON_STRING)
            bad = 1;
        else
            snprintf(r->message, sizeof r->message, "%s", v->str);
    }
    return bad;
}

static int decode_fold(FsJournal *j, const FsJson *rec, double t, const char **what, char *sense, size_t sense_n)
{
    FoldHead h;
    if (fold_head(rec, &h, what)) return -1;
    FsFitResult r;
    train_result_alloc(&r, (int)h.epochs);
    r.status = h.status;
    r.monitor = h.monitor;
    r.epochs = (int)h.epochs;
    r.best_epoch = (int)h.best;
    r.halted_by = (int)h.halted;
    r.diverged_epoch = (int)h.dep;
    r.diverged_step = (long)h.dstep;
    r.gpu_path = h.gpu_path;
    r.gpu_group = (int)h.gpu_group;
    int bad = fold_result(rec, &r, what);
    FsModelRef model;
    if (!bad && get_model(rec, &model)) {
        bad = 1;
        *what = "model {file (relative), bytes, crc32 (8 hex digits)}";
    }
    if (!bad && journal_sense_fold(j->check, (int)h.fold, &r, json_get(rec, "curves") != NULL, sense, sense_n))
        bad = 1;
    if (!bad) {
        if (!journal_add_fold(j, h.trial, (int)h.fold, (int)h.seed, &r, t))
            j->duplicates++;
        else if (model.file[0] && !h.seed)
            journal_set_model(j, h.trial, (int)h.fold, &model);
    }
    train_result_free(&r);
    return bad ? -1 : 0;
}

static int get_str(const FsJson *rec, const char *key, char *out, size_t n)
{
    const FsJson *v = json_get(rec, key);
    if (!v || v->type != FS_JSON_STRING || v->len >= n || strlen(v->str) != v->len) return -1;
    memcpy(out, v->str, v->len + 1);
    return 0;
}

/* The identity check's fields, absent from records written before it. */
static int decode_eval_identity(FsEvalRecord *e, const FsJson *rec)
{
    const FsJson *c = json_get(rec, "identity_checked"), *a = json_get(rec, "identity_above");
    e->identity_checked = -1;
    e->identity_max = e->coverage_max = NAN;
    e->coverage_over = -1;
    if (!c) return 0;
    if (c->type != FS_JSON_TRUE && c->type != FS_JSON_FALSE) return -1;
    e->identity_checked = c->type == FS_JSON_TRUE;
    if (!e->identity_checked) return 0;
    if (json_f64(json_get(rec, "identity_max"), &e->identity_max) || !a || a->type != FS_JSON_ARRAY ||
        a->n != FS_IDENTITY_LEVELS || json_u64(json_get(rec, "identity_left_out"), &e->identity_left_out))
        return -1;
    for (int i = 0; i < FS_IDENTITY_LEVELS; i++)
        if (json_u64(json_at(a, i), &e->identity_above[i])) return -1;
    uint64_t over; /* coverage: absent before it was measured */
    if (!json_get(rec, "coverage_over")) return 0;
    if (json_f64(json_get(rec, "coverage_max"), &e->coverage_max) || json_u64(json_get(rec, "coverage_over"), &over))
        return -1;
    e->coverage_over = (int64_t)over;
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
        strspn(fp, "0123456789abcdef") != 16 || json_f64(json_get(rec, "q3"), &e.q3))
        return -1;
    e.data_fingerprint = strtoull(fp, NULL, 16);
    const FsJson *v;
    if ((v = json_get(rec, "proteins")) && json_u64(v, &e.proteins)) return -1;
    if ((v = json_get(rec, "scored")) && json_u64(v, &e.scored)) return -1;
    if ((v = json_get(rec, "overlap")) && json_u64(v, &e.overlap)) return -1;
    if ((v = json_get(rec, "q3_lo")) && json_f64(v, &e.q3_lo)) return -1;
    if ((v = json_get(rec, "q3_hi")) && json_f64(v, &e.q3_hi)) return -1;
    if ((v = json_get(rec, "sov")) && json_f64(v, &e.sov)) return -1;
    e.q8 = NAN;
    if ((v = json_get(rec, "q8")) && json_f64(v, &e.q8)) return -1;
    if (v) e.classes = FS_CLASSES8;
    if (decode_eval_identity(&e, rec) != 0) return -1;
    journal_add_eval(j, &e);
    return 0;
}

static int decode_cut(FsJournal *j, const FsJson *rec, double t, char *sense, size_t sense_n)
{
    FsCutRecord c = {.time = t};
    long long fold, epoch;
    const FsJson *cv = json_get(rec, "curve");
    if (get_id(rec, c.trial) || get_int(rec, "fold", FS_FOLD_PREDEFINED, FS_MAX_FOLDS - 1, &fold) ||
        get_int(rec, "epoch", 0, FS_TRAIN_MAX_EPOCHS, &epoch) || get_str(rec, "rule", c.rule, sizeof c.rule) ||
        get_str(rec, "reason", c.reason, sizeof c.reason) ||
        json_f64(json_get(rec, "value"), &c.value) ||
        json_f64(json_get(rec, "threshold"), &c.threshold) || !cv || cv->type != FS_JSON_ARRAY ||
        cv->n > epoch)
        return -1;
    c.fold = (int)fold;
    c.epoch = (int)epoch;
    float curve[1];
    c.n_curve = cv->n;
    c.curve = cv->n ? fs_calloc((size_t)cv->n, sizeof(float)) : curve;
    /* An earlier sweep version's decision stands, whatever pruner this sweep has. */
    int bad = get_curve(rec, "curve", c.curve, c.n_curve) ||
              (journal_sense_current(j) && journal_sense_cut(j->check, &c, sense, sense_n));
    if (!bad) journal_add_cut(j, &c);
    if (c.curve != curve) free(c.curve);
    return bad;
}

/* "sweep": text (the canonical sweep) and val_residues (one count per fold). */
static int decode_sweep(FsJournal *j, const FsJson *rec)
{
    const FsJson *text = json_get(rec, "text"), *val = json_get(rec, "val_residues");
    if (!text || text->type != FS_JSON_STRING || strlen(text->str) != text->len || !val || val->type != FS_JSON_ARRAY ||
        val->n > FS_MAX_FOLDS)
        return -1;
    uint64_t v[FS_MAX_FOLDS];
    int i = 0;
    for (const FsJson *c = val->child; c; c = c->next, i++)
        if (json_u64(c, &v[i])) return -1;
    journal_set_sweep_record(j, text->str, v, val->n);
    return 0;
}

/* The trial and fold a record names (if it names them) are the sweep's. */
static int sense_names(const FsJournal *j, const FsJson *rec, char *why, size_t why_n)
{
    const FsJson *t = json_get(rec, "trial");
    long long fold;
    if (t && t->type == FS_JSON_STRING && journal_sense_trial(j->check, t->str, -1, why, why_n)) return -1;
    if (!json_i64(json_get(rec, "fold"), &fold) && fold >= -(1 << 20) && fold <= 1 << 20 &&
        journal_sense_fold_id(j->check, (int)fold, why, why_n))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* One row per record kind                                                  */

/* A record being decoded, as its kind's decoder sees it. A decoder returns
 * 0, or -1 leaving what was expected in what (the row's words, or finer
 * ones) or, when the record contradicts the sweep, why in sense. */
typedef struct {
    FsJournal *j;
    const FsJson *rec;
    const char *src;  /* the line: a trial's config is kept verbatim */
    double t;         /* the record's time */
    const char *what; /* what was expected */
    char sense[256];  /* why it does not fit the sweep (journal_sense_*): said instead */
} Decode;

static int kind_fold(Decode *d) { return decode_fold(d->j, d->rec, d->t, &d->what, d->sense, sizeof d->sense); }

static int kind_trial(Decode *d)
{
    char trial[FS_TRIAL_ID_LEN + 1];
    long long index, params;
    const FsJson *cfg = json_get(d->rec, "config");
    if (get_id(d->rec, trial) || get_int(d->rec, "index", 0, 1 << 30, &index) ||
        get_int(d->rec, "params", 0, (long long)1 << 62, &params) || !cfg ||
        journal_sense_trial(d->j->check, trial, journal_sense_current(d->j) ? (int)index : -1, d->sense,
                            sizeof d->sense))
        return -1;
    /* verbatim: the config round-trips byte for byte */
    size_t len = cfg->end - cfg->off;
    char *c = fs_malloc(len + 1);
    memcpy(c, d->src + cfg->off, len);
    c[len] = '\0';
    if (!journal_add_trial(d->j, trial, (int)index, (long)params, c, d->t)) d->j->duplicates++;
    free(c);
    return 0;
}

static int kind_failure(Decode *d)
{
    char trial[FS_TRIAL_ID_LEN + 1];
    const FsJson *m = json_get(d->rec, "message");
    if (get_id(d->rec, trial) || !m || m->type != FS_JSON_STRING) return -1;
    if (!journal_add_failure(d->j, trial, m->str, d->t)) d->j->duplicates++;
    return 0;
}

static int kind_model(Decode *d)
{
    char trial[FS_TRIAL_ID_LEN + 1];
    long long fold;
    FsModelRef model;
    if (get_id(d->rec, trial) || get_int(d->rec, "fold", -1, 1 << 20, &fold) || get_model(d->rec, &model) ||
        !model.file[0] || journal_set_model(d->j, trial, (int)fold, &model) != 0)
        return -1;
    return 0;
}

static int kind_refit(Decode *d)
{
    FsRefitRecord r = {.time = d->t};
    long long epochs;
    if (get_id(d->rec, r.trial) || get_int(d->rec, "epochs", 1, FS_TRAIN_MAX_EPOCHS, &epochs) ||
        get_model(d->rec, &r.model) || !r.model.file[0])
        return -1;
    r.epochs = (int)epochs;
    journal_add_refit(d->j, &r);
    return 0;
}

static int kind_evaluation(Decode *d) { return decode_eval(d->j, d->rec, d->t); }

static int kind_pruned(Decode *d) { return decode_cut(d->j, d->rec, d->t, d->sense, sizeof d->sense); }

static int kind_sweep(Decode *d) { return decode_sweep(d->j, d->rec); }

static int kind_prune(Decode *d)
{
    char trial[FS_TRIAL_ID_LEN + 1];
    if (get_id(d->rec, trial)) return -1;
    journal_add_discard(d->j, trial);
    return 0;
}

/* A session's record: its fields are read where they are sound and left
 * out where not, but a data_fingerprint, if there, must be one. */
static int kind_run(Decode *d)
{
    FsRunRecord run = {.time = d->t};
    const FsJson *rec = d->rec, *s;
    long long x;
    if (!get_int(rec, "pid", 0, (long long)1 << 40, &x)) run.pid = (long)x;
    if (!get_int(rec, "trials", 0, 1 << 30, &x)) run.n_trials = (int)x;
    if (!get_int(rec, "folds", 0, 1 << 20, &x)) run.folds = (int)x;
    if ((s = json_get(rec, "host")) && s->type == FS_JSON_STRING)
        snprintf(run.host, sizeof run.host, "%s", s->str);
    if ((s = json_get(rec, "metric")) && s->type == FS_JSON_STRING)
        snprintf(run.metric, sizeof run.metric, "%s", s->str);
    /* How the session ran, for the report: absent from older records
     * (not recorded), read like host (shown, never relied on). */
    if (!get_int(rec, "ranks", 1, 1 << 24, &x)) run.ranks = (int)x;
    if ((s = json_get(rec, "backend")) && s->type == FS_JSON_STRING)
        snprintf(run.backend, sizeof run.backend, "%s", s->str);
    if ((s = json_get(rec, "device")) && s->type == FS_JSON_STRING)
        snprintf(run.device, sizeof run.device, "%s", s->str);
    if (!get_int(rec, "feature_columns", 1, FS_FEAT_MAX_DIM, &x)) run.feature_columns = (int)x;
    if ((s = json_get(rec, "sweep_file")) && s->type == FS_JSON_STRING && strlen(s->str) < sizeof run.sweep_file)
        memcpy(run.sweep_file, s->str, strlen(s->str) + 1);
    char fp[24];
    if (json_get(rec, "data_fingerprint")) {
        if (get_str(rec, "data_fingerprint", fp, sizeof fp) || strlen(fp) != 16 ||
            strspn(fp, "0123456789abcdef") != 16)
            return -1;
        run.data_fingerprint = strtoull(fp, NULL, 16);
    }
    journal_add_run(d->j, &run);
    return 0;
}

/* Each kind a record can have, with what its record must hold. A kind not
 * here, of a version this build reads, was written by a newer build: it is
 * skipped. */
static const struct {
    const char *kind;
    int (*decode)(Decode *d);
    const char *what;
} kinds[] = {
    {"fold", kind_fold, NULL /* decode_fold says */},
    {"trial", kind_trial, "a trial record with trial, index, params and config"},
    {"failure", kind_failure, "a failure record with trial and message"},
    {"model", kind_model, "a model record with trial, fold and model {file, bytes, crc32} after the fold's record"},
    {"refit", kind_refit, "a refit record with trial, epochs and model {file, bytes, crc32}"},
    {"evaluation", kind_evaluation,
     "an evaluation record with trial, models, source, data, data_fingerprint and q3"},
    {"pruned", kind_pruned, "a pruned record with trial, fold, epoch, rule, value, threshold, reason and curve"},
    {"sweep", kind_sweep, "a sweep record with text (the canonical sweep) and val_residues (a count per fold)"},
    {"prune", kind_prune, "a prune record with trial"},
    {"run", kind_run, "a run record whose data_fingerprint is 16 hex digits"},
};

/* A checked record. Returns LINE_OK, or LINE_INVALID with why. */
static int decode_record(FsJournal *j, const FsJson *rec, const char *src, char *why, size_t why_n)
{
    long long v;
    const FsJson *kind = json_get(rec, "kind");
    double t = 0;
    if (get_int(rec, "v", 1, 1 << 30, &v) || !kind || kind->type != FS_JSON_STRING ||
        json_f64(json_get(rec, "time"), &t)) {
        snprintf(why, why_n, "expected a JSON object with v, kind and time");
        return LINE_INVALID;
    }
    if (v > FS_JOURNAL_VERSION) {
        snprintf(why, why_n, "record format %lld is newer than this foldsweep reads (%d): upgrade",
                 v, FS_JOURNAL_VERSION);
        return LINE_INVALID;
    }
    if (sense_names(j, rec, why, why_n)) return LINE_INVALID;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (strcmp(kind->str, kinds[k].kind)) continue;
        Decode d = {.j = j, .rec = rec, .src = src, .t = t, .what = kinds[k].what};
        if (kinds[k].decode(&d) == 0) return LINE_OK;
        if (d.sense[0])
            snprintf(why, why_n, "%s", d.sense);
        else
            snprintf(why, why_n, "expected %s", d.what);
        return LINE_INVALID;
    }
    return LINE_OK;
}

/* One line without its newline. */
int journal_decode_line(FsJournal *j, const char *s, size_t n, char *why, size_t why_n)
{
    size_t jn;
    if (journal_unframe(s, n, &jn, why, why_n) != LINE_OK) return LINE_CORRUPT;
    FsJsonDoc doc;
    char jwhy[128];
    if (json_parse(&doc, s, jn, jwhy, sizeof jwhy)) {
        snprintf(why, why_n, "bad JSON: %s", jwhy);
        return LINE_CORRUPT;
    }
    int rc =
        doc.root->type == FS_JSON_OBJECT ? decode_record(j, doc.root, s, why, why_n) : LINE_INVALID;
    if (doc.root->type != FS_JSON_OBJECT) snprintf(why, why_n, "expected a JSON object");
    json_free(&doc);
    return rc;
}

int journal_check_line(FsJournal *scratch, const char *s, size_t n, char *why, size_t why_n)
{
    return journal_decode_line(scratch, s, n, why, why_n) == LINE_OK ? 0 : -1;
}
