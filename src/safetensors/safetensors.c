/*
 * safetensors.c: reading and writing the safetensors format (see the
 * header). The reader is fed damaged and hostile files, so every field is
 * checked before it is used and every size is overflow-checked; the JSON
 * header is read by header.c without a JSON document (its memory is
 * bounded by the header's length, itself at most FS_ST_MAX_HEADER). The writer is deterministic: the same tensors and
 * metadata give the same bytes.
 */
#define _GNU_SOURCE
#include "safetensors/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json.h"
#include "safetensors/header.h"

int st_bad(FsErr *err, const char *origin, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fs_err_set(err, "%s: safetensors header: %s", origin, msg);
    return -1;
}

/* Offset of the first byte that is not valid UTF-8 (overlong forms,
 * surrogates and code points past U+10FFFF included), or -1. The spec
 * requires UTF-8 and the JSON reader passes raw bytes through. */
static long utf8_invalid_at(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i], k, min;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07, min = 0x10000;
        else return (long)i;
        if (n - i <= k) return (long)i;
        for (unsigned j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return (long)i;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return (long)i;
        i += k + 1;
    }
    return -1;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A name that occurs twice among n names found `stride` bytes apart from
 * *first (a field of an array of structs), or NULL. Sorting keeps a
 * hostile header of a million names from taking quadratic time. */
static const char *find_duplicate(const char *const *first, int n, size_t stride)
{
    const char **s = fs_malloc(sizeof *s * ((size_t)n + 1));
    for (int i = 0; i < n; i++) s[i] = *(const char *const *)((const char *)first + (size_t)i * stride);
    qsort(s, (size_t)n, sizeof *s, cmp_str_ptr);
    const char *dup = NULL;
    for (int i = 1; i < n && !dup; i++)
        if (!strcmp(s[i - 1], s[i])) dup = s[i];
    free(s);
    return dup;
}

/* By begin offset; end and name break ties (empty tensors share offsets)
 * so that the order does not depend on qsort. */
