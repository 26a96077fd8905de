/*
 * test_honest: held-out test evaluation end to end (docs/models.md).
 *  1. evaluate: its Q3 equals one computed here from predict's states and
 *     the test labels; the bootstrap interval is deterministic per seed;
 *     8-state labels score as their 3-state reduction; masked residues are
 *     not scored; every evaluation is journaled and counted by status;
 *     refused while a run holds the journal;
 *  2. the leakage guard: a test set holding training proteins is refused,
 *     and --allow-overlap reports the overlap count;
 *  3. refit: the same bytes from the command and from the test section, at
 *     one thread and two (and under mpirun where it exists);
 *  4. the sweep's test section: results for the top N trials in the
 *     journal and the leaderboard (never in the ranking), SIGKILL during the
 *     test phase then a rerun that computes only what is missing, a test
 *     section added to a finished run, an overlapping test set refused
 *     before any training with the test key's line:col.
 */
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>

#include "test_proc.h"
#include "test_runs.h"

static char tmp[256], log_path[320];

static char *board(const char *dir) { return tr_board(dir, tmp); }

/* A shell command (printf-formatted) that must succeed. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int sh_ok(const char *fmt, ...)
{
    char cmd[2000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    printf("$ %s\n", cmd);
    fflush(stdout);
    return system(cmd) == 0;
}

static int run(const char *sweep, const char *dir, const char *threads) { return tr_run(sweep, dir, threads, log_path); }

/* A number after "key": in a JSON text (first occurrence). */
static double json_num(const char *s, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = s ? strstr(s, k) : NULL;
    return p ? atof(p + strlen(k)) : NAN;
}

/* Q3 from predict's fasta output (">id", sequence, states) against a
 * record file's labels (">id", sequence, labels, blank): the same proteins
 * in the same order. */
static double q3_by_hand(const char *states, const char *records)
{
    long ok = 0, n = 0;
    const char *s = states, *r = records;
    for (;;) {
        s = strchr(s, '\n'); /* past ">id" */
        r = strchr(r, '\n');
        if (!s || !r) break;
        s = strchr(s + 1, '\n'); /* past the sequence */
        r = strchr(r + 1, '\n');
        if (!s || !r) break;
        s++, r++;
        for (; *s && *s != '\n' && *r && *r != '\n'; s++, r++, n++) ok += *s == *r;
        while (*r && *r != '>') r++;
        while (*s && *s != '>') s++;
        if (!*s || !*r) break;
    }
    return n ? (double)ok / (double)n : NAN;
}

/* How many looks at test data run folder dir's report.html shows (0: none). */
static int report_looks(const char *dir)
{
    char path[400];
    snprintf(path, sizeof path, "%s/report.html", dir);
    char *html = tp_read_file(path, NULL);
    const char *at = html ? strstr(html, "Test data looked at ") : NULL;
    int n = at ? atoi(at + strlen("Test data looked at ")) : 0;
    free(html);
    return n;
}

