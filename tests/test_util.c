/*
 * test_util: the util module's text and folder helpers. fs_format_float
 * writes every float setting that trial ids hash (issue #16 item 5), so it
 * must give the shortest text that reads back as the same float, for any
 * float; fs_mkdir_p is the program's one mkdir -p.
 */
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "util/util.h"

static void check_text(float v, const char *want)
{
    char buf[FS_FLOAT_TEXT];
    fs_format_float(buf, sizeof buf, v);
    CHECK_MSG(!strcmp(buf, want), "%.9g gives \"%s\", expected \"%s\"", (double)v, buf, want);
}

/* v's text reads back as v, and no text with fewer digits does. */
static int round_trips_shortest(float v)
{
    char buf[FS_FLOAT_TEXT], shorter[32];
    fs_format_float(buf, sizeof buf, v);
    if (strtof(buf, NULL) != v || (v == 0 && signbit(strtof(buf, NULL)) != signbit(v))) return 0;
    for (int p = 1; p <= 9; p++) {
        snprintf(shorter, sizeof shorter, "%.*g", p, (double)v);
        if (strtof(shorter, NULL) == v) return !strcmp(shorter, buf); /* the first that reads back */
    }
    return 0;
}

static void test_format_float(void)
{
    /* What %.9g of the float through double gave before: drop0.300000012,
     * beta1 0.899999976, lr 0.00100000005. */
    check_text(0.3f, "0.3");
    check_text(0.9f, "0.9");
    check_text(0.999f, "0.999");
    check_text(1e-3f, "0.001");
    check_text(1e-7f, "1e-07");
    check_text(0.01f, "0.01");
    volatile float a = 0.1f, b = 0.2f; /* float sum, not folded at double precision */
    check_text(a + b, "0.3");          /* 0.1f + 0.2f is exactly 0.3f */
    check_text(0.0f, "0");
    check_text(-0.0f, "-0");
    check_text(1.0f, "1");
    check_text(-2.5f, "-2.5");
    check_text(1e30f, "1e+30");
    check_text(FLT_MAX, "3.4028235e+38");
    check_text(FLT_MIN, "1.1754944e-38");
    check_text(FLT_TRUE_MIN, "1e-45"); /* the smallest denormal */
    check_text(1e-40f, "1e-40");       /* a denormal */
    check_text(1.0f / 3.0f, "0.33333334");
    check_text(NAN, "nan");
    check_text(INFINITY, "inf");
    check_text(-INFINITY, "-inf");
    /* A small buffer is cut, never overrun. */
    char small[4] = "abc"; /* overwritten: the cut result must replace it */
    fs_format_float(small, sizeof small, 0.125f);
    CHECK(!strcmp(small, "0.1"));
    /* fs_float_text: each use has its own buffer. */
    char two[64];
    snprintf(two, sizeof two, "%s %s", fs_float_text(0.3f), fs_float_text(0.25f));
    CHECK(!strcmp(two, "0.3 0.25"));

    /* Every float reads back exactly, and with the fewest digits: random
     * bit patterns (every exponent, denormals included), the extremes. */
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int bad = 0, n = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)(fs_splitmix64(&s) >> 32);
        float v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v)) continue;
        n++;
        if (!round_trips_shortest(v) && bad++ < 5) fprintf(stderr, "not shortest or not exact: %.9g\n", (double)v);
    }
    for (uint32_t bits = 0; bits < 64; bits++) { /* the smallest denormals, both signs */
        float v;
        uint32_t w = bits | (bits & 1u) << 31;
        memcpy(&v, &w, sizeof v);
        n++;
        if (!round_trips_shortest(v) && bad++ < 5) fprintf(stderr, "not shortest or not exact: %.9g\n", (double)v);
    }
    CHECK_MSG(bad == 0, "%d of %d floats", bad, n);
    CHECK(n > 190000);
}

static void test_mkdir_p(void)
{
    char base[] = "/tmp/fs_util_XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char path[512], file[256];
    FsErr err = {0};
    snprintf(path, sizeof path, "%s/a/b/c", base);
    CHECK(fs_mkdir_p(path, &err) == 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(fs_mkdir_p(path, &err) == 0); /* existing: fine */
    snprintf(path, sizeof path, "%s/a/b/c/", base);
    CHECK(fs_mkdir_p(path, &err) == 0); /* a trailing slash */
    /* A file in the way is an error naming it. */
    snprintf(file, sizeof file, "%s/a/f", base);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK(fs_mkdir_p(file, &err) == -1 && err.set);
    CHECK_CONTAINS(err.msg, "not a folder");
    FsErr err2 = {0};
    snprintf(path, sizeof path, "%s/sub", file);
    CHECK(fs_mkdir_p(path, &err2) == -1);
    CHECK_CONTAINS(err2.msg, "cannot create the folder");
    /* Relative paths work from the current folder. */
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(base) == 0);
    FsErr err3 = {0};
    CHECK(fs_mkdir_p("rel/x", &err3) == 0);
    CHECK(stat("rel/x", &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(chdir(cwd) == 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
}

/* The program's name in hints: as run (a path, quoted for the shell), else
 * foldsweep; a path too long to hold whole leaves the name as it was, never
 * a cut word with its quote open. */
static void test_program(void)
{
    CHECK(!strcmp(fs_program(), "foldsweep"));
    fs_program_set("foldsweep"); /* found on PATH */
    CHECK(!strcmp(fs_program(), "foldsweep"));
    fs_program_set("my builds/foldsweep");
    CHECK_MSG(!strcmp(fs_program(), "'my builds/foldsweep'"), "%s", fs_program());
    char *long_path = malloc(3 * FS_PATH_MAX);
    memset(long_path, 'a', 3 * FS_PATH_MAX - 1);
    long_path[0] = '\'', long_path[5] = '/', long_path[3 * FS_PATH_MAX - 1] = '\0';
    fs_program_set(long_path);
    CHECK_MSG(!strcmp(fs_program(), "'my builds/foldsweep'"), "%.80s", fs_program());
    free(long_path);
}

int main(void)
{
    test_program();
    test_format_float();
    test_mkdir_p();
    return test_finish();
}
