/*
 * coord: rank 0's loop. Jobs leave one queue for two kinds of consumer:
 * rank 0's own worker threads (when it has cores to spare) and worker
 * ranks, which ask for as many as they can train at once and get more as
 * their results come back. Every message from a worker is checked; a bad
 * one is reported and dropped, never trusted (coord_messages.c). With no
 * worker ranks this is the plain single-process run.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "run/checkpoints.h"
#include "run/coord.h"
#include "run/decide.h"
#include "run/gpu_driver.h"

/* ---------------------------------------------------------------------- */
/* Rank 0's own threads take from the same queue.                          */

/* Waits up to 50 ms for st->cv (st->lock held). Timed: a signal handler
 * sets the stop flag but cannot wake a condition variable. */
static void wait_cv(RunState *st)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 50 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&st->cv, &st->lock, &until);
}

/* Test hook HOLD=N (util/faults.c): in a folder's first run, the Nth fold
 * rank 0's threads start stays in flight (its trial record written, when
 * it is the trial's first), untrained, until a signal stops
 * the run, and no other fold starts meanwhile (those in flight end and are
 * recorded as usual). A test's signal then finds the run mid-way (or its
 * last fold in flight) however fast or slow the machine is; the resumed
 * run is not held. st->lock held; released while waiting. */
static int test_holding;

static void test_hold(RunState *st)
{
    static int started;
    const char *v = fs_test_fault("HOLD");
    if (!v || st->j.n_runs != 1 || ++started != atoi(v)) return;
    for (test_holding = 1; !*run_stop_flag();) wait_cv(st);
    test_holding = 0;
}

/* A job, the end (stopped, or nothing queued and nothing that could queue
 * more), or without wait FS_TAKE_NONE: queued folds wait for the fold
 * before them (pruning) or a running fold may bring the next batch; the
 * thread helps the running folds meanwhile (train.h). */
static int local_next(void *ctx, const FsJob **job, int *id, int wait)
{
    RunCoord *c = ctx;
    RunState *st = c->st;
    int r = FS_TAKE_END;
    pthread_mutex_lock(&st->lock);
    int i = -1;
    while (!*run_stop_flag() && !st->io_failed) {
        if (test_holding && !wait) {
            r = FS_TAKE_NONE;
            break;
        }
        if (test_holding) {
            wait_cv(st);
            continue;
        }
        run_decide(st); /* a batch that just finished brings the next one */
        run_coord_sync_jobs(c);
        i = run_queue_take(&st->queue);
        /* Nothing queued: done, unless a running fold may still bring the
         * sampler's next batch. */
        if (i >= 0 || (run_queue_empty(&st->queue) &&
                       !((run_sampler_more(st) || run_replicates_pending(st)) && run_queue_running(&st->queue))))
            break;
        if (!wait) {
            r = FS_TAKE_NONE;
            break;
        }
        /* With pruning, queued folds wait for the fold before them in their
         * trial. */
        wait_cv(st);
    }
    if (i >= 0) {
        *id = i;
        c->jobs[*id].owner = 0;
        c->local_inflight++;
        state_job_started(st, *id);
        test_hold(st);
        /* The best weights land in the result, for the model file. */
        st->jobs[*id].job.weights_out = train_result_alloc_weights(&st->jobs[*id].res, st->jobs[*id].job.arch);
        run_ckpt_attach(st, *id); /* continues from its checkpoint, if one is in the folder */
        *job = &st->jobs[*id].job;
        r = FS_TAKE_JOB;
    }
    pthread_mutex_unlock(&st->lock);
    return r;
}

static void local_done(void *ctx, int id)
{
    RunCoord *c = ctx;
    pthread_mutex_lock(&c->st->lock);
    c->jobs[id].owner = -2;
    c->local_inflight--;
    run_ckpt_detach(c->st, id);
    run_job_finished(c->st, id);
    pthread_mutex_unlock(&c->st->lock);
}

