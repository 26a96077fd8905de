/*
 * pool: worker threads that train jobs from a source (a fixed array, an
 * MPI worker's inbox, the coordinator's queue). Each job is owned by one
 * thread (train_job); threads with no job of their own help the owners
 * (team.h). Results land in each job's own slot, so the order of
 * completion does not matter.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "train/team.h"
#include "train/train.h"

/* How often a helping thread asks its source for a job of its own: a
 * fold takes seconds, so a few milliseconds' delay costs nothing. */
#define POOL_POLL_SECONDS 2e-3
/* A thread whose source has ended checks this often whether it may go. */
#define POOL_LINGER_SECONDS 50e-3

void train_pool_work(const FsPoolSource *src)
{
    const int helping = team_enabled();
    for (;;) {
        const FsJob *job = NULL;
        int id = -1;
        /* An owner from before the take: a thread that then finds the
         * source ended (this one took the last job) sees a model training
         * and stays to help it. */
        team_owner_begin();
        const int r = src->take(src->ctx, &job, &id, !helping);
        if (r == FS_TAKE_JOB) train_job(job);
        team_owner_end();
        if (r == FS_TAKE_JOB) {
            if (src->done) src->done(src->ctx, id);
        } else if (r == FS_TAKE_END) {
            /* Nothing more to own: help the models still training (the
             * sweep's tail), then end. */
            while (helping && team_help(POOL_LINGER_SECONDS, 1)) {
            }
            return;
        } else {
            team_help(POOL_POLL_SECONDS, 0);
        }
    }
}

struct FsPoolThreads {
    FsPoolSource src;
    pthread_t *tid;
    int n;
    int err; /* pthread_create's error for a thread that did not start */
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
    for (int t = 0; t < n_threads; t++) {
        int e = pthread_create(&p->tid[p->n], NULL, pool_thread, p);
        if (e == 0)
            p->n++;
        else
            p->err = e;
    }
    return p;
}

int train_pool_started(const FsPoolThreads *p, int *err)
{
    if (err) *err = p ? p->err : 0;
    return p ? p->n : 0;
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

/* Every job is there from the start: a job or the end, never "not yet". */
static int array_take(void *ctx, const FsJob **job, int *id, int wait)
{
    FsArraySource *a = ctx;
    const FsPoolHooks *h = a->hooks;
    int r = FS_TAKE_END;
    (void)wait;
    pthread_mutex_lock(&a->lock);
    if (a->next < a->n_jobs && !(h && h->stop && *h->stop)) {
        *id = a->next++;
        *job = &a->jobs[*id];
        if (h && h->started) h->started(*id, h->ctx);
        r = FS_TAKE_JOB;
    }
    pthread_mutex_unlock(&a->lock);
    return r;
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
    FsPoolSource src = {array_take, array_done, &a};
    /* Threads beyond the jobs help them; without helping they would idle. */
    if (!team_enabled() && n_threads > n_jobs) n_threads = n_jobs;
    if (n_jobs == 0) n_threads = 0;
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
