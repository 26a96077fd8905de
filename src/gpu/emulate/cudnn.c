/*
 * cudnn: the cuDNN stand-in's handles, descriptors, algorithm queries and
 * workspace sizes (cudnn.h says what is modelled). The convolutions
 * themselves: cudnn_conv.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cudnn_emu.h"

size_t cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

const char *cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
        return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_EXECUTION_FAILED_CUDART: return "CUDNN_STATUS_EXECUTION_FAILED_CUDART";
    }
    return "CUDNN_STATUS_UNKNOWN";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    if (fsemu_enter() != cudaSuccess) return CUDNN_STATUS_NOT_INITIALIZED; /* no device, or a sticky error */
    *handle = calloc(1, sizeof **handle);
    return *handle ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- descriptors ---------------------------------------------------------- */

/* Create and Destroy of each kind: zeroed, so an unset one is refused. */
#define DESCRIPTOR(NAME, T)                                          \
    cudnnStatus_t cudnnCreate##NAME##Descriptor(T *d)                \
    {                                                                \
        if (!d) return CUDNN_STATUS_BAD_PARAM;                       \
        *d = calloc(1, sizeof **d);                                  \
        return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED; \
    }                                                                \
    cudnnStatus_t cudnnDestroy##NAME##Descriptor(T d)                \
    {                                                                \
        free(d);                                                     \
        return CUDNN_STATUS_SUCCESS;                                 \
    }
DESCRIPTOR(Tensor, cudnnTensorDescriptor_t)
DESCRIPTOR(Filter, cudnnFilterDescriptor_t)
DESCRIPTOR(Convolution, cudnnConvolutionDescriptor_t)

/* A data type of the enum (others are BAD_PARAM at Set; which ones a
 * convolution computes is checked there: float). */
