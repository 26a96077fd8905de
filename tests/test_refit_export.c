/*
 * test_refit_export.c: what a refit's export says it is (issue #26, item
 * 6), end to end: a small run, `refit --rank 1 -o DIR`, then DIR/model.json
 * and the model file's metadata read back:
 *  1. model.json names the trial it refits, "models": "refit", its fold
 *     "all", the epochs it trained, why (the rule) and from what (its
 *     folds' best epochs, as the leaderboard has them); no score it does not
 *     have: no val_q3, val_loss, rank, metric or mean (absent, not 0 or "");
 *     the safetensors metadata the same (fold "all", no val_q3 / val_loss);
 *  2. the readers take it: predict, evaluate (its JSON names the refit,
 *     Q3 a fraction; the text says it in percent), the Python loader's fold
 *     list; and an export in the old form ("trial": "", "fold": -2,
 *     "val_q3": 0, ...) still reads, predicting the same;
 *  3. a model file of the old form (a refit with val_q3 "0") reads with no
 *     validation score; a fold ensemble's export keeps its scores, rank and
 *     metric, folds as numbers;
 *  4. "a trial by id prefix or rank" is one rule (issue #27, item 5):
 *     export, refit, predict and evaluate say the same for an unknown id
 *     and for a rank beyond the leaderboard.
 */
#include <math.h>
#include <sys/stat.h>

#include "journal/journal.h"
#include "json/json.h"
#include "modelfile/modelfile.h"
#include "safetensors/safetensors.h"
#include "test_proc.h"

static char tmp[256];

static const char *SWEEP = "data:\n  synth: {proteins: 40, seed: 3}\n  window: 5\n  folds: 3\n"
                           "model:\n  depth: 1\n  filters: [4, 6]\n  kernel: 3\n  dense: 0\n"
                           "training:\n  epochs: 4\n  batch_size: 16\n  learning_rate: 0.01\n  seed: 2\n";

static FsJsonDoc doc;

/* The file parsed as JSON into doc (free with json_free); its root. */
static const FsJson *read_json(const char *path)
{
    char *text = tp_read_file(path, NULL), why[160];
    memset(&doc, 0, sizeof doc);
    CHECK_MSG(text != NULL, "%s was not written", path);
    if (!text) return NULL;
    int bad = json_parse(&doc, text, strlen(text), why, sizeof why);
    CHECK_MSG(!bad, "%s: %s", path, why);
    free(text);
    return bad ? NULL : doc.root;
}

static long long num(const FsJson *o, const char *key)
{
    long long v = -999;
    const FsJson *x = json_get(o, key);
    CHECK_MSG(x && json_i64(x, &v) == 0, "\"%s\" is not an integer", key);
    return v;
}

static const char *str(const FsJson *o, const char *key)
{
    const FsJson *x = json_get(o, key);
    CHECK_MSG(x && x->type == FS_JSON_STRING, "\"%s\" is not a string", key);
    return x && x->type == FS_JSON_STRING ? x->str : "";
}

