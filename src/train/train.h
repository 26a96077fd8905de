/*
 * train: trains one (trial, fold) model, and a pool of worker threads that
 * trains many. The per-model code is single source (see core.h); this
 * header is the host API.
 *
 * Determinism: a model's random streams come from FsTrainSpec.seed words
 * only, every reduction has a fixed order, and where threads share a
 * model's work each output is computed whole by one of them (never a sum
 * split across threads), so results are bitwise identical whatever the
 * thread count.
 */
#ifndef FS_TRAIN_H
#define FS_TRAIN_H

#include <math.h> /* train_lr_at */
#include <stdint.h>

#include "data/data.h"
#include "metrics/metrics.h" /* FsMetricKind */
#include "model/model.h"
#include "stop/stop.h"

typedef enum { FS_OPT_SGD = 0, FS_OPT_ADAM, FS_OPT_ADAMW } FsOptKind;
#define FS_OPT_COUNT 3
/* The optimizers' names in FsOptKind order (sweep format, configs). */
extern const char *const train_opt_names[FS_OPT_COUNT];

/* What chooses the kept (best) epoch and what early stopping watches
 * (training.monitor): the validation loss (lower is better), or validation
 * Q3 (higher is better; the stopping rule then sees the error 1 - Q3).
 * Ties keep the first epoch with the best value. */
typedef enum { FS_MONITOR_LOSS = 0, FS_MONITOR_Q3 } FsMonitor;
#define FS_MONITOR_COUNT 2
/* Their names in FsMonitor order, as the sweep format and journal spell them. */
extern const char *const train_monitor_names[FS_MONITOR_COUNT];

/* The learning rate over training (training.lr_schedule): constant; step
 * (multiplied by lr_step_factor every lr_step_every epochs); cosine
 * (annealed from lr to 0 over the epoch limit, step by step, Loshchilov &
 * Hutter's SGDR without restarts). Each may start with warmup_epochs of
 * linear warm-up from lr / (warm-up steps) to lr. */
typedef enum { FS_LR_CONSTANT = 0, FS_LR_STEP, FS_LR_COSINE } FsLrSchedule;
#define FS_LR_SCHEDULE_COUNT 3
extern const char *const train_lr_schedule_names[FS_LR_SCHEDULE_COUNT];

/* Class weights of the training loss (training.class_weights): none,
 * balanced (each class weighted N / (3 N_c) over the fold's training
 * residues, as scikit-learn's and Keras users' "balanced"), or explicit
 * (FsTrainSpec.class_w, a sweep's {H: w, E: w, C: w}). Validation loss,
 * the kept epoch and early stopping stay unweighted. A sweep names the
 * first FS_CW_NAMED; explicit weights are a mapping. */
typedef enum { FS_CW_NONE = 0, FS_CW_BALANCED, FS_CW_EXPLICIT } FsClassWeights;
#define FS_CW_COUNT 3
#define FS_CW_NAMED 2
/* The largest explicit class weight. */
#define FS_CW_MAX 1000.0f
extern const char *const train_class_weights_names[FS_CW_COUNT];

/* The most epochs a sweep may ask for (training.epochs); every count read
 * back from a journal or a message is bounded by it. */
#define FS_TRAIN_MAX_EPOCHS 100000
/* A chain model's batch budget (training.batch_residues): by default about
 * eight proteins of average length; at most what one batch's workspace may
 * hold of rows. */
#define FS_TRAIN_BATCH_RESIDUES 2048
#define FS_TRAIN_MAX_BATCH_RESIDUES (1 << 20)

/* Which GPU tier trains a model (run.gpu_path, #44): AUTO leaves it to
 * gpu_model_check's rule; BLOCK and LIBRARY override it (the rule then
 * takes that tier or refuses). As a fold's record (FsFitResult.gpu_path):
 * the tier that trained it, AUTO (0) for the CPU backend. The values are
 * gpu.h's FsGpuTier's; the words are these, once. */
