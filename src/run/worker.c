/*
 * worker: a worker rank's loop. It receives the canonical sweep and the
 * data bytes once (the setup broadcast), rebuilds the same trials and ids,
 * then asks rank 0 for as many (trial, fold) jobs as it has threads, trains
 * them on its pool, and sends each result back as it lands. Only this
 * thread calls MPI; the pool threads hand results over through an outbox.
 * What it sends besides requests, and checkpoints, are in worker_send.c.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu.h"
#include "run/checkpoints.h"
#include "run/gpu_driver.h"
#include "run/worker.h"

/* A job, the end (STOP), or without wait FS_TAKE_NONE until rank 0 sends
 * more (the thread helps the running folds meanwhile, train.h). */
static int worker_next(void *ctx, const FsJob **job, int *id, int wait)
{
    RunWorker *w = ctx;
    int r;
    pthread_mutex_lock(&w->lock);
    while (wait && w->next == w->n_jobs && !w->no_more) pthread_cond_wait(&w->cv, &w->lock);
    r = w->next < w->n_jobs ? FS_TAKE_JOB : w->no_more ? FS_TAKE_END : FS_TAKE_NONE;
    if (r == FS_TAKE_JOB) {
        *id = w->next++;
        *job = &w->jobs[*id].job;
    }
    pthread_mutex_unlock(&w->lock);
    return r;
}

static void worker_done(void *ctx, int id)
{
    RunWorker *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->outbox[w->n_out++] = id;
    pthread_mutex_unlock(&w->lock);
}

/* The local queue for the GPU driver. */
static int gpu_take(void *ctx, int *id, int wait)
{
    RunWorker *w = ctx;
    pthread_mutex_lock(&w->lock);
    while (wait && w->next == w->n_jobs && !w->no_more) pthread_cond_wait(&w->cv, &w->lock);
    int got = w->next < w->n_jobs;
    if (got) *id = w->next++;
    pthread_mutex_unlock(&w->lock);
    return got;
}

static const FsJob *gpu_job(void *ctx, int id) { return &((RunWorker *)ctx)->jobs[id].job; }
static void gpu_epochs(void *ctx, long epochs) { (void)ctx, (void)epochs; }

void run_worker_fail(RunWorker *w, const char *text)
{
    pthread_mutex_lock(&w->lock);
    if (!w->fail_state) {
        snprintf(w->fail_text, sizeof w->fail_text, "%.990s", text);
        w->fail_state = 1;
    }
    pthread_mutex_unlock(&w->lock);
}

static void gpu_fail(void *ctx, const FsErr *e) { run_worker_fail(ctx, e->msg); }

static void gpu_times_of(void *ctx, const FsGpuTimes *t)
{
    RunWorker *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->gpu_times = *t;
    pthread_mutex_unlock(&w->lock);
}

static void *gpu_thread(void *ctx)
{
    RunWorker *w = ctx;
    FsGpuQueue q = {gpu_take, worker_done, gpu_job, gpu_epochs, gpu_fail, w, gpu_times_of};
    run_gpu_drive(w->device, &w->ds, &q);
    return NULL;
}

/* Checks one item from rank 0 against this rank's copy of the sweep. */
static int item_ok(const RunWorker *w, const FsWorkItem *it, char *why, size_t n)
{
    if (it->trial >= w->sw.n_trials) return snprintf(why, n, "trial %d of %d", it->trial, w->sw.n_trials), 0;
    if (strcmp(w->sw.trials[it->trial].id, it->id) != 0)
        return snprintf(why, n, "trial %d is %s here, not %s", it->trial, w->sw.trials[it->trial].id, it->id), 0;
    FsErr e = {0};
    if (data_fold_slot(&w->folds, it->fold, &e) >= 0) return 1;
    return snprintf(why, n, "%.200s", e.msg), 0;
}

/* Test hook REFUSE=R (util/faults.c: rank R refuses its first item) or
 * R:all (every item): the lost-work path of rank 0, tested for real. */
static int test_refuse(RunWorker *w)
{
    const char *v = fs_test_fault("REFUSE");
    if (!v || atoi(v) != w->m->rank) return 0;
    return strstr(v, ":all") != NULL || !w->refused_once++;
}

/* TRIALS: the jobs rank 0 sends, each checked against this rank's sweep
 * and made a job the pool can take (an empty one sets *exhausted). */
