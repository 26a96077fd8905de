/*
 * The CUDA stand-in (FOLDSWEEP_CUDA=EMULATE): the CUDA runtime calls that
 * the backend (kernels/gpu_cuda.cu, kernels/fit_kernel.cu) uses, executed
 * on the CPU, so that the GPU path runs in every test run. This header
 * takes the place of <cuda_runtime.h> for those two units only (its folder
 * is on their include path, nobody else's); the CPU trainer never sees it.
 *
 * What it models:
 *   - devices: FOLDSWEEP_EMU_DEVICES of them (default 1), all of the
 *     profile FOLDSWEEP_EMU_PROFILE names (h200, the default, or a100):
 *     name, memory (FOLDSWEEP_EMU_MEMORY=64M, say, for a smaller card),
 *     SMs (FOLDSWEEP_EMU_SMS=1, say, so that a small launch fills them),
 *     SMs, shared memory per block (default and opt-in), registers and
 *     threads per SM, compute capability (src/gpu/limits.c);
 *   - device memory: cudaMalloc'd pages are inaccessible to the host
 *     (PROT_NONE) except while the stand-in itself copies or a kernel runs,
 *     so host code that reads a device pointer crashes here as it would
 *     on a GPU; allocations beyond the profile's memory fail;
 *   - host-mapped memory (cudaHostAllocMapped): host memory whose device
 *     pointer is the same pointer;
 *   - streams: each runs its queue (kernels, async copies and sets, the
 *     library stand-ins' calls: emulate.h, fsemu_enqueue_host) on its own
 *     host thread; cudaStreamQuery / Synchronize; synchronous copies and
 *     sets wait for every blocking stream (the legacy default stream), not
 *     for those made with cudaStreamNonBlocking; what the programming
 *     guide's "Implicit Synchronization" lists between two launches
 *     (cudaMalloc, cudaHostAlloc, cudaFreeHost, cudaFree) waits for every
 *     stream; the stream-ordered allocator (cudaMallocAsync, cudaFreeAsync)
 *     for none;
 *   - events (events.c): record, query, synchronize, cudaStreamWaitEvent
 *     (the waiting stream's thread blocks until the record is reached);
 *   - graphs by stream capture (graph.c): while a stream captures, its
 *     launches, async copies and sets, cuDNN (cudnn.h) and cuBLAS calls
 *     and event records are recorded with their arguments copied at the
 *     call; EndCapture gives the graph, Instantiate an executable of its
 *     own (flags 0), Launch queues copies of the works in order. Calls a
 *     capture forbids return cudaErrorStreamCaptureUnsupported and
 *     invalidate it (EndCapture: cudaErrorStreamCaptureInvalidated):
 *     synchronising the capturing stream (cudaStreamSynchronize, Query) or
 *     the device invalidates that capture (every one); cudaMalloc,
 *     cudaFree, synchronous cudaMemcpy and cudaMemset invalidate captures
 *     in global mode and the calling thread's in thread-local mode
 *     (relaxed mode allows them). A wait inside a capture on an event
 *     recorded outside it: cudaErrorStreamCaptureIsolation. A replayed
 *     work whose device memory (a launch's pointer arguments, a copy's
 *     device side, a library call's tensors and workspace) was freed since
 *     the capture faults: a sticky illegal address, fsemu_sticky_reason
 *     naming the call;
 *   - errors: codes, cudaGetErrorString, cudaGetLastError, and sticky
 *     errors (after a kernel fault every later call returns it);
 *   - kernels: a grid of blocks, each block's threads as fibers on one host
 *     thread (blocks spread over FOLDSWEEP_EMU_WORKERS host threads, default
 *     the CPU count), __syncthreads and __syncthreads_or (a barrier that a
 *     thread of the block never reaches is a launch failure, not a hang),
 *     static and dynamic shared memory per block (a launch asking more
 *     dynamic shared memory than the function's attribute allows, or the
 *     profile's opt-in limit, fails as on a GPU), atomics, the global
 *     timer (FS_GLOBALTIMER), __threadfence_system;
 *   - injected failures, FOLDSWEEP_EMU_FAIL=WHAT:N (runtime.c): malloc:N
 *     (the N-th cudaMalloc runs out of memory), launch:N (the N-th launch
 *     is refused), fault:N:B (the N-th launch faults at its B-th barrier:
 *     an illegal address, sticky), cudnn:N (the N-th cuDNN convolution
 *     returns CUDNN_STATUS_EXECUTION_FAILED), cublas:N (the cuBLAS
 *     stand-in's N-th call), capture:N (the N-th cudaStreamBeginCapture
 *     returns cudaErrorStreamCaptureUnsupported), graph:N (the N-th
 *     cudaGraphLaunch returns cudaErrorLaunchOutOfResources, nothing
 *     queued); with FOLDSWEEP_EMU_FAIL_RANK=R only on MPI rank R.
 *
 * What it does not model: warp scheduling and divergence inside a warp,
 * memory ordering beyond the barriers (fibers of a block run one at a time,
 * so a race between two barriers cannot show up here, only a missing
 * barrier), register and local-memory limits (the build's resource check,
 * tests/cuda_resources.cmake, holds the real kernel to those), timing and
 * occupancy, several devices in one process, and anything the backend does
 * not call; of graphs: fork and join of several streams into one capture
 * (a stream outside the capture waiting on a captured record is refused
 * with cudaErrorStreamCaptureUnsupported), wrong-thread EndCapture,
 * instantiation flags, graph updates, conditional nodes, launch timing,
 * and pointers a kernel follows through device memory (only its argument
 * words are checked at replay); events record no time. What only a real
 * device can show: scripts/gpu-check.
 */