static void test_refit(const char *run)
{
    /* The best trial and its folds' best epochs, from the leaderboard. */
    char board[400], id[17] = "";
    int best[3] = {0};
    snprintf(board, sizeof board, "%s/board.json", tmp);
    CHECK(tp_run("leaderboard '%s' --format json --top 1", run) == 0);
    tp_write_text(board, out_text);
    const FsJson *rows = read_json(board), *row = json_at(rows, 0);
    snprintf(id, sizeof id, "%s", str(row, "id"));
    for (int k = 0; k < 3; k++) best[k] = (int)num(json_at(json_get(row, "folds"), k), "best_epoch");
    json_free(&doc);
    int lo = best[0] < best[1] ? best[0] : best[1], hi = best[0] < best[1] ? best[1] : best[0];
    int median = best[2] < lo ? lo : best[2] > hi ? hi : best[2];
    printf("trial %s, best epochs %d %d %d: median %d\n", id, best[0], best[1], best[2], median);

    /* The fold ensemble looked at on test data first: the refit then
     * names that score as the one to beat (issue #43, item 7). */
    char exp[400], mj[500], file[500], ens_test[400], want[1200];
    snprintf(ens_test, sizeof ens_test, "%s/ens-test.rec", tmp);
    CHECK(tp_run("synth -o '%s' --proteins 8 --seed 78", ens_test) == 0);
    CHECK(tp_run("evaluate '%s' '%s' --format json", run, ens_test) == 0);
    const char *eq = strstr(out_text, "\"q3\":");
    const double ens_q3 = eq ? atof(eq + 5) : -1;
    snprintf(exp, sizeof exp, "%s/refit-export", tmp);
    for (int again = 0; again < 2; again++) { /* trained, then found done: the same advice */
        CHECK(tp_run("refit '%s' --rank 1 -o '%s' --threads 2", run, exp) == 0);
        CHECK_CONTAINS(out_text, again ? "refit already saved" : "median of the folds' best epochs");
        /* How to check it against the ensemble: both commands, the test section, the score to beat. */
        CHECK_CONTAINS(out_text, "check the refit against the trial's fold ensemble on held-out proteins");
        snprintf(want, sizeof want, "foldsweep evaluate %s --trial %s TEST", run, id);
        CHECK_CONTAINS(out_text, want);
        snprintf(want, sizeof want, "foldsweep evaluate %s/refits/%s/refit.safetensors TEST", run, id);
        CHECK_CONTAINS(out_text, want);
        CHECK_CONTAINS(out_text, "test: {inputs: [TEST], refit: true}");
        snprintf(want, sizeof want, "the fold ensemble scored Q3 %.1f%% on %s (foldsweep evaluate)", 100 * ens_q3,
                 ens_test);
        CHECK_CONTAINS(out_text, want);
    }

    /* 1: model.json. */
    snprintf(mj, sizeof mj, "%s/model.json", exp);
    const FsJson *m = read_json(mj);
    CHECK(!strcmp(str(m, "trial"), id));
    CHECK(!strcmp(str(m, "models"), "refit"));
    const char *absent[] = {"rank", "metric", "mean", "std"};
    for (int i = 0; i < 4; i++) CHECK_MSG(!json_get(m, absent[i]), "a refit's model.json has \"%s\"", absent[i]);
    const FsJson *folds = json_get(m, "folds"), *f = json_at(folds, 0);
    CHECK(folds && folds->n == 1);
    CHECK(!strcmp(str(f, "fold"), "all"));
    CHECK(!strcmp(str(f, "file"), "refit.safetensors"));
    CHECK(num(f, "epochs") == median);
    CHECK_CONTAINS(str(f, "epochs_rule"), "median of the folds' best epochs");
    const FsJson *fb = json_get(f, "fold_best_epochs");
    CHECK(fb && fb->n == 3);
    for (int k = 0; k < 3 && fb && fb->n == 3; k++) {
        long long e;
        CHECK(json_i64(json_at(fb, k), &e) == 0 && e == best[k]);
    }
    const char *no_score[] = {"val_q3", "val_loss", "best_epoch"};
    for (int i = 0; i < 3; i++) CHECK_MSG(!json_get(f, no_score[i]), "a refit's model has \"%s\"", no_score[i]);
    json_free(&doc);

    /* ... and the file's own metadata. */
    snprintf(file, sizeof file, "%s/refit.safetensors", exp);
    FsSafetensors st;
    FsErr err = {0};
    CHECK_MSG(safetensors_read(&st, file, &err) == 0, "%s", err.msg);
    const char *fold = safetensors_meta(&st, "fold"), *trial = safetensors_meta(&st, "trial"),
               *epochs = safetensors_meta(&st, "epochs");
    CHECK(fold && !strcmp(fold, "all"));
    CHECK(trial && !strcmp(trial, id));
    CHECK(epochs && atoi(epochs) == median);
    CHECK(!safetensors_meta(&st, "val_q3") && !safetensors_meta(&st, "val_loss"));
    safetensors_free(&st);

    /* 2: the readers. */
    char fasta[400], test[400];
    static char expected[sizeof out_text];
    snprintf(fasta, sizeof fasta, "%s/in.fasta", tmp);
    snprintf(test, sizeof test, "%s/test.rec", tmp);
    tp_write_text(fasta, ">q1\nMKVLAAGIVGLLLAQSPERTWYHHE\n>q2\nACDEFGHIKLMNPQRSTVWY\n");
    CHECK(tp_run("predict '%s' '%s' --format fasta", exp, fasta) == 0);
    snprintf(expected, sizeof expected, "%s", out_text);
    CHECK(tp_count(expected, ">") == 2);
    CHECK(tp_run("synth -o '%s' --proteins 8 --seed 77", test) == 0);
    CHECK(tp_run("evaluate '%s' '%s' --format json", exp, test) == 0);
    CHECK_CONTAINS(out_text, "refit of 1 model, run ");
    char journal[500];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", run);
    CHECK(tp_count_in_file(journal, "\"models\":\"refit\"") == 1); /* recorded as the refit's */
    const char *q = strstr(out_text, "\"q3\":");
    CHECK(q && atof(q + 5) > 0 && atof(q + 5) < 1); /* a fraction in JSON */
    CHECK(tp_run("evaluate '%s' '%s'", exp, test) == 0);
    CHECK_CONTAINS(out_text, "% (95% interval "); /* percent for people */
    if (system("python3 -c 1 >/dev/null 2>&1") == 0) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd,
                 "python3 -c \"import sys; sys.path.insert(0, '%s/python'); import foldsweep_torch as ft; "
                 "f = ft._model_json_files('%s'); assert [p.split('/')[-1] for p in f] == ['refit.safetensors'], f\"",
                 FS_TEST_SRC_DIR, exp);
        printf("$ %s\n", cmd);
        fflush(stdout);
        CHECK(system(cmd) == 0);
    }

    /* An export written before this change: the same model reads. */
    char old[400], path[500];
    snprintf(old, sizeof old, "%s/old-export", tmp);
    mkdir(old, 0777);
    snprintf(path, sizeof path, "%s/refit.safetensors", old);
    char *bytes;
    size_t n;
    bytes = tp_read_file(file, &n);
    tp_write_file(path, bytes, n, "wb");
    free(bytes);
    snprintf(path, sizeof path, "%s/model.json", old);
    tp_write_text(path, "{\"format\": \"foldsweep-export\", \"version\": 1, \"run\": \"\", \"trial\": \"\", \"rank\": 0, "
                        "\"metric\": \"\", \"mean\": null, \"std\": null, \"window\": 5, \"folds\": [{\"fold\": -2, "
                        "\"file\": \"refit.safetensors\", \"best_epoch\": 3, \"val_q3\": 0, \"val_loss\": 0}]}\n");
    CHECK(tp_run("predict '%s' '%s' --format fasta", old, fasta) == 0);
    CHECK_MSG(!strcmp(out_text, expected), "the old export predicts otherwise");
    if (system("python3 -c 1 >/dev/null 2>&1") == 0) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd,
                 "python3 -c \"import sys; sys.path.insert(0, '%s/python'); import foldsweep_torch as ft; "
                 "assert len(ft._model_json_files('%s')) == 1\"", FS_TEST_SRC_DIR, old);
        CHECK(system(cmd) == 0);
    }
}

