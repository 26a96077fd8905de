/*
 * train/act.h: internal to the train module (single source): activations
 * and row helpers over padded [B][L + 2P][C] tensors, interior rows only.
 */
#ifndef FS_TRAIN_ACT_H
#define FS_TRAIN_ACT_H

#include <math.h>

#include "model/model.h"
#include "train/device.h"

/* e^x to 1.2e-7 relative (Cephes polynomial), x clamped to [-87, 88].
 * Written so that compilers vectorise it (libm's expf is a scalar call,
 * and was a sixth of the R1 step); no float-to-int conversion, the
 * rounding is done by adding 1.5 * 2^23. */
FS_DEVICE static inline float act_exp(float x)
{
    union {
        unsigned int i; /* unsigned: the shift below must not be UB for NaN input */
        float f;
    } m, u;
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    m.f = x * 1.44269504088896341f + 12582912.0f;
    float n = m.f - 12582912.0f;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    u.i = (m.i - 0x4b400000u + 127u) << 23;
    return p * u.f;
}

/* One element of act_forward: y's activation, with swish's sigmoid into
 * *s (the backward pass reads it). The one scalar form of each activation:
 * act_forward's rows and the block GEMM's fused epilogue (gemm_block.h,
 * ops_gemm_act) both take it, so the two give the same bits. */
FS_DEVICE static inline float act_one(FsAct act, float param, float y, float *s)
{
    switch (act) {
    case FS_ACT_RELU:
        return y > 0.0f ? y : 0.0f;
    case FS_ACT_LEAKY_RELU:
        return y > 0.0f ? y : param * y;
    case FS_ACT_SWISH: {
        const float sg = 1.0f / (1.0f + act_exp(-y));
        *s = sg;
        return y * sg;
    }
    case FS_ACT_TANH:
        return tanhf(y);
    case FS_ACT_ELU:
        return y > 0.0f ? y : param * (act_exp(y) - 1.0f);
    case FS_ACT_LINEAR:
        break;
    }
    return y;
}

/* In place on a; aux receives the sigmoid for swish. */
FS_DEVICE void act_forward(FsAct act, float param, float *a, float *aux, int B, int L, int P, int C);
FS_DEVICE float act_grad(FsAct act, float param, float a, float s);
/* d *= act'(.) given the output a (and aux). */
FS_DEVICE void act_backward(FsAct act, float param, const float *a, const float *aux, float *d, int B, int L,
                            int P, int C);
/* Interior rows = v (a C-vector), or 0 when v is NULL. */
FS_DEVICE void rows_set(float *x, const float *v, int B, int L, int P, int C);
/* out[c] += sum over interior rows of x[., c]. */
FS_DEVICE void rows_colsum(float *out, const float *x, int B, int L, int P, int C);

/* dst [cols][ld] = transpose of src [rows][cols], columns rows..ld-1 zero. */
FS_DEVICE void ops_transpose(const float *src, int rows, int cols, float *dst, int ld);

#endif
