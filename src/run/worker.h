/*
 * run/worker.h: internal to the run module. A worker rank (worker.c:
 * setup, its jobs and the loop; worker_send.c: checkpoints both ways and
 * every message to rank 0 but REQUEST). It sees none of rank 0's state:
 * what it trains comes in TRIALS messages, as (trial, fold) items of the
 * sweep it rebuilt from the setup broadcast.
 */
#ifndef FS_RUN_WORKER_H
#define FS_RUN_WORKER_H

#include <pthread.h>

#include "data/data.h"
#include "gpu/gpu.h"
#include "mpi/mpi.h"
#include "run/gpu_driver.h"
#include "run/run.h"
#include "sweep/sweep.h"
#include "train/train.h"

/* The worker rank's part of run_sweep: setup, then jobs from rank 0 until
 * its STOP. Returns the exit code rank 0 sent (or an error's). */
int run_worker(FsMpi *m, const FsRunOptions *o);

/* A worker rank (worker.c: setup, its job queue and the loop;
 * worker_send.c: checkpoints both ways and every message to rank 0 but
 * REQUEST). Only the main thread calls MPI; the pool threads hand results
 * over through the outbox and checkpoints through out_ckpt. */
struct RunOutgoing;
struct RunWorker;
/* A job rank 0 sent (worker.c's take_trials). */
typedef struct {
    FsJob job;               /* what the trainer trains: spec, res and the counters below */
    FsTrainSpec spec;
    FsFitResult res;
    FsWorkItem item;         /* as rank 0 named it */
    unsigned char answered;  /* its result went out (or it was cancelled) */
    int sent_epochs;         /* epochs rank 0 has heard of */
    volatile int progress;   /* epochs done (the trainer moves it), for EPOCH messages */
    volatile int prune;      /* rank 0 pruned its trial */
    volatile uint64_t examples; /* examples trained (PROGRESS) */
    /* Its checkpointing (run.checkpoint): the trainer's hooks (their
     * context is this record) and the bytes from rank 0 it resumes from
     * (owned until the trainer has read them). */
    FsCheckpointing ck;
    struct RunWorker *w;
    uint8_t *resume;
} RunWorkerJob;
typedef struct RunWorker {
    FsMpi *m;
    FsSweep sw;
    FsDataset ds;
    FsFolds folds; /* the sweep's folds, as rank 0's */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    /* The jobs received, allocated once for cap (never moved: the
     * trainers hold pointers into the records). */
    RunWorkerJob *jobs;
    int cap, n_jobs, next; /* received, handed to threads */
    int *outbox, n_out;
    int no_more;           /* STOP received */
    volatile int cancel;
    int backend;           /* what rank 0 was asked for */
    int refused_once;      /* test hook REFUSE */
    int use_gpu, device;
    RunGpuGroups gpu_groups; /* the library tier's groups (gpu_groups.c), the same as rank 0's */
    /* Checkpoints (run.checkpoint, from rank 0): how often, the
     * checkpoints from rank 0 waiting for their TRIALS item, and the
     * checkpoints and notes the trainers made, for the main thread to send. */
    double ckpt_every;
    long ckpt_steps;
    struct RunOutgoing *resumes; /* checkpoints from rank 0, each for an item of the next TRIALS */
    struct RunOutgoing *out_ckpt;
    double progress_at;
    /* The GPU failed (the driver's thread says so under the lock), or a
     * fold found no memory for its model: the main thread sends FAIL once,
     * and rank 0 stops the run. */
    char fail_text[1000];
    int fail_state; /* 0 none, 1 to send, 2 sent */
    FsGpuTimes gpu_times; /* its GPU's, when the driver ends: sent with BYE (rank 0's profile) */
} RunWorker;
/* This rank cannot go on (text: why): FAIL is sent once (the first). Takes
 * the lock. */
void run_worker_fail(RunWorker *w, const char *text);
/* Frees what is left of the checkpoints from rank 0. */
void run_worker_ckpt_free(RunWorker *w);
/* Job i's checkpointing, with rank 0's checkpoint if it sent one (lock held). */
void run_worker_attach_ckpt(RunWorker *w, int i);
/* CKPT from rank 0: kept for an item of the TRIALS message that follows. */
void run_worker_take_resume(RunWorker *w, const FsMsg *msg);
/* ERROR to rank 0: fmt with two strings. */
void run_worker_error(RunWorker *w, const char *fmt, const char *a, const char *b);
/* The trainers' checkpoints and notes, to rank 0. */
void run_worker_send_ckpts(RunWorker *w, FsBuf *b);
/* The results the pool handed over, to rank 0. *received and *no_more get
 * the jobs received and whether STOP came, read with the outbox; returns
 * how many jobs were answered now. */
int run_worker_send_results(RunWorker *w, FsBuf *b, int *received, int *no_more);
/* EPOCH messages (new validation values) and, every two seconds, PROGRESS
 * for the first received jobs that are not answered. */
void run_worker_send_epochs(RunWorker *w, int received, FsBuf *b);
void run_worker_send_progress(RunWorker *w, int received, FsBuf *b);
/* Test hook INJECT: malformed messages before the protocol. */
void run_worker_inject_bad(RunWorker *w);

#endif
