/*
 * test_html.c: the HTML report (report/html*.c) as text. A run whose sweep
 * file is named `<script>alert(1)</script>.yaml` and whose data file and
 * run folder carry markup too leaves a final report.html (every section,
 * one learning-curve chart of 3 series per fold for each trial, the folds
 * in shades of their own with a legend entry each, a strip
 * plot per swept option, no reload, every such string escaped); a run
 * killed mid-way leaves a live one (it reloads itself); `foldsweep report`
 * writes the same page on demand. A journal written by hand gives the
 * report of a run with a diverged, a failed, a pruned, an incomplete and an
 * unstarted trial: statuses with reasons (escaped), the divergence, the stop
 * rule's and the pruner's decisions marked, "incomplete" said, and the test
 * set's evaluations and refit in a section of their own (escaped, oldest
 * first, apart from the ranking). A journal of four complete trials with
 * run.objectives [q3, params] gives the leaderboard's score chart (interval
 * bars, the tied ones marked) and a Pareto plot on a log parameter axis
 * whose front is the three trials not dominated. Rerunning the finished run
 * keeps the time profile. The browser's view of the same pages is
 * tests/report_browser.py.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <sys/stat.h>

#include "report/report.h"
#include "test_proc.h"

static char tmp[256];

/* The text of <section id="ID"> ... </section> (malloc'd; "" if absent). */
static char *section(const char *html, const char *id)
{
    char open[64];
    snprintf(open, sizeof open, "<section id=\"%s\"", id);
    const char *a = html ? strstr(html, open) : NULL;
    const char *b = a ? strstr(a, "</section>") : NULL;
    return a && b ? strndup(a, (size_t)(b - a)) : strdup("");
}

static int count(const char *s, const char *sub) { return tp_count(s, sub); }

/* CHECK_CONTAINS without printing a whole page when it fails. */
#define HAS(s, sub) CHECK_MSG((s) && strstr((s), (sub)), "the text lacks \"%s\"", (sub))

/* Each learning-curve chart in s tells its k folds apart (issue 26): every
 * series (train, val, q3) drawn in k different strokes, and a legend entry
 * per fold. Returns the number of charts that do. */
static int charts_with_fold_shades(const char *s, int k)
{
    int good = 0;
    for (const char *c = strstr(s, "class=\"chart curves\""); c; c = strstr(c + 1, "class=\"chart curves\"")) {
        const char *end = strstr(c, "</svg>");
        int ok = end != NULL;
        static const char *const cls[] = {"train", "val", "q3"};
        for (int i = 0; i < 3 && ok; i++) {
            char pat[64], seen[16][8];
            int n = 0, paths = 0;
            snprintf(pat, sizeof pat, "<path class=\"series %s\" stroke=\"", cls[i]);
            for (const char *p = strstr(c, pat); p && p < end; p = strstr(p + 1, pat), paths++) {
                char col[8] = "";
                sscanf(p + strlen(pat), "%7[^\"]", col);
                int dup = 0;
                for (int j = 0; j < n; j++) dup |= !strcmp(seen[j], col);
                if (!dup && n < 16) memcpy(seen[n++], col, 8);
            }
            ok = paths == k && n == k;
        }
        for (int f = 0; f < k && ok; f++) {
            char want[32];
            snprintf(want, sizeof want, "\">fold %d</text>", f);
            const char *l = strstr(c, want);
            ok = l && l < end;
        }
        good += ok;
    }
    return good;
}

/* ---------------------------------------------------------------------- */
/* A real run, with markup in every name a file gives                      */

static const char *XSS_DIR = "<script>alert(1)<";            /* with the file: <script>alert(1)</script>.yaml */
static const char *DATA_NAME = "<img src=x onerror=alert(2)>.txt"; /* the data file */

