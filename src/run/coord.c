/*
 * coord: rank 0's loop. Jobs leave one queue for two kinds of consumer:
 * rank 0's own worker threads (when it has cores to spare) and worker
 * ranks, which ask for as many as they can train at once and get more as
 * their results come back. Every message from a worker is checked; a bad
 * one is reported and dropped, never trusted. With no worker ranks this is
 * the plain single-process run.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "run/state.h"

typedef struct {
    RunState *st;
    FsMpi *m;
    int *owner;       /* per job: rank training it, -1 queued, -2 done */
    int *job_of;      /* (trial * n_fold_ids + fold slot) -> job, -1 none */
    int *inflight;    /* per rank */
    int *lost;        /* per job: times a worker lost or refused it */
    int *seen;        /* per job: the REQUEST serial that last listed it as held */
    int serial;
    FsWorkItem *held;  /* a decoded REQUEST's list */
    float *q3, *loss, *tl, *sec; /* a decoded EPOCH's values */
    FsProgressItem *prog;        /* a decoded PROGRESS's items */
    int cuts_seen;     /* st->cuts_made when worker ranks were last told */
    int local_inflight;
    int jobs_known;    /* st->n_jobs when owner and job_of were last brought up to date */
} Coord;

/* Jobs listed since (a new batch of the sampler): queued, and findable by
 * (trial, fold) (lock held). */
static int fold_slot(const RunState *st, int fold);
static void sync_jobs(Coord *c)
{
    RunState *st = c->st;
    for (; c->jobs_known < st->n_jobs; c->jobs_known++) {
        int i = c->jobs_known;
        c->owner[i] = -1;
        c->job_of[st->job_trial[i] * st->n_fold_ids + fold_slot(st, st->jobs[i].fold)] = i;
    }
}

/* A job lost this often (refused, or its result never came) stops the run:
 * the cause is on the worker's side, and queueing it forever would hang. */
#define FS_MAX_LOST 3

/* ---------------------------------------------------------------------- */
/* Rank 0's own threads take from the same queue.                          */

/* A job, the end (stopped, or nothing queued and nothing that could queue
 * more), or without wait FS_TAKE_NONE: queued folds wait for the fold
 * before them (pruning) or a running fold may bring the next batch; the
 * thread helps the running folds meanwhile (train.h). */
static int local_next(void *ctx, const FsJob **job, int *id, int wait)
{
    Coord *c = ctx;
    RunState *st = c->st;
    int r = FS_TAKE_END;
    pthread_mutex_lock(&st->lock);
    int i = -1;
    while (!*run_stop_flag() && !st->io_failed) {
        run_sampler_step(st); /* a batch that just finished brings the next one */
        sync_jobs(c);
        i = state_take_job(st);
        /* Nothing queued: done, unless a running fold may still bring the
         * sampler's next batch. */
        if (i >= 0 || (state_queue_empty(st) && !(run_sampler_more(st) && state_running(st)))) break;
        if (!wait) {
            r = FS_TAKE_NONE;
            break;
        }
        /* With pruning, queued folds wait for the fold before them in their
         * trial. Timed: a signal handler sets the stop flag but cannot wake
         * a condition variable. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&st->cv, &st->lock, &until);
    }
    if (i >= 0) {
        *id = i;
        c->owner[*id] = 0;
        c->local_inflight++;
        state_job_started(st, *id);
        /* The best weights land in the result, for the model file. */
        st->jobs[*id].weights_out = train_result_alloc_weights(&st->res[*id], st->jobs[*id].arch);
        run_ckpt_attach(st, *id); /* continues from its checkpoint, if one is in the folder */
        *job = &st->jobs[*id];
        r = FS_TAKE_JOB;
    }
    pthread_mutex_unlock(&st->lock);
    return r;
}

static void local_done(void *ctx, int id)
{
    Coord *c = ctx;
    pthread_mutex_lock(&c->st->lock);
    c->owner[id] = -2;
    c->local_inflight--;
    run_ckpt_detach(c->st, id);
    state_job_finished(c->st, id);
    pthread_mutex_unlock(&c->st->lock);
}

/* The same queue for the GPU driver (run_gpu_drive). */
static int gpu_take(void *ctx, int *id, int wait)
{
    (void)wait; /* rank 0's queue only shrinks: no job will come later */
    const FsJob *job;
    return local_next(ctx, &job, id, 1) == FS_TAKE_JOB;
}

static const FsJob *gpu_job(void *ctx, int id) { return &((Coord *)ctx)->st->jobs[id]; }

