/*
 * predict_int.h: private to the predict module. How its files that find a
 * trial's models (source.c: the dispatch; export.c: an exported folder;
 * trial.c: a run folder) fill one FsModelSet, and the leakage guard that
 * the evaluation pipeline (evaluate.c) runs first.
 */
#ifndef FS_PREDICT_INT_H
#define FS_PREDICT_INT_H

#include "predict/predict.h"

/* Adds dir/file (file alone when dir is NULL) as fold `fold`'s model. 0, or
 * -1 with err when the set is full. */
int predict_set_add(FsModelSet *set, const char *dir, const char *file, int fold, FsErr *err);
/* Sets set->run to dir, absolute, if it is a run folder (has a journal)
 * and set->run is not set yet. */
void predict_set_run(FsModelSet *set, const char *dir);

/* A --top set's run folder dir (absolute, once; trial: its best trial of
 * the K) in set->runs: its index, or -1 when dir is not a run folder (its
 * looks then go unrecorded) or the list is full. */
int predict_set_add_run(FsModelSet *set, const char *dir, const char *trial);

/* An exported folder (export.c): the models its model.json lists. */
int predict_export_read(FsModelSet *set, const char *dir, int fold, FsErr *err);
/* A run folder's leaderboard (trial.c): its journal (read only), the
 * sweep's metric and folds, the ranked rows. */
typedef struct {
    FsJournal j;
    FsReportSpec spec;
    FsReport rep;
} PredictBoard;
int predict_board_open(PredictBoard *b, const char *dir, FsErr *err);
void predict_board_close(PredictBoard *b);
/* The fold models of trial `row` of b (only fold `fold`'s when fold >= 0),
 * each checked against the size and checksum its journal record gives. */
int predict_board_add_folds(FsModelSet *set, const PredictBoard *b, const char *dir, const FsReportRow *row, int fold,
                            FsErr *err);

/* A run folder (trial.c): the trial by id prefix or rank, its fold models. */
int predict_run_find(FsModelSet *set, const char *dir, const char *trial, int rank, int fold, FsErr *err);

/* The leakage guard (leakage.c) of predict_evaluate: ev's overlap and
 * identity counts, and the proteins the models saw (identical, or above
 * spec->max_identity) refused, left out of ds's scores, or scored, as spec
 * says; its notes and warnings on spec->notes. 0, or -1 with err. */
int predict_guard(FsEvaluation *ev, const FsEnsemble *e, FsDataset *ds, const FsEvalSpec *spec, FsErr *err);

#endif
