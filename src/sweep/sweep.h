/*
 * sweep: the YAML sweep file (libyaml). Parses and validates it strictly
 * (every error with file:line:column, all listed at once), expands the
 * search space into trials (cartesian grid or `random: N` distinct samples),
 * and gives each trial a canonical configuration and a stable id.
 * The format is documented in docs/sweep-format.md.
 */
#ifndef FS_SWEEP_H
#define FS_SWEEP_H

#include "prune/prune.h"
#include <stddef.h>
#include <stdint.h>

#include "data/data.h"
#include "features/features.h" /* FsFeatSpec */
#include "metrics/metrics.h" /* FsMetricKind */
#include "model/model.h"
#include "train/train.h"
#include "util/util.h" /* FsErrList */

/* Limits: trials in one sweep, and grid points a sweep without search.random
 * may enumerate (larger grids must be sampled). */
#define FS_SWEEP_MAX_TRIALS 100000
#define FS_SWEEP_MAX_GRID 1000000
typedef enum { FS_BACKEND_AUTO = 0, FS_BACKEND_CPU, FS_BACKEND_CUDA } FsBackend;
/* run.alpha's default: a trial is tied with the best while the corrected
 * paired test's Holm-adjusted p-value is at least this (docs/statistics.md). */
#define FS_ALPHA_DEFAULT 0.05

typedef struct {
    int index;      /* position in the expansion order (deterministic) */
    char id[FS_TRIAL_ID_LEN + 1]; /* set by sweep_assign_ids */
    FsArch arch;    /* arch.window is the sweep's window */
    FsTrainSpec train; /* seed[0] = the sweep's training seed; the runner sets seed[1..2] */
    char *config;   /* canonical JSON object of this trial's model and training options
                       (sorted keys, fixed number format): what the id hashes */
    uint16_t *at;   /* its value index in each swept dimension (FsSweep.dims): for the sampler */
    double *x;      /* its value in each swept dimension that is a range (FsSweepDim.range), else 0 */
} FsTrial;

/* One swept dimension: an option with several values, the layer-list
 * alternatives, or a range (docs/sweep-format.md, "Ranges"). */
#define FS_SWEEP_MAX_DIMS 64
typedef struct {
    char key[48]; /* the option's dotted sweep key: "model.filters", "training.early_stopping.alpha",
                     "model.layers" (the alternatives), "model.layers[1][2].filters" (a layer's range) */
    int n;        /* values (0 for a range) */
    int ordered;  /* numbers (ordered) or names (categories) */
    int range;    /* a range, {low, high[, log]}: a trial's value is FsTrial.x, anywhere in [low, high] */
    double low, high;
    int log;      /* sampled uniformly in log space (the sampler's density is in log space too) */
} FsSweepDim;

struct SwSpace; /* the parsed options, private to the sweep module */

/* run.constraints: trials outside them are excluded before training
 * (docs/sweep-format.md, "Constraints"): never trials of the sweep. */
typedef struct {
    int given;
    long params_min, params_max; /* on sweep_trial_params: 0 and LONG_MAX where not given */
    int line, col;               /* of run.constraints */
} FsConstraints;

/* A trial run.constraints excluded (never trained; `plan` lists it). */
typedef struct {
    char id[FS_TRIAL_ID_LEN + 1]; /* set by sweep_assign_ids */
    char *config;                 /* its trial config */
    char *arch;                   /* sweep_arch_summary */
    long params;                  /* sweep_trial_params */
} FsExcluded;
#define FS_SWEEP_MAX_EXCLUDED 10000 /* kept for plan; more are counted */

/* tpe over ranges proposes from this many candidates, drawn as
 * search.random draws its trials: max(1024, 16 x budget), at most
 * FS_SWEEP_MAX_TRIALS. */
int sweep_tpe_pool(int budget);

typedef enum { FS_SAMPLER_GRID = 0, FS_SAMPLER_RANDOM, FS_SAMPLER_TPE } FsSampler;

/* A file the sweep names (data or test) and where its name stands, so that a
 * problem found when the file is read (missing, unreadable, not the layout
 * expected) is reported at that line and column of the sweep. */
