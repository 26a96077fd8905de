/*
 * test_data_csv.c: the NetSurfP-2.0 CSV reader on TS115 (counts from
 * PROVENANCE.md) and on small files: dssp8 reduction, disorder and
 * cb513_mask masking, header and token-count errors.
 */
#include "test_data_util.h"

#define HDR "input, dssp3, dssp8, disorder, cb513_mask\n"

static void test_ts115(void)
{
    const char *path = td_shared("ts115/TS115_HHblits.csv");
    if (!path) {
        printf("note: %s/ts115 absent, TS115 checks skipped\n", FS_TEST_DATA_DIR);
        return;
    }
    FsDataset ds;
    FsErr err;
    CHECK(td_load(&ds, FS_FMT_AUTO, path, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.stats.proteins == 115 && ds.stats.residues == 29704);
    CHECK(ds.stats.scored == 27501);
    CHECK(ds.stats.label_counts[FS_SS_C] == 10480);
    CHECK(ds.stats.label_counts[FS_SS_H] == 11641);
    CHECK(ds.stats.label_counts[FS_SS_E] == 5380);
    CHECK(ds.stats.unknown == 1 && ds.stats.unknown_letters['X' - 'A'] == 1);
    data_free(&ds);
}

static void test_small(void)
{
    FsDataset ds;
    FsErr err;
    const char *ok = HDR "M K V,C H E ,C G B,1.0 0.0 1.0,1.0 1.0 0.0\n\nA C,H H,H I,1 1,1 1\n";
    CHECK(td_load(&ds, FS_FMT_CSV, td_write("ok.csv", ok), &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.n_prot == 2 && ds.n_res == 5);
    CHECK(ds.ss[0] == FS_SS_C && ds.ss[1] == (FS_SS_H | FS_SS_UNSCORED) &&
          ds.ss[2] == (FS_SS_E | FS_SS_UNSCORED));
    CHECK(ds.stats.scored == 3);
    CHECK(strcmp(data_protein_name(&ds, 1), "ok.csv/2") == 0);
    data_free(&ds);

    /* Without dssp3 the 8-state column is reduced: G I H -> H, B E -> E, T S C -> C. */
    const char *d8 = "input,dssp8\nA C D E F G H I,G I H B E T S C\n";
    CHECK(td_load(&ds, FS_FMT_AUTO, td_write("d8.csv", d8), &err) == 0);
    static const uint8_t want[8] = {0, 0, 0, 1, 1, 2, 2, 2};
    int same = ds.n_res == 8;
    for (int i = 0; same && i < 8; i++) same &= ds.ss[i] == want[i];
    CHECK(same);
    data_free(&ds);

    td_expect_error(FS_FMT_CSV, "hdr.csv", "input, dssp3, foo\nA,H,1\n",
                    "hdr.csv:1:15:", "expected the NetSurfP-2.0 CSV header", "'foo'");
    td_expect_error(FS_FMT_CSV, "nolab.csv", "input, disorder\nA,1\n",
                    "nolab.csv:1:", "dssp3 or dssp8");
    td_expect_error(FS_FMT_CSV, "tokens.csv", HDR "M K V,C H,C G B,1 1 1,1 1 1\n",
                    "tokens.csv:2:7:", "'dssp3' has 2 tokens, expected 3");
    td_expect_error(FS_FMT_CSV, "fields.csv", HDR "M K V,C H E,C G B,1 1 1\n",
                    "fields.csv:2:", "expected 5 comma-separated fields", "found 4");
    td_expect_error(FS_FMT_CSV, "label.csv", HDR "M K V,C Q E,C G B,1 1 1,1 1 1\n",
                    "label.csv:2:9:", "unknown label 'Q'");
    td_expect_error(FS_FMT_CSV, "num.csv", HDR "M K V,C H E,C G B,1 x 1,1 1 1\n",
                    "num.csv:2:21:", "expected a number", "'x'");
    td_expect_error(FS_FMT_CSV, "aa.csv", HDR "M KK V,C H E,C G B,1 1 1,1 1 1\n",
                    "aa.csv:2:3:", "one amino-acid letter per token", "'KK'");
    td_expect_error(FS_FMT_CSV, "header_only.csv", HDR, "header_only.csv", "no proteins found");
    /* A UCI file declared as CSV. */
    td_expect_error(FS_FMT_CSV, "uci_as.csv", "<>\nA h\nend\n", "uci_as.csv",
                    "not a NetSurfP-2.0 CSV", "looks like a UCI pair file");
}

int main(void)
{
    test_small();
    test_ts115();
    return test_finish();
}
