/*
 * export: an exported model folder, both ways. predict_export copies a
 * trial's fold models (or its refit) into a folder with a model.json that
 * says what they are (the trial, its configuration and architecture, each
 * fold's best epoch and scores, or a refit's epochs and why); the reader
 * below takes that folder back as a model set for predict and evaluate.
 * The format (docs/models.md, "model.json") lives here alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "predict/predict.h"
#include "predict/predict_int.h"

/* A --top export: K, and its trials' run folders, where evaluate records
 * its looks (those still there). */
static int read_top(FsModelSet *set, const FsJson *root, const char *path, int fold, FsErr *err)
{
    if (fold >= 0)
        return fs_err_set(err, "%s: an export of the best trials (--top) is one ensemble: --fold does not choose in it",
                          path), -1;
    const FsJson *k = json_get(root, "top"), *trials = json_get(root, "trials");
    long long top;
    if (!k || json_i64(k, &top) || top < 1 || top > FS_PREDICT_MAX_MODELS || !trials ||
        trials->type != FS_JSON_ARRAY || trials->n != top)
        return fs_err_set(err, "%s: \"models\": \"top\" needs \"top\" (1..%d) and a \"trials\" list of that many "
                          "(written by foldsweep export --top)", path, FS_PREDICT_MAX_MODELS), -1;
    set->top = (int)top;
    int i = 0;
    for (const FsJson *t = trials->child; t; t = t->next, i++) {
        const FsJson *id = json_get(t, "trial"), *run = json_get(t, "run");
        if (!id || id->type != FS_JSON_STRING || strlen(id->str) != FS_TRIAL_ID_LEN || !run ||
            run->type != FS_JSON_STRING)
            return fs_err_set(err, "%s: trials[%d]: expected \"trial\" (a %d-digit id) and \"run\"", path, i,
                              FS_TRIAL_ID_LEN), -1;
        predict_set_add_run(set, run->str, id->str); /* a folder no longer there records nothing */
    }
    return 0;
}

/* An exported folder: model.json lists the fold files. */
int predict_export_read(FsModelSet *set, const char *dir, int fold, FsErr *err)
{
    char path[FS_PATH_IN_DIR], why[160];
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
    if ((v = json_get(doc.root, "models")) && v->type == FS_JSON_STRING && !strcmp(v->str, "top") &&
        read_top(set, doc.root, path, fold, err) != 0)
        goto out;
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
        if (predict_set_add(set, dir, file->str, (int)k, err)) goto out;
    }
    if (set->n == 0) {
        fs_err_set(err, "%s: no fold %d in this export", path, fold);
        goto out;
    }
    if ((v = json_get(doc.root, "run")) && v->type == FS_JSON_STRING) predict_set_run(set, v->str);
    rc = 0;
out:
    json_free(&doc);
    free(text);
    return rc;
}

/* One model of the export: its fold as the file's metadata names it (a
 * number, "predefined", or "all" for a refit), and what it trained: a fold
 * model's kept epoch and validation scores (floats: every digit), or a
 * refit's epochs and why (it has no validation set, so no score: none is
 * written). q3, loss: the run folder's (NAN: none known). */
static void json_model(FsJsonOut *w, const FsModelInfo *in, int fold, const char *file, const char *trial,
                       double q3, double loss)
{
    char name[16];
    modelfile_fold_name(fold, name, sizeof name);
    json_object_begin(w);
    if (trial) json_member_str(w, "trial", trial);
    json_key(w, "fold");
    if (fold >= 0)
        json_int(w, fold);
    else
        json_str(w, name);
    json_member_str(w, "file", file);
    if (fold == FS_FOLD_ALL) {
        json_member_int(w, "epochs", in->epochs ? in->epochs : in->best_epoch);
        if (in->epochs_rule[0]) json_member_str(w, "epochs_rule", in->epochs_rule);
        if (in->n_fold_best) {
            json_key(w, "fold_best_epochs");
            json_array_begin(w);
            for (int k = 0; k < in->n_fold_best; k++) json_int(w, in->fold_best[k]);
            json_end(w);
        }
    } else {
        json_member_int(w, "best_epoch", in->best_epoch);
        /* From a run folder: the leaderboard's doubles (shortest text, as mean and std). */
        if (isfinite(q3)) json_key(w, "val_q3"), json_num64(w, q3);
        else if (isfinite(in->val_q3)) json_key(w, "val_q3"), json_num32_full(w, in->val_q3);
        if (isfinite(loss)) json_key(w, "val_loss"), json_num64(w, loss);
        else if (isfinite(in->val_loss)) json_key(w, "val_loss"), json_num32_full(w, in->val_loss);
    }
    json_end(w);
}

/* A model's file name in the export: as in the run folder, or for a --top
 * set (several trials' fold0.safetensors ...) with its trial's id before. */
