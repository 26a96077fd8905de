/*
 * Extending a run (issue #30 item 2; docs/sweep-format.md, "Extending a
 * run"), through the binary:
 *
 * 1. A grid given a new filter value trains exactly the new (trial, fold)
 *    jobs (the journal's fold records), says "extends DIR: 2 trials kept,
 *    2 new", and its leaderboard, extended on 1 or 2 threads or killed and
 *    resumed (4), equals a fresh run of the final sweep; the CSV and JSON
 *    say which sweep version each trial came from. A second extension adds
 *    a layer-list alternative.
 * 2. A change that alters the kept trials (epochs, data.folds, search.seed)
 *    is refused naming its key, and leaves the folder's sweep.yaml as it
 *    was; --restart starts over as before.
 * 3. A larger search.random keeps the first trials (the sweep module's
 *    walk, with and without ranges) and the run trains only the new ones.
 * 4. An extension killed after its first new fold model and resumed
 *    finishes with the same leaderboard and no fold trained twice.
 * 5. tpe: an extended study (a larger budget) is the same on 1 and 2
 *    threads and after a kill and resume; its model starts from the kept
 *    trials.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "sweep/sweep.h"
#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

/* A small sweep: 40 proteins, 2 folds, 1 epoch; `model` and `extra` fill it in. */
static void write_sweep(const char *path, const char *model, int epochs, int folds, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "data:\n  synth: {proteins: 40, seed: 5}\n  window: 7\n  folds: %d\n"
             "model:\n%s"
             "training:\n  epochs: %d\n  batch_size: 32\n  seed: 3\n%s",
             folds, model, epochs, extra);
    tp_write_text(path, text);
}

/* The journal's sweep versions: trials before any sweep record (an older
 * journal) are version 1, a record with the same text is no new version;
 * checked against the latest sweep, an earlier version's trial record may
 * name another index, the latest's may not. */
static void journal_versions(void)
{
    static const char *const ids[] = {"000000000000000c", "000000000000000a", "000000000000000b"};
    const uint64_t val[2] = {10, 10};
    char dir[320];
    for (int bad = 0; bad < 2; bad++) {
        snprintf(dir, sizeof dir, "%s/journal%d", tmp, bad);
        FsJournal j;
        FsErr err = {0};
        CHECK(journal_open(&j, dir, &err) == 0);
        CHECK(journal_append_trial(&j, ids[1], 0, 10, "{}", &err) == 0);
        CHECK(journal_append_sweep(&j, "v: 1\n", val, 2, &err) == 0);
        CHECK(journal_append_trial(&j, ids[2], 1, 10, "{}", &err) == 0);
        CHECK(journal_append_sweep(&j, "v: 2\n", val, 2, &err) == 0);
        CHECK(journal_append_trial(&j, ids[0], bad ? 2 : 0, 10, "{}", &err) == 0);
        journal_close(&j);
        CHECK(journal_read(&j, dir, &err) == 0);
        CHECK(j.n_sweep_versions == 2 && j.n_trials == 3);
        for (int i = 0; i < 3; i++) CHECK(journal_find_trial(&j, ids[i])->version == (i ? 1 : 2));
        FsJournalSweep js = {.n_trials = 3, .ids = ids, .canonical = "v: 2\n"};
        CHECK(journal_set_sweep(&j, &js, &err) == 0);
        CHECK_MSG(j.bad_lines == bad, "%ld damaged lines (index %s)", j.bad_lines, bad ? "wrong" : "right");
        journal_close(&j);
    }
}

static const char *const GRID_A = "  depth: 1\n  filters: [4]\n  kernel: [3, 5]\n  dense: 0\n";
static const char *const GRID_B = "  depth: 1\n  filters: [4, 8]\n  kernel: [3, 5]\n  dense: 0\n";

static char *board(const char *dir) { return tr_board(dir, tmp); }

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmp, name); }

