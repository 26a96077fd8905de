/*
 * layering_table.h: the table of docs/architecture.md's "Layering" section
 * (which module may use which), read for test_layering: a row per module,
 * in layer order, lowest first, with the files outside src/<module>/ that
 * belong to it and the modules and files it may use.
 */
#ifndef FS_LAYERING_TABLE_H
#define FS_LAYERING_TABLE_H

#include "test_tree.h"

#define MAX_ROWS 64
#define MAX_ITEMS 32

typedef struct {
    char module[ITEM];
    char files[MAX_ITEMS][ITEM]; /* files outside src/<module>/ that belong to it */
    int n_files;
    char allow[MAX_ITEMS][ITEM]; /* "m": m/m.h; "m/x.h": that file */
    int up[MAX_ITEMS];           /* written "(upward ...)" after it: a known edge up the layers */
    int n_allow;
    int line;
} Row;

typedef struct {
    Row row[MAX_ROWS];
    int n;
} Rules;

/* The `quoted` words of a table cell, in order; up[i] (if not NULL): the
 * word is followed by " (upward". */
static inline int cell_words(const char *cell, const char *end, char words[][ITEM], int *up, int max)
{
    int n = 0;
    for (const char *p = cell; p < end && (p = memchr(p, '`', (size_t)(end - p)));) {
        const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
        if (!q) break;
        if (n < max && q - p - 1 < ITEM) {
            memcpy(words[n], p + 1, (size_t)(q - p - 1));
            words[n][q - p - 1] = 0;
            if (up) up[n] = end - q > 8 && !strncmp(q + 1, " (upward", 8);
            n++;
        }
        p = q + 1;
    }
    return n;
}

/* The first table after the "## Layering" heading. 0, or -1 (printed). */
static inline int rules_read(const char *doc_path, Rules *r, FILE *out)
{
    memset(r, 0, sizeof *r);
    char *doc = tp_read_file(doc_path, NULL);
    if (!doc) return fprintf(out, "%s: cannot read\n", doc_path), -1;
    int line = 0, in_section = 0, in_table = 0;
    for (char *p = doc; *p;) {
        char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        line++;
        if (!strncmp(p, "## ", 3)) {
            if (in_section) break;
            in_section = !strncmp(p, "## Layering", 11);
        } else if (in_section && *p == '|') {
            in_table = 1;
            char *c1 = p + 1, *c2 = memchr(c1, '|', (size_t)(eol - c1));
            char *c3 = c2 ? memchr(c2 + 1, '|', (size_t)(eol - c2 - 1)) : NULL;
            if (!c3) c3 = eol;
            char first[MAX_ITEMS][ITEM];
            int nf = c2 ? cell_words(c1, c2, first, NULL, MAX_ITEMS) : 0;
            if (nf > 0 && r->n < MAX_ROWS) { /* not the heading or the |---| line */
                Row *w = &r->row[r->n++];
                snprintf(w->module, sizeof w->module, "%s", first[0]);
                for (int i = 1; i < nf; i++) snprintf(w->files[w->n_files++], ITEM, "%s", first[i]);
                w->n_allow = cell_words(c2 + 1, c3, w->allow, w->up, MAX_ITEMS);
                w->line = line;
            }
        } else if (in_table) {
            break;
        }
        p = *eol ? eol + 1 : eol;
    }
    free(doc);
    if (r->n == 0) return fprintf(out, "%s: no table under a \"## Layering\" heading\n", doc_path), -1;
    return 0;
}

static inline const Row *row_of(const Rules *r, const char *module)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->row[i].module, module)) return &r->row[i];
    return NULL;
}

/* The row a file outside src/<module>/ belongs to (a path from the root). */
static inline const Row *row_of_file(const Rules *r, const char *rel)
{
    for (int i = 0; i < r->n; i++)
        for (int k = 0; k < r->row[i].n_files; k++)
            if (!strcmp(r->row[i].files[k], rel)) return &r->row[i];
    return NULL;
}

static inline void allowed_list(const Row *w, char *out, size_t n)
{
    out[0] = 0;
    for (int i = 0; i < w->n_allow; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? ", " : "", w->allow[i]);
    if (!w->n_allow) snprintf(out, n, "nothing");
}

/* The row of a source file (a path from the root): src/<module>/... at any
 * depth is that module's; another file is the row's that names it. */
static inline const Row *row_of_source(const Rules *r, const char *rel)
{
    const char *slash = !strncmp(rel, "src/", 4) ? strchr(rel + 4, '/') : NULL;
    if (!slash) return row_of_file(r, rel);
    char mod[ITEM];
    snprintf(mod, sizeof mod, "%.*s", (int)(slash - rel - 4), rel + 4);
    return row_of(r, mod);
}

/* Whether row w may use module mod: its row names mod or a file of mod. */
static inline int row_allows(const Row *w, const char *mod)
{
    size_t n = strlen(mod);
    for (int i = 0; i < w->n_allow; i++)
        if (!strncmp(w->allow[i], mod, n) && (w->allow[i][n] == 0 || w->allow[i][n] == '/')) return 1;
    return 0;
}

#endif
