/*
 * train/simd.h: internal to the train module. GCC vector types for the CPU
 * build only (FS_SIMD); nvcc and the emulated block take the portable
 * loops beside every use. A vector path walks its whole range on the
 * calling thread (no FS_PARFOR), which is right only where one thread runs
 * a model's step: FS_SIMD exists only where device.h's FS_ONE_THREAD is 1. A vector form must compute exactly what its
 * portable loop computes, element by element, so that results stay bitwise
 * identical across backends (tests/test_block.c).
 */
#ifndef FS_TRAIN_SIMD_H
#define FS_TRAIN_SIMD_H

#include "train/device.h"

#if defined(__GNUC__) && FS_ONE_THREAD
#define FS_SIMD 1
/* aligned(4): loads and stores at any float address. */
typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef int v8i __attribute__((vector_size(32)));
#if defined(__AVX__)
#include <immintrin.h>
#endif

/* a * b + c per lane, rounded once (FS_FMA's vector forms, device.h);
 * vfma8s / vfma16s take a scalar a, broadcast. Macros, not functions: a
 * vector passed by value changes the ABI where AVX is off (-Wpsabi). */
#if defined(__FMA__)
#define vfma8(a, b, c) ((v8)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#else
#define vfma8(a, b, c) ((a) * (b) + (c))
#endif
#define vfma8s(a, b, c)                                   \
    __extension__({                                       \
        const float s_ = (a);                             \
        vfma8(((v8){s_, s_, s_, s_, s_, s_, s_, s_}), (b), (c)); \
    })
#if defined(__AVX512F__)
#define vfma16s(a, b, c) ((v16)_mm512_fmadd_ps(_mm512_set1_ps(a), (__m512)(b), (__m512)(c)))
#endif

/* The 4 x 32 and 8 x 32 GEMM tiles (gemm.c) keep 8 and 16 v16
 * accumulators in registers: with AVX-512's 32 vector registers they fit;
 * with AVX2's 16 (a v16 takes two) they spill to the stack on every
 * multiply-add, and R1 trained 18 times slower than with the 4 x 16 tile
 * (bench_r1 on a Zen 3 EPYC: 4.6 GFLOP/s). Which tile runs never changes a
 * result: every element is the same chain of multiply-adds. */
#if defined(__AVX512F__)
#define FS_WIDE_TILES 1
typedef v16 vw; /* the widest vector the registers hold: FS_VW floats */
#define FS_VW 16
#else
#define FS_WIDE_TILES 0
typedef v8 vw;
#define FS_VW 8
#endif
/* vw's lanes as ints (a comparison's mask) and as unsigned (bit patterns). */
typedef int vwi __attribute__((vector_size(4 * FS_VW)));
typedef unsigned vwu __attribute__((vector_size(4 * FS_VW)));

/* Transposes the 8 x 8 block m in place (three shuffle rounds). */
static inline void simd_transpose8(v8 m[8])
{
    const v8i lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const v8i s0 = {0, 1, 8, 9, 4, 5, 12, 13}, s1 = {2, 3, 10, 11, 6, 7, 14, 15};
    const v8i q0 = {0, 1, 2, 3, 8, 9, 10, 11}, q1 = {4, 5, 6, 7, 12, 13, 14, 15};
    v8 t[8], u[8];
    for (int r = 0; r < 8; r += 2) {
        t[r] = __builtin_shuffle(m[r], m[r + 1], lo);
        t[r + 1] = __builtin_shuffle(m[r], m[r + 1], hi);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h] = __builtin_shuffle(t[h], t[h + 2], s0);
        u[h + 1] = __builtin_shuffle(t[h], t[h + 2], s1);
        u[h + 2] = __builtin_shuffle(t[h + 1], t[h + 3], s0);
        u[h + 3] = __builtin_shuffle(t[h + 1], t[h + 3], s1);
    }
    for (int j = 0; j < 4; j++) {
        m[j] = __builtin_shuffle(u[j], u[j + 4], q0);
        m[j + 4] = __builtin_shuffle(u[j], u[j + 4], q1);
    }
}
#endif

#endif
