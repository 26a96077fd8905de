/*
 * The recurrent and attention layers of chain models (#46): gated recurrent
 * units and long short-term memory over each chain, forward and
 * (bidirectional) backward, as PyTorch's nn.GRU and nn.LSTM; multi-head
 * self-attention within each chain (src/train/attention.c).
 *
 * Checked against what the layers mean: the forward pass against the
 * readable double-precision references (tests/reference/ref_gru.c,
 * ref_lstm.c, ref_attention.c), chain by chain; a chain's outputs bit for bit the same whatever shares its
 * batch and wherever it sits in it; every gradient by central finite
 * differences, with one-residue chains, short and long ones in one batch
 * (the recurrence must start fresh at each chain and stop at its end);
 * window models refused with a message; and a real fit on synthetic
 * proteins that learns and gives the same bits on 1 and 2 threads.
 */
#include <math.h>
#include <stdlib.h>

#include "data/data.h"
#include "metrics/metrics.h"
#include "reference/ops_ref.h"
#include "synth/synth.h"
#include "test.h"
#include "grad_check.h"
#include "train/core.h"

static FsDataset ds;

typedef struct {
    FsNet net;
    FsModel m;
    FsFoldData fd;
    void *buf;
    uint8_t *arrays; /* the chains' aa, ss, left and right (make_chains) */
} Harness;

static FsLayerSpec conv(int f, int k, FsAct a)
{
    FsLayerSpec s = {0};
    s.kind = FS_LAYER_CONV;
    s.units = f;
    s.width = k;
    s.act = a;
    return s;
}

static FsLayerSpec rnn(FsLayerKind kind, int units, int bidir)
{
    FsLayerSpec s = {0};
    s.kind = kind;
    s.units = units;
    s.bidir = bidir;
    return s;
}

static FsLayerSpec gru(int units, int bidir) { return rnn(FS_LAYER_GRU, units, bidir); }
static FsLayerSpec lstm(int units, int bidir) { return rnn(FS_LAYER_LSTM, units, bidir); }

static FsLayerSpec attention(int heads, int key_dim, int max_dist, float rate)
{
    FsLayerSpec s = {0};
    s.kind = FS_LAYER_ATTENTION;
    s.heads = heads;
    s.key_dim = key_dim;
    s.max_dist = max_dist;
    s.rate = rate;
    s.eps = 1e-5f;
    return s;
}

static FsArch chain_arch(int n, const FsLayerSpec *layers)
{
    FsArch a = {0};
    a.chain = 1;
    a.n_layers = n;
    for (int i = 0; i < n; i++) a.layers[i] = layers[i];
    return a;
}

/* Chains of the given lengths, their residues ds's in order (so
 * one-residue chains sit beside long ones); starts: each one's first. */
static void make_chains(Harness *h, const int *len, int n, uint32_t *starts)
{
    uint32_t total = 0;
    for (int i = 0; i < n; i++) total += (uint32_t)len[i];
    CHECK(total <= ds.n_res);
    h->arrays = malloc(4 * (size_t)total);
    uint8_t *aa = h->arrays, *ss = aa + total, *left = ss + total, *right = left + total;
    uint32_t r = 0;
    for (int i = 0; i < n; i++) {
        starts[i] = r;
        for (int j = 0; j < len[i]; j++, r++) {
            aa[r] = ds.aa[r];
            ss[r] = ds.ss[r];
            left[r] = (uint8_t)(j < 255 ? j : 255);
            right[r] = (uint8_t)(len[i] - 1 - j < 255 ? len[i] - 1 - j : 255);
        }
    }
    FsFoldData fd = {aa, ss, left, right, NULL, 0, NULL, 0, 0, 0, NULL, 0, 0};
    h->fd = fd;
}