static void test_evaluate(const char *a, const char *test_rec, const char *train_rec)
{
    char *labels = tp_read_file(test_rec, NULL);
    CHECK(tp_run("predict '%s' '%s' --format fasta", a, test_rec) == 0);
    double want = q3_by_hand(out_text, labels);
    const int looks = report_looks(a);
    CHECK(tp_run("evaluate '%s' '%s' --format json", a, test_rec) == 0);
    CHECK_MSG(report_looks(a) == looks + 1, "the report shows %d looks, not %d + 1", report_looks(a), looks);
    char *j1 = strdup(out_text);
    CHECK_MSG(fabs(json_num(j1, "q3") - want) < 1e-9, "evaluate q3 %.6f, by hand %.6f", json_num(j1, "q3"), want);
    CHECK(json_num(j1, "overlap") == 0);
    double q3 = json_num(j1, "q3");
    const char *ci = strstr(j1, "\"q3_ci95\":[");
    double ci_lo = ci ? atof(ci + 11) : NAN, ci_hi = ci && strchr(ci, ',') ? atof(strchr(ci, ',') + 1) : NAN;
    CHECK(ci_lo <= q3 && q3 <= ci_hi && ci_hi - ci_lo < 0.2);
    CHECK(tp_run("evaluate '%s' '%s' --format json", a, test_rec) == 0);
    CHECK_MSG(!strcmp(j1, out_text), "the same evaluation twice differs");
    CHECK(tp_run("evaluate '%s' '%s' --format json --seed 7", a, test_rec) == 0);
    CHECK(strcmp(j1, out_text) != 0 && json_num(out_text, "q3") == q3);
    /* The same proteins with DSSP 8-state labels: H->G, E->B for some. */
    char rec8[400];
    snprintf(rec8, sizeof rec8, "%s/test8.rec", tmp);
    char *l8 = strdup(labels);
    int line = 0;
    for (char *p = l8; *p; p++) {
        if (*p == '\n') line++;
        else if (line % 4 == 2 && (p - l8) % 3 == 0) *p = *p == 'H' ? 'G' : *p == 'E' ? 'B' : *p == 'C' ? 'T' : *p;
    }
    tp_write_text(rec8, l8);
    CHECK(tp_run("evaluate '%s' '%s' --format json", a, rec8) == 0);
    CHECK(json_num(out_text, "q3") == q3 && json_num(out_text, "scored") == json_num(j1, "scored"));
    free(l8);
    /* Table and Markdown name every measure. */
    CHECK(tp_run("evaluate '%s' '%s'", a, test_rec) == 0);
    CHECK_CONTAINS(out_text, "SOV'99");
    CHECK_CONTAINS(out_text, "95% interval");
    CHECK_CONTAINS(out_text, "10th percentile");
    CHECK(tp_run("evaluate '%s' '%s' --format md", a, test_rec) == 0);
    CHECK_CONTAINS(out_text, "| H |");
    /* Journaled: 6 looks so far; status counts them. */
    char journal[400];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", a);
    CHECK(tp_count_in_file(journal, "\"kind\":\"evaluation\"") == 6);
    CHECK(tp_run("status '%s'", a) == 0);
    CHECK_CONTAINS(out_text, "looked at 6 times (6 by foldsweep evaluate");
    /* Leakage: the training proteins themselves. */
    CHECK(tp_run("evaluate '%s' '%s'", a, train_rec) == 1);
    CHECK_CONTAINS(err_text, "identical to proteins the models were trained or validated on");
    CHECK_CONTAINS(err_text, "--allow-overlap");
    CHECK(tp_run("evaluate '%s' '%s' --allow-overlap --format json", a, train_rec) == 0);
    CHECK(json_num(out_text, "overlap") == 150 && strstr(out_text, "\"overlap_allowed\":true"));
    CHECK(tp_count_in_file(journal, "\"kind\":\"evaluation\"") == 7); /* the refused look computed nothing */
    /* --exclude-overlap: the test set plus the training set scores as the test set alone. */
    char mixed[400];
    snprintf(mixed, sizeof mixed, "%s/mixed.rec", tmp);
    char *tr = tp_read_file(train_rec, NULL);
    tp_write_text(mixed, tr);
    tp_write_file(mixed, labels, strlen(labels), "ab");
    free(tr);
    CHECK(tp_run("evaluate '%s' '%s' --exclude-overlap --format json", a, mixed) == 0);
    CHECK(json_num(out_text, "q3") == q3 && json_num(out_text, "proteins") == 40);
    CHECK_CONTAINS(err_text, "150 test proteins identical to training proteins left out");
    /* Not while a run writes the folder. */
    int fd = open(journal, O_RDWR);
    CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
    CHECK(tp_run("evaluate '%s' '%s'", a, test_rec) == 1);
    CHECK_CONTAINS(err_text, "is being written by a running sweep");
    close(fd);
    free(j1);
    free(labels);
}

/* The test phase says which refits scored below their fold ensembles
 * (issue #43: 58.8% against 63.4%, said nowhere): one line for each, naming
 * the trial and both Q3s, and none for a refit that did as well. */
