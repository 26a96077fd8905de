/*
 * A study that knows when to stop (search.stop: {after: N}, run/sampler.c):
 *
 * 1. The sweep: stop needs search.random and takes {after: N}; search.batch
 *    is allowed with it; both are in the canonical sweep.
 * 2. A random study of 16 trials in batches of 2 with after: 3 ends early
 *    (fewer than 16 trials trained, a multiple of the batch), the same on 1
 *    and 2 threads and on 3 MPI ranks (the same trials, the same
 *    leaderboard); its last `after` trials in proposal order did not beat
 *    the best by more than its standard error, which the test checks from
 *    the leaderboard's own numbers. status says so (`study_stopped`,
 *    `trials_not_trained`) and counts nothing left; the leaderboard and the
 *    report say why; running it again trains nothing more.
 * 3. after: 100 (never reached) trains the whole budget.
 */
#include "json/json.h"
#include "sweep/sweep.h"
#include "test_proc.h"
#include "test_runs.h"
#include "test_sweep_expect.h"

static const char *SWEEP = "data:\n  synth: {proteins: 60, seed: 2}\n  window: 9\n  folds: 3\n"
                           "model:\n  depth: [1, 2]\n  filters: [4, 6, 8, 10, 12, 14]\n  kernel: [3, 5]\n  dense: 8\n"
                           "training:\n  epochs: 2\n  batch_size: 16\n"
                           "search:\n  random: 16\n  seed: 3\n  batch: 2\n  stop: {after: %d}\n";

