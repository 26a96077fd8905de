/*
 * train/core.h: internal to the train module. The per-model code (layer
 * ops, one training step, the epoch loop) is written once here and built
 * twice: by the C compiler for the CPU trainer and by nvcc for the GPU,
 * where one thread block trains one model (train/device.h).
 */
#ifndef FS_TRAIN_CORE_H
#define FS_TRAIN_CORE_H

#include "model/model.h"
#include "stop/stop.h"
#include "train/device.h"
#include "train/kernel.h" /* FsModel, FsFoldData, the host side's functions and the launch */
#include "train/train.h"

#include <math.h>

/* Row addressing: offset(i) = (i / g) * gs + (i % g) * s, or i * s when
 * g == 0. The two-level form walks the interior rows of padded [B][L+2P][C]
 * tensors as if they were one matrix. */
typedef struct {
    long g, gs, s;
} FsStride;

/* C(i, n) += sum_k A(i, k) * B(k, n), n contiguous in B.
 * A(i, k) = A[off(am, i) + off(ak, k)], B(k, n) = B[off(bk, k) + n],
 * C(i, n) = C[off(cm, i) + n * cn]. Sums over k run in order, so every output
 * has one fixed summation order whatever the tiling or thread count.
 * B's rows may be read (not used) up to their stride, bk.s >= N floats: a
 * tile narrower than a vector still loads whole vectors. */
FS_DEVICE void ops_gemm(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B,
                        FsStride bk, float *C, FsStride cm, long cn);

/* The block's GEMM (not FS_ONE_THREAD: nvcc, the emulated block) with the
 * activation in its epilogue: ops_gemm (cn 1), then act over every element
 * of C as act_forward applies it (aux: swish's sigmoids, laid out as C),
 * each thread on the tiles it has just written, with no pass or barrier
 * of its own (#45 part 1). For a C that this GEMM completes (the bias
 * before it, nothing after). */
#if !FS_ONE_THREAD
#define FS_GEMM_ACT 1
FS_DEVICE void ops_gemm_act(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B,
                            FsStride bk, float *C, FsStride cm, FsAct act, float param, float *aux);
/* The block's staging area for the GEMM's B (train/gemm_stage.h): floats
 * of shared memory at buf (16-byte aligned; NULL: none), set by every
 * thread of the block (a barrier) before its first GEMM: each kernel
 * that builds gemm.c sets it, since nvcc's shared memory starts
 * undefined. The bits are the same staged or not. */
FS_DEVICE void ops_gemm_stage(float *buf, long floats);
#else
#define FS_GEMM_ACT 0
#endif

/* Rows [i0, i0 + rows) of the same product (fewer at the end; i0 and rows
 * multiples of FS_GEMM_MR), every column, by the calling thread alone and
 * without a barrier: for a caller that owns those rows of C. Same sums as
 * ops_gemm, bit for bit. */
#define FS_GEMM_MR 4
FS_DEVICE void ops_gemm_rows(long i0, int rows, int M, int N, int K, const float *A, FsStride am, FsStride ak,
                             const float *B, FsStride bk, float *C, FsStride cm, long cn);

/* Where a fit is, between two batches: with the model's weights, moments,
 * best weights, training order (perm), shuffling stream and step count,
 * everything fit_model needs to go on as if it had never stopped. */
typedef struct FsFitState {
    int epoch;          /* the epoch in progress, 1-based (its order is shuffled) */
    uint32_t next;      /* its training examples done: the next batch starts here */
    long step_in_epoch;
    double loss_sum;    /* its training loss so far */
    int epochs, best_epoch;
    float best_loss;
    uint64_t best_conf[FS_MAX_CLASSES][FS_MAX_CLASSES]; /* the net's classes by its classes */
    uint64_t n_train_ex, n_val_ex;
    double val_seconds, seconds; /* seconds: the fit's time so far */
    FsStopState st;
} FsFitState;

/* FS_NORM_CHUNKS (partial sums of deterministic reductions): train/kernel.h. */

/* Seconds, for per-epoch curves: the GPU's global nanosecond timer
 * (FS_GLOBALTIMER: the %globaltimer register, or the CUDA stand-in's
 * reading of the host's monotonic clock), the host's monotonic clock.
 * FS_PUBLISH makes a write visible to the host while a kernel runs (mapped
 * memory). */
#if defined(__CUDACC__)
__device__ static inline unsigned long long fs_gpu_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define FS_GLOBALTIMER() fs_gpu_globaltimer()
#endif
#if defined(__CUDACC__) || defined(FS_CUDA_EMULATE)
#define FS_CLOCK() ((double)FS_GLOBALTIMER() * 1e-9)
#define FS_PUBLISH() __threadfence_system()
#else
#define FS_CLOCK() fs_now()
#define FS_PUBLISH() ((void)0)
#endif