typedef enum { FS_GPU_PATH_AUTO = 0, FS_GPU_PATH_BLOCK = 1, FS_GPU_PATH_LIBRARY = 2 } FsGpuPath;
#define FS_GPU_PATH_COUNT 3
static inline const char *train_gpu_path_name(int p)
{
    static const char *const names[FS_GPU_PATH_COUNT] = {"auto", "block", "library"};
    return p >= 0 && p < FS_GPU_PATH_COUNT ? names[p] : "?";
}
/* Models a library group's calls span at most (its width; a fold record's
 * gpu_group): 32 fills an H200's SMs with the group's GEMM tiles at chain
 * batches of about 2,000 rows (../shared/docs/gpu-tiers.md, section 6),
 * and bounds a group's memory to a few GiB. */
#define FS_GPU_LIB_GROUP_MAX 32

typedef struct {
    FsOptKind opt;
    float lr;
    float momentum;      /* SGD */
    float beta1, beta2, eps; /* Adam, AdamW */
    float weight_decay;  /* SGD, Adam: L2 added to the gradient; AdamW: decoupled */
    float clip_norm;     /* clip by global gradient norm; 0 = off */
    int batch;           /* >= 1 */
    int eval_batch;      /* validation batch (forward only), >= 1 */
    int batch_residues;  /* a chain model's batch: the most rows it holds (residues and their pad rows), >= 1 */
    FsStopSpec stop;     /* stop.max_epochs bounds every run */
    FsMonitor monitor;   /* the kept epoch and the stopping rule's E_va */
    FsLrSchedule lr_schedule;
    int lr_step_every;    /* FS_LR_STEP: epochs between changes, >= 1 */
    float lr_step_factor; /* FS_LR_STEP: multiplier, in (0, 1] */
    int warmup_epochs;    /* linear warm-up epochs, 0 = none */
    FsClassWeights class_weights;
    float class_w[FS_MAX_CLASSES]; /* FS_CW_EXPLICIT: the weights, in class order (> 0), the run's classes */
    uint64_t seed[3];    /* sweep seed, trial hash, fold: the model's random streams */
    /* FsGpuPath: run.gpu_path (or --gpu-path), the same for every job; a
     * run option, in neither the trial config nor its id. */
    int gpu_path;
} FsTrainSpec;

/* CANCELLED: stopped by a signal before it finished; not a result (a
 * resumed run trains it again). */
typedef enum { FS_FIT_OK = 0, FS_FIT_DIVERGED, FS_FIT_FAILED, FS_FIT_CANCELLED } FsFitStatus;

/* Per-epoch curves; the caller provides arrays of stop.max_epochs entries. */
typedef struct {
    float *train_loss, *val_loss, *val_q3, *seconds;
} FsCurves;

typedef struct {
    FsFitStatus status;
    int epochs;            /* epochs completed */
    int best_epoch;        /* 1-based; 0 if no epoch completed */
    FsMonitor monitor;     /* what chose best_epoch (the spec's) */
    int halted_by;         /* 1 if the stop criterion ended training before max_epochs */
    int diverged_epoch;    /* 1-based epoch and 0-based step within it, when diverged */
    long diverged_step;
    float best_val_loss;
    int classes;           /* the model's classes (3 or 8): best_confusion's rows and columns */
    uint64_t best_confusion[FS_MAX_CLASSES][FS_MAX_CLASSES]; /* validation confusion at the best epoch */
    uint64_t train_examples; /* examples trained on (forward + backward) */
    uint64_t val_examples;   /* examples evaluated */
    double seconds, val_seconds;
    int gpu_path;          /* FsGpuPath: the GPU tier that trained it (the GPU driver's), 0 on the CPU */
    int gpu_group;         /* the library tier: the models its group's calls spanned; 0 otherwise */
    FsCurves curves;
    /* FS_FIT_FAILED: why. FS_FIT_CANCELLED with a message: the fold could
     * not run on this process (out of memory for its model), a fault of the
     * process rather than the trial: it is not recorded (it trains again on
     * resume) and the run stops with the message. */
    char message[1024];
    /* The best epoch's weights (parameters then state, n_weights floats)
     * when the caller asked for them (train_result_alloc_weights, and the
     * job's weights_out pointing here); owned, freed by train_result_free.
     * They travel with the result: MPI result messages, model files. */
    float *weights;
    long n_weights;
} FsFitResult;

