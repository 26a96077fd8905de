/*
 * test_json.c: the json module (src/json), the one reader and writer.
 * Numbers: every float and double spelling reads back as the same bits
 * (subnormals, extremes, -0 and random bit patterns), the shortest form is
 * the config form (0.3f is "0.3"), non-finite numbers are refused, null or
 * named as the writer is told. Strings: the one escape (control characters
 * \u00xx, quote and backslash), UTF-8 as it is, \u escapes and surrogate
 * pairs decoded. Structure: separators, the pretty forms the leaderboard
 * and exports use, nesting to the limit and not past it, every misuse
 * recorded; random documents written and read back equal. The scanner
 * alone: numbers, skipping, columns in its messages.
 */
#include <float.h>
#include <stdint.h>

#include "json/json.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* ---------------------------------------------------------------------- */
/* Numbers                                                                  */

/* w's text parsed, its root's value read as float / double. */
static int read_f32(const FsJsonOut *w, float *out)
{
    FsJsonDoc d;
    if (json_parse(&d, w->p, w->n, NULL, 0)) return -1;
    int rc = json_f32(d.root, out);
    json_free(&d);
    return rc;
}

static int read_f64(const FsJsonOut *w, double *out)
{
    FsJsonDoc d;
    if (json_parse(&d, w->p, w->n, NULL, 0)) return -1;
    int rc = json_f64(d.root, out);
    json_free(&d);
    return rc;
}

static void f32_round_trip(float v)
{
    for (int full = 0; full < 2; full++) {
        FsJsonOut w = {0};
        full ? json_num32_full(&w, v) : json_num32(&w, v);
        float back = 0;
        CHECK_MSG(!json_out_error(&w) && read_f32(&w, &back) == 0 && memcmp(&back, &v, sizeof v) == 0,
                  "%s of %a wrote \"%s\", read back %a", full ? "json_num32_full" : "json_num32", (double)v, w.p,
                  (double)back);
        json_out_free(&w);
    }
}

static void f64_round_trip(double v)
{
    for (int full = 0; full < 2; full++) {
        FsJsonOut w = {0};
        full ? json_num64_full(&w, v) : json_num64(&w, v);
        double back = 0;
        CHECK_MSG(!json_out_error(&w) && read_f64(&w, &back) == 0 && memcmp(&back, &v, sizeof v) == 0,
                  "%s of %a wrote \"%s\", read back %a", full ? "json_num64_full" : "json_num64", v, w.p, back);
        json_out_free(&w);
    }
}

/* The text one writer call wrote (the writer is w_), " (error)" added
 * if the writer recorded one. */
static FsJsonOut w_;
static const char *text_of(void)
{
    static char t[400];
    snprintf(t, sizeof t, "%s%s", w_.p ? w_.p : "", json_out_error(&w_) ? " (error)" : "");
    json_out_free(&w_);
    return t;
}
#define TEXT_OF(call) (w_ = (FsJsonOut){0}, (call), text_of())

