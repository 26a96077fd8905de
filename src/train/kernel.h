/*
 * train/kernel.h: what the CUDA backend's host side (kernels/gpu_cuda.cu,
 * the gpu module) needs from the trainer, and nothing more: the per-model
 * state and fold data it lays out in device memory, the host functions that
 * size, bind and seed that state from the CPU trainer's size table and
 * seeds, and the launch of the kernel that trains it (kernels/fit_kernel.cu).
 *
 * It exists so that the backend does not include train/core.h, the
 * trainer's private header: the GEMM, the layer steps, the optimizer's
 * arithmetic and checkpointing can change without the gpu module seeing
 * them, and what the two sides share is this list. core.h includes it.
 */
#ifndef FS_TRAIN_KERNEL_H
#define FS_TRAIN_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "data/data.h"
#include "model/model.h"
#include "train/train.h"
#include "util/util.h"

/* Partial sums of the deterministic reductions (the gradient norm's chunks). */
#define FS_NORM_CHUNKS 64

/* Everything one model needs while it trains, pointing into one buffer. */
typedef struct {
    const FsNet *net;
    float *w;       /* parameters then state, n_params + n_state */
    float *g;       /* gradients, n_params */
    float *m1, *m2; /* optimizer moments, n_params each */
    float *best;    /* weights of the best validation epoch, n_params + n_state */
    float *work;    /* activations and their gradients, net->n_work */
    float *scratch; /* transposed weights, net->n_scratch */
    float *partial; /* FS_NORM_CHUNKS partial sums (deterministic reductions) */
    uint8_t *codes; /* [max_batch][in_rows] amino-acid codes of the batch (a chain batch's rows: FsNet) */
    uint8_t *labels;/* [max_batch][out_rows] (a chain batch: FS_LABEL_NONE where a row is not scored) */
    uint32_t *perm; /* training order, n_train */
    float *ex_loss; /* [max_batch][out_rows] per-example loss of the last batch */
    uint8_t *ex_pred; /* [max_batch][out_rows] predicted class of the last batch */
    int rows;       /* a chain model: the rows of the batch in the workspace (its proteins and their pad rows) */
    uint32_t scored;/* a chain model: the batch's scored residues */
    FsRng rng;      /* shuffling */
    uint64_t drop_key; /* dropout masks are a hash of this, the step and the element */
    const volatile int *cancel; /* nonzero: stop between batches (a signal arrived) */
    const volatile int *prune;  /* nonzero: stop between batches (this model's trial was pruned) */
    volatile int *progress;     /* optional: epochs completed, for a host watching (curves are
                                   written before it moves) */
    long step;      /* optimizer steps taken (Adam bias correction) */
    float lr;       /* this step's learning rate (train_lr_at; the fit sets it before each step) */
    int class_weighted;    /* training.class_weights is not none: the training loss weighs by class_w */
    float class_w[FS_MAX_CLASSES]; /* per class (the net's classes; (train_class_weights) */
    volatile uint64_t *examples; /* optional: examples trained so far, for progress */
    /* CPU only (NULL on the GPU, where the library tier's host writes and
     * reads them: train/lib_ckpt.c): the fold's checkpointing
     * (train/checkpoint.c); the state a fit resumes from (a checkpoint read
     * back). */
    struct FsCkpt *ckpt;
    const struct FsFitState *resume;
} FsModel;

/* Training data as the trainer sees it: residue arrays and example lists. */
/* A window model's examples are scored residues; a chain model's are
 * chains (segments: the index of each one's first residue) with at least
 * one scored residue, and n_*_res counts the scored residues they hold. */
typedef struct {
    const uint8_t *aa, *ss, *left, *right;
    const uint32_t *train;
    uint32_t n_train;
    const uint32_t *valid;
    uint32_t n_valid;
    uint64_t n_train_res, n_valid_res; /* scored residues of the examples */
    /* Per-residue feature columns (FsDataset.feat): feat_dim per residue,
     * binary16 where feat_half, else float; NULL when the net reads none. */
    const void *feat;
    uint32_t feat_dim, feat_half;
} FsFoldData;

/* A chain batch's label for a row that is not scored (a pad row, or a
 * residue whose label is masked). */
#define FS_LABEL_NONE 0xff

/* The part of a model's state that every step of a batch reads and writes:
 * the reduction partials, the batch's per-example losses, amino-acid codes,
 * labels and predictions. On the GPU it lives in the block's shared memory
 * (kernels/fit_kernel.cu binds it there), elsewhere at the end of the
 * model's buffer (core_model_bind); one layout for both. */
