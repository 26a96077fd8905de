/*
 * cudnn_conv: the cuDNN stand-in's three convolutions (cudnn.h says what
 * is modelled). A call checks its descriptors, algorithm, workspace and
 * pointers, then queues a copy of itself on the handle's stream
 * (fsemu_enqueue_host), where it runs as a kernel would. Each group's
 * product is the trainer's GEMM (core_gemm) over operands gathered into
 * host scratch in the CPU trainer's summation order (kernels/dnn.h): the
 * gathers only move floats, so the sums are bit for bit the trainer's.
 */
#include <stdlib.h>
#include <string.h>

#include "cudnn_emu.h"
#include "train/kernel.h"

typedef struct {
    int dir;
    FsConvShape sh;
    const float *x, *w, *dy; /* the operands the direction reads */
    float *out;
    float alpha, beta;
} ConvJob;

/* The filter's tap k of output channel f, input channel c (group offsets
 * included by the caller). */
static float filt(const FsConvShape *s, const float *w, int f, int c, int k)
{
    return w[f * s->fk + c * s->fc + (s->flip ? s->S - 1 - k : k) * s->fs];
}

/* dst (n outer rows of m floats at strides r, e; a dense n x m) gets the
 * sum T: y = alpha T + beta y, with beta = 0 never reading y; alpha = beta
 * = 1 is the GEMM's own C += acc. */
static void blend(float *dst, long r, long e, const float *T, int n, int m, float alpha, float beta)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            float *d = dst + i * r + j * e, t = T[(long)i * m + j];
            if (beta == 0.0f) *d = alpha == 1.0f ? t : alpha * t;
            else if (alpha == 1.0f && beta == 1.0f) *d += t;
            else *d = alpha * t + beta * *d;
        }
}

/* Rows (n, o) of the forward's im2col for group g: [k][c] each, input
 * position o - pad + k dil (skipped: zero, as a pad row would add). */
static void im2col_x(const ConvJob *j, int g, int n, int rows_from, float *col)
{
    const FsConvShape *s = &j->sh;
    const int Cg = s->C / s->G, KC = s->S * Cg;
    for (int o = 0; o < s->OW; o++) {
        float *row = col + (long)(rows_from + o) * KC;
        for (int k = 0; k < s->S; k++) {
            const int q = o - s->pad + k * s->dil;
            for (int c = 0; c < Cg; c++)
                row[k * Cg + c] = q < 0 || q >= s->W ? 0.0f : j->x[n * s->xn + (long)(g * Cg + c) * s->xc + q * s->xw];
        }
    }
}

/* y[n][o][f] of group g: sum over (k, c) in that order (conv_gemm's). */
static void run_fwd(const ConvJob *j, float *col, float *B, float *T)
{
    const FsConvShape *s = &j->sh;
    const int Cg = s->C / s->G, Kg = s->K / s->G, KC = s->S * Cg;
    for (int g = 0; g < s->G; g++) {
        for (int k = 0; k < s->S; k++)
            for (int c = 0; c < Cg; c++)
                for (int f = 0; f < Kg; f++) B[(long)(k * Cg + c) * Kg + f] = filt(s, j->w, g * Kg + f, c, k);
        for (int n = 0; n < s->N; n++) {
            im2col_x(j, g, n, 0, col);
            memset(T, 0, sizeof *T * (size_t)s->OW * (size_t)Kg);
            core_gemm(s->OW, Kg, KC, col, KC, 1, B, Kg, T, Kg, 1);
            blend(j->out + n * s->yn + (long)g * Kg * s->yc, s->yw, s->yc, T, s->OW, Kg, j->alpha, j->beta);
        }
    }
}

/* dx[n][q][c] of group g: sum over (k from S - 1 down to 0, then f), the
 * trainer's flipped kernel walked forwards (conv_dgrad); output o = q +
 * pad - k dil. */
