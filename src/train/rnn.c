/*
 * rnn: a chain model's recurrent layers (single source): the GRU of
 * PyTorch's torch.nn.GRU (gates r, z, n in that order;
 * n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h)
 * and the LSTM of torch.nn.LSTM (gates i, f, g, o; c' = f * c + i * g,
 * h' = o * tanh(c')), over each chain of the batch forward and, when
 * bidirectional, backward, the two outputs side by side. One unit's
 * arithmetic is in rnn_cell.h; all else here is the same for both.
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
 *
 * An LSTM's cell states need no tensor of their own: once a step has
 * added a row's recurrent parts into its gates, that row's recurrent
 * slots hold c and tanh(c), and a third slot the cell gradient carried
 * back from the row after it (lstm_put, lstm_grad_put).
 */
#include "data/data.h"
#include "train/layers.h"
#include "train/rnn_cell.h"

/* A direction's gates, G x units wide (FS_RNN_GATES). */
FS_DEVICE static inline int rnn_g(const FsLayer *y) { return FS_RNN_GATES(y->spec.kind) * y->spec.units; }

/* The input weights as a width-1 convolution to the gates. */
FS_DEVICE static inline FsLayer rnn_input_view(const FsLayer *y)
{
    FsLayer v = *y;
    v.spec.width = 1;
    v.dil = 1;
    v.out_c = FS_RNN_GATES(y->spec.kind) * y->out_c;
    return v;
}

/* The batch's chains (runs of residues between pad rows), longest first:
 * seg[0] their count, then a start and a length each. The model's code
 * puts a pad row between chains (model.c: a GRU's pad is at least 1). */
FS_DEVICE static void rnn_chains(const FsModel *m, int *seg)
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
FS_DEVICE static inline int rnn_active(const int *seg, int t)
{
    int n = 0;
    while (n < seg[0] && seg[2 + 2 * n] > t) n++;
    return n;
}

/* Pair p (chain p / D, direction p % D) at step t: its row, and the row of
 * the state before it (-1 at the chain's first step). */
FS_DEVICE static inline int rnn_row(const int *seg, long p, int D, int t, int *prev)
{
    const int s = (int)(p / D), start = seg[1 + 2 * s], len = seg[2 + 2 * s];
    const int row = p % D == 0 ? start + t : start + len - 1 - t;
    *prev = t == 0 ? -1 : p % D == 0 ? row - 1 : row + 1;
    return row;
}

/* Item `it` of a step's loop over its pairs' `width` columns each: its
 * column *j, direction *dir and row before (*prev, as rnn_row); its row
 * returned. */
FS_DEVICE static inline int rnn_item(const int *seg, long it, int width, int D, int t, int *j, int *dir, int *prev)
{
    const long p = it / width;
    *j = (int)(it % width);
    *dir = (int)(p % D);
    return rnn_row(seg, p, D, t, prev);
}

/* The gathered rows of step t's n pairs (rnn_product): A, their inputs
 * [D][nmax][3U], C, their outputs [D][nmax][3U], each direction's rows
 * together; nmax = rows / 2 + 1, the most chains a batch holds. */
FS_DEVICE static inline float *rnn_gathered(const FsModel *m, const FsLayer *y, int which)
{
    const long nmax = m->rows / 2 + 1;
    return m->work + y->bn_mean + (long)which * (1 + y->spec.bidir) * nmax * rnn_g(y);
}

/* C += A W for direction dir's n gathered rows: the recurrent products of
 * a step over all its chains at once (a weight row read once for all of
 * them), in the GEMM's fixed sums. Forward (back 0): A the states before
 * (U wide), W W_hh; backward: A the gate gradients (3U wide), W W_hh
 * transposed (in the scratch, [D][3U][U]). A call of its own, the GEMM
 * its last act: nothing of the step is held across it (device.h,
 * FS_NOINLINE). */
FS_DEVICE FS_NOINLINE static void rnn_product(FsModel *m, const FsLayer *y, int n, int dir, int back)
{
    const int U = y->spec.units, G = rnn_g(y), K = back ? G : U, N = back ? U : G;
    const long nmax = m->rows / 2 + 1;
    const float *W = back ? m->scratch + (long)dir * G * U : m->w + y->w2 + (long)dir * U * G;
    ops_gemm(n, N, K, rnn_gathered(m, y, 0) + dir * nmax * G, st_plain(G), st_plain(1), W, st_plain(N),
             rnn_gathered(m, y, 1) + dir * nmax * G, st_plain(G), 1);
}

