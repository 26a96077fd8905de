/*
 * prune: stopping trials that are clearly behind, deterministically.
 *
 * A pruning decision is a function of the results that precede it in one
 * fixed order, never of timing: checkpoints are (fold, epoch) points, taken
 * fold by fold and epoch by epoch, and a decision for trial t at a
 * checkpoint uses only the values of trials with a smaller index at that
 * checkpoint. It is made as soon as all of those are known (or known to be
 * absent: the trial was pruned earlier, or its fold ended before that
 * epoch). Until then trial t keeps training; if the decision then says
 * "pruned at (fold, epoch)", the trial is cut and recorded as pruned there,
 * whatever it computed meanwhile. So the leaderboard, including which
 * trials were pruned and where, is the same on any number of ranks and
 * threads, and across a kill and resume; only the wasted work varies.
 *
 * The rules. A trial's value at (fold f, epoch e) is the mean, over its
 * folds so far, of each finished fold's recorded metric (at its kept
 * epoch, training.monitor's choice: the leaderboard's number) and fold f's
 * best so far up to epoch e (so a decision in a later fold weighs all the
 * trial's evidence):
 *  - median: at every epoch from `warmup` on, prune when the trial's value
 *    is worse than the median of the earlier trials' values at the same
 *    checkpoint (at least `min_trials` of them).
 *  - asha: successive halving at rungs min_epochs * reduction^k: among the
 *    earlier trials at the rung and this one (at least `reduction` in all),
 *    keep the best ceil(n / reduction).
 *  - folds (cross-validation): after each fold but the last, compare the
 *    trial fold by fold with the best complete earlier trial B (paired, the
 *    folds are the same proteins): with d the mean gap on the folds so far
 *    and s the pooled spread of such gaps across folds (from the other
 *    complete earlier trials), prune when even gaps of d + z*s on every
 *    remaining fold could not lift the trial's mean to B's. Needs
 *    `min_trials` complete earlier trials.
 * The caller (src/run) feeds values as they arrive and journals decisions.
 */
#ifndef FS_PRUNE_H
#define FS_PRUNE_H

typedef enum { FS_PRUNER_NONE = 0, FS_PRUNER_MEDIAN, FS_PRUNER_ASHA, FS_PRUNER_FOLDS } FsPrunerKind;
#define FS_PRUNER_COUNT 4
/* The rules' names in FsPrunerKind order, as search.pruner spells them. */
extern const char *const prune_kind_names[FS_PRUNER_COUNT];

typedef struct {
    FsPrunerKind kind;
    int warmup;     /* median: first epoch that can prune (>= 1) */
    int min_trials; /* median: earlier values needed; folds: complete earlier trials needed */
    int min_epochs; /* asha: the first rung */
    int reduction;  /* asha: keep 1 in `reduction` at each rung (>= 2) */
    double z;       /* folds: optimism, in pooled standard deviations */
} FsPruneSpec;

/* A decision: trial pruned at (fold slot, epoch); epoch 0 means after the
 * fold ended (the folds rule). value and threshold are in the metric's
 * units (Q3 or loss). */
typedef struct {
    int trial, fold, epoch;
    double value, threshold;
    char rule[8];
    char reason[240];
} FsPruneDecision;

typedef struct FsPruner FsPruner;

const char *prune_kind_name(FsPrunerKind k);

/* n_folds fold slots per trial, at most max_epochs epochs each; higher
 * metric values are better when higher_better (Q3), else lower (loss). */
FsPruner *pruner_new(const FsPruneSpec *spec, int n_trials, int n_folds, int max_epochs, int higher_better);
/* The metric a decision's reason names (default: q3 when higher_better,
 * else loss; an 8-state run's q8). */
void pruner_set_metric(FsPruner *p, int metric); /* an FsMetricKind (metrics/metrics.h) */
void pruner_free(FsPruner *p);

/* What is known, fed in any order, any number of times. */
void pruner_epoch(FsPruner *p, int trial, int fold, int epoch, double metric); /* epochs of one fold in order */
/* The fold ended after `epochs` epochs; score is its recorded metric (at its
 * kept epoch, as the leaderboard has it); ok = 0 for a diverged or failed fold (the trial is then out
 * of every comparison, and never pruned). */
void pruner_fold_end(FsPruner *p, int trial, int fold, int epochs, double score, int ok);
/* A decision read back from the journal (with the fold's values up to it). */
void pruner_restore(FsPruner *p, const FsPruneDecision *d);
/* The trial's folds up to `fold` stand as they are: trained before this
 * pruner (an extension that added or changed it: "it decides from here
 * on"), they are never cut, and their values still count for the trials
 * after them. */
void pruner_settle(FsPruner *p, int trial, int fold);

/* A resume: passes every checkpoint the values fed so far (the journal's)
 * settle, pruning none. A run journals each pruned trial before the fold
 * record that made its decision known (and a pass's cuts last trial
 * first), so every checkpoint the journal settles was decided when it was
 * written: its cuts are restored (pruner_restore) and the rest were kept.
 * A run journaled under another value rule keeps its decisions so. */
void pruner_replay(FsPruner *p);
/* Makes every decision the information so far determines; the new prunings
 * go to out (up to cap) and their number is returned. */
int pruner_decide(FsPruner *p, FsPruneDecision *out, int cap);
/* 1 if the trial is pruned (d filled when not NULL). */
int pruner_is_pruned(const FsPruner *p, int trial, FsPruneDecision *d);
/* 1 once every decision for the trial is made and it is not pruned. */
int pruner_trial_kept(const FsPruner *p, int trial);

#endif
