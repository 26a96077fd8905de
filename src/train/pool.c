/*
 * pool: worker threads that train jobs from a source (a fixed array, an
 * MPI worker's inbox, the coordinator's queue). Each job is trained by one
 * thread (train_job); results land in each job's own slot, so the order of
 * completion does not matter.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

void train_pool_work(const FsPoolSource *src)
{
    const FsJob *job;
    int id;
    while ((job = src->next(src->ctx, &id)) != NULL) {
        train_job(job);
        if (src->done) src->done(src->ctx, id);
    }
}

struct FsPoolThreads {
    FsPoolSource src;
    pthread_t *tid;
    int n;
};

static void *pool_thread(void *arg)
{
    train_pool_work(&((FsPoolThreads *)arg)->src);
    return NULL;
}

FsPoolThreads *train_pool_start(const FsPoolSource *src, int n_threads)
{
    FsPoolThreads *p = fs_calloc(1, sizeof *p);
    p->src = *src;
    p->tid = fs_calloc((size_t)(n_threads > 0 ? n_threads : 1), sizeof(pthread_t));
    for (int t = 0; t < n_threads; t++)
        if (pthread_create(&p->tid[p->n], NULL, pool_thread, p) == 0) p->n++;
    return p;
}

void train_pool_join(FsPoolThreads *p)
{
    if (!p) return;
    for (int t = 0; t < p->n; t++) pthread_join(p->tid[t], NULL);
    free(p->tid);
    free(p);
}

/* A fixed array of jobs as a source, with the caller's hooks. */
typedef struct {
    const FsJob *jobs;
    int n_jobs, next, finished;
    const FsPoolHooks *hooks;
    pthread_mutex_t lock;
} FsArraySource;

static const FsJob *array_next(void *ctx, int *id)
{
    FsArraySource *a = ctx;
    const FsPoolHooks *h = a->hooks;
    const FsJob *job = NULL;
    pthread_mutex_lock(&a->lock);
    if (a->next < a->n_jobs && !(h && h->stop && *h->stop)) {
        *id = a->next++;
        job = &a->jobs[*id];
        if (h && h->started) h->started(*id, h->ctx);
    }
    pthread_mutex_unlock(&a->lock);
    return job;
}

static void array_done(void *ctx, int id)
{
    FsArraySource *a = ctx;
    pthread_mutex_lock(&a->lock);
    a->finished++;
    if (a->hooks && a->hooks->finished) a->hooks->finished(id, a->hooks->ctx);
    pthread_mutex_unlock(&a->lock);
}

int train_jobs_hooked(const FsJob *jobs, int n_jobs, int n_threads, const FsPoolHooks *hooks)
{
    FsArraySource a;
    memset(&a, 0, sizeof a);
    a.jobs = jobs;
    a.n_jobs = n_jobs;
    a.hooks = hooks;
    pthread_mutex_init(&a.lock, NULL);
    FsPoolSource src = {array_next, array_done, &a};
    if (n_threads > n_jobs) n_threads = n_jobs;
    /* The calling thread is a worker too. */
    FsPoolThreads *p = train_pool_start(&src, n_threads - 1);
    train_pool_work(&src);
    train_pool_join(p);
    pthread_mutex_destroy(&a.lock);
    return a.finished;
}

void train_jobs(const FsJob *jobs, int n_jobs, int n_threads)
{
    train_jobs_hooked(jobs, n_jobs, n_threads, NULL);
}
