/*
 * test_board.c: the leaderboard for pandas and for a terminal (issue #26,
 * item 10, and item 11's Q3 units), through the binary on run folders made
 * here (a sweep.yaml, and a journal of chosen records):
 *  1. CSV and JSON have one param_<key> column per swept option (the dotted
 *     sweep key, dots as '_') with the trial's value, typed in JSON; empty
 *     (null) where the option does not change the trial (momentum under
 *     adam, leaky_slope under relu); model.layers as the alternative's
 *     place, from 1; the same names in both, and python3's csv and json
 *     modules read the same values from both;
 *  2. per-class MCC (mcc_H, mcc_E, mcc_C) of the ok folds' confusions
 *     pooled, equal to the MCC worked out by hand for the summed confusion
 *     (not the mean of the folds'); a diverged fold is not pooled; a trial
 *     with no ok fold has none: empty in CSV, absent in JSON, never 0;
 *  3. the table fits 120 columns: long architectures and failure messages
 *     wrap, ten folds' columns give way (saying so), ids are the shortest
 *     prefix that tells them apart; --wide has each trial on one line,
 *     whole; --wide with another --format is a usage error;
 *  4. Q3 is a percent with one decimal in the table, a fraction in CSV.
 */
#include <math.h>
#include <sys/stat.h>

#include "json/json.h"
#include "report/report.h"
#include "sweep/sweep.h"
#include "test_proc.h"

static char tmp[256];

/* Three folds whose confusions add up to test_metrics' worked example
 * {{50,5,10},{4,30,6},{6,5,84}}: pooled MCC H 0.7105041671115224,
 * E 0.6875, C 0.7309142145097679. */
static const uint64_t SPLIT[3][3][3] = {
    {{20, 2, 3}, {1, 10, 2}, {2, 2, 30}},
    {{15, 2, 4}, {2, 10, 2}, {2, 1, 27}},
    {{15, 1, 3}, {1, 10, 2}, {2, 2, 27}},
};
static const uint64_t WHOLE[3][3] = {{50, 5, 10}, {4, 30, 6}, {6, 5, 84}};
static const uint64_t WRONG[3][3] = {{0, 10, 0}, {0, 0, 10}, {10, 0, 0}};
static const double MCC_H = 0.7105041671115224, MCC_E = 0.6875, MCC_C = 0.7309142145097679;

/* A fold record with confusion cm at best epoch `best` (0: none, empty). */
static void add_fold(FsJournal *j, const char *id, int fold, FsFitStatus st, const uint64_t cm[3][3], int best)
{
    FsFitResult r;
    train_result_alloc(&r, 4);
    r.status = st;
    r.epochs = 4;
    r.best_epoch = best;
    r.best_val_loss = 0.5f;
    uint64_t ok = 0, n = 0;
    for (int a = 0; a < 3 && best; a++)
        for (int b = 0; b < 3; b++) r.best_confusion[a][b] = cm[a][b], n += cm[a][b], ok += a == b ? cm[a][b] : 0;
    if (best) r.curves.val_q3[best - 1] = (float)((double)ok / (double)n), r.curves.val_loss[best - 1] = 0.5f;
    if (st == FS_FIT_DIVERGED) r.diverged_epoch = 3, r.diverged_step = 7;
    FsErr err = {0};
    CHECK_MSG(journal_append_fold(j, id, fold, &r, NULL, &err) == 0, "%s", err.msg);
    train_result_free(&r);
}

/* The sweep's trial whose config holds every one of the strings. */
static const FsTrial *find_trial(const FsSweep *sw, const char *a, const char *b, const char *c, const char *d)
{
    for (int t = 0; t < sw->n_trials; t++) {
        const char *cfg = sw->trials[t].config;
        if (strstr(cfg, a) && strstr(cfg, b) && strstr(cfg, c) && strstr(cfg, d)) return &sw->trials[t];
    }
    CHECK_MSG(0, "no trial with %s %s %s %s", a, b, c, d);
    return &sw->trials[0];
}

/* ---------------------------------------------------------------------- */
/* CSV                                                                      */

/* Field `col` (0-based) of a CSV line (RFC 4180 quotes) into out. */
static void csv_field(const char *line, int col, char *out, size_t n)
{
    size_t k = 0;
    int c = 0;
    const char *p = line;
    out[0] = '\0';
    while (*p && *p != '\n') {
        int quoted = *p == '"';
        if (quoted) p++;
        for (; *p && *p != '\n'; p++) {
            if (quoted && *p == '"') {
                if (p[1] == '"') p++;
                else {
                    p++;
                    break;
                }
            } else if (!quoted && *p == ',') break;
            if (c == col && k + 1 < n) out[k++] = *p;
        }
        if (c == col) break;
        if (*p == ',') p++;
        c++;
    }
    out[k] = '\0';
}

