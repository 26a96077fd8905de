/*
 * Per-residue feature columns through the whole product (issue #31, items
 * 1 and 4), on `foldsweep synth --features 16` (an HDF5 file, or .npy
 * files in a build without libhdf5):
 *
 * 1. data.features' mistakes, each at its line:col.
 * 2. The informative columns beat one-hot residues by a set margin (the
 *    same trials, the same folds).
 * 3. The same leaderboard and model files on 1 and 2 threads and on 2 MPI
 *    ranks (the columns travel with the broadcast data); a chain model
 *    reads them too.
 * 4. export, predict and evaluate read the new proteins' columns from the
 *    sources the models name, or from --features naming a copy (the same
 *    numbers); another kind, or columns of another width, are refused.
 * 5. A changed feature file is changed data: the resume is refused.
 */
#include "features/features.h"
#include "test_mpirun.h"
#include "test_runs.h"
#include "test_sweep_expect.h"

static char dir[480];
static int h5; /* this build reads HDF5: the features are syn.features.h5, else syn.features/ of .npy */

static const char *SWEEP_FMT = "data:\n  sequences: syn.sequences.fasta\n  labels: syn.labels.fasta\n"
                               "  mask: syn.mask.fasta\n%s  window: %s\n  folds: 3\n"
                               "model:\n  depth: 1\n  filters: [8, 16]\n  kernel: 5\n  dense: 16\n"
                               "training:\n  epochs: 3\n  %s\n  seed: 3\n";

static void errors(void)
{
    const char *d = "data:\n  synth: {proteins: 20}\n";
    char t[600];
#define BAD(features, pos, msg)                                    \
    snprintf(t, sizeof t, "%s  features: %s\n", d, features); \
    expect_at(__LINE__, t, 0, pos, msg)
    BAD("[{h5: x.h5}, onehot]", "3:26", "onehot comes first");
    BAD("[onehot, {h5: x.h5, columns: percent}]", "3:33", "unknown option 'columns' for a h5 source");
    BAD("[onehot, {pssm: p, missing: maybe}]", "3:41", "expected zeros or error");
    BAD("[onehot, {h5: x.h5, dataset: emb}]", "3:42", "holding {id}");
    BAD("[onehot, {pssm: p, hhm: q}]", "3:32", "one source per item");
    BAD("[onehot, {csv: p}]", "3:22", "expected onehot or a source");
    BAD("onehot", "3:13", "expected a list of onehot and sources");
#undef BAD
    snprintf(t, sizeof t, "%s  feature_store: double\n", d);
    expect_at(__LINE__, t, 0, "3:18", "expected auto, half or float");
}

static void write_sweep(const char *name, const char *features, const char *window)
{
    char path[600], text[1600], line[200] = "";
    if (features) snprintf(line, sizeof line, "  features: %s\n", features);
    snprintf(text, sizeof text, SWEEP_FMT, line, window,
             strcmp(window, "chain") ? "batch_size: 16" : "batch_residues: 800");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tp_write_text(path, text);
}