static void test_numbers(void)
{
    const float fs[] = {0.0f, -0.0f, 0.3f, 1.0f / 3, 1e-45f /* the least subnormal */, 1.17549421e-38f /* the
                        greatest */, FLT_MIN, FLT_MAX, -FLT_MAX, 16777217.0f, 1e10f, 123456.789f, 2.5e-8f};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) f32_round_trip(fs[i]);
    const double ds[] = {0.0, -0.0, 0.1, 1.0 / 3, 4.9406564584124654e-324 /* least subnormal */,
                         2.2250738585072009e-308 /* greatest subnormal */, DBL_MIN, DBL_MAX, -DBL_MAX,
                         9007199254740993.0, 1700000000.5123456, 5e-324 * 3};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) f64_round_trip(ds[i]);
    /* Random bit patterns: every finite float and double, subnormals included. */
    for (int i = 0; i < 20000; i++) {
        uint64_t b = next();
        uint32_t b32 = (uint32_t)b;
        float f;
        double d;
        memcpy(&f, &b32, sizeof f);
        memcpy(&d, &b, sizeof d);
        if (isfinite(f)) f32_round_trip(f);
        if (isfinite(d)) f64_round_trip(d);
        if (i % 4 == 0) { /* small exponents: subnormals */
            b32 &= 0x807fffffu;
            b &= 0x800fffffffffffffull;
            memcpy(&f, &b32, sizeof f);
            memcpy(&d, &b, sizeof d);
            f32_round_trip(f);
            f64_round_trip(d);
        }
    }

    /* The shortest form is the config form (fs_format_float) and the
     * user's number; the full form is what the journal always wrote. */
    CHECK(!strcmp(TEXT_OF(json_num32(&w_, 0.3f)), "0.3"));
    CHECK(!strcmp(TEXT_OF(json_num32(&w_, 1e-45f)), "1e-45"));
    CHECK(!strcmp(TEXT_OF(json_num32_full(&w_, 0.3f)), "0.300000012"));
    CHECK(!strcmp(TEXT_OF(json_num64(&w_, 0.1)), "0.1"));
    CHECK(!strcmp(TEXT_OF(json_num64(&w_, 0.95)), "0.95"));
    CHECK(!strcmp(TEXT_OF(json_num64(&w_, 1.0 / 3)), "0.3333333333333333"));
    CHECK(!strcmp(TEXT_OF(json_num64(&w_, 4.9406564584124654e-324)), "5e-324"));
    CHECK(!strcmp(TEXT_OF(json_num64_full(&w_, 0.1)), "0.10000000000000001"));
    CHECK(!strcmp(TEXT_OF(json_num64(&w_, -0.0)), "-0"));
    CHECK(!strcmp(TEXT_OF(json_fixed(&w_, 2.0 / 3, 3)), "0.667"));
    CHECK(!strcmp(TEXT_OF(json_fixed(&w_, 12345.678, 0)), "12346"));
    CHECK(!strcmp(TEXT_OF(json_int(&w_, -9223372036854775807LL - 1)), "-9223372036854775808"));
    CHECK(!strcmp(TEXT_OF(json_uint(&w_, 18446744073709551615ull)), "18446744073709551615"));
    char buf[FS_FLOAT_TEXT];
    for (int i = 0; i < 1000; i++) {
        uint32_t b = (uint32_t)next();
        float f;
        memcpy(&f, &b, sizeof f);
        if (isfinite(f)) CHECK(!strcmp(TEXT_OF(json_num32(&w_, f)), fs_format_float(buf, sizeof buf, f)));
    }

    /* Non-finite: refused by default (null keeps the text JSON), null or
     * the names the reader reads back when asked. */
    const double bad[] = {NAN, INFINITY, -INFINITY};
    const char *names[] = {"\"nan\"", "\"inf\"", "\"-inf\""};
    for (int i = 0; i < 3; i++) {
        FsJsonOut w = {0};
        json_num64(&w, bad[i]);
        CHECK(json_out_error(&w) != NULL);
        CHECK_CONTAINS(json_out_error(&w), "not finite");
        CHECK(!strcmp(w.p, "null"));
        json_out_free(&w);
        w = (FsJsonOut){0};
        json_num32_full(&w, (float)bad[i]);
        CHECK(json_out_error(&w) != NULL);
        json_out_free(&w);
        w = (FsJsonOut){0};
        json_fixed(&w, bad[i], 1);
        CHECK(json_out_error(&w) != NULL && !strcmp(w.p, "null"));
        json_out_free(&w);

        w = (FsJsonOut){.nonfinite = FS_JSON_NONFINITE_NULL};
        json_num64_full(&w, bad[i]);
        CHECK(json_out_error(&w) == NULL && !strcmp(w.p, "null"));
        json_out_free(&w);

        w = (FsJsonOut){.nonfinite = FS_JSON_NONFINITE_NAME};
        json_num32(&w, (float)bad[i]);
        CHECK_MSG(json_out_error(&w) == NULL && !strcmp(w.p, names[i]), "%s", w.p);
        double d = 0;
        float f = 0;
        CHECK(read_f64(&w, &d) == 0 && read_f32(&w, &f) == 0);
        CHECK(i == 0 ? isnan(d) && isnan(f) : d == bad[i] && f == (float)bad[i]);
        json_out_free(&w);
    }
}

/* ---------------------------------------------------------------------- */
/* Strings                                                                  */