#define FS_ALIGN64(n) (((size_t)(n) + 63) / 64 * 64)
FS_HOST_DEVICE static inline size_t core_model_hot_bytes(const FsNet *net)
{
    size_t mb = (size_t)net->max_batch, mo = mb * (size_t)net->out_rows;
    return FS_ALIGN64(FS_NORM_CHUNKS * sizeof(float)) + FS_ALIGN64(mo * sizeof(float)) +
           FS_ALIGN64(mb * (size_t)net->in_rows) + FS_ALIGN64(mo) * 2;
}
FS_HOST_DEVICE static inline void core_model_bind_hot(FsModel *m, const FsNet *net, void *hot)
{
    size_t mb = (size_t)net->max_batch, mo = mb * (size_t)net->out_rows;
    char *p = (char *)hot;
    m->partial = (float *)(void *)p;
    p += FS_ALIGN64(FS_NORM_CHUNKS * sizeof(float));
    m->ex_loss = (float *)(void *)p;
    p += FS_ALIGN64(mo * sizeof(float));
    m->codes = (uint8_t *)p;
    p += FS_ALIGN64(mb * (size_t)net->in_rows);
    m->labels = (uint8_t *)p;
    p += FS_ALIGN64(mo);
    m->ex_pred = (uint8_t *)p;
}

/* The dynamic shared memory a block gives the model within `room` bytes:
 * its hot state, and its weights (parameters then state, m->w) after it
 * where both fit. Every forward and backward GEMM and the optimizer read
 * the weights, so in shared memory they cost no L1 or global traffic (#45
 * part 1). The host sizes a launch by this with the room that keeps
 * FS_GPU_MIN_BLOCKS blocks on an SM (gpu_block_shared), and tells the
 * kernel whether every model's weights are there (FsFitLaunch); the
 * kernel finds them after the hot state (kernels/fit_kernel.cu). */
FS_HOST_DEVICE static inline size_t core_model_shared_bytes(const FsNet *net, size_t room)
{
    size_t hot = core_model_hot_bytes(net);
    size_t w = FS_ALIGN64((size_t)(net->n_params + net->n_state) * sizeof(float));
    return hot + w <= room ? hot + w : hot;
}

/* What a model's block uses of its launch's dynamic shared memory: its
 * hot state, and its weights after it where the launch put every model's
 * there (FsFitLaunch.weights_shared). The rest, to the launch's size, is
 * the block's staging area for the GEMM (train/gemm_stage.h). */
FS_HOST_DEVICE static inline size_t core_model_block_bytes(const FsNet *net, int weights_shared)
{
    return weights_shared ? core_model_shared_bytes(net, (size_t)-1) : core_model_hot_bytes(net);
}

/* The CUDA backend's block: threads per model, and the models each SM must
 * be able to hold at once (the kernel's __launch_bounds__; the build's
 * resource check holds the compiled kernel to both). */
#define FS_GPU_THREADS 128
#define FS_GPU_MIN_BLOCKS 4
/* Shared memory a block holds besides its dynamic shared memory: the
 * runtime's reserve per block (1 KiB on sm_80 and sm_90), and at most
 * this much static shared memory in the kernel (FsFitShared; the build's
 * resource check holds ptxas's figure to it). gpu_block_shared counts
 * both. */
#define FS_GPU_SHARED_RESERVED 1024
#define FS_GPU_STATIC_SHARED 1024
/* The staging area for the GEMM's B (train/gemm_stage.h) that a launch
 * adds to its largest model's hot state where the models' weights are not
 * in shared memory themselves, within the room that keeps
 * FS_GPU_MIN_BLOCKS blocks on an SM (kernels/gpu_launch.cu: launch_shared):
 * 64 rows of a B 64 columns wide a chunk, or 32 of 128 (R1's convolution
 * and dense layer). Not larger: shared memory is carved from the SM's L1,
 * which A's rows and every unstaged operand go through. Unmeasured on a
 * device (#45 part 5 measures it). */
#define FS_GPU_STAGE_BYTES 16384
/* The block's GEMM, read from its machine code (tests/cuda_sass.py, #45):
 * the least share of FFMA, in percent, among the instructions of its k
 * loop that the build accepts, for the best of the whole-tile loop's forms
 * (gemm_block.h: B's rows aligned, A's k contiguous) and for every form.
 * Today's figures less a point or two (best 50% on sm_90, 58% on sm_80;
 * the slowest, the grouped walk, 34% and 39%; from 31% and 33% for the
 * one form before: docs/benchmarks.md, "The block's GEMM in SASS"), so
 * that no change makes a loop worse. #45's target is 50. */
#define FS_GPU_FFMA_FLOOR 48
#define FS_GPU_FFMA_FLOOR_EVERY 33

/* The fit kernel's static shared memory (kernels/fit_kernel.cu): the
 * block's model, fold data and spec, copied there so that their addresses
 * are constants, and what the kernel needs after the fit (held here, not
 * in registers across it: the kernel's callees take them all). At most
 * FS_GPU_STATIC_SHARED bytes. */