void train_spec_defaults(FsTrainSpec *ts);

/* The learning rate of the step that is step_in_epoch (0-based) of epoch
 * (1-based), an epoch being steps_per_epoch batches (>= 1): the schedule's
 * factor times ts->lr, in double and rounded once to float. Host and
 * device (the GPU's fit calls it), so one formula serves both. */
FS_HOST_DEVICE static inline float train_lr_at(const FsTrainSpec *ts, int epoch, long step_in_epoch,
                                               long steps_per_epoch)
{
    const double S = (double)(steps_per_epoch > 0 ? steps_per_epoch : 1);
    const double t = (double)(epoch - 1) * S + (double)step_in_epoch; /* steps before this one */
    double f = 1.0;
    if (ts->lr_schedule == FS_LR_STEP && ts->lr_step_every > 0)
        f = pow((double)ts->lr_step_factor, (double)((epoch - 1) / ts->lr_step_every));
    else if (ts->lr_schedule == FS_LR_COSINE)
        f = 0.5 * (1.0 + cos(3.141592653589793 * t / ((double)ts->stop.max_epochs * S)));
    const double warm = (double)ts->warmup_epochs * S;
    if (t < warm) f *= (t + 1.0) / warm;
    return (float)((double)ts->lr * f);
}
/* Counts of each class over the examples idx[0..n) of labels ss (the
 * data's FS_SS_CLASS codes), and the weights ts->class_weights gives them
 * (1 for none, and for a class with no examples). */
/* counts: FS_MAX_CLASSES entries (every class a label byte can hold);
 * w: the run's classes' (3 or 8) entries. */
void train_class_counts(const uint8_t *ss, const uint32_t *idx, uint32_t n, uint64_t *counts);
void train_class_weights(const FsTrainSpec *ts, int classes, const uint64_t *counts, float *w);
/* Whether a result's counts are ones a fit can produce (epochs, best and
 * diverged epoch within 0..FS_TRAIN_MAX_EPOCHS and each other, halted_by
 * 0 or 1, diverged_step >= 0); 0, or -1 with why. The journal refuses to
 * write, and rank 0 to accept, what its reader would reject. */
int train_result_check(const FsFitResult *r, char *why, size_t why_n);
/* Checks values; 0 or -1 with a message naming the option. */
int train_spec_check(const FsTrainSpec *ts, FsErr *err);
/* A chain model's net compiled for its batches: rows for the spec's budget,
 * or the longest chain (longest residues) and its pad rows where that is
 * more. 0, or -1 with err. */
int train_chain_rows(const FsArch *arch, const FsTrainSpec *ts, uint32_t longest, FsNet *net, FsErr *err);
/* A job's net as the trainer compiles it: a chain model's for its batches'
 * rows (train_chain_rows; longest: the data's longest chain, 0 where not
 * known), a window model's for max(batch, eval_batch) examples. 0, or -1
 * with err. */
int train_compile(const FsArch *arch, const FsTrainSpec *ts, uint32_t longest, FsNet *net, FsErr *err);
const char *train_opt_name(FsOptKind k);
const char *train_monitor_name(FsMonitor m);
const char *train_lr_schedule_name(FsLrSchedule s);
const char *train_class_weights_name(FsClassWeights c);
const char *train_status_name(FsFitStatus s);

/* A fold's checkpoints (the CPU trainer, and the GPU's library tier at an
 * epoch's start and a stop: train/lib_ckpt.c; its block tier keeps none).
 * Between two batches the trainer serialises the fit's whole state (weights,
 * optimizer moments, best weights, training order, random stream, epoch,
 * curves: a safetensors file, see checkpoint.c) and hands the bytes to
 * save(), every `every` seconds of training and when the job's cancel flag
 * stops it. A job given resume bytes continues from them, and ends with
 * the same numbers, bit for bit, as a fit that never stopped. */
