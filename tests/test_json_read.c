/*
 * test_json_read.c: the json module's reader (src/json/scan.c, parse.c):
 * 3,000 random documents in random layouts (strings of control
 * characters, quotes and non-UTF-8 bytes, any finite double) written and
 * read back, their compact form a fixed point; the scanner alone (what
 * safetensors' header reader uses): numbers and their 64-bit whole value,
 * skipping a value, and every failure named with its column, the same
 * from the document reader. The writer's side: test_json.c.
 */
#include <stdint.h>

#include "json/json.h"
#include "test.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* ---------------------------------------------------------------------- */
/* Random documents: written, read back, compared; compact is a fixed point */

static void random_string(char *s, size_t *n)
{
    *n = next() % 12;
    for (size_t i = 0; i < *n; i++) {
        unsigned r = (unsigned)(next() % 6);
        s[i] = r == 0 ? (char)(next() % 32) : r == 1 ? "\"\\/"[next() % 3] : r == 2 ? (char)(0x80 + next() % 64)
                                                                                     : (char)('a' + next() % 26);
    }
}

/* A random value into w (nesting at most 6 deep). Replaying the generator
 * from the same state writes the same values again (in another layout). */
static void gen(FsJsonOut *w, int depth)
{
    unsigned kind = depth >= 6 ? (unsigned)(next() % 5) : (unsigned)(next() % 7);
    char s[16];
    size_t n;
    switch (kind) {
    case 0: json_null(w); break;
    case 1: json_bool(w, (int)(next() % 2)); break;
    case 2: json_int(w, (long long)next()); break;
    case 3: {
        uint64_t b = next();
        double d;
        memcpy(&d, &b, sizeof d);
        json_num64(w, isfinite(d) ? d : 0.5);
        break;
    }
    case 4:
        random_string(s, &n);
        json_strn(w, s, n);
        break;
    case 5:
    case 6: {
        int k = (int)(next() % 4);
        kind == 5 ? json_array_begin(w) : json_object_begin(w);
        for (int i = 0; i < k; i++) {
            if (kind == 6) {
                random_string(s, &n);
                s[n] = 0;
                json_key(w, s);
            }
            gen(w, depth + 1);
        }
        json_end(w);
        break;
    }
    }
}

/* Random documents in random layouts read back: their compact form is
 * what a compact writer writes of the same values, and a fixed point. */
static void test_random_documents(void)
{
    for (int i = 0; i < 3000; i++) {
        uint64_t seed = rng;
        FsJsonOut w = {.pretty = (int)(next() % 3), .spaced = (int)(next() % 2)};
        gen(&w, 0);
        CHECK(json_out_error(&w) == NULL);
        FsJsonDoc d;
        char why[160] = "";
        int rc = json_parse(&d, w.p, w.n, why, sizeof why);
        CHECK_MSG(rc == 0, "%s: %s", why, w.p);
        if (rc == 0) {
            /* Compacting what was read gives what a compact writer writes
             * from the same values, and is a fixed point. */
            char *c1 = json_compact(d.root);
            uint64_t after = rng;
            rng = seed;
            (void)next(), (void)next(); /* the style's draws */
            FsJsonOut plain = {0};
            gen(&plain, 0);
            rng = after;
            CHECK_MSG(!strcmp(c1, plain.p), "%s\nvs\n%s", c1, plain.p);
            FsJsonDoc d2;
            CHECK(json_parse(&d2, c1, strlen(c1), NULL, 0) == 0);
            char *c2 = json_compact(d2.root);
            CHECK(!strcmp(c1, c2));
            free(c1), free(c2);
            json_free(&d2);
            json_out_free(&plain);
            json_free(&d);
        }
        json_out_free(&w);
    }
}

/* ---------------------------------------------------------------------- */
/* The scanner alone (safetensors' header reader uses nothing else)        */

static void test_scanner(void)
{
    const char *t = "  18446744073709551615 18446744073709551616 -1 2.0 3e2 0";
    FsJsonScan c = {.s = t, .n = strlen(t)};
    const struct {
        int whole;
        uint64_t v;
    } want[] = {{1, UINT64_MAX}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {1, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int whole = -1;
        uint64_t v = 7;
        CHECK(json_scan_peek(&c) != 0 && json_scan_number(&c, &whole, &v) == 0);
        CHECK_MSG(whole == want[i].whole && (!whole || v == want[i].v), "number %zu", i);
    }
    CHECK(json_scan_peek(&c) == 0);

    /* Bad escapes and strings, each named with its column. */
    const struct {
        const char *text, *why;
    } badstr[] = {
        {"\"\\ud83d\"", "column 8: expected a low surrogate"},
        {"\"\\ude00\"", "column 8: expected a high surrogate before a low one"},
        {"\"\\u12g4\"", "expected 4 hex digits after \\u"},
        {"\"\\x\"", "column 3: expected one of"},
        {"\"a\tb\"", "column 3: expected no control characters in a string"},
        {"\"abc", "column 5: expected '\"' to close the string"},
    };
    FsJsonDoc d;
    for (size_t i = 0; i < sizeof badstr / sizeof badstr[0]; i++) {
        char why[160] = "";
        CHECK(json_parse(&d, badstr[i].text, strlen(badstr[i].text), why, sizeof why) == -1);
        CHECK_CONTAINS(why, badstr[i].why);
    }

    /* Skipping a value keeps nothing and needs no buffer. */
    const char *doc = "{\"a\": [1, {\"b\": \"\\u00e9\"}, null], \"c\": true} tail";
    c = (FsJsonScan){.s = doc, .n = strlen(doc)};
    CHECK(json_scan_skip(&c, 0) == 0 && json_scan_peek(&c) == 't');
    CHECK(json_scan_expect(&c, 't', "t") == 0 && c.i == strlen(doc) - 3);

    /* Failures name the column; the first one stays. */
    const struct {
        const char *text, *why;
    } bad[] = {
        {"[1,]", "column 4: expected a value"},
        {"{\"a\" 1}", "column 6: expected ':' after the member name"},
        {"{1:2}", "column 2: expected a member name in quotes"},
        {"[1 2]", "column 4: expected ',' or ']'"},
        {"-", "column 2: expected a digit"},
        {"1.", "column 3: expected a digit after '.'"},
        {"1e+", "column 4: expected a digit in the exponent"},
        {"tru", "column 1: expected true, false or null"},
        {"[nul]", "column 2: expected true, false or null"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[160] = "";
        c = (FsJsonScan){.s = bad[i].text, .n = strlen(bad[i].text), .why = why, .why_n = sizeof why};
        CHECK(json_scan_skip(&c, 0) == -1);
        CHECK_CONTAINS(why, bad[i].why);
        char why2[160] = "";
        CHECK(json_parse(&d, bad[i].text, strlen(bad[i].text), why2, sizeof why2) == -1);
        CHECK_CONTAINS(why2, bad[i].why); /* the document reader says the same */
    }
    char why[160] = "";
    CHECK(json_parse(&d, "{} x", 4, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "column 4: expected the end of the text after the value");
}

int main(void)
{
    test_random_documents();
    test_scanner();
    return test_finish();
}
