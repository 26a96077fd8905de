/*
 * refit: a trial's configuration trained once more on every protein the
 * sweep trains or validates on (all folds together). No validation set is
 * left to stop on, so it trains the median of the trial's folds' best
 * epochs (the middle one; for an even count the mean of the two middle
 * ones, rounded up) and keeps the last epoch's weights; its file says so
 * (epochs, rule, the folds' best epochs) and has no validation score. Its seed comes from
 * the sweep seed, the trial id and FS_FOLD_ALL, so a refit is the same bit
 * for bit whatever thread or rank trains it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modelfile/modelfile.h"
#include "run/gpu_driver.h"
#include "run/state.h"

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int run_refit_epochs(const FsJournal *j, const char *trial, const FsFolds *folds, int *best)
{
    int e[FS_MAX_FOLDS], n = 0;
    for (int k = 0; k < folds->n && n < FS_MAX_FOLDS; k++) {
        const FsFoldRecord *fr = journal_find_fold(j, trial, data_fold_id(folds, k));
        if (!fr || fr->r.status != FS_FIT_OK || fr->r.best_epoch < 1) return 0;
        e[n++] = fr->r.best_epoch;
    }
    if (n == 0) return 0;
    if (best) memcpy(best, e, (size_t)n * sizeof *e); /* in fold order, before the sort */
    qsort(e, (size_t)n, sizeof e[0], cmp_int);
    return n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2] + 1) / 2;
}

void run_refit_file(char *out, size_t n, const char *trial)
{
    snprintf(out, n, "refits/%s/refit.safetensors", trial);
}

int run_refit_trial(const char *dir, FsJournal *j, const FsDataset *ds, const FsFeatSpec *features, const FsTrial *tr,
                    const FsFolds *folds,
                    const uint64_t *seen, uint32_t n_seen, int threads, int gpu, FsErr *err)
{
    FsModelInfo info = {.trial_index = tr->index, .fold = FS_FOLD_ALL, .folds = folds->n, .val_q3 = NAN,
                        .val_loss = NAN, .data_fingerprint = ds->fingerprint, .config = tr->config,
                        .seen = (uint64_t *)seen, .n_seen = n_seen};
    const int epochs = run_refit_epochs(j, tr->id, folds, info.fold_best);
    if (epochs < 1) return fs_err_set(err, "trial %s: no best epochs to refit for", tr->id), -1;
    info.best_epoch = info.epochs = epochs; /* the last epoch's weights are kept */
    info.n_fold_best = folds->n;
    snprintf(info.epochs_rule, sizeof info.epochs_rule, "%s", FS_REFIT_RULE);
    snprintf(info.trial, sizeof info.trial, "%s", tr->id);
    FsTrainSpec ts;
    sweep_fold_spec(&ts, tr, FS_FOLD_ALL);
    ts.stop.kind = FS_STOP_MAX_EPOCHS;
    ts.stop.max_epochs = epochs;
    FsFitResult r;
    train_result_alloc(&r, epochs);
    FsJob job = {&tr->arch, &ts, ds, FS_FOLD_ALL, &r, train_result_alloc_weights(&r, &tr->arch), NULL, NULL, NULL, NULL, NULL, 0, 0};
    int rc = -1;
    /* One job: on the run's GPU, or the pool's other threads help it
     * (bit-identical either way). */
    if (gpu >= 0) {
        if (run_gpu_train_one(gpu, ds, &job, err) != 0) goto out;
    } else {
        FS_ASSERT(threads >= 1); /* run_settings' solo_threads */
        train_jobs(&job, 1, threads);
    }
    if (r.status != FS_FIT_OK || !r.weights) {
        fs_err_set(err, "refit of trial %s: %s", tr->id,
                   r.status == FS_FIT_FAILED || r.message[0] ? r.message /* failed, or no memory for it */
                   : r.status == FS_FIT_DIVERGED ? "diverged (a non-finite loss or gradient)"
                                                 : "did not finish");
        goto out;
    }
    FsNet net;
    if (model_compile(&net, &tr->arch, 1, err) != 0) goto out;
    uint8_t *bytes;
    uint64_t n;
    FsSeqSet seqs;
    data_seqset_of(&seqs, ds);
    info.seen_seqs = &seqs;
    info.features = features && features->n ? modelfile_features_json(features) : NULL;
    modelfile_serialize(&net, r.weights, &info, &bytes, &n);
    free(info.features);
    data_seqset_free(&seqs);
    char rel[128], path[FS_PATH_IN_DIR];
    FsModelRef ref;
    memset(&ref, 0, sizeof ref);
    run_refit_file(rel, sizeof rel, tr->id);
    snprintf(path, sizeof path, "%s/refits/%s", dir, tr->id);
    rc = fs_mkdir_p(path, err);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (rc == 0) rc = fs_write_file_atomic(path, bytes, (size_t)n, err);
    if (rc == 0) {
        snprintf(ref.file, sizeof ref.file, "%s", rel);
        ref.bytes = n;
        ref.crc32 = modelfile_crc(bytes, n);
        rc = journal_append_refit(j, tr->id, epochs, &ref, err);
    }
    free(bytes);
out:
    train_result_free(&r);
    return rc;
}

