/*
 * prune.c: the deterministic pruning rules of prune.h. Every trial walks
 * its checkpoints in order, (fold 0, epoch 1), (fold 0, epoch 2), ...,
 * (fold 0, end), (fold 1, epoch 1), ...; a checkpoint is passed when the
 * trial has a value there and, where the rule looks at it, every earlier
 * trial's state there is settled. Values are kept oriented so that higher
 * is better (a loss is negated).
 */
#include "prune/prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h" /* the metric's name in a reason */
#include "util/util.h"

typedef struct {
    double *best; /* best-so-far per epoch, oriented */
    int known;    /* epochs with a value */
    int ended;    /* epochs the fold ran, -1 while it runs */
    double score; /* the fold's recorded metric (at its kept epoch), oriented */
    int ok;       /* ended without diverging or failing */
} Fold;

typedef struct {
    Fold *fold;
    long done; /* the last checkpoint passed; -1 none */
    long settled; /* checkpoints up to this one make no decision (pruner_settle); -1 none */
    int pruned;
    FsPruneDecision d;
} Trial;

struct FsPruner {
    FsPruneSpec spec;
    int n_trials, n_folds, max_epochs, higher_better;
    FsMetricKind metric; /* named in the reasons */
    Trial *t;
    double *scratch;
};

enum { PENDING = -1, ABSENT = 0, VALUE = 1 };

const char *const prune_kind_names[FS_PRUNER_COUNT] = {"none", "median", "asha", "folds"};

const char *prune_kind_name(FsPrunerKind k) { return (unsigned)k < FS_PRUNER_COUNT ? prune_kind_names[k] : "?"; }

/* Checkpoints in order: epoch e of fold f, with e = max_epochs + 1 the
 * fold's end. */
static long ck(const FsPruner *p, int f, int e) { return (long)f * (p->max_epochs + 2) + e; }
static double orient(const FsPruner *p, double v) { return p->higher_better ? v : -v; }
static double unorient(const FsPruner *p, double v) { return p->higher_better ? v : -v; }

/* The metric in a reason people read: Q3 in percent (fs_format_percent),
 * a loss with 4 decimals; a difference of Q3 in percentage points. */
static const char *value_text(const FsPruner *p, double v, char *buf, size_t n)
{
    if (p->higher_better) snprintf(buf, n, "%s%%", fs_percent_text(v));
    else snprintf(buf, n, "%.4f", v);
    return buf;
}

static const char *gap_text(const FsPruner *p, double v, char *buf, size_t n)
{
    if (p->higher_better) snprintf(buf, n, "%s points", fs_percent_text(v));
    else snprintf(buf, n, "%.4f", v);
    return buf;
}

FsPruner *pruner_new(const FsPruneSpec *spec, int n_trials, int n_folds, int max_epochs, int higher_better)
{
    FsPruner *p = fs_calloc(1, sizeof *p);
    p->spec = *spec;
    p->n_trials = n_trials;
    p->n_folds = n_folds;
    p->max_epochs = max_epochs;
    p->higher_better = higher_better;
    p->metric = higher_better ? FS_METRIC_Q3 : FS_METRIC_LOSS;
    p->t = fs_calloc((size_t)n_trials + 1, sizeof *p->t);
    p->scratch = fs_calloc((size_t)n_trials + 1, sizeof *p->scratch);
    for (int t = 0; t < n_trials; t++) {
        p->t[t].done = 0;
        p->t[t].settled = -1;
        p->t[t].fold = fs_calloc((size_t)n_folds, sizeof(Fold));
        for (int f = 0; f < n_folds; f++) p->t[t].fold[f].ended = -1;
    }
    return p;
}

void pruner_set_metric(FsPruner *p, int metric) { p->metric = (FsMetricKind)metric; }

void pruner_free(FsPruner *p)
{
    if (!p) return;
    for (int t = 0; t < p->n_trials; t++) {
        for (int f = 0; f < p->n_folds; f++) free(p->t[t].fold[f].best);
        free(p->t[t].fold);
    }
    free(p->t);
    free(p->scratch);
    free(p);
}

