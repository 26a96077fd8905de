/*
 * A training step in parts (train/core.h: step_forward_part,
 * step_backward_part, step_layer_gemm), as the GPU library tier runs it
 * with the libraries' GEMMs between the parts (#44), against the whole
 * step (step_forward, step_loss, step_backward): activations, gradients
 * and the loss bit for bit, for chain and window models with every layer
 * kind between the GEMMs (dilated and plain conv1d, batch norm, dropout,
 * residual adds with and without projection, highway, per-residue dense),
 * with and without feature columns and one-hot codes, 3 and 8 classes.
 * A part run twice, left out or run out of order changes some bit here.
 */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "synth/synth.h"
#include "test.h"
#include "test_harness.h"
#include "train/core.h"

#define D 3
static FsDataset ds;
static float *feat;

/* Dropout at a rate that drops something. */
static FsLayerSpec layer(FsLayerKind k, int units, int width, int dil, FsAct a)
{
    FsLayerSpec s = th_layer(k, units, width, dil, a);
    s.rate = 0.25f;
    return s;
}

typedef Harness Model;

/* The same batch for both: chains 1..3 of the set, or B windows. */
static int model_load(Model *h, int B)
{
    uint32_t idx[64], n = data_examples(&ds, FS_FOLD_ALL, 0, NULL);
    uint32_t *all = fs_malloc(sizeof(uint32_t) * n);
    if (h->net.chain) {
        data_chain_examples(&ds, FS_FOLD_ALL, 0, all);
        for (int i = 0; i < 3; i++) idx[i] = all[i + 1];
        step_load_chain(&h->m, &h->fd, idx, 3);
        B = 1;
    } else {
        data_examples(&ds, FS_FOLD_ALL, 0, all);
        for (int i = 0; i < B; i++) idx[i] = all[i * 5 % n];
        step_load_batch(&h->m, &h->fd, idx, B);
    }
    free(all);
    return B;
}

/* The step in parts, in the order the library tier runs them. */
static double step_in_parts(FsModel *m, int B)
{
    const FsNet *net = m->net;
    for (int i = 0; i < net->n; i++) {
        step_forward_part(m, i, B, 1, 0);
        if (step_layer_gemms(net, i)) step_layer_gemm(m, i, B, 0);
        step_forward_part(m, i, B, 1, 1);
    }
    double loss = step_loss(m, B, 1, 0);
    step_backward_part(m, net->n, B, 0);
    for (int i = net->n - 1; i >= 0; i--) {
        step_backward_part(m, i, B, 0);
        if (step_layer_gemms(net, i)) step_layer_gemm(m, i, B, 1);
        step_backward_part(m, i, B, 1);
        if (step_layer_gemms(net, i)) step_layer_gemm(m, i, B, 2);
        step_backward_part(m, i, B, 2);
    }
    return loss;
}

static int n_gemm_layers(const FsNet *net)
{
    int n = 0;
    for (int i = 0; i < net->n; i++) n += step_layer_gemms(net, i);
    return n;
}

static void check_parts(const char *name, const FsArch *arch, int B)
{
    Model a, b;
    harness_init(&a, &ds, arch, B);
    harness_init(&b, &ds, arch, B);
    const int Ba = model_load(&a, B), Bb = model_load(&b, B);
    CHECK(Ba == Bb);
    /* Garbage in the gradients: step_backward zeroes them first, and so
     * must the parts. */
    for (long i = 0; i < b.net.n_params; i++) b.m.g[i] = 1e3f;
    step_forward(&a.m, Ba, 1);
    double la = step_loss(&a.m, Ba, 1, 0);
    step_backward(&a.m, Ba, NULL);
    double lb = step_in_parts(&b.m, Bb);
    CHECK_MSG(la == lb, "%s: loss %.17g whole, %.17g in parts", name, la, lb);
    CHECK_MSG(memcmp(a.m.g, b.m.g, sizeof(float) * (size_t)a.net.n_params) == 0, "%s: the gradients differ", name);
    CHECK_MSG(memcmp(a.buf, b.buf, a.bytes) == 0, "%s: the model buffers (activations, gradients) differ", name);
    printf("%s: %d layers, %d with GEMMs in parts, loss %.6f: bitwise\n", name, a.net.n, n_gemm_layers(&a.net), la);
    free(a.buf);
    free(b.buf);
}

