/*
 * trial: "a trial by id prefix or rank", the one rule of every command that
 * takes --trial ID or --rank N (export, refit, predict, evaluate), over a
 * run folder's leaderboard; and that trial's fold models in the folder.
 * One rule, so the same mistake gets the same message whichever command
 * made it.
 */
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "predict/predict_int.h"

const FsReportRow *predict_trial_row(const FsReport *rep, const char *dir, const char *trial, int rank, int whole,
                                     FsErr *err)
{
    const FsReportRow *row = NULL;
    for (int i = 0; i < rep->n_rows; i++) {
        const FsReportRow *x = &rep->rows[i];
        if (trial ? strncmp(x->id, trial, strlen(trial)) != 0 : x->rank != rank) continue;
        if (row)
            return fs_err_set(err, "%s: trial '%s' is ambiguous (%s, %s, ...): give more of its id", dir, trial,
                              row->id, x->id), NULL;
        row = x;
    }
    if (!row && trial)
        return fs_err_set(err, "%s: no trial '%s' in the journal (see %s leaderboard %s)", dir, trial, fs_program(),
                          dir),
               NULL;
    if (!row) return fs_err_set(err, "%s: no trial at rank %d (the leaderboard has %d)", dir, rank, rep->n_rows), NULL;
    /* A trial that was pruned, diverged, failed or has folds to train has
     * fold models that are not one ensemble: one of them may still serve. */
    if (whole && row->status != FS_TRIAL_OK)
        return fs_err_set(err, "%s: trial %s is %s%s%s: its fold models do not form an ensemble (give --fold K for "
                          "one)", dir, row->id, report_status_name(row->status), row->reason[0] ? ": " : "",
                          row->reason), NULL;
    return row;
}

int predict_board_open(PredictBoard *b, const char *dir, FsErr *err)
{
    int from_journal;
    if (journal_read(&b->j, dir, err) != 0) return -1;
    if (report_spec_load(&b->spec, dir, &b->j, &from_journal, err) != 0) {
        journal_close(&b->j);
        return -1;
    }
    report_build(&b->rep, &b->j, &b->spec);
    return 0;
}

void predict_board_close(PredictBoard *b)
{
    report_free(&b->rep);
    journal_close(&b->j);
}

int predict_trial_id(const char *dir, const char *trial, int rank, char *id, size_t n, FsErr *err)
{
    PredictBoard *b = fs_calloc(1, sizeof *b);
    int rc = -1;
    if (predict_board_open(b, dir, err) == 0) {
        const FsReportRow *row = predict_trial_row(&b->rep, dir, trial, rank, 0, err);
        if (row) rc = 0, snprintf(id, n, "%s", row->id);
        predict_board_close(b);
    }
    free(b);
    return rc;
}

int predict_board_add_folds(FsModelSet *set, const PredictBoard *b, const char *dir, const FsReportRow *row, int fold,
                            FsErr *err)
{
    FsFolds folds = data_folds_of(b->spec.predefined, b->spec.folds);
    for (int k = 0; k < folds.n; k++) {
        int fid = data_fold_id(&folds, k);
        if (fold >= 0 && fid != fold) continue;
        const FsFoldRecord *fr = journal_find_fold(&b->j, row->id, fid);
        char why[160], path[FS_PATH_IN_DIR];
        if (!fr || !fr->model.file[0])
            return fs_err_set(err, "%s: trial %s fold %d has no saved model (%s)", dir, row->id, fid,
                              fr ? "trained by a foldsweep that did not keep models, or did not train to a best epoch"
                                 : "not trained yet"), -1;
        snprintf(path, sizeof path, "%s/%s", dir, fr->model.file);
        if (modelfile_verify(path, fr->model.bytes, fr->model.crc32, why, sizeof why) != 0)
            return fs_err_set(err, "%s: %s (rerun the sweep to restore it)", path, why), -1;
        if (predict_set_add(set, dir, fr->model.file, fid, err)) return -1;
        set->val_q3[set->n - 1] = row->folds[k].q3; /* the leaderboard's, to the last digit */
        set->val_loss[set->n - 1] = row->folds[k].loss;
        set->scored[set->n - 1] = 1;
    }
    if (set->n == 0) return fs_err_set(err, "%s: trial %s has no fold %d", dir, row->id, fold), -1;
    return 0;
}

int predict_run_find(FsModelSet *set, const char *dir, const char *trial, int rank, int fold, FsErr *err)
{
    PredictBoard *b = fs_calloc(1, sizeof *b);
    if (predict_board_open(b, dir, err) != 0) return free(b), -1;
    int rc = -1;
    const FsReportRow *row = predict_trial_row(&b->rep, dir, trial, rank, fold < 0, err);
    if (row && journal_is_discarded(&b->j, row->id)) {
        fs_err_set(err, "%s: the models of trial %s (rank %d) were removed at the end of the run (run.keep_models "
                   "keeps the best N); raise keep_models and train it again to keep them", dir, row->id, row->rank);
    } else if (row) {
        snprintf(set->trial, sizeof set->trial, "%s", row->id);
        predict_set_run(set, dir);
        set->rank = row->rank;
        set->mean = row->mean;
        set->std = row->std;
        snprintf(set->metric, sizeof set->metric, "%s", metrics_kind_name(b->spec.metric));
        rc = predict_board_add_folds(set, b, dir, row, fold, err);
    }
    predict_board_close(b);
    free(b);
    return rc;
}
