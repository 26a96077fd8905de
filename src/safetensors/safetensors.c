/*
 * safetensors.c: reading and writing the safetensors format (see the
 * header). The reader is fed damaged and hostile files, so every field is
 * checked before it is used and every size is overflow-checked; the JSON
 * itself is read by the project's reader (journal_json_parse), which never
 * crashes on bad input. The writer is deterministic: the same tensors and
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

#include "journal/journal.h"

static const struct {
    const char *name;
    unsigned size;
} DTYPES[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},     {"I32", 4},     {"I16", 2},     {"I8", 1},
    {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1},   {"BOOL", 1},   {"F8_E4M3", 1}, {"F8_E5M2", 1},
};

static unsigned dtype_size(const char *name)
{
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (!strcmp(DTYPES[i].name, name)) return DTYPES[i].size;
    return 0;
}

/* Every header error reads "ORIGIN: safetensors header: ...". */
static int bad(FsErr *err, const char *origin, const char *fmt, ...) FS_PRINTF(3, 4);
static int bad(FsErr *err, const char *origin, const char *fmt, ...)
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

static void shape_text(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t at = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (at < n) snprintf(buf + at, n - at, "]");
}

/* One tensor entry of the header into t (name still pointing into the
 * JSON document). data_len: bytes of the data section. */
static int parse_tensor(FsTensor *t, const FsJson *v, uint64_t data_len, const char *origin, FsErr *err)
{
    const char *nm = v->key;
    t->name = nm;
    if (v->type != FS_JSON_OBJECT) return bad(err, origin, "tensor '%.80s': expected an object", nm);
    const FsJson *dt = journal_json_get(v, "dtype"), *sh = journal_json_get(v, "shape");
    const FsJson *off = journal_json_get(v, "data_offsets");
    if (!dt || !sh || !off)
        return bad(err, origin, "tensor '%.80s': missing \"%s\"", nm, !dt ? "dtype" : !sh ? "shape" : "data_offsets");
    if (dt->type != FS_JSON_STRING) return bad(err, origin, "tensor '%.80s': \"dtype\" must be a string", nm);
    unsigned esize = dtype_size(dt->str);
    if (!esize || dt->len != strlen(dt->str))
        return bad(err, origin, "tensor '%.80s': unknown dtype \"%.40s\"", nm, dt->str);
    snprintf(t->dtype, sizeof t->dtype, "%s", dt->str);
    if (sh->type != FS_JSON_ARRAY)
        return bad(err, origin, "tensor '%.80s': \"shape\" must be an array of integers", nm);
    if (sh->n > FS_ST_MAX_DIMS)
        return bad(err, origin, "tensor '%.80s': shape has %d dims, at most %d supported", nm, sh->n, FS_ST_MAX_DIMS);
    t->ndim = sh->n;
    int zero = 0, over = 0;
    uint64_t numel = 1;
    const FsJson *d = sh->child;
    for (int i = 0; i < t->ndim; i++, d = d->next) {
        long long x;
        if (journal_json_i64(d, &x) != 0 || x < 0)
            return bad(err, origin, "tensor '%.80s': shape[%d] must be a non-negative integer", nm, i);
        t->shape[i] = x;
        if (x == 0) zero = 1;
        else if (numel > UINT64_MAX / (uint64_t)x) over = 1;
        else numel *= (uint64_t)x;
    }
    /* An empty tensor (a zero dim) holds no bytes whatever its other dims. */
    if (!zero && (over || numel > UINT64_MAX / esize))
        return bad(err, origin, "tensor '%.80s': shape too large (its byte count overflows)", nm);
    uint64_t need = zero ? 0 : numel * esize;
    if (off->type != FS_JSON_ARRAY || off->n != 2 || journal_json_u64(off->child, &t->begin) != 0 ||
        journal_json_u64(off->child->next, &t->end) != 0)
        return bad(err, origin, "tensor '%.80s': \"data_offsets\" must be [begin, end], non-negative integers", nm);
    if (t->end < t->begin)
        return bad(err, origin, "tensor '%.80s': data_offsets [%" PRIu64 ", %" PRIu64 "]: end before begin", nm,
                   t->begin, t->end);
    if (t->end - t->begin != need) {
        char shape[200];
        shape_text(shape, sizeof shape, t->ndim, t->shape);
        return bad(err, origin,
                   "tensor '%.80s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                   " bytes, but shape %s of %s needs %" PRIu64,
                   nm, t->begin, t->end, t->end - t->begin, shape, t->dtype, need);
    }
    if (t->end > data_len)
        return bad(err, origin,
                   "tensor '%.80s': data_offsets [%" PRIu64 ", %" PRIu64 "] run past the end of the data (%" PRIu64
                   " bytes)",
                   nm, t->begin, t->end, data_len);
    return 0;
}

