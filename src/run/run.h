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
#include "journal/journal.h" /* run_study_replay */
#include "mpi/mpi.h"
#include "sweep/sweep.h"
#include "util/util.h" /* FS_EXIT_* */

/* How the progress line is written: redrawn in place ("\r...ESC[K", bar)
 * or a plain line every 10 s (plain); auto: run_progress_redraw decides. */
enum { FS_LINE_AUTO, FS_LINE_PLAIN, FS_LINE_BAR };

typedef struct {
    const char *sweep_path;
    /* The sweep's YAML itself (the library API's sweep from a dict), read
     * instead of the file; sweep_path then only names it: in messages, as
     * the folder relative data paths are read from, and for the default
     * run folder. NULL: read sweep_path. */
    const char *sweep_text;
    /* Called with the run's progress as one JSON object (progress.json's
     * fields, with the trials and the best: docs/python.md) about twice a
     * second from the progress thread and once at the end ("final": true)
     * from progress_stop's caller, without the run's locks: the library
     * API's progress callback. NULL: none. */
    void (*on_progress)(const char *json, void *user);
    void *progress_user;
    const char *out_dir; /* NULL: the sweep's run.out, else home_dir, else runs/<sweep name> */
    /* The run folder the sweep file is the saved sweep of (DIR/sweep.yaml
     * beside DIR/journal.jsonl: run_home_dir), or NULL. */
    const char *home_dir;
    int threads;         /* 0: the sweep's run.threads, else the machine's (run_settings) */
    int backend;         /* -1: the sweep's run.backend */
    int gpu_path;        /* FsGpuPath; -1: the sweep's run.gpu_path */
    int quiet;           /* no progress output */
    double grace;        /* seconds in-flight folds may finish after a signal */
    FILE *out;           /* progress and summary (stdout) */
    int ranks;           /* set by run_sweep: the run's MPI ranks (1 without MPI), for its run record */
    int restart;         /* set the folder's earlier run aside (DIR/previous-N) and start again */
    int epoch_lines;     /* --progress: a line per finished epoch of every fold */
    int progress_line;   /* --progress-line: FS_LINE_AUTO (0), FS_LINE_PLAIN or FS_LINE_BAR */
    double worker_timeout; /* seconds a worker rank may send nothing before rank 0 gives up on it (<= 0: never) */
} FsRunOptions;

/* The options as they come out, resolved once by run_settings from the
 * command line (FsRunOptions), the sweep's run section and the machine;
 * everything else reads these instead of deciding again. */
typedef struct {
    /* This rank's training threads: --threads, else run.threads, else its
     * share of the node's cores (every core alone; cores / ranks on the
     * node under MPI, which leaves rank 0 none when the ranks outnumber
     * the cores: it then only coordinates; a worker rank gets at least 1). */
    int threads;
    /* One process's own work, after training or outside a run (the test
     * phase's evaluations and refits, refit, evaluate, predict): --threads,
     * else run.threads, else every core of the node. */
    int solo_threads;
    int backend;         /* FsBackend: --backend, else run.backend */
    int gpu_path;        /* FsGpuPath: --gpu-path, else run.gpu_path (every job's spec carries it) */
    char out_dir[FS_PATH_MAX]; /* --out, else run.out, else the run folder the sweep file is in (home_dir),
                                  else runs/<the sweep file's name before its first dot> */
    int keep_models;     /* run.keep_models: FS_KEEP_ALL, 0 for none, else the best N */
} FsRunSettings;

/* Pure: from o (threads, backend, out_dir, sweep_path), sw (its run
 * section; NULL where there is no sweep, as for evaluate and predict: then
 * only the threads mean anything) and m (rank, ranks, ranks on the node
 * and the node's cores; fsmpi_alone for a command in one process). */
