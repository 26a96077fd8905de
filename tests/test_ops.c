/*
 * Every op of the trainer against the plain reference loops of
 * tests/reference/ops_ref.c, the pattern of ggml's backend tests and
 * llm.c's CPU reference: each op runs on the CPU trainer, under the
 * emulated block (which must also match the CPU bitwise) and on the GPU
 * where one is present, from the same inputs, and is compared with the
 * reference within a stated bound (reference/ops_harness.c). The ops:
 * conv1d forward, weight and input gradients (GEMM and one-hot gather /
 * scatter), dense forward and backward (unfused, and fused with each
 * optimizer), every activation, batch norm (training and inference),
 * dropout, highway, softmax cross-entropy, the optimizers with clipping,
 * batch windows, and the bare GEMM with each stride pattern. Shapes are
 * drawn at random around the awkward ones: batches 1, 3, 8, 13, channel
 * counts that are not multiples of 8 or 16, kernel widths 1, 3, 9, odd
 * windows, batches smaller than the net was compiled for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "test.h"
#include "train/act.h"
#include "train/core.h"

#include "reference/ops_exec.h"
#include "reference/ops_harness.c"
#include "reference/ops_layers.c"

static const int batches[] = {1, 3, 8, 13};
static const int widths[] = {1, 3, 9};
static const int odd_c[] = {1, 3, 5, 13, 21, 32, 37};
static const int odd_u[] = {1, 3, 7, 24, 33, 64, 128, 150};
static const FsAct acts[] = {FS_ACT_LINEAR, FS_ACT_RELU, FS_ACT_LEAKY_RELU, FS_ACT_SWISH, FS_ACT_TANH, FS_ACT_ELU};

static int pick(const int *a, int n)
{
    return a[irand(n)];
}

/* A window at least w long, odd. */
static int window_for(int w)
{
    int L = 5 + 2 * irand(7);
    return L < w ? w : L;
}

static FsLayerSpec conv(int units, int width, FsAct act)
{
    return (FsLayerSpec){.kind = FS_LAYER_CONV, .units = units, .width = width, .act = act, .act_param = 0.7f};
}

static FsLayerSpec dense(int units, FsAct act)
{
    return (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = units, .act = act, .act_param = 0.7f};
}

