/*
 * dataset.c: the in-memory dataset. Letter and label codes, the builder
 * the readers append to, and data_finish, which derives everything that is
 * not stored (window distances, stats, fingerprint) from aa/ss/segments so
 * a freshly read and a deserialized dataset are identical.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "data/reader.h"

/* Past this many residues the uint32 offsets would wrap. */
#define DATA_MAX_RES 0xfffffff0u

int data_aa_code(int ch)
{
    if (ch < 0 || ch > 255 || !isalpha(ch)) return -1;
    const char *p = strchr(FS_AA_LETTERS, toupper(ch));
    return p ? (int)(p - FS_AA_LETTERS) : FS_AA_UNKNOWN;
}

int data_ss_code(int ch)
{
    /* DSSP turns, bends, loops, polyproline (DSSP 4) and blanks are coil. */
    static const char helix[] = "HGIhgi", strand[] = "EBeb", coil[] = "CTSLPctslp_- ";
    if (ch <= 0 || ch > 255) return -1;
    if (strchr(helix, ch)) return FS_SS_H;
    if (strchr(strand, ch)) return FS_SS_E;
    if (strchr(coil, ch)) return FS_SS_C;
    return -1;
}

int data_ss8_code(int ch)
{
    /* DSSP's blank, '-', loops and polyproline (DSSP 4) are coil, C. */
    static const char coil[] = "CLPclp_- ";
    if (ch <= 0 || ch > 255) return -1;
    if (strchr(coil, ch)) return FS_SS8_C;
    const char *at = strchr(FS_CLASS8_LETTERS, toupper(ch));
    return at ? (int)(at - FS_CLASS8_LETTERS) : -1;
}

int data_label_code(int classes, int ch)
{
    return fs_classes(classes) == FS_CLASSES8 ? data_ss8_code(ch) : data_ss_code(ch);
}

const char *data_format_name(FsFormat f)
{
    switch (f) {
    case FS_FMT_AUTO: return "auto";
    case FS_FMT_UCI: return "uci";
    case FS_FMT_FASTA: return "fasta";
    case FS_FMT_RECORDS: return "records";
    case FS_FMT_CSV: return "csv";
    }
    return "?";
}

const char *data_format_desc(FsFormat f)
{
    switch (f) {
    case FS_FMT_AUTO: return "an unknown layout";
    case FS_FMT_UCI: return "a UCI pair file";
    case FS_FMT_FASTA: return "a FASTA file";
    case FS_FMT_RECORDS: return "a record file";
    case FS_FMT_CSV: return "a NetSurfP-2.0 CSV";
    }
    return "?";
}

