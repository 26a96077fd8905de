/*
 * journal: the run folder's append-only journal. One self-checking record
 * per line: a JSON object whose last member "crc" is the CRC-32 of the
 * line's bytes before it (frame.c; an earlier build's "JSON #crc" lines are
 * read too); each append is written and fsync'd before it counts, so a killed
 * run loses at most the record being written. On reopening, a torn or
 * corrupt last line is dropped (and truncated away), never fatal; a corrupt
 * line before the last is an error naming its line.
 *
 * Records: "trial" (a trial's id, index and canonical config, written when
 * its first fold starts), "fold" (one (trial, fold) result with its curves
 * and the file of its saved weights), "model" (a fold's weights saved
 * again after their file was lost), "prune" (a trial's model files
 * discarded by run.keep_models: the kind's name on disk, kept so that every
 * journal stays readable; the code says "discard", since "prune" means the
 * sweep's pruner everywhere else), "refit" (a trial trained on all its training
 * proteins, and its file), "evaluation" (test data looked at: what, on which
 * data, the scores), "failure" (a trial that could not train, with the
 * message), "sweep" (the canonical sweep and its folds' validation residues:
 * one per sweep version, so an extended run's journal holds every sweep it ran),
 * "run" (a run or resume started: wall-clock time, pid, host, the sweep's trial count,
 * folds and metric, its MPI ranks and backend; for status, ETA and the
 * report). Every record carries the format
 * version "v" and its wall-clock append time; the field lists are at the
 * top of journal_write.c.
 *
 * Appends are idempotent: a second trial, fold or failure record for the
 * same key is not written, and on reading only the first one counts (a run
 * killed between its write and its bookkeeping may have written two).
 * journal_open takes an exclusive lock on the file (two runs in one folder
 * are refused, told which process holds it: DIR/journal.lock, lock.c);
 * journal_read is the read-only view for leaderboard and
 * status: it never creates, locks or truncates anything.
 *
 * Lines are read and written with the json module's reader and writer.
 */
#ifndef FS_JOURNAL_H
#define FS_JOURNAL_H

#include <stdint.h>
#include <stdio.h>

#include "data/data.h" /* FS_IDENTITY_LEVELS */
#include "train/train.h"
#include "util/util.h"

#define FS_JOURNAL_VERSION 1 /* "v" of the records this build writes; higher is refused */

/* A fold's saved weights: the file (relative to the run folder), its size
 * and CRC-32. file[0] == 0: none saved. */
typedef struct {
    char file[128];
    uint64_t bytes;
    uint32_t crc32;
} FsModelRef;

typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    int fold;      /* 0..k-1, or FS_FOLD_PREDEFINED */
    int seed;      /* 0: the trial's own seeds; 1..FS_MAX_SEEDS-1: a seed replicate (search.replicates) */
    FsFitResult r; /* status, epochs, best epoch, confusion, curves (allocated), ... */
    double time;   /* Unix seconds when appended */
    FsModelRef model; /* the fold record's, or a later "model" record's */
    /* The sweep version it was recorded under (as FsTrialRecord.version):
     * an extension's pruner decides on none of the folds before it. */
    int version;
} FsFoldRecord;

typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    int index;
    long n_params;
    char *config; /* canonical JSON */
    double time;
    /* The sweep version it was first recorded under (FsJournal.sweep_versions:
     * 1 is the folder's first sweep; a journal without sweep records is all 1). */
    int version;
} FsTrialRecord;

typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    char *message;
    double time;
} FsFailureRecord;

/* One look at test data: `foldsweep evaluate` on this run's models, or the
 * sweep's test section. status counts them; the leaderboard shows the
 * test section's. */
typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    char models[24];  /* "ensemble", "fold K" or "refit" */
    char source[12];  /* "evaluate" or "test" */
    char data[512];   /* the test data's file(s) */
    uint64_t data_fingerprint;
    uint64_t proteins, scored, overlap;
    double q3, q3_lo, q3_hi, sov;
    /* 8-state models' (data.classes: 8): classes 8 and their Q8 (q3, its
     * interval and sov then of the predictions reduced); classes 0 or 3
     * otherwise, and no q8 in the record. */
    int classes;
    double q8;
    /* The identity check (docs/models.md, "Leakage guard"): 1 made, 0 not
     * made (models without their training sequences), -1 not recorded (a
     * record older than the check). Test proteins above each of the levels
     * 0.25, 0.5, 0.95, the threshold, and how many were left out; those
     * above the coverage threshold, and it (coverage_over -1 and
     * coverage_max NaN in a record older than coverage). */
    int identity_checked;
    uint64_t identity_above[FS_IDENTITY_LEVELS], identity_left_out;
    double identity_max;
    int64_t coverage_over;
    double coverage_max;
    double time;
} FsEvalRecord;

/* A trial refit on all training proteins (foldsweep refit, test.refit). */
typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    int epochs;
    FsModelRef model;
    double time;
} FsRefitRecord;

/* A pruning decision (src/prune): the trial stops at (fold, epoch); epoch
 * 0 means after that fold. curve: the fold's validation metric per epoch
 * up to the decision, so later decisions are made the same on resume. */
typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    int fold, epoch;
    char rule[8];
    double value, threshold;
    char reason[240];
    int n_curve;
    float *curve;
    double time;
} FsCutRecord;

typedef struct {
    double time; /* Unix seconds when the run (or resume) started */
    long pid;
    char host[64];
    int n_trials;   /* the sweep's trial count (0 if unknown) */
    int folds;      /* k, or 1 for a predefined split (0 if unknown) */
    char metric[8]; /* "q3" or "loss" ("" if unknown) */
    uint64_t data_fingerprint; /* the training data's (0: not recorded, an older journal) */
    /* How the session ran, for the report (0 / "": not recorded, an older journal). */
    int ranks;        /* MPI ranks (1 without MPI) */
    char backend[8];  /* rank 0's: "cpu" or "cuda" */
    char device[240]; /* rank 0's, as run_backend_describe says it ("cpu", "GPU 0: ...") */
    /* The data's feature columns (data.features; 0: none, or not
     * recorded): with run.constraints they decide which trials exist, so
     * readers without the data (leaderboard, repair) draw the same ones. */
    int feature_columns;
    /* The sweep file the run was started with, absolute ("" if not
     * recorded): what `status` says an interrupted run resumes with. */
    char sweep_file[1024];
} FsRunRecord;

/* What a run folder's sweep allows its journal to hold, for
 * journal_set_sweep. A record that passes its checksum but not this (a
 * trial or fold the sweep does not have, a fold whose confusion does not
 * add up to the fold's validation residues or disagrees with its recorded
 * scores, an `ok` fold without a best epoch, a pruning decision in a sweep
 * without that pruner) is treated as a damaged line: named with its line
 * and what was expected, skipped by readers, refused by journal_open,
 * dropped by journal_repair. */
typedef struct {
    int n_trials;             /* ids[i]: the id of the sweep's trial of index i; 0: ids not checked */
    const char *const *ids;
    int folds;                /* fold ids 0..folds-1 (0: not checked) */
    int predefined;           /* the one fold is FS_FOLD_PREDEFINED */
    const char *pruner;       /* the sweep's pruning rule ("median", ...), or NULL / "": none */
    /* Each fold's validation residues (fold slot order), from the data or
     * the journal's sweep record; NULL: not known, and a fold record's
     * confusion must then add up to its own val_examples / epochs. */
    const uint64_t *val_residues;
    /* The canonical sweep being checked against, or NULL. Given, a record
     * written under another sweep version (an extended run's earlier
     * sweeps: FsJournal.sweep_versions) is checked for its trial and fold
     * only: its trial record's index and its pruner's rule were those of
     * its own sweep. */
    const char *canonical;
} FsJournalSweep;

typedef struct FsJournalCheck FsJournalCheck; /* a private copy of an FsJournalSweep */