static void run_report(void)
{
    char dir[400], sweep[600], data[600], run[600], log[400], text[2048];
    snprintf(dir, sizeof dir, "%s/%s", tmp, XSS_DIR);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(sweep, sizeof sweep, "%s/script>.yaml", dir);
    snprintf(data, sizeof data, "%s/%s", tmp, DATA_NAME);
    snprintf(run, sizeof run, "%s/run &amp; <b>", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    char *synth[] = {"foldsweep", "synth", "-o", data, "--proteins", "120", "--seed", "3", NULL};
    CHECK(tp_run_argv(synth, log) == 0);
    snprintf(text, sizeof text,
             "data:\n  inputs: ['%s']\n  format: records\n  window: 9\n  folds: 3\n"
             "model:\n  depth: 1\n  filters: [8, 16]\n  kernel: [3, 5]\n  dense: [0, 16]\n"
             "training:\n  epochs: 4\n  batch_size: 16\n  seed: 5\n  early_stopping: {criterion: gl, alpha: 0.5}\n",
             data);
    tp_write_text(sweep, text);

    char *argv[] = {"foldsweep", "run", sweep, "--out", run, "--threads", "2", NULL};
    CHECK(tp_run_argv(argv, log) == 0);
    char path[700];
    snprintf(path, sizeof path, "%s/report.html", run);
    char *html = tp_read_file(path, NULL);
    CHECK_MSG(html != NULL, "%s was not written", path);
    if (!html) return;
    /* Final: complete, no reload, every section. */
    HAS(html, "data-state=\"complete\"");
    CHECK(!strstr(html, "http-equiv=\"refresh\""));
    static const char *ids[] = {"leaderboard", "test", "effects", "trials", "profile", "confusion", "identity"};
    for (int i = 0; i < 7; i++) {
        char *s = section(html, ids[i]);
        CHECK_MSG(s[0], "section %s missing", ids[i]);
        CHECK_MSG(strstr(s, "<p class=\"why\">"), "section %s has no explanation", ids[i]);
        free(s);
    }
    /* 8 trials: 8 rows, 8 trial sections, each chart 3 folds x 3 series. */
    char *board = section(html, "leaderboard"), *trials = section(html, "trials");
    CHECK(count(board, "<tr") == 9);
    CHECK(count(trials, "<details class=\"trial\"") == 8);
    CHECK(count(trials, "class=\"chart curves\" data-series=\"9\"") == 8);
    CHECK(count(trials, "<path class=\"series") == 8 * 9);
    CHECK(charts_with_fold_shades(trials, 3) == 8);
    CHECK(count(trials, "<circle class=\"kept\"") == 24); /* one kept epoch per fold */
    HAS(trials, "stop: gl alpha=0.5");
    /* Options swept: filters, kernel, dense (its activation splits the same way). */
    char *eff = section(html, "effects");
    CHECK(count(eff, "class=\"chart strip\" data-series=\"2\"") == 3);
    CHECK(count(eff, "class=\"chart bars\"") == 1);
    HAS(eff, "Q3 by conv1d filters");
    HAS(eff, "Q3 by dense units");
    HAS(eff, "Q3 by conv1d kernel width");
    char *prof = section(html, "profile"), *conf = section(html, "confusion"), *id = section(html, "identity");
    CHECK(count(prof, "class=\"chart bars\"") == 1 && count(prof, "class=\"chart scatter\"") == 1);
    CHECK(count(prof, "class=\"dot\"") == 24);
    CHECK(count(conf, "<table class=\"cm\">") == 5);
    CHECK(count(conf, "MCC") >= 5);
    HAS(id, "1 MPI rank, 2 worker threads");
    HAS(id, "<dt>backend</dt><dd>cpu");
    HAS(id, "foldsweep</dt><dd>version ");
    /* Escaped, never markup: the sweep's path, the data's, the run folder's. */
    HAS(id, "&lt;script&gt;alert(1)&lt;/script&gt;.yaml");
    HAS(id, "&lt;img src=x onerror=alert(2)&gt;.txt");
    HAS(html, "run &amp;amp; &lt;b&gt;");
    char *test = section(html, "test");
    HAS(test, "No test data has been looked at");
    HAS(test, "No trial has been refit");
    HAS(prof, "Time of the whole run (1 session)");
    free(test);
    CHECK(!strstr(html, "<script>alert") && !strstr(html, "<img src=x") && !strstr(html, "<b>/"));
    CHECK(count(html, "<script>") == 2); /* the page's own two */
    free(board), free(trials), free(eff), free(prof), free(conf), free(id);

    /* `foldsweep report` writes the same sections, the ranks and backend
     * from the journal's run record (issue #26 item 11); the threads only
     * the run knows are left out. */
    char out[700];
    snprintf(out, sizeof out, "%s/copy.html", tmp);
    char *rep[] = {"foldsweep", "report", run, "-o", out, NULL};
    CHECK(tp_run_argv(rep, log) == 0);
    char *copy = tp_read_file(out, NULL);
    CHECK(copy && count(copy, "class=\"chart curves\" data-series=\"9\"") == 8);
    char *copy_id = section(copy ? copy : "", "identity");
    HAS(copy_id, "ranks</dt><dd>1 MPI rank</dd>");
    HAS(copy_id, "<dt>backend</dt><dd>cpu");
    HAS(copy_id, "(pid ");
    HAS(copy_id, ", 1 rank, cpu)");
    CHECK(!strstr(copy_id, "not recorded"));
    free(copy_id);
    CHECK(copy && strstr(copy, "data-state=\"complete\""));
    free(copy);
    free(html);

    /* The same command again (what adding a test: section takes): nothing
     * to train, and the profile and the report keep the run's time. */
    CHECK(tp_run_argv(argv, log) == 0);
    html = tp_read_file(path, NULL);
    prof = section(html, "profile");
    HAS(prof, "Time of the whole run (1 session)");
    CHECK_MSG(!strstr(prof, "Whole run: 0 training") && !strstr(prof, "last session: 0 with"),
              "the rerun emptied the profile");
    CHECK(count(prof, "<td class=\"n\">0</td>") == 0);
    free(prof), free(html);
    snprintf(path, sizeof path, "%s/profile.txt", run);
    CHECK(tp_count_in_file(path, "profile of the whole run (1 session)") == 1);
    CHECK(tp_count_in_file(path, "(24 folds)") == 2);
    CHECK(tp_run("report") == 2);
    CHECK_CONTAINS(err_text, "missing the run folder RUN");
    CHECK(tp_run("report '%s/nowhere'", tmp) == 1);
    CHECK(tp_run("report '%s' -o '%s/no/such/dir/r.html'", run, tmp) == 1);

    /* Killed mid-run: the live page (written after a finished trial) stays, reloading itself. */
    char live[600], live_html[700];
    snprintf(live, sizeof live, "%s/live", tmp);
    snprintf(live_html, sizeof live_html, "%s/report.html", live);
    char *argv2[] = {"foldsweep", "run", sweep, "--out", live, "--threads", "1", NULL};
    pid_t pid = tp_spawn(argv2, log);
    struct stat st;
    for (int i = 0; i < 10000 && stat(live_html, &st) != 0; i++) usleep(1000);
    kill(pid, SIGKILL);
    int rc = tp_wait(pid);
    char *lv = tp_read_file(live_html, NULL);
    CHECK_MSG(lv != NULL, "no live report.html appeared");
    if (lv && rc == 128 + SIGKILL) {
        HAS(lv, "<meta http-equiv=\"refresh\"");
        HAS(lv, "data-state=\"live\"");
        HAS(lv, "The run is in progress.");
    } else {
        printf("note: the run ended before it was killed; the live page was not checked\n");
    }
    free(lv);
}

/* The report of journal j (closed here), in memory (to free). */
static char *html_of(FsJournal *j, const char *dir, const FsReportSpec *spec)
{
    char *html = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&html, &n);
    report_html_write(out, dir, j, spec, NULL);
    fclose(out);
    journal_close(j);
    return html;
}

