/*
 * worker: a worker rank's loop. It receives the canonical sweep and the
 * data bytes once (the setup broadcast), rebuilds the same trials and ids,
 * then asks rank 0 for as many (trial, fold) jobs as it has threads, trains
 * them on its pool, and sends each result back as it lands. Only this
 * thread calls MPI; the pool threads hand results over through an outbox.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu.h"
#include "run/state.h"

typedef struct {
    FsMpi *m;
    FsSweep sw;
    FsDataset ds;
    int n_fold_ids, fold_ids[FS_MAX_FOLDS];
    pthread_mutex_t lock;
    pthread_cond_t cv;
    FsJob *jobs;
    FsFitResult *res;
    FsTrainSpec *specs;
    FsWorkItem *items;
    int cap, n_jobs, next; /* received, handed to threads */
    int *outbox, n_out;
    unsigned char *answered; /* per job: its result went out (or it was cancelled) */
    volatile int *progress;  /* per job: epochs done (the trainer moves it), for EPOCH messages */
    volatile int *prune;     /* per job: rank 0 pruned its trial */
    int *sent_epochs;        /* per job: epochs rank 0 has heard of */
    int no_more;           /* STOP received */
    volatile int cancel;
    int backend;           /* what rank 0 was asked for */
    int refused_once;      /* test hook FOLDSWEEP_TEST_REFUSE */
    int use_gpu, device;
    /* Checkpoints (run.checkpoint, from rank 0): per job its hooks, the
     * bytes to resume from (CKPT before TRIALS), and the checkpoints and
     * notes the trainers made, for the main thread to send. */
    double ckpt_every;
    long ckpt_steps;
    FsCheckpointing *cks;
    struct WorkerCkpt *ck_ctx;
    struct Outgoing *resumes; /* checkpoints from rank 0, each for an item of the next TRIALS */
    struct Outgoing *out_ckpt;
    volatile uint64_t *examples; /* per job: examples trained (PROGRESS) */
    double progress_at;
} Worker;

typedef struct WorkerCkpt {
    Worker *w;
    int job;
    uint8_t *resume; /* owned */
} WorkerCkpt;

/* A checkpoint (bytes) or a note (text) for rank 0, queued by a trainer;
 * or a checkpoint from rank 0 for an item (resumes). */
typedef struct Outgoing {
    int job;
    FsWorkItem item;
    uint8_t *bytes;
    uint64_t n;
    char *text;
    struct Outgoing *next;
} Outgoing;

static void queue_out(Worker *w, int job, const uint8_t *bytes, uint64_t n, const char *text)
{
    Outgoing *o = fs_calloc(1, sizeof *o);
    o->job = job;
    if (bytes) {
        o->bytes = fs_malloc((size_t)n + 1);
        memcpy(o->bytes, bytes, (size_t)n);
        o->n = n;
    }
    if (text) o->text = fs_strdup(text);
    pthread_mutex_lock(&w->lock);
    Outgoing **tail = &w->out_ckpt;
    while (*tail) tail = &(*tail)->next;
    *tail = o;
    pthread_mutex_unlock(&w->lock);
}

static void worker_ckpt_save(void *ctx, const uint8_t *bytes, uint64_t n)
{
    WorkerCkpt *c = ctx;
    queue_out(c->w, c->job, bytes, n, NULL);
}

static void worker_ckpt_event(void *ctx, int epoch)
{
    WorkerCkpt *c = ctx;
    const FsCheckpointing *cs = &c->w->cks[c->job];
    if (epoch == 0 && cs->note[0]) {
        char text[900];
        snprintf(text, sizeof text, "trial %s fold %d: checkpoint ignored, the fold started afresh: %.700s",
                 c->w->items[c->job].id, c->w->items[c->job].fold, cs->note);
        queue_out(c->w, c->job, NULL, 0, text);
    }
    if (epoch == 0) {
        free(c->resume);
        c->resume = NULL;
    }
    run_ckpt_test_event(epoch);
}

