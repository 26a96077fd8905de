/*
 * run/state.h: internal to the run module. The state of one run on rank 0
 * (or a single process): the sweep, the data, the journal, the jobs still
 * to train, and the bookkeeping the progress line and the profile read.
 * Every function here that touches the journal or the counters expects
 * st->lock held, since the pool's threads and the MPI loop share them.
 * Also the module's private functions by file, and the state of the MPI
 * loops, shared by the two files of each side (RunCoord, RunWorker).
 */
#ifndef FS_RUN_STATE_H
#define FS_RUN_STATE_H

#include <pthread.h>

#include "journal/journal.h"
#include "run/progress.h"
#include "run/records.h"
#include "run/run.h"

typedef struct RunState {
    FsSweep sw;
    FsRunSettings set; /* threads, backend, folder, keep_models: run_settings' */
    FsDataset ds;
    FsJournal j;
    char dir[4096];    /* set.out_dir */
    FsProgress prog;
    pthread_mutex_t lock;
    FsFolds folds; /* the sweep's folds (data_fold_id, data_fold_slot) */
    /* The jobs of this run: (trial, fold) pairs without a journal record
     * (records.h: allocated once for cap_jobs, never moved). */
    RunJob *jobs;
    int n_jobs, cap_jobs;
    /* The queue (pruning.c): the dispatch order and the number still queued. */
    int *order, n_queued;
    /* Per fold slot its training examples + 1 (0: not counted yet), for
     * the progress line (state_progress_sample). */
    uint32_t slot_train[FS_MAX_FOLDS + 1];
    int epoch_lines;
    /* search.pruner (NULL pruner: none). */
    FsPruner *pruner;
    int cuts_made; /* trials pruned so far in this run (the coordinator tells worker ranks) */
    int *proposed, n_proposed, n_batches; /* the trials of this run, in proposal order */
    int n_prunable;                       /* trials the pruner may see: the sweep's, or the tpe budget */
    pthread_cond_t cv; /* a job finished or was dropped: a waiting take may go on */
    RunTrial *trials; /* per trial of the sweep (records.h) */
    int trials_done;
    /* Worker ranks the heartbeat gave up on that never answered again
     * (coord_watch.c): the run ends with exit 3 and MPI_Abort. */
    int ranks_lost;
    /* What went wrong writing the journal (stops the run, exit 1). */
    int io_failed;
    FsErr io_err;
    /* The CUDA backend: this process trains on GPU `gpu_device`. */
    int use_gpu, gpu_device;
    int models_discarded; /* trials whose files run_models_discard removed */
    int test_left;     /* a signal stopped the test phase with evaluations to do */
    uint64_t *seen;    /* data_seen_hashes of the data: every model file carries them */
    uint32_t n_seen;
    FsDataset test;    /* the sweep's test set (sw.has_test), loaded and checked at open */
    char test_desc[512];
    /* For the profile. */
    double t_data, busy, val, train_examples, pruned_seconds;
} RunState;

/* Loads the sweep and data, resolves the settings (run_settings on m),
 * claims the run folder, opens the journal and lists the jobs. Returns
 * FS_EXIT_OK or an error exit code (message printed). */
int state_open(RunState *st, const FsRunOptions *o, const FsMpi *m, FILE *out);
void state_close(RunState *st);

/* The next job to dispatch (lock held), or -1 when none is ready now (with
 * pruning, a trial's next fold waits for the one before it). */
int state_take_job(RunState *st);
/* 1 when no job is queued, ready or not. */
int state_queue_empty(const RunState *st);
/* 1 while some job is dispatched and not finished. */
int state_running(const RunState *st);
/* Puts a dispatched job whose result was lost back in the queue (lock held). */
void state_job_requeue(RunState *st, int i);

/* pruning.c: the queue and the sweep's pruner on rank 0 (lock held for
 * all but open and close). */
void run_pruning_open(RunState *st);
int run_pruning_take(RunState *st);
/* A job listed mid-run (a new batch) joins the queue. */
void run_queue_add(RunState *st, int i);
void run_pruning_close(RunState *st);
/* Values of rank 0's running jobs, from their progress counters. */
void run_pruning_poll_local(RunState *st);
/* Job i's validation metric is known through epoch upto (its res.curves). */
void run_pruning_feed_epochs(RunState *st, int i, int upto);
/* Job i finished (its result is in its res). */
void run_pruning_job_finished(RunState *st, int i);
/* Makes the decisions the values so far settle, journals them, drops the
 * pruned trials' queued folds and raises their running folds' prune flags.
 * Returns how many trials were pruned now. */
int run_pruning_decide(RunState *st);
/* The first fold slot a trial's pruning leaves out (folds.n if none). */
int run_pruning_cut_slot(const RunState *st, int t);
/* 1 while some job has no outcome in the journal yet (lock held): a stopped
 * run exits 3 only then, so a finished sweep is never requeued. */
int state_work_left(const RunState *st);
/* Lists trial t's jobs (the folds not in the journal); mid-run they join
 * the queue. 0, or -1 with err (a journal write). */
int state_add_trial(RunState *st, int t, FsErr *err);

