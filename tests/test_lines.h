/*
 * test_lines.h: journal lines as docs/reliability.md ("The journal's
 * lines") describes them, written here apart from src/journal/frame.c, so
 * that tests which build, edit or age lines check the code against the
 * documented form rather than against itself.
 *
 *   current: {...record...,"crc":"XXXXXXXX"}   XXXXXXXX = CRC-32 of the bytes
 *            before ,"crc": (the object without its closing brace)
 *   earlier builds: {...record...} #XXXXXXXX   CRC-32 of the object
 *
 * Uses util (fs_crc32): tests link with the core library.
 */
#ifndef FS_TEST_LINES_H
#define FS_TEST_LINES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define TL_TAIL_N 18 /* ,"crc":"XXXXXXXX"} */
#define TL_OLD_TAIL_N 10 /* " #XXXXXXXX" */

/* The record object json (n bytes, a '{'...'}' without "crc") as a
 * current line with its newline; malloc'd. */
static inline char *tl_line(const char *json, size_t n)
{
    char *s = malloc(n + TL_TAIL_N + 2);
    size_t body = n - 1; /* without the closing brace */
    memcpy(s, json, body);
    sprintf(s + body, ",\"crc\":\"%08x\"}\n", (unsigned)fs_crc32(json, body, 0));
    return s;
}

/* The same object as an earlier build wrote it: "JSON #crc\n"; malloc'd. */
static inline char *tl_old_line(const char *json, size_t n)
{
    char *s = malloc(n + TL_OLD_TAIL_N + 2);
    memcpy(s, json, n);
    sprintf(s + n, " #%08x\n", (unsigned)fs_crc32(json, n, 0));
    return s;
}

/* 1 if line (n bytes, no newline) ends as a current line does, 2 as an
 * earlier build's, 0 neither (the checksum itself is not checked). */
static inline int tl_form(const char *line, size_t n)
{
    if (n > TL_TAIL_N && !memcmp(line + n - TL_TAIL_N, ",\"crc\":\"", 8) && !memcmp(line + n - 2, "\"}", 2)) return 1;
    if (n > TL_OLD_TAIL_N && line[n - TL_OLD_TAIL_N] == ' ' && line[n - TL_OLD_TAIL_N + 1] == '#') return 2;
    return 0;
}

/* The record object of a line in either form (n bytes, no newline),
 * without its checksum; malloc'd, NUL-terminated; NULL if neither form. */
static inline char *tl_json(const char *line, size_t n)
{
    int form = tl_form(line, n);
    if (!form) return NULL;
    size_t body = form == 1 ? n - TL_TAIL_N : n - TL_OLD_TAIL_N;
    char *s = malloc(body + 2);
    memcpy(s, line, body);
    if (form == 1) s[body++] = '}';
    s[body] = '\0';
    return s;
}

/* Every line of text rewritten by each: to_old 1, as an earlier build
 * wrote it; 0, in the current form (lines in neither form are kept as
 * they are). malloc'd. */
static inline char *tl_convert(const char *text, int to_old)
{
    size_t cap = strlen(text) * 2 + 64, k = 0;
    char *out = malloc(cap);
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *json = tl_json(line, len);
        char *l = json ? (to_old ? tl_old_line(json, strlen(json)) : tl_line(json, strlen(json))) : NULL;
        if (l) {
            k += (size_t)snprintf(out + k, cap - k, "%s", l);
        } else {
            memcpy(out + k, line, len);
            k += len;
            if (nl) out[k++] = '\n';
        }
        free(json);
        free(l);
        line = nl ? nl + 1 : line + len;
    }
    out[k] = '\0';
    return out;
}

#endif
