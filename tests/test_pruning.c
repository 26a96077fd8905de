/*
 * Pruned sweeps through the binary: the leaderboard and every pruning
 * decision (trial, checkpoint, value, threshold) are identical on 1 and 2
 * threads, on 2 and 3 MPI ranks, and across a SIGKILL and resume; each rule
 * runs to a clean end; status counts the pruned trials; a sweep that
 * prunes most of its trials still finishes with exit 0.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>

#include "journal/journal.h"
#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

static const char *const SWEEP_BASE =
    "data:\n  synth: {proteins: 150, seed: 3}\n  window: 9\n  folds: 3\n"
    "model:\n  depth: 1\n  filters: [4, 8]\n  kernel: [3, 5]\n"
    "training:\n  epochs: 4\n  batch_size: 16\n  learning_rate: [0.001, 0.0001]\n  seed: 5\n";

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The leaderboard (without timing) and the decisions, as one text. */
static char *outcome(const char *dir)
{
    char *board = tr_board(dir, tmp);
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_read(&j, dir, &err) == 0, "%s", err.msg);
    char **lines = calloc((size_t)j.n_cuts + 1, sizeof *lines);
    size_t total = strlen(board) + 64;
    for (int i = 0; i < j.n_cuts; i++) {
        const FsCutRecord *c = &j.cuts[i];
        if (asprintf(&lines[i], "%s fold %d epoch %d %s %.9g %.9g\n", c->trial, c->fold, c->epoch, c->rule, c->value,
                     c->threshold) < 0)
            lines[i] = strdup("?");
        total += strlen(lines[i]);
    }
    qsort(lines, (size_t)j.n_cuts, sizeof *lines, cmp_str);
    char *s = calloc(total, 1);
    strcpy(s, board);
    strcat(s, "decisions:\n");
    for (int i = 0; i < j.n_cuts; i++) strcat(s, lines[i]), free(lines[i]);
    free(lines);
    free(board);
    journal_close(&j);
    return s;
}

static void write_sweep(const char *path, const char *pruner)
{
    char text[2048];
    snprintf(text, sizeof text, "%ssearch:\n  pruner: %s\n", SWEEP_BASE, pruner);
    tp_write_text(path, text);
}

static int run_threads(const char *sweep, const char *dir, const char *threads, const char *log)
{
    char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", (char *)dir, "--threads", (char *)threads, "--quiet",
                    NULL};
    return tp_run_argv(argv, log);
}