/* sampler.c: the trials a tpe sweep proposes, batch by batch. Without the
 * tpe sampler every trial is proposed at once. */
void run_sampler_open(RunState *st);
/* After a fold is recorded (lock held): when every proposed trial is
 * finished and the budget is not spent, proposes the next batch and lists
 * its jobs. Returns the trials added. */
int run_sampler_step(RunState *st);
/* 1 while more trials may still be proposed (a waiting pool thread stays). */
int run_sampler_more(const RunState *st);
/* Stops the run with an error (exit 1) and keeps the first reason (lock held). */
void state_fail(RunState *st, const FsErr *e);

/* Progress: the sample for the progress line and progress.json (takes
 * st->lock); epochs 1..upto of job i are known (a worker's EPOCH). */
void state_progress_sample(void *ctx, FsProgressSample *s);
void state_epochs_seen(RunState *st, int i, int upto);

/* Bookkeeping for job i (lock held): its first fold writes the trial record. */
void state_job_started(RunState *st, int i);
/* Records job i's result (its res) in the journal (lock held). */
void state_job_finished(RunState *st, int i);

/* Leaderboard files, profile and the end-of-run summary (threads: every
 * rank's training threads). Returns rc, or FS_EXIT_ERROR if writing them
 * failed. */
int state_report(RunState *st, const FsRunOptions *o, FILE *out, int rc, double train_wall, int threads);


/* Chooses the backend for this process (cpu, cuda, auto); -1 with a message
 * when cuda is asked for and no device is visible. local_rank picks the GPU. */
int run_choose_backend(int requested, int local_rank, int *use_gpu, int *device, FsErr *err);

/* Trains jobs from the queue on the GPU, launch after launch, until the
 * queue is empty or the run stops (gpu_driver.c). take() hands out one job
 * id (1) or none (0); with wait it may block until one comes or none ever
 * will. done() records one finished job. fail() is told once when the
 * device fails (a CUDA error: the launch's jobs come back cancelled, not
 * recorded) and the driver stops; the run then ends with that error. */
typedef struct {
    int (*take)(void *ctx, int *id, int wait);
    void (*done)(void *ctx, int id);
    const FsJob *(*job)(void *ctx, int id);
    void (*epochs)(void *ctx, long epochs);
    void (*fail)(void *ctx, const FsErr *err);
    void *ctx;
} FsGpuQueue;
void run_gpu_drive(int device, const FsDataset *ds, const FsGpuQueue *q);
/* Every trial of the sweep on the GPU path of `device` (gpu_model_check,
 * the launcher's rule, with the largest training fold): 0, or -1 with the
 * refused trials named. A GPU rank refuses the run with it before training. */
int run_gpu_check_trials(const FsSweep *sw, const FsDataset *ds, const FsFolds *folds, int device, FsErr *err);
/* This rank's backend for the binding map: "GPU 0: NVIDIA H200, ...", or
 * "cpu", with why no CUDA device is used where the build has the backend. */
void run_backend_describe(int use_gpu, int device, char *out, size_t n);
/* A representative job's models per launch on this device (for capacity). */
int run_gpu_capacity(int device, const FsDataset *ds, const FsJob *job);

/* Trained models (models.c). The file of (trial, fold), relative to the
 * run folder. */
void run_model_file(char *out, size_t n, const char *trial, int fold);
/* Writes job i's best weights (its res.weights) durably and fills ref;
 * ref->file stays empty when the result has none to keep (not ok). */
int run_model_save(RunState *st, int i, FsModelRef *ref, FsErr *err);
/* 0 if the fold record's model file is intact (or none is expected). */
int run_model_check(const RunState *st, const FsFoldRecord *fr, char *why, size_t why_n);
/* run.keep_models at the end of a run: discards the files of complete
 * trials outside the best N (the record first, journal_append_discard). */
int run_models_discard(RunState *st, FsErr *err);

/* Refits (refit.c): the epochs a trial's refit trains (FS_REFIT_RULE of
 * its folds' best epochs, which fill best (NULL: not wanted; folds->n
 * entries); 0 if a fold is missing or not ok), its file relative to the
 * run folder, and the refit itself: trained on every protein in use
 * (FS_FOLD_ALL) on CUDA device `gpu` (>= 0: a GPU run's refit) or else on
 * threads threads, saved durably (the file's metadata names the epochs,
 * the rule and the folds' best epochs), then a "refit" journal record. */
#define FS_REFIT_RULE "median of the folds' best epochs"
int run_refit_epochs(const FsJournal *j, const char *trial, const FsFolds *folds, int *best);
void run_refit_file(char *out, size_t n, const char *trial);
int run_refit_trial(const char *dir, FsJournal *j, const FsDataset *ds, const FsTrial *tr, const FsFolds *folds,
                    const uint64_t *seen, uint32_t n_seen, int threads, int gpu, FsErr *err);
/* One job on CUDA device `device` (gpu_driver.c): 0, or -1 with the CUDA
 * error (the job then ends cancelled, with the error as its message). */
