/*
 * cublas: the cuBLAS stand-in (cublas_v2.h says what it models). Each
 * compute call is checked as cuBLAS checks it, then queued on the
 * handle's stream as a host function (streams.c) that runs the trainer's
 * own GEMM (core_gemm) with the column-major operands mapped onto its
 * row-major form by strides.
 */
#include <stdlib.h>
#include <string.h>

#include "cublas_v2.h"
#include "emulate.h"
#include "train/kernel.h" /* core_gemm: the CPU trainer's GEMM */

struct FsEmuCublas {
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    cublasMath_t mode;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    /* cuBLAS needs a working context to create a handle. */
    if (fsemu_enter() != cudaSuccess) return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = calloc(1, sizeof **handle);
    return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    /* cuBLAS synchronises the handle's work before it frees its resources. */
    cudaStreamSynchronize(handle->stream);
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version) return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    /* A workspace the device cannot address would fault in the GEMM. */
    if (workspaceSizeInBytes > 0 && (!workspace || !fsemu_device_range(workspace, workspaceSizeInBytes)))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = workspaceSizeInBytes;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = streamId;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    const int base = (int)mode & 0xf, flags = (int)mode & ~0xf;
    if (base > CUBLAS_TF32_TENSOR_OP_MATH || (flags & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
    }
    return "unknown error";
}

/* ---- GEMM ---------------------------------------------------------------- */

/* One (strided-batched) SGEMM as queued: the arguments by value. */
typedef struct {
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc, batch;
    float alpha, beta;
    const float *A, *B;
    float *C;
    long long sa, sb, sc;
} Gemm;

/* Floats a column-major operand of `rows` x `cols` (as stored) spans. */
static size_t extent(int rows, int cols, int ld)
{
    return rows > 0 && cols > 0 ? (size_t)(cols - 1) * (size_t)ld + (size_t)rows : 0;
}

static int in_device(const float *p, size_t floats)
{
    return floats == 0 || (p && fsemu_device_range(p, floats * sizeof(float)));
}

