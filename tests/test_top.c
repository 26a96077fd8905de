/*
 * test_top: --top K, the fold ensembles of the K best trials as one
 * (predict and evaluate; docs/models.md), end to end on small runs:
 *  1. the trials are the leaderboard's first K (ok), and the ensemble's
 *     probabilities are byte for byte those of the same fold files given
 *     by hand (--mixed) in that order; they differ from the best trial's;
 *  2. over two run folders on the same data, the K best of both by their
 *     validation metric, and the look at test data is recorded in each
 *     run folder a chosen trial came from (as "top K");
 *  3. refusals: run folders on other data, ranked by another metric,
 *     fewer trials than K, a model file, --top beside --rank, --top 0;
 *  4. export --top K: a folder of the K trials' files (named by trial),
 *     whose model.json says "top"; predict from it equals --top on the
 *     runs, byte for byte, and evaluate from it records its look in the
 *     run folders; a model.json whose "top" and "trials" disagree is
 *     refused.
 */
#include <math.h>
#include <sys/stat.h>

#include "test_proc.h"

static char tmp[256], log_path[320];

typedef struct {
    int n;
    char id[16][17];
    double mean[16];
} Board;

/* The ok rows of a run folder's leaderboard, in rank order. */
static void board_read(const char *dir, Board *b)
{
    memset(b, 0, sizeof *b);
    CHECK(tp_run("leaderboard '%s' --format csv", dir) == 0);
    for (const char *p = strchr(out_text, '\n'); p && p[1] && b->n < 16; p = strchr(p + 1, '\n')) {
        char id[17] = "", status[16] = "", metric[8] = "";
        int rank, index;
        double mean;
        if (sscanf(p + 1, "%d,%16[0-9a-f],%d,%15[a-z],%7[a-z0-9],%lf", &rank, id, &index, status, metric, &mean) == 6 &&
            !strcmp(status, "ok")) {
            snprintf(b->id[b->n], 17, "%s", id);
            b->mean[b->n++] = mean;
        }
    }
    CHECK_MSG(b->n >= 2, "%s: %d ok trials", dir, b->n);
}

/* The run, which must succeed. */
static void run(const char *sweep, const char *dir)
{
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, dir) == 0);
}

/* "DIR/models/ID/fold0.safetensors" ... for every fold of trial id. */
static void fold_files(const char *dir, const char *id, char *out, size_t n)
{
    for (int k = 0; k < 3; k++) {
        size_t at = strlen(out);
        snprintf(out + at, n - at, " '%s/models/%s/fold%d.safetensors'", dir, id, k);
    }
}

static int count(const char *dir, const char *what)
{
    char j[400];
    snprintf(j, sizeof j, "%s/journal.jsonl", dir);
    return tp_count_in_file(j, what);
}

/* 1: one run folder. */
static void test_one(const char *a, const Board *ba, const char *test)
{
    CHECK(tp_run("predict '%s' --top 2 '%s' --format csv", a, test) == 0);
    char *top = strdup(out_text);
    char files[3000] = "";
    fold_files(a, ba->id[0], files, sizeof files);
    fold_files(a, ba->id[1], files, sizeof files);
    CHECK(tp_run("predict %s '%s' --format csv --mixed", files, test) == 0);
    CHECK_MSG(!strcmp(top, out_text), "--top 2 is not the mean of the two best trials' fold models");
    CHECK(tp_run("predict '%s' --rank 1 '%s' --format csv", a, test) == 0);
    CHECK_MSG(strcmp(top, out_text) != 0, "--top 2 predicts as the best trial alone");
    free(top);
    CHECK(tp_run("evaluate '%s' --top 2 '%s' --format json", a, test) == 0);
    char want[200];
    snprintf(want, sizeof want, "top 2 trials by validation q3 (trials %s, %s), ensemble of 6 models", ba->id[0],
             ba->id[1]);
    CHECK_CONTAINS(out_text, want);
    CHECK(count(a, "\"models\":\"top 2\"") == 1);
    CHECK(tp_run("status '%s'", a) == 0);
    CHECK_CONTAINS(out_text, "looked at 1 time");
}

