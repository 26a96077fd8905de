/*
 * half.h: IEEE 754 binary16 ("half") <-> float, bit for bit.
 *
 * Per-residue feature matrices are stored as halves when they are wide
 * (data.feature_store, FsDataset.feat_half): half the memory, about three
 * significant decimal digits. Both directions are integer operations only
 * (no library call, no hardware conversion instruction), so the host and
 * the GPU trainer (under nvcc these are FS_HOST_DEVICE) get the same bits
 * on every machine.
 *
 *   util_half_from_float: round to nearest, ties to even; values whose
 *     magnitude rounds to 65520 or more become infinity; results below
 *     2^-14 are subnormal halves (down to 2^-24; half of that or less
 *     rounds to a signed zero); a NaN stays a NaN with its sign and the top
 *     ten bits of its payload (a payload that would be zero becomes the
 *     quiet bit), so every half NaN comes back as itself.
 *   util_float_from_half: exact (every half is a float).
 */
#ifndef FS_UTIL_HALF_H
#define FS_UTIL_HALF_H

#include <stdint.h>

/* util.h includes this file at its end, after FS_HOST_DEVICE; included
 * first, this brings util.h (whose own include of it is then a no-op). */
#include "util/util.h" /* FS_HOST_DEVICE */

/* A float's bits and back, without memcpy (device code) and without
 * breaking the aliasing rules (a union is C's sanctioned way). */
FS_HOST_DEVICE static inline uint32_t util_float_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    return v.u;
#endif
}

FS_HOST_DEVICE static inline float util_bits_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    union {
        float f;
        uint32_t u;
    } v;
    v.u = u;
    return v.f;
#endif
}

FS_HOST_DEVICE static inline uint16_t util_half_from_float(float f)
{
    const uint32_t x = util_float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) { /* infinity or NaN */
        if (ax == 0x7f800000u) return (uint16_t)(sign | 0x7c00u);
        uint32_t h = sign | 0x7c00u | ((ax >> 13) & 0x3ffu);
        if (!(h & 0x3ffu)) h |= 0x200u;
        return (uint16_t)h;
    }
    const int32_t e = (int32_t)(ax >> 23) - 127 + 15; /* the half's biased exponent */
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);   /* 2^16 and above */
    uint32_t mant, shift;
    if (e >= 1) { /* a normal half: drop 13 bits of the mantissa */
        mant = ax & 0x7fffffu;
        shift = 13;
        uint32_t h = ((uint32_t)e << 10) | (mant >> shift);
        const uint32_t rem = mant & 0x1fffu;
        /* A carry out of the mantissa steps the exponent, up to infinity. */
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    if (ax <= 0x33000000u) return (uint16_t)sign; /* at most 2^-25: ties to the even zero */
    /* A subnormal half: units of 2^-24; the float is mant x 2^(E-150). */
    mant = (ax & 0x7fffffu) | 0x800000u;
    shift = (uint32_t)(126 - (int32_t)(ax >> 23)); /* 14 .. 24 */
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) h++; /* 0x3ff + 1 is the least normal */
    return (uint16_t)(sign | h);
}

FS_HOST_DEVICE static inline float util_float_from_half(uint16_t h)
{
    const uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    const uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t mant = (uint32_t)h & 0x3ffu;
    if (e == 31) return util_bits_float(sign | 0x7f800000u | (mant << 13));
    if (e) return util_bits_float(sign | ((e + 112u) << 23) | (mant << 13));
    if (!mant) return util_bits_float(sign);
    /* Subnormal: normalise (at most ten shifts). */
    uint32_t fe = 113; /* the float exponent of 2^-14 */
    while (!(mant & 0x400u)) {
        mant <<= 1;
        fe--;
    }
    return util_bits_float(sign | (fe << 23) | ((mant & 0x3ffu) << 13));
}

#endif
