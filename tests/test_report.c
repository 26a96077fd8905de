/*
 * test_report.c: the leaderboard. Ranking (Q3 descending, loss ascending,
 * incomplete after complete, diverged after those, failed last, ties by
 * trial index), the population std by hand, each format's exact output for
 * a small journal, the JSON parsed back with the journal's reader, the
 * files a run leaves, the architecture summary, and the leaderboard and
 * status commands through the binary (exit codes 0 / 1 / 2).
 */
#include <sys/stat.h>

#include "json/json.h"
#include "report/report.h"
#include "test_proc.h"

static char tmp_root[256];

static const char *tmp_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp_root, name);
    return path;
}

static const char *CFG =
    "{\"data\":{\"split\":\"folds\"},\"model\":{\"init\":\"he\",\"layers\":["
    "{\"activation\":\"relu\",\"filters\":64,\"kind\":\"conv1d\",\"width\":7},"
    "{\"kind\":\"dropout\",\"rate\":0.2},"
    "{\"activation\":\"relu\",\"kind\":\"dense\",\"units\":32}],\"window\":15},"
    "\"training\":{\"batch_size\":8,\"learning_rate\":0.001,\"optimizer\":\"adam\"}}";

/* A fold whose Q3 is correct / total and whose best loss is `loss`. */
static void add_fold(FsJournal *j, const char *id, int fold, FsFitStatus status, int correct,
                     int total, float loss, int best, int epochs, double seconds)
{
    FsFitResult r;
    train_result_alloc(&r, epochs);
    r.status = status;
    r.epochs = epochs;
    r.best_epoch = best;
    r.best_val_loss = loss;
    r.best_confusion[0][0] = (uint64_t)correct;
    r.best_confusion[0][1] = (uint64_t)(total - correct);
    if (best > 0) { /* the recorded scores of the best epoch are the confusion's, as a fit writes them */
        r.curves.val_q3[best - 1] = (float)((double)correct / (double)total);
        r.curves.val_loss[best - 1] = loss;
    }
    r.seconds = seconds;
    if (status == FS_FIT_DIVERGED) {
        r.diverged_epoch = 3;
        r.diverged_step = 41;
    }
    if (status == FS_FIT_FAILED) snprintf(r.message, sizeof r.message, "window 4 is even");
    FsErr err = {0};
    CHECK(journal_append_fold(j, id, fold, &r, NULL, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    train_result_free(&r);
}

static void add_trial(FsJournal *j, const char *id, int index, long params)
{
    FsErr err = {0};
    CHECK(journal_append_trial(j, id, index, params, CFG, &err) == 0);
}

/* Q3 fold values (of 4 residues) per trial; exact in binary, so means tie exactly. */
static void ranking_journal(FsJournal *j)
{
    FsErr err = {0};
    CHECK(journal_open(j, tmp_dir("rank"), &err) == 0);
    /* Written out of rank order on purpose. */
    add_trial(j, "ffail", 5, 10);
    CHECK(journal_append_failure(j, "ffail", "out of memory", &err) == 0);
    add_trial(j, "cc", 2, 10); /* 0.75 x3: ties with aa, later index */
    for (int f = 0; f < 3; f++) add_fold(j, "cc", f, FS_FIT_OK, 3, 4, 0.2f, 2, 4, 1.0);
    add_trial(j, "ediv", 4, 10); /* the best folds, but fold 2 diverged */
    add_fold(j, "ediv", 0, FS_FIT_OK, 4, 4, 0.1f, 2, 4, 1.0);
    add_fold(j, "ediv", 1, FS_FIT_OK, 4, 4, 0.1f, 2, 4, 1.0);
    add_fold(j, "ediv", 2, FS_FIT_DIVERGED, 4, 4, 0.1f, 2, 2, 1.0);
    add_trial(j, "aa", 0, 10); /* 0.5 0.75 1.0: mean 0.75 */
    add_fold(j, "aa", 0, FS_FIT_OK, 2, 4, 0.3f, 2, 4, 1.0);
    add_fold(j, "aa", 1, FS_FIT_OK, 3, 4, 0.3f, 2, 4, 1.0);
    add_fold(j, "aa", 2, FS_FIT_OK, 4, 4, 0.3f, 2, 4, 1.0);
    add_trial(j, "gin", 6, 10); /* two folds so far */
    add_fold(j, "gin", 0, FS_FIT_OK, 4, 4, 0.05f, 2, 4, 1.0);
    add_fold(j, "gin", 2, FS_FIT_OK, 4, 4, 0.05f, 2, 4, 1.0);
    add_trial(j, "bb", 1, 10); /* 1.0 1.0 0.75 */
    add_fold(j, "bb", 0, FS_FIT_OK, 4, 4, 0.5f, 2, 4, 1.0);
    add_fold(j, "bb", 1, FS_FIT_OK, 4, 4, 0.5f, 2, 4, 1.0);
    add_fold(j, "bb", 2, FS_FIT_OK, 3, 4, 0.5f, 2, 4, 1.0);
    add_trial(j, "hfold", 7, 10); /* a fold that could not train */
    add_fold(j, "hfold", 1, FS_FIT_FAILED, 0, 0, 0.0f, 0, 0, 0.0);
    add_trial(j, "ddiv", 3, 10); /* diverged, lower index than ediv */
    add_fold(j, "ddiv", 0, FS_FIT_DIVERGED, 1, 4, 0.9f, 1, 2, 1.0);
}

static void check_order(const FsReport *rep, const char **ids, int n)
{
    CHECK(rep->n_rows == n);
    for (int i = 0; i < n && i < rep->n_rows; i++) {
        CHECK_MSG(!strcmp(rep->rows[i].id, ids[i]), "rank %d: %s, expected %s", i + 1,
                  rep->rows[i].id, ids[i]);
        CHECK(rep->rows[i].rank == i + 1);
    }
}

static void test_ranking(void)
{
    FsJournal j;
    ranking_journal(&j);
    FsReportSpec spec = {FS_METRIC_Q3, 3, 0, 10, NULL, 0, 0, {0}, 0, 0};
    FsReport rep;
    report_build(&rep, &j, &spec);
    const char *q3_order[] = {"bb", "aa", "cc", "gin", "ddiv", "ediv", "ffail", "hfold"};
    check_order(&rep, q3_order, 8);
    const FsReportRow *aa = &rep.rows[1];
    CHECK(aa->status == FS_TRIAL_OK && aa->n_done == 3);
    CHECK_NEAR(aa->mean, 0.75, 1e-15);
    /* Population std of 0.5, 0.75, 1.0: sqrt((0.0625 + 0 + 0.0625) / 3). */
    CHECK_NEAR(aa->std, 0.20412414523193148, 1e-15);
    CHECK_NEAR(rep.rows[0].mean, 11.0 / 12.0, 1e-15);
    CHECK_NEAR(rep.rows[0].std, 0.11785113019775792, 1e-15);
    CHECK(rep.rows[2].std == 0.0);
    CHECK(rep.rows[3].status == FS_TRIAL_INCOMPLETE);
    CHECK(!strcmp(rep.rows[3].reason, "2 of 3 folds done"));
    CHECK(!rep.rows[3].folds[1].present && rep.rows[3].folds[2].present);
    CHECK(rep.rows[5].status == FS_TRIAL_DIVERGED);
    CHECK(!strcmp(rep.rows[5].reason, "fold 2 diverged at epoch 3 step 41"));
    CHECK(!strcmp(rep.rows[4].reason, "fold 0 diverged at epoch 3 step 41"));
    CHECK(rep.rows[6].status == FS_TRIAL_FAILED && !strcmp(rep.rows[6].reason, "out of memory"));
    CHECK(rep.rows[7].status == FS_TRIAL_FAILED);
    CHECK(!strcmp(rep.rows[7].reason, "fold 1 failed: window 4 is even"));
    CHECK(rep.rows[0].seconds == 3.0 && rep.rows[0].n_params == 10 && rep.rows[0].index == 1);
    CHECK(rep.n_folds_done == 3 + 3 + 3 + 2 + 1 + 3 + 1);
    report_free(&rep);

    /* By loss, ascending: gin 0.05 is incomplete, so after the complete ones. */
    spec.metric = FS_METRIC_LOSS;
    report_build(&rep, &j, &spec);
    const char *loss_order[] = {"cc", "aa", "bb", "gin", "ddiv", "ediv", "ffail", "hfold"};
    check_order(&rep, loss_order, 8);
    CHECK_NEAR(rep.rows[0].mean, 0.2f, 1e-9);
    CHECK(rep.rows[0].std == 0.0);
    report_free(&rep);
    journal_close(&j);
}

/* Ties by index even when ids sort the other way; a trial with no trial
 * record (orphan fold) is still listed. */
static void test_ties_and_orphans(void)
{
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, tmp_dir("ties"), &err) == 0);
    add_trial(&j, "zz", 0, 1);
    add_trial(&j, "yy", 1, 1);
    add_trial(&j, "xx", 2, 1);
    const char *ids[] = {"xx", "yy", "zz"};
    for (int t = 0; t < 3; t++)
        for (int f = 0; f < 2; f++) add_fold(&j, ids[t], f, FS_FIT_OK, 1, 2, 1.0f, 1, 1, 0.5);
    add_fold(&j, "orphan", 0, FS_FIT_OK, 2, 2, 1.0f, 1, 1, 0.5);
    add_fold(&j, "orphan", 1, FS_FIT_OK, 2, 2, 1.0f, 1, 1, 0.5);
    FsReportSpec spec = {FS_METRIC_Q3, 2, 0, 0, NULL, 0, 0, {0}, 0, 0};
    FsReport rep;
    report_build(&rep, &j, &spec);
    const char *order[] = {"orphan", "zz", "yy", "xx"};
    check_order(&rep, order, 4);
    CHECK(rep.rows[0].index == -1 && !strcmp(rep.rows[0].config, "{}"));
    report_free(&rep);

    /* A predefined split: one fold, id FS_FOLD_PREDEFINED. */
    add_trial(&j, "pre", 3, 1);
    add_fold(&j, "pre", FS_FOLD_PREDEFINED, FS_FIT_OK, 3, 4, 0.5f, 2, 3, 2.0);
    FsReportSpec pspec = {FS_METRIC_Q3, 1, 1, 0, NULL, 0, 0, {0}, 0, 0};
    report_build(&rep, &j, &pspec);
    CHECK(rep.rows[0].status == FS_TRIAL_OK && !strcmp(rep.rows[0].id, "pre"));
    CHECK(rep.rows[0].folds[0].fold == FS_FOLD_PREDEFINED && rep.rows[0].mean == 0.75);
    CHECK(rep.rows[1].status == FS_TRIAL_INCOMPLETE); /* the others have no predefined fold */
    report_free(&rep);
    journal_close(&j);
}

