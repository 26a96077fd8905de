/*
 * prepared.c: the prepared fold file, what `prepare` writes and every run
 * loads in one read (rank 0 reads, then broadcasts the same bytes).
 *
 * Layout, all integers little-endian whatever the machine:
 *   0   magic "\x89FSPREP\n" (the high byte and newline catch text-mode mangling)
 *   8   u32 version (with bit 0x100 for an 8-state set), u32 header bytes
 *   16  u64 total file bytes
 *   24  u32 n_res, n_seg, n_prot, n_folds
 *   40  u64 fold seed, u64 name bytes, u64 fingerprint
 *   64  u64 unknown letter counts [26] and unknown other
 *   280 (version 2 only: repeated k-fold) u32 repeats r >= 2, u32 folds per
 *       repeat k, with n_folds = k x r; version 1 is one repeat of n_folds
 *   288 (version 3 only: per-residue features) u32 feature columns D
 *       (1..FS_FEAT_MAX_DIM), u32 storage (0 float, 1 IEEE binary16); its
 *       repeats field may be 1 (one repeat, k = n_folds)
 *   280, 288 or 296: aa[n_res], ss[n_res], prot_set[n_prot], prot_fold[r][n_prot],
 *       u32 seg_off[n_seg+1], prot_seg[n_prot+1], name_off[n_prot+1], names
 *       (version 3: then the features, n_res x D values in residue order,
 *       each a little-endian float (4 bytes) or half (2 bytes))
 *   end u32 CRC-32 of every byte before it
 * left/right and stats are derived on load (data_finish), never stored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data/reader.h"

#define PREP_MAGIC                                                                                 \
    "\x89"                                                                                         \
    "FSPREP\n"
/* Version 1 for one repeat (every file before repeats, byte for byte),
 * version 2 with the repeats' fields. */
#define PREP_VERSION 1u
#define PREP_HEADER 280u
#define PREP_VERSION_REPEATS 2u
#define PREP_HEADER_REPEATS 288u
/* Version 3 only where the data set has features: a file without them is
 * byte for byte what the earlier versions wrote. */
#define PREP_VERSION_FEATURES 3u
#define PREP_HEADER_FEATURES 296u
/* An 8-state set's version has this bit too (its labels are DSSP-8 classes;
 * a 3-state set's file is as before). */
#define PREP_VERSION_CLASSES8 0x100u

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Every count is at most 2^32 and feat_bytes at most 2^32 x 2^15: no sum wraps. */
static uint64_t prep_size(uint64_t header, uint64_t n_res, uint64_t n_seg, uint64_t n_prot, uint64_t repeats,
                          uint64_t names, uint64_t feat_bytes)
{
    return header + 2 * n_res + n_prot * (1 + repeats) + 4 * (n_seg + 1) + 8 * (n_prot + 1) + names +
           feat_bytes + 4;
}

/* The features' bytes in the file: n_res x dim values of 2 or 4 bytes. */
static uint64_t prep_feat_bytes(uint64_t n_res, uint32_t dim, uint32_t half)
{
    return n_res * dim * (half ? 2u : 4u);
}

static uint8_t *put_features(uint8_t *p, const FsDataset *ds)
{
    const size_t n = (size_t)ds->n_res * ds->feat_dim;
    if (ds->feat_half)
        for (size_t i = 0; i < n; i++, p += 2) put16(p, ((const uint16_t *)ds->feat)[i]);
    else
        for (size_t i = 0; i < n; i++, p += 4) put32(p, util_float_bits(((const float *)ds->feat)[i]));
    return p;
}

static void *get_features(const uint8_t **p, uint64_t n_res, uint32_t dim, uint32_t half)
{
    const size_t n = (size_t)(n_res * dim);
    if (half) {
        uint16_t *v = fs_malloc(n ? n * 2 : 1);
        for (size_t i = 0; i < n; i++, *p += 2) v[i] = get16(*p);
        return v;
    }
    float *v = fs_malloc(n ? n * 4 : 1);
    for (size_t i = 0; i < n; i++, *p += 4) v[i] = util_bits_float(get32(*p));
    return v;
}

static uint8_t *put32s(uint8_t *p, const uint32_t *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++, p += 4) put32(p, v[i]);
    return p;
}

