/*
 * test_layering: which module may include which (docs/architecture.md,
 * "Layering"). Reads that section's table and checks every
 * `#include "module/..."` in src/ and kernels/ against it: a module includes
 * its own headers, and of another module only the public header (m/m.h)
 * or a file its row names, and only of the modules on its row. Rows are in
 * layer order, lowest first, so an edge to a later row is a cycle: the
 * table must mark it "(upward". Each violation is printed as FILE:LINE with
 * the edge; so is a module or file the table does not place, a table entry
 * that names nothing and an unmarked edge up the layers. The checker is
 * first run on a small made-up tree with one violation of each kind, so
 * that it is known to fail when it should.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "test_proc.h"

#define MAX_ROWS 64
#define MAX_ITEMS 32
#define ITEM 160

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

static int is_dir(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

static int exists(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0;
}

/* The `quoted` words of a table cell, in order; up[i] (if not NULL): the
 * word is followed by " (upward". */
static int cell_words(const char *cell, const char *end, char words[][ITEM], int *up, int max)
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
static int rules_read(const char *doc_path, Rules *r, FILE *out)
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

static const Row *row_of(const Rules *r, const char *module)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->row[i].module, module)) return &r->row[i];
    return NULL;
}

/* The row a file outside src/<module>/ belongs to (a path from the root). */
static const Row *row_of_file(const Rules *r, const char *rel)
{
    for (int i = 0; i < r->n; i++)
        for (int k = 0; k < r->row[i].n_files; k++)
            if (!strcmp(r->row[i].files[k], rel)) return &r->row[i];
    return NULL;
}

static void allowed_list(const Row *w, char *out, size_t n)
{
    out[0] = 0;
    for (int i = 0; i < w->n_allow; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? ", " : "", w->allow[i]);
    if (!w->n_allow) snprintf(out, n, "nothing");
}

/* Every project include of the file (rel: its path from the root) by a
 * module of row w; returns the violations (printed). */
static int check_file(const char *root, const char *rel, const Rules *r, const Row *w, FILE *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *text = tp_read_file(path, NULL);
    if (!text) return fprintf(out, "%s: cannot read\n", rel), 1;
    int bad = 0, line = 0;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        line++;
        char *s = p;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '#') {
            s++;
            while (*s == ' ' || *s == '\t') s++;
            if (!strncmp(s, "include", 7)) {
                s += 7;
                while (*s == ' ' || *s == '\t') s++;
            } else {
                s = eol;
            }
        } else {
            s = eol;
        }
        char *q = *s == '"' ? memchr(s + 1, '"', (size_t)(eol - s - 1)) : NULL;
        if (q && q - s - 1 < ITEM) {
            char inc[ITEM];
            memcpy(inc, s + 1, (size_t)(q - s - 1));
            inc[q - s - 1] = 0;
            const char *t = inc; /* "../src/stop/stop.c" is stop/stop.c */
            while (!strncmp(t, "../", 3)) t += 3;
            if (!strncmp(t, "src/", 4)) t += 4;
            const char *slash = strchr(t, '/');
            char mod[ITEM];
            snprintf(mod, sizeof mod, "%.*s", slash ? (int)(slash - t) : 0, t);
            char pub[2 * ITEM + 4];
            snprintf(pub, sizeof pub, "%s/%s.h", mod, mod);
            int ok = !slash || !strcmp(mod, w->module); /* beside the file, or its own module */
            for (int i = 0; i < w->n_allow && !ok; i++)
                ok = !strcmp(w->allow[i], t) || (!strcmp(w->allow[i], mod) && !strcmp(t, pub));
            if (!ok) {
                char list[2048];
                allowed_list(w, list, sizeof list);
                int edge = 0;
                for (int i = 0; i < w->n_allow; i++) edge |= !strcmp(w->allow[i], mod);
                if (!row_of(r, mod))
                    fprintf(out, "%s:%d: %s includes %s: %s is not a module of the table\n", rel, line, w->module, t,
                            mod);
                else if (edge)
                    fprintf(out, "%s:%d: %s includes %s, private to %s (its public header is %s; %s may include %s)\n",
                            rel, line, w->module, t, mod, pub, w->module, list);
                else
                    fprintf(out, "%s:%d: %s includes %s: %s -> %s is not allowed (%s may include %s)\n", rel, line,
                            w->module, t, w->module, mod, w->module, list);
                bad++;
            }
        }
        p = *eol ? eol + 1 : eol;
    }
    free(text);
    return bad;
}

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Files of folder dir (from the root), sorted; the regular ones only. */
static int list_files(const char *root, const char *dir, char names[][ITEM], int max)
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
    qsort(names, (size_t)n, ITEM, by_name);
    return n;
}