typedef struct {
    char *path;     /* as resolved (absolute) */
    char key[40];   /* "data.inputs[2]", "test.labels", ... */
    int line, col;  /* of the file name's scalar */
    int relative;   /* written relative to the sweep file's folder */
} FsSweepFile;

typedef struct {
    char *path; /* the sweep file; relative data paths resolve against its folder */
    /* data */
    FsFormat format;
    char **inputs;
    int n_inputs;
    char *sequences, *labels, *mask; /* FASTA set */
    char *prepared;                   /* a prepared fold file instead of the above */
    int folds;                        /* k (>= 2), ignored when predefined */
    int repeats;                      /* data.repeats: k folds assigned this many times (>= 1) */
    uint64_t fold_seed;
    int predefined; /* use the data's own train/validation split (FASTA SET=) */
    int window;     /* 0 for a chain model */
    int chain;      /* data.window: chain */
    /* data.features: the sources of per-residue columns (none: one-hot
     * input only) and whether the one-hot codes are left out; feat_dim,
     * the columns they hold, is known once the data is (sweep_bind_data). */
    FsFeatSpec features;
    int no_onehot;
    int feat_dim;
    int features_line, features_col;
    int classes;    /* data.classes: 3 (helix, strand, coil; the default) or 8 (DSSP-8) */
    int metric_given; /* run.metric was written (else an 8-state run ranks by q8) */
    uint32_t synth_proteins; /* > 0: a synthetic set (synth_generate) is the data */
    uint64_t synth_seed;
    /* run */
    FsBackend backend;
    /* run.gpu_path: FsGpuPath (train.h), which GPU tier trains the models
     * (auto: gpu_model_check's rule). Copied into every trial's training
     * options (sweep_set_gpu_path), never into its config or id. */
    int gpu_path;
    int threads; /* 0 = auto */
    char *out_dir;
    FsMetricKind metric;
    double alpha;      /* run.alpha: the leaderboard's level for "tied with the best" (FS_ALPHA_DEFAULT) */
    int objectives[FS_OBJ_COUNT], n_objectives; /* run.objectives (FsObjective): the leaderboard's Pareto front */
    double checkpoint; /* run.checkpoint: seconds of a fold's training between checkpoints; 0 = off */
    int keep_models; /* run.keep_models: trials whose fold models stay at the end; FS_KEEP_ALL, 0 = none */
    FsConstraints constraints; /* run.constraints */
    /* test: a held-out set evaluated when the sweep finishes. Not part of the
     * canonical sweep or the ids, so one may be added to a finished sweep. */
    int has_test;
    FsFormat test_format;
    char **test_inputs;
    int n_test_inputs;
    char *test_sequences, *test_labels, *test_mask; /* FASTA set */
    int test_top;   /* fold ensembles of the best test_top trials are evaluated (1..1000, default 5) */
    int test_refit; /* also refit those trials on all the training data and evaluate the refits */
    double test_max_identity; /* test proteins above this identity to a training protein are refused (FS_IDENTITY_MAX_DEFAULT) */
    double test_max_coverage; /* test proteins above this coverage by training proteins are refused (FS_COVERAGE_MAX_DEFAULT) */
    int test_exclude_overlap; /* ... or left out of the scores, with those identical to one */
    int test_line, test_col; /* the `test` key, for errors found later (e.g. overlap with the data) */
    /* trials */
    FsTrial *trials;
    int n_trials;
    uint64_t grid_size; /* size of the full grid (before random sampling and before
                           dropping duplicate trials) */
    char *canonical;    /* canonical YAML of the whole sweep (written to the run folder) */
    FsExcluded *excluded; /* trials run.constraints excluded, in the order met: the first n_excluded_kept */
    int n_excluded, n_excluded_kept; /* every distinct one met, and those kept */
    /* search */
    int random_n;         /* search.random: trials sampled from the grid; 0 = the whole grid */
    uint64_t search_seed; /* search.seed */
    FsPruneSpec prune;    /* search.pruner (kind FS_PRUNER_NONE: every trial trains every fold) */
    FsSampler sampler;    /* grid (no search.random), random, or tpe: then trials holds the whole
                             grid and a run proposes random_n of them, batch by batch */
    int batch;            /* search.batch: trials per proposal (tpe, or random with stop) */
    int stop_after;       /* search.stop.after: the study ends after this many trials in a row did not beat
                             the best by more than its corrected standard error (0: off; run/sampler.c) */
    /* search.replicates: once the sweep's own trials are done, the best replicate_top complete
     * ones train again with seeds 1 .. replicate_seeds - 1 (run/replicates.c; 0: off) */
    int replicate_top, replicate_seeds;
    FsSweepDim dims[FS_SWEEP_MAX_DIMS];
    int n_dims;
    struct SwSpace *space; /* the options' values, for sweep_trial_value (owned; freed by sweep_free) */
    char *note;           /* NULL, or a remark for the user (e.g. random: N above the grid size) */
    /* where things are in the file, for errors found after loading the data */
    int data_line, data_col, folds_line, folds_col, window_line, window_col;
    FsSweepFile *files; /* every file name of data and test, in file order */
    int n_files;
} FsSweep;