/* The same queue for the GPU driver (run_gpu_drive). */
static int gpu_take(void *ctx, int *id, int wait)
{
    /* Without wait, only a job that is ready now: with a pruner, queued
     * folds wait for the fold before them, which may be in this launch. */
    const FsJob *job;
    return local_next(ctx, &job, id, wait) == FS_TAKE_JOB;
}

static const FsJob *gpu_job(void *ctx, int id) { return &((RunCoord *)ctx)->st->jobs[id].job; }

static void gpu_epochs(void *ctx, long epochs)
{
    RunCoord *c = ctx;
    progress_gpu_epochs(&c->st->prog, epochs);
}

static void gpu_fail(void *ctx, const FsErr *e)
{
    RunCoord *c = ctx;
    pthread_mutex_lock(&c->st->lock);
    state_fail(c->st, e);
    pthread_mutex_unlock(&c->st->lock);
}

static void gpu_times_of(void *ctx, const FsGpuTimes *t)
{
    RunCoord *c = ctx;
    pthread_mutex_lock(&c->st->lock);
    /* Added: the workers' BYEs may have come in already (take_bye). */
    c->st->gpu_times.kernel_seconds += t->kernel_seconds;
    c->st->gpu_times.host_seconds += t->host_seconds;
    pthread_mutex_unlock(&c->st->lock);
}

static void *gpu_thread(void *ctx)
{
    RunCoord *c = ctx;
    FsGpuQueue q = {gpu_take, local_done, gpu_job, gpu_epochs, gpu_fail, c, gpu_times_of};
    run_gpu_drive(c->st->gpu_device, &c->st->ds, &q);
    return NULL;
}

/* One process with a pruner: the calling thread watches rank 0's running
 * folds (their progress counters) and makes the decisions, until the
 * queue is done or the run stops. */
