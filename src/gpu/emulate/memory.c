/*
 * memory: the CUDA stand-in's device memory. Each cudaMalloc is its own
 * mapping, inaccessible to the host (PROT_NONE) while no kernel runs and
 * no copy of the stand-in's is under way, so host code that dereferences
 * a device pointer faults here as it would with a GPU instead of reading
 * plausible numbers. Allocations are counted against the profile's memory.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emulate.h"

typedef struct {
    char *p;
    size_t n;      /* bytes asked for */
    size_t mapped; /* whole pages */
    unsigned long id; /* never reused: a freed and re-made allocation at the same address is another */
} Alloc;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Alloc *allocs;
static int n_allocs, cap_allocs;
static size_t used;
static unsigned long next_id;
static int open_count; /* the stand-in's accesses in progress */

static void protect_all(int prot)
{
    for (int i = 0; i < n_allocs; i++) mprotect(allocs[i].p, allocs[i].mapped, prot);
}

void fsemu_memory_open(void)
{
    pthread_mutex_lock(&lock);
    if (open_count++ == 0) protect_all(PROT_READ | PROT_WRITE);
    pthread_mutex_unlock(&lock);
}

void fsemu_memory_close(void)
{
    pthread_mutex_lock(&lock);
    if (--open_count == 0) protect_all(PROT_NONE);
    pthread_mutex_unlock(&lock);
}

static int find(const void *p)
{
    for (int i = 0; i < n_allocs; i++)
        if ((const char *)p >= allocs[i].p && (const char *)p < allocs[i].p + allocs[i].n) return i;
    return -1;
}

int fsemu_device_range(const void *p, size_t n)
{
    pthread_mutex_lock(&lock);
    int i = find(p);
    int ok = i >= 0 && n <= (size_t)(allocs[i].p + allocs[i].n - (const char *)p);
    pthread_mutex_unlock(&lock);
    return ok;
}

unsigned long fsemu_device_alloc_id(const void *p)
{
    pthread_mutex_lock(&lock);
    int i = find(p);
    unsigned long id = i >= 0 ? allocs[i].id : 0;
    pthread_mutex_unlock(&lock);
    return id;
}

static cudaError_t alloc_now(void **ptr, size_t bytes)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    if (fsemu_fail_malloc()) return fsemu_set(cudaErrorMemoryAllocation);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = bytes ? bytes : 1, mapped = (n + page - 1) / page * page;
    pthread_mutex_lock(&lock);
    if (used + n > prop.totalGlobalMem) {
        pthread_mutex_unlock(&lock);
        return fsemu_set(cudaErrorMemoryAllocation);
    }
    /* Zeroed pages, as fresh device memory often is (nothing may rely on it). */
    void *p = mmap(NULL, mapped, open_count ? PROT_READ | PROT_WRITE : PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        pthread_mutex_unlock(&lock);
        return fsemu_set(cudaErrorMemoryAllocation);
    }
    if (n_allocs == cap_allocs) {
        int cap = cap_allocs ? 2 * cap_allocs : 64;
        Alloc *a = realloc(allocs, sizeof *a * (size_t)cap);
        if (!a) {
            munmap(p, mapped);
            pthread_mutex_unlock(&lock);
            return fsemu_set(cudaErrorMemoryAllocation);
        }
        allocs = a;
        cap_allocs = cap;
    }
    allocs[n_allocs++] = (Alloc){p, n, mapped, ++next_id};
    used += n;
    pthread_mutex_unlock(&lock);
    *ptr = p;
    return cudaSuccess;
}

/* A device allocation issued between two commands of different streams
 * keeps them from running concurrently (the programming guide's
 * "Implicit Synchronization"): modelled by waiting for every stream, so
 * that a launch laid out with cudaMalloc while another kernel runs starts
 * after it here too (tests/gpu_emu: the block tier's refills). */
cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    e = fsemu_capture_unsafe("cudaMalloc");
    if (e != cudaSuccess) return fsemu_set(e);
    fsemu_streams_wait_all();
    return alloc_now(ptr, bytes);
}

/* Unmaps ptr's allocation at once (the caller has ordered it after every
 * use: cudaFree by waiting for the device, cudaFreeAsync by its stream). */
static cudaError_t free_now(void *ptr)
{
    pthread_mutex_lock(&lock);
    int i = find(ptr);
    if (i < 0 || allocs[i].p != (char *)ptr) {
        pthread_mutex_unlock(&lock);
        return cudaErrorInvalidDevicePointer;
    }
    munmap(allocs[i].p, allocs[i].mapped);
    used -= allocs[i].n;
    allocs[i] = allocs[--n_allocs];
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    if (!ptr) return fsemu_enter();
    cudaError_t e = fsemu_capture_unsafe("cudaFree");
    if (e != cudaSuccess) return fsemu_set(e);
    fsemu_streams_wait_all(); /* as cudaFree synchronises the device */
    e = free_now(ptr);
    return e != cudaSuccess ? fsemu_set(e) : fsemu_enter();
}

/* The stream-ordered allocator: the memory is made at the call (as a
 * pool's free block is handed out: usable by the stream's later work) and
 * released when the stream reaches the free. Neither waits for any
 * stream, which is the point of it: a launch may be laid out while
 * another kernel runs (the guide's implicit synchronisation lists device
 * allocations, which cudaMalloc here models by waiting). */
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t s)
{
    (void)s;
    return alloc_now(ptr, bytes);
}

static cudaError_t free_run(void *arg) { return free_now(*(void **)arg); }

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess || !ptr) return e;
    if (fsemu_device_alloc_id(ptr) == 0) return fsemu_set(cudaErrorInvalidDevicePointer);
    return fsemu_enqueue_host(s, free_run, &ptr, sizeof ptr, "cudaFreeAsync", NULL, 0);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    pthread_mutex_lock(&lock);
    *total = prop.totalGlobalMem;
    *free_bytes = prop.totalGlobalMem - used;
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

/* A copy's device side must lie inside one allocation; host memory is the
 * caller's word (as with a GPU, a bad host pointer crashes). */
static cudaError_t check_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if ((unsigned)kind > cudaMemcpyDeviceToDevice) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    if ((dst_dev && !fsemu_device_range(dst, n)) || (src_dev && !fsemu_device_range(src, n)))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t fsemu_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    cudaError_t e = check_copy(dst, src, n, kind);
    if (e != cudaSuccess || n == 0) return e;
    fsemu_memory_open();
    memmove(dst, src, n);
    fsemu_memory_close();
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    e = fsemu_capture_unsafe("cudaMemcpy");
    if (e != cudaSuccess) return fsemu_set(e);
    fsemu_streams_wait_legacy(); /* the legacy default stream waits for the blocking streams */
    e = fsemu_enter();
    if (e != cudaSuccess) return e;
    return fsemu_set(fsemu_copy(dst, src, bytes, kind));
}

cudaError_t cudaMemset(void *ptr, int value, size_t bytes)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    e = fsemu_capture_unsafe("cudaMemset");
    if (e != cudaSuccess) return fsemu_set(e);
    fsemu_streams_wait_legacy();
    if (bytes == 0) return cudaSuccess;
    if (!fsemu_device_range(ptr, bytes)) return fsemu_set(cudaErrorInvalidValue);
    fsemu_memory_open();
    memset(ptr, value, bytes);
    fsemu_memory_close();
    return cudaSuccess;
}