static void sweeps(void)
{
    char text[800], why[1000];
    FsSweep sw;
    snprintf(text, sizeof text, SWEEP, 3);
    CHECK_MSG(sweep_text(&sw, text, why, sizeof why) == 0, "%s", why);
    CHECK(sw.stop_after == 3 && sw.batch == 2);
    CHECK_CONTAINS(sw.canonical, "  batch: 2\n  stop: {after: 3}\n");
    sweep_free(&sw);
    CHECK(sweep_text(&sw, "data:\n  synth: {proteins: 30, seed: 1}\nsearch:\n  pruner: median\n  stop: {after: 2}\n", why,
               sizeof why) != 0);
    CHECK_CONTAINS(why, "search.stop: needs search.random");
    sweep_free(&sw);
    snprintf(text, sizeof text, SWEEP, 0);
    CHECK(sweep_text(&sw, text, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "search.stop: expected {after: N}");
    sweep_free(&sw);
}

/* Trial ids in rank order with their fold records' count, from the
 * leaderboard's CSV (timing columns aside); malloc'd. */
static char *board(const char *dir)
{
    CHECK(tp_run("leaderboard '%s' --format csv", dir) == 0);
    char *out = malloc(strlen(out_text) + 2);
    size_t at = 0;
    for (const char *l = out_text; *l;) {
        const char *e = strchr(l, '\n');
        if (!e) break;
        int commas = 0;
        for (const char *c = l; c < e && commas < 11; c++) {
            commas += *c == ',';
            out[at++] = *c;
        }
        out[at++] = '\n';
        l = e + 1;
    }
    out[at] = 0;
    return out;
}

/* The trials on a board. */
static int rows(const char *b) { return tp_count(b, "\n") - 1; }

static void study(const char *tmp)
{
    char sweep[400], one[400], two[400], text[800], log[500];
    snprintf(sweep, sizeof sweep, "%s/stop.yaml", tmp);
    snprintf(text, sizeof text, SWEEP, 3);
    tp_write_text(sweep, text);
    /* 1 and 2 threads, 3 MPI ranks: the same trials, the same leaderboard. */
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "stop", .board = board, .threads = 2, .ranks = 3};
    char *b1 = tr_same_everywhere(&same);
    snprintf(one, sizeof one, "%s/stop1", tmp);
    snprintf(log, sizeof log, "%s.log", one);
    CHECK(tp_count_in_file(log, "study: stopped by search.stop after ") >= 1);
    const int trained = rows(b1);
    free(b1);
    CHECK_MSG(trained >= 4 && trained < 16 && trained % 2 == 0, "%d trials trained of 16", trained);

    /* The rule from the leaderboard's numbers: in trial order (the sampled
     * order, the JSON's index), the last 3 judged did not beat the best
     * before them by more than its standard error. */
    CHECK(tp_run("leaderboard '%s' --format json", one) == 0);
    FsJsonDoc d;
    char why[200];
    CHECK_MSG(json_parse(&d, out_text, strlen(out_text), why, sizeof why) == 0, "%s", why);
    double mean[16], half[16];
    int n = d.root->n;
    for (int i = 0; i < n && i < 16; i++) {
        const FsJson *row = json_at(d.root, i);
        long long idx = -1;
        double lo, hi;
        CHECK(json_i64(json_get(row, "index"), &idx) == 0 && idx >= 0 && idx < trained);
        if (idx < 0 || idx >= 16) continue;
        CHECK(json_f64(json_get(json_get(row, "metric"), "mean"), &mean[idx]) == 0);
        const FsJson *ci = json_get(row, "q3_ci95");
        CHECK(json_f64(json_at(ci, 0), &lo) == 0 && json_f64(json_at(ci, 1), &hi) == 0);
        half[idx] = 0.5 * (hi - lo) / 4.302652729749464; /* t(0.975, 2): the interval's SE */
    }
    json_free(&d);
    double best = -1.0, se = 0.0;
    int streak = 0, stop_at = -1;
    for (int t = 0; t < trained && stop_at < 0; t++) {
        if (mean[t] > best + se) best = mean[t], se = half[t], streak = 0;
        else if (++streak >= 3) stop_at = t + 1;
        else if (mean[t] > best) best = mean[t], se = half[t];
    }
    CHECK_MSG(stop_at > 0 && stop_at <= trained && stop_at > trained - 2, "the rule stops after %d of %d", stop_at,
              trained);

    /* status, the leaderboard, the report; a rerun trains nothing. */
    CHECK(tp_run("status '%s' --json", one) == 0);
    CHECK_CONTAINS(out_text, "\"study_stopped\":true");
    CHECK_CONTAINS(out_text, "\"trials_left\":0");
    char want[64];
    snprintf(want, sizeof want, "\"trials_not_trained\":%d", 16 - trained);
    CHECK_CONTAINS(out_text, want);
    CHECK(tp_run("status '%s'", one) == 0);
    CHECK_CONTAINS(out_text, "state        finished");
    CHECK(tp_run("leaderboard '%s'", one) == 0);
    CHECK_CONTAINS(out_text, "The study stopped by search.stop after ");
    char path[500];
    snprintf(path, sizeof path, "%s/report.html", one);
    CHECK(tp_count_in_file(path, "The study stopped by search.stop after ") == 1);
    CHECK(tp_count_in_file(path, "data-state=\"complete\"") == 1);
    snprintf(path, sizeof path, "%s/journal.jsonl", one);
    const int folds = tp_count_in_file(path, "\"kind\":\"fold\"");
    CHECK(folds == 3 * trained);
    CHECK(tp_run("run '%s' -o '%s' --quiet", sweep, one) == 0);
    CHECK(tp_count_in_file(path, "\"kind\":\"fold\"") == folds);

    /* Never reached: the whole budget. */
    snprintf(text, sizeof text, SWEEP, 100);
    tp_write_text(sweep, text);
    snprintf(two, sizeof two, "%s/full", tmp);
    CHECK(tp_run("run '%s' -o '%s' --threads 2 --quiet", sweep, two) == 0);
    char *b2 = board(two);
    CHECK(rows(b2) == 16);
    free(b2);
}

int main(void)
{
    (void)TR_SWEEP;
    sweeps();
    char tmp[256];
    tp_tmpdir(tmp, sizeof tmp, "study_stop");
    study(tmp);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
