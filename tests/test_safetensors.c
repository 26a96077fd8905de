/*
 * test_safetensors.c: the safetensors reader and writer. A tiny file whose
 * bytes are written out by hand (read, and written byte for byte, padding
 * included), a round trip of several tensors and escaped metadata (values
 * bit-identical, bytes deterministic), every header error with its message,
 * and a fuzz of truncations and byte mutations (never a crash; run it under
 * the sanitizer build).
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors/safetensors.h"
#include "test_proc.h"

/* A malloc'd copy, as parse takes ownership. */
static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    if (n) memcpy(b, p, n);
    return b;
}

/* A file from a header text and n_data data bytes (0, 1, 2, ...). */
static uint8_t *make_file(const char *header, size_t n_data, size_t *n)
{
    size_t h = strlen(header);
    *n = 8 + h + n_data;
    uint8_t *b = malloc(*n);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    for (size_t i = 0; i < n_data; i++) b[8 + h + i] = (uint8_t)i;
    return b;
}

/* Parsing must fail with a message holding `want` (and the origin). */
static void expect_error(const char *header, size_t n_data, const char *want)
{
    size_t n;
    uint8_t *b = make_file(header, n_data, &n);
    FsSafetensors st;
    FsErr err = {0};
    int rc = safetensors_parse(&st, b, n, "bad.safetensors", &err);
    CHECK_MSG(rc == -1, "accepted: %s", header);
    CHECK_CONTAINS(err.msg, want);
    CHECK_CONTAINS(err.msg, "bad.safetensors: safetensors header: ");
    CHECK(st.bytes == NULL && st.tensors == NULL && st.strings == NULL);
    safetensors_free(&st); /* a no-op after a failure */
}