int data_serialize(const FsDataset *ds, uint8_t **bytes, uint64_t *n, FsErr *err)
{
    if (!ds->seg_off || !ds->prot_seg || !ds->name_off) {
        fs_err_set(err, "cannot serialize a dataset that was never loaded");
        return -1;
    }
    uint64_t names = ds->n_prot ? ds->name_off[ds->n_prot] : 0;
    const uint32_t reps = ds->n_repeats > 1 ? ds->n_repeats : 1;
    const int feats = ds->feat_dim > 0 && ds->feat;
    if (feats && ds->feat_dim > FS_FEAT_MAX_DIM) {
        fs_err_set(err, "cannot serialize %u feature columns (at most %u)", ds->feat_dim, FS_FEAT_MAX_DIM);
        return -1;
    }
    const uint32_t header = feats ? PREP_HEADER_FEATURES : reps > 1 ? PREP_HEADER_REPEATS : PREP_HEADER;
    const uint32_t version = feats ? PREP_VERSION_FEATURES : reps > 1 ? PREP_VERSION_REPEATS : PREP_VERSION;
    const uint64_t feat_bytes = feats ? prep_feat_bytes(ds->n_res, ds->feat_dim, ds->feat_half) : 0;
    uint64_t total = prep_size(header, ds->n_res, ds->n_seg, ds->n_prot, reps, names, feat_bytes);
    if (total > (uint64_t)SIZE_MAX) {
        fs_err_set(err, "data set too large to serialize (%llu bytes)", (unsigned long long)total);
        return -1;
    }
    uint8_t *b = fs_malloc((size_t)total), *p = b;
    memset(b, 0, header);
    memcpy(b, PREP_MAGIC, 8);
    put32(b + 8, version | (fs_classes(ds->classes) == FS_CLASSES8 ? PREP_VERSION_CLASSES8 : 0u));
    put32(b + 12, header);
    put64(b + 16, total);
    put32(b + 24, ds->n_res);
    put32(b + 28, ds->n_seg);
    put32(b + 32, ds->n_prot);
    put32(b + 36, ds->n_folds);
    put64(b + 40, ds->fold_seed);
    put64(b + 48, names);
    put64(b + 56, data_fingerprint(ds));
    for (int i = 0; i < 26; i++) put64(b + 64 + 8 * i, ds->stats.unknown_letters[i]);
    put64(b + 64 + 8 * 26, ds->stats.unknown_other);
    if (header > PREP_HEADER) /* k: n_folds for one repeat (fold_k may be 0 without folds) */
        put32(b + PREP_HEADER, reps), put32(b + PREP_HEADER + 4, reps > 1 ? ds->fold_k : ds->n_folds);
    if (feats) put32(b + PREP_HEADER_REPEATS, ds->feat_dim), put32(b + PREP_HEADER_REPEATS + 4, ds->feat_half ? 1 : 0);
    p = b + header;
    memcpy(p, ds->aa, ds->n_res), p += ds->n_res;
    memcpy(p, ds->ss, ds->n_res), p += ds->n_res;
    memcpy(p, ds->prot_set, ds->n_prot), p += ds->n_prot;
    memcpy(p, ds->prot_fold, (size_t)ds->n_prot * reps), p += (size_t)ds->n_prot * reps;
    p = put32s(p, ds->seg_off, ds->n_seg + 1ull);
    p = put32s(p, ds->prot_seg, ds->n_prot + 1ull);
    p = put32s(p, ds->name_off, ds->n_prot + 1ull);
    if (names) memcpy(p, ds->names, names), p += names;
    if (feats) p = put_features(p, ds);
    put32(p, fs_crc32(b, (size_t)(total - 4), 0));
    *bytes = b;
    *n = total;
    return 0;
}

static uint32_t *get32s(const uint8_t **p, uint64_t n)
{
    uint32_t *v = fs_malloc((size_t)n * sizeof *v);
    for (uint64_t i = 0; i < n; i++, *p += 4) v[i] = get32(*p);
    return v;
}

static void *copy(const uint8_t **p, uint64_t n)
{
    void *v = fs_malloc((size_t)(n ? n : 1));
    if (n) memcpy(v, *p, (size_t)n);
    *p += n;
    return v;
}

/* Protein p's fold in repeat r is one of the k, or held out: only a
 * SET=test protein is, and then in every repeat. */
static int fold_ok(const FsDataset *ds, uint32_t r, uint32_t p)
{
    const uint32_t f = data_protein_fold(ds, r, p), k = ds->fold_k ? ds->fold_k : 1;
    const int held = data_protein_fold(ds, 0, p) == FS_FOLD_HELD_OUT;
    if (held) return f == FS_FOLD_HELD_OUT && ds->prot_set[p] == FS_SET_TEST;
    return f < k;
}

/* What the checksum cannot promise (a file written by a buggy or hostile
 * writer): offsets in range and ordered, codes valid, names terminated. */
