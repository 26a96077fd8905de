/*
 * Chain models (data.window: chain, issue #28): a convolution over whole
 * chains with zero padding at their ends, dilated taps, per-residue dense
 * layers, batch norm whose statistics skip the pad rows, a loss over scored
 * residues only, batches by a row budget.
 *
 * Checked against what the model means, not against itself: every
 * gradient by central finite differences; the forward pass against a
 * direct double-precision evaluation of the same net over each chain
 * alone; a chain's outputs bit for bit the same whatever else shares its
 * batch; batch norm's statistics against a sum over the residues; and a
 * real fit on synthetic proteins that learns, reproduces itself bit for bit
 * on 1 and 2 threads and scores its validation fold through train_predict
 * as the fit did.
 */
#include <math.h>
#include <stdlib.h>

#include "data/data.h"
#include "metrics/metrics.h"
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
} Harness;

static FsLayerSpec conv(int f, int k, int dil, FsAct a)
{
    FsLayerSpec s = {0};
    s.kind = FS_LAYER_CONV;
    s.units = f;
    s.width = k;
    s.dilation = dil;
    s.act = a;
    s.act_param = 1.0f;
    return s;
}

static FsLayerSpec layer(FsLayerKind k, int units, FsAct a)
{
    FsLayerSpec s = conv(units, 0, 0, a);
    s.kind = k;
    s.rate = 0.3f;
    s.eps = 1e-3f;
    s.momentum = 0.9f;
    s.gate_bias = -1.0f;
    if (k == FS_LAYER_HIGHWAY) s.width = 3, s.dilation = 2;
    return s;
}

/* A chain net over ds for batches of `rows` rows, weights drawn and
 * nudged (nonzero biases and batch-norm affine). */
static void harness_init(Harness *h, const FsArch *arch, int rows)
{
    FsErr err = {0};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch_residues = rows;
    CHECK_MSG(train_chain_rows(arch, &ts, data_longest_chain(&ds), &h->net, &err) == 0, "%s", err.msg);
    size_t bytes = core_model_bytes(&h->net, 1);
    h->buf = fs_aligned_alloc(bytes);
    memset(h->buf, 0, bytes);
    core_model_bind(&h->m, &h->net, h->buf, 1);
    uint64_t w[2] = {42, 7};
    FsRng rng;
    fs_rng_seed(&rng, w, 2);
    model_init(&h->net, h->m.w, &rng);
    for (long i = 0; i < h->net.n_params; i++) h->m.w[i] += 0.1f * (fs_rng_uniform(&rng) - 0.5f);
    h->m.drop_key = 12345;
    h->m.step = 3;
    FsFoldData fd = {ds.aa, ds.ss, ds.left, ds.right, NULL, 0, NULL, 0, 0, 0, NULL, 0, 0};
    h->fd = fd;
}

static double batch_loss(Harness *h)
{
    step_forward(&h->m, 1, 1);
    return step_loss(&h->m, 1, 0, 0) / h->m.scored;
}

static double loss_of(void *h) { return batch_loss((Harness *)h); }

/* Every parameter (or an even sample of 300) against central differences
 * of the mean loss over the batch's scored residues. */
static void grad_check(const char *name, const FsArch *arch, const uint32_t *chains, int n)
{
    Harness h;
    harness_init(&h, arch, 4096);
    step_load_chain(&h.m, &h.fd, chains, n);
    CHECK(h.m.scored > 0 && h.m.rows > 0);
    step_forward(&h.m, 1, 1);
    step_loss(&h.m, 1, 1, 0);
    step_backward(&h.m, 1, NULL);
    gc_compare(name, h.m.w, h.m.g, h.net.n_params, 300, loss_of, &h, 2e-3, 2e-2);
    free(h.buf);
}

/* The first residues of the first n segments of ds. */
static void first_chains(uint32_t *out, int n)
{
    for (int i = 0; i < n; i++) out[i] = ds.seg_off[i];
}

