/*
 * test_model_json: an exported model folder both ways, through the one
 * module that owns its format (predict/export.c): predict_export copies a
 * set's model files and writes model.json; predict_find reads the folder
 * back into the same set: the trial, its rank, metric, mean and spread
 * (bit for bit), each fold and its file, the run folder; one fold alone on
 * request, and a refit ("fold": "all", no rank or score) the same way.
 */
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include "predict/predict.h"
#include "test_proc.h"

static char tmp[256];
static FsNet net;
static float *weights;

/* A small model file for `fold` (FS_FOLD_ALL: a refit) of trial id. */
static void model_file(const char *path, const char *id, int fold)
{
    FsModelInfo info = {.trial_index = 1, .fold = fold, .folds = 3, .best_epoch = 3 + fold, .val_q3 = 0.6f,
                        .val_loss = 0.8f, .data_fingerprint = 0x0123456789abcdefULL, .config = "{\"seed\":2}"};
    snprintf(info.trial, sizeof info.trial, "%s", id);
    if (fold == FS_FOLD_ALL) {
        info.val_q3 = info.val_loss = NAN;
        info.best_epoch = info.epochs = 4;
        snprintf(info.epochs_rule, sizeof info.epochs_rule, "median of the folds' best epochs");
        info.n_fold_best = 3;
        info.fold_best[0] = 3, info.fold_best[1] = 4, info.fold_best[2] = 5;
    }
    uint8_t *bytes;
    uint64_t n;
    modelfile_serialize(&net, weights, &info, &bytes, &n);
    tp_write_file(path, bytes, n, "wb");
    free(bytes);
}

static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = tp_read_file(a, &na), *y = tp_read_file(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

/* A trial's three fold models out of a run folder, and back. */
static void test_folds(const char *run, const char *id)
{
    FsModelSet set, back;
    FsErr err = {0};
    memset(&set, 0, sizeof set);
    for (int k = 0; k < 3; k++) {
        snprintf(set.path[k], sizeof set.path[k], "%s/models/%s/fold%d.safetensors", run, id, k);
        model_file(set.path[k], id, k);
        set.fold[k] = k;
    }
    set.n = 3;
    snprintf(set.trial, sizeof set.trial, "%s", id);
    set.rank = 2;
    set.mean = 0.61803398874989485;
    set.std = 1.0 / 3.0;
    snprintf(set.metric, sizeof set.metric, "q3");
    char run_abs[PATH_MAX]; /* realpath's buffer: PATH_MAX (glibc's fortify checks it) */
    CHECK(realpath(run, run_abs) != NULL);
    CHECK(strlen(run_abs) < sizeof set.run);
    memcpy(set.run, run_abs, strlen(run_abs) + 1);
    char out[400], mj[500];
    snprintf(out, sizeof out, "%s/export", tmp);
    CHECK_MSG(predict_export("elsewhere", &set, out, &err) == 0, "%s", err.msg);

    memset(&back, 0, sizeof back);
    CHECK_MSG(predict_find(&back, out, NULL, 0, -1, &err) == 0, "%s", err.msg);
    CHECK(back.n == 3 && !strcmp(back.trial, id) && back.rank == 2 && !strcmp(back.metric, "q3"));
    CHECK(back.mean == set.mean && back.std == set.std); /* every digit */
    CHECK_MSG(!strcmp(back.run, set.run), "run %s, expected %s", back.run, set.run);
    for (int k = 0; k < back.n && k < 3; k++) {
        char want[500];
        snprintf(want, sizeof want, "%s/fold%d.safetensors", out, k);
        CHECK(back.fold[k] == k && !strcmp(back.path[k], want));
        CHECK_MSG(same_file(set.path[k], back.path[k]), "%s is not a copy", back.path[k]);
    }
    snprintf(mj, sizeof mj, "%s/model.json", out);
    CHECK(tp_count_in_file(mj, "\"format\": \"foldsweep-export\"") == 1);

    /* One fold of the export, and one it does not have. */
    memset(&back, 0, sizeof back);
    CHECK(predict_find(&back, out, NULL, 0, 1, &err) == 0 && back.n == 1 && back.fold[0] == 1);
    memset(&back, 0, sizeof back);
    CHECK(predict_find(&back, out, NULL, 0, 7, &err) == -1);
    CHECK_CONTAINS(err.msg, "no fold 7 in this export");
}

/* A refit: fold "all", no rank and no score; the run folder from the
 * caller when the set does not know it. */
static void test_refit(const char *run, const char *id)
{
    FsModelSet set, back;
    FsErr err = {0};
    memset(&set, 0, sizeof set);
    snprintf(set.path[0], sizeof set.path[0], "%s/refit.safetensors", tmp);
    model_file(set.path[0], id, FS_FOLD_ALL);
    set.n = 1;
    set.fold[0] = -1; /* the file's own fold */
    set.mean = set.std = NAN;
    char out[400], mj[500], abs[PATH_MAX];
    snprintf(out, sizeof out, "%s/refit-export", tmp);
    CHECK_MSG(predict_export(run, &set, out, &err) == 0, "%s", err.msg);
    snprintf(mj, sizeof mj, "%s/model.json", out);
    CHECK(tp_count_in_file(mj, "\"fold\": \"all\"") == 1 && tp_count_in_file(mj, "\"rank\"") == 0);

    memset(&back, 0, sizeof back);
    CHECK_MSG(predict_find(&back, out, NULL, 0, -1, &err) == 0, "%s", err.msg);
    CHECK(back.n == 1 && back.fold[0] == FS_FOLD_ALL && !strcmp(back.trial, id)); /* the file's trial */
    CHECK(back.rank == 0 && isnan(back.mean) && !back.metric[0]);
    CHECK(realpath(run, abs) != NULL && !strcmp(back.run, abs));
}

int main(void)
{
    FsArch a;
    memset(&a, 0, sizeof a);
    a.window = 5;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 3, .width = 3, .act = FS_ACT_RELU};
    a.n_layers = 1;
    FsErr err = {0};
    CHECK(model_compile(&net, &a, 8, &err) == 0);
    long nw = net.n_params + net.n_state;
    weights = malloc(sizeof(float) * (size_t)nw);
    for (long i = 0; i < nw; i++) weights[i] = (float)i / 7.0f;

    tp_tmpdir(tmp, sizeof tmp, "model_json");
    const char *id = "0123456789abcdef";
    char run[400], dir[500];
    snprintf(run, sizeof run, "%s/run", tmp);
    snprintf(dir, sizeof dir, "%s/models/%s", run, id);
    CHECK(mkdir(run, 0777) == 0 && mkdir(strcat(strcpy(dir, run), "/models"), 0777) == 0);
    snprintf(dir, sizeof dir, "%s/models/%s", run, id);
    CHECK(mkdir(dir, 0777) == 0);
    snprintf(dir, sizeof dir, "%s/journal.jsonl", run);
    tp_write_text(dir, ""); /* what makes it a run folder */
    test_folds(run, id);
    test_refit(run, id);
    free(weights);
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
