/*
 * read_uci.c: the UCI (Qian & Sejnowski 1988) pair layout. One residue per
 * line, "AA label"; '#' comments and blank lines; "<>" starts a segment,
 * and inside a protein it marks a chain break (new segment, same protein);
 * "end" or "<end>" ends the protein. Protein names are "FILE/N".
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "data/reader.h"

static void begin(DataBuilder *b, const char *path, unsigned *count)
{
    char name[256];
    int n = snprintf(name, sizeof name, "%s/%u", data_basename(path), ++*count);
    data_build_protein(b, name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1, FS_SET_NONE);
}

int data_read_uci(DataBuilder *b, const DataText *t, FsErr *err)
{
    const char *path = t->path, *line;
    size_t pos = 0, len;
    long no = 0, open_line = 0;
    unsigned count = 0;
    int open = 0;
    while (data_text_line(t, &pos, &line, &len)) {
        no++;
        size_t a = 0, z = len;
        while (a < z && isspace((unsigned char)line[a])) a++;
        while (z > a && isspace((unsigned char)line[z - 1])) z--;
        const char *s = line + a;
        size_t n = z - a;
        if (n == 0 || s[0] == '#') continue;
        if (n == 2 && memcmp(s, "<>", 2) == 0) {
            if (open) {
                data_build_break(b);
            } else {
                begin(b, path, &count);
                open = 1;
                open_line = no;
            }
            continue;
        }
        if ((n == 3 && memcmp(s, "end", 3) == 0) || (n == 5 && memcmp(s, "<end>", 5) == 0)) {
            /* A repeated end marker (some copies add them) ends nothing. */
            if (open && data_build_end(b) == 0) {
                fs_err_at(err, path, no, 0, "protein starting at line %ld has no residues",
                          open_line);
                return -1;
            }
            open = 0;
            continue;
        }
        /* "A h": one letter, blanks, one label. */
        size_t j = 1;
        while (j < n && isspace((unsigned char)s[j])) j++;
        if (n < 3 || j == 1 || j != n - 1) {
            fs_err_at(err, path, no, (long)a + 1,
                      "expected 'AMINO_ACID LABEL' (a letter, a space, a label), '<>', 'end' or "
                      "'<end>'");
            return -1;
        }
        int ss = data_build_label(b, (unsigned char)s[j]);
        if (ss < 0) {
            fs_err_at(err, path, no, (long)(a + j) + 1, "unknown label '%c' (expected %s)", s[j],
                      DATA_LABELS_EXPECTED_OF(b));
            return -1;
        }
        if (!open) {
            /* Residues before any "<>" still form a protein. */
            begin(b, path, &count);
            open = 1;
            open_line = no;
        }
        if (data_build_residue(b, (unsigned char)s[0], (uint8_t)ss, path, no, (long)a + 1, err))
            return -1;
    }
    if (open && data_build_end(b) == 0) {
        fs_err_at(err, path, open_line, 0, "protein starting here has no residues");
        return -1;
    }
    return 0;
}
