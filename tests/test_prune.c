/*
 * The pruning rules (src/prune) on constructed values: each rule's decision
 * and checkpoint; decisions that wait for earlier trials; the same
 * decisions whatever order the values arrive in (the property that makes
 * pruned sweeps identical on any number of ranks); a loss metric; a sweep
 * where every trial but the first is pruned; finished folds valued at their
 * kept epoch; a resume's replay of what the journal settles.
 */
#include <math.h>
#include <string.h>

#include "prune/prune.h"
#include "test.h"
#include "util/util.h"

#define T 6
#define E 4

/* Per trial, fold 0, epochs 1..E: validation Q3. */
static const double Q[T][E] = {
    {0.50, 0.60, 0.65, 0.66}, {0.52, 0.58, 0.63, 0.64}, {0.48, 0.61, 0.64, 0.67},
    {0.51, 0.59, 0.62, 0.66}, {0.49, 0.55, 0.56, 0.57}, {0.53, 0.62, 0.66, 0.68},
};

typedef struct {
    int trial, epoch;
} Event;

/* Feeds every (trial, epoch) value in the order given, deciding after each,
 * and returns the decisions found (in the order they were made). */
static int run_order(const FsPruneSpec *spec, const Event *ev, int n_ev, FsPruneDecision *out)
{
    FsPruner *p = pruner_new(spec, T, 1, E, 1);
    int n = 0;
    for (int k = 0; k < n_ev; k++) {
        pruner_epoch(p, ev[k].trial, 0, ev[k].epoch, Q[ev[k].trial][ev[k].epoch - 1]);
        if (ev[k].epoch == E) pruner_fold_end(p, ev[k].trial, 0, E, Q[ev[k].trial][E - 1], 1);
        n += pruner_decide(p, out + n, T - n);
    }
    pruner_free(p);
    return n;
}

static int cmp_dec(const void *a, const void *b)
{
    return ((const FsPruneDecision *)a)->trial - ((const FsPruneDecision *)b)->trial;
}

/* The decisions of a rule for every random arrival order (epochs of one
 * trial stay in order, as a fold's do) must be the same set. */
static void check_order_free(const FsPruneSpec *spec, FsPruneDecision *ref, int *n_ref)
{
    Event in_order[T * E];
    for (int t = 0, k = 0; t < T; t++)
        for (int e = 1; e <= E; e++) in_order[k++] = (Event){t, e};
    *n_ref = run_order(spec, in_order, T * E, ref);
    qsort(ref, (size_t)*n_ref, sizeof *ref, cmp_dec);
    FsRng rng;
    uint64_t seed = 11;
    fs_rng_seed(&rng, &seed, 1);
    for (int round = 0; round < 200; round++) {
        /* Interleave the trials at random; each trial's epochs in order. */
        int next[T] = {0};
        Event ev[T * E];
        for (int k = 0; k < T * E; k++) {
            int t;
            do t = (int)fs_rng_below(&rng, T);
            while (next[t] == E);
            ev[k] = (Event){t, ++next[t]};
        }
        FsPruneDecision got[T];
        int n = run_order(spec, ev, T * E, got);
        qsort(got, (size_t)n, sizeof *got, cmp_dec);
        CHECK_MSG(n == *n_ref, "round %d: %d decisions, in order %d", round, n, *n_ref);
        for (int i = 0; i < n && i < *n_ref; i++)
            CHECK_MSG(got[i].trial == ref[i].trial && got[i].epoch == ref[i].epoch && got[i].value == ref[i].value,
                      "round %d: trial %d at epoch %d, in order trial %d at epoch %d", round, got[i].trial,
                      got[i].epoch, ref[i].trial, ref[i].epoch);
    }
}

