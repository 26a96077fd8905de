/*
 * read_hhm.c: HHblits / HHsuite .hhm profiles (the HMM part):
 *
 *   HHsearch 1.5
 *   NAME  ...                           (header lines, the SEQ section)
 *   #
 *   NULL   3706 5728 4211 ...           (20 background values)
 *   HMM    A C D E F G H I K L M N P Q R S T V W Y
 *          M->M M->I M->D I->M I->I D->M D->D Neff NeffI NeffD
 *          0 * * 0 * 0 * * * *          (the begin state's transitions)
 *   M 1    2124 * * ... *   1           (letter, position, 20 emissions, position)
 *          0 * * * * * * 1000 0 0       (its transitions)
 *   (a blank line)
 *   ...
 *   //
 *
 * After the `HMM` line (the 20 letters in foldsweep's alphabet order,
 * which is HH-suite's), every line that starts in column 1 with a letter
 * is a residue: its letter, its position (1, 2, ...), then 20 emission
 * values, each an integer x = -1000 log2(p) or '*' (p = 0); a trailing
 * value (the position again) is read past. Lines that start with blanks
 * (transitions, the transition header) and blank lines are skipped; `//`
 * ends the profile. The features: p = 2^(-x/1000) and '*' 0 (NetSurfP-2.0's
 * transform), in the file's column order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/reader.h"

/* Whether the line is `HMM` and the 20 letters in order. */
static int hmm_line(const char *line, size_t len)
{
    const char *p = line, *end = line + len, *tok;
    size_t tl;
    if (!feat_token(&p, end, &tok, &tl) || tl != 3 || memcmp(tok, "HMM", 3)) return 0;
    for (int i = 0; i < 20; i++)
        if (!feat_token(&p, end, &tok, &tl) || tl != 1 || *tok != FS_AA_LETTERS[i]) return -1;
    return 1;
}

/* One residue line into out (20 values). 0, or -1 with err. */
static int residue_line(const FeatTarget *t, const char *line, size_t len, long ln, uint32_t row, float *out,
                        FsErr *err)
{
    const char *p = line, *end = line + len, *tok = NULL;
    size_t tl = 0;
    char shown[40];
    long v;
    feat_token(&p, end, &tok, &tl); /* the letter: the caller saw it */
    if (tl != 1 || !feat_letter_agrees((unsigned char)*tok, t->aa[row])) {
        fs_err_at(err, t->path, ln, 0, "protein %s: residue %u is %s here but '%c' in the sequence", t->protein,
                  row + 1, feat_token_text(tok, tl, shown, sizeof shown),
                  FS_AA_ALPHABET[t->aa[row] <= FS_AA_UNKNOWN ? t->aa[row] : FS_AA_UNKNOWN]);
        return -1;
    }
    int got = feat_token(&p, end, &tok, &tl);
    if (!got || feat_token_long(tok, tl, &v) || v != (long)row + 1) {
        fs_err_at(err, t->path, ln, 0, "protein %s: expected residue position %u after the letter, found %s",
                  t->protein, row + 1, got ? feat_token_text(tok, tl, shown, sizeof shown) : "nothing");
        return -1;
    }
    for (int c = 0; c < 20; c++) {
        got = feat_token(&p, end, &tok, &tl);
        if (got && tl == 1 && *tok == '*') {
            out[c] = 0.0f;
            continue;
        }
        if (!got || feat_token_long(tok, tl, &v) || v < 0 || v > 1000000) {
            fs_err_at(err, t->path, ln, 0,
                      "protein %s: residue %u: expected 20 emission values (integers -1000 log2 p, or '*'); "
                      "value %d is %s",
                      t->protein, row + 1, c + 1, got ? feat_token_text(tok, tl, shown, sizeof shown) : "missing");
            return -1;
        }
        out[c] = (float)exp2(-(double)v / 1000.0);
    }
    return 0;
}

/* The residues after the HMM line, from pos. 0, or -1 with err. */
static int read_rows(const FeatTarget *t, const char *buf, size_t n, size_t pos, long ln, float *out, FsErr *err)
{
    const char *line;
    size_t len;
    uint32_t row = 0;
    int ended = 0;
    while (!ended && feat_text_line(buf, n, &pos, &line, &len)) {
        ln++;
        if (len >= 2 && line[0] == '/' && line[1] == '/') ended = 1;
        else if (len == 0 || line[0] == ' ' || line[0] == '\t') continue; /* transitions, blank */
        else if (row == t->n) {
            fs_err_at(err, t->path, ln, 0, "protein %s: more residue lines than its %u residues", t->protein, t->n);
            return -1;
        } else if (residue_line(t, line, len, ln, row, out + (size_t)row * 20, err)) {
            return -1;
        } else {
            row++;
        }
    }
    if (!ended) {
        fs_err_at(err, t->path, ln, 0, "protein %s: the profile does not end with '//' (a truncated file?)",
                  t->protein);
        return -1;
    }
    if (row != t->n) {
        fs_err_at(err, t->path, ln, 0, "protein %s: %u residue lines, expected %u (its residues in the data set)",
                  t->protein, row, t->n);
        return -1;
    }
    return 0;
}

static void missing(const FeatTarget *t, long ln, FsErr *err)
{
    if (ln)
        fs_err_at(err, t->path, ln, 0, "protein %s: expected the HMM line's 20 letters in the order %s", t->protein,
                  FS_AA_LETTERS);
    else
        fs_err_at(err, t->path, 0, 0, "protein %s: not an HHblits .hhm profile: no 'HMM' line of the 20 letters",
                  t->protein);
}

int feat_read_hhm(const FeatTarget *t, float *out, FsErr *err)
{
    static const FeatTextLayout layout = {hmm_line, read_rows, missing, "an HHblits .hhm file"};
    return feat_text_read(t, &layout, out, err);
}
