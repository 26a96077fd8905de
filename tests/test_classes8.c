/*
 * test_classes8: 8-state (DSSP-8) labels, #31 item 2. The one table of the
 * eight states and their reduction (util/alphabet.h), the label byte (a
 * 3-state label's byte unchanged), the readers with data.classes 8 (record
 * files, FASTA sets and the NetSurfP CSV's dssp8 column) and their
 * refusals (UCI, 3-state labels, a CSV without dssp8), the prepared file
 * and the fingerprint, Q8 / reduced Q3 / per-class MCC on a hand-made
 * 8 x 8 confusion, the sweep's data.classes and the explicit class weights
 * of 8 classes, and the trainer's 8-wide output.
 */
#include <math.h>

#include "metrics/metrics.h"
#include "model/model.h"
#include "sweep/sweep.h"
#include "test_data_util.h"
#include "test_sweep_expect.h"
#include "train/train.h"

static void test_alphabet(void)
{
    CHECK(FS_MAX_CLASSES == 8 && FS_CLASSES8 == 8 && FS_CLASSES == 3);
    CHECK(!strcmp(fs_class_letters(8), "HGIEBTSC") && !strcmp(fs_class_letters(3), "HEC"));
    CHECK(!strcmp(fs_class_letters(0), "HEC")); /* 0: a struct or file from before 8 states */
    /* The standard reduction: H G I -> H, E B -> E, T S C -> C; indices
     * 0..2 of the reduction line up with the 3-state classes. */
    const char *want = "HHHEECCC";
    for (int c = 0; c < 8; c++) CHECK(FS_CLASS_LETTERS[fs_class_reduce(8, c)] == want[c]);
    for (int c = 0; c < 3; c++) CHECK(fs_class_reduce(3, c) == c);
    CHECK(!strcmp(fs_class_name(8, FS_SS8_G), "3-10 helix") && !strcmp(fs_class_name(3, FS_SS_E), "strand"));
    /* The label byte: a 3-state class's byte is the class itself (files and
     * fingerprints of 3-state sets unchanged), and no class meets the
     * unscored bit. */
    for (int c = 0; c < 3; c++) CHECK(FS_SS_LABEL(c) == c);
    for (int c = 0; c < 8; c++) {
        CHECK(FS_SS_CLASS(FS_SS_LABEL(c)) == c);
        CHECK(FS_SS_SCORED(FS_SS_LABEL(c)) && !FS_SS_SCORED(FS_SS_LABEL(c) | FS_SS_UNSCORED));
        CHECK(FS_SS_CLASS(FS_SS_LABEL(c) | FS_SS_UNSCORED) == c);
    }
    /* The letters read: DSSP's, coil's spellings, either case. */
    const char *in = "HGIEBTSCLP- _hgiebtsc";
    const int out[] = {0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 0, 1, 2, 3, 4, 5, 6, 7};
    for (int i = 0; in[i]; i++) CHECK_MSG(data_ss8_code(in[i]) == out[i], "'%c'", in[i]);
    CHECK(data_ss8_code('X') < 0 && data_ss8_code('1') < 0);
    CHECK(data_label_code(3, 'G') == FS_SS_H && data_label_code(8, 'G') == FS_SS8_G);
}

static const char *RECORDS8 = ">a\nMKVLAAGIVGLL\nHHHHGGGTTSCC\n\n>b\nACDEFGHIKLMNP\nEEEEBBSSTT-CC\n\n";

static void test_records(void)
{
    FsDataset ds;
    FsErr err = {0};
    const char *path = td_write("r8.txt", RECORDS8);
    FsLoadSpec spec = {FS_FMT_AUTO, &path, 1, NULL, NULL, NULL};
    CHECK(data_load_classes(&ds, &spec, 8, &err) == 0);
    CHECK(ds.classes == 8 && ds.n_prot == 2 && ds.n_res == 25);
    CHECK(FS_SS_CLASS(ds.ss[4]) == FS_SS8_G && FS_SS_CLASS(ds.ss[7]) == FS_SS8_T && FS_SS_CLASS(ds.ss[9]) == FS_SS8_S);
    CHECK(FS_SS_CLASS(ds.ss[16]) == FS_SS8_B && FS_SS_CLASS(ds.ss[22]) == FS_SS8_C);
    CHECK(ds.stats.label_counts[FS_SS8_H] == 4 && ds.stats.label_counts[FS_SS8_C] == 5);
    uint64_t fp8 = ds.fingerprint;
    /* The prepared file keeps the classes (and a 3-state one is as before). */
    uint8_t *bytes;
    uint64_t n;
    CHECK(data_serialize(&ds, &bytes, &n, &err) == 0);
    CHECK(bytes[8] == 1 && bytes[9] == 1); /* version 1, with the 8-state bit 0x100 */
    FsDataset back;
    CHECK(data_deserialize(&back, bytes, n, "mem", &err) == 0);
    CHECK(back.classes == 8 && back.fingerprint == fp8 && !memcmp(back.ss, ds.ss, ds.n_res));
    free(bytes);
    data_free(&back);
    data_free(&ds);
    /* The same file with 3 classes: reduced, as always. */
    CHECK(data_load(&ds, &spec, &err) == 0);
    CHECK(ds.classes == 3 && FS_SS_CLASS(ds.ss[4]) == FS_SS_H && FS_SS_CLASS(ds.ss[16]) == FS_SS_E);
    CHECK(ds.fingerprint != fp8);
    CHECK(data_serialize(&ds, &bytes, &n, &err) == 0);
    CHECK(bytes[8] == 1 && bytes[9] == 0);
    free(bytes);
    data_free(&ds);
}