/* Job i's checkpointing, with rank 0's checkpoint if it sent one (lock held). */
static void attach_ckpt(Worker *w, int i)
{
    if ((w->ckpt_every <= 0 && w->ckpt_steps <= 0) || w->use_gpu) return;
    WorkerCkpt *c = &w->ck_ctx[i];
    FsCheckpointing *cs = &w->cks[i];
    c->w = w;
    c->job = i;
    memset(cs, 0, sizeof *cs);
    cs->every = w->ckpt_every;
    cs->every_steps = w->ckpt_steps;
    cs->save = worker_ckpt_save;
    cs->event = worker_ckpt_event;
    cs->ctx = c;
    cs->origin = "checkpoint (from rank 0)";
    const FsWorkItem *it = &w->items[i];
    for (Outgoing **p = &w->resumes; *p; p = &(*p)->next) {
        Outgoing *o = *p;
        if (o->item.trial != it->trial || o->item.fold != it->fold || strcmp(o->item.id, it->id) != 0) continue;
        c->resume = o->bytes;
        cs->resume = c->resume;
        cs->resume_n = o->n;
        *p = o->next;
        free(o);
        break;
    }
    w->jobs[i].ckpt = cs;
}

/* A job, the end (STOP), or without wait FS_TAKE_NONE until rank 0 sends
 * more (the thread helps the running folds meanwhile, train.h). */
static int worker_next(void *ctx, const FsJob **job, int *id, int wait)
{
    Worker *w = ctx;
    int r;
    pthread_mutex_lock(&w->lock);
    while (wait && w->next == w->n_jobs && !w->no_more) pthread_cond_wait(&w->cv, &w->lock);
    r = w->next < w->n_jobs ? FS_TAKE_JOB : w->no_more ? FS_TAKE_END : FS_TAKE_NONE;
    if (r == FS_TAKE_JOB) {
        *id = w->next++;
        *job = &w->jobs[*id];
    }
    pthread_mutex_unlock(&w->lock);
    return r;
}

static void worker_done(void *ctx, int id)
{
    Worker *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->outbox[w->n_out++] = id;
    pthread_mutex_unlock(&w->lock);
}

/* The local queue for the GPU driver. */
static int gpu_take(void *ctx, int *id, int wait)
{
    Worker *w = ctx;
    pthread_mutex_lock(&w->lock);
    while (wait && w->next == w->n_jobs && !w->no_more) pthread_cond_wait(&w->cv, &w->lock);
    int got = w->next < w->n_jobs;
    if (got) *id = w->next++;
    pthread_mutex_unlock(&w->lock);
    return got;
}

static const FsJob *gpu_job(void *ctx, int id) { return &((Worker *)ctx)->jobs[id]; }
static void gpu_epochs(void *ctx, long epochs) { (void)ctx, (void)epochs; }

static void *gpu_thread(void *ctx)
{
    Worker *w = ctx;
    FsGpuQueue q = {gpu_take, worker_done, gpu_job, gpu_epochs, w};
    run_gpu_drive(w->device, &w->ds, &q);
    return NULL;
}

static void send_error(Worker *w, const char *fmt, const char *a, const char *b)
{
    char text[1000];
    snprintf(text, sizeof text, fmt, a, b);
    FsBuf buf = {0};
    proto_encode_error(&buf, text);
    fsmpi_send(w->m, 0, FS_MSG_ERROR, &buf);
    buf_free(&buf);
}

/* Checks one item from rank 0 against this rank's copy of the sweep. */
static int item_ok(const Worker *w, const FsWorkItem *it, char *why, size_t n)
{
    if (it->trial >= w->sw.n_trials) return snprintf(why, n, "trial %d of %d", it->trial, w->sw.n_trials), 0;
    if (strcmp(w->sw.trials[it->trial].id, it->id) != 0)
        return snprintf(why, n, "trial %d is %s here, not %s", it->trial, w->sw.trials[it->trial].id, it->id), 0;
    for (int k = 0; k < w->n_fold_ids; k++)
        if (w->fold_ids[k] == it->fold) return 1;
    return snprintf(why, n, "fold %d is not a fold of this sweep", it->fold), 0;
}

/* Test hook FOLDSWEEP_TEST_REFUSE=R (rank R refuses its first item) or
 * R:all (every item): the lost-work path of rank 0, tested for real. */
static int test_refuse(Worker *w)
{
    const char *v = getenv("FOLDSWEEP_TEST_REFUSE");
    if (!v || atoi(v) != w->m->rank) return 0;
    return strstr(v, ":all") != NULL || !w->refused_once++;
}

