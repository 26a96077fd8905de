/*
 * The cuBLAS stand-in (FOLDSWEEP_CUDA=EMULATE): the cuBLAS calls that the
 * library tier's cuBLAS back end (kernels/dnn_cublas.cu, kernels/dnn.cu)
 * makes, executed on the CPU beside the CUDA stand-in (cuda_runtime.h).
 * Names, enum values and signatures are the real <cublas_v2.h>'s (cuBLAS
 * 13.1), so the back end compiles unchanged against either; like
 * cuda_runtime.h, this folder is on the include path of the .cu units only.
 *
 * What it models:
 *   - handles bound to a stand-in stream (cublasSetStream): every compute
 *     call is queued on that stream's host thread, asynchronous like a
 *     kernel, ordered with the stream's kernels and copies;
 *   - column-major SGEMM and strided-batched SGEMM: transa / transb (N, T;
 *     C is T for real data), alpha and beta (beta == 0: C is not read, so
 *     NaN in C does not leak through), m, n or k == 0 (k == 0: C = beta C);
 *   - cuBLAS's argument checks at the call, CUBLAS_STATUS_INVALID_VALUE for
 *     m, n, k or batchCount < 0, lda < max(1, rows of A as stored: m for N,
 *     k for T), ldb likewise (k for N, n for T), ldc < max(1, m), an
 *     unknown operation, a NULL handle (NOT_INITIALIZED) or alpha / beta;
 *   - pointers: every matrix (each batch's extent, ld times columns) must
 *     lie inside one live cudaMalloc'd allocation: CUBLAS_STATUS_INVALID_VALUE
 *     at the call otherwise (real cuBLAS would launch and fault: an illegal
 *     address, sticky, seen at the next synchronisation; the stand-in
 *     reports it where it is made, with the same effect of failing the step);
 *   - a sticky CUDA error (a faulted kernel): CUBLAS_STATUS_EXECUTION_FAILED;
 *   - injected failures: FOLDSWEEP_EMU_FAIL=cublas:N fails the N-th compute
 *     call (Sgemm or SgemmStridedBatched) with CUBLAS_STATUS_EXECUTION_FAILED;
 *   - workspace and math mode are checked and recorded (the workspace must be
 *     a device allocation of its size; an unknown mode is INVALID_VALUE).
 *
 * The sums: each GEMM is the CPU trainer's own (core_gemm, train/kernel.h:
 * every output summed over k in order from 0.0f, then added once), so a
 * back end built on this stand-in reproduces the CPU trainer's bits.
 *
 * What it does not model: cuBLAS's own summation orders and split-k
 * (a device result differs in the last bits: docs/architecture.md's
 * tolerances), TF32 rounding (CUBLAS_TF32_TENSOR_OP_MATH is accepted and
 * computed in FP32), speed and heuristics, pointer mode device, complex
 * and double types, and every call the back end does not make.
 */
#ifndef FS_GPU_EMULATE_CUBLAS_V2_H
#define FS_GPU_EMULATE_CUBLAS_V2_H

#include "cuda_runtime.h"

#define FS_CUBLAS_STANDIN 1

/* The version the stand-in answers (cublas_api.h's CUBLAS_VERSION form). */
#define CUBLAS_VER_MAJOR 13
#define CUBLAS_VER_MINOR 1
#define CUBLAS_VER_PATCH 0
#define CUBLAS_VERSION (CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH)

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;

typedef enum {
    CUBLAS_OP_N = 0,
    CUBLAS_OP_T = 1,
    CUBLAS_OP_C = 2,
    CUBLAS_OP_HERMITAN = 2,
    CUBLAS_OP_CONJG = 3
} cublasOperation_t;

typedef enum {
    CUBLAS_DEFAULT_MATH = 0,
    CUBLAS_TENSOR_OP_MATH = 1,
    CUBLAS_PEDANTIC_MATH = 2,
    CUBLAS_TF32_TENSOR_OP_MATH = 3,
    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16
} cublasMath_t;

typedef struct FsEmuCublas *cublasHandle_t;

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version);
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
const char *cublasGetStatusString(cublasStatus_t status);

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb, long long int strideB,
                                         const float *beta, float *C, int ldc, long long int strideC,
                                         int batchCount);

/* cublas_v2.h's names for the _v2 entry points. */
#define cublasCreate cublasCreate_v2
#define cublasDestroy cublasDestroy_v2
#define cublasGetVersion cublasGetVersion_v2
#define cublasSetWorkspace cublasSetWorkspace_v2
#define cublasSetStream cublasSetStream_v2
#define cublasSgemm cublasSgemm_v2

#endif
