/*
 * sampler: which trials a run trains. Without search.sampler: tpe or
 * search.stop every trial of the sweep is proposed at once. With either,
 * rank 0 proposes search.batch trials at a time (tpe: src/sample; random
 * with a stop rule: the sampled trials in their order), each batch once
 * every trial of the earlier batches is finished in the journal (decide.c
 * lists their jobs); on resume the same batches are proposed again from the
 * journal, so a resumed run (on any number of ranks) trains the same trials.
 *
 * An extended run (docs/sweep-format.md, "Extending a run"): the trials an
 * earlier sweep version recorded come first, as one batch in the sweep's
 * order (the kept trials: a set fixed by the journal before this version's
 * sweep record, so every resume and rank count starts the same), and tpe's
 * estimator starts from their scores.
 *
 * search.stop: {after: N} ends the study before its budget once N trials in
 * a row, in proposal order, did not beat the best mean so far by more than
 * the best's corrected standard error (metrics_se_corrected: the folds'
 * noise). It is judged only when a batch is due, from the journal, so every
 * rank count and every resume decides the same.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/state.h"
#include "sample/sample.h"

/* The sampler's view: the sweep, the journal, the proposals so far. */
typedef struct {
    const FsSweep *sw;
    const FsJournal *j;
    const FsFolds *folds;
    int *proposed;
    int n_proposed, n_batches;
    FsStudyStop stop;
} Study;

static int tpe(const FsSweep *sw) { return sw->sampler == FS_SAMPLER_TPE; }
static int batched(const FsSweep *sw) { return sweep_proposes_in_batches(sw); }
static int budget(const FsSweep *sw) { return tpe(sw) ? sw->random_n : sw->n_trials; }

/* Finished: failed, pruned, or every fold recorded (from the journal). */
static int resolved(const Study *s, int t)
{
    const FsTrial *tr = &s->sw->trials[t];
    if (journal_find_failure(s->j, tr->id) || journal_find_cut(s->j, tr->id)) return 1;
    for (int k = 0; k < s->folds->n; k++)
        if (!journal_find_fold(s->j, tr->id, data_fold_id(s->folds, k))) return 0;
    return 1;
}

/* Higher is better: the mean Q3 (or minus the mean loss) over its folds,
 * and its corrected standard error (0 with one fold); -inf for a trial
 * that failed, diverged or was pruned. */
static double score(const Study *s, int t, double *se)
{
    const FsTrial *tr = &s->sw->trials[t];
    const int n = s->folds->n;
    *se = 0.0;
    if (journal_find_failure(s->j, tr->id) || journal_find_cut(s->j, tr->id)) return -INFINITY;
    double *x = fs_malloc(sizeof(double) * (size_t)n), sum = 0.0, tr_ex = 0.0, va_ex = 0.0;
    for (int k = 0; k < n; k++) {
        const FsFoldRecord *fr = journal_find_fold(s->j, tr->id, data_fold_id(s->folds, k));
        if (!fr || fr->r.status != FS_FIT_OK || fr->r.best_epoch < 1) return free(x), -INFINITY;
        const double v = train_result_metric(&fr->r, s->sw->metric);
        x[k] = s->sw->metric == FS_METRIC_LOSS ? -v : v;
        sum += x[k];
        tr_ex += (double)fr->r.train_examples;
        va_ex += (double)fr->r.val_examples;
    }
    if (n >= 2 && tr_ex > 0.0) {
        *se = metrics_se_corrected(x, n, va_ex / tr_ex);
        if (!isfinite(*se)) *se = 0.0;
    }
    free(x);
    return sum / n;
}

/* Trial t's value of objective o, higher is better (NaN where a fold is
 * missing or failed): metrics_objective over its folds' records, the
 * leaderboard's front's mapping (report_ties.c). */
static double objective_of(const Study *s, int t, FsObjective o)
{
    const FsTrial *tr = &s->sw->trials[t];
    const int n = s->folds->n;
    FsObjectiveFold *f = fs_malloc(sizeof *f * (size_t)(n > 0 ? n : 1));
    for (int k = 0; k < n; k++) {
        const FsFoldRecord *fr = journal_find_fold(s->j, tr->id, data_fold_id(s->folds, k));
        if (!fr || fr->r.status != FS_FIT_OK || fr->r.best_epoch < 1) return free(f), NAN;
        f[k] = train_result_objective(&fr->r);
    }
    const double v = metrics_objective_score(o, f, n, (double)sweep_trial_params(tr));
    free(f);
    return v;
}