/* The run's log says "extends DIR: <counts>" (the trials kept and new). */
static void says_extends(const char *log, const char *dir, const char *counts)
{
    char *text = tp_read_file(log, NULL), want[400];
    snprintf(want, sizeof want, "extends %s: %s\n", dir, counts);
    CHECK_MSG(text && strstr(text, want), "no '%s' in:\n%s", want, text ? text : "");
    free(text);
}

/* The extension killed after its second new model file, before that
 * fold's record (the first one's is in the journal). */
static void grid_killed(const char *dir)
{
    CHECK_MSG(tr_folds_in(dir) == 5, "%d fold records after the kill", tr_folds_in(dir));
}

/* GRID_A (2 trials x 2 folds) extended to GRID_B on 1 and 2 threads, and
 * killed and resumed: 8 fold records in each (the 4 new folds only were to
 * train) and the same leaderboard, a fresh run's of GRID_B. */
static void grid_extend(void)
{
    char a[320], b[320], dir[320], fresh[320], log[340];
    path_in(a, sizeof a, "a.yaml");
    path_in(b, sizeof b, "b.yaml");
    path_in(fresh, sizeof fresh, "grid-fresh");
    write_sweep(a, GRID_A, 1, 2, "");
    write_sweep(b, GRID_B, 1, 2, "");
    const TrSame same = {.sweep = b, .scratch = tmp, .tag = "grid", .board = board, .threads = 2,
                         .kill_env = "FOLDSWEEP_TEST_KILL_AFTER_MODEL", .kill_at = "2", .folds = 8,
                         .extends = a, .extends_folds = 4, .killed = grid_killed};
    char *ref = tr_same_everywhere(&same);
    path_in(dir, sizeof dir, "grid1");
    snprintf(log, sizeof log, "%s.log", dir);
    says_extends(log, dir, "2 trials kept, 2 new");
    path_in(log, sizeof log, "grid.log");
    CHECK(tr_run(b, fresh, "2", log) == 0);
    char *got = board(fresh);
    CHECK_MSG(!strcmp(ref, got), "extended:\n%s\nvs a fresh run of the final sweep:\n%s", ref, got);
    free(ref);
    free(got);
    /* Which version each trial came from: the kept filters: 4, the new 8. */
    char out[400], *argv[] = {"foldsweep", "leaderboard", dir, "--format", "csv", NULL};
    path_in(out, sizeof out, "grid.csv");
    CHECK(tp_run_argv(argv, out) == 0);
    char *csv = tp_read_file(out, NULL);
    CHECK(csv && strstr(csv, ",sweep_version\n"));
    CHECK(csv && tp_count(csv, "\"\"filters\"\":4,") == 2 && tp_count(csv, "\"\"filters\"\":8,") == 2);
    for (char *line = csv ? strchr(csv, '\n') : NULL; line && line[1]; line = strchr(line + 1, '\n')) {
        const char *end = strchr(line + 1, '\n'), *v = end ? end - 1 : NULL;
        const int four = strstr(line, "\"\"filters\"\":4,") && strstr(line, "\"\"filters\"\":4,") < end;
        CHECK_MSG(v && *v == (four ? '1' : '2'), "sweep_version of %.40s", line + 1);
    }
    free(csv);
    char *jargv[] = {"foldsweep", "leaderboard", dir, "--format", "json", NULL};
    CHECK(tp_run_argv(jargv, out) == 0);
    char *json = tp_read_file(out, NULL);
    CHECK(json && tp_count(json, "\"sweep_version\":1,") == 2 && tp_count(json, "\"sweep_version\":2,") == 2);
    free(json);
    char *sargv[] = {"foldsweep", "status", dir, NULL};
    CHECK(tp_run_argv(sargv, out) == 0);
    CHECK(tp_count_in_file(out, ", extended (sweep version 2)\n") == 1);
    /* A fresh run has one version: no sweep_version column. */
    char *fargv[] = {"foldsweep", "leaderboard", fresh, "--format", "csv", NULL};
    CHECK(tp_run_argv(fargv, out) == 0);
    csv = tp_read_file(out, NULL);
    CHECK(csv && !strstr(csv, "sweep_version"));
    free(csv);
}

