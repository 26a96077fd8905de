/*
 * Gradient checks: every layer kind and activation, the one-hot gather
 * included, against central finite differences of the batch loss.
 */
#include <stdlib.h>

#include "data/data.h"
#include "test.h"
#include "grad_check.h"
#include "train/core.h"

typedef struct {
    FsNet net;
    FsModel m;
    void *buf;
} Harness;

static void harness_init(Harness *h, const FsArch *arch, int B, uint64_t seed)
{
    FsErr err = {0};
    int rc = model_compile(&h->net, arch, B, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    h->buf = fs_aligned_alloc(core_model_bytes(&h->net, 1));
    memset(h->buf, 0, core_model_bytes(&h->net, 1));
    core_model_bind(&h->m, &h->net, h->buf, 1);
    uint64_t w[2] = {seed, 7};
    FsRng rng;
    fs_rng_seed(&rng, w, 2);
    model_init(&h->net, h->m.w, &rng);
    /* Nonzero biases and BN affine so their gradients are exercised. */
    for (long i = 0; i < h->net.n_params; i++) h->m.w[i] += 0.1f * (fs_rng_uniform(&rng) - 0.5f);
    h->m.drop_key = 12345;
    h->m.step = 3;
    /* Codes: a mix of standard residues, the unknown code and padding. */
    int L = arch->window;
    for (int b = 0; b < B; b++) {
        for (int q = 0; q < L; q++) {
            uint32_t u = fs_rng_below(&rng, 24);
            h->m.codes[b * L + q] = (uint8_t)(u < 21 ? u : FS_AA_PAD);
        }
        h->m.codes[b * L] = FS_AA_PAD;
        h->m.labels[b] = (uint8_t)fs_rng_below(&rng, 3);
    }
}

static double batch_loss(Harness *h, int B)
{
    step_forward(&h->m, B, 1);
    return step_loss(&h->m, B, 0, 0) / B;
}

typedef struct {
    Harness *h;
    int B;
} Loss;

static double loss_of(void *ctx)
{
    Loss *l = ctx;
    return batch_loss(l->h, l->B);
}

/* Checks every parameter (or an even sample of 400) of the net. */
static void grad_check(const char *name, const FsArch *arch, int B, double eps, double tol)
{
    Harness h;
    harness_init(&h, arch, B, 42);
    step_forward(&h.m, B, 1);
    step_loss(&h.m, B, 1, 0);
    step_backward(&h.m, B, NULL);
    Loss l = {&h, B};
    gc_compare(name, h.m.w, h.m.g, h.net.n_params, 400, loss_of, &l, eps, tol);
    free(h.buf);
}

static FsLayerSpec conv(int f, int k, FsAct a)
{
    FsLayerSpec s = {0};
    s.kind = FS_LAYER_CONV;
    s.units = f;
    s.width = k;
    s.act = a;
    s.act_param = a == FS_ACT_LEAKY_RELU ? 0.1f : 1.0f;
    return s;
}

static FsLayerSpec dense(int u, FsAct a)
{
    FsLayerSpec s = conv(0, 0, a);
    s.kind = FS_LAYER_DENSE;
    s.units = u;
    return s;
}

static FsLayerSpec other(FsLayerKind k, int width, FsAct a)
{
    FsLayerSpec s = conv(0, width, a);
    s.kind = k;
    s.rate = 0.3f;
    s.eps = 1e-3f;
    s.momentum = 0.9f;
    s.gate_bias = -1.0f;
    return s;
}

int main(void)
{
    const double EPS = 2e-3, TOL = 2e-2;
    FsArch a = {0};

    /* Gather conv, conv GEMM (weights and input gradient), dense, every
     * activation in a conv and in a dense layer. */
    FsAct acts[] = {FS_ACT_LINEAR, FS_ACT_RELU, FS_ACT_LEAKY_RELU, FS_ACT_SWISH, FS_ACT_TANH, FS_ACT_ELU};
    for (int i = 0; i < 6; i++) {
        memset(&a, 0, sizeof a);
        a.window = 7;
        a.n_layers = 3;
        a.layers[0] = conv(5, 3, acts[i]);
        a.layers[1] = conv(6, 5, acts[i]);
        a.layers[2] = dense(7, acts[i]);
        char name[64];
        snprintf(name, sizeof name, "conv-conv-dense %s", model_act_name(acts[i]));
        grad_check(name, &a, 5, EPS, TOL);
    }

    /* Widths and batches that take the vector tiles (16 columns; 8 and 16
     * batch columns in the dense layer's transposed input gradient). */
    for (int bsz = 8; bsz <= 16; bsz += 8) {
        memset(&a, 0, sizeof a);
        a.window = 9;
        a.n_layers = 3;
        a.layers[0] = conv(16, 3, FS_ACT_SWISH);
        a.layers[1] = conv(32, 5, FS_ACT_SWISH);
        a.layers[2] = dense(16, FS_ACT_SWISH);
        char name[64];
        snprintf(name, sizeof name, "vector tiles, batch %d", bsz);
        grad_check(name, &a, bsz, EPS, TOL);
    }

    /* Gather dense (first layer dense on the one-hot window). */
    memset(&a, 0, sizeof a);
    a.window = 5;
    a.n_layers = 2;
    a.layers[0] = dense(6, FS_ACT_SWISH);
    a.layers[1] = dense(4, FS_ACT_TANH);
    grad_check("dense-dense (gather dense)", &a, 4, EPS, TOL);

    /* Batch norm after a conv (statistics over batch and positions). */
    memset(&a, 0, sizeof a);
    a.window = 7;
    a.n_layers = 4;
    a.layers[0] = conv(4, 3, FS_ACT_LINEAR);
    a.layers[1] = other(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    a.layers[2] = conv(5, 3, FS_ACT_TANH);
    a.layers[3] = other(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    grad_check("conv-bn-conv-bn", &a, 6, EPS, TOL);

    /* Batch norm after dense; dropout (a fixed mask for a fixed step). */
    memset(&a, 0, sizeof a);
    a.window = 5;
    a.n_layers = 4;
    a.layers[0] = conv(4, 3, FS_ACT_ELU);
    a.layers[1] = other(FS_LAYER_DROPOUT, 0, FS_ACT_LINEAR);
    a.layers[2] = dense(6, FS_ACT_LINEAR);
    a.layers[3] = other(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    grad_check("conv-dropout-dense-bn", &a, 5, EPS, TOL);

    /* Layer norm after a conv (each position over its channels) and after
     * a dense layer (one row per example), with a conv between. */
    memset(&a, 0, sizeof a);
    a.window = 7;
    a.n_layers = 5;
    a.layers[0] = conv(4, 3, FS_ACT_SWISH);
    a.layers[1] = other(FS_LAYER_LAYERNORM, 0, FS_ACT_LINEAR);
    a.layers[2] = conv(5, 3, FS_ACT_TANH);
    a.layers[3] = dense(6, FS_ACT_LINEAR);
    a.layers[4] = other(FS_LAYER_LAYERNORM, 0, FS_ACT_LINEAR);
    grad_check("conv-ln-conv-dense-ln", &a, 5, EPS, TOL);

    /* Highway over positions (conv gates) with each activation for H. */
    for (int i = 1; i < 6; i++) {
        memset(&a, 0, sizeof a);
        a.window = 7;
        a.n_layers = 3;
        a.layers[0] = conv(4, 3, FS_ACT_TANH);
        a.layers[1] = other(FS_LAYER_HIGHWAY, 3, acts[i]);
        a.layers[1].act_param = acts[i] == FS_ACT_LEAKY_RELU ? 0.1f : 1.0f;
        a.layers[2] = other(FS_LAYER_HIGHWAY, 5, FS_ACT_SWISH);
        char name[64];
        snprintf(name, sizeof name, "conv-highway(%s)-highway", model_act_name(acts[i]));
        /* A step of 2e-3 crosses relu kinks in this net; a smaller step
         * avoids them at the price of more float noise, hence the tolerance. */
        int kink = acts[i] == FS_ACT_RELU || acts[i] == FS_ACT_LEAKY_RELU;
        grad_check(name, &a, 4, kink ? 3e-4 : EPS, kink ? 3e-2 : TOL);
    }

    /* Residual adds in a window model: an identity skip over one
     * convolution, then a projected one (5 -> 7 channels) over the next,
     * whose block input is the first add's output. */
    memset(&a, 0, sizeof a);
    a.window = 9;
    a.n_layers = 6;
    a.layers[0] = conv(5, 3, FS_ACT_SWISH);
    a.layers[1] = conv(5, 3, FS_ACT_TANH);
    a.layers[2] = other(FS_LAYER_ADD, 0, FS_ACT_LINEAR);
    a.layers[2].units = 1;
    a.layers[3] = conv(7, 5, FS_ACT_SWISH);
    a.layers[4] = other(FS_LAYER_ADD, 0, FS_ACT_LINEAR);
    a.layers[4].units = 1;
    a.layers[5] = dense(6, FS_ACT_TANH);
    grad_check("conv-conv-add-conv-add(proj)-dense", &a, 4, EPS, TOL);

    /* Highway after dense (L = 1, width 1). */
    memset(&a, 0, sizeof a);
    a.window = 5;
    a.n_layers = 3;
    a.layers[0] = conv(3, 3, FS_ACT_SWISH);
    a.layers[1] = dense(6, FS_ACT_TANH);
    a.layers[2] = other(FS_LAYER_HIGHWAY, 1, FS_ACT_RELU);
    grad_check("conv-dense-highway", &a, 4, EPS, TOL);

    /* Output only (a logistic regression on the one-hot window). */
    memset(&a, 0, sizeof a);
    a.window = 9;
    a.n_layers = 0;
    grad_check("output only", &a, 3, EPS, TOL);
    return test_finish();
}