/* names: the name bytes the file holds (its header's count), which bounds
 * every offset: the offsets themselves come from the file. */
static const char *invalid(const FsDataset *ds, uint64_t names)
{
    if (ds->n_prot == 0) return "protein count (no proteins)";
    if (ds->seg_off[0] != 0 || ds->seg_off[ds->n_seg] != ds->n_res) return "segment table";
    for (uint32_t s = 0; s < ds->n_seg; s++)
        if (ds->seg_off[s] >= ds->seg_off[s + 1]) return "segment table";
    if (ds->prot_seg[0] != 0 || ds->prot_seg[ds->n_prot] != ds->n_seg) return "protein table";
    for (uint32_t p = 0; p < ds->n_prot; p++)
        if (ds->prot_seg[p] >= ds->prot_seg[p + 1]) return "protein table";
    for (uint32_t i = 0; i < ds->n_res; i++)
        if (ds->aa[i] > FS_AA_UNKNOWN || (ds->ss[i] & ~(FS_SS_UNSCORED | FS_SS_LABEL(7))) ||
            FS_SS_CLASS(ds->ss[i]) >= fs_classes(ds->classes))
            return "residue codes";
    if (ds->n_folds == 1 || ds->n_folds > FS_MAX_FOLDS || ds->fold_k == 1 ||
        (uint64_t)ds->fold_k * ds->n_repeats != ds->n_folds)
        return "fold count";
    for (uint32_t p = 0; p < ds->n_prot; p++)
        if (ds->prot_set[p] > FS_SET_TEST) return "protein sets";
    for (uint32_t r = 0; r < ds->n_repeats; r++)
        for (uint32_t p = 0; p < ds->n_prot; p++)
            if (!fold_ok(ds, r, p)) return "protein folds";
    if (ds->name_off[0] != 0 || (ds->n_prot && ds->name_off[ds->n_prot] != names)) return "name table";
    for (uint32_t p = 0; p < ds->n_prot; p++)
        if (ds->name_off[p] >= ds->name_off[p + 1] || ds->name_off[p + 1] > names ||
            ds->names[ds->name_off[p + 1] - 1] != '\0')
            return "name table";
    return NULL;
}

/* The envelope: magic, version and header, total size, checksum. Returns
 * the header's size, or 0 with err. */
static uint32_t check_envelope(const uint8_t *b, uint64_t n, const char *origin, FsErr *err)
{
    if (n < 8 ? memcmp(b, PREP_MAGIC, (size_t)n) != 0 || n == 0 : memcmp(b, PREP_MAGIC, 8) != 0) {
        fs_err_at(err, origin, 0, 0, "not a foldsweep prepared file (wrong magic bytes)");
        return 0;
    }
    if (n < 16) {
        fs_err_at(err, origin, 0, 0, "truncated prepared file (%llu bytes)", (unsigned long long)n);
        return 0;
    }
    uint32_t version = get32(b + 8) & ~PREP_VERSION_CLASSES8, header = get32(b + 12);
    if (!(version == PREP_VERSION && header == PREP_HEADER) &&
        !(version == PREP_VERSION_REPEATS && header == PREP_HEADER_REPEATS) &&
        !(version == PREP_VERSION_FEATURES && header == PREP_HEADER_FEATURES)) {
        fs_err_at(err, origin, 0, 0,
                  "prepared file version %u, this build reads %u, %u and %u (run prepare again)", version,
                  PREP_VERSION, PREP_VERSION_REPEATS, PREP_VERSION_FEATURES);
        return 0;
    }
    if (n < header) {
        fs_err_at(err, origin, 0, 0, "truncated prepared file: %llu bytes, shorter than its header",
                  (unsigned long long)n);
        return 0;
    }
    uint64_t total = get64(b + 16);
    if (total != n) {
        if (total > n)
            fs_err_at(err, origin, 0, 0,
                      "truncated prepared file: %llu bytes, the header says %llu",
                      (unsigned long long)n, (unsigned long long)total);
        else
            fs_err_at(err, origin, 0, 0,
                      "prepared file has %llu bytes, the header says %llu: file is corrupt",
                      (unsigned long long)n, (unsigned long long)total);
        return 0;
    }
    if (fs_crc32(b, (size_t)(n - 4), 0) != get32(b + n - 4)) {
        fs_err_at(err, origin, 0, 0, "checksum mismatch: file is corrupt");
        return 0;
    }
    return header;
}