static void test_hand_written(void)
{
    /* 54 bytes of JSON, then 1.0f and -2.5f little-endian. */
    static const char file[] = "\x36\0\0\0\0\0\0\0"
                               "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"
                               "\x00\x00\x80\x3f"
                               "\x00\x00\x20\xc0";
    size_t n = sizeof file - 1;
    CHECK(n == 8 + 54 + 8);
    FsSafetensors st;
    FsErr err = {0};
    CHECK_MSG(safetensors_parse(&st, dup_bytes(file, n), n, "hand", &err) == 0, "%s", err.msg);
    CHECK(st.n_tensors == 1 && st.n_meta == 0 && st.header_len == 54);
    const FsTensor *t = safetensors_find(&st, "a");
    CHECK(t && !strcmp(t->name, "a") && !strcmp(t->dtype, "F32") && t->ndim == 1 && t->shape[0] == 2);
    CHECK(t && t->begin == 0 && t->end == 8 && safetensors_numel(t) == 2);
    CHECK(safetensors_find(&st, "b") == NULL && safetensors_meta(&st, "a") == NULL);
    float v[2] = {0, 0};
    int64_t shape[1] = {2};
    CHECK(safetensors_get_f32(&st, "a", 1, shape, v, "hand", &err) == 0);
    CHECK(v[0] == 1.0f && v[1] == -2.5f);
    safetensors_free(&st);

    /* The writer: the same JSON, padded with 2 spaces so that the data
     * starts at 64; then with metadata (79 bytes of JSON, 1 space). */
    static const char want[] = "\x38\0\0\0\0\0\0\0"
                               "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  "
                               "\x00\x00\x80\x3f"
                               "\x00\x00\x20\xc0";
    static const char want_meta[] = "\x50\0\0\0\0\0\0\0"
                                    "{\"__metadata__\":{\"k\":\"v\"},"
                                    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} "
                                    "\x00\x00\x80\x3f"
                                    "\x00\x00\x20\xc0";
    const float vals[2] = {1.0f, -2.5f};
    FsTensor w = {.name = "a", .ndim = 1, .shape = {2}, .data = vals};
    FsMetaEntry meta = {"k", "v"};
    uint8_t *out;
    uint64_t n_out;
    safetensors_serialize(&w, 1, NULL, 0, &out, &n_out);
    CHECK(n_out == sizeof want - 1 && memcmp(out, want, sizeof want - 1) == 0);
    free(out);
    safetensors_serialize(&w, 1, &meta, 1, &out, &n_out);
    CHECK(n_out == sizeof want_meta - 1 && memcmp(out, want_meta, sizeof want_meta - 1) == 0);
    CHECK_MSG(safetensors_parse(&st, out, n_out, "hand", &err) == 0, "%s", err.msg);
    CHECK(st.n_meta == 1 && !strcmp(safetensors_meta(&st, "k"), "v"));
    safetensors_free(&st);

    /* Escapes: quote, backslash, control characters as \u00xx; UTF-8 and
     * '/' as they are (44 bytes of JSON, 4 spaces). */
    FsMetaEntry esc = {"q", "\x01\"\\/\n\xc3\xa9"};
    static const char want_esc[] = "\x30\0\0\0\0\0\0\0"
                                   "{\"__metadata__\":{\"q\":\"\\u0001\\\"\\\\/\\u000a\xc3\xa9\"}}    ";
    safetensors_serialize(NULL, 0, &esc, 1, &out, &n_out);
    CHECK_MSG(n_out == sizeof want_esc - 1 && memcmp(out, want_esc, sizeof want_esc - 1) == 0, "%.*s",
              (int)n_out - 8, (const char *)out + 8);
    free(out);

    /* No tensors at all: valid. */
    static const char empty[] = "\x02\0\0\0\0\0\0\0{}";
    CHECK(safetensors_parse(&st, dup_bytes(empty, 10), 10, "empty", &err) == 0 && st.n_tensors == 0);
    safetensors_free(&st);
    safetensors_serialize(NULL, 0, NULL, 0, &out, &n_out);
    CHECK(n_out == 16 && memcmp(out, "\x08\0\0\0\0\0\0\0{}      ", 16) == 0);
    free(out);

    /* Tensors come back in offset order whatever the JSON order; a zero-size
     * tensor is fine; the other dtypes are read (but not as F32). */
    size_t nb;
    uint8_t *b = make_file("{\"b\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                           "\"z\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[12,12]},"
                           "\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}",
                           12, &nb);
    CHECK_MSG(safetensors_parse(&st, b, nb, "order", &err) == 0, "%s", err.msg);
    CHECK(st.n_tensors == 3);
    if (st.n_tensors == 3) {
        CHECK(!strcmp(st.tensors[0].name, "a") && !strcmp(st.tensors[1].name, "b") && !strcmp(st.tensors[2].name, "z"));
        CHECK(st.tensors[1].data == st.bytes + 8 + st.header_len + 8);
    }
    CHECK(safetensors_get_f32(&st, "z", 2, (int64_t[]){0, 5}, v, "order", &err) == 0);
    CHECK(safetensors_get_f32(&st, "b", 1, NULL, v, "order", &err) == -1);
    CHECK_CONTAINS(err.msg, "order: tensor 'b': dtype I16, expected F32");
    safetensors_free(&st);
}

static uint32_t rng_u32(FsRng *r) { return (uint32_t)(fs_rng_u64(r) >> 32); }

/* Four tensors (3, 1, 0 and 2 dims) and escaped metadata. */
static void build_sample(uint8_t **out, uint64_t *n_out, float *vals, int n_vals)
{
    FsRng r;
    fs_rng_seed(&r, (uint64_t[]){42}, 1);
    for (int i = 0; i < n_vals; i++) {
        uint32_t bits = rng_u32(&r); /* any pattern: NaN payloads, denormals, -0 */
        memcpy(&vals[i], &bits, 4);
    }
    FsTensor t[] = {
        {.name = "conv.weight", .ndim = 3, .shape = {2, 3, 4}, .data = vals},
        {.name = "conv.bias", .ndim = 1, .shape = {2}, .data = vals + 24},
        {.name = "scale \"x\"\\y", .ndim = 0, .data = vals + 26},
        {.name = "dense.weight", .ndim = 2, .shape = {3, 1}, .data = vals + 27},
    };
    FsMetaEntry meta[] = {
        {"format", "foldsweep"},
        {"esc\"aped\\key", "line\nbreak\ttab\x01\x1f and \xc3\xa9\xe2\x82\xac UTF-8 /"},
        {"empty", ""},
    };
    safetensors_serialize(t, 4, meta, 3, out, n_out);
}

