/*
 * test_plan_cli.c: `foldsweep plan` through the built binary: exit codes
 * 0 / 1 / 2, every error on stderr as "foldsweep: FILE:LINE:COL: ...", the
 * trial listing and the --json array.
 */
#include <sys/wait.h>

#include "test_data_util.h"

static char out_text[1 << 17], err_text[1 << 16];

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", FS_TEST_BIN, args, td_path("stdout"), td_path("stderr"));
    int st = system(cmd);
    slurp(td_path("stdout"), out_text, sizeof out_text);
    slurp(td_path("stderr"), err_text, sizeof err_text);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    printf("$ foldsweep %s -> %d\n", args, rc);
    return rc;
}

static int count(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
    return n;
}

int main(void)
{
    char args[2048];
    CHECK(run("plan") == 2);
    CHECK_CONTAINS(err_text, "missing the sweep file");
    CHECK_CONTAINS(err_text, "usage: foldsweep plan");
    CHECK(run("plan --bogus x.yaml") == 2);
    CHECK_CONTAINS(err_text, "unknown option --bogus");
    CHECK(run("plan a.yaml b.yaml") == 2);
    CHECK(run("plan --help") == 0);
    CHECK_CONTAINS(out_text, "usage: foldsweep plan SWEEP.yaml [--json]");
    CHECK(run("help plan") == 0);
    CHECK_CONTAINS(out_text, "--json");
    CHECK(run("--help") == 0);
    CHECK_CONTAINS(out_text, "plan");

    /* Valid: 2 x 2 trials on a record file; ids in the listing. */
    const char *rec = td_write("in.rec", ">a\nACDEFGHIKL\nHHHHEEECCC\n\n>b\nMNPQRSTVWY\nCCHHHHEECC\n\n"
                                         ">c\nACDEFGHIKLMN\nCCCEEEEHHHHC\n\n>d\nGHIKLMNP\nHHHHCCCC\n");
    (void)rec;
    const char *ok = td_write("ok.yaml", "data:\n  inputs: [in.rec]\n  format: records\n  window: 7\n  folds: 2\n"
                                         "model: {depth: [1, 2], filters: [4, 8], kernel: 3, dense: 0}\n"
                                         "training: {epochs: 1, batch_size: 4}\n");
    snprintf(args, sizeof args, "plan '%s'", ok);
    CHECK(run(args) == 0);
    CHECK_CONTAINS(out_text, "data: 4 proteins, 40 residues, 2 folds (fingerprint ");
    CHECK_CONTAINS(out_text, "trials: 4\n");
    CHECK_CONTAINS(out_text, "conv4x3 swish w7 | adam lr=0.001 batch=4 epochs=1");
    CHECK_CONTAINS(out_text, "conv8x3-conv8x3 swish w7");
    CHECK(err_text[0] == '\0');
    snprintf(args, sizeof args, "plan --json '%s'", ok);
    CHECK(run(args) == 0);
    CHECK(out_text[0] == '[');
    CHECK(count(out_text, "\"id\": \"") == 4);
    CHECK(count(out_text, "\"config\": {\"data\"") == 4);
    CHECK_CONTAINS(out_text, "\"index\": 3");

    /* Sampled: the grid size is said. */
    const char *sampled = td_write("s.yaml", "data: {inputs: [in.rec], window: 7, folds: 2}\n"
                                             "model: {filters: [4, 8, 16], kernel: [1, 3], dense: 0}\nsearch: {random: 2}\n");
    snprintf(args, sizeof args, "plan '%s'", sampled);
    CHECK(run(args) == 0);
    CHECK_CONTAINS(out_text, "trials: 2, sampled from a grid of 6 (search.random: 2, seed 1)");

    /* Invalid: every error, each with its position, exit 1. */
    const char *bad = td_write("bad.yaml", "data:\n  inputs: [in.rec]\n  window: 8\n"
                                           "training:\n  learning_rat: 0.1\n  batch_size: 0\n");
    snprintf(args, sizeof args, "plan '%s'", bad);
    CHECK(run(args) == 1);
    CHECK(out_text[0] == '\0');
    char want[1024];
    snprintf(want, sizeof want, "foldsweep: %s:3:11: data.window: 8 is even", bad);
    CHECK_CONTAINS(err_text, want);
    snprintf(want, sizeof want, "foldsweep: %s:5:3: unknown key 'learning_rat' in training (did you mean 'learning_rate'?)", bad);
    CHECK_CONTAINS(err_text, want);
    snprintf(want, sizeof want, "foldsweep: %s:6:15: training.batch_size", bad);
    CHECK_CONTAINS(err_text, want);
    CHECK(count(err_text, "foldsweep: ") == 3);

    /* Data problems: more folds than proteins, a missing input. */
    const char *folds = td_write("folds.yaml", "data:\n  inputs: [in.rec]\n  window: 7\n  folds: 9\n");
    snprintf(args, sizeof args, "plan '%s'", folds);
    CHECK(run(args) == 1);
    snprintf(want, sizeof want, "foldsweep: %s:4:10: data.folds: 9 folds but the data has only 4 proteins", folds);
    CHECK_CONTAINS(err_text, want);
    const char *missing = td_write("missing.yaml", "data: {inputs: [nothere.rec]}\n");
    snprintf(args, sizeof args, "plan '%s'", missing);
    CHECK(run(args) == 1);
    CHECK_CONTAINS(err_text, "nothere.rec");
    snprintf(args, sizeof args, "plan '%s'", td_path("absent.yaml"));
    CHECK(run(args) == 1);
    CHECK_CONTAINS(err_text, "cannot open the sweep file");

    /* The shipped quickstart plans (synthetic data, no files). */
    snprintf(args, sizeof args, "plan '%s/sweeps/quickstart.yaml'", FS_TEST_SRC_DIR);
    CHECK(run(args) == 0);
    CHECK_CONTAINS(out_text, "300 proteins");
    return test_finish();
}
