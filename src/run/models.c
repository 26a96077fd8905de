/*
 * models: the run folder's trained models (docs/models.md). Rank 0 writes
 * each finished fold's best weights to models/<trial>/fold<k>.safetensors
 * (durably, before the fold's journal record names it), checks them on
 * resume, and at the end of a run keeps the run.keep_models best trials'.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "modelfile/modelfile.h"
#include "report/report.h"
#include "run/state.h"

void run_model_file(char *out, size_t n, const char *trial, int fold)
{
    if (fold == FS_FOLD_PREDEFINED)
        snprintf(out, n, "models/%s/predefined.safetensors", trial);
    else
        snprintf(out, n, "models/%s/fold%d.safetensors", trial, fold);
}

/* Test hook KILL_AFTER_MODEL=N (util/faults.c) kills the process (SIGKILL,
 * no cleanup) right after the Nth model file is in place and before its
 * journal record: the window a crash-safe resume must handle. */
static void maybe_die_after_model(void)
{
    static int count;
    const char *s = fs_test_fault("KILL_AFTER_MODEL");
    if (s && ++count == atoi(s)) {
        fflush(NULL);
        raise(SIGKILL);
    }
}

int run_model_save(RunState *st, int i, FsModelRef *ref, FsErr *err)
{
    const FsFitResult *r = &st->jobs[i].res;
    const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
    int fold = st->jobs[i].job.fold;
    memset(ref, 0, sizeof *ref);
    if (r->status != FS_FIT_OK || r->best_epoch < 1) return 0; /* no best weights to keep */
    FsNet net;
    FsErr ce = {0};
    if (model_compile(&net, &tr->arch, 1, &ce) != 0 || !r->weights ||
        r->n_weights != net.n_params + net.n_state) {
        fprintf(stderr, "foldsweep: warning: trial %s fold %d came back without its weights (%ld floats); its "
                        "scores are recorded, its model is not saved\n", tr->id, fold, r->weights ? r->n_weights : 0L);
        return 0;
    }
    FsMetrics m;
    metrics_from_classes(&m, r->classes, r->best_confusion);
    FsModelInfo info = {.trial_index = tr->index, .fold = fold, .folds = st->folds.n,
                        .best_epoch = r->best_epoch, .val_q3 = (float)m.q3, .val_loss = r->best_val_loss,
                        .data_fingerprint = st->ds.fingerprint, .config = tr->config,
                        .seen = st->seen, .n_seen = st->n_seen};
    snprintf(info.trial, sizeof info.trial, "%s", tr->id);
    uint8_t *bytes;
    uint64_t n;
    FsSeqSet seqs; /* the proteins themselves, for evaluate's identity check (a copy: milliseconds on FLIP) */
    data_seqset_of(&seqs, &st->ds);
    info.seen_seqs = &seqs;
    info.features = st->sw.features.n ? modelfile_features_json(&st->sw.features) : NULL;
    modelfile_serialize(&net, r->weights, &info, &bytes, &n);
    free(info.features);
    data_seqset_free(&seqs);
    char rel[128], path[FS_PATH_IN_DIR];
    run_model_file(rel, sizeof rel, tr->id, fold);
    snprintf(path, sizeof path, "%s/models/%s", st->dir, tr->id);
    int rc = fs_mkdir_p(path, err);
    snprintf(path, sizeof path, "%s/%s", st->dir, rel);
    if (rc == 0) rc = fs_write_file_atomic(path, bytes, (size_t)n, err);
    if (rc == 0) {
        snprintf(ref->file, sizeof ref->file, "%s", rel);
        ref->bytes = n;
        ref->crc32 = modelfile_crc(bytes, n);
        maybe_die_after_model();
    }
    free(bytes);
    return rc;
}

int run_model_check(const RunState *st, const FsFoldRecord *fr, char *why, size_t why_n)
{
    if (!fr->model.file[0] || journal_is_discarded(&st->j, fr->trial)) return 0;
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/%s", st->dir, fr->model.file);
    return modelfile_verify(path, fr->model.bytes, fr->model.crc32, why, why_n);
}

/* Removes a trial's model files and then its folder (a folder that is not
 * empty, e.g. holding a user's own file, stays). */
static void remove_trial_files(const RunState *st, const char *trial)
{
    char path[FS_PATH_IN_DIR];
    for (int k = 0; k < st->folds.n; k++) {
        const FsFoldRecord *fr = journal_find_fold(&st->j, trial, data_fold_id(&st->folds, k));
        if (!fr || !fr->model.file[0]) continue;
        snprintf(path, sizeof path, "%s/%s", st->dir, fr->model.file);
        if (unlink(path) != 0 && errno != ENOENT)
            fprintf(stderr, "foldsweep: warning: %s: cannot remove: %s\n", path, strerror(errno));
    }
    snprintf(path, sizeof path, "%s/models/%s", st->dir, trial);
    (void)rmdir(path);
}

int run_models_discard(RunState *st, FsErr *err)
{
    int keep = st->set.keep_models;
    if (keep == FS_KEEP_ALL) return 0;
    FsReportSpec spec;
    FsReport rep;
    report_spec_from_sweep(&spec, &st->sw);
    report_build(&rep, &st->j, &spec);
    int ok_seen = 0, rc = 0, removed = 0;
    for (int r = 0; r < rep.n_rows && rc == 0; r++) {
        const FsReportRow *row = &rep.rows[r];
        /* A trial with folds left may still rank anywhere: keep its files.
         * A complete trial outside the top N only falls as others finish. */
        if (row->status == FS_TRIAL_INCOMPLETE) continue;
        if (row->status == FS_TRIAL_OK && ok_seen++ < keep) continue;
        if (journal_is_discarded(&st->j, row->id)) {
            remove_trial_files(st, row->id); /* a kill between record and unlink */
            continue;
        }
        int has = 0;
        for (int k = 0; k < st->folds.n; k++) {
            const FsFoldRecord *fr = journal_find_fold(&st->j, row->id, data_fold_id(&st->folds, k));
            has |= fr && fr->model.file[0];
        }
        if (!has) continue;
        /* The record first: a kill after it leaves files that the next
         * run's discard removes, never a record naming a file it needs. */
        rc = journal_append_discard(&st->j, row->id, err);
        if (rc == 0) {
            remove_trial_files(st, row->id);
            removed++;
        }
    }
    st->models_discarded = removed;
    report_free(&rep);
    return rc;
}
