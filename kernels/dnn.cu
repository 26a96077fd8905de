/*
 * kernels/dnn.cu: the library tier's front (kernels/dnn.h): which back
 * end, its handles, the scratch both share, the shape checks, and the
 * calls' dispatch to dnn_cublas.cu or dnn_cudnn.cu. The back end is the
 * caller's fixed choice, never a timing: the same run takes the same path.
 */
#if defined(FS_CUDA_EMULATE)
#include <cuda_runtime.h> /* the stand-in */
#endif
#include <cublas_v2.h> /* CUBLAS_VER_* (the stand-in's under EMULATE) */
#include <stdio.h>
#include <stdlib.h>

#include "dnn_impl.h"
#include "gpu_cuda.h" /* CU, gpu_libraries (gpu.h) */
#include "dnn_syms.h" /* fs_dnn_load */

int fs_dnn_available(FsDnnBackend be)
{
#ifdef DNN_WITH_CUDNN
    return be == FS_DNN_CUBLAS || be == FS_DNN_CUDNN;
#else
    return be == FS_DNN_CUBLAS;
#endif
}

void fs_dnn_describe(FsDnnBackend be, char *out, size_t n)
{
#ifdef FS_CUBLAS_STANDIN
    const char *how = " (the CPU stand-in)";
#else
    const char *how = "";
#endif
    if (be == FS_DNN_CUBLAS) {
        snprintf(out, n, "cuBLAS %d.%d.%d%s", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH, how);
        return;
    }
#ifdef DNN_WITH_CUDNN
    dnn_cudnn_version(out, n);
#elif defined(FS_CUDA_EMULATE)
    snprintf(out, n, "cuDNN: not in this build (no cuDNN stand-in, src/gpu/emulate/cudnn.h)");
#else
    snprintf(out, n, "cuDNN: not in this build (CMake found no libcudnn and cudnn.h with the CUDA toolkit)");
#endif
}

void gpu_libraries(char *out, size_t n)
{
    char a[128], b[160];
    fs_dnn_describe(FS_DNN_CUBLAS, a, sizeof a);
    fs_dnn_describe(FS_DNN_CUDNN, b, sizeof b);
    snprintf(out, n, "%s; %s", a, b);
}

int gpu_cudnn_load(FsErr *err)
{
    if (!fs_dnn_available(FS_DNN_CUDNN)) {
        char why[160];
        fs_dnn_describe(FS_DNN_CUDNN, why, sizeof why);
        fs_err_set(err, "%s", why);
        return -1;
    }
    return fs_dnn_load(FS_DNN_CUDNN, err);
}

FsDnn *fs_dnn_open(FsDnnBackend be, cudaStream_t stream, int tf32, FsErr *err)
{
    if (!fs_dnn_available(be)) {
        char why[160];
        fs_dnn_describe(be, why, sizeof why);
        fs_err_set(err, "the library tier's back end %d is not available: %s", (int)be, why);
        return NULL;
    }
    if (fs_dnn_load(be, err) != 0) return NULL;
    FsDnn *d = (FsDnn *)calloc(1, sizeof *d);
    if (!d) {
        fs_err_set(err, "out of memory for the library tier's state");
        return NULL;
    }
    d->be = be, d->stream = stream, d->tf32 = tf32;
    int rc;
#ifdef DNN_WITH_CUDNN
    rc = be == FS_DNN_CUDNN ? dnn_cudnn_open(d, err) : dnn_cublas_open(d, err);
#else
    rc = dnn_cublas_open(d, err);
#endif
    if (rc < 0) {
        fs_dnn_close(d);
        return NULL;
    }
    return d;
}

void fs_dnn_close(FsDnn *d)
{
    if (!d) return;
    /* Work still queued reads the scratch: it finishes first. */
    cudaStreamSynchronize(d->stream);
#ifdef DNN_WITH_CUDNN
    if (d->be == FS_DNN_CUDNN) dnn_cudnn_close(d);
    else
#endif
        dnn_cublas_close(d);
    cudaFree(d->scratch);
    cudaFree(d->ws);
    free(d);
}

