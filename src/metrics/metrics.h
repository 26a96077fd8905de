/*
 * metrics: scores on scored residues only, from a confusion matrix of the
 * classes (rows = true class, columns = predicted; H E C, or the eight
 * DSSP states H G I E B T S C of an 8-state run). Q3, Q8, per-class
 * precision, recall and Matthews correlation.
 */
#ifndef FS_METRICS_H
#define FS_METRICS_H

#include <stdint.h>

#include "util/util.h"

typedef struct {
    int classes; /* 3 or 8: the confusion's rows and columns (the rest is 0) */
    uint64_t confusion[FS_MAX_CLASSES][FS_MAX_CLASSES];
    uint64_t n;
    /* Q3: the 3-state accuracy. With 8 classes, through the standard
     * reduction (H G I -> H, E B -> E, T S C -> C) of each residue's
     * 8-state truth and of its 8-state prediction (the argmax over the
     * eight, then reduced): the reduced matrix's trace over n. */
    double q3;
    double q8; /* with 8 classes, the accuracy over the eight; NAN with 3 */
    /* Per class of the run's classes; 0 where undefined (no predictions / no examples) */
    double precision[FS_MAX_CLASSES], recall[FS_MAX_CLASSES], mcc[FS_MAX_CLASSES];
} FsMetrics;

/* classes: 3 (or 0) or 8; confusion's first classes x classes cells count. */
void metrics_from_classes(FsMetrics *m, int classes, const uint64_t confusion[FS_MAX_CLASSES][FS_MAX_CLASSES]);
/* A 3-state confusion (H E C by H E C). */
void metrics_from_confusion(FsMetrics *m, const uint64_t confusion[FS_CLASSES][FS_CLASSES]);
/* An 8-state confusion reduced to 3 states (a 3-state one copied). */
void metrics_reduce_confusion(int classes, const uint64_t in[FS_MAX_CLASSES][FS_MAX_CLASSES],
                              uint64_t out[FS_MAX_CLASSES][FS_MAX_CLASSES]);

/* The metric that ranks trials (run.metric): a fold's best epoch's
 * validation Q3 (higher is better) or cross-entropy (lower is better). */
/* FS_METRIC_Q8 (an 8-state run's): the best epoch's validation Q8. */
typedef enum { FS_METRIC_Q3 = 0, FS_METRIC_LOSS, FS_METRIC_Q8, FS_METRIC_COUNT } FsMetricKind;
/* Their names, the one table of them: the sweep's run.metric, the journal's
 * run record, the leaderboard, the pruner's reasons. */
extern const char *const metrics_kind_names[FS_METRIC_COUNT];
/* A kind's name ("?" for none); a name's kind, or -1 if it names none. */
const char *metrics_kind_name(FsMetricKind m);
int metrics_kind_parse(const char *name);

/* ---------------------------------------------------------------------- */
/* Segment overlap, SOV'99 (Zemla, Venclovas, Fidelis, Rost, Proteins 34:
 * 220-223, 1999), as a fraction 0..1 like Q3. States are the classes
 * (FS_SS_H, FS_SS_E, FS_SS_C). A segment is a maximal run of consecutive scored residues in one
 * state. A residue with scored[k] == 0 belongs to no segment, observed or
 * predicted, and ends any segment on both sides of it: segments never span
 * a masked residue, so one masked residue inside a helix makes two helices.
 * Values from FS_CLASSES up make segments of their own that no state counts (garbage
 * in, never an out-of-bounds read).
 * Several chains accumulate by summing each state's numerator and N, so the
 * SOV of a data set is residue-weighted (a long chain counts more), not a
 * mean of per-chain SOVs. */

/* SOV'99 accumulated over chains: numerators and N per state. */
typedef struct {
    double num[FS_CLASSES], den[FS_CLASSES];
} FsSov;

/* Adds one chain (residues 0..n-1): observed and predicted states,
 * scored (NULL = all scored) 0 for residues that are no one's segment.
 * Runs in O(n); start from a zeroed FsSov. */
void metrics_sov_add(FsSov *s, const uint8_t *obs, const uint8_t *pred, const uint8_t *scored,
                     uint32_t n);
/* SOV of state cls (0..FS_CLASSES-1), or over all states (cls FS_CLASSES);
 * NAN if undefined (N = 0: the state never occurs in the observed segments;
 * for cls FS_CLASSES, no state does; any other cls). */
double metrics_sov(const FsSov *s, int cls);

/* ---------------------------------------------------------------------- */
/* Spread over proteins, for held-out test sets. */

/* Quantile q (0..1, clamped) of v[0..n-1] by linear interpolation between
 * order statistics at position q * (n - 1) (numpy's default 'linear').
 * v is left as it is (a sorted copy is used). NAN if n <= 0, q is NaN or
 * any v is NaN (as numpy gives). */
double metrics_quantile(const double *v, int n, double q);