/* A small journal for exact output: ok, diverged, incomplete; 2 folds. */
static void small_journal(FsJournal *j, const char *dir)
{
    FsErr err = {0};
    CHECK(journal_open(j, dir, &err) == 0);
    add_trial(j, "a1", 0, 1234);
    add_fold(j, "a1", 0, FS_FIT_OK, 1, 2, 0.5f, 3, 5, 10.25);
    add_fold(j, "a1", 1, FS_FIT_OK, 1, 1, 0.25f, 4, 4, 2.25);
    add_trial(j, "b2", 1, 99);
    add_fold(j, "b2", 0, FS_FIT_OK, 3, 4, 0.75f, 2, 6, 1.0);
    add_fold(j, "b2", 1, FS_FIT_DIVERGED, 1, 4, 1.5f, 1, 2, 1.0);
    add_trial(j, "c3", 2, 7);
    add_fold(j, "c3", 1, FS_FIT_OK, 3, 4, 0.75f, 2, 2, 0.5);
}

/* Line i (0-based) of text into out. */
static const char *line_of(const char *text, int i, char *out, size_t n)
{
    const char *p = text;
    while (i-- > 0 && p) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) {
        out[0] = '\0';
        return out;
    }
    size_t len = strcspn(p, "\n");
    if (len >= n) len = n - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

