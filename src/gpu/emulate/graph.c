/*
 * graph: stream capture into graphs, and their replay (cuda_runtime.h says
 * what is modelled). A capturing stream's works (streams.c: launches,
 * async copies and sets, library calls, event records) are appended to its
 * graph with copies of their arguments; a graph launch submits copies of
 * them in order to the launch stream, each checking at its turn that the
 * device memory it was captured with is still allocated (the bug class of
 * a workspace freed or moved under a captured graph).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"

struct FsEmuGraph {
    FsEmuWork *w;
    int n, cap;
};

struct FsEmuGraphExec {
    FsEmuWork *w;
    int n;
};

/* The captures in progress, one per capturing stream. */
typedef struct {
    cudaStream_t s;
    cudaGraph_t g;
    enum cudaStreamCaptureMode mode;
    int invalidated;
    pthread_t thread; /* that began it (thread-local mode) */
} Capture;

#define MAX_CAPTURES 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Capture caps[MAX_CAPTURES];
static int n_caps;

static Capture *find(cudaStream_t s)
{
    for (int i = 0; i < n_caps; i++)
        if (caps[i].s == s) return &caps[i];
    return NULL;
}

static void graph_free(cudaGraph_t g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) fsemu_work_free(&g->w[i]);
    free(g->w);
    free(g);
}

/* Removes c from the table; returns its graph. */
static cudaGraph_t remove_capture(Capture *c)
{
    cudaGraph_t g = c->g;
    *c = caps[--n_caps];
    return g;
}

/* ---- the pointers a work uses ------------------------------------------ */

static void add_ptr(FsEmuWork *w, const void *p)
{
    if (w->n_ptrs < FSEMU_MAX_PTRS && p) w->ptrs[w->n_ptrs++] = p;
}

/* A launch's pointers are not typed: every aligned word of its argument
 * bytes that points into a live allocation counts (pointers stored in
 * device memory that the kernel follows are not seen). */
static void find_ptrs(FsEmuWork *w)
{
    if (w->kind == FSEMU_WORK_LAUNCH)
        for (size_t o = 0; o + sizeof(void *) <= w->launch.args_bytes; o += sizeof(void *)) {
            const void *p;
            memcpy(&p, (const char *)w->launch.args + o, sizeof p);
            if (fsemu_device_alloc_id(p)) add_ptr(w, p);
        }
    if (w->kind == FSEMU_WORK_COPY) {
        if (w->copy_kind == cudaMemcpyHostToDevice || w->copy_kind == cudaMemcpyDeviceToDevice) add_ptr(w, w->dst);
        if (w->copy_kind == cudaMemcpyDeviceToHost || w->copy_kind == cudaMemcpyDeviceToDevice) add_ptr(w, w->src);
    }
    int k = 0;
    for (int i = 0; i < w->n_ptrs; i++) {
        unsigned long id = fsemu_device_alloc_id(w->ptrs[i]);
        if (id) w->ptrs[k] = w->ptrs[i], w->ids[k++] = id; /* host memory (mapped) is never freed under it */
    }
    w->n_ptrs = k;
}

cudaError_t fsemu_work_check(const FsEmuWork *w)
{
    for (int i = 0; i < w->n_ptrs; i++)
        if (fsemu_device_alloc_id(w->ptrs[i]) != w->ids[i]) {
            char why[200];
            snprintf(why, sizeof why, "graph replay: %s uses device memory %p, freed since the capture",
                     w->what ? w->what : "a node", w->ptrs[i]);
            fsemu_make_sticky(cudaErrorIllegalAddress, why);
            return cudaErrorIllegalAddress;
        }
    return cudaSuccess;
}

/* ---- capture -------------------------------------------------------------- */

/* An event wait inside a capture: on a record of the same capture it
 * orders nothing more than the stream's order does (one stream); on work
 * outside the capture it is what the runtime refuses. */
static cudaError_t take_wait(Capture *c, FsEmuWork *w)
{
    if (fsemu_event_capture(w->event) == c->g) return cudaSuccess;
    c->invalidated = 1;
    return cudaErrorStreamCaptureIsolation;
}

int fsemu_capture_take(cudaStream_t s, FsEmuWork *w, cudaError_t *e)
{
    pthread_mutex_lock(&lock);
    Capture *c = find(s);
    if (!c) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    *e = c->invalidated ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
    if (*e == cudaSuccess && w->kind == FSEMU_WORK_WAIT) *e = take_wait(c, w);
    else if (*e == cudaSuccess) {
        cudaGraph_t g = c->g;
        if (g->n == g->cap) {
            int cap = g->cap ? 2 * g->cap : 16;
            FsEmuWork *nw = realloc(g->w, sizeof *nw * (size_t)cap);
            if (!nw) *e = cudaErrorMemoryAllocation;
            else g->w = nw, g->cap = cap;
        }
        if (*e == cudaSuccess) {
            find_ptrs(w);
            w->replay = 0;
            if (w->kind == FSEMU_WORK_RECORD) fsemu_event_set_capture(w->event, g);
            g->w[g->n++] = *w; /* the graph owns it now */
            pthread_mutex_unlock(&lock);
            return 1;
        }
    }
    pthread_mutex_unlock(&lock);
    fsemu_work_free(w);
    return 1;
}

