/*
 * emulate.h: private to the CUDA stand-in (runtime.c, memory.c, streams.c,
 * blocks.c). The public face is cuda_runtime.h.
 */
#ifndef FS_GPU_EMULATE_H
#define FS_GPU_EMULATE_H

#include "cuda_runtime.h"

/* The context's error state: `err` returned by the call and remembered for
 * cudaGetLastError; a sticky error is returned by every later call. */
cudaError_t fsemu_set(cudaError_t e);
cudaError_t fsemu_sticky(void);
void fsemu_make_sticky(cudaError_t e, const char *why);
/* Entry of every API call: the sticky error, or success. Checks that the
 * stand-in's devices exist (FOLDSWEEP_EMU_DEVICES). */
cudaError_t fsemu_enter(void);

/* Injected failures (FOLDSWEEP_EMU_FAIL): whether this call fails. */
int fsemu_fail_malloc(void);
int fsemu_fail_launch(unsigned long *fault_barrier);
/* Whether this call of a library stand-in or graph call fails: kind is
 * "cudnn", "cublas", "capture" or "graph", each counted on its own
 * (FOLDSWEEP_EMU_FAIL=cudnn:N fails the N-th cuDNN compute call). */
int fsemu_fail_call(const char *kind);

/* Device memory: opened for the stand-in's own accesses, closed again
 * after (nested, counted), and a check that a range lies in one allocation. */
void fsemu_memory_open(void);
void fsemu_memory_close(void);
int fsemu_device_range(const void *p, size_t n);

/* Runs one kernel launch to its end on the calling (stream) thread;
 * returns cudaSuccess or the launch's error (sticky ones already made so). */
typedef struct {
    FsEmuKernel entry;
    void *args;
    unsigned grid, block;
    size_t shared;
    unsigned long fault_barrier; /* 0, or the barrier at which to fault */
} FsEmuLaunch;
cudaError_t fsemu_run_kernel(const FsEmuLaunch *l);

/* A library stand-in's work queued on stream s (streams.c): fn(arg) on
 * the stream's thread with device memory open, fn(NULL) when a sticky
 * error stops the stream's work; arg is freed after. */
cudaError_t fsemu_stream_host(cudaStream_t s, void (*fn)(void *), void *arg);

/* Every stream idle (synchronous calls wait for this). */
void fsemu_streams_wait_all(void);

#endif
