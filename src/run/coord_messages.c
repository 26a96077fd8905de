/*
 * coord_messages: rank 0's side of the conversation with worker ranks.
 * Every message is checked before it is trusted: its header, its source
 * (a live worker rank), and for a result or epoch values that the item was
 * sent to that rank; a bad one is reported and dropped. A REQUEST lists the
 * jobs the worker still holds, so that a lost job goes back to the queue.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "run/checkpoints.h"
#include "run/coord.h"
#include "run/decide.h"

/* A job lost this often (refused, or its result never came) stops the run:
 * the cause is on the worker's side, and queueing it forever would hang. */
#define FS_MAX_LOST 3

void run_coord_sync_jobs(RunCoord *c)
{
    RunState *st = c->st;
    for (; c->jobs_known < st->n_jobs; c->jobs_known++) {
        int i = c->jobs_known;
        c->jobs[i].owner = -1;
        if (st->jobs[i].seed && c->first_seed_job < 0) c->first_seed_job = i;
        if (!st->jobs[i].seed) c->job_of[st->jobs[i].trial * st->folds.n + st->jobs[i].slot] = i;
    }
}

int run_coord_job(const RunCoord *c, int trial, int k, int seed)
{
    const RunState *st = c->st;
    if (trial < 0 || trial >= st->sw.n_trials || k < 0) return -1;
    if (!seed) return c->job_of[trial * st->folds.n + k];
    for (int i = c->first_seed_job; i >= 0 && i < c->jobs_known; i++)
        if (st->jobs[i].trial == trial && st->jobs[i].slot == k && st->jobs[i].seed == seed) return i;
    return -1;
}

/* The job of a message's item, or -1. */
static int job_of_item(const RunCoord *c, const FsWorkItem *it)
{
    const RunState *st = c->st;
    int i = run_coord_job(c, it->trial, data_fold_slot(&st->folds, it->fold, NULL), it->seed);
    return i >= 0 && !strcmp(st->sw.trials[it->trial].id, it->id) ? i : -1;
}

static void bad_message(const FsMsg *msg, const char *why)
{
    fprintf(stderr, "foldsweep: rank 0: bad %s message from rank %d (dropped): %s\n", proto_kind_name(msg->tag),
            msg->source, why);
}

/* TRIALS: up to capacity queued jobs for rank `rank`, each preceded by its
 * checkpoint if the folder has one. */