static void test_median(void)
{
    FsPruneSpec spec = {FS_PRUNER_MEDIAN, 2, 3, 1, 3, 2.0};
    FsPruneDecision d[T];
    int n;
    check_order_free(&spec, d, &n);
    /* Trial 3 at epoch 2: 0.59 vs median(0.60, 0.58, 0.61) = 0.60: pruned.
     * Trial 4 at epoch 2: 0.55 vs median of trials 0-3 (0.595): pruned.
     * Trial 5 is above every median. Epoch 1 is warm-up (trial 3's 0.51
     * would be above the median 0.50 anyway). */
    CHECK(n == 2);
    CHECK(n >= 1 && d[0].trial == 3 && d[0].fold == 0 && d[0].epoch == 2 && fabs(d[0].threshold - 0.60) < 1e-12);
    CHECK(n >= 2 && d[1].trial == 4 && d[1].epoch == 2 && fabs(d[1].threshold - 0.595) < 1e-12);
    CHECK(n >= 1 && !strcmp(d[0].rule, "median"));
    CHECK_CONTAINS(d[0].reason, "median 60.0% of 3 earlier trials"); /* Q3 in percent, as people read it */

    /* A decision waits for the earlier trials' values: trial 3 alone
     * decides nothing, and trial 2's epoch 2 settles it. */
    FsPruner *p = pruner_new(&spec, T, 1, E, 1);
    for (int e = 1; e <= E; e++) pruner_epoch(p, 3, 0, e, Q[3][e - 1]);
    for (int t = 0; t < 2; t++)
        for (int e = 1; e <= E; e++) pruner_epoch(p, t, 0, e, Q[t][e - 1]);
    FsPruneDecision x[T];
    CHECK(pruner_decide(p, x, T) == 0);
    pruner_epoch(p, 2, 0, 1, Q[2][0]);
    CHECK(pruner_decide(p, x, T) == 0);
    pruner_epoch(p, 2, 0, 2, Q[2][1]);
    CHECK(pruner_decide(p, x, T) == 1 && x[0].trial == 3 && x[0].epoch == 2);
    CHECK(pruner_is_pruned(p, 3, NULL) && !pruner_is_pruned(p, 2, NULL));
    pruner_free(p);

    /* A fold that ended early has no value after its end: absent, not
     * pending. Trial 1 stops after epoch 1; trial 3's epoch 2 is compared
     * with trials 0 and 2 only (median 0.605 > 0.59). */
    FsPruneSpec two = {FS_PRUNER_MEDIAN, 2, 2, 1, 3, 2.0};
    p = pruner_new(&two, T, 1, E, 1);
    pruner_epoch(p, 1, 0, 1, Q[1][0]);
    pruner_fold_end(p, 1, 0, 1, Q[1][0], 1);
    for (int t = 0; t < 4; t++)
        for (int e = 1; e <= 2 && t != 1; e++) pruner_epoch(p, t, 0, e, Q[t][e - 1]);
    CHECK(pruner_decide(p, x, T) == 1 && x[0].trial == 3 && fabs(x[0].threshold - 0.605) < 1e-12);
    pruner_free(p);
}

static void test_asha(void)
{
    /* Rungs at 1, 2, 4 epochs; keep the best half. */
    FsPruneSpec spec = {FS_PRUNER_ASHA, 1, 1, 1, 2, 2.0};
    FsPruneDecision d[T];
    int n;
    check_order_free(&spec, d, &n);
    /* Trial 1: rung 1 kept (best of 2), rung 2 pruned (0.58 < 0.60, keep 1
     * of 2). Trial 2: rung 1, 3rd of 3, keep 2: pruned. Trial 3: rung 1
     * 2nd of 4 (trial 2's 0.48 counts: it reached the rung), rung 2 2nd of
     * 3, rung 4 tied first of 2: kept. Trial 4: rung 1, 4th of 5: pruned. */
    CHECK_MSG(n == 3, "%d decisions", n);
    CHECK(n == 3 && d[0].trial == 1 && d[0].epoch == 2 && !strcmp(d[0].rule, "asha"));
    CHECK(n == 3 && d[1].trial == 2 && d[1].epoch == 1 && d[2].trial == 4 && d[2].epoch == 1);
    CHECK(n == 3 && d[2].threshold == 3.0);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(d[i].epoch == 1 || d[i].epoch == 2 || d[i].epoch == 4, "decision at epoch %d, not a rung",
                  d[i].epoch);
        CHECK(d[i].trial != 0 && d[i].trial != 5); /* the first and the best are never cut */
    }
}

/* The folds rule: trials 0-3 complete over 3 folds; trial 4 far behind
 * after fold 0 is pruned there; trial 5 close behind is kept. */
static void test_folds(void)
{
    FsPruneSpec spec = {FS_PRUNER_FOLDS, 1, 3, 1, 3, 2.0};
    const double S[6][3] = {{0.70, 0.66, 0.68}, {0.71, 0.67, 0.70}, {0.69, 0.66, 0.67},
                            {0.70, 0.67, 0.69}, {0.60, 0.59, 0.58}, {0.705, 0.66, 0.70}};
    FsPruner *p = pruner_new(&spec, 6, 3, 2, 1);
    FsPruneDecision x[6];
    for (int t = 0; t < 6; t++)
        for (int f = 0; f < 3; f++) {
            if (t >= 4 && f > 0) break;
            pruner_epoch(p, t, f, 1, S[t][f] - 0.01);
            pruner_epoch(p, t, f, 2, S[t][f]);
            pruner_fold_end(p, t, f, 2, S[t][f], 1);
        }
    int n = pruner_decide(p, x, 6);
    CHECK_MSG(n == 1 && x[0].trial == 4 && x[0].fold == 0 && x[0].epoch == 0, "%d decisions, first trial %d", n,
              n ? x[0].trial : -1);
    CHECK(n == 1 && !strcmp(x[0].rule, "folds") && fabs(x[0].value - (0.60 - 0.71)) < 1e-12);
    CHECK(!pruner_is_pruned(p, 5, NULL) && !pruner_trial_kept(p, 5)); /* waits for its next folds */
    CHECK(pruner_trial_kept(p, 1));
    pruner_free(p);
}