/* ---------------------------------------------------------------------- */
/* A journal by hand: ok, diverged, failed, incomplete, and one not started */

static const char *CFG =
    "{\"data\":{\"split\":\"kfold\"},\"model\":{\"init\":\"he\",\"layers\":["
    "{\"activation\":\"relu\",\"filters\":%d,\"kind\":\"conv1d\",\"width\":5}],\"window\":9},"
    "\"training\":{\"batch_size\":8,\"early_stopping\":{\"alpha\":5,\"criterion\":\"gl\"},\"epochs\":6,"
    "\"learning_rate\":%s,\"optimizer\":\"adam\",\"seed\":1}}";

static void add_trial(FsJournal *j, const char *id, int index, int filters, const char *lr)
{
    char cfg[800];
    snprintf(cfg, sizeof cfg, CFG, filters, lr);
    FsErr err = {0};
    CHECK(journal_append_trial(j, id, index, 100, cfg, &err) == 0);
}

/* Correct helix residues added to a fold's confusion: the fold's Q3 (the
 * report takes it from the confusion) for pareto_report. */
static int extra_helix;

/* A fold of `epochs` epochs; diverged: the loss is NaN from that epoch on. */
static void add_fold(FsJournal *j, const char *id, int fold, FsFitStatus status, int epochs, int halted)
{
    FsFitResult r;
    train_result_alloc(&r, epochs);
    r.status = status;
    r.epochs = epochs;
    r.best_epoch = status == FS_FIT_DIVERGED ? 1 : epochs - 1;
    r.halted_by = halted;
    for (int e = 0; e < epochs; e++) {
        r.curves.train_loss[e] = 1.0f - 0.05f * (float)e;
        r.curves.val_loss[e] = 1.0f - 0.03f * (float)e;
        r.curves.val_q3[e] = 0.5f + 0.02f * (float)e;
        r.curves.seconds[e] = 0.1f * (float)(e + 1);
    }
    if (status == FS_FIT_DIVERGED) {
        r.diverged_epoch = epochs;
        r.diverged_step = 41;
        r.curves.train_loss[epochs - 1] = r.curves.val_loss[epochs - 1] = NAN;
    }
    r.best_val_loss = r.curves.val_loss[r.best_epoch - 1];
    r.best_confusion[0][0] = 60 + (uint64_t)extra_helix, r.best_confusion[1][1] = 20, r.best_confusion[2][2] = 50;
    r.best_confusion[0][2] = 10, r.best_confusion[2][1] = 5;
    r.train_examples = 1000, r.seconds = 0.5, r.val_seconds = 0.1;
    FsErr err = {0};
    CHECK(journal_append_fold(j, id, fold, &r, NULL, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    train_result_free(&r);
}

static void journal_report(void)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/byhand", tmp);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, 6, 3, "q3", 0x1234abcdULL, &err) == 0);
    add_trial(&j, "aaaa", 0, 8, "0.001");
    for (int f = 0; f < 3; f++) add_fold(&j, "aaaa", f, FS_FIT_OK, 6, f == 1);
    add_trial(&j, "bbbb", 1, 16, "0.5");
    add_fold(&j, "bbbb", 0, FS_FIT_OK, 6, 0);
    add_fold(&j, "bbbb", 1, FS_FIT_DIVERGED, 3, 0);
    add_fold(&j, "bbbb", 2, FS_FIT_OK, 6, 0);
    add_trial(&j, "cccc", 2, 32, "0.001");
    CHECK(journal_append_failure(&j, "cccc", "<b>out of memory</b> & \"more\" in caf\xc3\xa9 \xff\x01.", &err) == 0);
    add_trial(&j, "dddd", 3, 8, "0.01");
    add_fold(&j, "dddd", 0, FS_FIT_OK, 6, 0);
    add_trial(&j, "eeee", 4, 16, "0.01"); /* pruned inside fold 1, at epoch 3 */
    add_fold(&j, "eeee", 0, FS_FIT_OK, 6, 0);
    float curve[3] = {0.4f, 0.42f, 0.43f};
    FsCutRecord cut = {.fold = 1, .epoch = 3, .rule = "median", .value = 0.43, .threshold = 0.55,
                       .reason = "0.43 < median 0.55", .n_curve = 3, .curve = curve};
    snprintf(cut.trial, sizeof cut.trial, "eeee");
    CHECK(journal_append_cut(&j, &cut, &err) == 0);

    /* Test data looked at: the test section's ensemble and refit of aaaa,
     * an evaluate run on a file whose name is markup; aaaa refit. */
    FsModelRef refit = {.bytes = 10};
    snprintf(refit.file, sizeof refit.file, "refits/aaaa/refit.safetensors");
    CHECK(journal_append_refit(&j, "aaaa", 5, &refit, &err) == 0);
    FsEvalRecord ev = {.data_fingerprint = 0xfeedbeef12345678ULL, .proteins = 115, .scored = 26000, .overlap = 0,
                       .q3 = 0.7123, .q3_lo = 0.7001, .q3_hi = 0.7245, .sov = 0.6512};
    snprintf(ev.trial, sizeof ev.trial, "aaaa");
    snprintf(ev.models, sizeof ev.models, "ensemble");
    snprintf(ev.source, sizeof ev.source, "test");
    snprintf(ev.data, sizeof ev.data, "TS115.csv");
    CHECK(journal_append_eval(&j, &ev, &err) == 0);
    snprintf(ev.models, sizeof ev.models, "refit");
    ev.q3 = 0.7211;
    CHECK(journal_append_eval(&j, &ev, &err) == 0);
    snprintf(ev.source, sizeof ev.source, "evaluate");
    snprintf(ev.trial, sizeof ev.trial, "dddd");
    snprintf(ev.models, sizeof ev.models, "fold 0");
    snprintf(ev.data, sizeof ev.data, "<img src=x onerror=alert(3)>.csv");
    ev.overlap = 7, ev.q3 = 0.6543, ev.sov = NAN;
    CHECK(journal_append_eval(&j, &ev, &err) == 0);

    FsReportSpec spec;
    CHECK(report_spec_from_journal(&spec, &j) == 0);
    char path[500];
    snprintf(path, sizeof path, "%s/report.html", dir);
    CHECK(report_html_write_file(NULL, dir, &j, &spec, NULL, &err) == 0);
    FsReportHtmlInfo live = {0};
    live.live = 1;
    char live_path[500];
    snprintf(live_path, sizeof live_path, "%s/live.html", dir);
    CHECK(report_html_write_file(live_path, dir, &j, &spec, &live, &err) == 0);
    journal_close(&j);

    char *html = tp_read_file(path, NULL);
    CHECK(html != NULL);
    if (!html) return;
    HAS(html, "data-state=\"incomplete\"");
    HAS(html, "4 of 6 trials finished, 8 of 18 folds recorded");
    CHECK(!strstr(html, "http-equiv=\"refresh\""));
    /* A run record without ranks and backend (an earlier foldsweep's): said so. */
    char *ident = section(html, "identity");
    HAS(ident, "ranks</dt><dd>not recorded in the journal");
    HAS(ident, "backend</dt><dd>not recorded in the journal");
    free(ident);
    char *board = section(html, "leaderboard");
    CHECK(count(board, "<tr class=\"bad\">") == 3);
    HAS(board, "pruned (median) at fold 1 epoch 3: 0.43 &lt; median 0.55");
    HAS(board, "fold 1 diverged at epoch 3 step 41");
    /* Markup escaped; UTF-8 kept; a byte that is not UTF-8 and a control character replaced. */
    HAS(board, "&lt;b&gt;out of memory&lt;/b&gt; &amp; &quot;more&quot; in caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd.");
    HAS(board, "1 of 3 folds done");
    /* The pruned and the incomplete trial's means are over 1 of the 3
     * folds: marked (the pruned one's fold 0 only: fold 1 was cut), and
     * the text says they are never compared with the 3-fold means. */
    CHECK(count(board, "<span class=\"part\" title=\"over 1 of the 3 folds\">(1/3)</span>") >= 2);
    HAS(board, "a mean marked (n/3) is over n of the 3 folds, never compared with the complete trials' 3-fold means");
    HAS(board, "<th class=\"n\"><button type=\"button\">vs best</button></th>");
    CHECK(!strstr(html, "<b>out of memory"));
    char *trials = section(html, "trials");
    CHECK(count(trials, "<details class=\"trial\"") == 5);
    CHECK(count(trials, "class=\"chart curves\" data-series=\"4\"") == 1); /* fold 0, and fold 1's Q3 to the cut */
    CHECK(count(trials, "<path class=\"pruned\"") == 1);
    CHECK(count(trials, "not counted: the trial was pruned") == 2); /* folds 1 and 2 */
    CHECK(count(trials, "class=\"chart curves\" data-series=\"9\"") == 2);
    CHECK(count(trials, "class=\"chart curves\" data-series=\"3\"") == 1); /* the incomplete trial's one fold */
    CHECK(count(trials, "<text class=\"diverged\"") == 1);
    CHECK(count(trials, "<path class=\"stop\"") == 1);
    HAS(trials, "stop: gl alpha=5");
    HAS(trials, "No epoch was recorded for this trial.");
    HAS(trials, "<td>divergence</td>");
    HAS(trials, "<td>stop rule</td>");
    char *eff = section(html, "effects"), *prof = section(html, "profile"), *conf = section(html, "confusion");
    HAS(eff, "Importance needs at least three complete trials");
    CHECK(count(eff, "class=\"chart strip\"") == 2); /* filters, learning rate */
    HAS(eff, "n=2, 2 not ok"); /* 16 filters: diverged, pruned */
    HAS(prof, "No profile yet");
    /* The held-out results: their own section, oldest first, never in the ranking. */
    char *test = section(html, "test");
    HAS(test, "<p class=\"why\">");
    HAS(test, "Test data looked at 3 times.");
    CHECK(count(test, "<tr><td>") == 4); /* 3 evaluations, 1 refit */
    HAS(test, "<td>test section</td><td><a href=\"#t-aaaa\"><code>aaaa</code></a> (#1)</td><td>ensemble</td>");
    HAS(test, "<code>feedbeef12345678</code>");
    HAS(test, "<b>71.2</b></td><td class=\"n\">70.0&ndash;72.5</td><td class=\"n\">65.1</td>"); /* percent, 1 decimal */
    HAS(test, "<b>72.1</b>");
    HAS(test, "<td>evaluate</td>");
    HAS(test, "&lt;img src=x onerror=alert(3)&gt;.csv");
    HAS(test, "<td class=\"n\">-</td><td class=\"mcc\">not recorded</td><td class=\"n\">7</td>");
    CHECK(strstr(test, "<b>71.2<") < strstr(test, "<b>72.1<") && strstr(test, "<b>72.1<") < strstr(test, "<b>65.4<"));
    HAS(test, "<td class=\"n\">5</td><td><code>refits/aaaa/refit.safetensors</code>");
    CHECK(!strstr(html, "<img src=x"));
    CHECK(!strstr(board, ">71.2<") && !strstr(board, ">65.4<"));
    CHECK(strstr(html, "id=\"leaderboard\"") < strstr(html, "id=\"test\""));
    free(test);
    CHECK(count(conf, "<table class=\"cm\">") == 1);
    HAS(html, "<code>000000001234abcd</code>");
    free(board), free(trials), free(eff), free(prof), free(conf), free(html);
    html = tp_read_file(live_path, NULL);
    CHECK(html && strstr(html, "<meta http-equiv=\"refresh\" content=\"15\">"));
    CHECK(html && strstr(html, "data-state=\"live\""));
    free(html);

    /* An empty journal: a page that says so instead of empty charts. */
    snprintf(dir, sizeof dir, "%s/empty", tmp);
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, 4, 3, "q3", 1, &err) == 0);
    CHECK(report_spec_from_journal(&spec, &j) == 0);
    char *text = html_of(&j, dir, &spec);
    CHECK(count(text, "<svg") == 0);
    CHECK(count(text, "No trial is in the journal yet.") == 2);
    HAS(text, "0 of 4 trials finished");
    free(text);
}