typedef struct {
    char *path; /* DIR/journal.jsonl */
    int fd;
    FsFoldRecord *folds;
    int n_folds, cap_folds;
    FsTrialRecord *trials;
    int n_trials, cap_trials;
    FsFailureRecord *failures;
    int n_failures, cap_failures;
    FsRunRecord *runs;
    int n_runs, cap_runs;
    char (*discarded)[FS_TRIAL_ID_LEN + 1];      /* trials whose model files were removed on purpose */
    int n_discarded, cap_discarded;
    FsEvalRecord *evals;           /* every evaluation on test data, in order */
    int n_evals, cap_evals;
    FsRefitRecord *refits;
    int n_refits, cap_refits;
    int max_seed;                  /* the highest seed index of a fold record (0: no replicates) */
    FsCutRecord *cuts;             /* trials pruned by the sweep's pruner */
    int n_cuts, cap_cuts;
    int dropped_tail;              /* 1 if a torn last line was dropped on open */
    double write_seconds;          /* time spent appending (for the run profile) */
    long long size;                /* bytes of good records in the file */
    long lines;                    /* lines in the file (good ones) */
    int duplicates;                /* records ignored as duplicates on reading */
    long bad_lines;                /* journal_read: damaged lines before the end, skipped */
    long first_bad_line;           /* the first of them (1-based) and what is wrong with it */
    char first_bad_why[256];
    int read_only;                 /* opened by journal_read */
    int created;                   /* journal_open made the file */
    int was_held;                  /* journal_open found a holder's note (DIR/journal.lock): a run held it before */
    /* journal_open: the journal is empty and no run ever held its lock, so
     * the folder may be someone's own (journal_discard undoes the open). */
    int fresh;
    char *sweep_text;              /* the latest "sweep" record's canonical sweep, or NULL */
    /* Every sweep version, in order: each "sweep" record whose text differs
     * from the one before it (an extended run adds one; the last is
     * sweep_text). Records before the first belong to version 1. */
    char **sweep_versions;
    int n_sweep_versions;
    uint64_t *sweep_val;           /* and its folds' validation residues (n_sweep_val), or NULL */
    int n_sweep_val;
    FsJournalCheck *check;         /* journal_set_sweep's, or NULL */
    int *fold_index, *trial_index; /* hash tables (private) */
    int fold_index_cap, trial_index_cap;
} FsJournal;

/* Opens DIR/journal.jsonl (creating DIR and the file if needed) and reads
 * every record. Returns 0 or -1 with err. A torn last line is dropped; a
 * damaged line before it is an error naming the line, what is wrong, and
 * `foldsweep repair` (journal_repair). */
int journal_open(FsJournal *j, const char *dir, FsErr *err);
/* Reads DIR/journal.jsonl without creating, locking or changing anything
 * (a torn last line is skipped, not truncated; damaged lines before it are
 * skipped and counted in bad_lines, so one bad line does not hide the rest).
 * A missing folder or file is an error. Appends on a journal opened this
 * way fail. */
int journal_read(FsJournal *j, const char *dir, FsErr *err);
/* From now on j's records are checked against the sweep (see
 * FsJournalSweep; s is copied): reads the file again with the checks. A
 * record that fails them is an error naming its line (journal_open), or
 * skipped and counted in bad_lines (journal_read). 0 or -1 with err. */
int journal_set_sweep(FsJournal *j, const FsJournalSweep *s, FsErr *err);
/* `foldsweep repair DIR`: under the journal's lock, writes a journal of the
 * good lines (byte for byte) as DIR/journal.jsonl and keeps the original as
 * DIR/journal.damaged-N.jsonl; nothing is deleted. With checks (a
 * journal's `check`, set by journal_set_sweep; NULL: none), a record that
 * does not fit the sweep is dropped as a damaged line. Each dropped line is
 * reported to out. Returns the number of lines dropped, or -1 with err. */
long journal_repair(const char *dir, const FsJournalCheck *checks, FILE *out, FsErr *err);
/* 1 if another process holds DIR's journal open for writing (a run is
 * going), 0 if not, -1 if it cannot be told. */
int journal_is_locked(const char *dir);
/* The holder of DIR's journal lock as its note says ("pid 4242 on node7"):
 * 0 with out set, or -1 (no note, or an empty one). */