/* Loss: lower is better; a higher loss than the median prunes. */
static void test_loss(void)
{
    FsPruneSpec spec = {FS_PRUNER_MEDIAN, 1, 2, 1, 3, 2.0};
    FsPruner *p = pruner_new(&spec, 3, 1, 1, 0);
    pruner_epoch(p, 0, 0, 1, 0.80);
    pruner_epoch(p, 1, 0, 1, 0.90);
    pruner_epoch(p, 2, 0, 1, 0.86);
    FsPruneDecision x[3];
    CHECK(pruner_decide(p, x, 3) == 1 && x[0].trial == 2 && fabs(x[0].threshold - 0.85) < 1e-12);
    CHECK(fabs(x[0].value - 0.86) < 1e-12);
    CHECK_CONTAINS(x[0].reason, "loss 0.8600");
    pruner_free(p);
}

/* Every trial after the first is worse than everything before it. */
static void test_all_but_first(void)
{
    FsPruneSpec spec = {FS_PRUNER_MEDIAN, 1, 1, 1, 3, 2.0};
    enum { N = 20 };
    FsPruner *p = pruner_new(&spec, N, 2, 3, 1);
    for (int t = N - 1; t >= 0; t--) /* the last trials' values arrive first */
        for (int e = 1; e <= 3; e++) pruner_epoch(p, t, 0, e, 0.7 - 0.01 * t + 0.001 * e);
    pruner_epoch(p, 0, 1, 1, 0.7);
    FsPruneDecision x[N];
    int n = pruner_decide(p, x, N);
    CHECK_MSG(n == N - 1, "%d pruned", n);
    for (int i = 0; i < n; i++) CHECK(x[i].trial == i + 1 && x[i].epoch == 1);
    CHECK(!pruner_is_pruned(p, 0, NULL));
    /* The first goes on through its folds and is kept at the end. */
    for (int e = 1; e <= 3; e++) pruner_epoch(p, 0, 0, e, 0.7);
    pruner_fold_end(p, 0, 0, 3, 0.7, 1);
    for (int e = 2; e <= 3; e++) pruner_epoch(p, 0, 1, e, 0.7);
    pruner_fold_end(p, 0, 1, 3, 0.7, 1);
    CHECK(pruner_decide(p, x, N) == 0 && pruner_trial_kept(p, 0));
    pruner_free(p);
}

/* A decision read back from the journal holds: the restored trial is not
 * decided again, and later trials see its values up to its checkpoint. */
static void test_restore(void)
{
    FsPruneSpec spec = {FS_PRUNER_MEDIAN, 1, 1, 1, 3, 2.0};
    FsPruner *p = pruner_new(&spec, 3, 1, 2, 1);
    FsPruneDecision d = {.trial = 1, .fold = 0, .epoch = 1, .value = 0.4, .threshold = 0.5, .rule = "median"};
    pruner_restore(p, &d);
    pruner_epoch(p, 1, 0, 1, 0.4);
    pruner_epoch(p, 0, 0, 1, 0.5);
    pruner_epoch(p, 0, 0, 2, 0.6);
    pruner_epoch(p, 2, 0, 1, 0.44);
    pruner_epoch(p, 2, 0, 2, 0.7);
    FsPruneDecision x[3];
    /* Trial 2 at epoch 1: median(0.5, 0.4) = 0.45 > 0.44: pruned; at epoch 2
     * only trial 0 is there (trial 1 stopped at 1). */
    CHECK(pruner_decide(p, x, 3) == 1 && x[0].trial == 2 && x[0].epoch == 1);
    CHECK(pruner_is_pruned(p, 1, &d) && d.epoch == 1);
    pruner_free(p);
}

/* Settled folds (trained before this pruner: an extension) are never cut,
 * and their values still count: trial 3 stands, trial 4 is cut against the
 * same median as when trial 3 is cut (0.595). */