static void run_bwd_data(const ConvJob *j, float *col, float *B, float *T)
{
    const FsConvShape *s = &j->sh;
    const int Cg = s->C / s->G, Kg = s->K / s->G, KF = s->S * Kg;
    for (int g = 0; g < s->G; g++) {
        for (int i = 0; i < s->S; i++)
            for (int f = 0; f < Kg; f++)
                for (int c = 0; c < Cg; c++)
                    B[(long)(i * Kg + f) * Cg + c] = filt(s, j->w, g * Kg + f, c, s->S - 1 - i);
        for (int n = 0; n < s->N; n++) {
            for (int q = 0; q < s->W; q++)
                for (int i = 0; i < s->S; i++) {
                    const int o = q + s->pad - (s->S - 1 - i) * s->dil;
                    for (int f = 0; f < Kg; f++)
                        col[(long)q * KF + i * Kg + f] =
                            o < 0 || o >= s->OW ? 0.0f : j->dy[n * s->yn + (long)(g * Kg + f) * s->yc + o * s->yw];
                }
            memset(T, 0, sizeof *T * (size_t)s->W * (size_t)Cg);
            core_gemm(s->W, Cg, KF, col, KF, 1, B, Cg, T, Cg, 1);
            blend(j->out + n * s->xn + (long)g * Cg * s->xc, s->xw, s->xc, T, s->W, Cg, j->alpha, j->beta);
        }
    }
}

/* dW[f][c][k] of group g: sum over (n, then o) (conv_wgrad's); T is
 * [k][c][f], written to the filter tap by tap. */
static void run_bwd_filter(const ConvJob *j, float *col, float *B, float *T)
{
    const FsConvShape *s = &j->sh;
    const int Cg = s->C / s->G, Kg = s->K / s->G, KC = s->S * Cg, R = s->N * s->OW;
    for (int g = 0; g < s->G; g++) {
        for (int n = 0; n < s->N; n++) {
            im2col_x(j, g, n, n * s->OW, col);
            for (int o = 0; o < s->OW; o++)
                for (int f = 0; f < Kg; f++)
                    B[(long)(n * s->OW + o) * Kg + f] = j->dy[n * s->yn + (long)(g * Kg + f) * s->yc + o * s->yw];
        }
        memset(T, 0, sizeof *T * (size_t)KC * (size_t)Kg);
        core_gemm(KC, Kg, R, col, 1, KC, B, Kg, T, Kg, 1);
        for (int k = 0; k < s->S; k++) {
            const int tap = s->flip ? s->S - 1 - k : k;
            blend(j->out + (long)g * Kg * s->fk + tap * s->fs, s->fc, s->fk, T + (long)k * Cg * Kg, Cg, Kg, j->alpha,
                  j->beta);
        }
    }
}

/* On the stream's thread, device memory open (streams.c). */
static cudaError_t conv_run(void *arg)
{
    const ConvJob *j = arg;
    const FsConvShape *s = &j->sh;
    const size_t Cg = (size_t)(s->C / s->G), Kg = (size_t)(s->K / s->G), S = (size_t)s->S;
    const size_t rows =
        j->dir == FS_CONV_BWD_FILTER ? (size_t)s->N * (size_t)s->OW : (size_t)(s->W > s->OW ? s->W : s->OW);
    const size_t width = S * (Cg > Kg ? Cg : Kg);
    float *col = malloc(sizeof(float) * rows * width);
    float *B = malloc(sizeof(float) * (j->dir == FS_CONV_BWD_FILTER ? rows * Kg : width * (Cg > Kg ? Cg : Kg)));
    float *T = malloc(sizeof(float) * (j->dir == FS_CONV_BWD_FILTER ? width * Kg : rows * (Cg > Kg ? Cg : Kg)));
    cudaError_t e = col && B && T ? cudaSuccess : cudaErrorMemoryAllocation;
    /* Every direction: an output position's filters over a group's taps. */
    fsemu_count_madds((unsigned long long)s->N * (unsigned long long)s->OW * (unsigned long long)s->K * Cg * S);
    if (e == cudaSuccess && j->dir == FS_CONV_FWD) run_fwd(j, col, B, T);
    if (e == cudaSuccess && j->dir == FS_CONV_BWD_DATA) run_bwd_data(j, col, B, T);
    if (e == cudaSuccess && j->dir == FS_CONV_BWD_FILTER) run_bwd_filter(j, col, B, T);
    free(col);
    free(B);
    free(T);
    return e;
}

