/*
 * status.h: private to the cli module. What `foldsweep status` knows of a
 * run folder at one moment (status.c gathers it from the journal, the
 * sweep, the run's lock and its progress.json), and the two ways it is
 * shown (status_out.c): the text for people and one JSON object for
 * scripts (fields in docs/cli.md).
 */
#ifndef FS_CLI_STATUS_H
#define FS_CLI_STATUS_H

#include <stdio.h>

#include "report/report.h"
#include "run/run.h" /* FsStudyStop */

/* Whether a run is going: the journal's lock says so; a run whose process
 * is suspended (SIGSTOP, Ctrl-Z) holds it without going on. */
typedef enum { ST_RUNNING, ST_STOPPED, ST_INTERRUPTED, ST_FINISHED } StatusState;

typedef struct {
    const char *dir;
    StatusState state;
    char host[64]; /* the last run's, from its run record ("" if none) */
    long pid;      /* 0 if none */
    const char *sweep_file; /* the last run's sweep file while it is there (its run record), else NULL */
    /* The sweep: trials (0 unknown), folds per trial, metric. */
    int n_trials, folds, from_journal;
    int repeats; /* data.repeats (0 or 1: one k-fold split) */
    FsMetricKind metric;
    int versions; /* sweep versions the journal records (> 1: the run was extended; 0: none recorded) */
    /* Trials by state; unfinished: begun, folds missing (in flight while a
     * run goes, interrupted otherwise); left: not begun (-1 unknown). */
    int done, ok, diverged, failed, pruned, unfinished, left;
    long folds_done, folds_total; /* folds_total -1: unknown; both with the seed replicates' */
    /* search.replicates: their folds planned (the most the sweep may train until its own trials
     * are all resolved, then the chosen trials'; 0: none) and recorded (run_replicates_count). */
    long replicate_folds, replicate_folds_done;
    double elapsed;
    int n_runs;
    /* From the live run's progress.json (live = 0 without one). */
    int live, folds_in_flight;
    char flight[160];
    char stopping[256]; /* a live run's stop line after a signal (progress.json), else "" */
    double rate;
    /* The time left: eta_from "examples" (the live run's, from examples
     * trained), "pace" (whole folds so far), "finished" or NULL (unknown). */
    double eta;
    const char *eta_from;
    const FsReportRow *best; /* NULL: no complete trial yet */
    int tied; /* other complete trials the folds cannot tell from the best (report_ties); -1: not compared */
    FsStudyStop study; /* search.stop's decision (run_study_replay) */
    int looks, looks_evaluate, looks_test; /* evaluations of test data */
    int dropped_tail;
} StatusView;

const char *status_state_name(StatusState s);
void status_print_text(FILE *out, const StatusView *v);
void status_print_json(FILE *out, const StatusView *v);

#endif
