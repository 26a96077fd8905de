/*
 * Optimizer steps against hand-computed values: SGD with momentum, Adam,
 * AdamW, weight decay, clipping by global norm, and a non-finite gradient.
 */
#include "test.h"
#include "train/core.h"

typedef struct {
    FsNet net;
    FsModel m;
    float w[3], g[3], m1[3], m2[3], partial[FS_NORM_CHUNKS];
} Tiny;

static void tiny_init(Tiny *t, float w0, float w1, float w2)
{
    memset(t, 0, sizeof *t);
    t->net.n_params = 3;
    t->m.net = &t->net;
    t->m.w = t->w;
    t->m.g = t->g;
    t->m.m1 = t->m1;
    t->m.m2 = t->m2;
    t->m.partial = t->partial;
    t->w[0] = w0;
    t->w[1] = w1;
    t->w[2] = w2;
}

static void grads(Tiny *t, float a, float b, float c)
{
    t->g[0] = a;
    t->g[1] = b;
    t->g[2] = c;
}

/* One optimizer step at the spec's learning rate (the fit sets the
 * model's rate from the schedule before each step; here it is constant). */
static float update(Tiny *t, const FsTrainSpec *ts)
{
    t->m.lr = ts->lr;
    return step_update(&t->m, ts, 0);
}

int main(void)
{
    FsTrainSpec ts;
    Tiny t;

    /* SGD, momentum 0.9, lr 0.1, g = 0.5 twice:
     * v1 = 0.5, w = 1 - 0.05 = 0.95; v2 = 0.9*0.5 + 0.5 = 0.95, w = 0.95 - 0.095 = 0.855. */
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_SGD;
    ts.lr = 0.1f;
    ts.momentum = 0.9f;
    tiny_init(&t, 1.0f, 0.0f, 0.0f);
    grads(&t, 0.5f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.95, 1e-6);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.855, 1e-6);
    CHECK(t.m.step == 2);

    /* SGD with L2 weight decay 0.1, no momentum, lr 0.5, w = 2, g = 1:
     * g' = 1 + 0.1*2 = 1.2, w = 2 - 0.6 = 1.4. */
    ts.momentum = 0.0f;
    ts.lr = 0.5f;
    ts.weight_decay = 0.1f;
    tiny_init(&t, 2.0f, 0.0f, 0.0f);
    grads(&t, 1.0f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 1.4, 1e-6);

    /* Adam, lr 0.01, b1 0.9, b2 0.999, eps 1e-8, g = 2 then g = -1.
     * t=1: m = 0.2, v = 0.004, mhat = 2, vhat = 4, step = 0.01*2/2 = 0.01 -> w = 0.99.
     * t=2: m = 0.18 - 0.1 = 0.08, v = 0.003996 + 0.001 = 0.004996,
     *      mhat = 0.08/0.19 = 0.421053, vhat = 0.004996/0.001999 = 2.499250,
     *      step = 0.01 * 0.421053 / 1.580902 = 0.00266337 -> w = 0.98733663. */
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_ADAM;
    ts.lr = 0.01f;
    ts.eps = 1e-8f;
    tiny_init(&t, 1.0f, 0.0f, 0.0f);
    grads(&t, 2.0f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.99, 1e-6);
    grads(&t, -1.0f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.98733663, 2e-6);

    /* Adam's weight decay is L2 (added to the gradient): w = 1, g = 0,
     * wd = 0.5: g' = 0.5, first step moves by lr exactly: w = 0.99. */
    ts.weight_decay = 0.5f;
    tiny_init(&t, 1.0f, 0.0f, 0.0f);
    grads(&t, 0.0f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.99, 1e-6);

    /* AdamW's is decoupled: w = 1 * (1 - 0.01*0.5) = 0.995, and g = 0 adds
     * no Adam step (0 / (0 + eps) = 0). */
    ts.opt = FS_OPT_ADAMW;
    tiny_init(&t, 1.0f, 0.0f, 0.0f);
    grads(&t, 0.0f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.995, 1e-6);
    /* AdamW with g = 2: w = 0.995 - 0.01 = 0.985. */
    tiny_init(&t, 1.0f, 0.0f, 0.0f);
    grads(&t, 2.0f, 0.0f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], 0.985, 1e-6);

    /* Clipping by global norm: g = (3, 4, 0), norm 5, clip 1 -> (0.6, 0.8, 0);
     * plain SGD lr 1 moves w by exactly that. The returned norm is the
     * norm before clipping. */
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_SGD;
    ts.momentum = 0.0f;
    ts.lr = 1.0f;
    ts.clip_norm = 1.0f;
    tiny_init(&t, 0.0f, 0.0f, 0.0f);
    grads(&t, 3.0f, 4.0f, 0.0f);
    float norm = update(&t, &ts);
    CHECK_NEAR(norm, 5.0, 1e-6);
    CHECK_NEAR(t.w[0], -0.6, 1e-6);
    CHECK_NEAR(t.w[1], -0.8, 1e-6);
    /* Below the threshold nothing is scaled. */
    tiny_init(&t, 0.0f, 0.0f, 0.0f);
    grads(&t, 0.3f, 0.4f, 0.0f);
    update(&t, &ts);
    CHECK_NEAR(t.w[0], -0.3, 1e-6);
    CHECK_NEAR(t.w[1], -0.4, 1e-6);

    /* A non-finite gradient: reported, nothing applied, no step counted. */
    tiny_init(&t, 1.0f, 2.0f, 3.0f);
    grads(&t, 1.0f, NAN, 0.0f);
    norm = update(&t, &ts);
    CHECK(!isfinite(norm));
    CHECK(t.w[0] == 1.0f && t.w[1] == 2.0f && t.w[2] == 3.0f);
    CHECK(t.m.step == 0);

    /* Spec checks name the option. */
    FsErr err = {0};
    train_spec_defaults(&ts);
    ts.lr = -1.0f;
    CHECK(train_spec_check(&ts, &err) != 0);
    CHECK_CONTAINS(err.msg, "learning rate");
    memset(&err, 0, sizeof err);
    train_spec_defaults(&ts);
    ts.batch = 0;
    CHECK(train_spec_check(&ts, &err) != 0);
    CHECK_CONTAINS(err.msg, "batch size");
    return test_finish();
}