/* The column named name in the header line, or -1. */
static int csv_col(const char *header, const char *name)
{
    char f[128];
    for (int c = 0; c < 200; c++) {
        csv_field(header, c, f, sizeof f);
        if (!strcmp(f, name)) return c;
        if (!f[0]) return -1;
    }
    return -1;
}

/* The line of CSV text whose id (column 1) is id. */
static const char *csv_row(const char *text, const char *id)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        char f[64];
        csv_field(p, 1, f, sizeof f);
        if (!strcmp(f, id)) return p;
    }
    return NULL;
}

static void cell(const char *text, const char *id, const char *col, char *out, size_t n)
{
    int c = csv_col(text, col);
    const char *row = csv_row(text, id);
    CHECK_MSG(c >= 0, "no CSV column %s", col);
    CHECK_MSG(row != NULL, "no CSV row %s", id);
    out[0] = '\0';
    if (c >= 0 && row) csv_field(row, c, out, n);
}

#define CHECK_CELL(text, id, col, want)                                                                        \
    do {                                                                                                       \
        char got_[256];                                                                                        \
        cell((text), (id), (col), got_, sizeof got_);                                                          \
        CHECK_MSG(!strcmp(got_, (want)), "%s of %.8s: [%s], expected [%s]", (col), (id), got_, (want));        \
    } while (0)

static double cell_num(const char *text, const char *id, const char *col)
{
    char s[64];
    cell(text, id, col, s, sizeof s);
    return s[0] ? atof(s) : NAN;
}

/* ---------------------------------------------------------------------- */
/* 1, 2, 4: the columns                                                     */

static const char *SWEEP =
    "data:\n  synth: {proteins: 30, seed: 1}\n  window: 7\n  folds: 3\n"
    "model:\n  depth: 1\n  filters: [4, 8]\n  kernel: 3\n  dense: 0\n  activation: [relu, leaky_relu]\n"
    "  leaky_slope: [0.01, 0.2]\n"
    "training:\n  epochs: 4\n  optimizer: [sgd, adam]\n  momentum: [0.5, 0.9]\n"
    "  early_stopping: {criterion: gl, alpha: [2, 5]}\n";

static const char *PARAMS[] = {"param_model_filters", "param_model_activation", "param_model_leaky_slope",
                               "param_training_optimizer", "param_training_momentum",
                               "param_training_early_stopping_alpha"};

