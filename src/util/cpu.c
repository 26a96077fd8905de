/*
 * cpu.c: whether this CPU has the instruction-set extensions the build
 * used. A binary built with -march=native (the default, FOLDSWEEP_NATIVE)
 * on one machine and started on an older one (a cluster's login node
 * against its compute nodes, or the reverse) would otherwise die of
 * SIGILL somewhere in the trainer. main.c calls fs_cpu_gate from a
 * constructor, before main; it says in one line what is missing and how to
 * build for such a machine, and exits 1.
 *
 * This file is compiled for the baseline of its architecture (CMakeLists.txt
 * overrides -march for it): everything that runs before the check passes
 * must run on any CPU of the architecture. cpu_built.c, compiled with the
 * build's own flags, records which extensions those flags enabled.
 */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fs_cpu_missing(const char *built, int (*has)(const char *feature), char *out, size_t n)
{
    int missing = 0;
    size_t k = 0;
    if (n) out[0] = '\0';
    for (const char *p = built; p && *p;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (!len) break;
        char name[32];
        if (len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            if (!has(name)) {
                missing++;
                if (k < n) k += (size_t)snprintf(out + k, n - k, "%s%s", k ? " " : "", name);
            }
        }
        p += len;
    }
    return missing;
}

/* The test hook CPU_MISSING="avx2 fma" (util/faults.c) makes the check
 * treat those as absent (tests of the refusal on a machine that has them all). */
static int pretend_missing(const char *feature)
{
    const char *list = fs_test_fault("CPU_MISSING");
    size_t n = strlen(feature);
    for (const char *p = list; p && (p = strstr(p, feature)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return 1;
    return 0;
}

int fs_cpu_has(const char *feature)
{
    if (pretend_missing(feature)) return 0;
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    /* __builtin_cpu_supports wants a string literal: one test per name
     * cpu_built.c can record. */
    __builtin_cpu_init();
#define FS_CPU_TRY(s) if (!strcmp(feature, s)) return __builtin_cpu_supports(s) != 0
    FS_CPU_TRY("sse3");
    FS_CPU_TRY("ssse3");
    FS_CPU_TRY("sse4.1");
    FS_CPU_TRY("sse4.2");
    FS_CPU_TRY("popcnt");
    FS_CPU_TRY("avx");
    FS_CPU_TRY("avx2");
    FS_CPU_TRY("fma");
    FS_CPU_TRY("bmi");
    FS_CPU_TRY("bmi2");
    FS_CPU_TRY("avx512f");
    FS_CPU_TRY("avx512bw");
    FS_CPU_TRY("avx512cd");
    FS_CPU_TRY("avx512dq");
    FS_CPU_TRY("avx512vl");
    FS_CPU_TRY("avx512vnni");
#undef FS_CPU_TRY
#endif
    return 1; /* a name this build cannot test for: not a reason to refuse */
}

void fs_cpu_gate(void)
{
    char missing[256];
    if (!fs_cpu_missing(fs_cpu_built, fs_cpu_has, missing, sizeof missing)) return;
    /* One line on stderr, then _exit: nothing compiled for the build's CPU
     * (atexit handlers, stdio flushes of other streams) runs. */
    char line[768];
    int len = snprintf(line, sizeof line,
                       "foldsweep: this CPU lacks %s, which this binary was compiled to use (built for:%s); "
                       "rebuild it on this machine, or for all the machines it runs on with "
                       "-DFOLDSWEEP_NATIVE=OFF or -DFOLDSWEEP_MARCH=<cpu> (README, \"Building for a cluster\")\n",
                       missing, fs_cpu_built);
    if (len > 0) {
        size_t n = (size_t)len < sizeof line ? (size_t)len : sizeof line - 1;
        ssize_t w = write(2, line, n);
        (void)w;
    }
    _exit(FS_EXIT_ERROR);
}
