/*
 * worker_send: what a worker rank sends rank 0 besides its requests, and
 * the checkpoints that travel both ways. The pool's trainers queue their
 * checkpoints and notes (queue_out) and finished jobs (the outbox); the
 * main thread, the only one that calls MPI, sends them from its loop
 * (worker.c), with the epoch values rank 0's pruner waits for and the
 * progress counts of its ETA. A checkpoint from rank 0 waits here for the
 * TRIALS item it belongs to.
 */
#include <stdlib.h>
#include <string.h>

#include "run/checkpoints.h"
#include "run/worker.h"

/* ---------------------------------------------------------------------- */
/* Checkpoints: the trainers' hooks, and rank 0's checkpoints to resume.  */

/* A checkpoint (bytes) for rank 0, or what became of the one the job
 * started with (no bytes: resumed at epoch, example next_example, or
 * refused for note), queued by a trainer; or a checkpoint from rank 0 for
 * an item (resumes). */
typedef struct RunOutgoing {
    int job;
    FsWorkItem item;
    uint8_t *bytes;
    uint64_t n;
    int32_t epoch;
    uint32_t next_example;
    char note[sizeof ((FsCheckpointing *)0)->note];
    struct RunOutgoing *next;
} RunOutgoing;

static void queue_out(RunWorker *w, int job, const uint8_t *bytes, uint64_t n, const FsCheckpointing *resumed)
{
    RunOutgoing *o = fs_calloc(1, sizeof *o);
    o->job = job;
    if (bytes) {
        o->bytes = fs_malloc((size_t)n + 1);
        memcpy(o->bytes, bytes, (size_t)n);
        o->n = n;
    }
    if (resumed) {
        o->epoch = resumed->note[0] ? 0 : resumed->resumed_epoch;
        o->next_example = resumed->resumed_next;
        /* Test hook: a worker's RESUMED says an example its fold does not
         * have (rank 0 drops the message, test_midfold). */
        const char *forge = fs_test_fault("RESUMED_NEXT");
        if (forge && o->epoch > 0) o->next_example = (uint32_t)strtoul(forge, NULL, 10);
        memcpy(o->note, resumed->note, sizeof o->note);
        o->note[sizeof o->note - 1] = 0;
    }
    pthread_mutex_lock(&w->lock);
    RunOutgoing **tail = &w->out_ckpt;
    while (*tail) tail = &(*tail)->next;
    *tail = o;
    pthread_mutex_unlock(&w->lock);
}

/* The trainer's hooks: their context is the job's record. */
static void worker_ckpt_save(void *ctx, const uint8_t *bytes, uint64_t n)
{
    RunWorkerJob *jb = ctx;
    queue_out(jb->w, (int)(jb - jb->w->jobs), bytes, n, NULL);
}

static void worker_ckpt_event(void *ctx, int epoch)
{
    RunWorkerJob *jb = ctx;
    const FsCheckpointing *cs = &jb->ck;
    /* Rank 0 says it, as it says its own folds' (run_ckpt_report): a
     * worker's stderr may reach the user late, or not at all. */
    if (epoch == 0 && (cs->note[0] || cs->resumed_epoch > 0)) queue_out(jb->w, (int)(jb - jb->w->jobs), NULL, 0, cs);
    if (epoch == 0) {
        free(jb->resume);
        jb->resume = NULL;
    }
    run_ckpt_test_event(epoch);
}

void run_worker_ckpt_free(RunWorker *w)
{
    for (int i = 0; w->jobs && i < w->n_jobs; i++) free(w->jobs[i].resume);
    for (RunOutgoing *r = w->resumes, *next; r; r = next) { /* items that never came: refused */
        next = r->next;
        free(r->bytes);
        free(r);
    }
}

void run_worker_attach_ckpt(RunWorker *w, int i)
{
    /* A seed replicate keeps no checkpoint (it trains from its start again). */
    if ((w->ckpt_every <= 0 && w->ckpt_steps <= 0) || w->jobs[i].item.seed) return;
    RunWorkerJob *jb = &w->jobs[i];
    FsCheckpointing *cs = &jb->ck;
    jb->w = w;
    memset(cs, 0, sizeof *cs);
    cs->every = w->ckpt_every;
    cs->every_steps = w->ckpt_steps;
    cs->save = worker_ckpt_save;
    cs->event = worker_ckpt_event;
    cs->ctx = jb;
    cs->origin = "checkpoint (from rank 0)";
    const FsWorkItem *it = &w->jobs[i].item;
    for (RunOutgoing **p = &w->resumes; *p; p = &(*p)->next) {
        RunOutgoing *o = *p;
        if (o->item.trial != it->trial || o->item.fold != it->fold || o->item.seed != it->seed ||
            strcmp(o->item.id, it->id) != 0)
            continue;
        jb->resume = o->bytes;
        cs->resume = jb->resume;
        cs->resume_n = o->n;
        *p = o->next;
        free(o);
        break;
    }
    w->jobs[i].job.ckpt = cs;
}

/* CKPT from rank 0: the checkpoint of the item in the TRIALS message that
 * follows (MPI keeps one sender's messages in order). */
void run_worker_take_resume(RunWorker *w, const FsMsg *msg)
{
    const uint8_t *bytes;
    uint64_t n;
    char why[256];
    FsWorkItem it;
    if (proto_decode_ckpt(msg->p, msg->n, &it, &bytes, &n, why, sizeof why) != 0) {
        run_worker_error(w, "bad CKPT message: %s%s", why, "");
        return;
    }
    RunOutgoing *o = fs_calloc(1, sizeof *o);
    o->item = it;
    o->bytes = fs_malloc((size_t)n + 1);
    memcpy(o->bytes, bytes, (size_t)n);
    o->n = n;
    pthread_mutex_lock(&w->lock);
    o->next = w->resumes;
    w->resumes = o;
    pthread_mutex_unlock(&w->lock);
}

