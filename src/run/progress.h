/*
 * run/progress.h: internal to the run module. The progress line (a live
 * line on a terminal, periodic plain lines elsewhere), the grace timer that
 * turns a stop into a cancel, and the end-of-run profile.
 */
#ifndef FS_RUN_PROGRESS_H
#define FS_RUN_PROGRESS_H

#include <pthread.h>
#include <stdio.h>

#include "report/report.h"
#include "util/util.h"

/* What the run's work looks like now (state_progress_sample): examples
 * trained against the planned maximum (epochs x examples of every fold,
 * lowered to what early stopping left as folds end), the rate of this
 * run, and the folds in flight. */
typedef struct {
    double done, planned, trained, eta; /* eta < 0: not known yet */
    int n_flight;
    char flight[160]; /* e.g. "epoch 3/10 45%" for one fold, or a summary */
} FsProgressSample;

/* The listener's thread (progress_tell.c): teller_post hands it an event
 * (copied; an older one not told yet is dropped) and returns at once,
 * only while `running` (the thread started); teller_stop tells what is
 * pending, then ends the thread. */
typedef struct {
    void (*listener)(const char *json, void *user);
    void *user;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t thread;
    char *pending;
    int closing, running;
} FsTeller;
void teller_start(FsTeller *t, void (*listener)(const char *json, void *user), void *user);
void teller_post(FsTeller *t, const char *json, size_t n);
void teller_stop(FsTeller *t);

typedef struct {
    FILE *out;
    int quiet;
    int redraw; /* the line is redrawn in place (run_progress_redraw), else plain lines every 10 s */
    int trials_total, trials_done, folds_per_trial;
    int folds_total, folds_done, in_flight; /* this session's listed jobs: the ETA's pace and the end of the work */
    int folds_earlier; /* done before this session (a resume): shown with this session's */
    /* Folds not listed yet, counted in the totals from the first line: the
     * budget's trials the sampler has still to propose, and the most seed
     * replicates until they are chosen (progress_ahead). */
    int ahead_trials, ahead_replicates;
    FsReportRank best; /* the best complete trial so far, ranked as the leaderboard ranks */
    int have_best, lower_better;
    double t_start, grace, stop_seen;
    int stop_flight; /* the folds in flight when the stop was seen: its line's count */
    long gpu_epochs; /* epochs completed inside the running GPU launch */
    pthread_mutex_t lock;
    pthread_t thread;
    int running, finish;
    /* Called by the progress thread without p->lock held (it takes the
     * run's lock): the sample the line and progress.json show. */
    void (*sample)(void *ctx, FsProgressSample *s);
    void *sample_ctx;
    FsProgressSample last;
    int have_sample;
    double json_at;   /* when DIR/progress.json was last written */
    const char *dir;  /* the run folder (progress.json); NULL: none */
    void (*listener)(const char *json, void *user); /* FsRunOptions.on_progress, or NULL */
    void *listener_user;
    double told_at;   /* when the listener was last posted an event */
    FsTeller teller;  /* the listener's thread, while the progress thread runs */
} FsProgress;

/* redraw: run_progress_redraw's answer for out. */
void progress_init(FsProgress *p, FILE *out, int quiet, int redraw, int trials_total, int trials_done,
                   int folds_per_trial, int folds_total, double grace);
/* Which way the best goes: lower (a loss) or higher (Q3), as the
 * leaderboard ranks (without it a loss run named its worst trial, as a
 * percent). */
void progress_rank_by(FsProgress *p, int lower_better);
/* A complete trial (report_trial_rank's): the line's best when the
 * leaderboard would rank it before the best so far (report_rank_before,
 * the board's own comparison: one rule names both firsts). */
void progress_offer_best(FsProgress *p, const FsReportRank *r);
/* The best trial as the leaderboard ranks it (its first row): with seed
 * replicates its mean is over the seeds, which may put another trial first. */
void progress_set_best(FsProgress *p, const FsReportRank *r);
/* Folds the journal already has (a resume): the line and progress.json
 * count the whole run's folds, "folds 7/18", not this session's alone. */
void progress_seed_done(FsProgress *p, int folds_earlier);
/* Draws the first line (the run's totals) and starts the thread. */
void progress_start(FsProgress *p);
void progress_stop(FsProgress *p);
void progress_fold_started(FsProgress *p);
/* Epochs done so far by the models of the GPU launch in flight. */
void progress_gpu_epochs(FsProgress *p, long epochs);
/* counted: the fold produced a result; trial_complete: its trial is now
 * complete with `metric` as its mean. */
void progress_fold_finished(FsProgress *p, int counted, int trial_complete);
/* A pruned trial: n of its queued folds will never run (they count as done),
 * and the trial counts as done. */
void progress_trial_pruned(FsProgress *p, int n_skipped);
/* A new batch of the sampler, or the replicates chosen: n more folds listed. */
void progress_add_folds(FsProgress *p, int n);
/* What is not listed yet (decide.c, after every decision): the run's
 * trials (those proposed and those the sampler has still to propose),
 * the folds of the latter, and the replicate folds still to be chosen. */
void progress_ahead(FsProgress *p, int trials_total, int trial_folds, int replicate_folds);

/* Where the time of one session of a run went. */
typedef struct {
    double data_seconds;    /* loading and preparing data */
    double train_seconds;   /* summed over folds: training steps */
    double val_seconds;     /* summed over folds: validation */
    double journal_seconds; /* appending to the journal */
    double wall_seconds;    /* the pool's wall time */
    int threads;
    double train_examples;
    int folds;
    double pruned_seconds;  /* training of folds cut by the pruner (rank 0's own; not a result) */
    /* This process's GPU (gpu_times): the device at work while the host
     * waited, and the host's own share of the GPU calls. */
    double gpu_kernel_seconds, gpu_host_seconds;
} FsProfile;

/* One session's profile, as the run prints it when it ends. */
void profile_print(FILE *out, const FsProfile *p);
/* DIR/profile.json and DIR/profile.txt: the whole run (this session added
 * to the sessions profile.json already holds) and this session. A session
 * that trained nothing leaves them as they are. A profile.json that cannot
 * be read (damaged, edited) is warned about on stderr and replaced by one
 * that starts from this session. */
int profile_write(const char *dir, const FsProfile *p, FsErr *err);

#endif
