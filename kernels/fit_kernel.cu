/*
 * fit_kernel.cu: the single-source trainer built for the GPU. The per-model
 * code in src/train (layers, step, fit) and src/stop is compiled here by
 * nvcc exactly as the C compiler builds it for the CPU; FS_PARFOR becomes a
 * block-strided loop and FS_SYNC a barrier (train/device.h), so one thread
 * block trains one (trial, fold) model through all of its epochs.
 * kernels/gpu_cuda.cu (the CUDA backend's host side) lays out the models
 * and calls fs_fit_launch.
 *
 * Under FOLDSWEEP_CUDA=EMULATE the C compiler builds this same file against
 * the CUDA stand-in (src/gpu/emulate/cuda_runtime.h): the block's threads
 * are fibers, and the per-model functions are renamed (gpu_...) beside the
 * library's CPU build of the same files. The kernel and its one launch are
 * written through the FS_KERNEL and FS_LAUNCH macros below, so the two
 * builds share every line that matters.
 */
#if defined(FS_CUDA_EMULATE)
#include <cuda_runtime.h> /* the stand-in: names the block's runtime first (train/device.h) */
#define FS_EMULATE_BLOCK 1
#define OPS_PREFIX gpu_
#include "train/rename.h"
#endif

#include "train/core.h"

/* The block tier trains no chain model (gpu/limits.c sends them all to the
 * library tier), so it leaves out attention, whose passes would raise the
 * registers of every function above them in the call graph (layer_backward,
 * step_backward, the kernel) past the launcher's budget
 * (tests/cuda_resources.cmake). */
#define FS_NO_ATTENTION 1

#include "../src/stop/stop.c"
#include "../src/train/act.c"
#include "../src/train/blocks.c"
#include "../src/train/conv.c"
#include "../src/train/dense.c"
#include "../src/train/fit.c"
#include "../src/train/gemm.c"
#include "../src/train/layers.c"
#include "../src/train/rnn.c"
#include "../src/train/step.c"

/* FS_KERNEL(name): a kernel taking one FsFitLaunch by value. nvcc: a
 * __global__ function held to FS_GPU_THREADS threads and FS_GPU_MIN_BLOCKS
 * blocks per SM (the register budget); the stand-in: a host function, and
 * name_entry, which runs it on the launch's copy of the arguments.
 * FS_LAUNCH(name, grid, block, shared, stream, args): the launch; returns
 * its error. FS_KERNEL_FN(name): the function, for cudaFuncSetAttribute.
 * FS_DYNAMIC_SHARED(name): the block's dynamic shared memory. */
#if defined(FS_CUDA_EMULATE)
#define FS_KERNEL(name)                                                                                  \
    static void name(FsFitLaunch a);                                                                     \
    static void name##_entry(const void *args) { name(*(const FsFitLaunch *)args); }                     \
    static void name(FsFitLaunch a)