/* With run.objectives (two or more), tpe splits the trials so far as MOTPE
 * does (Ozaki et al., GECCO 2020): by non-dominated sorting of their
 * objectives, the Pareto front first, then the front of the rest, ...;
 * within a front by the ranking metric. scores[k] (the metric's) become
 * that order: less the front's rank times a gap wider than any metric's
 * spread, which only the order of scores matters to (sample_propose). */
static void objective_scores(const Study *s, double *scores)
{
    const int n = s->n_proposed, m = s->sw->n_objectives;
    if (m < 2 || n == 0) return;
    double *v = fs_malloc(sizeof(double) * (size_t)n * (size_t)m);
    int *rank = fs_malloc(sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++)
        for (int o = 0; o < m; o++)
            v[(size_t)k * m + o] = isfinite(scores[k]) ? objective_of(s, s->proposed[k], s->sw->objectives[o]) : NAN;
    metrics_pareto_ranks(v, n, m, rank);
    for (int k = 0; k < n; k++)
        if (isfinite(scores[k])) scores[k] -= 1e9 * rank[k];
    free(v);
    free(rank);
}

/* search.stop over the proposals so far (all resolved): 1 when it ended
 * the study, with s->stop saying where and why. */
static int study_check(Study *s)
{
    if (!s->sw->stop_after) return 0;
    double best = -INFINITY, best_se = 0.0;
    int streak = 0, at = -1;
    for (int k = 0; k < s->n_proposed; k++) {
        double se, v = score(s, s->proposed[k], &se);
        if (v > best + best_se) {
            best = v, best_se = se, at = s->proposed[k], streak = 0;
            continue;
        }
        streak++;
        if (v > best) best = v, best_se = se, at = s->proposed[k];
        if (streak >= s->sw->stop_after) {
            s->stop.stopped = 1;
            s->stop.after = k + 1;
            s->stop.streak = streak;
            s->stop.best_mean = s->sw->metric == FS_METRIC_LOSS ? -best : best;
            s->stop.best_se = best_se;
            s->stop.proposed = s->n_proposed;
            s->stop.budget = budget(s->sw);
            snprintf(s->stop.best, sizeof s->stop.best, "%s", at >= 0 ? s->sw->trials[at].id : "");
            return 1;
        }
    }
    return 0;
}

/* Proposes the next batch; returns its size (0: the budget is spent or
 * search.stop ended the study). */
static int propose(Study *s)
{
    const FsSweep *sw = s->sw;
    int want = budget(sw) - s->n_proposed;
    if (want > sw->batch) want = sw->batch;
    if (want <= 0 || study_check(s)) return 0;
    int n = want;
    if (tpe(sw)) {
        unsigned char *taken = fs_calloc((size_t)sw->n_trials + 1, 1);
        double *scores = fs_calloc((size_t)s->n_proposed + 1, sizeof(double)), se;
        for (int k = 0; k < s->n_proposed; k++) {
            taken[s->proposed[k]] = 1;
            scores[k] = score(s, s->proposed[k], &se);
        }
        objective_scores(s, scores);
        n = sample_propose(sw, s->proposed, scores, s->n_proposed, taken, want, s->n_batches,
                           s->proposed + s->n_proposed);
        free(taken);
        free(scores);
    } else {
        for (int k = 0; k < n; k++) s->proposed[s->n_proposed + k] = s->n_proposed + k; /* the sampled order */
    }
    s->n_proposed += n;
    s->n_batches++;
    return n;
}

/* Batch after batch while every proposed trial is finished. */
static void replay(Study *s)
{
    for (;;) {
        int all = 1;
        for (int k = 0; k < s->n_proposed && all; k++) all = resolved(s, s->proposed[k]);
        if (!all || propose(s) == 0) break;
    }
}

