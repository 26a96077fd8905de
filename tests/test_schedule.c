/*
 * Learning-rate schedules and class weights (train/train.h: train_lr_at,
 * train_class_weights; training.lr_schedule, lr_step_every,
 * lr_step_factor, warmup_epochs, class_weights):
 *
 * 1. The rate of every step of a few epochs against formulas written out
 *    here: constant (the very float of learning_rate), step, cosine,
 *    linear warm-up alone and before cosine.
 * 2. Balanced class weights from counts, N / (3 N_c), 1 for an absent class.
 * 3. A fit uses them: with the step schedule (every epoch, factor 0.5) the
 *    first epoch is bit for bit the constant rate's and the second is not;
 *    cosine differs from the first step on; balanced class weights change
 *    the training loss but, at a learning rate too small to move a
 *    weight, not the validation loss (unweighted).
 * 4. The sweep: the options reach the trial's config and id only away from
 *    their defaults (a default sweep's trial config has none of the keys),
 *    and a wrong value is refused naming the key and its line.
 */
#include "data/data.h"
#include "sweep/sweep.h"
#include "synth/synth.h"
#include "test.h"
#include "test_sweep_expect.h"
#include "train/train.h"

static void rates(void)
{
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.lr = 0.1f;
    ts.stop.max_epochs = 4;
    const long S = 3;
    for (int e = 1; e <= 4; e++)
        for (long s = 0; s < S; s++) CHECK(train_lr_at(&ts, e, s, S) == ts.lr); /* constant: the same bits */

    ts.lr_schedule = FS_LR_STEP;
    ts.lr_step_every = 2;
    ts.lr_step_factor = 0.5f;
    const double step_want[5] = {0, 0.1, 0.1, 0.05, 0.05};
    for (int e = 1; e <= 4; e++) CHECK_NEAR(train_lr_at(&ts, e, 1, S), step_want[e], 1e-8);

    ts.lr_schedule = FS_LR_COSINE;
    for (int e = 1; e <= 4; e++)
        for (long s = 0; s < S; s++) {
            const double t = (double)((e - 1) * S + s);
            CHECK_NEAR(train_lr_at(&ts, e, s, S), 0.1 * 0.5 * (1.0 + cos(M_PI * t / 12.0)), 1e-8);
        }
    CHECK(train_lr_at(&ts, 1, 0, S) == 0.1f);

    ts.warmup_epochs = 2; /* 6 warm-up steps: (t + 1) / 6 of the cosine's rate */
    for (int e = 1; e <= 4; e++)
        for (long s = 0; s < S; s++) {
            const double t = (double)((e - 1) * S + s), warm = t < 6 ? (t + 1.0) / 6.0 : 1.0;
            CHECK_NEAR(train_lr_at(&ts, e, s, S), warm * 0.1 * 0.5 * (1.0 + cos(M_PI * t / 12.0)), 1e-8);
        }
    ts.lr_schedule = FS_LR_CONSTANT;
    CHECK_NEAR(train_lr_at(&ts, 1, 0, S), 0.1 / 6.0, 1e-9);
    CHECK(train_lr_at(&ts, 3, 0, S) == 0.1f);
}

static void weights(void)
{
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    const uint64_t c[3] = {10, 30, 60}, absent[3] = {0, 50, 50};
    float w[3];
    train_class_weights(&ts, FS_CLASSES, c, w);
    CHECK(w[0] == 1.0f && w[1] == 1.0f && w[2] == 1.0f);
    ts.class_weights = FS_CW_BALANCED;
    train_class_weights(&ts, FS_CLASSES, c, w);
    CHECK_NEAR(w[0], 100.0 / 30.0, 1e-6);
    CHECK_NEAR(w[1], 100.0 / 90.0, 1e-6);
    CHECK_NEAR(w[2], 100.0 / 180.0, 1e-6);
    train_class_weights(&ts, FS_CLASSES, absent, w);
    CHECK(w[0] == 1.0f);
    CHECK_NEAR(w[1], 100.0 / 150.0, 1e-6);
    /* Explicit weights are the spec's own, whatever the counts. */
    ts.class_weights = FS_CW_EXPLICIT;
    ts.class_w[0] = 2.0f, ts.class_w[1] = 0.5f, ts.class_w[2] = 1.25f;
    train_class_weights(&ts, FS_CLASSES, c, w);
    CHECK(w[0] == 2.0f && w[1] == 0.5f && w[2] == 1.25f);
    FsErr err = {0};
    CHECK(train_spec_check(&ts, &err) == 0);
    ts.class_w[1] = 0.0f;
    CHECK(train_spec_check(&ts, &err) != 0);
    CHECK_CONTAINS(err.msg, "class E's weight must be > 0");
    const uint8_t ss[5] = {FS_SS_H, FS_SS_E, FS_SS_C, FS_SS_C, FS_SS_H};
    const uint32_t idx[4] = {0, 2, 3, 4};
    uint64_t n[FS_MAX_CLASSES]; /* train_class_counts fills every class a label byte can hold */
    train_class_counts(ss, idx, 4, n);
    CHECK(n[0] == 2 && n[1] == 0 && n[2] == 2);
}