cudaError_t fsemu_capture_unsafe(const char *what)
{
    (void)what;
    int hit = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_caps; i++) {
        Capture *c = &caps[i];
        int mine = pthread_equal(c->thread, pthread_self());
        if (!c->invalidated &&
            (c->mode == cudaStreamCaptureModeGlobal || (c->mode == cudaStreamCaptureModeThreadLocal && mine)))
            c->invalidated = hit = 1;
    }
    pthread_mutex_unlock(&lock);
    return hit ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

cudaError_t fsemu_capture_sync(cudaStream_t s)
{
    int hit = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_caps; i++)
        if (!s || caps[i].s == s) caps[i].invalidated = hit = 1;
    pthread_mutex_unlock(&lock);
    return hit ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

void fsemu_capture_drop(cudaStream_t s)
{
    pthread_mutex_lock(&lock);
    Capture *c = find(s);
    cudaGraph_t g = c ? remove_capture(c) : NULL;
    pthread_mutex_unlock(&lock);
    graph_free(g);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (!s) return fsemu_set(cudaErrorStreamCaptureUnsupported); /* the legacy stream cannot capture */
    if ((unsigned)mode > cudaStreamCaptureModeRelaxed) return fsemu_set(cudaErrorInvalidValue);
    if (fsemu_fail_call("capture")) return fsemu_set(cudaErrorStreamCaptureUnsupported);
    cudaGraph_t g = calloc(1, sizeof *g);
    if (!g) return fsemu_set(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&lock);
    e = find(s) ? cudaErrorIllegalState : n_caps == MAX_CAPTURES ? cudaErrorMemoryAllocation : cudaSuccess;
    if (e == cudaSuccess) caps[n_caps++] = (Capture){s, g, mode, 0, pthread_self()};
    pthread_mutex_unlock(&lock);
    if (e != cudaSuccess) free(g);
    return fsemu_set(e);
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
    *graph = NULL;
    pthread_mutex_lock(&lock);
    Capture *c = s ? find(s) : NULL;
    int invalidated = c && c->invalidated;
    cudaGraph_t g = c ? remove_capture(c) : NULL;
    pthread_mutex_unlock(&lock);
    if (!c) return fsemu_set(cudaErrorIllegalState);
    cudaError_t e = fsemu_enter();
    if (e == cudaSuccess && invalidated) e = cudaErrorStreamCaptureInvalidated;
    if (e != cudaSuccess) {
        graph_free(g);
        return fsemu_set(e);
    }
    *graph = g;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    pthread_mutex_lock(&lock);
    Capture *c = s ? find(s) : NULL;
    *status = !c ? cudaStreamCaptureStatusNone
                 : c->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

/* ---- graphs and their executables ------------------------------------------ */

/* n copies of w into a new array (NULL: out of memory). */
static FsEmuWork *clone_all(const FsEmuWork *w, int n)
{
    FsEmuWork *c = calloc((size_t)(n ? n : 1), sizeof *c);
    for (int i = 0; c && i < n; i++)
        if (fsemu_work_clone(&c[i], &w[i]) != 0) { /* the failed one included */
            for (int k = 0; k <= i; k++) fsemu_work_free(&c[k]);
            free(c);
            c = NULL;
        }
    return c;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    /* No instantiation flag is modelled (auto-free, upload, device launch). */
    if (!exec || !graph || flags != 0) return fsemu_set(cudaErrorInvalidValue);
    cudaGraphExec_t x = calloc(1, sizeof *x);
    if (x) x->w = clone_all(graph->w, graph->n);
    if (!x || !x->w) {
        free(x);
        return fsemu_set(cudaErrorMemoryAllocation);
    }
    x->n = graph->n;
    *exec = x;
    if (getenv("FOLDSWEEP_EMU_VERBOSE")) /* a test counts them: the library tier's groups */
        fprintf(stderr, "foldsweep: CUDA stand-in: graph instantiated (%d nodes)\n", x->n);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (!exec) return fsemu_set(cudaErrorInvalidValue);
    if (fsemu_fail_call("graph")) return fsemu_set(cudaErrorLaunchOutOfResources);
    for (int i = 0; i < exec->n && e == cudaSuccess; i++) {
        FsEmuWork w;
        if (fsemu_work_clone(&w, &exec->w[i]) != 0) {
            fsemu_work_free(&w);
            return fsemu_set(cudaErrorMemoryAllocation);
        }
        w.replay = 1;
        e = fsemu_stream_submit(s, &w);
    }
    return fsemu_set(e);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    if (!exec) return fsemu_set(cudaErrorInvalidValue);
    for (int i = 0; i < exec->n; i++) fsemu_work_free(&exec->w[i]);
    free(exec->w);
    free(exec);
    return fsemu_enter();
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (!graph) return fsemu_set(cudaErrorInvalidValue);
    graph_free(graph);
    return fsemu_enter();
}
