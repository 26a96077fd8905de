/*
 * features.c: features_load, the loop over a spec's sources and a data
 * set's proteins: each source's columns (fixed, or from the first file
 * found), each protein's rows from its reader (or zeros where the source
 * says `missing: zeros`), the columns side by side in the data set's
 * feature matrix, stored as floats or halves.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "features/reader.h"

static const char *const kind_names[] = {[FS_FEAT_PSSM] = "pssm", [FS_FEAT_HHM] = "hhm", [FS_FEAT_H5] = "h5",
                                         [FS_FEAT_NPY] = "npy"};
static const char *const store_names[] = {[FS_FEAT_STORE_AUTO] = "auto", [FS_FEAT_STORE_HALF] = "half",
                                          [FS_FEAT_STORE_FLOAT] = "float"};

const char *features_kind_name(FsFeatKind k)
{
    return k >= FS_FEAT_PSSM && k <= FS_FEAT_NPY ? kind_names[k] : "?";
}

int features_kind_parse(const char *s)
{
    for (int k = FS_FEAT_PSSM; k <= FS_FEAT_NPY; k++)
        if (s && !strcmp(s, kind_names[k])) return k;
    return -1;
}

const char *features_store_name(FsFeatStore s)
{
    return s >= FS_FEAT_STORE_AUTO && s <= FS_FEAT_STORE_FLOAT ? store_names[s] : "?";
}

int features_store_parse(const char *s)
{
    for (int k = FS_FEAT_STORE_AUTO; k <= FS_FEAT_STORE_FLOAT; k++)
        if (s && !strcmp(s, store_names[k])) return k;
    return -1;
}

/* The protein id as it appears in a file or dataset name: '/' as '_'. */
static void id_of(const char *name, char *out, size_t n)
{
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++) out[i] = name[i] == '/' ? '_' : name[i];
    out[i] = '\0';
}

int features_file_path(const FsFeatSource *src, const char *name, char *out, size_t n, FsErr *err)
{
    char id[FS_PATH_MAX];
    id_of(name, id, sizeof id);
    const char *ext = src->kind == FS_FEAT_PSSM ? "pssm" : src->kind == FS_FEAT_HHM ? "hhm" : "npy";
    if ((size_t)snprintf(out, n, "%s/%s.%s", src->path, id, ext) >= n) {
        fs_err_set(err, "data.features: the %s file of protein %s would have a path longer than %zu bytes (%s/...)",
                   ext, name, n - 1, src->path);
        return -1;
    }
    return 0;
}

/* An h5 source's dataset name for a protein: the template with every
 * "{id}" replaced by the id ('/' as '_'). */
static int h5_dataset_name(const FsFeatSource *src, const char *name, char *out, size_t n, FsErr *err)
{
    const char *tpl = src->dataset ? src->dataset : "{id}";
    char id[FS_PATH_MAX];
    id_of(name, id, sizeof id);
    size_t k = 0, idn = strlen(id);
    for (const char *p = tpl; *p;) {
        if (!strncmp(p, "{id}", 4)) {
            if (k + idn >= n) goto long_name;
            memcpy(out + k, id, idn), k += idn, p += 4;
        } else {
            if (k + 1 >= n) goto long_name;
            out[k++] = *p++;
        }
    }
    out[k] = '\0';
    return 0;
long_name:
    fs_err_set(err, "data.features: the h5 dataset name of protein %s is longer than %zu bytes", name, n - 1);
    return -1;
}

/* The residues of protein p: [*first, *first + return). */
static uint32_t protein_span(const FsDataset *ds, uint32_t p, uint32_t *first)
{
    *first = ds->seg_off[ds->prot_seg[p]];
    return ds->seg_off[ds->prot_seg[p + 1]] - *first;
}