static void take_trials(Worker *w, const FsMsg *msg, int *exhausted)
{
    static FsWorkItem items[FS_PROTO_MAX_ITEMS];
    int n = 0;
    char why[256];
    /* Items not taken here are missing from this rank's next REQUEST, and
     * rank 0 queues them again. */
    if (proto_decode_trials(msg->p, msg->n, items, &n, why, sizeof why) != 0) {
        send_error(w, "bad TRIALS message: %s%s", why, "");
        return;
    }
    if (n == 0) *exhausted = 1;
    pthread_mutex_lock(&w->lock);
    for (int k = 0; k < n; k++) {
        int refuse = test_refuse(w);
        if (refuse) snprintf(why, sizeof why, "refused on purpose (FOLDSWEEP_TEST_REFUSE)");
        if (refuse || !item_ok(w, &items[k], why, sizeof why) || w->n_jobs >= w->cap) {
            pthread_mutex_unlock(&w->lock);
            send_error(w, "TRIALS item refused: %s%s", w->n_jobs >= w->cap ? "more items than the sweep has" : why, "");
            pthread_mutex_lock(&w->lock);
            continue;
        }
        int i = w->n_jobs;
        const FsTrial *tr = &w->sw.trials[items[k].trial];
        w->items[i] = items[k];
        run_job_spec(&w->specs[i], tr, items[k].fold);
        train_result_alloc(&w->res[i], w->specs[i].stop.max_epochs);
        w->jobs[i] = (FsJob){&tr->arch, &w->specs[i], &w->ds, items[k].fold, &w->res[i],
                             train_result_alloc_weights(&w->res[i], &tr->arch), (const volatile int *)&w->cancel,
                             &w->prune[i], &w->progress[i], &w->examples[i], NULL};
        attach_ckpt(w, i);
        w->n_jobs++;
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lock);
}

/* CKPT from rank 0: the checkpoint of the item in the TRIALS message that
 * follows (MPI keeps one sender's messages in order). */
static void take_resume(Worker *w, const FsMsg *msg)
{
    const uint8_t *bytes;
    uint64_t n;
    char why[256];
    FsWorkItem it;
    if (proto_decode_ckpt(msg->p, msg->n, &it, &bytes, &n, why, sizeof why) != 0) {
        send_error(w, "bad CKPT message: %s%s", why, "");
        return;
    }
    Outgoing *o = fs_calloc(1, sizeof *o);
    o->item = it;
    o->bytes = fs_malloc((size_t)n + 1);
    memcpy(o->bytes, bytes, (size_t)n);
    o->n = n;
    pthread_mutex_lock(&w->lock);
    o->next = w->resumes;
    w->resumes = o;
    pthread_mutex_unlock(&w->lock);
}

/* The trainers' checkpoints and notes, to rank 0 (before any result: a
 * fold stopped by a signal checkpoints, then finishes cancelled). */
static void send_ckpts(Worker *w, FsBuf *b)
{
    pthread_mutex_lock(&w->lock);
    Outgoing *o = w->out_ckpt;
    w->out_ckpt = NULL;
    pthread_mutex_unlock(&w->lock);
    while (o) {
        Outgoing *next = o->next;
        if (o->bytes) {
            proto_encode_ckpt(b, &w->items[o->job], o->bytes, o->n);
            fsmpi_send(w->m, 0, FS_MSG_CKPT, b);
        } else {
            send_error(w, "%s%s", o->text, "");
        }
        free(o->bytes);
        free(o->text);
        free(o);
        o = next;
    }
}

/* PROGRESS, every two seconds: the running folds' epochs and examples. */
static void send_progress(Worker *w, int received, FsBuf *b)
{
    double now = fs_now();
    if (now < w->progress_at) return;
    w->progress_at = now + 2.0;
    FsProgressItem items[64];
    int n = 0;
    for (int i = 0; i < received && n < 64; i++) {
        if (w->answered[i]) continue;
        items[n].item = w->items[i];
        items[n].epochs = w->progress[i];
        items[n].examples = w->examples[i];
        n++;
    }
    if (n == 0) return;
    proto_encode_progress(b, items, n);
    fsmpi_send(w->m, 0, FS_MSG_PROGRESS, b);
}

/* PRUNE: the item's trial was pruned on rank 0; its fold stops at the next
 * batch and is not sent back. */
