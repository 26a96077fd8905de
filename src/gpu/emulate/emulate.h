/*
 * emulate.h: private to the CUDA stand-in (runtime.c, memory.c, streams.c,
 * blocks.c, graph.c, events.c) and its library stand-ins (cudnn.c,
 * cudnn_conv.c, the cuBLAS stand-in). The public faces are cuda_runtime.h
 * and the libraries' headers.
 */
#ifndef FS_GPU_EMULATE_H
#define FS_GPU_EMULATE_H

#include "cuda_runtime.h"

/* The context's error state: `err` returned by the call and remembered for
 * cudaGetLastError; a sticky error is returned by every later call. */
cudaError_t fsemu_set(cudaError_t e);
cudaError_t fsemu_sticky(void);
void fsemu_make_sticky(cudaError_t e, const char *why);
/* (fsemu_sticky_reason, the why of the sticky error: cuda_runtime.h.) */
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

/* The library stand-ins' multiply-adds, counted as their calls run (a
 * graph's replays too) and, under FOLDSWEEP_EMU_VERBOSE, printed at exit:
 * a test compares the work two runs' calls did. */
void fsemu_count_madds(unsigned long long n);

/* Device memory: opened for the stand-in's own accesses, closed again
 * after (nested, counted), and a check that a range lies in one allocation. */
void fsemu_memory_open(void);
void fsemu_memory_close(void);
int fsemu_device_range(const void *p, size_t n);
/* The allocation that holds p: a number never reused (a freed range made
 * again at the same address is another), or 0 where p is in none. */
unsigned long fsemu_device_alloc_id(const void *p);

/* Runs one kernel launch to its end on the calling (stream) thread;
 * returns cudaSuccess or the launch's error (sticky ones already made so). */
typedef struct {
    FsEmuKernel entry;
    void *args;
    unsigned grid, block;
    size_t shared;
    unsigned long fault_barrier; /* 0, or the barrier at which to fault */
    size_t args_bytes;           /* of args (a graph's replay copies them) */
} FsEmuLaunch;
cudaError_t fsemu_run_kernel(const FsEmuLaunch *l);


/* Every stream idle (synchronous calls wait for this). */
void fsemu_streams_wait_all(void);
/* What the legacy default stream waits for: the blocking streams. */
void fsemu_streams_wait_legacy(void);

/* ---- work on a stream, and its capture into a graph ----------------------
 *
 * Each stream runs a queue of works in order on its host thread. While a
 * stream captures (cudaStreamBeginCapture) a work submitted to it is
 * appended to the capture's graph instead, with copies of everything it
 * reads at the call (a launch's argument bytes, a host closure's argument),
 * and a graph launch submits copies of its works in order. */
typedef cudaError_t (*FsEmuHostFn)(void *arg);
typedef enum {
    FSEMU_WORK_LAUNCH, /* a kernel launch (launch.args owned) */
    FSEMU_WORK_COPY,   /* cudaMemcpyAsync */
    FSEMU_WORK_HOST,   /* fn(arg) (arg owned), device memory open around it */
    FSEMU_WORK_RECORD, /* cudaEventRecord: event reaches seq */
    FSEMU_WORK_WAIT    /* cudaStreamWaitEvent: until event reaches seq */
} FsEmuWorkKind;
#define FSEMU_MAX_PTRS 16
typedef struct FsEmuWork {
    FsEmuWorkKind kind;
    const char *what; /* for messages: "cudnnConvolutionForward" */
    FsEmuLaunch launch;
    void *dst;
    const void *src;
    size_t n;
    cudaMemcpyKind copy_kind;
    FsEmuHostFn fn;
    void *arg;
    size_t arg_bytes;
    struct FsEmuEvent *event; /* RECORD, WAIT: one reference held */
    unsigned long seq;
    /* The device pointers the work uses, as given (a host closure's) or
     * found (a launch's argument words, a copy's device side), and their
     * allocations at capture: a replay checks them (replay set). */
    int n_ptrs, replay;
    const void *ptrs[FSEMU_MAX_PTRS];
    unsigned long ids[FSEMU_MAX_PTRS];
} FsEmuWork;

/* Queues w on s (NULL: the legacy default stream), or appends it to s's
 * capture; takes w's owned parts either way (freed on failure). Returns
 * cudaErrorStreamCaptureInvalidated for an invalidated capture. */
cudaError_t fsemu_stream_submit(cudaStream_t s, FsEmuWork *w);
/* Runs w on the calling (stream) thread; frees its owned parts. */
cudaError_t fsemu_work_run(FsEmuWork *w);
void fsemu_work_free(FsEmuWork *w);
/* A copy of w with its own owned parts (0), or -1 (out of memory). */
int fsemu_work_clone(FsEmuWork *dst, const FsEmuWork *src);

/* The hook for the library stand-ins (cuDNN here, cuBLAS): queues fn on s
 * as a kernel is queued, with a copy of arg's `size` bytes, or records it
 * into s's capture. `what` names the call in messages; dev_ptrs (n_ptrs of
 * them, at most FSEMU_MAX_PTRS are checked) are the device pointers fn
 * will use, checked by a graph's replay (freed since capture: a sticky
 * illegal address naming `what`). fn runs on the stream's thread with
 * device memory open; its error becomes the stream's (as a kernel's); it
 * is skipped once the context has a sticky error. Returns cudaSuccess,
 * cudaErrorStreamCaptureInvalidated, cudaErrorMemoryAllocation or the
 * sticky error. */
cudaError_t fsemu_enqueue_host(cudaStream_t s, FsEmuHostFn fn, const void *arg, size_t size, const char *what,
                               const void *const *dev_ptrs, int n_ptrs);

/* graph.c: a stream's capture, if any. Whether s captures (then w joins
 * its graph: 1, with *e cudaSuccess or cudaErrorStreamCaptureInvalidated). */
int fsemu_capture_take(cudaStream_t s, FsEmuWork *w, cudaError_t *e);
/* A call a capture forbids (cudaMalloc, cudaFree, synchronous copies and
 * sets): every capture in global mode, and this thread's in thread-local
 * mode, is invalidated; cudaErrorStreamCaptureUnsupported if one was. */
cudaError_t fsemu_capture_unsafe(const char *what);
/* Synchronising with s (cudaStreamSynchronize, cudaStreamQuery; s NULL:
 * every stream, cudaDeviceSynchronize): s's capture (every capture) is
 * invalidated; cudaErrorStreamCaptureUnsupported if there was one. */
cudaError_t fsemu_capture_sync(cudaStream_t s);
/* cudaStreamDestroy: s's capture, if any, is dropped. */
void fsemu_capture_drop(cudaStream_t s);
/* A replayed work's pointers: cudaSuccess, or a sticky illegal address
 * (a pointer's allocation freed since the capture). */
cudaError_t fsemu_work_check(const FsEmuWork *w);

/* events.c: an event's records (seq numbers) and their completion. */
unsigned long fsemu_event_issue(struct FsEmuEvent *ev);
void fsemu_event_reach(struct FsEmuEvent *ev, unsigned long seq);
void fsemu_event_wait(struct FsEmuEvent *ev, unsigned long seq);
void fsemu_event_ref(struct FsEmuEvent *ev);
void fsemu_event_unref(struct FsEmuEvent *ev);
/* The capture an event was last recorded in (NULL: outside any). */
void fsemu_event_set_capture(struct FsEmuEvent *ev, const void *graph);
const void *fsemu_event_capture(struct FsEmuEvent *ev);

#endif