static int cmp_tensor(const void *a, const void *b)
{
    const FsTensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The 8-byte header length of a file of `size` bytes, checked before
 * anything else is read or allocated: at most FS_ST_MAX_HEADER, and inside
 * the file. */
static int header_length(const uint8_t *b8, uint64_t size, uint64_t *hlen, const char *origin, FsErr *err)
{
    uint64_t h = 0;
    if (size < 8)
        return st_bad(err, origin, "file is %" PRIu64 " bytes, shorter than the 8-byte header length", size);
    for (int i = 7; i >= 0; i--) h = (h << 8) | b8[i];
    if (h > FS_ST_MAX_HEADER)
        return st_bad(err, origin, "header length %" PRIu64 " exceeds the limit of %u bytes for a header", h,
                      FS_ST_MAX_HEADER);
    if (h > size - 8)
        return st_bad(err, origin, "header length %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes after it)",
                      h, size - 8);
    *hlen = h;
    return 0;
}

/* Sorted, each tensor must start where the previous one ended: the spec
 * wants the buffer fully indexed, without holes or overlaps. */
static int check_coverage(const FsSafetensors *st, uint64_t data_len, const char *origin, FsErr *err)
{
    uint64_t pos = 0;
    for (int i = 0; i < st->n_tensors; i++) {
        const FsTensor *t = &st->tensors[i];
        if (t->begin < pos)
            return st_bad(err, origin, "tensors '%.80s' and '%.80s' overlap (data_offsets begin %" PRIu64
                          " before %" PRIu64 ")", st->tensors[i - 1].name, t->name, t->begin, pos);
        if (t->begin > pos)
            return st_bad(err, origin,
                          "data bytes [%" PRIu64 ", %" PRIu64 ") are not covered by any tensor (before '%.80s')", pos,
                          t->begin, t->name);
        pos = t->end;
    }
    if (pos != data_len)
        return st_bad(err, origin, "data bytes [%" PRIu64 ", %" PRIu64 ") at the end are not covered by any tensor",
                      pos, data_len);
    return 0;
}

/* The header of a file of st->n_bytes bytes, of which st->bytes holds at
 * least the first 8 + header length: the data section is not read here. */
static int parse_header(FsSafetensors *st, const char *origin, FsErr *err)
{
    uint64_t n = st->n_bytes, hlen = 0;
    if (header_length(st->bytes, n, &hlen, origin, err)) return -1;
    st->header_len = hlen;
    const char *text = (const char *)st->bytes + 8;
    if (hlen == 0 || text[0] != '{') return st_bad(err, origin, "the JSON must begin with '{'");
    long at = utf8_invalid_at(st->bytes + 8, hlen);
    if (at >= 0) return st_bad(err, origin, "not valid UTF-8 at byte %ld of the JSON", at + 1);
    uint64_t data_len = n - 8 - hlen;
    if (st_header_scan(st, text, (size_t)hlen, data_len, origin, err)) return -1;
    const char *dup = st->n_meta ? find_duplicate(&st->meta[0].key, st->n_meta, sizeof *st->meta) : NULL;
    if (dup) return st_bad(err, origin, "duplicate metadata key '%.80s'", dup);
    dup = st->n_tensors ? find_duplicate(&st->tensors[0].name, st->n_tensors, sizeof *st->tensors) : NULL;
    if (dup) return st_bad(err, origin, "duplicate tensor name '%.80s'", dup);
    if (st->n_tensors) qsort(st->tensors, (size_t)st->n_tensors, sizeof *st->tensors, cmp_tensor);
    return check_coverage(st, data_len, origin, err);
}

/* Points each tensor at its bytes, once the whole file is in st->bytes. */
static void link_data(FsSafetensors *st)
{
    for (int i = 0; i < st->n_tensors; i++)
        st->tensors[i].data = st->bytes + 8 + st->header_len + st->tensors[i].begin;
}

int safetensors_parse(FsSafetensors *st, uint8_t *bytes, uint64_t n, const char *origin, FsErr *err)
{
    memset(st, 0, sizeof *st);
    st->bytes = bytes;
    st->n_bytes = n;
    int rc = parse_header(st, origin, err);
    if (rc == 0) link_data(st);
    else safetensors_free(st);
    return rc;
}

int safetensors_open(const char *path, uint64_t *size, FsErr *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fs_err_set(err, "%s: cannot open: %s", path, strerror(errno)), -1;
    struct stat sb;
    int rc = fstat(fd, &sb);
    if (rc != 0 || !S_ISREG(sb.st_mode)) {
        fs_err_set(err, "%s: cannot read: %s", path,
                   rc != 0 ? strerror(errno) : "not a regular file (expected a .safetensors model file)");
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *size = (uint64_t)sb.st_size;
    return fd;
}

int safetensors_read_at(int fd, uint8_t *buf, uint64_t n, uint64_t off, const char *path, FsErr *err)
{
    for (uint64_t got = 0; got < n;) {
        size_t want = n - got > (1u << 30) ? (1u << 30) : (size_t)(n - got);
        ssize_t r = pread(fd, buf + got, want, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return fs_err_set(err, "%s: cannot read: %s", path, r < 0 ? strerror(errno) : "file shrank while reading"),
                   -1;
        got += (uint64_t)r;
    }
    return 0;
}

/* The header first (its length checked against the file's size before
 * anything else is read), the data only once the header describes it. */
static int read_file(FsSafetensors *st, int fd, uint64_t size, const char *path, FsErr *err)
{
    uint8_t len8[8] = {0};
    uint64_t hlen = 0;
    if (safetensors_read_at(fd, len8, size < 8 ? size : 8, 0, path, err)) return -1;
    if (header_length(len8, size, &hlen, path, err)) return -1;
    st->bytes = fs_malloc((size_t)(8 + hlen));
    st->n_bytes = size;
    memcpy(st->bytes, len8, 8);
    if (safetensors_read_at(fd, st->bytes + 8, hlen, 8, path, err) || parse_header(st, path, err)) return -1;
    st->bytes = fs_realloc(st->bytes, (size_t)(size ? size : 1));
    if (safetensors_read_at(fd, st->bytes + 8 + hlen, size - 8 - hlen, 8 + hlen, path, err)) return -1;
    link_data(st);
    return 0;
}

int safetensors_read(FsSafetensors *st, const char *path, FsErr *err)
{
    uint64_t size;
    memset(st, 0, sizeof *st);
    int fd = safetensors_open(path, &size, err);
    if (fd < 0) return -1;
    int rc = read_file(st, fd, size, path, err);
    close(fd);
    if (rc != 0) safetensors_free(st);
    return rc;
}

void safetensors_free(FsSafetensors *st)
{
    free(st->bytes);
    free(st->tensors);
    free(st->meta);
    free(st->strings);
    memset(st, 0, sizeof *st);
}

const FsTensor *safetensors_find(const FsSafetensors *st, const char *name)
{
    for (int i = 0; i < st->n_tensors; i++)
        if (!strcmp(st->tensors[i].name, name)) return &st->tensors[i];
    return NULL;
}

const char *safetensors_meta(const FsSafetensors *st, const char *key)
{
    for (int i = 0; i < st->n_meta; i++)
        if (!strcmp(st->meta[i].key, key)) return st->meta[i].value;
    return NULL;
}

uint64_t safetensors_numel(const FsTensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (uint64_t)t->shape[i];
    return n;
}

int safetensors_get_f32(const FsSafetensors *st, const char *name, int ndim, const int64_t *shape, float *out,
                        const char *origin, FsErr *err)
{
    const FsTensor *t = safetensors_find(st, name);
    if (!t) {
        fs_err_set(err, "%s: no tensor '%s'", origin, name);
        return -1;
    }
    if (strcmp(t->dtype, "F32") != 0) {
        fs_err_set(err, "%s: tensor '%s': dtype %s, expected F32", origin, name, t->dtype);
        return -1;
    }
    int same = !shape || ndim == t->ndim;
    for (int i = 0; shape && same && i < ndim; i++) same = shape[i] == t->shape[i];
    if (!same) {
        char got[200], want[200];
        st_shape_text(got, sizeof got, t->ndim, t->shape);
        st_shape_text(want, sizeof want, ndim, shape);
        fs_err_set(err, "%s: tensor '%s': shape %s, expected %s", origin, name, got, want);
        return -1;
    }
    if (t->end > t->begin) memcpy(out, t->data, (size_t)(t->end - t->begin));
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                 */

/* The writer's dtypes: U64, U32 or U8 when asked for by name, else F32. */
static const char *st_dtype(const FsTensor *t)
{
    return !strcmp(t->dtype, "U64") ? "U64" : !strcmp(t->dtype, "U32") ? "U32" : !strcmp(t->dtype, "U8") ? "U8" : "F32";
}
static uint64_t st_elem(const FsTensor *t)
{
    const char *d = st_dtype(t);
    return d[1] == '6' ? 8 : d[1] == '8' ? 1 : 4;
}

void safetensors_serialize(const FsTensor *t, int n, const FsMetaEntry *meta, int n_meta, uint8_t **out,
                           uint64_t *n_out)
{
    FsJsonOut h = {0}; /* no floats: the default refuses nothing here */
    json_object_begin(&h);
    if (n_meta > 0) {
        json_key(&h, "__metadata__");
        json_object_begin(&h);
        for (int i = 0; i < n_meta; i++) {
            json_member_str(&h, meta[i].key, meta[i].value);
        }
        json_end(&h);
    }
    uint64_t pos = 0;
    for (int i = 0; i < n; i++) {
        FS_ASSERT(t[i].ndim >= 0 && t[i].ndim <= FS_ST_MAX_DIMS);
        json_key(&h, t[i].name);
        json_object_begin(&h);
        json_member_str(&h, "dtype", st_dtype(&t[i]));
        json_key(&h, "shape");
        json_array_begin(&h);
        for (int d = 0; d < t[i].ndim; d++) {
            FS_ASSERT(t[i].shape[d] >= 0);
            json_int(&h, t[i].shape[d]);
        }
        json_end(&h);
        uint64_t bytes = st_elem(&t[i]) * safetensors_numel(&t[i]);
        json_key(&h, "data_offsets");
        json_array_begin(&h);
        json_uint(&h, pos);
        json_uint(&h, pos + bytes);
        json_end(&h);
        json_end(&h);
        pos += bytes;
    }
    json_end(&h);
    while ((8 + h.n) % 8) json_tail(&h, " "); /* the data starts 8-byte aligned, as the reference writes it */
    FS_ASSERT(!json_out_error(&h));
    uint64_t total = 8 + h.n + pos;
    uint8_t *buf = fs_malloc((size_t)total);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)h.n >> (8 * i));
    memcpy(buf + 8, h.p, h.n);
    uint8_t *dst = buf + 8 + h.n;
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)(st_elem(&t[i]) * safetensors_numel(&t[i]));
        if (bytes) memcpy(dst, t[i].data, bytes);
        dst += bytes;
    }
    json_out_free(&h);
    *out = buf;
    *n_out = total;
}