/* 3: a fold ensemble's export keeps what it has. */
static void test_folds(const char *run)
{
    char exp[400], mj[500];
    snprintf(exp, sizeof exp, "%s/fold-export", tmp);
    CHECK(tp_run("export '%s' --rank 1 -o '%s'", run, exp) == 0);
    CHECK_CONTAINS(out_text, "mean q3 "); /* "mean q3 71.2% over 3 folds" */
    CHECK_CONTAINS(out_text, "% over 3 folds");
    snprintf(mj, sizeof mj, "%s/model.json", exp);
    const FsJson *m = read_json(mj), *folds = json_get(m, "folds");
    CHECK(!strcmp(str(m, "models"), "folds"));
    CHECK(num(m, "rank") == 1 && !strcmp(str(m, "metric"), "q3"));
    CHECK(folds && folds->n == 3);
    for (int k = 0; folds && k < folds->n; k++) {
        const FsJson *f = json_at(folds, k);
        double v;
        CHECK(num(f, "fold") == k && num(f, "best_epoch") >= 1);
        CHECK(json_f64(json_get(f, "val_q3"), &v) == 0 && v > 0 && v < 1);
        CHECK(!json_get(f, "epochs_rule"));
    }
    json_free(&doc);
}

/* A refit file as builds before this one wrote it: val_q3 and val_loss "0". */
static void test_old_file(const char *run)
{
    char path[500];
    FsSavedModel m;
    FsErr err = {0};
    snprintf(path, sizeof path, "%s/refit-export/refit.safetensors", tmp);
    (void)run;
    CHECK_MSG(modelfile_load(&m, path, 1, &err) == 0, "%s", err.msg);
    if (err.set) return;
    FsModelInfo old = m.info;
    old.val_q3 = old.val_loss = 0.0f;
    uint8_t *bytes;
    uint64_t n;
    modelfile_serialize(&m.net, m.weights, &old, &bytes, &n);
    FsSavedModel back;
    CHECK(modelfile_parse(&back, bytes, n, "old refit", 1, &err) == 0); /* takes the bytes */
    CHECK(back.info.fold == FS_FOLD_ALL && isnan(back.info.val_q3) && isnan(back.info.val_loss));
    modelfile_free(&back);
    modelfile_free(&m);
}