/* Rows of the outcome whose status column is `status`. */
static int count_status(const char *outcome_text, const char *status)
{
    int n = 0;
    for (const char *line = outcome_text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line;
        for (int comma = 0; comma < 3 && p; comma++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        if (p && !strncmp(p, status, strlen(status)) && p[strlen(status)] == ',') n++;
    }
    return n;
}

static void same(const char *ref, const char *dir, const char *what)
{
    char *got = outcome(dir);
    CHECK_MSG(strcmp(ref, got) == 0, "%s differs:\n%s\nvs reference:\n%s", what, got, ref);
    free(got);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "pruning");
    (void)TR_SWEEP; /* this test has its own sweep */
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* Open MPI's allocations, for the mpirun runs */
    char sweep[320], dir[320], log[320];
    snprintf(sweep, sizeof sweep, "%s/median.yaml", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    write_sweep(sweep, "{kind: median, warmup: 1, min_trials: 2}");

    char *plan[] = {"foldsweep", "plan", sweep, NULL};
    CHECK(tp_run_argv(plan, log) == 0);
    CHECK(tp_count_in_file(log, "pruner: median") == 1);
    /* The reference on one thread; the same leaderboard and decisions on 2
     * threads, on 2 and 3 MPI ranks (decisions travel as EPOCH and PRUNE
     * messages) and after a SIGKILL mid-run (6 folds recorded) and resume. */
    TrSame s = {sweep, tmp, "", outcome, 1, 6, NULL, NULL, 3, 0, 0, NULL, 0, NULL, 2};
    char *ref = tr_same_everywhere(&s);
    printf("reference:\n%s", ref);
    snprintf(dir, sizeof dir, "%s/1", tmp);
    CHECK_MSG(strstr(ref, ",pruned,") != NULL, "nothing was pruned:\n%s", ref);
    CHECK(strstr(ref, ",ok,") != NULL);
    { /* the report says why folds are missing, and they add up to the sweep's */
        char html[400];
        snprintf(html, sizeof html, "%s/report.html", dir);
        char *page = tp_read_file(html, NULL);
        const char *at = page ? strstr(page, "8 of 8 trials finished, ") : NULL;
        int recorded = 0, total = 0, cut = 0;
        CHECK_MSG(at && sscanf(at, "8 of 8 trials finished, %d of %d folds recorded and %d not trained: their trials "
                               "were pruned", &recorded, &total, &cut) == 3 && recorded + cut == total && total == 24,
                  "%.200s", at ? at : "(no banner)");
        free(page);
    }

    /* status counts them (in the killed and resumed folder). */
    snprintf(dir, sizeof dir, "%s/-kill", tmp);
    char *status[] = {"foldsweep", "status", dir, NULL};
    CHECK(tp_run_argv(status, log) == 0);
    CHECK_MSG(tp_count_in_file(log, " pruned)") == 1, "%s", tp_read_file(log, NULL));

    /* The other rules: a clean end, the same on 1 and 2 threads. */
    const char *rules[] = {"{kind: asha, min_epochs: 1, reduction: 2}", "{kind: folds, min_trials: 2, z: 0.5}"};
    for (int r = 0; r < 2; r++) {
        write_sweep(sweep, rules[r]);
        char a[340], b[340];
        snprintf(a, sizeof a, "%s/rule%d-1", tmp, r);
        snprintf(b, sizeof b, "%s/rule%d-2", tmp, r);
        CHECK(run_threads(sweep, b, "2", log) == 0);
        if (!t_repeats("the rule's 1-thread run")) continue;
        CHECK(run_threads(sweep, a, "1", log) == 0);
        char *ra = outcome(a);
        printf("%s:\n%s", rules[r], ra);
        same(ra, b, rules[r]);
        free(ra);
    }

    /* Most trials pruned (a median of one earlier trial): still exit 0,
     * every trial accounted for. */
    write_sweep(sweep, "{kind: median, warmup: 1, min_trials: 1}");
    snprintf(dir, sizeof dir, "%s/most", tmp);
    CHECK(run_threads(sweep, dir, "2", log) == 0);
    char *most = outcome(dir);
    int n_ok = count_status(most, "ok"), n_pruned = count_status(most, "pruned");
    printf("min_trials 1: %d ok, %d pruned\n", n_ok, n_pruned);
    CHECK(n_ok >= 1 && n_ok + n_pruned == 8);
    free(most);

    /* A pruner added to a finished run decides from here on: the kept
     * trials' folds stand (a median of one earlier trial cut most of them
     * here, and removed their models), the new ones are judged. */
    snprintf(dir, sizeof dir, "%s/added", tmp);
    tp_write_text(sweep, SWEEP_BASE);
    CHECK(run_threads(sweep, dir, "2", log) == 0);
    char *before = outcome(dir);
    CHECK(count_status(before, "ok") == 8);
    write_sweep(sweep, "{kind: median, warmup: 1, min_trials: 1}");
    CHECK(run_threads(sweep, dir, "2", log) == 0);
    same(before, dir, "a finished run after a pruner was added");
    char more[2048];
    snprintf(more, sizeof more, "%s", SWEEP_BASE);
    char *lr = strstr(more, "[0.001, 0.0001]");
    CHECK(lr != NULL);
    if (lr) {
        snprintf(lr, sizeof more - (size_t)(lr - more), "[0.001, 0.0001, 0.01]\n  seed: 5\nsearch:\n"
                 "  pruner: {kind: median, warmup: 1, min_trials: 1}\n");
        tp_write_text(sweep, more);
        CHECK(run_threads(sweep, dir, "2", log) == 0);
        char *after = outcome(dir);
        printf("extended with 4 trials under the pruner:\n%s", after);
        CHECK_MSG(count_status(after, "ok") + count_status(after, "pruned") == 12 &&
                      count_status(after, "ok") >= 8,
                  "%s", after);
        free(after);
    }
    free(before);

    free(ref);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
