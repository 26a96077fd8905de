/*
 * act: activations and the row-wise helpers shared by the layers (single
 * source). Tensors are [B][L + 2P][C]; these touch interior rows only, so
 * pad rows stay zero.
 */
#include <math.h>

#include "train/act.h"
#include "train/act_lanes.h"
#include "train/simd.h"
#include "train/team.h"

#ifdef FS_SIMD
/* Swish over y[0, n): s = 1 / (1 + e^-y) (for the backward pass), y *= s.
 * Returns how many it did (whole steps). */
static inline int act_swish_lanes(float *y, float *s, int n)
{
    int c = 0;
    for (; c + ACT_STEP <= n; c += ACT_STEP) {
        vw v[ACT_LANES], e[ACT_LANES];
        for (int j = 0; j < ACT_LANES; j++) e[j] = -(v[j] = *(const vw *)(y + c + j * FS_VW));
        act_exp_lanes(e);
        for (int j = 0; j < ACT_LANES; j++) {
            const vw g = 1.0f / (1.0f + e[j]);
            *(vw *)(s + c + j * FS_VW) = g;
            *(vw *)(y + c + j * FS_VW) = v[j] * g;
        }
    }
    return c;
}

/* Elu over y[0, n): y > 0 ? y : a * (e^y - 1). Returns how many it did. */
static inline int act_elu_lanes(float *y, float a, int n)
{
    int c = 0;
    for (; c + ACT_STEP <= n; c += ACT_STEP) {
        vw v[ACT_LANES], e[ACT_LANES];
        for (int j = 0; j < ACT_LANES; j++) e[j] = v[j] = *(const vw *)(y + c + j * FS_VW);
        act_exp_lanes(e);
        for (int j = 0; j < ACT_LANES; j++) {
            const vwi pos = v[j] > 0.0f;
            const vw neg = a * (e[j] - 1.0f);
            *(vw *)(y + c + j * FS_VW) = (vw)(((vwi)v[j] & pos) | ((vwi)neg & ~pos));
        }
    }
    return c;
}
#endif

/* Interior row r of act_forward's tensor. */
FS_DEVICE static inline void act_forward_row(FsAct act, float param, float *a, float *aux, long r, int L, int P, int C)
{
    long off = ((r / L) * (L + 2 * P) + P + r % L) * (long)C;
    float *y = a + off;
    /* act_one in a loop per activation (a constant there): its switch
     * folds away, and the loops stay as the compilers vectorise them. */
    switch (act) {
    case FS_ACT_LINEAR:
        break;
    case FS_ACT_RELU:
        for (int c = 0; c < C; c++) y[c] = act_one(FS_ACT_RELU, param, y[c], NULL);
        break;
    case FS_ACT_LEAKY_RELU:
        for (int c = 0; c < C; c++) y[c] = act_one(FS_ACT_LEAKY_RELU, param, y[c], NULL);
        break;
    case FS_ACT_SWISH: {
        float *s = aux + off;
        int c = 0;
#ifdef FS_SIMD
        c = act_swish_lanes(y, s, C);
#endif
        for (; c < C; c++) y[c] = act_one(FS_ACT_SWISH, param, y[c], &s[c]);
        break;
    }
    case FS_ACT_TANH:
        for (int c = 0; c < C; c++) y[c] = act_one(FS_ACT_TANH, param, y[c], NULL);
        break;
    case FS_ACT_ELU: {
        int c = 0;
#ifdef FS_SIMD
        c = act_elu_lanes(y, param, C);
#endif
        for (; c < C; c++) y[c] = act_one(FS_ACT_ELU, param, y[c], NULL);
        break;
    }
    }
}

#ifdef FS_TEAM
/* The row loops as ranges of rows that idle pool threads may share
 * (team.h): rows are disjoint, and a row is the same code whoever runs it. */
typedef struct {
    FsAct act;
    float param;
    float *x, *aux;
    const float *a, *v;
    int L, P, C;
} ActRows;

