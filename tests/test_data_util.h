/*
 * test_data_util.h: helpers shared by the data and prepare tests: a
 * private temp folder, small input files written into it, loading one
 * file, and checking that a bad input fails with the expected message.
 */
#ifndef FS_TEST_DATA_UTIL_H
#define FS_TEST_DATA_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "test.h"

static char td_dir[256];

/* The shared data folder's file, or NULL (the test skips) if absent. */
static inline const char *td_shared(const char *rel)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", FS_TEST_DATA_DIR, rel);
    return access(p, R_OK) == 0 ? p : NULL;
}

static inline void td_cleanup(void)
{
    if (!td_dir[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", td_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", td_dir);
    td_dir[0] = '\0';
}

static inline const char *td_tmpdir(void)
{
    if (!td_dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(td_dir, sizeof td_dir, "%s/fsdata.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(td_dir)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(td_cleanup);
    }
    return td_dir;
}

/* Path of name in the temp folder; lives until exit. */
static char *td_paths[1024];
static int td_n_paths;

static inline void td_free_paths(void)
{
    while (td_n_paths) free(td_paths[--td_n_paths]);
}

static inline const char *td_path(const char *name)
{
    if (td_n_paths == 0) atexit(td_free_paths);
    size_t dl = strlen(td_tmpdir());
    for (int i = 0; i < td_n_paths; i++)
        if (strcmp(td_paths[i] + dl + 1, name) == 0) return td_paths[i];
    if (td_n_paths == 1024) {
        fprintf(stderr, "td_path: too many paths\n");
        exit(1);
    }
    char *p = malloc(strlen(td_tmpdir()) + strlen(name) + 2);
    sprintf(p, "%s/%s", td_tmpdir(), name);
    return td_paths[td_n_paths++] = p;
}

static inline const char *td_write_bytes(const char *name, const void *data, size_t n)
{
    const char *p = td_path(name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        perror(p);
        exit(1);
    }
    return p;
}

static inline const char *td_write(const char *name, const char *text)
{
    return td_write_bytes(name, text, strlen(text));
}

static inline int td_load(FsDataset *ds, FsFormat fmt, const char *path, FsErr *err)
{
    const char *in[1] = {path};
    FsLoadSpec spec = {fmt, in, 1, NULL, NULL, NULL};
    memset(err, 0, sizeof *err);
    return data_load(ds, &spec, err);
}

/* Writes text to name, loads it as fmt and expects failure whose message
 * holds every one of the NULL-terminated substrings. */
static inline void td_expect_error_at(int line, FsFormat fmt, const char *name, const char *text,
                                      ...)
{
    FsDataset ds;
    FsErr err;
    const char *p = td_write(name, text);
    int rc = td_load(&ds, fmt, p, &err);
    CHECK_MSG(rc == -1, "line %d: %s loaded but should fail", line, name);
    if (rc == 0) {
        data_free(&ds);
        return;
    }
    CHECK_MSG(err.set, "line %d: no message", line);
    va_list ap;
    va_start(ap, text);
    for (const char *sub; (sub = va_arg(ap, const char *));)
        CHECK_MSG(strstr(err.msg, sub) != NULL, "line %d: \"%s\" lacks \"%s\"", line, err.msg, sub);
    va_end(ap);
}
#define td_expect_error(...) td_expect_error_at(__LINE__, __VA_ARGS__, (const char *)NULL)

#endif
