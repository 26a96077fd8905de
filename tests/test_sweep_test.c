/*
 * test_sweep_test.c: the `test` section of sweep files (a held-out test set
 * evaluated when the sweep finishes): both source forms parsed into FsSweep
 * with paths resolved against the sweep's folder, every kind of mistake
 * refused at its line:col, the section kept out of the canonical sweep and
 * the trial ids, and sweep_load_test on small real files (errors carry the
 * position of the `test` key).
 */
#include <unistd.h>

#include "sweep/sweep.h"
#include "test.h"
#include "test_proc.h"
#include "test_sweep_expect.h"

#define D "data: {synth: {proteins: 30}, window: 13}\n"

static int load_at(FsSweep *sw, const char *text, const char *name, int line)
{
    FsErrList e = {0};
    int rc = sweep_load_string(sw, text, name, &e);
    CHECK_MSG(rc == 0, "line %d: sweep did not load: %s", line, e.n ? e.msg[0] : "?");
    for (int i = 1; i < e.n; i++) fprintf(stderr, "  also: %s\n", e.msg[i]);
    errlist_free(&e);
    return rc;
}
#define load(sw, text, name) load_at((sw), (text), (name), __LINE__)


static void test_parse(void)
{
    char cwd[4096], want[8192];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    FsSweep sw;

    /* No section: nothing set, defaults in place. */
    if (load(&sw, D, "t.yaml")) return;
    CHECK(!sw.has_test);
    CHECK(sw.test_top == 5 && sw.test_refit == 0 && sw.test_format == FS_FMT_AUTO);
    CHECK(sw.test_inputs == NULL && sw.n_test_inputs == 0 && sw.test_sequences == NULL);
    sweep_free(&sw);

    /* Input files, resolved against the sweep file's folder like data's. */
    if (load(&sw, D "model: {depth: 1}\ntest:\n  inputs: [../data/ts115.csv, /abs/b.csv]\n  format: csv\n"
                  "  top: 12\n  refit: true\n", "sub/s.yaml"))
        return;
    CHECK(sw.has_test);
    CHECK(sw.test_line == 3 && sw.test_col == 1);
    CHECK(sw.n_test_inputs == 2);
    snprintf(want, sizeof want, "%s/data/ts115.csv", cwd);
    CHECK_MSG(sw.n_test_inputs > 0 && !strcmp(sw.test_inputs[0], want), "%s",
              sw.n_test_inputs ? sw.test_inputs[0] : "");
    CHECK(sw.n_test_inputs > 1 && !strcmp(sw.test_inputs[1], "/abs/b.csv"));
    CHECK(sw.test_format == FS_FMT_CSV);
    CHECK(sw.test_top == 12 && sw.test_refit == 1);
    CHECK(sw.test_sequences == NULL && sw.test_labels == NULL && sw.test_mask == NULL);
    sweep_free(&sw);

    /* `files` is `inputs`; one name needs no list; defaults. */
    if (load(&sw, D "test: {files: ts.data}\n", "/x/y/s.yaml")) return;
    CHECK(sw.has_test && sw.test_line == 2 && sw.test_col == 1);
    CHECK(sw.n_test_inputs == 1 && !strcmp(sw.test_inputs[0], "/x/y/ts.data"));
    CHECK(sw.test_top == 5 && sw.test_refit == 0 && sw.test_format == FS_FMT_AUTO);
    sweep_free(&sw);

    /* A FASTA set (format fasta implied; explicit fasta or auto allowed). */
    if (load(&sw, D "test:\n  sequences: seq.fasta\n  labels: ../lab.fasta\n  mask: m/mask.fasta\n"
                  "  format: fasta\n  top: 1000\n  refit: false\n", "/r/q/s.yaml"))
        return;
    CHECK(sw.has_test && sw.n_test_inputs == 0);
    CHECK(sw.test_format == FS_FMT_FASTA);
    CHECK(sw.test_sequences && !strcmp(sw.test_sequences, "/r/q/seq.fasta"));
    CHECK(sw.test_labels && !strcmp(sw.test_labels, "/r/lab.fasta"));
    CHECK(sw.test_mask && !strcmp(sw.test_mask, "/r/q/m/mask.fasta"));
    CHECK(sw.test_top == 1000 && sw.test_refit == 0);
    sweep_free(&sw);
    if (load(&sw, D "test: {sequences: s.fa, labels: l.fa, top: 1}\n", "/r/s.yaml")) return;
    CHECK(sw.test_format == FS_FMT_FASTA && sw.test_mask == NULL && sw.test_top == 1);
    sweep_free(&sw);

    /* Anywhere among the sections. */
    if (load(&sw, "test: {inputs: [a.data]}\n" D, "s.yaml")) return;
    CHECK(sw.has_test && sw.test_line == 1 && sw.test_col == 1);
    sweep_free(&sw);
}