static void layer_cases(void)
{
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    const FsOptKind opts[] = {FS_OPT_SGD, FS_OPT_ADAM, FS_OPT_ADAMW};
    LayerCase lc;
    memset(&lc, 0, sizeof lc);
    for (int i = 0; i < 12; i++) {
        const int B = batches[i % 4], K = widths[i % 3], mb = B + (i % 2) * 3;
        const FsAct act = acts[i % 6];
        /* conv1d on a conv's output; the first conv's width sets the pad
         * (up to 4, more than this layer's K / 2 at times). */
        memset(&lc.arch, 0, sizeof lc.arch);
        const int w0 = pick(widths, 3), C = pick(odd_c, 7), F = pick(odd_c, 7) + irand(9);
        lc.arch.window = window_for(K > w0 ? K : w0);
        lc.arch.n_layers = 2;
        lc.arch.layers[0] = conv(C, w0, FS_ACT_RELU);
        lc.arch.layers[1] = conv(F, K, act);
        snprintf(lc.what, sizeof lc.what, "conv1d %d->%d K %d %s, L %d P %d, batch %d of %d", C, F, K,
                 model_act_name(act), lc.arch.window, w0 > K ? w0 / 2 : K / 2, B, mb);
        layer_case(&lc, 1, B, mb, NULL);
        /* The first conv: one-hot gather and scatter. */
        lc.arch.n_layers = 1;
        lc.arch.layers[0] = conv(F, K, acts[(i + 3) % 6]);
        snprintf(lc.what, sizeof lc.what, "one-hot conv1d ->%d K %d %s, L %d, batch %d", F, K,
                 model_act_name(acts[(i + 3) % 6]), lc.arch.window, B);
        layer_case(&lc, 0, B, mb, NULL);
        /* Highway on a conv's output. */
        lc.arch.n_layers = 2;
        lc.arch.layers[0] = conv(C, w0, FS_ACT_TANH);
        lc.arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = K, .act = act, .act_param = 0.7f};
        snprintf(lc.what, sizeof lc.what, "highway C %d K %d %s, L %d, batch %d", C, K, model_act_name(act),
                 lc.arch.window, B);
        layer_case(&lc, 1, B, mb, NULL);
    }
    for (int i = 0; i < 12; i++) {
        const int B = batches[i % 4], mb = B + (i % 3 == 2) * 4, U = pick(odd_u, 8), C = pick(odd_c, 7);
        const FsAct act = acts[(i + 1) % 6];
        ts.opt = opts[i % 3];
        ts.weight_decay = i % 2 ? 1e-2f : 0.0f; /* Adam without decay takes its plain loop */
        ts.momentum = 0.9f;
        ts.lr = ts.opt == FS_OPT_SGD ? 0.05f : 1e-3f;
        memset(&lc.arch, 0, sizeof lc.arch);
        const int K = pick(widths, 3);
        lc.arch.window = window_for(K); /* the conv's kernel fits the window */
        /* dense on a padded conv output (flattened), on a dense output
         * (L = 1), the output layer, and dense on the one-hot window. */
        lc.arch.n_layers = 3;
        lc.arch.layers[0] = conv(C, K, FS_ACT_RELU);
        lc.arch.layers[1] = dense(U, act);
        lc.arch.layers[2] = dense(pick(odd_u, 8), acts[i % 6]);
        const int which = 1 + i % 3; /* 3: the output layer */
        snprintf(lc.what, sizeof lc.what, "%s %d->%d %s, batch %d of %d", which == 3 ? "output" : "dense",
                 which == 1 ? lc.arch.window * C : lc.arch.layers[which - 1].units,
                 which == 3 ? FS_CLASSES : lc.arch.layers[which].units,
                 model_act_name(which == 3 ? FS_ACT_LINEAR : lc.arch.layers[which].act), B, mb);
        layer_case(&lc, which, B, mb, &ts);
        lc.arch.n_layers = 1;
        lc.arch.layers[0] = dense(U, act);
        snprintf(lc.what, sizeof lc.what, "one-hot dense L %d ->%d %s, batch %d", lc.arch.window, U,
                 model_act_name(act), B);
        layer_case(&lc, 0, B, mb, &ts);
    }
    for (int i = 0; i < 8; i++) {
        const int B = batches[i % 4], C = pick(odd_c, 7);
        memset(&lc.arch, 0, sizeof lc.arch);
        lc.arch.window = window_for(3);
        lc.arch.n_layers = 2;
        lc.arch.layers[0] = i < 4 ? conv(C, 3, FS_ACT_SWISH) : dense(C, FS_ACT_ELU);
        lc.arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.9f};
        snprintf(lc.what, sizeof lc.what, "batch norm C %d L %d, batch %d", C, i < 4 ? lc.arch.window : 1, B);
        layer_case(&lc, 1, B, B, NULL);
        /* Layer norm: each position over its channels (C 1 too: x-hat 0, the output beta). */
        const int lnC = i == 7 ? 1 : C;
        lc.arch.layers[0] = i < 4 ? conv(lnC, 3, FS_ACT_SWISH) : dense(lnC, FS_ACT_ELU);
        lc.arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_LAYERNORM, .eps = i % 2 ? 1e-5f : 1e-3f};
        snprintf(lc.what, sizeof lc.what, "layer norm C %d L %d, batch %d", lnC, i < 4 ? lc.arch.window : 1, B);
        layer_case(&lc, 1, B, B + 1, NULL);
        lc.arch.layers[0] = i < 4 ? conv(C, 3, FS_ACT_SWISH) : dense(C, FS_ACT_ELU);
        lc.arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = i % 4 == 3 ? 0.0f : 0.1f + 0.2f * (i % 3)};
        snprintf(lc.what, sizeof lc.what, "dropout %g C %d L %d, batch %d", lc.arch.layers[1].rate, C,
                 i < 4 ? lc.arch.window : 1, B);
        layer_case(&lc, 1, B, B + 1, NULL);
    }
}