static void test_gradients(void)
{
    uint32_t c[3];
    first_chains(c, 3);
    FsArch a = {0};
    a.chain = 1;
    a.n_layers = 3;
    a.layers[0] = conv(5, 3, 1, FS_ACT_SWISH);
    a.layers[1] = conv(6, 5, 3, FS_ACT_TANH);
    a.layers[2] = layer(FS_LAYER_DENSE, 7, FS_ACT_ELU);
    grad_check("conv-conv(dilation 3)-dense", &a, c, 3);

    /* Batch norm (statistics over residues only) and dropout. */
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.n_layers = 5;
    a.layers[0] = conv(4, 5, 1, FS_ACT_LINEAR);
    a.layers[1] = layer(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    a.layers[2] = conv(5, 3, 2, FS_ACT_SWISH);
    a.layers[3] = layer(FS_LAYER_DROPOUT, 0, FS_ACT_LINEAR);
    a.layers[4] = layer(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    grad_check("conv-bn-conv(dil 2)-dropout-bn", &a, c, 3);

    /* Layer norm over each residue's channels: pad rows between chains
     * (their outputs zeroed, no gradient through them), after a dilated
     * convolution and after a per-residue dense layer. */
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.n_layers = 4;
    a.layers[0] = conv(4, 5, 1, FS_ACT_SWISH);
    a.layers[1] = layer(FS_LAYER_LAYERNORM, 0, FS_ACT_LINEAR);
    a.layers[2] = conv(5, 3, 2, FS_ACT_TANH);
    a.layers[3] = layer(FS_LAYER_LAYERNORM, 0, FS_ACT_LINEAR);
    grad_check("conv-ln-conv(dil 2)-ln", &a, c, 3);

    /* A first dense layer (a per-residue gather) and a dilated highway. */
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.n_layers = 3;
    a.layers[0] = layer(FS_LAYER_DENSE, 6, FS_ACT_TANH);
    a.layers[1] = layer(FS_LAYER_HIGHWAY, 0, FS_ACT_SWISH);
    a.layers[2] = conv(4, 7, 4, FS_ACT_SWISH);
    grad_check("dense-highway(dil 2)-conv(dil 4)", &a, c, 3);

    /* Residual blocks: an identity skip over two convolutions, then one
     * through a projection (the block widens 6 -> 9), with batch norm. */
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.n_layers = 7;
    a.layers[0] = conv(6, 3, 1, FS_ACT_SWISH);
    a.layers[1] = conv(6, 3, 2, FS_ACT_SWISH);
    a.layers[2] = conv(6, 3, 4, FS_ACT_TANH);
    a.layers[3] = layer(FS_LAYER_ADD, 2, FS_ACT_LINEAR);
    a.layers[4] = conv(9, 5, 2, FS_ACT_SWISH);
    a.layers[5] = layer(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    a.layers[6] = layer(FS_LAYER_ADD, 2, FS_ACT_LINEAR);
    grad_check("residual: identity and projected", &a, c, 3);
}

/* ---------------------------------------------------------------------- */
/* The forward pass against a direct evaluation over each chain alone.    */

static double act_of(FsAct a, double x)
{
    switch (a) {
    case FS_ACT_RELU: return x > 0 ? x : 0;
    case FS_ACT_TANH: return tanh(x);
    case FS_ACT_SWISH: return x / (1.0 + exp(-x));
    default: return x;
    }
}

/* out[len][F] = act(b + sum_k W[k][c] x[p + (k - h) dil][c]), zero outside. */
static void ref_conv(const float *w, const FsLayer *y, const double *x, int len, double *out)
{
    const int K = y->spec.width, C = y->in_c, F = y->out_c, h = K / 2, dil = y->dil;
    const float *W = w + y->w, *b = w + y->b;
    for (int p = 0; p < len; p++)
        for (int f = 0; f < F; f++) {
            double s = b[f];
            for (int k = 0; k < K; k++) {
                int q = p + (k - h) * dil;
                if (q < 0 || q >= len) continue;
                for (int c = 0; c < C; c++) s += (double)W[((long)k * C + c) * F + f] * x[(long)q * C + c];
            }
            out[(long)p * F + f] = act_of(y->spec.act, s);
        }
}

/* The net's logits for the chain starting at residue r0, in double. */
static double *ref_logits(const Harness *h, uint32_t r0, int *len_out)
{
    const int len = (int)step_chain_length(&h->fd, r0);
    double *x = calloc((size_t)len * FS_AA_INPUTS, sizeof(double));
    for (int p = 0; p < len; p++)
        if (ds.aa[r0 + p] < FS_AA_INPUTS) x[(long)p * FS_AA_INPUTS + ds.aa[r0 + p]] = 1.0;
    for (int i = 0; i < h->net.n; i++) {
        const FsLayer *y = &h->net.layer[i];
        double *out = calloc((size_t)len * y->out_c, sizeof(double));
        ref_conv(h->m.w, y, x, len, out);
        free(x);
        x = out;
    }
    *len_out = len;
    return x;
}

static void test_forward(void)
{
    FsArch a = {0};
    a.chain = 1;
    a.n_layers = 3;
    a.layers[0] = conv(8, 5, 1, FS_ACT_SWISH);
    a.layers[1] = conv(8, 3, 4, FS_ACT_TANH);
    a.layers[2] = layer(FS_LAYER_DENSE, 6, FS_ACT_RELU);
    Harness h;
    harness_init(&h, &a, 4096);
    CHECK(h.net.pad == 4); /* half of the widest reach: width 3 at dilation 4 */
    CHECK(model_receptive_field(&a) == 1 + 4 + 2 * 4);
    uint32_t c[4];
    first_chains(c, 4);
    step_load_chain(&h.m, &h.fd, c, 4);
    step_forward(&h.m, 1, 0);
    const FsLayer *out = &h.net.layer[h.net.n - 1];
    const float *z = h.m.work + out->a + (long)h.net.pad * FS_CLASSES;
    /* Every residue's logits as the direct evaluation says, chain by chain. */
    long row = 0;
    double worst = 0.0;
    float *alone = malloc(sizeof(float) * 4096 * FS_CLASSES);
    for (int i = 0; i < 4; i++) {
        int len;
        double *ref = ref_logits(&h, c[i], &len);
        for (long k = 0; k < (long)len * FS_CLASSES; k++) {
            double e = fabs(z[row * FS_CLASSES + k] - ref[k]) / (1.0 + fabs(ref[k]));
            if (e > worst) worst = e;
        }
        free(ref);
        row += len + h.net.pad;
    }
    printf("chain forward against the direct evaluation: worst relative error %.2e\n", worst);
    CHECK(worst < 1e-5);
    /* The third chain alone gives its rows bit for bit. */
    long third = 0;
    for (int i = 0; i < 2; i++) third += step_chain_length(&h.fd, c[i]) + h.net.pad;
    const long len3 = step_chain_length(&h.fd, c[2]);
    memcpy(alone, z + third * FS_CLASSES, sizeof(float) * (size_t)(len3 * FS_CLASSES));
    step_load_chain(&h.m, &h.fd, c + 2, 1);
    step_forward(&h.m, 1, 0);
    CHECK(memcmp(alone, z, sizeof(float) * (size_t)(len3 * FS_CLASSES)) == 0);
    free(alone);
    free(h.buf);
}

/* Batch norm's batch mean: over the chains' residues, not their pad rows. */
static void test_batchnorm_mask(void)
{
    FsArch a = {0};
    a.chain = 1;
    a.n_layers = 2;
    a.layers[0] = conv(3, 5, 1, FS_ACT_LINEAR);
    a.layers[1] = layer(FS_LAYER_BATCHNORM, 0, FS_ACT_LINEAR);
    Harness h;
    harness_init(&h, &a, 4096);
    uint32_t c[3];
    first_chains(c, 3);
    step_load_chain(&h.m, &h.fd, c, 3);
    step_forward(&h.m, 1, 1);
    const FsLayer *cv = &h.net.layer[0], *bn = &h.net.layer[1];
    const int P = h.net.pad;
    for (int ch = 0; ch < 3; ch++) {
        double s = 0.0, all = 0.0;
        long n = 0;
        for (long r = 0; r < h.m.rows; r++) {
            double v = h.m.work[cv->a + (P + r) * 3 + ch];
            all += v;
            if (h.m.codes[r] != FS_AA_PAD) s += v, n++;
        }
        const double mean = h.m.work[bn->bn_mean + ch];
        CHECK(n == h.m.rows - 3L * P);
        CHECK_MSG(fabs(mean - s / n) < 1e-5, "channel %d: mean %g, over the residues %g", ch, mean, s / n);
        CHECK(fabs(mean - all / h.m.rows) > 1e-6); /* the pad rows would have moved it */
    }
    free(h.buf);
}

/* ---------------------------------------------------------------------- */
/* Real fits.                                                              */

static double q3_of(const uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES])
{
    FsMetrics m;
    metrics_from_classes(&m, FS_CLASSES, conf);
    return m.q3;
}

static void chain_arch(FsArch *a)
{
    memset(a, 0, sizeof *a);
    a->chain = 1;
    a->n_layers = 3;
    a->layers[0] = conv(16, 5, 1, FS_ACT_SWISH);
    a->layers[1] = conv(16, 5, 2, FS_ACT_SWISH);
    a->layers[2] = layer(FS_LAYER_DENSE, 32, FS_ACT_SWISH);
}

static void run_folds(const FsArch *a, const FsTrainSpec *ts, int threads, FsFitResult res[3], float *weights[3])
{
    FsJob jobs[3];
    for (int f = 0; f < 3; f++) {
        train_result_alloc(&res[f], ts->stop.max_epochs);
        weights[f] = train_result_alloc_weights(&res[f], a);
        jobs[f] = (FsJob){a, ts, &ds, f, &res[f], weights[f], NULL, NULL, NULL, NULL, NULL, 0, 0};
    }
    train_jobs(jobs, 3, threads);
}

static void test_fit(void)
{
    FsArch a;
    chain_arch(&a);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.lr = 3e-3f;
    ts.batch_residues = 1024;
    ts.stop.max_epochs = 4;
    ts.seed[0] = 1;
    FsFitResult r1[3], r2[3];
    float *w1[3], *w2[3];
    run_folds(&a, &ts, 1, r1, w1);
    run_folds(&a, &ts, 2, r2, w2);
    uint64_t scored = 0;
    for (int f = 0; f < 3; f++) {
        CHECK(r1[f].status == FS_FIT_OK);
        double q = q3_of(r1[f].best_confusion);
        printf("chain model, fold %d: Q3 %.3f at epoch %d of %d, val loss %.4f\n", f, q, r1[f].best_epoch,
               r1[f].epochs, r1[f].best_val_loss);
        /* Coil alone is about 0.42 on these proteins; a window model of this
         * size reaches about 0.7 (tests/test_synth_learn.c). */
        CHECK_MSG(q > 0.6, "fold %d: Q3 %.3f", f, q);
        /* The same numbers on 2 threads. */
        CHECK(memcmp(r1[f].best_confusion, r2[f].best_confusion, sizeof r1[f].best_confusion) == 0);
        CHECK(r1[f].best_val_loss == r2[f].best_val_loss);
        CHECK(memcmp(w1[f], w2[f], sizeof(float) * (size_t)r1[f].n_weights) == 0);
        /* Every scored residue of the validation fold counted once per epoch. */
        uint64_t n = 0;
        for (int i = 0; i < FS_CLASSES; i++)
            for (int j = 0; j < FS_CLASSES; j++) n += r1[f].best_confusion[i][j];
        CHECK(n == data_examples(&ds, f, 1, NULL));
        CHECK(r1[f].val_examples == n * (uint64_t)r1[f].epochs);
        scored += n;
    }
    CHECK(scored == ds.stats.scored);

    /* train_predict scores fold 0's validation residues as the fit did
     * (its best epoch's weights), in batches of any size. */
    uint32_t nv = data_examples(&ds, 0, 1, NULL);
    uint32_t *idx = malloc(sizeof(uint32_t) * nv);
    data_examples(&ds, 0, 1, idx);
    float *probs = malloc(sizeof(float) * nv * FS_CLASSES);
    uint8_t *pred = malloc(nv);
    FsNet net;
    FsErr err = {0};
    CHECK(model_compile(&net, &a, 1, &err) == 0);
    train_predict(&net, w1[0], &ds, idx, nv, 7, probs, pred);
    uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}};
    for (uint32_t i = 0; i < nv; i++) conf[FS_SS_CLASS(ds.ss[idx[i]])][pred[i]]++;
    CHECK(memcmp(conf, r1[0].best_confusion, sizeof conf) == 0);
    free(idx);
    free(probs);
    free(pred);
    for (int f = 0; f < 3; f++) {
        train_result_free(&r1[f]);
        train_result_free(&r2[f]);
    }
}

