/*
 * A fold's checkpoints (train/checkpoint.c): a fit stopped at any batch and
 * resumed from its checkpoint, or resumed from an earlier checkpoint after
 * it went on (a killed process), ends with the same numbers, bit for bit,
 * as a fit that never stopped; so does a chain of several stops. A damaged
 * checkpoint, or another fold's, is refused with a reason and the fold
 * starts afresh (and still ends with the same numbers).
 */
#include <stdlib.h>

#include "synth/synth.h"
#include "test.h"
#include "train/train.h"

static FsDataset ds;
static FsArch arch;
static FsTrainSpec ts;

/* The save callback's record: every checkpoint's bytes, and a cancel flag
 * raised after the `cancel_after`-th one. */
typedef struct {
    uint8_t *bytes[64];
    uint64_t n[64];
    int count, cancel_after;
    volatile int cancel;
} Saved;

static void on_save(void *ctx, const uint8_t *bytes, uint64_t n)
{
    Saved *s = ctx;
    if (s->count < 64) {
        s->bytes[s->count] = malloc(n);
        memcpy(s->bytes[s->count], bytes, n);
        s->n[s->count] = n;
    }
    s->count++;
    if (s->cancel_after && s->count == s->cancel_after) s->cancel = 1;
}

static void saved_free(Saved *s)
{
    for (int i = 0; i < s->count && i < 64; i++) free(s->bytes[i]);
    memset(s, 0, sizeof *s);
}

/* Trains fold `fold`, checkpointing every `every` steps into sv, resuming
 * from (resume, n) if given. */
static void fit(int fold, FsFitResult *r, float *w, Saved *sv, long every, const uint8_t *resume, uint64_t n,
                FsCheckpointing *cs)
{
    memset(cs, 0, sizeof *cs);
    cs->every_steps = every;
    cs->save = on_save;
    cs->ctx = sv;
    cs->resume = resume;
    cs->resume_n = n;
    cs->origin = "test checkpoint";
    train_result_alloc(r, ts.stop.max_epochs);
    FsJob job = {&arch, &ts, &ds, fold, r, w, &sv->cancel, NULL, NULL, NULL, cs, 0, 0};
    CHECK(train_job(&job) == 0);
}

static long n_weights(void)
{
    FsNet net;
    FsErr err = {0};
    CHECK(model_compile(&net, &arch, 8, &err) == 0);
    return net.n_params + net.n_state;
}

/* The same outcome as ref, bit for bit (seconds aside). */
static void same(const char *what, const FsFitResult *ref, const float *wref, const FsFitResult *r, const float *w,
                 long nw)
{
    CHECK_MSG(r->status == ref->status, "%s: status %d vs %d", what, r->status, ref->status);
    CHECK_MSG(r->epochs == ref->epochs && r->best_epoch == ref->best_epoch && r->halted_by == ref->halted_by,
              "%s: epochs %d/%d best %d/%d", what, r->epochs, ref->epochs, r->best_epoch, ref->best_epoch);
    CHECK_MSG(r->best_val_loss == ref->best_val_loss, "%s: best loss %.9g vs %.9g", what, r->best_val_loss,
              ref->best_val_loss);
    CHECK_MSG(!memcmp(r->best_confusion, ref->best_confusion, sizeof r->best_confusion), "%s: confusion", what);
    CHECK_MSG(r->train_examples == ref->train_examples && r->val_examples == ref->val_examples, "%s: examples",
              what);
    int ne = r->epochs < ref->epochs ? r->epochs : ref->epochs;
    size_t b = sizeof(float) * (size_t)ne;
    CHECK_MSG(!memcmp(r->curves.train_loss, ref->curves.train_loss, b) &&
                  !memcmp(r->curves.val_loss, ref->curves.val_loss, b) &&
                  !memcmp(r->curves.val_q3, ref->curves.val_q3, b),
              "%s: curves differ", what);
    CHECK_MSG(!memcmp(w, wref, sizeof(float) * (size_t)nw), "%s: best weights differ", what);
}

