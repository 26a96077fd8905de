/*
 * queue: rank 0's queue of jobs (run/queue.h). The order is a list of job
 * indexes, scanned from the front: the first queued job that is ready goes
 * out. A requeued job keeps its place, so it goes out again before the
 * jobs listed after it.
 */
#include <stdlib.h>

#include "run/queue.h"
#include "util/util.h"

void run_queue_open(RunQueue *q, RunJob *jobs, const RunTrial *trials, int cap, int serial)
{
    q->jobs = jobs;
    q->trials = trials;
    q->order = fs_calloc((size_t)cap + 1, sizeof(int));
    q->n = 0;
    q->n_queued = 0;
    q->serial = serial;
}

void run_queue_close(RunQueue *q)
{
    free(q->order);
    q->order = NULL;
}

void run_queue_add(RunQueue *q, int i)
{
    FS_ASSERT(i == q->n);
    q->jobs[i].state = FS_JOB_QUEUED;
    q->order[q->n++] = i;
    q->n_queued++;
}

void run_queue_fold_major(RunQueue *q)
{
    int pos = 0;
    for (int k = 0; pos < q->n; k++)
        for (int i = 0; i < q->n; i++)
            if (q->jobs[i].slot == k) q->order[pos++] = i;
}

/* Ready: nothing before it in its trial is still to be recorded. */
static int ready(const RunQueue *q, const RunJob *jb)
{
    if (!q->serial || jb->restore || jb->seed || jb->slot == 0) return 1; /* a replicate waits for nothing */
    return run_trial_slot_done(&q->trials[jb->trial], jb->slot - 1);
}

int run_queue_take(RunQueue *q)
{
    for (int k = 0; k < q->n && q->n_queued; k++) {
        int i = q->order[k];
        if (q->jobs[i].state != FS_JOB_QUEUED || !ready(q, &q->jobs[i])) continue;
        q->jobs[i].state = FS_JOB_RUNNING;
        q->n_queued--;
        return i;
    }
    return -1;
}

void run_queue_requeue(RunQueue *q, int i)
{
    q->jobs[i].state = FS_JOB_QUEUED;
    q->n_queued++;
}

void run_queue_done(RunQueue *q, int i) { q->jobs[i].state = FS_JOB_DONE; }

int run_queue_drop(RunQueue *q, int t, int from_slot)
{
    int dropped = 0;
    for (int i = 0; i < q->n; i++) {
        RunJob *jb = &q->jobs[i];
        if (jb->trial != t || jb->slot < from_slot || jb->seed || jb->state != FS_JOB_QUEUED) continue;
        jb->state = FS_JOB_DONE;
        q->n_queued--;
        dropped++;
    }
    return dropped;
}

int run_queue_empty(const RunQueue *q) { return q->n_queued == 0; }

int run_queue_running(const RunQueue *q)
{
    for (int i = 0; i < q->n; i++)
        if (q->jobs[i].state == FS_JOB_RUNNING) return 1;
    return 0;
}
