/*
 * events: cudaEvent_t of the CUDA stand-in. An event counts its records
 * (issued when cudaEventRecord queues one) and how far its streams got
 * (reached when the record's turn comes on its stream's thread); a query
 * or synchronisation looks at the last record issued, and a stream that
 * waits on an event runs a wait work that blocks its thread until the
 * record it saw is reached, as a GPU stream waits. Works hold references,
 * so an event destroyed with a wait still queued lives until it is done.
 */
#include <pthread.h>
#include <stdlib.h>

#include "emulate.h"

struct FsEmuEvent {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    unsigned long issued, reached;
    int refs;
    const void *capture; /* the capture (graph) of its last record, while not replayed */
};

void fsemu_event_ref(struct FsEmuEvent *ev)
{
    pthread_mutex_lock(&ev->lock);
    ev->refs++;
    pthread_mutex_unlock(&ev->lock);
}

void fsemu_event_unref(struct FsEmuEvent *ev)
{
    pthread_mutex_lock(&ev->lock);
    int last = --ev->refs == 0;
    pthread_mutex_unlock(&ev->lock);
    if (!last) return;
    pthread_mutex_destroy(&ev->lock);
    pthread_cond_destroy(&ev->cv);
    free(ev);
}

unsigned long fsemu_event_issue(struct FsEmuEvent *ev)
{
    pthread_mutex_lock(&ev->lock);
    unsigned long seq = ++ev->issued;
    ev->capture = NULL;
    pthread_mutex_unlock(&ev->lock);
    return seq;
}

void fsemu_event_reach(struct FsEmuEvent *ev, unsigned long seq)
{
    pthread_mutex_lock(&ev->lock);
    if (seq > ev->reached) ev->reached = seq;
    pthread_cond_broadcast(&ev->cv);
    pthread_mutex_unlock(&ev->lock);
}

void fsemu_event_wait(struct FsEmuEvent *ev, unsigned long seq)
{
    pthread_mutex_lock(&ev->lock);
    while (ev->reached < seq) pthread_cond_wait(&ev->cv, &ev->lock);
    pthread_mutex_unlock(&ev->lock);
}

void fsemu_event_set_capture(struct FsEmuEvent *ev, const void *graph)
{
    pthread_mutex_lock(&ev->lock);
    ev->capture = graph;
    pthread_mutex_unlock(&ev->lock);
}

const void *fsemu_event_capture(struct FsEmuEvent *ev)
{
    pthread_mutex_lock(&ev->lock);
    const void *g = ev->capture;
    pthread_mutex_unlock(&ev->lock);
    return g;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    cudaError_t err = fsemu_enter();
    if (err != cudaSuccess) return err;
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    /* An interprocess event must not time (the runtime's rule). */
    if (!e || (flags & ~known) || ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return fsemu_set(cudaErrorInvalidValue);
    struct FsEmuEvent *ev = calloc(1, sizeof *ev);
    if (!ev) return fsemu_set(cudaErrorMemoryAllocation);
    pthread_mutex_init(&ev->lock, NULL);
    pthread_cond_init(&ev->cv, NULL);
    ev->refs = 1;
    *e = ev;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!e) return fsemu_set(cudaErrorInvalidResourceHandle);
    fsemu_event_unref(e);
    return fsemu_enter();
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    cudaError_t err = fsemu_enter();
    if (err != cudaSuccess) return err;
    if (!e) return fsemu_set(cudaErrorInvalidResourceHandle);
    fsemu_event_ref(e);
    FsEmuWork w = {.kind = FSEMU_WORK_RECORD, .what = "cudaEventRecord", .event = e};
    return fsemu_set(fsemu_stream_submit(s, &w));
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    cudaError_t err = fsemu_enter();
    if (err != cudaSuccess) return err;
    if (!e) return fsemu_set(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&e->lock);
    int done = e->reached >= e->issued;
    pthread_mutex_unlock(&e->lock);
    return done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    cudaError_t err = fsemu_enter();
    if (err != cudaSuccess) return err;
    if (!e) return fsemu_set(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&e->lock);
    unsigned long seq = e->issued;
    pthread_mutex_unlock(&e->lock);
    fsemu_event_wait(e, seq);
    return fsemu_enter(); /* a fault in the work before it */
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    cudaError_t err = fsemu_enter();
    if (err != cudaSuccess) return err;
    if (!e) return fsemu_set(cudaErrorInvalidResourceHandle);
    if (flags != 0) return fsemu_set(cudaErrorInvalidValue); /* external waits are not modelled */
    pthread_mutex_lock(&e->lock);
    unsigned long seq = e->issued;
    e->refs++;
    pthread_mutex_unlock(&e->lock);
    FsEmuWork w = {.kind = FSEMU_WORK_WAIT, .what = "cudaStreamWaitEvent", .event = e, .seq = seq};
    /* A stream outside any capture waiting on a captured record would join
     * the capture (fork and join across streams): not modelled, refused. */
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (s) cudaStreamIsCapturing(s, &st);
    if (fsemu_event_capture(e) && st == cudaStreamCaptureStatusNone) {
        fsemu_work_free(&w);
        return fsemu_set(cudaErrorStreamCaptureUnsupported);
    }
    return fsemu_set(fsemu_stream_submit(s, &w));
}
