/*
 * kernels/dnn_cublas.cu: the library tier's cuBLAS back end (dnn.h). A
 * convolution of G models is im2col into scratch ([B L][K C] per model,
 * taps dil rows apart, pad rows read as the trainer reads them) and one
 * cublasSgemmStridedBatched over the models; each product's sum runs over
 * the same index in the same order as conv.c's GEMM (fwd: k, c; wgrad:
 * b, p; dgrad: j, f over conv_dgrad's flipped kernel), so under the
 * stand-in (whose GEMM is the trainer's) the bits are the CPU trainer's.
 *
 * Row-major [rows][cols] is column-major cols x rows with ld cols, so
 * Y = X W is computed as Y^T = W^T X^T: m = F, n = rows, k = K C. Where a
 * model's interior rows are one run (B == 1: a chain batch, or one window)
 * the GEMM adds (beta = 1) straight onto them; otherwise into scratch
 * (beta = 0), then dnn_add_rows adds each row once, the same single
 * addition of each sum that the trainer's GEMM makes.
 */
#if defined(FS_CUDA_EMULATE)
#include <cuda_runtime.h> /* the stand-in */
#endif
#include <cublas_v2.h> /* or, under FOLDSWEEP_CUDA=EMULATE, the stand-in (src/gpu/emulate) */
#include <stdlib.h>

#include "dnn_impl.h"
#include "gpu_cuda.h" /* CU */
#include "dnn_syms.h" /* the libraries through dlopen (real builds) */

/* A cuBLAS call that failed: file:line, the call and cuBLAS's status. */
#define CUBLAS(call)                                                                                      \
    do {                                                                                                  \
        cublasStatus_t s_ = (call);                                                                       \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                \
            fs_err_set(err, "%s:%d: %s: %s (%d)", __FILE__, __LINE__, #call, cublasGetStatusString(s_), \
                       (int)s_);                                                                          \
            return -1;                                                                                    \
        }                                                                                                 \
    } while (0)

/* cuBLAS's workspace: set explicitly, so that a captured GEMM allocates
 * nothing (cuBLAS's advice for graphs; 4 MiB covers SGEMM's split-k). */
#define DNN_CUBLAS_WS FS_GPU_LIB_CUBLAS_WS

static const float one = 1.0f, zero = 0.0f;

int dnn_cublas_open(FsDnn *d, FsErr *err)
{
    cublasHandle_t h = NULL;
    CUBLAS(cublasCreate(&h));
    d->lib = h;
    CUBLAS(cublasSetStream(h, d->stream));
    /* FP32 products summed in FP32: PEDANTIC keeps cuBLAS off reduced
     * precision; TF32 only when asked (a different numeric mode). */
    CUBLAS(cublasSetMathMode(h, d->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH));
    CU(cudaMalloc(&d->ws, DNN_CUBLAS_WS));
    d->ws_bytes = DNN_CUBLAS_WS;
    CUBLAS(cublasSetWorkspace(h, d->ws, d->ws_bytes));
    return 0;
}

void dnn_cublas_close(FsDnn *d)
{
    if (d->lib) cublasDestroy((cublasHandle_t)d->lib);
    d->lib = NULL;
}

/* Scratch of each product (floats, each part aligned): fwd and wgrad the
 * columns [G][B L][K C] and G [B L][F] rows, dgrad the columns of dy
 * [G][B L][K F], the rows [G][B L][C] and Wf [G][K F][C]. */

int dnn_cublas_need(FsDnn *d, const FsDnnConv *c, DnnNeed *need, FsErr *err)
{
    (void)d;
    if (dnn_check(c, err) < 0) return -1;
    /* cuBLAS's dimensions are ints. */
    const long rows = (long)c->B * c->L, kmax = (long)c->K * (c->C > c->F ? c->C : c->F);
    if (rows > 2147483647L || kmax > 2147483647L) {
        fs_err_set(err, "the cuBLAS back end takes at most 2^31 - 1 rows and K * channels (%ld, %ld)", rows, kmax);
        return -1;
    }
    /* The sizes the tier's memory rule counts (src/gpu/limits.c). */
    need->scratch_floats = gpu_lib_conv_scratch_floats(c->G, rows, c->C, c->F, c->K);
    need->ws_bytes = 0; /* the handle's own, set at open */
    return 0;
}