static void take_trials(RunWorker *w, const FsMsg *msg, int *exhausted)
{
    static FsWorkItem items[FS_PROTO_MAX_ITEMS];
    int n = 0;
    char why[256];
    /* Items not taken here are missing from this rank's next REQUEST, and
     * rank 0 queues them again. */
    if (proto_decode_trials(msg->p, msg->n, items, &n, why, sizeof why) != 0) {
        run_worker_error(w, "bad TRIALS message: %s%s", why, "");
        return;
    }
    if (n == 0) *exhausted = 1;
    pthread_mutex_lock(&w->lock);
    for (int k = 0; k < n; k++) {
        int refuse = test_refuse(w);
        if (refuse) snprintf(why, sizeof why, "refused on purpose (FOLDSWEEP_TEST_REFUSE)");
        if (refuse || !item_ok(w, &items[k], why, sizeof why) || w->n_jobs >= w->cap) {
            pthread_mutex_unlock(&w->lock);
            run_worker_error(w, "TRIALS item refused: %s%s", w->n_jobs >= w->cap ? "more items than the sweep has" : why,
                             "");
            pthread_mutex_lock(&w->lock);
            continue;
        }
        int i = w->n_jobs;
        RunWorkerJob *jb = &w->jobs[i];
        const FsTrial *tr = &w->sw.trials[items[k].trial];
        jb->item = items[k];
        sweep_seed_spec(&jb->spec, tr, items[k].fold, items[k].seed);
        train_result_alloc(&jb->res, jb->spec.stop.max_epochs);
        jb->job = (FsJob){&tr->arch, &jb->spec, &w->ds, items[k].fold, &jb->res,
                          train_result_alloc_weights(&jb->res, &tr->arch), (const volatile int *)&w->cancel,
                          &jb->prune, &jb->progress, &jb->examples, NULL, 0, 0};
        run_gpu_group_job(&w->gpu_groups, items[k].trial, &jb->job);
        run_worker_attach_ckpt(w, i);
        w->n_jobs++;
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lock);
}

/* PRUNE: the item's trial was pruned on rank 0; its fold stops at the next
 * batch and is not sent back. */
static void take_prune(RunWorker *w, const FsMsg *msg)
{
    FsWorkItem it;
    char why[256];
    if (proto_decode_prune(msg->p, msg->n, &it, why, sizeof why) != 0) {
        run_worker_error(w, "bad PRUNE message: %s%s", why, "");
        return;
    }
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < w->n_jobs; i++) {
        const FsWorkItem *held = &w->jobs[i].item;
        if (held->trial == it.trial && held->fold == it.fold && held->seed == it.seed && !strcmp(held->id, it.id)) w->jobs[i].prune = 1;
    }
    pthread_mutex_unlock(&w->lock);
}

/* The setup broadcast's payload, rebuilt; 0, or -1 with the reason in why. */
static int worker_load(RunWorker *w, char *text, uint8_t *bytes, uint64_t n, char *why, size_t why_n)
{
    FsErrList errs = {0};
    FsErr err = {0};
    const char *fail = fs_test_fault("SETUP_FAIL");
    if (fail && atoi(fail) == w->m->rank)
        return snprintf(why, why_n, "%s: data (from rank 0): cannot load (FOLDSWEEP_TEST_SETUP_FAIL)", w->m->host), -1;
    int ok = sweep_load_string(&w->sw, text, "sweep.yaml (from rank 0)", &errs) == 0 &&
             data_deserialize(&w->ds, bytes, n, "data (from rank 0)", &err) == 0;
    if (ok) return 0;
    char msg[1024];
    if (errs.n) errlist_join(&errs, msg, sizeof msg);
    else snprintf(msg, sizeof msg, "%s", err.msg);
    errlist_free(&errs);
    snprintf(why, why_n, "%s: %.900s", w->m->host, msg);
    return -1;
}

/* 0 when this rank can train; otherwise it has told rank 0 why (or rank 0
 * itself failed) and must not speak the protocol. */
