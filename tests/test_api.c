/*
 * test_api: the library API (src/api/foldsweep.h) as a C program uses it,
 * through libfoldsweep.so's exported names only: a run from YAML text with
 * its progress events, the run folder it names, the leaderboard and curves
 * as text, a resume in the same process, models opened and predicting from
 * FASTA text in memory (not NUL-terminated), the same bits on 1 and 2
 * threads, and every bad argument refused with a message and nothing
 * returned. Under the sanitizer build LeakSanitizer checks that what the
 * API returns is all released by its free functions.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/foldsweep.h"
#include "test.h"

static const char *sweep_yaml = "data: {synth: {proteins: 40, seed: 4}, window: 11, folds: 2, fold_seed: 1}\n"
                                "model: {depth: 1, filters: [4, 8], dense: 8}\n"
                                "training: {epochs: 2, seed: 1}\n"
                                "run: {backend: cpu, threads: 2}\n";

/* Standard error into a file while a call runs: its messages, for checks. */
static FILE *err_file;
static int err_saved = -1;
static void err_begin(void)
{
    fflush(stderr);
    err_file = tmpfile();
    err_saved = dup(2);
    dup2(fileno(err_file), 2);
}
static void err_end(char *buf, size_t n)
{
    fflush(stderr);
    dup2(err_saved, 2);
    close(err_saved);
    rewind(err_file);
    size_t k = fread(buf, 1, n - 1, err_file);
    buf[k] = '\0';
    fclose(err_file);
}

typedef struct {
    int events, finals;
    char last[2048];
} Events;

static void on_progress(const char *json, void *user)
{
    Events *e = user;
    e->events++;
    e->finals += strstr(json, "\"final\":true") != NULL;
    snprintf(e->last, sizeof e->last, "%s", json);
}

/* A listener slow to return (Python's, plotting): the progress thread goes
 * on meanwhile (progress_tell.c). Its first call waits, up to 10 s, for
 * progress.json to be rewritten, which only that thread does, then stops
 * the run (SIGINT, grace 0); the others return at once. */
typedef struct {
    char path[4200];
    int events, rewritten;
} Slow;

static char *read_small(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *s = calloc(1, 8192);
    if (s) s[fread(s, 1, 8191, f)] = '\0';
    fclose(f);
    return s;
}

static void slow_listener(const char *json, void *user)
{
    Slow *s = user;
    (void)json;
    if (s->events++ > 0) return;
    char *first = read_small(s->path);
    for (int i = 0; i < 100 && !s->rewritten; i++) {
        usleep(100 * 1000);
        char *now = read_small(s->path);
        s->rewritten = first && now && strcmp(first, now) != 0;
        free(now);
    }
    free(first);
    raise(SIGINT);
}

static void check_slow_listener(const char *dir)
{
    const char *yaml = "data: {synth: {proteins: 300, seed: 4}, window: 15, folds: 2, fold_seed: 1}\n"
                       "model: {depth: 2, filters: 32, dense: 32}\n"
                       "training: {epochs: 40, seed: 1}\n"
                       "run: {backend: cpu, threads: 1}\n";
    Slow s = {0};
    char out[4096];
    snprintf(out, sizeof out, "%s/slow", dir);
    snprintf(s.path, sizeof s.path, "%s/progress.json", out);
    foldsweep_run_options o = {.sweep = "slow.yaml", .sweep_text = yaml, .out = out, .quiet = 1, .grace = 0,
                               .progress = slow_listener, .user = &s};
    err_begin();
    const int rc = foldsweep_run(&o);
    char msg[512];
    err_end(msg, sizeof msg);
    CHECK_MSG(s.rewritten, "progress.json was not rewritten while the listener's first call waited (%d events)",
              s.events);
    CHECK_MSG(rc == 3, "the run stopped by SIGINT returned %d: %s", rc, msg);
}