static void harness_init(Harness *h, const FsArch *arch, const int *len, int n, uint32_t *starts)
{
    FsErr err = {0};
    CHECK_MSG(model_compile(&h->net, arch, 4096, &err) == 0, "%s", err.msg);
    size_t bytes = core_model_bytes(&h->net, 1);
    h->buf = fs_aligned_alloc(bytes);
    memset(h->buf, 0, bytes);
    core_model_bind(&h->m, &h->net, h->buf, 1);
    uint64_t w[2] = {46, 1};
    FsRng rng;
    fs_rng_seed(&rng, w, 2);
    model_init(&h->net, h->m.w, &rng);
    /* Nonzero biases, so that a bias read in the wrong place shows. */
    for (long i = 0; i < h->net.n_params; i++) h->m.w[i] += 0.2f * (fs_rng_uniform(&rng) - 0.5f);
    make_chains(h, len, n, starts);
}

static void harness_free(Harness *h)
{
    free(h->buf);
    free(h->arrays);
}

/* ---------------------------------------------------------------------- */
/* The forward pass against the reference, chain by chain.                */

static double act_of(FsAct a, double x)
{
    switch (a) {
    case FS_ACT_TANH: return tanh(x);
    case FS_ACT_SWISH: return x / (1.0 + exp(-x));
    default: return x;
    }
}

/* A convolution (or per-residue dense) layer over one chain, zero outside. */
static void ref_conv(const float *w, const FsLayer *y, const double *x, int len, double *out)
{
    const int K = y->spec.width, C = y->in_c, F = y->out_c, hk = K / 2;
    for (int p = 0; p < len; p++)
        for (int f = 0; f < F; f++) {
            double s = w[y->b + f];
            for (int k = 0; k < K; k++) {
                int q = p + k - hk;
                if (q < 0 || q >= len) continue;
                for (int c = 0; c < C; c++) s += (double)w[y->w + ((long)k * C + c) * F + f] * x[(long)q * C + c];
            }
            out[(long)p * F + f] = act_of(y->spec.act, s);
        }
}

/* The net's logits for chain r0 of len residues, in double. */
static double *ref_logits(const Harness *h, uint32_t r0, int len)
{
    double *x = calloc((size_t)len * FS_AA_INPUTS, sizeof(double));
    for (int p = 0; p < len; p++)
        if (h->fd.aa[r0 + p] < FS_AA_INPUTS) x[(long)p * FS_AA_INPUTS + h->fd.aa[r0 + p]] = 1.0;
    for (int i = 0; i < h->net.n; i++) {
        const FsLayer *y = &h->net.layer[i];
        double *out = calloc((size_t)len * y->out_c, sizeof(double));
        if (y->spec.kind == FS_LAYER_GRU)
            ref_gru_forward(h->m.w, y, x, len, out);
        else if (y->spec.kind == FS_LAYER_LSTM)
            ref_lstm_forward(h->m.w, y, x, len, out);
        else if (y->spec.kind == FS_LAYER_ATTENTION)
            ref_attention_forward(h->m.w, y, x, len, out);
        else
            ref_conv(h->m.w, y, x, len, out);
        free(x);
        x = out;
    }
    return x;
}

