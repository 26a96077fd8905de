/*
 * Intra-model threading (train/team.h): idle pool threads help the models
 * that are training, and results stay bitwise identical.
 *
 * 1. One model trained alone on 1, 2 and 3 threads (train_jobs with one
 *    job): the same curves, best epoch, confusion and best weights, bit for
 *    bit, and helpers really ran chunks (the team's counters; a test that
 *    would pass with helping silently off is no test). Several
 *    configurations, so that every shared loop runs: every layer kind,
 *    the fused dense update (batch 8, no clipping), clipping, SGD.
 * 2. Hand back: a source that has a second job only once the first has
 *    trained an epoch. The second thread first hears "nothing now", helps
 *    the first job, then takes the second while the first still trains;
 *    both results equal their one-thread fits.
 * 3. A run: `foldsweep run` of 1 trial x 2 folds with --threads 1, 2 and 3
 *    writes the same journal records (timing fields aside, in any order)
 *    and the same model files; the 3-thread run reports helper chunks
 *    (FOLDSWEEP_TEAM_STATS=1).
 * 4. The busy-machine rule (team_window_*), driven with made-up clocks:
 *    a window whose owner lost its core, and a window that shared at full
 *    CPU share but trained slower than the window alone before it (the
 *    owner spun for helpers' chunks: a burst of short processes), each
 *    start a solo period that doubles while it lasts and is capped; a
 *    window whose sharing paid halves it again.
 *
 * FOLDSWEEP_TEAM_MIN_WORK=0 makes even this test's small models share
 * every loop, so chunk boundaries fall everywhere they can.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include "data/data.h"
#include "synth/synth.h"
#include "test_proc.h"
#include "train/team.h"
#include "train/train.h"

static FsDataset ds;

static unsigned long long helper_chunks(void)
{
    FsTeamStats s;
    train_team_stats(&s);
    return s.helper_chunks;
}

static FsJob job_of(const FsArch *a, const FsTrainSpec *ts, int fold, FsFitResult *r)
{
    FsJob j;
    memset(&j, 0, sizeof j);
    j.arch = a;
    j.spec = ts;
    j.data = &ds;
    j.fold = fold;
    j.result = r;
    j.weights_out = train_result_alloc_weights(r, a);
    return j;
}

static void same(const char *what, const FsFitResult *a, const FsFitResult *b)
{
    CHECK_MSG(a->status == FS_FIT_OK && b->status == FS_FIT_OK, "%s: status %d / %d (%s)", what, a->status,
              b->status, b->message);
    CHECK_MSG(a->epochs == b->epochs && a->best_epoch == b->best_epoch, "%s: epochs %d/%d best %d/%d", what,
              a->epochs, b->epochs, a->best_epoch, b->best_epoch);
    CHECK_MSG(a->train_examples == b->train_examples && a->val_examples == b->val_examples, "%s: example counts",
              what);
    size_t e = (size_t)(a->epochs < b->epochs ? a->epochs : b->epochs);
    CHECK_MSG(memcmp(a->curves.train_loss, b->curves.train_loss, sizeof(float) * e) == 0,
              "%s: train losses differ (first %.9g vs %.9g)", what, a->curves.train_loss[0], b->curves.train_loss[0]);
    CHECK_MSG(memcmp(a->curves.val_loss, b->curves.val_loss, sizeof(float) * e) == 0, "%s: val losses differ", what);
    CHECK_MSG(memcmp(a->curves.val_q3, b->curves.val_q3, sizeof(float) * e) == 0, "%s: val Q3 differ", what);
    CHECK_MSG(memcmp(a->best_confusion, b->best_confusion, sizeof a->best_confusion) == 0, "%s: confusion", what);
    CHECK_MSG(a->best_val_loss == b->best_val_loss, "%s: best val loss", what);
    CHECK_MSG(a->n_weights == b->n_weights && a->n_weights > 0 &&
                  memcmp(a->weights, b->weights, sizeof(float) * (size_t)a->n_weights) == 0,
              "%s: best weights differ", what);
}

/* 1. One job on 1, 2 and 3 threads. */
static void alone(const char *name, const FsArch *a, const FsTrainSpec *ts)
{
    FsFitResult ref, r;
    train_result_alloc(&ref, ts->stop.max_epochs);
    FsJob j = job_of(a, ts, 1, &ref);
    unsigned long long h0 = helper_chunks();
    train_jobs(&j, 1, 1);
    CHECK_MSG(helper_chunks() == h0, "%s: helpers ran chunks of a job trained on one thread", name);
    for (int threads = 3; threads >= 2 && (threads == 3 || t_repeats("the 2-thread run")); threads--) {
        train_result_alloc(&r, ts->stop.max_epochs);
        j = job_of(a, ts, 1, &r);
        h0 = helper_chunks();
        train_jobs(&j, 1, threads);
        unsigned long long helped = helper_chunks() - h0;
        char what[160];
        snprintf(what, sizeof what, "%s on %d threads", name, threads);
        same(what, &ref, &r);
        CHECK_MSG(helped > 0, "%s: no chunk was run by a helper", what);
        printf("%s: %d epochs, train loss %.7f, %llu chunks by helpers, bitwise %s\n", what, r.epochs,
               r.curves.train_loss[0], helped,
               memcmp(ref.weights, r.weights, sizeof(float) * (size_t)ref.n_weights) ? "different" : "equal");
        train_result_free(&r);
    }
    train_result_free(&ref);
}

