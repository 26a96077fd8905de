/*
 * act: activations and the row-wise helpers shared by the layers (single
 * source). Tensors are [B][L + 2P][C]; these touch interior rows only, so
 * pad rows stay zero.
 */
#include <math.h>

#include "train/act.h"

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
                float sg = 1.0f / (1.0f + expf(-y[c]));
                s[c] = sg;
                y[c] *= sg;
            }
            break;
        }
        case FS_ACT_TANH:
            for (int c = 0; c < C; c++) y[c] = tanhf(y[c]);
            break;
        case FS_ACT_ELU:
            for (int c = 0; c < C; c++) y[c] = y[c] > 0.0f ? y[c] : param * (expf(y[c]) - 1.0f);
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

FS_DEVICE void rows_colsum(float *out, const float *x, int B, int L, int P, int C)
{
    /* One column per thread, rows in order: a fixed summation order. */
    FS_PARFOR(c, C)
    {
        float s = 0.0f;
        for (long r = 0; r < (long)B * L; r++) s += x[((r / L) * (L + 2 * P) + P + r % L) * (long)C + c];
        out[c] += s;
    }
    FS_SYNC();
}
