/*
 * run/records.h: internal to the run module. What rank 0 keeps per job (a
 * (trial, fold) pair to train) and per trial of the sweep: one record each,
 * so that a job's bookkeeping is one place to read and to change.
 *
 * The run allocates its job records once, for every job it may list (the
 * sweep's trials, or the tpe budget, times the folds), and never moves
 * them: a job's FsJob points at the record's spec, result and counters,
 * and the trainer (a pool thread, the GPU driver's) holds those pointers
 * while it trains.
 */
#ifndef FS_RUN_RECORDS_H
#define FS_RUN_RECORDS_H

#include <stdint.h>

#include "data/data.h"
#include "train/train.h"

struct RunState;
/* A fold's checkpointing on rank 0 (checkpoints.c): the trainer's hooks,
 * and the checkpoint it resumes from. */
typedef struct {
    FsCheckpointing cs;
    struct RunState *st;
    int job;
    uint8_t *bytes;
    uint64_t n;
    char path[FS_PATH_IN_DIR];
} RunCkptJob;

/* Where a job is in the queue (queue.c). */
enum { FS_JOB_QUEUED = 0, FS_JOB_RUNNING, FS_JOB_DONE };

typedef struct {
    FsJob job;          /* what the trainer trains: spec, res and the counters below */
    FsTrainSpec spec;   /* sweep_fold_spec of its trial and fold */
    FsFitResult res;
    int trial;          /* its trial, an index in the sweep's trials */
    int slot;           /* its fold's slot (data_fold_slot) */
    int seed;           /* 0: the trial's own seeds; > 0: a seed replicate (replicates.c: never pruned,
                           checkpointed or kept as a model file) */
    int restore;        /* 1: the fold is recorded, only its lost model file is wanted */
    int state;          /* FS_JOB_QUEUED, RUNNING or DONE (queue.c); a job whose result was lost is queued again */
    volatile int prune;         /* its trial was pruned: stop at the next batch */
    volatile int progress;      /* epochs completed (the trainer moves it) */
    volatile uint64_t examples; /* examples trained so far (the trainer moves it) */
    int fed;            /* epochs given to the pruner */
    /* Progress (state_progress_sample): the examples when first seen by
     * this run (UINT64_MAX: not yet), epochs printed (--progress) and
     * epochs known from a worker's EPOCH messages. */
    uint64_t base;
    int printed, seen;
    RunCkptJob ckpt;    /* its checkpointing (run.checkpoint) */
} RunJob;

/* A bit per fold slot (FS_MAX_FOLDS of them). */
#define FS_SLOT_BYTES ((FS_MAX_FOLDS + 7) / 8)

typedef struct {
    long params;        /* sweep_trial_params, for its trial record */
    int folds;          /* folds recorded */
    int bad;            /* a fold failed or did not end ok: never the best */
    int written;        /* its trial record is in the journal */
    int cut;            /* the first fold slot its pruning leaves out (folds.n: not pruned) */
    int rank;           /* its place in the proposal order (st->proposed), -1: not proposed */
    /* Per fold slot: recorded (with pruning a trial's next fold waits for
     * it). A bit each: a grid of many trials costs 32 bytes a trial. */
    unsigned char slot_done[FS_SLOT_BYTES];
} RunTrial;

static inline int run_trial_slot_done(const RunTrial *t, int slot) { return t->slot_done[slot / 8] >> (slot % 8) & 1; }
static inline void run_trial_set_slot_done(RunTrial *t, int slot)
{
    t->slot_done[slot / 8] |= (unsigned char)(1u << (slot % 8));
}

#endif