static void test_errors(void)
{
    /* Unknown keys, with suggestions among test's own keys. */
    EXPECT(D "test:\n  inputs: [a]\n  topp: 3\n", "4:3", "unknown key 'topp' in test (did you mean 'top'?)");
    EXPECT(D "test:\n  inputs: [a]\n  zzzzzz: 3\n", "4:3", "unknown key 'zzzzzz' in test");
    EXPECT(D "tset: {inputs: [a]}\n", "2:1", "unknown key 'tset' in the sweep (did you mean 'test'?)");
    /* The window is data's. */
    EXPECT(D "test:\n  inputs: [a]\n  window: 13\n", "4:3", "test.window: the window comes from data (data.window)");
    /* Sources: exactly one. */
    EXPECT(D "test: {inputs: [a], sequences: s, labels: l}\n", "2:7",
           "test: give exactly one of inputs, sequences + labels");
    EXPECT(D "test: {top: 3}\n", "2:7", "test: no test data; give inputs or sequences + labels");
    EXPECT(D "test: {}\n", "2:7", "test: no test data");
    EXPECT(D "test:\n  refit: true\n", "3:3", "test: no test data");
    EXPECT(D "test: {sequences: s}\n", "2:7", "test: a FASTA set needs 'labels'");
    EXPECT(D "test: {labels: l, mask: m}\n", "2:7", "test: a FASTA set needs 'sequences'");
    EXPECT(D "test: {inputs: [a], files: [b]}\n", "2:21", "test: 'files' and 'inputs' are the same option");
    EXPECT(D "test: a.csv\n", "2:7", "test: expected a mapping");
    EXPECT(D "test:\n", "2:6", "test: expected a mapping");
    EXPECT(D "test: {inputs: []}\n", "2:16", "test.inputs: expected a file name or a non-empty list of them");
    EXPECT(D "test: {inputs: [a, \"\"]}\n", "2:20", "test.inputs[2]: empty file name");
    EXPECT(D "test: {sequences: [s], labels: l}\n", "2:19", "test.sequences: expected a file name");
    /* Format, as data.format. */
    EXPECT(D "test: {inputs: [a], format: xml}\n", "2:29", "test.format: expected auto, uci, fasta, records or csv");
    EXPECT(D "test: {inputs: [a], format: recrods}\n", "2:29", "(did you mean 'records'?)");
    EXPECT(D "test: {inputs: [a], format: fasta}\n", "2:29", "test.format: fasta takes sequences + labels");
    EXPECT(D "test: {sequences: s, labels: l, format: csv}\n", "2:41",
           "test.format: sequences + labels are a FASTA set");
    /* top */
    EXPECT(D "test: {inputs: [a], top: 0}\n", "2:26", "test.top: expected an integer from 1 to 1000");
    EXPECT(D "test: {inputs: [a], top: 1001}\n", "2:26", "got '1001'");
    EXPECT(D "test: {inputs: [a], top: 2.5}\n", "2:26", "got '2.5'");
    EXPECT(D "test: {inputs: [a], top: \"5\"}\n", "2:26", "test.top: expected an integer");
    EXPECT(D "test: {inputs: [a], top: [1, 2]}\n", "2:26", "got a list or mapping");
    /* refit */
    EXPECT(D "test: {inputs: [a], refit: yes}\n", "2:28", "test.refit: expected true or false, got 'yes'");
    EXPECT(D "test: {inputs: [a], refit: 1}\n", "2:28", "test.refit: expected true or false");
    EXPECT(D "test: {inputs: [a], refit: \"true\"}\n", "2:28", "test.refit: expected true or false");
    EXPECT(D "test: {inputs: [a], refit: {a: 1}}\n", "2:28", "got a list or mapping");
    /* data's other sources and its split are refused with a reason (and a
     * test section with only them has no source either). */
    EXPECT(D "test: {inputs: [a], prepared: p.bin}\n", "2:21", "test.prepared: a prepared fold file is training data");
    EXPECT_NTH(0, D "test: {prepared: p.bin}\n", "2:7", "test: no test data");
    EXPECT_NTH(1, D "test: {prepared: p.bin}\n", "2:8", "test.prepared: a prepared fold file");
    EXPECT(D "test: {inputs: [a], synth: {proteins: 3}}\n", "2:21",
           "test.synth: a synthetic set cannot be the test set");
    EXPECT(D "test: {inputs: [a], split: predefined}\n", "2:21", "test.split: a test set is not split");
    EXPECT(D "test: {inputs: [a], folds: 3}\n", "2:21", "test.folds: a test set is not split into folds");
    EXPECT(D "test: {inputs: [a], fold_seed: 3}\n", "2:21", "test.fold_seed: a test set is not split into folds");
    /* Duplicates are the YAML reader's. */
    EXPECT(D "test: {inputs: [a]}\ntest: {inputs: [b]}\n", "3:1", "duplicate key 'test'");

    /* All at once, in file order, along with errors elsewhere. */
    const char *many = "data: {synth: {proteins: 30}, window: 14}\n"
                       "test:\n"
                       "  inputs: [a]\n"
                       "  window: 13\n"
                       "  top: -1\n"
                       "  refit: maybe\n"
                       "  colour: red\n";
    FsSweep sw;
    FsErrList e = {0};
    CHECK(sweep_load_string(&sw, many, "m.yaml", &e) == -1);
    CHECK_MSG(e.n == 5, "%d messages", e.n);
    if (e.n == 5) {
        CHECK_CONTAINS(e.msg[0], "m.yaml:1:39: data.window: 14 is even");
        CHECK_CONTAINS(e.msg[1], "m.yaml:4:3: test.window:");
        CHECK_CONTAINS(e.msg[2], "m.yaml:5:8: test.top:");
        CHECK_CONTAINS(e.msg[3], "m.yaml:6:10: test.refit:");
        CHECK_CONTAINS(e.msg[4], "m.yaml:7:3: unknown key 'colour' in test");
    }
    errlist_free(&e);
}