/* 2: two run folders on the same data; the expected picks by hand. */
static void test_two(const char *a, const Board *ba, const char *b, const Board *bb, const char *test)
{
    int ia = 0, ib = 0, from_a = 0, from_b = 0;
    char want[400] = "";
    for (int i = 0; i < 3; i++) {
        int take_a = ib >= bb->n || (ia < ba->n && ba->mean[ia] >= bb->mean[ib]);
        const char *id = take_a ? ba->id[ia++] : bb->id[ib++];
        take_a ? from_a++ : from_b++;
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "(trials ", id);
    }
    int before_a = count(a, "\"kind\":\"evaluation\""), before_b = count(b, "\"kind\":\"evaluation\"");
    CHECK(tp_run("evaluate '%s' '%s' --top 3 '%s'", a, b, test) == 0);
    CHECK_CONTAINS(out_text, want);
    CHECK_CONTAINS(out_text, from_a && from_b ? ", runs " : ", run ");
    CHECK(count(a, "\"kind\":\"evaluation\"") == before_a + (from_a > 0));
    CHECK(count(b, "\"kind\":\"evaluation\"") == before_b + (from_b > 0));
    printf("top 3 of both: %d from a, %d from b\n", from_a, from_b);
}

/* A --top look whose second run folder cannot take its record (a damaged
 * journal line, which journal_open refuses and the readers skip) is
 * recorded in neither folder: the first is not left with a look that the
 * rerun after `foldsweep repair` would record again. */
static void test_unrecordable(const char *a, const char *b, const char *test)
{
    char b2[400], cmd[1300];
    snprintf(b2, sizeof b2, "%s/b-damaged", tmp);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s' && sed -i '2i this line is damaged' '%s/journal.jsonl'", b, b2, b2);
    CHECK(system(cmd) == 0);
    const int before_a = count(a, "\"kind\":\"evaluation\""), before_b = count(b2, "\"kind\":\"evaluation\"");
    CHECK(tp_run("evaluate '%s' '%s' --top 3 '%s'", a, b2, test) == 1);
    CHECK_CONTAINS(err_text, "b-damaged/journal.jsonl");
    CHECK_MSG(count(a, "\"kind\":\"evaluation\"") == before_a,
              "a look that could not be recorded in every folder was recorded in the first");
    CHECK(count(b2, "\"kind\":\"evaluation\"") == before_b);
}

static void test_refusals(const char *a, const Board *ba, const char *c, const char *d, const char *test)
{
    CHECK(tp_run("evaluate '%s' '%s' --top 2 '%s'", a, c, test) == 1);
    CHECK_CONTAINS(err_text, "trained on other data than");
    CHECK(tp_run("predict '%s' '%s' --top 2 '%s'", a, d, test) == 1);
    CHECK_CONTAINS(err_text, "ranks by q3");
    CHECK_CONTAINS(err_text, "by loss: --top compares trials on one metric");
    CHECK(tp_run("evaluate '%s' --top 5 '%s'", a, test) == 1);
    CHECK_CONTAINS(err_text, "--top 5:");
    CHECK_CONTAINS(err_text, "hold only 4 trials");
    char file[400];
    snprintf(file, sizeof file, "%s/models/%s/fold0.safetensors", a, ba->id[0]);
    CHECK(tp_run("predict '%s' --top 1 '%s'", file, test) == 1);
    CHECK_CONTAINS(err_text, "--top ranks the trials of run folders");
    CHECK(tp_run("evaluate '%s' --top 2 --rank 1 '%s'", a, test) == 2);
    CHECK_CONTAINS(err_text, "give --top or --rank, not both");
    CHECK(tp_run("predict '%s' --top 0 '%s'", a, test) == 2);
    CHECK(tp_run("evaluate '%s' --top 2 --mixed '%s'", a, test) == 2);
}

