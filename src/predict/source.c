/*
 * source: which files make a trial's ensemble, and loading them.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "journal/journal.h"
#include "json/json.h"
#include "predict/predict.h"
#include "report/report.h"

static int is_dir(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISDIR(s.st_mode);
}

static int has_file(const char *dir, const char *name)
{
    char p[4400];
    struct stat s;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &s) == 0 && S_ISREG(s.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int predict_is_model_source(const char *path)
{
    return is_dir(path) || ends_with(path, ".safetensors");
}

/* The run folder of a path, absolute, if it has a journal. */
static void set_run(FsModelSet *set, const char *dir)
{
    char abs[PATH_MAX];
    if (!set->run[0] && realpath(dir, abs) && has_file(abs, "journal.jsonl") && strlen(abs) < sizeof set->run)
        memcpy(set->run, abs, strlen(abs) + 1);
}

static int add(FsModelSet *set, const char *dir, const char *file, int fold, FsErr *err)
{
    if (set->n >= FS_PREDICT_MAX_MODELS)
        return fs_err_set(err, "more than %d models in one ensemble", FS_PREDICT_MAX_MODELS), -1;
    if (dir)
        snprintf(set->path[set->n], sizeof set->path[0], "%s/%s", dir, file);
    else
        snprintf(set->path[set->n], sizeof set->path[0], "%s", file);
    set->fold[set->n++] = fold;
    return 0;
}