/* The columns of an npy source: its first file found. */
static int npy_dim(const FsDataset *ds, const FsFeatSource *src, FsErr *err)
{
    char path[FS_PATH_MAX];
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        const char *protein = data_protein_name(ds, p);
        if (features_file_path(src, protein, path, sizeof path, err)) return -1;
        uint32_t cols;
        int rc = feat_npy_cols(path, protein, &cols, err);
        if (rc < 0) return -1;
        if (rc > 0) return (int)cols;
    }
    fs_err_set(err, "data.features: npy source %s: no protein has a file there (looked for %s)", src->path, path);
    return -1;
}

/* The columns of an h5 source: its first protein's dataset found. */
static int h5_dim(const FsDataset *ds, const FsFeatSource *src, FeatH5 *h, FsErr *err)
{
    char name[FS_PATH_MAX];
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        const char *protein = data_protein_name(ds, p);
        if (h5_dataset_name(src, protein, name, sizeof name, err)) return -1;
        uint64_t rows, cols;
        int rc = feat_h5_shape(h, name, protein, &rows, &cols, err);
        if (rc < 0) return -1;
        if (rc > 0) {
            if (cols < 1 || cols > FS_FEAT_MAX_DIM) {
                fs_err_at(err, src->path, 0, 0, "dataset %s (protein %s) has %llu columns; expected 1 to %u", name,
                          protein, (unsigned long long)cols, FS_FEAT_MAX_DIM);
                return -1;
            }
            return (int)cols;
        }
    }
    fs_err_at(err, src->path, 0, 0, "data.features: no protein has a dataset here (the last looked for: %s)", name);
    return -1;
}