FS_DEVICE void step_load_batch(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int B);
/* A chain model's batch of n chains (idx: their first residues): sets
 * m->rows and m->scored (step.c). */
FS_DEVICE void step_load_chain(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int n);
/* The residues of the chain (segment) that starts at residue r0: right[]
 * counts those after each residue, clipped to 255, so a long chain is
 * walked in jumps of up to 255. */
FS_HOST_DEVICE static inline uint32_t step_chain_length(const FsFoldData *fd, uint32_t r0)
{
    uint32_t r = r0;
    while (fd->right[r] > 0) r += fd->right[r];
    return r - r0 + 1;
}
/* How many of the chains idx[0..n) the next batch takes: as many as fit
 * in max_rows (each with its pad rows), at least one (a chain longer than
 * the budget is a batch of its own: the net is compiled for the longest). */
FS_HOST_DEVICE static inline int step_chain_batch(const FsFoldData *fd, const uint32_t *idx, uint32_t n, long max_rows,
                                                  int pad)
{
    long rows = 0;
    uint32_t k = 0;
    for (; k < n; k++) {
        rows += (long)step_chain_length(fd, idx[k]) + pad;
        if (rows > max_rows && k > 0) break;
    }
    return (int)k;
}
FS_DEVICE void step_forward(FsModel *m, int B, int train);
/* A step in parts, for the GPU library tier (#44): a layer for which
 * step_layer_gemms holds (a conv1d that is not the first layer's gather)
 * has convolution GEMMs that the tier runs over a group of models through
 * cuBLAS or cuDNN (kernels/dnn.h), and its passes split around them:
 * forward part 0, the GEMM (conv_gemm), part 1; backward part 0, the
 * weight gradient (conv_wgrad), part 1, the input gradient (conv_dgrad),
 * part 2. Every other layer is whole in forward part 0 (part 1 nothing)
 * and in step_backward. step_forward and step_backward run exactly these
 * parts with the trainer's own GEMMs between them, so the tier and the CPU
 * share one sequence. */
/* step_layer_gemms: train/kernel.h (the library tier's host asks it too). */
/* Forward: part 0 and 1 of layer i (a layer without GEMMs: all in part 0,
 * which also loads the first layer's feature columns). Backward, unfused
 * (ts NULL in step_backward): layer n (one past the last), part 0: the
 * gradients zeroed; then from layer n - 1 down, parts 0, 1 and 2 (a layer
 * without GEMMs: all in part 0). */
FS_DEVICE void step_forward_part(FsModel *m, int i, int B, int train, int part);
FS_DEVICE void step_backward_part(FsModel *m, int i, int B, int part);
/* Layer i's GEMMs by the trainer (conv.c): which 0, forward; 1, the weight
 * gradient; 2, the input gradient. */
FS_DEVICE void step_layer_gemm(FsModel *m, int i, int B, int which);
/* Softmax cross-entropy on the output; returns the summed loss over the
 * batch, writes d(loss/B)/d(logits) when grad, adds to confusion if given.
 * A chain batch: over its scored residues (loss / scored). */
FS_DEVICE double step_loss(FsModel *m, int B, int grad, uint64_t confusion[FS_MAX_CLASSES][FS_MAX_CLASSES]);
/* Gradients of the batch's loss. With ts (not NULL) and no clipping, the
 * dense layers' weight matrices are updated during the pass instead of
 * having gradients stored (see step_fuses); returns nonzero, agreed by the
 * whole block, when such a fused gradient was not finite. */
FS_DEVICE int step_backward(FsModel *m, int B, const FsTrainSpec *ts);
/* Clips, checks and applies one optimizer step to every parameter, or with
 * fused set, to those step_backward(ts) left (a value the block agrees on).
 * Returns the global norm before clipping of the gradients it read
 * (non-finite: nothing applied). */
FS_DEVICE float step_update(FsModel *m, const FsTrainSpec *ts, int fused);

/* At small batches a dense layer's weight gradient has few terms per
 * element, and storing, zeroing, norming and re-reading it costs more than
 * computing it: there the weights are updated from gradient blocks that
 * never leave L1 (dense.c). Clipping needs the whole gradient before any
 * update, so it rules this out. The arithmetic is the same either way
 * (tests/test_fused.c); the batch bound is where fusing stopped paying on
 * R1's dense layer (1088 x 128, backward and update in isolation): 30%
 * faster at batch 8, 13% at 16, even at 32, 25% slower at 64. */
#define FS_FUSE_MAX_BATCH 16
FS_DEVICE static inline int step_fuses(const FsTrainSpec *ts)
{
    return ts && ts->clip_norm <= 0.0f && ts->batch <= FS_FUSE_MAX_BATCH;
}

