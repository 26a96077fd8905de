/*
 * layering_names.h: test_layering's check of the names a file uses, beside
 * its check of the `#include` lines. An include check alone misses a file
 * that reaches another module's functions through a header that happens to
 * include that module's (cli/plan.c called model_compile through
 * sweep/sweep.h), or through a declaration written by hand.
 *
 * How: the linker's view. `nm -A -P -g` lists, for each object file of the
 * build, the external names it defines and the ones it uses (undefined in
 * it); the object that defines a name gives the module that owns it, and a
 * use of another module's name must follow an edge of the table (the row
 * names that module, or a file of it). Why nm rather than a parse of the
 * headers' declarations: it reports what the compiler really emitted
 * (calls through macros, a function declared by hand, a global variable,
 * code under #if of this configuration) with no C parser to keep in step
 * with the code, and it tells a definition from a mere declaration. What it
 * cannot see is what leaves no external symbol: types, macros, static
 * inline functions; those come from a header, which the include check
 * covers where it is included directly.
 *
 * The objects are the library's and main.c's as CMake lists them
 * ($<TARGET_OBJECTS>, tests/CMakeLists.txt). CMake names each object after
 * its source (.../CMakeFiles/TARGET.dir/src/cli/plan.c.o), which is how an
 * object's module is known: an object named otherwise, and a .c file of
 * src/ without an object, fail the check rather than go unchecked. Names
 * defined by the CUDA stand-in (src/gpu/emulate/, built only with
 * FOLDSWEEP_CUDA=EMULATE) stand for the CUDA runtime's, which belong to no
 * module in a CUDA build (libcudart's); the stand-in's own uses are gpu's.
 */
#ifndef FS_LAYERING_NAMES_H
#define FS_LAYERING_NAMES_H

#include "layering_table.h"

#define CUDA_STANDIN "src/gpu/emulate/"
#define MAX_SOURCES 2048

typedef struct {
    char rel[2 * ITEM]; /* from the root */
    const Row *row;     /* NULL: a module the table lacks (the include check says so) */
} NameSource;

typedef struct {
    const char *name;
    int src;
} NameRef;

/* The source an object was built from: the path after CMake's
 * ".../CMakeFiles/TARGET.dir/", less ".o" or ".obj", a file of the tree.
 * 0, or -1. */
static inline int object_source(const char *root, const char *obj, size_t n, char *rel, size_t rel_n)
{
    const char *cm = NULL, *end = obj + n;
    for (const char *p = obj; p + 11 <= end; p++)
        if (!strncmp(p, "CMakeFiles/", 11) && (p == obj || p[-1] == '/')) cm = p + 11;
    const char *d = cm ? strstr(cm, ".dir/") : NULL;
    if (!d || d >= end) return -1;
    d += 5;
    size_t len = (size_t)(end - d);
    if (len > 2 && !strncmp(end - 2, ".o", 2))
        len -= 2;
    else if (len > 4 && !strncmp(end - 4, ".obj", 4))
        len -= 4;
    else
        return -1;
    if (len >= rel_n) return -1;
    snprintf(rel, rel_n, "%.*s", (int)len, d);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return tt_exists(path) && !tt_is_dir(path) ? 0 : -1;
}

static inline int source_index(const NameSource *src, int n, const char *rel)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(src[i].rel, rel)) return i;
    return -1;
}

/* Every .c file of src/ and of src/<module>/ has an object: one the build
 * does not list would go unchecked. Returns the missing (printed). */
static inline int names_coverage(const char *root, const NameSource *src, int n, FILE *out)
{
    static char dirs[256][ITEM], files[1024][ITEM];
    int bad = 0, nd = tt_list(root, "src", dirs, 256);
    for (int i = -1; i < nd; i++) {
        char dir[ITEM + 8], path[4096];
        if (i < 0)
            snprintf(dir, sizeof dir, "src");
        else
            snprintf(dir, sizeof dir, "src/%s", dirs[i]);
        snprintf(path, sizeof path, "%s/%s", root, dir);
        if (!tt_is_dir(path)) continue;
        int nf = tt_list(root, dir, files, 1024);
        for (int k = 0; k < nf; k++) {
            char rel[2 * ITEM + 16];
            snprintf(rel, sizeof rel, "%s/%.*s", dir, ITEM - 1, files[k]);
            if (tt_has_suffix(rel, ".c") && source_index(src, n, rel) < 0)
                bad++, fprintf(out, "%s: no object file of it in the build's list: its names go unchecked\n", rel);
        }
    }
    return bad;
}

static inline int ref_by_name(const void *a, const void *b)
{
    return strcmp(((const NameRef *)a)->name, ((const NameRef *)b)->name);
}

/* nm's lines, "OBJECT: NAME TYPE [VALUE SIZE]" (text is cut in place),
 * into the names defined (type a capital letter but U) and used (U, or w
 * and v: weak and undefined). */