static void refit_below_said(const char *board_json)
{
    char *lb = tp_read_file(board_json, NULL), *lg = tp_read_file(log_path, NULL), want[300];
    int below = 0;
    for (const char *p = lb ? strstr(lb, "\"id\":\"") : NULL; p; p = strstr(p + 1, "\"id\":\"")) {
        const char *t = strstr(p, "\"test\":{"), *next = strstr(p + 1, "\"id\":\"");
        if (!t || (next && t > next)) continue;
        double ens = json_num(t, "q3"), ref = json_num(strstr(t, "\"refit\":{"), "q3");
        snprintf(want, sizeof want, "test: the refit of trial %.16s scored Q3 %.1f%%, below its fold ensemble's %.1f%%",
                 p + 6, 100 * ref, 100 * ens);
        below += ref < ens;
        CHECK_MSG(lg && (strstr(lg, want) != NULL) == (ref < ens), "%s %s in:\n%s", ref < ens ? "no" : "a", want, lg);
    }
    printf("%d of the 2 refits below their ensembles\n", below);
    CHECK(below >= 1); /* the case this checks (the synthetic data gives one) */
    /* A command that runs as pasted: export needs -o. */
    CHECK(lg && tp_count(lg, "is the one to ship (foldsweep export ") == below);
    CHECK(lg && tp_count(lg, " -o DIR; docs/models.md") == below);
    free(lb);
    free(lg);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "honest");
    snprintf(log_path, sizeof log_path, "%s/log.txt", tmp);
    char sweep[300], sweep_t[300], sweep_bad[300], a[300], b[300], c[300], d[300], text[3000];
    char test_rec[300], train_rec[300];
    snprintf(test_rec, sizeof test_rec, "%s/test.rec", tmp);
    snprintf(train_rec, sizeof train_rec, "%s/train.rec", tmp);
    /* The sweep's data is synth {150, seed 3}: the same proteins as a file,
     * and 40 others as the test set. */
    CHECK(tp_run("synth -o '%s' --proteins 150 --seed 3", train_rec) == 0);
    CHECK(tp_run("synth -o '%s' --proteins 40 --seed 99", test_rec) == 0);
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(sweep_t, sizeof sweep_t, "%s/t.yaml", tmp);
    snprintf(sweep_bad, sizeof sweep_bad, "%s/bad.yaml", tmp);
    tp_write_text(sweep, TR_SWEEP);
    snprintf(text, sizeof text, "%stest:\n  inputs: [test.rec]\n  top: 2\n  refit: true\n", TR_SWEEP);
    tp_write_text(sweep_t, text);
    snprintf(text, sizeof text, "%stest:\n  inputs: [train.rec]\n", TR_SWEEP);
    tp_write_text(sweep_bad, text);
    const char *names[] = {a, b, c, d};
    for (int i = 0; i < 4; i++) snprintf((char *)names[i], 300, "%s/%c", tmp, 'a' + i);

    /* 1, 2 */
    CHECK(run(sweep, a, "2") == 0);
    test_evaluate(a, test_rec, train_rec);

    /* 4: the test section added to the finished run: nothing retrained. */
    CHECK(run(sweep_t, a, "2") == 0);
    char *lg = tp_read_file(log_path, NULL);
    CHECK(lg && strstr(lg, "0 folds to train"));
    free(lg);
    char ja[400], jb[400], lb[400];
    snprintf(ja, sizeof ja, "%s/journal.jsonl", a);
    CHECK(tp_count_in_file(ja, "\"source\":\"test\"") == 4); /* 2 ensembles, 2 refits */
    CHECK(tp_count_in_file(ja, "\"kind\":\"refit\"") == 2);
    snprintf(lb, sizeof lb, "%s/leaderboard.json", a);
    CHECK(tp_count_in_file(lb, "\"test\":{") == 2 && tp_count_in_file(lb, "\"refit\":{") == 2);
    refit_below_said(lb);
    char *ref = board(a);
    /* The test section from the start, killed after its first test record. */
    snprintf(jb, sizeof jb, "%s/journal.jsonl", b);
    setenv("FOLDSWEEP_TEST_KILL_AFTER_EVAL", "1", 1);
    CHECK(run(sweep_t, b, "1") == 128 + SIGKILL);
    unsetenv("FOLDSWEEP_TEST_KILL_AFTER_EVAL");
    CHECK(tp_count_in_file(jb, "\"source\":\"test\"") == 1);
    CHECK(tp_count_in_file(jb, "\"kind\":\"fold\"") == 24);
    CHECK(run(sweep_t, b, "1") == 0);
    CHECK(tp_count_in_file(jb, "\"source\":\"test\"") == 4);
    char *got = board(b);
    CHECK_MSG(!strcmp(ref, got), "leaderboards differ:\n%s\nvs\n%s", got, ref);
    free(got);
    /* The same test results, digit for digit, as in the folder where the
     * test section came later (test columns are the CSV's last ones). */
    CHECK(tp_run("leaderboard '%s' --format csv", a) == 0);
    char *csv_a = strdup(out_text);
    CHECK(tp_run("leaderboard '%s' --format csv", b) == 0);
    const char *ta = strstr(csv_a, ",test_q3"), *tb = strstr(out_text, ",test_q3");
    CHECK(ta && tb);
    char *last_a = strrchr(csv_a, '"'), *last_b = strrchr(out_text, '"');
    CHECK(last_a && last_b && !strcmp(last_a, last_b));
    free(csv_a);
    /* 3: refits byte-identical: test section at 1 and 2 threads. */
    CHECK(sh_ok("diff -r '%s/refits' '%s/refits'", a, b));
    /* The refit command finds it done; in a fresh folder it trains the same
     * bytes (on 2 threads: the second helps the one model). */
    CHECK(run(sweep, c, "1") == 0);
    char html[400];
    snprintf(html, sizeof html, "%s/report.html", c);
    CHECK(tp_count_in_file(html, "No trial has been refit") == 1);
    CHECK(tp_run("refit '%s' --rank 1 --threads 2", c) == 0);
    CHECK_CONTAINS(out_text, "refitting");
    CHECK_MSG(tp_count_in_file(html, "No trial has been refit") == 0, "refit left %s as it was", html);
    CHECK(tp_run("refit '%s' --rank 1", c) == 0);
    CHECK_CONTAINS(out_text, "already saved");
    char id[3][17];
    CHECK(tp_run("leaderboard '%s' --format csv --top 1", a) == 0);
    snprintf(id[0], 17, "%.16s", strchr(out_text, '\n') + 3);
    CHECK(sh_ok("cmp '%s/refits/%s/refit.safetensors' '%s/refits/%s/refit.safetensors'", a, id[0], c, id[0]));
    if (system("command -v mpirun >/dev/null 2>&1") == 0 && getenv("FS_TEST_NO_MPI") == NULL) {
        char cmd[1500];
        /* Open MPI's own allocations show up as leaks in a sanitizer build (as in test_mpi). */
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        snprintf(cmd, sizeof cmd, "mpirun --allow-run-as-root --oversubscribe -np 2 '%s' run '%s' --out '%s' --quiet "
                 ">'%s' 2>&1", FS_TEST_BIN, sweep_t, d, log_path);
        printf("$ %s\n", cmd);
        CHECK_MSG(system(cmd) == 0, "%s", tp_read_file(log_path, NULL));
        CHECK(sh_ok("diff -r '%s/refits' '%s/refits'", a, d));
        unsetenv("ASAN_OPTIONS");
    }
    /* 4: an overlapping test set is refused before any training. */
    char e[320];
    snprintf(e, sizeof e, "%s/e", tmp);
    CHECK(run(sweep_bad, e, "2") == 1);
    char *log = tp_read_file(log_path, NULL);
    CHECK_MSG(log && strstr(log, "bad.yaml:14:1: test: 150 proteins are identical to proteins of the training data"),
              "%s", log);
    free(log);
    snprintf(text, sizeof text, "%s/journal.jsonl", e);
    CHECK(tp_count_in_file(text, "\"kind\":\"fold\"") <= 0);

    free(ref);
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