/* A budget smaller than every chain: each is a batch of its own, and the
 * net holds the longest. */
static void test_small_budget(void)
{
    FsArch a;
    chain_arch(&a);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch_residues = 16;
    FsNet net;
    FsErr err = {0};
    CHECK(train_chain_rows(&a, &ts, data_longest_chain(&ds), &net, &err) == 0);
    CHECK(net.in_rows == (int)data_longest_chain(&ds) + net.pad);
    FsFoldData fd = {ds.aa, ds.ss, ds.left, ds.right, NULL, 0, NULL, 0, 0, 0, NULL, 0, 0};
    uint32_t c[4];
    first_chains(c, 4);
    CHECK(step_chain_batch(&fd, c, 4, ts.batch_residues, net.pad) == 1);
    CHECK(step_chain_batch(&fd, c, 4, net.in_rows, net.pad) >= 1);
    long all = 0;
    for (int i = 0; i < 4; i++) all += step_chain_length(&fd, c[i]) + net.pad;
    CHECK(step_chain_batch(&fd, c, 4, all, net.pad) == 4);
    CHECK(step_chain_batch(&fd, c, 4, all - 1, net.pad) == 3);
    /* The segment walk: every segment's length from its first residue. */
    for (uint32_t s = 0; s < ds.n_seg; s++)
        CHECK(step_chain_length(&fd, ds.seg_off[s]) == ds.seg_off[s + 1] - ds.seg_off[s]);
    ts.stop.max_epochs = 1;
    FsFitResult r;
    train_result_alloc(&r, 1);
    FsJob job = {&a, &ts, &ds, 0, &r, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0};
    train_jobs(&job, 1, 1);
    CHECK(r.status == FS_FIT_OK && r.epochs == 1);
    CHECK(r.train_examples == data_examples(&ds, 0, 0, NULL));
    train_result_free(&r);
}

