/*
 * test_data_fasta.c: FASTA sets. The FLIP split (unzipped into a temp
 * folder; counts from PROVENANCE.md) and small sets that check matching
 * by ID, multi-line records, the predefined split and every error.
 */
#include "test_data_util.h"

static int load_set(FsDataset *ds, const char *s, const char *l, const char *m, FsErr *err)
{
    FsLoadSpec spec = {FS_FMT_FASTA, NULL, 0, s, l, m};
    memset(err, 0, sizeof *err);
    return data_load(ds, &spec, err);
}

static void test_flip(void)
{
    const char *zip = td_shared("flip/splits.zip");
    if (!zip) {
        printf("note: %s/flip/splits.zip absent, FLIP checks skipped\n", FS_TEST_DATA_DIR);
        return;
    }
    if (system("unzip -v >/dev/null 2>&1") != 0) {
        printf("note: unzip not installed, FLIP checks skipped\n");
        return;
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "unzip -q -o '%s' -d '%s'", zip, td_tmpdir());
    CHECK(system(cmd) == 0);
    char seq[600], lab[600], msk[600];
    snprintf(seq, sizeof seq, "%s/splits/sequences.fasta", td_tmpdir());
    snprintf(lab, sizeof lab, "%s/splits/sampled.fasta", td_tmpdir());
    snprintf(msk, sizeof msk, "%s/splits/mask.fasta", td_tmpdir());
    FsDataset ds;
    FsErr err;
    CHECK(load_set(&ds, seq, lab, msk, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    const FsDataStats *st = &ds.stats;
    CHECK(st->proteins == 11156 && st->segments == 11156);
    CHECK(st->residues == 2845094);
    CHECK(st->set_proteins[FS_SET_TRAIN] == 9712);
    CHECK(st->set_proteins[FS_SET_VALID] == 1080);
    CHECK(st->set_proteins[FS_SET_TEST] == 364);
    CHECK(st->set_proteins[FS_SET_NONE] == 0);
    CHECK(st->scored == 2658218);
    CHECK(st->label_counts[FS_SS_C] == 1025055);
    CHECK(st->label_counts[FS_SS_H] == 1030200);
    CHECK(st->label_counts[FS_SS_E] == 602963);
    CHECK(st->unknown == 177);
    CHECK(st->unknown_letters['X' - 'A'] == 166 && st->unknown_letters['U' - 'A'] == 10 &&
          st->unknown_letters['O' - 'A'] == 1);
    CHECK(strcmp(data_protein_name(&ds, 0), "1es5-A") == 0);
    /* The predefined split covers train and validation; test is separate. */
    uint32_t tr = data_examples(&ds, FS_FOLD_PREDEFINED, 0, NULL);
    uint32_t va = data_examples(&ds, FS_FOLD_PREDEFINED, 1, NULL);
    uint32_t te = data_set_examples(&ds, FS_SET_TEST, NULL);
    CHECK(tr + va + te == st->scored);
    CHECK(tr > 0 && va > 0 && te > 0);
    uint32_t *idx = malloc(va * sizeof *idx);
    CHECK(data_examples(&ds, FS_FOLD_PREDEFINED, 1, idx) == va);
    int sorted = 1;
    for (uint32_t i = 1; i < va; i++) sorted &= idx[i] > idx[i - 1];
    CHECK(sorted);
    free(idx);
    /* Without the mask every residue is scored. */
    data_free(&ds);
    CHECK(load_set(&ds, seq, lab, NULL, &err) == 0);
    CHECK(ds.stats.scored == 2845094 && ds.stats.label_counts[FS_SS_C] == 1211931);
    data_free(&ds);
}

static void expect_set_error(int line, const char *s, const char *l, const char *m, const char *a,
                             const char *b, const char *c)
{
    FsDataset ds;
    FsErr err;
    int rc = load_set(&ds, s, l, m, &err);
    CHECK_MSG(rc == -1, "line %d: loaded", line);
    if (rc == 0) {
        data_free(&ds);
        return;
    }
    const char *subs[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (subs[i])
            CHECK_MSG(strstr(err.msg, subs[i]), "line %d: \"%s\" lacks \"%s\"", line, err.msg,
                      subs[i]);
}
#define EXPECT_SET_ERROR(s, l, m, a, b, c) expect_set_error(__LINE__, s, l, m, a, b, c)

static void test_small(void)
{
    /* Labels in another order than sequences; sequences wrapped over lines. */
    const char *seq = td_write("s.fasta", ">p1 first\nACDE\nFG\n\n>p2\nMKX\n>p3\nWWW\n");
    const char *lab = td_write(
        "l.fasta", ">p3 SET=test VALIDATION=False\nHEC\n>p1 SET=train VALIDATION=True\nHHE\nECC\n"
                   ">p2 SET=train VALIDATION=False\nLGB\n");
    const char *msk = td_write("m.fasta", ">p2\n101\n>p1\n111\n111\n>p3\n111\n");
    FsDataset ds;
    FsErr err;
    CHECK(load_set(&ds, seq, lab, msk, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.n_prot == 3 && ds.n_res == 12);
    CHECK(strcmp(data_protein_name(&ds, 1), "p2") == 0);
    CHECK(ds.prot_set[0] == FS_SET_VALID && ds.prot_set[1] == FS_SET_TRAIN &&
          ds.prot_set[2] == FS_SET_TEST);
    CHECK(ds.ss[0] == FS_SS_H && ds.ss[2] == FS_SS_E && ds.ss[5] == FS_SS_C);
    /* p2: L G B -> C H E, the middle one masked out. */
    CHECK(ds.ss[6] == FS_SS_C && ds.ss[7] == (FS_SS_H | FS_SS_UNSCORED) && ds.ss[8] == FS_SS_E);
    CHECK(ds.aa[8] == FS_AA_UNKNOWN && ds.stats.unknown_letters['X' - 'A'] == 1);
    CHECK(data_examples(&ds, FS_FOLD_PREDEFINED, 0, NULL) == 2);
    CHECK(data_examples(&ds, FS_FOLD_PREDEFINED, 1, NULL) == 6);
    CHECK(data_set_examples(&ds, FS_SET_TEST, NULL) == 3);
    data_free(&ds);

    /* An ID missing from a companion file names that file, the line and the ID. */
    const char *lab_missing = td_write("lab_missing.fasta", ">p1\nHHEECC\n>p3\nHEC\n");
    EXPECT_SET_ERROR(seq, lab_missing, NULL, "s.fasta:5:", "ID 'p2'", "lab_missing.fasta");
    const char *msk_missing = td_write("msk_missing.fasta", ">p1\n111111\n>p2\n111\n");
    EXPECT_SET_ERROR(seq, lab, msk_missing, "s.fasta:7:", "ID 'p3'", "msk_missing.fasta");
    const char *lab_extra =
        td_write("lab_extra.fasta", ">p1\nHHEECC\n>p2\nHHH\n>p3\nHEC\n>p4\nH\n");
    EXPECT_SET_ERROR(seq, lab_extra, NULL, "lab_extra.fasta:7:", "ID 'p4'", "no record in");
    const char *lab_short = td_write("lab_short.fasta", ">p1\nHHEECC\n>p2\nHH\n>p3\nHEC\n");
    EXPECT_SET_ERROR(seq, lab_short, NULL, "lab_short.fasta:3:", "'p2' has 2 labels",
                     "has 3 residues");
    const char *lab_bad = td_write("lab_bad.fasta", ">p1\nHHE\nEQC\n>p2\nHHH\n>p3\nHEC\n");
    EXPECT_SET_ERROR(seq, lab_bad, NULL, "lab_bad.fasta:3:2:", "unknown label 'Q'", "expected");
    const char *msk_bad = td_write("msk_bad.fasta", ">p1\n111111\n>p2\n1x1\n>p3\n111\n");
    EXPECT_SET_ERROR(seq, lab, msk_bad, "msk_bad.fasta:4:2:", "'1' (scored) or '0'", "found 'x'");
    const char *dup = td_write("dup.fasta", ">p1\nHHEECC\n>p2\nHHH\n>p1\nHEC\n");
    EXPECT_SET_ERROR(seq, dup, NULL, "dup.fasta:5:", "duplicate ID 'p1'", "line 1");
    const char *seq_bad = td_write("seq_bad.fasta", ">p1\nACDE\nF9\n>p2\nMKX\n>p3\nWWW\n");
    EXPECT_SET_ERROR(seq_bad, lab, NULL, "seq_bad.fasta:3:2:", "amino-acid letter", "'9'");
    const char *no_hdr = td_write("no_hdr.fasta", "ACDE\n>p1\nACDEFG\n");
    EXPECT_SET_ERROR(no_hdr, lab, NULL, "no_hdr.fasta:1:1:", "'>ID' header", NULL);
    const char *set_bad = td_write("set_bad.fasta", ">p1 SET=dev\nHHEECC\n>p2\nHHH\n>p3\nHEC\n");
    EXPECT_SET_ERROR(seq, set_bad, NULL, "set_bad.fasta:1:9:", "SET=train", "'SET=dev'");
    const char *val_bad =
        td_write("val_bad.fasta", ">p1 SET=train VALIDATION=maybe\nHHEECC\n>p2\nHHH\n>p3\nHEC\n");
    EXPECT_SET_ERROR(seq, val_bad, NULL, "val_bad.fasta:1:", "VALIDATION=True", NULL);
    const char *empty_rec = td_write("empty_rec.fasta", ">p1\nACDEFG\n>p2\n>p3\nWWW\n");
    EXPECT_SET_ERROR(empty_rec, lab, NULL, "empty_rec.fasta:3:", "no residues", NULL);
    const char *empty = td_write("empty.fasta", "");
    EXPECT_SET_ERROR(seq, empty, NULL, "empty.fasta", "empty file", NULL);
    const char *blank = td_write("blank.fasta", "\n\n");
    EXPECT_SET_ERROR(seq, blank, NULL, "blank.fasta", "no FASTA records", NULL);
    EXPECT_SET_ERROR(seq, td_path("does-not-exist.fasta"), NULL, "does-not-exist.fasta",
                     "cannot open", NULL);

    /* Sequences without labels are a usage mistake, reported as such. */
    FsLoadSpec spec = {FS_FMT_FASTA, NULL, 0, seq, NULL, NULL};
    CHECK(data_load(&ds, &spec, &err) == -1);
    CHECK_CONTAINS(err.msg, "labels");
}

/* A test file with predefined sets keeps its SET=test proteins only: the
 * same data set, fingerprint included, as a file of those alone. */
static void test_keep_test_set(void)
{
    const char *seq = td_write("ks.fasta", ">a\nACDEFG\n>b\nMKW\n>c\nGGGG\n>d\nPPQQR\n>e\nLLL\n");
    const char *lab = td_write("kl.fasta", ">a SET=train\nHHHEEE\n>b SET=test\nHEC\n>c SET=valid\nCCCC\n"
                                           ">d SET=test\nEEHHC\n>e\nHHH\n");
    const char *seq2 = td_write("ks2.fasta", ">b\nMKW\n>d\nPPQQR\n>e\nLLL\n");
    const char *lab2 = td_write("kl2.fasta", ">b SET=test\nHEC\n>d SET=test\nEEHHC\n>e\nHHH\n");
    FsDataset ds, want;
    FsErr err;
    CHECK(load_set(&ds, seq, lab, NULL, &err) == 0 && load_set(&want, seq2, lab2, NULL, &err) == 0);
    CHECK(data_keep_test_set(&ds) == 2);
    CHECK(ds.n_prot == 3 && ds.n_res == 11 && ds.n_seg == 3 && ds.stats.scored == 11);
    CHECK(!strcmp(data_protein_name(&ds, 0), "b") && !strcmp(data_protein_name(&ds, 1), "d") &&
          !strcmp(data_protein_name(&ds, 2), "e"));
    CHECK(ds.left[3] == 0 && ds.right[7] == 0 && ds.aa[3] == want.aa[3]);
    CHECK_MSG(ds.fingerprint == want.fingerprint, "%016llx != %016llx", (unsigned long long)ds.fingerprint,
              (unsigned long long)want.fingerprint);
    CHECK(data_keep_test_set(&ds) == 0); /* nothing else is left */
    data_free(&ds);
    data_free(&want);
}

int main(void)
{
    test_small();
    test_keep_test_set();
    test_flip();
    return test_finish();
}
