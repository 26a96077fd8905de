/*
 * names.c: the file names of per-protein predictions (`predict -o DIR/`).
 * Two proteins of one run must never share a file: ids repeat (">x" twice)
 * and distinct ids can map to one name ("a/b" and "a_b", since an id is not
 * a path), and the second file would silently replace the first. Every
 * name given out in a run is kept in a hash set; a taken one gets "~2",
 * "~3", ... until it is free.
 */
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"

static uint64_t name_hash(const char *s) { return fs_fnv1a64(s, strlen(s), FS_FNV_OFFSET); }

static int names_has(const FsNameSet *s, const char *name)
{
    if (!s->cap) return 0;
    for (size_t i = name_hash(name) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slot[i]) return 0;
        if (!strcmp(s->slot[i], name)) return 1;
    }
}

static void names_put(FsNameSet *s, char *name);

static void names_grow(FsNameSet *s)
{
    char **old = s->slot;
    size_t old_cap = s->cap;
    s->cap = old_cap ? old_cap * 2 : 64;
    s->slot = fs_calloc(s->cap, sizeof *s->slot);
    s->n = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) names_put(s, old[i]);
    free(old);
}

static void names_put(FsNameSet *s, char *name)
{
    if (2 * (s->n + 1) > s->cap) names_grow(s);
    size_t i = name_hash(name) & (s->cap - 1);
    while (s->slot[i]) i = (i + 1) & (s->cap - 1);
    s->slot[i] = name;
    s->n++;
}

int predict_file_name(FsNameSet *s, const char *id, char *out, size_t n)
{
    char base[200];
    FS_ASSERT(n >= sizeof base + 12); /* room for "~N": a truncated name could never become free */
    snprintf(base, sizeof base, "%s", id);
    for (char *c = base; *c; c++)
        if (*c == '/' || *c == '\\') *c = '_'; /* an id is not a path */
    snprintf(out, n, "%s", base);
    for (unsigned k = 2; names_has(s, out); k++) snprintf(out, n, "%s~%u", base, k);
    names_put(s, fs_strdup(out));
    return strcmp(out, base) != 0;
}

void predict_names_free(FsNameSet *s)
{
    for (size_t i = 0; i < s->cap; i++) free(s->slot[i]);
    free(s->slot);
    memset(s, 0, sizeof *s);
}
