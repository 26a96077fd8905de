/*
 * train/device.h: the single-source vocabulary of the trainer (design.md,
 * "The trainer"). The per-model code (src/train's layer ops, step and fit,
 * and stop/stop.c) is written once with these macros and built three ways:
 *
 *   C compiler       one thread runs a model: loops are plain loops, a
 *                    barrier is nothing, the master is that thread
 *   nvcc             one thread block runs a model: loops stride over the
 *                    block's threads, barriers are __syncthreads
 *   FS_EMULATE_BLOCK a block emulated on the CPU: by pthreads in the tests
 *                    (tests/test_block.c, tests/reference), so that races
 *                    and non-uniform branches show up without a GPU; by
 *                    the CUDA stand-in's fibers in the kernel of the
 *                    FOLDSWEEP_CUDA=EMULATE build (src/gpu/emulate)
 *
 * The rules the single source keeps:
 *   - Every thread of a block runs the same code with the same values, so
 *     every branch is uniform; FS_SYNC and FS_SYNC_ANY are barriers and
 *     must be reached by every thread.
 *   - FS_PARFOR splits a loop's iterations among the threads; each
 *     iteration writes its own outputs. Results read after the loop need an
 *     FS_SYNC first.
 *   - Shared state is written by the master (FS_MASTER) or inside FS_PARFOR.
 *   - One thread per model where the code relies on it: a path that walks a
 *     whole range without FS_PARFOR (the GCC vector forms under FS_SIMD in
 *     simd.h, gemm.c, act.c, layers.c, dense.c) is compiled only where
 *     FS_ONE_THREAD is 1, the plain CPU build. Idle pool threads that help
 *     a model there (team.h) share only the loops written for it
 *     (team_for), each output computed whole by one thread.
 *
 * Lower modules whose small functions the kernel calls (util's random
 * stream, stop's rule) mark them FS_HOST_DEVICE (util.h) instead: callable
 * from both sides, with no block behind them.
 */
#ifndef FS_TRAIN_DEVICE_H
#define FS_TRAIN_DEVICE_H

/* FS_DEVICE: a function of the single source (__device__ under nvcc).
 * FS_PARFOR(i, n): for i in [0, n), this thread's share: i = FS_THREAD_ID,
 *   then steps of FS_THREADS (a loop that steps its own indices uses them).
 * FS_SYNC(): a barrier across the block.
 * FS_SYNC_ANY(x): a barrier that also agrees on x: nonzero on every thread
 *   if x is nonzero on any (a flag the host may raise between two reads).
 * FS_MASTER { ... }: the block runs on the master thread only. A for
 *   statement, not an if, so an `else` after it does not compile; a
 *   `break` or `continue` inside it leaves only the block (none is used).
 * FS_ONE_THREAD: 1 where one thread runs a model's step. */
#if defined(__CUDACC__)
#define FS_DEVICE __device__
#define FS_PARFOR(i, n) for (long i = threadIdx.x; i < (long)(n); i += blockDim.x)
#define FS_THREAD_ID ((long)threadIdx.x)
#define FS_THREADS ((long)blockDim.x)
#define FS_SYNC() __syncthreads()
#define FS_SYNC_ANY(x) __syncthreads_or((x) ? 1 : 0)
#define FS_MASTER for (int fs_master_ = threadIdx.x == 0; fs_master_; fs_master_ = 0)
#define FS_RESTRICT __restrict__
#define FS_ONE_THREAD 0
#elif defined(FS_EMULATE_BLOCK)
/* The emulated block's runtime: the tests' pthreads (tests/emu_block.h),
 * unless the unit names another first: the CUDA stand-in's fibers
 * (src/gpu/emulate/cuda_runtime.h, for kernels/fit_kernel.cu under
 * FOLDSWEEP_CUDA=EMULATE) define FS_EMU_TID and the rest themselves. */
