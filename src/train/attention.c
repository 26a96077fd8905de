/*
 * attention: a chain model's multi-head self-attention (single source),
 * each chain's residues attending to the residues of their own chain only:
 *
 *   q, k, v = x Wq + bq, x Wk + bk, x Wv + bv        (heads x key_dim each)
 *   s_ij    = q_i . k_j / sqrt(key_dim) + rel[clip(j - i)][head]
 *   p_ij    = softmax_j(s_ij) over i's chain, dropped out (training)
 *   out     = layernorm(x + (sum_j p_ij v_j) Wo + bo)
 *
 * (Keras's MultiHeadAttention with key_dim, then the residual add and the
 * layer norm of a transformer block; rel are learned biases for the
 * distances -max_dist..max_dist, farther pairs sharing the end buckets.)
 *
 * Nothing of size chain x chain is kept: forward keeps each row and
 * head's log-sum-exp of its scores, and backward computes the scores
 * again (as flash attention does), so the workspace grows with the batch's
 * rows only, whatever the chains' lengths. Each output (a row and head's
 * context, a query's, key's or value's gradient) is one thread's, its sums
 * over the chain in one fixed order: the bits depend neither on the thread
 * count nor (without dropout, so at inference always) on what else shares
 * the batch. Backward runs a query pass (the
 * queries' gradients, and each row's position-bias gradients by bucket)
 * and a key pass (the keys' and values' gradients), then sums the
 * position-bias gradients over the rows in order. The dropout mask is
 * drawn again in backward from its hash (layers.h), not stored; the hash
 * takes a pair's rows in the batch, so a training batch's mask depends on
 * where its chains sit (as every dropout layer's does).
 *
 * The projections are width-1 convolutions (conv.c) and the layer norm is
 * blocks.c's, each through a view of the layer that points at its part.
 */
#include <math.h>

#include "data/data.h"
#include "train/act.h"
#include "train/layers.h"
#include "train/team.h"

/* The heads' width, heads x key_dim. */
FS_DEVICE static inline int att_hd(const FsLayer *y) { return y->spec.heads * y->spec.key_dim; }

/* A projection as a width-1 convolution from `in` channels to `out`. */
FS_DEVICE static inline FsLayer att_proj(const FsLayer *y, int in, int out)
{
    FsLayer v = *y;
    v.spec.width = 1;
    v.dil = 1;
    v.in_c = in;
    v.out_c = out;
    return v;
}

/* The layer norm's part as blocks.c's layer norm sees one. */
FS_DEVICE static inline FsLayer att_norm(const FsLayer *y)
{
    FsLayer v = *y;
    v.w = y->att_gamma;
    v.b = y->att_beta;
    v.z = y->att_xhat;
    return v;
}

/* Each row's chain (ints at t): its first row and its length, -1 and 0
 * for a pad row; then whether the forward pass dropped out (backward's
 * mask is the forward's). */
FS_DEVICE FS_NOINLINE static void att_chains(const FsModel *m, const FsLayer *y, int dropped)
{
    int *ch = (int *)(m->work + y->t);
    FS_MASTER
    {
        const int T = m->rows;
        for (int r = 0; r < T;) {
            if (m->codes[r] == FS_AA_PAD) {
                ch[2 * r] = -1;
                ch[2 * r + 1] = 0;
                r++;
                continue;
            }
            const int s = r;
            while (r < T && m->codes[r] != FS_AA_PAD) r++;
            for (int k = s; k < r; k++) {
                ch[2 * k] = s;
                ch[2 * k + 1] = r - s;
            }
        }
        ch[2 * T] = dropped;
    }
    FS_SYNC();
}

/* What one (row i, head h) pair's passes read: the rows' q, k, v and
 * context slots, the scale, bias and dropout. */
typedef struct {
    const float *qkv; /* row 0's q (interior rows; a row is 3 x hd floats) */
    int W3, hd, dk, H, M, T;
    float scale, rate, keep;
    const float *rel; /* [buckets][H] */
    uint64_t key;
    long step, li;
    int dropped;
} AttRow;

