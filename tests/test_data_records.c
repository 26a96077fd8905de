/*
 * test_data_records.c: record files (">id", sequence, labels, blank line),
 * written here since the CB513 family is held out: 3-state and DSSP
 * 8-state labels, records without IDs, and every malformed case.
 */
#include "test_data_util.h"

static void test_ok(void)
{
    FsDataset ds;
    FsErr err;
    /* 3-state, DSSP 8-state with L for loop, and a record without an ID. */
    const char *text = ">one\nACDEF\nHHECC\n\n>two\nGHIKLMN\nGIBTSL-\n\nPQRST\nhe_cc\n";
    CHECK(td_load(&ds, FS_FMT_RECORDS, td_write("ok.rec", text), &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.n_prot == 3 && ds.n_seg == 3 && ds.n_res == 17);
    CHECK(strcmp(data_protein_name(&ds, 0), "one") == 0);
    CHECK(strcmp(data_protein_name(&ds, 1), "two") == 0);
    CHECK(strcmp(data_protein_name(&ds, 2), "ok.rec/3") == 0);
    static const uint8_t want[17] = {0, 0, 1, 2, 2, 0, 0, 1, 2, 2, 2, 2, 0, 1, 2, 2, 2};
    int same = 1;
    for (int i = 0; i < 17; i++) same &= ds.ss[i] == want[i];
    CHECK(same);
    CHECK(ds.stats.label_counts[0] == 5 && ds.stats.label_counts[1] == 3 &&
          ds.stats.label_counts[2] == 9);
    CHECK(ds.aa[0] == 0 && ds.aa[16] == (uint8_t)(strchr(FS_AA_LETTERS, 'T') - FS_AA_LETTERS));
    data_free(&ds);

    /* Detected from content; no blank line needed at the very end. */
    CHECK(td_load(&ds, FS_FMT_AUTO, td_write("auto.rec", ">a\nMKV\nCHH"), &err) == 0);
    CHECK(ds.n_prot == 1 && ds.n_res == 3);
    data_free(&ds);
    CHECK(td_load(&ds, FS_FMT_AUTO, td_write("noid.rec", "MKV\nCHH\n\nWW\nEE\n"), &err) == 0);
    CHECK(ds.n_prot == 2 && ds.n_res == 5);
    data_free(&ds);
}

static void test_errors(void)
{
    td_expect_error(FS_FMT_RECORDS, "len.rec", ">a\nACDEF\nHHEC\n\n", "len.rec:3:", "4 labels",
                    "line 2 has 5 residues");
    td_expect_error(FS_FMT_RECORDS, "label.rec", ">a\nACDEF\nHHEC\n\n>b\nAC\nHZ\n",
                    "label.rec:3:", "4 labels");
    td_expect_error(FS_FMT_RECORDS, "badlab.rec", ">a\nACDEF\nHHECC\n\n>b\nAC\nHZ\n",
                    "badlab.rec:7:2:", "unknown label 'Z'", "expected H E C");
    td_expect_error(FS_FMT_RECORDS, "nolab.rec", ">a\nACDEF\n\n",
                    "nolab.rec:3:", "expected a label line");
    td_expect_error(FS_FMT_RECORDS, "eof.rec", ">a\nACDEF", "eof.rec:3:", "expected a label line");
    td_expect_error(FS_FMT_RECORDS, "noseq.rec", ">a\n\nACDEF\nHHHHH\n",
                    "noseq.rec:2:", "expected the sequence line of record 'a'");
    td_expect_error(FS_FMT_RECORDS, "noblank.rec", ">a\nACD\nHHH\n>b\nAC\nHH\n",
                    "noblank.rec:4:1:", "expected a blank line");
    td_expect_error(FS_FMT_RECORDS, "badaa.rec", ">a\nAC*D\nHHHH\n",
                    "badaa.rec:2:3:", "expected an amino-acid letter, found '*'");
    td_expect_error(FS_FMT_RECORDS, "noid.rec", ">  \nAC\nHH\n", "noid.rec:1:2:", "expected an ID");
}

int main(void)
{
    test_ok();
    test_errors();
    return test_finish();
}
