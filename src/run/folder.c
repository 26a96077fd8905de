/*
 * folder: the run folder's files other than the journal: creating it, the
 * canonical sweep that guards it, atomic whole-file writes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/state.h"

int run_mkdir_p(const char *dir, FsErr *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return fs_err_set(err, "%s: path too long", dir), -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return fs_err_set(err, "%s: cannot create folder: %s", buf, strerror(errno)), -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return fs_err_set(err, "%s: cannot create folder: %s", buf, strerror(errno)), -1;
    return 0;
}

char *run_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, k;
    char *s = fs_malloc(cap);
    while ((k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) s = fs_realloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = 0;
    return s;
}

int run_write_file_atomic(const char *path, const char *text, FsErr *err)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return fs_err_set(err, "%s: cannot write: %s", tmp, strerror(errno)), -1;
    int ok = fputs(text, f) >= 0;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) return fs_err_set(err, "%s: cannot write: %s", path, strerror(errno)), -1;
    return 0;
}

int run_folder_claim(const char *dir, const FsSweep *sw, FsErr *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    char *old = run_read_file(path);
    if (!old) return run_write_file_atomic(path, sw->canonical, err);
    char diff[2048];
    int n = sweep_diff(old, sw->canonical, diff, sizeof diff);
    free(old);
    if (n > 0) {
        fs_err_set(err,
                   "%s holds a different sweep (%d difference%s); use another --out folder, or rerun the "
                   "sweep it holds:\n%s",
                   dir, n, n == 1 ? "" : "s", diff);
        return -1;
    }
    return 0;
}