static inline void names_read(const char *root, char *text, NameSource *src, int n_src, NameRef **defs, int *n_defs,
                              NameRef **uses, int *n_uses)
{
    int cap_d = 0, cap_u = 0, last = -1;
    const char *last_obj = "";
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = 0;
        char *colon = strstr(p, ": ");
        char rel[2 * ITEM];
        if (colon && strncmp(p, last_obj, (size_t)(colon - p) + 1)) { /* another object */
            last = object_source(root, p, (size_t)(colon - p), rel, sizeof rel) ? -1 : source_index(src, n_src, rel);
            last_obj = p;
        }
        char *name = colon ? colon + 2 : NULL, *type = name ? strchr(name, ' ') : NULL;
        if (type && last >= 0) {
            *type++ = 0;
            while (*type == ' ') type++;
            int def = *type >= 'A' && *type <= 'Z' && *type != 'U', use = *type == 'U' || *type == 'w' || *type == 'v';
            if (def && !strncmp(src[last].rel, CUDA_STANDIN, strlen(CUDA_STANDIN))) def = 0;
            if (def && *n_defs == cap_d) *defs = (NameRef *)realloc(*defs, sizeof(NameRef) * (cap_d = 2 * cap_d + 256));
            if (use && *n_uses == cap_u) *uses = (NameRef *)realloc(*uses, sizeof(NameRef) * (cap_u = 2 * cap_u + 256));
            if (def) (*defs)[(*n_defs)++] = (NameRef){name, last};
            if (use) (*uses)[(*n_uses)++] = (NameRef){name, last};
        }
        p = eol ? eol + 1 : p + strlen(p);
    }
    if (*n_defs) qsort(*defs, (size_t)*n_defs, sizeof(NameRef), ref_by_name);
}

/* A use of another module's name must follow an edge of the table. 1 (a
 * violation, printed), or 0; *crossing: whether it is another module's. */
static inline int name_use_check(const NameSource *src, const NameRef *u, const NameRef *defs, int n_defs,
                                 int *crossing, FILE *out)
{
    const Row *w = src[u->src].row;
    *crossing = 0;
    const NameRef *d =
        w && n_defs ? (const NameRef *)bsearch(u, defs, (size_t)n_defs, sizeof *defs, ref_by_name) : NULL;
    if (!d) return 0; /* the C library's, or a file the table does not place */
    while (d > defs && !strcmp(d[-1].name, u->name)) d--;
    for (const NameRef *e = d; e < defs + n_defs && !strcmp(e->name, u->name); e++)
        if (src[e->src].row == w) return 0; /* defined in its own module too */
    const Row *to = src[d->src].row;
    if (!to) return 0;
    *crossing = 1;
    if (row_allows(w, to->module)) return 0;
    char list[2048];
    allowed_list(w, list, sizeof list);
    fprintf(out, "%s: %s uses %s (%s): %s -> %s is not allowed (%s may use %s)\n", src[u->src].rel, w->module,
            u->name, src[d->src].rel, w->module, to->module, w->module, list);
    return 1;
}

/* The check. objects: their paths, one a line; listing: nm -A -P -g's
 * output for them; *crossings: the uses of another module's names seen.
 * Returns the violations (printed). */
static inline int names_check(const char *root, const Rules *r, const char *objects, const char *listing,
                              int *crossings, FILE *out)
{
    static NameSource src[MAX_SOURCES];
    int n_src = 0, bad = 0;
    *crossings = 0;
    for (const char *p = objects; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        char rel[2 * ITEM];
        if (eol > p && object_source(root, p, (size_t)(eol - p), rel, sizeof rel) != 0) {
            bad++, fprintf(out, "%.*s: not an object CMake named after a file of this tree (.../CMakeFiles/TARGET.dir/"
                                "FILE.o): its names go unchecked\n",
                           (int)(eol - p), p);
        } else if (eol > p && n_src < MAX_SOURCES && source_index(src, n_src, rel) < 0) {
            snprintf(src[n_src].rel, sizeof src[n_src].rel, "%s", rel);
            src[n_src++].row = row_of_source(r, rel);
        }
        p = *eol ? eol + 1 : eol;
    }
    bad += names_coverage(root, src, n_src, out);
    char *text = strdup(listing);
    NameRef *defs = NULL, *uses = NULL;
    int n_defs = 0, n_uses = 0;
    names_read(root, text, src, n_src, &defs, &n_defs, &uses, &n_uses);
    for (int i = 0; i < n_uses; i++) {
        int crossing;
        bad += name_use_check(src, &uses[i], defs, n_defs, &crossing, out);
        *crossings += crossing;
    }
    free(defs);
    free(uses);
    free(text);
    return bad;
}

#endif
