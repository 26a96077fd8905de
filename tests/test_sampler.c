/*
 * The tpe sampler. On a constructed objective over a 2-dimensional grid:
 * proposals are a function of the sweep and the scores only (the same
 * twice), never repeat a trial, and find a better best trial than random
 * sampling at equal budgets (mean over 10 seeds). Through the binary: a
 * tpe sweep gives the same trials and leaderboard on 1 and 2 threads, on
 * 2 MPI ranks, and across a SIGKILL and resume.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>

#include "sample/sample.h"
#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

/* Higher is better; the optimum is at filters index 5, kernel index 2. */
static double objective(const FsSweep *sw, int t)
{
    const FsTrial *tr = &sw->trials[t];
    double a = tr->at[0] - 5.0, b = tr->at[1] - 2.0;
    return 0.70 - 0.004 * a * a - 0.006 * b * b;
}

/* The best objective found in `budget` trials, batch by batch. */
static double search(const FsSweep *sw, int budget, int batch, int *order)
{
    unsigned char taken[256] = {0};
    double score[256], best = -INFINITY;
    int n = 0, b = 0;
    while (n < budget) {
        int want = budget - n < batch ? budget - n : batch;
        int got = sample_propose(sw, order, score, n, taken, want, b++, order + n);
        CHECK(got == want);
        for (int k = n; k < n + got; k++) {
            CHECK_MSG(!taken[order[k]], "trial %d proposed twice", order[k]);
            taken[order[k]] = 1;
            score[k] = objective(sw, order[k]);
            if (score[k] > best) best = score[k];
        }
        n += got;
    }
    return best;
}

static void test_proposals(void)
{
    const char *text = "data:\n  synth: {proteins: 30}\n  window: 17\nmodel:\n"
                       "  filters: [4, 8, 12, 16, 20, 24, 28, 32]\n  kernel: [3, 5, 7, 9, 11, 13, 15, 17]\n"
                       "search:\n  random: 20\n  sampler: tpe\n  batch: 4\n  seed: %d\n";
    double sum_tpe = 0, sum_random = 0;
    for (int seed = 1; seed <= 10; seed++) {
        char buf[512];
        snprintf(buf, sizeof buf, text, seed);
        FsSweep sw;
        FsErrList errs = {0};
        CHECK_MSG(sweep_load_string(&sw, buf, "tpe.yaml", &errs) == 0, "%s", errs.n ? errs.msg[0] : "");
        if (errs.n) return;
        CHECK(sw.n_trials == 64 && sw.n_dims == 2 && sw.dims[0].n == 8 && sw.dims[0].ordered);
        int order[256], again[256];
        double tpe = search(&sw, 20, 4, order);
        search(&sw, 20, 4, again);
        CHECK_MSG(!memcmp(order, again, sizeof(int) * 20), "seed %d: other proposals the second time", seed);
        /* Random at the same budget: the sampler's own startup draws. */
        unsigned char taken[256] = {0};
        int rnd[256];
        double best_random = -INFINITY;
        for (int b = 0, n = 0; n < 20; b++) {
            int got = sample_propose(&sw, rnd, NULL, 0, taken, 4, b, rnd + n);
            for (int k = n; k < n + got; k++) {
                taken[rnd[k]] = 1;
                double v = objective(&sw, rnd[k]);
                if (v > best_random) best_random = v;
            }
            n += got;
        }
        sum_tpe += tpe;
        sum_random += best_random;
        sweep_free(&sw);
    }
    printf("best of 20 trials, mean over 10 seeds: tpe %.4f, random %.4f (optimum 0.7000)\n", sum_tpe / 10,
           sum_random / 10);
    CHECK(sum_tpe >= sum_random);
}

static char *board(const char *dir) { return tr_board(dir, tmp); }

/* plan's listing of a tpe sweep, its first 3 batches (at random), is what
 * the run (test_runs' folder tpe1) proposed first, in order: the
 * journal's first 12 trial records. */
static void plan_is_journal(const char *sweep)
{
    char journal[320], want[16 * 20] = "", got[16 * 20] = "";
    snprintf(journal, sizeof journal, "%s/tpe1/journal.jsonl", tmp);
    CHECK(tp_run("plan '%s'", sweep) == 0);
    for (const char *p = strstr(out_text, "\nindex"); p && (p = strchr(p + 1, '\n')) && p[1] == ' ';)
        strcat(strncat(want, p + 8, 16), "\n"); /* "\n%5d  " then the id */
    char *j = tp_read_file(journal, NULL);
    CHECK_MSG(j != NULL, "cannot read %s", journal);
    int n = 0;
    for (const char *p = j; p && n < 12 && (p = strstr(p, "\"kind\":\"trial\"")); p++, n++)
        strcat(strncat(got, strstr(p, "\"trial\":\"") + 9, 16), "\n");
    free(j);
    CHECK_MSG(tp_count(want, "\n") == 12 && !strcmp(want, got), "plan lists:\n%sthe run proposed:\n%s", want, got);
}