/* Moves step t's rows between a tensor and gathered area `area` (0 A,
 * 1 C), to the tensor or from it: each of the n pairs' row (prev 0) or the
 * row of its state before (prev 1; t > 0), `width` floats from column
 * dir x width, rows `stride` floats apart. */
FS_DEVICE FS_NOINLINE static void rnn_move(FsModel *m, const FsLayer *y, const int *seg, int t, int n, int prev,
                                           float *tensor, long stride, int width, int area, int to_tensor)
{
    const int D = 1 + y->spec.bidir, P = y->out_pad, G = rnn_g(y);
    const long nmax = m->rows / 2 + 1;
    float *X = rnn_gathered(m, y, area);
#if FS_ONE_THREAD
    /* A pair's row at a time (no division per element). */
    for (long p = 0; p < (long)n * D; p++) {
        int before;
        const int row = rnn_row(seg, p, D, t, &before), dir = (int)(p % D);
        float *FS_RESTRICT r = tensor + ((long)P + (prev ? before : row)) * stride + (long)dir * width;
        float *FS_RESTRICT x = X + dir * nmax * G + p / D * G;
        if (to_tensor)
            for (int j = 0; j < width; j++) r[j] = x[j];
        else
            for (int j = 0; j < width; j++) x[j] = r[j];
    }
#else
    FS_PARFOR(it, (long)n * D * width)
    {
        const long p = it / width;
        const int j = (int)(it % width), dir = (int)(p % D);
        int before;
        const int row = rnn_row(seg, p, D, t, &before);
        float *r = tensor + ((long)P + (prev ? before : row)) * stride + (long)dir * width + j;
        float *x = X + dir * nmax * G + p / D * G + j;
        if (to_tensor)
            *r = *x;
        else
            *x = *r;
    }
#endif
    FS_SYNC();
}

/* Step t's recurrent parts, gh = b_hh + h_prev W_hh, for its n pairs: C
 * set to the bias, the states before gathered (none at step 0: the bias
 * alone), the products (rnn_product), C put in the pairs' rows. */
FS_DEVICE FS_NOINLINE static void rnn_hidden(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int D = 1 + y->spec.bidir, G = rnn_g(y);
    const long nmax = m->rows / 2 + 1;
    const float *bias = m->w + y->b2;
    float *C = rnn_gathered(m, y, 1);
#if FS_ONE_THREAD
    /* A pair's row at a time: a division per element here cost BiGRU(128)'s
     * predict a third of its speed (docs/benchmarks.md). */
    for (long p = 0; p < (long)n * D; p++) {
        const long dir = p % D;
        float *FS_RESTRICT c = C + dir * nmax * G + p / D * G;
        const float *FS_RESTRICT b = bias + dir * G;
        for (int j = 0; j < G; j++) c[j] = b[j];
    }
#else
    FS_PARFOR(it, (long)n * D * G)
    {
        const long p = it / G, dir = p % D;
        C[dir * nmax * G + p / D * G + it % G] = bias[dir * G + it % G];
    }
#endif
    FS_SYNC();
    if (t > 0) {
        rnn_move(m, y, seg, t, n, 1, m->work + y->a, y->out_c, y->spec.units, 0, 0);
        for (int dir = 0; dir < D; dir++) rnn_product(m, y, n, dir, 0);
    }
    rnn_move(m, y, seg, t, n, 0, m->work + y->h, (long)D * G, G, 1, 1);
}

/* Step t's gates and states: the gates' slots of the input's parts take
 * r, z and n (backward reads them). */
