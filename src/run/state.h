/*
 * run/state.h: internal to the run module. The state of one run on rank 0
 * (or a single process): the sweep, the data, the journal, the jobs still
 * to train, and the bookkeeping the progress line and the profile read.
 * Every function here that touches the journal or the counters expects
 * st->lock held, since the pool's threads and the MPI loop share them.
 * Also the private functions of the files that work on it (jobs, pruning,
 * sampler, models, refits, the test phase, the run folder). Rank 0's loop
 * is coord.h's, a worker rank's worker.h's, the GPU driver gpu_driver.h's,
 * checkpoints checkpoints.h's.
 */
#ifndef FS_RUN_STATE_H
#define FS_RUN_STATE_H

#include <pthread.h>

#include "gpu/gpu.h"
#include "journal/journal.h"
#include "run/gpu_driver.h"
#include "run/progress.h"
#include "run/queue.h"
#include "run/records.h"
#include "run/run.h"

typedef struct RunState {
    FsSweep sw;
    FsRunSettings set; /* threads, backend, folder, keep_models: run_settings' */
    FsDataset ds;
    FsJournal j;
    char dir[FS_PATH_MAX]; /* set.out_dir */
    FsProgress prog;
    pthread_mutex_t lock;
    FsFolds folds; /* the sweep's folds (data_fold_id, data_fold_slot) */
    /* The jobs of this run: (trial, fold) pairs without a journal record
     * (records.h: allocated once for cap_jobs, never moved). */
    RunJob *jobs;
    int n_jobs, cap_jobs;
    RunQueue queue;  /* which job goes out next (queue.h) */
    /* Per fold slot its training examples + 1 (0: not counted yet), for
     * the progress line (state_progress_sample). */
    uint32_t slot_train[FS_MAX_FOLDS + 1];
    int epoch_lines;
    /* search.pruner (NULL pruner: none). */
    FsPruner *pruner;
    int cuts_made; /* trials pruned so far in this run (the coordinator tells worker ranks) */
    int *proposed, n_proposed, n_batches; /* the trials of this run, in proposal order */
    FsStudyStop study_stop;               /* search.stop's decision (sampler.c) */
    int n_prunable;                       /* trials the pruner may see: the sweep's, or the tpe budget */
    /* search.replicates (replicates.c): decided once the sweep's own trials are all resolved;
     * the replicate jobs are st->jobs[first_replicate ..]. */
    int replicates_listed, first_replicate, n_replicate_trials;
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
    RunGpuGroups gpu_groups; /* the library tier's groups (gpu_groups.c), computed where use_gpu */
    FsGpuTimes gpu_times; /* where its calls spent their time (the profile's GPU lines) */
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

/* Puts a dispatched job whose result was lost back in the queue (lock held). */
void state_job_requeue(RunState *st, int i);

/* 1 while some job has no outcome in the journal yet (lock held): a stopped
 * run exits 3 only then, so a finished sweep is never requeued. */
int state_work_left(const RunState *st);
/* Lists trial t's jobs (the folds not in the journal); mid-run they join
 * the queue. 0, or -1 with err (a journal write). */
int state_add_trial(RunState *st, int t, FsErr *err);

/* Stops the run with an error (exit 1) and keeps the first reason (lock held). */
void state_fail(RunState *st, const FsErr *e);

/* search.replicates (replicates.c): the trials that train again with
 * more seeds, best first, into top (room for sw.replicate_top): the
 * leaderboard's ranking of the complete ok trials by their own seeds,
 * from the journal alone, so every rank count and every resume chooses
 * the same. Returns how many. */
int run_replicates_choose(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, int *top);
/* When the sweep's own jobs are all resolved and the sampler proposes no
 * more: lists the replicate jobs not in the journal (once; lock held).
 * 0, or -1 with err. */
int run_replicates_list(RunState *st, FsErr *err);
/* 1 while the replicates may still be listed (a waiting pool thread stays). */
int run_replicates_pending(const RunState *st);
/* Job n_jobs: trial t's fold in slot k with seed index seed, queued
 * (jobs.c; restore: only its lost model file is wanted). */
void state_list_job(RunState *st, int t, int k, int seed, int restore);

/* Progress: the sample for the progress line and progress.json (takes
 * st->lock); epochs 1..upto of job i are known (a worker's EPOCH). */
void state_progress_sample(void *ctx, FsProgressSample *s);
void state_epochs_seen(RunState *st, int i, int upto);

/* Bookkeeping for job i (lock held): its first fold writes the trial record. */
void state_job_started(RunState *st, int i);
/* Job i's trainer is done (lock held): its epoch lines, its place in the
 * queue, its values to the pruner (run_job_finished, decide.c, calls
 * these two with the decisions between them). */
void state_job_ended(RunState *st, int i);
/* Then job i's result (its res) is recorded in the journal, or its lost
 * model file restored, or it is dropped (its trial was pruned at or
 * before it; cancelled). */
void state_job_record(RunState *st, int i);

/* Leaderboard files, profile and the end-of-run summary (threads: every
 * rank's training threads). Returns rc, or FS_EXIT_ERROR if writing them
 * failed. */
int state_report(RunState *st, const FsRunOptions *o, FILE *out, int rc, double train_wall, int threads);


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
int run_refit_trial(const char *dir, FsJournal *j, const FsDataset *ds, const FsFeatSpec *features, const FsTrial *tr,
                    const FsFolds *folds,
                    const uint64_t *seen, uint32_t n_seen, int threads, int gpu, FsErr *err);
/* The sweep's test section once every fold is trained (testphase.c):
 * evaluations of the top test.top trials not yet in the journal, and their
 * refits, on st->set.solo_threads threads. */
int run_test_phase(RunState *st, FILE *out, int quiet);


/* Folder helpers (folder.c). */
char *run_read_file(const char *path);
/* --restart: moves everything in DIR (a run's files, models, journal) into
 * DIR/previous-N, nothing deleted, and reopens j as a new, locked journal. */
int run_folder_set_aside(const char *dir, FsJournal *j, FILE *out, FsErr *err);
/* Checks DIR/sweep.yaml against sw, writing nothing: 0 with *fresh (no
 * sweep.yaml yet) and *old NULL when it is absent or the same sweep, or
 * *old its (malloc'd) canonical text when sw may extend it
 * (sweep_diff_fixed finds nothing); -1 with err (damaged, or a change an
 * extension may not make, named). */
int run_folder_claim(const char *dir, const FsSweep *sw, char **old, int *fresh, FsErr *err);
/* Once j is open (locked), before anything else is written: -1 with err,
 * j discarded (journal_discard), where dir holds files but no run's journal
 * (j fresh: not a run folder; a run would write its journal, sweep.yaml and
 * models among someone's own files, sweep.yaml over theirs). After the lock,
 * so a second run never looks while the first makes its journal. */
int run_folder_foreign(const char *dir, FsJournal *j, FsErr *err);
/* DIR/sweep.yaml := sw's canonical sweep, durably (after every check). */
int run_folder_write_sweep(const char *dir, const FsSweep *sw, FsErr *err);
/* After run_folder_claim: every trial the journal names must be one of
 * the sweep's (ids are computed the same way; an extension, old given,
 * keeps every trial trained); -1 with err if not. */
int run_folder_check_trials(const char *dir, const FsJournal *j, const FsSweep *sw, const char *old, FsErr *err);
/* After run_folder_check_trials, with the fold ids set: the journal read
 * again checked against the sweep and each fold's validation residues in
 * the data (a record that does not fit is a damaged line: an error naming
 * it and `foldsweep repair`; an earlier sweep version's records are judged
 * as FsJournalSweep.canonical says), then the sweep record
 * (journal_append_sweep: a new sweep version on an extension, old, which a
 * journal without sweep records gets first). */
int run_folder_sense(RunState *st, const char *old, FsErr *err);



#endif
