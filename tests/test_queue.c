/*
 * test_queue: rank 0's queue of jobs (src/run/queue.c) on its own, over
 * hand-made job and trial records: the dispatch order (as listed, or
 * fold-major), a requeued job going out again before the jobs listed after
 * it, a pruning run's serial folds (a fold waits for the one before it in
 * its trial, a restore never waits), and a pruned trial's queued folds
 * dropped while its running fold is left to the caller.
 */
#include "run/queue.h"

#include "test.h"

enum { TRIALS = 2, SLOTS = 3, JOBS = TRIALS * SLOTS };

typedef struct {
    RunJob jobs[JOBS];
    RunTrial trials[TRIALS];
    RunQueue q;
} Fixture;

/* Every (trial, slot) as a job, trial-major: job t * SLOTS + k. */
static void fixture_open(Fixture *f, int serial)
{
    memset(f, 0, sizeof *f);
    run_queue_open(&f->q, f->jobs, f->trials, JOBS, serial);
    for (int t = 0; t < TRIALS; t++)
        for (int k = 0; k < SLOTS; k++) {
            int i = t * SLOTS + k;
            f->jobs[i].trial = t;
            f->jobs[i].slot = k;
            run_queue_add(&f->q, i);
        }
}

/* The jobs taken until none is ready, into out; returns how many. */
static int take_all(Fixture *f, int *out)
{
    int n = 0, i;
    while (n < JOBS && (i = run_queue_take(&f->q)) >= 0) out[n++] = i;
    return n;
}

static void test_order(void)
{
    Fixture f;
    fixture_open(&f, 0);
    CHECK(!run_queue_empty(&f.q) && !run_queue_running(&f.q));
    int a = run_queue_take(&f.q), b = run_queue_take(&f.q), c = run_queue_take(&f.q);
    CHECK(a == 0 && b == 1 && c == 2);
    CHECK(f.jobs[1].state == FS_JOB_RUNNING && run_queue_running(&f.q));
    /* Job 1's result was lost: it goes out again before jobs 3..5. */
    run_queue_requeue(&f.q, 1);
    CHECK(f.jobs[1].state == FS_JOB_QUEUED);
    int rest[JOBS];
    int n = take_all(&f, rest);
    CHECK_MSG(n == 4 && rest[0] == 1 && rest[1] == 3 && rest[2] == 4 && rest[3] == 5, "n %d first %d", n, rest[0]);
    CHECK(run_queue_empty(&f.q));
    for (int i = 0; i < JOBS; i++) run_queue_done(&f.q, i);
    CHECK(!run_queue_running(&f.q) && f.jobs[4].state == FS_JOB_DONE);
    run_queue_close(&f.q);
}

static void test_fold_major(void)
{
    Fixture f;
    fixture_open(&f, 0);
    run_queue_fold_major(&f.q);
    int got[JOBS];
    int n = take_all(&f, got), want[JOBS] = {0, 3, 1, 4, 2, 5};
    CHECK(n == JOBS);
    for (int k = 0; k < n; k++) CHECK_MSG(got[k] == want[k], "place %d: job %d, not %d", k, got[k], want[k]);
    run_queue_close(&f.q);
}

static void test_serial(void)
{
    Fixture f;
    fixture_open(&f, 1);
    f.jobs[5].restore = 1; /* trial 1's slot 2: recorded, its model file is retrained */
    int got[JOBS];
    int n = take_all(&f, got);
    /* Only each trial's first fold and the restore are ready. */
    CHECK_MSG(n == 3 && got[0] == 0 && got[1] == 3 && got[2] == 5, "n %d", n);
    CHECK(run_queue_take(&f.q) == -1 && !run_queue_empty(&f.q));
    /* Trial 0's slot 0 recorded: its slot 1 is ready, its slot 2 is not. */
    run_trial_set_slot_done(&f.trials[0], 0);
    CHECK(run_queue_take(&f.q) == 1);
    CHECK(run_queue_take(&f.q) == -1);
    run_trial_set_slot_done(&f.trials[0], 1);
    CHECK(run_queue_take(&f.q) == 2);
    run_queue_close(&f.q);
}

static void test_drop(void)
{
    Fixture f;
    fixture_open(&f, 1);
    int got[JOBS];
    CHECK(take_all(&f, got) == 2); /* jobs 0 and 3, each trial's first fold */
    /* Trial 1 pruned in its first fold (slots 0 on cut): the running fold
     * stays running (the caller raises its prune flag), the two queued
     * ones are done without ever going out. */
    CHECK(run_queue_drop(&f.q, 1, 0) == 2);
    CHECK(f.jobs[3].state == FS_JOB_RUNNING);
    CHECK(f.jobs[4].state == FS_JOB_DONE && f.jobs[5].state == FS_JOB_DONE);
    CHECK(f.jobs[1].state == FS_JOB_QUEUED && f.jobs[2].state == FS_JOB_QUEUED);
    CHECK(run_queue_drop(&f.q, 1, 0) == 0); /* nothing left to drop */
    /* Trial 0 pruned after its slot 0 (slots 1 on cut). */
    CHECK(run_queue_drop(&f.q, 0, 1) == 2);
    CHECK(run_queue_empty(&f.q) && run_queue_take(&f.q) == -1);
    CHECK(run_queue_running(&f.q));
    run_queue_close(&f.q);
}

int main(void)
{
    test_order();
    test_fold_major();
    test_serial();
    test_drop();
    return test_finish();
}