FS_DEVICE FS_NOINLINE static void gru_states(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, GC = 3 * OC, G = 3 * U;
    float *out = m->work + y->a, *g = m->work + y->z;
    const float *gh = m->work + y->h;
#if FS_ONE_THREAD
    for (long p = 0; p < (long)n * D; p++) {
        int prev;
        const int row = rnn_row(seg, p, D, t, &prev), dir = (int)(p % D);
        float *FS_RESTRICT gr = g + ((long)P + row) * GC + (long)dir * G, *FS_RESTRICT gz = gr + U,
                          *FS_RESTRICT gn = gr + 2 * U;
        const float *FS_RESTRICT hh = gh + ((long)P + row) * GC + (long)dir * G;
        float *FS_RESTRICT o = out + ((long)P + row) * OC + (long)dir * U;
        int j0 = 0;
#ifdef FS_SIMD
        j0 = gru_units_lanes(gr, gz, gn, hh, prev < 0 ? NULL : out + ((long)P + prev) * OC + (long)dir * U, o, U);
#endif
        if (prev < 0) {
            for (int j = j0; j < U; j++)
                o[j] = gru_unit(gr[j], gz[j], gn[j], hh[j], hh[U + j], hh[2 * U + j], 0.0f, &gr[j], &gz[j], &gn[j]);
        } else {
            const float *FS_RESTRICT hp = out + ((long)P + prev) * OC + (long)dir * U;
            for (int j = j0; j < U; j++)
                o[j] = gru_unit(gr[j], gz[j], gn[j], hh[j], hh[U + j], hh[2 * U + j], hp[j], &gr[j], &gz[j], &gn[j]);
        }
    }
#else
    FS_PARFOR(it, (long)n * D * U)
    {
        int j, dir, prev;
        const int row = rnn_item(seg, it, U, D, t, &j, &dir, &prev);
        float *gi = g + ((long)P + row) * GC + (long)dir * G;
        const float *hh = gh + ((long)P + row) * GC + (long)dir * G;
        const float hp = prev >= 0 ? out[((long)P + prev) * OC + (long)dir * U + j] : 0.0f;
        out[((long)P + row) * OC + (long)dir * U + j] = gru_unit(gi[j], gi[U + j], gi[2 * U + j], hh[j], hh[U + j],
                                                                 hh[2 * U + j], hp, &gi[j], &gi[U + j], &gi[2 * U + j]);
    }
#endif
    FS_SYNC();
}

/* One LSTM unit j of a pair's row: its gates' slots (gi, the input's
 * parts) take i, f, g, o, its recurrent parts' (hh) the cell state c,
 * tanh(c) and a zero, the cell gradient's carry for backward
 * (lstm_gate_grads); the state returned. */
FS_DEVICE static inline float lstm_put(float *FS_RESTRICT gi, float *FS_RESTRICT hh, float cp, int U, int j)
{
    float i, f, g, o, c, tc;
    const float h = lstm_unit(gi[j], gi[U + j], gi[2 * U + j], gi[3 * U + j], hh[j], hh[U + j], hh[2 * U + j],
                              hh[3 * U + j], cp, &i, &f, &g, &o, &c, &tc);
    gi[j] = i;
    gi[U + j] = f;
    gi[2 * U + j] = g;
    gi[3 * U + j] = o;
    hh[j] = c;
    hh[U + j] = tc;
    hh[2 * U + j] = 0.0f;
    return h;
}

/* Step t's LSTM gates and states, the cell state before read from the
 * row before's recurrent slots (lstm_put). */
