/*
 * read_csv.c: the NetSurfP-2.0 CSV layout (TS115, CB513, CASP12 files).
 * Header "input, dssp3, dssp8, disorder, cb513_mask" (columns found by name;
 * input and one of dssp3/dssp8 required); each field a space-separated
 * token list, one token per residue. dssp3 is used if present, otherwise
 * dssp8 reduced to 3 states; disorder 0 or cb513_mask 0 leaves the residue
 * unscored. Names are "FILE/N".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/reader.h"

enum { COL_INPUT, COL_DSSP3, COL_DSSP8, COL_DISORDER, COL_MASK, COL_KINDS, COL_MAX = 16 };
static const char *const col_names[COL_KINDS] = {"input", "dssp3", "dssp8", "disorder",
                                                 "cb513_mask"};
#define CSV_HEADER "input, dssp3, dssp8, disorder, cb513_mask"

typedef struct {
    uint32_t *start, *len; /* tokens of one field: offsets into the line */
    size_t n, cap;
    size_t field; /* the field's column in the line (0-based byte) */
} Tokens;

static void tokens_split(Tokens *t, const char *line, size_t a, size_t z)
{
    t->n = 0;
    t->field = a;
    size_t i = a;
    while (i < z) {
        while (i < z && isspace((unsigned char)line[i])) i++;
        if (i == z) break;
        size_t s = i;
        while (i < z && !isspace((unsigned char)line[i])) i++;
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 1024;
            t->start = fs_realloc(t->start, t->cap * sizeof *t->start);
            t->len = fs_realloc(t->len, t->cap * sizeof *t->len);
        }
        t->start[t->n] = (uint32_t)s;
        t->len[t->n++] = (uint32_t)(i - s);
    }
}

/* The header's columns by kind; -1 with err set if it is not the header. */
static int parse_header(const char *path, const char *line, size_t len, int *kind_col, int *n_cols,
                        FsErr *err)
{
    for (int k = 0; k < COL_KINDS; k++) kind_col[k] = -1;
    size_t a = 0;
    int col = 0;
    for (;;) {
        size_t z = a;
        while (z < len && line[z] != ',') z++;
        size_t s = a, e = z;
        while (s < e && isspace((unsigned char)line[s])) s++;
        while (e > s && isspace((unsigned char)line[e - 1])) e--;
        int k = 0;
        while (k < COL_KINDS &&
               !(strlen(col_names[k]) == e - s && !memcmp(line + s, col_names[k], e - s)))
            k++;
        if (k == COL_KINDS || kind_col[k] >= 0 || col >= COL_MAX) {
            fs_err_at(err, path, 1, (long)s + 1,
                      "expected the NetSurfP-2.0 CSV header '" CSV_HEADER "', found column '%.*s'",
                      (int)(e - s > 60 ? 60 : e - s), line + s);
            return -1;
        }
        kind_col[k] = col++;
        if (z == len) break;
        a = z + 1;
    }
    if (kind_col[COL_INPUT] < 0 || (kind_col[COL_DSSP3] < 0 && kind_col[COL_DSSP8] < 0)) {
        fs_err_at(err, path, 1, 0,
                  "expected the NetSurfP-2.0 CSV header '" CSV_HEADER
                  "' (input and dssp3 or dssp8 at least)");
        return -1;
    }
    *n_cols = col;
    return 0;
}

/* 0/1 flag tokens ("0.0", "1.0", "1"): nonzero keeps the residue scored. */
static int flag_value(const char *s, size_t n, int *on)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end || v != v) return -1;
    *on = v != 0.0;
    return 0;
}

/* One file's reading: its header's columns and the current row's tokens. */
typedef struct {
    const char *path;
    int kind_col[COL_KINDS]; /* each kind's column, or -1 */
    int n_cols;
    int lab_kind; /* COL_DSSP3, or COL_DSSP8 without a dssp3 column */
    Tokens tok[COL_MAX];
} CsvReader;

/* The row's fields, each split into tokens; returns how many fields. */
static int row_split(CsvReader *r, const char *line, size_t len)
{
    int nf = 0;
    size_t a = 0;
    for (;;) {
        size_t z = a;
        while (z < len && line[z] != ',') z++;
        if (nf < COL_MAX) tokens_split(&r->tok[nf], line, a, z);
        nf++;
        if (z == len) return nf;
        a = z + 1;
    }
}

/* As many fields as the header, each with a token per residue of input,
 * and a residue at least. 0, or -1 with err. */