static void check_forward(const char *name, const FsArch *a)
{
    static const int len[] = {1, 9, 2, 40, 1, 17, 3};
    const int n = (int)(sizeof len / sizeof len[0]);
    uint32_t c[8];
    Harness h;
    harness_init(&h, a, len, n, c);
    CHECK(h.net.pad >= 1); /* a pad row between chains, which the recurrence stops at */
    step_load_chain(&h.m, &h.fd, c, n);
    step_forward(&h.m, 1, 0);
    const int P = h.net.pad;
    const float *z = h.m.work + h.net.layer[h.net.n - 1].a + (long)P * FS_CLASSES;
    long row = 0;
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double *ref = ref_logits(&h, c[i], len[i]);
        for (long k = 0; k < (long)len[i] * FS_CLASSES; k++) {
            double e = fabs(z[row * FS_CLASSES + k] - ref[k]) / (1.0 + fabs(ref[k]));
            if (e > worst) worst = e;
        }
        free(ref);
        row += len[i] + P;
    }
    printf("%-28s forward against the reference: worst relative error %.2e\n", name, worst);
    CHECK_MSG(worst < 1e-5, "%s: %.2e", name, worst);

    /* Chain 3 (40 residues) alone, and first of a reordered batch: its rows bit for bit. */
    const long at = (long)(len[0] + len[1] + len[2] + 3 * P) * FS_CLASSES, nz = (long)len[3] * FS_CLASSES;
    float *keep = malloc(sizeof(float) * (size_t)nz);
    memcpy(keep, z + at, sizeof(float) * (size_t)nz);
    step_load_chain(&h.m, &h.fd, c + 3, 1);
    step_forward(&h.m, 1, 0);
    CHECK_MSG(memcmp(keep, z, sizeof(float) * (size_t)nz) == 0, "%s: chain alone differs", name);
    uint32_t order[3] = {c[3], c[0], c[5]};
    step_load_chain(&h.m, &h.fd, order, 3);
    step_forward(&h.m, 1, 0);
    CHECK_MSG(memcmp(keep, z, sizeof(float) * (size_t)nz) == 0, "%s: chain in another batch differs", name);
    free(keep);
    harness_free(&h);
}

static void test_forward(void)
{
    const FsLayerSpec bi[] = {conv(6, 3, FS_ACT_SWISH), gru(5, 1)};
    FsArch a = chain_arch(2, bi);
    check_forward("conv-bigru", &a);
    CHECK(model_receptive_field(&a) == FS_RF_WHOLE_CHAIN);
    const FsLayerSpec uni[] = {conv(4, 5, FS_ACT_TANH), gru(3, 0), gru(4, 1)};
    a = chain_arch(3, uni);
    check_forward("conv-gru-bigru", &a);
    const FsLayerSpec bl[] = {conv(6, 3, FS_ACT_SWISH), lstm(5, 1)};
    a = chain_arch(2, bl);
    check_forward("conv-bilstm", &a);
    CHECK(model_receptive_field(&a) == FS_RF_WHOLE_CHAIN);
    const FsLayerSpec mix[] = {conv(4, 5, FS_ACT_TANH), lstm(3, 0), gru(4, 1), lstm(6, 1)};
    a = chain_arch(4, mix);
    check_forward("conv-lstm-bigru-bilstm", &a);
    /* Wide enough for the CPU's vector steps (rnn_cell.h's lanes) and a tail. */
    const FsLayerSpec wide[] = {conv(6, 3, FS_ACT_SWISH), lstm(70, 1), gru(70, 0)};
    a = chain_arch(3, wide);
    check_forward("conv-bilstm70-gru70", &a);
    /* Attention: two heads, distances past max_dist in the 40-residue
     * chain (the end buckets), two layers, one after a GRU. */
    const FsLayerSpec at[] = {conv(6, 3, FS_ACT_SWISH), attention(2, 4, 5, 0.0f), attention(3, 2, 2, 0.0f)};
    a = chain_arch(3, at);
    check_forward("conv-attention-attention", &a);
    CHECK(model_receptive_field(&a) == FS_RF_WHOLE_CHAIN);
    const FsLayerSpec ag[] = {conv(6, 3, FS_ACT_SWISH), gru(4, 1), attention(1, 8, 64, 0.0f)};
    a = chain_arch(3, ag);
    check_forward("conv-bigru-attention", &a);
}

/* ---------------------------------------------------------------------- */
/* Gradients by central differences.                                      */

static double loss_of(void *p)
{
    Harness *h = p;
    step_forward(&h->m, 1, 1);
    return step_loss(&h->m, 1, 0, 0) / h->m.scored;
}