static void test_refusals(void)
{
    FsArch a = {0};
    FsNet net;
    FsErr err = {0};
    a.window = 9;
    a.n_layers = 1;
    a.layers[0] = conv(4, 3, 2, FS_ACT_RELU);
    CHECK(model_compile(&net, &a, 8, &err) != 0);
    CHECK_CONTAINS(err.msg, "dilation needs a chain model");
    a.window = 0;
    a.chain = 1;
    a.layers[0].dilation = FS_MAX_DILATION + 1;
    err = (FsErr){0};
    CHECK(model_compile(&net, &a, 8, &err) != 0);
    CHECK_CONTAINS(err.msg, "dilation must be from 1 to");
    a.layers[0] = layer(FS_LAYER_DENSE, 4, FS_ACT_RELU);
    a.layers[0].dilation = 2;
    err = (FsErr){0};
    CHECK(model_compile(&net, &a, 8, &err) != 0);
    CHECK_CONTAINS(err.msg, "only conv1d and highway layers take a dilation");
    /* A kernel wider than a short chain is zero padding, not an error. */
    a.layers[0] = conv(4, 31, 1, FS_ACT_RELU);
    CHECK(model_compile(&net, &a, 8, &err) == 0);
}

int main(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 90, 5, &err) == 0, "%s", err.msg);
    CHECK(data_assign_folds(&ds, 3, 1, &err) == 0);
    CHECK(ds.n_seg > ds.n_prot); /* some chains break: more segments than proteins */
    test_refusals();
    test_gradients();
    test_forward();
    test_batchnorm_mask();
    test_small_budget();
    test_fit();
    data_free(&ds);
    return test_finish();
}
