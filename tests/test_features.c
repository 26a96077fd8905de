/*
 * test_features.c: per-residue features (src/features, data.h's feature
 * matrix, util/half.h). Halves both ways, all 65536 of them and the
 * rounding cases; each reader on the committed real-layout samples
 * (tests/features: a 12-residue PSSM and HHM) and on files written here
 * (PSSM both column choices, HHM with '*', npy f4 and f2 with 1.0 and 2.0
 * headers, HDF5 where the build has libhdf5); their refusals (a row count
 * that is not the protein's, naming protein and file; a missing file and
 * `missing: zeros`; a wrong residue letter; a bad npy dtype, order, rank or
 * size; truncated files); half storage; the fingerprint (a changed feature
 * changes it, a data set without features keeps its old one); the prepared
 * file round trip with features (and version 1 bytes without); `synth
 * --features` (same seed, same file; the signal where synth.h says).
 */
#include <stdint.h>
#include <sys/stat.h>

#include "features/features.h"
#include "synth/synth.h"
#include "test_data_util.h"
#include "test_proc.h"
#include "test_features_util.h"

#if defined(FS_HAVE_HDF5)
#include <hdf5.h>
#endif

#define SAMPLES FS_TEST_SRC_DIR "/tests/features"
#define SAMPLE_SEQ "MKTAYIAKQRQG"

/* ---------------------------------------------------------------------- */
/* Halves                                                                  */

static void test_half_exhaustive(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = util_float_from_half((uint16_t)h);
        uint16_t back = util_half_from_float(f);
        if (back != h) bad++;
        const int e = (h >> 10) & 31, m = h & 1023;
        if (e == 31 && m && f == f) bad++;            /* a NaN half widens to a NaN */
        if (e == 31 && !m && !isinf(f)) bad++;        /* infinities */
        if (e < 31 && fabsf(f) > 65504.0f) bad++;     /* the largest finite half */
        if (bad && bad < 5 && back != h) fprintf(stderr, "half %04x -> %.9g -> %04x\n", h, (double)f, back);
    }
    CHECK_MSG(bad == 0, "%d halves do not come back", bad);
    /* Widening is exact: a few values by their bits. */
    CHECK(util_float_from_half(0x3c00) == 1.0f);
    CHECK(util_float_from_half(0xc000) == -2.0f);
    CHECK(util_float_from_half(0x7bff) == 65504.0f);
    CHECK(util_float_from_half(0x0001) == ldexpf(1.0f, -24));
    CHECK(util_float_from_half(0x03ff) == ldexpf(1023.0f, -24));
    CHECK(util_float_from_half(0x0400) == ldexpf(1.0f, -14));
    CHECK(util_float_bits(util_float_from_half(0x8000)) == 0x80000000u);
}

static void test_half_rounding(void)
{
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1). */
    CHECK(util_half_from_float(1.0f + ldexpf(1.0f, -11)) == 0x3c00);
    /* 1 + 3 x 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up. */
    CHECK(util_half_from_float(1.0f + 3 * ldexpf(1.0f, -11)) == 0x3c02);
    /* Just above the tie rounds up. */
    CHECK(util_half_from_float(nextafterf(1.0f + ldexpf(1.0f, -11), 2.0f)) == 0x3c01);
    CHECK(util_half_from_float(65504.0f) == 0x7bff);
    CHECK(util_half_from_float(65519.996f) == 0x7bff);   /* below the tie to infinity */
    CHECK(util_half_from_float(65520.0f) == 0x7c00);     /* the tie: to even, infinity */
    CHECK(util_half_from_float(1e6f) == 0x7c00);
    CHECK(util_half_from_float(-1e6f) == 0xfc00);
    CHECK(util_half_from_float(INFINITY) == 0x7c00);
    CHECK(util_half_from_float(-INFINITY) == 0xfc00);
    uint16_t n = util_half_from_float(NAN);
    CHECK((n & 0x7c00) == 0x7c00 && (n & 0x3ff));
    CHECK(util_half_from_float(util_bits_float(0x7f800001u)) != 0x7c00); /* a NaN's payload stays a NaN */
    /* Subnormals: 2^-24 is the least; 2^-25 is the tie with zero (even: 0). */
    CHECK(util_half_from_float(ldexpf(1.0f, -24)) == 0x0001);
    CHECK(util_half_from_float(ldexpf(1.0f, -25)) == 0x0000);
    CHECK(util_half_from_float(nextafterf(ldexpf(1.0f, -25), 1.0f)) == 0x0001);
    CHECK(util_half_from_float(-ldexpf(1.0f, -26)) == 0x8000);
    CHECK(util_half_from_float(ldexpf(3.0f, -25)) == 0x0002);  /* 1.5 units: tie to even 2 */
    CHECK(util_half_from_float(ldexpf(5.0f, -25)) == 0x0002);  /* 2.5 units: tie to even 2 */
    CHECK(util_half_from_float(ldexpf(2047.0f, -25)) == 0x0400); /* 1023.5 units: up to the least normal */
    CHECK(util_half_from_float(0.0f) == 0 && util_half_from_float(-0.0f) == 0x8000);
    CHECK(util_half_from_float(0.1f) == 0x2e66);
    CHECK(util_half_from_float(1.0f / 3.0f) == 0x3555);
