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
    uint8_t *codes; /* [max_batch][window] amino-acid codes of the batch */
    uint8_t *labels;/* [max_batch] */
    uint32_t *perm; /* training order, n_train */
    float *ex_loss; /* [max_batch] per-example loss of the last batch */
    uint8_t *ex_pred; /* [max_batch] predicted class of the last batch */
    FsRng rng;      /* shuffling */
    uint64_t drop_key; /* dropout masks are a hash of this, the step and the element */
    const volatile int *cancel; /* nonzero: stop between batches (a signal arrived) */
    const volatile int *prune;  /* nonzero: stop between batches (this model's trial was pruned) */
    volatile int *progress;     /* optional: epochs completed, for a host watching a kernel */
    long step;      /* optimizer steps taken (Adam bias correction) */
    /* CPU only (NULL on the GPU): examples trained so far, for progress;
     * the fold's checkpointing (train/checkpoint.c); the state a fit
     * resumes from (a checkpoint read back). */
    volatile uint64_t *examples;
    struct FsCkpt *ckpt;
    const struct FsFitState *resume;
} FsModel;

/* Training data as the trainer sees it: residue arrays and example lists. */
typedef struct {
    const uint8_t *aa, *ss, *left, *right;
    const uint32_t *train;
    uint32_t n_train;
    const uint32_t *valid;
    uint32_t n_valid;
} FsFoldData;

/* Host: bytes needed by FsModel buffers for this net and data. */
size_t core_model_bytes(const FsNet *net, uint32_t n_train);
/* Host: points an FsModel into a buffer of core_model_bytes (on the GPU,
 * a device buffer: only addresses are computed here). */
void core_model_bind(FsModel *m, const FsNet *net, void *buf, uint32_t n_train);
/* Host: the model's initial weights into `weights` (n_params + n_state,
 * host memory) and its shuffling and dropout streams, from the spec's seeds. */
void core_model_seed(FsModel *m, const FsNet *net, const FsTrainSpec *ts, float *weights);
/* Host: compiles the job's net and counts its examples; -1 with the job's
 * result marked failed (and why) if it cannot train. */
int train_job_check(const FsJob *job, FsNet *net, uint32_t *n_train, uint32_t *n_valid);

#if defined(__CUDACC__)
/* kernels/fit_kernel.cu: n models, one block of `threads` each, models[i]
 * trained on folds[i] with specs[i] into out[i] (all device memory), queued
 * on stream. Returns the launch's error. */
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t fs_fit_launch(int n, int threads, FsModel *models, const FsFoldData *folds, const FsTrainSpec *specs,
                          FsFitResult *out, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
#endif

#endif
