/*
 * The fused dense update (no clipping: dense weights updated inside the
 * backward pass, their gradient never stored) must train exactly as the
 * unfused path does (gradients stored, then the optimizer over all of
 * them). A clip norm nobody reaches takes the unfused path with a scale of
 * 1, so both must give bitwise identical losses, epoch by epoch, for every
 * optimizer, for widths that take each vector path (128, 64 and ragged
 * columns) and batches that take the 8 x 8 input-gradient tile or not (up to
 * FS_FUSE_MAX_BATCH: larger batches never fuse). Equal losses would also
 * follow if fusing silently stopped, so each fit also counts the fused
 * updates the CPU ran (fs_dense_fused_calls): one per fused layer and step
 * with fusion, none without it.
 */
#include <stdlib.h>

#include "data/data.h"
#include "synth/synth.h"
#include "test.h"
#include "train/core.h"

enum { EPOCHS = 2 };

static FsDataset ds;

/* src/train/dense.c: fused dense updates run by this thread (CPU build). */
extern _Thread_local long fs_dense_fused_calls;

/* Fused updates a fit of `layers` fused layers must run: one per layer and
 * minibatch (the last one partial), every epoch. */
static long fused_expected(const FsFitResult *r, int batch, int layers)
{
    long per_epoch = (long)(r->train_examples / (uint64_t)r->epochs);
    return (long)r->epochs * ((per_epoch + batch - 1) / batch) * layers;
}

static void fit(const FsArch *a, const FsTrainSpec *ts, FsFitResult *r)
{
    train_result_alloc(r, ts->stop.max_epochs);
    FsJob job = {.arch = a, .spec = ts, .data = &ds, .fold = 1, .result = r};
    CHECK(train_job(&job) == 0);
}

/* layers: how many of a's layers (the output layer included) fuse. */
static void same_fit(const char *what, const FsArch *a, FsTrainSpec ts, int layers)
{
    FsFitResult fused, plain;
    ts.clip_norm = 0.0f;
    long n0 = fs_dense_fused_calls;
    fit(a, &ts, &fused);
    long n_fused = fs_dense_fused_calls - n0;
    ts.clip_norm = 1e30f;
    n0 = fs_dense_fused_calls;
    fit(a, &ts, &plain);
    long n_plain = fs_dense_fused_calls - n0;
    CHECK_MSG(n_fused == fused_expected(&fused, ts.batch, layers) && n_fused > 0,
              "%s: the fused path ran %ld times, expected %ld", what, n_fused,
              fused_expected(&fused, ts.batch, layers));
    CHECK_MSG(n_plain == 0, "%s: fused updates in a fit with clipping: %ld", what, n_plain);
    CHECK_MSG(fused.status == FS_FIT_OK && plain.status == FS_FIT_OK, "%s: status %d / %d", what, fused.status,
              plain.status);
    CHECK_MSG(fused.epochs == EPOCHS && plain.epochs == EPOCHS, "%s: epochs %d / %d", what, fused.epochs,
              plain.epochs);
    for (int e = 0; e < EPOCHS; e++) {
        CHECK_MSG(fused.curves.train_loss[e] == plain.curves.train_loss[e],
                  "%s: epoch %d train loss fused %.9g, unfused %.9g", what, e + 1, fused.curves.train_loss[e],
                  plain.curves.train_loss[e]);
        CHECK_MSG(fused.curves.val_loss[e] == plain.curves.val_loss[e],
                  "%s: epoch %d validation loss fused %.9g, unfused %.9g", what, e + 1, fused.curves.val_loss[e],
                  plain.curves.val_loss[e]);
    }
    CHECK_MSG(memcmp(fused.best_confusion, plain.best_confusion, sizeof fused.best_confusion) == 0,
              "%s: confusion matrices differ", what);
    printf("%s: train loss %.6f then %.6f, fused and unfused equal (%ld fused updates)\n", what,
           fused.curves.train_loss[0], fused.curves.train_loss[EPOCHS - 1], n_fused);
    train_result_free(&fused);
    train_result_free(&plain);
}

int main(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 40, 5, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 3, 1, &err) == 0, "%s", err.msg);

    FsArch a;
    memset(&a, 0, sizeof a);
    a.window = 9;
    a.n_layers = 4;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 8, .width = 3, .act = FS_ACT_SWISH};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 128, .act = FS_ACT_RELU};
    a.layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 64, .act = FS_ACT_TANH};
    a.layers[3] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 150, .act = FS_ACT_ELU, .act_param = 1.0f};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.stop.max_epochs = EPOCHS;
    ts.seed[0] = 7;

    const int batches[] = {8, 5, FS_FUSE_MAX_BATCH};
    for (int i = 0; i < 3; i++) {
        char what[64];
        ts.batch = batches[i];
        ts.opt = FS_OPT_ADAM;
        ts.lr = 1e-3f;
        ts.weight_decay = 1e-4f;
        snprintf(what, sizeof what, "Adam + L2, batch %d", ts.batch);
        same_fit(what, &a, ts, 4);
        ts.opt = FS_OPT_ADAMW;
        snprintf(what, sizeof what, "AdamW, batch %d", ts.batch);
        same_fit(what, &a, ts, 4);
        ts.opt = FS_OPT_SGD;
        ts.lr = 0.02f;
        ts.momentum = 0.9f;
        snprintf(what, sizeof what, "SGD + momentum, batch %d", ts.batch);
        same_fit(what, &a, ts, 4);
    }

    /* Past FS_FUSE_MAX_BATCH nothing fuses, clipping or not. */
    FsFitResult big;
    ts.batch = FS_FUSE_MAX_BATCH + 1;
    ts.clip_norm = 0.0f;
    long n0 = fs_dense_fused_calls;
    fit(&a, &ts, &big);
    CHECK_MSG(big.status == FS_FIT_OK && fs_dense_fused_calls == n0, "batch %d: status %d, %ld fused updates",
              ts.batch, big.status, fs_dense_fused_calls - n0);
    train_result_free(&big);

    /* A dense layer first on the one-hot input is a gather, not fused;
     * the output layer after it is. */
    FsArch g;
    memset(&g, 0, sizeof g);
    g.window = 7;
    g.n_layers = 1;
    g.layers[0] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 16, .act = FS_ACT_RELU};
    ts.opt = FS_OPT_ADAM;
    ts.lr = 1e-3f;
    ts.batch = 8;
    same_fit("gathered dense, Adam, batch 8", &g, ts, 1);

    /* A fused gradient that overflows diverges the model as an unfused
     * one does: stopped in its first epoch, not trained on. */
    ts.opt = FS_OPT_SGD;
    ts.lr = 1e30f;
    ts.momentum = 0.0f;
    ts.clip_norm = 0.0f;
    FsFitResult r;
    n0 = fs_dense_fused_calls;
    fit(&a, &ts, &r);
    CHECK_MSG(r.status == FS_FIT_DIVERGED && r.diverged_epoch == 1, "fused divergence: status %d epoch %d",
              r.status, r.diverged_epoch);
    CHECK_MSG(fs_dense_fused_calls > n0, "fused divergence: the fused path did not run");
    printf("fused: diverged at epoch %d step %ld\n", r.diverged_epoch, r.diverged_step);
    train_result_free(&r);

    data_free(&ds);
    return test_finish();
}
