/*
 * evaluate: an ensemble's predictions scored on a labelled test set, the
 * field's way (Q3, per-class precision / recall / MCC, SOV'99, per-protein
 * Q3 and a bootstrap interval over proteins); and the one pipeline that
 * `foldsweep evaluate` and the run's test phase share: the leakage guard
 * (leakage.c), the ensemble over the data, the scores, the journal record.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "predict/predict_int.h"

uint32_t evaluate_overlap(FsEvaluation *ev, const FsEnsemble *e, const FsDataset *ds, int *unchecked)
{
    ev->overlap = 0;
    ev->n_names = 0;
    *unchecked = 0;
    for (int k = 0; k < e->n; k++) *unchecked += e->m[k].info.n_seen == 0;
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        uint64_t h = data_protein_hash(ds, i);
        int hit = 0;
        for (int k = 0; k < e->n && !hit; k++) hit = data_hash_seen(e->m[k].info.seen, e->m[k].info.n_seen, h);
        if (!hit) continue;
        if (ev->n_names < FS_EVAL_NAMES)
            snprintf(ev->names[ev->n_names++], sizeof ev->names[0], "%s", data_protein_name(ds, i));
        ev->overlap++;
    }
    return ev->overlap;
}

void evaluate_score(FsEvaluation *ev, const FsDataset *ds, const float *probs, int classes, int reps, uint64_t seed)
{
    /* With 8 classes: the 8 x 8 confusion; SOV, per-protein Q3 and its
     * interval on the reduced states (the 8-state argmax reduced). 8-state
     * probabilities against 3-state labels: the argmax reduced, 3 x 3. */
    const int K = fs_classes(ds->classes), P = fs_classes(classes);
    ev->reduced = P != K ? P : 0;
    uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}};
    uint8_t *obs8 = fs_malloc((size_t)ds->n_res + 1), *pred8 = fs_malloc((size_t)ds->n_res + 1);
    memset(&ev->sov, 0, sizeof ev->sov);
    uint64_t *correct = fs_calloc((size_t)ds->n_prot + 1, sizeof(uint64_t));
    uint64_t *total = fs_calloc((size_t)ds->n_prot + 1, sizeof(uint64_t));
    double *q3 = fs_calloc((size_t)ds->n_prot + 1, sizeof(double));
    uint8_t *obs = fs_malloc((size_t)ds->n_res + 1), *pred = fs_malloc((size_t)ds->n_res + 1);
    uint8_t *scored = fs_malloc((size_t)ds->n_res + 1);
    for (uint32_t r = 0; r < ds->n_res; r++) {
        obs8[r] = (uint8_t)FS_SS_CLASS(ds->ss[r]);
        int p = predict_class(probs + (size_t)r * (size_t)P, P);
        pred8[r] = (uint8_t)(P == K ? p : fs_class_reduce(P, p));
        obs[r] = (uint8_t)fs_class_reduce(K, obs8[r]);
        pred[r] = (uint8_t)fs_class_reduce(K, pred8[r]);
        scored[r] = (uint8_t)FS_SS_SCORED(ds->ss[r]);
    }
    ev->residues = ds->n_res;
    ev->scored = 0;
    ev->proteins = 0;
    int np = 0;
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        /* SOV per chain: a segment never spans a chain break. */
        for (uint32_t g = ds->prot_seg[i]; g < ds->prot_seg[i + 1]; g++) {
            uint32_t lo = ds->seg_off[g], hi = ds->seg_off[g + 1];
            metrics_sov_add(&ev->sov, obs + lo, pred + lo, scored + lo, hi - lo);
            for (uint32_t r = lo; r < hi; r++) {
                if (!scored[r]) continue;
                conf[obs8[r]][pred8[r]]++;
                total[np]++;
                correct[np] += obs[r] == pred[r];
            }
        }
        if (total[np]) {
            q3[np] = (double)correct[np] / (double)total[np];
            ev->scored += total[np];
            np++;
        } else {
            correct[np] = 0; /* a protein with nothing scored is not a sample */
        }
    }
    ev->proteins = (uint32_t)np;
    metrics_from_classes(&ev->m, K, conf);
    double sum = 0.0;
    for (int i = 0; i < np; i++) sum += q3[i];
    ev->prot_mean = np ? sum / np : NAN;
    ev->prot_median = metrics_quantile(q3, np, 0.5);
    ev->prot_p10 = metrics_quantile(q3, np, 0.1);
    ev->reps = reps;
    ev->seed = seed;
    if (metrics_bootstrap_q3(correct, total, np, reps, seed, &ev->ci_lo, &ev->ci_hi) != 0) ev->ci_lo = ev->ci_hi = NAN;
    ev->data_fingerprint = ds->fingerprint;
    free(correct), free(total), free(q3), free(obs), free(pred), free(scored), free(obs8), free(pred8);
}

/* The journal record of an evaluation: of trial's `models` ("ensemble",
 * "fold K", "refit") by `source` ("evaluate", "test"). */
