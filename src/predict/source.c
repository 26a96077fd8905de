/*
 * source: which files make a trial's ensemble (an exported folder,
 * export.c; a run folder and a trial, trial.c; or model files), loading
 * them, and whether they are one trial's.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "predict/predict.h"
#include "predict/predict_int.h"

static int is_dir(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISDIR(s.st_mode);
}

static int has_file(const char *dir, const char *name)
{
    char p[FS_PATH_IN_DIR];
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

int predict_run_dir(const char *dir, char *abs, size_t n)
{
    char p[PATH_MAX];
    if (!realpath(dir, p) || !has_file(p, "journal.jsonl") || strlen(p) >= n) return 0;
    memcpy(abs, p, strlen(p) + 1);
    return 1;
}

int predict_set_add_run(FsModelSet *set, const char *dir, const char *trial)
{
    char abs[sizeof set->runs[0]];
    if (!predict_run_dir(dir, abs, sizeof abs)) return -1; /* then not recorded, as predict_set_run */
    for (int i = 0; i < set->n_runs; i++)
        if (!strcmp(set->runs[i], abs)) return i;
    if (set->n_runs == FS_PREDICT_MAX_RUNS) return -1;
    snprintf(set->run_trial[set->n_runs], sizeof set->run_trial[0], "%s", trial);
    memcpy(set->runs[set->n_runs], abs, strlen(abs) + 1);
    return set->n_runs++;
}

void predict_set_run(FsModelSet *set, const char *dir)
{
    if (!set->run[0]) predict_run_dir(dir, set->run, sizeof set->run);
}

int predict_set_add(FsModelSet *set, const char *dir, const char *file, int fold, FsErr *err)
{
    if (set->n >= FS_PREDICT_MAX_MODELS)
        return fs_err_set(err, "more than %d models in one ensemble", FS_PREDICT_MAX_MODELS), -1;
    if (dir)
        snprintf(set->path[set->n], sizeof set->path[0], "%s/%s", dir, file);
    else
        snprintf(set->path[set->n], sizeof set->path[0], "%s", file);
    set->scored[set->n] = 0;
    set->fold[set->n++] = fold;
    return 0;
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
        predict_set_run(set, up);
        return predict_set_add(set, NULL, source, -1, err);
    }
    if (set->n > 0) return fs_err_set(err, "%s: give one model folder, or model files", source), -1;
    if (has_file(source, "model.json")) return predict_export_read(set, source, fold, err);
    if (has_file(source, "journal.jsonl")) return predict_run_find(set, source, trial, rank, fold, err);
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
        if (i > 0 && e->m[i].net.classes != e->classes) {
            fs_err_set(err, "%s: %d classes, but %s has %d: models of one ensemble predict the same classes",
                       set->path[i], e->m[i].net.classes, set->path[0], e->classes);
            predict_free(e);
            return -1;
        }
        e->classes = e->m[i].net.classes;
    }
    return 0;
}

void predict_free(FsEnsemble *e)
{
    for (int i = 0; i < e->n; i++) modelfile_free(&e->m[i]);
    e->n = 0;
}

const char *predict_set_trial(const FsModelSet *set, const FsEnsemble *e)
{
    return set->trial[0] ? set->trial : e->m[0].info.trial;
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
        int m = mix_of(e, set, 0, i) & (set->top ? FS_MIX_DATA : ~0);
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