/* The call's checks after the shape's: the algorithm, the workspace, the
 * tensors' extents, the injected failure; then the call is queued (or
 * captured) with alpha and beta read now. */
static cudnnStatus_t conv_call(cudnnHandle_t h, ConvJob *j, int algo, const void *alpha, const void *beta, void *ws,
                               size_t ws_bytes, const char *what)
{
    if (!h || !alpha || !beta) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = fsemu_cudnn_algo(j->dir, algo);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    const size_t need = fsemu_cudnn_ws(j->dir);
    if (need > 0 && (ws_bytes < need || !fsemu_device_range(ws, need))) return CUDNN_STATUS_BAD_PARAM;
    const FsConvShape *s = &j->sh;
    const void *xp = j->dir == FS_CONV_BWD_DATA ? (const void *)j->out : j->x;
    const void *yp = j->dir == FS_CONV_FWD ? (const void *)j->out : j->dy;
    const void *wp = j->dir == FS_CONV_BWD_FILTER ? (const void *)j->out : j->w;
    if (!fsemu_device_range(xp, s->x_bytes) || !fsemu_device_range(yp, s->y_bytes) ||
        !fsemu_device_range(wp, s->w_bytes))
        return CUDNN_STATUS_BAD_PARAM;
    if (fsemu_fail_call("cudnn")) return CUDNN_STATUS_EXECUTION_FAILED;
    memcpy(&j->alpha, alpha, sizeof j->alpha); /* host scalars, read now as the library reads them */
    memcpy(&j->beta, beta, sizeof j->beta);
    const void *ptrs[4] = {xp, yp, wp, ws};
    cudaError_t e = fsemu_enqueue_host(h->stream, conv_run, j, sizeof *j, what, ptrs, need > 0 ? 4 : 3);
    return e == cudaSuccess ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_EXECUTION_FAILED_CUDART;
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                      const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                      const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                      void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
                                      const cudnnTensorDescriptor_t yDesc, void *y)
{
    ConvJob j = {.dir = FS_CONV_FWD, .x = x, .w = w, .out = y};
    cudnnStatus_t st = fsemu_conv_shape(xDesc, wDesc, convDesc, yDesc, &j.sh);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    return conv_call(handle, &j, (int)algo, alpha, beta, workSpace, workSpaceSizeInBytes, "cudnnConvolutionForward");
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void *w,
                                           const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                           size_t workSpaceSizeInBytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    ConvJob j = {.dir = FS_CONV_BWD_DATA, .w = w, .dy = dy, .out = dx};
    cudnnStatus_t st = fsemu_conv_shape(dxDesc, wDesc, convDesc, dyDesc, &j.sh);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    return conv_call(handle, &j, (int)algo, alpha, beta, workSpace, workSpaceSizeInBytes,
                     "cudnnConvolutionBackwardData");
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                             size_t workSpaceSizeInBytes, const void *beta,
                                             const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    ConvJob j = {.dir = FS_CONV_BWD_FILTER, .x = x, .dy = dy, .out = dw};
    cudnnStatus_t st = fsemu_conv_shape(xDesc, dwDesc, convDesc, dyDesc, &j.sh);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    return conv_call(handle, &j, (int)algo, alpha, beta, workSpace, workSpaceSizeInBytes,
                     "cudnnConvolutionBackwardFilter");
}
