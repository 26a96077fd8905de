/*
 * streams: each stream of the CUDA stand-in is a host thread running its
 * queue in order (kernel launches, async copies), so the host side polls,
 * sleeps and cancels exactly as it would against a GPU. A stream whose
 * work failed records the error for its next query or synchronisation.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"

cudaError_t fsemu_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind); /* memory.c */

typedef struct Op {
    struct Op *next;
    int is_launch;
    FsEmuLaunch launch;
    void *dst;
    const void *src;
    size_t n;
    cudaMemcpyKind kind;
    void (*host)(void *); /* fsemu_stream_host's work (then the rest is unused) */
    void *host_arg;
} Op;

struct FsEmuStream {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    Op *head, *tail;
    int busy;          /* an op is running */
    int quit;
    cudaError_t error; /* the first failure since the last query */
    struct FsEmuStream *next_stream;
};

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct FsEmuStream *all;
static struct FsEmuStream *default_stream;

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
        cudaError_t e = fsemu_sticky();
        if (op->host) {
            /* Runs even after a failure, as it owns (and frees) its argument:
             * it computes nothing then (fsemu_stream_host). */
            if (e == cudaSuccess) fsemu_memory_open();
            op->host(e == cudaSuccess ? op->host_arg : NULL);
            if (e == cudaSuccess) fsemu_memory_close();
            free(op->host_arg);
        } else if (e == cudaSuccess)
            e = op->is_launch ? fsemu_run_kernel(&op->launch) : fsemu_copy(op->dst, op->src, op->n, op->kind);
        if (op->is_launch) free(op->launch.args);
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

static cudaError_t enqueue(cudaStream_t stream, Op *op)
{
    struct FsEmuStream *s = resolve(stream);
    if (!s) return cudaErrorMemoryAllocation;
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
    Op *op = calloc(1, sizeof *op);
    if (!op) return cudaErrorMemoryAllocation;
    op->is_launch = 1;
    op->launch = *l;
    cudaError_t e = enqueue(s, op);
    if (e != cudaSuccess) free(op);
    return e;
}

/* For the library stand-ins (cublas.c): fn(arg) queued on the stream like
 * a kernel, with device memory open while it runs; arg (malloc'd) is the
 * stream's to free after. fn(NULL) when the stream has a sticky error:
 * nothing is computed. A minimal form of the generic host closure that
 * graph capture needs (fsemu_enqueue_host, issue #44): to be merged into
 * it. */
cudaError_t fsemu_stream_host(cudaStream_t s, void (*fn)(void *), void *arg)
{
    Op *op = calloc(1, sizeof *op);
    if (!op) return cudaErrorMemoryAllocation;
    op->host = fn;
    op->host_arg = arg;
    cudaError_t e = enqueue(s, op);
    if (e != cudaSuccess) free(op);
    return e;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    Op *op = calloc(1, sizeof *op);
    if (!op) return fsemu_set(cudaErrorMemoryAllocation);
    *op = (Op){NULL, 0, {0}, dst, src, bytes, kind, NULL, NULL};
    e = enqueue(s, op);
    if (e != cudaSuccess) free(op);
    return fsemu_set(e);
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    *s = stream_new();
    return *s ? cudaSuccess : fsemu_set(cudaErrorMemoryAllocation);
}

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
    struct FsEmuStream *s = resolve(stream);
    if (!s) return fsemu_set(cudaErrorInvalidValue);
    pthread_mutex_lock(&s->lock);
    int pending = s->head || s->busy;
    cudaError_t e = pending ? cudaErrorNotReady : s->error;
    if (!pending) s->error = cudaSuccess;
    pthread_mutex_unlock(&s->lock);
    if (e == cudaSuccess) e = fsemu_sticky();
    return e == cudaErrorNotReady ? e : fsemu_set(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    struct FsEmuStream *s = resolve(stream);
    if (!s) return fsemu_set(cudaErrorInvalidValue);
    return fsemu_set(drain(s));
}

void fsemu_streams_wait_all(void)
{
    pthread_mutex_lock(&all_lock);
    for (struct FsEmuStream *s = all; s; s = s->next_stream) {
        pthread_mutex_lock(&s->lock);
        while (s->head || s->busy) pthread_cond_wait(&s->cv, &s->lock);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&all_lock);
}

cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = fsemu_enter();
    if (e != cudaSuccess) return e;
    fsemu_streams_wait_all();
    return fsemu_enter();
}
