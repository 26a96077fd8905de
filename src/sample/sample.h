/*
 * sample: which trials of a grid a sweep trains when it does not train them
 * all. sampler: tpe proposes them in fixed-size batches, each batch from the
 * scores of the trials of all earlier batches only (never from what is
 * still running), with tree-structured Parzen estimators over the swept
 * dimensions (categories, ordered values whose neighbours share evidence,
 * and ranges, each with a Parzen density over [low, high]: tpe.c). The first batches (at least 10 trials) are drawn at random.
 * Everything is a function of the sweep, its seed and those scores, so the
 * proposals are the same on any number of ranks and after a resume.
 *
 * The estimator: the scored trials are split into the best quarter ("good")
 * and the rest; for each dimension, l(v) and g(v) are the smoothed shares
 * of good and other trials with value v (a uniform prior of weight 1;
 * for ordered dimensions a trial also counts half at the neighbouring
 * values). A candidate's merit is the sum over dimensions of
 * log l(v) - log g(v) (a range's: its densities at the trial's value,
 * tpe.c); the batch takes the best candidate, counts it as a
 * bad trial (the "constant liar", so a batch spreads out) and repeats.
 * Ties go to the lower trial index.
 */
#ifndef FS_SAMPLE_H
#define FS_SAMPLE_H

#include "sweep/sweep.h"

/* Trials proposed before the estimator takes over: the first batches, at
 * least this many trials. */
#define FS_SAMPLE_STARTUP 10

/* Proposes up to `batch` trials of sw not yet taken (taken[t] != 0) as
 * batch number batch_index, given n_hist earlier trials hist[] with
 * score[] (higher is better; -INFINITY for a trial that failed, diverged
 * or was pruned). Writes their indices to out and returns how many (fewer
 * when the grid runs out). */
int sample_propose(const FsSweep *sw, const int *hist, const double *score, int n_hist, const unsigned char *taken,
                   int batch, int batch_index, int *out);

#endif