static void test_settle(void)
{
    FsPruneSpec spec = {FS_PRUNER_MEDIAN, 2, 3, 1, 3, 2.0};
    FsPruner *p = pruner_new(&spec, T, 1, E, 1);
    pruner_settle(p, 3, 0);
    for (int t = 0; t < T; t++)
        for (int e = 1; e <= E; e++) pruner_epoch(p, t, 0, e, Q[t][e - 1]);
    FsPruneDecision x[T];
    CHECK(pruner_decide(p, x, T) == 1 && x[0].trial == 4 && x[0].epoch == 2 && fabs(x[0].threshold - 0.595) < 1e-12);
    CHECK(!pruner_is_pruned(p, 3, NULL));
    pruner_free(p);
}

/* Two trials, 2 folds of 3 epochs; fold 0 kept at epoch 3 (training.monitor
 * loss: not the epoch of its best Q3), so its recorded score is below its
 * best-ever Q3. */
static const double K_CURVE[2][2][3] = {{{0.60, 0.70, 0.65}, {0.60, 0.60, 0.60}},
                                        {{0.62, 0.71, 0.64}, {0.60, 0.60, 0.60}}};

static void feed_fold(FsPruner *p, int t, int f, int upto)
{
    for (int e = 1; e <= upto; e++) pruner_epoch(p, t, f, e, K_CURVE[t][f][e - 1]);
    if (upto == 3) pruner_fold_end(p, t, f, 3, K_CURVE[t][f][2], 1);
}

/* A finished fold counts at its kept epoch, the leaderboard's score; the
 * running fold at its best so far. Trial 1 leads fold 0 at every epoch
 * (0.71 against 0.70 at best), so it goes on; in fold 1 at epoch 1 its
 * value is (0.64 + 0.60) / 2 = 0.62 against trial 0's (0.65 + 0.60) / 2 =
 * 0.625: pruned. Valued at their best-ever fold-0 Q3 (0.655 against 0.65)
 * it would have gone on. */
static void test_kept_epoch(void)
{
    FsPruneSpec spec = {FS_PRUNER_MEDIAN, 1, 1, 1, 3, 2.0};
    FsPruner *p = pruner_new(&spec, 2, 2, 3, 1);
    for (int t = 0; t < 2; t++) feed_fold(p, t, 0, 3);
    feed_fold(p, 0, 1, 3);
    feed_fold(p, 1, 1, 1);
    FsPruneDecision x[2];
    int n = pruner_decide(p, x, 2);
    CHECK_MSG(n == 1 && x[0].trial == 1 && x[0].fold == 1 && x[0].epoch == 1, "%d decisions", n);
    CHECK_MSG(n == 1 && fabs(x[0].value - 0.62) < 1e-12 && fabs(x[0].threshold - 0.625) < 1e-12,
              "value %.4f, threshold %.4f (the fold's best-ever Q3 counted, not its kept epoch)", n ? x[0].value : 0,
              n ? x[0].threshold : 0);
    CHECK(n == 1);
    if (n == 1) CHECK_CONTAINS(x[0].reason, "ended ones at their kept epoch, this one's best so far");
    pruner_free(p);

    /* A resume (pruner_replay): the checkpoints the values settle pass as
     * they were decided, none cut; those they do not settle are decided
     * after. Trial 1 is all known, trial 0's fold 1 not: trial 1's fold 0
     * passes, and fold 1 waits for trial 0. */
    p = pruner_new(&spec, 2, 2, 3, 1);
    feed_fold(p, 1, 0, 3);
    feed_fold(p, 1, 1, 3);
    feed_fold(p, 0, 0, 3);
    pruner_replay(p);
    CHECK(!pruner_is_pruned(p, 1, NULL) && !pruner_trial_kept(p, 1));
    feed_fold(p, 0, 1, 3);
    CHECK(pruner_decide(p, x, 2) == 1 && x[0].trial == 1 && x[0].fold == 1 && x[0].epoch == 1);
    pruner_free(p);
    /* Everything known before the replay: all kept, as journaled. */
    p = pruner_new(&spec, 2, 2, 3, 1);
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 2; f++) feed_fold(p, t, f, 3);
    pruner_replay(p);
    CHECK(pruner_decide(p, x, 2) == 0 && pruner_trial_kept(p, 1) && pruner_trial_kept(p, 0));
    pruner_free(p);
}

int main(void)
{
    test_kept_epoch();
    test_median();
    test_settle();
    test_asha();
    test_folds();
    test_loss();
    test_all_but_first();
    test_restore();
    return test_finish();
}