static char *render(const FsReport *rep, FsReportFormat fmt, int top)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    report_write(rep, fmt, top, f);
    fclose(f);
    return buf;
}

#define CHECK_LINE(text, i, want)                                                                  \
    do {                                                                                           \
        char got_[2048];                                                                           \
        line_of((text), (i), got_, sizeof got_);                                                   \
        CHECK_MSG(!strcmp(got_, (want)), "line %d:\n got  [%s]\n want [%s]", (i), got_, (want));   \
    } while (0)

#define CHECK_PREFIX(s, p)                                                                         \
    CHECK_MSG(!strncmp((s), (p), strlen(p)), "[%s] lacks prefix [%s]", (s), (p))

static void test_formats(void)
{
    FsJournal j;
    small_journal(&j, tmp_dir("small"));
    FsReportSpec spec = {FS_METRIC_Q3, 2, 0, 4, NULL, 0, 0, {0}, 0, 0};
    FsReport rep;
    report_build(&rep, &j, &spec);
    const char *arch = "w15 conv64x7 relu > drop0.2 > dense32 relu | adam lr0.001 b8";

    /* --wide: every column whole, one line a trial; Q3 in percent (std in
     * points), the pooled per-class MCC (0 where undefined, as metrics has it). */
    char *t = render(&rep, FS_REPORT_WIDE, 0);
    CHECK(tp_count(t, "\n") == 5 + 3); /* and the legend of a mean over fewer folds: "(1/2)" */
    CHECK_LINE(t, 0,
               "rank  id  status       q3 mean %   std  fold0  fold1  epochs best/ran  mcc H E C          seconds  params"
               "  architecture                                                  note");
    CHECK_LINE(t, 2,
               "   1  a1  ok                75.0  25.0   50.0  100.0  3/5 4/4          0.000 0.000 0.000     12.5    1234"
               "  w15 conv64x7 relu > drop0.2 > dense32 relu | adam lr0.001 b8");
    CHECK_LINE(t, 3,
               "   2  c3  incomplete  75.0 (1/2)   0.0      -   75.0  - 2/2            0.000 0.000 0.000      0.5       7"
               "  w15 conv64x7 relu > drop0.2 > dense32 relu | adam lr0.001 b8  1 of 2 folds done");
    CHECK_LINE(t, 4,
               "   3  b2  diverged    75.0 (1/2)   0.0   75.0    div  2/6 1/2          0.000 0.000 0.000      2.0      99"
               "  w15 conv64x7 relu > drop0.2 > dense32 relu | adam lr0.001 b8  fold 1 diverged at epoch 3 step 41");
    char l1[2048];
    line_of(t, 1, l1, sizeof l1);
    CHECK(strspn(l1, "-") == strlen(l1) && strlen(l1) > 120);
    free(t);
    /* The table: within 120 columns (no epochs or seconds), the
     * architecture and the note wrapped in theirs. */
    t = render(&rep, FS_REPORT_TABLE, 0);
    CHECK_LINE(t, 0, "rank  id  status       q3 mean %   std  fold0  fold1  params  architecture                 note");
    CHECK_LINE(t, 2, "   1  a1  ok                75.0  25.0   50.0  100.0    1234  w15 conv64x7 relu > drop0.2");
    CHECK_LINE(t, 3, "                                                              > dense32 relu");
    CHECK_LINE(t, 4, "                                                              | adam lr0.001 b8");
    CHECK_LINE(t, 5, "   2  c3  incomplete  75.0 (1/2)   0.0      -   75.0       7  w15 conv64x7 relu > drop0.2  1 of 2 folds done");
    for (int i = 0; i < tp_count(t, "\n"); i++) {
        line_of(t, i, l1, sizeof l1);
        CHECK_MSG(strlen(l1) <= FS_REPORT_TABLE_WIDTH, "line %d has %zu columns: %s", i, strlen(l1), l1);
    }
    free(t);

    char *m = render(&rep, FS_REPORT_MD, 0);
    CHECK(tp_count(m, "\n") == 5 + 3);
    CHECK_LINE(
        m, 0,
        "| rank | id | status | q3 mean % | std | +-95% | vs best | tied | fold0 | fold1 | epochs best/ran | mcc H E C | seconds | params "
        "| architecture | note |");
    CHECK_LINE(m, 1,
               "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | --- | ---: | ---: | --- | --- |");
    CHECK_LINE(m, 2,
               "| 1 | a1 | ok | 75.0 | 25.0 | - | - | - | 50.0 | 100.0 | 3/5 4/4 | 0.000 0.000 0.000 | 12.5 | 1234 "
               "| w15 conv64x7 relu > drop0.2 > dense32 relu \\| adam lr0.001 b8 |  |");
    free(m);

    char *c = render(&rep, FS_REPORT_CSV, 0);
    CHECK(tp_count(c, "\n") == 4);
    CHECK_LINE(
        c, 0,
        "rank,id,index,status,metric,mean,std,ci95_lo,ci95_hi,p_vs_best,tied_with_best,folds_done,seeds,mcc_H,mcc_E,mcc_C,fold0_q3,fold0_loss,fold0_best_epoch,"
        "fold0_epochs,fold0_status,fold1_q3,fold1_loss,fold1_best_epoch,fold1_epochs,fold1_status,"
        "seconds,gpu_path,params,architecture,note,config");
    char want[2048];
    snprintf(want, sizeof want,
             "1,a1,0,ok,q3,0.75,0.25,,,,,2,1,0,0,0,0.5,0.5,3,5,ok,1,0.25,4,4,ok,12.500,cpu,1234,%s,,\"%s\"", arch,
             "{\"\"data\"\":{\"\"split\"\":\"\"folds\"\"},\"\"model\"\":{\"\"init\"\":\"\"he\"\","
             "\"\"layers\"\":"
             "[{\"\"activation\"\":\"\"relu\"\",\"\"filters\"\":64,\"\"kind\"\":\"\"conv1d\"\","
             "\"\"width\"\":7},"
             "{\"\"kind\"\":\"\"dropout\"\",\"\"rate\"\":0.2},{\"\"activation\"\":\"\"relu\"\","
             "\"\"kind\"\":"
             "\"\"dense\"\",\"\"units\"\":32}],\"\"window\"\":15},\"\"training\"\":{\"\"batch_"
             "size\"\":8,"
             "\"\"learning_rate\"\":0.001,\"\"optimizer\"\":\"\"adam\"\"}}");
    CHECK_LINE(c, 1, want);
    line_of(c, 2, want, sizeof want);
    CHECK_PREFIX(want, "2,c3,2,incomplete,q3,0.75,0,,,,,1,1,0,0,0,,,,,missing,0.75,0.75,2,2,ok,0.500,cpu,7,w15 ");
    line_of(c, 3, want, sizeof want);
    CHECK_PREFIX(
        want, "3,b2,1,diverged,q3,0.75,0,,,,,2,1,0,0,0,0.75,0.75,2,6,ok,0.25,1.5,1,2,diverged,2.000,cpu,99,w15 ");
    CHECK_CONTAINS(want, ",fold 1 diverged at epoch 3 step 41,");
    free(c);
    char *top = render(&rep, FS_REPORT_CSV, 1);
    CHECK(tp_count(top, "\n") == 2);
    free(top);
    top = render(&rep, FS_REPORT_WIDE, 2);
    CHECK(tp_count(top, "\n") == 4 + 3);
    /* The incomplete trial's mean is over 1 of 2 folds: marked, and said so. */
    CHECK_CONTAINS(top, "75.0 (1/2)");
    CHECK_CONTAINS(top, "(n/2) after a mean: over n of the 2 folds (a pruned, incomplete or diverged trial)");
    free(top);

    /* JSON: parses with the journal's reader; the documented fields. */
    char *js = render(&rep, FS_REPORT_JSON, 0);
    FsJsonDoc d;
    char why[128];
    CHECK_MSG(json_parse(&d, js, strlen(js), why, sizeof why) == 0, "%s", why);
    if (d.root) {
        CHECK(d.root->type == FS_JSON_ARRAY && d.root->n == 3);
        const FsJson *o = json_at(d.root, 0);
        long long x;
        double v;
        CHECK(json_i64(json_get(o, "version"), &x) == 0 && x == 1);
        CHECK(json_i64(json_get(o, "rank"), &x) == 0 && x == 1);
        CHECK(!strcmp(json_get(o, "id")->str, "a1"));
        CHECK(!strcmp(json_get(o, "status")->str, "ok"));
        CHECK(json_i64(json_get(o, "params"), &x) == 0 && x == 1234);
        CHECK(json_f64(json_get(o, "seconds"), &v) == 0 && v == 12.5);
        const FsJson *cfg = json_get(o, "config");
        CHECK(cfg && cfg->type == FS_JSON_OBJECT);
        char *cc = json_compact(cfg);
        CHECK(!strcmp(cc, CFG));
        free(cc);
        const FsJson *met = json_get(o, "metric");
        CHECK(!strcmp(json_get(met, "name")->str, "q3"));
        CHECK(json_f64(json_get(met, "mean"), &v) == 0 && v == 0.75);
        CHECK(json_f64(json_get(met, "std"), &v) == 0 && v == 0.25);
        const FsJson *folds = json_get(o, "folds");
        CHECK(folds && folds->type == FS_JSON_ARRAY && folds->n == 2);
        const FsJson *f1 = json_at(folds, 1);
        CHECK(json_i64(json_get(f1, "fold"), &x) == 0 && x == 1);
        CHECK(json_f64(json_get(f1, "q3"), &v) == 0 && v == 1.0);
        CHECK(json_f64(json_get(f1, "loss"), &v) == 0 && v == 0.25);
        CHECK(json_i64(json_get(f1, "epochs"), &x) == 0 && x == 4);
        CHECK(json_i64(json_get(f1, "best_epoch"), &x) == 0 && x == 4);
        CHECK(!strcmp(json_get(f1, "status")->str, "ok"));
        const FsJson *o2 = json_at(d.root, 1);
        CHECK(!strcmp(json_get(o2, "status")->str, "incomplete"));
        const FsJson *missing = json_at(json_get(o2, "folds"), 0);
        CHECK(!strcmp(json_get(missing, "status")->str, "missing"));
        CHECK(json_get(missing, "q3")->type == FS_JSON_NULL);
        const FsJson *o3 = json_at(d.root, 2);
        CHECK(!strcmp(json_get(o3, "reason")->str, "fold 1 diverged at epoch 3 step 41"));
        const FsJson *dv = json_at(json_get(o3, "folds"), 1);
        CHECK(json_i64(json_get(dv, "diverged_step"), &x) == 0 && x == 41);
        json_free(&d);
    }
    free(js);
    report_free(&rep);

    /* An empty journal: valid JSON, a header-only CSV. */
    FsJournal e;
    FsErr err = {0};
    CHECK(journal_open(&e, tmp_dir("empty"), &err) == 0);
    report_build(&rep, &e, &spec);
    js = render(&rep, FS_REPORT_JSON, 0);
    CHECK(!strcmp(js, "[]\n"));
    free(js);
    c = render(&rep, FS_REPORT_CSV, 0);
    CHECK(tp_count(c, "\n") == 1);
    free(c);
    report_free(&rep);
    journal_close(&e);
    journal_close(&j);
}

