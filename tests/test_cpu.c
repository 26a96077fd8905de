/*
 * test_cpu: the check that a binary built for one CPU (-march=native, or
 * FOLDSWEEP_MARCH) refuses, in one line and with exit 1, to start on a CPU
 * without the extensions it uses, instead of dying of SIGILL (src/util/cpu.c).
 * fs_cpu_missing is tested with made-up feature lists; the binary is run
 * with FOLDSWEEP_TEST_CPU_MISSING pretending one of its build's features
 * is absent, which is what a compute node older than the build machine
 * looks like to it.
 */
#include "test_proc.h"
#include "util/util.h"

static const char *absent_list;

/* A CPU that has everything except the names in absent_list. */
static int fake_has(const char *feature)
{
    size_t n = strlen(feature);
    for (const char *p = absent_list; p && (p = strstr(p, feature)); p += n)
        if ((p == absent_list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return 0;
    return 1;
}

static void test_missing(void)
{
    char out[64];
    absent_list = "avx512f avx512bw";
    CHECK(fs_cpu_missing(" sse4.2 avx avx2 fma", fake_has, out, sizeof out) == 0 && !strcmp(out, ""));
    CHECK(fs_cpu_missing(" avx2 avx512f fma avx512bw", fake_has, out, sizeof out) == 2);
    CHECK(!strcmp(out, "avx512f avx512bw"));
    CHECK(fs_cpu_missing("", fake_has, out, sizeof out) == 0 && !strcmp(out, ""));
    CHECK(fs_cpu_missing(NULL, fake_has, out, sizeof out) == 0);
    absent_list = "avx2";
    CHECK(fs_cpu_missing("  avx2  avx512f ", fake_has, out, sizeof out) == 1 && !strcmp(out, "avx2"));
    /* "avx" is not "avx2" (whole names only). */
    CHECK(fs_cpu_missing(" avx", fake_has, out, sizeof out) == 0);
    /* A small buffer is cut, the count stays right. */
    absent_list = "sse3 ssse3 sse4.1 sse4.2 avx";
    char tiny[8];
    CHECK(fs_cpu_missing(" sse3 ssse3 sse4.1 sse4.2 avx", fake_has, tiny, sizeof tiny) == 5);
    CHECK(strlen(tiny) < sizeof tiny);
    /* The build machine runs its own build: every recorded feature is here. */
    CHECK_MSG(fs_cpu_missing(fs_cpu_built, fs_cpu_has, out, sizeof out) == 0, "missing: %s", out);
    /* Names this build cannot test for never refuse a start. */
    CHECK(fs_cpu_has("no-such-extension") == 1);
}

static void test_binary(void)
{
    char first[32] = "";
    sscanf(fs_cpu_built, "%31s", first);
    printf("this build uses:%s\n", fs_cpu_built[0] ? fs_cpu_built : " (nothing past the baseline)");
    CHECK(tp_run("--version") == 0);
    if (!first[0]) {
        printf("note: built for the baseline CPU (FOLDSWEEP_NATIVE=OFF or not x86): nothing to refuse\n");
        return;
    }
    /* A CPU without the build's first extension: one line, exit 1, and
     * nothing of the command runs (no output, no usage error). */
    printf("FOLDSWEEP_TEST_CPU_MISSING=%s\n", first);
    setenv("FOLDSWEEP_TEST_CPU_MISSING", first, 1);
    CHECK(tp_run("--version") == 1);
    CHECK(out_text[0] == '\0');
    CHECK(tp_run("plan /nonexistent.yaml") == 1);
    unsetenv("FOLDSWEEP_TEST_CPU_MISSING");
    CHECK(out_text[0] == '\0');
    CHECK(tp_count(err_text, "\n") == 1); /* one line */
    char want[64];
    snprintf(want, sizeof want, "this CPU lacks %s,", first);
    CHECK_CONTAINS(err_text, want);
    CHECK_CONTAINS(err_text, "-DFOLDSWEEP_NATIVE=OFF");
    CHECK(strstr(err_text, "SIGILL") == NULL && strstr(err_text, "Illegal") == NULL);
}

int main(void)
{
    test_missing();
    test_binary();
    return test_finish();
}
