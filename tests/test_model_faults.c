/*
 * test_model_faults: hostile and damaged model files (docs/reliability.md,
 * "Model files"). Each fault ends in an error naming the file and what was
 * expected, in bounded time and memory: a header of nested arrays at the
 * size cap, a header length past a large file's end, a FIFO named as a
 * model, an architecture larger than any sweep allows, non-finite weights,
 * two proteins that map to one output file, and an ensemble of files from
 * different trials.
 */
#include <math.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "modelfile/modelfile.h"
#include "safetensors/safetensors.h"
#include "test_proc.h"

static char tmp[256];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* conv1d(4, 3, relu) > dense(5, relu) > output, window 7: a small model's
 * file, with weight 0 set to `poison` unless it is 0. */
static void make_model(const char *path, const char *trial, uint64_t fingerprint, float poison)
{
    FsArch a;
    FsNet net;
    FsErr err = {0};
    memset(&a, 0, sizeof a);
    a.window = 7;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 4, .width = 3, .act = FS_ACT_RELU};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 5, .act = FS_ACT_RELU};
    a.n_layers = 2;
    CHECK(model_compile(&net, &a, 1, &err) == 0);
    float *w = calloc((size_t)(net.n_params + net.n_state), sizeof(float));
    FsRng rng;
    uint64_t words[1] = {5};
    fs_rng_seed(&rng, words, 1);
    model_init(&net, w, &rng);
    if (poison != 0) w[net.layer[0].w] = poison;
    FsModelInfo info = {.fold = 0, .folds = 2, .best_epoch = 1, .data_fingerprint = fingerprint};
    snprintf(info.trial, sizeof info.trial, "%s", trial);
    uint8_t *bytes;
    uint64_t n;
    modelfile_serialize(&net, w, &info, &bytes, &n);
    tp_write_file(path, bytes, n, "wb");
    free(bytes);
    free(w);
}

/* A file of an 8-byte header length, the header text and n_data bytes. */
static uint8_t *raw_file(const char *header, uint64_t n_data, uint64_t *n)
{
    uint64_t h = strlen(header);
    *n = 8 + h + n_data;
    uint8_t *b = calloc(1, (size_t)*n);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(h >> (8 * i));
    memcpy(b + 8, header, h);
    return b;
}

/* 1. A header at the cap made of nested arrays is read in bounded memory
 * and time (the JSON document it once built cost ~39 bytes a byte); one
 * byte over the cap is refused before it is parsed. */
static void test_header_cap(void)
{
    size_t cap = FS_ST_MAX_HEADER;
    char *h = malloc(cap + 2);
    int at = snprintf(h, cap, "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0],\"x\":[");
    while ((size_t)at + 8 < cap) at += snprintf(h + at, cap - (size_t)at, "[[[]]],");
    at += snprintf(h + at, cap + 2 - (size_t)at, "[]]}}");
    while ((size_t)at < cap) h[at++] = ' ';
    h[at] = '\0';
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* a child of its own: its peak memory is the parse's */
        struct rusage before, after;
        uint64_t n;
        uint8_t *b = raw_file(h, 0, &n);
        getrusage(RUSAGE_SELF, &before);
        double t0 = now();
        FsSafetensors st;
        FsErr err = {0};
        int rc = safetensors_parse(&st, b, n, "nested", &err);
        double dt = now() - t0;
        getrusage(RUSAGE_SELF, &after);
        long grew_mb = (after.ru_maxrss - before.ru_maxrss) / 1024;
        printf("header of %zu bytes of nested arrays: rc %d, %.3f s, peak memory +%ld MB %s\n", cap, rc, dt, grew_mb,
               err.msg);
        safetensors_free(&st);
        fflush(stdout);
        _exit(rc == 0 && st.n_tensors == 0 && dt < 5 && grew_mb < 24 ? 0 : 1);
    }
    CHECK_MSG(tp_wait_limited(pid, 60) == 0, "a header of nested arrays at the cap is costly or refused");
    /* One byte over. */
    h[cap - 1] = ' ', h[cap] = ' ', h[cap + 1] = '\0';
    uint64_t n;
    uint8_t *b = raw_file(h, 0, &n);
    FsSafetensors st;
    FsErr err = {0};
    CHECK(safetensors_parse(&st, b, n, "over", &err) == -1);
    CHECK_CONTAINS(err.msg, "over: safetensors header: header length 4194305 exceeds the limit of 4194304 bytes");
    free(h);
}

/* 2. A header length of 2^62 in a 3 GB (sparse) file is refused after
 * reading 8 bytes, not 3 GB; a length inside the cap but past the file's
 * end likewise. */
