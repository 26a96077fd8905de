/*
 * json: the program's one JSON reader and one JSON writer (no external
 * library). Everything foldsweep writes as JSON (journal lines, the
 * leaderboard, profile and progress files, model files' headers and
 * metadata, evaluations) goes through the writer, so a string is escaped
 * one way and a number has one spelling per kind; everything it reads
 * (journal lines, profile.json, model.json, configs, safetensors headers)
 * goes through the reader's grammar. Bad input returns -1 with the byte
 * column and what was expected, never a crash.
 *
 * Three layers: scan.c walks the text token by token (FsJsonScan); parse.c
 * builds a document of it (FsJsonDoc) and reads values out; write.c builds
 * text (FsJsonOut). safetensors reads its header with the scanner alone, so
 * that a hostile header costs no memory beyond its own length.
 */
#ifndef FS_JSON_H
#define FS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* A value inside more containers than this is refused by the reader, and
 * the writer does not write one. */
#define FS_JSON_MAX_DEPTH 64

/* ---------------------------------------------------------------------- */
/* Scanning: the grammar, one token at a time (scan.c)                     */

typedef struct {
    const char *s; /* the text, n bytes (no NUL needed) */
    size_t n, i;   /* i: the cursor */
    char *text;    /* decoded strings go to text + t, NUL-terminated; NULL: checked, not kept */
    size_t t;
    char *why; /* the first failure: "column C: expected ..."; NULL allowed */
    size_t why_n;
} FsJsonScan;

/* Sets why to "column <i+1>: expected <what>" (unless a failure is there
 * already) and returns -1. */
int json_scan_fail(FsJsonScan *c, const char *what);
/* Skips whitespace; the next byte, or 0 at the end of the text. */
char json_scan_peek(FsJsonScan *c);
/* The next byte after whitespace must be ch: steps over it (0) or fails
 * with what (-1). */
int json_scan_expect(FsJsonScan *c, char ch, const char *what);
/* A string (the next token must be one). With a text buffer its decoded
 * bytes are at *out (*len bytes, NUL-terminated, possibly holding \u0000);
 * the decoded form is never longer than its source, so a buffer as long as
 * the text (plus one NUL per string) always suffices. */
int json_scan_string(FsJsonScan *c, const char **out, size_t *len);
/* A number (the cursor at its first byte). *whole: it is a non-negative
 * integer that fits 64 bits, its value in *v. Either may be NULL. */
int json_scan_number(FsJsonScan *c, int *whole, uint64_t *v);
/* One whole value of any kind, at nesting depth depth (the root is 0),
 * checked and stepped over; strings are decoded and dropped. */
int json_scan_skip(FsJsonScan *c, int depth);

/* ---------------------------------------------------------------------- */
/* Reading a document (parse.c): one allocation of nodes, one of text      */

typedef enum {
    FS_JSON_NULL = 0,
    FS_JSON_FALSE,
    FS_JSON_TRUE,
    FS_JSON_NUMBER,
    FS_JSON_STRING,
    FS_JSON_ARRAY,
    FS_JSON_OBJECT
} FsJsonType;

typedef struct FsJson {
    FsJsonType type;
    const char *key; /* member name when the parent is an object */
    const char *str; /* decoded string, or a number's text (NUL-terminated) */
    size_t len;      /* bytes in str (a string may hold \u0000) */
    int n;           /* children of an array or object */
    struct FsJson *child, *next;
    size_t off, end; /* the value's bytes in the source text */
} FsJson;

typedef struct {
    FsJson *nodes;
    char *text;
    int n_nodes;
    FsJson *root;
} FsJsonDoc;

/* Parses text[0..n) as one JSON value (surrounding whitespace allowed).
 * Returns 0, or -1 with "column C: expected ..." in why (NULL allowed). */
int json_parse(FsJsonDoc *doc, const char *text, size_t n, char *why, size_t why_n);
void json_free(FsJsonDoc *doc);
/* Member of an object (the first of that name) / element of an array, or NULL. */
const FsJson *json_get(const FsJson *obj, const char *key);
const FsJson *json_at(const FsJson *arr, int i);
/* Typed reads: 0, or -1 if the value is absent or not of that type/range.
 * Floats read the number text with strtof / strtod (so every number the
 * writer wrote reads back as the same bits); the strings "nan", "inf" and
 * "-inf" (FS_JSON_NONFINITE_NAME) are accepted for them. */