static void test_fasta_csv(void)
{
    FsDataset ds;
    FsErr err = {0};
    const char *seq = td_write("s.fasta", ">p1\nMKVLAAGIVG\n>p2\nACDEFG\n");
    const char *lab = td_write("l.fasta", ">p1\nHHHGGG-TSC\n>p2\nEEBB-L\n");
    FsLoadSpec fa = {FS_FMT_FASTA, NULL, 0, seq, lab, NULL};
    CHECK(data_load_classes(&ds, &fa, 8, &err) == 0);
    CHECK(ds.classes == 8 && FS_SS_CLASS(ds.ss[3]) == FS_SS8_G && FS_SS_CLASS(ds.ss[6]) == FS_SS8_C);
    CHECK(FS_SS_CLASS(ds.ss[12]) == FS_SS8_B && FS_SS_CLASS(ds.ss[15]) == FS_SS8_C);
    data_free(&ds);
    /* CSV: the dssp8 column, even where dssp3 is there too; disorder 0 unscored. */
    const char *csv = td_write("n.csv", "input, dssp3, dssp8, disorder, cb513_mask\n"
                                        "M K V L A,C H H H C,C G G I T,1 1 1 1 0,1 1 1 1 1\n"
                                        "A C D,E E C,E B S,1 1 1,1 1 1\n");
    FsLoadSpec cs = {FS_FMT_CSV, &csv, 1, NULL, NULL, NULL};
    CHECK(data_load_classes(&ds, &cs, 8, &err) == 0);
    CHECK(ds.classes == 8 && FS_SS_CLASS(ds.ss[1]) == FS_SS8_G && FS_SS_CLASS(ds.ss[3]) == FS_SS8_I);
    CHECK(!FS_SS_SCORED(ds.ss[4]) && FS_SS_CLASS(ds.ss[4]) == FS_SS8_T && FS_SS_CLASS(ds.ss[6]) == FS_SS8_B);
    data_free(&ds);
    CHECK(data_load(&ds, &cs, &err) == 0); /* 3 classes: dssp3, as before */
    CHECK(ds.classes == 3 && FS_SS_CLASS(ds.ss[1]) == FS_SS_H && FS_SS_CLASS(ds.ss[0]) == FS_SS_C);
    data_free(&ds);
}

/* data_load_classes(8) fails with err naming the file and saying why. */
static void refused_at(int line, FsFormat fmt, const char *name, const char *text, const char *why)
{
    FsDataset ds;
    FsErr err = {0};
    const char *path = td_write(name, text);
    FsLoadSpec spec = {fmt, &path, 1, NULL, NULL, NULL};
    CHECK_MSG(data_load_classes(&ds, &spec, 8, &err) != 0, "line %d: loaded", line);
    CHECK_MSG(strstr(err.msg, name) && strstr(err.msg, why), "line %d: \"%s\" lacks %s and \"%s\"", line, err.msg,
              name, why);
}