static void test_strings(void)
{
    /* Every control character as \u00xx, quote and backslash escaped,
     * everything else (DEL, UTF-8) as it is. */
    char all[128];
    for (int i = 1; i < 128; i++) all[i - 1] = (char)i;
    all[127] = 0;
    FsJsonOut w = {0};
    json_str(&w, all);
    CHECK(json_out_error(&w) == NULL);
    CHECK(!strncmp(w.p, "\"\\u0001\\u0002", 13));
    CHECK(strstr(w.p, "\\u0009\\u000a\\u000b\\u000c\\u000d") != NULL);
    CHECK(strstr(w.p, "\\u001f !\\\"#") != NULL);
    CHECK(strstr(w.p, "[\\\\]") != NULL);
    CHECK(strstr(w.p, "}~\x7f\"") != NULL);
    FsJsonDoc d;
    CHECK(json_parse(&d, w.p, w.n, NULL, 0) == 0);
    CHECK(d.root->type == FS_JSON_STRING && d.root->len == 127 && !memcmp(d.root->str, all, 127));
    json_free(&d);
    json_out_free(&w);

    /* Non-ASCII: UTF-8 bytes written as they are, read back the same. */
    const char *utf8 = "h\xc3\xa9lix \xe2\x86\x92 \xf0\x9f\x98\x80 \xce\xb2-strand";
    w = (FsJsonOut){0};
    json_str(&w, utf8);
    CHECK(w.n == strlen(utf8) + 2 && !memcmp(w.p + 1, utf8, strlen(utf8)));
    CHECK(json_parse(&d, w.p, w.n, NULL, 0) == 0 && !strcmp(d.root->str, utf8));
    json_free(&d);
    json_out_free(&w);

    /* \u escapes, a surrogate pair and \u0000 decoded; json_strn writes a
     * NUL back as \u0000. */
    const char *esc = "\"\\u00e9\\u2192\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\u0000x\"";
    CHECK(json_parse(&d, esc, strlen(esc), NULL, 0) == 0);
    const char want[] = "\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80/\b\f\n\r\t\0x";
    CHECK(d.root->len == sizeof want - 1 && !memcmp(d.root->str, want, sizeof want - 1));
    w = (FsJsonOut){0};
    json_strn(&w, d.root->str, d.root->len);
    CHECK(!strcmp(w.p, "\"\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80/\\u0008\\u000c\\u000a\\u000d\\u0009\\u0000x\""));
    json_out_free(&w);
    json_free(&d);

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
    for (size_t i = 0; i < sizeof badstr / sizeof badstr[0]; i++) {
        char why[160] = "";
        CHECK(json_parse(&d, badstr[i].text, strlen(badstr[i].text), why, sizeof why) == -1);
        CHECK_CONTAINS(why, badstr[i].why);
    }

    /* json_strf: a formatted string value, escaped like any other. */
    w = (FsJsonOut){0};
    json_strf(&w, "%08x \"%s\"", 0xabcu, "q");
    CHECK(!strcmp(w.p, "\"00000abc \\\"q\\\"\""));
    json_out_free(&w);
}

/* ---------------------------------------------------------------------- */
/* Structure                                                                */

/* {"a":1,"b":[true,false,null],"c":{}} in the style asked for. */
static char *sample(int pretty, int spaced)
{
    FsJsonOut w = {.pretty = pretty, .spaced = spaced};
    json_object_begin(&w);
    json_key(&w, "a");
    json_int(&w, 1);
    json_key(&w, "b");
    json_array_begin(&w);
    json_bool(&w, 1);
    json_bool(&w, 0);
    json_null(&w);
    json_end(&w);
    json_key(&w, "c");
    json_object_begin(&w);
    json_end(&w);
    json_end(&w);
    json_tail(&w, "\n");
    CHECK(json_out_error(&w) == NULL);
    return w.p;
}

