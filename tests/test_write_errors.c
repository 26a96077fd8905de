/*
 * test_write_errors: a write that fails in predict, evaluate or export
 * says which path and why (the system's reason, strerror), and exits 1:
 * a file under a regular file (root ignores permissions, not that), a
 * folder where a file should be, a full device (/dev/full) as the output
 * file and as standard output.
 */
#include <sys/stat.h>

#include "test_proc.h"

static char tmp[256], run[320], fasta[320], test_set[320], file[320];

static const char SWEEP[] = "data:\n  inputs: set.txt\n  window: 7\n  folds: 2\nmodel:\n  filters: 4\n"
                            "training:\n  epochs: 1\nrun:\n  threads: 1\n";

static int have_dev_full(void) { return access("/dev/full", W_OK) == 0; }

static void test_predict(void)
{
    char want[700];
    /* The brief's case: a CSV into a folder that cannot exist. */
    CHECK(tp_run("predict '%s' '%s' --format csv -o '%s/sub/'", run, fasta, file) == 1);
    snprintf(want, sizeof want, "%s/sub/: cannot write: Not a directory", file);
    CHECK_CONTAINS(err_text, want);
    CHECK(tp_run("predict '%s' '%s' --format csv -o '%s/sub.csv'", run, fasta, file) == 1);
    snprintf(want, sizeof want, "%s/sub.csv: cannot write: Not a directory", file);
    CHECK_CONTAINS(err_text, want);
    /* A new folder's name (DIR/) for a format that writes one file. */
    CHECK(tp_run("predict '%s' '%s' --format csv -o '%s/new/'", run, fasta, tmp) == 1);
    snprintf(want, sizeof want, "%s/new/: cannot write: Is a directory", tmp);
    CHECK_CONTAINS(err_text, want);
    /* One file per protein: the folder, then a protein's file. */
    CHECK(tp_run("predict '%s' '%s' -o '%s/sub/'", run, fasta, file) == 1);
    snprintf(want, sizeof want, "%s/sub: cannot create the folder: Not a directory", file);
    CHECK_CONTAINS(err_text, want);
    char out[400], blocker[420];
    snprintf(out, sizeof out, "%s/ss2", tmp);
    snprintf(blocker, sizeof blocker, "%s/p0001.ss2", out);
    CHECK(mkdir(out, 0777) == 0 && mkdir(blocker, 0777) == 0);
    CHECK(tp_run("predict '%s' '%s' -o '%s/'", run, fasta, out) == 1);
    snprintf(want, sizeof want, "%s: cannot write: Is a directory", blocker);
    CHECK_CONTAINS(err_text, want);
    if (!have_dev_full()) {
        printf("note: no /dev/full; a full device is not tried\n");
        return;
    }
    CHECK(tp_run("predict '%s' '%s' --format csv -o /dev/full", run, fasta) == 1);
    CHECK_CONTAINS(err_text, "/dev/full: cannot write: No space left on device");
    CHECK(tp_run("predict '%s' '%s' --format csv >/dev/full", run, fasta) == 1);
    CHECK_CONTAINS(err_text, "standard output: cannot write: No space left on device");
}

static void test_evaluate_export(void)
{
    char want[700];
    CHECK(tp_run("export '%s' -o '%s/sub'", run, file) == 1);
    snprintf(want, sizeof want, "%s/sub: cannot create the folder: Not a directory", file);
    CHECK_CONTAINS(err_text, want);
    if (!have_dev_full()) return;
    CHECK(tp_run("export '%s' -o '%s/exported' >/dev/full", run, tmp) == 1);
    CHECK_CONTAINS(err_text, "standard output: cannot write: No space left on device");
    CHECK(tp_run("evaluate '%s' '%s' >/dev/full", run, test_set) == 1);
    CHECK_CONTAINS(err_text, "standard output: cannot write: No space left on device");
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "write_errors");
    char sweep[320];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(run, sizeof run, "%s/r", tmp);
    snprintf(fasta, sizeof fasta, "%s/in.fasta", tmp);
    snprintf(test_set, sizeof test_set, "%s/test.txt", tmp);
    snprintf(file, sizeof file, "%s/a-file", tmp);
    tp_write_text(sweep, SWEEP);
    tp_write_text(file, "not a folder\n");
    tp_write_text(fasta, ">p0001\nMKVLAAGIVGLLLAAAQSHEEKAAALLEK\n>p0002\nGSSGSSGMTEYKLVVVGAGGVGKSALT\n");
    CHECK(tp_run("synth -o '%s/set.txt' --proteins 40", tmp) == 0);
    CHECK(tp_run("synth -o '%s' --proteins 10 --seed 99", test_set) == 0);
    CHECK(tp_run("run '%s' --out '%s' --quiet", sweep, run) == 0);
    if (t_failures) return test_finish();
    test_predict();
    test_evaluate_export();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