#if defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__aarch64__))
    /* Against the compiler's own conversion, over many floats. */
    FsRng r;
    uint64_t w[1] = {31};
    fs_rng_seed(&r, w, 1);
    int bad = 0;
    for (int i = 0; i < 2000000; i++) {
        uint32_t bits = (uint32_t)fs_rng_u64(&r);
        if (i & 1) bits = (bits & 0x807fffffu) | ((uint32_t)(100 + i % 50) << 23); /* around the half range */
        const float f = util_bits_float(bits);
        if (f != f) continue;
        _Float16 ref = (_Float16)f;
        uint16_t rb;
        memcpy(&rb, &ref, 2);
        if (rb != util_half_from_float(f) && bad++ < 5)
            fprintf(stderr, "%.9g: compiler %04x, half.h %04x\n", (double)f, rb, util_half_from_float(f));
    }
    CHECK_MSG(bad == 0, "%d floats convert otherwise than the compiler's _Float16", bad);
#endif
}

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */

/* A data set from a record file's text. */
static void load_records(FsDataset *ds, const char *name, const char *text)
{
    FsErr err;
    CHECK(td_load(ds, FS_FMT_RECORDS, td_write(name, text), &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
}



static float logistic(double x) { return (float)(1.0 / (1.0 + exp(-x))); }

/* ---------------------------------------------------------------------- */
/* PSSM and HHM                                                            */

static void test_samples(void)
{
    FsDataset ds;
    FsErr err = {0};
    CHECK(td_load(&ds, FS_FMT_RECORDS, SAMPLES "/sample.records", &err) == 0);
    CHECK(ds.n_res == 12 && ds.feat_dim == 0 && ds.feat == NULL);
    const uint64_t fp0 = ds.fingerprint;
    FsFeatSpec spec = tf_one_source(FS_FEAT_PSSM, SAMPLES);
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds.feat_dim == 20 && !ds.feat_half && ds.fingerprint != fp0);
    /* Residue 1 (M): log-odds A -4, M 7 (column 12 of A R N D C Q E G H I L K M ...). */
    CHECK_NEAR(data_feature(&ds, 0, 0), logistic(-4), 1e-7);
    CHECK_NEAR(data_feature(&ds, 0, 12), logistic(7), 1e-7);
    CHECK_NEAR(data_feature(&ds, 11, 7), logistic(7), 1e-7); /* residue 12, G */
    spec.src[0].pssm_percent = 1;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK_NEAR(data_feature(&ds, 0, 12), 0.60, 1e-7);
    CHECK_NEAR(data_feature(&ds, 0, 17), 0.40, 1e-7);
    CHECK_NEAR(data_feature(&ds, 0, 0), 0.0, 0);
    float row[20], sum = 0;
    data_feature_row(&ds, 5, row);
    for (int j = 0; j < 20; j++) sum += row[j];
    CHECK_NEAR(sum, 1.0, 1e-6);

    /* HHM: 2^(-x/1000), '*' 0; columns in A C D E ... order. Then both. */
    spec = tf_one_source(FS_FEAT_HHM, SAMPLES);
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds.feat_dim == 20);
    CHECK_NEAR(data_feature(&ds, 0, 10), 1.0, 0);   /* M 1: M is 0 */
    CHECK_NEAR(data_feature(&ds, 0, 0), 0.0, 0);    /* '*' */
    CHECK_NEAR(data_feature(&ds, 0, 1), 0.25, 1e-7); /* 2000 */
    CHECK_NEAR(data_feature(&ds, 1, 8), 0.5, 1e-7);  /* K 2: K is 1000 */
    spec.n = 2;
    spec.src[1] = (FsFeatSource){.kind = FS_FEAT_PSSM, .path = SAMPLES, .pssm_percent = 1};
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(ds.feat_dim == 40 && !ds.feat_half);
    CHECK_NEAR(data_feature(&ds, 1, 8), 0.5, 1e-7);
    CHECK_NEAR(data_feature(&ds, 0, 20 + 12), 0.60, 1e-7);
    data_free(&ds);
}

/* A PSSM for seq in the test folder dir, rows `rows` (<= strlen(seq)),
 * log-odds v = (i + j) % 7 - 3; `letter_at`: a residue whose letter is
 * written as 'W' instead (-1: none). */