static void act_forward_rows(void *arg, long lo, long hi)
{
    const ActRows *l = arg;
    for (long r = lo; r < hi; r++) act_forward_row(l->act, l->param, l->x, l->aux, r, l->L, l->P, l->C);
}
#endif

FS_DEVICE FS_NOINLINE void act_forward(FsAct act, float param, float *a, float *aux, int B, int L, int P, int C)
{
#ifdef FS_TEAM
    /* Cost per element in the GEMM's multiply-adds (team.h), measured on
     * the larger model of bench/run-team: swish about 36. */
    const double cost = act == FS_ACT_SWISH || act == FS_ACT_ELU || act == FS_ACT_TANH ? 36.0 : 4.0;
    ActRows l = {act, param, a, aux, NULL, NULL, L, P, C};
    if (act != FS_ACT_LINEAR) team_for((long)B * L, cost * B * L * C, act_forward_rows, &l);
#else
    FS_PARFOR(r, (long)B * L) act_forward_row(act, param, a, aux, r, L, P, C);
#endif
    FS_SYNC();
}

/* The derivative from the output (and the sigmoid for swish): relu and elu
 * are increasing, so a > 0 exactly where z > 0. */
FS_DEVICE float act_grad(FsAct act, float param, float a, float s)
{
    switch (act) {
    case FS_ACT_RELU:
        return a > 0.0f ? 1.0f : 0.0f;
    case FS_ACT_LEAKY_RELU:
        return a > 0.0f ? 1.0f : param;
    case FS_ACT_SWISH:
        return s + a * (1.0f - s);
    case FS_ACT_TANH:
        return 1.0f - a * a;
    case FS_ACT_ELU:
        return a > 0.0f ? 1.0f : a + param;
    default:
        return 1.0f;
    }
}

/* Interior row r of act_backward's tensors. */
FS_DEVICE static inline void act_backward_row(FsAct act, float param, const float *a, const float *aux, float *d,
                                              long r, int L, int P, int C)
{
    long off = ((r / L) * (L + 2 * P) + P + r % L) * (long)C;
    const float *y = a + off;
    float *g = d + off;
    if (act == FS_ACT_SWISH) {
        const float *s = aux + off;
        for (int c = 0; c < C; c++) g[c] *= s[c] + y[c] * (1.0f - s[c]);
    } else {
        for (int c = 0; c < C; c++) g[c] *= act_grad(act, param, y[c], 0.0f);
    }
}

#ifdef FS_TEAM
static void act_backward_rows(void *arg, long lo, long hi)
{
    const ActRows *l = arg;
    for (long r = lo; r < hi; r++) act_backward_row(l->act, l->param, l->a, l->v, l->x, r, l->L, l->P, l->C);
}
#endif

FS_DEVICE FS_NOINLINE void act_backward(FsAct act, float param, const float *a, const float *aux, float *d, int B, int L,
                            int P, int C)
{
    if (act == FS_ACT_LINEAR) return;
#ifdef FS_TEAM
    ActRows l = {act, param, d, NULL, a, aux, L, P, C};
    team_for((long)B * L, (act == FS_ACT_SWISH ? 24.0 : 8.0) * B * L * C, act_backward_rows, &l);
#else
    FS_PARFOR(r, (long)B * L) act_backward_row(act, param, a, aux, d, r, L, P, C);
#endif
    FS_SYNC();
}

FS_DEVICE static inline void rows_set_row(float *x, const float *v, long r, int L, int P, int C)
{
    float *y = x + ((r / L) * (L + 2 * P) + P + r % L) * (long)C;
    if (v)
        for (int c = 0; c < C; c++) y[c] = v[c];
    else
        for (int c = 0; c < C; c++) y[c] = 0.0f;
}

#ifdef FS_TEAM
static void rows_set_rows(void *arg, long lo, long hi)
{
    const ActRows *l = arg;
    for (long r = lo; r < hi; r++) rows_set_row(l->x, l->v, r, l->L, l->P, l->C);
}
#endif