static FsDataset ds;

static void fit(const FsTrainSpec *ts, FsFitResult *r)
{
    FsArch a;
    memset(&a, 0, sizeof a);
    a.window = 9;
    a.n_layers = 2;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 8, .width = 3, .act = FS_ACT_RELU};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 8, .act = FS_ACT_RELU};
    train_result_alloc(r, ts->stop.max_epochs);
    FsJob j;
    memset(&j, 0, sizeof j);
    j.arch = &a;
    j.spec = ts;
    j.data = &ds;
    j.fold = 0;
    j.result = r;
    CHECK(train_job(&j) == 0 && r->status == FS_FIT_OK);
}

static void fits(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 40, 3, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 3, 1, &err) == 0, "%s", err.msg);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_SGD;
    ts.lr = 0.05f;
    ts.stop.max_epochs = 2;
    FsFitResult c, st, co;
    fit(&ts, &c);
    ts.lr_schedule = FS_LR_STEP;
    ts.lr_step_every = 1;
    ts.lr_step_factor = 0.5f;
    fit(&ts, &st);
    ts.lr_schedule = FS_LR_COSINE;
    fit(&ts, &co);
    CHECK(st.curves.train_loss[0] == c.curves.train_loss[0] && st.curves.val_loss[0] == c.curves.val_loss[0]);
    CHECK(st.curves.val_loss[1] != c.curves.val_loss[1]);
    CHECK(co.curves.val_loss[0] != c.curves.val_loss[0]);
    train_result_free(&c), train_result_free(&st), train_result_free(&co);

    /* Class weights: the rate too small to move a weight by a bit of it. */
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_SGD;
    ts.momentum = 0.0f;
    ts.lr = 1e-30f;
    ts.stop.max_epochs = 1;
    FsFitResult u, w;
    fit(&ts, &u);
    ts.class_weights = FS_CW_BALANCED;
    fit(&ts, &w);
    CHECK(u.curves.val_loss[0] == w.curves.val_loss[0]);
    CHECK_MSG(u.curves.train_loss[0] != w.curves.train_loss[0], "weighted training loss %g, unweighted %g",
              w.curves.train_loss[0], u.curves.train_loss[0]);
    train_result_free(&u), train_result_free(&w);
    data_free(&ds);
}

