/*
 * header.c: the safetensors JSON header, read without building a JSON
 * document. A hostile header of nested arrays or millions of small values
 * must cost no more memory than its own length: the first pass checks the
 * syntax and stores nothing; the second walks the same text and keeps only
 * what the format holds (a name, a dtype, at most FS_ST_MAX_DIMS shape
 * integers and two offsets per tensor; metadata pairs), skipping any
 * other value. Strings are decoded into one buffer no longer than the text.
 */
#include "safetensors/header.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

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

void st_shape_text(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t at = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (at < n) snprintf(buf + at, n - at, "]");
}

/* ---------------------------------------------------------------------- */
/* The text, through the json module's scanner                            */

typedef struct {
    FsJsonScan j; /* strings decoded into st->strings in the second pass */
    const char *origin;
    FsErr *err;
    char why[160]; /* the scanner's "column C: expected ..." */
} Scan;

static char peek(Scan *c) { return json_scan_peek(&c->j); }

static int expect(Scan *c, char ch, const char *what) { return json_scan_expect(&c->j, ch, what); }

static int string(Scan *c, const char **out, size_t *len) { return json_scan_string(&c->j, out, len); }

static int skip_value(Scan *c, int depth) { return json_scan_skip(&c->j, depth); }

/* Elements of an array (at '['): the first `keep` whole numbers go to
 * out (NULL: none is asked for); *bad_at is the first element that is not
 * one (-1 if none); *count is how many there are. */
static int int_array(Scan *c, uint64_t *out, int keep, int *count, int *bad_at)
{
    *count = 0, *bad_at = -1;
    c->j.i++;
    if (peek(c) == ']') return c->j.i++, 0;
    for (;; (*count)++) {
        int whole = 0;
        uint64_t v = 0;
        char ch = peek(c);
        if (*count < keep && (ch == '-' || (ch >= '0' && ch <= '9'))) {
            if (json_scan_number(&c->j, &whole, &v)) return -1;
        } else if (skip_value(c, 1)) {
            return -1;
        }
        if (*count < keep && whole) out[*count] = v;
        else if (*count < keep && *bad_at < 0) *bad_at = *count;
        if (peek(c) == ']') return c->j.i++, (*count)++, 0;
        if (expect(c, ',', "',' or ']'")) return -1;
    }
}

/* ---------------------------------------------------------------------- */
/* What the format holds                                                   */

typedef struct {
    int dtype, shape, offsets; /* fields seen */
    unsigned esize;
} Seen;

static int field_dtype(Scan *c, FsTensor *t, Seen *f)
{
    const char *s = NULL;
    size_t len = 0, mark = c->j.t;
    if (peek(c) != '"') return st_bad(c->err, c->origin, "tensor '%.80s': \"dtype\" must be a string", t->name);
    if (string(c, &s, &len)) return -1;
    f->esize = dtype_size(s);
    if (!f->esize || len != strlen(s))
        return st_bad(c->err, c->origin, "tensor '%.80s': unknown dtype \"%.40s\"", t->name, s);
    snprintf(t->dtype, sizeof t->dtype, "%s", s);
    c->j.t = mark;
    return 0;
}

static int field_shape(Scan *c, FsTensor *t)
{
    uint64_t v[FS_ST_MAX_DIMS];
    int count, bad_at;
    if (peek(c) != '[')
        return st_bad(c->err, c->origin, "tensor '%.80s': \"shape\" must be an array of integers", t->name);
    if (int_array(c, v, FS_ST_MAX_DIMS, &count, &bad_at)) return -1;
    if (count > FS_ST_MAX_DIMS)
        return st_bad(c->err, c->origin, "tensor '%.80s': shape has %d dims, at most %d supported", t->name, count,
                      FS_ST_MAX_DIMS);
    for (int i = 0; i < count; i++)
        if (i == bad_at || v[i] > (uint64_t)INT64_MAX)
            return st_bad(c->err, c->origin, "tensor '%.80s': shape[%d] must be a non-negative integer", t->name, i);
    t->ndim = count;
    for (int i = 0; i < count; i++) t->shape[i] = (int64_t)v[i];
    return 0;
}

static int field_offsets(Scan *c, FsTensor *t)
{
    uint64_t v[2];
    int count = 0, bad_at = 0;
    if (peek(c) == '[' && int_array(c, v, 2, &count, &bad_at)) return -1;
    if (count != 2 || bad_at >= 0)
        return st_bad(c->err, c->origin,
                      "tensor '%.80s': \"data_offsets\" must be [begin, end], non-negative integers", t->name);
    t->begin = v[0], t->end = v[1];
    return 0;
}

/* A tensor's byte count from its shape; 0 or -1 when it overflows. */
static int tensor_bytes(const FsTensor *t, unsigned esize, uint64_t *need)
{
    uint64_t numel = 1;
    int over = 0;
    for (int i = 0; i < t->ndim; i++) {
        uint64_t x = (uint64_t)t->shape[i];
        if (x == 0) return *need = 0, 0; /* an empty tensor holds no bytes whatever its other dims */
        if (numel > UINT64_MAX / x) over = 1;
        else numel *= x;
    }
    if (over || numel > UINT64_MAX / esize) return -1;
    *need = numel * esize;
    return 0;
}