static void export_name(const FsModelSet *set, const FsEnsemble *e, int i, char *out, size_t n)
{
    const char *base = strrchr(set->path[i], '/');
    base = base ? base + 1 : set->path[i];
    if (set->top) snprintf(out, n, "%s-%s", e->m[i].info.trial, base);
    else snprintf(out, n, "%s", base);
}

/* A --top set's trials, best first: each id and its run folder. */
static void json_top(FsJsonOut *w, const FsModelSet *set, const FsEnsemble *e)
{
    json_member_int(w, "top", set->top);
    json_key(w, "trials");
    json_array_begin(w);
    for (int i = 0; i < e->n; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++) seen |= !strcmp(e->m[k].info.trial, e->m[i].info.trial);
        if (seen) continue;
        const int r = set->model_run[i];
        const char *run = r >= 0 && r < set->n_runs ? set->runs[r] : "";
        json_object_begin(w);
        json_member_str(w, "trial", e->m[i].info.trial);
        json_member_str(w, "run", run);
        json_end(w);
    }
    json_end(w);
}

/* model.json (docs/models.md, "model.json"): the top level a member a
 * line, the folds a model a line. The trial's leaderboard rank and score
 * are there when the models came from a run folder's ranking; a refit or
 * loose files have none to give. */
static int write_json(const char *dir, const char *run, const FsModelSet *set, const FsEnsemble *e, FsErr *err)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/model.json", dir);
    const FsSavedModel *m0 = &e->m[0];
    int refit = 1;
    for (int i = 0; i < e->n; i++) refit &= e->m[i].info.fold == FS_FOLD_ALL;
    char *arch = modelfile_arch_json(&m0->net);
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL, .pretty = 2, .spaced = 1};
    json_object_begin(&w);
    json_member_str(&w, "format", "foldsweep-export");
    json_member_int(&w, "version", 1);
    json_member_str(&w, "foldsweep_version", FS_VERSION);
    json_member_str(&w, "run", set->run[0] ? set->run : run);
    json_member_str(&w, "trial", predict_set_trial(set, e));
    json_member_str(&w, "models", refit ? "refit" : set->top ? "top" : "folds");
    if (set->top) json_top(&w, set, e);
    if (set->rank > 0) json_member_int(&w, "rank", set->rank);
    if (set->metric[0] && isfinite(set->mean)) {
        json_member_str(&w, "metric", set->metric);
        json_key(&w, "mean");
        json_num64(&w, set->mean);
        json_key(&w, "std");
        json_num64(&w, set->std);
    }
    if (e->m[0].net.arch.chain)
        json_member_str(&w, "window", "chain");
    else
        json_member_int(&w, "window", e->window);
    json_member_str(&w, "alphabet", FS_AA_ALPHABET);
    json_member_str(&w, "classes", fs_class_letters(e->classes));
    json_key(&w, "data_fingerprint");
    json_strf(&w, "%016llx", (unsigned long long)m0->info.data_fingerprint);
    json_key(&w, "arch");
    json_raw(&w, arch);
    json_key(&w, "config");
    json_raw(&w, m0->info.config); /* the model file's metadata: refused unless it is JSON */
    json_key(&w, "folds");
    json_array_begin(&w);
    for (int i = 0; i < e->n; i++) {
        const FsModelInfo *in = &e->m[i].info;
        char name[600];
        export_name(set, e, i, name, sizeof name);
        /* The set's fold where it knows one (a k-fold run folder), else the file's own. */
        json_model(&w, in, set->fold[i] >= 0 ? set->fold[i] : in->fold, name, set->top ? in->trial : NULL,
                   set->scored[i] ? set->val_q3[i] : NAN, set->scored[i] ? set->val_loss[i] : NAN);
    }
    json_end(&w);
    json_end(&w);
    json_tail(&w, "\n");
    free(arch);
    int rc = json_out_error(&w)
                 ? (fs_err_set(err, "%s: not written: %s (the \"config\" metadata of %s is not one JSON value)", path,
                               json_out_error(&w), set->path[0]),
                    -1)
                 : fs_write_file_atomic(path, w.p, w.n, err);
    json_out_free(&w);
    return rc;
}

int predict_export(const char *run, const FsModelSet *set, const char *out, FsErr *err)
{
    FsEnsemble *e = fs_calloc(1, sizeof *e);
    int ok = predict_load(e, set, 1, err) == 0 && fs_mkdir_p(out, err) == 0;
    for (int i = 0; ok && i < set->n; i++) {
        /* The bytes that were checked against the journal, as they are. */
        char name[600], dst[FS_PATH_IN_DIR];
        export_name(set, e, i, name, sizeof name);
        snprintf(dst, sizeof dst, "%s/%s", out, name);
        ok = modelfile_copy(set->path[i], dst, err) == 0;
    }
    ok = ok && write_json(out, run, set, e, err) == 0;
    predict_free(e);
    free(e);
    return ok ? 0 : -1;
}