static void grad_check(const char *name, const FsArch *a, const int *len, int n)
{
    uint32_t c[16];
    Harness h;
    harness_init(&h, a, len, n, c);
    step_load_chain(&h.m, &h.fd, c, n);
    CHECK(h.m.scored > 0);
    step_forward(&h.m, 1, 1);
    step_loss(&h.m, 1, 1, 0);
    step_backward(&h.m, 1, NULL);
    gc_compare(name, h.m.w, h.m.g, h.net.n_params, 400, loss_of, &h, 2e-3, 2e-2);
    harness_free(&h);
}

static void test_gradients(void)
{
    static const int mixed[] = {1, 6, 2, 13, 1}, one[] = {1, 1, 1}, longc[] = {180, 3};
    const FsLayerSpec bi[] = {conv(4, 3, FS_ACT_SWISH), gru(4, 1)};
    FsArch a = chain_arch(2, bi);
    grad_check("conv-bigru, mixed chains", &a, mixed, 5);
    grad_check("conv-bigru, one-residue chains", &a, one, 3);
    grad_check("conv-bigru, a long chain", &a, longc, 2);
    /* One direction, a stack, and what follows a GRU (a layer norm, a
     * per-residue dense layer), its gradient carried back through it. */
    FsLayerSpec ln = {0}, dense = {0};
    ln.kind = FS_LAYER_LAYERNORM;
    ln.eps = 1e-3f;
    dense.kind = FS_LAYER_DENSE;
    dense.units = 5;
    dense.act = FS_ACT_TANH;
    const FsLayerSpec stack[] = {conv(3, 5, FS_ACT_TANH), gru(3, 0), gru(2, 1), ln, dense};
    a = chain_arch(5, stack);
    grad_check("conv-gru-bigru-ln-dense", &a, mixed, 5);
    /* The LSTM: its cell's gradient carried back along each chain too. */
    const FsLayerSpec bl[] = {conv(4, 3, FS_ACT_SWISH), lstm(4, 1)};
    a = chain_arch(2, bl);
    grad_check("conv-bilstm, mixed chains", &a, mixed, 5);
    grad_check("conv-bilstm, one-residue chains", &a, one, 3);
    grad_check("conv-bilstm, a long chain", &a, longc, 2);
    const FsLayerSpec lstack[] = {conv(3, 5, FS_ACT_TANH), lstm(3, 0), gru(2, 1), lstm(2, 1), ln, dense};
    a = chain_arch(6, lstack);
    grad_check("conv-lstm-bigru-bilstm-ln-dense", &a, mixed, 5);
    /* Attention: one-residue chains attend to themselves alone; the long
     * chain's far pairs share the end buckets. */
    const FsLayerSpec at[] = {conv(4, 3, FS_ACT_SWISH), attention(2, 3, 4, 0.0f), dense};
    a = chain_arch(3, at);
    grad_check("conv-attention-dense, mixed chains", &a, mixed, 5);
    grad_check("conv-attention-dense, one-residue chains", &a, one, 3);
    grad_check("conv-attention-dense, a long chain", &a, longc, 2);
    const FsLayerSpec at2[] = {conv(3, 5, FS_ACT_TANH), attention(1, 4, 2, 0.0f), gru(2, 1), attention(2, 2, 3, 0.0f)};
    a = chain_arch(4, at2);
    grad_check("conv-attention-bigru-attention", &a, mixed, 5);
    /* With dropout: the backward pass draws the forward's mask again. */
    const FsLayerSpec ad[] = {conv(4, 3, FS_ACT_SWISH), attention(2, 3, 4, 0.3f)};
    a = chain_arch(2, ad);
    grad_check("conv-attention with dropout", &a, mixed, 5);
}

/* ---------------------------------------------------------------------- */
/* Refusals and a real fit.                                               */

