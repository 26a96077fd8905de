/*
 * test_tree.h: the repository's own files, for the tests that check the
 * code itself (test_layering: which module uses which; test_function_size:
 * how long a function may be): listing a folder, and writing a made-up tree
 * on which such a check must fail where it should. Functions are static
 * inline, as in test_proc.h.
 */
#ifndef FS_TEST_TREE_H
#define FS_TEST_TREE_H

#include <dirent.h>
#include <sys/stat.h>

#include "test_proc.h"

#define ITEM 160 /* a file or module name, a word of the layering table */

static inline int tt_is_dir(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

static inline int tt_exists(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0;
}

static inline int tt_has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static inline int tt_by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* The entries of folder dir (from the root), files and folders, sorted by
 * name; hidden ones left out. */
static inline int tt_list(const char *root, const char *dir, char names[][ITEM], int max)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || n >= max || strlen(e->d_name) >= ITEM) continue;
        snprintf(names[n++], ITEM, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, ITEM, tt_by_name);
    return n;
}

/* Writes text to root/rel, making its folders. */
static inline void tt_put(const char *root, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = 0;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    CHECK(system(cmd) == 0);
    *slash = '/';
    tp_write_text(path, text);
}

static inline void tt_remove(const char *root)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

#endif