static int worker_setup(RunWorker *w)
{
    int32_t status = 0;
    char *text = NULL;
    uint8_t *bytes = NULL;
    uint64_t n = 0;
    fsmpi_bcast_setup(w->m, &status, &w->ckpt_every, &text, &bytes, &n);
    if (status == 0 || (status & 0xff) != 0) return FS_EXIT_ERROR; /* rank 0 said why */
    w->backend = ((status >> 8) & 0xf) - 1;
    const int gpu_path = (status >> 12) & 0xf; /* rank 0's: --gpu-path, else run.gpu_path */
    char why[1024];
    int rc = worker_load(w, text, bytes, n, why, sizeof why);
    free(text);
    free(bytes);
    if (rc != 0) {
        fsmpi_report_setup(w->m, why, 0, "", NULL);
        return FS_EXIT_ERROR;
    }
    sweep_set_gpu_path(&w->sw, gpu_path);
    FsErrList errs = {0};
    if (sweep_bind_data(&w->sw, &w->ds, &errs) != 0) { /* rank 0 found the same first */
        fsmpi_report_setup(w->m, errs.n ? errs.msg[0] : "the sweep on this data", 0, "", NULL);
        errlist_free(&errs);
        return FS_EXIT_ERROR;
    }
    w->folds = data_folds_of(w->sw.predefined, (int)w->ds.n_folds);
    /* Room for every job rank 0 can send, twice (a lost one comes again);
     * never grown: the trainers hold pointers into the records. */
    int trials = w->sw.sampler == FS_SAMPLER_TPE && w->sw.random_n < w->sw.n_trials ? w->sw.random_n : w->sw.n_trials;
    w->cap = 2 * trials * w->folds.n + 16;
    /* A rank short of memory (a cluster's limit) says so and ends, as a
     * rank that cannot load the data does: rank 0 then ends the run. */
    w->jobs = calloc((size_t)w->cap + 1, sizeof *w->jobs);
    w->outbox = calloc((size_t)w->cap + 1, sizeof(int));
    if (!w->jobs || !w->outbox) {
        snprintf(why, sizeof why, "%s: out of memory for its %d job records (%zu bytes)", w->m->host, w->cap,
                 ((size_t)w->cap + 1) * (sizeof *w->jobs + sizeof(int)));
        fsmpi_report_setup(w->m, why, 0, "", NULL);
        return FS_EXIT_ERROR;
    }
    w->ckpt_steps = run_ckpt_test_steps();
    return FS_EXIT_OK;
}

/* Threads for this rank's pool (run_settings). The sweep here is the
 * canonical one rank 0 sent, without the run section's threads. */
static int worker_threads(const RunWorker *w, const FsRunOptions *o)
{
    FsRunSettings set;
    run_settings(&set, o, &w->sw, w->m);
    return set.threads;
}

/* The backend rank 0 was asked for, on this rank; device gets its words
 * for the binding map. On a GPU the models of one launch take the place of
 * the threads: returns how many jobs this rank trains at once. */
static int worker_backend(RunWorker *w, int threads, char *device, size_t device_n)
{
    FsErr err = {0};
    if (run_choose_backend(w->backend, w->m->local_rank, &w->use_gpu, &w->device, &err) != 0) {
        /* Rank 0 would have refused cuda without a device of its own; this
         * rank has none: it trains on its CPU and says so. */
        run_worker_error(w, "%.900s%s", err.msg, "; this rank trains on its CPU");
    }
    if (w->use_gpu) {
        run_backend_describe(1, w->device, device, device_n);
        /* Capacity: how many models like the sweep's first fit in one launch. */
        FsTrainSpec ts;
        FsFitResult tmp;
        memset(&tmp, 0, sizeof tmp);
        int fold = data_fold_id(&w->folds, 0);
        sweep_fold_spec(&ts, &w->sw.trials[0], fold);
        FsJob probe = {&w->sw.trials[0].arch, &ts, &w->ds, fold, &tmp, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0};
        threads = run_gpu_capacity(w->device, &w->ds, &probe);
        if (threads > FS_PROTO_MAX_ITEMS) threads = FS_PROTO_MAX_ITEMS;
    }
    return threads;
}

/* STOP: no more jobs will come; with cancel the running folds stop between
 * batches. Returns the exit code rank 0 sent. */
static int take_stop(RunWorker *w, const FsMsg *msg)
{
    char why[256];
    int32_t cancel, code;
    if (proto_decode_stop(msg->p, msg->n, &cancel, &code, why, sizeof why) != 0) {
        run_worker_error(w, "bad STOP message: %s%s", why, "");
        cancel = 1, code = FS_EXIT_ERROR;
    }
    pthread_mutex_lock(&w->lock);
    w->no_more = 1;
    if (cancel) w->cancel = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lock);
    return code;
}