static int type_known(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_INT8 ||
           t == CUDNN_DATA_INT32 || t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_BFLOAT16 || t == CUDNN_DATA_INT64;
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t dataType, int nbDims,
                                         const int dimA[], const int strideA[])
{
    if (!d || !dimA || !strideA || !type_known(dataType)) return CUDNN_STATUS_BAD_PARAM;
    if (nbDims < 3 || nbDims > CUDNN_DIM_MAX) return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nbDims; i++)
        if (dimA[i] <= 0 || strideA[i] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d->type = dataType;
    d->nb = nbDims;
    for (int i = 0; i < nbDims; i++) d->dim[i] = dimA[i], d->stride[i] = strideA[i];
    d->set = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t dataType, int n, int c,
                                           int h, int w, int nStride, int cStride, int hStride, int wStride)
{
    const int dim[4] = {n, c, h, w}, stride[4] = {nStride, cStride, hStride, wStride};
    return cudnnSetTensorNdDescriptor(d, dataType, 4, dim, stride);
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                         cudnnDataType_t dataType, int n, int c, int h, int w)
{
    if (format == CUDNN_TENSOR_NCHW_VECT_C) return CUDNN_STATUS_NOT_SUPPORTED;
    if (format == CUDNN_TENSOR_NCHW)
        return cudnnSetTensor4dDescriptorEx(d, dataType, n, c, h, w, c * h * w, h * w, w, 1);
    if (format == CUDNN_TENSOR_NHWC)
        return cudnnSetTensor4dDescriptorEx(d, dataType, n, c, h, w, h * w * c, 1, w * c, c);
    return CUDNN_STATUS_BAD_PARAM;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dataType,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    if (!d || !type_known(dataType) || k <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (format == CUDNN_TENSOR_NCHW_VECT_C) return CUDNN_STATUS_NOT_SUPPORTED;
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) return CUDNN_STATUS_BAD_PARAM;
    *d = (struct cudnnFilterStruct){1, dataType, format, k, c, h, w};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u, int v,
                                              int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType)
{
    if (!d || pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dilation_h <= 0 || dilation_w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    if ((mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) || !type_known(computeType))
        return CUDNN_STATUS_BAD_PARAM;
    int groups = d->set ? d->groups : 1;
    cudnnMathType_t math = d->set ? d->math : CUDNN_DEFAULT_MATH;
    *d = (struct cudnnConvolutionStruct){1, pad_h, pad_w, u, v, dilation_h, dilation_w, mode, computeType,
                                         groups, math};
    return CUDNN_STATUS_SUCCESS;
}

/* Group count and math type may come before or after the 2-D settings. */
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groupCount)
{
    if (!d || groupCount < 1) return CUDNN_STATUS_BAD_PARAM;
    if (!d->set) d->math = CUDNN_DEFAULT_MATH;
    d->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t mathType)
{
    if (!d || (unsigned)mathType > CUDNN_FMA_MATH) return CUDNN_STATUS_BAD_PARAM;
    if (!d->set && !d->groups) d->groups = 1;
    d->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- a convolution's shape ------------------------------------------------ */

static size_t extent(const struct cudnnTensorStruct *t)
{
    size_t e = 1;
    for (int i = 0; i < t->nb; i++) e += (size_t)(t->dim[i] - 1) * (size_t)t->stride[i];
    return e * sizeof(float);
}

/* What the stand-in computes: float, 2-D with one row, width stride 1. */
static cudnnStatus_t shape_supported(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                     const struct cudnnConvolutionStruct *cv, const struct cudnnTensorStruct *y)
{
    if (x->type != CUDNN_DATA_FLOAT || w->type != CUDNN_DATA_FLOAT || y->type != CUDNN_DATA_FLOAT ||
        cv->type != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (x->nb != 4 || y->nb != 4) return CUDNN_STATUS_NOT_SUPPORTED;
    if (x->dim[2] != 1 || w->h != 1 || cv->pad_h || cv->dil_h != 1 || cv->u != 1 || cv->v != 1)
        return CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fsemu_conv_shape(const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                               const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y,
                               FsConvShape *sh)
{
    if (!x || !w || !cv || !y || !x->set || !w->set || !cv->set || !y->set) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = shape_supported(x, w, cv, y);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    const int G = cv->groups, C = x->dim[1], K = w->k, S = w->w;
    if (C % G || K % G || w->c * G != C) return CUDNN_STATUS_BAD_PARAM;
    const int W = x->dim[3], OW = W + 2 * cv->pad_w - ((S - 1) * cv->dil_w + 1) + 1;
    if (OW <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (y->dim[0] != x->dim[0] || y->dim[1] != K || y->dim[2] != 1 || y->dim[3] != OW) return CUDNN_STATUS_BAD_PARAM;
    const int nhwc = w->format == CUDNN_TENSOR_NHWC;
    *sh = (FsConvShape){.N = x->dim[0], .C = C, .K = K, .W = W, .S = S, .OW = OW, .G = G, .pad = cv->pad_w,
                        .dil = cv->dil_w, .flip = cv->mode == CUDNN_CONVOLUTION,
                        .xn = x->stride[0], .xc = x->stride[1], .xw = x->stride[3],
                        .yn = y->stride[0], .yc = y->stride[1], .yw = y->stride[3],
                        .fk = (long)w->c * S, .fc = nhwc ? 1 : S, .fs = nhwc ? w->c : 1,
                        .x_bytes = extent(x), .y_bytes = extent(y),
                        .w_bytes = (size_t)K * (size_t)w->c * (size_t)S * sizeof(float)};
    return CUDNN_STATUS_SUCCESS;
}

/* ---- workspace and algorithms ---------------------------------------------- */

static pthread_once_t ws_once = PTHREAD_ONCE_INIT;
static size_t ws_bytes = 1 << 20;

static void ws_setup(void)
{
    const char *v = getenv("FOLDSWEEP_EMU_CUDNN_WS");
    if (!v || !*v) return;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || *v == '-' || n > (1ull << 40))
        fprintf(stderr, "foldsweep: FOLDSWEEP_EMU_CUDNN_WS=%s: expected bytes (0 to 2^40); using %zu\n", v, ws_bytes);
    else
        ws_bytes = (size_t)n;
}

size_t fsemu_cudnn_ws(int dir)
{
    pthread_once(&ws_once, ws_setup);
    return dir == FS_CONV_BWD_FILTER ? 2 * ws_bytes : ws_bytes;
}

/* The query calls' common part: the shape, the count asked for. */
static cudnnStatus_t query(cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                           const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y, int requested,
                           int *returned, const void *out)
{
    FsConvShape sh;
    if (!h || !returned || !out || requested < 1) return CUDNN_STATUS_BAD_PARAM;
    return fsemu_conv_shape(x, w, cv, y, &sh);
}

/* Fills the perf records (struct layouts are the same for the three) with
 * n algorithms: algos[i], its determinism, the direction's workspace. */
#define FILL_PERF(out, requested, returned, algos, det, n, dir, cv)                                          \
    do {                                                                                                      \
        *(returned) = (requested) < (n) ? (requested) : (n);                                                 \
        for (int i_ = 0; i_ < *(returned); i_++) {                                                            \
            (out)[i_].algo = (algos)[i_];                                                                     \
            (out)[i_].status = CUDNN_STATUS_SUCCESS;                                                          \
            (out)[i_].time = -1.0f; /* a heuristic's answer: nothing was timed */                            \
            (out)[i_].memory = fsemu_cudnn_ws(dir);                                                           \
            (out)[i_].determinism = (det)[i_];                                                                \
            (out)[i_].mathType = (cv)->math;                                                                  \
        }                                                                                                     \
    } while (0)

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t cv,
                                                     const cudnnTensorDescriptor_t y, const int requested,
                                                     int *returned, cudnnConvolutionFwdAlgoPerf_t *out)
{
    static const cudnnConvolutionFwdAlgo_t algos[] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                                      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM};
    static const cudnnDeterminism_t det[] = {CUDNN_DETERMINISTIC, CUDNN_DETERMINISTIC};
    cudnnStatus_t st = query(h, x, w, cv, y, requested, returned, out);
    if (st == CUDNN_STATUS_SUCCESS) FILL_PERF(out, requested, returned, algos, det, 2, FS_CONV_FWD, cv);
    return st;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                          const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t cv,
                                                          const cudnnTensorDescriptor_t dx, const int requested,
                                                          int *returned, cudnnConvolutionBwdDataAlgoPerf_t *out)
{
    static const cudnnConvolutionBwdDataAlgo_t algos[] = {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
                                                          CUDNN_CONVOLUTION_BWD_DATA_ALGO_1};
    static const cudnnDeterminism_t det[] = {CUDNN_NON_DETERMINISTIC, CUDNN_DETERMINISTIC};
    cudnnStatus_t st = query(h, dx, w, cv, dy, requested, returned, out);
    if (st == CUDNN_STATUS_SUCCESS) FILL_PERF(out, requested, returned, algos, det, 2, FS_CONV_BWD_DATA, cv);
    return st;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                            const cudnnTensorDescriptor_t dy,
                                                            const cudnnConvolutionDescriptor_t cv,
                                                            const cudnnFilterDescriptor_t dw, const int requested,
                                                            int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *out)
{
    static const cudnnConvolutionBwdFilterAlgo_t algos[] = {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1};
    static const cudnnDeterminism_t det[] = {CUDNN_NON_DETERMINISTIC, CUDNN_DETERMINISTIC};
    cudnnStatus_t st = query(h, x, dw, cv, dy, requested, returned, out);
    if (st == CUDNN_STATUS_SUCCESS) FILL_PERF(out, requested, returned, algos, det, 2, FS_CONV_BWD_FILTER, cv);
    return st;
}

/* The algorithms computed here are those the queries list (0 and 1); the
 * enum's others are NOT_SUPPORTED, values outside it BAD_PARAM. */
cudnnStatus_t fsemu_cudnn_algo(int dir, int algo)
{
    const int count = dir == FS_CONV_FWD ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT
                      : dir == FS_CONV_BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                                : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    if (algo < 0 || algo >= count) return CUDNN_STATUS_BAD_PARAM;
    return algo <= 1 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

static cudnnStatus_t ws_size(cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                             const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y, int dir, int algo,
                             size_t *bytes)
{
    FsConvShape sh;
    if (!h || !bytes) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = fsemu_conv_shape(x, w, cv, y, &sh);
    if (st == CUDNN_STATUS_SUCCESS) st = fsemu_cudnn_algo(dir, algo);
    if (st == CUDNN_STATUS_SUCCESS) *bytes = fsemu_cudnn_ws(dir);
    return st;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                      const cudnnFilterDescriptor_t w,
                                                      const cudnnConvolutionDescriptor_t cv,
                                                      const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
                                                      size_t *bytes)
{
    return ws_size(h, x, w, cv, y, FS_CONV_FWD, (int)algo, bytes);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                           const cudnnTensorDescriptor_t dy,
                                                           const cudnnConvolutionDescriptor_t cv,
                                                           const cudnnTensorDescriptor_t dx,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
{
    return ws_size(h, dx, w, cv, dy, FS_CONV_BWD_DATA, (int)algo, bytes);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                             const cudnnTensorDescriptor_t dy,
                                                             const cudnnConvolutionDescriptor_t cv,
                                                             const cudnnFilterDescriptor_t dw,
                                                             cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
{
    return ws_size(h, x, dw, cv, dy, FS_CONV_BWD_FILTER, (int)algo, bytes);
}
