/*
 * write.c: the JSON writer. The caller says what (keys, values, where a
 * container begins and ends); the writer owns how: the separators and
 * indentation, the one string escape, the spelling of each kind of number,
 * what a non-finite number becomes. So a writer's output is JSON whatever
 * its values, and two files that hold the same value spell it the same.
 * A misuse is recorded (json_out_error), never a crash: the writers that
 * use it check before the text goes anywhere.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

static void put(FsJsonOut *w, const char *s, size_t n)
{
    if (w->n + n + 1 > w->cap) {
        w->cap = (w->n + n + 1) * 2 + 64;
        w->p = fs_realloc(w->p, w->cap);
    }
    memcpy(w->p + w->n, s, n);
    w->n += n;
    w->p[w->n] = '\0';
}

static void puts_(FsJsonOut *w, const char *s) { put(w, s, strlen(s)); }

static void bad(FsJsonOut *w, const char *what)
{
    if (!w->error) w->error = what;
}

/* A new line and the indentation of depth d. */
static void indent(FsJsonOut *w, int d)
{
    put(w, "\n", 1);
    for (int i = 0; i < d; i++) put(w, "  ", 2);
}

/* Before an item of the innermost container (a value of an array, a key
 * of an object) or before the root: its separator and indentation. 0, or
 * -1 where no item may start. */
static int item(FsJsonOut *w)
{
    if (w->depth == 0) {
        if (w->done) return bad(w, "a second value after the root"), -1;
        return 0;
    }
    int d = w->depth;
    if (w->any[d]) put(w, ",", 1);
    if (d <= w->pretty)
        indent(w, d);
    else if (w->any[d] && w->spaced)
        put(w, " ", 1);
    w->any[d] = 1;
    return 0;
}

/* Before a value: where a value may go (the root, an array's item, after
 * a key). 0, or -1 (recorded). */
static int value(FsJsonOut *w)
{
    if (w->depth > FS_JSON_MAX_DEPTH) return bad(w, "a value nested deeper than FS_JSON_MAX_DEPTH"), -1;
    if (w->depth > 0 && w->kind[w->depth] == '{') {
        if (!w->keyed) return bad(w, "a value in an object without its key"), -1;
        w->keyed = 0;
        return 0;
    }
    return item(w);
}

/* After a whole value: the root is done when nothing is open. */
static void after(FsJsonOut *w)
{
    if (w->depth == 0) w->done = 1;
}

/* The one escape: '"' and '\' get a backslash, control characters
 * \u00xx (lowercase hex), every other byte is written as it is (UTF-8 is
 * JSON's own encoding; bytes that are not UTF-8 go through unchanged, as
 * the reader reads them back). */