/* 2. A source whose second job is ready only after the first job's first
 * epoch. */
typedef struct {
    FsJob jobs[2];
    volatile int progress;
    int handed, done, first_done_before_second;
    int nones; /* "nothing now" answers */
    pthread_mutex_t lock;
} LateSource;

static int late_take(void *ctx, const FsJob **job, int *id, int wait)
{
    LateSource *s = ctx;
    int r = FS_TAKE_END;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (s->handed == 0 || (s->handed == 1 && s->progress >= 1)) {
            *id = s->handed++;
            *job = &s->jobs[*id];
            if (*id == 1) s->first_done_before_second = s->done > 0;
            r = FS_TAKE_JOB;
        } else if (s->handed == 1) {
            r = FS_TAKE_NONE;
            s->nones++;
        }
        pthread_mutex_unlock(&s->lock);
        if (r != FS_TAKE_NONE || !wait) return r;
        usleep(1000);
    }
}

static void late_done(void *ctx, int id)
{
    LateSource *s = ctx;
    (void)id;
    pthread_mutex_lock(&s->lock);
    s->done++;
    pthread_mutex_unlock(&s->lock);
}

static void hand_back(const FsArch *a, const FsTrainSpec *ts)
{
    FsFitResult ref[2], r[2];
    LateSource s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.lock, NULL);
    for (int k = 0; k < 2; k++) {
        train_result_alloc(&ref[k], ts->stop.max_epochs);
        FsJob j = job_of(a, ts, k, &ref[k]);
        train_jobs(&j, 1, 1);
        train_result_alloc(&r[k], ts->stop.max_epochs);
        s.jobs[k] = job_of(a, ts, k, &r[k]);
    }
    s.jobs[0].progress = &s.progress;
    unsigned long long h0 = helper_chunks();
    FsPoolSource src = {late_take, late_done, &s};
    FsPoolThreads *p = train_pool_start(&src, 1);
    train_pool_work(&src);
    train_pool_join(p);
    same("hand back: first job", &ref[0], &r[0]);
    same("hand back: second job", &ref[1], &r[1]);
    CHECK_MSG(s.nones > 0, "the second thread never heard 'nothing now'");
    CHECK_MSG(!s.first_done_before_second, "the second job was taken only after the first had finished");
    CHECK_MSG(helper_chunks() > h0, "no thread helped while the second job was not ready");
    printf("hand back: %d 'nothing now' answers, %llu chunks by helpers, second job taken while the first "
           "trained: %s\n", s.nones, helper_chunks() - h0, s.first_done_before_second ? "no" : "yes");
    for (int k = 0; k < 2; k++) {
        train_result_free(&ref[k]);
        train_result_free(&r[k]);
    }
    pthread_mutex_destroy(&s.lock);
}

