/*
 * lib_kernel.cu: the GPU library tier's own kernel (#44, train/kernel.h:
 * FsLibOp), the trainer's single source built once more, in a unit of its
 * own: one op for each model of a group, one block each, on the models'
 * buffers in device memory (their hot state too: the tier has no
 * block-resident fit), with the fold data and spec copied into shared
 * memory as fit_kernel.cu does.
 *
 * Its own unit because ptxas allocates the registers of a unit's kernels
 * and the device functions they share as one program: beside this kernel
 * the fit kernel fell from 128 registers to 96 and spilled (tests/
 * cuda_resources.cmake holds fit_kernel.cu to no spills). The per-model
 * functions are renamed lib_... here (and under FOLDSWEEP_CUDA=EMULATE
 * gpu_... in fit_kernel.cu, none in the CPU library): builds of one source
 * side by side.
 */
#if defined(FS_CUDA_EMULATE)
#include <cuda_runtime.h> /* the stand-in: names the block's runtime first (train/device.h) */
#define FS_EMULATE_BLOCK 1
#endif
/* Renamed under nvcc too: nvcc emits a host-side symbol of the same
 * (mangled) name for each device function, and fit_kernel.cu's would be
 * the same names at link time. */
#define OPS_PREFIX lib_
#include "train/rename.h"

#include "train/core.h"

#include "../src/stop/stop.c"
#include "../src/train/act.c"
#include "../src/train/blocks.c"
#include "../src/train/conv.c"
#include "../src/train/dense.c"
#include "../src/train/fit.c"
#include "../src/train/gemm.c"
#include "../src/train/layers.c"
#include "../src/train/rnn.c"
#include "../src/train/attention.c"
#include "../src/train/step.c"

#if defined(FS_CUDA_EMULATE)
#define FS_LIB_KERNEL(name)                                                                              \
    static void name(FsLibLaunch a);                                                                     \
    static void name##_entry(const void *args) { name(*(const FsLibLaunch *)args); }                     \
    static void name(FsLibLaunch a)
#define FS_LIB_LAUNCH(name, grid, block, stream, args)                                                   \
    fsemu_launch(name##_entry, &(args), sizeof(args), (grid), (block), 0, (stream))
#else
#define FS_LIB_KERNEL(name) __global__ void __launch_bounds__(FS_GPU_THREADS) name(FsLibLaunch a)
#define FS_LIB_LAUNCH(name, grid, block, stream, args) (name<<<(grid), (block), 0, (stream)>>>(args), cudaGetLastError())
#endif

FS_LIB_KERNEL(fs_lib_kernel)
{
    __shared__ FsFoldData fd;
    __shared__ FsTrainSpec ts;
    const int i = blockIdx.x;
    if (threadIdx.x == 0) {
        fd = a.fit.folds[i];
        ts = a.fit.specs[i];
    }
    ops_gemm_stage(NULL, 0); /* no staging area here (train/gemm_stage.h); a barrier */
    fit_lib_op(&a.fit.models[i], &fd, &ts, &a.fit.out[i], (FsLibState *)(void *)(a.state + (size_t)i * FS_LIB_STATE_BYTES),
               &a.pub[i], &a.fit.done[i], a.op, a.layer, a.part, a.train);
}

#ifdef __cplusplus
extern "C"
#endif
    cudaError_t
    fs_lib_launch(int n, const FsLibLaunch *args, cudaStream_t stream)
{
    FsLibLaunch a = *args;
    return FS_LIB_LAUNCH(fs_lib_kernel, (unsigned)n, (unsigned)FS_GPU_THREADS, stream, a);
}
