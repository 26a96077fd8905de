/*
 * read_npy.c: NumPy's .npy files (format 1.0 and 2.0), one per protein:
 *
 *   "\x93NUMPY", major (1 or 2), minor (0), the header's length (u16 for
 *   1.0, u32 for 2.0, little-endian), the header: a Python dict literal
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (L, D), } padded
 *   with blanks and a newline; then L x D values in C order.
 *
 * Accepted: descr '<f4' (float32) or '<f2' (float16), fortran_order False,
 * a 2-D shape (L, D) with L the protein's residues and D 1..FS_FEAT_MAX_DIM;
 * the file's size must be exactly header + L x D values. Anything else is
 * refused, naming what it found. The header is at most NPY_HEADER_MAX
 * bytes (NumPy writes under 200) and is read before anything it sizes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "features/reader.h"

#define NPY_HEADER_MAX 65536u

typedef struct {
    uint32_t offset; /* of the data */
    int item;        /* 2 or 4 bytes */
    uint64_t shape[2];
} NpyHeader;

/* Skips blanks in [*p, end). */
static void blanks(const char **p, const char *end)
{
    while (*p < end && (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')) (*p)++;
}

/* A quoted Python string into out (at most n-1 chars). 0 or -1. */
static int py_string(const char **p, const char *end, char *out, size_t n)
{
    blanks(p, end);
    if (*p >= end || (**p != '\'' && **p != '"')) return -1;
    char q = *(*p)++;
    size_t k = 0;
    while (*p < end && **p != q) {
        if (k + 1 >= n) return -1;
        out[k++] = *(*p)++;
    }
    if (*p >= end) return -1;
    (*p)++;
    out[k] = '\0';
    return 0;
}

/* A shape tuple "(a, b)", "(a,)" or "()": its dims (at most 3 read). */
static int py_shape(const char **p, const char *end, uint64_t *dims, int *nd)
{
    blanks(p, end);
    if (*p >= end || **p != '(') return -1;
    (*p)++;
    *nd = 0;
    for (;;) {
        blanks(p, end);
        if (*p < end && **p == ')') return (*p)++, 0;
        uint64_t v = 0;
        int digits = 0;
        while (*p < end && **p >= '0' && **p <= '9' && digits < 12) v = v * 10 + (uint64_t)(*(*p)++ - '0'), digits++;
        if (!digits || *nd == 3) return -1;
        dims[(*nd)++] = v;
        blanks(p, end);
        if (*p < end && **p == ',') (*p)++;
        else if (*p >= end || **p != ')') return -1;
    }
}

/* The dict's three entries into descr, fortran and the shape. NULL, or what is wrong. */
static const char *py_dict(const char *s, const char *end, char *descr, size_t dn, int *fortran, uint64_t *dims,
                           int *nd)
{
    const char *p = s;
    int seen = 0;
    blanks(&p, end);
    if (p >= end || *p++ != '{') return "the header is not a dict ('{')";
    for (;;) {
        char key[32];
        blanks(&p, end);
        if (p < end && *p == '}') break;
        if (py_string(&p, end, key, sizeof key)) return "expected a quoted key in the header";
        blanks(&p, end);
        if (p >= end || *p++ != ':') return "expected ':' after a key in the header";
        blanks(&p, end);
        if (!strcmp(key, "descr")) {
            if (py_string(&p, end, descr, dn)) return "descr is not a plain type string (a structured dtype?)";
            seen |= 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (end - p >= 4 && !memcmp(p, "True", 4)) *fortran = 1, p += 4;
            else if (end - p >= 5 && !memcmp(p, "False", 5)) *fortran = 0, p += 5;
            else return "fortran_order is neither True nor False";
            seen |= 2;
        } else if (!strcmp(key, "shape")) {
            if (py_shape(&p, end, dims, nd)) return "shape is not a tuple of integers";
            seen |= 4;
        } else {
            return "unexpected key in the header (expected descr, fortran_order and shape)";
        }
        blanks(&p, end);
        if (p < end && *p == ',') p++;
    }
    return seen == 7 ? NULL : "the header lacks descr, fortran_order or shape";
}

/* The file's header from its first bytes (pre: n bytes read, n <= 10 +
 * NPY_HEADER_MAX). 0, or -1 with err. */
static int parse_header(const char *path, const char *who, const uint8_t *b, size_t n, NpyHeader *h, FsErr *err)
{
    if (n < 10 || memcmp(b, "\x93NUMPY", 6)) return fs_err_at(err, path, 0, 0, "%snot a NumPy .npy file (no \\x93NUMPY magic)", who), -1;
    if ((b[6] != 1 && b[6] != 2) || b[7] != 0)
        return fs_err_at(err, path, 0, 0, "%s.npy format %u.%u; this build reads 1.0 and 2.0", who, b[6], b[7]), -1;
    const uint32_t pre = b[6] == 1 ? 10 : 12;
    const uint32_t hl = b[6] == 1 ? (uint32_t)(b[8] | b[9] << 8)
                                  : (n < 12 ? 0 : (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24);
    if (hl == 0 || hl > NPY_HEADER_MAX) return fs_err_at(err, path, 0, 0, "%s.npy header of %u bytes; expected 1 to %u", who, hl, NPY_HEADER_MAX), -1;
    if (pre + hl > n) return fs_err_at(err, path, 0, 0, "%struncated .npy file: the header says %u bytes, the file is shorter", who, hl), -1;
    char descr[32];
    int fortran = 0, nd = 0;
    const char *why = py_dict((const char *)b + pre, (const char *)b + pre + hl, descr, sizeof descr, &fortran, h->shape, &nd);
    if (why) return fs_err_at(err, path, 0, 0, "%s.npy header: %s", who, why), -1;
    if (strcmp(descr, "<f4") && strcmp(descr, "<f2"))
        return fs_err_at(err, path, 0, 0, "%s.npy dtype '%s'; expected '<f4' (float32) or '<f2' (float16), little-endian", who, descr), -1;
    if (fortran) return fs_err_at(err, path, 0, 0, "%s.npy array in Fortran order; expected C order (fortran_order False)", who), -1;
    if (nd != 2) return fs_err_at(err, path, 0, 0, "%s.npy array of %d dimensions; expected 2, (residues, features)", who, nd), -1;
    if (h->shape[1] < 1 || h->shape[1] > FS_FEAT_MAX_DIM)
        return fs_err_at(err, path, 0, 0, "%s.npy shape (%llu, %llu): expected 1 to %u feature columns", who, (unsigned long long)h->shape[0],
                         (unsigned long long)h->shape[1], FS_FEAT_MAX_DIM), -1;
    h->offset = pre + hl;
    h->item = descr[2] == '4' ? 4 : 2;
    return 0;
}

/* Opens path and reads its header. 1 with f open, 0 missing, -1 with err
 * (naming protein, which may be NULL). */
static int open_npy(const char *path, const char *protein, FILE **f, NpyHeader *h, FsErr *err)
{
    char who[300] = "";
    if (protein) snprintf(who, sizeof who, "protein %.256s: ", protein);
    int rc = feat_file_open(path, who, "a NumPy .npy file", f, err);
    if (rc <= 0) return rc;
    uint8_t *b = fs_malloc(12 + NPY_HEADER_MAX);
    size_t got = fread(b, 1, 12 + NPY_HEADER_MAX, *f);
    rc = parse_header(path, who, b, got, h, err);
    free(b);
    struct stat st;
    if (!rc && fstat(fileno(*f), &st) != 0) {
        fs_err_at(err, path, 0, 0, "%scannot read: %s", who, strerror(errno));
        rc = -1;
    }
    /* shape[1] <= FS_FEAT_MAX_DIM; shape[0] has at most 12 digits: no wrap. */
    const uint64_t want = rc ? 0 : h->offset + h->shape[0] * h->shape[1] * (uint64_t)h->item;
    if (!rc && (uint64_t)st.st_size != want) {
        fs_err_at(err, path, 0, 0, "%s%s .npy file: %llu bytes, its header (shape (%llu, %llu)) says %llu", who,
                  (uint64_t)st.st_size < want ? "truncated" : "corrupt", (unsigned long long)st.st_size,
                  (unsigned long long)h->shape[0], (unsigned long long)h->shape[1], (unsigned long long)want);
        rc = -1;
    }
    if (rc) fclose(*f), *f = NULL;
    return rc ? -1 : 1;
}

int feat_npy_cols(const char *path, const char *protein, uint32_t *cols, FsErr *err)
{
    FILE *f;
    NpyHeader h;
    int rc = open_npy(path, protein, &f, &h, err);
    if (rc > 0) *cols = (uint32_t)h.shape[1], fclose(f);
    return rc;
}

int feat_read_npy(const FeatTarget *t, float *out, FsErr *err)
{
    FILE *f;
    NpyHeader h;
    int rc = open_npy(t->path, t->protein, &f, &h, err);
    if (rc <= 0) return rc;
    if (h.shape[0] != t->n || h.shape[1] != t->dim) {
        fs_err_at(err, t->path, 0, 0,
                  "protein %s: shape (%llu, %llu), expected (%u, %u): the protein has %u residues in the data set, "
                  "and the source's first file %u columns",
                  t->protein, (unsigned long long)h.shape[0], (unsigned long long)h.shape[1], t->n, t->dim, t->n, t->dim);
        fclose(f);
        return -1;
    }
    const size_t count = (size_t)t->n * t->dim;
    uint8_t *b = fs_malloc(count * (size_t)h.item);
    int ok = fseek(f, (long)h.offset, SEEK_SET) == 0 && fread(b, (size_t)h.item, count, f) == count;
    fclose(f);
    if (!ok) {
        fs_err_at(err, t->path, 0, 0, "read error");
        free(b);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        const uint8_t *q = b + i * (size_t)h.item;
        out[i] = h.item == 4 ? util_bits_float((uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24)
                             : util_float_from_half((uint16_t)(q[0] | q[1] << 8));
    }
    free(b);
    return 1;
}

int features_write_npy(const char *path, uint32_t rows, uint32_t dim, const float *data, FsErr *err)
{
    char dict[128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%u, %u), }", rows, dim);
    /* NumPy pads the header with blanks to a multiple of 64 bytes, ending in '\n'. */
    const size_t hl = ((10 + (size_t)dl + 1 + 63) / 64) * 64 - 10, count = (size_t)rows * dim;
    uint8_t *b = fs_malloc(10 + hl + 4 * count);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)hl, b[9] = (uint8_t)(hl >> 8);
    memset(b + 10, ' ', hl);
    memcpy(b + 10, dict, (size_t)dl);
    b[10 + hl - 1] = '\n';
    for (size_t i = 0; i < count; i++) {
        uint32_t v = util_float_bits(data[i]);
        for (int k = 0; k < 4; k++) b[10 + hl + 4 * i + (size_t)k] = (uint8_t)(v >> (8 * k));
    }
    int rc = fs_write_file_atomic(path, b, 10 + hl + 4 * count, err);
    free(b);
    return rc;
}