static void test_round_trip(void)
{
    float vals[30];
    uint8_t *out, *again;
    uint64_t n_out, n_again;
    build_sample(&out, &n_out, vals, 30);
    build_sample(&again, &n_again, vals, 30);
    CHECK(n_out == n_again && memcmp(out, again, n_out) == 0); /* deterministic */
    free(again);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | out[i];
    CHECK((8 + hlen) % 8 == 0 && n_out == 8 + hlen + 30 * 4);

    FsSafetensors st;
    FsErr err = {0};
    CHECK_MSG(safetensors_parse(&st, out, n_out, "rt", &err) == 0, "%s", err.msg);
    CHECK(st.n_tensors == 4 && st.n_meta == 3);
    CHECK(!strcmp(safetensors_meta(&st, "format"), "foldsweep"));
    const char *m = safetensors_meta(&st, "esc\"aped\\key");
    CHECK(m && !strcmp(m, "line\nbreak\ttab\x01\x1f and \xc3\xa9\xe2\x82\xac UTF-8 /"));
    CHECK(safetensors_meta(&st, "empty") && !strcmp(safetensors_meta(&st, "empty"), ""));
    const char *names[] = {"conv.weight", "conv.bias", "scale \"x\"\\y", "dense.weight"};
    const int64_t shapes[][3] = {{2, 3, 4}, {2}, {0}, {3, 1}};
    const int ndims[] = {3, 1, 0, 2}, offs[] = {0, 24, 26, 27, 30};
    for (int i = 0; i < 4; i++) {
        const FsTensor *t = &st.tensors[i]; /* written in this order, so read back in it */
        CHECK_MSG(!strcmp(t->name, names[i]), "tensor %d is '%s'", i, t->name);
        CHECK(t->ndim == ndims[i] && t->begin == 4u * (uint64_t)offs[i] && t->end == 4u * (uint64_t)offs[i + 1]);
        float got[24];
        CHECK_MSG(safetensors_get_f32(&st, names[i], ndims[i], shapes[i], got, "rt", &err) == 0, "%s", err.msg);
        CHECK_MSG(memcmp(got, vals + offs[i], 4 * (size_t)(offs[i + 1] - offs[i])) == 0, "values of %s", names[i]);
    }
    CHECK(safetensors_numel(safetensors_find(&st, names[2])) == 1);
    float got[24];
    CHECK(safetensors_get_f32(&st, "conv.weight", 3, (int64_t[]){2, 4, 3}, got, "rt", &err) == -1);
    CHECK_CONTAINS(err.msg, "rt: tensor 'conv.weight': shape [2, 3, 4], expected [2, 4, 3]");
    err = (FsErr){0};
    CHECK(safetensors_get_f32(&st, "conv.weight", 2, (int64_t[]){2, 3}, got, "rt", &err) == -1);
    CHECK_CONTAINS(err.msg, "expected [2, 3]");
    err = (FsErr){0};
    CHECK(safetensors_get_f32(&st, "nope", 1, NULL, got, "rt", &err) == -1);
    CHECK_CONTAINS(err.msg, "rt: no tensor 'nope'");
    safetensors_free(&st);
}

#define T(name, body) "\"" name "\":{" body "}"
#define F32_2 "\"dtype\":\"F32\",\"shape\":[2]"

