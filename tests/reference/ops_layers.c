/*
 * ops_layers: each layer kind's forward and backward pass against the
 * reference (included by tests/test_ops.c after ops_harness.c). A case is
 * one layer of a compiled net; every tensor of the arena starts with random
 * interior rows (the garbage an op must overwrite, or the input it reads),
 * gradients and moments with random values (ops must add to gradients),
 * and pad rows zero. The forward runs on every backend from the same
 * inputs; the backward then runs from the CPU's forward results, so every
 * backend's backward reads the same stored activations.
 */

typedef struct {
    FsArch arch;
    FsNet net;
    OpsRun r;
    int li, B;
    size_t extra; /* arena bytes after the model (batch windows' residues) */
    char what[160];
} LayerCase;

/* One expected tensor: where it lies in the model, its reference values,
 * their magnitudes and terms per value (the tolerance of ops_harness.c). */
enum { IN_WORK, IN_W, IN_G };
typedef struct {
    const char *name;
    int where;
    long off;
    RefShape s;
    double *ref, *mag;
    long n;
    int tail; /* a batch tensor: examples past B must be left alone */
} Expect;

typedef struct {
    Expect e[8];
    int n;
} Expects;

static Expect *expect(Expects *x, const char *name, int where, long off, RefShape s, long n_terms, int tail)
{
    Expect *e = &x->e[x->n++];
    long n = ref_size(s);
    *e = (Expect){name, where, off, s, fs_calloc((size_t)n, sizeof(double)), fs_calloc((size_t)n, sizeof(double)),
                  n_terms, tail};
    return e;
}

static float *model_at(FsModel *m, int where, long off)
{
    return (where == IN_WORK ? m->work : where == IN_W ? m->w : m->g) + off;
}

static void expects_check(LayerCase *lc, const char *what, Expects *x)
{
    FsModel m0 = arena_model(&lc->r, lc->r.in);
    for (int be = 0; be < BE_N; be++) {
        if (!lc->r.out[be]) continue;
        FsModel m = arena_model(&lc->r, lc->r.out[be]);
        for (int i = 0; i < x->n; i++) {
            Expect *e = &x->e[i];
            char name[256];
            snprintf(name, sizeof name, "%s: %s", what, e->name);
            check_tensor(name, be, e->s, model_at(&m, e->where, e->off), e->ref, e->mag, e->n);
            if (!e->tail) continue;
            RefShape full = e->s;
            full.B = lc->net.max_batch;
            long n0 = ref_size(e->s);
            check_same(name, be, model_at(&m, e->where, e->off) + n0, model_at(&m0, e->where, e->off) + n0,
                       ref_size(full) - n0);
        }
    }
    for (int i = 0; i < x->n; i++) {
        free(x->e[i].ref);
        free(x->e[i].mag);
    }
    x->n = 0;
}

static RefShape in_shape(const FsLayer *y, int B)
{
    RefShape s = {B, y->in_l, y->in_pad, y->in_c};
    return s;
}

static RefShape out_shape(const FsLayer *y, int B)
{
    RefShape s = {B, y->out_l, y->out_pad, y->out_c};
    return s;
}

static void fill(float *x, long n, float lo, float hi)
{
    for (long i = 0; i < n; i++) x[i] = urand(lo, hi);
}

/* Interior rows random, pad rows left zero. */
static void fill_tensor(float *x, RefShape s, float lo, float hi)
{
    for (int b = 0; b < s.B; b++)
        for (int p = 0; p < s.L; p++)
            for (int c = 0; c < s.C; c++) x[ref_at(s, b, p, c)] = urand(lo, hi);
}

