/*
 * test_json.c: the json module (src/json), the one reader and writer.
 * Numbers: every float and double spelling reads back as the same bits
 * (subnormals, extremes, -0 and random bit patterns), the shortest form is
 * the config form (0.3f is "0.3"), non-finite numbers are refused, null or
 * named as the writer is told. Strings: the one escape (control characters
 * \u00xx, quote and backslash), UTF-8 as it is, \u escapes and surrogate
 * pairs decoded. Structure: separators, the pretty forms the leaderboard
 * and exports use, nesting to the limit and not past it, every misuse
 * recorded. The reader's side: test_json_read.c.
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
    w = (FsJsonOut){0};
    json_array_begin(&w);
    json_str(&w, NULL);
    json_raw(&w, NULL);
    json_end(&w);
    CHECK(json_out_error(&w) && !strcmp(w.p, "[null,null]"));
    json_out_free(&w);
    const char *not_json[] = {"", "{", "1 2", "nan", "{\"a\":1}}", "'x'"};
    for (size_t i = 0; i < sizeof not_json / sizeof not_json[0]; i++) {
        w = (FsJsonOut){0};
        json_raw(&w, not_json[i]);
        CHECK_MSG(json_out_error(&w) && !strcmp(w.p, "null"), "json_raw(\"%s\")", not_json[i]);
        json_out_free(&w);
    }
}

int main(void)
{
    test_numbers();
    test_strings();
    test_structure();
    return test_finish();
}
