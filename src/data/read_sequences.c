/*
 * read_sequences.c: plain FASTA, the input of `predict`: ">id description"
 * headers and sequence lines (any case, wrapped anywhere, blank lines
 * ignored, a final '*' allowed). No labels: every residue is unscored.
 * Letters outside the 20 standard amino acids read as X (counted in the
 * stats, for the caller's warning); anything else is an error with
 * file:line:col.
 */
#include <ctype.h>
#include <string.h>

#include "data/reader.h"

static int read_fasta_plain(DataBuilder *b, const DataText *t, FsErr *err)
{
    const char *path = t->path, *line;
    size_t pos = 0, len;
    long no = 0, hdr = 0;
    char name[256];
    int open = 0;
    while (data_text_line(t, &pos, &line, &len)) {
        no++;
        while (len && isspace((unsigned char)line[len - 1])) len--;
        if (line[0] == '>') {
            if (open && data_build_end(b) == 0)
                return fs_err_at(err, path, hdr, 0, "sequence '%s' is empty", name), -1;
            size_t i = 1;
            while (i < len && isspace((unsigned char)line[i])) i++;
            size_t n = 0;
            while (i + n < len && !isspace((unsigned char)line[i + n])) n++;
            if (n == 0) return fs_err_at(err, path, no, 2, "expected a sequence id after '>'"), -1;
            if (n >= sizeof name) n = sizeof name - 1;
            memcpy(name, line + i, n);
            name[n] = '\0';
            data_build_protein(b, name, n, FS_SET_NONE);
            open = 1;
            hdr = no;
            continue;
        }
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)line[i];
            if (isspace(c)) continue;
            if (!open)
                return fs_err_at(err, path, no, (long)i + 1, "expected a '>' header line before the sequence"), -1;
            if (c == '*' && i + 1 == len) continue; /* a stop codon marks the end */
            if (c == '-' || c == '.')
                return fs_err_at(err, path, no, (long)i + 1,
                                 "expected an amino-acid letter, found '%c' (aligned sequences: remove the gaps)",
                                 c), -1;
            if (data_build_residue(b, c, FS_SS_C | FS_SS_UNSCORED, path, no, (long)i + 1, err)) return -1;
        }
    }
    if (open && data_build_end(b) == 0) return fs_err_at(err, path, hdr, 0, "sequence '%s' is empty", name), -1;
    if (b->ds->n_prot == 0) return fs_err_at(err, path, 0, 0, "no sequences (expected FASTA: '>id' lines)"), -1;
    return 0;
}

/* t's proteins into ds (which the builder owns from the start). */
static int sequences_build(FsDataset *ds, const DataText *t, FsErr *err)
{
    DataBuilder b;
    data_build_init(&b, ds);
    int rc = read_fasta_plain(&b, t, err);
    if (rc == 0) data_build_finish(&b);
    else data_free(ds);
    return rc;
}

int data_load_sequences(FsDataset *ds, const char *path, FsErr *err)
{
    DataText t;
    if (data_text_read(&t, path, err) != 0) {
        memset(ds, 0, sizeof *ds); /* nothing to free */
        return -1;
    }
    int rc = sequences_build(ds, &t, err);
    data_text_free(&t);
    return rc;
}

int data_sequences_parse(FsDataset *ds, const char *text, size_t n, const char *name, FsErr *err)
{
    /* A DataText is NUL-terminated; the caller's n bytes need not be. The
     * file reader's checks apply (a byte-order mark, binary bytes). */
    char *copy = fs_malloc(n + 1);
    memcpy(copy, text, n);
    copy[n] = '\0';
    DataText t;
    if (data_text_adopt(&t, copy, n, name, err) != 0) {
        memset(ds, 0, sizeof *ds);
        return -1;
    }
    int rc = sequences_build(ds, &t, err);
    data_text_free(&t);
    return rc;
}