typedef struct {
    FsModel m;
    FsFoldData fd;
    FsTrainSpec ts;
    float *w_global; /* the weights in the model's buffer while m.w are in shared memory; else NULL */
} FsFitShared;
#if !defined(__cplusplus) /* checked where C includes it (src/gpu/limits.c) */
_Static_assert(sizeof(FsFitShared) <= FS_GPU_STATIC_SHARED, "FS_GPU_STATIC_SHARED holds the fit kernel's FsFitShared");
#endif

/* One launch's arguments, all device memory: models[i] trained on folds[i]
 * with specs[i] into out[i], one block each. done[i] (mapped host memory)
 * is set once out[i] and the model's weights are final, so that the host
 * records the model while the launch's others train. */
typedef struct {
    FsModel *models;
    const FsFoldData *folds;
    const FsTrainSpec *specs;
    FsFitResult *out;
    int *done;
    int weights_shared; /* every model's weights train in its block's shared memory (launch_shared) */
    size_t shared;      /* the launch's dynamic shared memory a block: the GEMM's staging area past the model's */
} FsFitLaunch;

/* The GPU library tier (#44, kernels/lib_train.cu): a group of models of
 * one shape, trained together a step at a time. The host runs the step's
 * sequence; each op below is one launch of the tier's own kernel, one
 * block per model of the group running the trainer's single source for
 * it (src/train/fit.c: fit_lib_op), and between them the libraries run
 * the convolutions of the whole group (kernels/dnn.h). Per model:
 *   BEGIN                      the fit's start (models neither active nor
 *                              finished: a group's, or a refilled slot's)
 *   EPOCH                      shuffle; the epoch's training and validation
 *                              batch counts into FsLibPublic
 *   STEP                       the next batch (cancel and prune checked,
 *                              learning rate), or none: `stepping` 0
 *   FWD layer part (train)     step_forward_part; LOSS: the batch's loss
 *   BWD layer part             step_backward_part (layer n: gradients zeroed)
 *   UPDATE                     clipping, optimizer, divergence, counts
 *   VAL_BEGIN, VAL_STEP, then FWD (train 0) and VAL_LOSS per batch
 *   EPOCH_END                  curves, stopping rule, kept epoch
 *   FINISH                     a model that stopped: its result, done flag
 * A model that has stopped, or has no batch left this epoch, skips each op
 * (its group mates go on); the library calls still cover it, writing only
 * its activations and gradients. */
typedef enum {
    FS_LIB_BEGIN = 0,
    FS_LIB_EPOCH,
    FS_LIB_STEP,
    FS_LIB_FWD,
    FS_LIB_LOSS,
    FS_LIB_BWD,
    FS_LIB_UPDATE,
    FS_LIB_VAL_BEGIN,
    FS_LIB_VAL_STEP,
    FS_LIB_VAL_LOSS,
    FS_LIB_EPOCH_END,
    FS_LIB_FINISH,
} FsLibOp;

/* Whether layer i has convolution GEMMs the library tier runs through the
 * libraries (a conv1d that is not the first layer's gather; core.h: a
 * step in parts). */
FS_HOST_DEVICE static inline int step_layer_gemms(const FsNet *net, int i)
{
    return net->layer[i].op == FS_LAYER_CONV && !net->layer[i].gather;
}

/* What the host reads of each model between ops (mapped host memory). */
typedef struct {
    int active;    /* still training */
    int stepping;  /* a batch is loaded for this step (or validation batch) */
    int steps;     /* this epoch's training batches */
    int val_steps; /* this epoch's validation batches */
    int finished;  /* FINISH ran: result final, done flag set */
    int pad;
} FsLibPublic;

/* Host: the fold's training and validation example lists (one malloc'd
 * block, returned for the caller to free) and the data pointers; chains: a
 * chain model's (data_chain_examples). The CPU trainer's and the CUDA
 * backend's (gpu_fold_lists): one list, one order. */
uint32_t *core_fold_data(const FsDataset *ds, int fold, int chains, FsFoldData *fd);
/* Host: the class counts of a fold's training residues (a chain model's:
 * every scored residue of its chains), for training.class_weights. */
void core_fold_class_counts(const FsFoldData *fd, int chains, uint64_t counts[FS_MAX_CLASSES]);

/* Host: bytes of one model's private state in the tier (device memory). */
size_t core_lib_state_bytes(void);

/* Host (train/lib_ckpt.c): a library-tier model's mid-fold checkpoints
 * (#44), in the CPU trainer's format (train.h: FsCheckpointing), so that a
 * fold stopped on either backend resumes on either. The tier's host reads
 * a model back at its points (an epoch's start, after its shuffle; a
 * stop, before the fit's end) into `m`, a host mirror: w, best, m1, m2
 * and perm in host arrays of the model's sizes, rng and step, net the
 * host's copy; `state` is a host copy of its FsLibState
 * (core_lib_state_bytes). NULL where the job has no checkpointing. */
