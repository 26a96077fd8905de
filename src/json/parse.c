/*
 * parse.c: a JSON text as a document (FsJsonDoc), and typed reads out of
 * it. One pass of recursive descent over the scanner (scan.c) into a node
 * array sized from an upper bound counted beforehand, strings and number
 * texts into one text buffer: two allocations, whatever the input. Journal
 * lines, profile.json, exports' model.json and trial configs are read so.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

typedef struct {
    FsJsonScan c;
    FsJson *nodes;
    int n_nodes, cap_nodes;
} Parser;

static FsJson *new_node(Parser *p, FsJsonType type)
{
    FS_ASSERT(p->n_nodes < p->cap_nodes); /* the bound counted in json_parse */
    FsJson *v = &p->nodes[p->n_nodes++];
    memset(v, 0, sizeof *v);
    v->type = type;
    v->off = p->c.i;
    return v;
}

/* The number's text as written, into the text buffer. */
static int parse_number(Parser *p, FsJson *v)
{
    FsJsonScan *c = &p->c;
    size_t start = c->i;
    if (json_scan_number(c, NULL, NULL)) return -1;
    size_t len = c->i - start;
    memcpy(c->text + c->t, c->s + start, len);
    v->str = c->text + c->t;
    v->len = len;
    c->t += len;
    c->text[c->t++] = '\0';
    return 0;
}

static int parse_value(Parser *p, FsJson **out, int depth);

static int parse_container(Parser *p, FsJson *v, int depth)
{
    FsJsonScan *c = &p->c;
    int object = v->type == FS_JSON_OBJECT;
    char close = object ? '}' : ']';
    c->i++;
    if (json_scan_peek(c) == close) return c->i++, 0;
    FsJson *last = NULL;
    for (;;) {
        const char *key = NULL;
        if (object) {
            if (json_scan_peek(c) != '"') return json_scan_fail(c, "a member name in quotes");
            if (json_scan_string(c, &key, NULL) || json_scan_expect(c, ':', "':' after the member name")) return -1;
        }
        FsJson *child;
        if (parse_value(p, &child, depth + 1)) return -1;
        child->key = key;
        if (last)
            last->next = child;
        else
            v->child = child;
        last = child;
        v->n++;
        char next = json_scan_peek(c);
        if (next == close) return c->i++, 0;
        if (next != ',') return json_scan_fail(c, object ? "',' or '}'" : "',' or ']'");
        c->i++;
    }
}

static int parse_value(Parser *p, FsJson **out, int depth)
{
    FsJsonScan *c = &p->c;
    if (depth > FS_JSON_MAX_DEPTH) return json_scan_fail(c, "nesting no deeper than 64");
    char ch = json_scan_peek(c);
    FsJson *v;
    int rc;
    if (ch == '{' || ch == '[') {
        v = new_node(p, ch == '{' ? FS_JSON_OBJECT : FS_JSON_ARRAY);
        rc = parse_container(p, v, depth);
    } else if (ch == '"') {
        v = new_node(p, FS_JSON_STRING);
        rc = json_scan_string(c, &v->str, &v->len);
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        v = new_node(p, FS_JSON_NUMBER);
        rc = parse_number(p, v);
    } else if (ch == 't' || ch == 'f' || ch == 'n') {
        v = new_node(p, ch == 't' ? FS_JSON_TRUE : ch == 'f' ? FS_JSON_FALSE : FS_JSON_NULL);
        rc = json_scan_skip(c, depth); /* the literal, checked */
    } else {
        return json_scan_fail(c, "a value");
    }
    if (rc) return -1;
    v->end = c->i;
    *out = v;
    return 0;
}

int json_parse(FsJsonDoc *doc, const char *text, size_t n, char *why, size_t why_n)
{
    memset(doc, 0, sizeof *doc);
    if (why && why_n) why[0] = '\0';
    /* Every value is the root, the first in its container or after a comma. */
    size_t bound = 1;
    for (size_t i = 0; i < n; i++)
        if (text[i] == ',' || text[i] == '[' || text[i] == '{') bound++;
    if (bound > (size_t)1 << 30) bound = (size_t)1 << 30; /* a value needs a byte: n bounds it too */
    if (bound > n + 1) bound = n + 1;
    Parser p = {.c = {.s = text, .n = n, .why = why, .why_n = why_n}};
    p.cap_nodes = (int)bound;
    p.nodes = fs_malloc(bound * sizeof *p.nodes);
    /* Decoded strings are no longer than their source; a number's text is
     * its source; each adds one NUL. */
    p.c.text = fs_malloc(2 * n + 16);
    FsJson *root = NULL;
    int rc = parse_value(&p, &root, 0);
    if (rc == 0 && json_scan_peek(&p.c) != 0) rc = json_scan_fail(&p.c, "the end of the text after the value");
    if (rc) {
        free(p.nodes);
        free(p.c.text);
        return -1;
    }
    doc->nodes = p.nodes;
    doc->text = p.c.text;
    doc->n_nodes = p.n_nodes;
    doc->root = root;
    return 0;
}

void json_free(FsJsonDoc *doc)
{
    free(doc->nodes);
    free(doc->text);
    memset(doc, 0, sizeof *doc);
}

/* ---------------------------------------------------------------------- */
/* Access                                                                   */

const FsJson *json_get(const FsJson *obj, const char *key)
{
    if (!obj || obj->type != FS_JSON_OBJECT) return NULL;
    for (const FsJson *c = obj->child; c; c = c->next)
        if (c->key && !strcmp(c->key, key)) return c;
    return NULL;
}

const FsJson *json_at(const FsJson *arr, int i)
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

int json_i64(const FsJson *v, long long *out)
{
    if (!integer_text(v)) return -1;
    errno = 0;
    char *end;
    long long x = strtoll(v->str, &end, 10);
    if (errno || *end) return -1;
    *out = x;
    return 0;
}

int json_u64(const FsJson *v, uint64_t *out)
{
    if (!integer_text(v) || v->str[0] == '-') return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(v->str, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)x;
    return 0;
}

/* The strings FS_JSON_NONFINITE_NAME writes (write.c spells them). */
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

int json_f64(const FsJson *v, double *out)
{
    if (v && v->type == FS_JSON_STRING) return special(v, out);
    if (!v || v->type != FS_JSON_NUMBER) return -1;
    *out = strtod(v->str, NULL); /* grammar already checked; overflow gives inf */
    return 0;
}

int json_f32(const FsJson *v, float *out)
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
/* Compact form                                                             */

static void compact(FsJsonOut *w, const FsJson *v)
{
    switch (v->type) {
    case FS_JSON_NULL: json_null(w); break;
    case FS_JSON_FALSE: json_bool(w, 0); break;
    case FS_JSON_TRUE: json_bool(w, 1); break;
    case FS_JSON_NUMBER: json_raw(w, v->str); break;
    case FS_JSON_STRING: json_strn(w, v->str, v->len); break;
    case FS_JSON_ARRAY:
    case FS_JSON_OBJECT:
        if (v->type == FS_JSON_OBJECT)
            json_object_begin(w);
        else
            json_array_begin(w);
        for (const FsJson *c = v->child; c; c = c->next) {
            if (v->type == FS_JSON_OBJECT) json_key(w, c->key);
            compact(w, c);
        }
        json_end(w);
        break;
    }
}

char *json_compact(const FsJson *v)
{
    FsJsonOut w = {0};
    compact(&w, v);
    FS_ASSERT(!json_out_error(&w)); /* a parsed document is within the writer's limits */
    return w.p;
}
