/*
 * ops_call: one call of a trainer op, described so that the same call can
 * be run by each backend of tests/test_ops.c: the CPU trainer (the
 * library), the emulated block (ops_emu.c) and the GPU (ops_gpu.cu). A
 * call works on an "arena": one model buffer (core_model_bytes) followed
 * by free space for the operands of a bare GEMM or a batch's residues;
 * operands are given as offsets into it, so that the call means the same
 * on a device copy. Plain C, also read by nvcc.
 */
#ifndef FS_TESTS_OPS_CALL_H
#define FS_TESTS_OPS_CALL_H

#include "train/core.h"

typedef enum {
    OPS_FORWARD,  /* layer_forward(layer, B, train) */
    OPS_BACKWARD, /* layer_backward(layer, B, fuse ? &opt : NULL) */
    OPS_LOSS,     /* step_loss(B, grad 1, confusion) */
    OPS_UPDATE,   /* step_update(ts, fused) */
    OPS_LOAD,     /* step_load_batch(fold data from the arena, idx, B) */
    OPS_GEMM      /* ops_gemm on operands in the arena */
} OpsKind;

typedef struct {
    int kind;
    int layer, B, train;
    int fuse;      /* OPS_BACKWARD: the fused dense update with opt */
    FsOptStep opt;
    FsTrainSpec ts; /* OPS_UPDATE */
    int fused;      /* OPS_UPDATE: leave the fused layers' weights alone */
    /* OPS_GEMM: float offsets of A, B, C; strides as ops_gemm takes them. */
    int M, N, K;
    long a, b, c;
    FsStride am, ak, bk, cm;
    long cn;
    /* OPS_LOAD: byte offsets of aa, ss, left, right and the example list. */
    long aa, ss, left, right, idx;
    /* Results, stored by the block's master. */
    double ret; /* loss, norm, or "a fused gradient was not finite" */
    uint64_t conf[3][3];
    long step;  /* the model's optimizer step after the call */
} OpsCall;

/* The model scalars a call reads (the rest of FsModel is the arena). */
typedef struct {
    long step;
    uint64_t drop_key;
    float lr; /* the step's learning rate (the fit sets it from the schedule) */
} OpsScalars;

#ifdef __cplusplus
extern "C" {
#endif

/* Emulated block (ops_emu.c): the call by `threads` pthreads on model m
 * (bound to arena; m may be NULL for OPS_GEMM). */
void ops_emu_run(FsModel *m, char *arena, OpsCall *call, int threads);
extern long ops_emu_staged_k; /* k steps whose B the emulated block staged (ops_emu.c) */

/* GPU (ops_gpu.cu, built with the CUDA backend): device memory, and the
 * call as one block of `threads` threads. Each returns 0, or -1 with why. */
int ops_gpu_alloc(void **p, size_t bytes, char *why, size_t why_n);
void ops_gpu_free(void *p);
int ops_gpu_copy(void *dst, const void *src, size_t bytes, int to_device, char *why, size_t why_n);
int ops_gpu_exec(FsModel *d_model, char *d_arena, OpsCall *d_call, int threads, char *why, size_t why_n);

#ifdef __cplusplus
}
#endif

#endif