static void case_setup(LayerCase *lc, int li, int B, int max_batch)
{
    FsErr err = {0};
    lc->li = li;
    lc->B = B;
    if (model_compile(&lc->net, &lc->arch, max_batch, &err) != 0) FS_DIE("%s: %s", lc->what, err.msg);
    arena_init(&lc->r, &lc->net, 1, lc->extra);
    lc->r.sc.step = 1 + irand(100);
    lc->r.sc.drop_key = fs_rng_u64(&rng);
    FsModel m = arena_model(&lc->r, lc->r.in);
    const FsNet *net = &lc->net;
    for (int i = 0; i < net->n; i++) {
        const FsLayer *y = &net->layer[i];
        if (y->spec.kind == FS_LAYER_BATCHNORM || y->spec.kind == FS_LAYER_LAYERNORM) {
            fill(m.w + y->w, y->out_c, 0.5f, 1.5f);  /* gamma */
            fill(m.w + y->b, y->out_c, -0.5f, 0.5f); /* beta */
            if (y->spec.kind == FS_LAYER_BATCHNORM) {
                fill(m.w + y->s_mean, y->out_c, -0.5f, 0.5f);
                fill(m.w + y->s_var, y->out_c, 0.5f, 1.5f);
            }
        } else if (y->w >= 0) {
            float a = 1.5f / sqrtf((float)(y->n_w / y->out_c));
            fill(m.w + y->w, y->n_w, -a, a);
            fill(m.w + y->b, y->out_c, -0.5f, 0.5f);
            if (y->w2 >= 0) fill(m.w + y->w2, y->n_w, -a, a);
            if (y->b2 >= 0) fill(m.w + y->b2, y->out_c, -0.5f, 0.5f);
        }
        RefShape os = out_shape(y, net->max_batch);
        const long t[5] = {y->a, y->d, y->z, y->h, y->t};
        for (int k = 0; k < 5; k++)
            if (t[k] >= 0) fill_tensor(m.work + t[k], os, -1.0f, 1.0f);
        if (y->bn_mean >= 0) fill(m.work + y->bn_mean, y->out_c, -1.0f, 1.0f);
        if (y->bn_istd >= 0) fill(m.work + y->bn_istd, y->out_c, 0.5f, 2.0f);
    }
    fill(m.g, net->n_params, -0.1f, 0.1f);
    fill(m.m1, net->n_params, -0.01f, 0.01f);
    fill(m.m2, net->n_params, 0.0f, 1e-4f);
    fill(m.scratch, net->n_scratch, -9.0f, 9.0f); /* nothing may read it before writing */
    for (long i = 0; i < (long)max_batch * lc->arch.window; i++) {
        int u = irand(24);
        m.codes[i] = (uint8_t)(u < FS_AA_INPUTS ? u : FS_AA_PAD); /* some padding */
    }
    for (int b = 0; b < max_batch; b++) m.labels[b] = (uint8_t)irand(FS_CLASSES);
}

/* The layer's input as the reference reads it: the previous output, or
 * the batch's codes as a one-hot tensor (malloc'd into *own). */
static const float *case_input(LayerCase *lc, FsModel *m0, RefShape *xs, float **own)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    *own = NULL;
    *xs = in_shape(y, lc->B);
    if (!y->gather) return m0->work + lc->net.layer[lc->li - 1].a;
    xs->P = y->spec.kind == FS_LAYER_CONV ? y->spec.width / 2 : 0;
    *own = fs_calloc((size_t)ref_size(*xs), sizeof(float));
    ref_onehot(m0->codes, *xs, *own);
    return *own;
}

static float *abs_copy(const float *x, long n)
{
    float *a = fs_malloc(sizeof(float) * (size_t)(n ? n : 1));
    abs_floats(x, n, a);
    return a;
}

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

/* A bound on |act'| (for the error it carries forward), and the magnitude
 * of act' with the terms of its computation (tanh' = 1 - a^2 cancels). */
static double lip(const FsLayerSpec *s)
{
    return 1.1 * maxd(1.0, fabs(s->act_param));
}

static double grad_mag(FsAct act, float param, double a, double s)
{
    double g = fabs(ref_act_grad(act, param, a, s));
    if (act == FS_ACT_SWISH || act == FS_ACT_TANH || act == FS_ACT_ELU) g += (1.0 + fabs(a)) * maxd(1.0, fabs(param));
    return g;
}

/* Terms per value of a layer's matrix product: the gather adds one weight
 * row per window position, a GEMM one product per input. */
static long fwd_terms(const FsLayer *y)
{
    const int K = y->spec.kind == FS_LAYER_DENSE || y->spec.kind == FS_LAYER_OUTPUT ? y->in_l : y->spec.width;
    return (y->gather ? K : (long)K * y->in_c) + 1;
}

#include "ops_layers_fwd.c"
#include "ops_layers_bwd.c"

/* Forward (training, and inference where it differs), then backward,
 * unfused and (dense layers) fused with the optimizer of fuse_ts. */
static void layer_case(LayerCase *lc, int li, int B, int max_batch, const FsTrainSpec *fuse_ts)
{
    case_setup(lc, li, B, max_batch);
    const FsLayer *y = &lc->net.layer[li];
    if (y->spec.kind == FS_LAYER_BATCHNORM || y->spec.kind == FS_LAYER_DROPOUT) check_forward(lc, 0);
    check_forward(lc, 1);
    arena_take_cpu(&lc->r);
    check_backward(lc, NULL);
    if (fuse_ts && step_layer_fused(y) && !y->gather) check_backward(lc, fuse_ts);
    arena_free(&lc->r);
}