int dnn_check(const FsDnnConv *c, FsErr *err)
{
    const char *bad = NULL;
    if (c->G < 1) bad = "G < 1";
    else if (c->B < 1 || c->L < 1) bad = "B or L < 1";
    else if (c->C < 1 || c->F < 1) bad = "C or F < 1";
    else if (c->K < 1 || c->K % 2 == 0) bad = "K is not odd";
    else if (c->dil < 1) bad = "dil < 1";
    else if ((long)c->P < (long)(c->K / 2) * c->dil) bad = "P < K / 2 * dil (a tap would leave its example)";
    else if (c->G > 1 && (c->xs < (long)c->B * (c->L + 2 * c->P) * c->C ||
                          c->ys < (long)c->B * (c->L + 2 * c->P) * c->F || c->ws < (long)c->K * c->C * c->F))
        bad = "a model's stride (xs, ys or ws) overlaps the next model";
    if (!bad) return 0;
    fs_err_set(err, "library tier convolution refused: %s (G %d, B %d, L %d, P %d, C %d, F %d, K %d, dil %d)", bad,
               c->G, c->B, c->L, c->P, c->C, c->F, c->K, c->dil);
    return -1;
}

int dnn_scratch(FsDnn *d, size_t floats, FsErr *err)
{
    if (floats <= d->scratch_floats) return 0;
    /* The old scratch may still be read by queued work. */
    CU(cudaStreamSynchronize(d->stream));
    cudaFree(d->scratch);
    d->scratch = NULL, d->scratch_floats = 0;
    CU(cudaMalloc((void **)&d->scratch, floats * sizeof(float)));
    d->scratch_floats = floats;
    return 0;
}

int dnn_workspace(FsDnn *d, size_t bytes, FsErr *err)
{
    if (bytes <= d->ws_bytes) return 0;
    /* As the scratch: the old workspace may still be in use. */
    CU(cudaStreamSynchronize(d->stream));
    cudaFree(d->ws);
    d->ws = NULL, d->ws_bytes = 0;
    CU(cudaMalloc(&d->ws, bytes));
    d->ws_bytes = bytes;
    return 0;
}

static int need(FsDnn *d, const FsDnnConv *c, DnnNeed *n, FsErr *err)
{
#ifdef DNN_WITH_CUDNN
    if (d->be == FS_DNN_CUDNN) return dnn_cudnn_need(d, c, n, err);
#endif
    return dnn_cublas_need(d, c, n, err);
}

int fs_dnn_reserve(FsDnn *d, const FsDnnConv *layers, int n, FsErr *err)
{
    size_t floats = 0, ws = 0;
    for (int i = 0; i < n; i++) {
        DnnNeed k;
        if (need(d, &layers[i], &k, err) < 0) return -1;
        if (k.scratch_floats > floats) floats = k.scratch_floats;
        if (k.ws_bytes > ws) ws = k.ws_bytes;
    }
    if (dnn_scratch(d, floats, err) < 0) return -1;
    return dnn_workspace(d, ws, err);
}

int fs_dnn_conv_fwd(FsDnn *d, const FsDnnConv *c, const float *x, const float *W, float *y, FsErr *err)
{
#ifdef DNN_WITH_CUDNN
    if (d->be == FS_DNN_CUDNN) return dnn_cudnn_fwd(d, c, x, W, y, err);
#endif
    return dnn_cublas_fwd(d, c, x, W, y, err);
}

int fs_dnn_conv_wgrad(FsDnn *d, const FsDnnConv *c, const float *x, const float *dy, float *gW, FsErr *err)
{
#ifdef DNN_WITH_CUDNN
    if (d->be == FS_DNN_CUDNN) return dnn_cudnn_wgrad(d, c, x, dy, gW, err);
#endif
    return dnn_cublas_wgrad(d, c, x, dy, gW, err);
}

int fs_dnn_conv_dgrad(FsDnn *d, const FsDnnConv *c, const float *dy, const float *W, float *dx, FsErr *err)
{
#ifdef DNN_WITH_CUDNN
    if (d->be == FS_DNN_CUDNN) return dnn_cudnn_dgrad(d, c, dy, W, dx, err);
#endif
    return dnn_cublas_dgrad(d, c, dy, W, dx, err);
}