/* 4: every command that takes --trial or --rank finds the trial by one
 * rule (predict_trial_row), so the same mistake reads the same. */
static void test_one_rule(const char *run)
{
    char fasta[400];
    snprintf(fasta, sizeof fasta, "%s/one.fasta", tmp);
    tp_write_text(fasta, ">p\nACDEFGHIKLMNPQRSTVWY\n");
    const char *how[] = {"export '%s' -o '%s/nowhere' %s", "refit '%s' %s%s", "predict '%s' '%s' %s",
                         "evaluate '%s' '%s' %s"};
    const char *pick[] = {"--rank 99", "--trial zzzz"};
    /* The hint names the program as it was invoked (a path here: it said
     * "foldsweep leaderboard" where the README runs build/foldsweep). */
    char hint[600];
    snprintf(hint, sizeof hint, "run: no trial 'zzzz' in the journal (see %s leaderboard ", FS_TEST_BIN);
    const char *said[] = {"run: no trial at rank 99 (the leaderboard has 2)", hint};
    for (int c = 0; c < 4; c++)
        for (int p = 0; p < 2; p++) {
            const char *second = c == 0 ? tmp : c == 1 ? "" : fasta;
            CHECK_MSG(tp_run(how[c], run, second, pick[p]) == 1, "%s: exit status", how[c]);
            CHECK_CONTAINS(err_text, said[p]);
        }
}

int main(void)
{
    if (access(FS_TEST_BIN, X_OK) != 0) TEST_SKIP("%s is not built", FS_TEST_BIN);
    tp_tmpdir(tmp, sizeof tmp, "refit_export");
    char sweep[400], run[400];
    snprintf(sweep, sizeof sweep, "%s/sweep.yaml", tmp);
    snprintf(run, sizeof run, "%s/run", tmp);
    tp_write_text(sweep, SWEEP);
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, run) == 0);
    test_refit(run);
    test_folds(run);
    test_old_file(run);
    test_one_rule(run);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