static void test_chain_models(void)
{
    FsArch arch = {0};
    arch.chain = 1;
    arch.classes = 3;
    int n = 0;
    arch.layers[n++] = layer(FS_LAYER_CONV, 8, 5, 1, FS_ACT_RELU);
    arch.layers[n++] = layer(FS_LAYER_CONV, 8, 3, 2, FS_ACT_RELU);
    arch.layers[n++] = layer(FS_LAYER_BATCHNORM, 0, 0, 1, FS_ACT_LINEAR);
    arch.layers[n++] = layer(FS_LAYER_CONV, 8, 3, 4, FS_ACT_ELU);
    arch.layers[n] = layer(FS_LAYER_ADD, 2, 0, 1, FS_ACT_LINEAR);
    n++;
    arch.layers[n++] = layer(FS_LAYER_DROPOUT, 0, 0, 1, FS_ACT_LINEAR);
    arch.layers[n++] = layer(FS_LAYER_CONV, 6, 7, 1, FS_ACT_TANH);
    arch.layers[n] = layer(FS_LAYER_ADD, 1, 0, 1, FS_ACT_LINEAR); /* widths differ: a projection */
    n++;
    arch.layers[n++] = layer(FS_LAYER_DENSE, 5, 1, 1, FS_ACT_RELU);
    arch.n_layers = n;
    check_parts("chain: conv, dilations, batch norm, residual adds, dropout, dense", &arch, 1);

    arch.classes = 8;
    check_parts("chain, 8 classes", &arch, 1);
    arch.classes = 3;

    ds.feat = feat;
    ds.feat_dim = D;
    arch.feat_dim = D;
    check_parts("chain with feature columns", &arch, 1);
    arch.no_onehot = 1;
    check_parts("chain with feature columns, no one-hot", &arch, 1);
    arch.no_onehot = 0;
    arch.feat_dim = 0;
    ds.feat = NULL;
    ds.feat_dim = 0;

    n = 0;
    arch.layers[n++] = layer(FS_LAYER_CONV, 6, 3, 1, FS_ACT_RELU);
    arch.layers[n++] = layer(FS_LAYER_HIGHWAY, 0, 3, 1, FS_ACT_RELU);
    arch.layers[n++] = layer(FS_LAYER_CONV, 6, 9, 3, FS_ACT_RELU);
    arch.n_layers = n;
    check_parts("chain: highway between convolutions", &arch, 1);
}

static void test_window_models(void)
{
    FsArch arch = {0};
    arch.window = 13;
    arch.classes = 3;
    int n = 0;
    arch.layers[n++] = layer(FS_LAYER_CONV, 8, 5, 1, FS_ACT_RELU);
    arch.layers[n++] = layer(FS_LAYER_CONV, 8, 3, 1, FS_ACT_SWISH);
    arch.layers[n++] = layer(FS_LAYER_BATCHNORM, 0, 0, 1, FS_ACT_LINEAR);
    arch.layers[n++] = layer(FS_LAYER_DROPOUT, 0, 0, 1, FS_ACT_LINEAR);
    arch.layers[n++] = layer(FS_LAYER_DENSE, 16, 0, 1, FS_ACT_RELU);
    arch.n_layers = n;
    check_parts("window: conv, batch norm, dropout, dense", &arch, 6);
}

int main(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 40, 5, &err) == 0, "%s", err.msg);
    CHECK(data_assign_folds(&ds, 3, 1, &err) == 0);
    uint64_t s[1] = {5};
    FsRng rng;
    fs_rng_seed(&rng, s, 1);
    feat = fs_malloc(sizeof(float) * ds.n_res * D);
    for (uint32_t r = 0; r < ds.n_res * D; r++) feat[r] = fs_rng_uniform(&rng) - 0.5f;
    test_chain_models();
    test_window_models();
    data_free(&ds);
    free(feat);
    return test_finish();
}
