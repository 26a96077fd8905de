/*
 * Ranges through the binary (issue #30, "done when"):
 *
 * 1. learning_rate: {low: 0.0001, high: 0.01, log: true} with search:
 *    {random: 8} trains 8 trials with 8 different learning rates in range
 *    (the leaderboard's param_training_learning_rate column), the same
 *    leaderboard on 1 and 2 threads.
 * 2. tpe over ranges (a float range in log space and an integer one with a
 *    step) gives the same trials and leaderboard on 1 and 2 threads, on 2
 *    MPI ranks (where mpirun exists), and after a SIGKILL and resume; a
 *    resumed run trains no fold twice.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

static const char *const RANDOM_SWEEP =
    "data:\n  synth: {proteins: 40, seed: 5}\n  window: 9\n  folds: 2\n"
    "model:\n  depth: 1\n  filters: 6\n  kernel: 5\n  dense: 0\n"
    "training:\n  epochs: 1\n  batch_size: 32\n  learning_rate: {low: 0.0001, high: 0.01, log: true}\n"
    "search: {random: 8}\n";

static const char *const TPE_SWEEP =
    "data:\n  synth: {proteins: 40, seed: 6}\n  window: 9\n  folds: 2\n"
    "model:\n  depth: 1\n  filters: {low: 4, high: 16, step: 4}\n  kernel: 3\n  dense: 0\n"
    "training:\n  epochs: 1\n  batch_size: 32\n  learning_rate: {low: 0.0001, high: 0.1, log: true}\n"
    "search: {random: 12, sampler: tpe, batch: 4, seed: 2}\n";

static char *board(const char *dir) { return tr_board(dir, tmp); }

/* The column named `name` of a CSV leaderboard, row r (from 1), into out. */
static int csv_field(const char *csv, const char *name, int r, char *out, size_t n)
{
    int col = 0;
    const char *p = csv;
    for (; *p && *p != '\n'; p++) {
        if (!strncmp(p, name, strlen(name)) && (p == csv || p[-1] == ',')) break;
        col += *p == ',';
    }
    for (int line = 0; line < r && p; line++) p = strchr(p, '\n'), p = p ? p + 1 : NULL;
    if (!p) return -1;
    for (int c = 0; c < col && p; c++) p = strchr(p, ','), p = p ? p + 1 : NULL;
    if (!p) return -1;
    size_t k = strcspn(p, ",\n");
    snprintf(out, n, "%.*s", (int)k, p);
    return 0;
}

static void done_when(void)
{
    char sweep[320];
    snprintf(sweep, sizeof sweep, "%s/lr.yaml", tmp);
    tp_write_text(sweep, RANDOM_SWEEP);
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "lr", .board = board, .threads = 2};
    char *ref = tr_same_everywhere(&same);
    CHECK_MSG(tp_count(ref, "\n") == 9, "not 8 trials:\n%s", ref);
    double seen[8];
    for (int r = 1; r <= 8; r++) {
        char text[64] = "";
        CHECK(csv_field(ref, "param_training_learning_rate", r, text, sizeof text) == 0);
        char *end;
        const double lr = strtod(text, &end);
        CHECK_MSG(text[0] && !*end && lr >= (double)1e-4f && lr <= (double)1e-2f, "row %d: learning rate '%s'", r, text);
        for (int k = 0; k < r - 1; k++) CHECK_MSG(seen[k] != lr, "rows %d and %d: both %s", k + 1, r, text);
        seen[r - 1] = lr;
    }
    free(ref);
}

/* A resumed run trains no fold twice: 12 trials x 2 folds in every folder. */
static void tpe_resume(void)
{
    char sweep[320];
    snprintf(sweep, sizeof sweep, "%s/tpe.yaml", tmp);
    tp_write_text(sweep, TPE_SWEEP);
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "tpe", .board = board, .threads = 2,
                         .kill_folds = 10, .ranks = 2, .folds = 24};
    char *ref = tr_same_everywhere(&same);
    CHECK_MSG(tp_count(ref, "\n") == 13, "not the 12 trials of the budget:\n%s", ref);
    free(ref);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "ranges_run");
    (void)TR_SWEEP;
    done_when();
    tpe_resume();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