FS_DEVICE static inline AttRow att_row(const FsModel *m, const FsLayer *y, long li)
{
    AttRow a;
    a.hd = att_hd(y);
    a.W3 = 3 * a.hd;
    a.dk = y->spec.key_dim;
    a.H = y->spec.heads;
    a.M = y->spec.max_dist;
    a.T = m->rows;
    a.qkv = m->work + y->z + (long)y->out_pad * a.W3;
    a.scale = 1.0f / sqrtf((float)a.dk);
    a.rate = y->spec.rate;
    a.keep = 1.0f / (1.0f - a.rate);
    a.rel = m->w + y->att_rel;
    a.key = m->drop_key;
    a.step = m->step;
    a.li = li;
    a.dropped = ((const int *)(m->work + y->t))[2 * m->rows];
    return a;
}

/* Every sum below is written once and computed the same way on every
 * path: a dot product over a head's columns in order from 0.0f; a sum over
 * a chain's residues as 8 running sums (residue j of a range into sum j %
 * 8, in order) combined pairwise, which the CPU's rows add as vectors and
 * the block's threads one value at a time (att_sum, att_part_add). */
FS_DEVICE static inline float att_dot(const float *a, const float *b, int n)
{
    float s = 0.0f;
    for (int e = 0; e < n; e++) s += a[e] * b[e];
    return s;
}