#define FS_KEEP_ALL (-1)
#define FS_KEEP_DEFAULT 10
#define FS_CHECKPOINT_DEFAULT 600.0 /* ten minutes */
/* test.top: default and largest number of best trials evaluated on the test set. */
#define FS_TEST_TOP_DEFAULT 5
#define FS_TEST_TOP_MAX 1000

/* Returns 0, or -1 with every problem in errs (nothing is expanded then). */
int sweep_load_file(FsSweep *sw, const char *path, FsErrList *errs);
/* Same, from text; name is used in messages and to resolve relative paths. */
int sweep_load_string(FsSweep *sw, const char *text, const char *name, FsErrList *errs);
void sweep_free(FsSweep *sw);

/* Checks what can only be checked with the data loaded (ds as the runner
 * will train on it: folds assigned, or the predefined split): no more folds
 * than proteins, every fold with training and validation examples, a
 * predefined split with both sets. Returns 0, or -1 with every problem in
 * errs, each naming the sweep file and the position of the option at fault. */
int sweep_check_data(const FsSweep *sw, const FsDataset *ds, FsErrList *errs);

/* Loads the data the sweep names (prepared file, synthetic set via
 * synth_generate, FASTA set or input files), assigns folds (k-fold sweeps
 * not from a prepared file) and runs sweep_check_data. Returns 0 with ds
 * filled (the caller data_frees it), or -1 with every problem in errs; a
 * problem with a file starts at the position of its name in the sweep
 * ("SWEEP:LINE:COL: data.inputs[1]: FILE: ..."). */
int sweep_load_data(const FsSweep *sw, FsDataset *ds, FsErrList *errs);
/* Whether the run proposes trials in batches, each once the earlier ones
 * are finished (search.sampler: tpe, or search.stop), rather than all at once. */
static inline int sweep_proposes_in_batches(const FsSweep *sw)
{
    return sw->sampler == FS_SAMPLER_TPE || sw->stop_after > 0;
}
/* The fold ids a trial trains: 1 with a predefined split, else k x repeats. */
int sweep_fold_count(const FsSweep *sw);

/* Loads the sweep's test set (the `test` section: input files, or a FASTA
 * set) as data_load reads it; no folds. Returns 0 with test filled (the
 * caller data_frees it), or -1 with a message in errs prefixed with the
 * sweep file and the position of the file's name (other problems: of the
 * `test` key; also when the sweep has no test section). */
int sweep_load_test(const FsSweep *sw, FsDataset *test, FsErrList *errs);

/* The value of trial t in swept dimension d (0..n_dims-1) as the
 * canonical sweep writes it ("0.001", "adam", "true"; for model.layers the
 * alternative's number, from 1) into buf, returning buf; or NULL when the
 * option does not change this trial (momentum under adam, leaky_slope
 * without a leaky_relu layer: every value of it gives the trial's config). */
const char *sweep_trial_value(const FsSweep *sw, const FsTrial *t, int d, char *buf, size_t n);

/* Trial id = hash of the trial's canonical config and the data fingerprint. */
void sweep_assign_ids(FsSweep *sw, uint64_t data_fingerprint);
/* After the data is loaded (or received): its feature columns into every
 * trial's architecture (and sweep_point's later ones; with run.constraints
 * the trials drawn again, counting the feature weights), then
 * sweep_assign_ids with its fingerprint. 0, or -1 with errs (the
 * constraints then exclude every trial). */