static void gpu_epochs(void *ctx, long epochs)
{
    Coord *c = ctx;
    progress_gpu_epochs(&c->st->prog, epochs);
}

static void *gpu_thread(void *ctx)
{
    Coord *c = ctx;
    FsGpuQueue q = {gpu_take, local_done, gpu_job, gpu_epochs, c};
    run_gpu_drive(c->st->gpu_device, &c->st->ds, &q);
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Messages from workers.                                                  */

static int fold_slot(const RunState *st, int fold);
/* The job of a message's item, or -1. */
static int job_of_item(const Coord *c, const FsWorkItem *it)
{
    const RunState *st = c->st;
    int k = fold_slot(st, it->fold);
    if (it->trial >= st->sw.n_trials || k < 0) return -1;
    int i = c->job_of[it->trial * st->n_fold_ids + k];
    return i >= 0 && !strcmp(st->sw.trials[it->trial].id, it->id) ? i : -1;
}

static void bad_message(const FsMsg *msg, const char *why)
{
    fprintf(stderr, "foldsweep: rank 0: bad %s message from rank %d (dropped): %s\n", proto_kind_name(msg->tag),
            msg->source, why);
}

static void send_trials(Coord *c, int rank, int capacity)
{
    RunState *st = c->st;
    FsWorkItem *items = fs_calloc((size_t)(capacity > 0 ? capacity : 1), sizeof *items);
    int n = 0;
    pthread_mutex_lock(&st->lock);
    int i;
    sync_jobs(c);
    while (n < capacity && !*run_stop_flag() && (i = state_take_job(st)) >= 0) {
        c->owner[i] = rank;
        c->inflight[rank]++;
        state_job_started(st, i);
        const FsTrial *tr = &st->sw.trials[st->job_trial[i]];
        items[n].trial = tr->index;
        items[n].fold = st->jobs[i].fold;
        memcpy(items[n].id, tr->id, 17);
        n++;
    }
    pthread_mutex_unlock(&st->lock);
    FsBuf b = {0};
    /* Each item's checkpoint first, if one is in the folder: the worker
     * continues the fold where it was. */
    for (int k = 0; k < n && (st->sw.checkpoint > 0 || run_ckpt_test_steps()) && !st->use_gpu; k++) {
        uint64_t nb;
        char path[4400];
        uint8_t *bytes = run_ckpt_read(st->dir, items[k].id, items[k].fold, &nb, path, sizeof path);
        if (!bytes) continue;
        proto_encode_ckpt(&b, &items[k], bytes, nb);
        fsmpi_send(c->m, rank, FS_MSG_CKPT, &b);
        free(bytes);
    }
    proto_encode_trials(&b, items, n);
    fsmpi_send(c->m, rank, FS_MSG_TRIALS, &b);
    buf_free(&b);
    free(items);
}

static int fold_slot(const RunState *st, int fold)
{
    for (int k = 0; k < st->n_fold_ids; k++)
        if (st->fold_ids[k] == fold) return k;
    return -1;
}

/* A REQUEST lists what the worker still holds. It sends one only after its
 * previous request was answered, and MPI keeps one sender's messages in
 * order, so every result it sent before is already in: a job rank 0 sent it
 * that is neither answered nor held was lost (refused, or a result that
 * could not be read) and goes back to the queue. */
static void reconcile(Coord *c, int rank, const FsWorkItem *held, int n_held)
{
    RunState *st = c->st;
    c->serial++;
    for (int h = 0; h < n_held; h++) {
        int k = fold_slot(st, held[h].fold);
        int i = held[h].trial < st->sw.n_trials && k >= 0 ? c->job_of[held[h].trial * st->n_fold_ids + k] : -1;
        if (i >= 0 && c->owner[i] == rank) c->seen[i] = c->serial;
    }
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->n_jobs; i++) {
        if (c->owner[i] != rank || c->seen[i] == c->serial) continue;
        const FsTrial *tr = &st->sw.trials[st->job_trial[i]];
        c->owner[i] = -1;
        c->inflight[rank]--;
        if (++c->lost[i] >= FS_MAX_LOST) {
            FsErr e = {0};
            fs_err_set(&e, "trial %s fold %d was lost %d times (last on rank %d: refused, or its result could not "
                           "be read; see the messages above); stopping. Rerun the same command to resume",
                       tr->id, st->jobs[i].fold, c->lost[i], rank);
            state_fail(st, &e);
            progress_fold_finished(&st->prog, 0, NULL, 0.0, 0);
            continue;
        }
        fprintf(stderr, "foldsweep: rank 0: trial %s fold %d sent to rank %d came back neither trained nor held; "
                        "queued again\n", tr->id, st->jobs[i].fold, rank);
        state_job_requeue(st, i);
    }
    pthread_mutex_unlock(&st->lock);
}

