/*
 * test_features_faults.c: feature files that are wrong in ways a reader of
 * their layout does not see (issue #43, items 2 and 3):
 *
 * 1. Values that are not finite: a NaN in an npy (float32 and float16), an
 *    Inf in an h5 dataset (and a float64 one beyond a float's range), each
 *    refused at load naming the file, the protein, the row and the column;
 *    a finite value beyond a half's range where the columns are stored as
 *    halves, refused with the same, saying how to keep floats.
 * 2. Paths that are not regular files: a FIFO as each source kind (pssm,
 *    hhm, npy, h5) refused at once, never waited on; a folder as a
 *    protein's file; a file, or nothing, as a source's folder.
 * 3. Through the commands: `plan`, `run` and `predict` on a FIFO end at
 *    once (exit 1, the file named); `run` on a NaN in the data's or the test
 *    section's files exits 1 naming it (it trained every trial to
 *    "diverged" and exited 0); `predict` and `evaluate` on finite columns
 *    so large that the models' layers overflow refuse the probabilities
 *    instead of writing every residue as H or scoring them.
 */
#include <float.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>

#include "features/features.h"
#include "test_data_util.h"
#include "test_proc.h"
#include "test_features_util.h"

#if defined(FS_HAVE_HDF5)
#include <hdf5.h>
#endif

static char dir[256];

/* dir/name, valid until the test ends (specs and argv keep them). */
static char *paths[256];
static int n_paths;
static char *at(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (n_paths == 256) abort();
    return paths[n_paths++] = strdup(p);
}

/* A data set from a record file's text. */
static void load_records(FsDataset *ds, const char *name, const char *text)
{
    FsErr err = {0};
    tp_write_text(at(name), text);
    CHECK_MSG(td_load(ds, FS_FMT_RECORDS, at(name), &err) == 0, "%s", err.msg);
}



/* An npy file of rows x cols values v[i] (float32, or float16 with half). */
static void write_npy(const char *name, uint32_t rows, uint32_t cols, const float *v, int half)
{
    FsErr err = {0};
    if (!half) {
        CHECK(features_write_npy(at(name), rows, cols, v, &err) == 0);
        return;
    }
    char dict[128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '<f2', 'fortran_order': False, 'shape': (%u, %u), }", rows, cols);
    const size_t hl = ((10 + (size_t)dl + 1 + 63) / 64) * 64 - 10, n = (size_t)rows * cols;
    uint8_t *b = calloc(10 + hl + 2 * n, 1);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)hl;
    memset(b + 10, ' ', hl);
    memcpy(b + 10, dict, (size_t)dl);
    b[10 + hl - 1] = '\n';
    for (size_t i = 0; i < n; i++) {
        uint16_t h = util_half_from_float(v[i]);
        b[10 + hl + 2 * i] = (uint8_t)h, b[10 + hl + 2 * i + 1] = (uint8_t)(h >> 8);
    }
    tp_write_file(at(name), b, 10 + hl + 2 * n, "wb");
    free(b);
}

/* ---------------------------------------------------------------------- */
/* 1. Values                                                               */

static void test_npy_values(void)
{
    FsDataset ds;
    mkdir(at("npy"), 0755);
    load_records(&ds, "v.records", ">v1\nACDEF\nHHHCC\n\n>v2\nGHI\nEEC\n\n");
    float a[15], b[9];
    for (int i = 0; i < 15; i++) a[i] = (float)i / 7.0f;
    for (int i = 0; i < 9; i++) b[i] = (float)i / 5.0f;
    write_npy("npy/v1.npy", 5, 3, a, 0);
    write_npy("npy/v2.npy", 3, 3, b, 0);
    FsFeatSpec spec = tf_one_source(FS_FEAT_NPY, at("npy"));
    FsErr err = {0};
    CHECK_MSG(features_load(&ds, &spec, &err) == 0, "%s", err.msg);
    b[7] = NAN; /* row 3, column 2 */
    write_npy("npy/v2.npy", 3, 3, b, 0);
    expect_fail(&ds, &spec, "npy/v2.npy: protein v2: row 3, column 2 (index [2, 1]) is NaN",
                "features must be finite numbers");
    b[7] = -INFINITY;
    write_npy("npy/v2.npy", 3, 3, b, 0);
    expect_fail(&ds, &spec, "npy/v2.npy: protein v2: row 3, column 2 (index [2, 1]) is -Inf");
    b[7] = 0.5f;
    write_npy("npy/v2.npy", 3, 3, b, 0);
    a[4] = INFINITY; /* float16: row 2, column 2 */
    write_npy("npy/v1.npy", 5, 3, a, 1);
    expect_fail(&ds, &spec, "npy/v1.npy: protein v1: row 2, column 2 (index [1, 1]) is +Inf");
    a[4] = NAN;
    write_npy("npy/v1.npy", 5, 3, a, 1);
    expect_fail(&ds, &spec, "protein v1: row 2, column 2 (index [1, 1]) is NaN");
    data_free(&ds);
}