/* ---------------------------------------------------------------------- */
/* Intervals, ties and the Pareto front (issues #29 item 5, #30 item 3)    */

/* Four complete 3-fold trials, Q3 falling from A to D, with 50000, 2000,
 * 3000 and 100 parameters (their trial records'): C has more parameters
 * than B and a lower Q3, so the front is A, B, D; the parameters span
 * decades, so their axis is logarithmic (10^2 to 10^5). */
static void pareto_report(void)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/pareto", tmp);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, 4, 3, "q3", 1, &err) == 0);
    static const char *ids[] = {"aaaa", "bbbb", "cccc", "dddd"};
    static const long params[] = {50000, 2000, 3000, 100};
    for (int t = 0; t < 4; t++) {
        char cfg[800];
        snprintf(cfg, sizeof cfg, CFG, 8 << t, "0.001");
        CHECK(journal_append_trial(&j, ids[t], t, params[t], cfg, &err) == 0);
        for (int f = 0; f < 3; f++) {
            extra_helix = 40 - 10 * t + 3 * f; /* Q3 falls from A to D, and varies over the folds */
            add_fold(&j, ids[t], f, FS_FIT_OK, 6, 0);
        }
    }
    extra_helix = 0;
    FsReportSpec spec;
    CHECK(report_spec_from_journal(&spec, &j) == 0);
    spec.n_objectives = 2, spec.objectives[0] = FS_OBJ_Q3, spec.objectives[1] = FS_OBJ_PARAMS;
    char *html = html_of(&j, dir, &spec);
    char *board = section(html, "leaderboard"), *eff = section(html, "effects");
    /* The score chart: four trials, each with its interval bar; the tied ones marked. */
    CHECK(count(board, "class=\"chart scores\"") == 1);
    CHECK(count(board, "<g class=\"trial\"") == 4);
    CHECK(count(board, "<line class=\"ci\"") == 4);
    CHECK(count(board, "<circle class=\"dot tied\"") == count(board, "<tr class=\"tied\">")); /* the legend's is "key dot tied" */
    CHECK(count(board, "<tr class=\"tied\">") >= 1);
    /* The Pareto chart: A, B and D on the front, C off it, on a log axis. */
    HAS(board, "Pareto front: q3 against params");
    CHECK(count(board, "class=\"chart pareto\"") == 1);
    CHECK(count(board, "<circle class=\"dot front\" data-trial=") == 3);
    HAS(board, "<circle class=\"dot\" data-trial=\"cccc\"");
    HAS(board, "data-xmap=\"log10 2 ");
    HAS(board, "trainable parameters (log scale)");
    /* The step line: 3 points and the 2 corners between them. */
    const char *line = strstr(board, "<path class=\"front-line\" d=\"");
    char d[400] = "";
    if (line) sscanf(line + strlen("<path class=\"front-line\" d=\""), "%399[^\"]", d);
    CHECK_MSG(d[0] == 'M' && count(d, "L") == 4, "front line \"%s\"", d);
    /* Every value of the swept filters: one trial each, so no interval of its mean; trial bars there. */
    CHECK(count(eff, "<line class=\"ci\"") == 4);
    CHECK(count(eff, "<line class=\"effect-ci\"") == 0);
    free(board), free(eff), free(html);
}

