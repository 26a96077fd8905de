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
 * count nor on what else shares the batch. Backward runs a query pass (the
 * queries' gradients, and each row's position-bias gradients by bucket)
 * and a key pass (the keys' and values' gradients), then sums the
 * position-bias gradients over the rows in order. The dropout mask is
 * drawn again in backward from its hash (layers.h), not stored.
 *
 * The projections are width-1 convolutions (conv.c) and the layer norm is
 * blocks.c's, each through a view of the layer that points at its part.
 */
#include <math.h>

#include "data/data.h"
#include "train/act.h"
#include "train/layers.h"

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

/* Score s_ij of head h, and pair (i, j)'s position bucket. */
FS_DEVICE static inline float att_score(const AttRow *a, int i, int j, int h, int *bucket)
{
    const float *q = a->qkv + (long)i * a->W3 + (long)h * a->dk, *k = a->qkv + (long)j * a->W3 + a->hd + (long)h * a->dk;
    float s = 0.0f;
    for (int e = 0; e < a->dk; e++) s += q[e] * k[e];
    int rel = j - i;
    rel = rel < -a->M ? -a->M : rel > a->M ? a->M : rel;
    *bucket = rel + a->M;
    return s * a->scale + a->rel[(long)*bucket * a->H + h];
}

/* Pair (i, j)'s dropout factor for head h: 0, or 1 / (1 - rate). */
FS_DEVICE static inline float att_mask(const AttRow *a, int i, int j, int h)
{
    if (!a->dropped) return 1.0f;
    const long e = ((long)h * a->T + i) * a->T + j;
    return dropout_uniform(a->key, (uint64_t)a->step, a->li, e) >= a->rate ? a->keep : 0.0f;
}

FS_DEVICE static inline float att_dot(const float *a, const float *b, int n)
{
    float s = 0.0f;
    for (int e = 0; e < n; e++) s += a[e] * b[e];
    return s;
}

/* Every (row, head)'s context: the log-sum-exp of its scores (one pass, the
 * running maximum rescaling the sum), then the weighted values. A pad row's
 * context is zero. */
FS_DEVICE FS_NOINLINE static void att_context(FsModel *m, const FsLayer *y, long li)
{
    const AttRow a = att_row(m, y, li);
    const int *ch = (const int *)(m->work + y->t);
    float *ctx = m->work + y->h + (long)y->out_pad * a.hd, *lse = m->work + y->bn_mean;
    FS_PARFOR(it, (long)a.T * a.H)
    {
        const int i = (int)(it / a.H), h = (int)(it % a.H), s0 = ch[2 * i], n = ch[2 * i + 1];
        float *c = ctx + (long)i * a.hd + (long)h * a.dk;
        for (int e = 0; e < a.dk; e++) c[e] = 0.0f;
        if (s0 >= 0) {
            float mx = -3.0e38f, sum = 0.0f;
            int b;
            for (int j = s0; j < s0 + n; j++) {
                const float s = att_score(&a, i, j, h, &b);
                if (s > mx) {
                    sum = sum * expf(mx - s) + 1.0f;
                    mx = s;
                } else {
                    sum += expf(s - mx);
                }
            }
            const float l = mx + logf(sum);
            lse[it] = l;
            for (int j = s0; j < s0 + n; j++) {
                const float p = expf(att_score(&a, i, j, h, &b) - l) * att_mask(&a, i, j, h);
                const float *v = a.qkv + (long)j * a.W3 + 2 * a.hd + (long)h * a.dk;
                for (int e = 0; e < a.dk; e++) c[e] += p * v[e];
            }
        }
    }
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

/* The query pass: for each (row i, head h), D_i = dctx_i . ctx_i (which
 * is sum_j p_ij dp_ij), the query's gradient sum_j ds_ij k_j / sqrt(dk)
 * and ds_ij summed by position bucket, ds_ij = p_ij (dp_ij - D_i) where
 * dp_ij = mask_ij dctx_i . v_j. A pad row's are zeros. */
FS_DEVICE FS_NOINLINE static void att_query_grads(FsModel *m, const FsLayer *y, long li)
{
    const AttRow a = att_row(m, y, li);
    const int *ch = (const int *)(m->work + y->t), NB = FS_ATT_BUCKETS(&y->spec);
    const float *ctx = m->work + y->h + (long)y->out_pad * a.hd, *dctx = m->work + y->att_dctx + (long)y->out_pad * a.hd;
    const float *lse = m->work + y->bn_mean;
    float *Dv = m->work + y->bn_mean + (long)a.T * a.H, *dqkv = m->work + y->att_dqkv + (long)y->out_pad * a.W3;
    float *drel = m->work + y->att_drel;
    FS_PARFOR(it, (long)a.T * a.H)
    {
        const int i = (int)(it / a.H), h = (int)(it % a.H), s0 = ch[2 * i], n = ch[2 * i + 1];
        float *dq = dqkv + (long)i * a.W3 + (long)h * a.dk, *dr = drel + it * NB;
        const float *dc = dctx + (long)i * a.hd + (long)h * a.dk;
        for (int e = 0; e < a.dk; e++) dq[e] = 0.0f;
        for (int b = 0; b < NB; b++) dr[b] = 0.0f;
        const float D = att_dot(dc, ctx + (long)i * a.hd + (long)h * a.dk, a.dk);
        Dv[it] = D;
        for (int j = s0; j < s0 + n; j++) {
            int b;
            const float p = expf(att_score(&a, i, j, h, &b) - lse[it]);
            const float *v = a.qkv + (long)j * a.W3 + 2 * a.hd + (long)h * a.dk, *k = v - a.hd;
            const float ds = p * (att_mask(&a, i, j, h) * att_dot(dc, v, a.dk) - D);
            dr[b] += ds;
            for (int e = 0; e < a.dk; e++) dq[e] += ds * a.scale * k[e];
        }
    }
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
    FS_PARFOR(it, (long)a.T * a.H)
    {
        const int j = (int)(it / a.H), h = (int)(it % a.H), s0 = ch[2 * j], n = ch[2 * j + 1];
        float *dk = dqkv + (long)j * a.W3 + a.hd + (long)h * a.dk, *dv = dk + a.hd;
        const float *v = a.qkv + (long)j * a.W3 + 2 * a.hd + (long)h * a.dk;
        for (int e = 0; e < a.dk; e++) dk[e] = dv[e] = 0.0f;
        for (int i = s0; i < s0 + n; i++) {
            int b;
            const long ih = (long)i * a.H + h;
            const float p = expf(att_score(&a, i, j, h, &b) - lse[ih]), mk = att_mask(&a, i, j, h);
            const float *dc = dctx + (long)i * a.hd + (long)h * a.dk, *q = a.qkv + (long)i * a.W3 + (long)h * a.dk;
            const float ds = p * (mk * att_dot(dc, v, a.dk) - Dv[ih]), pm = p * mk;
            for (int e = 0; e < a.dk; e++) {
                dk[e] += ds * a.scale * q[e];
                dv[e] += pm * dc[e];
            }
        }
    }
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
