/*
 * ops_gpu: the trainer's per-model files built by nvcc once more (as
 * kernels/fit_kernel.cu builds them), with a kernel that runs one OpsCall
 * as one thread block: the GPU leg of tests/test_ops.c, built into it with
 * the CUDA backend (tests/CMakeLists.txt). The host side binds the model
 * to device memory (core_model_bind only computes addresses) and copies.
 * Every CUDA error is returned with its text: a kernel that did not build
 * for this device, or faulted, fails the test.
 */
#include <cuda_runtime.h>
#include <stdio.h>

/* nvcc gives every __device__ function a host stub: renamed, this unit's
 * copies do not clash with kernels/fit_kernel.cu's in the library. */
#define OPS_PREFIX ops_gpu_
#include "train/rename.h"

#include "train/core.h"

#include "../../src/train/act.c"
#include "../../src/train/blocks.c"
#include "../../src/train/conv.c"
#include "../../src/train/dense.c"
#include "../../src/train/gemm.c"
#include "../../src/train/layers.c"
#include "../../src/train/rnn.c"
#include "../../src/train/attention.c"
#include "../../src/train/step.c"

#include "ops_exec.h"

/* The block's staging area for the GEMM's B (train/gemm_stage.h), in
 * its shared memory as the fit kernel's: 2,048 floats, so that small Bs
 * are staged whole and larger ones in chunks. Set before any GEMM: nvcc's
 * shared memory starts undefined. */
#define OPS_GPU_STAGE_FLOATS 2048

__global__ void ops_kernel(FsModel *m, char *arena, OpsCall *call)
{
    __shared__ __align__(16) float stage[OPS_GPU_STAGE_FLOATS];
    ops_gemm_stage(stage, OPS_GPU_STAGE_FLOATS);
    ops_exec(m, arena, call);
}

static int ops_gpu_fail(cudaError_t e, const char *what, char *why, size_t why_n)
{
    snprintf(why, why_n, "%s: %s", what, cudaGetErrorString(e));
    cudaGetLastError(); /* clear a non-sticky error */
    return -1;
}

extern "C" int ops_gpu_alloc(void **p, size_t bytes, char *why, size_t why_n)
{
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) return ops_gpu_fail(e, "cudaMalloc", why, why_n);
    e = cudaMemset(*p, 0, bytes ? bytes : 1);
    return e == cudaSuccess ? 0 : ops_gpu_fail(e, "cudaMemset", why, why_n);
}

extern "C" void ops_gpu_free(void *p)
{
    cudaFree(p);
}

extern "C" int ops_gpu_copy(void *dst, const void *src, size_t bytes, int to_device, char *why, size_t why_n)
{
    cudaError_t e = cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? 0 : ops_gpu_fail(e, "cudaMemcpy", why, why_n);
}

extern "C" int ops_gpu_exec(FsModel *d_model, char *d_arena, OpsCall *d_call, int threads, char *why, size_t why_n)
{
    ops_kernel<<<1, threads>>>(d_model, d_arena, d_call);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return ops_gpu_fail(e, "kernel launch", why, why_n);
    e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : ops_gpu_fail(e, "kernel", why, why_n);
}
