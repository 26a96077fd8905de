/*
 * blocks: batch norm, layer norm, dropout and highway layers (single source).
 */
#include <math.h>

#include "train/act.h"
#include "train/layers.h"

FS_DEVICE static inline long row_off(long r, int L, int P, int C)
{
    return ((r / L) * (L + 2 * P) + P + r % L) * (long)C;
}

/* ---------------------------------------------------------------------- */
/* Batch norm: statistics per channel over the batch and the positions.    */
/* A chain batch's pad rows are no positions: its statistics skip them     */
/* (their outputs are zeroed after the layer, their gradients are zero).   */

FS_DEVICE static inline int bn_skips(const FsModel *m, long r)
{
    return m->net->chain && m->codes[r] == FS_AA_PAD;
}

/* The positions the statistics count: every row, or a chain batch's residues. */
FS_DEVICE static inline long bn_count(const FsModel *m, long rows)
{
    long n = rows;
    if (m->net->chain)
        for (long r = 0; r < rows; r++) n -= m->codes[r] == FS_AA_PAD;
    return n > 0 ? n : 1;
}

/* Channel c's sums over the rows, in order: of d (beta's gradient) and of
 * d * x-hat (gamma's); batch norm's and layer norm's alike. */
FS_DEVICE static inline void channel_sums(const float *d, const float *xhat, long rows, int L, int P, int C, long c,
                                          float *sd, float *sdx)
{
    float a = 0.0f, b = 0.0f;
    for (long r = 0; r < rows; r++) {
        long o = row_off(r, L, P, C) + c;
        a += d[o];
        b += d[o] * xhat[o];
    }
    *sd = a;
    *sdx = b;
}

FS_DEVICE FS_NOINLINE void batchnorm_forward(FsModel *m, const FsLayer *y, const float *x, int B, int train)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const long rows = (long)B * L, N = bn_count(m, rows);
    const float eps = y->spec.eps, mom = y->spec.momentum;
    float *out = m->work + y->a, *xhat = m->work + y->z;
    float *mean = m->work + y->bn_mean, *istd = m->work + y->bn_istd;
    const float *gamma = m->w + y->w, *beta = m->w + y->b;
    float *rmean = m->w + y->s_mean, *rvar = m->w + y->s_var;
    FS_PARFOR(c, C)
    {
        float mu, var;
        if (train) {
            double s = 0.0, s2 = 0.0;
            for (long r = 0; r < rows; r++)
                if (!bn_skips(m, r)) s += x[row_off(r, L, P, C) + c];
            mu = (float)(s / (double)N);
            for (long r = 0; r < rows; r++) {
                if (bn_skips(m, r)) continue;
                double dv = x[row_off(r, L, P, C) + c] - mu;
                s2 += dv * dv;
            }
            var = (float)(s2 / (double)N);
            rmean[c] = mom * rmean[c] + (1.0f - mom) * mu;
            rvar[c] = mom * rvar[c] + (1.0f - mom) * var;
        } else {
            mu = rmean[c];
            var = rvar[c];
        }
        float is = 1.0f / sqrtf(var + eps);
        mean[c] = mu;
        istd[c] = is;
        for (long r = 0; r < rows; r++) {
            long o = row_off(r, L, P, C) + c;
            float xh = (x[o] - mu) * is;
            xhat[o] = xh;
            out[o] = gamma[c] * xh + beta[c];
        }
    }
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void batchnorm_backward(FsModel *m, const FsLayer *y, float *dx, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const long rows = (long)B * L, N = bn_count(m, rows);
    const float *d = m->work + y->d, *xhat = m->work + y->z, *istd = m->work + y->bn_istd;
    const float *gamma = m->w + y->w;
    float *ggamma = m->g + y->w, *gbeta = m->g + y->b;
    FS_PARFOR(c, C)
    {
        float sd, sdx;
        channel_sums(d, xhat, rows, L, P, C, c, &sd, &sdx);
        ggamma[c] += sdx;
        gbeta[c] += sd;
        float k = gamma[c] * istd[c] / (float)N;
        for (long r = 0; r < rows; r++) {
            long o = row_off(r, L, P, C) + c;
            dx[o] = k * ((float)N * d[o] - sd - xhat[o] * sdx);
        }
    }
    FS_SYNC();
}

/* ---------------------------------------------------------------------- */
/* Layer norm: statistics over each position's channels (Keras's           */
/* LayerNormalization, PyTorch's LayerNorm over the last dimension), the   */
/* same at training and inference. A chain batch's pad rows come out as    */
/* beta and are zeroed after the layer, their gradients are zero.          */