int data_deserialize(FsDataset *ds, const uint8_t *b, uint64_t n, const char *origin, FsErr *err)
{
    memset(ds, 0, sizeof *ds);
    const uint32_t header = check_envelope(b, n, origin, err);
    if (!header) return -1;
    uint32_t n_res = get32(b + 24), n_seg = get32(b + 28), n_prot = get32(b + 32);
    uint64_t names = get64(b + 48);
    /* Repeats and features are read before any size is trusted: they size
     * the folds and the feature matrix. */
    const int has_reps = header >= PREP_HEADER_REPEATS, feats = header == PREP_HEADER_FEATURES;
    const uint32_t n_folds = get32(b + 36), reps = has_reps ? get32(b + PREP_HEADER) : 1,
                   k = has_reps ? get32(b + PREP_HEADER + 4) : n_folds;
    if (reps < 1 || reps > FS_MAX_FOLDS ||
        (has_reps && ((!feats && reps < 2) || (uint64_t)k * reps != n_folds))) {
        fs_err_at(err, origin, 0, 0, "header: %u repeats of %u folds for %u fold ids: file is corrupt", reps, k, n_folds);
        return -1;
    }
    const uint32_t feat_dim = feats ? get32(b + PREP_HEADER_REPEATS) : 0,
                   feat_half = feats ? get32(b + PREP_HEADER_REPEATS + 4) : 0;
    if (feats && (feat_dim < 1 || feat_dim > FS_FEAT_MAX_DIM || feat_half > 1)) {
        fs_err_at(err, origin, 0, 0, "header: %u feature columns stored as %s (expected 1 to %u, float or half): file is corrupt",
                  feat_dim, feat_half == 0 ? "float" : feat_half == 1 ? "half" : "an unknown type", FS_FEAT_MAX_DIM);
        return -1;
    }
    const uint64_t feat_bytes = feats ? prep_feat_bytes(n_res, feat_dim, feat_half) : 0;
    if (names > n || prep_size(header, n_res, n_seg, n_prot, reps, names, feat_bytes) != n || names > UINT32_MAX) {
        fs_err_at(err, origin, 0, 0, "header counts do not match the file size: file is corrupt");
        return -1;
    }
    ds->n_res = n_res;
    ds->n_seg = n_seg;
    ds->n_prot = n_prot;
    ds->n_folds = n_folds;
    ds->fold_k = k;
    ds->n_repeats = reps;
    ds->fold_seed = get64(b + 40);
    ds->classes = get32(b + 8) & PREP_VERSION_CLASSES8 ? FS_CLASSES8 : FS_CLASSES;
    for (int i = 0; i < 26; i++) ds->stats.unknown_letters[i] = get64(b + 64 + 8 * i);
    ds->stats.unknown_other = get64(b + 64 + 8 * 26);
    const uint8_t *p = b + header;
    ds->aa = copy(&p, n_res);
    ds->ss = copy(&p, n_res);
    ds->prot_set = copy(&p, n_prot);
    ds->prot_fold = copy(&p, (uint64_t)n_prot * reps);
    ds->seg_off = get32s(&p, n_seg + 1ull);
    ds->prot_seg = get32s(&p, n_prot + 1ull);
    ds->name_off = get32s(&p, n_prot + 1ull);
    ds->names = copy(&p, names);
    if (feats) {
        ds->feat_dim = feat_dim;
        ds->feat_half = (uint8_t)feat_half;
        ds->feat = get_features(&p, n_res, feat_dim, feat_half);
    }
    const char *bad = invalid(ds, names);
    if (bad) {
        fs_err_at(err, origin, 0, 0, "invalid %s: file is corrupt", bad);
        data_free(ds);
        return -1;
    }
    data_finish(ds);
    if (ds->fingerprint != get64(b + 56)) {
        fs_err_at(err, origin, 0, 0, "fingerprint mismatch: file is corrupt");
        data_free(ds);
        return -1;
    }
    return 0;
}

int data_write_prepared(const FsDataset *ds, const char *path, FsErr *err)
{
    uint8_t *b;
    uint64_t n;
    if (data_serialize(ds, &b, &n, err)) return -1;
    /* Written beside, synced and renamed: a crash never leaves half a file
     * under the name a run would load. */
    int rc = fs_write_file_atomic(path, b, (size_t)n, err);
    free(b);
    return rc;
}

int data_read_prepared(FsDataset *ds, const char *path, FsErr *err)
{
    char *buf;
    size_t n;
    memset(ds, 0, sizeof *ds);
    if (data_file_read(path, &buf, &n, err)) return -1;
    int rc = data_deserialize(ds, (const uint8_t *)buf, n, path, err);
    free(buf);
    return rc;
}
