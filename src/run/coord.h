/*
 * run/coord.h: internal to the run module. Rank 0's loop (coord.c: its own
 * threads or GPU and the loop; coord_messages.c: the messages of worker
 * ranks; coord_watch.c: their heartbeat), over the run's state (state.h).
 * With no worker ranks this is the plain single-process run.
 */
#ifndef FS_RUN_COORD_H
#define FS_RUN_COORD_H

#include "mpi/mpi.h"
#include "run/state.h"

/* Trains the run's queue to its end on rank 0's threads or GPU and the
 * worker ranks of m. worker_timeout: seconds a worker rank may send
 * nothing before its jobs are queued again (<= 0: never). Returns an
 * FS_EXIT_* code. */
int run_coordinate(RunState *st, FsMpi *m, int threads0, double worker_timeout);
/* Rank 0 after fsmpi_report_setup found failed ranks: stops the others. */
void run_release_workers(FsMpi *m);

/* Rank 0's side of the protocol (coord.c: its own threads and the loop;
 * coord_messages.c: the messages of worker ranks). Per job of st->jobs
 * (the same index): */
typedef struct {
    int owner; /* the rank training it, -1 queued, -2 done */
    int lost;  /* times a worker lost or refused it */
    int seen;  /* the REQUEST serial that last listed it as held */
} RunCoordJob;
/* Per rank: its jobs out, and the heartbeat (coord_watch.c): when rank 0
 * last heard from it, whether it said BYE, whether it was given up on
 * (gone: its jobs were queued again) and told to stop after that. */
typedef struct {
    int inflight;
    double heard;
    unsigned char bye, gone, gone_stopped;
} RunCoordRank;
typedef struct {
    RunState *st;
    FsMpi *m;
    RunCoordJob *jobs;  /* per job, allocated for st->cap_jobs */
    RunCoordRank *ranks; /* per rank of m */
    int *job_of;      /* (trial * folds.n + fold slot) -> job, -1 none */
    int serial;
    FsWorkItem *held;  /* a decoded REQUEST's list */
    float *q3, *loss, *tl, *sec; /* a decoded EPOCH's values */
    FsProgressItem *prog;        /* a decoded PROGRESS's items */
    int cuts_seen;     /* st->cuts_made when worker ranks were last told */
    int local_inflight;
    int jobs_known;    /* st->n_jobs when jobs and job_of were last brought up to date */
    int first_seed_job; /* the first seed replicate's job (search.replicates), or jobs_known: none yet */
    double timeout;    /* the heartbeat's (coord_watch.c) */
    int stranded; /* every worker rank is gone and rank 0 trains nothing: the run stops */
} RunCoord;
/* Jobs listed since (a new batch of the sampler, the seed replicates):
 * queued, and findable by (trial, fold, seed) (lock held). */
void run_coord_sync_jobs(RunCoord *c);
/* The job of trial index `trial`'s fold slot k with seed index seed, or -1
 * (job_of for the trial's own seeds; the few replicates are scanned). */
int run_coord_job(const RunCoord *c, int trial, int k, int seed);
/* One message from a worker rank, checked, then acted on; a bad one is
 * reported and dropped, and so is one from a rank given up on (told to
 * stop instead). It counts as the rank heard from (the heartbeat). After
 * the STOP (stop_sent) a REQUEST gets no more work; a BYE is marked in
 * the rank's record. */
void run_coord_message(RunCoord *c, const FsMsg *msg, int stop_sent);
/* The heartbeat (coord_watch.c): its timeout, the check that gives up on
 * ranks silent for c->timeout (their jobs queued again), and whether the
 * loop is over: every worker said BYE, or the rest are gone and silent
 * (counted in st->ranks_lost, each named). */
void run_coord_watch_open(RunCoord *c, double timeout);
void run_coord_watch(RunCoord *c, int stop_sent, int threads0);
int run_coord_finished(RunCoord *c, int stop_sent);
/* Tells worker ranks to stop the folds of newly pruned trials (lock held). */
void run_coord_tell_cuts(RunCoord *c);
/* STOP to every live worker rank. */
void run_coord_stop_all(RunCoord *c, int cancel, int code);

#endif