static void watch_local(RunCoord *c)
{
    RunState *st = c->st;
    for (;;) {
        pthread_mutex_lock(&st->lock);
        run_pruning_poll_local(st);
        run_decide(st);
        int done = c->local_inflight == 0 && (run_queue_empty(&st->queue) || *run_stop_flag() || st->io_failed);
        pthread_mutex_unlock(&st->lock);
        if (done) break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* The run on rank 0.                                                     */

/* Rank 0's bookkeeping of the queue, sized for every job the run may list
 * (the sampler adds batches). */
static void coord_open(RunCoord *c, RunState *st, FsMpi *m)
{
    memset(c, 0, sizeof *c);
    c->st = st;
    c->m = m;
    c->jobs = fs_calloc((size_t)st->cap_jobs + 1, sizeof *c->jobs);
    c->ranks = fs_calloc((size_t)m->size, sizeof *c->ranks);
    c->held = fs_calloc(FS_PROTO_MAX_ITEMS, sizeof *c->held);
    c->q3 = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c->loss = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c->tl = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c->sec = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c->prog = fs_calloc(FS_PROTO_MAX_ITEMS, sizeof *c->prog);
    size_t slots = (size_t)st->sw.n_trials * (size_t)st->folds.n + 1;
    c->job_of = fs_malloc(slots * sizeof(int));
    for (size_t s = 0; s < slots; s++) c->job_of[s] = -1;
    c->first_seed_job = -1;
    run_coord_sync_jobs(c);
}

static void coord_close(RunCoord *c)
{
    free(c->jobs);
    free(c->ranks);
    free(c->held);
    free(c->q3);
    free(c->loss);
    free(c->tl);
    free(c->sec);
    free(c->prog);
    free(c->job_of);
}

/* No worker ranks: rank 0's GPU or its threads train the whole queue. */
static void train_alone(RunCoord *c, int threads0)
{
    FsPoolSource src = {local_next, local_done, c};
    pthread_t gpu;
    if (c->st->use_gpu && c->st->pruner && pthread_create(&gpu, NULL, gpu_thread, c) == 0) {
        /* The models' epochs reach their jobs while the kernel runs: this
         * thread decides on them, as with the CPU's threads. */
        watch_local(c);
        pthread_join(gpu, NULL);
    } else if (c->st->use_gpu) {
        gpu_thread(c);
    } else if (c->st->pruner) {
        FsPoolThreads *p = train_pool_start(&src, threads0);
        watch_local(c);
        train_pool_join(p);
    } else {
        /* One process: the calling thread trains too. */
        FsPoolThreads *p = train_pool_start(&src, threads0 - 1);
        train_pool_work(&src);
        train_pool_join(p);
    }
}

/* Between two messages (takes the lock): the sampler's next batch and the
 * pruner's decisions, told to the workers. Returns 1 when the run is
 * drained: nothing queued, or (after a stop) nothing out on any rank; code
 * gets the exit code a STOP carries. */
static int coord_step(RunCoord *c, int *code)
{
    RunState *st = c->st;
    pthread_mutex_lock(&st->lock);
    run_decide(st);
    run_coord_sync_jobs(c);
    if (st->pruner) {
        run_pruning_poll_local(st);
        run_decide(st);
        run_coord_tell_cuts(c);
    }
    int remote = 0;
    for (int r = 1; r < c->m->size; r++) remote += c->ranks[r].inflight;
    int stopping = *run_stop_flag() || c->stranded;
    /* Rank 0's own folds count too: the exit code sent to the workers
     * says whether work is left, which is known only then. */
    int drained = (stopping || run_queue_empty(&st->queue)) && remote == 0 && c->local_inflight == 0;
    *code = st->io_failed                     ? FS_EXIT_ERROR
            : stopping && state_work_left(st) ? FS_EXIT_INTERRUPTED
                                              : FS_EXIT_OK;
    pthread_mutex_unlock(&st->lock);
    return drained;
}

/* With worker ranks: rank 0's own share (its GPU, or its threads) trains
 * from the queue while this thread answers the workers, stops them when
 * the run is drained (or cancelled after the grace period), and waits for
 * every one's BYE. */
static void coordinate_ranks(RunCoord *c, int threads0)
{
    RunState *st = c->st;
    FsPoolSource src = {local_next, local_done, c};
    pthread_t gpu;
    int gpu_running = st->use_gpu && pthread_create(&gpu, NULL, gpu_thread, c) == 0;
    FsPoolThreads *p = !st->use_gpu && threads0 > 0 ? train_pool_start(&src, threads0) : NULL;
    int stop_sent = 0, cancel_sent = 0;
    while (!run_coord_finished(c, stop_sent)) {
        FsMsg msg;
        int got = fsmpi_poll(c->m, -1, &msg);
        if (got) {
            run_coord_message(c, &msg, stop_sent);
            free(msg.p);
        }
        run_coord_watch(c, stop_sent, threads0);
        int code, drained = coord_step(c, &code);
        if (!stop_sent && drained) {
            run_coord_stop_all(c, 0, code);
            stop_sent = 1;
        } else if (!cancel_sent && *run_cancel_flag()) {
            run_coord_stop_all(c, 1, code);
            stop_sent = cancel_sent = 1;
        }
        if (!got) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    train_pool_join(p);
    if (gpu_running) pthread_join(gpu, NULL);
}

int run_coordinate(RunState *st, FsMpi *m, int threads0, double worker_timeout)
{
    RunCoord c;
    coord_open(&c, st, m);
    run_coord_watch_open(&c, worker_timeout);
    int workers = m->active ? m->size - 1 : 0;
    progress_start(&st->prog);
    if (workers == 0)
        train_alone(&c, threads0);
    else
        coordinate_ranks(&c, threads0);
    progress_stop(&st->prog);
    int stranded = c.stranded;
    coord_close(&c);
    if (st->io_failed) return FS_EXIT_ERROR;
    /* A rank that never answered: the job cannot end cleanly (exit 3, a
     * rerun resumes); without ranks to train, what is left is resumed. */
    if (st->ranks_lost || (stranded && state_work_left(st))) return FS_EXIT_INTERRUPTED;
    /* A stop that came after the last fold was recorded leaves nothing to
     * resume: exit 0, so a scheduler does not requeue a finished sweep. */
    return *run_stop_flag() && state_work_left(st) ? FS_EXIT_INTERRUPTED : FS_EXIT_OK;
}
