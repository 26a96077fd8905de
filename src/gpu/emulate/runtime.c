/*
 * runtime: the CUDA stand-in's devices, errors and injected failures, host
 * memory, function attributes and kernel launches (their checks; the run
 * itself is blocks.c's, queued on a stream by streams.c). See
 * cuda_runtime.h for what is modelled and what is not.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"
#include "gpu/gpu.h"
#include "train/kernel.h" /* FS_GPU_STATIC_SHARED */

/* ---- the library stand-ins' work ---------------------------------------- */

static _Atomic unsigned long long madds;
static pthread_once_t madds_once = PTHREAD_ONCE_INIT;

static void madds_report(void)
{
    fprintf(stderr, "foldsweep: CUDA stand-in: the library calls did %llu multiply-adds\n",
            (unsigned long long)madds);
}

static void madds_arm(void)
{
    if (getenv("FOLDSWEEP_EMU_VERBOSE")) atexit(madds_report);
}

void fsemu_count_madds(unsigned long long n)
{
    pthread_once(&madds_once, madds_arm);
    madds += n;
}

/* The block GEMM's k steps by the form of their loop (FS_GEMM_FORM): a
 * few names, string literals of gemm_block.h (one copy in each unit that
 * builds it: the fit kernel's and the library tier's), found by name. */
static struct {
    const char *_Atomic name;
    _Atomic unsigned long long k;
} forms[8];
static pthread_mutex_t forms_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t forms_once = PTHREAD_ONCE_INIT;
static int forms_on;

static _Atomic unsigned long long weights_shared, weights_all; /* fsemu_count_weights */
static _Atomic unsigned long long k_staged;                    /* fsemu_count_staged */

static void forms_report(void)
{
    unsigned long long all = 0;
    for (int i = 0; i < 8 && forms[i].name; i++) all += forms[i].k;
    fprintf(stderr, "foldsweep: CUDA stand-in: the block's GEMM k steps by loop:");
    for (int i = 0; i < 8 && forms[i].name; i++)
        fprintf(stderr, " %s %llu (%.1f%%)", forms[i].name, (unsigned long long)forms[i].k,
                all ? 100.0 * (double)forms[i].k / (double)all : 0.0);
    fprintf(stderr, "\n");
    /* A subset of the forms' k steps: those staged whole run gemm_walk's
     * forms, those in chunks "staged" and "staged-masked". */
    fprintf(stderr, "foldsweep: CUDA stand-in: k steps with B staged in shared memory: %llu of %llu (%.1f%%)\n",
            (unsigned long long)k_staged, all, all ? 100.0 * (double)k_staged / (double)all : 0.0);
    fprintf(stderr, "foldsweep: CUDA stand-in: models whose weights trained in shared memory: %llu of %llu\n",
            (unsigned long long)weights_shared, (unsigned long long)weights_all);
}

static void forms_arm(void)
{
    forms_on = getenv("FOLDSWEEP_EMU_VERBOSE") != NULL;
    if (forms_on) atexit(forms_report);
}

void fsemu_count_gemm_form(const char *form, long k)
{
    pthread_once(&forms_once, forms_arm);
    if (!forms_on || k <= 0) return;
    int i = 0;
    while (i < 8 && forms[i].name && strcmp(forms[i].name, form) != 0) i++;
    if (i < 8 && !forms[i].name) {
        pthread_mutex_lock(&forms_lock);
        while (i < 8 && forms[i].name && strcmp(forms[i].name, form) != 0) i++;
        if (i < 8 && !forms[i].name) forms[i].name = form;
        pthread_mutex_unlock(&forms_lock);
    }
    if (i < 8) forms[i].k += (unsigned long long)k;
}

void fsemu_count_staged(long k)
{
    pthread_once(&forms_once, forms_arm);
    if (forms_on && k > 0) k_staged += (unsigned long long)k;
}

void fsemu_count_weights(int shared)
{
    pthread_once(&forms_once, forms_arm);
    if (!forms_on) return;
    weights_all++;
    if (shared) weights_shared++;
}

/* ---- devices -------------------------------------------------------------- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int n_devices;
static FsGpuLimits prof;
static const char *prof_name = "h200";
static int bad_env; /* FOLDSWEEP_EMU_PROFILE or _DEVICES could not be read */

