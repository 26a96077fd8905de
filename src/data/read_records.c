/*
 * read_records.c: record files (the CB513 ".data" family). Each record is
 * an optional ">id" line, a sequence line, a label line (3-state or DSSP
 * 8-state) and a blank line. Names are the ids, or "FILE/N" without one.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "data/reader.h"

/* Trailing whitespace off; leading kept so columns stay true. */
static size_t rtrim(const char *s, size_t n)
{
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return n;
}

static int blank(const char *s, size_t n) { return rtrim(s, n) == 0; }

int data_read_records(DataBuilder *b, const DataText *t, FsErr *err)
{
    const char *path = t->path, *line;
    size_t pos = 0, len;
    long no = 0;
    unsigned count = 0;
    while (data_text_line(t, &pos, &line, &len)) {
        no++;
        if (blank(line, len)) continue;
        char name[256];
        size_t name_len;
        count++;
        if (line[0] == '>') {
            const char *id = line + 1;
            size_t n = rtrim(id, len - 1);
            while (n && isspace((unsigned char)*id)) id++, n--;
            if (n == 0) {
                fs_err_at(err, path, no, 2, "expected an ID after '>'");
                return -1;
            }
            name_len = n < sizeof name ? n : sizeof name - 1;
            memcpy(name, id, name_len);
            long hdr = no;
            if (!data_text_line(t, &pos, &line, &len) || (no++, blank(line, len))) {
                fs_err_at(err, path, hdr + 1, 0, "expected the sequence line of record '%.*s'",
                          (int)name_len, name);
                return -1;
            }
        } else {
            int k = snprintf(name, sizeof name, "%s/%u", data_basename(path), count);
            name_len = (size_t)k < sizeof name ? (size_t)k : sizeof name - 1;
        }
        const char *seq = line;
        size_t n_seq = rtrim(line, len);
        long seq_no = no;
        if (!data_text_line(t, &pos, &line, &len) || (no++, blank(line, len))) {
            fs_err_at(err, path, seq_no + 1, 0,
                      "expected a label line after the sequence at line %ld", seq_no);
            return -1;
        }
        size_t n_lab = rtrim(line, len);
        if (n_lab != n_seq) {
            fs_err_at(err, path, no, 0,
                      "label line has %zu labels but the sequence at line %ld has %zu residues",
                      n_lab, seq_no, n_seq);
            return -1;
        }
        data_build_protein(b, name, name_len, FS_SET_NONE);
        for (size_t i = 0; i < n_seq; i++) {
            int ss = data_build_label(b, (unsigned char)line[i]);
            if (ss < 0) {
                fs_err_at(err, path, no, (long)i + 1, "unknown label '%c' (expected %s)", line[i],
                          DATA_LABELS_EXPECTED_OF(b));
                return -1;
            }
            if (data_build_residue(b, (unsigned char)seq[i], (uint8_t)ss, path, seq_no, (long)i + 1,
                                   err))
                return -1;
        }
        data_build_end(b);
        if (data_text_line(t, &pos, &line, &len)) {
            no++;
            if (!blank(line, len)) {
                fs_err_at(err, path, no, 1, "expected a blank line after the label line %ld",
                          no - 1);
                return -1;
            }
        }
    }
    return 0;
}
