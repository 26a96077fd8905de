/*
 * cpu_built.c: the instruction-set extensions the build's compiler flags
 * enabled (-march=native, FOLDSWEEP_MARCH, or CFLAGS), read from the
 * compiler's predefined macros, as __builtin_cpu_supports names for
 * fs_cpu_gate (cpu.c). Compiled with the same flags as the trainer, so
 * the list is what the trainer's code may use. Data only: no code here
 * runs, so these flags are safe in it.
 */
#include "util/util.h"

/* clang-format off */
const char fs_cpu_built[] = ""
#if defined(__x86_64__) || defined(__i386__)
#ifdef __SSE3__
    " sse3"
#endif
#ifdef __SSSE3__
    " ssse3"
#endif
#ifdef __SSE4_1__
    " sse4.1"
#endif
#ifdef __SSE4_2__
    " sse4.2"
#endif
#ifdef __POPCNT__
    " popcnt"
#endif
#ifdef __AVX__
    " avx"
#endif
#ifdef __AVX2__
    " avx2"
#endif
#ifdef __FMA__
    " fma"
#endif
#ifdef __BMI__
    " bmi"
#endif
#ifdef __BMI2__
    " bmi2"
#endif
#ifdef __AVX512F__
    " avx512f"
#endif
#ifdef __AVX512BW__
    " avx512bw"
#endif
#ifdef __AVX512CD__
    " avx512cd"
#endif
#ifdef __AVX512DQ__
    " avx512dq"
#endif
#ifdef __AVX512VL__
    " avx512vl"
#endif
#ifdef __AVX512VNNI__
    " avx512vnni"
#endif
#endif
    ;
/* clang-format on */