static void sweeps(void)
{
    const char *base = "data:\n  synth: {proteins: 30, seed: 1}\n  window: 9\n  folds: 3\nmodel:\n  depth: 1\n"
                       "training:\n  epochs: 2\n";
    char text[1000], why[2000];
    FsSweep sw;
    CHECK_MSG(sweep_text(&sw, base, why, sizeof why) == 0, "%s", why);
    CHECK(strstr(sw.trials[0].config, "lr_schedule") == NULL && strstr(sw.trials[0].config, "warmup") == NULL &&
          strstr(sw.trials[0].config, "class_weights") == NULL);
    CHECK(strstr(sw.canonical, "lr_schedule") == NULL && strstr(sw.canonical, "class_weights") == NULL);
    sweep_free(&sw);
    snprintf(text, sizeof text, "%s  lr_schedule: [constant, step]\n  lr_step_every: 3\n  warmup_epochs: 1\n"
             "  class_weights: balanced\n", base);
    CHECK_MSG(sweep_text(&sw, text, why, sizeof why) == 0, "%s", why);
    CHECK(sw.n_trials == 2);
    if (sw.n_trials == 2) {
        CHECK_CONTAINS(sw.trials[1].config, "\"lr_schedule\":\"step\",\"lr_step_every\":3,\"lr_step_factor\":0.5,");
        CHECK_CONTAINS(sw.trials[0].config, "\"class_weights\":\"balanced\",\"clip_norm\"");
        CHECK_CONTAINS(sw.trials[0].config, "\"warmup_epochs\":1,\"weight_decay\"");
        CHECK(strstr(sw.trials[0].config, "lr_step_every") == NULL); /* only with the step schedule */
        CHECK(sw.trials[1].train.lr_schedule == FS_LR_STEP && sw.trials[1].train.warmup_epochs == 1 &&
              sw.trials[1].train.class_weights == FS_CW_BALANCED);
        CHECK_CONTAINS(sw.canonical, "lr_schedule: [constant, step]");
    }
    sweep_free(&sw);
    /* Explicit weights: a mapping, alone or beside the names in a list. */
    snprintf(text, sizeof text, "%s  class_weights: [none, {H: 1, E: 2.5, C: 0.5}, {C: 3, E: 1, H: 1}]\n", base);
    CHECK_MSG(sweep_text(&sw, text, why, sizeof why) == 0, "%s", why);
    CHECK(sw.n_trials == 3);
    if (sw.n_trials == 3) {
        const FsTrainSpec *t = &sw.trials[1].train;
        CHECK(t->class_weights == FS_CW_EXPLICIT && t->class_w[0] == 1.0f && t->class_w[1] == 2.5f &&
              t->class_w[2] == 0.5f);
        CHECK(sw.trials[2].train.class_w[2] == 3.0f);
        CHECK_CONTAINS(sw.trials[1].config, "\"class_weights\":{\"C\":0.5,\"E\":2.5,\"H\":1},\"clip_norm\"");
        CHECK(strstr(sw.trials[0].config, "class_weights") == NULL);
        CHECK_CONTAINS(sw.canonical, "class_weights: [none, {H: 1, E: 2.5, C: 0.5}, {H: 1, E: 1, C: 3}]");
        /* The canonical text reads back to the same trials. */
        FsSweep back;
        CHECK_MSG(sweep_text(&back, sw.canonical, why, sizeof why) == 0, "%s", why);
        for (int i = 0; i < 3 && back.n_trials == 3; i++) CHECK(!strcmp(back.trials[i].id, sw.trials[i].id));
        sweep_free(&back);
    }
    sweep_free(&sw);
    /* (A key given twice is the YAML reader's: every mapping refuses it.) */
    const char *bad[][3] = {{"{H: 1, E: 2}", "9:18", "missing class C"},
                            {"{H: 1, E: 2, C: 0}", "9:34", "class_weights.C: expected a weight > 0"},
                            {"{H: 1, E: 2, C: 1, X: 1}", "9:37", "unknown class 'X'"},
                            {"[balanced, {H: 1, H: 2, E: 1, C: 1}]", "9:36", "duplicate key 'H'"}};
    for (int i = 0; i < 4; i++) {
        snprintf(text, sizeof text, "%s  class_weights: %s\n", base, bad[i][0]);
        CHECK(sweep_text(&sw, text, why, sizeof why) != 0);
        CHECK_CONTAINS(why, bad[i][1]);
        CHECK_CONTAINS(why, bad[i][2]);
        sweep_free(&sw);
    }
    snprintf(text, sizeof text, "%s  lr_schedule: linear\n", base);
    CHECK(sweep_text(&sw, text, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "9:");
    CHECK_CONTAINS(why, "training.lr_schedule");
    CHECK_CONTAINS(why, "constant, step or cosine");
    sweep_free(&sw);
    snprintf(text, sizeof text, "%s  lr_step_factor: 0\n", base);
    CHECK(sweep_text(&sw, text, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "lr_step_factor");
    sweep_free(&sw);
}

int main(void)
{
    rates();
    weights();
    fits();
    sweeps();
    return test_finish();
}