/* A sampled range (12 trials, every learning rate its own): the effects
 * chart bins it into quartiles instead of 12 one-trial categories, whose
 * "variance explained" would be 100% whatever the data. */
/* A journal of n trials, trial t with learning rate lr(t) and Q3 rising
 * with t; the effects section of its report (to free). */
static char *effects_of(const char *name, int n, double (*lr)(int))
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/%s", tmp, name);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, n, 3, "q3", 1, &err) == 0);
    for (int t = 0; t < n; t++) {
        char id[8], v[32], cfg[800];
        snprintf(id, sizeof id, "t%03d", t);
        snprintf(v, sizeof v, "%.6g", lr(t));
        snprintf(cfg, sizeof cfg, CFG, t % 2 ? 16 : 8, v);
        CHECK(journal_append_trial(&j, id, t, 100, cfg, &err) == 0);
        for (int f = 0; f < 3; f++) {
            extra_helix = 3 * t + f; /* Q3 rises with t */
            add_fold(&j, id, f, FS_FIT_OK, 6, 0);
        }
    }
    extra_helix = 0;
    FsReportSpec spec;
    CHECK(report_spec_from_journal(&spec, &j) == 0);
    char *html = html_of(&j, dir, &spec);
    char *eff = section(html, "effects");
    free(html);
    return eff;
}

