/*
 * rnn: a chain model's recurrent layer (single source): the GRU of
 * PyTorch's torch.nn.GRU (gates r, z, n in that order;
 * n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h),
 * over each chain of the batch forward and, when bidirectional, backward,
 * the two outputs side by side.
 *
 * The input's part of every gate is one GEMM over the batch's rows (a
 * width-1 convolution, conv.c). The recurrence then walks the chains in
 * steps: at step t every chain longer than t advances one residue in each
 * direction, first the recurrent part W_hh h + b_hh of all of them, then
 * (after a barrier) their gates and new states. A chain starts from a zero
 * state and ends at a pad row, so it never sees another chain of the
 * batch. Each output is one thread's, its sums in one fixed order, so the
 * bits depend neither on the thread count nor on the batch mates.
 *
 * Backward walks the steps in reverse and carries each state's gradient
 * into the row before it in its direction: into the layer's own output
 * gradient, which nothing reads after this pass. The weights' gradients
 * are GEMMs over all rows afterwards, the recurrent ones pairing each
 * row's gate gradients with the state one row before it (after it,
 * backward), which is a pad row's zeros at a chain's first residue.
 */
#include "data/data.h"
#include "train/act.h"
#include "train/layers.h"

/* The input weights as a width-1 convolution to the gates. */
FS_DEVICE static inline FsLayer gru_input_view(const FsLayer *y)
{
    FsLayer v = *y;
    v.spec.width = 1;
    v.dil = 1;
    v.out_c = 3 * y->out_c;
    return v;
}

/* The batch's chains (runs of residues between pad rows), longest first:
 * seg[0] their count, then a start and a length each. The model's code
 * puts a pad row between chains (model.c: a GRU's pad is at least 1). */
FS_DEVICE static void gru_chains(const FsModel *m, int *seg)
{
    FS_MASTER
    {
        const int T = m->rows;
        int n = 0;
        for (int r = 0; r < T;) {
            if (m->codes[r] == FS_AA_PAD) {
                r++;
                continue;
            }
            const int s = r;
            while (r < T && m->codes[r] != FS_AA_PAD) r++;
            int j = n++;
            for (; j > 0 && seg[2 + 2 * (j - 1)] < r - s; j--) {
                seg[1 + 2 * j] = seg[1 + 2 * (j - 1)];
                seg[2 + 2 * j] = seg[2 + 2 * (j - 1)];
            }
            seg[1 + 2 * j] = s;
            seg[2 + 2 * j] = r - s;
        }
        seg[0] = n;
    }
    FS_SYNC();
}

/* The chains longer than t: a prefix of the list. */
FS_DEVICE static inline int gru_active(const int *seg, int t)
{
    int n = 0;
    while (n < seg[0] && seg[2 + 2 * n] > t) n++;
    return n;
}

/* Pair p (chain p / D, direction p % D) at step t: its row, and the row of
 * the state before it (-1 at the chain's first step). */
FS_DEVICE static inline int gru_row(const int *seg, long p, int D, int t, int *prev)
{
    const int s = (int)(p / D), start = seg[1 + 2 * s], len = seg[2 + 2 * s];
    const int row = p % D == 0 ? start + t : start + len - 1 - t;
    *prev = t == 0 ? -1 : p % D == 0 ? row - 1 : row + 1;
    return row;
}

FS_DEVICE static inline float gru_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* Step t's recurrent parts, gh = b_hh + h_prev W_hh, for its n pairs: one
 * output each a thread's, its sum over the state in order (the plain CPU
 * build walks a pair's row of weights at a time, as vectors: the same sums). */