/* EPOCH: a worker's validation values of a running fold, for the pruner.
 * Values for a fold no longer out there (its trial was just pruned) are
 * dropped quietly. */
static void take_epochs(Coord *c, const FsMsg *msg)
{
    RunState *st = c->st;
    char why[256];
    FsWorkItem it;
    int32_t first, n;
    FsCurves got = {c->tl, c->loss, c->q3, c->sec};
    if (proto_decode_epoch(msg->p, msg->n, &it, &first, &n, &got, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    int i = job_of_item(c, &it);
    if (i < 0 || c->owner[i] != msg->source) return;
    FsFitResult *r = &st->res[i];
    if (first - 1 + n > st->specs[i].stop.max_epochs) {
        bad_message(msg, "more epochs than the trial's max_epochs");
        return;
    }
    pthread_mutex_lock(&st->lock);
    for (int e = 0; e < n; e++) {
        r->curves.val_q3[first - 1 + e] = c->q3[e];
        r->curves.val_loss[first - 1 + e] = c->loss[e];
        r->curves.train_loss[first - 1 + e] = c->tl[e];
        r->curves.seconds[first - 1 + e] = c->sec[e];
    }
    state_epochs_seen(st, i, first - 1 + n);
    if (st->pruner) {
        run_pruning_feed_epochs(st, i, first - 1 + n);
        run_pruning_decide(st);
    }
    pthread_mutex_unlock(&st->lock);
}

/* PROGRESS: examples trained by a worker's running folds (the ETA). */
static void take_progress(Coord *c, const FsMsg *msg)
{
    RunState *st = c->st;
    char why[256];
    int n;
    if (proto_decode_progress(msg->p, msg->n, c->prog, &n, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    pthread_mutex_lock(&st->lock);
    for (int k = 0; k < n; k++) {
        int i = job_of_item(c, &c->prog[k].item);
        if (i >= 0 && c->owner[i] == msg->source) st->job_examples[i] = c->prog[k].examples;
    }
    pthread_mutex_unlock(&st->lock);
}

/* CKPT: a worker's checkpoint of a fold it trains, kept in the run folder
 * for the rank that trains the fold next (a resume). */
static void take_ckpt(Coord *c, const FsMsg *msg)
{
    RunState *st = c->st;
    char why[256];
    FsWorkItem it;
    const uint8_t *bytes;
    uint64_t n;
    if (proto_decode_ckpt(msg->p, msg->n, &it, &bytes, &n, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    int i = job_of_item(c, &it);
    if (i < 0 || c->owner[i] != msg->source) return; /* pruned or reassigned meanwhile */
    FsErr err = {0};
    double t0 = fs_now();
    if (run_ckpt_write(st->dir, it.id, it.fold, bytes, n, &err) != 0)
        fprintf(stderr, "foldsweep: warning: trial %s fold %d: checkpoint from rank %d not written (%s)\n", it.id,
                it.fold, msg->source, err.msg);
    else if (*run_stop_flag() && !st->prog.quiet && st->prog.out)
        fprintf(st->prog.out, "foldsweep: trial %s fold %d: checkpoint from rank %d kept (%.1f MB, %.3f s to write)\n",
                it.id, it.fold, msg->source, (double)n / 1e6, fs_now() - t0);
}

/* Folds of newly pruned trials running on worker ranks: each rank is told
 * to stop them, and they count as done here (lock held). */
static void tell_cuts(Coord *c)
{
    RunState *st = c->st;
    if (!st->pruner || c->cuts_seen == st->cuts_made) return;
    c->cuts_seen = st->cuts_made;
    FsBuf b = {0};
    for (int i = 0; i < st->n_jobs; i++) {
        int r = c->owner[i];
        if (r < 1 || !st->job_prune[i]) continue;
        const FsTrial *tr = &st->sw.trials[st->job_trial[i]];
        FsWorkItem it = {tr->index, st->jobs[i].fold, ""};
        memcpy(it.id, tr->id, 17);
        proto_encode_prune(&b, &it);
        fsmpi_send(c->m, r, FS_MSG_PRUNE, &b);
        c->owner[i] = -2;
        c->inflight[r]--;
        st->job_state[i] = FS_JOB_DONE;
        progress_fold_finished(&st->prog, 1, NULL, 0.0, 0);
    }
    buf_free(&b);
    pthread_cond_broadcast(&st->cv);
}

/* One process with a pruner: the calling thread watches rank 0's running
 * folds (their progress counters) and makes the decisions, until the
 * queue is done or the run stops. */
static void watch_local(Coord *c)
{
    RunState *st = c->st;
    for (;;) {
        pthread_mutex_lock(&st->lock);
        run_pruning_poll_local(st);
        run_pruning_decide(st);
        run_sampler_step(st);
        int done = c->local_inflight == 0 && (state_queue_empty(st) || *run_stop_flag() || st->io_failed);
        pthread_mutex_unlock(&st->lock);
        if (done) break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void take_result(Coord *c, const FsMsg *msg)
{
    RunState *st = c->st;
    char why[256];
    FsWorkItem it;
    FsFitResult r;
    if (proto_decode_result(msg->p, msg->n, &it, &r, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    int k = fold_slot(st, it.fold);
    int i = (it.trial < st->sw.n_trials && k >= 0) ? c->job_of[it.trial * st->n_fold_ids + k] : -1;
    if (i >= 0 && c->owner[i] == -2 && st->job_prune[i]) { /* finished before it heard of its pruning */
        train_result_free(&r);
        return;
    }
    if (i < 0 || c->owner[i] != msg->source || strcmp(st->sw.trials[it.trial].id, it.id) != 0) {
        snprintf(why, sizeof why, "trial %d (%.16s) fold %d was not sent to rank %d", it.trial, it.id, it.fold,
                 msg->source);
        bad_message(msg, why);
        train_result_free(&r);
        return;
    }
    pthread_mutex_lock(&st->lock);
    c->inflight[msg->source]--;
    train_result_free(&st->res[i]);
    st->res[i] = r;
    st->jobs[i].result = &st->res[i];
    c->owner[i] = -2;
    state_job_finished(st, i);
    pthread_mutex_unlock(&st->lock);
}

static void stop_all(Coord *c, int cancel, int code)
{
    FsBuf b = {0};
    proto_encode_stop(&b, cancel, code);
    for (int r = 1; r < c->m->size; r++)
        if (!c->m->rank_failed[r]) fsmpi_send(c->m, r, FS_MSG_STOP, &b);
    buf_free(&b);
}

/* After a failed setup on some rank: the others are told to stop (they
 * may already be asking for work) and each one's BYE is awaited; a failed
 * rank speaks no protocol and is never waited on. */
void run_release_workers(FsMpi *m)
{
    FsBuf b = {0};
    proto_encode_stop(&b, 1, FS_EXIT_ERROR);
    int live = 0, byes = 0;
    for (int r = 1; r < m->size; r++)
        if (!m->rank_failed[r]) fsmpi_send(m, r, FS_MSG_STOP, &b), live++;
    buf_free(&b);
    while (byes < live) {
        FsMsg msg;
        if (!fsmpi_poll(m, -1, &msg)) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (msg.tag == FS_MSG_BYE) byes++;
        free(msg.p);
    }
}

int run_coordinate(RunState *st, FsMpi *m, int threads0, const FsRunOptions *o, FILE *out)
{
    Coord c;
    memset(&c, 0, sizeof c);
    c.st = st;
    c.m = m;
    /* Sized for every job the run may list (the sampler adds batches). */
    c.owner = fs_calloc((size_t)st->cap_jobs + 1, sizeof(int));
    c.inflight = fs_calloc((size_t)m->size, sizeof(int));
    c.lost = fs_calloc((size_t)st->cap_jobs + 1, sizeof(int));
    c.seen = fs_calloc((size_t)st->cap_jobs + 1, sizeof(int));
    c.held = fs_calloc(FS_PROTO_MAX_ITEMS, sizeof *c.held);
    c.q3 = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c.loss = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c.tl = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c.sec = fs_calloc(FS_PROTO_MAX_EPOCHS, sizeof(float));
    c.prog = fs_calloc(FS_PROTO_MAX_ITEMS, sizeof *c.prog);
    size_t slots = (size_t)st->sw.n_trials * (size_t)st->n_fold_ids + 1;
    c.job_of = fs_malloc(slots * sizeof(int));
    for (size_t s = 0; s < slots; s++) c.job_of[s] = -1;
    sync_jobs(&c);
    (void)o;
    (void)out;
    FsPoolSource src = {local_next, local_done, &c};
    int workers = m->active ? m->size - 1 : 0;
    progress_start(&st->prog);
    if (workers == 0 && st->use_gpu) {
        gpu_thread(&c);
    } else if (workers == 0 && st->pruner) {
        FsPoolThreads *p = train_pool_start(&src, threads0);
        watch_local(&c);
        train_pool_join(p);
    } else if (workers == 0) {
        /* One process: the calling thread trains too. */
        FsPoolThreads *p = train_pool_start(&src, threads0 - 1);
        train_pool_work(&src);
        train_pool_join(p);
    } else {
        /* Rank 0's own share: its GPU, or its threads. */
        pthread_t gpu;
        int gpu_running = st->use_gpu && pthread_create(&gpu, NULL, gpu_thread, &c) == 0;
        FsPoolThreads *p = !st->use_gpu && threads0 > 0 ? train_pool_start(&src, threads0) : NULL;
        int byes = 0, stop_sent = 0, cancel_sent = 0;
        while (byes < workers) {
            FsMsg msg;
            int got = fsmpi_poll(m, -1, &msg);
            if (got) {
                char why[256];
                int32_t cap;
                int n_held;
                if (msg.source < 1 || msg.source >= m->size || m->rank_failed[msg.source]) {
                    bad_message(&msg, "not from a worker rank");
                } else if (proto_check(msg.p, msg.n, msg.tag, why, sizeof why) != 0) {
                    bad_message(&msg, why);
                } else if (msg.tag == FS_MSG_REQUEST) {
                    if (proto_decode_request(msg.p, msg.n, &cap, c.held, &n_held, why, sizeof why) != 0) {
                        bad_message(&msg, why);
                    } else {
                        reconcile(&c, msg.source, c.held, n_held);
                        send_trials(&c, msg.source, stop_sent ? 0 : cap);
                    }
                } else if (msg.tag == FS_MSG_RESULT) {
                    take_result(&c, &msg);
                } else if (msg.tag == FS_MSG_EPOCH) {
                    take_epochs(&c, &msg);
                } else if (msg.tag == FS_MSG_PROGRESS) {
                    take_progress(&c, &msg);
                } else if (msg.tag == FS_MSG_CKPT) {
                    take_ckpt(&c, &msg);
                } else if (msg.tag == FS_MSG_ERROR) {
                    char text[1001];
                    if (proto_decode_error(msg.p, msg.n, text, sizeof text, why, sizeof why) != 0)
                        bad_message(&msg, why);
                    else
                        fprintf(stderr, "foldsweep: rank %d reports: %s\n", msg.source, text);
                } else if (msg.tag == FS_MSG_BYE) {
                    byes++;
                } else {
                    bad_message(&msg, "not a message a worker sends");
                }
                free(msg.p);
            }
            /* Done when nothing is queued or (after a stop) nothing is out
             * on worker ranks; a cancel after the grace period ends it now. */
            pthread_mutex_lock(&st->lock);
            run_sampler_step(st);
            sync_jobs(&c);
            if (st->pruner) {
                run_pruning_poll_local(st);
                run_pruning_decide(st);
                tell_cuts(&c);
            }
            int remote = 0;
            for (int r = 1; r < m->size; r++) remote += c.inflight[r];
            int stopping = *run_stop_flag();
            /* Rank 0's own folds count too: the exit code sent to the
             * workers says whether work is left, which is known only then. */
            int drained = (stopping || state_queue_empty(st)) && remote == 0 && c.local_inflight == 0;
            int code = st->io_failed                         ? FS_EXIT_ERROR
                       : stopping && state_work_left(st)     ? FS_EXIT_INTERRUPTED
                                                             : FS_EXIT_OK;
            pthread_mutex_unlock(&st->lock);
            if (!stop_sent && drained) {
                stop_all(&c, 0, code);
                stop_sent = 1;
            } else if (!cancel_sent && *run_cancel_flag()) {
                stop_all(&c, 1, code);
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
    progress_stop(&st->prog);
    free(c.owner);
    free(c.inflight);
    free(c.lost);
    free(c.seen);
    free(c.held);
    free(c.q3);
    free(c.loss);
    free(c.tl);
    free(c.sec);
    free(c.prog);
    free(c.job_of);
    if (st->io_failed) return FS_EXIT_ERROR;
    /* A stop that came after the last fold was recorded leaves nothing to
     * resume: exit 0, so a scheduler does not requeue a finished sweep. */
    return *run_stop_flag() && state_work_left(st) ? FS_EXIT_INTERRUPTED : FS_EXIT_OK;
}