static void test_refused(void)
{
    refused_at(__LINE__, FS_FMT_AUTO, "u.txt", "<>\nA h\nC e\nD _\nend\n", "UCI pair file's are 3-state");
    refused_at(__LINE__, FS_FMT_AUTO, "three.txt", "MKVLA\nHHECC\n\n", "no G I B T S");
    refused_at(__LINE__, FS_FMT_CSV, "d3.csv", "input, dssp3\nM K,H C\n", "lacks");
    refused_at(__LINE__, FS_FMT_AUTO, "bad.txt", "MKVLA\nHHGXC\n\n", "DSSP-8");
    /* A FASTA set of 3-state labels: named by its labels file. */
    FsDataset ds;
    FsErr err = {0};
    const char *seq = td_write("s3.fasta", ">p1\nMKVLA\n"), *lab = td_write("l3.fasta", ">p1\nHHECC\n");
    FsLoadSpec fa = {FS_FMT_FASTA, NULL, 0, seq, lab, NULL};
    CHECK(data_load_classes(&ds, &fa, 8, &err) != 0 && strstr(err.msg, "l3.fasta") && strstr(err.msg, "3-state"));
}

/* A hand-made 8 x 8 confusion (rows true, columns predicted). */
static void test_metrics8(void)
{
    uint64_t c[8][8] = {{0}};
    c[FS_SS8_H][FS_SS8_H] = 40, c[FS_SS8_H][FS_SS8_G] = 5; /* a helix for a helix: Q3 right, Q8 wrong */
    c[FS_SS8_G][FS_SS8_G] = 10, c[FS_SS8_G][FS_SS8_C] = 5;
    c[FS_SS8_E][FS_SS8_E] = 20, c[FS_SS8_E][FS_SS8_B] = 5;
    c[FS_SS8_B][FS_SS8_E] = 5;
    c[FS_SS8_T][FS_SS8_S] = 5, c[FS_SS8_T][FS_SS8_T] = 5;
    c[FS_SS8_C][FS_SS8_C] = 30, c[FS_SS8_C][FS_SS8_H] = 10;
    FsMetrics m;
    metrics_from_classes(&m, 8, c);
    CHECK(m.classes == 8 && m.n == 140);
    CHECK_NEAR(m.q8, 105.0 / 140.0, 1e-15);
    /* Reduced: every cell but G->C, C->H stays on the reduced diagonal. */
    CHECK_NEAR(m.q3, 125.0 / 140.0, 1e-15);
    uint64_t r[8][8];
    metrics_reduce_confusion(8, c, r);
    CHECK(r[0][0] == 55 && r[0][2] == 5 && r[1][1] == 30 && r[2][2] == 40 && r[2][0] == 10);
    /* MCC of G: tp 10, fp 5, fn 5, tn 120. */
    const double mcc_g = (10.0 * 120 - 5.0 * 5) / sqrt(15.0 * 15 * 125 * 125);
    CHECK_NEAR(m.mcc[FS_SS8_G], mcc_g, 1e-12);
    CHECK_NEAR(m.precision[FS_SS8_B], 0.0, 0);
    CHECK(m.mcc[FS_SS8_I] == 0.0); /* never present, never predicted: undefined, 0 */
    CHECK_NEAR(m.recall[FS_SS8_T], 0.5, 1e-15);
    /* A 3-state confusion: q3 the trace, q8 none. */
    const uint64_t c3[3][3] = {{5, 1, 0}, {0, 4, 0}, {0, 0, 2}};
    metrics_from_confusion(&m, c3);
    CHECK(m.classes == 3 && isnan(m.q8));
    CHECK_NEAR(m.q3, 11.0 / 12.0, 1e-15);
    /* The ranking metric of an 8-state fold. */
    FsFitResult res;
    memset(&res, 0, sizeof res);
    res.classes = 8;
    memcpy(res.best_confusion, c, sizeof c);
    CHECK_NEAR(train_result_metric(&res, FS_METRIC_Q8), 105.0 / 140.0, 1e-15);
    CHECK_NEAR(train_result_metric(&res, FS_METRIC_Q3), 125.0 / 140.0, 1e-15);
    CHECK(!strcmp(metrics_kind_name(FS_METRIC_Q8), "q8") && metrics_kind_parse("q8") == FS_METRIC_Q8);
}

#define D8 "data: {inputs: [r8.txt], classes: 8, window: 7}\n"