static void setup(void)
{
    const char *p = getenv("FOLDSWEEP_EMU_PROFILE");
    const char *d = getenv("FOLDSWEEP_EMU_DEVICES");
    if (p && *p) prof_name = p;
    if (gpu_profile(prof_name, &prof) != 0) {
        fprintf(stderr, "foldsweep: FOLDSWEEP_EMU_PROFILE=%s: expected one of %s\n", p, gpu_profile_names());
        bad_env = 1;
    }
    const char *mem = getenv("FOLDSWEEP_EMU_MEMORY");
    if (mem && *mem) {
        char *end;
        double v = strtod(mem, &end);
        double unit = !strcmp(end, "") ? 1 : !strcmp(end, "K") ? 1024.0 : !strcmp(end, "M") ? 1048576.0
                                        : !strcmp(end, "G") ? 1073741824.0 : -1;
        if (!(v > 0) || unit < 0 || v * unit > (double)prof.memory) {
            fprintf(stderr, "foldsweep: FOLDSWEEP_EMU_MEMORY=%s: expected bytes (a number, K, M or G) up to the "
                            "profile's %zu\n", mem, prof.memory);
            bad_env = 1;
        } else {
            prof.memory = (size_t)(v * unit);
        }
    }
    /* Fewer SMs than the profile's: a launch that fills the device's
     * resident blocks (SMs x FS_GPU_MIN_BLOCKS) in a small test. */
    const char *sms = getenv("FOLDSWEEP_EMU_SMS");
    if (sms && *sms) {
        char *end;
        long v = strtol(sms, &end, 10);
        if (*end || v < 1 || v > prof.sms) {
            fprintf(stderr, "foldsweep: FOLDSWEEP_EMU_SMS=%s: expected a count from 1 to the profile's %d\n", sms,
                    prof.sms);
            bad_env = 1;
        } else {
            prof.sms = (int)v;
        }
    }
    n_devices = 1;
    if (d && *d) {
        char *end;
        long v = strtol(d, &end, 10);
        if (*end || v < 0 || v > 16) {
            fprintf(stderr, "foldsweep: FOLDSWEEP_EMU_DEVICES=%s: expected a count from 0 to 16\n", d);
            bad_env = 1;
        } else {
            n_devices = (int)v;
        }
    }
    if (bad_env) n_devices = 0;
}

const char *fsemu_profile_name(void)
{
    pthread_once(&once, setup);
    return prof_name;
}

/* ---- errors ------------------------------------------------------------- */

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaError_t last_err, sticky_err;
static char sticky_why[256];
static int current = -1;

cudaError_t fsemu_set(cudaError_t e)
{
    if (e != cudaSuccess) {
        pthread_mutex_lock(&err_lock);
        last_err = e;
        pthread_mutex_unlock(&err_lock);
    }
    return e;
}

cudaError_t fsemu_sticky(void)
{
    pthread_mutex_lock(&err_lock);
    cudaError_t e = sticky_err;
    pthread_mutex_unlock(&err_lock);
    return e;
}

void fsemu_make_sticky(cudaError_t e, const char *why)
{
    pthread_mutex_lock(&err_lock);
    if (sticky_err == cudaSuccess) {
        sticky_err = e;
        last_err = e;
        snprintf(sticky_why, sizeof sticky_why, "%s", why);
        if (getenv("FOLDSWEEP_EMU_VERBOSE")) fprintf(stderr, "foldsweep: CUDA stand-in: %s\n", why);
    }
    pthread_mutex_unlock(&err_lock);
}

const char *fsemu_sticky_reason(void)
{
    pthread_mutex_lock(&err_lock);
    const char *why = sticky_err != cudaSuccess ? sticky_why : ""; /* set once, never changed after */
    pthread_mutex_unlock(&err_lock);
    return why;
}

cudaError_t fsemu_enter(void)
{
    pthread_once(&once, setup);
    if (n_devices == 0) return fsemu_set(cudaErrorNoDevice);
    return fsemu_set(fsemu_sticky());
}