static void write_pssm(const char *name, const char *seq, int rows, int letter_at, int footer)
{
    char text[16384];
    int k = snprintf(text, sizeof text, "\nLast position-specific scoring matrix computed\n"
                                        "   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V\n");
    for (int i = 0; i < rows; i++) {
        k += snprintf(text + k, sizeof text - (size_t)k, "%5d %c  ", i + 1, i == letter_at ? 'W' : seq[i]);
        for (int j = 0; j < 20; j++) k += snprintf(text + k, sizeof text - (size_t)k, "%3d", (i + j) % 7 - 3);
        for (int j = 0; j < 20; j++) k += snprintf(text + k, sizeof text - (size_t)k, "%4d", j == i % 20 ? 100 : 0);
        k += snprintf(text + k, sizeof text - (size_t)k, "  1.00 0.50\n");
    }
    if (footer) snprintf(text + k, sizeof text - (size_t)k, "\n                      K         Lambda\nStandard Ungapped    0.1 0.3\n");
    td_write(name, text);
}

static void test_pssm_written(void)
{
    FsDataset ds;
    mkdir(td_path("pssm"), 0755);
    load_records(&ds, "two.records", ">p1\nACDX\nHHEC\n\n>q/2\nGGSTV\nCCCEE\n\n");
    write_pssm("pssm/p1.pssm", "ACDE", 4, -1, 1); /* X in the data set takes any letter (E here) */
    write_pssm("pssm/q_2.pssm", "GGSTV", 5, -1, 0); /* no footer; '/' in the id as '_' */
    FsFeatSpec spec = tf_one_source(FS_FEAT_PSSM, td_path("pssm"));
    FsErr err = {0};
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds.feat_dim == 20);
    CHECK_NEAR(data_feature(&ds, 0, 0), logistic(-3), 1e-7);
    CHECK_NEAR(data_feature(&ds, 4 + 2, 5), logistic((2 + 5) % 7 - 3), 1e-7); /* q/2's residue 3 */
    spec.src[0].pssm_percent = 1;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK_NEAR(data_feature(&ds, 4 + 2, 2), 1.0, 0);
    CHECK_NEAR(data_feature(&ds, 4 + 2, 3), 0.0, 0);
    char path[FS_PATH_MAX];
    CHECK(features_file_path(&spec.src[0], "q/2", path, sizeof path, &err) == 0);
    CHECK_CONTAINS(path, "/pssm/q_2.pssm");

    /* Refusals: a row short (protein and file named), a wrong letter, a bad value. */
    write_pssm("pssm/q_2.pssm", "GGSTV", 4, -1, 1);
    expect_fail(&ds, &spec, "q_2.pssm", "protein q/2", "4 residue rows, expected 5");
    write_pssm("pssm/q_2.pssm", "GGSTVV", 6, -1, 1);
    expect_fail(&ds, &spec, "q_2.pssm:9:", "more residue rows than its 5 residues");
    write_pssm("pssm/q_2.pssm", "GGSTV", 5, 2, 1);
    expect_fail(&ds, &spec, "q_2.pssm:6:", "protein q/2", "residue 3 is 'W' here but 'S' in the sequence");
    td_write("pssm/q_2.pssm", "\nLast\n   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V\n"
                              "    1 G   1 2 3\n");
    expect_fail(&ds, &spec, "q_2.pssm:4:", "value 4 is missing");
    td_write("pssm/q_2.pssm", "not a pssm\n");
    expect_fail(&ds, &spec, "q_2.pssm", "not a PSI-BLAST ASCII PSSM");
    td_write("pssm/q_2.pssm", "");
    expect_fail(&ds, &spec, "q_2.pssm", "not a PSI-BLAST ASCII PSSM");
    /* Missing: an error naming the file, or zeros where the source says so. */
    remove(td_path("pssm/q_2.pssm"));
    expect_fail(&ds, &spec, "q_2.pssm", "no such file", "protein q/2", "missing: zeros");
    spec.src[0].missing_zeros = 1;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK_NEAR(data_feature(&ds, 0, 0), 1.0, 0);   /* p1's residue 1: percent column A */
    CHECK_NEAR(data_feature(&ds, 4, 0), 0.0, 0);   /* q/2: zeros */
    CHECK_NEAR(data_feature(&ds, 8, 19), 0.0, 0);
    data_free(&ds);
}

/* An HHM for seq: emissions v = 1000 (i + j) % 5 or '*' where (i + j) % 4 == 0. */
static void write_hhm(const char *name, const char *seq, int rows, int end)
{
    char text[32768];
    int k = snprintf(text, sizeof text, "HHsearch 1.5\nNAME  x\nSEQ\n>x\n%s\n#\nNULL   3706\t5728\n"
                                        "HMM    A\tC\tD\tE\tF\tG\tH\tI\tK\tL\tM\tN\tP\tQ\tR\tS\tT\tV\tW\tY\t\n"
                                        "       M->M\tM->I\tM->D\tI->M\tI->I\tD->M\tD->D\tNeff\tNeffI\tNeffD\n"
                                        "       0\t*\t*\t0\t*\t0\t*\t*\t*\t*\t\n", seq);
    for (int i = 0; i < rows; i++) {
        k += snprintf(text + k, sizeof text - (size_t)k, "%c %d    ", seq[i], i + 1);
        for (int j = 0; j < 20; j++)
            k += (i + j) % 4 == 0 ? snprintf(text + k, sizeof text - (size_t)k, "*\t")
                                  : snprintf(text + k, sizeof text - (size_t)k, "%d\t", 1000 * ((i + j) % 5));
        k += snprintf(text + k, sizeof text - (size_t)k, "%d\n       0\t*\t*\t*\t*\t*\t*\t1000\t0\t0\t\n\n", i + 1);
    }
    if (end) snprintf(text + k, sizeof text - (size_t)k, "//\n");
    td_write(name, text);
}