static void send_trials(RunCoord *c, int rank, int capacity)
{
    RunState *st = c->st;
    FsWorkItem *items = fs_calloc((size_t)(capacity > 0 ? capacity : 1), sizeof *items);
    int n = 0;
    pthread_mutex_lock(&st->lock);
    int i;
    run_coord_sync_jobs(c);
    while (n < capacity && !*run_stop_flag() && (i = run_queue_take(&st->queue)) >= 0) {
        c->jobs[i].owner = rank;
        c->ranks[rank].inflight++;
        state_job_started(st, i);
        const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
        items[n].trial = tr->index;
        items[n].fold = st->jobs[i].job.fold;
        items[n].seed = st->jobs[i].seed;
        memcpy(items[n].id, tr->id, 17);
        n++;
    }
    pthread_mutex_unlock(&st->lock);
    FsBuf b = {0};
    /* Each item's checkpoint first, if one is in the folder: the worker
     * continues the fold where it was. */
    for (int k = 0; k < n && (st->sw.checkpoint > 0 || run_ckpt_test_steps()); k++) {
        uint64_t nb;
        char path[FS_PATH_IN_DIR];
        if (items[k].seed) continue; /* a seed replicate keeps no checkpoint */
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

/* A REQUEST lists what the worker still holds. It sends one only after its
 * previous request was answered, and MPI keeps one sender's messages in
 * order, so every result it sent before is already in: a job rank 0 sent it
 * that is neither answered nor held was lost (refused, or a result that
 * could not be read) and goes back to the queue. */
static void reconcile(RunCoord *c, int rank, const FsWorkItem *held, int n_held)
{
    RunState *st = c->st;
    c->serial++;
    for (int h = 0; h < n_held; h++) {
        int i = run_coord_job(c, held[h].trial, data_fold_slot(&st->folds, held[h].fold, NULL), held[h].seed);
        if (i >= 0 && c->jobs[i].owner == rank) c->jobs[i].seen = c->serial;
    }
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->n_jobs; i++) {
        if (c->jobs[i].owner != rank || c->jobs[i].seen == c->serial) continue;
        const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
        c->jobs[i].owner = -1;
        c->ranks[rank].inflight--;
        if (++c->jobs[i].lost >= FS_MAX_LOST) {
            FsErr e = {0};
            fs_err_set(&e, "trial %s fold %d was lost %d times (last on rank %d: refused, or its result could not "
                           "be read; see the messages above); stopping. Rerun the same command to resume",
                       tr->id, st->jobs[i].job.fold, c->jobs[i].lost, rank);
            state_fail(st, &e);
            progress_fold_finished(&st->prog, 0, 0);
            continue;
        }
        fprintf(stderr, "foldsweep: rank 0: trial %s fold %d sent to rank %d came back neither trained nor held; "
                        "queued again\n", tr->id, st->jobs[i].job.fold, rank);
        state_job_requeue(st, i);
    }
    pthread_mutex_unlock(&st->lock);
}

/* EPOCH: a worker's validation values of a running fold, for the pruner.
 * Values for a fold no longer out there (its trial was just pruned) are
 * dropped quietly. */
static void take_epochs(RunCoord *c, const FsMsg *msg)
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
    if (i < 0 || c->jobs[i].owner != msg->source) return;
    FsFitResult *r = &st->jobs[i].res;
    if (first - 1 + n > st->jobs[i].spec.stop.max_epochs) {
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
        run_decide(st);
    }
    pthread_mutex_unlock(&st->lock);
}

/* PROGRESS: examples trained by a worker's running folds (the ETA). */
static void take_progress(RunCoord *c, const FsMsg *msg)
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
        if (i >= 0 && c->jobs[i].owner == msg->source) st->jobs[i].examples = c->prog[k].examples;
    }
    pthread_mutex_unlock(&st->lock);
}

/* CKPT: a worker's checkpoint of a fold it trains, kept in the run folder
 * for the rank that trains the fold next (a resume). */
static void take_ckpt(RunCoord *c, const FsMsg *msg)
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
    if (i < 0 || c->jobs[i].owner != msg->source || it.seed) return; /* pruned or reassigned meanwhile */
    FsErr err = {0};
    double t0 = fs_now();
    if (run_ckpt_write(st->dir, it.id, it.fold, bytes, n, &err) != 0)
        fprintf(stderr, "foldsweep: warning: trial %s fold %d: checkpoint from rank %d not written (%s)\n", it.id,
                it.fold, msg->source, err.msg);
    else if (*run_stop_flag() && !st->prog.quiet && st->prog.out)
        fprintf(st->prog.out, "foldsweep: trial %s fold %d: checkpoint from rank %d kept (%.1f MB, %.3f s to write)\n",
                it.id, it.fold, msg->source, (double)n / 1e6, fs_now() - t0);
}

/* RESUMED: what became of the checkpoint a worker's fold started with,
 * said here as rank 0's own folds say it (a worker's stderr may reach the
 * user late or not at all). */
