/*
 * streams: each stream of the CUDA stand-in is a host thread running its
 * queue in order (kernel launches, async copies and sets, the library
 * stand-ins' calls, event records and waits), so the host side polls,
 * sleeps and cancels exactly as it would against a GPU. A stream whose
 * work failed records the error for its next query or synchronisation.
 * A capturing stream's works go to its graph instead (graph.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"

cudaError_t fsemu_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind); /* memory.c */

typedef struct Op {
    struct Op *next;
    FsEmuWork w;
} Op;

struct FsEmuStream {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    Op *head, *tail;
    int busy;          /* an op is running */
    int quit;
    int nonblocking;   /* cudaStreamNonBlocking: the legacy stream does not wait for it */
    cudaError_t error; /* the first failure since the last query */
    struct FsEmuStream *next_stream;
};

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct FsEmuStream *all;
static struct FsEmuStream *default_stream;

/* ---- works ---------------------------------------------------------------- */

void fsemu_work_free(FsEmuWork *w)
{
    if (w->kind == FSEMU_WORK_LAUNCH) free(w->launch.args);
    if (w->kind == FSEMU_WORK_HOST) free(w->arg);
    if (w->event) fsemu_event_unref(w->event);
    w->launch.args = w->arg = NULL;
    w->event = NULL;
}

int fsemu_work_clone(FsEmuWork *dst, const FsEmuWork *src)
{
    /* Owned parts first made empty and the event's reference taken, so
     * that a clone that fails half-way is freed as any work is. */
    *dst = *src;
    dst->launch.args = dst->arg = NULL;
    if (src->event) fsemu_event_ref(src->event);
    if (src->kind == FSEMU_WORK_LAUNCH) {
        dst->launch.args = malloc(src->launch.args_bytes ? src->launch.args_bytes : 1);
        if (!dst->launch.args) return -1;
        memcpy(dst->launch.args, src->launch.args, src->launch.args_bytes);
    }
    if (src->kind == FSEMU_WORK_HOST) {
        dst->arg = malloc(src->arg_bytes ? src->arg_bytes : 1);
        if (!dst->arg) return -1;
        memcpy(dst->arg, src->arg, src->arg_bytes);
    }
    return 0;
}

cudaError_t fsemu_work_run(FsEmuWork *w)
{
    cudaError_t e = fsemu_sticky();
    /* Records and waits run after a failure too: a host thread waiting on
     * the event must wake (a GPU's event completes with its stream). */
    int always = w->kind == FSEMU_WORK_RECORD || w->kind == FSEMU_WORK_WAIT;
    if (e == cudaSuccess && w->replay) e = fsemu_work_check(w);
    if (e == cudaSuccess || always) {
        switch (w->kind) {
        case FSEMU_WORK_LAUNCH: e = fsemu_run_kernel(&w->launch); break;
        case FSEMU_WORK_COPY: e = fsemu_copy(w->dst, w->src, w->n, w->copy_kind); break;
        case FSEMU_WORK_HOST:
            fsemu_memory_open();
            e = w->fn(w->arg);
            fsemu_memory_close();
            break;
        case FSEMU_WORK_RECORD: fsemu_event_reach(w->event, w->seq); break;
        case FSEMU_WORK_WAIT: fsemu_event_wait(w->event, w->seq); break;
        }
    }
    fsemu_work_free(w);
    return e;
}

/* ---- streams -------------------------------------------------------------- */

static void *stream_main(void *arg)
{
    struct FsEmuStream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->quit) pthread_cond_wait(&s->cv, &s->lock);
        if (!s->head) break;
        Op *op = s->head;
        s->busy = 1;
        pthread_mutex_unlock(&s->lock);
        cudaError_t e = fsemu_work_run(&op->w);
        pthread_mutex_lock(&s->lock);
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        free(op);
        if (e != cudaSuccess && s->error == cudaSuccess) s->error = e;
        s->busy = 0;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static struct FsEmuStream *stream_new(void)
{
    struct FsEmuStream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        free(s);
        return NULL;
    }
    pthread_mutex_lock(&all_lock);
    s->next_stream = all;
    all = s;
    pthread_mutex_unlock(&all_lock);
    return s;
}

static struct FsEmuStream *resolve(cudaStream_t s)
{
    if (s) return s;
    pthread_mutex_lock(&all_lock);
    int make = !default_stream;
    pthread_mutex_unlock(&all_lock);
    if (make) {
        struct FsEmuStream *d = stream_new();
        pthread_mutex_lock(&all_lock);
        if (!default_stream) default_stream = d;
        pthread_mutex_unlock(&all_lock);
    }
    return default_stream;
}

cudaError_t fsemu_stream_submit(cudaStream_t stream, FsEmuWork *w)
{
    cudaError_t e;
    if (stream && fsemu_capture_take(stream, w, &e)) return e;
    struct FsEmuStream *s = resolve(stream);
    Op *op = s ? calloc(1, sizeof *op) : NULL;
    if (!op) {
        fsemu_work_free(w);
        return cudaErrorMemoryAllocation;
    }
    op->w = *w;
    if (w->kind == FSEMU_WORK_RECORD) op->w.seq = fsemu_event_issue(w->event);
    pthread_mutex_lock(&s->lock);
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    return cudaSuccess;
}

