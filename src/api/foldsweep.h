/*
 * foldsweep.h: the foldsweep library's public API, for programs and for the
 * Python package (python/foldsweep, through ctypes). The one header of
 * libfoldsweep.so; everything else in the library is hidden.
 *
 * The library is the command line's own code: a run through foldsweep_run
 * writes the same run folder, journal and leaderboard as `foldsweep run`,
 * and foldsweep_predict computes what `foldsweep predict` does, bit for bit.
 *
 * Errors: functions return a foldsweep exit code (0 ok, 1 error, 2 usage,
 * 3 interrupted and resumable: docs/cli.md) and print their messages on
 * standard error, as the command line does (the Python package captures
 * them and raises them). Text and arrays the library returns are malloc'd:
 * release them with foldsweep_free.
 *
 * Not thread-safe: one call at a time per process (a run installs signal
 * handlers and uses every thread it is given).
 */
#ifndef FOLDSWEEP_H
#define FOLDSWEEP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FOLDSWEEP_API __attribute__((visibility("default")))
#else
#define FOLDSWEEP_API
#endif

/* Raised when a function or structure below changes incompatibly. */
#define FOLDSWEEP_API_VERSION 1

FOLDSWEEP_API int foldsweep_api_version(void);
/* "foldsweep X.Y.Z", as `foldsweep --version` starts. */
FOLDSWEEP_API const char *foldsweep_version(void);
FOLDSWEEP_API void foldsweep_free(void *p);
/* Before anything else: whether this CPU has the instruction-set
 * extensions the library was compiled for. 0, or 1 with the missing ones
 * named in buf (the library must then not be used: it would die of
 * SIGILL). Built for the architecture's baseline, so it runs anywhere. */
FOLDSWEEP_API int foldsweep_cpu_missing(char *buf, size_t n);

/* The command line in this process: argv as the program's (argv[0] the
 * program's name, argv[1] the command), output on standard output. */
FOLDSWEEP_API int foldsweep_main(int argc, char **argv);

/* A run: `foldsweep run` without a launcher, in this process, on this
 * machine's threads (no communicator: one process, no MPI ranks). */
typedef struct {
    const char *sweep;      /* the sweep file's path; with sweep_text, only its name */
    const char *sweep_text; /* the sweep's YAML itself, or NULL: relative data paths are then read
                               from the folder of sweep (a name, which need not exist) */
    const char *out;        /* the run folder, or NULL: the sweep's run.out, else runs/<sweep name> */
    int threads;            /* 0: the sweep's run.threads, else every core */
    const char *backend;    /* "cpu", "cuda", "auto", or NULL: the sweep's run.backend */
    int quiet;              /* no progress line and no summary */
    int restart;            /* set an earlier run in the folder aside and start again */
    double grace;           /* seconds in-flight folds may finish after SIGINT (< 0: 30) */
    /* Called about twice a second and once at the end with the run's
     * progress as one JSON object (folds_done, folds_total, trials_done,
     * trials_total, in_flight, elapsed, eta_seconds, examples_per_second,
     * flight, best_trial, best_mean, final: docs/python.md): from the run's
     * progress thread, the last one ("final": true) from the caller's as
     * the run ends. It holds up the progress line and the grace timer
     * while it runs: keep it short. NULL: none. */
    void (*progress)(const char *json, void *user);
    void *user;
} foldsweep_run_options;

/* Trains every trial of the sweep on every fold, resuming what the folder
 * has. SIGINT, SIGTERM or SIGUSR1 during the run stop it as the command
 * line's do (exit 3, resumable); the caller's handlers are restored after. */
FOLDSWEEP_API int foldsweep_run(const foldsweep_run_options *o);
/* The same over the ranks of the caller's MPI communicator: comm points at
 * an MPI_Comm (mpi4py: MPI._addressof(comm)). Every rank of it calls this
 * with the same options; rank 0 coordinates and writes the run folder, the
 * others train, as under `mpirun foldsweep run`. MPI must be initialised
 * (MPI_THREAD_FUNNELED or more) and stays the caller's to finalise; the
 * run talks over a duplicate of comm. A build without MPI refuses (2). */
FOLDSWEEP_API int foldsweep_run_mpi(const foldsweep_run_options *o, const void *comm);
/* The run folder foldsweep_run would use for o (its out, else the sweep's
 * run.out, else runs/<sweep name>), into buf; the sweep is read, not run. */
FOLDSWEEP_API int foldsweep_run_folder(const foldsweep_run_options *o, char *buf, size_t n);

/* A run folder's leaderboard in a format ("table", "wide", "md", "csv" or
 * "json": those of `foldsweep leaderboard --format`), its best top trials
 * (0: all), into *text. */
FOLDSWEEP_API int foldsweep_leaderboard(const char *dir, const char *format, int top, char **text);

/* A run folder's learning curves as CSV into *text: a row per epoch of
 * every fold (trial, fold, seed, epoch, train_loss, val_loss, val_q3,
 * seconds from the fold's start, best: 1 at the kept epoch, status), in the
 * journal's order. */
FOLDSWEEP_API int foldsweep_curves(const char *dir, char **text);

/* Models loaded for prediction: a run folder's trial (its fold ensemble),
 * an exported folder, or one .safetensors file, as `foldsweep predict`
 * finds them. */
typedef struct foldsweep_model foldsweep_model;

typedef struct {
    const char *trial; /* in a run folder: this trial (an id or a unique prefix), or NULL */
    int rank;          /* in a run folder: the trial at this leaderboard rank (0: 1) */
    int fold;          /* only this fold's model (-1: the fold ensemble) */
    const char *features; /* models that read feature columns: their sources, "KIND:PATH,..." as
                             `predict --features` takes them; NULL: those they were trained with */
} foldsweep_model_options;

/* o may be NULL (the best trial's fold ensemble). */
FOLDSWEEP_API int foldsweep_model_open(const char *source, const foldsweep_model_options *o, foldsweep_model **m);
FOLDSWEEP_API void foldsweep_model_close(foldsweep_model *m);
/* 3 (H E C) or 8 (DSSP-8: H G I E B T S C), the order of the probabilities. */
FOLDSWEEP_API int foldsweep_model_classes(const foldsweep_model *m);
/* Its model files (the fold models, in fold order): how many, and the path
 * of file i (0-based; NULL past the end). The trial's id ("" if unknown). */
FOLDSWEEP_API int foldsweep_model_count(const foldsweep_model *m);
FOLDSWEEP_API const char *foldsweep_model_file(const foldsweep_model *m, int i);
FOLDSWEEP_API const char *foldsweep_model_trial(const foldsweep_model *m);

/* Predictions for n proteins, in input order. */
typedef struct {
    uint32_t n_proteins, n_residues;
    int classes;
    uint32_t *offsets; /* [n_proteins + 1]: protein i is residues offsets[i] .. offsets[i+1]-1 */
    float *probs;      /* [n_residues][classes] */
    float *agreement;  /* [n_residues]: the ensemble's agreement with its vote (1 for one model) */
} foldsweep_prediction;

/* Predicts the proteins of FASTA text (n bytes; '>' headers), on threads
 * threads (0: every core). *out is released with foldsweep_prediction_free. */
FOLDSWEEP_API int foldsweep_predict(const foldsweep_model *m, const char *fasta, size_t n, int threads,
                                    foldsweep_prediction **out);
FOLDSWEEP_API void foldsweep_prediction_free(foldsweep_prediction *p);

#ifdef __cplusplus
}
#endif

#endif
