/*
 * run/decide.h: internal to the run module. Rank 0's decisions, made in
 * two files that only say what they decided (pruning.c: which trials to
 * cut; sampler.c: which trials to train next) and applied in one
 * (decide.c: the journal's pruned records, the queue, the prune flags,
 * a new batch's jobs). All of it with st->lock held but open and close.
 */
#ifndef FS_RUN_DECIDE_H
#define FS_RUN_DECIDE_H

#include "prune/prune.h"
#include "run/state.h"

/* pruning.c: the sweep's pruner (none without search.pruner), fed with
 * what the journal knows, each trial's cut slot and recorded folds set
 * from it. 0, or -1 with err: a pruned record naming a fold the sweep
 * lacks (the first such; the others are read all the same). */
int run_pruning_open(RunState *st, FsErr *err);
void run_pruning_close(RunState *st);
/* Values of rank 0's running jobs, from their progress counters. */
void run_pruning_poll_local(RunState *st);
/* Job i's validation metric is known through epoch upto (its res.curves). */
void run_pruning_feed_epochs(RunState *st, int i, int upto);
/* Job i finished (its result is in its res). */
void run_pruning_job_finished(RunState *st, int i);
/* The decisions the values so far settle, into d (room for st->n_prunable):
 * returns how many. Nothing is applied. */
int run_pruning_decide(RunState *st, FsPruneDecision *d);
/* Decision d as the journal's pruned record (c->curve points into the
 * decided fold's result). */
void run_pruning_record(const RunState *st, const FsPruneDecision *d, FsCutRecord *c);
/* The first fold slot trial t's pruned record in the journal leaves out
 * (folds.n: none); err when the record names a fold the sweep lacks. */
int run_pruning_cut_slot(const RunState *st, int t, FsErr *err);

/* sampler.c: the trials a tpe sweep proposes, batch by batch; without the
 * tpe sampler every trial is proposed at once (open). */
void run_sampler_open(RunState *st);
/* 1 while more trials may still be proposed (a waiting pool thread stays). */
int run_sampler_more(const RunState *st);
/* The budget's trials still to be proposed (0 once the sampler is done,
 * search.stop ending the study included). */
int run_sampler_left(const RunState *st);
/* When every proposed trial is finished and the budget is not spent: the
 * next batch, appended to st->proposed with their ranks; returns how many
 * (0: none due). Lists no job. */
int run_sampler_next(RunState *st);

/* decide.c: applies what the pruner and the sampler decided now: each
 * pruned trial journaled, its queued folds dropped and its running ones
 * flagged; then, unless the run is stopping, the sampler's next batch and
 * its jobs. Returns how many trials were pruned now. */
int run_decide(RunState *st);
/* Job i's trainer is done (its result is in its res): the pruner sees its
 * values, the decisions they settle are applied (they may prune its own
 * trial: it is then dropped, not recorded), it is recorded, and a recorded
 * fold may bring the sampler's next batch. */
void run_job_finished(RunState *st, int i);
/* Trial t is complete: the progress line's best if the leaderboard would
 * rank it first so far (its row built as the board builds it). */
void run_offer_best(RunState *st, int t);

#endif