#ifndef FS_GPU_EMULATE_CUDA_RUNTIME_H
#define FS_GPU_EMULATE_CUDA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#define FS_CUDA_STANDIN 1

typedef enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureIsolation = 905
} cudaError_t;

typedef enum {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
} cudaMemcpyKind;

typedef enum { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 } cudaFuncAttribute;

#define cudaHostAllocDefault 0u
#define cudaHostAllocMapped 2u

typedef struct {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;      /* without opting in */
    size_t sharedMemPerBlockOptin; /* the most a kernel may opt in to */
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int regsPerBlock;
    int maxThreadsPerBlock;
    int maxThreadsPerMultiProcessor;
    int multiProcessorCount;
    int major, minor;
    int canMapHostMemory;
} cudaDeviceProp;

typedef struct FsEmuStream *cudaStream_t;
typedef struct FsEmuEvent *cudaEvent_t;
typedef struct FsEmuGraph *cudaGraph_t;
typedef struct FsEmuGraphExec *cudaGraphExec_t;

enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
};
enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2
};
#define cudaEventDefault 0x00u
#define cudaEventBlockingSync 0x01u
#define cudaEventDisableTiming 0x02u
#define cudaEventInterprocess 0x04u

typedef struct {
    unsigned int x, y, z;
} dim3;

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaMalloc(void **ptr, size_t bytes);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total);
cudaError_t cudaMemset(void *ptr, int value, size_t bytes);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s);
cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags);
cudaError_t cudaHostGetDevicePointer(void **dptr, void *hptr, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaStreamCreate(cudaStream_t *s);
#define cudaStreamDefault 0x00u
#define cudaStreamNonBlocking 0x01u
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t s);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t s);

/* Graphs by stream capture (graph.c) and events (events.c). */
cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags);

/* The stand-in's own: a kernel launch. `entry` runs one thread of one
 * block with the launch's argument bytes (copied at the call, as a launch
 * copies its parameters). */
typedef void (*FsEmuKernel)(const void *args);
cudaError_t fsemu_launch(FsEmuKernel entry, const void *args, size_t args_bytes, unsigned grid, unsigned block,
                         size_t shared, cudaStream_t s);
/* The device profile in use ("h200"), for messages. */
const char *fsemu_profile_name(void);
/* Why the context has its sticky error ("" if none): what a GPU would not
 * say, for tests and FOLDSWEEP_EMU_VERBOSE. */
const char *fsemu_sticky_reason(void);

/* ---- inside a kernel ---------------------------------------------------- */

extern _Thread_local dim3 fsemu_threadIdx, fsemu_blockIdx, fsemu_blockDim, fsemu_gridDim;
#define threadIdx fsemu_threadIdx
#define blockIdx fsemu_blockIdx
#define blockDim fsemu_blockDim
#define gridDim fsemu_gridDim
/* A block's static shared memory: one copy per host thread that runs
 * blocks, and a host thread runs one block at a time. */
#define __shared__ static _Thread_local
void *fsemu_dynamic_shared(void);
void fsemu_syncthreads(void);
int fsemu_syncthreads_or(int x);
uint64_t fsemu_globaltimer(void);
#define __syncthreads() fsemu_syncthreads()
#define __syncthreads_or(x) fsemu_syncthreads_or(x)
#define __threadfence_system() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define atomicAdd(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define atomicOr(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
#define atomicMax(p, v) fsemu_atomic_max((p), (v))
static inline int fsemu_atomic_max(int *p, int v)
{
    int old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
#define FS_GLOBALTIMER() fsemu_globaltimer()

/* The single source's block (train/device.h) on these fibers. */
#define FS_EMU_TID ((int)fsemu_threadIdx.x)
#define FS_EMU_NTHREADS ((int)fsemu_blockDim.x)
#define FS_EMU_SYNC() fsemu_syncthreads()
#define FS_EMU_ANY(x) fsemu_syncthreads_or(x)
/* Whether p lies in the running block's dynamic shared memory (a model's
 * weights there: kernels/fit_kernel.cu), as __isShared tells on a device. */
int fsemu_is_shared(const void *p);
#define FS_EMU_IS_SHARED(p) fsemu_is_shared(p)
/* The block's GEMM names the form of each tile's k loop and its k steps
 * (train/gemm_block.h), counted under FOLDSWEEP_EMU_VERBOSE and printed at
 * exit: which loops nvcc's code would run (a test holds a model's share). */
void fsemu_count_gemm_form(const char *form, long k);
#define FS_GEMM_FORM(form, k) fsemu_count_gemm_form((form), (k))
/* And how many of those k steps read a B staged in shared memory
 * (train/gemm_stage.h; counted once a GEMM, by its master), printed
 * beside them. */
void fsemu_count_staged(long k);
#define FS_GEMM_STAGED(k) fsemu_count_staged(k)
/* The fit kernel says, once per block (thread 0), whether the model's
 * weights train in shared memory (kernels/fit_kernel.cu); counted under
 * FOLDSWEEP_EMU_VERBOSE and printed at exit beside the forms. */
void fsemu_count_weights(int shared);
#define FS_FIT_WEIGHTS_SHARED(yes) (FS_EMU_TID == 0 ? fsemu_count_weights(yes) : (void)0)

#endif