static int row_check(const CsvReader *r, int nf, long no, FsErr *err)
{
    if (nf != r->n_cols) {
        fs_err_at(err, r->path, no, 0, "expected %d comma-separated fields (as in the header), found %d", r->n_cols,
                  nf);
        return -1;
    }
    const Tokens *in = &r->tok[r->kind_col[COL_INPUT]];
    for (int k = 0; k < COL_KINDS; k++) {
        int c = r->kind_col[k];
        if (c >= 0 && r->tok[c].n != in->n) {
            fs_err_at(err, r->path, no, (long)r->tok[c].field + 1,
                      "field '%s' has %zu tokens, expected %zu (one per residue of 'input')", col_names[k],
                      r->tok[c].n, in->n);
            return -1;
        }
    }
    if (in->n == 0) {
        fs_err_at(err, r->path, no, 0, "row has no residues");
        return -1;
    }
    return 0;
}

/* Residue i of the row: its label, unscored if a disorder or mask flag is
 * 0, and its amino acid. 0, or -1 with err. */
static int row_residue(DataBuilder *b, const CsvReader *r, const char *line, long no, size_t i, FsErr *err)
{
    const Tokens *in = &r->tok[r->kind_col[COL_INPUT]], *lab = &r->tok[r->kind_col[r->lab_kind]];
    const char *ls = line + lab->start[i];
    int ss = lab->len[i] == 1 ? data_build_label(b, (unsigned char)ls[0]) : -1;
    if (ss < 0) {
        fs_err_at(err, r->path, no, (long)lab->start[i] + 1, "unknown label '%.*s' in '%s' (expected one of %s)",
                  (int)(lab->len[i] > 20 ? 20 : lab->len[i]), ls, col_names[r->lab_kind], DATA_LABELS_EXPECTED_OF(b));
        return -1;
    }
    for (int f = COL_DISORDER; f <= COL_MASK; f++) {
        int c = r->kind_col[f], on;
        if (c < 0) continue;
        const char *fs = line + r->tok[c].start[i];
        if (flag_value(fs, r->tok[c].len[i], &on)) {
            fs_err_at(err, r->path, no, (long)r->tok[c].start[i] + 1,
                      "expected a number (0 or 1) in '%s', found '%.*s'", col_names[f],
                      (int)(r->tok[c].len[i] > 20 ? 20 : r->tok[c].len[i]), fs);
            return -1;
        }
        if (!on) ss |= FS_SS_UNSCORED;
    }
    if (in->len[i] != 1) {
        fs_err_at(err, r->path, no, (long)in->start[i] + 1,
                  "expected one amino-acid letter per token in 'input', found '%.*s'",
                  (int)(in->len[i] > 20 ? 20 : in->len[i]), line + in->start[i]);
        return -1;
    }
    return data_build_residue(b, (unsigned char)line[in->start[i]], (uint8_t)ss, r->path, no, (long)in->start[i] + 1,
                              err);
}

/* One row (line no): protein number count, "FILE/count". 0, or -1 with err. */
static int row_read(DataBuilder *b, CsvReader *r, const char *line, size_t len, long no, unsigned count, FsErr *err)
{
    if (row_check(r, row_split(r, line, len), no, err)) return -1;
    char name[256];
    int k = snprintf(name, sizeof name, "%s/%u", data_basename(r->path), count);
    data_build_protein(b, name, (size_t)k < sizeof name ? (size_t)k : sizeof name - 1, FS_SET_NONE);
    for (size_t i = 0; i < r->tok[r->kind_col[COL_INPUT]].n; i++)
        if (row_residue(b, r, line, no, i, err)) return -1;
    data_build_end(b);
    return 0;
}

int data_read_csv(DataBuilder *b, const DataText *t, FsErr *err)
{
    CsvReader r;
    memset(&r, 0, sizeof r);
    r.path = t->path;
    const char *line;
    size_t pos = 0, len;
    long no = 1;
    if (!data_text_line(t, &pos, &line, &len) || parse_header(r.path, line, len, r.kind_col, &r.n_cols, err))
        return -1;
    r.lab_kind = r.kind_col[COL_DSSP3] >= 0 ? COL_DSSP3 : COL_DSSP8;
    if (b->classes == FS_CLASSES8) {
        if (r.kind_col[COL_DSSP8] < 0)
            return fs_err_at(err, r.path, 1, 0, "data.classes: 8 reads the 'dssp8' column, which this CSV lacks"), -1;
        r.lab_kind = COL_DSSP8;
    }
    unsigned count = 0;
    int rc = 0;
    while (!rc && data_text_line(t, &pos, &line, &len)) {
        no++;
        size_t e = len;
        while (e && isspace((unsigned char)line[e - 1])) e--;
        if (e) rc = row_read(b, &r, line, len, no, ++count, err);
    }
    for (int c = 0; c < COL_MAX; c++) {
        free(r.tok[c].start);
        free(r.tok[c].len);
    }
    return rc;
}
