/*
 * fuzz_fasta_set.c: the FASTA-set reader (sequences, labels and an
 * optional mask, records matched by ID), through data_load as
 * `--sequences S --labels L [--mask M]` reads it.
 *
 * One input holds the three files, separated by lines of exactly "%%"
 * ('%' is no residue, label or mask symbol, so a separator never stands
 * for content): sequences %% labels [%% mask]. Without a separator the
 * same bytes serve as sequences and labels (most near-valid mutations of
 * one file then still reach the matching code).
 */
#include "fuzz_data.h"

/* The next "\n%%\n" at or after from (a separator line), or NULL. */
static const uint8_t *next_sep(const uint8_t *p, size_t n, size_t from)
{
    for (size_t i = from; i + 4 <= n; i++)
        if (p[i] == '\n' && p[i + 1] == '%' && p[i + 2] == '%' && p[i + 3] == '\n') return p + i;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    const uint8_t *s1 = next_sep(p, n, 0);
    const uint8_t *s2 = s1 ? next_sep(p, n, (size_t)(s1 - p) + 3) : NULL;
    const char *seq, *lab, *mask = NULL;
    if (!s1) {
        seq = lab = fuzz_write_file("seq.fasta", p, n);
    } else {
        /* Each part keeps its own last newline: the separator is "\n%%\n"
         * minus the part's "\n". */
        size_t n1 = (size_t)(s1 - p) + 1;
        seq = fuzz_write_file("seq.fasta", p, n1);
        const uint8_t *b2 = s1 + 4, *e2 = s2 ? s2 + 1 : p + n;
        lab = fuzz_write_file("labels.fasta", b2, (size_t)(e2 - b2));
        if (s2) mask = fuzz_write_file("mask.fasta", s2 + 4, (size_t)(p + n - (s2 + 4)));
    }
    FsLoadSpec spec = {FS_FMT_FASTA, NULL, 0, seq, lab, mask};
    FsDataset ds;
    FsErr err = {0};
    if (data_load(&ds, &spec, &err) == 0) {
        FUZZ_REQUIRE(ds.n_prot > 0);
        fuzz_use_dataset(&ds);
        data_free(&ds);
    } else {
        FUZZ_REQUIRE(err.set && err.msg[0]);
    }
    return 0;
}