/* The leaderboard's best mean (rank 1's "mean" column of the CSV). */
static double best_mean(const char *run)
{
    char out[600];
    snprintf(out, sizeof out, "%s/best.csv", dir);
    char *argv[] = {"foldsweep", "leaderboard", (char *)run, "--format", "csv", NULL};
    CHECK(tp_run_argv(argv, out) == 0);
    char *s = tp_read_file(out, NULL), *row = s ? strchr(s, '\n') : NULL;
    double v = -1.0;
    if (row) {
        char *p = row + 1;
        for (int c = 0; c < 5 && p; c++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        if (p) v = strtod(p, NULL);
    }
    free(s);
    return v;
}

static char *board(const char *dir_) { return tr_board(dir_, dir); }

static void sweep_runs(const char *features)
{
    char sw[600], run[600], log[600], other[600];
    write_sweep("f.yaml", features, "11");
    write_sweep("plain.yaml", NULL, "11");
    snprintf(sw, sizeof sw, "%s/f.yaml", dir);
    snprintf(run, sizeof run, "%s/f1", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    CHECK(tp_run("plan '%s'", sw) == 0);
    CHECK_MSG(strstr(out_text, "features: one-hot + 16 columns from 1 file source, stored as floats: 64 bytes per "
                               "residue"), "plan: %s", out_text);
    /* 1 and 2 threads and 2 MPI ranks (f1, f2, f-np2): the same board and models. */
    const TrSame same = {.sweep = sw, .scratch = dir, .tag = "f", .board = board, .threads = 2, .ranks = 2,
                         .models = 6};
    free(tr_same_everywhere(&same));
    char log1[700];
    snprintf(log1, sizeof log1, "%s.log", run);
    CHECK(tp_count_in_file(log1, "64 bytes per residue") == 1); /* the run says it too */
    snprintf(other, sizeof other, "%s/plain.yaml", dir);
    char plain[600];
    snprintf(plain, sizeof plain, "%s/plain", dir);
    CHECK(tr_run(other, plain, "1", log) == 0);
    const double qf = best_mean(run), q0 = best_mean(plain);
    printf("best Q3: one-hot %.4f, one-hot + 16 feature columns %.4f\n", q0, qf);
    CHECK_MSG(q0 > 0.3 && qf > q0 + 0.05, "the informative columns should add 5 points: %.4f vs %.4f", qf, q0);

    /* A chain model reads the columns too, the same on 1 and 2 threads. */
    write_sweep("c.yaml", features, "chain");
    snprintf(sw, sizeof sw, "%s/c.yaml", dir);
    const TrSame chain = {.sweep = sw, .scratch = dir, .tag = "c", .board = board, .threads = 2};
    free(tr_same_everywhere(&chain));
    char journal[700];
    snprintf(journal, sizeof journal, "%s/c1/journal.jsonl", dir);
    CHECK(tp_count_in_file(journal, "onehot+") > 0); /* the trial config names its inputs */
}

static char *file_text(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *s = tp_read_file(p, NULL);
    return s ? s : strdup("");
}

static void models_out(const char *kind, const char *src)
{
    CHECK(tp_run("export '%s/f1' -o '%s/exp'", dir, dir) == 0);
    CHECK(tp_run("predict '%s/exp' '%s/syn.sequences.fasta' --format csv -o '%s/p1.csv'", dir, dir, dir) == 0);
    /* The same columns from a copy named on the command line. */
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp -r '%s/%s' '%s/copy'", dir, src, dir);
    CHECK(system(cmd) == 0);
    CHECK(tp_run("predict '%s/exp' '%s/syn.sequences.fasta' --format csv -o '%s/p2.csv' --features %s:'%s/copy'",
                 dir, dir, dir, kind, dir) == 0);
    char *p1 = file_text("p1.csv"), *p2 = file_text("p2.csv");
    CHECK(strlen(p1) > 1000 && !strcmp(p1, p2));
    free(p1), free(p2);
    /* Another kind, and another width, refused. */
    CHECK(tp_run("predict '%s/exp' '%s/syn.sequences.fasta' --features pssm:'%s'", dir, dir, dir) != 0);
    CHECK(strstr(err_text, "source 1 is pssm") != NULL);
    CHECK(tp_run("evaluate '%s/exp' --sequences '%s/syn.sequences.fasta' --labels '%s/syn.labels.fasta' "
                 "--allow-overlap --format json",
                 dir, dir, dir) == 0);
    CHECK(strstr(out_text, "\"q3\":") != NULL);
    CHECK(tp_run("synth -o '%s/w8' --format fasta --proteins 150 --seed 1 --features 8%s", dir,
                 h5 ? "" : " --features-format npy") == 0);
    CHECK(tp_run("predict '%s/exp' '%s/syn.sequences.fasta' --features %s:'%s/w8.features%s'", dir, dir, kind, dir,
                 h5 ? ".h5" : "") != 0);
    CHECK(strstr(err_text, "the files give 8 columns per residue, the models read 16") != NULL);
}

/* Other values in one protein's feature file: the run's data changed, and
 * the resume is refused (the columns are in the data's fingerprint). The
 * .npy layout, whose last bytes are the last value, in either build. */
static void changed_file(void)
{
    CHECK(tp_run("synth -o '%s/alt' --format fasta --proteins 150 --seed 1 --features 16 --features-format npy",
                 dir) == 0);
    char sw[600], run[600], log[600], npy[600];
    write_sweep("n.yaml", "[onehot, {npy: alt.features}]", "11");
    snprintf(sw, sizeof sw, "%s/n.yaml", dir);
    snprintf(run, sizeof run, "%s/n1", dir);
    snprintf(log, sizeof log, "%s/resume.txt", dir);
    CHECK(tr_run(sw, run, "1", log) == 0);
    snprintf(npy, sizeof npy, "%s/alt.features/synth0001.npy", dir);
    size_t n = 0;
    char *b = tp_read_file(npy, &n);
    CHECK(b && n > 200);
    if (b && n > 200) {
        b[n - 4] ^= 0x40; /* the low byte of the last float: still finite (a flipped exponent bit made it NaN) */
        tp_write_file(npy, b, n, "wb");
    }
    free(b);
    CHECK(tr_run(sw, run, "1", log) != 0);
    CHECK_MSG(tp_count_in_file(log, "training data changed") > 0, "see %s", log);
}

int main(void)
{
    (void)TR_SWEEP; /* test_runs.h's shared sweep: these runs have their own */
    errors();
    tp_tmpdir(dir, sizeof dir, "features");
    h5 = features_have_h5();
    CHECK(tp_run("synth -o '%s/syn' --format fasta --proteins 150 --seed 1 --features 16%s", dir,
                 h5 ? "" : " --features-format npy") == 0);
    const char *features = h5 ? "[onehot, {h5: syn.features.h5}]" : "[onehot, {npy: syn.features}]";
    printf("features: %s\n", features);
    sweep_runs(features);
    models_out(h5 ? "h5" : "npy", h5 ? "syn.features.h5" : "syn.features");
    changed_file();
    return test_finish();
}
