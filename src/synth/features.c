/*
 * features.c: the synthetic data set's per-residue features (synth.h,
 * "Features"): a noisy indicator of each residue's class in the first
 * columns, noise in the rest, from integer draws only, so the same seed
 * gives the same floats on every machine; and their files (one HDF5 file,
 * or one .npy per protein) through the features module's writers.
 */
#include <stdlib.h>
#include <string.h>

#include "features/features.h"
#include "synth/synth.h"

/* A standard-normal-like draw: the sum of 12 uniform 16-bit integers
 * (Irwin-Hall), centred and scaled by 2^16 (its standard deviation is
 * 2^16 to within 10^-9): an exact integer, converted and divided by a
 * power of two, so no rounding depends on the machine. */
static float noise(FsRng *r)
{
    int64_t s = 0;
    for (int k = 0; k < 3; k++) {
        uint64_t u = fs_rng_u64(r);
        for (int j = 0; j < 4; j++) s += (int64_t)((u >> (16 * j)) & 0xffffu);
    }
    return (float)(s - 6 * 65535) / 65536.0f;
}

float *synth_features(const FsDataset *ds, uint32_t dim, uint64_t seed)
{
    const size_t count = (size_t)ds->n_res * dim;
    float *f = fs_malloc((count ? count : 1) * sizeof *f);
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        FsRng r;
        uint64_t words[3] = {seed, p, 0x73796e6665617473ull /* "synfeats" */};
        fs_rng_seed(&r, words, 3);
        const uint32_t a = ds->seg_off[ds->prot_seg[p]], z = ds->seg_off[ds->prot_seg[p + 1]];
        for (uint32_t i = a; i < z; i++) {
            const uint32_t c = FS_SS_CLASS(ds->ss[i]);
            float *row = f + (size_t)i * dim;
            for (uint32_t j = 0; j < dim; j++) {
                const float signal = j < SYNTH_FEAT_SIGNAL && j == c ? SYNTH_FEAT_LEVEL : 0.0f;
                row[j] = signal + SYNTH_FEAT_NOISE * noise(&r);
            }
        }
    }
    return f;
}

int synth_features_path(const char *out, SynthFeatFormat fmt, char *path, size_t n, FsErr *err)
{
    if ((size_t)snprintf(path, n, "%s.features%s", out, fmt == SYNTH_FEAT_H5 ? ".h5" : "") >= n) {
        fs_err_set(err, "output prefix too long: %s", out);
        return -1;
    }
    return 0;
}

/* One .npy per protein in folder dir. */
static int write_npy(const FsDataset *ds, uint32_t dim, const float *f, const char *dir, FsErr *err)
{
    if (fs_mkdir_p(dir, err)) return -1;
    char path[FS_PATH_IN_DIR];
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        const uint32_t a = ds->seg_off[ds->prot_seg[p]], z = ds->seg_off[ds->prot_seg[p + 1]];
        if ((size_t)snprintf(path, sizeof path, "%s/%s.npy", dir, data_protein_name(ds, p)) >= sizeof path) {
            fs_err_set(err, "output prefix too long: %s", dir);
            return -1;
        }
        if (features_write_npy(path, z - a, dim, f + (size_t)a * dim, err)) return -1;
    }
    return 0;
}

int synth_write_features(const FsDataset *ds, uint32_t dim, uint64_t seed, SynthFeatFormat fmt, const char *path,
                         FsErr *err)
{
    if (dim < 1 || dim > FS_FEAT_MAX_DIM) {
        fs_err_set(err, "synth: --features must be 1 to %u columns, not %u", FS_FEAT_MAX_DIM, dim);
        return -1;
    }
    if (fmt == SYNTH_FEAT_H5 && !features_have_h5()) {
        fs_err_set(err, "--features: %s", FS_FEAT_NO_H5_MSG);
        return -1;
    }
    float *f = synth_features(ds, dim, seed);
    int rc;
    if (fmt == SYNTH_FEAT_NPY) {
        rc = write_npy(ds, dim, f, path, err);
    } else {
        const char **names = fs_malloc(((size_t)ds->n_prot + 1) * sizeof *names);
        uint32_t *rows = fs_malloc(((size_t)ds->n_prot + 1) * sizeof *rows);
        for (uint32_t p = 0; p < ds->n_prot; p++) {
            names[p] = data_protein_name(ds, p);
            rows[p] = ds->seg_off[ds->prot_seg[p + 1]] - ds->seg_off[ds->prot_seg[p]];
        }
        rc = features_write_h5(path, names, ds->n_prot, rows, dim, f, err);
        free(names);
        free(rows);
    }
    free(f);
    return rc;
}