#include "reference/ops_steps.c"

/* Swish and elu (act.c) against act_exp's scalar formula, bit for bit, on
 * values that take every branch of act_exp (its clamps at -87 and 88,
 * zeros of both signs, subnormals, infinities) placed across the CPU's
 * vector steps and its scalar tail (rows of 100). A NaN must stay NaN. */
static void act_special_cases(void)
{
    static const float special[] = {-1000.0f, -88.5f, -88.0f, -87.5f, -87.0f, -86.9f, -30.0f, -1.0f, -1e-40f,
                                    -0.0f,    0.0f,   1e-40f, 0.5f,   30.0f,  87.9f,  88.0f,  88.5f,  1000.0f,
                                    INFINITY, -INFINITY, NAN};
    enum { B = 3, C = 100, N = B * C, NS = (int)(sizeof special / sizeof special[0]) };
    float x[N], y[N], aux[N], want[N], want_aux[N];
    for (int i = 0; i < N; i++) x[i] = i % 5 == 0 ? special[(i / 5) % NS] : urand(-12.0f, 12.0f);
    for (int a = 0; a < 2; a++) {
        const FsAct act = a ? FS_ACT_ELU : FS_ACT_SWISH;
        const float param = 0.7f;
        memcpy(y, x, sizeof y);
        act_forward(act, param, y, aux, B, 1, 0, C);
        for (int i = 0; i < N; i++) {
            const float sg = 1.0f / (1.0f + act_exp(-x[i]));
            want_aux[i] = sg;
            want[i] = act == FS_ACT_SWISH ? x[i] * sg : x[i] > 0.0f ? x[i] : param * (act_exp(x[i]) - 1.0f);
        }
        int bad = 0;
        for (int i = 0; i < N && !bad; i++) {
            const int aux_bad = act == FS_ACT_SWISH && (isnan(x[i]) ? !isnan(aux[i]) : memcmp(&aux[i], &want_aux[i], 4));
            if (isnan(x[i]) ? !isnan(y[i]) : memcmp(&y[i], &want[i], 4) != 0 || aux_bad) {
                bad = 1;
                CHECK_MSG(0, "%s of %.9g (element %d of a row of %d): %.9g (aux %.9g), scalar %.9g (aux %.9g)",
                          model_act_name(act), x[i], i % C, C, y[i], aux[i], want[i], want_aux[i]);
            }
        }
    }
}

int main(void)
{
    harness_init(20240517);
    act_special_cases();
    layer_cases();
    loss_cases();
    update_cases();
    load_cases();
    gemm_cases();
    printf("ran %ld calls on the CPU, %ld under the emulated block, %ld on the GPU\n", n_runs[BE_CPU],
           n_runs[BE_EMU], n_runs[BE_GPU]);
    for (int be = 0; be < BE_N; be++)
        if (n_runs[be]) printf("%s: largest error / tolerance %.3g\n", be_name[be], worst_ratio[be]);
    CHECK(n_runs[BE_CPU] > 0 && n_runs[BE_EMU] == n_runs[BE_CPU]);
    /* The emulated block's GEMMs staged B in shared memory for some of
     * their k steps (ops_emu.c gives a staging area to two runs of three):
     * that path's bits were compared too. */
    printf("emulated block: %ld k steps read a staged B\n", ops_emu_staged_k);
    CHECK(ops_emu_staged_k > 0);
    CHECK(!gpu_ready || n_runs[BE_GPU] == n_runs[BE_CPU]);
    return test_finish();
}