typedef struct {
    double every;     /* seconds of training between checkpoints; <= 0: only when stopped */
    long every_steps; /* > 0: every this many optimizer steps instead (deterministic points) */
    void (*save)(void *ctx, const uint8_t *bytes, uint64_t n);
    /* optional: epoch 0: the resume bytes were read (resumed_epoch, or a
     * note says why not); epoch >= 1: that epoch's validation starts */
    void (*event)(void *ctx, int epoch);
    void *ctx;
    const uint8_t *resume; /* a checkpoint to continue from, or NULL */
    uint64_t resume_n;
    const char *origin; /* names the resume bytes in messages */
    /* Out: the epoch and example the fit resumed at (0 if it started
     * afresh), and why resume bytes were not used ("" if they were). */
    int resumed_epoch;
    uint32_t resumed_next;
    char note[512];
    /* Out: checkpoints this fit wrote, and the last one's size, epoch and
     * time (serialising plus save()): what a stop costs, for the run's
     * message and bench/run-memory. */
    int n_saved;
    int saved_epoch;
    uint64_t saved_bytes;
    double saved_seconds;
} FsCheckpointing;

/* The format's name and version (the checkpoint's metadata). */
#define FS_CKPT_FORMAT "foldsweep fold checkpoint"
#define FS_CKPT_VERSION "1"

/* One job: one (trial, fold) model. */
typedef struct {
    const FsArch *arch;
    const FsTrainSpec *spec;
    const FsDataset *data;
    int fold;              /* 0..k-1, or FS_FOLD_PREDEFINED */
    FsFitResult *result;   /* curves must point at max_epochs entries each */
    float *weights_out;    /* optional: best weights (n_params + n_state) */
    const volatile int *cancel; /* optional: nonzero stops the fit between batches */
    const volatile int *prune;  /* optional: the same for this job alone (its trial was pruned) */
    volatile int *progress;     /* optional: epochs completed so far, for a watcher (curves are
                                   written before it moves) */
    volatile uint64_t *examples; /* optional: examples trained so far (CPU), for a watcher */
    FsCheckpointing *ckpt;       /* optional: checkpoints (CPU; the GPU's library tier) */
    /* The GPU's library tier: the group this job's model trains in, by the
     * run's fixed rule (run/gpu_groups.c): the models its group's calls
     * span (0: unset, those a launch holds of its shape) and, where set,
     * its signature (jobs of one signature share a group). */
    int lib_sig, lib_width;
} FsJob;

/* Trains one job on the calling thread. Returns 0, or -1 when the job
 * could not start (result->status FS_FIT_FAILED with a message; or
 * FS_FIT_CANCELLED with one: no memory for its model). */
int train_job(const FsJob *job);
/* The examples job's fold trains on (validation: validates on): its
 * residues for a window model, its chains for a chain model; a
 * checkpoint's next example lies below the first. */
uint32_t train_job_examples(const FsJob *job, int validation);

/* Trains jobs on n_threads worker threads (each job owned by one thread;
 * threads left without a job help the others, so a single job may use
 * every thread). */
void train_jobs(const FsJob *jobs, int n_jobs, int n_threads);

/* Called by the pool, one call at a time (under the pool's lock), when job
 * `index` starts and when it has finished (its result is complete). */
typedef struct {
    void (*started)(int index, void *ctx);
    void (*finished)(int index, void *ctx);
    void *ctx;
    const volatile int *stop; /* optional: nonzero = start no further jobs */
} FsPoolHooks;

/* train_jobs with hooks. Jobs never started (stop) keep their result as
 * it was; returns the number of jobs that finished. */
int train_jobs_hooked(const FsJob *jobs, int n_jobs, int n_threads, const FsPoolHooks *hooks);

/* A pool fed by a job source, for callers whose jobs arrive over time (an
 * MPI worker, the coordinator's own threads). take() hands the calling
 * thread a job and an id for it (FS_TAKE_JOB), says that nothing is ready
 * now but more may come (FS_TAKE_NONE: only when wait is 0; with wait it
 * blocks until a job or the end) or that the source has nothing more for
 * this thread (FS_TAKE_END). done() is called after the job's result is
 * complete. Both are called from pool threads without any pool lock held.
 *
 * A pool thread with nothing to train helps the models that are training
 * (train/team.h): the threads share each model's large loops (GEMM tiles,
 * the optimizer), each output computed by the same code whoever computes
 * it, so results stay bitwise identical at any thread count. It asks its
 * source again every few milliseconds, so it goes back to a fold of its
 * own as soon as one is ready, and once the source has ended it stays
 * while any model in the process still trains. FOLDSWEEP_TEAM=0 in the
 * environment turns helping off (one thread per model, as before). */