int sweep_bind_data(FsSweep *sw, const FsDataset *ds, FsErrList *errs);
/* Its first part alone, for readers without the data (a run folder's
 * leaderboard: the column count its journal's run record gives). */
int sweep_bind_columns(FsSweep *sw, int feat_dim, FsErrList *errs);
/* 1 while run.constraints wait for the data's feature column count
 * (data.features): the trials are not final until sweep_bind_columns. */
int sweep_constraints_pending(const FsSweep *sw);
/* The model's input in words: "one-hot + 16 columns from 1 file source,
 * stored as floats: 64 bytes per residue, 1.2 MiB per rank" (plan, run). */
void sweep_features_describe(const FsSweep *sw, const FsDataset *ds, char *out, size_t n);

/* The training options of trial tr's fold `fold` (a fold id): the trial's,
 * with its seeds: the sweep's training seed, the trial id, the fold. Every
 * rank that trains the fold computes the same, so its result does not
 * depend on where it trains. */
void sweep_fold_spec(FsTrainSpec *ts, const FsTrial *tr, int fold);
/* The same for seed index `seed` (search.replicates): 0 is sweep_fold_spec;
 * seed s > 0 changes the first seed word (the sweep's training seed) to a
 * value derived from it and s alone, so every rank, thread count and
 * resume trains the replicate the same. */
void sweep_seed_spec(FsTrainSpec *ts, const FsTrial *tr, int fold, int seed);

/* The trial's trainable parameters, as `plan` shows them and the journal's
 * trial record keeps them (0 for an architecture that does not compile,
 * which the loader refuses). */
long sweep_trial_params(const FsTrial *t);
/* The residues one of its outputs sees (model_receptive_field): a chain
 * model's context, what `plan` prints. */
int sweep_trial_receptive_field(const FsTrial *t);

/* Why run.constraints exclude a trial of `params` parameters, into buf
 * ("params 312064 > max 200000"); returns buf ("" when they allow it). */
const char *sweep_excluded_why(const FsSweep *sw, long params, char *buf, size_t n);

/* Lists the differences between two canonical sweeps, one "key: A -> B" per
 * line, into out. Returns the number of differences (0 = same sweep). */
int sweep_diff(const char *canonical_a, const char *canonical_b, char *out, size_t n);
/* Extending a run (docs/sweep-format.md, "Extending a run"): the
 * differences between the folder's canonical sweep a and the new one b
 * that a rerun on the same folder may not make, "key: A -> B (why)" per
 * line, into out. Returns how many (0: b may extend a). The data and
 * folds, search.seed, sampler and batch, run.metric, and any change to a
 * sweep with search.stop or search.replicates are fixed; model, training,
 * search.random, search.pruner, run.alpha, run.objectives and
 * run.constraints may change (the runner then requires that every trial
 * already trained is still a trial of b). */
int sweep_diff_fixed(const char *canonical_a, const char *canonical_b, char *out, size_t n);

/* One-line summaries: "conv64x5-conv64x5-dense128 swish w17" and
 * "adam lr=0.001 batch=8 epochs=5 stop=none seed=1"; a chain model's:
 * "conv64x5-conv64x5d2-dense128 swish chain rf15" (d: the dilation, rf: the
 * receptive field) and "... batch_residues=2048 ...". */
void sweep_arch_summary(const FsArch *a, char *out, size_t n);
void sweep_train_summary(const FsTrainSpec *ts, int chain, char *out, size_t n);

const char *sweep_backend_name(FsBackend b);
/* "auto", "cpu", "cuda" -> FsBackend (sweep_backend_name's names), or -1. */
int sweep_backend_parse(const char *s);
/* Sets run.gpu_path (FsGpuPath) for the sweep and every trial's training
 * options, so that every job's spec (sweep_fold_spec) carries it: the
 * loader with the file's value, a run with --gpu-path's or rank 0's. */
void sweep_set_gpu_path(FsSweep *sw, int gpu_path);

#endif