void run_settings(FsRunSettings *s, const FsRunOptions *o, const FsSweep *sw, const FsMpi *m);
/* Pure: whether the progress line is redrawn in place (1) or written as
 * plain lines (0). asked: --progress-line (FS_LINE_*); out_tty: the run's
 * output is a terminal; launcher_tty: -1 outside mpirun, else whether
 * mpirun's own standard output is a terminal (run_launcher_tty). Open MPI
 * gives its ranks a pseudo-terminal of its own whatever mpirun's output
 * is, so under mpirun the rank's terminal says nothing about the user's:
 * auto redraws only where the output reaches the user's terminal. */
int run_progress_redraw(int asked, int out_tty, int launcher_tty);
/* The run folder of a sweep file when neither --out nor run.out names one:
 * runs/<the file's name up to its first dot>. */
void run_default_out(const char *sweep_path, char *out, size_t n);
/* Whether sweep_path is a run folder's saved sweep (DIR/sweep.yaml with
 * DIR/journal.jsonl beside it): DIR into out, and 1; else 0. Then `run
 * DIR/sweep.yaml` resumes DIR, as `status` says it does, instead of
 * starting a run in runs/sweep. */
int run_home_dir(const char *sweep_path, char *out, size_t n);
/* solo_threads for a command without a sweep in this process (evaluate,
 * predict): --threads (threads > 0), else every core. */
int run_solo_threads(int threads);

/* The run on every rank of m (fsmpi_init, or fsmpi_attach to a communicator
 * of the caller's): rank 0 coordinates and trains, the others are workers.
 * The caller installs the signal handlers before MPI starts
 * (run_signals_install) and releases m after (fsmpi_finalize); every rank of
 * m must call this. Returns an FS_EXIT_* code (util.h). */
int run_sweep(const FsRunOptions *o, FsMpi *m);

/* For `foldsweep plan` (gpu_plan.c): which GPU tier takes each trial, by
 * the rule the launcher and a GPU run apply (gpu_model_check, with the
 * sweep's run.gpu_path), and estimates of the sweep's time on that device
 * and on this machine's CPU: a roofline from each trial's FLOP and bytes
 * and the device's rates (gpu_estimate), every epoch counted (an upper
 * bound: no early stopping, no pruning). */
typedef struct {
    char target[128]; /* "h200 profile", or the visible device's name */
    char rates[320];  /* the rates and assumptions the GPU estimate takes (gpu_rates_describe) */
    int n;            /* the sweep's trials (candidates, with tpe) */
    int refused;      /* trials no tier takes */
    int *tier;        /* per trial: FS_GPU_PATH_BLOCK, FS_GPU_PATH_LIBRARY (train.h), or -1: refused */
    char **why;       /* per trial: why refused, "" where a tier takes it */
    double *flop;     /* per trial: its folds' training FLOP (0: it does not compile) */
    double *pair_flop; /* per trial: of which attention's pairs (FsGpuEstimate.pair_flop) */
    double *gpu_s;    /* per trial: its folds on its tier, wall seconds (0 where refused) */
    int *group;       /* per trial: its library group's width (run/gpu_groups.c; 0 where it does not compile) */
    int folds;        /* folds a trial trains (sweep_fold_count) */
    double share;     /* the trials a run trains over those listed: tpe's budget over its candidates, else 1 */
    double block_s, library_s; /* the sweep on each tier (the GPU's trials only) */
    double cpu_s;              /* the whole sweep on this machine's cores */
    int cores;                 /* this machine's */
    double cpu_gflops;         /* the CPU rate a core is assumed to train at */
    double cpu_pair_gflops;    /* and to run attention's pairs at */
    double pair_len;           /* the data's chain length a residue sees (data_chain_pair_mean) */
} FsGpuPlan;
/* The device is `profile` ("h200", "a100"), or with NULL the visible CUDA
 * device 0, else the h200 profile. 0, or -1 for an unknown profile (err). */
int run_gpu_plan(const FsSweep *sw, const FsDataset *ds, const char *profile, FsGpuPlan *p, FsErr *err);
void run_gpu_plan_free(FsGpuPlan *p);

