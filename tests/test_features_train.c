/*
 * Per-residue feature columns through the trainer (data.features): the
 * first layer's feature weights against finite differences (window conv,
 * window dense, no one-hot, chain), its forward pass against a direct
 * double-precision sum, half storage against the same values as floats,
 * fits identical on 1 and 2 threads, and informative columns learnt.
 */
#include <math.h>
#include <stdlib.h>

#include "data/data.h"
#include "synth/synth.h"
#include "test.h"
#include "grad_check.h"
#include "test_harness.h"
#include "train/core.h"

#define D 4
static FsDataset ds;
static float *feat_f;     /* [n_res][D] floats */
static uint16_t *feat_h;  /* the same values as halves */

/* Columns 0..2: a noisy indicator of the residue's class (what profile or
 * embedding columns carry); column 3: noise. Values rounded to halves, so
 * that both storages hold exactly the same numbers. */
static void make_features(void)
{
    uint64_t s[1] = {99};
    FsRng rng;
    fs_rng_seed(&rng, s, 1);
    feat_f = fs_malloc(sizeof(float) * ds.n_res * D);
    feat_h = fs_malloc(sizeof(uint16_t) * ds.n_res * D);
    for (uint32_t r = 0; r < ds.n_res; r++)
        for (int j = 0; j < D; j++) {
            float v = 1.2f * (fs_rng_uniform(&rng) - 0.5f);
            if (j < 3 && FS_SS_CLASS(ds.ss[r]) == j) v += 0.8f;
            feat_h[r * D + j] = util_half_from_float(v);
            feat_f[r * D + j] = util_float_from_half(feat_h[r * D + j]);
        }
}

static void use_features(int half)
{
    ds.feat_dim = D;
    ds.feat_half = (uint8_t)half;
    ds.feat = half ? (void *)feat_h : (void *)feat_f;
}

#define layer(...) th_layer(__VA_ARGS__)

/* A batch: window models the scored residues 0..B-1 of the set (some at
 * segment ends, so windows reach past them), chain models chains 0..2. */
static void harness_load(Harness *h)
{
    uint32_t idx[64], n = data_examples(&ds, FS_FOLD_ALL, 0, NULL);
    uint32_t *all = fs_malloc(sizeof(uint32_t) * n);
    if (h->net.chain) {
        n = data_chain_examples(&ds, FS_FOLD_ALL, 0, all);
        for (int i = 0; i < 3; i++) idx[i] = all[i];
        step_load_chain(&h->m, &h->fd, idx, 3);
    } else {
        data_examples(&ds, FS_FOLD_ALL, 0, all);
        for (int i = 0; i < h->B; i++) idx[i] = all[i * 7 % n];
        step_load_batch(&h->m, &h->fd, idx, h->B);
    }
    free(all);
}

static double loss_of(void *ctx)
{
    Harness *h = ctx;
    const int B = h->net.chain ? 1 : h->B;
    step_forward(&h->m, B, 1);
    return step_loss(&h->m, B, 0, 0) / (h->net.chain ? h->m.scored : (uint32_t)B);
}

/* Every parameter (a sample), and every feature weight (a sample of its own). */
static void grad_check(const char *name, const FsArch *arch)
{
    Harness h;
    harness_init(&h, &ds, arch, 6);
    harness_load(&h);
    const int B = h.net.chain ? 1 : h.B;
    step_forward(&h.m, B, 1);
    step_loss(&h.m, B, 1, 0);
    step_backward(&h.m, B, NULL);
    const FsLayer *y = &h.net.layer[0];
    CHECK(y->feat == D && y->n_wf > 0 && y->wf >= 0);
    gc_compare(name, h.m.w, h.m.g, h.net.n_params, 300, loss_of, &h, 2e-3, 2e-2);
    char fname[96];
    snprintf(fname, sizeof fname, "%s: feature weights", name);
    gc_compare(fname, h.m.w + y->wf, h.m.g + y->wf, y->n_wf, 200, loss_of, &h, 2e-3, 2e-2);
    free(h.buf);
}

