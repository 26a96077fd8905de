/*
 * step: one minibatch (single source): gather the batch's windows, forward,
 * softmax cross-entropy, backward, gradient clipping and the optimizer.
 */
#include <math.h>
#include <string.h>

#include "data/data.h"
#include "train/act.h"
#include "train/layers.h"
#include "train/team.h"

/* Residue r's feature columns into out (D floats), or zeros for r < 0
 * (outside the residue's segment, or a pad row). */
FS_DEVICE static inline void feat_row(const FsFoldData *fd, long r, float *out, int D)
{
    if (r < 0) {
        for (int j = 0; j < D; j++) out[j] = 0.0f;
    } else if (fd->feat_half) {
        const uint16_t *h = (const uint16_t *)fd->feat + r * D;
        for (int j = 0; j < D; j++) out[j] = util_float_from_half(h[j]);
    } else {
        const float *f = (const float *)fd->feat + r * D;
        for (int j = 0; j < D; j++) out[j] = f[j];
    }
}

/* A window batch's feature tensor (FsNet.feat_in: each example's window
 * rows between pad rows, all of them written): the window's residues'
 * columns, zeros beyond its segment as the padding code reads zero one-hot. */
FS_DEVICE FS_NOINLINE static void step_load_features(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int B)
{
    const FsLayer *y = &m->net->layer[0];
    const int L = y->in_l, P = y->in_pad, D = y->feat, h = L / 2;
    float *x = m->work + m->net->feat_in;
    FS_PARFOR(t, (long)B * (L + 2 * P))
    {
        const long b = t / (L + 2 * P);
        const int q = (int)(t % (L + 2 * P)) - P, o = q - h;
        const uint32_t r = idx[b];
        const int out = q < 0 || q >= L || (o < 0 && -o > fd->left[r]) || (o > 0 && o > fd->right[r]);
        feat_row(fd, out ? -1 : (long)r + o, x + t * D, D);
    }
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void step_load_batch(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int B)
{
    if (m->net->feat_in >= 0) step_load_features(m, fd, idx, B);
    const int L = m->net->arch.window, h = L / 2;
    FS_PARFOR(b, B)
    {
        uint32_t r = idx[b];
        uint8_t *c = m->codes + b * L;
        /* Positions beyond the residue's segment (protein end or chain
         * break) read the padding symbol. */
        for (int q = 0; q < L; q++) {
            int o = q - h;
            int out = (o < 0 && -o > fd->left[r]) || (o > 0 && o > fd->right[r]);
            c[q] = out ? FS_AA_PAD : fd->aa[(long)r + o];
        }
        m->labels[b] = (uint8_t)FS_SS_CLASS(fd->ss[r]);
    }
    FS_SYNC();
}

/* The first layer's bias and feature columns' part, before its gather
 * adds the one-hot rows (conv.c). */
FS_DEVICE FS_NOINLINE static void step_input_features(FsModel *m, int B)
{
    FsLayer tmp;
    const FsLayer *y = layer_view(m, 0, &tmp);
    float *out = m->work + y->a;
    rows_set(out, m->w + y->b, B, y->out_l, y->out_pad, y->out_c);
    input_features(m, y, out, NULL, B);
}

FS_DEVICE void step_forward(FsModel *m, int B, int train)
{
    if (m->net->feat_in >= 0) step_input_features(m, B);
    for (int i = 0; i < m->net->n; i++) {
        layer_forward(m, i, B, train);
        layer_forward_done(m, i);
    }
}

/* A chain batch's feature tensor: its rows as step_load_chain lays them
 * out (a protein's residues, then its pad rows of zeros), the tensor's pad
 * rows before and after them zero (a batch may be shorter than the last). */
FS_DEVICE FS_NOINLINE static void step_load_chain_features(FsModel *m, const FsFoldData *fd, const uint32_t *idx,
                                                           int n)
{
    const int P = m->net->pad, D = m->net->layer[0].feat;
    float *x = m->work + m->net->feat_in;
    FS_MASTER
    {
        long t = -P;
        for (; t < 0; t++) feat_row(fd, -1, x + (t + P) * D, D);
        for (int b = 0; b < n; b++) {
            const uint32_t r0 = idx[b], len = step_chain_length(fd, r0);
            for (uint32_t i = 0; i < len; i++, t++) feat_row(fd, (long)r0 + i, x + (t + P) * D, D);
            for (int q = 0; q < P; q++, t++) feat_row(fd, -1, x + (t + P) * D, D);
        }
        for (int q = 0; q < P; q++, t++) feat_row(fd, -1, x + (t + P) * D, D);
    }
    FS_SYNC();
}

/* A chain batch: its proteins (idx: each one's first residue) one after
 * another, each followed by the net's pad rows (FS_AA_PAD, not scored), so
 * that every protein's convolutions see zero padding at both ends. */
FS_DEVICE FS_NOINLINE void step_load_chain(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int n)
{
    FS_MASTER
    {
        const int P = m->net->pad;
        long t = 0;
        uint32_t scored = 0;
        for (int b = 0; b < n; b++) {
            const uint32_t r0 = idx[b], len = step_chain_length(fd, r0);
            for (uint32_t i = 0; i < len; i++, t++) {
                const uint8_t ss = fd->ss[r0 + i];
                m->codes[t] = fd->aa[r0 + i];
                m->labels[t] = FS_SS_SCORED(ss) ? (uint8_t)FS_SS_CLASS(ss) : FS_LABEL_NONE;
                scored += FS_SS_SCORED(ss);
            }
            for (int q = 0; q < P; q++, t++) {
                m->codes[t] = FS_AA_PAD;
                m->labels[t] = FS_LABEL_NONE;
            }
        }
        m->rows = (int)t;
        m->scored = scored;
    }
    FS_SYNC();
    if (m->net->feat_in >= 0) step_load_chain_features(m, fd, idx, n);
}

FS_DEVICE FS_NOINLINE double step_loss(FsModel *m, int B, int grad, uint64_t confusion[FS_MAX_CLASSES][FS_MAX_CLASSES])
{
    const FsLayer *y = &m->net->layer[m->net->n - 1];
    /* A window model: one output per example. A chain model: one per row
     * of its batch (rows after the pad), the scored ones counted, the loss
     * a mean over them. */
    const int chain = m->net->chain, n = chain ? m->rows : B, K = m->net->classes;
    const float *z = m->work + y->a + (chain ? (long)m->net->pad * K : 0);
    float *d = m->work + y->d + (chain ? (long)m->net->pad * K : 0);
    const float denom = chain ? (float)(m->scored ? m->scored : 1) : (float)B;
    FS_PARFOR(b, n)
    {
        const float *zb = z + b * K;
        int arg = 0;
        float mx = zb[0];
        for (int k = 1; k < K; k++)
            if (zb[k] > mx) {
                mx = zb[k];
                arg = k;
            }
        int lab = m->labels[b];
        m->ex_pred[b] = (uint8_t)arg;
        if (lab == FS_LABEL_NONE) {
            m->ex_loss[b] = 0.0f;
            if (grad)
                for (int k = 0; k < K; k++) d[b * K + k] = 0.0f;
        } else {
            float e[FS_MAX_CLASSES], sum = 0.0f;
            for (int k = 0; k < K; k++) {
                e[k] = expf(zb[k] - mx);
                sum += e[k];
            }
            m->ex_loss[b] = logf(sum) - (zb[lab] - mx);
            /* Class weights (training only): the example's loss and gradient
             * scaled by its class's weight; unweighted, the old arithmetic. */
            const int weigh = grad && m->class_weighted;
            if (weigh) m->ex_loss[b] *= m->class_w[lab];
            if (grad)
                for (int k = 0; k < K; k++) {
                    const float g = (e[k] / sum - (k == lab ? 1.0f : 0.0f)) / denom;
                    d[b * K + k] = weigh ? g * m->class_w[lab] : g;
                }
        }
    }
    FS_SYNC();
    /* Every thread sums in the same order, so all agree on the total. */
    double total = 0.0;
    for (int b = 0; b < n; b++) total += m->ex_loss[b];
    /* Each thread keeps its own copy of the confusion matrix (the caller's
     * local), all equal: no thread waits for another's. */
    if (confusion)
        for (int b = 0; b < n; b++)
            if (m->labels[b] != FS_LABEL_NONE) confusion[m->labels[b]][m->ex_pred[b]]++;
    /* Nobody loads the next batch's labels while another still reads these
     * (found by tests/test_block.c: on a GPU the confusion matrix raced). */
    FS_SYNC();
    return total;
}

/* The parameter runs [lo, hi) that step_update owns: all parameters, or
 * with fused, the gaps between fused weight matrices (the buffer is laid out
 * in layer order). */
#define STEP_MAX_RUNS (FS_MAX_LAYERS + 2)
FS_DEVICE static int step_runs(const FsNet *net, int fused, long run[STEP_MAX_RUNS][2])
{
    int n = 0;
    long lo = 0;
    if (fused)
        for (int i = 0; i < net->n; i++) {
            const FsLayer *y = &net->layer[i];
            if (!step_layer_fused(y)) continue;
            if (y->w > lo) {
                run[n][0] = lo;
                run[n][1] = y->w;
                n++;
            }
            lo = y->w + y->n_w;
        }
    if (net->n_params > lo) {
        run[n][0] = lo;
        run[n][1] = net->n_params;
        n++;
    }
    return n;
}

FS_DEVICE FsOptStep step_opt(const FsTrainSpec *ts, long t, float scale, float lr)
{
    FsOptStep o;
    o.opt = ts->opt;
    o.lr = lr;
    o.mu = ts->momentum;
    o.b1 = ts->beta1;
    o.b2 = ts->beta2;
    o.eps = ts->eps;
    o.a = (float)((double)o.lr / (1.0 - pow(o.b1, (double)t)));
    o.s2 = (float)(1.0 / sqrt(1.0 - pow(o.b2, (double)t)));
    o.l2 = ts->opt == FS_OPT_ADAMW ? 0.0f : ts->weight_decay;
    o.decay = ts->opt == FS_OPT_ADAMW ? 1.0f - lr * ts->weight_decay : 1.0f;
    o.scale = scale;
    o.plain = scale == 1.0f && o.l2 == 0.0f && o.decay == 1.0f;
    return o;
}

/* Sum of squares of the gradient's chunk c (of nr * per: per chunks of
 * each run). Sixteen lanes, summed in a fixed order at the end: an
 * in-order float sum cannot be vectorised and cost as much as Adam itself. */
FS_DEVICE static inline float step_norm_chunk(const long (*run)[2], int per, const float *g, long c)
{
    const long r0 = run[c / per][0], r1 = run[c / per][1], chunk = (r1 - r0 + per - 1) / per;
    long lo = r0 + (c % per) * chunk, hi = lo + chunk < r1 ? lo + chunk : r1;
    float lane[16];
    for (int j = 0; j < 16; j++) lane[j] = 0.0f;
    long i = lo;
    for (; i + 16 <= hi; i += 16)
        for (int j = 0; j < 16; j++) lane[j] += g[i + j] * g[i + j];
    for (; i < hi; i++) lane[0] += g[i] * g[i];
    float s = 0.0f;
    for (int j = 0; j < 16; j++) s += lane[j];
    return s;
}

#ifdef FS_TEAM
/* The loops over every parameter, as ranges that idle pool threads may
 * share (team.h): each element's arithmetic is the same whoever runs it.
 * Ranges are whole blocks of STEP_BLOCK elements from the run's start, so
 * that a vectorised loop splits its elements the same way at any count. */
#define STEP_BLOCK 256
typedef struct {
    FsOptStep o;
    float *w, *m1, *m2, *g;
    long lo, hi;
    const long (*run)[2];
    int per;
    float *partial;
} StepLoop;

static void step_zero_range(void *arg, long b0, long b1)
{
    const StepLoop *l = arg;
    const long lo = l->lo + b0 * STEP_BLOCK, hi = l->lo + b1 * STEP_BLOCK < l->hi ? l->lo + b1 * STEP_BLOCK : l->hi;
    memset(l->g + lo, 0, sizeof(float) * (size_t)(hi - lo));
}

static void step_norm_range(void *arg, long c0, long c1)
{
    const StepLoop *l = arg;
    for (long c = c0; c < c1; c++) l->partial[c] = step_norm_chunk(l->run, l->per, l->g, c);
}

static void step_opt_range(void *arg, long b0, long b1)
{
    const StepLoop *l = arg;
    /* Local copies: stores through w could alias them, and reloading them
     * every element stops vectorisation. */
    const FsOptStep o = l->o;
    float *w = l->w, *m1 = l->m1, *m2 = l->m2;
    const float *g = l->g;
    const long lo = l->lo + b0 * STEP_BLOCK, hi = l->lo + b1 * STEP_BLOCK < l->hi ? l->lo + b1 * STEP_BLOCK : l->hi;
    if (o.opt == FS_OPT_SGD)
        for (long i = lo; i < hi; i++) opt_sgd(&o, w + i, m1 + i, g[i]);
    else if (o.plain)
        for (long i = lo; i < hi; i++) opt_adam_plain(&o, w + i, m1 + i, m2 + i, g[i]);
    else
        for (long i = lo; i < hi; i++) opt_adam(&o, w + i, m1 + i, m2 + i, g[i]);
}

/* The first parameter block after `at` (a layer's weights or bias), or
 * `hi`: each is a loop of its own, so that its halves are the halves of
 * the weight-gradient GEMM's rows, and on two threads each updates the
 * rows its core computed (team.c). */
static long step_next_cut(const FsNet *net, long at, long hi)
{
    for (int i = 0; i < net->n; i++) {
        const FsLayer *y = &net->layer[i];
        if (y->n_w <= 0) continue;
        const long cuts[4] = {y->w, y->b, y->w2, y->b2};
        for (int k = 0; k < (y->spec.kind == FS_LAYER_HIGHWAY ? 4 : 2); k++)
            if (cuts[k] > at && cuts[k] < hi) hi = cuts[k];
    }
    return hi;
}

static void step_team_runs(StepLoop *l, const FsNet *net, const long (*run)[2], int nr, double cost, FsTeamFn fn)
{
    for (int r = 0; r < nr; r++)
        for (long at = run[r][0]; at < run[r][1]; at = l->hi) {
            l->lo = at;
            l->hi = step_next_cut(net, at, run[r][1]);
            team_for((l->hi - l->lo + STEP_BLOCK - 1) / STEP_BLOCK, cost * (double)(l->hi - l->lo), fn, l);
        }
}
#endif

/* The gradients step_backward accumulates into, zeroed (with fused, those
 * of every parameter but the fused weight matrices). */
FS_DEVICE FS_NOINLINE static void step_zero_grads(FsModel *m, int fused)
{
    long run[STEP_MAX_RUNS][2];
    int nr = step_runs(m->net, fused, run);
#ifdef FS_TEAM
    StepLoop zl;
    zl.g = m->g;
    step_team_runs(&zl, m->net, (const long(*)[2])run, nr, 10.0, step_zero_range);
#else
    for (int r = 0; r < nr; r++) {
        float *g = m->g + run[r][0];
        FS_PARFOR(i, run[r][1] - run[r][0]) g[i] = 0.0f;
    }
#endif
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE int step_backward(FsModel *m, int B, const FsTrainSpec *ts)
{
    const int fused = step_fuses(ts);
    step_zero_grads(m, fused);
    FsOptStep o;
    if (fused) o = step_opt(ts, m->step + 1, 1.0f, m->lr);
    /* What the loop keeps across its calls, in memory (FS_IN_MEMORY). */
    struct {
        int i, B, fused, bad;
    } k = {m->net->n - 1, B, fused, 0};
    for (; k.i >= 0; k.i--) {
        FS_IN_MEMORY(&k);
        k.bad |= layer_backward(m, k.i, k.B, k.fused ? &o : 0);
        FS_IN_MEMORY(&k);
        layer_backward_done(m, k.i, k.B);
    }
    FS_IN_MEMORY(&k);
    return k.fused ? FS_SYNC_ANY(k.bad) : 0;
}

/* ---------------------------------------------------------------------- */
/* A step in parts (core.h): what step_forward and step_backward run, a
 * layer with convolution GEMMs in its parts with the GEMMs left to the
 * caller (the library tier, kernels/dnn.h; or step_layer_gemm). The
 * sequence is theirs: layer_forward and layer_backward run a conv1d layer
 * as conv_forward_part / conv_backward_part around conv.c's GEMMs
 * (layers.c), and tests/test_step_parts.c checks the parts against the
 * whole step bit for bit. */

FS_DEVICE FS_NOINLINE void step_forward_part(FsModel *m, int i, int B, int train, int part)
{
    if (part == 0 && i == 0 && m->net->feat_in >= 0) step_input_features(m, B);
    if (!step_layer_gemms(m->net, i)) {
        if (part == 0) {
            layer_forward(m, i, B, train);
            layer_forward_done(m, i);
        }
        return;
    }
    conv_forward_part(m, i, B, part);
    if (part == 1) layer_forward_done(m, i);
}

FS_DEVICE FS_NOINLINE void step_backward_part(FsModel *m, int i, int B, int part)
{
    if (i == m->net->n) {
        if (part == 0) step_zero_grads(m, 0);
    } else if (!step_layer_gemms(m->net, i)) {
        if (part == 0) {
            layer_backward(m, i, B, 0);
            layer_backward_done(m, i, B);
        }
    } else if (part < 2) {
        conv_backward_part(m, i, B, part);
    } else {
        layer_backward_done(m, i, B);
    }
}

FS_DEVICE FS_NOINLINE void step_layer_gemm(FsModel *m, int i, int B, int which)
{
    FsLayer tmp;
    const FsLayer *y = layer_view(m, i, &tmp);
    const float *x = m->work + m->net->layer[i - 1].a;
    if (which == 0)
        conv_gemm(y, m->w + y->w, x, m->work + y->a, B, y->out_c);
    else if (which == 1)
        conv_wgrad(y, m->g + y->w, x, m->work + y->d, B, y->out_c);
    else
        conv_dgrad(y, m->w + y->w, m->scratch, m->work + y->d, m->work + m->net->layer[i - 1].d, B, y->out_c);
}

FS_DEVICE FS_NOINLINE float step_update(FsModel *m, const FsTrainSpec *ts, int fused)
{
    fused = fused && step_fuses(ts);
    long run[STEP_MAX_RUNS][2];
    const int nr = step_runs(m->net, fused, run), per = FS_NORM_CHUNKS / (nr ? nr : 1);
    float *w = m->w, *g = m->g, *m1 = m->m1, *m2 = m->m2;
#ifdef FS_TEAM
    StepLoop l;
    l.w = w, l.g = g, l.m1 = m1, l.m2 = m2;
    l.run = (const long(*)[2])run;
    l.per = per;
    l.partial = m->partial;
    long n_upd = 0;
    for (int r = 0; r < nr; r++) n_upd += run[r][1] - run[r][0];
    team_for(nr * per, 4.0 * (double)n_upd, step_norm_range, &l);
#else
    FS_PARFOR(c, nr * per) m->partial[c] = step_norm_chunk((const long(*)[2])run, per, g, c);
#endif
    FS_SYNC();
    double ss = 0.0;
    for (int c = 0; c < nr * per; c++) ss += m->partial[c];
    float norm = (float)sqrt(ss);
    if (!isfinite(norm)) return norm;
    const float scale = (ts->clip_norm > 0.0f && norm > ts->clip_norm) ? ts->clip_norm / norm : 1.0f;
    const long t = m->step + 1;
    const FsOptStep o = step_opt(ts, t, scale, m->lr);
#ifdef FS_TEAM
    l.o = o;
    step_team_runs(&l, m->net, (const long(*)[2])run, nr, o.opt == FS_OPT_SGD ? 12.0 : 48.0, step_opt_range);
#else
    for (int r = 0; r < nr; r++) {
        const long lo = run[r][0];
        if (o.opt == FS_OPT_SGD) {
            FS_PARFOR(i, run[r][1] - lo) opt_sgd(&o, w + lo + i, m1 + lo + i, g[lo + i]);
        } else if (o.plain) {
            FS_PARFOR(i, run[r][1] - lo) opt_adam_plain(&o, w + lo + i, m1 + lo + i, m2 + lo + i, g[lo + i]);
        } else {
            FS_PARFOR(i, run[r][1] - lo) opt_adam(&o, w + lo + i, m1 + lo + i, m2 + lo + i, g[lo + i]);
        }
    }
#endif
    FS_SYNC();
    FS_MASTER
    {
        m->step = t;
    }
    FS_SYNC();
    return norm;
}
