/*
 * fuzz_util.h: what the harnesses share. Each harness is one translation
 * unit, so the state here is per harness.
 *
 * Readers that only take a path get the input as a file in a folder of this
 * process's own under $TMPDIR (tests/fuzz/run points it at a folder it
 * removes, so a crash that skips the atexit cleanup leaves nothing behind).
 */
#ifndef FS_FUZZ_UTIL_H
#define FS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A broken invariant is a finding: abort so libFuzzer saves the input. */
#define FUZZ_REQUIRE(cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond);     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define FUZZ_MAX_FILES 8

static char fuzz_dir[4096];
static char fuzz_names[FUZZ_MAX_FILES][32];
static int fuzz_n_names;

static inline void fuzz_cleanup(void)
{
    char path[4200];
    for (int i = 0; i < fuzz_n_names; i++) {
        snprintf(path, sizeof path, "%s/%s", fuzz_dir, fuzz_names[i]);
        unlink(path);
    }
    rmdir(fuzz_dir);
}

/* This process's scratch folder, created on first use. */
static inline const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/foldsweep-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fuzz_dir)) {
            perror(fuzz_dir);
            abort();
        }
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

/* Writes p[0..n) to NAME in the scratch folder (replacing it); returns the
 * path, valid until the next call with the same name. */
static inline const char *fuzz_write_file(const char *name, const void *p, size_t n)
{
    static char paths[FUZZ_MAX_FILES][4200];
    int slot = -1;
    for (int i = 0; i < fuzz_n_names && slot < 0; i++)
        if (!strcmp(fuzz_names[i], name)) slot = i;
    if (slot < 0) {
        FUZZ_REQUIRE(fuzz_n_names < FUZZ_MAX_FILES && strlen(name) < sizeof fuzz_names[0]);
        slot = fuzz_n_names++;
        snprintf(fuzz_names[slot], sizeof fuzz_names[slot], "%s", name);
    }
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", fuzz_tmpdir(), name);
    FILE *f = fopen(paths[slot], "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(paths[slot]);
        abort();
    }
    return paths[slot];
}

/* A sink for the text writers the harnesses drive (their output is not
 * checked, only that writing it is memory-safe). */
static inline FILE *fuzz_null(void)
{
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    FUZZ_REQUIRE(f != NULL);
    return f;
}

/* The input as a NUL-terminated string (text APIs); caller frees. */
static inline char *fuzz_cstr(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    FUZZ_REQUIRE(s != NULL);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

#endif