static int parse_metadata(FsSafetensors *st, const FsJson *v, const char *origin, FsErr *err)
{
    if (v->type != FS_JSON_OBJECT) return bad(err, origin, "\"__metadata__\" must be an object of strings");
    st->meta = fs_calloc((size_t)v->n + 1, sizeof *st->meta);
    for (const FsJson *c = v->child; c; c = c->next) {
        if (c->type != FS_JSON_STRING) return bad(err, origin, "metadata '%.80s': value must be a string", c->key);
        if (c->len != strlen(c->str)) /* the API hands out C strings */
            return bad(err, origin, "metadata '%.80s': value holds a NUL character", c->key);
        st->meta[st->n_meta++] = (FsMetaEntry){c->key, c->str};
    }
    const char *dup = find_duplicate(&st->meta[0].key, st->n_meta, sizeof *st->meta);
    return dup ? bad(err, origin, "duplicate metadata key '%.80s'", dup) : 0;
}

/* Appends s at *p and points *slot at the copy. */
static void own(char **p, const char **slot)
{
    size_t len = strlen(*slot) + 1;
    memcpy(*p, *slot, len);
    *slot = *p;
    *p += len;
}

/* Copies names, keys and values out of the JSON document into st->strings. */
static void own_strings(FsSafetensors *st)
{
    size_t total = 1;
    for (int i = 0; i < st->n_tensors; i++) total += strlen(st->tensors[i].name) + 1;
    for (int i = 0; i < st->n_meta; i++) total += strlen(st->meta[i].key) + strlen(st->meta[i].value) + 2;
    char *p = st->strings = fs_malloc(total);
    for (int i = 0; i < st->n_tensors; i++) own(&p, &st->tensors[i].name);
    for (int i = 0; i < st->n_meta; i++) own(&p, &st->meta[i].key), own(&p, &st->meta[i].value);
}

static int parse_header(FsSafetensors *st, FsJsonDoc *doc, const char *origin, FsErr *err)
{
    const uint8_t *b = st->bytes;
    uint64_t n = st->n_bytes, hlen = 0;
    if (n < 8) return bad(err, origin, "file is %" PRIu64 " bytes, shorter than the 8-byte header length", n);
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | b[i];
    if (hlen > FS_ST_MAX_HEADER)
        return bad(err, origin, "header length %" PRIu64 " exceeds the limit of %u bytes", hlen, FS_ST_MAX_HEADER);
    if (hlen > n - 8)
        return bad(err, origin, "header length %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes after it)",
                   hlen, n - 8);
    st->header_len = hlen;
    const char *text = (const char *)b + 8;
    if (hlen == 0 || text[0] != '{') return bad(err, origin, "the JSON must begin with '{'");
    long at = utf8_invalid_at(b + 8, hlen);
    if (at >= 0) return bad(err, origin, "not valid UTF-8 at byte %ld of the JSON", at + 1);
    char why[200];
    if (journal_json_parse(doc, text, hlen, why, sizeof why) != 0) return bad(err, origin, "invalid JSON: %s", why);
    const FsJson *root = doc->root;
    if (root->type != FS_JSON_OBJECT) return bad(err, origin, "expected a JSON object");
    uint64_t data_len = n - 8 - hlen;
    st->tensors = fs_calloc((size_t)root->n + 1, sizeof *st->tensors);
    for (const FsJson *c = root->child; c; c = c->next) {
        if (!strcmp(c->key, "__metadata__")) {
            if (st->meta) return bad(err, origin, "\"__metadata__\" given twice");
            if (parse_metadata(st, c, origin, err) != 0) return -1;
            continue;
        }
        if (parse_tensor(&st->tensors[st->n_tensors++], c, data_len, origin, err) != 0) return -1;
    }
    const char *dup = find_duplicate(&st->tensors[0].name, st->n_tensors, sizeof *st->tensors);
    if (dup) return bad(err, origin, "duplicate tensor name '%.80s'", dup);
    own_strings(st);
    qsort(st->tensors, (size_t)st->n_tensors, sizeof *st->tensors, cmp_tensor);
    /* Sorted, each tensor must start where the previous one ended: the
     * spec wants the buffer fully indexed, without holes or overlaps. */
    uint64_t pos = 0;
    for (int i = 0; i < st->n_tensors; i++) {
        FsTensor *t = &st->tensors[i];
        if (t->begin < pos)
            return bad(err, origin, "tensors '%.80s' and '%.80s' overlap (data_offsets begin %" PRIu64
                       " before %" PRIu64 ")", st->tensors[i - 1].name, t->name, t->begin, pos);
        if (t->begin > pos)
            return bad(err, origin,
                       "data bytes [%" PRIu64 ", %" PRIu64 ") are not covered by any tensor (before '%.80s')", pos,
                       t->begin, t->name);
        t->data = b + 8 + hlen + t->begin;
        pos = t->end;
    }
    if (pos != data_len)
        return bad(err, origin, "data bytes [%" PRIu64 ", %" PRIu64 ") at the end are not covered by any tensor", pos,
                   data_len);
    return 0;
}

