/*
 * sweep: the YAML sweep file (libyaml). Parses and validates it strictly
 * (every error with file:line:column, all listed at once), expands the
 * search space into trials (cartesian grid or `random: N` distinct samples),
 * and gives each trial a canonical configuration and a stable id.
 * The format is documented in docs/sweep-format.md.
 */
#ifndef FS_SWEEP_H
#define FS_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "data/data.h"
#include "model/model.h"
#include "train/train.h"

typedef enum { FS_METRIC_Q3 = 0, FS_METRIC_LOSS } FsMetricKind;
typedef enum { FS_BACKEND_AUTO = 0, FS_BACKEND_CPU, FS_BACKEND_CUDA } FsBackend;

typedef struct {
    int index;      /* position in the expansion order (deterministic) */
    char id[17];    /* 16 hex digits; set by sweep_assign_ids */
    FsArch arch;    /* arch.window is the sweep's window */
    FsTrainSpec train; /* seed[0] = the sweep's training seed; the runner sets seed[1..2] */
    char *config;   /* canonical JSON object of this trial's model and training options
                       (sorted keys, fixed number format): what the id hashes */
} FsTrial;

/* Several errors at once: each one "FILE:LINE:COL: message". */
typedef struct {
    char **msg;
    int n;
} FsErrList;

void errlist_add(FsErrList *l, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void errlist_free(FsErrList *l);
/* All messages, one per line, into out (truncated to n bytes). */
void errlist_join(const FsErrList *l, char *out, size_t n);

typedef struct {
    char *path; /* the sweep file; relative data paths resolve against its folder */
    /* data */
    FsFormat format;
    char **inputs;
    int n_inputs;
    char *sequences, *labels, *mask; /* FASTA set */
    char *prepared;                   /* a prepared fold file instead of the above */
    int folds;                        /* k (>= 2), ignored when predefined */
    uint64_t fold_seed;
    int predefined; /* use the data's own train/validation split (FASTA SET=) */
    int window;
    /* run */
    FsBackend backend;
    int threads; /* 0 = auto */
    char *out_dir;
    FsMetricKind metric;
    /* trials */
    FsTrial *trials;
    int n_trials;
    uint64_t grid_size; /* size of the full grid (before random sampling) */
    char *canonical;    /* canonical YAML of the whole sweep (written to the run folder) */
} FsSweep;

/* Returns 0, or -1 with every problem in errs (nothing is expanded then). */
int sweep_load_file(FsSweep *sw, const char *path, FsErrList *errs);
/* Same, from text; name is used in messages and to resolve relative paths. */
int sweep_load_string(FsSweep *sw, const char *text, const char *name, FsErrList *errs);
void sweep_free(FsSweep *sw);

/* Trial id = hash of the trial's canonical config and the data fingerprint. */
void sweep_assign_ids(FsSweep *sw, uint64_t data_fingerprint);

/* Lists the differences between two canonical sweeps, one "key: A -> B" per
 * line, into out. Returns the number of differences (0 = same sweep). */
int sweep_diff(const char *canonical_a, const char *canonical_b, char *out, size_t n);

const char *sweep_metric_name(FsMetricKind m);
const char *sweep_backend_name(FsBackend b);

#endif
