/*
 * train/act_lanes.h: internal to the train module, the plain CPU build's
 * vector form of act_exp (act.h), shared by the activations (act.c) and
 * the GRU's gates (rnn.c).
 */
#ifndef FS_TRAIN_ACT_LANES_H
#define FS_TRAIN_ACT_LANES_H

#include "train/simd.h"

#ifdef FS_SIMD
/* act_exp (act.h) on ACT_LANES vectors at once, each step written across
 * all of them: one act_exp is a chain of about 25 dependent operations,
 * and one vector at a time (what GCC makes of act_exp's loop) filled the
 * out-of-order window with operations waiting on that chain. Four chains
 * side by side, with the clamps as min and max: swish over 2,047 x 128
 * went from 1.18 to 0.71 ns an element on a Zen 3 (docs/benchmarks.md).
 * Every lane is act_exp's operations in act_exp's order (no contraction:
 * -ffp-contract=off), so each value is act_exp's bit for bit (test_ops
 * checks it). */
#define ACT_LANES 4
#define ACT_STEP (ACT_LANES * FS_VW) /* floats per step */

/* x < lo ? lo : x, then x > hi ? hi : x, lane by lane; a NaN stays NaN
 * as in act_exp. x86's max(a, b) is a > b ? a : b and min(a, b) is
 * a < b ? a : b, NaN and signed zeros included: the same selects in one
 * instruction each. */
static inline void act_clamp_lanes(vw x[ACT_LANES], float lo, float hi)
{
    const vw vlo = (vw){0} + lo, vhi = (vw){0} + hi;
    for (int j = 0; j < ACT_LANES; j++) {
#if defined(__AVX512F__)
        x[j] = (vw)_mm512_min_ps((__m512)vhi, _mm512_max_ps((__m512)vlo, (__m512)x[j]));
#elif defined(__AVX__)
        x[j] = (vw)_mm256_min_ps((__m256)vhi, _mm256_max_ps((__m256)vlo, (__m256)x[j]));
#else
        const vwi below = x[j] < lo, above = x[j] > hi;
        x[j] = (vw)(((vwi)x[j] & ~below) | ((vwi)vlo & below));
        x[j] = (vw)(((vwi)x[j] & ~above) | ((vwi)vhi & above));
#endif
    }
}

static inline void act_exp_lanes(vw x[ACT_LANES])
{
    vw m[ACT_LANES], r[ACT_LANES], p[ACT_LANES];
    act_clamp_lanes(x, -87.0f, 88.0f);
    for (int j = 0; j < ACT_LANES; j++) m[j] = x[j] * 1.44269504088896341f + 12582912.0f;
    for (int j = 0; j < ACT_LANES; j++) {
        const vw n = m[j] - 12582912.0f;
        r[j] = x[j] - n * 0.693359375f + n * 2.12194440e-4f;
    }
    for (int j = 0; j < ACT_LANES; j++) p[j] = r[j] * 1.9875691500e-4f + 1.3981999507e-3f;
    for (int j = 0; j < ACT_LANES; j++) p[j] = p[j] * r[j] + 8.3334519073e-3f;
    for (int j = 0; j < ACT_LANES; j++) p[j] = p[j] * r[j] + 4.1665795894e-2f;
    for (int j = 0; j < ACT_LANES; j++) p[j] = p[j] * r[j] + 1.6666665459e-1f;
    for (int j = 0; j < ACT_LANES; j++) p[j] = p[j] * r[j] + 5.0000001201e-1f;
    for (int j = 0; j < ACT_LANES; j++) p[j] = p[j] * r[j] * r[j] + r[j] + 1.0f;
    for (int j = 0; j < ACT_LANES; j++) x[j] = p[j] * (vw)(((vwu)m[j] - 0x4b400000u + 127u) << 23);
}
#endif

#endif
