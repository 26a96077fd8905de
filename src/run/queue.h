/*
 * run/queue.h: internal to the run module. Rank 0's queue of jobs
 * (queue.c): which job goes out next, to its own threads, its GPU or a
 * worker rank. A job's place (queued, running, done) is in its record
 * (RunJob.state); the queue keeps the dispatch order and how many are
 * still queued. It decides nothing about trials: a pruned trial's folds
 * leave it when the coordinator says so (run_queue_drop).
 *
 * With `serial` (a pruner), a trial's folds go one after another: a fold
 * is ready once the fold before it in its trial is recorded
 * (RunTrial.slot_done), so a trial pruned in fold k never starts the
 * folds after it. A restore (a recorded fold trained again for its lost
 * model file) is always ready.
 */
#ifndef FS_RUN_QUEUE_H
#define FS_RUN_QUEUE_H

#include "run/records.h"

typedef struct {
    RunJob *jobs;           /* the run's job records (not owned) */
    const RunTrial *trials; /* the run's trial records (not owned) */
    int *order;             /* the dispatch order: position -> job */
    int n;                  /* jobs added */
    int n_queued;           /* of them, queued */
    int serial;             /* a trial's folds one after another */
} RunQueue;

/* Room for cap jobs of the records jobs (whose trials are in trials). */
void run_queue_open(RunQueue *q, RunJob *jobs, const RunTrial *trials, int cap, int serial);
void run_queue_close(RunQueue *q);
/* Job i (the next one listed: i == q->n) joins the queue, last. */
void run_queue_add(RunQueue *q, int i);
/* Orders the jobs so far fold-major: every trial's first fold first, then
 * every second fold (the per-epoch pruning rules: the values a decision
 * waits for come early); within a fold, in the order they were listed. */
void run_queue_fold_major(RunQueue *q);
/* The next job that is ready, marked running; -1 when none is now. */
int run_queue_take(RunQueue *q);
/* A running job whose result was lost goes back in the queue, at its place. */
void run_queue_requeue(RunQueue *q, int i);
/* A running job ended (its result came, or it was cut). */
void run_queue_done(RunQueue *q, int i);
/* Trial t's queued jobs in fold slots from_slot on leave the queue (done,
 * never dispatched); returns how many. Running ones are the caller's. */
int run_queue_drop(RunQueue *q, int t, int from_slot);
/* 1 when no job is queued, ready or not. */
int run_queue_empty(const RunQueue *q);
/* 1 while some job is dispatched and not done. */
int run_queue_running(const RunQueue *q);

#endif