static void test_files(void)
{
    FsJournal j;
    const char *dir = tmp_dir("files");
    small_journal(&j, dir);
    FsReportSpec spec = {FS_METRIC_LOSS, 2, 0, 4, NULL, 0, 0, {0}, 0, 0};
    FsErr err = {0};
    CHECK(report_write_files_spec(dir, &j, &spec, &err) == 0);
    CHECK(report_write_files_spec(dir, &j, &spec, &err) == 0); /* over the old ones */
    CHECK_MSG(!err.set, "%s", err.msg);
    const char *names[] = {"leaderboard.md", "leaderboard.csv", "leaderboard.json"};
    for (int i = 0; i < 3; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        struct stat st;
        CHECK_MSG(stat(p, &st) == 0 && st.st_size > 50, "%s", p);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c tmp >/dev/null", dir);
    CHECK(system(cmd) != 0); /* no temporary left behind */
    char p[700];
    snprintf(p, sizeof p, "%s/leaderboard.json", dir);
    FILE *f = fopen(p, "rb");
    char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
    FsJsonDoc d;
    CHECK(json_parse(&d, buf, n, NULL, 0) == 0);
    if (d.root) {
        const FsJson *o = json_at(d.root, 0);
        CHECK(!strcmp(json_get(o, "id")->str, "a1")); /* loss 0.375 beats 0.75 */
        CHECK(!strcmp(json_get(json_get(o, "metric"), "name")->str, "loss"));
        json_free(&d);
    }
    FsErr e2 = {0};
    CHECK(report_write_files_spec(tmp_dir("no/such/dir"), &j, &spec, &e2) == -1);
    CHECK_CONTAINS(e2.msg, "leaderboard.md");
    journal_close(&j);
}

static void test_arch_summary(void)
{
    char s[96];
    report_arch_summary(CFG, s, sizeof s);
    CHECK(!strcmp(s, "w15 conv64x7 relu > drop0.2 > dense32 relu | adam lr0.001 b8"));
    report_arch_summary(
        "{\"model\":{\"layers\":[{\"kind\":\"highway\",\"width\":5,\"activation\":\"swish\"},"
        "{\"kind\":\"batchnorm\",\"epsilon\":0.001}]}}",
        s, sizeof s);
    CHECK(!strcmp(s, "hw5 swish > bn"));
    report_arch_summary("{\"model\":{\"layers\":[{\"kind\":\"conv1d\",\"filters\":8,\"width\":3,"
                        "\"activation\":\"elu\"},{\"epsilon\":0.001,\"kind\":\"layernorm\"}]}}",
                        s, sizeof s);
    CHECK(!strcmp(s, "conv8x3 elu > ln"));
    report_arch_summary("{\"model\":{\"layers\":[{\"bidirectional\":true,\"kind\":\"gru\",\"units\":64},"
                        "{\"bidirectional\":false,\"kind\":\"gru\",\"units\":8}]}}",
                        s, sizeof s);
    CHECK_MSG(!strcmp(s, "bigru64 > gru8"), "%s", s);
    /* An attention layer as a trial config writes it (sweep/config.c): heads x key_dim. */
    report_arch_summary("{\"model\":{\"layers\":[{\"dropout\":0.1,\"epsilon\":0.001,\"heads\":4,\"key_dim\":16,"
                        "\"kind\":\"attention\",\"max_distance\":32}]}}",
                        s, sizeof s);
    CHECK_MSG(!strcmp(s, "att4x16"), "%s", s);
    report_arch_summary("not json", s, sizeof s);
    CHECK(!strcmp(s, ""));
    char tiny[12];
    report_arch_summary(CFG, tiny, sizeof tiny);
    CHECK(!strcmp(tiny, "w15 conv..."));
}

/* ---------------------------------------------------------------------- */
/* The commands through the binary                                          */

static void test_cli(void)
{
    if (access(FS_TEST_BIN, X_OK) != 0) {
        printf("note: %s not built; command tests skipped\n", FS_TEST_BIN);
        return;
    }
    CHECK(tp_run("leaderboard --help") == 0);
    CHECK_CONTAINS(out_text, "usage: foldsweep leaderboard DIR");
    CHECK(tp_run("status --help") == 0);
    CHECK_CONTAINS(out_text, "usage: foldsweep status DIR");
    CHECK(tp_run("help leaderboard") == 0);
    CHECK(tp_run("leaderboard") == 2);
    CHECK_CONTAINS(err_text, "missing the run folder");
    CHECK(tp_run("status") == 2);
    CHECK(tp_run("leaderboard a b") == 2);
    CHECK(tp_run("leaderboard --bogus x") == 2);
    CHECK_CONTAINS(err_text, "unknown option --bogus");
    CHECK(tp_run("leaderboard x --format xml") == 2);
    CHECK_CONTAINS(err_text, "unknown --format");
    CHECK(tp_run("leaderboard x --top 0") == 2);
    CHECK(tp_run("leaderboard x --top") == 2);
    CHECK(tp_run("leaderboard x --top=3x") == 2);
    CHECK(tp_run("status --bogus x") == 2);

    CHECK(tp_run("leaderboard '%s'", tmp_dir("nonexistent")) == 1);
    CHECK_CONTAINS(err_text, "no such run folder");
    CHECK(tp_run("status '%s'", tmp_dir("nonexistent")) == 1);
    CHECK_CONTAINS(err_text, "no such run folder");
    /* The wrong kind of path says what it is and what was meant. */
    CHECK(tp_run("status '%s/sweeps/quickstart.yaml'", FS_TEST_SRC_DIR) == 1);
    CHECK_CONTAINS(err_text, "quickstart.yaml is a sweep file, not a run folder: foldsweep run writes its run "
                             "folder, runs/quickstart unless --out or run.out names another");
    const char *holder = tmp_dir("holder");
    char inner[700];
    snprintf(inner, sizeof inner, "%s/r1", holder);
    CHECK(mkdir(holder, 0755) == 0 && mkdir(inner, 0755) == 0);
    snprintf(inner, sizeof inner, "%s/r1/journal.jsonl", holder);
    tp_write_text(inner, "");
    CHECK(tp_run("leaderboard '%s'", holder) == 1);
    CHECK_CONTAINS(err_text, "has no journal.jsonl: not a run folder, but it holds 1: ");
    CHECK_CONTAINS(err_text, "holder/r1");
    CHECK(tp_run("plan '%s'", holder) == 1);
    CHECK_CONTAINS(err_text, "holder is a folder; expected a sweep file");

    /* A folder with a journal but neither sweep.yaml nor a run record. */
    const char *small = tmp_dir("small");
    char small_dir[600];
    snprintf(small_dir, sizeof small_dir, "%s", small);
    CHECK(tp_run("leaderboard '%s'", small_dir) == 1);
    CHECK_CONTAINS(err_text, "sweep.yaml");
    /* An unreadable sweep.yaml is an error naming it. */
    char p[700];
    snprintf(p, sizeof p, "%s/sweep.yaml", small_dir);
    tp_write_text(p, "this: [is not\n");
    CHECK(tp_run("leaderboard '%s'", small_dir) == 1);
    CHECK_CONTAINS(err_text, "sweep.yaml");
    unlink(p);

    /* With a run record: the leaderboard and status work without sweep.yaml. */
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, small_dir, &err) == 0);
    CHECK(journal_append_run(&j, 5, 2, "q3", 0, &err) == 0);
    journal_close(&j);
    CHECK(tp_run("leaderboard '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "   1  a1  ok ");
    CHECK_CONTAINS(err_text, "note:");
    CHECK(tp_run("leaderboard '%s' --format json --top 2", small_dir) == 0);
    FsJsonDoc d;
    CHECK(json_parse(&d, out_text, strlen(out_text), NULL, 0) == 0);
    if (d.root) CHECK(d.root->n == 2);
    json_free(&d);
    CHECK(tp_run("leaderboard --format=csv '%s'", small_dir) == 0);
    CHECK(tp_count(out_text, "\n") == 4);
    CHECK(tp_run("leaderboard --format md '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "| 1 | a1 | ok |");
    CHECK(tp_run("status '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "sweep        5 trials x 2 folds, metric q3");
    /* No run holds the folder: the begun trial is interrupted, not in flight. */
    CHECK_CONTAINS(out_text,
                   "trials       2 done (1 ok, 1 diverged, 0 failed), 1 interrupted, 2 left");
    CHECK_CONTAINS(out_text, "folds        5 of 10");
    CHECK_CONTAINS(out_text, "best so far  a1 q3 75.0% (std 25.0% over folds)");
    CHECK_CONTAINS(out_text, "elapsed      ");

    /* sweep.yaml, when there, is the source (here: metric loss, 2 folds, 2 trials). */
    snprintf(p, sizeof p, "%s/sweep.yaml", small_dir);
    tp_write_text(p, "data:\n  inputs: [absent.txt]\n  format: uci\n  window: 5\n  folds: 2\n"
                     "model:\n  depth: [1]\n  filters: [4, 8]\n  kernel: [3]\n  dense: [0]\n"
                     "training:\n  epochs: 2\nrun:\n  metric: loss\n");
    CHECK(tp_run("leaderboard '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "loss mean");
    CHECK(strstr(err_text, "note:") == NULL);
    CHECK(tp_run("status '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "sweep        2 trials x 2 folds, metric loss\n");

    /* A corrupt line in the middle: reported (file, line, what, the way
     * out) and the rest shown; `repair` then gives a sound journal. */
    char board_before[sizeof out_text];
    CHECK(tp_run("leaderboard '%s' --format csv", small_dir) == 0);
    snprintf(board_before, sizeof board_before, "%s", out_text);
    snprintf(p, sizeof p, "%s/journal.jsonl", small_dir);
    FILE *f = fopen(p, "r+b");
    fseek(f, 3, SEEK_SET);
    fputc('X', f); /* line 1's JSON, checksum unchanged */
    fclose(f);
    CHECK(tp_run("leaderboard '%s' --format csv", small_dir) == 0);
    CHECK_CONTAINS(err_text, "journal.jsonl:1: ");
    CHECK_CONTAINS(err_text, "foldsweep repair");
    /* Line 1 is a1's first fold: a1 lost a fold, a2 is unchanged. */
    char *a2 = strstr(board_before, "\n2,");
    CHECK_MSG(a2 && strstr(out_text, a2 + 1), "the rest of the journal was not shown:\n%s\nbefore:\n%s", out_text,
              board_before);
    CHECK(tp_run("status '%s'", small_dir) == 0);
    CHECK_CONTAINS(err_text, "journal.jsonl:1: ");
    CHECK_CONTAINS(out_text, "2 trials x 2 folds");
    CHECK(tp_run("repair '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "1 damaged line dropped");
    CHECK(tp_run("leaderboard '%s' --format csv", small_dir) == 0);
    CHECK(strstr(err_text, "damaged") == NULL);
    CHECK(tp_run("repair '%s'", small_dir) == 0);
    CHECK_CONTAINS(out_text, "nothing to do");

    /* An empty run folder (no journal yet). */
    mkdir(tmp_dir("bare"), 0777);
    CHECK(tp_run("status '%s'", tmp_dir("bare")) == 1);
    CHECK_CONTAINS(err_text, "journal.jsonl");
}

int main(void)
{
    tp_tmpdir(tmp_root, sizeof tmp_root, "report");
    test_ranking();
    test_ties_and_orphans();
    test_formats();
    test_files();
    test_arch_summary();
    test_cli();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    return test_finish();
}