static void test_length_past_end(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/huge.safetensors", tmp);
    uint8_t len[8] = {0, 0, 0, 0, 0, 0, 0, 0x40};
    tp_write_file(path, len, 8, "wb");
    CHECK(truncate(path, 3LL << 30) == 0);
    FsSafetensors st;
    FsErr err = {0};
    double t0 = now();
    CHECK(safetensors_read(&st, path, &err) == -1);
    double dt = now() - t0;
    CHECK_CONTAINS(err.msg, "huge.safetensors: safetensors header: header length 4611686018427387904 exceeds the limit");
    CHECK_MSG(dt < 0.5, "refusing a 3 GB file's header length took %.2f s (was the file read?)", dt);
    uint8_t len2[8] = {0, 0, 0x20}; /* 2 MiB, in a 1 KB file */
    tp_write_file(path, len2, 8, "wb");
    CHECK(truncate(path, 1024) == 0);
    err = (FsErr){0};
    CHECK(safetensors_read(&st, path, &err) == -1);
    CHECK_CONTAINS(err.msg, "header length 2097152 runs past the end of the file (1016 bytes after it)");
    unlink(path);
}

/* 3. A FIFO (no writer) named as a model: refused at once, never waited on. */
static void test_fifo(void)
{
    char path[400], fasta[400], log[400];
    snprintf(path, sizeof path, "%s/pipe.safetensors", tmp);
    snprintf(fasta, sizeof fasta, "%s/one.fasta", tmp);
    snprintf(log, sizeof log, "%s/fifo.log", tmp);
    CHECK(mkfifo(path, 0600) == 0);
    tp_write_text(fasta, ">p\nMKVLA\n");
    char *argv[] = {"foldsweep", "predict", path, fasta, NULL};
    pid_t pid = tp_spawn(argv, log);
    int rc = tp_wait_limited(pid, 20);
    CHECK(rc == 1);
    char *text = tp_read_file(log, NULL);
    CHECK(text != NULL);
    if (text) CHECK_CONTAINS(text, "pipe.safetensors: cannot read: not a regular file");
    free(text);
    FsSavedModel m;
    FsErr err = {0};
    alarm(10); /* a FIFO that blocks the open ends the test, not hangs it */
    CHECK(modelfile_load(&m, path, 1, &err) == -1);
    alarm(0);
    CHECK_CONTAINS(err.msg, "not a regular file");
    char why[300];
    CHECK(modelfile_verify(path, 10, 0, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "not a regular file");
    unlink(path);
}

/* s as it appears inside a JSON string: quotes escaped. */
static void escaped(char *out, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 3 < n; s++) {
        if (*s == '"') out[k++] = '\\';
        out[k++] = *s;
    }
    out[k] = '\0';
}

/* The small model's file with text of its "arch" metadata replaced. */
static uint8_t *with_arch(const char *path, const char *from_raw, const char *to_raw, uint64_t *n)
{
    char from[200], to[200];
    escaped(from, sizeof from, from_raw);
    escaped(to, sizeof to, to_raw);
    size_t len;
    char *b = tp_read_file(path, &len);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--) h = h << 8 | (uint8_t)b[i];
    char *text = malloc(h + strlen(to) + 1), *at;
    memcpy(text, b + 8, h);
    text[h] = '\0';
    CHECK((at = strstr(text, from)) != NULL);
    if (at) memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1), memcpy(at, to, strlen(to));
    uint64_t data = len - 8 - h;
    uint8_t *out = raw_file(text, data, n);
    memcpy(out + *n - data, b + 8 + h, data);
    free(text);
    free(b);
    return out;
}

/* 4. Architecture fields past the sweep's limits, or that disagree with
 * the file's tensors, are refused before anything is allocated for them. */
static void test_arch_bounds(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/small.safetensors", tmp);
    make_model(path, "0123456789abcdef", 1, 0);
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"\"filters\":4,", "\"filters\":1048576,", "arch: layer 1 (conv1d): expected the fields"},
        {"\"filters\":4,", "\"filters\":4096,", "tensor '0.weight': shape [4, 21, 3], expected [4096, 21, 3]"},
        {"\"units\":5,", "\"units\":65536,", "tensor '3.weight': shape [5, 28], expected [65536, 28]"},
        {"\"units\":5,", "\"units\":65537,", "arch: layer 2 (dense): expected the fields"},
        {"\"act_param\":0}", "\"act_param\":\"nan\"}", "arch: layer 1 (conv1d): expected the fields"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t n;
        uint8_t *b = with_arch(path, cases[i].from, cases[i].to, &n);
        FsSavedModel m;
        FsErr err = {0};
        CHECK_MSG(modelfile_parse(&m, b, n, "big.safetensors", 256, &err) == -1, "accepted %s", cases[i].to);
        CHECK_CONTAINS(err.msg, "big.safetensors: ");
        CHECK_CONTAINS(err.msg, cases[i].want);
    }
    FsSavedModel m;
    FsErr err = {0};
    CHECK_MSG(modelfile_load(&m, path, 256, &err) == 0, "%s", err.msg);
    modelfile_free(&m);
}