static void test_errors(void)
{
    /* Lengths and truncation. */
    expect_error("", 0, "{");
    size_t n;
    uint8_t *b = make_file("{" T("a", F32_2 ",\"data_offsets\":[0,8]") "}", 8, &n);
    FsSafetensors st;
    for (size_t cut = 0; cut < n; cut++) {
        FsErr err = {0};
        CHECK(safetensors_parse(&st, dup_bytes(b, cut), cut, "cut", &err) == -1);
        const char *want = cut < 8 ? "shorter than the 8-byte header length"
                           : cut < n - 8 ? "runs past the end of the file"
                                         : "run past the end of the data (";
        CHECK_CONTAINS(err.msg, want);
    }
    free(b);
    uint8_t big[16] = {0xe8, 0x03}; /* 1000 */
    FsErr err = {0};
    CHECK(safetensors_parse(&st, dup_bytes(big, 16), 16, "big", &err) == -1);
    CHECK_CONTAINS(err.msg, "big: safetensors header: header length 1000 runs past the end of the file (8 bytes");
    uint8_t huge[16] = {0, 0, 0, 0, 0, 1};
    err = (FsErr){0};
    CHECK(safetensors_parse(&st, dup_bytes(huge, 16), 16, "huge", &err) == -1);
    CHECK_CONTAINS(err.msg, "exceeds the limit");

    /* The buffer's layout. */
    expect_error("{" T("a", F32_2 ",\"data_offsets\":[0,8]") "," T("b", F32_2 ",\"data_offsets\":[4,12]") "}", 12,
                 "tensors 'a' and 'b' overlap");
    expect_error("{" T("a", "\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]") "," T(
                     "b", "\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]") "}",
                 12, "data bytes [4, 8) are not covered by any tensor (before 'b')");
    expect_error("{" T("a", F32_2 ",\"data_offsets\":[0,8]") "}", 12, "data bytes [8, 12) at the end are not covered");
    expect_error("{}", 4, "data bytes [0, 4) at the end are not covered");
    expect_error("{" T("a", F32_2 ",\"data_offsets\":[8,16]") "}", 8, "run past the end of the data (8 bytes)");
    expect_error("{" T("a", "\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[9,9]") "}", 8,
                 "run past the end of the data");

    /* Entries. */
    expect_error("{" T("w", "\"dtype\":\"F48\",\"shape\":[2],\"data_offsets\":[0,8]") "}", 8,
                 "tensor 'w': unknown dtype \"F48\"");
    expect_error("{" T("w", "\"dtype\":\"F32\\u0000\",\"shape\":[2],\"data_offsets\":[0,8]") "}", 8, "unknown dtype");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]") "}", 8,
                 "tensor 'w': data_offsets [0, 8] hold 8 bytes, but shape [3] of F32 needs 12");
    expect_error("{" T("w", "\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,8]") "}", 8, "of F64 needs 16");
    expect_error("{" T("w", F32_2 ",\"data_offsets\":[8,0]") "}", 8,
                 "tensor 'w': data_offsets [8, 0]: end before begin");
    expect_error("{" T("w", F32_2 ",\"data_offsets\":[0]") "}", 8, "tensor 'w': \"data_offsets\" must be [begin, end]");
    expect_error("{" T("w", F32_2 ",\"data_offsets\":[0,8,9]") "}", 8, "\"data_offsets\" must be [begin, end]");
    expect_error("{" T("w", F32_2 ",\"data_offsets\":[-1,8]") "}", 8, "\"data_offsets\" must be [begin, end]");
    expect_error("{" T("w", F32_2 ",\"data_offsets\":{}") "}", 8, "\"data_offsets\" must be [begin, end]");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]") "}", 8,
                 "tensor 'w': shape[0] must be a non-negative integer");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":[2,1.5],\"data_offsets\":[0,8]") "}", 8,
                 "tensor 'w': shape[1] must be a non-negative integer");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]") "}", 8,
                 "shape[0] must be a non-negative integer");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]") "}", 8,
                 "tensor 'w': \"shape\" must be an array");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,2],\"data_offsets\":[0,8]") "}", 8,
                 "shape has 9 dims, at most 8");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,2],\"data_offsets\":[0,8]") "}", 8,
                 "tensor 'w': shape too large");
    expect_error("{" T("w", "\"dtype\":\"U64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,8]") "}", 8,
                 "shape too large");
    expect_error("{" T("w", "\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,8]") "}", 8, "\"dtype\" must be a string");
    expect_error("{" T("w", "\"shape\":[2],\"data_offsets\":[0,8]") "}", 8, "tensor 'w': missing \"dtype\"");
    expect_error("{" T("w", "\"dtype\":\"F32\",\"data_offsets\":[0,8]") "}", 8, "tensor 'w': missing \"shape\"");
    expect_error("{" T("w", F32_2) "}", 8, "tensor 'w': missing \"data_offsets\"");
    expect_error("{\"w\":[1,2]}", 0, "tensor 'w': expected an object");
    expect_error("{" T("w", F32_2 ",\"data_offsets\":[0,8]") "," T("w", F32_2 ",\"data_offsets\":[8,16]") "}", 16,
                 "duplicate tensor name 'w'");

    /* JSON and metadata. */
    expect_error("{\"a\":", 0, "invalid JSON: column 6: expected a value");
    expect_error("{\"a\":1} x", 0, "invalid JSON");
    expect_error(" {}", 0, "must begin with '{'");
    expect_error("[1]", 0, "must begin with '{'");
    expect_error("{\"\xff\":1}", 0, "not valid UTF-8 at byte 3");
    expect_error("{\"\xc0\xaf\":1}", 0, "not valid UTF-8"); /* overlong '/' */
    expect_error("{\"\xed\xa0\x80\":1}", 0, "not valid UTF-8"); /* a surrogate */
    expect_error("{\"__metadata__\":{\"k\":1}}", 0, "metadata 'k': value must be a string");
    expect_error("{\"__metadata__\":{\"k\":\"a\\u0000b\"}}", 0, "metadata 'k': value holds a NUL");
    expect_error("{\"__metadata__\":[\"k\"]}", 0, "\"__metadata__\" must be an object");
    expect_error("{\"__metadata__\":{},\"__metadata__\":{}}", 0, "\"__metadata__\" given twice");
    expect_error("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0, "duplicate metadata key 'k'");

    /* Reading files. */
    char dir[512], path[600];
    tp_tmpdir(dir, sizeof dir, "safetensors");
    snprintf(path, sizeof path, "%s/missing.safetensors", dir);
    err = (FsErr){0};
    CHECK(safetensors_read(&st, path, &err) == -1);
    CHECK_CONTAINS(err.msg, "missing.safetensors: cannot open: ");
    err = (FsErr){0};
    CHECK(safetensors_read(&st, dir, &err) == -1);
    CHECK_CONTAINS(err.msg, "not a regular file");
    float vals[30];
    uint8_t *out;
    uint64_t n_out;
    build_sample(&out, &n_out, vals, 30);
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    tp_write_file(path, out, n_out, "wb");
    err = (FsErr){0};
    CHECK_MSG(safetensors_read(&st, path, &err) == 0, "%s", err.msg);
    CHECK(st.n_bytes == n_out && memcmp(st.bytes, out, n_out) == 0 && st.n_tensors == 4);
    safetensors_free(&st);
    tp_write_file(path, out, n_out - 1, "wb");
    err = (FsErr){0};
    CHECK(safetensors_read(&st, path, &err) == -1);
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    CHECK_CONTAINS(err.msg, ": safetensors header: ");
    unlink(path);
    rmdir(dir);
    free(out);
}