/* Scratch for this call: grown (outside a capture: fs_dnn_reserve first). */
static int prepare(FsDnn *d, const FsDnnConv *c, FsErr *err)
{
    DnnNeed n;
    if (dnn_cublas_need(d, c, &n, err) < 0) return -1;
    return dnn_scratch(d, n.scratch_floats, err);
}

int dnn_cublas_fwd(FsDnn *d, const FsDnnConv *c, const float *x, const float *W, float *y, FsErr *err)
{
    if (prepare(d, c, err) < 0) return -1;
    const int rows = c->B * c->L, kc = c->K * c->C, F = c->F;
    float *col = d->scratch, *t = col + DNN_ALIGN((size_t)c->G * rows * kc);
    cublasHandle_t h = (cublasHandle_t)d->lib;
    CU(dnn_im2col(c, c->C, x, c->xs, col, d->stream));
    if (c->B == 1) {
        CUBLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, F, rows, kc, &one, W, F, c->ws, col, kc,
                                         (long long)rows * kc, &one, y + (long)c->P * F, F, c->ys, c->G));
        return 0;
    }
    CUBLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, F, rows, kc, &one, W, F, c->ws, col, kc,
                                     (long long)rows * kc, &zero, t, F, (long long)rows * F, c->G));
    CU(dnn_add_rows(c, F, t, y, c->ys, d->stream));
    return 0;
}

/* gW^T (F x K C) += dy^T (F x rows) col (rows x K C): the sum over rows,
 * examples then positions, as conv_wgrad's. */
int dnn_cublas_wgrad(FsDnn *d, const FsDnnConv *c, const float *x, const float *dy, float *gW, FsErr *err)
{
    if (prepare(d, c, err) < 0) return -1;
    const int rows = c->B * c->L, kc = c->K * c->C, F = c->F;
    float *col = d->scratch, *dr = col + DNN_ALIGN((size_t)c->G * rows * kc);
    cublasHandle_t h = (cublasHandle_t)d->lib;
    CU(dnn_im2col(c, c->C, x, c->xs, col, d->stream));
    const float *a = dy + (long)c->P * F;
    long long sa = c->ys;
    if (c->B > 1) { /* the interior rows as one run */
        CU(dnn_pack_rows(c, F, dy, c->ys, dr, d->stream));
        a = dr, sa = (long long)rows * F;
    }
    CUBLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, F, kc, rows, &one, a, F, sa, col, kc,
                                     (long long)rows * kc, &one, gW, F, c->ws, c->G));
    return 0;
}

/* dx (rows x C) += dcol (rows x K F) Wf (K F x C): conv_dgrad's "same"
 * convolution of dy with the flipped, transposed kernel. */
int dnn_cublas_dgrad(FsDnn *d, const FsDnnConv *c, const float *dy, const float *W, float *dx, FsErr *err)
{
    if (prepare(d, c, err) < 0) return -1;
    const int rows = c->B * c->L, kf = c->K * c->F, C = c->C;
    float *dcol = d->scratch, *t = dcol + DNN_ALIGN((size_t)c->G * rows * kf);
    float *Wf = t + DNN_ALIGN((size_t)c->G * rows * C);
    cublasHandle_t h = (cublasHandle_t)d->lib;
    CU(dnn_flip_weights(c, W, Wf, d->stream));
    CU(dnn_im2col(c, c->F, dy, c->ys, dcol, d->stream));
    const long long swf = (long long)kf * C;
    if (c->B == 1) {
        CUBLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, C, rows, kf, &one, Wf, C, swf, dcol, kf,
                                         (long long)rows * kf, &one, dx + (long)c->P * C, C, c->xs, c->G));
        return 0;
    }
    CUBLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, C, rows, kf, &one, Wf, C, swf, dcol, kf,
                                     (long long)rows * kf, &zero, t, C, (long long)rows * C, c->G));
    CU(dnn_add_rows(c, C, t, dx, c->xs, d->stream));
    return 0;
}