/* 3. Journal lines without their timing fields and checksum, sorted. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void drop_number_field(char *s, const char *key)
{
    char *p;
    while ((p = strstr(s, key)) != NULL) {
        char *q = p + strlen(key);
        if (*q == '[') {
            while (*q && *q != ']') q++;
            if (*q) q++;
        } else {
            while (*q && *q != ',' && *q != '}') q++;
        }
        if (*q == ',') q++;
        memmove(p, q, strlen(q) + 1);
    }
}

static char *journal_norm(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *s = tp_read_file(path, NULL);
    if (!s) return strdup("");
    char *lines[256];
    int n = 0;
    for (char *line = strtok(s, "\n"); line && n < 256; line = strtok(NULL, "\n")) {
        /* The line's CRC covers the timings: cut it, in either framing
         * ("JSON #crc" of earlier builds, or the last "crc" member). */
        char *hash = strstr(line, "} #"), *crc = strstr(line, ",\"crc\":\"");
        if (hash) hash[1] = '\0';
        if (crc) crc[0] = '}', crc[1] = '\0';
        static const char *const keys[] = {"\"time\":", "\"pid\":", "\"val_seconds\":", "\"seconds\":",
                                           "\"train_seconds\":"};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) drop_number_field(line, keys[k]);
        lines[n++] = line;
    }
    qsort(lines, (size_t)n, sizeof *lines, cmp_str);
    size_t len = 0;
    for (int i = 0; i < n; i++) len += strlen(lines[i]) + 1;
    char *out = calloc(len + 1, 1);
    for (int i = 0; i < n; i++) strcat(strcat(out, lines[i]), "\n");
    free(s);
    return out;
}

static char *model_bytes(const char *dir, int fold, size_t *n)
{
    char models[1200], path[2400];
    snprintf(models, sizeof models, "%s/models", dir);
    DIR *d = opendir(models);
    struct dirent *e;
    char *bytes = NULL;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/fold%d.safetensors", models, e->d_name, fold);
        bytes = tp_read_file(path, n);
    }
    if (d) closedir(d);
    return bytes;
}