static void test_gradients(void)
{
    use_features(0);
    FsArch a = {0};
    a.window = 7;
    a.feat_dim = D;
    a.n_layers = 2;
    a.layers[0] = layer(FS_LAYER_CONV, 8, 3, 0, FS_ACT_SWISH);
    a.layers[1] = layer(FS_LAYER_DENSE, 12, 0, 0, FS_ACT_TANH);
    grad_check("window conv + features", &a);
    a.n_layers = 1;
    a.layers[0] = layer(FS_LAYER_DENSE, 12, 0, 0, FS_ACT_SWISH);
    grad_check("window dense + features", &a);
    a.no_onehot = 1;
    a.n_layers = 2;
    a.layers[0] = layer(FS_LAYER_CONV, 8, 5, 0, FS_ACT_ELU);
    a.layers[1] = layer(FS_LAYER_DENSE, 12, 0, 0, FS_ACT_TANH);
    grad_check("window conv, features only", &a);
    FsArch c = {0};
    c.chain = 1;
    c.feat_dim = D;
    c.n_layers = 3;
    c.layers[0] = layer(FS_LAYER_CONV, 8, 3, 2, FS_ACT_SWISH);
    c.layers[1] = layer(FS_LAYER_BATCHNORM, 0, 0, 0, FS_ACT_LINEAR);
    c.layers[2] = layer(FS_LAYER_DENSE, 12, 0, 0, FS_ACT_TANH);
    grad_check("chain conv(dil 2) + features", &c);
    c.layers[0] = layer(FS_LAYER_DENSE, 8, 0, 0, FS_ACT_SWISH);
    grad_check("chain dense + features", &c);
}

/* The first layer (linear conv) of a window model against a direct sum:
 * bias + one-hot rows + feature rows x weights, zeros beyond the segment. */
static void test_forward(void)
{
    use_features(0);
    FsArch a = {0};
    a.window = 9;
    a.feat_dim = D;
    a.n_layers = 1;
    a.layers[0] = layer(FS_LAYER_CONV, 5, 5, 0, FS_ACT_LINEAR);
    Harness h;
    harness_init(&h, &ds, &a, 6);
    harness_load(&h);
    step_forward(&h.m, h.B, 0);
    const FsLayer *y = &h.net.layer[0];
    const int L = 9, K = 5, F = 5, P = y->out_pad;
    double worst = 0.0;
    uint32_t n = data_examples(&ds, FS_FOLD_ALL, 0, NULL);
    uint32_t *all = fs_malloc(sizeof(uint32_t) * n);
    data_examples(&ds, FS_FOLD_ALL, 0, all);
    for (int b = 0; b < h.B; b++) {
        const uint32_t r = all[b * 7 % n];
        for (int p = 0; p < L; p++)
            for (int f = 0; f < F; f++) {
                double s = h.m.w[y->b + f];
                for (int k = 0; k < K; k++) {
                    int o = p + k - K / 2 - L / 2; /* offset from the centre residue */
                    if (p + k - K / 2 < 0 || p + k - K / 2 >= L) continue;
                    if ((o < 0 && -o > ds.left[r]) || (o > 0 && o > ds.right[r])) continue;
                    const uint32_t q = (uint32_t)((long)r + o);
                    s += h.m.w[y->w + ((long)k * FS_AA_INPUTS + ds.aa[q]) * F + f];
                    for (int j = 0; j < D; j++) s += (double)feat_f[q * D + j] * h.m.w[y->wf + ((long)k * D + j) * F + f];
                }
                double got = h.m.work[y->a + ((long)b * (L + 2 * P) + P + p) * F + f];
                if (fabs(got - s) > worst) worst = fabs(got - s);
            }
    }
    printf("first layer against a direct sum: worst %.2e\n", worst);
    CHECK(worst < 1e-5);
    free(all);
    free(h.buf);
}