typedef struct FsLibCkpt FsLibCkpt;
FsLibCkpt *core_lib_ckpt_open(const FsJob *job, const FsNet *net);
/* Whether one is due at the model's step count (the interval, by time or
 * by steps, has passed since the last or since the fit's start). */
int core_lib_ckpt_due(const FsLibCkpt *c, long step);
/* Whether that interval is in steps (then due needs the device's step). */
int core_lib_ckpt_by_steps(const FsLibCkpt *c);
/* Writes one of the mirror and state: at an epoch's start, or where a
 * cancelled model stopped (a pruned one keeps none, as on the CPU). */
void core_lib_ckpt_save(FsLibCkpt *c, FsModel *m, const void *state, const FsFitResult *out);
/* The job's resume bytes, if any, into the mirror (its arrays, rng and
 * step), a fresh state (its fit state, marked resumed) and out's curves:
 * 1 when resumed; 0 when there were none, or when they were refused (the
 * fold starts afresh; the spec's note says why). Calls the spec's
 * event(0) as the CPU trainer does. */
int core_lib_ckpt_resume(FsLibCkpt *c, FsModel *m, void *state, FsFitResult *out);
/* The fit state's epoch, next example and examples trained (a resumed
 * model's progress, for its watch). */
void core_lib_state_at(const void *state, int *epoch, uint32_t *next, uint64_t *examples);
/* Whether the state is a fit that a stop signal cancelled (status
 * cancelled; the caller rules out a prune). */
int core_lib_state_cancelled(const void *state);
/* The spec's event hook for a completed epoch's validation. */
void core_lib_ckpt_event(FsLibCkpt *c, int epoch);
/* The spec's outputs (checkpoints written, the last one's size, epoch,
 * time) filled in; c freed. NULL is fine. */
void core_lib_ckpt_close(FsLibCkpt *c);
/* A job whose tier keeps no checkpoints (the block tier): its resume
 * bytes, if any, refused with `why` and event(0) called. */
void core_ckpt_unsupported(FsCheckpointing *cs, const char *why);

/* Host: bytes needed by FsModel buffers for this net and data. */
size_t core_model_bytes(const FsNet *net, uint32_t n_train);
/* Host: points an FsModel into a buffer of core_model_bytes (on the GPU,
 * a device buffer: only addresses are computed here). */
void core_model_bind(FsModel *m, const FsNet *net, void *buf, uint32_t n_train);
/* Host: the model's initial weights into `weights` (n_params + n_state,
 * host memory) and its shuffling and dropout streams, from the spec's seeds. */
void core_model_seed(FsModel *m, const FsNet *net, const FsTrainSpec *ts, float *weights);
/* Host: the model's class weights (training.class_weights) from its fold's
 * training examples' class counts (train_class_counts). */
void core_model_weigh(FsModel *m, const FsNet *net, const FsTrainSpec *ts, const uint64_t counts[FS_MAX_CLASSES]);
/* Host: the trainer's GEMM (ops_gemm) with plain strides, for the CUDA
 * stand-in's libraries (src/gpu/emulate: cudnn.c, the cuBLAS stand-in),
 * so that a library call computes what the CPU trainer does, bit for bit:
 * C[i cm + n cn] += sum_k A[i am + k ak] B[k bk + n], each sum over k in
 * order from 0.0f with fused multiply-adds, added to C once. B's rows are
 * contiguous and bk >= N (nothing is done otherwise: the GEMM reads a row
 * in whole vectors up to its stride). A tile's work is the calling
 * thread's (no pool thread joins it). */
void core_gemm(int M, int N, int K, const float *A, long am, long ak, const float *B, long bk, float *C, long cm,
               long cn);
/* Host: compiles the job's net and counts its examples; -1 with the job's
 * result marked failed (and why) if it cannot train. */
int train_job_check(const FsJob *job, FsNet *net, uint32_t *n_train, uint32_t *n_valid);


#if defined(__CUDACC__) || defined(FS_CUDA_EMULATE)
/* kernels/fit_kernel.cu: n models, one block of `threads` each with `shared`
 * bytes of dynamic shared memory (the largest model's core_model_hot_bytes),
 * queued on stream. Returns the launch's error. */
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t fs_fit_launch(int n, int threads, size_t shared, const FsFitLaunch *args, cudaStream_t stream);
/* One op of the library tier over n models (above): fit's arrays, each
 * model's state (core_lib_state_bytes apart) and public record. */
typedef struct {
    FsFitLaunch fit;
    char *state;
    FsLibPublic *pub;
    int op, layer, part, train;
} FsLibLaunch;
cudaError_t fs_lib_launch(int n, const FsLibLaunch *args, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
#endif

#endif
