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

/* A source file's text, handed to a check: returns the violations it
 * printed. */
typedef int (*TtVisit)(void *ctx, const char *rel, const char *text);

/* Every .c, .h and .cu file of folder dir (from the root) and of its
 * subfolders, in name order, but skip (a path from the root, or NULL), read
 * and given to visit. Returns the violations (an unreadable file is one,
 * printed to out). */
static inline int tt_walk_level(const char *root, const char *dir, const char *skip, TtVisit visit, void *ctx,
                                FILE *out, int level)
{
    static char names[8][512][ITEM]; /* one list per level of folders */
    if (level >= 8) return 0;
    char (*list)[ITEM] = names[level];
    int n = tt_list(root, dir, list, 512), bad = 0;
    for (int i = 0; i < n; i++) {
        char rel[1024], path[4096];
        snprintf(rel, sizeof rel, "%.800s/%.160s", dir, list[i]);
        snprintf(path, sizeof path, "%.2000s/%s", root, rel);
        if (tt_is_dir(path)) {
            bad += tt_walk_level(root, rel, skip, visit, ctx, out, level + 1);
        } else if ((!skip || strcmp(rel, skip)) &&
                   (tt_has_suffix(rel, ".c") || tt_has_suffix(rel, ".h") || tt_has_suffix(rel, ".cu"))) {
            char *text = tp_read_file(path, NULL);
            if (!text) {
                fprintf(out, "%s: cannot read\n", rel);
                bad++;
                continue;
            }
            bad += visit(ctx, rel, text);
            free(text);
        }
    }
    return bad;
}

static inline int tt_walk(const char *root, const char *dir, const char *skip, TtVisit visit, void *ctx, FILE *out)
{
    return tt_walk_level(root, dir, skip, visit, ctx, out, 0);
}

#endif