static void test_structure(void)
{
    char *s = sample(0, 0);
    CHECK(!strcmp(s, "{\"a\":1,\"b\":[true,false,null],\"c\":{}}\n"));
    free(s);
    s = sample(0, 1);
    CHECK(!strcmp(s, "{\"a\": 1, \"b\": [true, false, null], \"c\": {}}\n"));
    free(s);
    s = sample(1, 1); /* the export's model.json: the top level one member a line */
    CHECK_MSG(!strcmp(s, "{\n  \"a\": 1,\n  \"b\": [true, false, null],\n  \"c\": {}\n}\n"), "%s", s);
    free(s);
    s = sample(2, 0);
    CHECK_MSG(!strcmp(s, "{\n  \"a\":1,\n  \"b\":[\n    true,\n    false,\n    null\n  ],\n  \"c\":{}\n}\n"), "%s", s);
    free(s);

    /* The leaderboard's form: rows one a line; none: "[]". */
    FsJsonOut w = {.pretty = 1};
    json_array_begin(&w);
    for (int i = 0; i < 2; i++) {
        json_object_begin(&w);
        json_key(&w, "rank");
        json_int(&w, i + 1);
        json_end(&w);
    }
    json_end(&w);
    json_tail(&w, "\n");
    CHECK(!strcmp(w.p, "[\n  {\"rank\":1},\n  {\"rank\":2}\n]\n"));
    json_out_free(&w);
    w = (FsJsonOut){.pretty = 1};
    json_array_begin(&w);
    json_end(&w);
    CHECK(!strcmp(w.p, "[]") && json_out_error(&w) == NULL);
    json_out_free(&w);

    /* Nesting: a value inside FS_JSON_MAX_DEPTH containers is written and
     * read; one more is refused by both. */
    for (int extra = 0; extra < 2; extra++) {
        w = (FsJsonOut){0};
        for (int i = 0; i < FS_JSON_MAX_DEPTH + extra; i++) json_array_begin(&w);
        json_int(&w, 7);
        for (int i = 0; i < FS_JSON_MAX_DEPTH + extra; i++) json_end(&w);
        CHECK(extra ? json_out_error(&w) != NULL : json_out_error(&w) == NULL);
        if (!extra) {
            FsJsonDoc d;
            CHECK(json_parse(&d, w.p, w.n, NULL, 0) == 0);
            json_free(&d);
            char *deeper = malloc(w.n + 3);
            snprintf(deeper, w.n + 3, "[%s]", w.p);
            char why[160] = "";
            CHECK(json_parse(&d, deeper, strlen(deeper), why, sizeof why) == -1);
            CHECK_CONTAINS(why, "nesting no deeper than 64");
            free(deeper);
        }
        json_out_free(&w);
    }

    /* Misuse is recorded, never a crash. */
    w = (FsJsonOut){0};
    json_key(&w, "a");
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "outside an object"));
    json_out_free(&w);
    w = (FsJsonOut){0};
    json_object_begin(&w);
    json_int(&w, 1);
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "without its key"));
    json_out_free(&w);
    w = (FsJsonOut){0};
    json_object_begin(&w);
    json_key(&w, "a");
    json_end(&w);
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "after a key"));
    json_out_free(&w);
    w = (FsJsonOut){0};
    json_end(&w);
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "nothing open"));
    json_out_free(&w);
    w = (FsJsonOut){0};
    json_int(&w, 1);
    json_int(&w, 2);
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "second value"));
    json_out_free(&w);
    w = (FsJsonOut){0};
    json_array_begin(&w);
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "not whole"));
    json_tail(&w, "\n");
    CHECK(json_out_error(&w) && strstr(json_out_error(&w), "json_tail"));
    json_out_free(&w);

    /* json_raw: one JSON value as it is; anything else refused. */
    w = (FsJsonOut){0};
    json_array_begin(&w);
    json_raw(&w, "{\"x\": [1, 2.5e3]}");
    json_raw(&w, " 0.300000012 ");
    json_end(&w);
    CHECK(json_out_error(&w) == NULL && !strcmp(w.p, "[{\"x\": [1, 2.5e3]}, 0.300000012 ]"));
    json_out_free(&w);
    const char *not_json[] = {"", "{", "1 2", "nan", "{\"a\":1}}", "'x'"};
    for (size_t i = 0; i < sizeof not_json / sizeof not_json[0]; i++) {
        w = (FsJsonOut){0};
        json_raw(&w, not_json[i]);
        CHECK_MSG(json_out_error(&w) && !strcmp(w.p, "null"), "json_raw(\"%s\")", not_json[i]);
        json_out_free(&w);
    }
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

/* Writes a random value into w and checks v (its reading) against it as
 * it goes: the same generator is replayed for the check. */
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

/* Rewrites v with the writer in the generator's own terms, for comparison. */
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
        FsJsonDoc d;
        char why2[160] = "";
        CHECK(json_parse(&d, bad[i].text, strlen(bad[i].text), why2, sizeof why2) == -1);
        CHECK_CONTAINS(why2, bad[i].why); /* the document reader says the same */
    }
    char why[160] = "";
    FsJsonDoc d;
    CHECK(json_parse(&d, "{} x", 4, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "column 4: expected the end of the text after the value");
}

int main(void)
{
    test_numbers();
    test_strings();
    test_structure();
    test_random_documents();
    test_scanner();
    return test_finish();
}