static int valid(const FsPruner *p, int t, int f) { return t >= 0 && t < p->n_trials && f >= 0 && f < p->n_folds; }

void pruner_epoch(FsPruner *p, int trial, int fold, int epoch, double metric)
{
    if (!valid(p, trial, fold) || epoch < 1 || epoch > p->max_epochs) return;
    Fold *F = &p->t[trial].fold[fold];
    if (epoch != F->known + 1) return; /* already known, or out of order */
    if (!F->best) F->best = fs_calloc((size_t)p->max_epochs, sizeof(double));
    double v = orient(p, metric);
    if (!(v == v)) v = -INFINITY; /* NaN: the worst value */
    F->best[epoch - 1] = epoch > 1 && F->best[epoch - 2] > v ? F->best[epoch - 2] : v;
    F->known = epoch;
}

void pruner_fold_end(FsPruner *p, int trial, int fold, int epochs, double score, int ok)
{
    if (!valid(p, trial, fold)) return;
    Fold *F = &p->t[trial].fold[fold];
    F->ended = epochs < 0 ? 0 : epochs;
    if (F->known > F->ended) F->known = F->ended;
    F->score = orient(p, score);
    if (!(F->score == F->score)) F->score = -INFINITY; /* NaN: the worst value */
    F->ok = ok && F->known == F->ended && F->ended > 0;
}

void pruner_settle(FsPruner *p, int trial, int fold)
{
    if (!valid(p, trial, fold)) return;
    const long last = ck(p, fold, p->max_epochs + 1);
    if (last > p->t[trial].settled) p->t[trial].settled = last;
}

void pruner_restore(FsPruner *p, const FsPruneDecision *d)
{
    if (!valid(p, d->trial, d->fold)) return;
    p->t[d->trial].pruned = 1;
    p->t[d->trial].d = *d;
}

/* A trial's value at (f, e): the mean over its folds so far, each finished
 * fold at its recorded score (its kept epoch, which training.monitor chose:
 * the leaderboard's number) and fold f at its best so far up to epoch e
 * (its kept epoch is not known until it ends). Later folds thus carry all
 * the evidence, not one fold's noise. Needs e <= fold f's known epochs. */
static double trial_value(const FsPruner *p, int s, int f, int e)
{
    const Trial *S = &p->t[s];
    double sum = S->fold[f].best[e - 1];
    for (int k = 0; k < f; k++) {
        const Fold *F = &S->fold[k];
        sum += F->ended > 0 && F->known >= F->ended ? F->score : -INFINITY;
    }
    return sum / (f + 1);
}