static void test_hhm_written(void)
{
    FsDataset ds;
    mkdir(td_path("hhm"), 0755);
    load_records(&ds, "hhm.records", ">h1\nMKVLA\nHHHCC\n\n");
    write_hhm("hhm/h1.hhm", "MKVLA", 5, 1);
    FsFeatSpec spec = tf_one_source(FS_FEAT_HHM, td_path("hhm"));
    FsErr err = {0};
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 20; j++) {
            const double want = (i + j) % 4 == 0 ? 0.0 : exp2(-(double)((i + j) % 5));
            CHECK_NEAR(data_feature(&ds, (uint32_t)i, (uint32_t)j), want, 1e-7);
        }
    write_hhm("hhm/h1.hhm", "MKVLA", 5, 0);
    expect_fail(&ds, &spec, "h1.hhm", "does not end with '//'");
    write_hhm("hhm/h1.hhm", "MKVL", 4, 1);
    expect_fail(&ds, &spec, "h1.hhm", "protein h1", "4 residue lines, expected 5");
    write_hhm("hhm/h1.hhm", "MKWLA", 5, 1);
    expect_fail(&ds, &spec, "h1.hhm:17:", "residue 3 is 'W' here but 'V' in the sequence");
    td_write("hhm/h1.hhm", "HHsearch 1.5\nHMM    A\tC\tD\n");
    expect_fail(&ds, &spec, "h1.hhm:2:", "HMM line's 20 letters");
    td_write("hhm/h1.hhm", "HHsearch 1.5\nHMM    A\tC\tD\tE\tF\tG\tH\tI\tK\tL\tM\tN\tP\tQ\tR\tS\tT\tV\tW\tY\n"
                           "M 1 1 2 x\n//\n");
    expect_fail(&ds, &spec, "h1.hhm:3:", "value 3 is 'x'");
    data_free(&ds);
}

/* ---------------------------------------------------------------------- */
/* npy                                                                     */

/* An .npy file: version 1 or 2 header with descr and shape text as given,
 * then `values` values of `item` bytes (x i / 8 + column). */
static void write_npy(const char *name, int version, const char *descr, const char *fortran, const char *shape,
                      uint32_t rows, uint32_t cols, int item, long cut)
{
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape);
    const size_t pre = version == 1 ? 10 : 12, hl = ((pre + (size_t)dl + 1 + 63) / 64) * 64 - pre;
    const size_t n = (size_t)rows * cols, total = pre + hl + n * (size_t)item;
    uint8_t *b = calloc(total, 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)version;
    b[8] = (uint8_t)hl, b[9] = (uint8_t)(hl >> 8);
    memset(b + pre, ' ', hl);
    memcpy(b + pre, dict, (size_t)dl);
    b[pre + hl - 1] = '\n';
    for (size_t i = 0; i < n; i++) {
        float v = (float)(i / cols) / 8.0f + (float)(i % cols);
        uint64_t bits = item == 2 ? util_half_from_float(v) : util_float_bits(v); /* 8: any bytes */
        for (int k = 0; k < item; k++) b[pre + hl + i * (size_t)item + (size_t)k] = (uint8_t)(bits >> (8 * k));
    }
    td_write_bytes(name, b, total - (size_t)cut);
    free(b);
}