static void run_level(void)
{
    char tmp[256], sweep[300], dirs[3][300], log[300];
    tp_tmpdir(tmp, sizeof tmp, "team");
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    tp_write_text(sweep, "data:\n"
                         "  synth: {proteins: 80, seed: 4}\n"
                         "  window: 9\n"
                         "  folds: 2\n"
                         "model:\n"
                         "  depth: 2\n"
                         "  filters: 32\n"
                         "  kernel: 5\n"
                         "  dense: 32\n"
                         "training:\n"
                         "  epochs: 2\n"
                         "  batch_size: 16\n"
                         "  seed: 6\n");
    setenv("FOLDSWEEP_TEAM_STATS", "1", 1);
    char *ref = NULL, *ref_model[2] = {NULL, NULL};
    size_t ref_n[2] = {0, 0};
    for (int t = 1; t <= 3; t++) {
        char threads[8];
        snprintf(threads, sizeof threads, "%d", t);
        snprintf(dirs[t - 1], sizeof dirs[t - 1], "%s/t%d", tmp, t);
        snprintf(log, sizeof log, "%s/log%d.txt", tmp, t);
        char *argv[] = {"foldsweep", "run", sweep, "--out", dirs[t - 1], "--threads", threads, "--quiet", NULL};
        CHECK_MSG(tp_run_argv(argv, log) == 0, "run on %d threads", t);
        char *j = journal_norm(dirs[t - 1]);
        CHECK_MSG(tp_count(j, "\"kind\":\"fold\"") == 2, "%d threads: %d fold records", t,
                  tp_count(j, "\"kind\":\"fold\""));
        char *text = tp_read_file(log, NULL);
        unsigned long long regions = 0, chunks = 0, helped = 0;
        const char *st = text ? strstr(text, "team: ") : NULL;
        CHECK_MSG(st && sscanf(st, "team: %llu regions, %llu chunks, %llu by helpers", &regions, &chunks, &helped) == 3,
                  "%d threads: no team line in the log", t);
        printf("run on %d threads: %llu shared loops, %llu chunks, %llu by helpers\n", t, regions, chunks, helped);
        if (t == 3) CHECK_MSG(helped > 0, "3 threads, 2 folds: no chunk was run by a helper");
        if (t == 1) CHECK_MSG(helped == 0, "1 thread: helpers ran chunks");
        free(text);
        size_t mn[2];
        char *mb[2] = {model_bytes(dirs[t - 1], 0, &mn[0]), model_bytes(dirs[t - 1], 1, &mn[1])};
        if (t == 1) {
            ref = j;
            for (int f = 0; f < 2; f++) ref_model[f] = mb[f], ref_n[f] = mn[f];
            CHECK(mb[0] && mb[1]);
            continue;
        }
        CHECK_MSG(!strcmp(ref, j), "journal on %d threads differs from 1 thread:\n%s\nvs\n%s", t, j, ref);
        for (int f = 0; f < 2; f++) {
            CHECK_MSG(mb[f] && ref_model[f] && mn[f] == ref_n[f] && !memcmp(mb[f], ref_model[f], mn[f]),
                      "model file of fold %d on %d threads differs", f, t);
            free(mb[f]);
        }
        free(j);
    }
    free(ref);
    free(ref_model[0]);
    free(ref_model[1]);
    unsetenv("FOLDSWEEP_TEAM_STATS");
}

#ifdef FS_TEAM
/* One window of `len` seconds from w->wall: the owner's thread on its core
 * for share of it, `rate` work per second, sharing or not; returns the
 * rule's answer at its end (after the solo period, if one is running). */
static int window(FsTeamWindow *w, double len, double share, double rate, int shared)
{
    const double now = w->wall + len;
    w->work = rate * len;
    w->shared = shared;
    CHECK_MSG(team_window_open(w, now) == 2, "a window of %.3f s from %.3f is due to close", len, w->wall);
    return team_window_close(w, now, w->cpu + share * len);
}

static void window_rule(void)
{
    FsTeamWindow w;
    memset(&w, 0, sizeof w);
    CHECK(team_window_open(&w, 100.0) == 2 && team_window_close(&w, 100.0, 5.0) == 1);
    CHECK(team_window_open(&w, 100.001) == 1); /* within the window */
    /* Idle: sharing at full share, no solo rate yet: share on. */
    CHECK(window(&w, 0.04, 1.0, 2e9, 1) == 1);
    /* The core lost: a solo period. */
    CHECK(window(&w, 0.04, 0.5, 1e9, 1) == 0);
    const double first = w.solo_len, until = w.solo_until;
    CHECK(first > 0.0 && until > w.wall);
    CHECK(team_window_open(&w, until - 1e-6) == 0);
    /* Alone through the solo period at 1e9 a second: sharing may resume. */
    CHECK(window(&w, until - w.wall, 1.0, 1e9, 0) == 1);
    CHECK_NEAR(w.solo_rate, 1e9, 1.0);
    /* Shared at full CPU share, but slower than alone: busy (the rule as
     * it stood said share on). The period doubles. */
    CHECK(window(&w, 0.04, 1.0, 0.6e9, 1) == 0);
    CHECK_NEAR(w.solo_len, 2.0 * first, 1e-12);
    /* Alone again, then sharing that pays: the period halves. */
    CHECK(window(&w, w.solo_until - w.wall, 1.0, 1e9, 0) == 1);
    CHECK(window(&w, 0.04, 1.0, 1.7e9, 1) == 1);
    CHECK_NEAR(w.solo_len, first, 1e-12);
    /* Busy after busy: the period doubles up to a cap, then stays. */
    double last = 0.0;
    for (int k = 0; k < 12; k++) {
        CHECK(window(&w, w.solo_until > w.wall ? w.solo_until - w.wall : 0.04, 0.3, 1e9, 0) == 0);
        CHECK(w.solo_len >= last);
        last = w.solo_len;
    }
    CHECK(last > 4.0 * first && last < 100.0 * first);
    CHECK(window(&w, w.solo_until - w.wall, 0.3, 1e9, 0) == 0 && w.solo_len == last);
}
#endif