FS_DEVICE FS_NOINLINE static void gru_hidden(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, GC = 3 * OC, G = 3 * U;
    const float *out = m->work + y->a, *W = m->w + y->w2, *bias = m->w + y->b2;
    float *gh = m->work + y->h;
#if FS_ONE_THREAD
    for (long p = 0; p < (long)n * D; p++) {
        int prev;
        const int row = gru_row(seg, p, D, t, &prev), dir = (int)(p % D);
        float *FS_RESTRICT o = gh + ((long)P + row) * GC + (long)dir * G;
        const float *b = bias + (long)dir * G;
        for (int j = 0; j < G; j++) o[j] = b[j];
        if (prev < 0) continue;
        const float *h = out + ((long)P + prev) * OC + (long)dir * U;
        for (int k = 0; k < U; k++) {
            const float hk = h[k];
            const float *FS_RESTRICT w = W + ((long)dir * U + k) * G;
            for (int j = 0; j < G; j++) o[j] = FS_FMA(hk, w[j], o[j]);
        }
    }
#else
    FS_PARFOR(it, (long)n * D * G)
    {
        const long p = it / G;
        const int j = (int)(it % G), dir = (int)(p % D);
        int prev;
        const int row = gru_row(seg, p, D, t, &prev);
        float acc = bias[(long)dir * G + j];
        if (prev >= 0) {
            const float *h = out + ((long)P + prev) * OC + (long)dir * U;
            const float *w = W + (long)dir * U * G + j;
            for (int k = 0; k < U; k++) acc = FS_FMA(h[k], w[(long)k * G], acc);
        }
        gh[((long)P + row) * GC + (long)dir * G + j] = acc;
    }
#endif
    FS_SYNC();
}

/* Step t's gates and states: the gates' slots of the input's parts take
 * r, z and n (backward reads them). */