FS_DEVICE FS_NOINLINE void layernorm_forward(FsModel *m, const FsLayer *y, const float *x, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const float eps = y->spec.eps;
    float *out = m->work + y->a, *xhat = m->work + y->z, *istd = m->work + y->bn_istd;
    const float *gamma = m->w + y->w, *beta = m->w + y->b;
    FS_PARFOR(r, (long)B * L)
    {
        const long o = row_off(r, L, P, C);
        double s = 0.0, s2 = 0.0;
        for (int c = 0; c < C; c++) s += x[o + c];
        const float mu = (float)(s / (double)C);
        for (int c = 0; c < C; c++) {
            double dv = x[o + c] - mu;
            s2 += dv * dv;
        }
        const float is = 1.0f / sqrtf((float)(s2 / (double)C) + eps);
        istd[r] = is;
        for (int c = 0; c < C; c++) {
            float xh = (x[o + c] - mu) * is;
            xhat[o + c] = xh;
            out[o + c] = gamma[c] * xh + beta[c];
        }
    }
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void layernorm_backward(FsModel *m, const FsLayer *y, float *dx, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const long rows = (long)B * L;
    const float *d = m->work + y->d, *xhat = m->work + y->z, *istd = m->work + y->bn_istd;
    const float *gamma = m->w + y->w;
    float *ggamma = m->g + y->w, *gbeta = m->g + y->b;
    /* gamma's and beta's gradients: each channel's sum over the positions, in order. */
    FS_PARFOR(c, C)
    {
        float sd, sdx;
        channel_sums(d, xhat, rows, L, P, C, c, &sd, &sdx);
        ggamma[c] += sdx;
        gbeta[c] += sd;
    }
    /* The input's: each position's from its own channels. */
    FS_PARFOR(r, rows)
    {
        const long o = row_off(r, L, P, C);
        float sg = 0.0f, sgx = 0.0f;
        for (int c = 0; c < C; c++) {
            float g = d[o + c] * gamma[c];
            sg += g;
            sgx += g * xhat[o + c];
        }
        const float k = istd[r] / (float)C;
        for (int c = 0; c < C; c++) dx[o + c] = k * ((float)C * (d[o + c] * gamma[c]) - sg - xhat[o + c] * sgx);
    }
    FS_SYNC();
}

/* ---------------------------------------------------------------------- */
/* Dropout: the mask is a hash (dropout_uniform, layers.h), so threads    */
/* draw it in parallel and a repeated forward pass sees the same.          */

FS_DEVICE FS_NOINLINE void dropout_forward(FsModel *m, const FsLayer *y, long li, const float *x, int B, int train)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const float rate = y->spec.rate, keep = 1.0f / (1.0f - rate);
    float *out = m->work + y->a, *mask = m->work + y->z;
    FS_PARFOR(r, (long)B * L)
    {
        long o = row_off(r, L, P, C);
        for (int c = 0; c < C; c++) {
            float k = 1.0f;
            if (train && rate > 0.0f)
                k = dropout_uniform(m->drop_key, (uint64_t)m->step, li, r * C + c) >= rate ? keep : 0.0f;
            mask[o + c] = k;
            out[o + c] = x[o + c] * k;
        }
    }
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void dropout_backward(FsModel *m, const FsLayer *y, float *dx, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const float *d = m->work + y->d, *mask = m->work + y->z;
    FS_PARFOR(r, (long)B * L)
    {
        long o = row_off(r, L, P, C);
        for (int c = 0; c < C; c++) dx[o + c] = d[o + c] * mask[o + c];
    }
    FS_SYNC();
}

/* ---------------------------------------------------------------------- */
/* Highway (Srivastava et al. 2015): y = T*H + (1-T)*x with H = act(conv(x)) */
/* and T = sigmoid(conv(x)); both convolutions keep the channel count.     */

FS_DEVICE FS_NOINLINE void highway_forward(FsModel *m, const FsLayer *y, const float *x, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    float *hv = m->work + y->h, *tv = m->work + y->t, *out = m->work + y->a;
    rows_set(hv, m->w + y->b, B, L, P, C);
    conv_gemm(y, m->w + y->w, x, hv, B, C);
    act_forward(y->spec.act, y->spec.act_param, hv, m->work + y->z, B, L, P, C);
    rows_set(tv, m->w + y->b2, B, L, P, C);
    conv_gemm(y, m->w + y->w2, x, tv, B, C);
    FS_PARFOR(r, (long)B * L)
    {
        long o = row_off(r, L, P, C);
        for (int c = 0; c < C; c++) {
            float t = 1.0f / (1.0f + act_exp(-tv[o + c]));
            tv[o + c] = t;
            out[o + c] = t * hv[o + c] + (1.0f - t) * x[o + c];
        }
    }
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void highway_backward(FsModel *m, const FsLayer *y, const float *x, float *dx, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const float *d = m->work + y->d, *aux = m->work + y->z;
    float *hv = m->work + y->h, *tv = m->work + y->t;
    const FsAct act = y->spec.act;
    const float ap = y->spec.act_param;
    /* Turn h and t into the gradients of their pre-activations in place;
     * dx starts as the carry path's share. */
    FS_PARFOR(r, (long)B * L)
    {
        long o = row_off(r, L, P, C);
        for (int c = 0; c < C; c++) {
            float g = d[o + c], t = tv[o + c], h = hv[o + c];
            dx[o + c] = g * (1.0f - t);
            hv[o + c] = g * t * act_grad(act, ap, h, act == FS_ACT_SWISH ? aux[o + c] : 0.0f);
            tv[o + c] = g * (h - x[o + c]) * t * (1.0f - t);
        }
    }
    FS_SYNC();
    rows_colsum(m->g + y->b, hv, B, L, P, C);
    rows_colsum(m->g + y->b2, tv, B, L, P, C);
    conv_wgrad(y, m->g + y->w, x, hv, B, C);
    conv_wgrad(y, m->g + y->w2, x, tv, B, C);
    conv_dgrad(y, m->w + y->w, m->scratch, hv, dx, B, C);
    conv_dgrad(y, m->w + y->w2, m->scratch + y->n_w, tv, dx, B, C);
}

/* ---------------------------------------------------------------------- */
/* Residual add: out = x + S(a_src), S the identity or a 1x1 projection    */
/* W [C_src][C] (no bias) where the block changes the width.               */

/* The projection as a width-1 convolution from the block input's shape. */
FS_DEVICE static inline FsLayer add_projection(const FsModel *m, const FsLayer *y)
{
    const FsLayer *s = &m->net->layer[y->src];
    FsLayer p = *y;
    p.spec.width = 1;
    p.dil = 1;
    p.in_l = y->out_l;
    p.in_c = s->out_c;
    p.in_pad = s->out_pad;
    return p;
}

FS_DEVICE FS_NOINLINE void add_forward(FsModel *m, const FsLayer *y, const float *x, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const float *skip = m->work + m->net->layer[y->src].a;
    float *out = m->work + y->a;
    const int project = y->w >= 0;
    FS_PARFOR(r, (long)B * L)
    {
        long o = row_off(r, L, P, C);
        for (int c = 0; c < C; c++) out[o + c] = project ? x[o + c] : x[o + c] + skip[o + c];
    }
    FS_SYNC();
    if (project) {
        FsLayer p = add_projection(m, y);
        conv_gemm(&p, m->w + y->w, skip, out, B, C);
    }
}

FS_DEVICE FS_NOINLINE void add_backward(FsModel *m, const FsLayer *y, float *dx, int B)
{
    const int L = y->out_l, P = y->out_pad, C = y->out_c;
    const float *d = m->work + y->d;
    FS_PARFOR(r, (long)B * L)
    {
        long o = row_off(r, L, P, C);
        for (int c = 0; c < C; c++) dx[o + c] = d[o + c];
    }
    FS_SYNC();
    if (y->w >= 0) {
        FsLayer p = add_projection(m, y);
        conv_wgrad(&p, m->g + y->w, m->work + m->net->layer[y->src].a, d, B, C);
        rows_set(m->work + y->h, 0, B, L, p.in_pad, p.in_c);
        conv_dgrad(&p, m->w + y->w, m->scratch, d, m->work + y->h, B, C);
    }
}

FS_DEVICE FS_NOINLINE void add_skips(FsModel *m, int src, int B)
{
    for (int j = src + 2; j < m->net->n; j++) {
        const FsLayer *y = &m->net->layer[j];
        if (y->spec.kind != FS_LAYER_ADD || y->src != src) continue;
        const FsLayer *s = &m->net->layer[src];
        const int L = m->net->chain ? m->rows : s->out_l, P = s->out_pad, C = s->out_c;
        const float *g = m->work + (y->w >= 0 ? y->h : y->d);
        float *ds = m->work + s->d;
        FS_PARFOR(r, (long)B * L)
        {
            long o = row_off(r, L, P, C);
            for (int c = 0; c < C; c++) ds[o + c] += g[o + c];
        }
        FS_SYNC();
    }
}
