/*
 * coord_watch: rank 0's heartbeat of its worker ranks. A live worker's
 * main thread sends something at least every two seconds (PROGRESS, even
 * with nothing running: worker_send.c); one that sends nothing for
 * --worker-timeout seconds (stopped with SIGSTOP, swapped out, hung in a
 * driver call) is given up on: its jobs go back to the queue for the other
 * ranks (results do not depend on the rank that trains a job) and it gets
 * no more work. If it speaks again it is told to stop and its BYE counted;
 * if it never does, the run ends with exit 3 naming it, through MPI_Abort
 * (MPI_Finalize would wait for it forever). Only rank 0's main thread
 * runs this; what a message from a rank given up on gets is in
 * coord_messages.c, which notes when each rank was heard.
 */
#include <stdlib.h>
#include <string.h>

#include "run/coord.h"

void run_coord_watch_open(RunCoord *c, double timeout)
{
    c->timeout = timeout;
    double now = fs_now();
    for (int r = 0; r < c->m->size; r++) c->ranks[r].heard = now;
}

/* Rank r's jobs back in the queue; it gets no more. */
static void give_up(RunCoord *c, int r, double silent)
{
    RunState *st = c->st;
    int n = 0;
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->n_jobs; i++) {
        if (c->jobs[i].owner != r) continue;
        c->jobs[i].owner = -1;
        state_job_requeue(st, i);
        n++;
    }
    c->ranks[r].inflight = 0;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->lock);
    c->ranks[r].gone = 1;
    fprintf(stderr, "foldsweep: rank 0: rank %d has sent nothing for %.0f s (stopped, hung or swapped out; "
                    "--worker-timeout %.0f): its %d fold%s in flight %s queued again for the other ranks\n",
            r, silent, c->timeout, n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
}

void run_coord_watch(RunCoord *c, int stop_sent, int threads0)
{
    const FsMpi *m = c->m;
    if (c->timeout <= 0) return;
    double now = fs_now();
    int trainers = threads0 > 0 || c->st->use_gpu;
    for (int r = 1; r < m->size; r++) {
        if (m->rank_failed[r] || c->ranks[r].bye) continue;
        if (!c->ranks[r].gone && now - c->ranks[r].heard >= c->timeout) {
            /* Rank 0's own loop may have been slow to look: a message
             * waiting from r means r is alive. */
            FsMsg msg;
            if (fsmpi_poll(c->m, r, &msg)) {
                run_coord_message(c, &msg, stop_sent);
                free(msg.p);
                continue;
            }
            give_up(c, r, now - c->ranks[r].heard);
        }
        if (!c->ranks[r].gone) trainers = 1;
    }
    if (!trainers && !stop_sent && !c->stranded) {
        fprintf(stderr, "foldsweep: rank 0: no rank is left to train (rank 0 has no threads of its own); "
                        "stopping\n");
        c->stranded = 1;
    }
}

int run_coord_finished(RunCoord *c, int stop_sent)
{
    const FsMpi *m = c->m;
    double now = fs_now();
    int waiting = 0, lost = 0;
    for (int r = 1; r < m->size; r++) {
        if (m->rank_failed[r] || c->ranks[r].bye) continue;
        /* A rank given up on and silent still is not waited for once the
         * others are done; one that answered again gets time for its BYE. */
        if (stop_sent && c->ranks[r].gone && now - c->ranks[r].heard >= c->timeout)
            lost++;
        else
            waiting++;
    }
    if (waiting) return 0;
    for (int r = 1; r < m->size && lost; r++)
        if (!m->rank_failed[r] && !c->ranks[r].bye)
            fprintf(stderr, "foldsweep: rank 0: rank %d never answered; the run ends without it (exit 3: rerun "
                            "the same command to resume)\n", r);
    c->st->ranks_lost = lost;
    return 1;
}
