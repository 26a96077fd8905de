/*
 * act: activations and the row-wise helpers shared by the layers (single
 * source). Tensors are [B][L + 2P][C]; these touch interior rows only, so
 * pad rows stay zero.
 */
#include <math.h>

#include "train/act.h"
#include "train/simd.h"

FS_DEVICE void act_forward(FsAct act, float param, float *a, float *aux, int B, int L, int P, int C)
{
    FS_PARFOR(r, (long)B * L)
    {
        long off = ((r / L) * (L + 2 * P) + P + r % L) * (long)C;
        float *y = a + off;
        switch (act) {
        case FS_ACT_LINEAR:
            break;
        case FS_ACT_RELU:
            for (int c = 0; c < C; c++) y[c] = y[c] > 0.0f ? y[c] : 0.0f;
            break;
        case FS_ACT_LEAKY_RELU:
            for (int c = 0; c < C; c++) y[c] = y[c] > 0.0f ? y[c] : param * y[c];
            break;
        case FS_ACT_SWISH: {
            float *s = aux + off;
            for (int c = 0; c < C; c++) {
                float sg = 1.0f / (1.0f + act_exp(-y[c]));
                s[c] = sg;
                y[c] *= sg;
            }
            break;
        }
        case FS_ACT_TANH:
            for (int c = 0; c < C; c++) y[c] = tanhf(y[c]);
            break;
        case FS_ACT_ELU:
            for (int c = 0; c < C; c++) y[c] = y[c] > 0.0f ? y[c] : param * (act_exp(y[c]) - 1.0f);
            break;
        }
    }
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

FS_DEVICE void act_backward(FsAct act, float param, const float *a, const float *aux, float *d, int B, int L,
                            int P, int C)
{
    if (act == FS_ACT_LINEAR) return;
    FS_PARFOR(r, (long)B * L)
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
    FS_SYNC();
}

FS_DEVICE void rows_set(float *x, const float *v, int B, int L, int P, int C)
{
    FS_PARFOR(r, (long)B * L)
    {
        float *y = x + ((r / L) * (L + 2 * P) + P + r % L) * (long)C;
        if (v)
            for (int c = 0; c < C; c++) y[c] = v[c];
        else
            for (int c = 0; c < C; c++) y[c] = 0.0f;
    }
    FS_SYNC();
}

#define COLSUM_CHUNK 16

FS_DEVICE void rows_colsum(float *out, const float *x, int B, int L, int P, int C)
{
    /* Column chunks in parallel, rows in order within each: every column
     * has one fixed summation order, and the CPU vectorises the chunk. */
    FS_PARFOR(t, (C + COLSUM_CHUNK - 1) / COLSUM_CHUNK)
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
    FS_SYNC();
}

FS_DEVICE void ops_transpose(const float *src, int rows, int cols, float *dst, int ld)
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
