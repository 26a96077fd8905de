/*
 * clang_compat.h: forced into every core source of the fuzzing build
 * (-include, tests/fuzz/CMakeLists.txt), which clang compiles.
 *
 * The CPU trainer's 8x8 transpose (src/train/simd.h) uses GCC's
 * __builtin_shuffle with a mask vector, which clang lacks (its
 * __builtin_shufflevector wants constant indices). This is the same
 * selection, lane by lane: slower, and only the trainer uses it, which the
 * harnesses do not drive. The normal (gcc) build never sees this file.
 */
#ifndef FS_FUZZ_CLANG_COMPAT_H
#define FS_FUZZ_CLANG_COMPAT_H

#if defined(__clang__)
#define __builtin_shuffle(a, b, mask)                                                              \
    ({                                                                                             \
        __typeof__(a) fs_sh_a = (a), fs_sh_b = (b), fs_sh_r;                                       \
        const int fs_sh_n = (int)(sizeof fs_sh_a / sizeof fs_sh_a[0]);                             \
        for (int fs_sh_i = 0; fs_sh_i < fs_sh_n; fs_sh_i++) {                                      \
            int fs_sh_k = (int)(mask)[fs_sh_i] & (2 * fs_sh_n - 1);                                \
            fs_sh_r[fs_sh_i] = fs_sh_k < fs_sh_n ? fs_sh_a[fs_sh_k] : fs_sh_b[fs_sh_k - fs_sh_n];  \
        }                                                                                          \
        fs_sh_r;                                                                                   \
    })
#endif

#endif
