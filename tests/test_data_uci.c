/*
 * test_data_uci.c: the UCI pair reader on the real Qian & Sejnowski files
 * (counts from PROVENANCE.md) and on small malformed files, plus the
 * window distances at chain breaks.
 */
#include "test_data_util.h"

/* left/right restart at every segment start, and never cross one. */
static void check_windows(const FsDataset *ds)
{
    int bad = 0;
    for (uint32_t s = 0; s < ds->n_seg; s++) {
        uint32_t a = ds->seg_off[s], z = ds->seg_off[s + 1];
        for (uint32_t i = a; i < z; i++) {
            uint32_t l = i - a, r = z - 1 - i;
            bad += ds->left[i] != (l > 255 ? 255 : l) || ds->right[i] != (r > 255 ? 255 : r);
        }
    }
    CHECK_MSG(bad == 0, "%d residues with wrong left/right", bad);
}

static void test_real(void)
{
    const char *train = td_shared("uci/protein-secondary-structure.train");
    const char *test = td_shared("uci/protein-secondary-structure.test");
    if (!train || !test) {
        printf("note: %s/uci absent, real-file checks skipped\n", FS_TEST_DATA_DIR);
        return;
    }
    FsDataset ds;
    FsErr err;
    CHECK(td_load(&ds, FS_FMT_UCI, train, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.stats.proteins == 91 && ds.n_prot == 91);
    CHECK(ds.stats.segments == 111 && ds.n_seg == 111);
    CHECK(ds.stats.residues == 18105 && ds.n_res == 18105);
    CHECK(ds.stats.scored == 18105);
    CHECK(ds.stats.unknown == 0);
    CHECK(ds.stats.label_counts[FS_SS_H] == 4601);
    CHECK(ds.stats.label_counts[FS_SS_E] == 3636);
    CHECK(ds.stats.label_counts[FS_SS_C] == 9868);
    CHECK(strcmp(data_protein_name(&ds, 0), "protein-secondary-structure.train/1") == 0);
    check_windows(&ds);
    /* 20 chain breaks: proteins of more than one segment, windows cut there. */
    uint32_t multi = 0, min_len = ~0u, max_len = 0;
    for (uint32_t p = 0; p < ds.n_prot; p++) {
        uint32_t segs = ds.prot_seg[p + 1] - ds.prot_seg[p];
        uint32_t len = ds.seg_off[ds.prot_seg[p + 1]] - ds.seg_off[ds.prot_seg[p]];
        if (len < min_len) min_len = len;
        if (len > max_len) max_len = len;
        if (segs > 1) {
            multi += segs - 1;
            uint32_t brk = ds.seg_off[ds.prot_seg[p] + 1];
            CHECK(ds.left[brk] == 0 && ds.right[brk - 1] == 0);
            CHECK(ds.left[brk - 1] > 0 || ds.right[brk] > 0);
        }
    }
    CHECK(multi == 20);
    CHECK(min_len == 26 && max_len == 649);
    data_free(&ds);

    CHECK(td_load(&ds, FS_FMT_AUTO, test, &err) == 0);
    CHECK(ds.n_prot == 15 && ds.n_seg == 17 && ds.n_res == 3520);
    CHECK(ds.stats.label_counts[0] == 849 && ds.stats.label_counts[1] == 748 &&
          ds.stats.label_counts[2] == 1923);
    check_windows(&ds);
    data_free(&ds);

    /* Several inputs concatenate in order. */
    const char *both[2] = {train, test};
    FsLoadSpec spec = {FS_FMT_AUTO, both, 2, NULL, NULL, NULL};
    CHECK(data_load(&ds, &spec, &err) == 0);
    CHECK(ds.n_prot == 106 && ds.n_res == 21625);
    CHECK(strcmp(data_protein_name(&ds, 91), "protein-secondary-structure.test/1") == 0);
    data_free(&ds);
}

static void test_small(void)
{
    FsDataset ds;
    FsErr err;
    /* Comments, blank lines, a chain break, both end markers, CRLF. */
    const char *ok = "# comment\n\n<>\nA h\nC e\r\nD _\n<>\nE h\nend\n<>\nX _\nb e\n<end>\nend\n";
    CHECK(td_load(&ds, FS_FMT_AUTO, td_write("ok.uci", ok), &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.n_prot == 2 && ds.n_seg == 3 && ds.n_res == 6);
    CHECK(ds.seg_off[1] == 3 && ds.seg_off[2] == 4 && ds.prot_seg[1] == 2);
    CHECK(ds.aa[0] == 0 && ds.aa[1] == 1 && ds.aa[4] == FS_AA_UNKNOWN && ds.aa[5] == FS_AA_UNKNOWN);
    CHECK(ds.ss[0] == FS_SS_H && ds.ss[1] == FS_SS_E && ds.ss[2] == FS_SS_C);
    CHECK(ds.stats.unknown == 2 && ds.stats.unknown_letters['X' - 'A'] == 1 &&
          ds.stats.unknown_letters['B' - 'A'] == 1);
    CHECK(ds.left[3] == 0 && ds.right[3] == 0 && ds.right[2] == 0 && ds.left[2] == 2);
    data_free(&ds);

    td_expect_error(FS_FMT_UCI, "badlabel.uci", "<>\nA h\nC q\nend\n",
                    "badlabel.uci:3:3:", "unknown label 'q'", "expected H E C");
    td_expect_error(FS_FMT_UCI, "badline.uci", "<>\nA h\nCA h\nend\n",
                    "badline.uci:3:1:", "expected 'AMINO_ACID LABEL'");
    td_expect_error(FS_FMT_UCI, "badaa.uci", "<>\nA h\n  1 h\nend\n",
                    "badaa.uci:3:3:", "expected an amino-acid letter, found '1'");
    td_expect_error(FS_FMT_UCI, "empty_prot.uci", "<>\nA h\nend\n<>\nend\n",
                    "empty_prot.uci:5:", "no residues");
    td_expect_error(FS_FMT_UCI, "only_comments.uci", "# nothing\n\n", "only_comments.uci",
                    "no proteins found");
    td_expect_error(FS_FMT_UCI, "three.uci", "<>\nA h x\nend\n",
                    "three.uci:2:", "expected 'AMINO_ACID LABEL'");
}

int main(void)
{
    test_real();
    test_small();
    return test_finish();
}
