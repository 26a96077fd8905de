/*
 * features: per-residue input features from files beside the sequences
 * (a sweep's data.features; docs/sweep-format.md): PSI-BLAST PSSMs,
 * HHblits HMMs, NumPy .npy matrices and HDF5 datasets, read for every
 * protein of a loaded data set, checked against it, and stored in its
 * feature matrix (FsDataset.feat, data.h), one row per residue.
 *
 * Readers (one file each; each names file:line and what it expected when
 * a file is malformed, and never sizes memory by a file's say-so beyond
 * the protein's residue count and FS_FEAT_MAX_DIM; each opens only a
 * regular file, without waiting on a FIFO):
 *   read_pssm.c  PSI-BLAST `-out_ascii_pssm`: 20 log-odds columns through
 *                the logistic 1/(1+e^-x) (PSIPRED's input), or the 20
 *                percentage columns / 100
 *   read_hhm.c   HHblits .hhm: the 20 emission columns as 2^(-x/1000)
 *                ('*' is 0), NetSurfP-2.0's transform
 *   read_npy.c   NumPy .npy 1.0 / 2.0: <f4 or <f2, C order, shape (L, D)
 *   read_h5.c    HDF5 (libhdf5, when built with it: FS_HAVE_HDF5): one
 *                dataset per protein, shape (L, D), any float type; and
 *                the writer synth uses
 *
 * features uses data and util; data never uses features (it only holds the
 * matrix and carries it through the prepared file).
 */
#ifndef FS_FEATURES_H
#define FS_FEATURES_H

#include <stdint.h>

#include "data/data.h"
#include "util/util.h"

typedef enum { FS_FEAT_PSSM = 1, FS_FEAT_HHM, FS_FEAT_H5, FS_FEAT_NPY } FsFeatKind;

/* The most sources one data.features list may name (onehot aside). */
#define FS_FEAT_MAX_SOURCES 8
/* FS_FEAT_MAX_DIM, the most columns in all, is util.h's (the prepared
 * file's reader checks it too). */

typedef struct {
    FsFeatKind kind;
    const char *path;    /* DIR (pssm, hhm, npy: DIR/<id>.pssm, .hhm, .npy) or FILE (h5) */
    const char *dataset; /* h5 only: dataset name, "{id}" replaced by the protein id; NULL = "{id}" */
    int pssm_percent;    /* pssm only: 1 = the 20 percentage columns (/100), 0 = the 20 log-odds
                            columns (through the logistic 1/(1+e^-x), as PSIPRED feeds them) */
    int missing_zeros;   /* missing: zeros (a protein without a file gets zero rows), else a
                            missing file is an error */
} FsFeatSource;

typedef enum { FS_FEAT_STORE_AUTO = 0, FS_FEAT_STORE_HALF, FS_FEAT_STORE_FLOAT } FsFeatStore;

/* AUTO stores halves above this many columns in all. */
#define FS_FEAT_AUTO_HALF_ABOVE 64

typedef struct {
    int n;
    FsFeatSource src[FS_FEAT_MAX_SOURCES];
    FsFeatStore store;
} FsFeatSpec;

/* The source kinds' names as a sweep spells them ("pssm", "hhm", "h5",
 * "npy"; "?" for another value) and back (-1 if none), and the storage
 * choices' ("auto", "half", "float"). */
const char *features_kind_name(FsFeatKind k);
int features_kind_parse(const char *s);
const char *features_store_name(FsFeatStore s);
int features_store_parse(const char *s);

/* Reads every source for every protein of ds (its name = data_protein_name;
 * in file names a '/' in the id becomes '_', since CSV sets name proteins
 * FILE/N), checks each protein's rows equal its residue count (all its
 * segments), concatenates the sources' columns in spec order, stores them in
 * ds->feat (half where store is HALF, or AUTO with total D >
 * FS_FEAT_AUTO_HALF_ABOVE), and updates ds->fingerprint. A data set that
 * already holds features has them replaced. spec->n == 0 leaves ds as it is.
 * Every value must be finite and, stored as halves, within a half's range.
 * 0, or -1 with err naming the file (and line where there is one), the
 * protein (a bad value: its row and column) and what was expected; ds is
 * then unchanged. */
int features_load(FsDataset *ds, const FsFeatSpec *spec, FsErr *err);

/* The columns a source contributes (pssm, hhm: 20; h5, npy: from the first
 * protein's file found), or -1 with err. */
int features_source_dim(const FsDataset *ds, const FsFeatSource *src, FsErr *err);

/* The file (pssm, hhm, npy) a source reads for protein id `name` into
 * out[n]: DIR/<id>.<ext>, a '/' in the id as '_'. 0, or -1 with err when
 * the path does not fit. */
int features_file_path(const FsFeatSource *src, const char *name, char *out, size_t n, FsErr *err);

/* Whether this build reads and writes HDF5 (libhdf5 found at build time). */
int features_have_h5(void);
/* The message an h5 source gets in a build without libhdf5. */
#define FS_FEAT_NO_H5_MSG "data.features: h5 sources need foldsweep built with libhdf5 (Debian package libhdf5-dev)"

/* Writes an HDF5 file at path (replacing one there) with one float32
 * dataset per protein: names[i] of shape (rows[i], dim), its rows in
 * data, the proteins one after another (sum(rows) x dim floats in all).
 * 0, or -1 with err naming the path (and FS_FEAT_NO_H5_MSG without libhdf5). */
int features_write_h5(const char *path, const char *const *names, uint32_t n, const uint32_t *rows, uint32_t dim,
                      const float *data, FsErr *err);

/* Writes one .npy file (format 1.0, '<f4', C order) of shape (rows, dim). */
int features_write_npy(const char *path, uint32_t rows, uint32_t dim, const float *data, FsErr *err);

#endif