static void test_npy(void)
{
    FsDataset ds;
    mkdir(td_path("npy"), 0755);
    load_records(&ds, "npy.records", ">n1\nACDEF\nHHHCC\n\n>n2\nGHI\nEEC\n\n");
    write_npy("npy/n1.npy", 1, "<f4", "False", "(5, 3)", 5, 3, 4, 0);
    write_npy("npy/n2.npy", 2, "<f2", "False", "(3, 3)", 3, 3, 2, 0);
    FsFeatSpec spec = tf_one_source(FS_FEAT_NPY, td_path("npy"));
    FsErr err = {0};
    CHECK(features_source_dim(&ds, &spec.src[0], &err) == 3);
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds.feat_dim == 3 && !ds.feat_half);
    CHECK_NEAR(data_feature(&ds, 2, 1), 2.0 / 8 + 1, 0);
    CHECK_NEAR(data_feature(&ds, 5 + 2, 2), 2.0 / 8 + 2, 0); /* from halves, exact here */

    /* Written by the features module's own writer: read back the same. */
    float w[15];
    for (int i = 0; i < 15; i++) w[i] = (float)i * 0.3f - 1.0f;
    CHECK(features_write_npy(td_path("npy/n1.npy"), 5, 3, w, &err) == 0);
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(data_feature(&ds, 4, 2) == w[14] && data_feature(&ds, 0, 0) == w[0]);

    /* Refusals, each naming the file and what it found. */
    write_npy("npy/n2.npy", 1, "<f8", "False", "(3, 3)", 3, 3, 8, 0);
    expect_fail(&ds, &spec, "n2.npy", "protein n2: .npy dtype '<f8'", "'<f4'");
    write_npy("npy/n2.npy", 1, ">f4", "False", "(3, 3)", 3, 3, 4, 0);
    expect_fail(&ds, &spec, "n2.npy", "dtype '>f4'");
    write_npy("npy/n2.npy", 1, "<f4", "True", "(3, 3)", 3, 3, 4, 0);
    expect_fail(&ds, &spec, "n2.npy", "Fortran order");
    write_npy("npy/n2.npy", 1, "<f4", "False", "(9,)", 9, 1, 4, 0);
    expect_fail(&ds, &spec, "n2.npy", "1 dimensions; expected 2");
    write_npy("npy/n2.npy", 1, "<f4", "False", "(3, 3)", 3, 3, 4, 5);
    expect_fail(&ds, &spec, "n2.npy", "truncated .npy file");
    write_npy("npy/n2.npy", 1, "<f4", "False", "(4, 3)", 4, 3, 4, 0);
    expect_fail(&ds, &spec, "n2.npy", "protein n2", "shape (4, 3), expected (3, 3)");
    write_npy("npy/n2.npy", 1, "<f4", "False", "(3, 2)", 3, 2, 4, 0);
    expect_fail(&ds, &spec, "n2.npy", "shape (3, 2), expected (3, 3)");
    write_npy("npy/n2.npy", 1, "<f4", "False", "(3, 99999999999999)", 3, 3, 4, 0);
    expect_fail(&ds, &spec, "n2.npy", "shape is not a tuple");
    td_write("npy/n2.npy", "\x93NUMPY\x03");
    expect_fail(&ds, &spec, "n2.npy", "not a NumPy .npy file");
    td_write_bytes("npy/n2.npy", "\x93NUMPY\x01\x00\xff\x00{", 11);
    expect_fail(&ds, &spec, "n2.npy", "truncated .npy file");
    td_write_bytes("npy/n2.npy", "\x93NUMPY\x03\x00\x10\x00{}", 12);
    expect_fail(&ds, &spec, "n2.npy", ".npy format 3.0");
    remove(td_path("npy/n1.npy"));
    remove(td_path("npy/n2.npy"));
    expect_fail(&ds, &spec, "no protein has a file there");
    data_free(&ds);
}

/* Half storage: AUTO with more than 64 columns, and HALF asked for. */
static void test_half_store(void)
{
    FsDataset ds;
    mkdir(td_path("wide"), 0755);
    load_records(&ds, "wide.records", ">w1\nACDEFGHIKL\nHHHCCEEECC\n\n");
    float v[10 * 70];
    for (int i = 0; i < 10 * 70; i++) v[i] = sinf((float)i) * 10.0f;
    FsErr err = {0};
    CHECK(features_write_npy(td_path("wide/w1.npy"), 10, 70, v, &err) == 0);
    FsFeatSpec spec = tf_one_source(FS_FEAT_NPY, td_path("wide"));
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(ds.feat_dim == 70 && ds.feat_half == 1);
    CHECK(data_bytes(&ds) >= 10ull * 70 * 2 && data_feature_bytes(&ds) == 10ull * 70 * 2);
    int bad = 0;
    for (int i = 0; i < 10 * 70; i++) {
        float got = data_feature(&ds, (uint32_t)(i / 70), (uint32_t)(i % 70));
        if (fabsf(got - v[i]) > fabsf(v[i]) * (1.0f / 2048) + 1e-7f) bad++;
    }
    CHECK_MSG(bad == 0, "%d values beyond half precision", bad);
    const uint64_t fp_half = ds.fingerprint;
    spec.store = FS_FEAT_STORE_FLOAT;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(ds.feat_half == 0 && data_feature(&ds, 3, 5) == v[3 * 70 + 5]);
    CHECK(ds.fingerprint != fp_half);
    spec.store = FS_FEAT_STORE_HALF;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(ds.feat_half == 1 && ds.fingerprint == fp_half);
    /* Two sources of 5000 columns: more than FS_FEAT_MAX_DIM in all. */
    float *big = calloc(10 * 5000, sizeof *big);
    CHECK(features_write_npy(td_path("wide/w1.npy"), 10, 5000, big, &err) == 0);
    free(big);
    FsFeatSpec two = tf_one_source(FS_FEAT_NPY, td_path("wide"));
    two.n = 2;
    two.src[1] = two.src[0];
    expect_fail(&ds, &two, "10000 columns in all with source 2", "at most 8192");
    data_free(&ds);
    load_records(&ds, "narrow.records", ">w1\nACDEFGHIKL\nHHHCCEEECC\n\n");
    CHECK(features_write_npy(td_path("wide/w1.npy"), 10, 64, v, &err) == 0);
    spec.store = FS_FEAT_STORE_AUTO;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(ds.feat_dim == 64 && ds.feat_half == 0); /* 64 is not above 64 */
    data_free(&ds);
}