int data_format_parse(const char *s)
{
    for (int f = FS_FMT_AUTO; f <= FS_FMT_CSV; f++)
        if (s && strcmp(s, data_format_name((FsFormat)f)) == 0) return f;
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Builder. Invariant: seg_off[n_seg] is where the open segment starts and */
/* prot_seg[n_prot] is the open protein's first segment.                   */

void data_build_init(DataBuilder *b, FsDataset *ds)
{
    memset(ds, 0, sizeof *ds);
    memset(b, 0, sizeof *b);
    b->ds = ds;
    b->cap_res = 1 << 16;
    b->cap_seg = 1 << 10;
    b->cap_prot = 1 << 10;
    b->cap_names = 1 << 14;
    ds->aa = fs_malloc(b->cap_res);
    ds->ss = fs_malloc(b->cap_res);
    ds->seg_off = fs_malloc((b->cap_seg + 1) * sizeof *ds->seg_off);
    ds->prot_seg = fs_malloc((b->cap_prot + 1) * sizeof *ds->prot_seg);
    ds->name_off = fs_malloc((b->cap_prot + 1) * sizeof *ds->name_off);
    ds->prot_set = fs_malloc(b->cap_prot);
    ds->names = fs_malloc(b->cap_names);
    ds->seg_off[0] = ds->prot_seg[0] = ds->name_off[0] = 0;
}

void data_build_protein(DataBuilder *b, const char *name, size_t name_len, FsSet set)
{
    FsDataset *ds = b->ds;
    if (b->open) data_build_end(b);
    if (ds->n_prot == b->cap_prot) {
        b->cap_prot *= 2;
        ds->prot_seg = fs_realloc(ds->prot_seg, (b->cap_prot + 1) * sizeof *ds->prot_seg);
        ds->name_off = fs_realloc(ds->name_off, (b->cap_prot + 1) * sizeof *ds->name_off);
        ds->prot_set = fs_realloc(ds->prot_set, b->cap_prot);
    }
    while (b->n_names + name_len + 1 > b->cap_names) {
        b->cap_names *= 2;
        ds->names = fs_realloc(ds->names, b->cap_names);
    }
    memcpy(ds->names + b->n_names, name, name_len);
    ds->names[b->n_names + name_len] = '\0';
    ds->prot_set[ds->n_prot] = (uint8_t)set;
    b->open = 1;
}

void data_build_break(DataBuilder *b)
{
    FsDataset *ds = b->ds;
    if (ds->n_res == ds->seg_off[ds->n_seg]) return;
    if (ds->n_seg == b->cap_seg) {
        b->cap_seg *= 2;
        ds->seg_off = fs_realloc(ds->seg_off, (b->cap_seg + 1) * sizeof *ds->seg_off);
    }
    ds->n_seg++;
    ds->seg_off[ds->n_seg] = ds->n_res;
}

int data_build_residue(DataBuilder *b, int ch, uint8_t ss, const char *path, long line, long col,
                       FsErr *err)
{
    FsDataset *ds = b->ds;
    int code = data_aa_code(ch);
    if (code < 0) {
        if (ch >= 0x21 && ch < 0x7f)
            fs_err_at(err, path, line, col, "expected an amino-acid letter, found '%c'", ch);
        else
            fs_err_at(err, path, line, col, "expected an amino-acid letter, found byte 0x%02x",
                      (unsigned)ch & 0xff);
        return -1;
    }
    if (code == FS_AA_UNKNOWN) ds->stats.unknown_letters[toupper(ch) - 'A']++;
    if (ds->n_res >= DATA_MAX_RES) {
        fs_err_at(err, path, line, col, "too many residues (this build holds at most %u)",
                  DATA_MAX_RES);
        return -1;
    }
    if (ds->n_res == b->cap_res) {
        b->cap_res *= 2;
        ds->aa = fs_realloc(ds->aa, b->cap_res);
        ds->ss = fs_realloc(ds->ss, b->cap_res);
    }
    ds->aa[ds->n_res] = (uint8_t)code;
    ds->ss[ds->n_res] = ss;
    ds->n_res++;
    return 0;
}

int data_build_label(DataBuilder *b, int ch)
{
    const int c = data_label_code(b->classes, ch);
    if (c < 0) return -1;
    if (b->classes == FS_CLASSES8 && c != FS_SS8_H && c != FS_SS8_E && c != FS_SS8_C) b->seen8 = 1;
    return FS_SS_LABEL(c);
}

int data_build_check8(DataBuilder *b, const char *path, FsErr *err)
{
    const int seen = b->seen8;
    b->seen8 = 0;
    if (b->classes != FS_CLASSES8 || seen) return 0;
    fs_err_at(err, path, 0, 0,
              "data.classes: 8 needs DSSP 8-state labels, but every label here is H, E or coil (3-state "
              "labels: no G I B T S); give the DSSP-8 labels or use data.classes: 3");
    return -1;
}

uint32_t data_build_end(DataBuilder *b)
{
    FsDataset *ds = b->ds;
    if (!b->open) return 0;
    data_build_break(b);
    uint32_t n = ds->seg_off[ds->n_seg] - ds->seg_off[ds->prot_seg[ds->n_prot]];
    size_t name_len = strlen(ds->names + b->n_names);
    b->n_names += name_len + 1;
    ds->n_prot++;
    ds->prot_seg[ds->n_prot] = ds->n_seg;
    ds->name_off[ds->n_prot] = (uint32_t)b->n_names;
    b->open = 0;
    return n;
}

void data_build_finish(DataBuilder *b)
{
    FsDataset *ds = b->ds;
    if (b->open) data_build_end(b);
    /* Shrink to fit: the 4-bytes-per-residue budget counts what stays. */
    ds->aa = fs_realloc(ds->aa, ds->n_res);
    ds->ss = fs_realloc(ds->ss, ds->n_res);
    ds->seg_off = fs_realloc(ds->seg_off, (ds->n_seg + 1) * sizeof *ds->seg_off);
    ds->prot_seg = fs_realloc(ds->prot_seg, (ds->n_prot + 1) * sizeof *ds->prot_seg);
    ds->name_off = fs_realloc(ds->name_off, (ds->n_prot + 1) * sizeof *ds->name_off);
    ds->prot_set = fs_realloc(ds->prot_set, ds->n_prot);
    ds->names = fs_realloc(ds->names, b->n_names);
    ds->prot_fold = fs_calloc(ds->n_prot ? ds->n_prot : 1, 1);
    data_finish(ds);
}

/* ---------------------------------------------------------------------- */

void data_free(FsDataset *ds)
{
    if (!ds) return;
    free(ds->aa);
    free(ds->ss);
    free(ds->left);
    free(ds->right);
    free(ds->seg_off);
    free(ds->prot_seg);
    free(ds->prot_set);
    free(ds->prot_fold);
    free(ds->name_off);
    free(ds->names);
    free(ds->feat);
    memset(ds, 0, sizeof *ds);
}

const char *data_protein_name(const FsDataset *ds, uint32_t i)
{
    return i < ds->n_prot ? ds->names + ds->name_off[i] : "";
}

uint64_t data_bytes(const FsDataset *ds)
{
    uint64_t n = 4ull * ds->n_res;
    n += 4ull * (ds->n_seg + 1) + 4ull * (ds->n_prot + 1) * 2 + 2ull * ds->n_prot;
    n += ds->n_prot ? ds->name_off[ds->n_prot] : 0;
    return n + data_feature_bytes(ds);
}

uint64_t data_feature_bytes(const FsDataset *ds)
{
    return ds->feat ? (uint64_t)ds->n_res * ds->feat_dim * (ds->feat_half ? 2u : 4u) : 0;
}

/* Little-endian words hashed in chunks, so the value is the same on every
 * machine whatever its byte order. */
static uint64_t hash_u32s(const uint32_t *v, size_t n, uint64_t h)
{
    unsigned char buf[4096];
    if (!v) return h; /* a zeroed (never loaded) dataset */
    while (n) {
        size_t m = n < sizeof buf / 4 ? n : sizeof buf / 4;
        for (size_t i = 0; i < m; i++) {
            buf[4 * i] = (unsigned char)v[i];
            buf[4 * i + 1] = (unsigned char)(v[i] >> 8);
            buf[4 * i + 2] = (unsigned char)(v[i] >> 16);
            buf[4 * i + 3] = (unsigned char)(v[i] >> 24);
        }
        h = fs_fnv1a64(buf, 4 * m, h);
        v += m;
        n -= m;
    }
    return h;
}

/* The feature matrix as little-endian values (halves: 2 bytes, floats: 4),
 * after its shape and storage: the same numbers stored as halves and as
 * floats are different inputs to the trainer, so they hash apart. */
static uint64_t hash_features(const FsDataset *ds, uint64_t h)
{
    h = fs_fnv1a64("features", 8, h);
    uint32_t shape[2] = {ds->feat_dim, ds->feat_half};
    h = hash_u32s(shape, 2, h);
    const size_t n = (size_t)ds->n_res * ds->feat_dim;
    unsigned char buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = ds->feat_half ? ((const uint16_t *)ds->feat)[i] : util_float_bits(((const float *)ds->feat)[i]);
        for (int b = 0; b < (ds->feat_half ? 2 : 4); b++) buf[k++] = (unsigned char)(v >> (8 * b));
        if (k + 4 > sizeof buf) h = fs_fnv1a64(buf, k, h), k = 0;
    }
    return k ? fs_fnv1a64(buf, k, h) : h;
}