static void test_columns(void)
{
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/cols", tmp);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    tp_write_text(path, SWEEP);
    FsSweep sw;
    FsErrList errs = {0};
    CHECK(sweep_load_string(&sw, SWEEP, path, &errs) == 0);
    errlist_free(&errs);
    sweep_assign_ids(&sw, 0x5eed); /* any ids: the journal below holds no sweep record to check them by */
    const FsTrial *sgd = find_trial(&sw, "\"leaky_slope\":0.2", "\"momentum\":0.9", "\"filters\":4,", "\"alpha\":5");
    const FsTrial *adam = find_trial(&sw, "\"activation\":\"relu\"", "\"optimizer\":\"adam\"", "\"filters\":8,",
                                     "\"alpha\":2,");
    const FsTrial *bad = find_trial(&sw, "\"activation\":\"relu\"", "\"momentum\":0.5", "\"filters\":8,", "\"alpha\":5");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, sw.n_trials, 3, "q3", 0, &err) == 0);
    const FsTrial *trials[3] = {sgd, adam, bad};
    for (int i = 0; i < 3; i++) CHECK(journal_append_trial(&j, trials[i]->id, trials[i]->index, 10, trials[i]->config, &err) == 0);
    for (int f = 0; f < 3; f++) add_fold(&j, sgd->id, f, FS_FIT_OK, SPLIT[f], 2);
    add_fold(&j, adam->id, 0, FS_FIT_OK, WHOLE, 1); /* 0 and 1 pooled: 2 x WHOLE, the same MCC */
    add_fold(&j, adam->id, 1, FS_FIT_OK, WHOLE, 3);
    add_fold(&j, adam->id, 2, FS_FIT_DIVERGED, WRONG, 1); /* not pooled: it would pull every MCC down */
    add_fold(&j, bad->id, 0, FS_FIT_DIVERGED, NULL, 0);   /* no best epoch: nothing to score */
    journal_close(&j);
    char id_sgd[17], id_adam[17], id_bad[17];
    snprintf(id_sgd, sizeof id_sgd, "%s", sgd->id);
    snprintf(id_adam, sizeof id_adam, "%s", adam->id);
    snprintf(id_bad, sizeof id_bad, "%s", bad->id);

    { /* the run's closing table names its folder, quoted for the shell, for the rest */
        FsJournal jr;
        CHECK(journal_read(&jr, dir, &err) == 0);
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        report_print_leaderboard(mem, "runs/it's", &jr, &sw, 1);
        fclose(mem);
        CHECK_MSG(strstr(text, "(2 more: foldsweep leaderboard 'runs/it'\\''s')\n") != NULL, "%s", text);
        free(text);
        /* ... by the program's name as the user ran it (the README's build/foldsweep). */
        fs_program_set("build/foldsweep");
        mem = open_memstream(&text, &len);
        report_print_leaderboard(mem, "runs/it's", &jr, &sw, 1);
        fclose(mem);
        CHECK_MSG(strstr(text, "(2 more: build/foldsweep leaderboard 'runs/it'\\''s')\n") != NULL, "%s", text);
        free(text);
        journal_close(&jr);
    }
    CHECK(tp_run("leaderboard '%s' --format csv", dir) == 0);
    char *csv = strdup(out_text);
    for (size_t p = 0; p < sizeof PARAMS / sizeof *PARAMS; p++) CHECK_MSG(csv_col(csv, PARAMS[p]) >= 0, "%s", PARAMS[p]);
    CHECK(csv_col(csv, "param_model_depth") < 0 && csv_col(csv, "param_training_epochs") < 0); /* not swept */
    /* The values the trial trained with; empty where the option does nothing for it. */
    CHECK_CELL(csv, id_sgd, "param_model_filters", "4");
    CHECK_CELL(csv, id_sgd, "param_model_activation", "leaky_relu");
    CHECK_CELL(csv, id_sgd, "param_model_leaky_slope", "0.2");
    CHECK_CELL(csv, id_sgd, "param_training_optimizer", "sgd");
    CHECK_CELL(csv, id_sgd, "param_training_momentum", "0.9");
    CHECK_CELL(csv, id_sgd, "param_training_early_stopping_alpha", "5");
    CHECK_CELL(csv, id_adam, "param_model_filters", "8");
    CHECK_CELL(csv, id_adam, "param_model_activation", "relu");
    CHECK_CELL(csv, id_adam, "param_model_leaky_slope", "");
    CHECK_CELL(csv, id_adam, "param_training_optimizer", "adam");
    CHECK_CELL(csv, id_adam, "param_training_momentum", "");
    CHECK_CELL(csv, id_adam, "param_training_early_stopping_alpha", "2");
    /* Per-class MCC of the pooled ok folds. */
    CHECK_NEAR(cell_num(csv, id_sgd, "mcc_H"), MCC_H, 1e-8);
    CHECK_NEAR(cell_num(csv, id_sgd, "mcc_E"), MCC_E, 1e-8);
    CHECK_NEAR(cell_num(csv, id_sgd, "mcc_C"), MCC_C, 1e-8);
    CHECK_NEAR(cell_num(csv, id_adam, "mcc_H"), MCC_H, 1e-8);
    CHECK_NEAR(cell_num(csv, id_adam, "mcc_C"), MCC_C, 1e-8);
    CHECK_CELL(csv, id_bad, "mcc_H", "");
    CHECK_CELL(csv, id_bad, "mcc_E", "");
    /* Q3 stays a fraction in CSV: 164 of 200. */
    CHECK_CELL(csv, id_adam, "fold0_q3", "0.82");

    CHECK(tp_run("leaderboard '%s' --format json", dir) == 0);
    FsJsonDoc d;
    char why[160];
    CHECK_MSG(json_parse(&d, out_text, strlen(out_text), why, sizeof why) == 0, "%s", why);
    for (const FsJson *o = d.root ? d.root->child : NULL; o; o = o->next) {
        const char *id = json_get(o, "id")->str;
        const FsJson *filters = json_get(o, "param_model_filters"), *act = json_get(o, "param_model_activation"),
                     *mom = json_get(o, "param_training_momentum"), *h = json_get(o, "mcc_H");
        double v;
        CHECK_MSG(filters && filters->type == FS_JSON_NUMBER, "%s: param_model_filters is a number", id);
        CHECK_MSG(act && act->type == FS_JSON_STRING, "%s: param_model_activation is a string", id);
        if (!strcmp(id, id_adam)) {
            CHECK(mom && mom->type == FS_JSON_NULL);
            CHECK(h && json_f64(h, &v) == 0 && fabs(v - MCC_H) < 1e-12);
        }
        if (!strcmp(id, id_sgd)) {
            CHECK(mom && json_f64(mom, &v) == 0 && v == 0.9);
            CHECK(json_f64(json_get(o, "mcc_E"), &v) == 0 && fabs(v - MCC_E) < 1e-12);
        }
        if (!strcmp(id, id_bad)) CHECK_MSG(!h && !json_get(o, "mcc_C"), "a trial with no ok fold has no MCC");
    }
    json_free(&d);

    /* pandas reads what python's csv and json read: the same columns, the same values. */
    if (system("python3 -c 1 >/dev/null 2>&1") == 0) {
        char csvp[500], jsp[500], py[600];
        snprintf(csvp, sizeof csvp, "%s/board.csv", tmp);
        snprintf(jsp, sizeof jsp, "%s/board.json", tmp);
        snprintf(py, sizeof py, "%s/check.py", tmp);
        tp_write_text(csvp, csv);
        tp_write_text(jsp, out_text);
        tp_write_text(py,
                      "import csv, json, sys\n"
                      "rows = list(csv.DictReader(open(sys.argv[1], newline='')))\n"
                      "objs = {o['id']: o for o in json.load(open(sys.argv[2]))}\n"
                      "cols = [c for c in rows[0] if c.startswith(('param_', 'mcc_'))]\n"
                      "assert len(cols) == 9, cols\n"
                      "for r in rows:\n"
                      "    o = objs[r['id']]\n"
                      "    assert set(c for c in o if c.startswith(('param_', 'mcc_'))) <= set(cols), o.keys()\n"
                      "    for c in cols:\n"
                      "        a, b = r[c], o.get(c)\n"
                      "        if a == '': assert b is None, (r['id'], c, a, b)\n"
                      "        elif isinstance(b, str): assert a == b, (r['id'], c, a, b)\n"
                      "        else: assert abs(float(a) - b) < 1e-6 * max(1, abs(b)), (r['id'], c, a, b)\n"
                      "print('csv and json agree on', len(cols), 'columns')\n");
        char cmd[2000];
        snprintf(cmd, sizeof cmd, "python3 '%s' '%s' '%s'", py, csvp, jsp);
        printf("$ %s\n", cmd);
        fflush(stdout);
        CHECK(system(cmd) == 0);
    }

    /* 4: the table says Q3 in percent, one decimal (164/200 = 82.0). */
    CHECK(tp_run("leaderboard '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "q3 mean %");
    CHECK_CONTAINS(out_text, "   82.0   82.0");
    CHECK(strstr(out_text, "0.82") == NULL);
    free(csv);
    sweep_free(&sw);
}

/* Layer-list alternatives are one option, model.layers: each trial's
 * alternative by its place in the list, from 1. */
static void test_layers(void)
{
    static const char *LAYERS =
        "data:\n  synth: {proteins: 30, seed: 1}\n  window: 7\n  folds: 2\n"
        "model:\n  layers:\n    - [{conv1d: {filters: 4, width: 3}}]\n    - [{dense: {units: 5}}]\n"
        "training:\n  epochs: 4\n  batch_size: [8, 16]\n";
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/layers", tmp);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    tp_write_text(path, LAYERS);
    FsSweep sw;
    FsErrList errs = {0};
    CHECK(sweep_load_string(&sw, LAYERS, path, &errs) == 0 && sw.n_trials == 4);
    errlist_free(&errs);
    sweep_assign_ids(&sw, 0x5eed);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, sw.n_trials, 2, "q3", 0, &err) == 0);
    for (int t = 0; t < sw.n_trials; t++) {
        CHECK(journal_append_trial(&j, sw.trials[t].id, t, 10, sw.trials[t].config, &err) == 0);
        for (int f = 0; f < 2; f++) add_fold(&j, sw.trials[t].id, f, FS_FIT_OK, SPLIT[f], 1);
    }
    journal_close(&j);
    CHECK(tp_run("leaderboard '%s' --format csv", dir) == 0);
    for (int t = 0; t < sw.n_trials; t++) {
        const char *conv = strstr(sw.trials[t].config, "conv1d") ? "1" : "2";
        CHECK_CELL(out_text, sw.trials[t].id, "param_model_layers", conv);
        CHECK_CELL(out_text, sw.trials[t].id, "param_training_batch_size", strstr(sw.trials[t].config, "\"batch_size\":8,") ? "8" : "16");
    }
    sweep_free(&sw);
}

