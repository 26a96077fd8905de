/*
 * run: `foldsweep run` as a library call. Loads the sweep and its data,
 * opens (or resumes) the run folder, trains every (trial, fold) not yet in
 * the journal on a pool of worker threads, appends each result to the
 * journal as it lands, keeps a progress line, stops cleanly on SIGINT /
 * SIGTERM (exit 3, resumable), and ends with the leaderboard and a profile.
 * The ranks it runs on are its caller's: an FsMpi context (mpi.h) over the
 * caller's communicator, or one process.
 */
#ifndef FS_RUN_H
#define FS_RUN_H

#include <stdio.h>

#include "data/data.h"
#include "mpi/mpi.h"
#include "sweep/sweep.h"
#include "util/util.h" /* FS_EXIT_* */

typedef struct {
    const char *sweep_path;
    const char *out_dir; /* NULL: the sweep's run.out, else runs/<sweep name> */
    int threads;         /* 0: the sweep's run.threads, else the machine's cores */
    int backend;         /* -1: the sweep's run.backend */
    int quiet;           /* no progress output */
    double grace;        /* seconds in-flight folds may finish after a signal */
    FILE *out;           /* progress and summary (stdout) */
    int local_rank;      /* set by run_sweep: node-local rank, picks the GPU */
    int restart;         /* set the folder's earlier run aside (DIR/previous-N) and start again */
    int epoch_lines;     /* --progress: a line per finished epoch of every fold */
} FsRunOptions;

/* The run on every rank of m (fsmpi_init, or fsmpi_attach to a communicator
 * of the caller's): rank 0 coordinates and trains, the others are workers.
 * The caller installs the signal handlers before MPI starts
 * (run_signals_install) and releases m after (fsmpi_finalize); every rank of
 * m must call this. Returns an FS_EXIT_* code (util.h). */
int run_sweep(const FsRunOptions *o, FsMpi *m);

/* For `foldsweep plan`: which trials the GPU path takes, by the rule the
 * launcher and a GPU run apply (gpu_model_check). The device checked is
 * `profile` ("h200", "a100"), or with NULL the visible CUDA device 0, else
 * the h200 profile; its name goes to target. why gets one malloc'd string
 * per trial, "" where the GPU path takes it (free with run_gpu_plan_free).
 * Returns the number refused, or -1 for an unknown profile (err). */
int run_gpu_plan(const FsSweep *sw, const FsDataset *ds, const char *profile, char *target, size_t target_n,
                 char ***why, FsErr *err);
void run_gpu_plan_free(char **why, int n);

/* `foldsweep refit DIR`: the trial (id prefix, or leaderboard rank) trained
 * on all of the sweep's training proteins and saved in DIR/refits/ (once:
 * a recorded, intact refit is kept), on threads threads (0: the sweep's
 * run.threads, else every core). Its path goes to file. 0 or -1 (message
 * printed). */
int run_refit_command(const char *dir, const char *trial, int rank, int threads, char *file, size_t file_n,
                      FILE *out);

/* Signals: SIGINT / SIGTERM (and SIGUSR1, Slurm's warning) set the stop
 * flag; a second signal also sets the cancel flag. */
void run_signals_install(void);
const volatile int *run_stop_flag(void);
const volatile int *run_cancel_flag(void);
/* For tests and for the grace timer. */
void run_request_stop(int cancel_too);

#endif