static void test_sweep(void)
{
    EXPECT("data: {synth: {proteins: 30}, classes: 5}\n", "1:40", "data.classes: expected 3");
    EXPECT("data: {synth: {proteins: 30}, classes: 8}\n", "1:40", "synth data is 3-state");
    EXPECT("data: {synth: {proteins: 30}}\nrun: {metric: q8}\n", "2:15", "q8 ranks 8-state runs");
    EXPECT(D8 "run: {metric: q3}\n", "2:15", "ranks by q8");
    EXPECT(D8 "training:\n  class_weights: {H: 1, E: 1, C: 1}\n", "3:18", "missing class G");
    EXPECT(D8 "training:\n  class_weights: {H: 1, G: 2, I: 3, E: 1, B: 2, T: 1, S: 1, C: 1, X: 1}\n", "3:67",
           "unknown class 'X'");
    FsSweep sw;
    char why[2000];
    CHECK_MSG(sweep_text(&sw, D8 "training:\n  class_weights: {H: 1, G: 2, I: 3, E: 1, B: 2, T: 1.5, S: 1, C: 0.5}\n",
                         why, sizeof why) == 0, "%s", why);
    CHECK(sw.classes == 8 && sw.metric == FS_METRIC_Q8 && sw.n_trials == 1);
    CHECK(strstr(sw.canonical, "  classes: 8\n") && strstr(sw.canonical, "metric: q8"));
    CHECK(strstr(sw.canonical, "class_weights: {H: 1, G: 2, I: 3, E: 1, B: 2, T: 1.5, S: 1, C: 0.5}"));
    CHECK(strstr(sw.trials[0].config, "\"class_weights\":{\"B\":2,\"C\":0.5,\"E\":1,\"G\":2,\"H\":1,\"I\":3,\"S\":1,"
                                      "\"T\":1.5}"));
    const FsTrial *t = &sw.trials[0];
    CHECK(t->arch.classes == 8 && t->train.class_w[FS_SS8_I] == 3.0f && t->train.class_w[FS_SS8_C] == 0.5f);
    FsErr err = {0};
    CHECK(train_spec_check(&t->train, &err) == 0);
    /* The model's output layer is 8 wide. */
    FsNet net;
    CHECK(model_compile(&net, &t->arch, 4, &err) == 0 && net.classes == 8);
    CHECK(net.layer[net.n - 1].out_c == 8);
    sweep_free(&sw);
    /* A 3-state sweep's canonical text never names the classes. */
    CHECK(sweep_text(&sw, "data: {synth: {proteins: 30}, classes: 3}\n", why, sizeof why) == 0);
    CHECK(!strstr(sw.canonical, "classes") && sw.metric == FS_METRIC_Q3 && sw.trials[0].arch.classes == 0);
    sweep_free(&sw);
    /* A prepared file holds its labels' classes: a 3-state one is refused by an 8-state sweep. */
    FsDataset ds;
    const char *rec = td_path("r8.txt");
    FsLoadSpec spec = {FS_FMT_AUTO, &rec, 1, NULL, NULL, NULL};
    CHECK(data_load(&ds, &spec, &err) == 0 && data_assign_folds(&ds, 2, 1, &err) == 0);
    CHECK(data_write_prepared(&ds, td_path("p3.bin"), &err) == 0);
    data_free(&ds);
    CHECK(sweep_text(&sw, "data: {prepared: p3.bin, classes: 8}\n", why, sizeof why) == 0);
    FsErrList errs = {0};
    CHECK(sweep_load_data(&sw, &ds, &errs) != 0);
    errlist_join(&errs, why, sizeof why);
    CHECK_MSG(strstr(why, "p3.bin") && strstr(why, "3-state labels, but data.classes is 8"), "%s", why);
    errlist_free(&errs);
    sweep_free(&sw);
    CHECK(data_load_classes(&ds, &spec, 8, &err) == 0 && data_assign_folds(&ds, 2, 1, &err) == 0);
    CHECK(data_write_prepared(&ds, td_path("p8.bin"), &err) == 0);
    data_free(&ds);
    CHECK(sweep_text(&sw, "data: {prepared: p8.bin, classes: 8}\n", why, sizeof why) == 0);
    CHECK(sweep_load_data(&sw, &ds, &errs) == 0 && ds.classes == 8);
    data_free(&ds);
    sweep_free(&sw);
    /* Balanced weights over 8 classes: n / (8 count). */
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.class_weights = FS_CW_BALANCED;
    const uint64_t counts[8] = {40, 10, 0, 20, 5, 5, 0, 0};
    float w[8];
    train_class_weights(&ts, 8, counts, w);
    CHECK_NEAR(w[FS_SS8_H], 80.0 / 320.0, 1e-6);
    CHECK_NEAR(w[FS_SS8_B], 80.0 / 40.0, 1e-6);
    CHECK(w[FS_SS8_I] == 1.0f);
}

int main(void)
{
    td_tmpdir();
    test_alphabet();
    test_records();
    test_fasta_csv();
    test_refused();
    test_metrics8();
    /* The sweep reads r8.txt relative to its own folder: run from there. */
    if (chdir(td_tmpdir()) != 0) TEST_SKIP("cannot enter %s", td_tmpdir());
    test_sweep();
    td_cleanup();
    return test_finish();
}