/* The test section is not part of the canonical sweep or the ids: adding
 * one to a finished sweep is the same sweep, and workers never see it. */
static void test_canonical(void)
{
    const char *body = "data: {synth: {proteins: 30, seed: 4}, window: 13, folds: 4}\n"
                       "model: {depth: [1, 2], filters: [8, 16], dense: 0}\n"
                       "training: {epochs: 2, learning_rate: [0.1, 0.01]}\n"
                       "run: {metric: loss}\n";
    char with[2048];
    snprintf(with, sizeof with, "%stest:\n  inputs: [ts115.csv]\n  top: 3\n  refit: true\n", body);
    char fasta[2048];
    snprintf(fasta, sizeof fasta, "test: {sequences: s.fa, labels: l.fa, mask: m.fa}\n%s", body);
    FsSweep a, b, c;
    if (load(&a, body, "/w/s.yaml")) return;
    if (load(&b, with, "/w/s.yaml")) {
        sweep_free(&a);
        return;
    }
    if (load(&c, fasta, "/w/s.yaml")) {
        sweep_free(&a), sweep_free(&b);
        return;
    }
    CHECK(!a.has_test && b.has_test && c.has_test);
    CHECK(!strcmp(a.canonical, b.canonical));
    CHECK(!strcmp(a.canonical, c.canonical));
    CHECK(strstr(b.canonical, "ts115") == NULL && strstr(c.canonical, "s.fa") == NULL);
    CHECK(strstr(b.canonical, "top:") == NULL && strstr(b.canonical, "refit") == NULL);
    char diff[1024];
    CHECK(sweep_diff(a.canonical, b.canonical, diff, sizeof diff) == 0);
    CHECK(a.n_trials == 8 && b.n_trials == a.n_trials && c.n_trials == a.n_trials);
    sweep_assign_ids(&a, 0xfeed);
    sweep_assign_ids(&b, 0xfeed);
    sweep_assign_ids(&c, 0xfeed);
    for (int i = 0; i < a.n_trials && i < b.n_trials && i < c.n_trials; i++) {
        CHECK(!strcmp(a.trials[i].id, b.trials[i].id) && !strcmp(a.trials[i].id, c.trials[i].id));
        CHECK(!strcmp(a.trials[i].config, b.trials[i].config));
    }
    /* What a worker gets: the canonical text, which loads without a test set. */
    FsSweep w;
    if (!load(&w, b.canonical, "canonical")) {
        CHECK(!w.has_test && w.n_test_inputs == 0);
        CHECK(!strcmp(w.canonical, b.canonical));
        sweep_free(&w);
    }
    sweep_free(&a), sweep_free(&b), sweep_free(&c);
}