/* Trains 3 folds and returns the mean validation Q3 (weights kept in w). */
static double fit_folds(const FsArch *a, int threads, float *w[3])
{
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = 16;
    ts.stop.max_epochs = 3;
    ts.batch_residues = 1024;
    FsFitResult res[3];
    FsJob jobs[3];
    for (int f = 0; f < 3; f++) {
        train_result_alloc(&res[f], ts.stop.max_epochs);
        w[f] = train_result_alloc_weights(&res[f], a);
        jobs[f] = (FsJob){a, &ts, &ds, f, &res[f], w[f], NULL, NULL, NULL, NULL, NULL, 0, 0};
    }
    train_jobs(jobs, 3, threads);
    double q3 = 0.0;
    for (int f = 0; f < 3; f++) {
        CHECK_MSG(res[f].status == FS_FIT_OK, "fold %d: %s", f, res[f].message);
        uint64_t right = 0, all = 0;
        for (int i = 0; i < FS_CLASSES; i++)
            for (int j = 0; j < FS_CLASSES; j++) all += res[f].best_confusion[i][j], right += i == j ? res[f].best_confusion[i][j] : 0;
        q3 += all ? (double)right / (double)all / 3.0 : 0.0;
        const size_t bytes = sizeof(float) * (size_t)res[f].n_weights;
        float *keep = fs_malloc(bytes);
        memcpy(keep, w[f], bytes);
        w[f] = keep;
        train_result_free(&res[f]);
    }
    return q3;
}

static void test_fit(int chain)
{
    FsArch a = {0};
    a.chain = chain;
    a.window = chain ? 0 : 9;
    a.n_layers = 2;
    a.layers[0] = layer(FS_LAYER_CONV, 12, 5, 0, FS_ACT_SWISH);
    a.layers[1] = layer(FS_LAYER_DENSE, 16, 0, 0, FS_ACT_SWISH);
    float *w1[3], *w2[3], *wh[3], *w0[3];
    ds.feat_dim = 0;
    ds.feat = NULL;
    double q_onehot = fit_folds(&a, 1, w0);
    a.feat_dim = D;
    use_features(0);
    double q1 = fit_folds(&a, 1, w1), q2 = fit_folds(&a, 2, w2);
    use_features(1);
    double qh = fit_folds(&a, 2, wh);
    FsNet net;
    FsErr err = {0};
    CHECK(model_compile(&net, &a, chain ? 1024 : 16, &err) == 0);
    const size_t bytes = sizeof(float) * (size_t)(net.n_params + net.n_state);
    for (int f = 0; f < 3; f++) {
        CHECK_MSG(memcmp(w1[f], w2[f], bytes) == 0, "fold %d: weights differ between 1 and 2 threads", f);
        CHECK_MSG(memcmp(w1[f], wh[f], bytes) == 0, "fold %d: half storage trains other weights than floats", f);
        free(w0[f]), free(w1[f]), free(w2[f]), free(wh[f]);
    }
    printf("%s: Q3 one-hot %.3f, one-hot + features %.3f (2 threads %.3f, half %.3f)\n", chain ? "chain" : "window",
           q_onehot, q1, q2, qh);
    CHECK(q1 == q2 && q1 == qh);
    CHECK_MSG(q1 > q_onehot + 0.10, "informative features should add 10 points of Q3: %.3f vs %.3f", q1, q_onehot);
}

int main(void)
{
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 60, 5, &err) == 0, "%s", err.msg);
    CHECK(data_assign_folds(&ds, 3, 1, &err) == 0);
    make_features();
    test_gradients();
    test_forward();
    test_fit(0);
    test_fit(1);
    ds.feat = NULL;
    ds.feat_dim = 0;
    data_free(&ds);
    free(feat_f);
    free(feat_h);
    return test_finish();
}