int safetensors_parse(FsSafetensors *st, uint8_t *bytes, uint64_t n, const char *origin, FsErr *err)
{
    memset(st, 0, sizeof *st);
    st->bytes = bytes;
    st->n_bytes = n;
    FsJsonDoc doc = {0};
    int rc = parse_header(st, &doc, origin, err);
    journal_json_free(&doc);
    if (rc != 0) safetensors_free(st);
    return rc;
}

int safetensors_read(FsSafetensors *st, const char *path, FsErr *err)
{
    memset(st, 0, sizeof *st);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fs_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    int rc = fstat(fd, &sb);
    if (rc != 0 || !S_ISREG(sb.st_mode)) {
        fs_err_set(err, "%s: cannot read: %s", path, rc != 0 ? strerror(errno) : "not a regular file");
        close(fd);
        return -1;
    }
    uint64_t n = (uint64_t)sb.st_size, got = 0;
    uint8_t *bytes = fs_malloc(n ? n : 1);
    while (got < n) {
        ssize_t r = read(fd, bytes + got, n - got > (1u << 30) ? (1u << 30) : n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            fs_err_set(err, "%s: cannot read: %s", path, r < 0 ? strerror(errno) : "file shrank while reading");
            free(bytes);
            close(fd);
            return -1;
        }
        got += (uint64_t)r;
    }
    close(fd);
    return safetensors_parse(st, bytes, n, path, err);
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
        shape_text(got, sizeof got, t->ndim, t->shape);
        shape_text(want, sizeof want, ndim, shape);
        fs_err_set(err, "%s: tensor '%s': shape %s, expected %s", origin, name, got, want);
        return -1;
    }
    if (t->end > t->begin) memcpy(out, t->data, (size_t)(t->end - t->begin));
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                 */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} Out;

static void out_put(Out *o, const void *s, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2 + 64;
        o->p = fs_realloc(o->p, o->cap);
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static void out_text(Out *o, const char *s) { out_put(o, s, strlen(s)); }

/* A JSON string literal: quote and backslash escaped, control characters
 * as \u00xx, every other byte (UTF-8 included) as it is. */
static void out_string(Out *o, const char *s)
{
    out_put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            out_put(o, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            out_put(o, esc, 6);
        } else {
            out_put(o, s, 1);
        }
    }
    out_put(o, "\"", 1);
}

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
    Out h = {0};
    char num[64];
    out_text(&h, "{");
    if (n_meta > 0) {
        out_text(&h, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i) out_text(&h, ",");
            out_string(&h, meta[i].key);
            out_text(&h, ":");
            out_string(&h, meta[i].value);
        }
        out_text(&h, "}");
    }
    uint64_t pos = 0;
    for (int i = 0; i < n; i++) {
        FS_ASSERT(t[i].ndim >= 0 && t[i].ndim <= FS_ST_MAX_DIMS);
        if (i || n_meta > 0) out_text(&h, ",");
        out_string(&h, t[i].name);
        out_text(&h, ":{\"dtype\":\"");
        out_text(&h, st_dtype(&t[i]));
        out_text(&h, "\",\"shape\":[");
        for (int d = 0; d < t[i].ndim; d++) {
            FS_ASSERT(t[i].shape[d] >= 0);
            snprintf(num, sizeof num, "%s%" PRId64, d ? "," : "", t[i].shape[d]);
            out_text(&h, num);
        }
        uint64_t bytes = st_elem(&t[i]) * safetensors_numel(&t[i]);
        snprintf(num, sizeof num, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", pos, pos + bytes);
        out_text(&h, num);
        pos += bytes;
    }
    out_text(&h, "}");
    while ((8 + h.n) % 8) out_text(&h, " "); /* the data starts 8-byte aligned, as the reference writes it */
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
    free(h.p);
    *out = buf;
    *n_out = total;
}
