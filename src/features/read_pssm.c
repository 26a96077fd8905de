/*
 * read_pssm.c: PSI-BLAST's ASCII PSSM (psiblast -out_ascii_pssm):
 *
 *   (a blank line)
 *   Last position-specific scoring matrix computed, weighted observed ...
 *              A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V   A   R ...  V
 *       1 M   -1 -2 -2 -3 -2 -1 -2 -3 -2  1  2 -2  6  0 -3 -2 -1 -2 -1  1    0 ... 0  0.88 0.11
 *       2 K   ...
 *   (a blank line)
 *                         K         Lambda
 *   Standard Ungapped    0.1344     0.3174   ...
 *
 * Header lines until the column line (the 20 letters in that order, twice);
 * then one line per residue: its position (1, 2, ...), its letter, the 20
 * log-odds scores, the 20 weighted percentages (integers) and two reals
 * (information per position, relative weight; read past, not used). The
 * rows end at the first blank line (or the end of the file); what follows
 * (the K / Lambda footer) is not read. The features: the 20 log-odds
 * columns through the logistic 1/(1+e^-x) (PSIPRED's input), or with
 * `columns: percent` the percentages / 100, in the file's column order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/reader.h"

/* PSI-BLAST's column order. */
static const char pssm_letters[] = "ARNDCQEGHILKMFPSTWYV";

/* Whether a line is the column line: the 20 letters in order, twice. */
static int column_line(const char *line, size_t len)
{
    const char *p = line, *end = line + len, *tok;
    size_t tl;
    for (int i = 0; i < 40; i++)
        if (!feat_token(&p, end, &tok, &tl) || tl != 1 || *tok != pssm_letters[i % 20]) return 0;
    return !feat_token(&p, end, &tok, &tl);
}

/* One residue line into row (20 values). 0, or -1 with err. */
static int residue_line(const FeatTarget *t, const char *line, size_t len, long ln, uint32_t row, float *out,
                        FsErr *err)
{
    const char *p = line, *end = line + len, *tok = NULL;
    size_t tl = 0;
    char shown[40];
    long v;
    if (feat_token(&p, end, &tok, &tl) && (feat_token_long(tok, tl, &v) || v != (long)row + 1)) {
        fs_err_at(err, t->path, ln, 0, "protein %s: expected residue position %u at the start of the line, found %s",
                  t->protein, row + 1, feat_token_text(tok, tl, shown, sizeof shown));
        return -1;
    }
    if (!feat_token(&p, end, &tok, &tl) || tl != 1 || data_aa_code((unsigned char)*tok) < 0) {
        fs_err_at(err, t->path, ln, 0, "protein %s: expected the residue letter after position %u", t->protein,
                  row + 1);
        return -1;
    }
    if (!feat_letter_agrees((unsigned char)*tok, t->aa[row])) {
        fs_err_at(err, t->path, ln, 0, "protein %s: residue %u is '%c' here but '%c' in the sequence", t->protein,
                  row + 1, *tok, FS_AA_ALPHABET[t->aa[row] <= FS_AA_UNKNOWN ? t->aa[row] : FS_AA_UNKNOWN]);
        return -1;
    }
    for (int c = 0; c < 40; c++) {
        const int got = feat_token(&p, end, &tok, &tl);
        if (!got || feat_token_long(tok, tl, &v) || v < -10000 || v > 10000) {
            fs_err_at(err, t->path, ln, 0,
                      "protein %s: residue %u: expected 20 integer log-odds scores and 20 integer percentages; "
                      "value %d is %s",
                      t->protein, row + 1, c + 1, got ? feat_token_text(tok, tl, shown, sizeof shown) : "missing");
            return -1;
        }
        if (t->src->pssm_percent && c >= 20) out[c - 20] = (float)((double)v / 100.0);
        if (!t->src->pssm_percent && c < 20) out[c] = (float)(1.0 / (1.0 + exp(-(double)v)));
    }
    return 0;
}

/* The rows after the column line, from *pos. 0, or -1 with err. */
static int read_rows(const FeatTarget *t, const char *buf, size_t n, size_t pos, long ln, float *out, FsErr *err)
{
    const char *line;
    size_t len;
    uint32_t row = 0;
    while (feat_text_line(buf, n, &pos, &line, &len)) {
        ln++;
        const char *p = line, *tok;
        size_t tl;
        if (!feat_token(&p, line + len, &tok, &tl)) break; /* the blank line before the footer */
        if (row == t->n) {
            fs_err_at(err, t->path, ln, 0, "protein %s: more residue rows than its %u residues", t->protein, t->n);
            return -1;
        }
        if (residue_line(t, line, len, ln, row, out + (size_t)row * 20, err)) return -1;
        row++;
    }
    if (row != t->n) {
        fs_err_at(err, t->path, ln, 0, "protein %s: %u residue rows, expected %u (its residues in the data set)",
                  t->protein, row, t->n);
        return -1;
    }
    return 0;
}

static void missing(const FeatTarget *t, long ln, FsErr *err)
{
    (void)ln; /* column_line finds the line or not: no wrong form */
    fs_err_at(err, t->path, 0, 0,
              "protein %s: not a PSI-BLAST ASCII PSSM (-out_ascii_pssm): no column line of the 20 letters "
              "A R N D C Q E G H I L K M F P S T W Y V, twice",
              t->protein);
}

int feat_read_pssm(const FeatTarget *t, float *out, FsErr *err)
{
    static const FeatTextLayout layout = {column_line, read_rows, missing, "a PSI-BLAST ASCII PSSM file"};
    return feat_text_read(t, &layout, out, err);
}
