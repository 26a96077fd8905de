/*
 * kernels/kernel_macros.h: a kernel taking one argument struct by value,
 * written once for nvcc and for the CUDA stand-in (FOLDSWEEP_CUDA=EMULATE,
 * where the .cu file is C11): the library tier's small kernels (dnn*.cu:
 * im2col, transposes, row additions). fit_kernel.cu keeps its own form of
 * the same pattern (its launch bounds and dynamic shared memory).
 *
 * FS_KERNEL_OF(name, Args, a): defines kernel `name` with parameter `Args a`.
 * FS_LAUNCH_OF(name, grid, block, stream, args): queues it on stream with
 *   no dynamic shared memory; evaluates to the launch's cudaError_t.
 * FS_GLOBAL_ID, FS_GLOBAL_THREADS: this thread's index in the grid and the
 *   grid's thread count (grid-stride loops).
 */
#ifndef FS_KERNELS_KERNEL_MACROS_H
#define FS_KERNELS_KERNEL_MACROS_H

#if defined(FS_CUDA_EMULATE)
#define FS_KERNEL_OF(name, Args, a)                                                                      \
    static void name(Args a);                                                                            \
    static void name##_entry(const void *args_) { name(*(const Args *)args_); }                          \
    static void name(Args a)
#define FS_LAUNCH_OF(name, grid, block, stream, args)                                                    \
    fsemu_launch(name##_entry, &(args), sizeof(args), (grid), (block), 0, (stream))
#else
#define FS_KERNEL_OF(name, Args, a) static __global__ void name(Args a)
#define FS_LAUNCH_OF(name, grid, block, stream, args) (name<<<(grid), (block), 0, (stream)>>>(args), cudaGetLastError())
#endif

#define FS_GLOBAL_ID ((long)blockIdx.x * blockDim.x + threadIdx.x)
#define FS_GLOBAL_THREADS ((long)gridDim.x * blockDim.x)

#endif
