/*
 * json.c: the small JSON reader behind the journal and the report. One
 * pass of recursive descent (depth-limited) into a node array sized from
 * an upper bound counted beforehand, strings decoded into one text buffer.
 * It is fed torn and corrupted journal lines, so every byte is checked and
 * every failure is a return value with the column, never a crash.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "journal/journal.h"

/* ---------------------------------------------------------------------- */
/* Parser                                                                   */

typedef struct {
    const char *s;
    size_t n, i;
    FsJson *nodes;
    int n_nodes, cap_nodes;
    char *text;
    size_t t, cap_text;
    char *why;
    size_t why_n;
} Parser;

static int fail(Parser *p, const char *what)
{
    if (p->why && p->why_n) snprintf(p->why, p->why_n, "column %zu: expected %s", p->i + 1, what);
    return -1;
}

static void skip_ws(Parser *p)
{
    while (p->i < p->n &&
           (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static FsJson *new_node(Parser *p, FsJsonType type)
{
    FS_ASSERT(p->n_nodes < p->cap_nodes); /* the bound counted in journal_json_parse */
    FsJson *v = &p->nodes[p->n_nodes++];
    memset(v, 0, sizeof *v);
    v->type = type;
    v->off = p->i;
    return v;
}

static int hex4(Parser *p, unsigned *out)
{
    if (p->n - p->i < 4) return -1;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i + (size_t)k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    p->i += 4;
    *out = v;
    return 0;
}

static void put_utf8(Parser *p, unsigned c)
{
    char *o = p->text + p->t;
    if (c < 0x80) {
        o[0] = (char)c;
        p->t += 1;
    } else if (c < 0x800) {
        o[0] = (char)(0xc0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3f));
        p->t += 2;
    } else if (c < 0x10000) {
        o[0] = (char)(0xe0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        p->t += 3;
    } else {
        o[0] = (char)(0xf0 | (c >> 18));
        o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[3] = (char)(0x80 | (c & 0x3f));
        p->t += 4;
    }
}

/* At the opening quote. Decodes into p->text; *out points at the result.
 * The decoded form is never longer than the source (an escape of 6 or 12
 * bytes decodes to at most 4), so the text buffer cannot overflow. */
static int parse_string(Parser *p, const char **out, size_t *len)
{
    p->i++; /* opening quote */
    size_t start = p->t;
    for (;;) {
        if (p->i >= p->n) return fail(p, "'\"' to close the string");
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            break;
        }
        if (c < 0x20) return fail(p, "no control characters in a string");
        if (c != '\\') {
            p->text[p->t++] = (char)c;
            p->i++;
            continue;
        }
        p->i++;
        if (p->i >= p->n) return fail(p, "an escape after '\\'");
        char e = p->s[p->i++];
        switch (e) {
        case '"': p->text[p->t++] = '"'; break;
        case '\\': p->text[p->t++] = '\\'; break;
        case '/': p->text[p->t++] = '/'; break;
        case 'b': p->text[p->t++] = '\b'; break;
        case 'f': p->text[p->t++] = '\f'; break;
        case 'n': p->text[p->t++] = '\n'; break;
        case 'r': p->text[p->t++] = '\r'; break;
        case 't': p->text[p->t++] = '\t'; break;
        case 'u': {
            unsigned c1, c2;
            if (hex4(p, &c1)) return fail(p, "4 hex digits after \\u");
            if (c1 >= 0xdc00 && c1 <= 0xdfff) return fail(p, "a high surrogate before a low one");
            if (c1 >= 0xd800 && c1 <= 0xdbff) {
                if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
                    return fail(p, "a low surrogate \\uDC00..\\uDFFF");
                p->i += 2;
                if (hex4(p, &c2) || c2 < 0xdc00 || c2 > 0xdfff)
                    return fail(p, "a low surrogate \\uDC00..\\uDFFF");
                c1 = 0x10000 + ((c1 - 0xd800) << 10) + (c2 - 0xdc00);
            }
            put_utf8(p, c1);
            break;
        }
        default: p->i--; return fail(p, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
        }
    }
    *len = p->t - start;
    p->text[p->t++] = '\0';
    *out = p->text + start;
    return 0;
}

static int is_digit(Parser *p) { return p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9'; }

static int parse_number(Parser *p, FsJson *v)
{
    size_t start = p->i;
    if (p->i < p->n && p->s[p->i] == '-') p->i++;
    if (!is_digit(p)) return fail(p, "a digit");
    if (p->s[p->i] == '0')
        p->i++;
    else
        while (is_digit(p)) p->i++;
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        if (!is_digit(p)) return fail(p, "a digit after '.'");
        while (is_digit(p)) p->i++;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (!is_digit(p)) return fail(p, "a digit in the exponent");
        while (is_digit(p)) p->i++;
    }
    size_t len = p->i - start;
    memcpy(p->text + p->t, p->s + start, len);
    v->str = p->text + p->t;
    v->len = len;
    p->t += len;
    p->text[p->t++] = '\0';
    return 0;
}

static int literal(Parser *p, const char *word)
{
    size_t k = strlen(word);
    if (p->n - p->i < k || memcmp(p->s + p->i, word, k) != 0) return -1;
    p->i += k;
    return 0;
}

static int parse_value(Parser *p, FsJson **out, int depth);

static int parse_container(Parser *p, FsJson *v, int depth)
{
    int object = v->type == FS_JSON_OBJECT;
    char close = object ? '}' : ']';
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 0;
    }
    FsJson *last = NULL;
    for (;;) {
        const char *key = NULL;
        if (object) {
            size_t klen;
            if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "a member name in quotes");
            if (parse_string(p, &key, &klen)) return -1;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') return fail(p, "':' after the member name");
            p->i++;
        }
        FsJson *c;
        if (parse_value(p, &c, depth + 1)) return -1;
        c->key = key;
        if (last)
            last->next = c;
        else
            v->child = c;
        last = c;
        v->n++;
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            skip_ws(p);
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return fail(p, object ? "',' or '}'" : "',' or ']'");
    }
}

static int parse_value(Parser *p, FsJson **out, int depth)
{
    if (depth > FS_JSON_MAX_DEPTH) return fail(p, "nesting no deeper than 64");
    skip_ws(p);
    if (p->i >= p->n) return fail(p, "a value");
    char c = p->s[p->i];
    FsJson *v;
    int rc = 0;
    if (c == '{' || c == '[') {
        v = new_node(p, c == '{' ? FS_JSON_OBJECT : FS_JSON_ARRAY);
        rc = parse_container(p, v, depth);
    } else if (c == '"') {
        v = new_node(p, FS_JSON_STRING);
        rc = parse_string(p, &v->str, &v->len);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        v = new_node(p, FS_JSON_NUMBER);
        rc = parse_number(p, v);
    } else if (c == 't' || c == 'f' || c == 'n') {
        v = new_node(p, c == 't' ? FS_JSON_TRUE : c == 'f' ? FS_JSON_FALSE : FS_JSON_NULL);
        if (literal(p, c == 't' ? "true" : c == 'f' ? "false" : "null"))
            return fail(p, "true, false or null");
    } else {
        return fail(p, "a value");
    }
    if (rc) return -1;
    v->end = p->i;
    *out = v;
    return 0;
}

int journal_json_parse(FsJsonDoc *doc, const char *text, size_t n, char *why, size_t why_n)
{
    memset(doc, 0, sizeof *doc);
    if (why && why_n) why[0] = '\0';
    /* Every value is the root, the first in its container or after a comma. */
    size_t bound = 1;
    for (size_t i = 0; i < n; i++)
        if (text[i] == ',' || text[i] == '[' || text[i] == '{') bound++;
    if (bound > (size_t)1 << 30)
        bound = (size_t)1 << 30; /* a value needs a byte: n bounds it too */
    if (bound > n + 1) bound = n + 1;
    Parser p = {.s = text, .n = n, .why = why, .why_n = why_n};
    p.cap_nodes = (int)bound;
    p.nodes = fs_malloc(bound * sizeof *p.nodes);
    p.cap_text = 2 * n + 16;
    p.text = fs_malloc(p.cap_text);
    FsJson *root = NULL;
    int rc = parse_value(&p, &root, 0);
    if (rc == 0) {
        skip_ws(&p);
        if (p.i != n) rc = fail(&p, "the end of the text after the value");
    }
    if (rc) {
        free(p.nodes);
        free(p.text);
        return -1;
    }
    doc->nodes = p.nodes;
    doc->text = p.text;
    doc->n_nodes = p.n_nodes;
    doc->root = root;
    return 0;
}

void journal_json_free(FsJsonDoc *doc)
{
    free(doc->nodes);
    free(doc->text);
    memset(doc, 0, sizeof *doc);
}

/* ---------------------------------------------------------------------- */
/* Access                                                                   */

const FsJson *journal_json_get(const FsJson *obj, const char *key)
{
    if (!obj || obj->type != FS_JSON_OBJECT) return NULL;
    for (const FsJson *c = obj->child; c; c = c->next)
        if (c->key && !strcmp(c->key, key)) return c;
    return NULL;
}

const FsJson *journal_json_at(const FsJson *arr, int i)
{
    if (!arr || arr->type != FS_JSON_ARRAY || i < 0) return NULL;
    const FsJson *c = arr->child;
    while (c && i-- > 0) c = c->next;
    return c;
}

static int integer_text(const FsJson *v)
{
    if (!v || v->type != FS_JSON_NUMBER) return 0;
    return strpbrk(v->str, ".eE") == NULL;
}

int journal_json_i64(const FsJson *v, long long *out)
{
    if (!integer_text(v)) return -1;
    errno = 0;
    char *end;
    long long x = strtoll(v->str, &end, 10);
    if (errno || *end) return -1;
    *out = x;
    return 0;
}

int journal_json_u64(const FsJson *v, uint64_t *out)
{
    if (!integer_text(v) || v->str[0] == '-') return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(v->str, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)x;
    return 0;
}

static int special(const FsJson *v, double *out)
{
    if (!v || v->type != FS_JSON_STRING) return -1;
    if (!strcmp(v->str, "nan"))
        *out = NAN;
    else if (!strcmp(v->str, "inf"))
        *out = INFINITY;
    else if (!strcmp(v->str, "-inf"))
        *out = -INFINITY;
    else
        return -1;
    return 0;
}

int journal_json_f64(const FsJson *v, double *out)
{
    if (v && v->type == FS_JSON_STRING) return special(v, out);
    if (!v || v->type != FS_JSON_NUMBER) return -1;
    *out = strtod(v->str, NULL); /* grammar already checked; overflow gives inf */
    return 0;
}

int journal_json_f32(const FsJson *v, float *out)
{
    double d;
    if (v && v->type == FS_JSON_STRING) {
        if (special(v, &d)) return -1;
        *out = (float)d;
        return 0;
    }
    if (!v || v->type != FS_JSON_NUMBER) return -1;
    *out = strtof(v->str, NULL); /* directly: no double rounding */
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                  */

typedef struct {
    char *p;
    size_t n, cap;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = fs_realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void buf_string(Buf *b, const char *s, size_t n)
{
    buf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            buf_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            buf_put(b, esc, 6);
        } else {
            buf_put(b, (const char *)&s[i], 1);
        }
    }
    buf_put(b, "\"", 1);
}

static void compact(Buf *b, const FsJson *v)
{
    switch (v->type) {
    case FS_JSON_NULL: buf_put(b, "null", 4); break;
    case FS_JSON_FALSE: buf_put(b, "false", 5); break;
    case FS_JSON_TRUE: buf_put(b, "true", 4); break;
    case FS_JSON_NUMBER: buf_put(b, v->str, v->len); break;
    case FS_JSON_STRING: buf_string(b, v->str, v->len); break;
    case FS_JSON_ARRAY:
    case FS_JSON_OBJECT: {
        int object = v->type == FS_JSON_OBJECT;
        buf_put(b, object ? "{" : "[", 1);
        for (const FsJson *c = v->child; c; c = c->next) {
            if (c != v->child) buf_put(b, ",", 1);
            if (object) {
                buf_string(b, c->key, strlen(c->key));
                buf_put(b, ":", 1);
            }
            compact(b, c);
        }
        buf_put(b, object ? "}" : "]", 1);
        break;
    }
    }
}

char *journal_json_compact(const FsJson *v)
{
    Buf b = {0};
    buf_put(&b, "", 0);
    compact(&b, v);
    return b.p;
}

void journal_json_write_string(FILE *out, const char *s)
{
    Buf b = {0};
    buf_string(&b, s, strlen(s));
    fputs(b.p, out);
    free(b.p);
}
