/*
 * scan.c: JSON's grammar (RFC 8259), one token at a time. The document
 * reader (parse.c) and safetensors' header reader both walk text with it,
 * so a string's escapes, a number's form and the nesting limit are
 * checked the same way everywhere. Fed torn journal lines and hostile
 * model files: every byte is checked against the text's length, every
 * failure is a return value with the column, never a crash; nesting is
 * limited so that recursion cannot exhaust the stack.
 */
#include <string.h>

#include "json/json.h"

int json_scan_fail(FsJsonScan *c, const char *what)
{
    if (c->why && c->why_n && !c->why[0]) snprintf(c->why, c->why_n, "column %zu: expected %s", c->i + 1, what);
    return -1;
}

char json_scan_peek(FsJsonScan *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
    return c->i < c->n ? c->s[c->i] : 0;
}

int json_scan_expect(FsJsonScan *c, char ch, const char *what)
{
    if (json_scan_peek(c) != ch) return json_scan_fail(c, what);
    c->i++;
    return 0;
}

/* Four hex digits (after "\u"). */
static int hex4(FsJsonScan *c, unsigned *out)
{
    if (c->n - c->i < 4) return -1;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int d = fs_hex_digit(c->s[c->i + (size_t)k]);
        if (d < 0) return -1;
        v = v << 4 | (unsigned)d;
    }
    c->i += 4;
    *out = v;
    return 0;
}

/* A code point as UTF-8 into the text buffer (if any). */
static void put_utf8(FsJsonScan *c, unsigned ch)
{
    if (!c->text) return;
    char *o = c->text + c->t;
    int k = ch < 0x80 ? 1 : ch < 0x800 ? 2 : ch < 0x10000 ? 3 : 4;
    static const unsigned char lead[5] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (int j = k - 1; j > 0; j--, ch >>= 6) o[j] = (char)(0x80 | (ch & 0x3f));
    o[0] = (char)(lead[k] | ch);
    c->t += (size_t)k;
}

/* After "\u": one code point, a surrogate pair joined. */
static int unicode_escape(FsJsonScan *c)
{
    unsigned c1, c2;
    if (hex4(c, &c1)) return json_scan_fail(c, "4 hex digits after \\u");
    if (c1 >= 0xdc00 && c1 <= 0xdfff) return json_scan_fail(c, "a high surrogate before a low one");
    if (c1 >= 0xd800 && c1 <= 0xdbff) {
        if (c->n - c->i < 2 || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u')
            return json_scan_fail(c, "a low surrogate \\uDC00..\\uDFFF");
        c->i += 2;
        if (hex4(c, &c2) || c2 < 0xdc00 || c2 > 0xdfff) return json_scan_fail(c, "a low surrogate \\uDC00..\\uDFFF");
        c1 = 0x10000 + ((c1 - 0xd800) << 10) + (c2 - 0xdc00);
    }
    put_utf8(c, c1);
    return 0;
}

int json_scan_string(FsJsonScan *c, const char **out, size_t *len)
{
    static const char ESC_IN[] = "\"\\/bfnrt", ESC_OUT[] = "\"\\/\b\f\n\r\t";
    size_t start = c->t;
    if (json_scan_expect(c, '"', "a string")) return -1;
    for (;;) {
        if (c->i >= c->n) return json_scan_fail(c, "'\"' to close the string");
        unsigned char ch = (unsigned char)c->s[c->i];
        if (ch == '"') {
            c->i++;
            break;
        }
        if (ch < 0x20) return json_scan_fail(c, "no control characters in a string");
        c->i++;
        if (ch != '\\') {
            if (c->text) c->text[c->t++] = (char)ch;
            continue;
        }
        if (c->i >= c->n) return json_scan_fail(c, "an escape after '\\'");
        char e = c->s[c->i++];
        const char *at = e ? strchr(ESC_IN, e) : NULL;
        if (at)
            put_utf8(c, (unsigned char)ESC_OUT[at - ESC_IN]);
        else if (e != 'u')
            return c->i--, json_scan_fail(c, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
        else if (unicode_escape(c))
            return -1;
    }
    if (c->text) {
        if (len) *len = c->t - start;
        c->text[c->t++] = '\0';
        if (out) *out = c->text + start;
    }
    return 0;
}

static int is_digit(const FsJsonScan *c) { return c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9'; }

int json_scan_number(FsJsonScan *c, int *whole, uint64_t *v)
{
    int neg = c->i < c->n && c->s[c->i] == '-', over = 0, w;
    uint64_t x = 0;
    if (neg) c->i++;
    if (!is_digit(c)) return json_scan_fail(c, "a digit");
    if (c->s[c->i] == '0')
        c->i++;
    else
        for (; is_digit(c); c->i++) {
            unsigned d = (unsigned)(c->s[c->i] - '0');
            if (x > (UINT64_MAX - d) / 10)
                over = 1;
            else
                x = x * 10 + d;
        }
    w = !neg && !over;
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++, w = 0;
        if (!is_digit(c)) return json_scan_fail(c, "a digit after '.'");
        while (is_digit(c)) c->i++;
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++, w = 0;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (!is_digit(c)) return json_scan_fail(c, "a digit in the exponent");
        while (is_digit(c)) c->i++;
    }
    if (whole) *whole = w;
    if (v) *v = x;
    return 0;
}

static int literal(FsJsonScan *c)
{
    const char *word = c->s[c->i] == 't' ? "true" : c->s[c->i] == 'f' ? "false" : "null";
    size_t k = strlen(word);
    if (c->n - c->i < k || memcmp(c->s + c->i, word, k) != 0) return json_scan_fail(c, "true, false or null");
    c->i += k;
    return 0;
}

/* At '[' or '{': the members up to its closing bracket. */
static int skip_container(FsJsonScan *c, int depth)
{
    int object = c->s[c->i] == '{';
    char close = object ? '}' : ']';
    c->i++;
    if (json_scan_peek(c) == close) return c->i++, 0;
    for (;;) {
        size_t mark = c->t;
        if (object && json_scan_peek(c) != '"') return json_scan_fail(c, "a member name in quotes");
        if (object && (json_scan_string(c, NULL, NULL) || json_scan_expect(c, ':', "':' after the member name")))
            return -1;
        c->t = mark;
        if (json_scan_skip(c, depth + 1)) return -1;
        char next = json_scan_peek(c);
        if (next == close) return c->i++, 0;
        if (next != ',') return json_scan_fail(c, object ? "',' or '}'" : "',' or ']'");
        c->i++;
    }
}

int json_scan_skip(FsJsonScan *c, int depth)
{
    if (depth > FS_JSON_MAX_DEPTH) return json_scan_fail(c, "nesting no deeper than 64");
    size_t mark = c->t;
    int rc;
    switch (json_scan_peek(c)) {
    case '{':
    case '[': return skip_container(c, depth);
    case '"':
        rc = json_scan_string(c, NULL, NULL);
        c->t = mark;
        return rc;
    case 't':
    case 'f':
    case 'n': return literal(c);
    case '-': return json_scan_number(c, NULL, NULL);
    default: return is_digit(c) ? json_scan_number(c, NULL, NULL) : json_scan_fail(c, "a value");
    }
}