/* A layer list given another alternative: the first alternative's trial stays. */
static void layers_extend(void)
{
    char a[320], b[320], dir[320], log[320];
    static const char *const one = "  layers:\n    - - conv1d: {filters: 4, width: 3}\n";
    static const char *const two = "  layers:\n    - - conv1d: {filters: 4, width: 3}\n"
                                   "    - - conv1d: {filters: 6, width: 5}\n      - dense: {units: 8}\n";
    path_in(a, sizeof a, "la.yaml");
    path_in(b, sizeof b, "lb.yaml");
    path_in(log, sizeof log, "layers.log");
    path_in(dir, sizeof dir, "layers");
    write_sweep(a, one, 1, 2, "");
    write_sweep(b, two, 1, 2, "");
    CHECK(tr_run(a, dir, "1", log) == 0);
    CHECK(tr_run(b, dir, "1", log) == 0);
    says_extends(log, dir, "1 trial kept, 1 new");
    CHECK(tr_folds_in(dir) == 4);
}

/* Runs `sweep` on dir, which must be refused naming key; sweep.yaml stays. */
static void refused(const char *dir, const char *sweep, const char *key)
{
    char log[320], yaml[400];
    path_in(log, sizeof log, "refused.log");
    snprintf(yaml, sizeof yaml, "%s/sweep.yaml", dir);
    char *before = tp_read_file(yaml, NULL);
    const int folds = tr_folds_in(dir);
    CHECK(tr_run(sweep, dir, "1", log) == FS_EXIT_ERROR);
    char *text = tp_read_file(log, NULL), *after = tp_read_file(yaml, NULL);
    CHECK_MSG(text && strstr(text, key) && strstr(text, "--restart"), "%s not named:\n%s", key, text ? text : "");
    CHECK_MSG(before && after && !strcmp(before, after), "%s: sweep.yaml changed by a refused run", key);
    CHECK(tr_folds_in(dir) == folds);
    free(text);
    free(before);
    free(after);
}

static void refusals(void)
{
    char dir[320], s[320], log[320];
    path_in(dir, sizeof dir, "grid1");
    path_in(s, sizeof s, "changed.yaml");
    write_sweep(s, GRID_B, 2, 2, "");
    refused(dir, s, "training.epochs: 1 -> 2");
    write_sweep(s, GRID_B, 1, 3, "");
    refused(dir, s, "data.folds: 2 -> 3");
    write_sweep(s, GRID_B, 1, 2, "run:\n  metric: loss\n");
    refused(dir, s, "run.metric: q3 -> loss");
    /* A removed value drops trained trials. */
    write_sweep(s, "  depth: 1\n  filters: [8]\n  kernel: [3, 5]\n  dense: 0\n", 1, 2, "");
    refused(dir, s, "model.filters: [4, 8] -> 8");
    /* --restart starts over, as before. */
    path_in(log, sizeof log, "restart.log");
    write_sweep(s, GRID_B, 2, 2, "");
    char *argv[] = {"foldsweep", "run", s, "--out", dir, "--threads", "1", "--restart", "--quiet", NULL};
    CHECK(tp_run_argv(argv, log) == 0);
    CHECK(tr_folds_in(dir) == 8);
}

/* The first trials of random: 3 are those of random: 6 (a grid walk, and
 * draws over a range). */