/* Stored as halves: a finite float beyond a half's range (it would become
 * infinite) is refused; floats keep it; 65519 rounds to 65504 and stays. */
static void test_half_range(void)
{
    FsDataset ds;
    mkdir(at("wide"), 0755);
    load_records(&ds, "w.records", ">w1\nACDEF\nHHHCC\n\n");
    float v[5 * 70];
    for (int i = 0; i < 5 * 70; i++) v[i] = (float)i;
    v[3 * 70 + 69] = 65519.0f;
    write_npy("wide/w1.npy", 5, 70, v, 0);
    FsFeatSpec spec = tf_one_source(FS_FEAT_NPY, at("wide"));
    FsErr err = {0};
    CHECK_MSG(features_load(&ds, &spec, &err) == 0, "%s", err.msg);
    CHECK(ds.feat_half && data_feature(&ds, 3, 69) == 65504.0f);
    v[3 * 70 + 69] = 70000.0f;
    write_npy("wide/w1.npy", 5, 70, v, 0);
    expect_fail(&ds, &spec, "wide/w1.npy: protein w1: row 4, column 70 (index [3, 69]) is 70000",
                "beyond a half's range (+-65504)", "above 64 columns in all (data.feature_store: auto, 70 here)",
                "data.feature_store: float keeps them");
    spec.store = FS_FEAT_STORE_HALF;
    expect_fail(&ds, &spec, "row 4, column 70", "(data.feature_store: half)");
    spec.store = FS_FEAT_STORE_FLOAT;
    CHECK_MSG(features_load(&ds, &spec, &err) == 0, "%s", err.msg);
    CHECK(!ds.feat_half && data_feature(&ds, 3, 69) == 70000.0f);
    v[3 * 70 + 69] = -1e38f; /* finite as a float: kept */
    write_npy("wide/w1.npy", 5, 70, v, 0);
    CHECK_MSG(features_load(&ds, &spec, &err) == 0, "%s", err.msg);
    data_free(&ds);
}

static void test_h5_values(void)
{
#if defined(FS_HAVE_HDF5)
    FsDataset ds;
    FsErr err = {0};
    load_records(&ds, "h.records", ">h1\nACDEF\nHHHCC\n\n>h/2\nGHI\nEEC\n\n");
    float v[8 * 4];
    for (int i = 0; i < 32; i++) v[i] = (float)i / 8.0f;
    v[5 * 4 + 3] = INFINITY; /* h/2's row 1, column 4 */
    const char *names[2] = {"h1", "h_2"};
    uint32_t rows[2] = {5, 3};
    CHECK(features_write_h5(at("inf.h5"), names, 2, rows, 4, v, &err) == 0);
    FsFeatSpec spec = tf_one_source(FS_FEAT_H5, at("inf.h5"));
    expect_fail(&ds, &spec, "inf.h5: dataset h_2 (protein h/2): row 1, column 4 (index [0, 3]) is +Inf");
    /* A float64 dataset beyond a float's range: libhdf5 converts it to an
     * infinite float, refused the same. */
    hid_t f = H5Fcreate(at("big.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {5, 2};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "h1", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double big[10] = {0, 1, 2, 3, 4, 5, 1e300, 7, 8, 9};
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, big);
    H5Dclose(d), H5Sclose(sp), H5Fclose(f);
    FsFeatSpec b = tf_one_source(FS_FEAT_H5, at("big.h5"));
    b.src[0].missing_zeros = 1;
    expect_fail(&ds, &b, "big.h5: dataset h1 (protein h1): row 4, column 1 (index [3, 0]) is");
    data_free(&ds);
#else
    printf("no libhdf5 in this build: the h5 values are not tried\n");
#endif
}

/* ---------------------------------------------------------------------- */
/* 2. Paths that are not regular files                                     */

static void test_not_regular(void)
{
    FsDataset ds;
    load_records(&ds, "p.records", ">p1\nACDEF\nHHHCC\n\n");
    static const struct {
        FsFeatKind kind;
        const char *folder, *file, *expected;
    } kinds[] = {{FS_FEAT_PSSM, "fp", "fp/p1.pssm", "expected a PSI-BLAST ASCII PSSM file"},
                 {FS_FEAT_HHM, "fh", "fh/p1.hhm", "expected an HHblits .hhm file"},
                 {FS_FEAT_NPY, "fn", "fn/p1.npy", "expected a NumPy .npy file"}};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        mkdir(at(kinds[k].folder), 0755);
        CHECK(mkfifo(at(kinds[k].file), 0600) == 0);
        FsFeatSpec spec = tf_one_source(kinds[k].kind, at(kinds[k].folder));
        expect_fail(&ds, &spec, kinds[k].file, "protein p1: is a FIFO (named pipe)", kinds[k].expected);
        unlink(at(kinds[k].file));
        CHECK(mkdir(at(kinds[k].file), 0755) == 0);
        expect_fail(&ds, &spec, kinds[k].file, "protein p1: is a folder", kinds[k].expected);
    }
    /* A file, or nothing, where a source's folder should be: with `missing:
     * zeros` every protein read as zeros. */
    FsFeatSpec file = tf_one_source(FS_FEAT_PSSM, at("p.records"));
    file.src[0].missing_zeros = 1;
    expect_fail(&ds, &file, "p.records: pssm source: not a folder; expected a folder of <id>.pssm files");
    FsFeatSpec none = tf_one_source(FS_FEAT_HHM, at("absent"));
    none.src[0].missing_zeros = 1;
    expect_fail(&ds, &none, "absent: hhm source: No such file or directory");
    CHECK(mkfifo(at("fifo.h5"), 0600) == 0);
    FsFeatSpec h5 = tf_one_source(FS_FEAT_H5, at("fifo.h5"));
    if (features_have_h5())
        expect_fail(&ds, &h5, "fifo.h5: is a FIFO (named pipe); expected an HDF5 file");
    else
        expect_fail(&ds, &h5, "h5 sources need foldsweep built with libhdf5");
    data_free(&ds);
}