static double lr_spread(int t) { return 1e-4 * (1.0 + t * 0.37); }
/* 31 of 40 at the smallest value, 9 others: quartiles of the rows would
 * all fall on it. */
static double lr_skewed(int t) { return t < 31 ? 1e-4 : 1e-4 * (2.0 + t - 31); }

/* A sampled range (12 trials, every learning rate its own): the effects
 * chart bins it into quartiles instead of 12 one-trial categories, whose
 * "variance explained" would be 100% whatever the data. */
static void binned_report(void)
{
    char *eff = effects_of("binned", 12, lr_spread);
    /* The filters alternate 8, 16 while Q3 rises with the trial: no effect.
     * Eta squared gave it 2.1%; omega squared, adjusted for chance, 0. */
    const char *q = strstr(eff, "Q3 by "), *fl = NULL;
    for (; q; q = strstr(q + 1, "Q3 by ")) /* the filters' chart, whatever the option's label */
        if (strstr(q, "filters") && strstr(q, "filters") < strchr(q, '(')) fl = q;
    CHECK_MSG(fl && !strncmp(strchr(fl, '('), "(explains 0.0%)", 15), "%.120s", fl ? fl : "(no filters chart)");
    const char *lr = strstr(eff, "Q3 by learning_rate (explains ");
    CHECK_MSG(lr != NULL, "no learning_rate chart");
    double share = lr ? atof(lr + strlen("Q3 by learning_rate (explains ")) : NAN;
    CHECK_MSG(share > 50 && share < 100, "learning_rate explains %.1f%%", share);
    HAS(eff, ", 12 values in 4 bins of about equal counts");
    /* Quartiles of the 12: 1e-4, 1.37e-4, 1.74e-4; ...; 4.33e-4, 4.7e-4, 5.07e-4. */
    HAS(eff, "0.0001 to 0.000174");
    HAS(eff, "0.000433 to 0.000507");
    CHECK(count(lr ? lr : "", "n=3") >= 4);
    CHECK(!strstr(eff, "more than 24 distinct values"));
    free(eff);
    /* Skewed: binned by the distinct values, still several bins, still shown. */
    eff = effects_of("skewed", 40, lr_skewed);
    /* Quartiles of the 10 distinct values: the first bin holds the smallest
     * two (31 + 1 trials), then 3, 2 and 3 values of a trial each. */
    HAS(eff, ", 10 values in 4 bins of about equal numbers of values");
    HAS(eff, "n=32");
    HAS(eff, "0.0001 to 0.0002");
    free(eff);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "html");
    journal_report();
    pareto_report();
    binned_report();
    run_report();
    return test_finish();
}