static void test_refusals(void)
{
    FsNet net;
    FsErr err = {0};
    const FsLayerSpec l[] = {conv(4, 3, FS_ACT_RELU), gru(8, 1)};
    FsArch a = chain_arch(2, l);
    a.chain = 0;
    a.window = 13;
    CHECK(model_compile(&net, &a, 8, &err) != 0);
    CHECK_CONTAINS(err.msg, "layer 2 (gru): recurrent layers belong to chain models");
    a = chain_arch(2, l);
    a.layers[1].units = FS_MAX_RNN_UNITS + 1;
    err = (FsErr){0};
    CHECK(model_compile(&net, &a, 64, &err) != 0);
    CHECK_CONTAINS(err.msg, "units must be from 1 to");
    a.layers[1].units = 8;
    CHECK(model_compile(&net, &a, 64, &err) == 0);
    CHECK(net.layer[1].out_c == 16 && net.pad == 1);
    /* Input weights, their bias, recurrent weights, their bias. */
    CHECK(net.n_params == (3L * 4 * FS_AA_INPUTS + 4) + (4L * 48 + 48 + 2 * 8 * 24 + 48) + (16L * 3 + 3));
    /* An LSTM's four gates: the same with 4 for 3. */
    a.layers[1].kind = FS_LAYER_LSTM;
    CHECK(model_compile(&net, &a, 64, &err) == 0);
    CHECK(net.layer[1].out_c == 16 && net.pad == 1);
    CHECK(net.n_params == (3L * 4 * FS_AA_INPUTS + 4) + (4L * 64 + 64 + 2 * 8 * 32 + 64) + (16L * 3 + 3));
    a.chain = 0;
    a.window = 13;
    err = (FsErr){0};
    CHECK(model_compile(&net, &a, 8, &err) != 0);
    CHECK_CONTAINS(err.msg, "layer 2 (lstm): recurrent layers belong to chain models");
}

static double q3_of(const uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES])
{
    FsMetrics m;
    metrics_from_classes(&m, FS_CLASSES, conf);
    return m.q3;
}

static void run_fold(const FsArch *a, const FsTrainSpec *ts, int threads, FsFitResult *res, float **weights)
{
    train_result_alloc(res, ts->stop.max_epochs);
    *weights = train_result_alloc_weights(res, a);
    FsJob job = {a, ts, &ds, 0, res, *weights, NULL, NULL, NULL, NULL, NULL, 0, 0};
    train_jobs(&job, 1, threads);
}

static void check_fit(const char *name, FsLayerSpec r)
{
    const FsLayerSpec l[] = {conv(12, 5, FS_ACT_SWISH), r};
    FsArch a = chain_arch(2, l);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.lr = 5e-3f;
    ts.batch_residues = 1024;
    ts.stop.max_epochs = 4;
    ts.seed[0] = 2;
    FsFitResult r1, r2;
    float *w1, *w2;
    run_fold(&a, &ts, 1, &r1, &w1);
    run_fold(&a, &ts, 2, &r2, &w2);
    CHECK(r1.status == FS_FIT_OK);
    const double q = q3_of(r1.best_confusion);
    printf("conv + %s on synthetic proteins, fold 0: Q3 %.3f at epoch %d, val loss %.4f\n", name, q, r1.best_epoch,
           r1.best_val_loss);
    /* Coil alone is about 0.42 on these proteins (tests/test_chain.c). */
    CHECK_MSG(q > 0.55, "Q3 %.3f", q);
    CHECK(r1.best_val_loss == r2.best_val_loss);
    CHECK(memcmp(w1, w2, sizeof(float) * (size_t)r1.n_weights) == 0);
    train_result_free(&r1);
    train_result_free(&r2);
}

static void test_fit(void)
{
    check_fit("BiGRU(8)", gru(8, 1));
    check_fit("BiLSTM(8)", lstm(8, 1));
    check_fit("attention(2 x 8)", attention(2, 8, 16, 0.1f));
}

int main(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 90, 5, &err) == 0, "%s", err.msg);
    CHECK(data_assign_folds(&ds, 3, 1, &err) == 0);
    test_refusals();
    test_forward();
    test_gradients();
    test_fit();
    data_free(&ds);
    return test_finish();
}
