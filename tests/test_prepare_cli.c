/*
 * test_prepare_cli.c: `foldsweep prepare` end to end through the built
 * binary: exit codes 0 / 1 / 2, the messages on stderr, the --json report,
 * and that the written file loads with the reported fingerprint.
 */
#include "test_data_util.h"
#include "test_proc.h"

/* The integer after "key": in the JSON output, or -1. */
static long long json_int(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

static void test_usage(void)
{
    CHECK(tp_run("%s", "") == 2); /* no arguments at all */
    CHECK_CONTAINS(err_text, "usage: foldsweep");
    CHECK(tp_run("--help") == 0);
    CHECK_CONTAINS(out_text, "prepare");
    CHECK(tp_run("--version") == 0);
    CHECK_CONTAINS(out_text, "foldsweep ");
    CHECK(tp_run("frobnicate") == 2);
    CHECK_CONTAINS(err_text, "foldsweep: unknown command 'frobnicate'");
    CHECK(tp_run("prepare --help") == 0);
    CHECK_CONTAINS(out_text, "usage: foldsweep prepare");
    CHECK_CONTAINS(out_text, "--folds");
    CHECK(tp_run("help prepare") == 0);
    CHECK_CONTAINS(out_text, "--sequences");

    const char *rec =
        td_write("in.rec", ">a\nACDEF\nHHECC\n\n>b\nGHIK\nEECC\n\n>c\nMNPQR\nCCHHH\n");
    CHECK(tp_run("prepare '%s'", rec) == 2);
    CHECK_CONTAINS(err_text, "missing -o OUT");
    CHECK_CONTAINS(err_text, "usage: foldsweep prepare");
    CHECK(tp_run("prepare -o x.prep") == 2);
    CHECK_CONTAINS(err_text, "no INPUT files");
    CHECK(tp_run("prepare --bogus -o '%s' '%s'", td_path("o.prep"), rec) == 2);
    CHECK_CONTAINS(err_text, "unknown option --bogus");
    CHECK(tp_run("prepare --folds 1 -o '%s' '%s'", td_path("o.prep"), rec) == 2);
    CHECK_CONTAINS(err_text, "--folds");
    CHECK(tp_run("prepare --format xml -o '%s' '%s'", td_path("o.prep"), rec) == 2);
    CHECK_CONTAINS(err_text, "unknown --format");
    CHECK(tp_run("prepare --seed=-3 -o '%s' '%s'", td_path("o.prep"), rec) == 2);
    CHECK(tp_run("prepare -o '%s' --sequences '%s'", td_path("o.prep"), rec) == 2);
    CHECK_CONTAINS(err_text, "--labels");
    CHECK(tp_run("prepare -o '%s' --folds", td_path("o.prep")) == 2);
    CHECK_CONTAINS(err_text, "missing value for --folds");
}

static void test_ok_and_errors(void)
{
    const char *rec =
        td_write("in.rec", ">a\nACDEF\nHHECC\n\n>b\nGHIK\nEECC\n\n>c\nMNPQX\nCCHHH\n");
    const char *out = td_path("out.prep");
    CHECK(tp_run("prepare --json --folds 2 --seed 9 -o '%s' '%s'", out, rec) == 0);
    CHECK(json_int(out_text, "proteins") == 3);
    CHECK(json_int(out_text, "residues") == 14);
    CHECK(json_int(out_text, "scored_residues") == 14);
    CHECK(json_int(out_text, "unknown_residues") == 1);
    CHECK(json_int(out_text, "H") == 5 && json_int(out_text, "E") == 3 &&
          json_int(out_text, "C") == 6);
    CHECK(json_int(out_text, "folds") == 2 && json_int(out_text, "fold_seed") == 9);
    CHECK_CONTAINS(out_text, "\"label_counts\": {");
    CHECK_CONTAINS(out_text, "\"unknown_letters\": {\"X\": 1}");
    CHECK(out_text[0] == '{' && strchr(out_text, '\n') == out_text + strlen(out_text) - 1);
    FsDataset ds;
    FsErr err = {0};
    CHECK(data_read_prepared(&ds, out, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    char fp[40];
    snprintf(fp, sizeof fp, "\"fingerprint\": \"%016llx\"", (unsigned long long)ds.fingerprint);
    CHECK_CONTAINS(out_text, fp);
    CHECK(ds.n_folds == 2 && ds.fold_seed == 9 && ds.n_prot == 3);
    data_free(&ds);

    /* Text report and defaults (3 folds, seed 1). */
    CHECK(tp_run("prepare -o '%s' '%s'", out, rec) == 0);
    CHECK_CONTAINS(out_text, "proteins          3");
    CHECK_CONTAINS(out_text, "unknown residues  1 (X 1)");
    CHECK_CONTAINS(out_text, "folds             3 (seed 1)");

    /* Input errors exit 1 with the reader's message. */
    const char *bad = td_write("bad.rec", ">a\nACDEF\nHHEC\n\n");
    CHECK(tp_run("prepare -o '%s' '%s'", out, bad) == 1);
    CHECK_CONTAINS(err_text, "foldsweep: ");
    CHECK_CONTAINS(err_text, "bad.rec:3:");
    CHECK(tp_run("prepare --folds 4 -o '%s' '%s'", out, rec) == 1);
    CHECK_CONTAINS(err_text, "cannot make 4 folds from 3 proteins");
    CHECK(tp_run("prepare -o '%s' '%s'", out, td_path("missing.rec")) == 1);
    CHECK_CONTAINS(err_text, "missing.rec: cannot open");
    CHECK(tp_run("prepare -o /nonexistent-dir/o.prep '%s'", rec) == 1);
    CHECK_CONTAINS(err_text, "foldsweep: /nonexistent-dir/o.prep");
    /* A FASTA set through the options. k-fold holds the SET=test protein
     * (b) out of the folds: two folds need two other proteins. */
    const char *s = td_write("s.fa", ">a\nACD\n>b\nEF\n");
    const char *l = td_write("l.fa", ">b SET=test\nHH\n>a SET=train VALIDATION=True\nCCE\n");
    const char *m = td_write("m.fa", ">a\n110\n>b\n11\n");
    CHECK(tp_run("prepare --json --folds 2 -o '%s' --sequences '%s' --labels '%s' --mask '%s'",
                 out, s, l, m) == 1);
    CHECK_CONTAINS(err_text, "cannot make 2 folds from 1 proteins (and 1 SET=test proteins, held out of the folds)");
    s = td_write("s.fa", ">a\nACD\n>b\nEF\n>c\nGHIK\n");
    l = td_write("l.fa", ">b SET=test\nHH\n>a SET=train VALIDATION=True\nCCE\n>c SET=train\nHHHH\n");
    m = td_write("m.fa", ">a\n110\n>b\n11\n>c\n1111\n");
    CHECK(tp_run("prepare --json --folds 2 -o '%s' --sequences '%s' --labels '%s' --mask '%s'",
                 out, s, l, m) == 0);
    CHECK(json_int(out_text, "scored_residues") == 8);
    CHECK(json_int(out_text, "valid") == 1 && json_int(out_text, "test") == 1);
    CHECK(json_int(out_text, "held_out_proteins") == 1);
    CHECK_CONTAINS(out_text, "\"fold_proteins\": [1, 1]"); /* a and c; b in neither */
    CHECK(tp_run("prepare --folds 2 -o '%s' --sequences '%s' --labels '%s' --mask '%s'", out, s, l, m) == 0);
    CHECK_CONTAINS(out_text, "held out        1 SET=test proteins (in no fold: the data's test set)");
}

static void test_uci(void)
{
    const char *uci = td_shared("uci/protein-secondary-structure.train");
    if (!uci) {
        printf("note: %s/uci absent, UCI prepare skipped\n", FS_TEST_DATA_DIR);
        return;
    }
    CHECK(tp_run("prepare --format uci --json -o '%s' '%s'", td_path("uci.prep"), uci) == 0);
    CHECK(json_int(out_text, "proteins") == 91 && json_int(out_text, "segments") == 111);
    CHECK(json_int(out_text, "residues") == 18105 && json_int(out_text, "H") == 4601);
    CHECK(tp_run("prepare --format csv -o '%s' '%s'", td_path("uci.prep"), uci) == 1);
    CHECK_CONTAINS(err_text, "not a NetSurfP-2.0 CSV as declared");
}

int main(void)
{
    if (access(FS_TEST_BIN, X_OK) != 0) TEST_SKIP("binary %s not built", FS_TEST_BIN);
    test_usage();
    test_ok_and_errors();
    test_uci();
    return test_finish();
}