FS_DEVICE FS_NOINLINE void rows_set(float *x, const float *v, int B, int L, int P, int C)
{
#ifdef FS_TEAM
    ActRows l = {FS_ACT_LINEAR, 0.0f, x, NULL, NULL, v, L, P, C};
    team_for((long)B * L, 8.0 * B * L * C, rows_set_rows, &l);
#else
    FS_PARFOR(r, (long)B * L) rows_set_row(x, v, r, L, P, C);
#endif
    FS_SYNC();
}

#define COLSUM_CHUNK 16

/* Column chunk t: rows in order, so every column has one fixed summation
 * order, and the CPU vectorises the chunk. */
FS_DEVICE static inline void rows_colsum_chunk(float *out, const float *x, long t, int B, int L, int P, int C)
{
    int c0 = (int)t * COLSUM_CHUNK, n = C - c0 < COLSUM_CHUNK ? C - c0 : COLSUM_CHUNK;
    float acc[COLSUM_CHUNK];
    for (int c = 0; c < COLSUM_CHUNK; c++) acc[c] = 0.0f;
    for (long b = 0; b < B; b++) {
        const float *row = x + (b * (L + 2 * P) + P) * (long)C + c0;
        for (int p = 0; p < L; p++, row += C)
            for (int c = 0; c < n; c++) acc[c] += row[c];
    }
    for (int c = 0; c < n; c++) out[c0 + c] += acc[c];
}

#ifdef FS_TEAM
typedef struct {
    float *out;
    const float *x;
    int B, L, P, C;
} ColsumLoop;

static void rows_colsum_range(void *arg, long lo, long hi)
{
    const ColsumLoop *l = arg;
    for (long t = lo; t < hi; t++) rows_colsum_chunk(l->out, l->x, t, l->B, l->L, l->P, l->C);
}
#endif

FS_DEVICE FS_NOINLINE void rows_colsum(float *out, const float *x, int B, int L, int P, int C)
{
    /* Column chunks in parallel: each column's sum is one chunk's. */
#ifdef FS_TEAM
    ColsumLoop l = {out, x, B, L, P, C};
    team_for((C + COLSUM_CHUNK - 1) / COLSUM_CHUNK, 4.0 * B * L * C, rows_colsum_range, &l);
#else
    FS_PARFOR(t, (C + COLSUM_CHUNK - 1) / COLSUM_CHUNK) rows_colsum_chunk(out, x, t, B, L, P, C);
#endif
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void ops_transpose(const float *src, int rows, int cols, float *dst, int ld)
{
#ifdef FS_SIMD
    if (rows % 8 == 0 && cols % 8 == 0 && ld == rows) {
        /* 8 x 8 blocks transposed in registers: this runs every step (the
         * convolution's input gradient needs its weights transposed). */
        for (int r0 = 0; r0 < rows; r0 += 8)
            for (int c0 = 0; c0 < cols; c0 += 8) {
                v8 m[8];
                for (int r = 0; r < 8; r++) m[r] = *(const v8 *)(src + (long)(r0 + r) * cols + c0);
                simd_transpose8(m);
                for (int c = 0; c < 8; c++) *(v8 *)(dst + (long)(c0 + c) * rows + r0) = m[c];
            }
        return;
    }
#endif
    /* 16x16 blocks keep both sides in cache lines. */
    const int T = 16;
    long rb = (rows + T - 1) / T, cb = (cols + T - 1) / T;
    FS_PARFOR(t, rb * cb)
    {
        int r0 = (int)(t / cb) * T, c0 = (int)(t % cb) * T;
        int r1 = r0 + T < rows ? r0 + T : rows, c1 = c0 + T < cols ? c0 + T : cols;
        for (int r = r0; r < r1; r++)
            for (int c = c0; c < c1; c++) dst[(long)c * ld + r] = src[(long)r * cols + c];
    }
    FS_PARFOR(c, ld > rows ? cols : 0)
    {
        for (int r = rows; r < ld; r++) dst[c * ld + r] = 0.0f;
    }
    FS_SYNC();
}