#define FS_KERNEL_FN(name) ((const void *)name##_entry)
#define FS_LAUNCH(name, grid, block, shared, stream, args)                                               \
    fsemu_launch(name##_entry, &(args), sizeof(args), (grid), (block), (shared), (stream))
#define FS_DYNAMIC_SHARED(name) char *name = (char *)fsemu_dynamic_shared()
#else
#define FS_KERNEL(name) __global__ void __launch_bounds__(FS_GPU_THREADS, FS_GPU_MIN_BLOCKS) name(FsFitLaunch a)
#define FS_KERNEL_FN(name) ((const void *)name)
#define FS_LAUNCH(name, grid, block, shared, stream, args)                                               \
    (name<<<(grid), (block), (shared), (stream)>>>(args), cudaGetLastError())
#define FS_DYNAMIC_SHARED(name) extern __shared__ __align__(16) char name[] /* the weights' float4 loads */
#endif
/* FS_FIT_WEIGHTS_SHARED(yes): the stand-in counts the blocks whose
 * weights train in shared memory (printed under FOLDSWEEP_EMU_VERBOSE, held
 * by a test); nothing on nvcc. */
#ifndef FS_FIT_WEIGHTS_SHARED
#define FS_FIT_WEIGHTS_SHARED(yes) ((void)(yes))
#endif

/* One block per model: models[blockIdx.x] with its fold data and spec. The
 * model's description, fold data and spec are copied into shared memory
 * (their addresses are then constants that take no registers down the
 * calls, under the register budget of __launch_bounds__) and its hot state (the
 * batch's codes, labels, losses, predictions and the reduction partials,
 * core_model_bind_hot) bound to the block's dynamic shared memory: every
 * step reads those many times. So are its weights, after the hot state,
 * where the host has sized the launch for every model's
 * (core_model_shared_bytes; kernels/gpu_launch.cu, launch_shared): copied
 * in before the fit and back to the model's buffer after it, where the
 * host reads them; the same values, so the same bits. What the launch's
 * dynamic shared memory holds past the model's is the block's staging area
 * for the GEMM's B (train/gemm_stage.h: ops_gemm_stage). */
/* The block's model, fold data and spec into shared memory, a word a
 * thread: by the master alone, struct copies, the kernel's entry spilled
 * on sm_80 (tests/cuda_resources.cmake). */
FS_DEVICE static void kernel_copy_words(void *dst, const void *src, size_t bytes)
{
    unsigned *d = (unsigned *)dst;
    const unsigned *s = (const unsigned *)src;
    FS_PARFOR(k, bytes / sizeof(unsigned)) d[k] = s[k];
}

FS_KERNEL(fs_fit_kernel)
{
    FS_DYNAMIC_SHARED(hot);
    __shared__ FsFitShared sh;
    const int i = blockIdx.x;
    kernel_copy_words(&sh.m, &a.models[i], sizeof sh.m);
    kernel_copy_words(&sh.fd, &a.folds[i], sizeof sh.fd);
    kernel_copy_words(&sh.ts, &a.specs[i], sizeof sh.ts);
    __syncthreads();
    if (threadIdx.x == 0) core_model_bind_hot(&sh.m, sh.m.net, hot);
    __syncthreads();
    if (a.weights_shared) {
        float *const in_shared = (float *)(void *)(hot + core_model_hot_bytes(sh.m.net));
        copy_floats(in_shared, sh.m.w, sh.m.net->n_params + sh.m.net->n_state);
        if (threadIdx.x == 0) sh.w_global = sh.m.w, sh.m.w = in_shared;
    } else if (threadIdx.x == 0) {
        sh.w_global = NULL;
    }
    __syncthreads();
    {
        const size_t used = core_model_block_bytes(sh.m.net, a.weights_shared);
        const int room = used < a.shared;
        ops_gemm_stage(room ? (float *)(void *)(hot + used) : NULL, room ? (long)((a.shared - used) / sizeof(float)) : 0);
    }
    FS_FIT_WEIGHTS_SHARED(sh.w_global != NULL);
    fit_model(&sh.m, &sh.fd, &sh.ts, &a.out[i]);
    if (sh.w_global) {
        __syncthreads();
        copy_floats(sh.w_global, sh.m.w, sh.m.net->n_params + sh.m.net->n_state);
    }
    /* Every thread's writes of the result and weights reach memory before
     * the flag tells the host to copy them (gpu_cuda.cu: launch_watch). */
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) ((volatile int *)a.done)[i] = 1;
}

/* The launch, for the host side (kernels/gpu_cuda.cu) in another unit:
 * declared in train/kernel.h, the header the two share. Dynamic shared
 * memory beyond the default 48 KiB needs the kernel's consent first. */
#ifdef __cplusplus
extern "C"
#endif
    cudaError_t
    fs_fit_launch(int n, int threads, size_t shared, const FsFitLaunch *args, cudaStream_t stream)
{
    cudaError_t e = cudaFuncSetAttribute(FS_KERNEL_FN(fs_fit_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)shared);
    if (e != cudaSuccess) return e;
    FsFitLaunch a = *args;
    return FS_LAUNCH(fs_fit_kernel, (unsigned)n, (unsigned)threads, shared, stream, a);
}