/* Writes a sweep with the given test section into dir, loads it. */
static int load_in(FsSweep *sw, const char *dir, const char *test_section, int line)
{
    char path[4200], text[4096];
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    snprintf(text, sizeof text, "data: {synth: {proteins: 30}, window: 7}\nmodel: {depth: 1}\n%s", test_section);
    tp_write_text(path, text);
    FsErrList e = {0};
    int rc = sweep_load_file(sw, path, &e);
    CHECK_MSG(rc == 0, "line %d: sweep did not load: %s", line, e.n ? e.msg[0] : "?");
    errlist_free(&e);
    return rc;
}

/* sweep_load_test must fail with one message that starts at pos with where
 * ("test.labels: ": the file's name; "test: ": the test key). */
static void expect_load_fail(const FsSweep *sw, const char *dir, const char *pos, const char *where, const char *sub,
                             int line)
{
    FsDataset ts;
    FsErrList e = {0};
    CHECK_MSG(sweep_load_test(sw, &ts, &e) == -1, "line %d: loaded", line);
    CHECK_MSG(ts.n_prot == 0 && ts.aa == NULL, "line %d: dataset not cleared", line);
    char want[4300];
    snprintf(want, sizeof want, "%s/s.yaml:%s: %s", dir, pos, where);
    CHECK_MSG(e.n == 1, "line %d: %d messages", line, e.n);
    if (e.n >= 1) {
        CHECK_MSG(!strncmp(e.msg[0], want, strlen(want)), "line %d: \"%s\" does not start with \"%s\"", line,
                  e.msg[0], want);
        CHECK_MSG(strstr(e.msg[0], sub) != NULL, "line %d: \"%s\" lacks \"%s\"", line, e.msg[0], sub);
    }
    errlist_free(&e);
}

