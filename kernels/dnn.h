/*
 * kernels/dnn.h: the library tier's convolutions (#44), internal to the
 * CUDA backend. One call runs one convolution layer of a *group* of G
 * models of one shape signature (docs/architecture.md, "The GPU library
 * tier"), each model with its own weights and activations, through cuBLAS
 * (im2col and strided-batched GEMMs) or cuDNN (a grouped convolution over
 * the models interleaved as its channel groups). Everything else of a
 * step (bias, activation, masks, batch norm, the loss, the optimizer) is
 * the trainer's single-source code run as the tier's own kernels.
 *
 * Layout: exactly the trainer's padded tensors (model.h), so that the
 * single-source code reads what these calls write. Model g's
 *   input  x + g * xs: B examples, each of L + 2P rows of C floats
 *          (rows P .. P + L - 1 the positions, the rest zero pads);
 *   output y + g * ys: B examples of L + 2P rows of F floats, the same P;
 *   weights W + g * ws: [K * C][F], row k * C + c the input channel c of
 *          tap k (taps dil rows apart, centred: tap k reads row
 *          p + (k - K / 2) * dil);
 * a chain batch is B = 1 with L its rows. A call computes what the CPU
 * trainer's conv_gemm, conv_wgrad and conv_dgrad (src/train/conv.c) do for
 * each model, as accumulations:
 *   fwd:   y[p][f]       += sum_(k, c) x[p + (k - K/2) dil][c] W[k C + c][f]
 *   wgrad: gW[k C + c][f] += sum_(b, p)  x[p + (k - K/2) dil][c] d[p][f]
 *   dgrad: dx[p][c]      += sum_(k, f) d[p + (K/2 - k) dil][f] W[k C + c][f]
 * each sum in the order written (fwd: k, then c; wgrad: b, then p; dgrad:
 * k from K - 1 down to 0, then f, which is conv_dgrad's flipped kernel
 * walked forwards), over interior rows only (pad rows of the destination
 * are not written). A chain group's L is its row budget: a model whose
 * batch has fewer rows has zeros in the rest of x and dy (the tier's own
 * kernels see to it), which leave every sum's bits as they are.
 * Sums run in the CPU trainer's order under the library stand-ins
 * (src/gpu/emulate: their compute is the trainer's own GEMM), so the tier
 * is bitwise equal to `--backend cpu` there; on a device the libraries sum
 * in their own orders (docs/architecture.md: the tolerances).
 *
 * Determinism: algorithms are chosen by a fixed rule (fs_dnn_open's back
 * end, then the first deterministic algorithm the library lists, never by
 * timing), math is FP32 (CUDNN_FMA_MATH, CUBLAS_PEDANTIC_MATH) unless TF32
 * is asked for, and no reduction uses float atomics: a rerun on the same
 * GPU model gives the same bits.
 */
#ifndef FS_KERNELS_DNN_H
#define FS_KERNELS_DNN_H

#include <stddef.h>

#include <cuda_runtime.h> /* or, under FOLDSWEEP_CUDA=EMULATE, the stand-in (src/gpu/emulate) */

#ifdef __cplusplus
extern "C" {
#endif
#include "util/util.h" /* FsErr */
#ifdef __cplusplus
}
#endif

/* C linkage: the tests (C) call these in a real CUDA build too. */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FS_DNN_CUBLAS = 0, /* im2col + cublasSgemmStridedBatched: always built */
    FS_DNN_CUDNN,      /* cuDNN grouped convolution: where the build has cuDNN (FS_HAVE_CUDNN) */
} FsDnnBackend;

/* One convolution layer of a group (the layout above). */
typedef struct {
    int G;          /* models in the group, >= 1 */
    int B, L, P;    /* examples, positions per example, pad rows each side (P >= K / 2 * dil) */
    int C, F;       /* input and output channels */
    int K, dil;     /* taps (odd), dilation >= 1 */
    long xs, ys, ws; /* floats from one model's input, output, weights to the next's */
} FsDnnConv;

/* A back end bound to one stream (the group's): its library handles, their
 * workspace, and the scratch for im2col / interleaved copies, grown as
 * calls need it (never while a graph is being captured: fs_dnn_reserve
 * first). tf32: TF32 math (a different numeric mode, not a tolerance). */
typedef struct FsDnn FsDnn;
FsDnn *fs_dnn_open(FsDnnBackend be, cudaStream_t stream, int tf32, FsErr *err);
void fs_dnn_close(FsDnn *d);
/* Whether this build has the back end (cuDNN only with FS_HAVE_CUDNN), and
 * its name and library version for `--version` ("cuBLAS 13.1.0", "cuDNN
 * 9.13.0", or why it is absent). */
int fs_dnn_available(FsDnnBackend be);
void fs_dnn_describe(FsDnnBackend be, char *out, size_t n);
/* Sizes the scratch and workspace for these layers (all calls of a step),
 * so that a captured step allocates nothing. 0, or -1 with err (the
 * device's memory, or a shape the back end refuses, named). */
int fs_dnn_reserve(FsDnn *d, const FsDnnConv *layers, int n, FsErr *err);

/* The three products, queued on the back end's stream (asynchronous, as
 * library calls are; capturable). 0, or -1 with err naming the call,
 * file:line and the library's status. */
int fs_dnn_conv_fwd(FsDnn *d, const FsDnnConv *c, const float *x, const float *W, float *y, FsErr *err);
int fs_dnn_conv_wgrad(FsDnn *d, const FsDnnConv *c, const float *x, const float *dy, float *gW, FsErr *err);
int fs_dnn_conv_dgrad(FsDnn *d, const FsDnnConv *c, const float *dy, const float *W, float *dx, FsErr *err);

#ifdef __cplusplus
}
#endif

#endif