int main(void)
{
#ifdef FS_TEAM
    window_rule();
#endif
    const char *team = getenv("FOLDSWEEP_TEAM");
    if (team && !strcmp(team, "0")) TEST_SKIP("FOLDSWEEP_TEAM=0: helping is off");
    /* Before the first training: the threshold is read once. Helping is
     * checked whatever the machine's load (the busy-machine rule, which
     * rightly trains alone beside other work, is item 4's). */
    setenv("FOLDSWEEP_TEAM_MIN_WORK", "0", 1);
    setenv("FOLDSWEEP_TEST_TEAM_SHARE", "1", 1);
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 60, 9, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 3, 1, &err) == 0, "%s", err.msg);

    /* Every layer kind (test_block's net): gather, batch norm, highway,
     * dropout, layer norm, elu and tanh, each loop of each; 32 channels give the 8 x 32
     * weight-gradient tiles whole tiles. */
    FsArch all;
    memset(&all, 0, sizeof all);
    all.window = 11;
    all.n_layers = 7;
    all.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 32, .width = 5, .act = FS_ACT_SWISH};
    all.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.9f};
    all.layers[2] = (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = 3, .act = FS_ACT_RELU, .gate_bias = -1.0f};
    all.layers[3] = (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = 0.2f};
    all.layers[4] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 16, .width = 3, .act = FS_ACT_ELU, .act_param = 1.0f};
    all.layers[5] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 24, .act = FS_ACT_TANH};
    all.layers[6] = (FsLayerSpec){.kind = FS_LAYER_LAYERNORM, .eps = 1e-3f};
    /* R1's shape, smaller: conv, conv, dense (the benchmark's kind). */
    FsArch r1;
    memset(&r1, 0, sizeof r1);
    r1.window = 13;
    r1.n_layers = 3;
    r1.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 48, .width = 5, .act = FS_ACT_SWISH};
    r1.layers[1] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 48, .width = 5, .act = FS_ACT_SWISH};
    r1.layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 72, .act = FS_ACT_SWISH};

    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = 8;
    ts.eval_batch = 64;
    ts.stop.max_epochs = 2;
    ts.seed[0] = 3;
    alone("every layer, batch 8, fused dense update", &all, &ts);
    FsTrainSpec clip = ts;
    clip.clip_norm = 1.0f;
    clip.batch = 24;
    alone("every layer, batch 24, clipping", &all, &clip);
    FsTrainSpec big = ts;
    big.batch = 32;
    alone("conv-conv-dense, batch 32", &r1, &big);
    FsTrainSpec sgd = ts;
    sgd.opt = FS_OPT_SGD;
    sgd.lr = 0.02f;
    sgd.weight_decay = 1e-4f;
    alone("conv-conv-dense, batch 8, SGD with weight decay", &r1, &sgd);

    FsTrainSpec late = ts;
    late.stop.max_epochs = 3;
    hand_back(&r1, &late);

    run_level();
    data_free(&ds);
    return test_finish();
}
