/*
 * read_h5.c: HDF5 feature files through libhdf5's C API (built where CMake
 * found it: FS_HAVE_HDF5): one dataset per protein, named by the source's
 * template ("{id}" by default), shape (L, D), any floating-point type
 * (read converted to float by the library). A missing dataset is "missing"
 * (zeros or an error, as the source says); one of another rank or an
 * integer or string type is refused. And the writer synth uses: float32
 * datasets without time stamps, so the same content gives the same bytes.
 * Without libhdf5 every entry fails with FS_FEAT_NO_H5_MSG.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "features/reader.h"

#if defined(FS_HAVE_HDF5)

#include <hdf5.h>

struct FeatH5 {
    hid_t file;
    const char *path;
};

int features_have_h5(void) { return 1; }

/* libhdf5 prints its error stack to stderr by default; foldsweep reports
 * its own messages instead. */
static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

FeatH5 *feat_h5_open(const char *path, FsErr *err)
{
    quiet();
    /* Checked first: libhdf5 opens a FIFO and waits for a writer. */
    FILE *f;
    const int rc = feat_file_open(path, "", "an HDF5 file", &f, err), why = errno; /* 0: ENOENT or ENOTDIR */
    if (rc == 0) fs_err_at(err, path, 0, 0, "cannot open the h5 file of data.features: %s", strerror(why));
    if (rc <= 0) return NULL;
    fclose(f);
#if H5_VERSION_GE(1, 12, 0)
    const htri_t is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
    const htri_t is_h5 = H5Fis_hdf5(path);
#endif
    if (is_h5 <= 0) {
        fs_err_at(err, path, 0, 0, "not an HDF5 file");
        return NULL;
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        fs_err_at(err, path, 0, 0, "libhdf5 cannot open it as an HDF5 file");
        return NULL;
    }
    FeatH5 *h = fs_malloc(sizeof *h);
    h->file = file;
    h->path = path;
    return h;
}

void feat_h5_close(FeatH5 *h)
{
    if (!h) return;
    H5Fclose(h->file);
    free(h);
}

/* Whether every link along name ("a/b/c") exists: H5Lexists of a path
 * whose group is missing fails rather than answering no. */
static int exists(hid_t file, const char *name)
{
    char part[FS_PATH_MAX];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof part) return 0;
    for (size_t i = 1; i <= n; i++)
        if (i == n || name[i] == '/') {
            memcpy(part, name, i);
            part[i] = '\0';
            if (H5Lexists(file, part, H5P_DEFAULT) <= 0) return 0;
        }
    return H5Oexists_by_name(file, name, H5P_DEFAULT) > 0;
}

/* Opens dataset name and checks it is 2-D floating point: the open id, 0
 * missing, -1 with err. */
static hid_t open_dataset(FeatH5 *h, const char *name, const char *protein, uint64_t *rows, uint64_t *cols,
                          FsErr *err)
{
    if (!exists(h->file, name)) return 0;
    hid_t d = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (d < 0) return fs_err_at(err, h->path, 0, 0, "%s (protein %s) is not a dataset", name, protein), -1;
    hid_t type = H5Dget_type(d), space = H5Dget_space(d);
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[2] = {0, 0};
    if (nd == 2) H5Sget_simple_extent_dims(space, dims, NULL);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    const char *why = cls != H5T_FLOAT ? "its values are not floating point" : nd != 2 ? "it is not 2-D (residues, features)" : NULL;
    if (why) {
        fs_err_at(err, h->path, 0, 0, "dataset %s (protein %s): %s (%d dimensions)", name, protein, why, nd);
        H5Dclose(d);
        return -1;
    }
    *rows = dims[0];
    *cols = dims[1];
    return d;
}

int feat_h5_shape(FeatH5 *h, const char *name, const char *protein, uint64_t *rows, uint64_t *cols, FsErr *err)
{
    hid_t d = open_dataset(h, name, protein, rows, cols, err);
    if (d <= 0) return (int)d;
    H5Dclose(d);
    return 1;
}

int feat_h5_read(FeatH5 *h, const char *name, const FeatTarget *t, float *out, FsErr *err)
{
    uint64_t rows, cols;
    hid_t d = open_dataset(h, name, t->protein, &rows, &cols, err);
    if (d <= 0) return (int)d;
    int rc = 1;
    if (rows != t->n || cols != t->dim) {
        fs_err_at(err, h->path, 0, 0,
                  "dataset %s (protein %s): shape (%llu, %llu), expected (%u, %u): the protein has %u residues in the "
                  "data set, and the source's first dataset %u columns",
                  name, t->protein, (unsigned long long)rows, (unsigned long long)cols, t->n, t->dim, t->n, t->dim);
        rc = -1;
    } else if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        fs_err_at(err, h->path, 0, 0, "dataset %s (protein %s): libhdf5 cannot read it", name, t->protein);
        rc = -1;
    }
    H5Dclose(d);
    return rc;
}

/* One float32 dataset, without time stamps. 0 or -1. */
static int write_dataset(hid_t file, hid_t dcpl, const char *name, uint32_t rows, uint32_t dim, const float *data)
{
    hsize_t dims[2] = {rows, dim};
    hid_t space = H5Screate_simple(2, dims, NULL);
    if (space < 0) return -1;
    hid_t d = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ? -1 : 0;
    if (d >= 0) H5Dclose(d);
    H5Sclose(space);
    return rc;
}

int features_write_h5(const char *path, const char *const *names, uint32_t n, const uint32_t *rows, uint32_t dim,
                      const float *data, FsErr *err)
{
    quiet();
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(fcpl, 0); /* the root group's */
    H5Pset_obj_track_times(dcpl, 0);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    int rc = file < 0 ? -1 : 0;
    const float *p = data;
    for (uint32_t i = 0; i < n && !rc; p += (size_t)rows[i++] * dim)
        if (write_dataset(file, dcpl, names[i], rows[i], dim, p)) {
            fs_err_at(err, path, 0, 0, "cannot write dataset %s", names[i]);
            rc = -2;
        }
    if (file >= 0 && H5Fclose(file) < 0 && !rc) rc = -1;
    H5Pclose(fcpl);
    H5Pclose(dcpl);
    if (rc == -1) fs_err_at(err, path, 0, 0, "cannot write the HDF5 file");
    return rc ? -1 : 0;
}

#else /* without libhdf5 */

struct FeatH5 {
    int unused;
};

int features_have_h5(void) { return 0; }

FeatH5 *feat_h5_open(const char *path, FsErr *err)
{
    fs_err_set(err, "%s (%s)", FS_FEAT_NO_H5_MSG, path);
    return NULL;
}

void feat_h5_close(FeatH5 *h) { (void)h; }

int feat_h5_shape(FeatH5 *h, const char *name, const char *protein, uint64_t *rows, uint64_t *cols, FsErr *err)
{
    fs_err_set(err, "%s", FS_FEAT_NO_H5_MSG);
    return -1;
}

int feat_h5_read(FeatH5 *h, const char *name, const FeatTarget *t, float *out, FsErr *err)
{
    fs_err_set(err, "%s", FS_FEAT_NO_H5_MSG);
    return -1;
}

int features_write_h5(const char *path, const char *const *names, uint32_t n, const uint32_t *rows, uint32_t dim,
                      const float *data, FsErr *err)
{
    fs_err_set(err, "%s (writing %s)", FS_FEAT_NO_H5_MSG, path);
    return -1;
}

#endif