/* ---------------------------------------------------------------------- */
/* 3. Through the commands                                                 */

/* `foldsweep ARGS...` with both outputs in log, ended after `limit` s (a
 * hang fails the test): its exit code, and the log's text in *text. A
 * refusal takes milliseconds; a command that trains gets 300 s, for a
 * sanitizer build on a busy machine. */
static int run_limited(char **text, int limit, char *const argv[])
{
    char *log = at("cmd.log");
    int rc = tp_wait_limited(tp_spawn(argv, log), limit);
    free(*text);
    *text = tp_read_file(log, NULL);
    if (!*text) *text = strdup("");
    return rc;
}

static void write_sweep(const char *name, const char *features, const char *test)
{
    char text[1200];
    snprintf(text, sizeof text,
             "data:\n  sequences: syn.sequences.fasta\n  labels: syn.labels.fasta\n  mask: syn.mask.fasta\n"
             "  features: %s\n  window: 7\n  folds: 2\n"
             "model:\n  depth: 1\n  filters: 4\n  kernel: 3\n  dense: 0\n"
             "training:\n  epochs: 1\n  batch_size: 16\n  seed: 3\n%s",
             features, test);
    tp_write_text(at(name), text);
}

/* A FIFO as the first protein's npy: plan, run and predict end at once. */
static void fifo_commands(char **text)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s' && rm '%s/synth0001.npy' && mkfifo '%s/synth0001.npy'",
             at("syn.features"), at("ff"), at("ff"), at("ff"));
    CHECK(system(cmd) == 0);
    write_sweep("fifo.yaml", "[onehot, {npy: ff}]", "");
    char *plan[] = {"foldsweep", "plan", at("fifo.yaml"), NULL};
    CHECK(run_limited(text, 60, plan) == 1);
    CHECK_CONTAINS(*text, "ff/synth0001.npy: protein synth0001: is a FIFO (named pipe); expected a NumPy .npy file");
    char *run[] = {"foldsweep", "run", at("fifo.yaml"), "--out", at("fiforun"), "--threads", "1", NULL};
    CHECK(run_limited(text, 60, run) == 1);
    CHECK_CONTAINS(*text, "synth0001.npy: protein synth0001: is a FIFO");
    char ff[700];
    snprintf(ff, sizeof ff, "npy:%s", at("ff"));
    char *pred[] = {"foldsweep", "predict", at("okrun"), at("syn.sequences.fasta"), "--format", "csv",
                    "--features", ff, NULL};
    CHECK(run_limited(text, 60, pred) == 1);
    CHECK_CONTAINS(*text, "synth0001.npy: protein synth0001: is a FIFO");
}

/* A NaN in the test section's files, then in the data's: refused (every
 * trial "diverged", exit 0, before). */