/* 95% percentile bootstrap interval of Q3 over proteins: reps resamples of
 * n proteins drawn with replacement (FsRng seeded from seed), each one's
 * Q3 = sum(correct) / sum(total), skipping a resample whose total is 0;
 * lo, hi = metrics_quantile at 0.025 and 0.975 of those Q3s (NAN when
 * every resample was skipped). The same inputs and seed give the same
 * bits. Returns 0, or -1 if n < 1, reps < 1 or a pointer is NULL. */
int metrics_bootstrap_q3(const uint64_t *correct, const uint64_t *total, int n, int reps,
                         uint64_t seed, double *lo, double *hi);

/* ---------------------------------------------------------------------- */
/* Comparing trials over cross-validation splits (compare.c; the formulas
 * and their check are in docs/statistics.md). */

/* Student's t with df > 0 degrees of freedom: P(|T| > t) (1 at t = 0, 0 at
 * an infinite t), the cdf P(T <= t), and the quantile (the t with
 * cdf(t) = p; -inf and inf at p = 0 and 1). NAN for a NaN argument, p
 * outside [0, 1] or df <= 0. The cdf is accurate to about 1e-12 for df up to
 * 10,000 (cross-validation gives k x r - 1), the quantile to its slope's share
 * of that (tests/test_compare.c, tests/compare_scipy.py). */
double metrics_t_two_sided(double t, double df);
double metrics_t_cdf(double t, double df);
double metrics_t_quantile(double p, double df);

/* The interval of level (0.95: 95%) for the mean of n >= 2 split scores
 * x, with the corrected resampled variance (1 / n + ratio) s^2 (ratio: one
 * split's validation examples over its training examples) and Student's t
 * with n - 1 degrees of freedom. Returns 0, or -1 with both NAN when n < 2,
 * a score is not finite, ratio is negative or not finite, or level is not
 * in (0, 1). */
int metrics_ci_corrected(const double *x, int n, double ratio, double level, double *lo, double *hi);
/* The corrected standard error of that mean, sqrt((1 / n + ratio) s^2);
 * NAN under the same conditions. */
double metrics_se_corrected(const double *x, int n, double ratio);
/* The corrected resampled paired t-test of a against b over the same n >= 2
 * splits: the two-sided p-value that their mean scores are equal. 1 when
 * every split's difference is 0, 0 when every one is the same nonzero
 * number, NAN under metrics_ci_corrected's conditions for -1. */
double metrics_ttest_corrected(const double *a, const double *b, int n, double ratio);
/* Objectives a sweep may trade off (run.objectives): validation Q3 (higher
 * is better), validation loss, trainable parameters, training seconds and
 * the measured forward time per residue in microseconds (the validation
 * passes' time over the residues they scored; lower is better); names in
 * this order. */
typedef enum {
    FS_OBJ_Q3 = 0,
    FS_OBJ_LOSS,
    FS_OBJ_PARAMS,
    FS_OBJ_TRAIN_SECONDS,
    FS_OBJ_PREDICT_US,
    FS_OBJ_COUNT
} FsObjective;
extern const char *const metrics_objective_names[FS_OBJ_COUNT];
/* 1 when higher is better. */
int metrics_objective_higher(FsObjective o);
/* FS_OBJ_PREDICT_US of one fold: its validation passes' seconds over the
 * residues they scored, in microseconds (NaN without any). */
double metrics_predict_us(double val_seconds, uint64_t val_examples);
/* One fold's values that the objectives read: its best epoch's validation
 * Q3 and loss, its training seconds, its validation passes' seconds and the
 * residues they scored. */
typedef struct {
    double q3, loss, seconds, val_seconds;
    uint64_t val_examples;
} FsObjectiveFold;
/* A trial's value of objective o, in o's own units (metrics_objective_higher
 * says which way is better), from its k folds' values and its trainable
 * parameters: the mean Q3 or loss over the folds, the parameters, the
 * training seconds summed, the mean of each fold's metrics_predict_us. NaN
 * for k < 1 (params excepted). The one mapping the sampler (run.objectives'
 * MOTPE) and the leaderboard's front both use. */
double metrics_objective(FsObjective o, const FsObjectiveFold *folds, int k, double params);
/* metrics_objective made higher-is-better (negated where lower is better):
 * the value a Pareto front and tpe's split compare, the sampler's and the
 * leaderboard's alike. */
double metrics_objective_score(FsObjective o, const FsObjectiveFold *folds, int k, double params);
/* The Pareto front of n points of m objectives (v[i * m + k], every one
 * higher-is-better: callers negate the others): front[i] = 1 when no other
 * point is at least as good in every objective and better in one. Of
 * points with equal vectors only the first is on the front (ties broken
 * by order). A point with a NaN is never on it and dominates nothing. */
void metrics_pareto(const double *v, int n, int m, unsigned char *front);
/* Non-dominated sorting: rank[i] = 0 for the Pareto front, 1 for the front
 * of what is left without it, and so on (metrics_pareto's rules, ties
 * included); a point with a NaN gets rank n. */
void metrics_pareto_ranks(const double *v, int n, int m, int *rank);

/* Holm's step-down adjustment of n p-values in place (NaN entries are left
 * as they are and not counted among the comparisons). */
void metrics_holm(double *p, int n);

#endif