static void test_export(const char *a, const char *b, const char *test)
{
    char ex[400], json[460];
    snprintf(ex, sizeof ex, "%s/ex", tmp);
    snprintf(json, sizeof json, "%s/model.json", ex);
    CHECK(tp_run("export '%s' '%s' --top 3 -o '%s'", a, b, ex) == 0);
    CHECK_CONTAINS(out_text, "exported the 3 best trials");
    CHECK(tp_count_in_file(json, "\"models\": \"top\"") == 1 && tp_count_in_file(json, "\"top\": 3") == 1);
    CHECK(tp_count_in_file(json, "-fold0.safetensors") == 3);
    CHECK(tp_run("predict '%s' '%s' --top 3 '%s' --format csv", a, b, test) == 0);
    char *want = strdup(out_text);
    CHECK(tp_run("predict '%s' '%s' --format csv", ex, test) == 0);
    CHECK_MSG(!strcmp(want, out_text), "predict from the export differs from --top 3 on the runs");
    free(want);
    int before = count(a, "\"models\":\"top 3\"");
    CHECK(tp_run("evaluate '%s' '%s'", ex, test) == 0);
    CHECK_CONTAINS(out_text, "top 3 trials by validation q3");
    CHECK(count(a, "\"models\":\"top 3\"") == before + 1);
    /* Refusals: --top beside --trial; two runs without --top; a forged count. */
    CHECK(tp_run("export '%s' --top 2 --trial x -o '%s/ex2'", a, tmp) == 2);
    CHECK(tp_run("export '%s' '%s' -o '%s/ex2'", a, b, tmp) == 2);
    CHECK_CONTAINS(err_text, "one run folder only (several with --top K)");
    CHECK(tp_run("evaluate '%s' --fold 0 '%s'", ex, test) == 1);
    CHECK_CONTAINS(err_text, "is one ensemble: --fold does not choose in it");
    CHECK(tp_run("export '%s' --rank 1 -o '%s/ex3'", ex, tmp) == 1);
    CHECK_CONTAINS(err_text, "expected a run folder");
    char *text = tp_read_file(json, NULL), *at = text ? strstr(text, "\"top\": 3") : NULL;
    if (at) at[7] = '5';
    if (text) tp_write_text(json, text);
    free(text);
    CHECK(tp_run("predict '%s' '%s'", ex, test) == 1);
    CHECK_CONTAINS(err_text, "\"models\": \"top\" needs \"top\" (1..64) and a \"trials\" list of that many");
}

/* A folder given twice is refused; a trial two sweeps share (same config,
 * same data: the same id and weights) counts once. */
static void test_duplicates(const char *a, const char *e, const char *test)
{
    char twice[400];
    snprintf(twice, sizeof twice, "%s/.", a);
    CHECK(tp_run("evaluate '%s' '%s' --top 2 '%s'", a, twice, test) == 1);
    CHECK_CONTAINS(err_text, "are one run folder: give each once");
    CHECK(tp_run("predict '%s' --top 4 '%s' --format csv", a, test) == 0);
    char *want = strdup(out_text);
    CHECK(tp_run("predict '%s' '%s' --top 4 '%s' --format csv", a, e, test) == 0);
    CHECK_MSG(!strcmp(want, out_text), "a trial of both sweeps counted twice");
    free(want);
    CHECK(tp_run("evaluate '%s' '%s' --top 5 '%s'", a, e, test) == 1);
    CHECK_CONTAINS(err_text, "hold only 4 trials");
}

static const char *SWEEP =
    "data:\n"
    "  synth: {proteins: 120, seed: %d}\n"
    "  window: 9\n"
    "  folds: 3\n"
    "model:\n"
    "  depth: 1\n"
    "  filters: %s\n"
    "  kernel: %s\n"
    "training:\n"
    "  epochs: 3\n"
    "  batch_size: 16\n"
    "  seed: 5\n"
    "run:\n"
    "  metric: %s\n";

static void sweep(const char *name, int seed, const char *filters, const char *kernel, const char *metric, char *dir)
{
    char path[400], text[1000];
    snprintf(path, sizeof path, "%s/%s.yaml", tmp, name);
    snprintf(text, sizeof text, SWEEP, seed, filters, kernel, metric);
    tp_write_text(path, text);
    snprintf(dir, 300, "%s/%s", tmp, name);
    run(path, dir);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "top");
    snprintf(log_path, sizeof log_path, "%s/log.txt", tmp);
    char a[300], b[300], c[300], d[300], e[300], test[300];
    snprintf(test, sizeof test, "%s/test.rec", tmp);
    CHECK(tp_run("synth -o '%s' --proteins 30 --seed 99", test) == 0);
    sweep("a", 3, "[8, 16]", "[3, 5]", "q3", a);
    sweep("b", 3, "[12]", "[3, 7]", "q3", b);
    sweep("c", 4, "[8]", "[3, 5]", "q3", c);
    sweep("d", 3, "[8]", "[3, 5]", "loss", d);
    sweep("e", 3, "[8]", "[3, 5]", "q3", e); /* a's first two trials */
    Board ba, bb;
    board_read(a, &ba);
    board_read(b, &bb);
    CHECK(ba.n == 4 && bb.n == 2);
    int looks = count(a, "\"kind\":\"evaluation\"");
    test_refusals(a, &ba, c, d, test);
    CHECK_MSG(count(a, "\"kind\":\"evaluation\"") == looks, "a refused --top recorded a look at test data");
    test_one(a, &ba, test);
    test_two(a, &ba, b, &bb, test);
    test_unrecordable(a, b, test);
    test_export(a, b, test);
    test_duplicates(a, e, test);
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