int journal_holder(const char *dir, char *out, size_t n);
/* Closes a journal that journal_open gave a folder that is not a run's
 * (fresh, and someone's files beside it): the file goes again if the open
 * made it, and so does the holder's note, leaving the folder as found. */
void journal_discard(FsJournal *j);
void journal_close(FsJournal *j);

int journal_append_trial(FsJournal *j, const char *trial, int index, long n_params,
                         const char *config, FsErr *err);
/* model: the fold's saved weights (written and synced before this call),
 * or NULL. */
int journal_append_fold(FsJournal *j, const char *trial, int fold, const FsFitResult *r,
                        const FsModelRef *model, FsErr *err);
/* The same for seed index `seed` (0: journal_append_fold; 1..FS_MAX_SEEDS-1:
 * a seed replicate, its record's "seed"; (trial, fold, seed) is its key). */
int journal_append_fold_seed(FsJournal *j, const char *trial, int fold, int seed, const FsFitResult *r,
                             const FsModelRef *model, FsErr *err);
/* "model": weights saved again for a fold already recorded (its file was
 * lost or damaged and the fold retrained); the latest one counts. */
int journal_append_model(FsJournal *j, const char *trial, int fold, const FsModelRef *model, FsErr *err);
/* The trial's model files were discarded (run.keep_models; the record's
 * kind is "prune" on disk); resume does not ask for them again. */
int journal_append_discard(FsJournal *j, const char *trial, FsErr *err);
int journal_is_discarded(const FsJournal *j, const char *trial);
/* "refit": a trial's refit model saved (the latest one of a trial counts). */
int journal_append_refit(FsJournal *j, const char *trial, int epochs, const FsModelRef *model, FsErr *err);
const FsRefitRecord *journal_find_refit(const FsJournal *j, const char *trial);
/* A pruning decision: written once per trial (a second one is ignored). */
int journal_append_cut(FsJournal *j, const FsCutRecord *c, FsErr *err);
const FsCutRecord *journal_find_cut(const FsJournal *j, const char *trial);
/* "evaluation": a look at test data (every one is kept, none is a duplicate). */
int journal_append_eval(FsJournal *j, const FsEvalRecord *e, FsErr *err);
/* The latest evaluation of (trial, models, source) on data with this
 * fingerprint, or NULL. */
const FsEvalRecord *journal_find_eval(const FsJournal *j, const char *trial, const char *models, const char *source,
                                      uint64_t data_fingerprint);
int journal_append_failure(FsJournal *j, const char *trial, const char *message, FsErr *err);
/* A run or resume starts: call once after journal_open. n_trials and folds
 * are the sweep's (folds 1 when the split is predefined), metric its name,
 * data_fingerprint the training data's (a resume on other data is refused). */
int journal_append_run(FsJournal *j, int n_trials, int folds, const char *metric, uint64_t data_fingerprint,
                       FsErr *err);
/* The same with how the session runs: run's n_trials, folds, metric,
 * data_fingerprint, ranks, backend and device (0 / "": not recorded); its
 * time, pid and host are this process's. */
int journal_append_run_record(FsJournal *j, const FsRunRecord *run, FsErr *err);

/* "sweep": the run folder's canonical sweep and each fold's validation
 * residues (n_val of them), so that `foldsweep repair` can rewrite a damaged
 * sweep.yaml and readers can check fold records without the data. Written
 * only when the latest one differs. */
int journal_append_sweep(FsJournal *j, const char *canonical, const uint64_t *val_residues, int n_val, FsErr *err);

/* Lookups over what has been read or appended (NULL if absent). A fold
 * of the trial's own seeds (seed 0); with journal_find_fold_seed, of seed
 * index `seed`. */
const FsFoldRecord *journal_find_fold(const FsJournal *j, const char *trial, int fold);
const FsFoldRecord *journal_find_fold_seed(const FsJournal *j, const char *trial, int fold, int seed);
const FsTrialRecord *journal_find_trial(const FsJournal *j, const char *trial);
const FsFailureRecord *journal_find_failure(const FsJournal *j, const char *trial);
/* The latest run record, or NULL. */
const FsRunRecord *journal_last_run(const FsJournal *j);

#endif
