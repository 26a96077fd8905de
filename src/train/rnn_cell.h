/*
 * train/rnn_cell.h: internal to the train module (single source), one
 * unit of a recurrent layer's step (train/rnn.c): the GRU's and the
 * LSTM's gates, new states and their gradients, as PyTorch's nn.GRU and
 * nn.LSTM compute them.
 */
#ifndef FS_TRAIN_RNN_CELL_H
#define FS_TRAIN_RNN_CELL_H

#include "train/act.h"
#include "train/act_lanes.h"

/* The gates' functions from act_exp (act.h), which the compiler vectorises
 * where libm's expf and tanhf are scalar calls (they were most of a
 * BiGRU(128)'s time); tanh from e^-2|x|, its sign put back. */
FS_DEVICE static inline float rnn_sigmoid(float x) { return 1.0f / (1.0f + act_exp(-x)); }

FS_DEVICE static inline float rnn_tanh(float x)
{
    const float t = act_exp(-2.0f * fabsf(x)), r = (1.0f - t) / (1.0f + t);
    return x < 0.0f ? -r : r;
}

/* One unit of a step from its input's parts (xr, xz, xn), recurrent parts
 * (hr, hz, hn) and state before (hp; 0 at a chain's first residue): its
 * gates into *r, *z, *n, the new state returned. Both builds' loops call
 * it: the same operations in the same order, and scalars only, so that
 * the CPU's loop over a pair's units vectorises. */
FS_DEVICE static inline float gru_unit(float xr, float xz, float xn, float hr, float hz, float hn, float hp, float *r,
                                       float *z, float *n)
{
    *r = rnn_sigmoid(xr + hr);
    *z = rnn_sigmoid(xz + hz);
    *n = rnn_tanh(xn + *r * hn);
    return (1.0f - *z) * *n + *z * hp;
}

#ifdef FS_SIMD
/* gru_unit over a pair's units [0, c), whole steps of ACT_STEP: the same
 * operations lane by lane (act_exp_lanes is act_exp bit for bit; tanh's
 * sign put back by a select on x < 0, as rnn_tanh does). hp NULL: a
 * chain's first residue. Returns c. */
static inline int gru_units_lanes(float *gr, float *gz, float *gn, const float *hh, const float *hp, float *o, int U)
{
#define LD(p) (*(const vw *)(p))
#define ST(p) (*(vw *)(p))
    int c = 0;
    for (; c + ACT_STEP <= U; c += ACT_STEP) {
        vw r[ACT_LANES], z[ACT_LANES], x[ACT_LANES], t[ACT_LANES];
        for (int j = 0; j < ACT_LANES; j++) {
            const int q = c + j * FS_VW;
            r[j] = -(LD(gr + q) + LD(hh + q));
            z[j] = -(LD(gz + q) + LD(hh + U + q));
        }
        act_exp_lanes(r);
        act_exp_lanes(z);
        for (int j = 0; j < ACT_LANES; j++) {
            const int q = c + j * FS_VW;
            r[j] = 1.0f / (1.0f + r[j]);
            z[j] = 1.0f / (1.0f + z[j]);
            x[j] = LD(gn + q) + r[j] * LD(hh + 2 * U + q);
            t[j] = -2.0f * (vw)((vwu)x[j] & 0x7fffffffu);
        }
        act_exp_lanes(t);
        for (int j = 0; j < ACT_LANES; j++) {
            const int q = c + j * FS_VW;
            const vw a = (1.0f - t[j]) / (1.0f + t[j]);
            const vwi neg = x[j] < 0.0f;
            const vw n = (vw)(((vwi)-a & neg) | ((vwi)a & ~neg));
            const vw h = hp ? LD(hp + q) : (vw){0};
            ST(gr + q) = r[j];
            ST(gz + q) = z[j];
            ST(gn + q) = n;
            ST(o + q) = (1.0f - z[j]) * n + z[j] * h;
        }
    }
#undef LD
#undef ST
    return c;
}
#endif

/* Its gradients from the state's, dh: those of the input's parts (*dr,
 * *dz, *dn; the recurrent parts' are the same but dn * r for n). */
FS_DEVICE static inline void gru_unit_grad(float r, float z, float n, float hn, float hp, float dh, float *dr,
                                           float *dz, float *dn)
{
    *dn = dh * (1.0f - z) * (1.0f - n * n);
    *dz = dh * (hp - n) * z * (1.0f - z);
    *dr = *dn * hn * r * (1.0f - r);
}