FS_DEVICE FS_NOINLINE static void lstm_states(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, G = 4 * U, GC = D * G;
    float *out = m->work + y->a, *g = m->work + y->z, *gh = m->work + y->h;
#if FS_ONE_THREAD
    for (long p = 0; p < (long)n * D; p++) {
        int prev;
        const int row = rnn_row(seg, p, D, t, &prev), dir = (int)(p % D);
        float *FS_RESTRICT gi = g + ((long)P + row) * GC + (long)dir * G;
        float *FS_RESTRICT hh = gh + ((long)P + row) * GC + (long)dir * G;
        float *FS_RESTRICT o = out + ((long)P + row) * OC + (long)dir * U;
        const float *FS_RESTRICT cp = prev < 0 ? NULL : gh + ((long)P + prev) * GC + (long)dir * G;
        int j0 = 0;
#ifdef FS_SIMD
        j0 = lstm_units_lanes(gi, hh, cp, o, U);
#endif
        if (!cp) {
            for (int j = j0; j < U; j++) o[j] = lstm_put(gi, hh, 0.0f, U, j);
        } else {
            for (int j = j0; j < U; j++) o[j] = lstm_put(gi, hh, cp[j], U, j);
        }
    }
#else
    FS_PARFOR(it, (long)n * D * U)
    {
        int j, dir, prev;
        const int row = rnn_item(seg, it, U, D, t, &j, &dir, &prev);
        const float cp = prev >= 0 ? gh[((long)P + prev) * GC + (long)dir * G + j] : 0.0f;
        out[((long)P + row) * OC + (long)dir * U + j] =
            lstm_put(g + ((long)P + row) * GC + (long)dir * G, gh + ((long)P + row) * GC + (long)dir * G, cp, U, j);
    }
#endif
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void rnn_forward(FsModel *m, const FsLayer *y, const float *x, int B)
{
    const FsLayer v = rnn_input_view(y);
    int *seg = (int *)(m->work + y->t);
    rows_set(m->work + y->z, m->w + y->b, B, y->out_l, y->out_pad, v.out_c);
    conv_gemm(&v, m->w + y->w, x, m->work + y->z, B, v.out_c);
    rnn_chains(m, seg);
    const int steps = seg[0] ? seg[2] : 0;
    for (int t = 0; t < steps; t++) {
        const int n = rnn_active(seg, t);
        rnn_hidden(m, y, seg, t, n);
        if (y->spec.kind == FS_LAYER_LSTM)
            lstm_states(m, y, seg, t, n);
        else
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
#if FS_ONE_THREAD
    for (long p = 0; p < (long)n * D; p++) {
        int prev;
        const int row = rnn_row(seg, p, D, t, &prev), dir = (int)(p % D);
        float *FS_RESTRICT gr = g + ((long)P + row) * GC + (long)dir * G, *FS_RESTRICT gz = gr + U,
                          *FS_RESTRICT gn = gr + 2 * U;
        float *FS_RESTRICT hr = gh + ((long)P + row) * GC + (long)dir * G, *FS_RESTRICT hz = hr + U,
                          *FS_RESTRICT hn = hr + 2 * U;
        const float *FS_RESTRICT dh = d + ((long)P + row) * OC + (long)dir * U;
        const float *FS_RESTRICT hp = prev >= 0 ? out + ((long)P + prev) * OC + (long)dir * U : NULL;
        float *FS_RESTRICT dp = prev >= 0 ? d + ((long)P + prev) * OC + (long)dir * U : NULL;
        for (int j = 0; j < U; j++) {
            float dr, dz, dn;
            gru_unit_grad(gr[j], gz[j], gn[j], hn[j], hp ? hp[j] : 0.0f, dh[j], &dr, &dz, &dn);
            if (dp) dp[j] = FS_FMA(dh[j], gz[j], dp[j]);
            hn[j] = dn * gr[j];
            gr[j] = hr[j] = dr;
            gz[j] = hz[j] = dz;
            gn[j] = dn;
        }
    }
#else
    FS_PARFOR(it, (long)n * D * U)
    {
        int j, dir, prev;
        const int row = rnn_item(seg, it, U, D, t, &j, &dir, &prev);
        float *gi = g + ((long)P + row) * GC + (long)dir * G, *hh = gh + ((long)P + row) * GC + (long)dir * G;
        const float dh = d[((long)P + row) * OC + (long)dir * U + j];
        const float hp = prev >= 0 ? out[((long)P + prev) * OC + (long)dir * U + j] : 0.0f;
        float dr, dz, dn;
        gru_unit_grad(gi[j], gi[U + j], gi[2 * U + j], hh[2 * U + j], hp, dh, &dr, &dz, &dn);
        if (prev >= 0) {
            float *dp = d + ((long)P + prev) * OC + (long)dir * U + j;
            *dp = FS_FMA(dh, gi[U + j], *dp);
        }
        hh[2 * U + j] = dn * gi[j];
        gi[j] = hh[j] = dr;
        gi[U + j] = hh[U + j] = dz;
        gi[2 * U + j] = dn;
    }
#endif
    FS_SYNC();
}

/* One LSTM unit j's gradients at a pair's row from its state's (dh):
 * the pre-activations' into both the gates' slots (gi) and the recurrent
 * parts' (hh), the cell's carry into the row before's slot (hp; NULL at a
 * chain's first residue). */
FS_DEVICE static inline void lstm_grad_put(float *FS_RESTRICT gi, float *FS_RESTRICT hh, float *FS_RESTRICT hp,
                                           float dh, int U, int j)
{
    float di, df, dg, dO;
    const float carry = lstm_unit_grad(gi[j], gi[U + j], gi[2 * U + j], gi[3 * U + j], hh[U + j], hp ? hp[j] : 0.0f,
                                       dh, hh[2 * U + j], &di, &df, &dg, &dO);
    if (hp) hp[2 * U + j] = carry;
    gi[j] = hh[j] = di;
    gi[U + j] = hh[U + j] = df;
    gi[2 * U + j] = hh[2 * U + j] = dg;
    gi[3 * U + j] = hh[3 * U + j] = dO;
}

#if FS_ONE_THREAD
/* lstm_grad_put over a pair's units, each gate's slots (ai.. the gates',
 * ri.. the recurrent parts') a restrict parameter of its own (one pointer
 * at offsets k x U needed more run-time alias checks than gcc makes, and
 * the loop stayed scalar): cp the cell states before and carry their
 * gradients' slots (both NULL at a chain's first residue). The same
 * operations as lstm_grad_put. */
static inline void lstm_grads_row(float *FS_RESTRICT ai, float *FS_RESTRICT af, float *FS_RESTRICT ag,
                                  float *FS_RESTRICT ao, float *FS_RESTRICT ri, float *FS_RESTRICT rf,
                                  float *FS_RESTRICT rg, float *FS_RESTRICT ro, const float *FS_RESTRICT cp,
                                  float *FS_RESTRICT carry, const float *FS_RESTRICT dh, int U)
{
    for (int j = 0; j < U; j++) {
        float di, df, dg, dO;
        const float k = lstm_unit_grad(ai[j], af[j], ag[j], ao[j], rf[j], cp ? cp[j] : 0.0f, dh[j], rg[j], &di, &df,
                                       &dg, &dO);
        if (carry) carry[j] = k;
        ai[j] = ri[j] = di;
        af[j] = rf[j] = df;
        ag[j] = rg[j] = dg;
        ao[j] = ro[j] = dO;
    }
}
#endif

/* Step t's LSTM gate gradients from its states' (in d). */
FS_DEVICE FS_NOINLINE static void lstm_gate_grads(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, G = 4 * U, GC = D * G;
    float *g = m->work + y->z, *gh = m->work + y->h;
    const float *d = m->work + y->d;
#if FS_ONE_THREAD
    for (long p = 0; p < (long)n * D; p++) {
        int prev;
        const int row = rnn_row(seg, p, D, t, &prev), dir = (int)(p % D);
        float *FS_RESTRICT gi = g + ((long)P + row) * GC + (long)dir * G;
        float *FS_RESTRICT hh = gh + ((long)P + row) * GC + (long)dir * G;
        float *hp = prev >= 0 ? gh + ((long)P + prev) * GC + (long)dir * G : NULL;
        const float *dh = d + ((long)P + row) * OC + (long)dir * U;
#define LSTM_ROW(cp, carry) \
    lstm_grads_row(gi, gi + U, gi + 2 * U, gi + 3 * U, hh, hh + U, hh + 2 * U, hh + 3 * U, cp, carry, dh, U)
        if (hp)
            LSTM_ROW(hp, hp + 2 * U);
        else
            LSTM_ROW(NULL, NULL);
#undef LSTM_ROW
    }
#else
    FS_PARFOR(it, (long)n * D * U)
    {
        int j, dir, prev;
        const int row = rnn_item(seg, it, U, D, t, &j, &dir, &prev);
        lstm_grad_put(g + ((long)P + row) * GC + (long)dir * G, gh + ((long)P + row) * GC + (long)dir * G,
                      prev >= 0 ? gh + ((long)P + prev) * GC + (long)dir * G : NULL,
                      d[((long)P + row) * OC + (long)dir * U + j], U, j);
    }
#endif
    FS_SYNC();
}

/* Step t's carry through the recurrent weights: the state before's
 * gradient += dgh W_hh^T, its rows and the gate gradients gathered, one
 * product a direction, put back. */
FS_DEVICE FS_NOINLINE static void rnn_carry(FsModel *m, const FsLayer *y, const int *seg, int t, int n)
{
    const int U = y->spec.units, OC = y->out_c, G = rnn_g(y);
    rnn_move(m, y, seg, t, n, 0, m->work + y->h, (long)(1 + y->spec.bidir) * G, G, 0, 0);
    rnn_move(m, y, seg, t, n, 1, m->work + y->d, OC, U, 1, 0);
    for (int dir = 0; dir <= y->spec.bidir; dir++) rnn_product(m, y, n, dir, 1);
    rnn_move(m, y, seg, t, n, 1, m->work + y->d, OC, U, 1, 1);
}

FS_DEVICE FS_NOINLINE void rnn_backward(FsModel *m, const FsLayer *y, const float *x, float *dx, int B)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, P = y->out_pad, OC = y->out_c, G = rnn_g(y), L = y->out_l;
    FsLayer v = rnn_input_view(y);
    FS_IN_MEMORY(&v); /* read where used: kept in registers across the calls below it spilled (nvcc) */
    const int *seg = (const int *)(m->work + y->t); /* the forward pass's */
    float *g = m->work + y->z, *gh = m->work + y->h;
    const float *out = m->work + y->a;
    for (int dir = 0; dir < D; dir++)
        ops_transpose(m->w + y->w2 + (long)dir * U * G, U, G, m->scratch + (long)dir * G * U, U);
    FS_SYNC();
    for (int t = (seg[0] ? seg[2] : 0) - 1; t >= 0; t--) {
        const int n = rnn_active(seg, t);
        if (y->spec.kind == FS_LAYER_LSTM)
            lstm_gate_grads(m, y, seg, t, n);
        else
            gru_gate_grads(m, y, seg, t, n);
        if (t > 0) rnn_carry(m, y, seg, t, n); /* step 0 has no state before */
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