/* What the main thread's loop keeps from one round to the next. */
typedef struct {
    int threads;     /* jobs this rank trains at once */
    int exhausted;   /* the last TRIALS was empty */
    int outstanding; /* a REQUEST is not answered yet */
    int handled;     /* jobs answered: result sent, or cancelled */
    int exit_code;   /* from STOP */
    double retry_at; /* after an empty TRIALS: ask again later (a lost job may be queued again) */
    int signalled;   /* mpirun's SIGTERM came: folds cancelled, no more requests */
    FsWorkItem *held;
    FsBuf b;
} WorkerLoop;

/* One message from rank 0 if one is waiting (returns 1), acted on. */
static int take_message(RunWorker *w, WorkerLoop *l)
{
    FsMsg msg;
    if (!fsmpi_poll(w->m, 0, &msg)) return 0;
    char why[256];
    if (proto_check(msg.p, msg.n, msg.tag, why, sizeof why) != 0) {
        run_worker_error(w, "bad message from rank 0: %s%s", why, "");
    } else if (msg.tag == FS_MSG_TRIALS) {
        l->outstanding = 0;
        l->exhausted = 0;
        take_trials(w, &msg, &l->exhausted);
        if (l->exhausted) l->retry_at = fs_now() + 0.2;
    } else if (msg.tag == FS_MSG_PRUNE) {
        take_prune(w, &msg);
    } else if (msg.tag == FS_MSG_CKPT) {
        run_worker_take_resume(w, &msg);
    } else if (msg.tag == FS_MSG_STOP) {
        l->exit_code = take_stop(w, &msg);
    } else {
        run_worker_error(w, "unexpected %s message from rank 0%s", proto_kind_name(msg.tag), "");
    }
    free(msg.p);
    return 1;
}

/* REQUEST, when the pool has room: one at a time (the next only after
 * TRIALS answered it), listing the jobs this rank still holds, so that rank
 * 0 queues again any it sent that is neither held nor answered. */
static void send_request(RunWorker *w, WorkerLoop *l, int received, int no_more)
{
    int holding = received - l->handled;
    pthread_mutex_lock(&w->lock);
    const int failed = w->fail_state != 0; /* this rank cannot go on: rank 0 is stopping the run */
    pthread_mutex_unlock(&w->lock);
    if (failed || no_more || l->signalled || l->outstanding || holding >= l->threads ||
        (l->exhausted && fs_now() < l->retry_at))
        return;
    int n_held = 0;
    for (int i = 0; i < received; i++)
        if (!w->jobs[i].answered) l->held[n_held++] = w->jobs[i].item;
    proto_encode_request(&l->b, l->threads - holding, l->held, n_held);
    fsmpi_send(w->m, 0, FS_MSG_REQUEST, &l->b);
    l->outstanding = 1;
}

/* FAIL, once, when the GPU failed. */
static void send_fail(RunWorker *w, FsBuf *b)
{
    pthread_mutex_lock(&w->lock);
    int send = w->fail_state == 1;
    if (send) w->fail_state = 2;
    pthread_mutex_unlock(&w->lock);
    if (!send) return;
    proto_encode_fail(b, w->fail_text);
    fsmpi_send(w->m, 0, FS_MSG_FAIL, b);
}

/* Under mpirun, mpirun's SIGTERM: the running folds stop at their next
 * batch and checkpoint (rank 0, which got the signal too, sends STOP), and
 * no more work is asked for. */
static void worker_cancel_on_signal(RunWorker *w, WorkerLoop *l)
{
    if (l->signalled || !run_signal_ending()) return;
    l->signalled = 1;
    pthread_mutex_lock(&w->lock);
    w->cancel = 1;
    pthread_mutex_unlock(&w->lock);
}

/* The main thread until STOP has come and every job is answered: rank 0's
 * messages in, then checkpoints, results, epoch values and progress out,
 * and a request when there is room. */