static int check_tensor(Scan *c, const FsTensor *t, unsigned esize, uint64_t data_len)
{
    const char *nm = t->name, *o = c->origin;
    uint64_t need;
    if (tensor_bytes(t, esize, &need))
        return st_bad(c->err, o, "tensor '%.80s': shape too large (its byte count overflows)", nm);
    if (t->end < t->begin)
        return st_bad(c->err, o, "tensor '%.80s': data_offsets [%" PRIu64 ", %" PRIu64 "]: end before begin", nm,
                      t->begin, t->end);
    if (t->end - t->begin != need) {
        char shape[200];
        st_shape_text(shape, sizeof shape, t->ndim, t->shape);
        return st_bad(c->err, o,
                      "tensor '%.80s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                      " bytes, but shape %s of %s needs %" PRIu64,
                      nm, t->begin, t->end, t->end - t->begin, shape, t->dtype, need);
    }
    if (t->end > data_len)
        return st_bad(c->err, o,
                      "tensor '%.80s': data_offsets [%" PRIu64 ", %" PRIu64 "] run past the end of the data (%" PRIu64
                      " bytes)",
                      nm, t->begin, t->end, data_len);
    return 0;
}

/* One field of a tensor entry (after its key): the three the format has,
 * anything else skipped. */
static int tensor_field(Scan *c, FsTensor *t, const char *key, Seen *f)
{
    int *seen = !strcmp(key, "dtype") ? &f->dtype : !strcmp(key, "shape") ? &f->shape
                : !strcmp(key, "data_offsets") ? &f->offsets : NULL;
    if (!seen) return skip_value(c, 2);
    if ((*seen)++) return st_bad(c->err, c->origin, "tensor '%.80s': \"%s\" given twice", t->name, key);
    return seen == &f->dtype ? field_dtype(c, t, f) : seen == &f->shape ? field_shape(c, t) : field_offsets(c, t);
}

/* A member "name": {...} of the header into t (name in the string buffer). */
static int scan_tensor(Scan *c, FsTensor *t, uint64_t data_len)
{
    Seen f = {0};
    if (peek(c) != '{') return st_bad(c->err, c->origin, "tensor '%.80s': expected an object", t->name);
    c->j.i++;
    while (peek(c) != '}') {
        const char *key;
        size_t len, mark = c->j.t;
        if (string(c, &key, &len) || expect(c, ':', "':' after the key") || tensor_field(c, t, key, &f)) return -1;
        c->j.t = mark;
        if (peek(c) == ',') c->j.i++;
    }
    c->j.i++;
    if (!f.dtype || !f.shape || !f.offsets)
        return st_bad(c->err, c->origin, "tensor '%.80s': missing \"%s\"", t->name,
                      !f.dtype ? "dtype" : !f.shape ? "shape" : "data_offsets");
    return check_tensor(c, t, f.esize, data_len);
}

static int scan_metadata(Scan *c, FsSafetensors *st, int *cap)
{
    if (peek(c) != '{') return st_bad(c->err, c->origin, "\"__metadata__\" must be an object of strings");
    c->j.i++;
    while (peek(c) != '}') {
        const char *key, *value;
        size_t len;
        if (string(c, &key, &len) || expect(c, ':', "':' after the key")) return -1;
        if (peek(c) != '"') return st_bad(c->err, c->origin, "metadata '%.80s': value must be a string", key);
        if (string(c, &value, &len)) return -1;
        if (len != strlen(value)) /* the API hands out C strings */
            return st_bad(c->err, c->origin, "metadata '%.80s': value holds a NUL character", key);
        if (st->n_meta == *cap) st->meta = fs_realloc(st->meta, sizeof *st->meta * (size_t)(*cap = *cap * 2 + 8));
        st->meta[st->n_meta++] = (FsMetaEntry){key, value};
        if (peek(c) == ',') c->j.i++;
    }
    c->j.i++;
    return 0;
}

/* The second pass: the text is known to be valid JSON. */
static int scan_members(Scan *c, FsSafetensors *st, uint64_t data_len)
{
    int cap_t = 0, cap_m = 0, metadata = 0;
    c->j.i = 0;
    if (expect(c, '{', "'{'")) return -1;
    while (peek(c) != '}') {
        const char *key;
        size_t len;
        if (string(c, &key, &len) || expect(c, ':', "':' after the key")) return -1;
        if (!strcmp(key, "__metadata__")) {
            if (metadata++) return st_bad(c->err, c->origin, "\"__metadata__\" given twice");
            if (scan_metadata(c, st, &cap_m)) return -1;
        } else {
            if (st->n_tensors == cap_t)
                st->tensors = fs_realloc(st->tensors, sizeof *st->tensors * (size_t)(cap_t = cap_t * 2 + 8));
            FsTensor *t = &st->tensors[st->n_tensors++];
            memset(t, 0, sizeof *t);
            t->name = key;
            if (scan_tensor(c, t, data_len)) return -1;
        }
        if (peek(c) == ',') c->j.i++;
    }
    return 0;
}

int st_header_scan(FsSafetensors *st, const char *text, size_t n, uint64_t data_len, const char *origin, FsErr *err)
{
    Scan c = {.j = {.s = text, .n = n}, .origin = origin, .err = err};
    c.j.why = c.why, c.j.why_n = sizeof c.why;
    int rc = peek(&c) == '{' ? skip_value(&c, 0) : json_scan_fail(&c.j, "'{'");
    if (rc == 0 && peek(&c) != 0) rc = json_scan_fail(&c.j, "the end of the header after its '}'");
    if (rc == 0) {
        c.j.text = st->strings = fs_malloc(n + 1);
        rc = scan_members(&c, st, data_len);
    }
    /* A syntax error is the scanner's; the format's own are set already. */
    if (rc && c.why[0]) st_bad(err, origin, "invalid JSON: %s", c.why);
    return rc;
}