/* cuBLAS's checks, then each batch's operands inside live allocations. */
static cublasStatus_t gemm_check(cublasHandle_t h, const Gemm *g)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    const int a_rows = g->ta == CUBLAS_OP_N ? g->m : g->k, b_rows = g->tb == CUBLAS_OP_N ? g->k : g->n;
    const int ok_op = (g->ta == CUBLAS_OP_N || g->ta == CUBLAS_OP_T || g->ta == CUBLAS_OP_C) &&
                      (g->tb == CUBLAS_OP_N || g->tb == CUBLAS_OP_T || g->tb == CUBLAS_OP_C);
    if (!ok_op || g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0 || g->lda < (a_rows > 1 ? a_rows : 1) ||
        g->ldb < (b_rows > 1 ? b_rows : 1) || g->ldc < (g->m > 1 ? g->m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (fsemu_sticky() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
    const size_t ea = extent(a_rows, g->ta == CUBLAS_OP_N ? g->k : g->m, g->lda),
                 eb = extent(b_rows, g->tb == CUBLAS_OP_N ? g->n : g->k, g->ldb), ec = extent(g->m, g->n, g->ldc);
    const int uses_ab = g->k > 0 && g->alpha != 0.0f;
    for (int i = 0; i < g->batch; i++) {
        if (uses_ab && (!in_device(g->A + i * g->sa, ea) || !in_device(g->B + i * g->sb, eb)))
            return CUBLAS_STATUS_INVALID_VALUE;
        if (!in_device(g->C + i * g->sc, ec)) return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* op(X) as a packed column-major rows x cols copy (ld rows), for the
 * cases core_gemm's strides cannot read in place. */
static float *pack(const float *X, int ld, int trans, int rows, int cols)
{
    float *p = malloc((size_t)rows * cols * sizeof *p + 1);
    if (!p) return NULL;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) p[i + (size_t)j * rows] = trans ? X[j + (size_t)i * ld] : X[i + (size_t)j * ld];
    return p;
}

/* T (m x n, ld ldt) += op(A) op(B) in the trainer's order. core_gemm's B
 * operand must have its n index contiguous: with op(A) = A (N) that is
 * A's rows (core_gemm computes T^T += op(B)^T A^T), with op(B) = B^T (T)
 * B's; op(A) = A^T with op(B) = B packs A first. A row is read up to its
 * stride, so a stride wider than the matrix past the end of its
 * allocation is packed too. Returns -1 when a pack's malloc failed. */
static int gemm_one(const Gemm *g, const float *A, const float *B, float *T, long ldt)
{
    const int m = g->m, n = g->n, k = g->k;
    float *tmp = NULL;
    int lda = g->lda, ta = g->ta != CUBLAS_OP_N, tb = g->tb != CUBLAS_OP_N;
    if (ta && tb && (g->ldb == n || fsemu_device_range(B, (extent(n, k, g->ldb) + (size_t)(g->ldb - n)) * sizeof(float)))) {
        core_gemm(m, n, k, A, lda, 1, B, g->ldb, T, 1, ldt);
        return 0;
    }
    if (ta || (lda > m && !fsemu_device_range(A, (extent(m, k, lda) + (size_t)(lda - m)) * sizeof(float)))) {
        if (!(tmp = pack(A, lda, ta, m, k))) return -1;
        A = tmp, lda = m;
    }
    if (tb)
        core_gemm(n, m, k, B, 1, g->ldb, A, lda, T, ldt, 1);
    else
        core_gemm(n, m, k, B, g->ldb, 1, A, lda, T, ldt, 1);
    free(tmp);
    return 0;
}

/* The queued work: every batch, C = alpha op(A) op(B) + beta C. With
 * alpha = beta = 1 the product is added straight onto C (the trainer's
 * single addition of each sum); otherwise it is summed into a zeroed
 * temporary first, and beta == 0 leaves C unread. */
static cudaError_t gemm_run(void *arg)
{
    const Gemm *g = arg;
    const size_t mn = (size_t)g->m * g->n;
    const int direct = g->alpha == 1.0f && g->beta == 1.0f;
    float *t = direct ? NULL : calloc(mn + 1, sizeof *t);
    if (!direct && !t) {
        fsemu_make_sticky(cudaErrorMemoryAllocation, "the cuBLAS stand-in's temporary");
        return cudaErrorMemoryAllocation;
    }
    fsemu_count_madds((unsigned long long)g->m * (unsigned long long)g->n * (unsigned long long)g->k *
                      (unsigned long long)g->batch);
    for (int i = 0; i < g->batch; i++) {
        const float *A = g->A + i * g->sa, *B = g->B + i * g->sb;
        float *C = g->C + i * g->sc;
        if (g->k > 0 && g->alpha != 0.0f && gemm_one(g, A, B, direct ? C : t, direct ? g->ldc : g->m) < 0) {
            fsemu_make_sticky(cudaErrorMemoryAllocation, "the cuBLAS stand-in's temporary");
            break;
        }
        if (direct) continue;
        for (int j = 0; j < g->n; j++)
            for (int r = 0; r < g->m; r++) {
                float *c = C + r + (size_t)j * g->ldc;
                const float p = g->alpha * t[r + (size_t)j * g->m];
                *c = g->beta == 0.0f ? p : p + g->beta * *c;
            }
        memset(t, 0, mn * sizeof *t);
    }
    free(t);
    return fsemu_sticky();
}

static cublasStatus_t gemm_queue(cublasHandle_t h, Gemm *g, const float *alpha, const float *beta)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
    g->alpha = *alpha, g->beta = *beta; /* host pointer mode: read at the call */
    cublasStatus_t st = gemm_check(h, g);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    if (fsemu_fail_call("cublas")) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (g->m == 0 || g->n == 0 || g->batch == 0) return CUBLAS_STATUS_SUCCESS;
    /* Queued (or captured) with a copy of its arguments; the operands
     * named so that a graph's replay finds one freed since (graph.c). */
    const void *ptrs[3] = {g->A, g->B, g->C};
    if (fsemu_enqueue_host(h->stream, gemm_run, g, sizeof *g, "cublasSgemm", ptrs, 3) != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc)
{
    Gemm g = {transa, transb, m, n, k, lda, ldb, ldc, 1, 0.0f, 0.0f, A, B, C, 0, 0, 0};
    return gemm_queue(handle, &g, alpha, beta);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb, long long int strideB,
                                         const float *beta, float *C, int ldc, long long int strideC,
                                         int batchCount)
{
    Gemm g = {transa, transb, m, n, k, lda, ldb, ldc, batchCount, 0.0f, 0.0f, A, B, C, strideA, strideB, strideC};
    return gemm_queue(handle, &g, alpha, beta);
}