cudaError_t cudaGetLastError(void)
{
    pthread_mutex_lock(&err_lock);
    cudaError_t e = last_err;
    last_err = sticky_err; /* a sticky error is never cleared */
    pthread_mutex_unlock(&err_lock);
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    pthread_mutex_lock(&err_lock);
    cudaError_t e = last_err;
    pthread_mutex_unlock(&err_lock);
    return e;
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureIsolation: return "dependency created on uncaptured work in another stream";
    }
    return "unrecognized error code";
}

/* ---- injected failures -------------------------------------------------- */

/* FOLDSWEEP_EMU_FAIL=WHAT:N[:B]: the N-th call of that kind (1-based,
 * counted over the process) fails. Read once. */
static pthread_once_t fail_once = PTHREAD_ONCE_INIT;
static char fail_what[16];
static unsigned long fail_n, fail_b, n_mallocs, n_launches;
/* The library stand-ins' kinds (cudnn.h, cublas_v2.h) and the graph
 * calls: fsemu_fail_call counts each kind's calls. */
static const char *const call_kinds[] = {"cudnn", "cublas", "capture", "graph"};
#define N_CALL_KINDS (int)(sizeof call_kinds / sizeof call_kinds[0])
static unsigned long n_calls[N_CALL_KINDS];

/* This process's rank under a launcher, or -1. */
static long launcher_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return strtol(v, NULL, 10);
    }
    return -1;
}

static void fail_setup(void)
{
    const char *v = getenv("FOLDSWEEP_EMU_FAIL");
    const char *r = getenv("FOLDSWEEP_EMU_FAIL_RANK"); /* only that MPI rank's device fails */
    if (!v || !*v) return;
    if (r && *r && strtol(r, NULL, 10) != launcher_rank()) return;
    char what[16] = "";
    unsigned long n = 0, b = 0;
    int got = sscanf(v, "%15[a-z]:%lu:%lu", what, &n, &b);
    int counted = 0; /* a kind of call counted by fsemu_fail_call */
    for (int i = 0; i < N_CALL_KINDS; i++) counted |= !strcmp(what, call_kinds[i]);
    int ok = got >= 2 && n >= 1 &&
             ((!strcmp(what, "malloc") && got == 2) || (!strcmp(what, "launch") && got == 2) ||
              (counted && got == 2) || (!strcmp(what, "fault") && got == 3 && b >= 1));
    if (!ok) {
        fprintf(stderr,
                "foldsweep: FOLDSWEEP_EMU_FAIL=%s: expected malloc:N, launch:N, fault:N:B, cudnn:N, cublas:N, "
                "capture:N or graph:N; ignored\n",
                v);
        return;
    }
    memcpy(fail_what, what, sizeof fail_what);
    fail_n = n;
    fail_b = b;
}

int fsemu_fail_malloc(void)
{
    pthread_once(&fail_once, fail_setup);
    unsigned long k = __atomic_add_fetch(&n_mallocs, 1, __ATOMIC_RELAXED);
    return !strcmp(fail_what, "malloc") && k == fail_n;
}

int fsemu_fail_launch(unsigned long *fault_barrier)
{
    pthread_once(&fail_once, fail_setup);
    unsigned long k = __atomic_add_fetch(&n_launches, 1, __ATOMIC_RELAXED);
    *fault_barrier = !strcmp(fail_what, "fault") && k == fail_n ? fail_b : 0;
    return !strcmp(fail_what, "launch") && k == fail_n;
}

int fsemu_fail_call(const char *kind)
{
    pthread_once(&fail_once, fail_setup);
    for (int i = 0; i < N_CALL_KINDS; i++)
        if (!strcmp(kind, call_kinds[i])) {
            unsigned long k = __atomic_add_fetch(&n_calls[i], 1, __ATOMIC_RELAXED);
            return !strcmp(fail_what, kind) && k == fail_n;
        }
    return 0;
}

/* ---- devices ------------------------------------------------------------ */