static void take_resumed(RunCoord *c, const FsMsg *msg)
{
    RunState *st = c->st;
    char why[256];
    FsWorkItem it;
    FsCheckpointing cs = {0};
    int32_t epoch;
    if (proto_decode_resumed(msg->p, msg->n, &it, &epoch, &cs.resumed_next, cs.note, sizeof cs.note, why,
                             sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    int i = job_of_item(c, &it);
    if (i < 0 || c->jobs[i].owner != msg->source) return; /* pruned or reassigned meanwhile */
    if (epoch > st->jobs[i].spec.stop.max_epochs) {
        bad_message(msg, "resumed past the trial's max_epochs");
        return;
    }
    if (epoch > 0 && cs.resumed_next >= train_job_examples(&st->jobs[i].job, 0)) {
        bad_message(msg, "resumed past its fold's training examples");
        return;
    }
    cs.resumed_epoch = epoch;
    run_ckpt_report(&cs, it.id, it.fold, st->prog.out, st->prog.quiet);
}

/* BYE: a worker has drained; its GPU's time goes into the run's profile. */
static void take_bye(RunCoord *c, const FsMsg *msg)
{
    char why[256];
    double kernel_s, host_s;
    c->ranks[msg->source].bye = 1;
    if (proto_decode_bye(msg->p, msg->n, &kernel_s, &host_s, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    pthread_mutex_lock(&c->st->lock);
    c->st->gpu_times.kernel_seconds += kernel_s;
    c->st->gpu_times.host_seconds += host_s;
    pthread_mutex_unlock(&c->st->lock);
}

/* RESULT: a fold a worker trained, recorded as rank 0's own would be; one
 * not sent to that rank is refused, one of a trial pruned meanwhile dropped. */
static void take_result(RunCoord *c, const FsMsg *msg)
{
    RunState *st = c->st;
    char why[256];
    FsWorkItem it;
    FsFitResult r;
    if (proto_decode_result(msg->p, msg->n, &it, &r, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    int i = run_coord_job(c, it.trial, data_fold_slot(&st->folds, it.fold, NULL), it.seed);
    if (i >= 0 && c->jobs[i].owner == -2 && st->jobs[i].prune) { /* finished before it heard of its pruning */
        train_result_free(&r);
        return;
    }
    if (i < 0 || c->jobs[i].owner != msg->source || strcmp(st->sw.trials[it.trial].id, it.id) != 0) {
        snprintf(why, sizeof why, "trial %d (%.16s) fold %d was not sent to rank %d", it.trial, it.id, it.fold,
                 msg->source);
        bad_message(msg, why);
        train_result_free(&r);
        return;
    }
    pthread_mutex_lock(&st->lock);
    c->ranks[msg->source].inflight--;
    train_result_free(&st->jobs[i].res);
    st->jobs[i].res = r;
    st->jobs[i].job.result = &st->jobs[i].res;
    c->jobs[i].owner = -2;
    run_job_finished(st, i);
    pthread_mutex_unlock(&st->lock);
}

/* REQUEST: the worker's lost jobs back in the queue, then as many jobs as
 * it asks for (none once the STOP is out: it gets an empty TRIALS). */
static void take_request(RunCoord *c, const FsMsg *msg, int stop_sent)
{
    char why[256];
    int32_t cap;
    int n_held;
    if (proto_decode_request(msg->p, msg->n, &cap, c->held, &n_held, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    reconcile(c, msg->source, c->held, n_held);
    send_trials(c, msg->source, stop_sent ? 0 : cap);
}

/* ERROR: what went wrong on a worker, for the user. */
static void take_error(const FsMsg *msg)
{
    char text[1001], why[256];
    if (proto_decode_error(msg->p, msg->n, text, sizeof text, why, sizeof why) != 0)
        bad_message(msg, why);
    else
        fprintf(stderr, "foldsweep: rank %d reports: %s\n", msg->source, text);
}

/* FAIL: the worker cannot go on (its GPU failed): its in-flight folds
 * were not recorded, and the run stops with the worker's reason. */
static void take_fail(RunCoord *c, const FsMsg *msg)
{
    char text[1001], why[256];
    if (proto_decode_fail(msg->p, msg->n, text, sizeof text, why, sizeof why) != 0) {
        bad_message(msg, why);
        return;
    }
    FsErr e = {0};
    fs_err_set(&e, "rank %d cannot go on: %s", msg->source, text);
    pthread_mutex_lock(&c->st->lock);
    state_fail(c->st, &e);
    pthread_mutex_unlock(&c->st->lock);
}

/* A message from rank r, for the heartbeat (coord_watch.c): heard now. One
 * from a rank given up on is dropped (its jobs went elsewhere) and the rank
 * told to stop, once; its BYE still counts. Returns 1 to act on it. */
static int heard(RunCoord *c, const FsMsg *msg)
{
    int r = msg->source;
    c->ranks[r].heard = fs_now();
    if (!c->ranks[r].gone) return 1;
    if (!c->ranks[r].gone_stopped) {
        fprintf(stderr, "foldsweep: rank 0: rank %d answers again; its folds went to other ranks, it is told to "
                        "stop\n", r);
        FsBuf b = {0};
        proto_encode_stop(&b, 1, FS_EXIT_OK);
        fsmpi_send(c->m, r, FS_MSG_STOP, &b);
        buf_free(&b);
        c->ranks[r].gone_stopped = 1;
    }
    return msg->tag == FS_MSG_BYE; /* counted; anything else is dropped */
}

void run_coord_message(RunCoord *c, const FsMsg *msg, int stop_sent)
{
    const FsMpi *m = c->m;
    char why[256];
    if (msg->source < 1 || msg->source >= m->size || m->rank_failed[msg->source]) {
        bad_message(msg, "not from a worker rank");
    } else if (!heard(c, msg)) {
        return; /* a rank given up on: its jobs went elsewhere */
    } else if (proto_check(msg->p, msg->n, msg->tag, why, sizeof why) != 0) {
        bad_message(msg, why);
    } else if (msg->tag == FS_MSG_REQUEST) {
        take_request(c, msg, stop_sent);
    } else if (msg->tag == FS_MSG_RESULT) {
        take_result(c, msg);
    } else if (msg->tag == FS_MSG_EPOCH) {
        take_epochs(c, msg);
    } else if (msg->tag == FS_MSG_PROGRESS) {
        take_progress(c, msg);
    } else if (msg->tag == FS_MSG_CKPT) {
        take_ckpt(c, msg);
    } else if (msg->tag == FS_MSG_ERROR) {
        take_error(msg);
    } else if (msg->tag == FS_MSG_RESUMED) {
        take_resumed(c, msg);
    } else if (msg->tag == FS_MSG_FAIL) {
        take_fail(c, msg);
    } else if (msg->tag == FS_MSG_BYE) {
        take_bye(c, msg);
    } else {
        bad_message(msg, "not a message a worker sends");
    }
}

/* Folds of newly pruned trials running on worker ranks: each rank is told
 * to stop them, and they count as done here (lock held). */
void run_coord_tell_cuts(RunCoord *c)
{
    RunState *st = c->st;
    if (!st->pruner || c->cuts_seen == st->cuts_made) return;
    c->cuts_seen = st->cuts_made;
    FsBuf b = {0};
    for (int i = 0; i < st->n_jobs; i++) {
        int r = c->jobs[i].owner;
        if (r < 1 || !st->jobs[i].prune) continue;
        const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
        FsWorkItem it = {tr->index, st->jobs[i].job.fold, "", st->jobs[i].seed};
        memcpy(it.id, tr->id, 17);
        proto_encode_prune(&b, &it);
        fsmpi_send(c->m, r, FS_MSG_PRUNE, &b);
        c->jobs[i].owner = -2;
        c->ranks[r].inflight--;
        run_queue_done(&st->queue, i);
        progress_fold_finished(&st->prog, 1, 0);
    }
    buf_free(&b);
    pthread_cond_broadcast(&st->cv);
}

void run_coord_stop_all(RunCoord *c, int cancel, int code)
{
    FsBuf b = {0};
    proto_encode_stop(&b, cancel, code);
    for (int r = 1; r < c->m->size; r++)
        if (!c->m->rank_failed[r] && !c->ranks[r].gone) fsmpi_send(c->m, r, FS_MSG_STOP, &b);
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