int json_i64(const FsJson *v, long long *out);
int json_u64(const FsJson *v, uint64_t *out);
int json_f64(const FsJson *v, double *out);
int json_f32(const FsJson *v, float *out);
/* The value re-written as compact JSON (numbers as written, strings
 * re-escaped by the writer), malloc'd. */
char *json_compact(const FsJson *v);

/* ---------------------------------------------------------------------- */
/* Writing (write.c)                                                        */

/* What the writer does with a number that is not finite (JSON has none). */
typedef enum {
    FS_JSON_NONFINITE_REFUSE = 0, /* an error (json_out_error); null is written in its place */
    FS_JSON_NONFINITE_NULL,       /* null: "no value" (leaderboard, evaluations, exports) */
    FS_JSON_NONFINITE_NAME        /* the string "nan", "inf" or "-inf", read back by json_f64 / json_f32 */
} FsJsonNonFinite;

/* A JSON text being built. Zero-initialised it writes compact JSON and
 * refuses non-finite numbers; set the fields below before the first value
 * for another form. Separators are the writer's: a caller writes keys and
 * values, never a comma. p holds the text (NUL-terminated, n bytes,
 * malloc'd: json_out_free). */
typedef struct {
    char *p;
    size_t n, cap;
    FsJsonNonFinite nonfinite;
    /* Containers at depth 1..pretty put each item on a line of its own,
     * indented two spaces per level, and their closing bracket on the next
     * (0: all on one line). spaced: ": " after a key and ", " between the
     * items of a one-line container (Python's json.dumps), else ":" and ",". */
    int pretty, spaced;
    /* The writer's own state. */
    int depth, keyed, done;
    char kind[FS_JSON_MAX_DEPTH + 2]; /* '{' or '[' of each open container (1..depth) */
    char any[FS_JSON_MAX_DEPTH + 2];  /* it has an item already */
    const char *error;                /* the first misuse or refused value, else NULL */
} FsJsonOut;

void json_object_begin(FsJsonOut *w);
void json_array_begin(FsJsonOut *w);
/* Closes the innermost open object or array. */
void json_end(FsJsonOut *w);
/* A member's name, in an object; its value comes next. */
void json_key(FsJsonOut *w, const char *key);

/* Values. A string is escaped the one way: '"' and '\' with a backslash,
 * control characters as \u00xx, every other byte (UTF-8 included) as it is. */
void json_str(FsJsonOut *w, const char *s);
void json_strn(FsJsonOut *w, const char *s, size_t n);
/* printf into a string value (hex checksums, fingerprints). */
void json_strf(FsJsonOut *w, const char *fmt, ...) FS_PRINTF(2, 3);
void json_int(FsJsonOut *w, long long v);
void json_uint(FsJsonOut *w, unsigned long long v);
void json_bool(FsJsonOut *w, int v);
void json_null(FsJsonOut *w);
/* Numbers, each spelled one way (non-finite ones per w->nonfinite):
 * json_num32 / json_num64: the shortest text that strtof / strtod read back
 *   as the same value (fs_format_float, fs_format_double): 0.3f is "0.3".
 * json_num32_full / json_num64_full: every digit a float / double can need
 *   (%.9g, %.17g), as the journal and the leaderboard have always written
 *   them; they read back as the same value too.
 * json_fixed: a fixed number of decimals (timings: rounding meant). */
void json_num32(FsJsonOut *w, float v);
void json_num64(FsJsonOut *w, double v);
void json_num32_full(FsJsonOut *w, float v);
void json_num64_full(FsJsonOut *w, double v);
void json_fixed(FsJsonOut *w, double v, int decimals);
/* A member in one call (json_key, then the value), for the common kinds. */
void json_member_str(FsJsonOut *w, const char *key, const char *s);
void json_member_int(FsJsonOut *w, const char *key, long long v);
void json_member_uint(FsJsonOut *w, const char *key, unsigned long long v);
/* A value that is JSON text already (a trial's config), written as it is;
 * text that is not one JSON value the reader would take on its own is
 * refused (an error, null written). */
void json_raw(FsJsonOut *w, const char *json);

/* Bytes after the root value (a newline, padding): only once it is whole. */
void json_tail(FsJsonOut *w, const char *s);
/* The first misuse (a key outside an object, a value without its key, too
 * deep, json_tail before the root is whole) or refused value; else, while
 * the root value is not whole yet, that; else NULL: p is one JSON value. */
const char *json_out_error(const FsJsonOut *w);
void json_out_free(FsJsonOut *w);

#endif