static void take_prune(Worker *w, const FsMsg *msg)
{
    FsWorkItem it;
    char why[256];
    if (proto_decode_prune(msg->p, msg->n, &it, why, sizeof why) != 0) {
        send_error(w, "bad PRUNE message: %s%s", why, "");
        return;
    }
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < w->n_jobs; i++)
        if (w->items[i].trial == it.trial && w->items[i].fold == it.fold && !strcmp(w->items[i].id, it.id))
            w->prune[i] = 1;
    pthread_mutex_unlock(&w->lock);
}

/* EPOCH messages: the new validation values of each running fold, which
 * rank 0's pruner waits for. Read after the progress counter moved (the
 * trainer writes the curves first). */
static void send_epochs(Worker *w, int received, FsBuf *b)
{
    for (int i = 0; i < received; i++) {
        if (w->answered[i]) continue;
        int p = w->progress[i];
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (p <= w->sent_epochs[i]) continue;
        int first = w->sent_epochs[i] + 1;
        proto_encode_epoch(b, &w->items[i], first, p - first + 1, &w->res[i].curves);
        fsmpi_send(w->m, 0, FS_MSG_EPOCH, b);
        w->sent_epochs[i] = p;
    }
}

/* Test hook (FOLDSWEEP_TEST_INJECT=1, rank 1 only): sends rank 0 a set of
 * malformed and out-of-protocol messages before the real protocol, so the
 * MPI tests can check that each is reported and none crashes rank 0. */
static void inject_bad_messages(Worker *w)
{
    FsBuf b = {0};
    uint8_t junk[5] = {1, 2, 3, 4, 5};
    FsBuf short_msg = {junk, 5, 5};
    fsmpi_send(w->m, 0, FS_MSG_REQUEST, &short_msg);
    proto_encode_request(&b, 1, NULL, 0);
    b.p[0] ^= 0xff; /* bad magic */
    fsmpi_send(w->m, 0, FS_MSG_REQUEST, &b);
    proto_encode_request(&b, 1, NULL, 0);
    b.p[4] = 99; /* another protocol version */
    fsmpi_send(w->m, 0, FS_MSG_REQUEST, &b);
    proto_encode_request(&b, 1, NULL, 0);
    fsmpi_send(w->m, 0, FS_MSG_RESULT, &b); /* header and tag disagree */
    proto_encode_request(&b, -5, NULL, 0);
    fsmpi_send(w->m, 0, FS_MSG_REQUEST, &b); /* impossible capacity */
    proto_encode_trials(&b, NULL, 0);
    fsmpi_send(w->m, 0, FS_MSG_TRIALS, &b); /* a coordinator's message */
    FsWorkItem it = {0, w->fold_ids[0], ""};
    memcpy(it.id, w->sw.trials[0].id, 17);
    FsFitResult r;
    train_result_alloc(&r, 1);
    proto_encode_result(&b, &it, &r); /* a result for work never sent here */
    fsmpi_send(w->m, 0, FS_MSG_RESULT, &b);
    train_result_free(&r);
    buf_free(&b);
}

