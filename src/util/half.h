/*
 * half: IEEE binary16 <-> float, bit by bit and without library calls, so
 * that the trainer's device code (which reads features stored as halves,
 * FsDataset.feat) and the host share one conversion.
 */
#ifndef FS_UTIL_HALF_H
#define FS_UTIL_HALF_H

#include <stdint.h>
#include <string.h>

#include "util/util.h"

FS_HOST_DEVICE static inline float util_float_from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, f;
    if (e == 0x1fu) {
        f = sign | 0x7f800000u | (m << 13); /* inf, nan (payload kept) */
    } else if (e != 0) {
        f = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0) {
        f = sign;
    } else { /* subnormal: normalise */
        e = 113u;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        f = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float x;
    memcpy(&x, &f, sizeof x);
    return x;
}

/* Round to nearest, ties to even; overflow to inf, nan stays nan. */
FS_HOST_DEVICE static inline uint16_t util_half_from_float(float x)
{
    uint32_t f;
    memcpy(&f, &x, sizeof f);
    const uint32_t sign = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                                     /* below the smallest normal half */
        if (a < 0x33000000u) return (uint16_t)sign;             /* below half the smallest subnormal */
        const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e; /* 14..24 */
        uint32_t q = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t h = ((a >> 13) - (112u << 10)), rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

#endif
