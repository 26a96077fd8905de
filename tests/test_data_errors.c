/*
 * test_data_errors.c: what every reader shares: the letter and label
 * tables, layout detection, and refusing empty, binary, unreadable and
 * mislabelled files with a message that names the file and says why.
 */
#include "test_data_util.h"

static void test_codes(void)
{
    for (int i = 0; i < 20; i++) {
        CHECK(data_aa_code(FS_AA_LETTERS[i]) == i);
        CHECK(data_aa_code(FS_AA_LETTERS[i] + 32) == i);
    }
    const char *unknown = "XBZUOJxbzuoj";
    for (const char *p = unknown; *p; p++) CHECK(data_aa_code(*p) == FS_AA_UNKNOWN);
    CHECK(data_aa_code('*') == -1 && data_aa_code('-') == -1 && data_aa_code('1') == -1 &&
          data_aa_code(0) == -1 && data_aa_code(0xe9) == -1);
    /* Exactly these labels are accepted. */
    int accepted = 0;
    for (int c = 0; c < 256; c++) accepted += data_ss_code(c) >= 0;
    CHECK(accepted == 23);
    const char *h = "HGIhgi", *e = "EBeb", *c = "CTSLPctslp_- ";
    for (const char *p = h; *p; p++) CHECK(data_ss_code(*p) == FS_SS_H);
    for (const char *p = e; *p; p++) CHECK(data_ss_code(*p) == FS_SS_E);
    for (const char *p = c; *p; p++) CHECK(data_ss_code(*p) == FS_SS_C);
    CHECK(data_ss_code('X') == -1 && data_ss_code('0') == -1 && data_ss_code('A') == -1);
    CHECK(data_format_parse("auto") == FS_FMT_AUTO && data_format_parse("uci") == FS_FMT_UCI &&
          data_format_parse("fasta") == FS_FMT_FASTA &&
          data_format_parse("records") == FS_FMT_RECORDS &&
          data_format_parse("csv") == FS_FMT_CSV && data_format_parse("xml") == -1);
    CHECK(strcmp(data_format_name(FS_FMT_CSV), "csv") == 0);
}

static void test_detect(void)
{
    FsDataset ds;
    FsErr err = {0};
    const char *uci = td_write("a.txt", "# hdr\n<>\nA h\nC e\nend\n");
    const char *rec = td_write("b.txt", ">x\nACD\nHEC\n\n");
    const char *csv = td_write("c.txt", "input,dssp3\nA C,H E\n");
    const char *in[3] = {uci, rec, csv};
    FsLoadSpec spec = {FS_FMT_AUTO, in, 3, NULL, NULL, NULL};
    CHECK(data_load(&ds, &spec, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.n_prot == 3 && ds.n_res == 7);
    data_free(&ds);
}

static void test_refused(void)
{
    td_expect_error(FS_FMT_AUTO, "empty.txt", "", "empty.txt:", "empty file");
    td_expect_error(FS_FMT_AUTO, "blank.txt", "\n  \n", "blank.txt", "unrecognised content");
    td_expect_error(FS_FMT_UCI, "blank.uci", "\n  \n", "blank.uci", "no proteins found");
    static const char garbage[] = "<>\nA h\nC \x01\x7f\x02 e\n";
    FsDataset ds;
    FsErr err;
    CHECK(td_load(&ds, FS_FMT_AUTO, td_write_bytes("bin.dat", garbage, sizeof garbage - 1), &err) ==
          -1);
    CHECK_CONTAINS(err.msg, "bin.dat:3:3:");
    CHECK_CONTAINS(err.msg, "binary data");
    CHECK_CONTAINS(err.msg, "expected a text file");
    static const char nul[] = ">a\nAC\0D\nHHHH\n";
    CHECK(td_load(&ds, FS_FMT_RECORDS, td_write_bytes("nul.rec", nul, sizeof nul - 1), &err) == -1);
    CHECK_CONTAINS(err.msg, "nul.rec:2:3:");
    CHECK_CONTAINS(err.msg, "byte 0x00");
    /* Random bytes: refused, never a crash. */
    unsigned char rnd[4096];
    uint64_t st = 7;
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (unsigned char)fs_splitmix64(&st);
    for (int f = FS_FMT_AUTO; f <= FS_FMT_CSV; f++) {
        if (f == FS_FMT_FASTA) continue;
        CHECK(td_load(&ds, (FsFormat)f, td_write_bytes("random.bin", rnd, sizeof rnd), &err) == -1);
        CHECK(err.set && strstr(err.msg, "random.bin"));
    }
    /* Not in the declared layout. */
    td_expect_error(FS_FMT_UCI, "csv.uci", "input, dssp3\nA C,H E\n", "csv.uci",
                    "not a UCI pair file as declared", "looks like a NetSurfP-2.0 CSV");
    td_expect_error(FS_FMT_RECORDS, "uci.rec", "<>\nA h\nend\n", "uci.rec", "not a record file",
                    "UCI");
    td_expect_error(FS_FMT_AUTO, "seqs.fa", ">a\nACDEF\nGHIK\nLMN\n>b\nAC\n", "seqs.fa",
                    "looks like a FASTA file", "--sequences");
    td_expect_error(FS_FMT_AUTO, "prose.txt", "Hello, world: 42\n", "prose.txt",
                    "unrecognised content", "expected a UCI pair file");
    CHECK(td_load(&ds, FS_FMT_AUTO, td_path("missing.txt"), &err) == -1);
    CHECK_CONTAINS(err.msg, "missing.txt: cannot open");
    CHECK(td_load(&ds, FS_FMT_AUTO, td_tmpdir(), &err) == -1);
    CHECK(err.set);
    FsLoadSpec none = {FS_FMT_AUTO, NULL, 0, NULL, NULL, NULL};
    memset(&err, 0, sizeof err);
    CHECK(data_load(&ds, &none, &err) == -1);
    CHECK_CONTAINS(err.msg, "no input files");
    /* After a failure the dataset is empty and freeing it again is harmless. */
    CHECK(ds.n_res == 0 && ds.aa == NULL);
    data_free(&ds);
}

int main(void)
{
    test_codes();
    test_detect();
    test_refused();
    return test_finish();
}
