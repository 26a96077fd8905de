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

#define MAX_DEPTH 64

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
/* The text, one token at a time                                           */

typedef struct {
    const char *s;
    size_t n, i;
    char *text; /* decoded strings; NULL in the syntax pass */
    size_t t;
    const char *origin;
    FsErr *err;
} Scan;

static int syntax(Scan *c, const char *what)
{
    return st_bad(c->err, c->origin, "invalid JSON: column %zu: expected %s", c->i + 1, what);
}

static void skip_ws(Scan *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

/* The next byte after whitespace, or 0 at the end. */
static char peek(Scan *c)
{
    skip_ws(c);
    return c->i < c->n ? c->s[c->i] : 0;
}

static int expect(Scan *c, char ch, const char *what)
{
    if (peek(c) != ch) return syntax(c, what);
    c->i++;
    return 0;
}

static int hex4(Scan *c, unsigned *out)
{
    unsigned v = 0;
    if (c->n - c->i < 4) return -1;
    for (int k = 0; k < 4; k++) {
        char h = c->s[c->i++];
        unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                     : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                     : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
                                            : 16u;
        if (d == 16) return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static void put(Scan *c, unsigned ch)
{
    if (!c->text) return;
    char *o = c->text + c->t;
    int k = ch < 0x80 ? 1 : ch < 0x800 ? 2 : ch < 0x10000 ? 3 : 4;
    static const unsigned char lead[5] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (int j = k - 1; j > 0; j--, ch >>= 6) o[j] = (char)(0x80 | (ch & 0x3f));
    o[0] = (char)(lead[k] | ch);
    c->t += (size_t)k;
}

/* A \u escape (after the 'u'), surrogate pairs joined. */
static int unicode_escape(Scan *c)
{
    unsigned c1, c2;
    if (hex4(c, &c1)) return syntax(c, "4 hex digits after \\u");
    if (c1 >= 0xdc00 && c1 <= 0xdfff) return syntax(c, "a high surrogate before a low one");
    if (c1 >= 0xd800 && c1 <= 0xdbff) {
        if (c->n - c->i < 2 || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u')
            return syntax(c, "a low surrogate \\uDC00..\\uDFFF");
        c->i += 2;
        if (hex4(c, &c2) || c2 < 0xdc00 || c2 > 0xdfff) return syntax(c, "a low surrogate \\uDC00..\\uDFFF");
        c1 = 0x10000 + ((c1 - 0xd800) << 10) + (c2 - 0xdc00);
    }
    put(c, c1);
    return 0;
}

/* At the opening quote. In the scan pass the decoded string (NUL-ended)
 * is at *out with *len bytes; it is never longer than its source. */
static int string(Scan *c, const char **out, size_t *len)
{
    static const char ESC_IN[] = "\"\\/bfnrt", ESC_OUT[] = "\"\\/\b\f\n\r\t";
    size_t start = c->t;
    if (expect(c, '"', "a string")) return -1;
    for (;;) {
        if (c->i >= c->n) return syntax(c, "'\"' to close the string");
        unsigned char ch = (unsigned char)c->s[c->i++];
        if (ch == '"') break;
        if (ch < 0x20) return c->i--, syntax(c, "no control characters in a string");
        if (ch != '\\') {
            if (c->text) c->text[c->t++] = (char)ch; /* UTF-8 as it is (checked before) */
            continue;
        }
        if (c->i >= c->n) return syntax(c, "an escape after '\\'");
        char e = c->s[c->i++];
        const char *at = e ? strchr(ESC_IN, e) : NULL;
        if (at) put(c, (unsigned char)ESC_OUT[at - ESC_IN]);
        else if (e == 'u') {
            if (unicode_escape(c)) return -1;
        } else
            return c->i--, syntax(c, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
    }
    if (c->text) {
        *len = c->t - start;
        c->text[c->t++] = '\0';
        *out = c->text + start;
    }
    return 0;
}

static int is_digit(const Scan *c) { return c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9'; }

/* A JSON number; *whole is set when it is a plain non-negative integer
 * that fits in 64 bits, with its value in *v. */
static int number(Scan *c, int *whole, uint64_t *v)
{
    int neg = c->s[c->i] == '-', over = 0;
    *v = 0;
    if (neg) c->i++;
    if (!is_digit(c)) return syntax(c, "a digit");
    if (c->s[c->i] == '0') c->i++;
    else
        for (; is_digit(c); c->i++) {
            unsigned d = (unsigned)(c->s[c->i] - '0');
            if (*v > (UINT64_MAX - d) / 10) over = 1;
            else *v = *v * 10 + d;
        }
    *whole = !neg && !over;
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++, *whole = 0;
        if (!is_digit(c)) return syntax(c, "a digit after '.'");
        while (is_digit(c)) c->i++;
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++, *whole = 0;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (!is_digit(c)) return syntax(c, "a digit in the exponent");
        while (is_digit(c)) c->i++;
    }
    return 0;
}

static int literal(Scan *c, const char *word)
{
    size_t k = strlen(word);
    if (c->n - c->i < k || memcmp(c->s + c->i, word, k) != 0) return syntax(c, "a value");
    c->i += k;
    return 0;
}

static int skip_value(Scan *c, int depth);

/* '[' or '{' ... its closing bracket, every member skipped. */
static int skip_container(Scan *c, int depth)
{
    int object = c->s[c->i] == '{';
    char close = object ? '}' : ']';
    if (depth >= MAX_DEPTH) return syntax(c, "values nested at most 64 deep");
    c->i++;
    if (peek(c) == close) return c->i++, 0;
    for (;;) {
        const char *key;
        size_t len;
        size_t mark = c->t;
        if (object && (string(c, &key, &len) || expect(c, ':', "':' after the key"))) return -1;
        c->t = mark;
        if (skip_value(c, depth + 1)) return -1;
        char next = peek(c);
        if (next == close) return c->i++, 0;
        if (next != ',') return syntax(c, object ? "',' or '}'" : "',' or ']'");
        c->i++;
    }
}

static int skip_value(Scan *c, int depth)
{
    const char *s;
    size_t len, mark = c->t;
    int whole;
    uint64_t v;
    switch (peek(c)) {
    case '{':
    case '[': return skip_container(c, depth);
    case '"': {
        int rc = string(c, &s, &len);
        c->t = mark;
        return rc;
    }
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    case '-': return number(c, &whole, &v);
    default: return is_digit(c) ? number(c, &whole, &v) : syntax(c, "a value");
    }
}

/* Elements of an array (at '['): the first `keep` whole numbers go to
 * out (NULL: none is asked for); *bad_at is the first element that is not
 * one (-1 if none); *count is how many there are. */
static int int_array(Scan *c, uint64_t *out, int keep, int *count, int *bad_at)
{
    *count = 0, *bad_at = -1;
    c->i++;
    if (peek(c) == ']') return c->i++, 0;
    for (;; (*count)++) {
        int whole = 0;
        uint64_t v = 0;
        char ch = peek(c);
        if (*count < keep && (ch == '-' || is_digit(c))) {
            if (number(c, &whole, &v)) return -1;
        } else if (skip_value(c, 1)) {
            return -1;
        }
        if (*count < keep && whole) out[*count] = v;
        else if (*count < keep && *bad_at < 0) *bad_at = *count;
        if (peek(c) == ']') return c->i++, (*count)++, 0;
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
    size_t len = 0, mark = c->t;
    if (peek(c) != '"') return st_bad(c->err, c->origin, "tensor '%.80s': \"dtype\" must be a string", t->name);
    if (string(c, &s, &len)) return -1;
    f->esize = dtype_size(s);
    if (!f->esize || len != strlen(s))
        return st_bad(c->err, c->origin, "tensor '%.80s': unknown dtype \"%.40s\"", t->name, s);
    snprintf(t->dtype, sizeof t->dtype, "%s", s);
    c->t = mark;
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
    c->i++;
    while (peek(c) != '}') {
        const char *key;
        size_t len, mark = c->t;
        if (string(c, &key, &len) || expect(c, ':', "':' after the key") || tensor_field(c, t, key, &f)) return -1;
        c->t = mark;
        if (peek(c) == ',') c->i++;
    }
    c->i++;
    if (!f.dtype || !f.shape || !f.offsets)
        return st_bad(c->err, c->origin, "tensor '%.80s': missing \"%s\"", t->name,
                      !f.dtype ? "dtype" : !f.shape ? "shape" : "data_offsets");
    return check_tensor(c, t, f.esize, data_len);
}

static int scan_metadata(Scan *c, FsSafetensors *st, int *cap)
{
    if (peek(c) != '{') return st_bad(c->err, c->origin, "\"__metadata__\" must be an object of strings");
    c->i++;
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
        if (peek(c) == ',') c->i++;
    }
    c->i++;
    return 0;
}

/* The second pass: the text is known to be valid JSON. */
static int scan_members(Scan *c, FsSafetensors *st, uint64_t data_len)
{
    int cap_t = 0, cap_m = 0, metadata = 0;
    c->i = 0;
    if (peek(c) != '{') return syntax(c, "'{'");
    c->i++;
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
        if (peek(c) == ',') c->i++;
    }
    return 0;
}

int st_header_scan(FsSafetensors *st, const char *text, size_t n, uint64_t data_len, const char *origin, FsErr *err)
{
    Scan c = {.s = text, .n = n, .origin = origin, .err = err};
    if (peek(&c) != '{') return syntax(&c, "'{'");
    if (skip_value(&c, 0)) return -1;
    if (peek(&c) != 0) return syntax(&c, "the end of the header after its '}'");
    c.text = st->strings = fs_malloc(n + 1);
    return scan_members(&c, st, data_len);
}
