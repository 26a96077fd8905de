/*
 * test_json_files.c: the JSON files and outputs of a real run, end to end
 * (issue #27 item 1): each one parses with the project's reader, and a
 * number that two of them hold is the same double in both, because every
 * writer spells numbers through the json module and none drops digits.
 *  1. export's model.json "mean" and "std" are the leaderboard's metric
 *     mean and std (model.json printed them with %.9g: 0.682679144 for
 *     0.68267914408497943);
 *  2. status --json's best_mean and best_std are the leaderboard's (it
 *     printed them with %.10g);
 *  3. evaluate --format json's q3, interval and SOV are the journal's
 *     evaluation record's (the journal keeps every digit; evaluate printed
 *     %.9g), and a value that was exact before is the same text (the
 *     identity threshold 0.95 is "0.95");
 *  4. profile.json, leaderboard.json, plan --json and prepare --json parse.
 */
#include <sys/stat.h>

#include "journal/journal.h"
#include "json/json.h"
#include "test_proc.h"

static char tmp[256];

static const char *SWEEP = "data:\n  synth: {proteins: 40, seed: 3}\n  window: 5\n  folds: 3\n"
                           "model:\n  depth: 1\n  filters: [4, 6]\n  kernel: 3\n  dense: 0\n"
                           "training:\n  epochs: 3\n  batch_size: 16\n  learning_rate: 0.01\n  seed: 2\n";

/* A parsed JSON text (from a file or out_text); the caller frees d. */
static const FsJson *parse(FsJsonDoc *d, const char *text, const char *what)
{
    char why[160] = "";
    memset(d, 0, sizeof *d);
    int bad = !text || json_parse(d, text, strlen(text), why, sizeof why) != 0;
    CHECK_MSG(!bad, "%s is not JSON: %s", what, text ? why : "not written");
    return bad ? NULL : d->root;
}

static const FsJson *parse_file(FsJsonDoc *d, const char *path)
{
    char *text = tp_read_file(path, NULL);
    const FsJson *r = parse(d, text, path);
    free(text);
    return r;
}

static double f64(const FsJson *o, const char *key)
{
    double v = -1e300;
    CHECK_MSG(json_f64(json_get(o, key), &v) == 0, "\"%s\" is not a number", key);
    return v;
}

/* The same double, to the bit, in two files. */
#define CHECK_SAME(a, b, what) CHECK_MSG((a) == (b), "%s: %.17g here, %.17g in the leaderboard or journal", what, a, b)