FS_DEVICE static inline int step_layer_fused(const FsLayer *y)
{
    return (y->spec.kind == FS_LAYER_DENSE || y->spec.kind == FS_LAYER_OUTPUT) && !y->gather && !y->per_residue;
}

/* One optimizer step's constants, shared by step_update and the fused
 * dense update so that both apply the same arithmetic. Adam's bias
 * corrections are folded into a = lr / (1 - b1^t) and s2 = 1 / sqrt(1 -
 * b2^t) (PyTorch's form), and `plain` (no clipping scale, no weight decay)
 * selects a loop without the three operations that would then be identities:
 * Adam is bound by floating-point operations, not memory (docs/benchmarks.md). */
typedef struct {
    FsOptKind opt;
    int plain;
    float lr, mu, b1, b2, eps, a, s2, l2, decay, scale;
} FsOptStep;

FS_DEVICE FsOptStep step_opt(const FsTrainSpec *ts, long t, float scale, float lr);

FS_DEVICE static inline void opt_sgd(const FsOptStep *o, float *w, float *m1, float g)
{
    float gi = g * o->scale + o->l2 * *w;
    *m1 = o->mu * *m1 + gi;
    *w -= o->lr * *m1;
}

FS_DEVICE static inline void opt_adam(const FsOptStep *o, float *w, float *m1, float *m2, float g)
{
    float gi = g * o->scale + o->l2 * *w;
    *m1 = o->b1 * *m1 + (1.0f - o->b1) * gi;
    *m2 = o->b2 * *m2 + (1.0f - o->b2) * gi * gi;
    *w = *w * o->decay - o->a * *m1 / (sqrtf(*m2) * o->s2 + o->eps);
}

/* opt_adam when o->plain: the same result (g * 1, w * 1 and + 0 * w are
 * exact while w is finite) with three operations fewer per parameter. */
FS_DEVICE static inline void opt_adam_plain(const FsOptStep *o, float *w, float *m1, float *m2, float g)
{
    *m1 = o->b1 * *m1 + (1.0f - o->b1) * g;
    *m2 = o->b2 * *m2 + (1.0f - o->b2) * g * g;
    *w = *w - o->a * *m1 / (sqrtf(*m2) * o->s2 + o->eps);
}

FS_DEVICE void fit_model(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out);

/* A model's fit between the library tier's ops (kernel.h: FsLibOp): what
 * fit_model keeps in its locals across a whole fit, kept in device memory
 * across launches. */
typedef struct FsLibState {
    FsFitState s;
    double t_start, t_val, val_loss, loss;
    long div_step, steps;
    int status, halted, div_epoch;
    int nb, B;          /* the loaded batch: its examples, and the B its layers run with */
    uint32_t val_next;  /* the validation pass's next example */
    int resumed;        /* the epoch a checkpoint resumed the fit in (its order is the checkpoint's), else 0 */
    uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES];
} FsLibState;
#define FS_LIB_STATE_BYTES FS_ALIGN64(sizeof(FsLibState))

/* One op of the library tier for model m (its state st, its public record
 * pub, its done flag): kernel.h's FsLibOp with its layer, part and train. */
FS_DEVICE void fit_lib_op(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out, FsLibState *st,
                          FsLibPublic *pub, int *done, int op, int layer, int part, int train);

/* Host (checkpoint.c): a fit's checkpointing. */
typedef struct FsCkpt {
    const FsCheckpointing *spec;
    const FsTrainSpec *ts;
    const FsFoldData *fd;
    const FsNet *net;
    double last_time; /* of the last checkpoint (or the fit's start) */
    long last_step;
    int n_saved, saved_epoch; /* what the last checkpoint cost: copied to spec's outputs */
    uint64_t saved_bytes;
    double saved_seconds;
} FsCkpt;

/* Called by fit_model's master between batches on the CPU: whether a
 * checkpoint is due (the interval passed, or a stop), and writing one of
 * state s (curves of s->epochs epochs are in out). */
int core_checkpoint_due(FsModel *m, int stopping);
void core_checkpoint_save(FsModel *m, const FsFitState *s, const FsFitResult *out);
/* Host: a test hook at a point of the fit (the validation of an epoch). */
void core_checkpoint_event(FsModel *m, int epoch);
/* Host: c->spec->resume into the model (weights, moments, order, stream,
 * step), s and out's curves. 0, or -1 with why (nothing usable: the caller
 * starts the fold afresh). n_res: residues of the data (bounds the order). */
int core_checkpoint_load(FsModel *m, FsCkpt *c, FsFitState *s, FsFitResult *out, uint32_t n_res, char *why,
                         size_t why_n);

/* core_fold_data, core_fold_class_counts: train/kernel.h (the CUDA backend uses them too). */

#endif