/* ---------------------------------------------------------------------- */
/* Fingerprint and the prepared file                                       */

static void test_fingerprint_and_prepared(void)
{
    FsDataset ds, back;
    FsErr err = {0};
    mkdir(td_path("fp"), 0755);
    load_records(&ds, "fp.records", ">f1\nACDEF\nHHHCC\n\n>f2\nGHIKL\nEECCC\n\n>f3\nMNPQR\nHHHHC\n\n");
    CHECK(data_assign_folds(&ds, 3, 7, &err) == 0);
    const uint64_t fp0 = ds.fingerprint;
    CHECK(data_fingerprint(&ds) == fp0);
    /* Without features: version 1 bytes, as before features existed. */
    uint8_t *b0;
    uint64_t n0;
    CHECK(data_serialize(&ds, &b0, &n0, &err) == 0);
    CHECK(b0[8] == 1 && b0[12] == (280 & 0xff));
    FsFeatSpec none = {0};
    CHECK(features_load(&ds, &none, &err) == 0 && ds.fingerprint == fp0 && ds.feat == NULL);

    float v[5 * 4];
    for (int i = 0; i < 20; i++) v[i] = (float)i * 0.25f;
    for (int p = 1; p <= 3; p++) {
        char name[32];
        snprintf(name, sizeof name, "fp/f%d.npy", p);
        CHECK(features_write_npy(td_path(name), 5, 4, v, &err) == 0);
    }
    FsFeatSpec spec = tf_one_source(FS_FEAT_NPY, td_path("fp"));
    CHECK(features_load(&ds, &spec, &err) == 0);
    const uint64_t fp1 = ds.fingerprint;
    CHECK(fp1 != fp0 && fp1 == data_fingerprint(&ds));
    v[7] += 0.5f; /* one value of f2 */
    CHECK(features_write_npy(td_path("fp/f2.npy"), 5, 4, v, &err) == 0);
    CHECK(features_load(&ds, &spec, &err) == 0);
    const uint64_t fp2 = ds.fingerprint;
    CHECK(fp2 != fp1 && fp2 != fp0);

    /* Round trip: version 3, the same features, fingerprint and folds. */
    uint8_t *b;
    uint64_t n;
    CHECK(data_serialize(&ds, &b, &n, &err) == 0);
    CHECK(b[8] == 3 && n == n0 + 16 + 5 * 3 * 4 * 4);
    CHECK(data_deserialize(&back, b, n, "mem", &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(back.feat_dim == 4 && back.feat_half == 0 && back.fingerprint == fp2);
    CHECK(back.feat && !memcmp(back.feat, ds.feat, 15 * 4 * sizeof(float)));
    CHECK(back.n_folds == 3 && back.fold_k == 3 && back.n_repeats == 1);
    data_free(&back);
    /* Written and read as a file too. */
    CHECK(data_write_prepared(&ds, td_path("fp.prep"), &err) == 0);
    CHECK(data_read_prepared(&back, td_path("fp.prep"), &err) == 0 && back.fingerprint == fp2);
    data_free(&back);
    /* A consistent checksum over a bad feature header: refused. */
    uint8_t *c = malloc(n);
    memcpy(c, b, n);
    c[288] = 0, c[289] = 0x40; /* 16384 columns */
    uint32_t crc = fs_crc32(c, (size_t)(n - 4), 0);
    for (int i = 0; i < 4; i++) c[n - 4 + (uint64_t)i] = (uint8_t)(crc >> (8 * i));
    CHECK(data_deserialize(&back, c, n, "mem", &err) == -1);
    CHECK_CONTAINS(err.msg, "16384 feature columns");
    memset(&err, 0, sizeof err);
    memcpy(c, b, n);
    c[288] = 5; /* 5 columns: the sizes no longer add up */
    crc = fs_crc32(c, (size_t)(n - 4), 0);
    for (int i = 0; i < 4; i++) c[n - 4 + (uint64_t)i] = (uint8_t)(crc >> (8 * i));
    CHECK(data_deserialize(&back, c, n, "mem", &err) == -1);
    CHECK_CONTAINS(err.msg, "header counts do not match the file size");
    memset(&err, 0, sizeof err);
    memcpy(c, b, n);
    c[n - 8] ^= 1; /* a feature byte, checksum kept: the fingerprint differs */
    crc = fs_crc32(c, (size_t)(n - 4), 0);
    for (int i = 0; i < 4; i++) c[n - 4 + (uint64_t)i] = (uint8_t)(crc >> (8 * i));
    CHECK(data_deserialize(&back, c, n, "mem", &err) == -1);
    CHECK_CONTAINS(err.msg, "fingerprint mismatch");
    free(c);
    free(b);

    /* Halves travel as halves. */
    spec.store = FS_FEAT_STORE_HALF;
    CHECK(features_load(&ds, &spec, &err) == 0);
    CHECK(data_serialize(&ds, &b, &n, &err) == 0);
    CHECK(n == n0 + 16 + 5 * 3 * 4 * 2);
    CHECK(data_deserialize(&back, b, n, "mem", &err) == 0);
    CHECK(back.feat_half == 1 && back.fingerprint == ds.fingerprint && data_feature(&back, 7, 3) == data_feature(&ds, 7, 3));
    data_free(&back);
    free(b);
    /* Without folds (a predefined split, predict's sequences): still version 3. */
    FsDataset nofold;
    load_records(&nofold, "fp2.records", ">f1\nACDEF\nHHHCC\n\n>f2\nGHIKL\nEECCC\n\n>f3\nMNPQR\nHHHHC\n\n");
    CHECK(features_load(&nofold, &spec, &err) == 0 && nofold.n_folds == 0);
    CHECK(data_serialize(&nofold, &b, &n, &err) == 0 && b[8] == 3);
    CHECK(data_deserialize(&back, b, n, "mem", &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(back.n_folds == 0 && back.feat_dim == 4 && back.fingerprint == nofold.fingerprint);
    data_free(&back);
    data_free(&nofold);
    free(b);
    /* Freed features: the old fingerprint again. */
    free(ds.feat);
    ds.feat = NULL;
    ds.feat_dim = 0;
    CHECK(data_fingerprint(&ds) == fp0);
    free(b0);
    data_free(&ds);
}

/* ---------------------------------------------------------------------- */
/* HDF5                                                                    */

static void test_h5(void)
{
    FsDataset ds;
    FsErr err = {0};
    load_records(&ds, "h5.records", ">a1\nACDEF\nHHHCC\n\n>b/2\nGHI\nEEC\n\n");
    FsFeatSpec spec = tf_one_source(FS_FEAT_H5, td_path("f.h5"));
    if (!features_have_h5()) {
        expect_fail(&ds, &spec, "h5 sources need foldsweep built with libhdf5");
        CHECK(features_write_h5(td_path("f.h5"), NULL, 0, NULL, 1, NULL, &err) == -1);
        data_free(&ds);
        printf("no libhdf5 in this build: h5 refusals only\n");
        return;
    }
    float v[10 * 6];
    for (int i = 0; i < 60; i++) v[i] = (float)i / 4.0f - 3.0f;
    const char *names[2] = {"a1", "b_2"};
    uint32_t rows[2] = {5, 3};
    CHECK(features_write_h5(td_path("f.h5"), names, 2, rows, 6, v, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(features_source_dim(&ds, &spec.src[0], &err) == 6);
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds.feat_dim == 6);
    int same = 1;
    for (int i = 0; i < 48; i++) same &= data_feature(&ds, (uint32_t)(i / 6), (uint32_t)(i % 6)) == v[i];
    CHECK(same);
    /* A dataset template, with a group. */
    const char *gnames[1] = {"feat_a1"};
    CHECK(features_write_h5(td_path("g.h5"), gnames, 1, rows, 6, v, &err) == 0);
    FsFeatSpec g = tf_one_source(FS_FEAT_H5, td_path("g.h5"));
    g.src[0].dataset = "feat_{id}";
    expect_fail(&ds, &g, "g.h5", "no dataset feat_b_2 for protein b/2", "missing: zeros");
    g.src[0].missing_zeros = 1;
    CHECK(features_load(&ds, &g, &err) == 0);
    CHECK(data_feature(&ds, 1, 1) == v[7] && data_feature(&ds, 6, 2) == 0.0f);
    /* A wrong shape, a wrong type, a file that is not HDF5, one that is absent. */
    rows[1] = 4;
    CHECK(features_write_h5(td_path("f.h5"), names, 2, rows, 6, v, &err) == 0);
    expect_fail(&ds, &spec, "f.h5", "dataset b_2 (protein b/2): shape (4, 6), expected (3, 6)");
#if defined(FS_HAVE_HDF5)
    hid_t f = H5Fcreate(td_path("i.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {5, 2};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "a1", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d), H5Sclose(sp), H5Fclose(f);
    FsFeatSpec ints = tf_one_source(FS_FEAT_H5, td_path("i.h5"));
    expect_fail(&ds, &ints, "i.h5", "dataset a1 (protein a1): its values are not floating point");
#endif
    td_write("t.h5", "plain text\n");
    FsFeatSpec text = tf_one_source(FS_FEAT_H5, td_path("t.h5"));
    expect_fail(&ds, &text, "t.h5", "not an HDF5 file");
    FsFeatSpec absent = tf_one_source(FS_FEAT_H5, td_path("absent.h5"));
    expect_fail(&ds, &absent, "absent.h5", "cannot open");
    data_free(&ds);
}

/* ---------------------------------------------------------------------- */
/* synth --features                                                        */

static void test_synth_features(void)
{
    char dir[256];
    tp_tmpdir(dir, sizeof dir, "feat");
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    CHECK(tp_run("synth -o '%s' --features 0", a) == 2);
    CHECK(tp_run("synth -o '%s' --features 9000", a) == 2);
    CHECK(tp_run("synth -o '%s' --features-format npy", a) == 2);
    CHECK_CONTAINS(err_text, "--features-format needs --features D");
    CHECK(tp_run("synth -o '%s' --features 4 --features-format csv", a) == 2);

    /* npy in any build: the same seed, the same bytes. */
    CHECK(tp_run("synth -o '%s' --format fasta -n 5 --features 4 --features-format npy", c) == 0);
    CHECK_CONTAINS(out_text, "c.features/");
    char p1[600], p2[600];
    snprintf(p1, sizeof p1, "%s.features/synth0003.npy", c);
    struct stat st;
    CHECK(stat(p1, &st) == 0);

    if (!features_have_h5()) {
        CHECK(tp_run("synth -o '%s' --format fasta -n 5 --features 4", a) == 1);
        CHECK_CONTAINS(err_text, "h5 sources need foldsweep built with libhdf5");
        snprintf(p1, sizeof p1, "%s.sequences.fasta", a);
        CHECK(stat(p1, &st) != 0); /* nothing written */
        return;
    }
    CHECK(tp_run("synth -o '%s' --format fasta -n 60 --seed 3 --features 16", a) == 0);
    CHECK_CONTAINS(out_text, "a.features.h5");
    CHECK(tp_run("synth -o '%s' --format fasta -n 60 --seed 3 --features 16", b) == 0);
    snprintf(p1, sizeof p1, "%s.features.h5", a);
    snprintf(p2, sizeof p2, "%s.features.h5", b);
    size_t n1 = 0, n2 = 0;
    char *t1 = tp_read_file(p1, &n1), *t2 = tp_read_file(p2, &n2);
    CHECK(t1 && t2 && n1 == n2 && n1 > 60 * 50 * 16 * 4 && !memcmp(t1, t2, n1));
    free(t1);
    free(t2);

    /* Loaded beside its FASTA set: the class signal where synth.h puts it. */
    char seq[600], lab[600], mask[600];
    snprintf(seq, sizeof seq, "%s.sequences.fasta", a);
    snprintf(lab, sizeof lab, "%s.labels.fasta", a);
    snprintf(mask, sizeof mask, "%s.mask.fasta", a);
    FsLoadSpec ls = {.format = FS_FMT_FASTA, .sequences = seq, .labels = lab, .mask = mask};
    FsDataset ds;
    FsErr err = {0};
    CHECK(data_load(&ds, &ls, &err) == 0);
    FsFeatSpec spec = tf_one_source(FS_FEAT_H5, p1);
    CHECK(features_load(&ds, &spec, &err) == 0);
    if (err.set) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds.feat_dim == 16 && ds.feat_half == 0);
    /* The same floats as synth_features of the same set. */
    FsDataset gen;
    CHECK(synth_generate(&gen, 60, 3, &err) == 0);
    float *ref = synth_features(&gen, 16, 3);
    CHECK(gen.n_res == ds.n_res && !memcmp(ref, ds.feat, (size_t)ds.n_res * 16 * sizeof(float)));
    free(ref);
    data_free(&gen);
    double sum[16][2] = {{0}}, cnt[16][2] = {{0}};
    for (uint32_t r = 0; r < ds.n_res; r++) {
        const uint32_t cls = FS_SS_CLASS(ds.ss[r]);
        for (uint32_t j = 0; j < 16; j++) {
            const int own = j == cls;
            sum[j][own] += data_feature(&ds, r, j);
            cnt[j][own]++;
        }
    }
    for (int j = 0; j < 3; j++) {
        const double in = sum[j][1] / cnt[j][1], out = sum[j][0] / cnt[j][0];
        printf("column %d: mean %.3f over its class, %.3f over the others\n", j, in, out);
        CHECK(in > 0.85 && in < 1.15 && fabs(out) < 0.1);
    }
    for (int j = 3; j < 16; j++) CHECK(fabs(sum[j][0] / cnt[j][0]) < 0.1 && cnt[j][1] == 0);
    data_free(&ds);
}

int main(void)
{
    test_half_exhaustive();
    test_half_rounding();
    test_samples();
    test_pssm_written();
    test_hhm_written();
    test_npy();
    test_half_store();
    test_fingerprint_and_prepared();
    test_h5();
    test_synth_features();
    return test_finish();
}