/* ---------------------------------------------------------------------- */
/* 3: the width                                                             */

static const char *LONG_CFG =
    "{\"model\":{\"layers\":[{\"activation\":\"leaky_relu\",\"filters\":256,\"kind\":\"conv1d\",\"width\":15},"
    "{\"kind\":\"batchnorm\"},{\"activation\":\"leaky_relu\",\"filters\":256,\"kind\":\"conv1d\",\"width\":15},"
    "{\"kind\":\"batchnorm\"},{\"activation\":\"leaky_relu\",\"filters\":128,\"kind\":\"conv1d\",\"width\":11},"
    "{\"kind\":\"dropout\",\"rate\":0.35},{\"activation\":\"swish\",\"kind\":\"highway\",\"width\":11},"
    "{\"activation\":\"swish\",\"kind\":\"dense\",\"units\":512},{\"kind\":\"dropout\",\"rate\":0.35}],"
    "\"window\":31},\"training\":{\"batch_size\":64,\"learning_rate\":0.00025,\"optimizer\":\"adamw\"}}";

static void test_width(void)
{
    char dir[400], arch[200];
    snprintf(dir, sizeof dir, "%s/width", tmp);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, 3, 10, "q3", 0, &err) == 0);
    const char *ids[3] = {"0123456789ab0000", "0123456789ab1111", "fedcba9876543210"};
    for (int t = 0; t < 3; t++) CHECK(journal_append_trial(&j, ids[t], t, 123456789, LONG_CFG, &err) == 0);
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 10; f++) add_fold(&j, ids[t], f, FS_FIT_OK, WHOLE, 2);
    char msg[400];
    snprintf(msg, sizeof msg, "out of memory: %s", "the model needs 5.3 GiB for its activations at batch 64, more than "
                              "the 4 GiB this rank may allocate; lower training.batch_size or the filters, or run on "
                              "fewer threads per node so each has more memory (run.threads)");
    CHECK(journal_append_failure(&j, ids[2], msg, &err) == 0);
    journal_close(&j);
    report_arch_summary(LONG_CFG, arch, sizeof arch);

    CHECK(tp_run("leaderboard '%s'", dir) == 0);
    char *t = strdup(out_text);
    int lines = 0;
    for (char *p = t, *nl; *p; p = nl + 1, lines++) {
        nl = strchr(p, '\n');
        if (!nl) break;
        CHECK_MSG(nl - p <= 120, "line %d has %d columns: %.*s", lines, (int)(nl - p), (int)(nl - p), p);
    }
    CHECK(lines > 5);                                 /* wrapped, not cut */
    CHECK(strstr(t, "fold9") == NULL);                /* ten folds do not fit beside the rest */
    CHECK_CONTAINS(t, "--wide");                      /* ... and it says where they are */
    CHECK_CONTAINS(t, "0123456789ab0 ");              /* the shortest prefix that tells ids apart */
    CHECK(strstr(t, "0123456789ab0000") == NULL);
    CHECK_CONTAINS(t, "fedcba9876543 ");
    CHECK_CONTAINS(t, "run.threads)");                /* the note's end: wrapped, all there */
    free(t);

    CHECK(tp_run("leaderboard '%s' --wide", dir) == 0);
    CHECK_CONTAINS(out_text, "fold9");
    CHECK_CONTAINS(out_text, arch);                   /* whole, on one line */
    CHECK_CONTAINS(out_text, msg);
    CHECK_CONTAINS(out_text, "0123456789ab0000  ok");
    char *legend = strstr(out_text, "\n\n"); /* the table, then any legend */
    if (legend) legend[1] = '\0';
    CHECK_MSG(tp_count(out_text, "\n") == 2 + 3, "%s", out_text);
    CHECK(tp_run("leaderboard '%s' --wide --format csv", dir) == 2);
    CHECK_CONTAINS(err_text, "--wide");
}

int main(void)
{
    if (access(FS_TEST_BIN, X_OK) != 0) TEST_SKIP("%s is not built", FS_TEST_BIN);
    tp_tmpdir(tmp, sizeof tmp, "board");
    test_columns();
    test_layers();
    test_width();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