/* The whole check of the tree at root. Returns the violations (each
 * printed to out), or -1 when the table cannot be read. */
static int layering_check(const char *root, FILE *out)
{
    static Rules r;
    static char mods[256][ITEM], files[1024][ITEM];
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/architecture.md", root);
    if (rules_read(path, &r, out) != 0) return -1;
    int bad = 0;
    /* Every entry of the table names something that exists. */
    for (int i = 0; i < r.n; i++) {
        const Row *w = &r.row[i];
        snprintf(path, sizeof path, "%s/src/%s", root, w->module);
        if (!is_dir(path) && !w->n_files)
            bad++, fprintf(out, "docs/architecture.md:%d: module %s: no src/%s/\n", w->line, w->module, w->module);
        for (int k = 0; k < w->n_files; k++) {
            snprintf(path, sizeof path, "%s/%s", root, w->files[k]);
            if (!exists(path))
                bad++, fprintf(out, "docs/architecture.md:%d: %s: no such file\n", w->line, w->files[k]);
        }
        for (int k = 0; k < w->n_allow; k++) {
            const char *a = w->allow[k];
            snprintf(path, sizeof path, "%s/src/%s", root, a);
            if (!strchr(a, '/') ? !row_of(&r, a) : !exists(path)) {
                bad++, fprintf(out, "docs/architecture.md:%d: %s may include %s, which is not %s\n", w->line,
                               w->module, a, strchr(a, '/') ? "a file under src/" : "a module of the table");
                continue;
            }
            char mod[ITEM];
            snprintf(mod, sizeof mod, "%.*s", (int)strcspn(a, "/"), a);
            const Row *to = row_of(&r, mod);
            if (to && to >= w && !w->up[k])
                bad++, fprintf(out,
                               "docs/architecture.md:%d: %s may include %s, which is not on an earlier row (rows are "
                               "in layer order, lowest first: this edge makes a cycle; write \"(upward: why)\" "
                               "after it if it is meant)\n",
                               w->line, w->module, a);
        }
    }
    /* src/<module>/ files, then files elsewhere (src/main.c, kernels/). */
    int nm = list_files(root, "src", mods, 256);
    for (int i = 0; i < nm; i++) {
        char rel[2 * ITEM + 8];
        snprintf(rel, sizeof rel, "src/%.*s", ITEM - 1, mods[i]);
        snprintf(path, sizeof path, "%s/%s", root, rel);
        if (!is_dir(path)) continue;
        const Row *w = row_of(&r, mods[i]);
        if (!w) {
            bad++, fprintf(out, "%s/: module %s is not in the table\n", rel, mods[i]);
            continue;
        }
        int nf = list_files(root, rel, files, 1024);
        for (int k = 0; k < nf; k++) {
            if (!has_suffix(files[k], ".c") && !has_suffix(files[k], ".h")) continue;
            char frel[3 * ITEM + 16];
            snprintf(frel, sizeof frel, "%s/%.*s", rel, ITEM - 1, files[k]);
            bad += check_file(root, frel, &r, w, out);
        }
    }
    const char *elsewhere[] = {"src", "kernels"};
    for (int e = 0; e < 2; e++) {
        int nf = list_files(root, elsewhere[e], files, 1024);
        for (int k = 0; k < nf; k++) {
            char frel[2 * ITEM + 16];
            snprintf(frel, sizeof frel, "%s/%.*s", elsewhere[e], ITEM - 1, files[k]);
            snprintf(path, sizeof path, "%s/%s", root, frel);
            if (is_dir(path)) continue;
            const Row *w = row_of_file(&r, frel);
            if (w)
                bad += check_file(root, frel, &r, w, out);
            else
                bad++, fprintf(out, "%s: belongs to no module of the table\n", frel);
        }
    }
    return bad;
}

/* ---------------------------------------------------------------------- */

static void put(const char *root, const char *rel, const char *text)
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

/* A made-up tree with one violation of each kind: the checker must name
 * each one, with its file and line, and nothing else. */