int features_source_dim(const FsDataset *ds, const FsFeatSource *src, FsErr *err)
{
    switch (src->kind) {
    case FS_FEAT_PSSM:
    case FS_FEAT_HHM: return FS_AA_STANDARD;
    case FS_FEAT_NPY: return npy_dim(ds, src, err);
    case FS_FEAT_H5: {
        FeatH5 *h = feat_h5_open(src->path, err);
        if (!h) return -1;
        int d = h5_dim(ds, src, h, err);
        feat_h5_close(h);
        return d;
    }
    }
    fs_err_set(err, "data.features: unknown source kind %d", (int)src->kind);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Loading.                                                                */

typedef struct {
    FsDataset *ds;
    void *feat;      /* the new matrix [n_res][dim] */
    uint32_t dim;    /* columns in all */
    int half;        /* stored as halves */
    int store_auto;  /* half by data.feature_store: auto (its width), not asked for */
    float *rows;     /* one protein's rows of one source */
} Loader;

/* A value a feature matrix cannot hold (issue #43: a NaN in an npy file
 * made every trial diverge and every prediction H): row r, column c of the
 * file t read (h5: of its dataset), named with the protein. */
static int bad_value(const Loader *ld, const FeatTarget *t, const char *dataset, size_t i, uint32_t d, FsErr *err)
{
    const float v = ld->rows[i];
    const size_t r = i / d, c = i % d;
    char who[FS_PATH_MAX + 300];
    if (dataset) snprintf(who, sizeof who, "dataset %s (protein %s)", dataset, t->protein);
    else snprintf(who, sizeof who, "protein %s", t->protein);
    if (!isfinite(v))
        fs_err_at(err, t->path, 0, 0, "%s: row %zu, column %zu (index [%zu, %zu]) is %s; features must be finite numbers",
                  who, r + 1, c + 1, r, c, isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
    else if (ld->store_auto)
        fs_err_at(err, t->path, 0, 0,
                  "%s: row %zu, column %zu (index [%zu, %zu]) is %g, beyond a half's range (+-65504): features "
                  "are stored as halves above %d columns in all (data.feature_store: auto, %u here); "
                  "data.feature_store: float keeps them as floats",
                  who, r + 1, c + 1, r, c, (double)v, FS_FEAT_AUTO_HALF_ABOVE, ld->dim);
    else
        fs_err_at(err, t->path, 0, 0,
                  "%s: row %zu, column %zu (index [%zu, %zu]) is %g, beyond a half's range (+-65504) "
                  "(data.feature_store: half); data.feature_store: float keeps it as a float",
                  who, r + 1, c + 1, r, c, (double)v);
    return -1;
}

/* Protein t's rows of a source (rows [n][d]) into columns col.. of the
 * matrix (first: its first residue): every value finite, and as a half
 * (where stored so) not infinite. 0, or -1 with err (bad_value). */
static int store_rows(Loader *ld, const FeatTarget *t, const char *dataset, uint32_t first, uint32_t col, FsErr *err)
{
    const uint32_t d = t->dim;
    for (uint32_t r = 0; r < t->n; r++) {
        const float *v = ld->rows + (size_t)r * d;
        const size_t o = ((size_t)first + r) * ld->dim + col;
        for (uint32_t j = 0; j < d; j++) {
            if (!isfinite(v[j])) return bad_value(ld, t, dataset, (size_t)r * d + j, d, err);
            if (!ld->half) continue;
            const uint16_t h = util_half_from_float(v[j]);
            if ((h & 0x7c00u) == 0x7c00u) /* rounds to 65520 or more */
                return bad_value(ld, t, dataset, (size_t)r * d + j, d, err);
            ((uint16_t *)ld->feat)[o + j] = h;
        }
        if (!ld->half) memcpy((float *)ld->feat + o, v, (size_t)d * sizeof *v);
    }
    return 0;
}

/* A missing file or dataset: zeros (already there) or an error. */
static int missing(const FsFeatSource *src, const char *where, const char *protein, FsErr *err)
{
    if (src->missing_zeros) return 0;
    if (src->kind == FS_FEAT_H5)
        fs_err_at(err, src->path, 0, 0,
                  "no dataset %s for protein %s (data.features' h5 source; `missing: zeros` gives a protein "
                  "without one zero features)",
                  where, protein);
    else
        fs_err_at(err, where, 0, 0,
                  "no such file: the %s file of protein %s (data.features' %s source; `missing: zeros` gives a "
                  "protein without one zero features)",
                  features_kind_name(src->kind), protein, features_kind_name(src->kind));
    return -1;
}

/* Every protein's rows of source src (d columns at column col). */
static int load_source(Loader *ld, const FsFeatSource *src, uint32_t col, uint32_t d, FsErr *err)
{
    const FsDataset *ds = ld->ds;
    FeatH5 *h5 = NULL;
    if (src->kind == FS_FEAT_H5 && !(h5 = feat_h5_open(src->path, err))) return -1;
    char path[FS_PATH_MAX];
    int rc = 0;
    for (uint32_t p = 0; p < ds->n_prot && rc >= 0; p++) {
        const char *name = data_protein_name(ds, p);
        uint32_t first, n = protein_span(ds, p, &first);
        FeatTarget t = {.src = src, .path = path, .protein = name, .aa = ds->aa + first, .n = n, .dim = d};
        if (h5) {
            if (h5_dataset_name(src, name, path, sizeof path, err)) rc = -1;
            else {
                t.path = src->path;
                rc = feat_h5_read(h5, path, &t, ld->rows, err);
            }
        } else if (features_file_path(src, name, path, sizeof path, err)) {
            rc = -1;
        } else {
            rc = src->kind == FS_FEAT_PSSM  ? feat_read_pssm(&t, ld->rows, err)
                 : src->kind == FS_FEAT_HHM ? feat_read_hhm(&t, ld->rows, err)
                                            : feat_read_npy(&t, ld->rows, err);
        }
        if (rc > 0) rc = store_rows(ld, &t, h5 ? path : NULL, first, col, err) ? -1 : 1;
        else if (rc == 0) rc = missing(src, path, name, err);
    }
    feat_h5_close(h5);
    return rc < 0 ? -1 : 0;
}

/* A pssm, hhm or npy source's path is a folder of per-protein files: a
 * file or a missing folder there would read as every protein's file
 * missing (zeros, with `missing: zeros`). 0, or -1 with err. */
static int check_folder(const FsFeatSource *src, FsErr *err)
{
    struct stat st;
    if (src->kind == FS_FEAT_H5) return 0;
    const int bad = stat(src->path, &st) != 0 ? errno : 0;
    if (!bad && S_ISDIR(st.st_mode)) return 0;
    const char *kind = features_kind_name(src->kind);
    fs_err_at(err, src->path, 0, 0, "%s source: %s; expected a folder of <id>.%s files", kind,
              bad ? strerror(bad) : "not a folder", kind);
    return -1;
}

/* Each source's columns (dims[]), checked; the total, or -1 with err. */
static int64_t spec_dims(const FsDataset *ds, const FsFeatSpec *spec, uint32_t *dims, FsErr *err)
{
    int64_t total = 0;
    if (spec->n < 0 || spec->n > FS_FEAT_MAX_SOURCES) {
        fs_err_set(err, "data.features: %d sources; at most %d", spec->n, FS_FEAT_MAX_SOURCES);
        return -1;
    }
    if (spec->store < FS_FEAT_STORE_AUTO || spec->store > FS_FEAT_STORE_FLOAT) {
        fs_err_set(err, "data.feature_store: unknown value %d", (int)spec->store);
        return -1;
    }
    for (int s = 0; s < spec->n; s++) {
        const FsFeatSource *src = &spec->src[s];
        if (!src->path || !*src->path) {
            fs_err_set(err, "data.features: source %d (%s) names no path", s + 1, features_kind_name(src->kind));
            return -1;
        }
        int d = check_folder(src, err) ? -1 : features_source_dim(ds, src, err);
        if (d < 0) return -1;
        dims[s] = (uint32_t)d;
        total += d;
        if (total > FS_FEAT_MAX_DIM) {
            fs_err_set(err, "data.features: %lld columns in all with source %d (%s %s); at most %u",
                       (long long)total, s + 1, features_kind_name(src->kind), src->path, FS_FEAT_MAX_DIM);
            return -1;
        }
    }
    return total;
}

int features_load(FsDataset *ds, const FsFeatSpec *spec, FsErr *err)
{
    uint32_t dims[FS_FEAT_MAX_SOURCES];
    if (spec->n == 0) return 0;
    if (!ds->seg_off || !ds->prot_seg || ds->n_prot == 0) {
        fs_err_set(err, "data.features: no proteins to read features for");
        return -1;
    }
    int64_t total = spec_dims(ds, spec, dims, err);
    if (total < 0) return -1;
    uint32_t longest = 0;
    for (uint32_t p = 0, first; p < ds->n_prot; p++) {
        uint32_t n = protein_span(ds, p, &first);
        if (n > longest) longest = n;
    }
    uint32_t widest = 0;
    for (int s = 0; s < spec->n; s++)
        if (dims[s] > widest) widest = dims[s];
    Loader ld = {.ds = ds, .dim = (uint32_t)total};
    ld.store_auto = spec->store == FS_FEAT_STORE_AUTO;
    ld.half = spec->store == FS_FEAT_STORE_HALF || (ld.store_auto && total > FS_FEAT_AUTO_HALF_ABOVE);
    ld.feat = fs_calloc((size_t)ds->n_res * ld.dim, ld.half ? 2 : 4); /* zeros: missing rows */
    ld.rows = fs_malloc((size_t)longest * widest * sizeof *ld.rows);
    uint32_t col = 0;
    int rc = 0;
    for (int s = 0; s < spec->n && !rc; col += dims[s++]) rc = load_source(&ld, &spec->src[s], col, dims[s], err);
    free(ld.rows);
    if (rc) {
        free(ld.feat);
        return -1;
    }
    free(ds->feat);
    ds->feat = ld.feat;
    ds->feat_dim = ld.dim;
    ds->feat_half = (uint8_t)ld.half;
    ds->fingerprint = data_fingerprint(ds);
    return 0;
}