uint64_t data_fingerprint(const FsDataset *ds)
{
    /* Content and folds only: names and the fold seed do not change what
     * a trainer sees, so they do not change the fingerprint. */
    uint64_t h = fs_fnv1a64("foldsweep-data-1", 16, FS_FNV_OFFSET);
    uint32_t counts[4] = {ds->n_res, ds->n_seg, ds->n_prot, ds->n_folds};
    h = hash_u32s(counts, 4, h);
    h = fs_fnv1a64(ds->aa, ds->n_res, h);
    h = fs_fnv1a64(ds->ss, ds->n_res, h);
    h = hash_u32s(ds->seg_off, ds->n_seg + 1u, h);
    h = hash_u32s(ds->prot_seg, ds->n_prot + 1u, h);
    h = fs_fnv1a64(ds->prot_set, ds->n_prot, h);
    /* Every repeat's folds (one repeat: the bytes hashed before repeats). */
    h = fs_fnv1a64(ds->prot_fold, (size_t)ds->n_prot * (ds->n_repeats > 1 ? ds->n_repeats : 1), h);
    /* Features only where there are any: a data set without them keeps the
     * fingerprint it had before features existed (journals hold it). */
    if (ds->feat_dim && ds->feat) h = hash_features(ds, h);
    /* An 8-state set hashes its class count too (a 3-state one as before). */
    if (fs_classes(ds->classes) == FS_CLASSES8) h = fs_fnv1a64("classes 8", 9, h);
    return h;
}

void data_finish(FsDataset *ds)
{
    if (!ds->left) ds->left = fs_malloc(ds->n_res ? ds->n_res : 1);
    if (!ds->right) ds->right = fs_malloc(ds->n_res ? ds->n_res : 1);
    for (uint32_t s = 0; s < ds->n_seg; s++) {
        uint32_t a = ds->seg_off[s], z = ds->seg_off[s + 1];
        for (uint32_t i = a; i < z; i++) {
            uint32_t l = i - a, r = z - 1 - i;
            ds->left[i] = (uint8_t)(l > 255 ? 255 : l);
            ds->right[i] = (uint8_t)(r > 255 ? 255 : r);
        }
    }
    /* Unknown letters cannot be recovered from the codes: keep them. */
    FsDataStats *st = &ds->stats;
    uint64_t letters[26], other = st->unknown_other;
    memcpy(letters, st->unknown_letters, sizeof letters);
    memset(st, 0, sizeof *st);
    memcpy(st->unknown_letters, letters, sizeof letters);
    st->unknown_other = other;
    st->proteins = ds->n_prot;
    st->segments = ds->n_seg;
    st->residues = ds->n_res;
    for (uint32_t i = 0; i < ds->n_res; i++) {
        if (ds->aa[i] == FS_AA_UNKNOWN) st->unknown++;
        if (FS_SS_SCORED(ds->ss[i])) {
            st->scored++;
            st->label_counts[FS_SS_CLASS(ds->ss[i])]++;
        }
    }
    for (uint32_t p = 0; p < ds->n_prot; p++) st->set_proteins[ds->prot_set[p] & 3]++;
    ds->fingerprint = data_fingerprint(ds);
}