cudaError_t cudaGetDeviceCount(int *count)
{
    pthread_once(&once, setup);
    *count = n_devices;
    return n_devices ? cudaSuccess : fsemu_set(cudaErrorNoDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess && e != cudaErrorNoDevice) return e;
    if (device < 0 || device >= n_devices) return fsemu_set(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s (CUDA stand-in)", prof.name);
    p->totalGlobalMem = prof.memory;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = prof.shared_optin;
    p->sharedMemPerMultiprocessor = prof.shared_per_sm;
    p->regsPerMultiprocessor = prof.regs_per_sm;
    p->regsPerBlock = 65536;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsPerMultiProcessor = prof.threads_per_sm;
    p->multiProcessorCount = prof.sms;
    p->major = prof.major;
    p->minor = prof.minor;
    p->canMapHostMemory = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (device < 0 || device >= n_devices) return fsemu_set(cudaErrorInvalidDevice);
    current = device;
    return cudaSuccess;
}

/* ---- host memory: mapped pages are host pages, the same pointer --------- */

cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (flags & ~cudaHostAllocMapped) return fsemu_set(cudaErrorInvalidValue);
    fsemu_streams_wait_all(); /* page-locking: the guide's implicit synchronisation (cuda_runtime.h) */
    *ptr = calloc(1, bytes ? bytes : 1);
    return *ptr ? cudaSuccess : fsemu_set(cudaErrorMemoryAllocation);
}

cudaError_t cudaHostGetDevicePointer(void **dptr, void *hptr, unsigned int flags)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (flags != 0 || !hptr) return fsemu_set(cudaErrorInvalidValue);
    *dptr = hptr;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr)
{
    fsemu_streams_wait_all(); /* as cudaFree */
    free(ptr);
    return fsemu_enter();
}

/* ---- kernels ------------------------------------------------------------ */

/* The dynamic shared memory a kernel may use (cudaFuncSetAttribute): one
 * kernel here, so a short list. */
static struct {
    const void *fn;
    int max_shared;
} attrs[8];
static int n_attrs;
static pthread_mutex_t attr_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t max_shared_of(const void *fn)
{
    size_t v = 48 * 1024;
    pthread_mutex_lock(&attr_lock);
    for (int i = 0; i < n_attrs; i++)
        if (attrs[i].fn == fn) v = (size_t)attrs[i].max_shared;
    pthread_mutex_unlock(&attr_lock);
    return v;
}

cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    /* A device counts the kernel's static shared memory against the limit
     * too: the stand-in takes the fit kernel's cap (FS_GPU_STATIC_SHARED). */
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
        (size_t)value + FS_GPU_STATIC_SHARED > prof.shared_optin)
        return fsemu_set(cudaErrorInvalidValue);
    pthread_mutex_lock(&attr_lock);
    int i = 0;
    while (i < n_attrs && attrs[i].fn != func) i++;
    if (i < (int)(sizeof attrs / sizeof attrs[0])) {
        attrs[i].fn = func;
        attrs[i].max_shared = value;
        if (i == n_attrs) n_attrs++;
    }
    pthread_mutex_unlock(&attr_lock);
    return cudaSuccess;
}

/* streams.c: queues a launch on s (or the default stream). */
cudaError_t fsemu_stream_launch(cudaStream_t s, const FsEmuLaunch *l);

cudaError_t fsemu_launch(FsEmuKernel entry, const void *args, size_t args_bytes, unsigned grid, unsigned block,
                         size_t shared, cudaStream_t s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (current < 0) current = 0; /* the runtime's implicit device 0 */
    /* What a GPU refuses at launch: an empty or oversized grid or block,
     * more dynamic shared memory than the kernel opted in to. */
    if (grid == 0 || grid > 2147483647u || block == 0 || block > 1024 || shared > max_shared_of((const void *)entry))
        return fsemu_set(cudaErrorInvalidValue);
    FsEmuLaunch l = {entry, malloc(args_bytes ? args_bytes : 1), grid, block, shared, 0, args_bytes};
    if (!l.args) return fsemu_set(cudaErrorMemoryAllocation);
    memcpy(l.args, args, args_bytes);
    if (fsemu_fail_launch(&l.fault_barrier)) {
        free(l.args);
        return fsemu_set(cudaErrorLaunchOutOfResources);
    }
    if (getenv("FOLDSWEEP_EMU_VERBOSE"))
        fprintf(stderr, "foldsweep: CUDA stand-in: launch of %u blocks x %u threads, %zu bytes of shared memory each\n",
                grid, block, shared);
    return fsemu_set(fsemu_stream_launch(s, &l)); /* which owns l.args now, failed or not */
}