int main(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 30, 4, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 3, 1, &err) == 0, "%s", err.msg);
    /* Every layer kind: batch-norm running statistics and dropout's step
     * keys are state a resume must bring back too. */
    memset(&arch, 0, sizeof arch);
    arch.window = 11;
    arch.n_layers = 6;
    arch.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 16, .width = 5, .act = FS_ACT_SWISH};
    arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.9f};
    arch.layers[2] = (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = 3, .act = FS_ACT_RELU, .gate_bias = -1.0f};
    arch.layers[3] = (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = 0.2f};
    arch.layers[4] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 24, .act = FS_ACT_TANH};
    arch.layers[5] = (FsLayerSpec){.kind = FS_LAYER_LAYERNORM, .eps = 1e-3f};
    train_spec_defaults(&ts);
    ts.batch = 8;
    ts.eval_batch = 64;
    ts.stop.kind = FS_STOP_PATIENCE;
    ts.stop.patience = 2;
    ts.stop.max_epochs = 4;
    /* A schedule with warm-up and class weights: a resumed fit must take
     * the rates and weights of the steps it resumes at (test_schedule). */
    ts.lr_schedule = FS_LR_COSINE;
    ts.warmup_epochs = 1;
    ts.class_weights = FS_CW_BALANCED;
    ts.seed[0] = 5;
    ts.seed[1] = 77;
    ts.seed[2] = 1;
    const long nw = n_weights();
    float *wref = calloc((size_t)nw, sizeof(float)), *w = calloc((size_t)nw, sizeof(float));

    /* The reference: checkpoints every 97 steps, never stopped. They do
     * not change the numbers (compared with a fit without any below). */
    Saved all = {0};
    FsCheckpointing cs;
    FsFitResult ref;
    fit(1, &ref, wref, &all, 97, NULL, 0, &cs);
    CHECK(ref.status == FS_FIT_OK && ref.epochs >= 3);
    CHECK_MSG(all.count >= 6, "only %d checkpoints", all.count);
    {
        FsFitResult plain;
        train_result_alloc(&plain, ts.stop.max_epochs);
        FsJob job = {&arch, &ts, &ds, 1, &plain, w, NULL, NULL, NULL, NULL, NULL, 0, 0};
        CHECK(train_job(&job) == 0);
        same("without checkpoints", &ref, wref, &plain, w, nw);
        train_result_free(&plain);
    }
    long steps_per_epoch = (long)((ref.train_examples / (uint64_t)ref.epochs + 7) / 8);
    printf("%d checkpoints over %d epochs of %ld steps\n", all.count, ref.epochs, steps_per_epoch);

    /* A killed process: resumed from each periodic checkpoint in turn
     * (the fit had gone on past it). */
    for (int k = 0; k < all.count && k < 64; k++) {
        Saved sv = {0};
        FsFitResult r;
        fit(1, &r, w, &sv, 40, all.bytes[k], all.n[k], &cs);
        char what[64];
        snprintf(what, sizeof what, "resumed from checkpoint %d", k + 1);
        CHECK_MSG(cs.note[0] == 0, "%s: refused: %s", what, cs.note);
        CHECK(cs.resumed_epoch >= 1);
        same(what, &ref, wref, &r, w, nw);
        train_result_free(&r);
        saved_free(&sv);
    }

    /* A stop (a signal): the fit writes a last checkpoint where it is and
     * ends cancelled; a chain of such stops and resumes still ends the same. */
    {
        Saved sv = {0};
        sv.cancel_after = 2;
        FsFitResult r;
        fit(1, &r, w, &sv, 230, NULL, 0, &cs);
        CHECK(r.status == FS_FIT_CANCELLED);
        CHECK(sv.count == 3); /* two periodic, then the stop's own */
        int links = 0;
        while (r.status == FS_FIT_CANCELLED && links < 40) {
            uint8_t *last = sv.bytes[sv.count - 1];
            uint64_t n = sv.n[sv.count - 1];
            sv.bytes[sv.count - 1] = NULL;
            saved_free(&sv);
            sv.cancel_after = 2;
            train_result_free(&r);
            fit(1, &r, w, &sv, 230, last, n, &cs);
            CHECK_MSG(cs.note[0] == 0, "chain: %s", cs.note);
            free(last);
            links++;
        }
        printf("a chain of %d stops and resumes\n", links);
        CHECK(links >= 3);
        same("a chain of stops", &ref, wref, &r, w, nw);
        train_result_free(&r);
        saved_free(&sv);
    }

    /* Refused: a damaged byte in the tensors, a truncated file, another
     * fold's checkpoint. Each fold starts afresh and ends as the reference. */
    {
        uint64_t n = all.n[2];
        uint8_t *bad = malloc(n);
        memcpy(bad, all.bytes[2], n);
        bad[n - 100] ^= 0x10;
        const struct {
            const char *what, *expect;
            uint64_t n;
        } cases[] = {{"a flipped bit", "CRC-32", n}, {"truncated", "test checkpoint", n / 2}};
        for (int c = 0; c < 2; c++) {
            Saved sv = {0};
            FsFitResult r;
            fit(1, &r, w, &sv, 40, bad, cases[c].n, &cs);
            CHECK_CONTAINS(cs.note, cases[c].expect);
            CHECK(cs.resumed_epoch == 0);
            same(cases[c].what, &ref, wref, &r, w, nw);
            printf("%s: %s\n", cases[c].what, cs.note);
            train_result_free(&r);
            saved_free(&sv);
        }
        free(bad);
        Saved sv = {0};
        FsFitResult r;
        fit(2, &r, w, &sv, 0, all.bytes[2], all.n[2], &cs);
        CHECK_MSG(strstr(cs.note, "sizes") || strstr(cs.note, "fold_seed"), "another fold: \"%s\"", cs.note);
        printf("another fold: %s\n", cs.note);
        train_result_free(&r);
        saved_free(&sv);
        ts.seed[2] = 2; /* fold 2's own seeds, still the wrong file */
        fit(2, &r, w, &sv, 0, all.bytes[2], all.n[2], &cs);
        CHECK(cs.note[0] != 0 && cs.resumed_epoch == 0);
        train_result_free(&r);
        saved_free(&sv);
    }
    train_result_free(&ref);
    saved_free(&all);
    free(w);
    free(wref);
    data_free(&ds);
    return test_finish();
}