static void test_fixture(void)
{
    char root[512];
    tp_tmpdir(root, sizeof root, "layering");
    put(root, "docs/architecture.md",
        "# x\n\n## Modules\n\n| `c` | ignored |\n\n## Layering\n\n"
        "| module | may include |\n|---|---|\n"
        "| `a` | nothing |\n"
        "| `b` (and `kernels/k.cu`) | `a`, `a/extra.h`, `c2` (upward: a known cycle) |\n"
        "| `c2` | `a`, `b` |\n"
        "| `main` (`src/main.c`) | `b`, `late` |\n"
        "| `late` | `a` |\n"
        "| `gone` | `a`, `a/gone.h`, `zz` |\n"
        "\n## Next\n\n| `c` | `a` |\n");
    put(root, "src/c2/c2.c", "#include \"b/b.h\"\n");
    put(root, "src/late/late.h", "\n");
    put(root, "src/a/a.h", "#include <stdio.h>\n");
    put(root, "src/a/extra.h", "\n");
    put(root, "src/a/private.h", "\n");
    put(root, "src/a/a.c", "#include \"a/a.h\"\n#include \"a.h\"\n#include \"a/private.h\"\n");
    put(root, "src/a/up.c", "/* a includes b: up the layers */\n#include \"b/b.h\"\n");
    put(root, "src/b/b.h", "#include \"a/a.h\"\n");
    put(root, "src/b/b.c", "#include \"b/b.h\"\n#include \"a/extra.h\"\n  #  include \"a/a.h\" /* spaces */\n");
    put(root, "src/b/bad.c", "#include \"b/b.h\"\n#include \"a/private.h\"\n#include \"zz/zz.h\"\n");
    put(root, "src/b/notes.txt", "#include \"zz/zz.h\"\n");
    put(root, "src/c/c.c", "#include \"a/a.h\"\n");
    put(root, "src/main.c", "#include \"b/b.h\"\n");
    put(root, "kernels/k.cu", "#include \"../src/a/a.h\"\n#include \"../src/b/b.c\"\n");
    put(root, "kernels/stray.cu", "\n");

    char log[4096];
    snprintf(log, sizeof log, "%s/report.txt", root);
    FILE *out = fopen(log, "w");
    CHECK(out != NULL);
    if (!out) return;
    int bad = layering_check(root, out);
    fclose(out);
    char *text = tp_read_file(log, NULL);
    CHECK(text != NULL);
    if (!text) return;
    printf("made-up tree:\n%s", text);
    CHECK_MSG(bad == 9, "%d violations", bad);
    CHECK_CONTAINS(text, "src/a/up.c:2: a includes b/b.h: a -> b is not allowed (a may include nothing)");
    CHECK_CONTAINS(text, "src/b/bad.c:2: b includes a/private.h, private to a (its public header is a/a.h");
    CHECK_CONTAINS(text, "src/b/bad.c:3: b includes zz/zz.h: zz is not a module of the table");
    CHECK_CONTAINS(text, "src/c/: module c is not in the table");
    CHECK_CONTAINS(text, "kernels/stray.cu: belongs to no module of the table");
    CHECK_CONTAINS(text, "docs/architecture.md:16: module gone: no src/gone/");
    CHECK_CONTAINS(text, "docs/architecture.md:16: gone may include a/gone.h, which is not a file under src/");
    CHECK_CONTAINS(text, "docs/architecture.md:16: gone may include zz, which is not a module of the table");
    CHECK_CONTAINS(text, "docs/architecture.md:14: main may include late, which is not on an earlier row");
    CHECK(tp_count(text, "\n") == 9);
    free(text);

    /* No table: an error, not a pass. */
    put(root, "docs/architecture.md", "# x\n\n## Modules\n");
    out = fopen(log, "w");
    CHECK(out != NULL);
    if (!out) return;
    CHECK(layering_check(root, out) == -1);
    fclose(out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

/* The repository itself. */
static void test_tree(void)
{
    int bad = layering_check(FS_TEST_SRC_DIR, stderr);
    CHECK_MSG(bad == 0, "%d includes break the layering of docs/architecture.md (listed above): move the code, or "
                        "add the edge to the table there if it is meant",
              bad);
}

int main(void)
{
    test_fixture();
    test_tree();
    return test_finish();
}