static void worker_loop(RunWorker *w, WorkerLoop *l)
{
    for (;;) {
        worker_cancel_on_signal(w, l);
        int busy = take_message(w, l);
        /* Checkpoints, then results out, as they land. */
        run_worker_send_ckpts(w, &l->b);
        int received, no_more;
        int answered = run_worker_send_results(w, &l->b, &received, &no_more);
        send_fail(w, &l->b);
        l->handled += answered;
        if (answered) busy = 1;
        /* Epoch values (the pruner, --progress) and progress counts. */
        run_worker_send_epochs(w, received, &l->b);
        run_worker_send_progress(w, received, &l->b);
        send_request(w, l, received, no_more);
        if (no_more && l->handled == received) break;
        if (!busy) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

static void worker_free(RunWorker *w)
{
    run_worker_ckpt_free(w);
    for (int i = 0; i < w->n_jobs; i++) train_result_free(&w->jobs[i].res);
    free(w->jobs);
    free(w->outbox);
    run_gpu_groups_free(&w->gpu_groups);
    sweep_free(&w->sw);
    data_free(&w->ds);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->lock);
}

int run_worker(FsMpi *m, const FsRunOptions *o)
{
    /* Rank 0 decides when to stop; a signal that reaches every rank (scancel,
     * mpirun forwarding SIGUSR1) must not end a worker before its results
     * are in. Under mpirun a SIGINT or SIGTERM is mpirun ending the job:
     * the worker keeps the handler and cancels its folds itself
     * (worker_cancel_on_signal), so their checkpoints reach rank 0 before
     * the kill. */
    if (!run_under_mpirun()) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
    }
    signal(SIGUSR1, SIG_IGN);
    RunWorker w;
    memset(&w, 0, sizeof w);
    w.m = m;
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cv, NULL);
    int rc = worker_setup(&w);
    if (rc != FS_EXIT_OK) {
        worker_free(&w);
        return rc;
    }
    char device[240];
    run_backend_describe(0, 0, device, sizeof device);
    int threads = worker_backend(&w, worker_threads(&w, o), device, sizeof device);
    FsErr gerr = {0};
    if (w.use_gpu && run_gpu_check_trials(&w.sw, &w.ds, &w.folds, w.device, &gerr) != 0) {
        fsmpi_report_setup(m, gerr.msg, 0, device, NULL); /* rank 0 ends the run with it */
        worker_free(&w);
        return FS_EXIT_USAGE;
    }
    if (w.use_gpu) run_gpu_groups(&w.sw, &w.ds, &w.folds, w.device, NULL, &w.gpu_groups);
    /* The trainers start before the binding is reported: a rank that can
     * start none (out of memory or threads: a tight `ulimit -v`) says so in
     * the setup gather, and rank 0 ends the run, instead of taking jobs it
     * can never train. */
    FsPoolSource src = {worker_next, worker_done, &w};
    pthread_t gpu;
    int gpu_err = w.use_gpu ? pthread_create(&gpu, NULL, gpu_thread, &w) : 0, pool_err = 0;
    FsPoolThreads *pool = w.use_gpu ? NULL : train_pool_start(&src, threads);
    if (pool) threads = train_pool_started(pool, &pool_err);
    if (gpu_err || (pool && threads == 0)) {
        char why[300];
        snprintf(why, sizeof why, "could not start its %s thread: %s", w.use_gpu ? "GPU driver" : "training",
                 strerror(gpu_err ? gpu_err : pool_err));
        fsmpi_report_setup(m, why, 0, device, NULL);
        pthread_mutex_lock(&w.lock);
        w.no_more = 1; /* the threads that did start end */
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.lock);
        train_pool_join(pool);
        worker_free(&w);
        return FS_EXIT_ERROR;
    }
    fsmpi_report_setup(m, NULL, w.use_gpu ? 0 : threads, device, NULL);
    if (m->rank == 1 && fs_test_fault("INJECT")) run_worker_inject_bad(&w);

    WorkerLoop l = {.threads = threads, .exit_code = FS_EXIT_OK};
    l.held = fs_calloc((size_t)w.cap + 1, sizeof *l.held);
    worker_loop(&w, &l);
    train_pool_join(pool);
    if (w.use_gpu) pthread_join(gpu, NULL);
    run_worker_send_ckpts(&w, &l.b); /* none left after the last result, in practice */
    proto_encode_bye(&l.b, w.gpu_times.kernel_seconds, w.gpu_times.host_seconds);
    fsmpi_send(m, 0, FS_MSG_BYE, &l.b);
    buf_free(&l.b);
    free(l.held);
    worker_free(&w);
    return l.exit_code;
}