/* An LSTM unit of a step from its input's parts (xi, xf, xg, xo), its
 * recurrent parts (hi, hf, hg, ho) and the cell state before (cp; 0 at a
 * chain's first residue): c = f * cp + i * g, h = o * tanh(c). Its gates
 * into *i, *f, *g, *o, c into *c and tanh(c) into *tc (backward reads
 * them), h returned. Scalars only, as gru_unit. */
FS_DEVICE static inline float lstm_unit(float xi, float xf, float xg, float xo, float hi, float hf, float hg, float ho,
                                        float cp, float *i, float *f, float *g, float *o, float *c, float *tc)
{
    *i = rnn_sigmoid(xi + hi);
    *f = rnn_sigmoid(xf + hf);
    *g = rnn_tanh(xg + hg);
    *o = rnn_sigmoid(xo + ho);
    *c = *f * cp + *i * *g;
    *tc = rnn_tanh(*c);
    return *o * *tc;
}

#ifdef FS_SIMD
/* lstm_unit over a pair's units [0, c), whole steps of ACT_STEP, as
 * lstm_put (rnn.c) stores them: the same operations lane by lane (see
 * gru_units_lanes). gi: the gates' slots, hh: the recurrent parts' (then
 * c, tanh c and the carry's zero), cp the cell states before (NULL: a
 * chain's first residue), o the states. Returns c. */
static inline int lstm_units_lanes(float *gi, float *hh, const float *cp, float *o, int U)
{
#define LD(p) (*(const vw *)(p))
#define ST(p) (*(vw *)(p))
#define ABS(v) ((vw)((vwu)(v) & 0x7fffffffu))
#define SIGN(a, x) ((vw)(((vwi) - (a) & ((x) < 0.0f)) | ((vwi)(a) & ~((x) < 0.0f))))
    int c = 0;
    for (; c + ACT_STEP <= U; c += ACT_STEP) {
        vw i[ACT_LANES], f[ACT_LANES], g[ACT_LANES], og[ACT_LANES], x[ACT_LANES];
        for (int j = 0; j < ACT_LANES; j++) {
            const int q = c + j * FS_VW;
            i[j] = -(LD(gi + q) + LD(hh + q));
            f[j] = -(LD(gi + U + q) + LD(hh + U + q));
            x[j] = LD(gi + 2 * U + q) + LD(hh + 2 * U + q);
            og[j] = -(LD(gi + 3 * U + q) + LD(hh + 3 * U + q));
            g[j] = -2.0f * ABS(x[j]);
        }
        act_exp_lanes(i);
        act_exp_lanes(f);
        act_exp_lanes(g);
        act_exp_lanes(og);
        for (int j = 0; j < ACT_LANES; j++) {
            const int q = c + j * FS_VW;
            i[j] = 1.0f / (1.0f + i[j]);
            f[j] = 1.0f / (1.0f + f[j]);
            og[j] = 1.0f / (1.0f + og[j]);
            const vw a = (1.0f - g[j]) / (1.0f + g[j]);
            g[j] = SIGN(a, x[j]);
            const vw before = cp ? LD(cp + q) : (vw){0};
            x[j] = f[j] * before + i[j] * g[j]; /* c */
            ST(gi + q) = i[j];
            ST(gi + U + q) = f[j];
            ST(gi + 2 * U + q) = g[j];
            ST(gi + 3 * U + q) = og[j];
            ST(hh + q) = x[j];
            ST(hh + 2 * U + q) = (vw){0};
            i[j] = -2.0f * ABS(x[j]);
        }
        act_exp_lanes(i);
        for (int j = 0; j < ACT_LANES; j++) {
            const int q = c + j * FS_VW;
            const vw a = (1.0f - i[j]) / (1.0f + i[j]), tc = SIGN(a, x[j]);
            ST(hh + U + q) = tc;
            ST(o + q) = og[j] * tc;
        }
    }
#undef LD
#undef ST
#undef ABS
#undef SIGN
    return c;
}
#endif

/* Its gradients from the state's (dh) and the cell's carried back from
 * the step after (dcn): the pre-activations' (*di, *df, *dg, *do_; the
 * same for the input's and the recurrent parts), and the cell gradient
 * that goes on to the cell before (returned: dc * f). */
FS_DEVICE static inline float lstm_unit_grad(float i, float f, float g, float o, float tc, float cp, float dh, float dcn,
                                             float *di, float *df, float *dg, float *do_)
{
    const float dc = dh * o * (1.0f - tc * tc) + dcn;
    *di = dc * g * i * (1.0f - i);
    *df = dc * cp * f * (1.0f - f);
    *dg = dc * i * (1.0f - g * g);
    *do_ = dh * tc * o * (1.0f - o);
    return dc * f;
}

#endif