/* A parse that succeeds must give a consistent result. */
static void check_consistent(const FsSafetensors *st)
{
    uint64_t pos = 0, data = st->n_bytes - 8 - st->header_len;
    for (int i = 0; i < st->n_tensors; i++) {
        const FsTensor *t = &st->tensors[i];
        CHECK(t->begin == pos && t->end >= t->begin && t->end <= data && t->name != NULL);
        pos = t->end;
    }
    CHECK(pos == data);
}

static void test_fuzz(void)
{
    float vals[30];
    uint8_t *good;
    uint64_t n;
    build_sample(&good, &n, vals, 30);
    FsSafetensors st;
    for (uint64_t cut = 0; cut <= n; cut++) {
        FsErr err = {0};
        int rc = safetensors_parse(&st, dup_bytes(good, (size_t)cut), cut, "prefix", &err);
        CHECK_MSG(rc == (cut == n ? 0 : -1), "prefix of %d bytes: %s", (int)cut, err.msg);
        if (rc == 0) check_consistent(&st);
        safetensors_free(&st);
    }
    FsRng r;
    fs_rng_seed(&r, (uint64_t[]){7, 7}, 2);
    int accepted = 0;
    for (int k = 0; k < 600; k++) {
        uint8_t *b = dup_bytes(good, (size_t)n);
        /* Mostly the header (where the checks are), sometimes the length. */
        uint32_t at = k % 5 == 0 ? fs_rng_below(&r, 8) : fs_rng_below(&r, (uint32_t)n);
        static const uint8_t special[] = {'{', '}', '[', ']', '"', ',', ':', '\\', '0', '9', '-', 0, 0xff, ' '};
        b[at] = k % 2 ? (uint8_t)rng_u32(&r) : special[fs_rng_below(&r, sizeof special)];
        FsErr err = {0};
        if (safetensors_parse(&st, b, n, "mutant", &err) == 0) {
            accepted++;
            check_consistent(&st);
        } else {
            CHECK_CONTAINS(err.msg, "mutant: safetensors header: ");
        }
        safetensors_free(&st);
    }
    printf("fuzz: %d of 600 mutants accepted (data bytes, or harmless header edits)\n", accepted);
    free(good);
}

int main(void)
{
    test_hand_written();
    test_round_trip();
    test_errors();
    test_fuzz();
    return test_finish();
}
