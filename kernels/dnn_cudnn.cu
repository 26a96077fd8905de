/*
 * kernels/dnn_cudnn.cu: the library tier's cuDNN back end (dnn.h), built
 * where the build has cuDNN (FS_HAVE_CUDNN; under FOLDSWEEP_CUDA=EMULATE
 * only with a cuDNN stand-in, src/gpu/emulate/cudnn.h). The G models of a
 * group are one grouped convolution: their interior rows interleaved as
 * channel groups, [B][1][L][G C] (NHWC, H = 1), the filters in cuDNN's
 * NHWC layout [G F][1][K][C], cudnnSetConvolutionGroupCount(G), padding
 * K/2 dil (cuDNN's zeros are the trainer's pad rows), cross-correlation
 * (the trainer's taps are not flipped). Each product lands in scratch
 * (beta = 0) and is added back into the per-model layout once. The
 * algorithm is the first deterministic one the _v7 query lists (a
 * heuristic, never a timing); math FP32 FMA unless TF32 is asked for.
 */
#include "dnn_impl.h"

#ifdef DNN_WITH_CUDNN

#if defined(FS_CUDA_EMULATE)
#include <cuda_runtime.h>
#include "../src/gpu/emulate/cudnn.h" /* the stand-in */
#else
#include <cudnn.h>
#endif
#include <stdio.h>
#include <stdlib.h>

#include "gpu_cuda.h" /* CU */
#include "dnn_syms.h" /* the libraries through dlopen (real builds) */

/* A cuDNN call that failed: file:line, the call and cuDNN's status. */
#define CUDNN(call)                                                                                    \
    do {                                                                                               \
        cudnnStatus_t s_ = (call);                                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                              \
            fs_err_set(err, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudnnGetErrorString(s_));      \
            return -1;                                                                                 \
        }                                                                                              \
    } while (0)

typedef struct {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x, y; /* input side (C channels per group), output side (F) */
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
} Cudnn;

void dnn_cudnn_version(char *out, size_t n)
{
    FsErr e = {0};
    if (fs_dnn_load(FS_DNN_CUDNN, &e) != 0) {
        snprintf(out, n, "cuDNN: %s", e.msg);
        return;
    }
    const size_t v = cudnnGetVersion(); /* major 10000 + minor 100 + patch (cuDNN 9) */
#ifdef FS_CUDNN_STANDIN
    const char *how = " (the CPU stand-in)";
#else
    const char *how = "";
#endif
    snprintf(out, n, "cuDNN %zu.%zu.%zu%s", v / 10000, v / 100 % 100, v % 100, how);
}

int dnn_cudnn_open(FsDnn *d, FsErr *err)
{
    Cudnn *k = (Cudnn *)calloc(1, sizeof *k);
    if (!k) {
        fs_err_set(err, "out of memory for the cuDNN back end");
        return -1;
    }
    d->lib = k;
    CUDNN(cudnnCreate(&k->h));
    CUDNN(cudnnSetStream(k->h, d->stream));
    CUDNN(cudnnCreateTensorDescriptor(&k->x));
    CUDNN(cudnnCreateTensorDescriptor(&k->y));
    CUDNN(cudnnCreateFilterDescriptor(&k->w));
    CUDNN(cudnnCreateConvolutionDescriptor(&k->conv));
    return 0;
}

void dnn_cudnn_close(FsDnn *d)
{
    Cudnn *k = (Cudnn *)d->lib;
    if (!k) return;
    if (k->conv) cudnnDestroyConvolutionDescriptor(k->conv);
    if (k->w) cudnnDestroyFilterDescriptor(k->w);
    if (k->y) cudnnDestroyTensorDescriptor(k->y);
    if (k->x) cudnnDestroyTensorDescriptor(k->x);
    if (k->h) cudnnDestroy(k->h);
    free(k);
    d->lib = NULL;
}

