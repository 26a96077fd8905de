/*
 * records.c: the journal's records in memory: the lists journal_open and
 * the appends fill (the first record of a key wins), the hash indexes
 * behind journal_find_fold and journal_find_trial, and the lookups. No
 * file access here: decode.c turns lines into these calls, journal.c and
 * journal_write.c own the file.
 */
#include <stdlib.h>
#include <string.h>

#include "journal/journal_internal.h"

/* ---------------------------------------------------------------------- */
/* Hash indexes: (trial, fold, seed) -> folds[i], trial -> trials[i]        */

static uint64_t key_hash(const char *trial, int fold)
{
    uint64_t h = fs_fnv1a64(trial, strlen(trial), FS_FNV_OFFSET);
    uint32_t f = (uint32_t)fold;
    return fs_fnv1a64(&f, sizeof f, h);
}

/* A seed replicate's fold hashes apart from the trial's own (seed 0 keeps
 * key_hash's value). */
static uint64_t fold_hash(const char *trial, int fold, int seed)
{
    uint64_t h = key_hash(trial, fold);
    if (!seed) return h;
    uint32_t s = (uint32_t)seed;
    return fs_fnv1a64(&s, sizeof s, h);
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
    return fold_hash(j->folds[i].trial, j->folds[i].fold, j->folds[i].seed);
}
static uint64_t trial_rehash(const FsJournal *j, int i) { return key_hash(j->trials[i].trial, 0); }

const FsFoldRecord *journal_find_fold_seed(const FsJournal *j, const char *trial, int fold, int seed)
{
    if (!j->fold_index_cap) return NULL;
    int m = j->fold_index_cap - 1;
    for (int s = (int)(fold_hash(trial, fold, seed) & (uint64_t)m); j->fold_index[s] >= 0; s = (s + 1) & m) {
        const FsFoldRecord *r = &j->folds[j->fold_index[s]];
        if (r->fold == fold && r->seed == seed && !strcmp(r->trial, trial)) return r;
    }
    return NULL;
}

const FsFoldRecord *journal_find_fold(const FsJournal *j, const char *trial, int fold)
{
    return journal_find_fold_seed(j, trial, fold, 0);
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
    r->version = j->n_sweep_versions > 1 ? j->n_sweep_versions : 1;
    index_put(&j->trial_index, &j->trial_index_cap, j->n_trials, key_hash(trial, 0), j->n_trials,
              trial_rehash, j);
    j->n_trials++;
    return 1;
}

static void copy_curve(float *dst, const float *src, int n)
{
    if (src && n > 0) memcpy(dst, src, (size_t)n * sizeof *dst);
}

int journal_add_fold(FsJournal *j, const char *trial, int fold, int seed, const FsFitResult *r, double t)
{
    if (journal_find_fold_seed(j, trial, fold, seed)) return 0;
    GROW(j->folds, j->n_folds, j->cap_folds);
    FsFoldRecord *f = &j->folds[j->n_folds];
    memset(f, 0, sizeof *f);
    snprintf(f->trial, sizeof f->trial, "%s", trial);
    f->fold = fold;
    f->seed = seed;
    if (seed > j->max_seed) j->max_seed = seed;
    f->time = t;
    f->version = j->n_sweep_versions > 1 ? j->n_sweep_versions : 1;
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
    index_put(&j->fold_index, &j->fold_index_cap, j->n_folds, fold_hash(trial, fold, seed), j->n_folds,
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

int journal_is_discarded(const FsJournal *j, const char *trial)
{
    for (int i = 0; i < j->n_discarded; i++)
        if (!strcmp(j->discarded[i], trial)) return 1;
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

void journal_add_discard(FsJournal *j, const char *trial)
{
    if (journal_is_discarded(j, trial)) return;
    GROW(j->discarded, j->n_discarded, j->cap_discarded);
    snprintf(j->discarded[j->n_discarded++], 17, "%s", trial);
}

void journal_set_sweep_record(FsJournal *j, const char *text, const uint64_t *val, int n_val)
{
    if (!j->sweep_text || strcmp(j->sweep_text, text)) { /* a new version (not the same one's residues) */
        j->sweep_versions = fs_realloc(j->sweep_versions, (size_t)(j->n_sweep_versions + 1) * sizeof *j->sweep_versions);
        j->sweep_versions[j->n_sweep_versions++] = fs_strdup(text);
    }
    free(j->sweep_text);
    free(j->sweep_val);
    j->sweep_text = fs_strdup(text);
    j->sweep_val = fs_calloc((size_t)n_val + 1, sizeof *j->sweep_val);
    if (n_val) memcpy(j->sweep_val, val, sizeof *val * (size_t)n_val);
    j->n_sweep_val = n_val;
}