static void test_load(void)
{
    char dir[4096], p[4300];
    tp_tmpdir(dir, sizeof dir, "sweep_test");
    snprintf(p, sizeof p, "%s/ts.data", dir);
    tp_write_text(p, ">t1\nACDEFGHIK\nHHHEEECCC\n\n>t2\nMKLV\nCCHE\n\n");
    snprintf(p, sizeof p, "%s/more.data", dir);
    tp_write_text(p, ">t3\nWWY\nEEE\n\n");
    snprintf(p, sizeof p, "%s/seq.fasta", dir);
    tp_write_text(p, ">f1\nACDEF\n>f2\nGHIK\n>f3\nLMN\n");
    snprintf(p, sizeof p, "%s/lab.fasta", dir);
    tp_write_text(p, ">f2\nEECC\n>f1\nHHHHC\n>f3\nCCC\n");
    snprintf(p, sizeof p, "%s/mask.fasta", dir);
    tp_write_text(p, ">f1\n11100\n>f2\n1111\n>f3\n111\n");
    snprintf(p, sizeof p, "%s/zero.fasta", dir);
    tp_write_text(p, ">f1\n00000\n>f2\n0000\n>f3\n000\n");

    FsSweep sw;
    FsDataset ts;
    FsErrList e = {0};

    /* Record files, relative to the sweep's folder, concatenated in order. */
    if (!load_in(&sw, dir, "test:\n  inputs: [ts.data, more.data]\n  top: 2\n", __LINE__)) {
        CHECK(sweep_load_test(&sw, &ts, &e) == 0);
        CHECK_MSG(e.n == 0, "%s", e.n ? e.msg[0] : "");
        CHECK(ts.n_prot == 3 && ts.n_res == 16);
        CHECK(ts.stats.scored == 16);
        CHECK(ts.stats.label_counts[FS_SS_H] == 4 && ts.stats.label_counts[FS_SS_E] == 7 &&
              ts.stats.label_counts[FS_SS_C] == 5);
        CHECK(ts.n_folds == 0); /* no folds: a test set is evaluated whole */
        CHECK(ts.n_prot == 3 && !strcmp(data_protein_name(&ts, 0), "t1") && !strcmp(data_protein_name(&ts, 2), "t3"));
        data_free(&ts);
        errlist_free(&e);
        /* The training data is untouched by it. */
        FsDataset ds;
        CHECK(sweep_load_data(&sw, &ds, &e) == 0);
        CHECK(ds.n_prot == 30);
        data_free(&ds);
        errlist_free(&e);
        sweep_free(&sw);
    }

    /* A FASTA set with a mask. */
    if (!load_in(&sw, dir, "test: {sequences: seq.fasta, labels: lab.fasta, mask: mask.fasta}\n", __LINE__)) {
        CHECK(sweep_load_test(&sw, &ts, &e) == 0);
        CHECK_MSG(e.n == 0, "%s", e.n ? e.msg[0] : "");
        CHECK(ts.n_prot == 3 && ts.n_res == 12);
        CHECK(ts.stats.scored == 10);
        CHECK(ts.stats.label_counts[FS_SS_H] == 3 && ts.stats.label_counts[FS_SS_E] == 2 &&
              ts.stats.label_counts[FS_SS_C] == 5);
        data_free(&ts);
        errlist_free(&e);
        sweep_free(&sw);
    }

    /* Errors: at the file's name, with data_load's message; else at the test key. */
    if (!load_in(&sw, dir, "test: {inputs: [ts.data, missing.data]}\n", __LINE__)) {
        expect_load_fail(&sw, dir, "3:26", "test.inputs[2]: ", "missing.data: cannot open", __LINE__);
        sweep_free(&sw);
    }
    if (!load_in(&sw, dir, "test:\n  sequences: seq.fasta\n  labels: nolabels.fasta\n", __LINE__)) {
        expect_load_fail(&sw, dir, "5:11", "test.labels: ", "nolabels.fasta: cannot open", __LINE__);
        sweep_free(&sw);
    }
    if (!load_in(&sw, dir, "# the held-out set\n\ntest: {inputs: [ts.data], format: csv}\n", __LINE__)) {
        CHECK(sw.test_line == 5 && sw.test_col == 1);
        expect_load_fail(&sw, dir, "5:17", "test.inputs[1]: ", "ts.data: not a NetSurfP-2.0 CSV as declared", __LINE__);
        sweep_free(&sw);
    }
    if (!load_in(&sw, dir, "test: {sequences: seq.fasta, labels: lab.fasta, mask: zero.fasta}\n", __LINE__)) {
        expect_load_fail(&sw, dir, "3:1", "test: ", "no scored residue", __LINE__);
        sweep_free(&sw);
    }
    /* No test section. */
    if (!load_in(&sw, dir, "", __LINE__)) {
        CHECK(sweep_load_test(&sw, &ts, &e) == -1);
        CHECK(e.n == 1 && strstr(e.msg[0], "no test section"));
        errlist_free(&e);
        sweep_free(&sw);
    }
    const char *names[] = {"ts.data", "more.data", "seq.fasta", "lab.fasta", "mask.fasta", "zero.fasta", "s.yaml"};
    for (int i = 0; i < 7; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    test_parse();
    test_errors();
    test_canonical();
    test_load();
    return test_finish();
}