FS_DEVICE FS_NOINLINE static void gru_states(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, GC = 3 * OC, G = 3 * U;
    float *out = m->work + y->a, *g = m->work + y->z;
    const float *gh = m->work + y->h;
    FS_PARFOR(it, (long)n * D * U)
    {
        const long p = it / U;
        const int j = (int)(it % U), dir = (int)(p % D);
        int prev;
        const int row = gru_row(seg, p, D, t, &prev);
        float *gi = g + ((long)P + row) * GC + (long)dir * G;
        const float *hh = gh + ((long)P + row) * GC + (long)dir * G;
        const float r = gru_sigmoid(gi[j] + hh[j]), z = gru_sigmoid(gi[U + j] + hh[U + j]);
        const float nn = tanhf(gi[2 * U + j] + r * hh[2 * U + j]);
        const float hp = prev >= 0 ? out[((long)P + prev) * OC + (long)dir * U + j] : 0.0f;
        gi[j] = r;
        gi[U + j] = z;
        gi[2 * U + j] = nn;
        out[((long)P + row) * OC + (long)dir * U + j] = (1.0f - z) * nn + z * hp;
    }
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void gru_forward(FsModel *m, const FsLayer *y, const float *x, int B)
{
    const FsLayer v = gru_input_view(y);
    int *seg = (int *)(m->work + y->t);
    rows_set(m->work + y->z, m->w + y->b, B, y->out_l, y->out_pad, v.out_c);
    conv_gemm(&v, m->w + y->w, x, m->work + y->z, B, v.out_c);
    gru_chains(m, seg);
    const int steps = seg[0] ? seg[2] : 0;
    for (int t = 0; t < steps; t++) {
        const int n = gru_active(seg, t);
        gru_hidden(m, y, seg, t, n);
        gru_states(m, y, seg, t, n);
    }
}

/* Step t's gate gradients from its states' (in d): the input's parts'
 * into the gates' slots, the recurrent parts' into gh's, and the direct
 * share z * dh of the state before. */
FS_DEVICE FS_NOINLINE static void gru_gate_grads(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, GC = 3 * OC, G = 3 * U;
    const float *out = m->work + y->a;
    float *g = m->work + y->z, *gh = m->work + y->h, *d = m->work + y->d;
    FS_PARFOR(it, (long)n * D * U)
    {
        const long p = it / U;
        const int j = (int)(it % U), dir = (int)(p % D);
        int prev;
        const int row = gru_row(seg, p, D, t, &prev);
        float *gi = g + ((long)P + row) * GC + (long)dir * G, *hh = gh + ((long)P + row) * GC + (long)dir * G;
        const float r = gi[j], z = gi[U + j], nn = gi[2 * U + j], ghn = hh[2 * U + j];
        const float hp = prev >= 0 ? out[((long)P + prev) * OC + (long)dir * U + j] : 0.0f;
        const float dh = d[((long)P + row) * OC + (long)dir * U + j];
        const float dn = dh * (1.0f - z) * (1.0f - nn * nn), dz = dh * (hp - nn) * z * (1.0f - z);
        const float dr = dn * ghn * r * (1.0f - r);
        gi[j] = hh[j] = dr;
        gi[U + j] = hh[U + j] = dz;
        gi[2 * U + j] = dn;
        hh[2 * U + j] = dn * r;
        if (prev >= 0) {
            float *dp = d + ((long)P + prev) * OC + (long)dir * U + j;
            *dp = FS_FMA(dh, z, *dp);
        }
    }
    FS_SYNC();
}

/* Step t's carry through the recurrent weights: the state before's
 * gradient += W_hh dgh, each sum over the gates in order (wt: W_hh
 * transposed, [D][3U][U]). Step 0 has no state before. */
FS_DEVICE FS_NOINLINE static void gru_carry(FsModel *m, const FsLayer *y, const float *wt, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, GC = 3 * OC, G = 3 * U;
    const float *gh = m->work + y->h;
    float *d = m->work + y->d;
    if (t == 0) return;
#if FS_ONE_THREAD
    for (long p = 0; p < (long)n * D; p++) {
        int prev;
        const int row = gru_row(seg, p, D, t, &prev), dir = (int)(p % D);
        float *FS_RESTRICT dp = d + ((long)P + prev) * OC + (long)dir * U;
        const float *dg = gh + ((long)P + row) * GC + (long)dir * G;
        for (int j = 0; j < G; j++) {
            const float a = dg[j];
            const float *FS_RESTRICT w = wt + ((long)dir * G + j) * U;
            for (int k = 0; k < U; k++) dp[k] = FS_FMA(w[k], a, dp[k]);
        }
    }
#else
    FS_PARFOR(it, (long)n * D * U)
    {
        const long p = it / U;
        const int k = (int)(it % U), dir = (int)(p % D);
        int prev;
        const int row = gru_row(seg, p, D, t, &prev);
        const float *dg = gh + ((long)P + row) * GC + (long)dir * G, *w = wt + (long)dir * G * U + k;
        float *dp = d + ((long)P + prev) * OC + (long)dir * U + k;
        float acc = *dp;
        for (int j = 0; j < G; j++) acc = FS_FMA(w[(long)j * U], dg[j], acc);
        *dp = acc;
    }
#endif
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void gru_backward(FsModel *m, const FsLayer *y, const float *x, float *dx, int B)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, G = 3 * U, L = y->out_l;
    FsLayer v = gru_input_view(y);
    FS_IN_MEMORY(&v); /* read where used: kept in registers across the calls below it spilled (nvcc) */
    const int *seg = (const int *)(m->work + y->t); /* the forward pass's */
    float *g = m->work + y->z, *gh = m->work + y->h;
    const float *out = m->work + y->a;
    for (int dir = 0; dir < D; dir++)
        ops_transpose(m->w + y->w2 + (long)dir * U * G, U, G, m->scratch + (long)dir * G * U, U);
    FS_SYNC();
    for (int t = (seg[0] ? seg[2] : 0) - 1; t >= 0; t--) {
        const int n = gru_active(seg, t);
        gru_gate_grads(m, y, seg, t, n);
        gru_carry(m, y, m->scratch, seg, t, n);
    }
    /* Pad rows held the input's bias and stale recurrent parts: no gradient there. */
    chain_mask_rows(m, g, v.out_c);
    chain_mask_rows(m, gh, v.out_c);
    FS_SYNC();
    rows_colsum(m->g + y->b, g, B, L, P, v.out_c);
    rows_colsum(m->g + y->b2, gh, B, L, P, v.out_c);
    conv_wgrad(&v, m->g + y->w, x, g, B, v.out_c);
    for (int dir = 0; dir < D; dir++)
        ops_gemm(U, G, L, out + ((long)P + (dir ? 1 : -1)) * OC + (long)dir * U, st_plain(1), st_rows(L, P, OC),
                 gh + (long)P * v.out_c + (long)dir * G, st_rows(L, P, v.out_c), m->g + y->w2 + (long)dir * U * G,
                 st_plain(G), 1);
    rows_set(dx, 0, B, y->in_l, y->in_pad, y->in_c);
    conv_dgrad(&v, m->w + y->w, m->scratch, g, dx, B, v.out_c);
}