static void nan_runs(char **text)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", at("syn.features"), at("nan"));
    CHECK(system(cmd) == 0);
    float v[12 * 4];
    for (int i = 0; i < 12 * 4; i++) v[i] = 0.25f;
    write_npy("nan/t1.npy", 12, 4, v, 0);
    v[2 * 4 + 1] = NAN;
    write_npy("nan/t2.npy", 12, 4, v, 0);
    /* Sequences no training protein is near (the run's identity screen). */
    tp_write_text(at("test.records"), ">t1\nWCWWCWCCWCWW\nHHHHCCCEEEEC\n\n>t2\nCWCCWCWWCWCC\nCEEEECCHHHHC\n\n");
    write_sweep("test.yaml", "[onehot, {npy: nan}]", "test:\n  inputs: test.records\n  format: records\n");
    char *trun[] = {"foldsweep", "run", at("test.yaml"), "--out", at("testrun"), "--threads", "1", NULL};
    CHECK(run_limited(text, 300, trun) == 1);
    CHECK_CONTAINS(*text, "nan/t2.npy: protein t2: row 3, column 2 (index [2, 1]) is NaN");
    v[2 * 4 + 1] = 0.5f;
    write_npy("nan/t2.npy", 12, 4, v, 0); /* finite again */
    size_t n = 0;
    char *b = tp_read_file(at("nan/synth0002.npy"), &n);
    CHECK(b && n > 200);
    if (b && n > 200) {
        memcpy(b + n - 4, "\x00\x00\xc0\x7f", 4); /* the last value: a quiet NaN */
        tp_write_file(at("nan/synth0002.npy"), b, n, "wb");
    }
    free(b);
    char *drun[] = {"foldsweep", "run", at("test.yaml"), "--out", at("datarun"), "--threads", "1", NULL};
    CHECK(run_limited(text, 300, drun) == 1);
    CHECK_CONTAINS(*text, "nan/synth0002.npy: protein synth0002: row");
    CHECK_CONTAINS(*text, "column 4 (index [");
    CHECK_CONTAINS(*text, "3]) is NaN; features must be finite numbers");
}

/* Finite columns so large that the models' layers overflow: predict and
 * evaluate refuse the probabilities; nothing written or scored. */
static void huge_columns(char **text)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", at("syn.features"), at("huge"));
    CHECK(system(cmd) == 0);
    FsDataset syn;
    FsErr err = {0};
    CHECK(data_load_sequences(&syn, at("syn.sequences.fasta"), &err) == 0);
    const uint32_t n1 = syn.seg_off[syn.prot_seg[1]];
    data_free(&syn);
    float *h = malloc((size_t)n1 * 4 * sizeof *h);
    for (uint32_t i = 0; i < n1 * 4; i++) h[i] = FLT_MAX;
    write_npy("huge/synth0001.npy", n1, 4, h, 0);
    free(h);
    char ff[700];
    snprintf(ff, sizeof ff, "npy:%s", at("huge"));
    char *hp[] = {"foldsweep", "predict", at("okrun"), at("syn.sequences.fasta"), "--format", "csv",
                  "-o", at("huge.csv"), "--features", ff, NULL};
    CHECK(run_limited(text, 300, hp) == 1);
    CHECK_CONTAINS(*text, "protein synth0001: residue 1 (its largest feature value 3.40282e+38): the models' "
                          "probabilities are not finite");
    struct stat st;
    CHECK(stat(at("huge.csv"), &st) != 0);
    char *ev[] = {"foldsweep", "evaluate", at("okrun"), "--sequences", at("syn.sequences.fasta"),
                  "--labels", at("syn.labels.fasta"), "--allow-overlap", "--features", ff, NULL};
    CHECK(run_limited(text, 300, ev) == 1);
    CHECK_CONTAINS(*text, "the models' probabilities are not finite");
    CHECK(strstr(*text, "Q3") == NULL);
}

static void test_commands(void)
{
    char *text = NULL;
    CHECK(tp_run("synth -o '%s' --format fasta --proteins 24 --seed 2 --features 4 --features-format npy",
                 at("syn")) == 0);
    write_sweep("ok.yaml", "[onehot, {npy: syn.features}]", "");
    char *ok_run[] = {"foldsweep", "run", at("ok.yaml"), "--out", at("okrun"), "--threads", "1", NULL};
    CHECK(run_limited(&text, 300, ok_run) == 0);
    fifo_commands(&text);
    nan_runs(&text);
    huge_columns(&text);
    free(text);
}

int main(void)
{
    tp_tmpdir(dir, sizeof dir, "featfaults");
    test_npy_values();
    test_half_range();
    test_h5_values();
    test_not_regular();
    test_commands();
    for (int i = 0; i < n_paths; i++) free(paths[i]);
    return test_finish();
}