/* After a refit: how to check it against the trial's fold ensemble. No
 * validation set stopped it, so it may score below the ensemble (a
 * k-model average) and even below its fold models (docs/models.md,
 * "Refit": measured on UCI and FLIP), and only proteins neither saw can
 * tell: the two evaluate commands, the test section that does both, and
 * the latest recorded look at the ensemble, the number to beat. */
static void refit_guide(FILE *out, const char *dir, const FsJournal *j, const char *trial, const char *file)
{
    const FsEvalRecord *ens = NULL;
    for (int i = 0; i < j->n_evals; i++)
        if (!strcmp(j->evals[i].trial, trial) && !strcmp(j->evals[i].models, "ensemble")) ens = &j->evals[i];
    fprintf(out, "check the refit against the trial's fold ensemble on held-out proteins (one model, no validation "
                 "set: it can score below them):\n  %s evaluate ", fs_program());
    fs_put_shell_word(out, dir);
    fprintf(out, " --trial %s TEST     # the fold ensemble\n  %s evaluate ", trial, fs_program());
    fs_put_shell_word(out, file);
    fputs(" TEST     # the refit\n"
          "  or in the sweep file: test: {inputs: [TEST], refit: true}, then run it again (nothing is "
          "trained again)\n",
          out);
    if (ens)
        fprintf(out, "  the fold ensemble scored Q3 %s%% on %s (%s); keep the refit only if it does as well\n",
                fs_percent_text(ens->q3), ens->data, !strcmp(ens->source, "test") ? "the test section" : "foldsweep evaluate");
}

/* `foldsweep refit RUN`: the run folder's canonical sweep and data, its
 * journal (locked: not while a run writes it), the trial by id prefix or
 * rank; an intact recorded refit is not trained again. */
int run_refit_command(const char *dir, const char *id, int threads, char *file, size_t file_n, FILE *out)
{
    FsSweep sw;
    FsDataset ds;
    FsJournal j;
    FsErrList errs = {0};
    FsErr err = {0};
    char path[FS_PATH_IN_DIR];
    memset(&ds, 0, sizeof ds);
    memset(&j, 0, sizeof j);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    int rc = -1;
    if (sweep_load_file(&sw, path, &errs) != 0 || sweep_load_data(&sw, &ds, &errs) != 0 ||
        sweep_bind_data(&sw, &ds, &errs) != 0) {
        errlist_print(&errs);
        sweep_free(&sw);
        data_free(&ds);
        return -1;
    }
    FsFolds folds = data_folds_of(sw.predefined, (int)ds.n_folds);
    uint64_t *seen = NULL;
    uint32_t n_seen = data_seen_hashes(&ds, &seen);
    if (journal_open(&j, dir, &err) != 0 || run_folder_check_trials(dir, &j, &sw, NULL, &err) != 0) goto out;
    /* The command line resolved --trial / --rank to a whole id
     * (predict_trial_id, the one resolver of both). */
    const FsTrial *tr = NULL;
    for (int t = 0; t < sw.n_trials && !tr; t++)
        if (!strcmp(sw.trials[t].id, id)) tr = &sw.trials[t];
    int epochs = tr ? run_refit_epochs(&j, tr->id, &folds, NULL) : 0;
    if (!tr)
        fs_err_set(&err, "%s: no trial %s in this sweep", dir, id);
    else if (epochs < 1)
        fs_err_set(&err, "%s: trial %s has folds still to train, or that did not train to a best epoch: nothing to "
                   "refit for", dir, tr->id);
    if (err.set) goto out;
    const FsRefitRecord *rr = journal_find_refit(&j, tr->id);
    char why[200];
    if (rr) snprintf(path, sizeof path, "%s/%s", dir, rr->model.file);
    if (rr && modelfile_verify(path, rr->model.bytes, rr->model.crc32, why, sizeof why) == 0) {
        fprintf(out, "trial %s: refit already saved (%d epochs): %s\n", tr->id, rr->epochs, path);
    } else {
        fprintf(out, "trial %s: refitting on %u training residues for %d epochs (the %s)\n", tr->id,
                data_examples(&ds, FS_FOLD_ALL, 0, NULL), epochs, FS_REFIT_RULE);
        FsRunOptions o = {.threads = threads, .backend = -1, .gpu_path = -1};
        FsRunSettings set;
        FsMpi alone;
        fsmpi_alone(&alone);
        run_settings(&set, &o, &sw, &alone);
        if (run_refit_trial(dir, &j, &ds, &sw.features, tr, &folds, seen, n_seen, set.solo_threads, -1, &err) != 0) goto out;
        rr = journal_find_refit(&j, tr->id);
        snprintf(path, sizeof path, "%s/%s", dir, rr->model.file);
        fprintf(out, "saved %s\n", path);
    }
    refit_guide(out, dir, &j, tr->id, path);
    snprintf(file, file_n, "%s", path);
    rc = 0;
out:
    if (err.set) fprintf(stderr, "foldsweep: %s\n", err.msg);
    if (j.path) journal_close(&j);
    free(seen);
    data_free(&ds);
    sweep_free(&sw);
    return rc;
}
