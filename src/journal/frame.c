/*
 * frame.c: a journal line's checksum, the one place that knows the line's
 * form.
 *
 * A line is one JSON object (so every line is JSON Lines: jq, pandas'
 * read_json(lines=True) and any JSON parser read it) whose last member is
 * "crc", the CRC-32 (IEEE 802.3, fs_crc32) of every byte of the line before
 * that member's comma, as 8 lowercase hex digits:
 *
 *   {"v":1,"kind":"prune","time":1700000000.5,"trial":"aa","crc":"d7b29bac"}
 *   |<--------------- checksummed bytes ---------------->|
 *
 * The tail after the checksummed bytes is fixed byte for byte:
 * ,"crc":"XXXXXXXX"} and the newline, 18 bytes and '\n', no spaces. So the
 * check is exact: a line is sound iff it ends with that tail and the CRC of
 * the bytes before it is XXXXXXXX. A changed byte before the tail fails the
 * CRC; a changed byte in the tail breaks its form (or its digits no longer
 * match); a line reformatted by a JSON tool (spaces after ':' or ',', keys
 * reordered) is no longer the bytes that were checksummed, and is refused
 * like any edited line. The checksummed bytes are the record's JSON without
 * its closing brace, so the CRC is not over text that was never written.
 *
 * Builds before this form wrote "JSON #XXXXXXXX": the object, a space, '#'
 * and the CRC-32 of the object's bytes. Such lines are still read, in the
 * same file as the current form (a run of an older build resumed by this
 * one); nothing rewrites them.
 */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>

#include "journal/journal_internal.h"

/* ---------------------------------------------------------------------- */
/* The checksum                                                             */

/* The tail of a current line, before its 8 digits and after them. */
#define TAIL_HEAD ",\"crc\":\""
#define TAIL_END "\"}"
enum {
    HEAD_N = sizeof TAIL_HEAD - 1,
    END_N = sizeof TAIL_END - 1,
    TAIL_N = HEAD_N + 8 + END_N, /* ,"crc":"XXXXXXXX"} */
    OLD_TAIL_N = 10              /* " #XXXXXXXX" */
};

void journal_frame(FsJsonOut *w)
{
    /* The record's object is open with its members written (the writer
     * writes the comma with the next key): the checksummed bytes. */
    FS_ASSERT(w->depth == 1 && w->any[1] && !w->keyed && !w->pretty && !w->spaced);
    uint32_t crc = fs_crc32(w->p, w->n, 0);
    json_key(w, "crc");
    json_strf(w, "%08x", (unsigned)crc);
    json_end(w);
    json_tail(w, "\n");
    /* The writer's own form of the tail, which the reader checks byte for byte. */
    FS_ASSERT(w->n > TAIL_N + 1 && !memcmp(w->p + w->n - 1 - TAIL_N, TAIL_HEAD, HEAD_N));
}

/* 8 lowercase hex digits at s into *out: 0, or -1. */
static int hex8(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        char c = s[i];
        int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (h < 0) return -1;
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return 0;
}

static int mismatch(uint32_t want, uint32_t got, char *why, size_t why_n)
{
    snprintf(why, why_n, "checksum mismatch (record says %08x, content gives %08x)", (unsigned)want, (unsigned)got);
    return LINE_CORRUPT;
}

/* Where a line that is not in either form went wrong, for the message. */
static int no_frame(const char *s, size_t n, char *why, size_t why_n)
{
    static const char form[] = "the record's last member \"crc\":\"<CRC-32 of the bytes before its comma, 8 "
                               "lowercase hex digits>\", written as ,\"crc\":\"XXXXXXXX\"} with no spaces";
    const char *at = NULL;
    for (size_t i = 0; i + HEAD_N <= n; i++)
        if (!memcmp(s + i, TAIL_HEAD, HEAD_N)) at = s + i; /* the last one */
    if (at && (size_t)(s + n - at) == TAIL_N && s[n - 2] == '"' && s[n - 1] == '}')
        snprintf(why, why_n, "expected 8 lowercase hex digits in the \"crc\" member, not \"%.8s\"", at + HEAD_N);
    else if (at || memmem(s, n, "\"crc\"", 5))
        snprintf(why, why_n, "expected %s (the \"crc\" member is not in that form, or not last)", form);
    else
        snprintf(why, why_n, "expected %s (the line has no \"crc\" member: torn, or not a record)", form);
    return LINE_CORRUPT;
}

int journal_unframe(const char *s, size_t n, size_t *json_n, char *why, size_t why_n)
{
    uint32_t want;
    if (n > TAIL_N && !memcmp(s + n - TAIL_N, TAIL_HEAD, HEAD_N) && !memcmp(s + n - END_N, TAIL_END, END_N) &&
        hex8(s + n - TAIL_N + HEAD_N, &want) == 0) {
        uint32_t got = fs_crc32(s, n - TAIL_N, 0);
        if (got != want) return mismatch(want, got, why, why_n);
        *json_n = n; /* the whole line is the object; readers skip "crc" */
        return LINE_OK;
    }
    if (n > OLD_TAIL_N + 1 && s[n - OLD_TAIL_N] == ' ' && s[n - OLD_TAIL_N + 1] == '#') {
        if (hex8(s + n - 8, &want) != 0) {
            snprintf(why, why_n, "expected 8 lowercase hex digits of CRC-32 after '#' (a line of an earlier foldsweep)");
            return LINE_CORRUPT;
        }
        uint32_t got = fs_crc32(s, n - OLD_TAIL_N, 0);
        if (got != want) return mismatch(want, got, why, why_n);
        *json_n = n - OLD_TAIL_N;
        return LINE_OK;
    }
    return no_frame(s, n, why, why_n);
}
