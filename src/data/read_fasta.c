/*
 * read_fasta.c: a FASTA set. A sequence file, a label file and an optional
 * mask file (1 scored, 0 unscored) whose records are matched by ID, not by
 * order, so a missing, extra or duplicated ID is reported rather than
 * shifting every later protein. Label headers may carry a predefined split:
 * SET=train|test and VALIDATION=True|False (FLIP). Records may span lines.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "data/reader.h"

typedef struct {
    const char *hdr, *id, *desc; /* into the text */
    uint32_t id_len, desc_len;
    long line;    /* of the header */
    size_t body;  /* text offset of the first body line */
    size_t off;   /* into FaFile.seq */
    uint32_t len; /* letters (whitespace skipped) */
    int used;
} FaRec;

typedef struct {
    DataText text;
    char *seq; /* every record's body without whitespace */
    size_t n_seq;
    FaRec *rec;
    size_t n_rec, cap_rec;
    uint32_t *slot; /* open addressing: record index + 1, 0 empty */
    size_t n_slot;
} FaFile;

static uint64_t id_hash(const char *s, size_t n) { return fs_fnv1a64(s, n, FS_FNV_OFFSET); }

static FaRec *fa_find(const FaFile *f, const char *id, size_t n)
{
    size_t mask = f->n_slot - 1;
    for (size_t h = (size_t)id_hash(id, n) & mask;; h = (h + 1) & mask) {
        uint32_t r = f->slot[h];
        if (!r) return NULL;
        FaRec *c = &f->rec[r - 1];
        if (c->id_len == n && memcmp(c->id, id, n) == 0) return c;
    }
}

static void fa_free(FaFile *f)
{
    data_text_free(&f->text);
    free(f->seq);
    free(f->rec);
    free(f->slot);
    memset(f, 0, sizeof *f);
}

static int fa_parse(FaFile *f, const char *path, FsErr *err)
{
    memset(f, 0, sizeof *f);
    if (data_text_read(&f->text, path, err)) return -1;
    f->seq = fs_malloc(f->text.n + 1);
    const char *line;
    size_t pos = 0, len;
    long no = 0;
    while (data_text_line(&f->text, &pos, &line, &len)) {
        no++;
        if (len && line[0] == '>') {
            if (f->n_rec == f->cap_rec) {
                f->cap_rec = f->cap_rec ? 2 * f->cap_rec : 1024;
                f->rec = fs_realloc(f->rec, f->cap_rec * sizeof *f->rec);
            }
            FaRec *r = &f->rec[f->n_rec++];
            memset(r, 0, sizeof *r);
            size_t i = 1;
            while (i < len && isspace((unsigned char)line[i])) i++;
            size_t s = i;
            while (i < len && !isspace((unsigned char)line[i])) i++;
            if (i == s) {
                fs_err_at(err, path, no, 2, "expected an ID after '>'");
                return -1;
            }
            r->hdr = line;
            r->id = line + s;
            r->id_len = (uint32_t)(i - s);
            r->desc = line + i;
            r->desc_len = (uint32_t)(len - i);
            r->line = no;
            r->body = pos;
            r->off = f->n_seq;
            continue;
        }
        size_t i = 0;
        while (i < len && isspace((unsigned char)line[i])) i++;
        if (i == len) continue;
        if (f->n_rec == 0) {
            fs_err_at(err, path, no, 1, "expected a '>ID' header line before any sequence");
            return -1;
        }
        FaRec *r = &f->rec[f->n_rec - 1];
        for (; i < len; i++)
            if (!isspace((unsigned char)line[i])) f->seq[f->n_seq++] = line[i];
        r->len = (uint32_t)(f->n_seq - r->off);
    }
    if (f->n_rec == 0) {
        fs_err_at(err, path, 0, 0, "no FASTA records (expected '>ID' header lines)");
        return -1;
    }
    f->n_slot = 16;
    while (f->n_slot < 2 * f->n_rec) f->n_slot *= 2;
    f->slot = fs_calloc(f->n_slot, sizeof *f->slot);
    for (size_t k = 0; k < f->n_rec; k++) {
        FaRec *r = &f->rec[k];
        FaRec *dup = fa_find(f, r->id, r->id_len);
        if (dup) {
            fs_err_at(err, path, r->line, 0, "duplicate ID '%.*s' (first at line %ld)",
                      (int)r->id_len, r->id, dup->line);
            return -1;
        }
        size_t mask = f->n_slot - 1, h = (size_t)id_hash(r->id, r->id_len) & mask;
        while (f->slot[h]) h = (h + 1) & mask;
        f->slot[h] = (uint32_t)(k + 1);
    }
    return 0;
}

/* Line and column of the k-th letter of a record (errors only). */
static void fa_where(const FaFile *f, const FaRec *r, uint32_t k, long *line, long *col)
{
    const char *s = f->text.buf;
    long ln = r->line + 1, cl = 1;
    for (size_t p = r->body; p < f->text.n; p++) {
        if (s[p] == '\n') {
            ln++;
            cl = 1;
            continue;
        }
        if (!isspace((unsigned char)s[p]) && k-- == 0) break;
        cl++;
    }
    *line = ln;
    *col = cl;
}