static void escaped(FsJsonOut *w, const char *s, size_t n)
{
    put(w, "\"", 1);
    size_t run = 0; /* bytes of s[i - run .. i) that need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c != '"' && c != '\\' && c >= 0x20) {
            run++;
            continue;
        }
        put(w, s + i - run, run);
        run = 0;
        char esc[8];
        if (c == '"' || c == '\\')
            esc[0] = '\\', esc[1] = (char)c, put(w, esc, 2);
        else
            snprintf(esc, sizeof esc, "\\u%04x", c), put(w, esc, 6);
    }
    put(w, s + n - run, run);
    put(w, "\"", 1);
}

static void begin(FsJsonOut *w, char kind)
{
    if (value(w)) return;
    w->depth++;
    w->kind[w->depth] = kind;
    w->any[w->depth] = 0;
    put(w, &kind, 1);
}

void json_object_begin(FsJsonOut *w) { begin(w, '{'); }

void json_array_begin(FsJsonOut *w) { begin(w, '['); }

void json_end(FsJsonOut *w)
{
    if (w->depth == 0) {
        bad(w, "json_end with nothing open");
        return;
    }
    if (w->keyed) {
        bad(w, "json_end after a key, before its value");
        return;
    }
    int d = w->depth;
    if (w->any[d] && d <= w->pretty) indent(w, d - 1);
    put(w, w->kind[d] == '{' ? "}" : "]", 1);
    w->depth--;
    after(w);
}

void json_key(FsJsonOut *w, const char *key)
{
    if (w->depth == 0 || w->kind[w->depth] != '{') {
        bad(w, "a key outside an object");
        return;
    }
    if (w->keyed) {
        bad(w, "a key after a key");
        return;
    }
    item(w);
    escaped(w, key, strlen(key));
    put(w, w->spaced ? ": " : ":", w->spaced ? 2 : 1);
    w->keyed = 1;
}

/* ---------------------------------------------------------------------- */
/* Values                                                                   */

void json_strn(FsJsonOut *w, const char *s, size_t n)
{
    if (value(w)) return;
    escaped(w, s, n);
    after(w);
}

void json_str(FsJsonOut *w, const char *s)
{
    if (!s) {
        bad(w, "json_str of NULL");
        json_null(w);
        return;
    }
    json_strn(w, s, strlen(s));
}

void json_strf(FsJsonOut *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = fs_vformat(fmt, ap);
    va_end(ap);
    json_str(w, s);
    free(s);
}

/* A bare token (a number's text, a literal) as one value. */
static void token(FsJsonOut *w, const char *s)
{
    if (value(w)) return;
    puts_(w, s);
    after(w);
}

void json_int(FsJsonOut *w, long long v)
{
    char t[24];
    snprintf(t, sizeof t, "%lld", v);
    token(w, t);
}

void json_uint(FsJsonOut *w, unsigned long long v)
{
    char t[24];
    snprintf(t, sizeof t, "%llu", v);
    token(w, t);
}

void json_member_str(FsJsonOut *w, const char *key, const char *s)
{
    json_key(w, key);
    json_str(w, s);
}

void json_member_int(FsJsonOut *w, const char *key, long long v)
{
    json_key(w, key);
    json_int(w, v);
}

void json_member_uint(FsJsonOut *w, const char *key, unsigned long long v)
{
    json_key(w, key);
    json_uint(w, v);
}

void json_bool(FsJsonOut *w, int v) { token(w, v ? "true" : "false"); }

void json_null(FsJsonOut *w) { token(w, "null"); }

/* A number that is not finite, as w->nonfinite says. 1 if v was one (and
 * is written), else 0. */
static int nonfinite(FsJsonOut *w, double v)
{
    if (isfinite(v)) return 0;
    if (w->nonfinite == FS_JSON_NONFINITE_NAME) {
        json_str(w, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf"); /* as json_f64 reads them */
        return 1;
    }
    if (w->nonfinite == FS_JSON_NONFINITE_REFUSE) bad(w, "a number that is not finite (NaN or infinity)");
    json_null(w);
    return 1;
}

void json_num32(FsJsonOut *w, float v)
{
    if (!nonfinite(w, v)) token(w, fs_float_text(v));
}

void json_num64(FsJsonOut *w, double v)
{
    char t[FS_DOUBLE_TEXT];
    if (!nonfinite(w, v)) token(w, fs_format_double(t, sizeof t, v));
}

/* printf's %.<digits>g, or %.<digits>f with fixed. */
static void printed(FsJsonOut *w, double v, int digits, int fixed)
{
    char t[352]; /* %.20f of the largest double: 309 digits, a sign, a point, 20 decimals */
    if (nonfinite(w, v)) return;
    snprintf(t, sizeof t, fixed ? "%.*f" : "%.*g", digits, v);
    token(w, t);
}

void json_num32_full(FsJsonOut *w, float v) { printed(w, v, 9, 0); }

void json_num64_full(FsJsonOut *w, double v) { printed(w, v, 17, 0); }

void json_fixed(FsJsonOut *w, double v, int decimals)
{
    if (decimals < 0 || decimals > 20) {
        bad(w, "json_fixed: 0 to 20 decimals");
        return;
    }
    printed(w, v, decimals, 1);
}

void json_raw(FsJsonOut *w, const char *json)
{
    /* One value and nothing else, as the reader would read it alone (a
     * config at the reader's depth limit lands deeper than that here). */
    FsJsonScan c = {.s = json, .n = json ? strlen(json) : 0};
    if (!json || json_scan_skip(&c, 0) || json_scan_peek(&c) != 0) {
        bad(w, "json_raw: not one JSON value");
        json_null(w);
        return;
    }
    token(w, json);
}

/* ---------------------------------------------------------------------- */
/* The end                                                                  */

void json_tail(FsJsonOut *w, const char *s)
{
    if (!w->done || w->depth) {
        bad(w, "json_tail before the root value is whole");
        return;
    }
    puts_(w, s);
}

const char *json_out_error(const FsJsonOut *w)
{
    if (w->error) return w->error;
    if (!w->done) return "the root value is not whole";
    return NULL;
}

void json_out_free(FsJsonOut *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}