int main(void)
{
    if (access(FS_TEST_BIN, X_OK) != 0) TEST_SKIP("%s is not built", FS_TEST_BIN);
    tp_tmpdir(tmp, sizeof tmp, "json_files");
    char sweep[400], run[400], path[600], exp[400], test[400];
    snprintf(sweep, sizeof sweep, "%s/sweep.yaml", tmp);
    snprintf(run, sizeof run, "%s/run", tmp);
    snprintf(exp, sizeof exp, "%s/export", tmp);
    snprintf(test, sizeof test, "%s/test.rec", tmp);
    tp_write_text(sweep, SWEEP);
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, run) == 0);
    CHECK(tp_run("synth -o '%s' --proteins 12 --seed 77", test) == 0);

    /* The leaderboard's best trial: the reference for 1 and 2. */
    FsJsonDoc board, d;
    snprintf(path, sizeof path, "%s/leaderboard.json", run);
    const FsJson *best = json_at(parse_file(&board, path), 0), *metric = json_get(best, "metric");
    double mean = f64(metric, "mean"), std = f64(metric, "std");
    CHECK(mean > 0 && mean < 1 && std > 0);

    /* 1. */
    CHECK(tp_run("export '%s' --rank 1 -o '%s'", run, exp) == 0);
    snprintf(path, sizeof path, "%s/model.json", exp);
    const FsJson *m = parse_file(&d, path);
    CHECK_SAME(f64(m, "mean"), mean, "model.json mean");
    CHECK_SAME(f64(m, "std"), std, "model.json std");
    json_free(&d);

    /* 2. */
    CHECK(tp_run("status '%s' --json", run) == 0);
    const FsJson *st = parse(&d, out_text, "status --json");
    CHECK_SAME(f64(st, "best_mean"), mean, "status best_mean");
    CHECK_SAME(f64(st, "best_std"), std, "status best_std");
    /* The tied group: the leaderboard's other trials marked tied. */
    int tied = 0;
    for (int i = 1; json_at(board.root, i); i++) {
        const FsJson *t = json_get(json_at(board.root, i), "tied_with_best");
        tied += t && t->type == FS_JSON_TRUE;
    }
    long long st_tied = -1;
    CHECK(json_get(best, "tied_with_best") && json_get(best, "tied_with_best")->type == FS_JSON_TRUE);
    CHECK_MSG(json_i64(json_get(st, "tied_with_best"), &st_tied) == 0 && st_tied == tied,
              "status tied_with_best %lld, leaderboard %d", st_tied, tied);
    json_free(&d);

    /* 3. */
    CHECK(tp_run("evaluate '%s' '%s' --format json --allow-overlap", run, test) == 0);
    const FsJson *ev = parse(&d, out_text, "evaluate --format json");
    CHECK_MSG(strstr(out_text, "\"max\":0.95,") != NULL, "the identity threshold is not \"0.95\": %s", out_text);
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_read(&j, run, &err) == 0, "%s", err.msg);
    if (!err.set) {
        CHECK(j.n_evals == 1);
        const FsEvalRecord *r = &j.evals[j.n_evals - 1];
        const FsJson *ci = json_get(ev, "q3_ci95");
        double lo = -1, hi = -1;
        CHECK(json_f64(json_at(ci, 0), &lo) == 0 && json_f64(json_at(ci, 1), &hi) == 0);
        CHECK_SAME(f64(ev, "q3"), r->q3, "evaluate q3");
        CHECK_SAME(lo, r->q3_lo, "evaluate q3_ci95[0]");
        CHECK_SAME(hi, r->q3_hi, "evaluate q3_ci95[1]");
        CHECK_SAME(f64(json_get(ev, "sov"), "all"), r->sov, "evaluate sov.all");
        /* The CSV keeps every digit too (README: files for programs): its
         * q3 cell (the 5th) reads back as the journal's value. */
        CHECK(tp_run("evaluate '%s' '%s' --format csv --allow-overlap", run, test) == 0);
        const char *row = strchr(out_text, '\n');
        int field = 0;
        for (const char *c = row ? row + 1 : ""; *c && field < 4; c++) {
            if (*c == '"') c = strchr(c + 1, '"'); /* the quoted names */
            if (!c) break;
            if (*c == ',') field++, row = c + 1;
        }
        CHECK_MSG(field == 4 && row && strtod(row, NULL) == r->q3, "evaluate --format csv's q3 %.17g, the journal's %.17g",
                  row ? strtod(row, NULL) : -1.0, r->q3);
        journal_close(&j);
    }
    json_free(&d);

    /* 4. */
    snprintf(path, sizeof path, "%s/profile.json", run);
    CHECK(parse_file(&d, path) && json_get(d.root, "last_session"));
    json_free(&d);
    CHECK(tp_run("plan '%s' --json", sweep) == 0);
    CHECK(parse(&d, out_text, "plan --json") && d.root->type == FS_JSON_ARRAY && d.root->n == 2);
    json_free(&d);
    snprintf(path, sizeof path, "%s/prep.bin", tmp);
    CHECK(tp_run("prepare -o '%s' --json '%s'", path, test) == 0);
    CHECK(parse(&d, out_text, "prepare --json") && f64(d.root, "proteins") == 12);
    json_free(&d);
    json_free(&board);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