/* The descriptors of this layer's group convolution. */
static int describe(FsDnn *d, const FsDnnConv *c, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    CUDNN(cudnnSetTensor4dDescriptor(k->x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, c->B, c->G * c->C, 1, c->L));
    CUDNN(cudnnSetTensor4dDescriptor(k->y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, c->B, c->G * c->F, 1, c->L));
    CUDNN(cudnnSetFilter4dDescriptor(k->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, c->G * c->F, c->C, 1, c->K));
    CUDNN(cudnnSetConvolution2dDescriptor(k->conv, 0, c->K / 2 * c->dil, 1, 1, 1, c->dil, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT));
    CUDNN(cudnnSetConvolutionGroupCount(k->conv, c->G));
    CUDNN(cudnnSetConvolutionMathType(k->conv, d->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    return 0;
}

/* The first deterministic algorithm of a _v7 list, its workspace. */
#define PICK(perf, n, what)                                                                            \
    do {                                                                                               \
        int i_ = 0;                                                                                    \
        while (i_ < (n) && !((perf)[i_].status == CUDNN_STATUS_SUCCESS &&                              \
                             (perf)[i_].determinism == CUDNN_DETERMINISTIC))                           \
            i_++;                                                                                      \
        if (i_ == (n)) {                                                                               \
            fs_err_set(err, "%s:%d: cuDNN lists no deterministic %s algorithm for G %d, C %d, F %d, K %d, " \
                       "dil %d", __FILE__, __LINE__, what, c->G, c->C, c->F, c->K, c->dil);            \
            return -1;                                                                                 \
        }                                                                                              \
        *algo = (perf)[i_].algo;                                                                       \
    } while (0)

static int algo_fwd(FsDnn *d, const FsDnnConv *c, cudnnConvolutionFwdAlgo_t *algo, size_t *ws, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(k->h, k->x, k->w, k->conv, k->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                 &n, perf));
    PICK(perf, n, "forward");
    CUDNN(cudnnGetConvolutionForwardWorkspaceSize(k->h, k->x, k->w, k->conv, k->y, *algo, ws));
    return 0;
}

static int algo_wgrad(FsDnn *d, const FsDnnConv *c, cudnnConvolutionBwdFilterAlgo_t *algo, size_t *ws, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n = 0;
    CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(k->h, k->x, k->y, k->conv, k->w,
                                                        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
    PICK(perf, n, "weight-gradient");
    CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(k->h, k->x, k->y, k->conv, k->w, *algo, ws));
    return 0;
}

static int algo_dgrad(FsDnn *d, const FsDnnConv *c, cudnnConvolutionBwdDataAlgo_t *algo, size_t *ws, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n = 0;
    CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(k->h, k->w, k->y, k->conv, k->x,
                                                      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
    PICK(perf, n, "input-gradient");
    CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(k->h, k->w, k->y, k->conv, k->x, *algo, ws));
    return 0;
}

/* Scratch: the interleaved input side [B L][G C] twice (x, and dx's
 * product), the output side [B L][G F], the filters [G F][K][C]. */
static size_t scratch_of(const FsDnnConv *c)
{
    const size_t r = (size_t)c->B * c->L * c->G;
    return 2 * DNN_ALIGN(r * c->C) + DNN_ALIGN(r * c->F) + DNN_ALIGN((size_t)c->G * c->F * c->K * c->C);
}

int dnn_cudnn_need(FsDnn *d, const FsDnnConv *c, DnnNeed *need, FsErr *err)
{
    if (dnn_check(c, err) < 0 || describe(d, c, err) < 0) return -1;
    cudnnConvolutionFwdAlgo_t a;
    cudnnConvolutionBwdFilterAlgo_t b;
    cudnnConvolutionBwdDataAlgo_t e;
    size_t w1 = 0, w2 = 0, w3 = 0;
    if (algo_fwd(d, c, &a, &w1, err) < 0 || algo_wgrad(d, c, &b, &w2, err) < 0 || algo_dgrad(d, c, &e, &w3, err) < 0)
        return -1;
    need->scratch_floats = scratch_of(c);
    need->ws_bytes = w1 > w2 ? (w1 > w3 ? w1 : w3) : (w2 > w3 ? w2 : w3);
    return 0;
}

/* Scratch and workspace for this call (grown outside a capture). */
static int prepare(FsDnn *d, const FsDnnConv *c, size_t ws, FsErr *err)
{
    if (dnn_scratch(d, scratch_of(c), err) < 0) return -1;
    return dnn_workspace(d, ws, err);
}

static const float one = 1.0f, zero = 0.0f;

int dnn_cudnn_fwd(FsDnn *d, const FsDnnConv *c, const float *x, const float *W, float *y, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws = 0;
    if (dnn_check(c, err) < 0 || describe(d, c, err) < 0 || algo_fwd(d, c, &algo, &ws, err) < 0 ||
        prepare(d, c, ws, err) < 0)
        return -1;
    const size_t r = (size_t)c->B * c->L * c->G;
    float *xi = d->scratch, *yi = xi + 2 * DNN_ALIGN(r * c->C), *Wt = yi + DNN_ALIGN(r * c->F);
    CU(dnn_interleave(c, c->C, x, c->xs, xi, d->stream));
    CU(dnn_filter_to(c, W, Wt, d->stream));
    CUDNN(cudnnConvolutionForward(k->h, &one, k->x, xi, k->w, Wt, k->conv, algo, d->ws, d->ws_bytes, &zero, k->y,
                                  yi));
    CU(dnn_deinterleave_add(c, c->F, yi, y, c->ys, d->stream));
    return 0;
}

int dnn_cudnn_wgrad(FsDnn *d, const FsDnnConv *c, const float *x, const float *dy, float *gW, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    cudnnConvolutionBwdFilterAlgo_t algo;
    size_t ws = 0;
    if (dnn_check(c, err) < 0 || describe(d, c, err) < 0 || algo_wgrad(d, c, &algo, &ws, err) < 0 ||
        prepare(d, c, ws, err) < 0)
        return -1;
    const size_t r = (size_t)c->B * c->L * c->G;
    float *xi = d->scratch, *dyi = xi + 2 * DNN_ALIGN(r * c->C), *dWt = dyi + DNN_ALIGN(r * c->F);
    CU(dnn_interleave(c, c->C, x, c->xs, xi, d->stream));
    CU(dnn_interleave(c, c->F, dy, c->ys, dyi, d->stream));
    CUDNN(cudnnConvolutionBackwardFilter(k->h, &one, k->x, xi, k->y, dyi, k->conv, algo, d->ws, d->ws_bytes, &zero,
                                         k->w, dWt));
    CU(dnn_filter_add(c, dWt, gW, d->stream));
    return 0;
}

int dnn_cudnn_dgrad(FsDnn *d, const FsDnnConv *c, const float *dy, const float *W, float *dx, FsErr *err)
{
    Cudnn *k = (Cudnn *)d->lib;
    cudnnConvolutionBwdDataAlgo_t algo;
    size_t ws = 0;
    if (dnn_check(c, err) < 0 || describe(d, c, err) < 0 || algo_dgrad(d, c, &algo, &ws, err) < 0 ||
        prepare(d, c, ws, err) < 0)
        return -1;
    const size_t r = (size_t)c->B * c->L * c->G;
    float *dxi = d->scratch + DNN_ALIGN(r * c->C), *dyi = d->scratch + 2 * DNN_ALIGN(r * c->C);
    float *Wt = dyi + DNN_ALIGN(r * c->F);
    CU(dnn_interleave(c, c->F, dy, c->ys, dyi, d->stream));
    CU(dnn_filter_to(c, W, Wt, d->stream));
    CUDNN(cudnnConvolutionBackwardData(k->h, &one, k->w, Wt, k->y, dyi, k->conv, algo, d->ws, d->ws_bytes, &zero,
                                       k->x, dxi));
    CU(dnn_deinterleave_add(c, c->C, dxi, dx, c->xs, d->stream));
    return 0;
}

#endif /* DNN_WITH_CUDNN */