static void random_prefix(void)
{
    static const char *const grids[] = {
        "data: {synth: {proteins: 40, seed: 5}, window: 7, folds: 2}\nmodel: {depth: 1, filters: [2, 4, 6, 8], "
        "kernel: [3, 5, 7], dense: [0, 8]}\ntraining: {epochs: 1}\nsearch: {random: %d, seed: 7}\n",
        "data: {synth: {proteins: 40, seed: 5}, window: 7, folds: 2}\nmodel: {depth: 1, filters: [2, 4], kernel: 3}\n"
        "training: {epochs: 1, learning_rate: {low: 0.0001, high: 0.01, log: true}}\nsearch: {random: %d, seed: 7}\n"};
    for (int g = 0; g < 2; g++) {
        char text[600];
        FsSweep small, big;
        FsErrList errs = {0};
        snprintf(text, sizeof text, grids[g], 3);
        CHECK(sweep_load_string(&small, text, "small.yaml", &errs) == 0);
        snprintf(text, sizeof text, grids[g], 6);
        CHECK(sweep_load_string(&big, text, "big.yaml", &errs) == 0);
        errlist_free(&errs);
        CHECK(small.n_trials == 3 && big.n_trials == 6);
        for (int t = 0; t < 3 && t < small.n_trials && big.n_trials == 6; t++)
            CHECK_MSG(!strcmp(small.trials[t].config, big.trials[t].config), "sweep %d trial %d", g, t);
        /* and the run trains only the new ones */
        if (g == 0) {
            char a[320], b[320], dir[320], log[320];
            path_in(a, sizeof a, "r3.yaml");
            path_in(b, sizeof b, "r6.yaml");
            path_in(dir, sizeof dir, "random");
            path_in(log, sizeof log, "random.log");
            snprintf(text, sizeof text, grids[g], 3);
            tp_write_text(a, text);
            snprintf(text, sizeof text, grids[g], 6);
            tp_write_text(b, text);
            CHECK(tr_run(a, dir, "1", log) == 0);
            CHECK(tr_run(b, dir, "2", log) == 0);
            says_extends(log, dir, "3 trials kept, 3 new");
            CHECK(tr_folds_in(dir) == 12);
        }
        sweep_free(&small);
        sweep_free(&big);
    }
}

/* Killed after its second new model file, before that fold's record. */
static void tpe_killed(const char *dir) { CHECK(tr_folds_in(dir) == 21); }

/* tpe: a budget of 10 over 24 grid points extended to 16 over 30 (a new
 * filter value: the grid's order changes), on 1 and 2 threads, and killed
 * and resumed. The 10 kept trials are the estimator's first history (10:
 * FS_SAMPLE_STARTUP, so the first new batch is already tpe's). */
static void tpe_extend(void)
{
    char a[320], b[320], dir[320], log[340];
    path_in(a, sizeof a, "tpe10.yaml");
    path_in(b, sizeof b, "tpe16.yaml");
    write_sweep(a, "  depth: 1\n  filters: [2, 4, 6, 8]\n  kernel: [3, 5, 7]\n  dense: [0, 8]\n", 1, 2,
                "search: {random: 10, sampler: tpe, batch: 5, seed: 2}\n");
    write_sweep(b, "  depth: 1\n  filters: [2, 3, 4, 6, 8]\n  kernel: [3, 5, 7]\n  dense: [0, 8]\n", 1, 2,
                "search: {random: 16, sampler: tpe, batch: 5, seed: 2}\n");
    /* 16 trials x 2 folds in every folder: no fold trained twice. */
    const TrSame same = {.sweep = b, .scratch = tmp, .tag = "tpe", .board = board, .threads = 2,
                         .kill_env = "FOLDSWEEP_TEST_KILL_AFTER_MODEL", .kill_at = "2", .folds = 32,
                         .extends = a, .extends_folds = 20, .killed = tpe_killed};
    free(tr_same_everywhere(&same));
    path_in(dir, sizeof dir, "tpe1");
    snprintf(log, sizeof log, "%s.log", dir);
    says_extends(log, dir, "10 trials kept, 6 new");
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "extend");
    (void)TR_SWEEP;
    journal_versions();
    grid_extend();
    layers_extend();
    refusals();
    random_prefix();
    tpe_extend();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