/* The state of earlier trial s at checkpoint (f, e). */
static int value_at(const FsPruner *p, int s, int f, int e, double *v)
{
    const Trial *S = &p->t[s];
    const Fold *F = &S->fold[f];
    long here = ck(p, f, e);
    if (S->pruned) {
        long at = ck(p, S->d.fold, S->d.epoch ? S->d.epoch : p->max_epochs + 1);
        if (here > at) return ABSENT;
    } else if (S->done < here) {
        return PENDING;
    }
    if (e <= F->known) {
        *v = trial_value(p, s, f, e);
        return VALUE;
    }
    return F->ended >= 0 && e > F->ended ? ABSENT : PENDING;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int decide_median(FsPruner *p, int t, int f, int e, FsPruneDecision *d)
{
    if (e < p->spec.warmup) return 0;
    int n = 0;
    for (int s = 0; s < t; s++) {
        int st = value_at(p, s, f, e, &p->scratch[n]);
        if (st == PENDING) return PENDING;
        n += st == VALUE;
    }
    if (n < p->spec.min_trials) return 0;
    qsort(p->scratch, (size_t)n, sizeof(double), cmp_double);
    double med = n % 2 ? p->scratch[n / 2] : 0.5 * (p->scratch[n / 2 - 1] + p->scratch[n / 2]);
    double mine = trial_value(p, t, f, e);
    if (!(mine < med)) return 0;
    d->value = unorient(p, mine);
    d->threshold = unorient(p, med);
    char v[FS_PERCENT_TEXT + 1], m[FS_PERCENT_TEXT + 1];
    snprintf(d->reason, sizeof d->reason,
             "%s %s at fold %d epoch %d (%s) is worse than the median %s of %d earlier trials",
             metrics_kind_name(p->metric), value_text(p, d->value, v, sizeof v), f, e,
             f ? "its folds' mean: ended ones at their kept epoch, this one's best so far" : "best so far",
             value_text(p, d->threshold, m, sizeof m), n);
    return 1;
}

static int is_rung(const FsPruner *p, int e)
{
    long r = p->spec.min_epochs > 0 ? p->spec.min_epochs : 1;
    while (r < e) r *= p->spec.reduction > 1 ? p->spec.reduction : 2;
    return r == e;
}

static int decide_asha(FsPruner *p, int t, int f, int e, FsPruneDecision *d)
{
    if (!is_rung(p, e)) return 0;
    double mine = trial_value(p, t, f, e), v;
    int n = 1, better = 0;
    for (int s = 0; s < t; s++) {
        int st = value_at(p, s, f, e, &v);
        if (st == PENDING) return PENDING;
        if (st == VALUE) n++, better += v > mine;
    }
    int eta = p->spec.reduction > 1 ? p->spec.reduction : 2;
    int keep = (n + eta - 1) / eta;
    if (n < eta || better < keep) return 0;
    d->value = unorient(p, mine);
    d->threshold = (double)keep;
    snprintf(d->reason, sizeof d->reason, "rung of %d epochs in fold %d: %d of %d trials there are better; only the best %d go on",
             e, f, better, n, keep);
    return 1;
}

/* Every earlier trial settled (pruned, or through its last checkpoint):
 * returns the count of complete ones, or PENDING. */
static int decide_folds(FsPruner *p, int t, int f, FsPruneDecision *d)
{
    if (f >= p->n_folds - 1) return 0;
    int K = p->n_folds, best = -1, n_complete = 0;
    double best_mean = -INFINITY;
    long last = ck(p, K - 1, p->max_epochs + 1);
    for (int s = 0; s < t; s++) {
        const Trial *S = &p->t[s];
        if (!S->pruned && S->done < last) return PENDING;
        if (S->pruned) continue;
        int ok = 1;
        double sum = 0;
        for (int k = 0; k < K; k++) ok &= S->fold[k].ok, sum += S->fold[k].score;
        if (!ok) continue;
        n_complete++;
        if (sum / K > best_mean) best_mean = sum / K, best = s;
    }
    if (n_complete < (p->spec.min_trials > 1 ? p->spec.min_trials : 2) || best < 0) return 0;
    /* The pooled spread of fold-by-fold gaps to the best trial. */
    double ss = 0;
    int dof = 0;
    for (int s = 0; s < t; s++) {
        const Trial *S = &p->t[s];
        int ok = !S->pruned && s != best;
        for (int k = 0; k < K && ok; k++) ok = S->fold[k].ok;
        if (!ok) continue;
        double mean = 0;
        for (int k = 0; k < K; k++) mean += S->fold[k].score - p->t[best].fold[k].score;
        mean /= K;
        for (int k = 0; k < K; k++) {
            double dev = S->fold[k].score - p->t[best].fold[k].score - mean;
            ss += dev * dev;
        }
        dof += K - 1;
    }
    if (dof == 0) return 0;
    double sd = sqrt(ss / dof), gap = 0;
    for (int k = 0; k <= f; k++) {
        if (!p->t[t].fold[k].ok) return 0; /* a diverged fold: ranked as such, not pruned */
        gap += p->t[t].fold[k].score - p->t[best].fold[k].score;
    }
    double mean_gap = gap / (f + 1), rest = K - 1 - f;
    double bound = (gap + rest * (mean_gap + p->spec.z * sd)) / K;
    if (!(bound < 0)) return 0;
    d->value = p->higher_better ? mean_gap : -mean_gap;
    d->threshold = p->higher_better ? -p->spec.z * sd : p->spec.z * sd;
    char g[FS_PERCENT_TEXT + 8], s[FS_PERCENT_TEXT + 8];
    snprintf(d->reason, sizeof d->reason,
             "after fold %d: %s behind trial #%d on the same folds; even %.1f sd (%s) better on the remaining %d "
             "fold%s would not reach its mean",
             f, gap_text(p, -mean_gap, g, sizeof g), best, p->spec.z, gap_text(p, sd, s, sizeof s), (int)rest,
             rest == 1 ? "" : "s");
    return 1;
}

/* Moves trial t through every checkpoint it can pass; 1 if it was pruned.
 * replay: every checkpoint passes unpruned (pruner_replay). */
static int advance(FsPruner *p, int t, FsPruneDecision *out, int replay)
{
    Trial *T = &p->t[t];
    const int M = p->max_epochs;
    while (!T->pruned) {
        long next = T->done + 1;
        int f = (int)(next / (M + 2)), e = (int)(next % (M + 2));
        if (e == 0) e = 1, next++;
        if (f >= p->n_folds) return 0;
        const Fold *F = &T->fold[f];
        FsPruneDecision d;
        memset(&d, 0, sizeof d);
        int r = 0;
        if (e <= M && e > F->known) {
            if (F->ended < 0 || e <= F->ended) return 0; /* wait for the value */
            T->done = ck(p, f, M + 1) - 1;               /* the fold ended: on to its end */
            continue;
        }
        if (e <= M) {
            if (p->spec.kind == FS_PRUNER_MEDIAN) r = decide_median(p, t, f, e, &d);
            if (p->spec.kind == FS_PRUNER_ASHA) r = decide_asha(p, t, f, e, &d);
        } else {
            if (F->ended < 0) return 0;
            if (p->spec.kind == FS_PRUNER_FOLDS) r = decide_folds(p, t, f, &d);
        }
        if (r == PENDING) return 0;
        if (r == 1 && (replay || next <= T->settled)) r = 0; /* a settled fold stands */
        if (r == 1) {
            d.trial = t;
            d.fold = f;
            d.epoch = e <= M ? e : 0;
            snprintf(d.rule, sizeof d.rule, "%s", prune_kind_name(p->spec.kind));
            T->pruned = 1;
            T->d = d;
            *out = d;
            return 1;
        }
        T->done = next;
    }
    return 0;
}

int pruner_decide(FsPruner *p, FsPruneDecision *out, int cap)
{
    int n = 0;
    if (p->spec.kind == FS_PRUNER_NONE) return 0;
    /* Trial order: a decision for t may wait on any earlier trial, never
     * on a later one, so one pass settles all that can be settled. */
    for (int t = 0; t < p->n_trials; t++) {
        FsPruneDecision d;
        if (advance(p, t, &d, 0) && n < cap) out[n++] = d;
    }
    return n;
}

void pruner_replay(FsPruner *p)
{
    if (p->spec.kind == FS_PRUNER_NONE) return;
    for (int t = 0; t < p->n_trials; t++) {
        FsPruneDecision d;
        advance(p, t, &d, 1);
    }
}

int pruner_is_pruned(const FsPruner *p, int trial, FsPruneDecision *d)
{
    if (trial < 0 || trial >= p->n_trials || !p->t[trial].pruned) return 0;
    if (d) *d = p->t[trial].d;
    return 1;
}

int pruner_trial_kept(const FsPruner *p, int trial)
{
    if (trial < 0 || trial >= p->n_trials || p->t[trial].pruned) return 0;
    return p->t[trial].done >= ck(p, p->n_folds - 1, p->max_epochs + 1);
}
