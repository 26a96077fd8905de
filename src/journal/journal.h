/*
 * journal: the run folder's append-only journal. One self-checking record
 * per line (JSON text, a space, '#' and the CRC-32 of the JSON as 8 hex
 * digits); each append is written and fsync'd before it counts, so a killed
 * run loses at most the record being written. On reopening, a torn or
 * corrupt last line is dropped (and truncated away), never fatal; a corrupt
 * line before the last is an error naming its line.
 *
 * Records: "trial" (a trial's id, index and canonical config, written when
 * its first fold starts), "fold" (one (trial, fold) result with its curves),
 * "failure" (a trial that could not train, with the message).
 */
#ifndef FS_JOURNAL_H
#define FS_JOURNAL_H

#include <stdint.h>
#include <stdio.h>

#include "train/train.h"
#include "util/util.h"

typedef struct {
    char trial[17];
    int fold;              /* 0..k-1, or FS_FOLD_PREDEFINED */
    FsFitResult r;         /* status, epochs, best epoch, confusion, curves (allocated), ... */
} FsFoldRecord;

typedef struct {
    char trial[17];
    int index;
    long n_params;
    char *config;          /* canonical JSON */
} FsTrialRecord;

typedef struct {
    char trial[17];
    char *message;
} FsFailureRecord;

typedef struct {
    char *path;            /* DIR/journal.jsonl */
    int fd;
    FsFoldRecord *folds;
    int n_folds, cap_folds;
    FsTrialRecord *trials;
    int n_trials, cap_trials;
    FsFailureRecord *failures;
    int n_failures, cap_failures;
    int dropped_tail;      /* 1 if a torn last line was dropped on open */
    double write_seconds;  /* time spent appending (for the run profile) */
} FsJournal;

/* Opens DIR/journal.jsonl (creating DIR and the file if needed) and reads
 * every record. Returns 0 or -1 with err. */
int journal_open(FsJournal *j, const char *dir, FsErr *err);
void journal_close(FsJournal *j);

int journal_append_trial(FsJournal *j, const char *trial, int index, long n_params, const char *config,
                         FsErr *err);
int journal_append_fold(FsJournal *j, const char *trial, int fold, const FsFitResult *r, FsErr *err);
int journal_append_failure(FsJournal *j, const char *trial, const char *message, FsErr *err);

/* Lookups over what has been read or appended (NULL if absent). */
const FsFoldRecord *journal_find_fold(const FsJournal *j, const char *trial, int fold);
const FsTrialRecord *journal_find_trial(const FsJournal *j, const char *trial);
const FsFailureRecord *journal_find_failure(const FsJournal *j, const char *trial);

#endif