/* The GPU library tier's back ends this build has (gpu_libraries), for
 * `foldsweep --version`: cli reaches the gpu module through run. */
void run_gpu_libraries(char *out, size_t n);

/* For `foldsweep plan` (run/sampler.c): the trials a fresh run of sw
 * proposes before any result can change them, in proposal order, into
 * out, and each one's batch (from 1) into batch (both with room for
 * sw->n_trials): with sampler: tpe its random batches, up to
 * FS_SAMPLE_STARTUP trials (or the budget); otherwise every trial, in the
 * order a run proposes them. Returns how many. */
int run_sampler_first(const FsSweep *sw, int *out, int *batch);

/* search.stop (run/sampler.c): whether the study ended before its budget,
 * replayed from the journal as the run decided it. */
typedef struct {
    int stopped;          /* search.stop ended the study */
    int after;            /* ... judged after this many trials, in proposal order */
    int streak;           /* trials in a row that did not beat the best by more than its standard error */
    char best[FS_TRIAL_ID_LEN + 1]; /* the best trial then */
    double best_mean, best_se;      /* its mean metric and corrected standard error */
    int proposed, budget; /* trials proposed (trained), and search.random */
} FsStudyStop;
void run_study_replay(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, FsStudyStop *out);
/* The one sentence for it (run's summary, status, the leaderboard, the
 * report): "stopped by search.stop after T trials: ...". */
void run_study_text(const FsStudyStop *s, char *out, size_t n);

/* search.replicates (run/replicates.c): the most seed replicate folds a
 * sweep may train, min(top, trials) x (seeds - 1) x folds (0: off; -1:
 * more than a run may list). */
int run_replicates_jobs(const FsSweep *sw, int folds);
/* A run folder's seed replicate folds (status): planned (once own_done,
 * every trial of the sweep's own resolved, those of the trials chosen as
 * the run chooses them; before, run_replicates_jobs) and recorded in j. */
void run_replicates_count(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, int own_done, long *planned,
                          long *done);

/* `foldsweep refit DIR`: the trial of whole id `id` trained
 * on all of the sweep's training proteins and saved in DIR/refits/ (once:
 * a recorded, intact refit is kept), on threads threads (0: as
 * run_settings' solo_threads says). Its path goes to file. 0 or -1
 * (message printed). */
int run_refit_command(const char *dir, const char *id, int threads, char *file, size_t file_n, FILE *out);

/* Signals: SIGINT / SIGTERM (and SIGUSR1, Slurm's warning) set the stop
 * flag; a second signal also sets the cancel flag. */
void run_signals_install(void);
/* The handlers the process had before run_signals_install, back (the
 * library API's caller keeps its own: Python's KeyboardInterrupt). */
void run_signals_remove(void);
const volatile int *run_stop_flag(void);
const volatile int *run_cancel_flag(void);
/* For tests and for the grace timer. */
void run_request_stop(int cancel_too);
/* Under mpirun (OMPI_COMM_WORLD_SIZE at install), a SIGINT or SIGTERM
 * from mpirun (or its orted) is mpirun ending the job: it kills every rank
 * run_mpirun_window() seconds later (OMPI_MCA_odls_base_sigkill_timeout,
 * else Open MPI's 1 s).
 * run_signal_ending says such a signal came; run_signal_grace gives the
 * grace that fits before the kill (grace itself after any other signal). */
int run_signal_ending(void);
int run_under_mpirun(void);
/* run_progress_redraw's launcher_tty: -1 outside mpirun (as installed),
 * else 1 when mpirun's (its daemon's, on another node) standard output is
 * a terminal, 0 when not or when /proc cannot say. */
int run_launcher_tty(void);
double run_mpirun_window(void);
double run_signal_grace(double grace);
/* A worker rank after mpirun's SIGTERM, its part done: waits for mpirun's
 * kill, which comes as soon as rank 0 has left (a worker that left first
 * would have rank 0 killed before it wrote the leaderboard). */
void run_signal_wait_kill(void);

#endif