enum { FS_TAKE_END = -1, FS_TAKE_NONE = 0, FS_TAKE_JOB = 1 };
typedef struct {
    int (*take)(void *ctx, const FsJob **job, int *id, int wait);
    void (*done)(void *ctx, int id);
    void *ctx;
} FsPoolSource;

/* Shared loops run with helpers since the process started: regions opened,
 * their chunks, the chunks helpers ran, and stalls (an owner waited long
 * for a helper that had lost its core, and then trained alone for a while)
 * (tests, bench/run-team). */
typedef struct {
    unsigned long long regions, chunks, helper_chunks, stalls;
} FsTeamStats;
void train_team_stats(FsTeamStats *s);

typedef struct FsPoolThreads FsPoolThreads;

/* Starts n_threads threads training from src; join them with train_pool_join. */
FsPoolThreads *train_pool_start(const FsPoolSource *src, int n_threads);
/* Threads that started (a machine out of memory or threads may start
 * fewer, or none); *err: pthread_create's error for one that did not. */
int train_pool_started(const FsPoolThreads *p, int *err);
void train_pool_join(FsPoolThreads *p);
/* Trains from src on the calling thread until take() says FS_TAKE_END
 * (and, helping, until no model trains). */
void train_pool_work(const FsPoolSource *src);

/* Allocates / frees curves of max_epochs entries in a result (and its
 * weights, if any). */
void train_result_alloc(FsFitResult *r, int max_epochs);
void train_result_free(FsFitResult *r);
/* Gives r room for the best weights of `arch` (n_params + n_state floats);
 * returns the buffer for FsJob.weights_out, or NULL if arch does not compile. */
float *train_result_alloc_weights(FsFitResult *r, const FsArch *arch);
/* Releases only the weights (once they are saved or sent). */
void train_result_drop_weights(FsFitResult *r);
/* The fold's value of metric m, as the run ranks, prunes and samples by:
 * its best epoch's validation Q3 (from the confusion; 0 without one) or
 * validation loss. The one place it is computed. */
double train_result_metric(const FsFitResult *r, FsMetricKind m);
/* A fold's values as run.objectives read them (metrics_objective): its kept
 * epoch's Q3 and loss, its seconds, its validation passes' seconds and
 * residues. The one mapping: the sampler's (from journal records) and the
 * leaderboard's (its rows' folds) both take it from here. */
FsObjectiveFold train_result_objective(const FsFitResult *r);

/* Forward passes of a trained model over examples of a dataset (the
 * residues idx[0..n) of ds, windows gathered as in training, batch norm
 * with its running statistics, no dropout). Writes the softmax
 * probabilities (n x 3, H E C) to probs and, if pred is not NULL, the
 * class of the largest logit (what validation scores) to pred. Runs on the
 * calling thread in batches of `batch`; the numbers do not depend on the
 * batch size. weights: n_params + n_state floats of net. */
void train_predict(const FsNet *net, const float *weights, const FsDataset *ds, const uint32_t *idx, uint32_t n,
                   int batch, float *probs, uint8_t *pred);

/* train_predict in parts, for many calls on one model (predict's chunks):
 * the workspace is laid out and the weights copied once. A predictor is
 * used by one thread at a time. */
typedef struct FsPredictor FsPredictor;
FsPredictor *train_predictor_new(const FsNet *net, const float *weights, const FsDataset *ds, int batch);
void train_predictor_run(FsPredictor *p, const uint32_t *idx, uint32_t n, float *probs, uint8_t *pred);
void train_predictor_free(FsPredictor *p);
/* The bytes its workspace holds. */
size_t train_predictor_bytes(const FsPredictor *p);

#endif