/* 24 trials; a budget of 14 in batches of 4. */
static const char *const TPE_SWEEP =
    "data:\n  synth: {proteins: 150, seed: 3}\n  window: 9\n  folds: 3\n"
    "model:\n  depth: 1\n  filters: [4, 8, 16]\n  kernel: [3, 5]\n  dense: [0, 16]\n"
    "training:\n  epochs: 3\n  batch_size: 16\n  learning_rate: [0.001, 0.0001]\n  seed: 5\n"
    "search:\n  random: 14\n  sampler: tpe\n  batch: 4\n";

/* Every folder ends with 14 trials x 3 folds: a resume trains no fold twice. */
static void test_runs(void)
{
    char sweep[320], log[320];
    snprintf(sweep, sizeof sweep, "%s/tpe.yaml", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    tp_write_text(sweep, TPE_SWEEP);
    char *plan[] = {"foldsweep", "plan", sweep, NULL};
    CHECK(tp_run_argv(plan, log) == 0);
    CHECK(tp_count_in_file(log, "trials: 14 proposed by tpe in batches of 4 from 24 candidates") == 1);
    /* SIGKILL in the middle (after the first batch), then resume. */
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "tpe", .board = board, .threads = 2,
                         .kill_folds = 16, .ranks = 2, .folds = 42};
    char *ref = tr_same_everywhere(&same);
    CHECK(tp_count(ref, "\n") == 15); /* the header and the 14 trials of the budget */
    free(ref);
    plan_is_journal(sweep);
    /* The run's first line counts the budget, not the pool ("24 trials"). */
    CHECK(tp_run("run '%s' --out '%s/tpe-kill' --threads 1", sweep, tmp) == 0);
    CHECK_MSG(strstr(out_text, "foldsweep: 14 trials (tpe: proposed 4 at a time from 24 candidates) x 3 folds, "
                               "0 folds to train now (42 already done)") != NULL, "%s", out_text);
}

/* tpe with a pruner: the pruner orders trials as they were proposed; a
 * pruned trial finishes its batch (the budget is spent in full). */
static void test_with_pruner(void)
{
    char sweep[320], text[1200];
    snprintf(sweep, sizeof sweep, "%s/tpe-pruned.yaml", tmp);
    snprintf(text, sizeof text, "%s  pruner: {kind: median, warmup: 1, min_trials: 2}\n", TPE_SWEEP);
    tp_write_text(sweep, text);
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "pruned", .board = board, .threads = 2, .ranks = 3};
    char *ra = tr_same_everywhere(&same);
    CHECK_MSG(tp_count(ra, "\n") == 15, "not the 14 trials of the budget:\n%s", ra);
    CHECK_MSG(tp_count(ra, ",pruned,") >= 1, "nothing pruned:\n%s", ra);
    free(ra);
}

/* The trial ids of a board (its second column), sorted, one a line. */
static char *trial_set(const char *board_text)
{
    char ids[64][20];
    int n = 0;
    for (const char *line = strchr(board_text, '\n'); line && line[1] && n < 64; line = strchr(line + 1, '\n')) {
        const char *c = strchr(line + 1, ',');
        if (!c) break;
        snprintf(ids[n++], sizeof ids[0], "%.16s", c + 1);
    }
    qsort(ids, (size_t)n, sizeof ids[0], (int (*)(const void *, const void *))strcmp);
    char *out = calloc((size_t)n * 20 + 1, 1);
    for (int i = 0; i < n; i++) strcat(strcat(out, ids[i]), "\n");
    return out;
}

/* tpe with run.objectives: trials split by non-dominated sorting of
 * (Q3, parameters) (run/sampler.c): other trials than by Q3 alone, the
 * same on 1 and 2 threads. */
static void test_with_objectives(void)
{
    char sweep[320], ref[320], text[1200];
    snprintf(sweep, sizeof sweep, "%s/tpe-objectives.yaml", tmp);
    snprintf(text, sizeof text, "%srun:\n  objectives: [q3, params]\n", TPE_SWEEP);
    tp_write_text(sweep, text);
    snprintf(ref, sizeof ref, "%s/tpe1", tmp); /* test_runs' run by Q3 alone */
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "objectives", .board = board, .threads = 2};
    char *ra = tr_same_everywhere(&same), *rr = board(ref);
    char *sa = trial_set(ra), *sr = trial_set(rr);
    CHECK(tp_count(sa, "\n") == 14 && tp_count(sr, "\n") == 14);
    CHECK_MSG(strcmp(sa, sr) != 0, "the objectives changed no proposal:\n%s", sa);
    free(ra), free(rr), free(sa), free(sr);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "sampler");
    (void)TR_SWEEP;
    test_proposals();
    test_runs();
    test_with_pruner();
    test_with_objectives();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