static Study study_of(RunState *st)
{
    Study s = {&st->sw, &st->j, &st->folds, st->proposed, st->n_proposed, st->n_batches, st->study_stop};
    return s;
}

static void study_back(RunState *st, const Study *s)
{
    for (int k = st->n_proposed; k < s->n_proposed; k++) st->trials[s->proposed[k]].rank = k;
    st->n_proposed = s->n_proposed;
    st->n_batches = s->n_batches;
    st->study_stop = s->stop;
}

/* The trials earlier sweep versions recorded (an extended run), in the
 * sweep's order, as the first batch. */
static void propose_kept(Study *s)
{
    const int version = s->j->n_sweep_versions;
    for (int t = 0; t < s->sw->n_trials; t++) {
        const FsTrialRecord *r = journal_find_trial(s->j, s->sw->trials[t].id);
        if (r && r->version < version) s->proposed[s->n_proposed++] = t;
    }
    if (s->n_proposed) s->n_batches = 1;
}

void run_sampler_open(RunState *st)
{
    const FsSweep *sw = &st->sw;
    st->proposed = fs_calloc((size_t)sw->n_trials + 1, sizeof(int));
    for (int t = 0; t < sw->n_trials; t++) st->trials[t].rank = -1;
    if (!batched(sw)) {
        for (int t = 0; t < sw->n_trials; t++) st->trials[t].rank = st->n_proposed, st->proposed[st->n_proposed++] = t;
        return;
    }
    /* Replay: each batch from the journal's scores of the ones before, as
     * long as those are all finished. */
    Study s = study_of(st);
    propose_kept(&s);
    replay(&s);
    study_back(st, &s);
}

int run_sampler_more(const RunState *st)
{
    return batched(&st->sw) && st->n_proposed < budget(&st->sw) && !st->study_stop.stopped;
}

int run_sampler_left(const RunState *st) { return run_sampler_more(st) ? budget(&st->sw) - st->n_proposed : 0; }

int run_sampler_next(RunState *st)
{
    if (!run_sampler_more(st)) return 0;
    Study s = study_of(st);
    for (int k = 0; k < s.n_proposed; k++)
        if (!resolved(&s, s.proposed[k])) return 0;
    const int n = propose(&s);
    study_back(st, &s);
    return n;
}

int run_sampler_first(const FsSweep *sw, int *out, int *batch)
{
    const int size = batched(sw) ? sw->batch : sw->n_trials;
    if (!tpe(sw)) {
        for (int k = 0; k < sw->n_trials; k++) out[k] = k, batch[k] = k / (size > 0 ? size : 1) + 1;
        return sw->n_trials;
    }
    /* propose()'s calls with no results yet: random batches, a function of
     * the seed and the batch's number alone. */
    unsigned char *taken = fs_calloc((size_t)sw->n_trials + 1, 1);
    int n = 0;
    for (int b = 0; n < FS_SAMPLE_STARTUP && n < budget(sw); b++) {
        const int want = budget(sw) - n < size ? budget(sw) - n : size;
        const int got = sample_propose(sw, out, NULL, n, taken, want, b, out + n);
        if (got <= 0) break;
        for (int k = n; k < n + got; k++) taken[out[k]] = 1, batch[k] = b + 1;
        n += got;
    }
    free(taken);
    return n;
}

void run_study_text(const FsStudyStop *s, char *out, size_t n)
{
    snprintf(out, n, "stopped by search.stop after %d trials: the last %d did not beat the best (%.8s) by more than "
             "its standard error; %d of the budget of %d not trained",
             s->after, s->streak, s->best, s->budget - s->proposed, s->budget);
}

void run_study_replay(const FsSweep *sw, const FsJournal *j, const FsFolds *folds, FsStudyStop *out)
{
    memset(out, 0, sizeof *out);
    if (!sw->stop_after) return;
    Study s = {sw, j, folds, fs_calloc((size_t)sw->n_trials + 1, sizeof(int)), 0, 0, {0}};
    replay(&s);
    /* A study whose last batch is still training has not decided yet. */
    *out = s.stop;
    out->proposed = s.n_proposed;
    out->budget = budget(sw);
    free(s.proposed);
}