/* The setup broadcast's payload, rebuilt; 0, or -1 with the reason in why. */
static int worker_load(Worker *w, char *text, uint8_t *bytes, uint64_t n, char *why, size_t why_n)
{
    FsErrList errs = {0};
    FsErr err = {0};
    const char *fail = getenv("FOLDSWEEP_TEST_SETUP_FAIL");
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
static int worker_setup(Worker *w, const FsRunOptions *o)
{
    int32_t status = 0;
    char *text = NULL;
    uint8_t *bytes = NULL;
    uint64_t n = 0;
    fsmpi_bcast_setup(w->m, &status, &w->ckpt_every, &text, &bytes, &n);
    if (status == 0 || (status & 0xff) != 0) return FS_EXIT_ERROR; /* rank 0 said why */
    w->backend = (status >> 8) - 1;
    char why[1024];
    int rc = worker_load(w, text, bytes, n, why, sizeof why);
    free(text);
    free(bytes);
    if (rc != 0) {
        fsmpi_report_setup(w->m, why, 0, "", NULL);
        return FS_EXIT_ERROR;
    }
    (void)o;
    sweep_assign_ids(&w->sw, w->ds.fingerprint);
    if (w->sw.predefined) {
        w->n_fold_ids = 1;
        w->fold_ids[0] = FS_FOLD_PREDEFINED;
    } else {
        w->n_fold_ids = (int)w->ds.n_folds;
        for (int f = 0; f < w->n_fold_ids; f++) w->fold_ids[f] = f;
    }
    /* Room for every job rank 0 can send, twice (a lost one comes again). */
    int trials = w->sw.sampler == FS_SAMPLER_TPE && w->sw.random_n < w->sw.n_trials ? w->sw.random_n : w->sw.n_trials;
    w->cap = 2 * trials * w->n_fold_ids + 16;
    w->jobs = fs_calloc((size_t)w->cap + 1, sizeof(FsJob));
    w->res = fs_calloc((size_t)w->cap + 1, sizeof(FsFitResult));
    w->specs = fs_calloc((size_t)w->cap + 1, sizeof(FsTrainSpec));
    w->items = fs_calloc((size_t)w->cap + 1, sizeof(FsWorkItem));
    w->outbox = fs_calloc((size_t)w->cap + 1, sizeof(int));
    w->answered = fs_calloc((size_t)w->cap + 1, 1);
    w->progress = fs_calloc((size_t)w->cap + 1, sizeof(int));
    w->prune = fs_calloc((size_t)w->cap + 1, sizeof(int));
    w->sent_epochs = fs_calloc((size_t)w->cap + 1, sizeof(int));
    w->examples = fs_calloc((size_t)w->cap + 1, sizeof(uint64_t));
    w->cks = fs_calloc((size_t)w->cap + 1, sizeof(FsCheckpointing));
    w->ck_ctx = fs_calloc((size_t)w->cap + 1, sizeof(WorkerCkpt));
    w->ckpt_steps = run_ckpt_test_steps();
    return FS_EXIT_OK;
}

int run_worker(FsMpi *m, const FsRunOptions *o)
{
    /* Rank 0 decides when to stop; a signal that reaches every rank (scancel,
     * mpirun forwarding) must not end a worker before its results are in. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
    Worker w;
    memset(&w, 0, sizeof w);
    w.m = m;
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cv, NULL);
    int rc = worker_setup(&w, o);
    if (rc != FS_EXIT_OK) {
        sweep_free(&w.sw);
        data_free(&w.ds);
        return rc;
    }
    int threads = o->threads > 0 ? o->threads : w.sw.threads > 0 ? w.sw.threads : m->node_cores / m->local_size;
    if (threads < 1) threads = 1;
    FsErr err = {0};
    char device[160] = "cpu";
    if (run_choose_backend(w.backend, m->local_rank, &w.use_gpu, &w.device, &err) != 0) {
        /* Rank 0 would have refused cuda without a device of its own; this
         * rank has none: it trains on its CPU and says so. */
        send_error(&w, "%.900s%s", err.msg, "; this rank trains on its CPU");
    }
    if (w.use_gpu) {
        snprintf(device, sizeof device, "GPU %d: ", w.device);
        gpu_describe(w.device, device + strlen(device), sizeof device - strlen(device));
        /* Capacity: how many models like the sweep's first fit in one launch. */
        FsTrainSpec ts;
        FsFitResult tmp;
        memset(&tmp, 0, sizeof tmp);
        run_job_spec(&ts, &w.sw.trials[0], w.fold_ids[0]);
        FsJob probe = {&w.sw.trials[0].arch, &ts, &w.ds, w.fold_ids[0], &tmp, NULL, NULL, NULL, NULL, NULL, NULL};
        threads = run_gpu_capacity(w.device, &w.ds, &probe);
        if (threads > FS_PROTO_MAX_ITEMS) threads = FS_PROTO_MAX_ITEMS;
    }
    fsmpi_report_setup(m, NULL, w.use_gpu ? 0 : threads, device, NULL);
    if (m->rank == 1 && getenv("FOLDSWEEP_TEST_INJECT")) inject_bad_messages(&w);

    FsPoolSource src = {worker_next, worker_done, &w};
    pthread_t gpu;
    int gpu_running = w.use_gpu && pthread_create(&gpu, NULL, gpu_thread, &w) == 0;
    FsPoolThreads *pool = w.use_gpu ? NULL : train_pool_start(&src, threads);
    int exhausted = 0, outstanding = 0, handled = 0, sent = 0, exit_code = FS_EXIT_OK;
    double retry_at = 0; /* after an empty TRIALS: ask again later (a lost job may be queued again) */
    FsWorkItem *held = fs_calloc((size_t)w.cap + 1, sizeof *held);
    FsBuf b = {0};
    for (;;) {
        int busy = 0;
        FsMsg msg;
        if (fsmpi_poll(m, 0, &msg)) {
            busy = 1;
            char why[256];
            int32_t cancel, code;
            if (proto_check(msg.p, msg.n, msg.tag, why, sizeof why) != 0) {
                send_error(&w, "bad message from rank 0: %s%s", why, "");
            } else if (msg.tag == FS_MSG_TRIALS) {
                outstanding = 0;
                exhausted = 0;
                take_trials(&w, &msg, &exhausted);
                if (exhausted) retry_at = fs_now() + 0.2;
            } else if (msg.tag == FS_MSG_PRUNE) {
                take_prune(&w, &msg);
            } else if (msg.tag == FS_MSG_CKPT) {
                take_resume(&w, &msg);
            } else if (msg.tag == FS_MSG_STOP) {
                if (proto_decode_stop(msg.p, msg.n, &cancel, &code, why, sizeof why) != 0) {
                    send_error(&w, "bad STOP message: %s%s", why, "");
                    cancel = 1, code = FS_EXIT_ERROR;
                }
                pthread_mutex_lock(&w.lock);
                w.no_more = 1;
                if (cancel) w.cancel = 1;
                pthread_cond_broadcast(&w.cv);
                pthread_mutex_unlock(&w.lock);
                exit_code = code;
            } else {
                send_error(&w, "unexpected %s message from rank 0%s", proto_kind_name(msg.tag), "");
            }
            free(msg.p);
        }
        /* Checkpoints, then results out, as they land. */
        send_ckpts(&w, &b);
        pthread_mutex_lock(&w.lock);
        int n_out = w.n_out, outbox[64], take = n_out < 64 ? n_out : 64;
        memcpy(outbox, w.outbox, sizeof(int) * (size_t)take);
        memmove(w.outbox, w.outbox + take, sizeof(int) * (size_t)(n_out - take));
        w.n_out -= take;
        int received = w.n_jobs, no_more = w.no_more;
        pthread_mutex_unlock(&w.lock);
        for (int k = 0; k < take; k++) {
            int i = outbox[k];
            handled++;
            busy = 1;
            w.answered[i] = 1;
            if (w.res[i].status == FS_FIT_CANCELLED) continue; /* retrained on resume */
            proto_encode_result(&b, &w.items[i], &w.res[i]);
            fsmpi_send(m, 0, FS_MSG_RESULT, &b);
            train_result_drop_weights(&w.res[i]); /* rank 0 has them now */
            sent++;
        }
        /* Epoch values (the pruner, --progress) and progress counts. */
        send_epochs(&w, received, &b);
        send_progress(&w, received, &b);
        int holding = received - handled;
        if (!no_more && !outstanding && holding < threads && (!exhausted || fs_now() >= retry_at)) {
            int n_held = 0;
            for (int i = 0; i < received; i++)
                if (!w.answered[i]) held[n_held++] = w.items[i];
            proto_encode_request(&b, threads - holding, held, n_held);
            fsmpi_send(m, 0, FS_MSG_REQUEST, &b);
            outstanding = 1;
        }
        if (no_more && handled == received) break;
        if (!busy) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    train_pool_join(pool);
    if (gpu_running) pthread_join(gpu, NULL);
    send_ckpts(&w, &b); /* none left after the last result, in practice */
    proto_encode_bye(&b);
    fsmpi_send(m, 0, FS_MSG_BYE, &b);
    buf_free(&b);
    free(held);
    free(w.answered);
    free((void *)w.progress);
    free((void *)w.prune);
    free(w.sent_epochs);
    for (int i = 0; i < w.n_jobs; i++) free(w.ck_ctx[i].resume);
    free(w.ck_ctx);
    free(w.cks);
    free((void *)w.examples);
    for (Outgoing *r = w.resumes, *next; r; r = next) { /* items that never came: refused */
        next = r->next;
        free(r->bytes);
        free(r);
    }
    for (int i = 0; i < w.n_jobs; i++) train_result_free(&w.res[i]);
    free(w.jobs);
    free(w.res);
    free(w.specs);
    free(w.items);
    free(w.outbox);
    sweep_free(&w.sw);
    data_free(&w.ds);
    (void)sent;
    return exit_code;
}