/* An exported folder: model.json lists the fold files. */
static int find_export(FsModelSet *set, const char *dir, int fold, FsErr *err)
{
    char path[4400], why[160];
    snprintf(path, sizeof path, "%s/model.json", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return fs_err_set(err, "%s: cannot open", path), -1;
    char *text = fs_malloc(1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = '\0';
    FsJsonDoc doc;
    int rc = -1;
    if (json_parse(&doc, text, n, why, sizeof why) != 0) {
        fs_err_set(err, "%s: not JSON (%s)", path, why);
        free(text);
        return -1;
    }
    const FsJson *t = json_get(doc.root, "trial"), *folds = json_get(doc.root, "folds");
    if (!t || t->type != FS_JSON_STRING || !folds || folds->type != FS_JSON_ARRAY || folds->n < 1) {
        fs_err_set(err, "%s: expected \"trial\" and a non-empty \"folds\" list (written by foldsweep export)", path);
        goto out;
    }
    snprintf(set->trial, sizeof set->trial, "%s", t->str);
    const FsJson *v = json_get(doc.root, "rank");
    long long r;
    if (v && !json_i64(v, &r)) set->rank = (int)r;
    if ((v = json_get(doc.root, "mean"))) json_f64(v, &set->mean);
    if ((v = json_get(doc.root, "std"))) json_f64(v, &set->std);
    if ((v = json_get(doc.root, "metric")) && v->type == FS_JSON_STRING)
        snprintf(set->metric, sizeof set->metric, "%s", v->str);
    int i = 0;
    for (const FsJson *e = folds->child; e; e = e->next, i++) {
        const FsJson *file = json_get(e, "file"), *fv = json_get(e, "fold");
        long long k;
        int id;
        /* A fold is a number, "predefined" or "all" (a refit), as the model
         * files name it; exports before that wrote -1 and -2 for the last two. */
        if (fv && fv->type == FS_JSON_STRING && modelfile_fold_parse(fv->str, &id) == 0) k = id;
        else if (!fv || json_i64(fv, &k) || k < FS_FOLD_ALL || k >= FS_MAX_FOLDS) k = FS_MAX_FOLDS;
        if (!file || file->type != FS_JSON_STRING || strchr(file->str, '/') || k == FS_MAX_FOLDS) {
            fs_err_set(err, "%s: folds[%d]: expected \"fold\" (a number, \"predefined\" or \"all\") and a \"file\" in "
                       "the folder", path, i);
            goto out;
        }
        if (fold >= 0 && k != fold) continue;
        if (add(set, dir, file->str, (int)k, err)) goto out;
    }
    if (set->n == 0) {
        fs_err_set(err, "%s: no fold %d in this export", path, fold);
        goto out;
    }
    if ((v = json_get(doc.root, "run")) && v->type == FS_JSON_STRING) set_run(set, v->str);
    rc = 0;
out:
    json_free(&doc);
    free(text);
    return rc;
}

/* A run folder: the trial by id (or unique prefix) or by leaderboard rank. */
static int find_run(FsModelSet *set, const char *dir, const char *trial, int rank, int fold, FsErr *err)
{
    FsJournal j;
    FsReportSpec spec;
    int from_journal, rc = -1;
    if (journal_read(&j, dir, err) != 0) return -1;
    if (report_spec_load(&spec, dir, &j, &from_journal, err) != 0) {
        journal_close(&j);
        return -1;
    }
    FsReport rep;
    report_build(&rep, &j, &spec);
    const FsReportRow *row = NULL;
    for (int i = 0; i < rep.n_rows; i++) {
        const FsReportRow *x = &rep.rows[i];
        if (trial ? strncmp(x->id, trial, strlen(trial)) != 0 : x->rank != rank) continue;
        if (row) {
            fs_err_set(err, "%s: trial '%s' is ambiguous (%s, %s, ...): give more of its id", dir, trial, row->id,
                       x->id);
            goto out;
        }
        row = x;
    }
    if (!row) {
        if (trial) fs_err_set(err, "%s: no trial '%s' in the journal (see foldsweep leaderboard %s)", dir, trial, dir);
        else fs_err_set(err, "%s: no trial at rank %d (the leaderboard has %d)", dir, rank, rep.n_rows);
        goto out;
    }
    if (row->status != FS_TRIAL_OK && fold < 0) {
        fs_err_set(err, "%s: trial %s is %s%s%s: its fold models do not form an ensemble (give --fold K for one)",
                   dir, row->id, report_status_name(row->status), row->reason[0] ? ": " : "", row->reason);
        goto out;
    }
    if (journal_is_discarded(&j, row->id)) {
        fs_err_set(err, "%s: the models of trial %s (rank %d) were removed at the end of the run (run.keep_models "
                   "keeps the best N); raise keep_models and train it again to keep them", dir, row->id, row->rank);
        goto out;
    }
    snprintf(set->trial, sizeof set->trial, "%s", row->id);
    set_run(set, dir);
    set->rank = row->rank;
    set->mean = row->mean;
    set->std = row->std;
    snprintf(set->metric, sizeof set->metric, "%s", metrics_kind_name(spec.metric));
    FsFolds folds = data_folds_of(spec.predefined, spec.folds);
    for (int k = 0; k < folds.n; k++) {
        int fid = data_fold_id(&folds, k);
        if (fold >= 0 && fid != fold) continue;
        const FsFoldRecord *fr = journal_find_fold(&j, row->id, fid);
        char why[160], path[4400];
        if (!fr || !fr->model.file[0]) {
            fs_err_set(err, "%s: trial %s fold %d has no saved model (%s)", dir, row->id, fid,
                       fr ? "trained by a foldsweep that did not keep models, or did not train to a best epoch"
                          : "not trained yet");
            goto out;
        }
        snprintf(path, sizeof path, "%s/%s", dir, fr->model.file);
        if (modelfile_verify(path, fr->model.bytes, fr->model.crc32, why, sizeof why) != 0) {
            fs_err_set(err, "%s: %s (rerun the sweep to restore it)", path, why);
            goto out;
        }
        if (add(set, dir, fr->model.file, fid, err)) goto out;
    }
    if (set->n == 0) {
        fs_err_set(err, "%s: trial %s has no fold %d", dir, row->id, fold);
        goto out;
    }
    rc = 0;
out:
    report_free(&rep);
    journal_close(&j);
    return rc;
}

int predict_find(FsModelSet *set, const char *source, const char *trial, int rank, int fold, FsErr *err)
{
    if (set->n == 0 && !set->trial[0]) set->mean = set->std = NAN;
    if (!is_dir(source)) {
        if (!ends_with(source, ".safetensors"))
            return fs_err_set(err, "%s: expected a model folder (export or run) or a .safetensors file", source), -1;
        if (trial || fold >= 0)
            return fs_err_set(err, "%s: --trial and --fold choose within a folder, not among model files", source), -1;
        /* RUN/models/<trial>/foldK.safetensors: RUN is three levels up. */
        char up[2100];
        const char *slash = strrchr(source, '/');
        if (slash) snprintf(up, sizeof up, "%.*s/../..", (int)(slash - source), source);
        else snprintf(up, sizeof up, "../..");
        set_run(set, up);
        return add(set, NULL, source, -1, err);
    }
    if (set->n > 0) return fs_err_set(err, "%s: give one model folder, or model files", source), -1;
    if (has_file(source, "model.json")) return find_export(set, source, fold, err);
    if (has_file(source, "journal.jsonl")) return find_run(set, source, trial, rank, fold, err);
    return fs_err_set(err, "%s: neither an exported model (model.json) nor a run folder (journal.jsonl)", source), -1;
}

int predict_load(FsEnsemble *e, const FsModelSet *set, int batch, FsErr *err)
{
    memset(e, 0, sizeof *e);
    for (int i = 0; i < set->n; i++) {
        if (modelfile_load(&e->m[i], set->path[i], batch, err) != 0) {
            predict_free(e);
            return -1;
        }
        e->n = i + 1;
        int w = e->m[i].net.arch.window;
        if (i > 0 && w != e->window) {
            fs_err_set(err, "%s: window %d, but %s has %d: models of one ensemble read the same window",
                       set->path[i], w, set->path[0], e->window);
            predict_free(e);
            return -1;
        }
        e->window = w;
    }
    return 0;
}

void predict_free(FsEnsemble *e)
{
    for (int i = 0; i < e->n; i++) modelfile_free(&e->m[i]);
    e->n = 0;
}

/* The run folder a model file lies in (RUN/models/<trial>/F), absolute,
 * or "" when it is not in one. */
static void run_of(const char *path, char *out, size_t n)
{
    char up[2200], abs[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(up, sizeof up, "%.*s/../..", (int)(slash - path), path);
    else snprintf(up, sizeof up, "../..");
    out[0] = '\0';
    if (realpath(up, abs) && has_file(abs, "journal.jsonl")) snprintf(out, n, "%s", abs);
}

/* How models a and b of the ensemble differ (FS_MIX_* bits). */
static int mix_of(const FsEnsemble *e, const FsModelSet *set, int a, int b)
{
    const FsModelInfo *x = &e->m[a].info, *y = &e->m[b].info;
    char ra[PATH_MAX], rb[PATH_MAX];
    run_of(set->path[a], ra, sizeof ra);
    run_of(set->path[b], rb, sizeof rb);
    return (strcmp(x->trial, y->trial) ? FS_MIX_TRIAL : 0) | (strcmp(ra, rb) ? FS_MIX_RUN : 0) |
           (x->data_fingerprint != y->data_fingerprint ? FS_MIX_DATA : 0);
}

int predict_mixed(const FsEnsemble *e, const FsModelSet *set, char *what, size_t wn, char *key, size_t kn)
{
    int mix = 0, first = 0;
    for (int i = 1; i < e->n && i < set->n; i++) {
        int m = mix_of(e, set, 0, i);
        if (m && !first) first = i;
        mix |= m;
    }
    if (what && wn) what[0] = '\0';
    if (key && kn) key[0] = '\0';
    if (!mix) return 0;
    const FsModelInfo *x = &e->m[0].info, *y = &e->m[first].info;
    if (what)
        snprintf(what, wn, "%s (trial %s, data %016llx) and %s (trial %s, data %016llx) are from different %s%s%s",
                 set->path[0], x->trial[0] ? x->trial : "?", (unsigned long long)x->data_fingerprint, set->path[first],
                 y->trial[0] ? y->trial : "?", (unsigned long long)y->data_fingerprint,
                 mix & FS_MIX_TRIAL ? "trials" : "", (mix & FS_MIX_TRIAL) && (mix & ~FS_MIX_TRIAL) ? " and " : "",
                 mix & FS_MIX_RUN && mix & FS_MIX_DATA ? "runs and data" : mix & FS_MIX_RUN ? "runs"
                 : mix & FS_MIX_DATA ? "data" : "");
    if (key)
        snprintf(key, kn, "mixed: %s%s%s%s%s", mix & FS_MIX_TRIAL ? "trials" : "",
                 (mix & FS_MIX_TRIAL) && (mix & (FS_MIX_RUN | FS_MIX_DATA)) ? "," : "", mix & FS_MIX_RUN ? "runs" : "",
                 (mix & FS_MIX_RUN) && (mix & FS_MIX_DATA) ? "," : "", mix & FS_MIX_DATA ? "data" : "");
    return mix;
}