static int lines_of(const char *s)
{
    int n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

static int user_handler_calls;
static void user_handler(int sig)
{
    (void)sig;
    user_handler_calls++;
}

static void check_refusals(const char *dir)
{
    char msg[4096];
    foldsweep_run_options o = {.sweep = "x.yaml", .sweep_text = sweep_yaml, .out = dir, .backend = "gpu"};
    err_begin();
    int rc = foldsweep_run(&o);
    err_end(msg, sizeof msg);
    CHECK(rc == 2);
    CHECK_CONTAINS(msg, "backend must be cpu, cuda or auto, not gpu");
    o.backend = NULL;
    o.threads = -1;
    err_begin();
    rc = foldsweep_run(&o);
    err_end(msg, sizeof msg);
    CHECK(rc == 2);
    CHECK_CONTAINS(msg, "threads");
    err_begin();
    rc = foldsweep_run(NULL);
    err_end(msg, sizeof msg);
    CHECK(rc == 2);
    /* On a communicator: none given, or (here) MPI not initialised. */
    o.threads = 0;
    err_begin();
    rc = foldsweep_run_mpi(&o, NULL);
    err_end(msg, sizeof msg);
    CHECK(rc == 2);
    CHECK(strstr(msg, "no communicator") || strstr(msg, "without MPI"));
    int fake_comm = 0;
    err_begin();
    rc = foldsweep_run_mpi(&o, &fake_comm);
    err_end(msg, sizeof msg);
    CHECK(rc == 2);
    CHECK(strstr(msg, "MPI is not initialised") || strstr(msg, "without MPI"));
    /* A sweep with an error: the loader's message, file:line:col, no folder. */
    foldsweep_run_options bad = {.sweep = "bad.yaml", .sweep_text = "data: {synth: {proteins: 40}}\nmodel: {depth: 0}\n",
                                 .out = "api-bad-run"};
    err_begin();
    rc = foldsweep_run(&bad);
    err_end(msg, sizeof msg);
    CHECK(rc == 1);
    CHECK_CONTAINS(msg, "bad.yaml:2:");
    CHECK_CONTAINS(msg, "model.depth");
    CHECK(access("api-bad-run", F_OK) != 0);
    char *text = (char *)1;
    err_begin();
    rc = foldsweep_leaderboard(dir, "xml", 0, &text);
    err_end(msg, sizeof msg);
    CHECK(rc == 2 && text == NULL);
    CHECK_CONTAINS(msg, "format must be table, wide, md, csv or json, not xml");
    err_begin();
    rc = foldsweep_curves("api-no-such-folder", &text);
    err_end(msg, sizeof msg);
    CHECK(rc == 1 && text == NULL);
    CHECK_CONTAINS(msg, "api-no-such-folder");
    foldsweep_model *m = (foldsweep_model *)1;
    err_begin();
    rc = foldsweep_model_open("api-no-such-folder", NULL, &m);
    err_end(msg, sizeof msg);
    CHECK(rc == 1 && m == NULL);
    CHECK_CONTAINS(msg, "api-no-such-folder");
}

static void check_predict(const char *dir)
{
    foldsweep_model *m = NULL;
    CHECK(foldsweep_model_open(dir, NULL, &m) == 0 && m);
    if (!m) return;
    CHECK(foldsweep_model_classes(m) == 3);
    CHECK(foldsweep_model_count(m) == 2);
    CHECK(foldsweep_model_file(m, 0) && strstr(foldsweep_model_file(m, 0), "fold0.safetensors"));
    CHECK(foldsweep_model_file(m, 2) == NULL && foldsweep_model_file(m, -1) == NULL);
    CHECK(strlen(foldsweep_model_trial(m)) == 16);
    /* n ends before the buffer's end: "XXXX" is not read. */
    const char fasta[] = ">a desc\nMKVLA\n>b\nggsBZ*\nXXXX";
    foldsweep_prediction *p = NULL, *q = NULL;
    CHECK(foldsweep_predict(m, fasta, sizeof fasta - 5, 1, &p) == 0 && p);
    CHECK(foldsweep_predict(m, fasta, sizeof fasta - 5, 2, &q) == 0 && q);
    if (p && q) {
        CHECK(p->n_proteins == 2 && p->n_residues == 10 && p->classes == 3);
        CHECK(p->offsets[0] == 0 && p->offsets[1] == 5 && p->offsets[2] == 10);
        for (uint32_t r = 0; r < p->n_residues; r++) {
            float s = p->probs[3 * r] + p->probs[3 * r + 1] + p->probs[3 * r + 2];
            CHECK_NEAR(s, 1.0, 1e-5);
            CHECK(p->agreement[r] >= 0.5f - 1e-6f && p->agreement[r] <= 1.0f);
        }
        CHECK(memcmp(p->probs, q->probs, sizeof(float) * 3 * p->n_residues) == 0);
    }
    foldsweep_prediction_free(p);
    foldsweep_prediction_free(q);
    char msg[2048];
    p = (foldsweep_prediction *)1;
    err_begin();
    int rc = foldsweep_predict(m, ">a\nMKV-LL\n", 10, 0, &p);
    err_end(msg, sizeof msg);
    CHECK(rc == 1 && p == NULL);
    CHECK_CONTAINS(msg, "sequences:2:4");
    /* The file reader's checks on text in memory: a byte-order mark is not
     * content, a NUL byte is binary data. */
    const char bom[] = "\xef\xbb\xbf>a\nMKV\n";
    CHECK(foldsweep_predict(m, bom, sizeof bom - 1, 1, &p) == 0 && p && p->n_proteins == 1 && p->n_residues == 3);
    foldsweep_prediction_free(p);
    const char nul[] = ">a\nMK\0V\n";
    err_begin();
    rc = foldsweep_predict(m, nul, sizeof nul - 1, 1, &p);
    err_end(msg, sizeof msg);
    CHECK(rc == 1 && p == NULL);
    CHECK_CONTAINS(msg, "binary data");
    foldsweep_model_options fold1 = {NULL, 1, 1, NULL};
    foldsweep_model *one = NULL;
    CHECK(foldsweep_model_open(dir, &fold1, &one) == 0 && foldsweep_model_count(one) == 1);
    foldsweep_model_close(one);
    foldsweep_model_close(m);
}

int main(void)
{
    CHECK(foldsweep_api_version() == FOLDSWEEP_API_VERSION);
    CHECK(strncmp(foldsweep_version(), "foldsweep ", 10) == 0);
    char missing[128];
    CHECK(foldsweep_cpu_missing(missing, sizeof missing) == 0 && missing[0] == '\0');

    char dir[] = "/tmp/fs-api-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    char out[sizeof dir + 8];
    snprintf(out, sizeof out, "%s/run", dir);
    check_refusals(out);

    /* The caller's SIGINT handler is its own again after a run. */
    struct sigaction mine = {0}, now;
    mine.sa_handler = user_handler;
    sigaction(SIGINT, &mine, NULL);
    Events ev = {0};
    foldsweep_run_options o = {.sweep = "api.yaml", .sweep_text = sweep_yaml, .out = out, .quiet = 1,
                               .grace = -1, .progress = on_progress, .user = &ev};
    char folder[4096];
    CHECK(foldsweep_run_folder(&o, folder, sizeof folder) == 0 && strcmp(folder, out) == 0);
    CHECK(foldsweep_run(&o) == 0);
    sigaction(SIGINT, NULL, &now);
    CHECK(now.sa_handler == user_handler);
    raise(SIGINT);
    CHECK(user_handler_calls == 1);
    CHECK(ev.events >= 1 && ev.finals == 1);
    CHECK_CONTAINS(ev.last, "\"folds_total\":4");
    CHECK_CONTAINS(ev.last, "\"trials_total\":2");

    char *board = NULL, *top = NULL, *curves = NULL, *again = NULL;
    CHECK(foldsweep_leaderboard(out, "csv", 0, &board) == 0 && board);
    CHECK(board && strncmp(board, "rank,id,", 8) == 0 && lines_of(board) == 3);
    CHECK(foldsweep_leaderboard(out, "csv", 1, &top) == 0 && lines_of(top) == 2);
    CHECK(foldsweep_curves(out, &curves) == 0 && curves);
    CHECK(curves && strncmp(curves, "trial,fold,seed,epoch,train_loss,val_loss,val_q3,seconds,best,status\n", 69) == 0);
    CHECK(lines_of(curves) >= 1 + 2 * 2 && lines_of(curves) <= 1 + 2 * 2 * 2);
    /* Again in the same process: a resume with nothing to train, the same board. */
    ev = (Events){0};
    CHECK(foldsweep_run(&o) == 0);
    CHECK(foldsweep_leaderboard(out, "csv", 0, &again) == 0 && again && board && strcmp(board, again) == 0);
    foldsweep_free(board);
    foldsweep_free(top);
    foldsweep_free(curves);
    foldsweep_free(again);

    check_predict(out);
    check_slow_listener(dir);
    char *argv[] = {"foldsweep", "status", out, NULL};
    char msg[64];
    err_begin(); /* status prints to stdout; its exit code is what counts here */
    CHECK(foldsweep_main(3, argv) == 0);
    err_end(msg, sizeof msg);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return test_finish();
}