static void evaluate_record(FsEvalRecord *r, const FsEvaluation *ev, const char *trial, const char *models,
                            const char *source)
{
    memset(r, 0, sizeof *r);
    snprintf(r->trial, sizeof r->trial, "%s", trial);
    snprintf(r->models, sizeof r->models, "%s", models);
    snprintf(r->source, sizeof r->source, "%s", source);
    snprintf(r->data, sizeof r->data, "%s", ev->data);
    r->data_fingerprint = ev->data_fingerprint;
    r->proteins = ev->proteins;
    r->scored = ev->scored;
    r->overlap = ev->overlap;
    r->q3 = ev->m.q3;
    r->q3_lo = ev->ci_lo;
    r->q3_hi = ev->ci_hi;
    r->sov = metrics_sov(&ev->sov, FS_CLASSES); /* all classes */
    r->classes = ev->m.classes;
    r->q8 = ev->m.q8;
    r->identity_checked = ev->ident.checked;
    r->identity_max = ev->ident.max;
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++) r->identity_above[l] = ev->ident.above[l];
    r->identity_left_out = ev->ident.left_out;
    r->coverage_max = ev->ident.max_coverage;
    r->coverage_over = ev->ident.covered;
}

int predict_evaluate(FsEvaluation *ev, const FsEnsemble *e, FsDataset *ds, const FsEvalSpec *spec, FsErr *err)
{
    if (predict_guard(ev, e, ds, spec, err) != 0) return -1;
    uint64_t scored = 0;
    for (uint32_t r = 0; r < ds->n_res; r++) scored += FS_SS_SCORED(ds->ss[r]);
    if (scored == 0) return fs_err_set(err, "%s: no scored residues to evaluate on", ev->data), -1;
    /* 8-state models score 3-state labels by their predictions reduced
     * (evaluate_score); for 3-state models the data is read as 3 states
     * (8-state labels reduced as they load). */
    if (fs_classes(ds->classes) == FS_CLASSES8 && fs_classes(e->classes) != FS_CLASSES8)
        return fs_err_set(err, "%s: labels of %d classes, but the models predict %d", ev->data,
                          fs_classes(ds->classes), fs_classes(e->classes)),
               -1;
    float *probs = fs_malloc(sizeof(float) * (size_t)fs_classes(e->classes) * ((size_t)ds->n_res + 1));
    int rc = predict_run(e, ds, spec->threads, FS_PREDICT_BATCH, probs, NULL, err);
    if (rc == 0) evaluate_score(ev, ds, probs, e->classes, spec->reps, spec->seed);
    free(probs);
    return rc;
}

int predict_evaluate_record(FsJournal *j, const char *run, const FsEvaluation *ev, const char *trial,
                            const char *models, const char *source, FsErr *err)
{
    FsJournal own;
    if (!j) {
        if (journal_open(&own, run, err) != 0) return -1;
        j = &own;
    }
    FsEvalRecord r;
    evaluate_record(&r, ev, trial, models, source);
    int rc = journal_append_eval(j, &r, err);
    if (j == &own) journal_close(&own);
    return rc;
}

/* The distinct trials of the ensemble, "A, B, ..." (a mixed one's). */
static void list_trials(const FsEnsemble *e, char *out, size_t n)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < e->n && at < n; i++) {
        int dup = 0;
        for (int k = 0; k < i; k++) dup |= !strcmp(e->m[k].info.trial, e->m[i].info.trial);
        if (!dup) at += (size_t)snprintf(out + at, n - at, "%s%s", at ? ", " : "", e->m[i].info.trial);
    }
}

void predict_evaluate_names(const FsModelSet *set, const FsEnsemble *e, int fold, const char *mixed, char *models,
                            size_t n, char *key, size_t kn)
{
    const char *trial = predict_set_trial(set, e);
    if (set->top) {
        char trials[1200], runs[2400] = "";
        list_trials(e, trials, sizeof trials);
        for (int i = 0; i < set->n_runs; i++)
            snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%s", i ? ", " : "", set->runs[i]);
        snprintf(key, kn, "top %d", set->top);
        snprintf(models, n, "top %d trials by validation %s (trials %s), ensemble of %d models, run%s %s", set->top,
                 set->metric, trials, e->n, set->n_runs > 1 ? "s" : "", runs);
        return;
    }
    if (mixed[0]) {
        char trials[1200];
        list_trials(e, trials, sizeof trials);
        snprintf(key, kn, "%s", mixed);
        snprintf(models, n, "%s ensemble of %d models (trials %s)%s%s", mixed, e->n, trials,
                 set->run[0] ? ", recorded in run " : "", set->run);
        return;
    }
    if (e->n == 1 && e->m[0].info.fold == FS_FOLD_ALL) snprintf(key, kn, "refit");
    else if (fold >= 0) snprintf(key, kn, "fold %d", fold);
    else if (e->n == 1 && e->m[0].info.folds > 1) snprintf(key, kn, "fold %d", e->m[0].info.fold);
    else snprintf(key, kn, "ensemble");
    snprintf(models, n, "trial %s, %s of %d model%s%s%s", trial[0] ? trial : "?", key, e->n, e->n == 1 ? "" : "s",
             set->run[0] ? ", run " : "", set->run);
}