cudaError_t fsemu_stream_launch(cudaStream_t s, const FsEmuLaunch *l)
{
    FsEmuWork w = {.kind = FSEMU_WORK_LAUNCH, .what = "kernel launch", .launch = *l};
    return fsemu_stream_submit(s, &w);
}

cudaError_t fsemu_enqueue_host(cudaStream_t s, FsEmuHostFn fn, const void *arg, size_t size, const char *what,
                               const void *const *dev_ptrs, int n_ptrs)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    FsEmuWork w = {.kind = FSEMU_WORK_HOST, .what = what, .fn = fn, .arg = malloc(size ? size : 1), .arg_bytes = size};
    if (!w.arg) return fsemu_set(cudaErrorMemoryAllocation);
    memcpy(w.arg, arg, size);
    for (int i = 0; i < n_ptrs && w.n_ptrs < FSEMU_MAX_PTRS; i++) w.ptrs[w.n_ptrs++] = dev_ptrs[i];
    return fsemu_set(fsemu_stream_submit(s, &w));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    FsEmuWork w = {.kind = FSEMU_WORK_COPY, .what = "cudaMemcpyAsync", .dst = dst, .src = src, .n = bytes,
                   .copy_kind = kind};
    return fsemu_set(fsemu_stream_submit(s, &w));
}

typedef struct {
    void *p;
    int value;
    size_t n;
} MemsetArgs;

static cudaError_t memset_run(void *arg)
{
    const MemsetArgs *a = arg;
    memset(a->p, a->value, a->n);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess || bytes == 0) return e;
    if (!fsemu_device_range(ptr, bytes)) return fsemu_set(cudaErrorInvalidValue);
    MemsetArgs a = {ptr, value, bytes};
    const void *p = ptr;
    return fsemu_enqueue_host(s, memset_run, &a, sizeof a, "cudaMemsetAsync", &p, 1);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    if (flags & ~cudaStreamNonBlocking) return fsemu_set(cudaErrorInvalidValue);
    *s = stream_new();
    if (!*s) return fsemu_set(cudaErrorMemoryAllocation);
    (*s)->nonblocking = (flags & cudaStreamNonBlocking) != 0;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

/* Waits for s's queue; its error (cleared), else the sticky one. */
static cudaError_t drain(struct FsEmuStream *s)
{
    pthread_mutex_lock(&s->lock);
    while (s->head || s->busy) pthread_cond_wait(&s->cv, &s->lock);
    cudaError_t e = s->error;
    s->error = cudaSuccess;
    pthread_mutex_unlock(&s->lock);
    return e != cudaSuccess ? e : fsemu_sticky();
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s) return fsemu_set(cudaErrorInvalidValue);
    fsemu_capture_drop(s);
    /* Work already queued finishes first, as with a GPU. */
    drain(s);
    pthread_mutex_lock(&all_lock);
    for (struct FsEmuStream **p = &all; *p; p = &(*p)->next_stream)
        if (*p == s) {
            *p = s->next_stream;
            break;
        }
    pthread_mutex_unlock(&all_lock);
    pthread_mutex_lock(&s->lock);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cv);
    free(s);
    return fsemu_enter();
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    /* (The legacy stream, NULL, never captures.) */
    cudaError_t e = stream ? fsemu_capture_sync(stream) : cudaSuccess;
    if (e != cudaSuccess) return fsemu_set(e);
    struct FsEmuStream *s = resolve(stream);
    if (!s) return fsemu_set(cudaErrorInvalidValue);
    pthread_mutex_lock(&s->lock);
    int pending = s->head || s->busy;
    e = pending ? cudaErrorNotReady : s->error;
    if (!pending) s->error = cudaSuccess;
    pthread_mutex_unlock(&s->lock);
    if (e == cudaSuccess) e = fsemu_sticky();
    return e == cudaErrorNotReady ? e : fsemu_set(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    cudaError_t e = stream ? fsemu_capture_sync(stream) : cudaSuccess;
    if (e != cudaSuccess) return fsemu_set(e);
    struct FsEmuStream *s = resolve(stream);
    if (!s) return fsemu_set(cudaErrorInvalidValue);
    return fsemu_set(drain(s));
}

/* Every stream's queue drained; legacy: only the blocking streams' (what
 * the legacy default stream waits for: non-blocking ones run on). */
static void wait_streams(int legacy)
{
    pthread_mutex_lock(&all_lock);
    for (struct FsEmuStream *s = all; s; s = s->next_stream) {
        if (legacy && s->nonblocking) continue;
        pthread_mutex_lock(&s->lock);
        while (s->head || s->busy) pthread_cond_wait(&s->cv, &s->lock);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&all_lock);
}

void fsemu_streams_wait_all(void) { wait_streams(0); }
void fsemu_streams_wait_legacy(void) { wait_streams(1); }

cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    e = fsemu_capture_sync(NULL);
    if (e != cudaSuccess) return fsemu_set(e);
    fsemu_streams_wait_all();
    return fsemu_enter();
}