#ifndef FS_EMU_TID
#include <pthread.h>
extern _Thread_local int fs_emu_tid;
extern int fs_emu_nthreads;
extern pthread_barrier_t fs_emu_barrier;
int fs_emu_any(int x); /* tests/emu_block.h */
#define FS_EMU_TID fs_emu_tid
#define FS_EMU_NTHREADS fs_emu_nthreads
#define FS_EMU_SYNC() pthread_barrier_wait(&fs_emu_barrier)
#define FS_EMU_ANY(x) fs_emu_any(x)
#endif
#define FS_DEVICE
#define FS_PARFOR(i, n) for (long i = FS_EMU_TID; i < (long)(n); i += FS_EMU_NTHREADS)
#define FS_THREAD_ID ((long)FS_EMU_TID)
#define FS_THREADS ((long)FS_EMU_NTHREADS)
#define FS_SYNC() FS_EMU_SYNC()
#define FS_SYNC_ANY(x) FS_EMU_ANY((x) ? 1 : 0)
#define FS_MASTER for (int fs_master_ = FS_EMU_TID == 0; fs_master_; fs_master_ = 0)
#define FS_RESTRICT restrict
#define FS_ONE_THREAD 0
#else
#define FS_DEVICE
#define FS_PARFOR(i, n) for (long i = 0; i < (long)(n); i++)
#define FS_THREAD_ID 0L
#define FS_THREADS 1L
#define FS_SYNC() ((void)0)
#define FS_SYNC_ANY(x) (x)
#define FS_MASTER for (int fs_master_ = 1; fs_master_; fs_master_ = 0)
#define FS_RESTRICT restrict
#define FS_ONE_THREAD 1
#endif

/* FS_IS_SHARED(p): whether p points into the block's shared memory
 * (nvcc: __isShared; the CUDA stand-in: its block's dynamic shared memory,
 * FS_EMU_IS_SHARED; elsewhere there is none). */
#if defined(__CUDACC__)
#define FS_IS_SHARED(p) __isShared((const void *)(p))
#elif defined(FS_EMU_IS_SHARED)
#define FS_IS_SHARED(p) FS_EMU_IS_SHARED(p)
#else
#define FS_IS_SHARED(p) 0
#endif

/* FS_NOINLINE: a function of the single source that nvcc compiles as a
 * call of its own rather than inline into its caller (nothing elsewhere).
 * The kernel is held to FS_GPU_THREADS x FS_GPU_MIN_BLOCKS (kernel.h), at
 * most 128 registers a thread, and ptxas allocates the whole kernel as one
 * program: a function's registers and the values its callers keep across
 * the call share that budget, so what counts is their sum down the deepest
 * chain of calls (the fit, a step, a layer, the GEMM's tile). A call of its
 * own keeps a callee's loop temporaries out of its caller's count and a
 * caller's live state out of the callee's inner loops, where a spill costs
 * every iteration. */
#if defined(__CUDACC__)
#define FS_NOINLINE __noinline__
#else
#define FS_NOINLINE
#endif

/* FS_FMA(a, b, c): a * b + c rounded once, written out wherever the CPU
 * path and the block's path compute the same sum in different code (the
 * GEMM tiles, the dense row gradient). The C build turns off the
 * compiler's own fusing (-ffp-contract=off, CMakeLists.txt): which
 * multiply-adds a compiler fused differed between gcc 12 and 13 in the
 * vector tiles and the block's masked loops, so the CPU and the stand-in
 * were bitwise equal on one compiler and not on another. Now a fused
 * multiply-add is in the source or nowhere. Without hardware FMA (a build
 * for an older -march) both paths multiply and add, alike. nvcc fuses as
 * it likes: the GPU matches the CPU within tolerances, not bitwise. */
#if defined(__CUDACC__)
#define FS_FMA(a, b, c) fmaf((a), (b), (c))
#elif defined(__FMA__)
#define FS_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define FS_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* FS_IN_MEMORY(p): the local object *p lives in memory, and nvcc reads
 * it afresh after this point (an empty asm that takes its address and
 * clobbers memory; nothing elsewhere). For values a function keeps across
 * its calls or across a GEMM's k loop, which would otherwise hold
 * registers down the whole chain below (FS_NOINLINE): each use is then a
 * load from the thread's local memory, cached. */
#if defined(__CUDACC__)
#define FS_IN_MEMORY(p) asm volatile("" : : "l"(p) : "memory")
#else
#define FS_IN_MEMORY(p) ((void)(p))
#endif

#endif