/* SET= / VALIDATION= from a label header; -1 with err on a bad value. */
static int header_set(const FaFile *f, const FaRec *r, FsSet *set, FsErr *err)
{
    const char *s = r->desc, *end = r->desc + r->desc_len;
    int have_set = 0, valid = 0;
    FsSet base = FS_SET_NONE;
    while (s < end) {
        while (s < end && isspace((unsigned char)*s)) s++;
        const char *w = s;
        while (s < end && !isspace((unsigned char)*s)) s++;
        size_t n = (size_t)(s - w);
        if (n > 4 && strncasecmp(w, "SET=", 4) == 0) {
            const char *v = w + 4;
            size_t m = n - 4;
            if (m == 5 && !strncasecmp(v, "train", 5))
                base = FS_SET_TRAIN;
            else if (m == 4 && !strncasecmp(v, "test", 4))
                base = FS_SET_TEST;
            else if ((m == 5 && !strncasecmp(v, "valid", 5)) ||
                     (m == 10 && !strncasecmp(v, "validation", 10)))
                base = FS_SET_VALID;
            else {
                fs_err_at(err, f->text.path, r->line, (long)(v - r->hdr) + 1,
                          "expected SET=train, SET=valid or SET=test, found '%.*s'", (int)n, w);
                return -1;
            }
            have_set = 1;
        } else if (n > 11 && strncasecmp(w, "VALIDATION=", 11) == 0) {
            const char *v = w + 11;
            size_t m = n - 11;
            if (m == 4 && !strncasecmp(v, "true", 4))
                valid = 1;
            else if (m == 5 && !strncasecmp(v, "false", 5))
                valid = 0;
            else {
                fs_err_at(err, f->text.path, r->line, (long)(v - r->hdr) + 1,
                          "expected VALIDATION=True or VALIDATION=False, found '%.*s'", (int)n, w);
                return -1;
            }
        }
    }
    *set = !have_set ? FS_SET_NONE : (base == FS_SET_TRAIN && valid) ? FS_SET_VALID : base;
    return 0;
}

/* Every record of a companion file must belong to a sequence. */
static int check_unused(const FaFile *f, const char *seq_path, FsErr *err)
{
    for (size_t k = 0; k < f->n_rec; k++)
        if (!f->rec[k].used) {
            fs_err_at(err, f->text.path, f->rec[k].line, 0, "ID '%.*s' has no record in %s",
                      (int)f->rec[k].id_len, f->rec[k].id, seq_path);
            return -1;
        }
    return 0;
}

static int build_all(DataBuilder *b, FaFile *fs, FaFile *fl, FaFile *fm, FsErr *err)
{
    for (size_t k = 0; k < fs->n_rec; k++) {
        FaRec *rs = &fs->rec[k], *rl, *rm = NULL;
        long ln, cl;
        if (!(rl = fa_find(fl, rs->id, rs->id_len)) ||
            (fm && !(rm = fa_find(fm, rs->id, rs->id_len)))) {
            fs_err_at(err, fs->text.path, rs->line, 0, "ID '%.*s' has no record in %s",
                      (int)rs->id_len, rs->id, rl ? fm->text.path : fl->text.path);
            return -1;
        }
        rl->used = 1;
        if (rm) rm->used = 1;
        if (rs->len == 0) {
            fs_err_at(err, fs->text.path, rs->line, 0, "record '%.*s' has no residues",
                      (int)rs->id_len, rs->id);
            return -1;
        }
        FaRec *other = rl->len != rs->len ? rl : rm && rm->len != rs->len ? rm : NULL;
        if (other) {
            fs_err_at(err, other == rl ? fl->text.path : fm->text.path, other->line, 0,
                      "'%.*s' has %u %s but %s:%ld has %u residues", (int)rs->id_len, rs->id,
                      other->len, other == rl ? "labels" : "mask values", fs->text.path, rs->line,
                      rs->len);
            return -1;
        }
        FsSet set;
        if (header_set(fl, rl, &set, err)) return -1;
        data_build_protein(b, rs->id, rs->id_len, set);
        const char *aa = fs->seq + rs->off, *lab = fl->seq + rl->off;
        const char *mk = rm ? fm->seq + rm->off : NULL;
        for (uint32_t i = 0; i < rs->len; i++) {
            int ss = data_build_label(b, (unsigned char)lab[i]);
            if (ss < 0) {
                fa_where(fl, rl, i, &ln, &cl);
                fs_err_at(err, fl->text.path, ln, cl, "unknown label '%c' (expected %s)", lab[i],
                          DATA_LABELS_EXPECTED_OF(b));
                return -1;
            }
            if (mk && mk[i] != '1') {
                if (mk[i] != '0') {
                    fa_where(fm, rm, i, &ln, &cl);
                    fs_err_at(err, fm->text.path, ln, cl,
                              "expected a mask value '1' (scored) or '0' (unscored), found '%c'",
                              mk[i]);
                    return -1;
                }
                ss |= FS_SS_UNSCORED;
            }
            if (data_aa_code((unsigned char)aa[i]) < 0) {
                fa_where(fs, rs, i, &ln, &cl);
                return data_build_residue(b, (unsigned char)aa[i], 0, fs->text.path, ln, cl, err);
            }
            if (data_build_residue(b, (unsigned char)aa[i], (uint8_t)ss, fs->text.path, rs->line, 0,
                                   err))
                return -1;
        }
        data_build_end(b);
    }
    if (check_unused(fl, fs->text.path, err)) return -1;
    if (fm && check_unused(fm, fs->text.path, err)) return -1;
    return 0;
}

int data_read_fasta_set(DataBuilder *b, const char *sequences, const char *labels, const char *mask,
                        FsErr *err)
{
    FaFile fs, fl, fm;
    int rc = -1;
    memset(&fl, 0, sizeof fl);
    memset(&fm, 0, sizeof fm);
    if (fa_parse(&fs, sequences, err) || fa_parse(&fl, labels, err) ||
        (mask && fa_parse(&fm, mask, err)))
        goto out;
    rc = build_all(b, &fs, &fl, mask ? &fm : NULL, err);
out:
    fa_free(&fs);
    fa_free(&fl);
    fa_free(&fm);
    return rc;
}