/* 5. NaN and infinite weights are refused, naming the tensor. */
static void test_non_finite(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/nan.safetensors", tmp);
    const float bad[2] = {NAN, -INFINITY};
    const char *what[2] = {"is NaN", "is infinite"};
    for (int i = 0; i < 2; i++) {
        make_model(path, "0123456789abcdef", 1, bad[i]);
        FsSavedModel m;
        FsErr err = {0};
        CHECK(modelfile_load(&m, path, 1, &err) == -1);
        CHECK_CONTAINS(err.msg, "nan.safetensors: tensor '0.weight': element ");
        CHECK_CONTAINS(err.msg, what[i]);
    }
}

/* 6. Proteins whose ids map to one file name each get their own file. */
static void test_same_file_name(void)
{
    char model[400], fasta[400], out[400], p[500];
    snprintf(model, sizeof model, "%s/m.safetensors", tmp);
    snprintf(fasta, sizeof fasta, "%s/dup.fasta", tmp);
    snprintf(out, sizeof out, "%s/pred/", tmp);
    make_model(model, "0123456789abcdef", 1, 0);
    tp_write_text(fasta, ">x\nMKV\n>x\nAAAA\n>a/b\nGG\n>a_b\nLLLLL\n");
    CHECK(tp_run("predict '%s' '%s' -o '%s'", model, fasta, out) == 0);
    const char *names[] = {"x.ss2", "x~2.ss2", "a_b.ss2", "a_b~2.ss2"};
    const char *seq[] = {"1 M", "4 A", "2 G", "5 L"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", out, names[i]);
        char *text = tp_read_file(p, NULL);
        CHECK_MSG(text && strstr(text, seq[i]), "%s missing or not the protein's", p);
        free(text);
    }
    CHECK_CONTAINS(err_text, "note: protein 'x' written to x~2.ss2");
    CHECK_CONTAINS(err_text, "note: protein 'a_b' written to a_b~2.ss2");
}

/* 7. Fold files of two trials are not one trial's ensemble: refused
 * without --mixed, recorded as mixed with it. */
static void test_mixed(void)
{
    char run[400], m1[500], m2[500], data[400], p[500];
    snprintf(run, sizeof run, "%s/run", tmp);
    snprintf(m1, sizeof m1, "%s/models/1111111111111111", run);
    snprintf(m2, sizeof m2, "%s/models/2222222222222222", run);
    CHECK(tp_run("synth -o '%s/test.records' -n 4 --seed 3", tmp) == 0);
    snprintf(data, sizeof data, "%s/test.records", tmp);
    FsErr err = {0};
    CHECK(fs_mkdir_p(m1, &err) == 0 && fs_mkdir_p(m2, &err) == 0);
    snprintf(p, sizeof p, "%s/journal.jsonl", run);
    tp_write_text(p, "");
    strcat(m1, "/fold0.safetensors");
    strcat(m2, "/fold1.safetensors");
    make_model(m1, "1111111111111111", 1, 0);
    make_model(m2, "2222222222222222", 1, 0);
    CHECK(tp_run("evaluate '%s' '%s' '%s'", m1, m2, data) == 1);
    CHECK_CONTAINS(err_text, "are from different trials");
    CHECK_CONTAINS(err_text, "pass --mixed");
    CHECK(tp_run("predict '%s' '%s' '%s'", m1, m2, data) == 1);
    CHECK_CONTAINS(err_text, "are from different trials");
    make_model(m2, "1111111111111111", 2, 0);
    CHECK(tp_run("evaluate '%s' '%s' '%s'", m1, m2, data) == 1);
    CHECK_CONTAINS(err_text, "are from different data");
    make_model(m2, "2222222222222222", 1, 0);
    CHECK(tp_run("evaluate '%s' '%s' '%s' --mixed", m1, m2, data) == 0);
    CHECK_CONTAINS(out_text, "mixed: trials ensemble of 2 models (trials 1111111111111111, 2222222222222222)");
    CHECK_MSG(tp_count_in_file(p, "\"models\":\"mixed: trials\"") == 1, "the journal does not say what was mixed");
    CHECK(tp_run("predict '%s' '%s' '%s' --mixed --format fasta", m1, m2, data) == 0);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "model_faults");
    test_header_cap();
    test_length_past_end();
    test_fifo();
    test_arch_bounds();
    test_non_finite();
    test_same_file_name();
    test_mixed();
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