/* ---------------------------------------------------------------------- */
/* Messages to rank 0.                                                    */

void run_worker_error(RunWorker *w, const char *fmt, const char *a, const char *b)
{
    char text[1000];
    snprintf(text, sizeof text, fmt, a, b);
    FsBuf buf = {0};
    proto_encode_error(&buf, text);
    fsmpi_send(w->m, 0, FS_MSG_ERROR, &buf);
    buf_free(&buf);
}

/* The trainers' checkpoints and notes, to rank 0 (before any result: a
 * fold stopped by a signal checkpoints, then finishes cancelled). */
void run_worker_send_ckpts(RunWorker *w, FsBuf *b)
{
    pthread_mutex_lock(&w->lock);
    RunOutgoing *o = w->out_ckpt;
    w->out_ckpt = NULL;
    pthread_mutex_unlock(&w->lock);
    while (o) {
        RunOutgoing *next = o->next;
        if (o->bytes) {
            proto_encode_ckpt(b, &w->jobs[o->job].item, o->bytes, o->n);
            fsmpi_send(w->m, 0, FS_MSG_CKPT, b);
        } else {
            proto_encode_resumed(b, &w->jobs[o->job].item, o->epoch, o->next_example, o->note);
            fsmpi_send(w->m, 0, FS_MSG_RESUMED, b);
        }
        free(o->bytes);
        free(o);
        o = next;
    }
}

/* The pool's finished jobs, to rank 0 as they land (a cancelled one is not
 * sent: it is retrained on resume). */
int run_worker_send_results(RunWorker *w, FsBuf *b, int *received, int *no_more)
{
    pthread_mutex_lock(&w->lock);
    int n_out = w->n_out, outbox[64], take = n_out < 64 ? n_out : 64;
    memcpy(outbox, w->outbox, sizeof(int) * (size_t)take);
    memmove(w->outbox, w->outbox + take, sizeof(int) * (size_t)(n_out - take));
    w->n_out -= take;
    *received = w->n_jobs, *no_more = w->no_more;
    pthread_mutex_unlock(&w->lock);
    /* What these jobs queued before they ended (a resume's RESUMED, a stop's
     * CKPT) goes first: rank 0 drops either once it has the job's result. */
    if (take) run_worker_send_ckpts(w, b);
    for (int k = 0; k < take; k++) {
        int i = outbox[k];
        w->jobs[i].answered = 1;
        if (w->jobs[i].res.status == FS_FIT_CANCELLED) {
            /* Retrained on resume; one this rank had no memory for ends the run (FAIL). */
            if (w->jobs[i].res.message[0]) {
                char text[1000];
                snprintf(text, sizeof text, "%s: trial %s fold %d: %.800s", w->m->host, w->jobs[i].item.id,
                         w->jobs[i].item.fold, w->jobs[i].res.message);
                run_worker_fail(w, text);
            }
            continue;
        }
        proto_encode_result(b, &w->jobs[i].item, &w->jobs[i].res);
        fsmpi_send(w->m, 0, FS_MSG_RESULT, b);
        train_result_drop_weights(&w->jobs[i].res); /* rank 0 has them now */
    }
    return take;
}

/* EPOCH messages: the new validation values of each running fold, which
 * rank 0's pruner waits for. Read after the progress counter moved (the
 * trainer writes the curves first). */
void run_worker_send_epochs(RunWorker *w, int received, FsBuf *b)
{
    for (int i = 0; i < received; i++) {
        if (w->jobs[i].answered) continue;
        int p = w->jobs[i].progress;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (p <= w->jobs[i].sent_epochs) continue;
        int first = w->jobs[i].sent_epochs + 1;
        proto_encode_epoch(b, &w->jobs[i].item, first, p - first + 1, &w->jobs[i].res.curves);
        fsmpi_send(w->m, 0, FS_MSG_EPOCH, b);
        w->jobs[i].sent_epochs = p;
    }
}

/* PROGRESS, every two seconds: the running folds' epochs and examples;
 * with none running it goes all the same, as rank 0's heartbeat of this
 * rank (coord_watch.c). */
void run_worker_send_progress(RunWorker *w, int received, FsBuf *b)
{
    double now = fs_now();
    if (now < w->progress_at) return;
    w->progress_at = now + 2.0;
    FsProgressItem items[64];
    int n = 0;
    for (int i = 0; i < received && n < 64; i++) {
        if (w->jobs[i].answered) continue;
        items[n].item = w->jobs[i].item;
        items[n].epochs = w->jobs[i].progress;
        items[n].examples = w->jobs[i].examples;
        n++;
    }
    proto_encode_progress(b, items, n);
    fsmpi_send(w->m, 0, FS_MSG_PROGRESS, b);
}

/* Test hook (INJECT, rank 1 only): sends rank 0 a set of
 * malformed and out-of-protocol messages before the real protocol, so the
 * MPI tests can check that each is reported and none crashes rank 0. */
void run_worker_inject_bad(RunWorker *w)
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
    FsWorkItem it = {0, data_fold_id(&w->folds, 0), "", 0};
    memcpy(it.id, w->sw.trials[0].id, 17);
    FsFitResult r;
    train_result_alloc(&r, 1);
    proto_encode_result(&b, &it, &r); /* a result for work never sent here */
    fsmpi_send(w->m, 0, FS_MSG_RESULT, &b);
    train_result_free(&r);
    buf_free(&b);
}