int run_gpu_train_one(int device, const FsDataset *ds, const FsJob *job, FsErr *err);
/* The sweep's test section once every fold is trained (testphase.c):
 * evaluations of the top test.top trials not yet in the journal, and their
 * refits, on st->set.solo_threads threads. */
int run_test_phase(RunState *st, FILE *out, int quiet);


/* Mid-fold checkpoints (checkpoints.c): the file of (trial, fold)
 * relative to the run folder; writing one durably; reading one (NULL if
 * absent; path gets its full name); removing one (a recorded fold). */
void run_ckpt_file(char *out, size_t n, const char *trial, int fold);
int run_ckpt_write(const char *dir, const char *trial, int fold, const uint8_t *bytes, uint64_t n, FsErr *err);
uint8_t *run_ckpt_read(const char *dir, const char *trial, int fold, uint64_t *n, char *path, size_t path_n);
void run_ckpt_remove(const char *dir, const char *trial, int fold);
/* Rank 0's job i as it starts: checkpointing on (run.checkpoint) and its
 * checkpoint, if any, to resume from; detach after it ends. */
void run_ckpt_attach(RunState *st, int i);
void run_ckpt_detach(RunState *st, int i);
/* Says that a fold resumed (out, unless quiet) or that its checkpoint was
 * refused and why (stderr). */
void run_ckpt_report(const FsCheckpointing *cs, const char *trial, int fold, FILE *out, int quiet);
/* Test hooks (see checkpoints.c): checkpoint every N steps (0: by time),
 * and the kill in an epoch's validation. */
long run_ckpt_test_steps(void);
void run_ckpt_test_event(int epoch);

/* Folder helpers (folder.c). */
char *run_read_file(const char *path);
/* --restart: moves everything in DIR (a run's files, models, journal) into
 * DIR/previous-N, nothing deleted, and reopens j as a new, locked journal. */
int run_folder_set_aside(const char *dir, FsJournal *j, FILE *out, FsErr *err);
/* Writes DIR/sweep.yaml, or checks that the one there is the same sweep. */
int run_folder_claim(const char *dir, const FsSweep *sw, FsErr *err);
/* After run_folder_claim: every trial the journal names must be one of
 * the sweep's (ids are computed the same way); -1 with err if not. */
int run_folder_check_trials(const char *dir, const FsJournal *j, const FsSweep *sw, FsErr *err);
/* After run_folder_check_trials, with the fold ids set: the journal read
 * again checked against the sweep and each fold's validation residues in
 * the data (a record that does not fit is a damaged line: an error naming
 * it and `foldsweep repair`), then the sweep record (journal_append_sweep). */
int run_folder_sense(RunState *st, FsErr *err);



/* MPI loops (coord.c, worker.c). worker_timeout: seconds a worker rank
 * may send nothing before its jobs are queued again (<= 0: never). */
int run_coordinate(RunState *st, FsMpi *m, int threads0, double worker_timeout);
int run_worker(FsMpi *m, const FsRunOptions *o);
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
    double timeout;    /* the heartbeat's (coord_watch.c) */
    int stranded; /* every worker rank is gone and rank 0 trains nothing: the run stops */
} RunCoord;
/* Jobs listed since (a new batch of the sampler): queued, and findable by
 * (trial, fold) (lock held). */
void run_coord_sync_jobs(RunCoord *c);
/* One message from a worker rank, checked, then acted on; a bad one is
 * reported and dropped. After the STOP (stop_sent) a REQUEST gets no more
 * work; a BYE is marked in c->bye. */
void run_coord_message(RunCoord *c, const FsMsg *msg, int stop_sent);
/* The heartbeat (coord_watch.c): its timeout, a message heard
 * from a rank (0 when it comes from a rank given up on: dropped, and the
 * rank told to stop), the check that gives up on ranks silent for
 * c->timeout (their jobs queued again), and whether the loop is over:
 * every worker said BYE, or the rest are gone and silent (counted in
 * st->ranks_lost, each named). */
void run_coord_watch_open(RunCoord *c, double timeout);
int run_coord_heard(RunCoord *c, const FsMsg *msg);
void run_coord_watch(RunCoord *c, int stop_sent, int threads0);
int run_coord_finished(RunCoord *c, int stop_sent);
/* Tells worker ranks to stop the folds of newly pruned trials (lock held). */
void run_coord_tell_cuts(RunCoord *c);
/* STOP to every live worker rank. */
void run_coord_stop_all(RunCoord *c, int cancel, int code);

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
    /* Checkpoints (run.checkpoint, from rank 0): how often, the
     * checkpoints from rank 0 waiting for their TRIALS item, and the
     * checkpoints and notes the trainers made, for the main thread to send. */
    double ckpt_every;
    long ckpt_steps;
    struct RunOutgoing *resumes; /* checkpoints from rank 0, each for an item of the next TRIALS */
    struct RunOutgoing *out_ckpt;
    double progress_at;
    /* The GPU failed (the driver's thread says so under the lock): the
     * main thread sends FAIL once, and rank 0 stops the run. */
    char fail_text[1000];
    int fail_state; /* 0 none, 1 to send, 2 sent */
} RunWorker;
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