FS_DEVICE static inline float att_parts(const float p[8])
{
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

FS_DEVICE static inline float att_sum(const float *x, int n)
{
    float p[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) p[k] += x[j + k];
    for (int k = 0; j + k < n; k++) p[k] += x[j + k];
    return att_parts(p);
}

/* Pair (i, j)'s position bias of head h. */
FS_DEVICE static inline float att_rel(const AttRow *a, int i, int j, int h)
{
    int rel = j - i;
    rel = rel < -a->M ? -a->M : rel > a->M ? a->M : rel;
    return a->rel[(long)(rel + a->M) * a->H + h];
}

/* Score s_ij of head h. */
FS_DEVICE static inline float att_score(const AttRow *a, int i, int j, int h)
{
    const float *q = a->qkv + (long)i * a->W3 + (long)h * a->dk, *k = a->qkv + (long)j * a->W3 + a->hd + (long)h * a->dk;
    return att_dot(q, k, a->dk) * a->scale + att_rel(a, i, j, h);
}

/* Pair (i, j)'s dropout factor for head h: 0, or 1 / (1 - rate). */
FS_DEVICE static inline float att_mask(const AttRow *a, int i, int j, int h)
{
    if (!a->dropped) return 1.0f;
    const long e = ((long)h * a->T + i) * a->T + j;
    return dropout_uniform(a->key, (uint64_t)a->step, a->li, e) >= a->rate ? a->keep : 0.0f;
}

/* c[0..dk) += p x[0..dk). */
FS_DEVICE static inline void att_axpy(float *FS_RESTRICT c, float p, const float *FS_RESTRICT x, int dk)
{
    for (int e = 0; e < dk; e++) c[e] += p * x[e];
}

#if FS_ONE_THREAD
/* ---------------------------------------------------------------------- */
/* The CPU's rows: one (row, head) pair's scores over its chain at a time, */
/* each loop across the chain's residues (vectors), from the columns of q, */
/* k, v and the context gradient transposed (att_cpu). The same sums in   */
/* the same order as the block's pairs below, so the same bits. The pairs */
/* are cut into FS_ATT_ROW_SETS ranges, each with rows of its own, which  */
/* idle pool threads may take (team_for): a pair's outputs are its own.   */

typedef struct {
    float *qkvt, *dct, *sr, *pr, *dr; /* [3 hd][T], [hd][T], three rows of T (range k's) */
} AttCpu;

FS_DEVICE static inline AttCpu att_cpu(const FsModel *m, const FsLayer *y, int k)
{
    const long T = m->rows, hd = att_hd(y);
    AttCpu c;
    c.qkvt = m->work + y->att_cpu;
    c.dct = c.qkvt + 3 * hd * T;
    c.sr = c.dct + hd * T + 3 * T * k;
    c.pr = c.sr + T;
    c.dr = c.pr + T;
    return c;
}

/* One pass over the pairs: what its pairs read and write, and the pair's work. */
typedef struct AttTask {
    FsModel *m;
    const FsLayer *y;
    AttRow a;
    const int *ch;
    const float *ctx, *dctx, *lse;
    float *out, *Dv, *dqkv, *drel; /* out: the context (forward) */
    void (*pair)(const struct AttTask *t, const AttCpu *c, long it);
} AttTask;

static void att_range(void *arg, long lo, long hi)
{
    const AttTask *t = arg;
    const long n = (long)t->a.T * t->a.H;
    for (long k = lo; k < hi; k++) {
        const AttCpu c = att_cpu(t->m, t->y, (int)k);
        for (long it = n * k / FS_ATT_ROW_SETS; it < n * (k + 1) / FS_ATT_ROW_SETS; it++) t->pair(t, &c, it);
    }
}

/* Runs t's pairs; per (row, head) about 4 x key_dim multiply-adds a pair
 * of its chain (team.h's unit of work). */
static void att_run(AttTask *t)
{
    double pairs = 0.0;
    for (int i = 0; i < t->a.T; i++) pairs += t->ch[2 * i + 1];
    team_for(FS_ATT_ROW_SETS, pairs * t->a.H * 4.0 * t->a.dk, att_range, t);
}

/* out[0..n) = x . cols[e][0..n) over e < dk (column e of a transposed
 * tensor, T floats apart), in e's order. */
static inline void att_dots(float *FS_RESTRICT out, const float *FS_RESTRICT x, const float *FS_RESTRICT cols, long T,
                            int dk, int n)
{
    for (int j = 0; j < n; j++) out[j] = 0.0f;
    for (int e = 0; e < dk; e++) {
        const float xe = x[e], *FS_RESTRICT col = cols + e * T;
        for (int j = 0; j < n; j++) out[j] += xe * col[j];
    }
}

/* Row i's scores against its chain's n keys from s0 (head h), into sr. */
static inline void att_score_row(const AttRow *a, const AttCpu *c, int i, int h, int s0, int n)
{
    const float *q = a->qkv + (long)i * a->W3 + (long)h * a->dk;
    att_dots(c->sr, q, c->qkvt + ((long)a->hd + (long)h * a->dk) * a->T + s0, a->T, a->dk, n);
    for (int j = 0; j < n; j++) c->sr[j] = c->sr[j] * a->scale + att_rel(a, i, s0 + j, h);
}

static void att_context_pair(const AttTask *t, const AttCpu *c, long it)
{
    const AttRow *a = &t->a;
    const int i = (int)(it / a->H), h = (int)(it % a->H), s0 = t->ch[2 * i], n = t->ch[2 * i + 1];
    float *FS_RESTRICT cx = t->out + (long)i * a->hd + (long)h * a->dk;
    for (int e = 0; e < a->dk; e++) cx[e] = 0.0f;
    if (s0 < 0) return;
    att_score_row(a, c, i, h, s0, n);
    float mx = -3.0e38f;
    for (int j = 0; j < n; j++) mx = c->sr[j] > mx ? c->sr[j] : mx;
    for (int j = 0; j < n; j++) c->pr[j] = act_exp(c->sr[j] - mx);
    const float l = mx + logf(att_sum(c->pr, n));
    t->Dv[(long)h * a->T + i] = l; /* the forward's Dv is the log-sum-exp's row (att_context) */
    for (int j = 0; j < n; j++) c->pr[j] = act_exp(c->sr[j] - l);
    if (a->dropped)
        for (int j = 0; j < n; j++) c->pr[j] *= att_mask(a, i, s0 + j, h);
    for (int j = 0; j < n; j++) att_axpy(cx, c->pr[j], a->qkv + (long)(s0 + j) * a->W3 + 2 * a->hd + (long)h * a->dk, a->dk);
}

static void att_context_cpu(FsModel *m, const FsLayer *y, const AttRow *a, const int *ch, float *ctx, float *lse)
{
    const AttCpu c = att_cpu(m, y, 0);
    ops_transpose(a->qkv, a->T, a->W3, c.qkvt, a->T);
    AttTask t = {.m = m, .y = y, .a = *a, .ch = ch, .out = ctx, .Dv = lse, .pair = att_context_pair};
    att_run(&t);
}
#endif

/* Every (row, head)'s context: the log-sum-exp of its scores, then the
 * weighted values. A pad row's context is zero. */
FS_DEVICE FS_NOINLINE static void att_context(FsModel *m, const FsLayer *y, long li)
{
    const AttRow a = att_row(m, y, li);
    const int *ch = (const int *)(m->work + y->t);
    float *ctx = m->work + y->h + (long)y->out_pad * a.hd, *lse = m->work + y->bn_mean;
#if FS_ONE_THREAD
    att_context_cpu(m, y, &a, ch, ctx, lse);
#else
    FS_PARFOR(it, (long)a.T * a.H)
    {
        const int i = (int)(it / a.H), h = (int)(it % a.H), s0 = ch[2 * i], n = ch[2 * i + 1];
        float *c = ctx + (long)i * a.hd + (long)h * a.dk;
        for (int e = 0; e < a.dk; e++) c[e] = 0.0f;
        if (s0 >= 0) {
            float mx = -3.0e38f, part[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
            for (int j = s0; j < s0 + n; j++) {
                const float s = att_score(&a, i, j, h);
                mx = s > mx ? s : mx;
            }
            for (int j = s0; j < s0 + n; j++) part[(j - s0) & 7] += act_exp(att_score(&a, i, j, h) - mx);
            const float l = mx + logf(att_parts(part));
            lse[(long)h * a.T + i] = l;
            for (int j = s0; j < s0 + n; j++)
                att_axpy(c, act_exp(att_score(&a, i, j, h) - l) * att_mask(&a, i, j, h),
                         a.qkv + (long)j * a.W3 + 2 * a.hd + (long)h * a.dk, a.dk);
        }
    }
#endif
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE static void att_residual(FsModel *m, const FsLayer *y, const float *x)
{
    const int C = y->out_c;
    float *out = m->work + y->a + (long)y->out_pad * C;
    const float *xi = x + (long)y->in_pad * C;
    FS_PARFOR(k, (long)m->rows * C) out[k] += xi[k];
    FS_SYNC();
}

/* q, k, v = b + x W. */
FS_DEVICE FS_NOINLINE static void att_qkv(FsModel *m, const FsLayer *y, const float *x, int B)
{
    const FsLayer v = att_proj(y, y->in_c, 3 * att_hd(y));
    rows_set(m->work + y->z, m->w + y->b, B, v.out_l, v.out_pad, v.out_c);
    conv_gemm(&v, m->w + y->w, x, m->work + y->z, B, v.out_c);
}

/* out = bo + context Wo. */
FS_DEVICE FS_NOINLINE static void att_out(FsModel *m, const FsLayer *y, int B)
{
    const FsLayer v = att_proj(y, att_hd(y), y->out_c);
    rows_set(m->work + y->a, m->w + y->b2, B, v.out_l, v.out_pad, v.out_c);
    conv_gemm(&v, m->w + y->w2, m->work + y->h, m->work + y->a, B, v.out_c);
}

FS_DEVICE FS_NOINLINE void attention_forward(FsModel *m, const FsLayer *y, long li, const float *x, int B, int train)
{
    att_qkv(m, y, x, B);
    att_chains(m, y, train && y->spec.rate > 0.0f);
    att_context(m, y, li);
    att_out(m, y, B);
    att_residual(m, y, x);
    const FsLayer v = att_norm(y);
    layernorm_forward(m, &v, m->work + y->a, B); /* in place: each row read whole before it is written */
}

/* ---------------------------------------------------------------------- */
/* Backward.                                                               */

/* Row i's position-bias gradients of head h (dr, its buckets) from its
 * pairs' ds, residue j's at ds[j - s0]: the buckets between the ends hold
 * one pair each, the end buckets the sums of the pairs at max_dist or
 * farther (att_sum's order). The block's pairs write theirs as they go. */
FS_DEVICE static inline void att_rel_row(const AttRow *a, float *dr, const float *ds, int i, int s0, int n)
{
    const int nb = 2 * a->M + 1, lo = i - a->M - s0 + 1, hi = i + a->M - s0; /* [0, lo) and [hi, n): the ends */
    for (int b = 0; b < nb; b++) dr[b] = 0.0f;
    const int nlo = lo < 0 ? 0 : lo > n ? n : lo, h0 = hi < 0 ? 0 : hi > n ? n : hi;
    dr[0] = att_sum(ds, nlo);
    dr[nb - 1] = att_sum(ds + h0, n - h0);
    for (int j = nlo; j < h0; j++) dr[s0 + j - i + a->M] = ds[j];
}

#if FS_ONE_THREAD
static void att_query_pair(const AttTask *t, const AttCpu *c, long it)
{
    const AttRow *a = &t->a;
    const int NB = FS_ATT_BUCKETS(&t->y->spec);
    const int i = (int)(it / a->H), h = (int)(it % a->H), s0 = t->ch[2 * i], n = t->ch[2 * i + 1];
    float *FS_RESTRICT dq = t->dqkv + (long)i * a->W3 + (long)h * a->dk;
    const float *dc = t->dctx + (long)i * a->hd + (long)h * a->dk;
    for (int e = 0; e < a->dk; e++) dq[e] = 0.0f;
    const float D = att_dot(dc, t->ctx + (long)i * a->hd + (long)h * a->dk, a->dk);
    t->Dv[(long)h * a->T + i] = D;
    if (s0 < 0) {
        for (int b = 0; b < NB; b++) t->drel[it * NB + b] = 0.0f;
        return;
    }
    const float l = t->lse[(long)h * a->T + i]; /* (a pad row has none) */
    att_score_row(a, c, i, h, s0, n);
    att_dots(c->dr, dc, c->qkvt + (2L * a->hd + (long)h * a->dk) * a->T + s0, a->T, a->dk, n);
    for (int j = 0; j < n; j++) c->pr[j] = act_exp(c->sr[j] - l);
    if (a->dropped)
        for (int j = 0; j < n; j++) c->dr[j] *= att_mask(a, i, s0 + j, h);
    for (int j = 0; j < n; j++) c->dr[j] = c->pr[j] * (c->dr[j] - D);
    for (int j = 0; j < n; j++)
        att_axpy(dq, c->dr[j] * a->scale, a->qkv + (long)(s0 + j) * a->W3 + a->hd + (long)h * a->dk, a->dk);
    att_rel_row(a, t->drel + it * NB, c->dr, i, s0, n);
}

static void att_key_pair(const AttTask *t, const AttCpu *c, long it)
{
    const AttRow *a = &t->a;
    const int j = (int)(it / a->H), h = (int)(it % a->H), s0 = t->ch[2 * j], n = t->ch[2 * j + 1];
    float *FS_RESTRICT dk = t->dqkv + (long)j * a->W3 + a->hd + (long)h * a->dk, *FS_RESTRICT dv = dk + a->hd;
    for (int e = 0; e < a->dk; e++) dk[e] = dv[e] = 0.0f;
    if (s0 < 0) return;
    const float *k = a->qkv + (long)j * a->W3 + a->hd + (long)h * a->dk, *v = k + a->hd;
    att_dots(c->sr, k, c->qkvt + (long)h * a->dk * a->T + s0, a->T, a->dk, n);
    att_dots(c->dr, v, c->dct + (long)h * a->dk * a->T + s0, a->T, a->dk, n);
    const float *lh = t->lse + (long)h * a->T + s0, *Dh = t->Dv + (long)h * a->T + s0;
    for (int i = 0; i < n; i++) c->pr[i] = act_exp(c->sr[i] * a->scale + att_rel(a, s0 + i, j, h) - lh[i]);
    if (a->dropped)
        for (int i = 0; i < n; i++) c->sr[i] = att_mask(a, s0 + i, j, h);
    for (int i = 0; i < n; i++) {
        const float mk = a->dropped ? c->sr[i] : 1.0f, ds = c->pr[i] * (mk * c->dr[i] - Dh[i]);
        att_axpy(dk, ds * a->scale, a->qkv + (long)(s0 + i) * a->W3 + (long)h * a->dk, a->dk);
        att_axpy(dv, c->pr[i] * mk, t->dctx + (long)(s0 + i) * a->hd + (long)h * a->dk, a->dk);
    }
}

/* The query pass (the transposes first, which the key pass reads too). */
static void att_query_cpu(FsModel *m, const FsLayer *y, const AttRow *a, const int *ch, const float *ctx,
                          const float *dctx, const float *lse, float *Dv, float *dqkv, float *drel)
{
    const AttCpu c = att_cpu(m, y, 0);
    ops_transpose(a->qkv, a->T, a->W3, c.qkvt, a->T);
    ops_transpose(dctx, a->T, a->hd, c.dct, a->T);
    AttTask t = {.m = m, .y = y, .a = *a, .ch = ch, .ctx = ctx, .dctx = dctx, .lse = lse, .Dv = Dv, .dqkv = dqkv,
                 .drel = drel, .pair = att_query_pair};
    att_run(&t);
}

static void att_key_cpu(FsModel *m, const FsLayer *y, const AttRow *a, const int *ch, const float *dctx,
                        const float *lse, const float *Dv, float *dqkv)
{
    AttTask t = {.m = m, .y = y, .a = *a, .ch = ch, .dctx = dctx, .lse = lse, .Dv = (float *)Dv, .dqkv = dqkv,
                 .pair = att_key_pair};
    att_run(&t);
}
#endif

/* The query pass: for each (row i, head h), D_i = dctx_i . ctx_i (which
 * is sum_j p_ij dp_ij), the query's gradient sum_j ds_ij k_j / sqrt(dk)
 * and ds_ij summed by position bucket, ds_ij = p_ij (dp_ij - D_i) where
 * dp_ij = mask_ij dctx_i . v_j. A pad row's are zeros. */
FS_DEVICE FS_NOINLINE static void att_query_grads(FsModel *m, const FsLayer *y, long li)
{
    const AttRow a = att_row(m, y, li);
    const int *ch = (const int *)(m->work + y->t);
    const float *ctx = m->work + y->h + (long)y->out_pad * a.hd, *dctx = m->work + y->att_dctx + (long)y->out_pad * a.hd;
    const float *lse = m->work + y->bn_mean;
    float *Dv = m->work + y->bn_mean + (long)a.T * a.H, *dqkv = m->work + y->att_dqkv + (long)y->out_pad * a.W3;
    float *drel = m->work + y->att_drel;
#if FS_ONE_THREAD
    att_query_cpu(m, y, &a, ch, ctx, dctx, lse, Dv, dqkv, drel);
#else
    const int NB = FS_ATT_BUCKETS(&y->spec);
    FS_PARFOR(it, (long)a.T * a.H)
    {
        const int i = (int)(it / a.H), h = (int)(it % a.H), s0 = ch[2 * i], n = ch[2 * i + 1], nb = NB - 1;
        float *dq = dqkv + (long)i * a.W3 + (long)h * a.dk, *dr = drel + it * NB;
        const float *dc = dctx + (long)i * a.hd + (long)h * a.dk;
        for (int e = 0; e < a.dk; e++) dq[e] = 0.0f;
        for (int b = 0; b < NB; b++) dr[b] = 0.0f;
        const float D = att_dot(dc, ctx + (long)i * a.hd + (long)h * a.dk, a.dk);
        const float l = s0 >= 0 ? lse[(long)h * a.T + i] : 0.0f; /* (a pad row has none) */
        Dv[(long)h * a.T + i] = D;
        /* The end buckets' running sums, as att_rel_row's att_sum: from
         * the chain's first residue, and from the first at i + max_dist. */
        float lo[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, hi[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        const int jhi = i + a.M > s0 ? i + a.M : s0;
        for (int j = s0; j < s0 + n; j++) {
            const float *v = a.qkv + (long)j * a.W3 + 2 * a.hd + (long)h * a.dk;
            const float p = act_exp(att_score(&a, i, j, h) - l);
            const float ds = p * (att_dot(dc, v, a.dk) * att_mask(&a, i, j, h) - D);
            if (j - i <= -a.M)
                lo[(j - s0) & 7] += ds;
            else if (j - i >= a.M)
                hi[(j - jhi) & 7] += ds;
            else
                dr[j - i + a.M] = ds;
            att_axpy(dq, ds * a.scale, v - a.hd, a.dk);
        }
        if (s0 >= 0) {
            dr[0] = att_parts(lo);
            dr[nb] = att_parts(hi);
        }
    }
#endif
    FS_SYNC();
}

/* The key pass: for each (row j, head h), the key's gradient sum_i ds_ij
 * q_i / sqrt(dk) and the value's sum_i p_ij mask_ij dctx_i, over j's
 * chain in order. A pad row's are zeros. */
FS_DEVICE FS_NOINLINE static void att_key_grads(FsModel *m, const FsLayer *y, long li)
{
    const AttRow a = att_row(m, y, li);
    const int *ch = (const int *)(m->work + y->t);
    const float *dctx = m->work + y->att_dctx + (long)y->out_pad * a.hd, *lse = m->work + y->bn_mean;
    const float *Dv = lse + (long)a.T * a.H;
    float *dqkv = m->work + y->att_dqkv + (long)y->out_pad * a.W3;
#if FS_ONE_THREAD
    att_key_cpu(m, y, &a, ch, dctx, lse, Dv, dqkv);
#else
    FS_PARFOR(it, (long)a.T * a.H)
    {
        const int j = (int)(it / a.H), h = (int)(it % a.H), s0 = ch[2 * j], n = ch[2 * j + 1];
        float *dk = dqkv + (long)j * a.W3 + a.hd + (long)h * a.dk, *dv = dk + a.hd;
        const float *v = a.qkv + (long)j * a.W3 + 2 * a.hd + (long)h * a.dk;
        for (int e = 0; e < a.dk; e++) dk[e] = dv[e] = 0.0f;
        for (int i = s0; i < s0 + n; i++) {
            const long ih = (long)h * a.T + i;
            const float p = act_exp(att_score(&a, i, j, h) - lse[ih]), mk = att_mask(&a, i, j, h);
            const float *dc = dctx + (long)i * a.hd + (long)h * a.dk;
            const float ds = p * (mk * att_dot(dc, v, a.dk) - Dv[ih]);
            att_axpy(dk, ds * a.scale, a.qkv + (long)i * a.W3 + (long)h * a.dk, a.dk);
            att_axpy(dv, p * mk, dc, a.dk);
        }
    }
#endif
    FS_SYNC();
}

/* The position biases' gradients: each (bucket, head)'s sum over the rows in order. */
FS_DEVICE FS_NOINLINE static void att_rel_grads(FsModel *m, const FsLayer *y)
{
    const int H = y->spec.heads, NB = FS_ATT_BUCKETS(&y->spec), T = m->rows;
    const float *drel = m->work + y->att_drel;
    float *g = m->g + y->att_rel;
    FS_PARFOR(k, (long)NB * H)
    {
        const int b = (int)(k / H), h = (int)(k % H);
        float s = 0.0f;
        for (int i = 0; i < T; i++) s += drel[((long)i * H + h) * NB + b];
        g[k] += s;
    }
    FS_SYNC();
}

/* The output projection's gradients from d (the sum's, in dx), and the
 * context's: dctx = d Wo^T. */
FS_DEVICE FS_NOINLINE static void att_out_grads(FsModel *m, const FsLayer *y, const float *d, int B)
{
    const FsLayer v = att_proj(y, att_hd(y), y->out_c);
    rows_colsum(m->g + y->b2, d, B, v.out_l, v.out_pad, v.out_c);
    conv_wgrad(&v, m->g + y->w2, m->work + y->h, d, B, v.out_c);
    rows_set(m->work + y->att_dctx, 0, B, v.in_l, v.in_pad, v.in_c);
    conv_dgrad(&v, m->w + y->w2, m->scratch, d, m->work + y->att_dctx, B, v.out_c);
}

/* The input projections' gradients, and dx += dqkv W^T. */
FS_DEVICE FS_NOINLINE static void att_qkv_grads(FsModel *m, const FsLayer *y, const float *x, float *dx, int B)
{
    const FsLayer v = att_proj(y, y->in_c, 3 * att_hd(y));
    const float *dqkv = m->work + y->att_dqkv;
    rows_colsum(m->g + y->b, dqkv, B, v.out_l, v.out_pad, v.out_c);
    conv_wgrad(&v, m->g + y->w, x, dqkv, B, v.out_c);
    conv_dgrad(&v, m->w + y->w, m->scratch, dqkv, dx, B, v.out_c);
}

FS_DEVICE FS_NOINLINE void attention_backward(FsModel *m, const FsLayer *y, long li, const float *x, float *dx, int B)
{
    const FsLayer v = att_norm(y);
    layernorm_backward(m, &v, dx, B); /* dx: the sum's gradient, the residual path's share */
    att_out_grads(m, y, dx, B);
    att_query_grads(m, y, li);
    att_key_grads(m, y, li);
    att_rel_grads(m, y);
    att_qkv_grads(m, y, x, dx, B);
}
