/*
 * test_layering: which module may use which (docs/architecture.md,
 * "Layering"). Reads that section's table and checks the code against it
 * twice. Includes: every `#include "module/..."` in src/ and kernels/; a
 * module includes its own headers, and of another module only the public
 * header (m/m.h) or a file its row names, and only of the modules on its
 * row. Names (layering_names.h): every external name a file's object uses
 * that another module's object defines, as nm lists them; the row must
 * name that module. Rows are in layer order, lowest first, so an edge to a
 * later row is a cycle: the table must mark it "(upward". Each violation is
 * printed with its file (and line, for an include) and the edge; so is a
 * module or file the table does not place, a table entry that names
 * nothing, an unmarked edge up the layers, and a source file the names
 * check cannot see. The checker is first run on a small made-up tree with
 * one violation of each kind, so that it is known to fail when it should.
 */
#include "layering_names.h"

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
                    fprintf(out, "%s:%d: %s includes %s, private to %s (its public header is %s; %s may use %s)\n",
                            rel, line, w->module, t, mod, pub, w->module, list);
                else
                    fprintf(out, "%s:%d: %s includes %s: %s -> %s is not allowed (%s may use %s)\n", rel, line,
                            w->module, t, w->module, mod, w->module, list);
                bad++;
            }
        }
        p = *eol ? eol + 1 : eol;
    }
    free(text);
    return bad;
}

/* Every entry of the table names something that exists, and an edge to a
 * later row is marked "(upward". Returns the violations (printed). */
static int table_check(const char *root, const Rules *r, FILE *out)
{
    char path[4096];
    int bad = 0;
    for (int i = 0; i < r->n; i++) {
        const Row *w = &r->row[i];
        snprintf(path, sizeof path, "%s/src/%s", root, w->module);
        if (!tt_is_dir(path) && !w->n_files)
            bad++, fprintf(out, "docs/architecture.md:%d: module %s: no src/%s/\n", w->line, w->module, w->module);
        for (int k = 0; k < w->n_files; k++) {
            snprintf(path, sizeof path, "%s/%s", root, w->files[k]);
            if (!tt_exists(path))
                bad++, fprintf(out, "docs/architecture.md:%d: %s: no such file\n", w->line, w->files[k]);
        }
        for (int k = 0; k < w->n_allow; k++) {
            const char *a = w->allow[k];
            snprintf(path, sizeof path, "%s/src/%s", root, a);
            if (!strchr(a, '/') ? !row_of(r, a) : !tt_exists(path)) {
                bad++, fprintf(out, "docs/architecture.md:%d: %s may use %s, which is not %s\n", w->line, w->module,
                               a, strchr(a, '/') ? "a file under src/" : "a module of the table");
                continue;
            }
            char mod[ITEM];
            snprintf(mod, sizeof mod, "%.*s", (int)strcspn(a, "/"), a);
            const Row *to = row_of(r, mod);
            if (to && to >= w && !w->up[k])
                bad++, fprintf(out,
                               "docs/architecture.md:%d: %s may use %s, which is not on an earlier row (rows are "
                               "in layer order, lowest first: this edge makes a cycle; write \"(upward: why)\" "
                               "after it if it is meant)\n",
                               w->line, w->module, a);
        }
    }
    return bad;
}

/* The includes of src/<module>/ files, then of files elsewhere (src/main.c,
 * kernels/). Returns the violations (printed). */
static int includes_check(const char *root, const Rules *r, FILE *out)
{
    static char mods[256][ITEM], files[1024][ITEM];
    char path[4096];
    int bad = 0;
    int nm = tt_list(root, "src", mods, 256);
    for (int i = 0; i < nm; i++) {
        char rel[2 * ITEM + 8];
        snprintf(rel, sizeof rel, "src/%.*s", ITEM - 1, mods[i]);
        snprintf(path, sizeof path, "%s/%s", root, rel);
        if (!tt_is_dir(path)) continue;
        const Row *w = row_of(r, mods[i]);
        if (!w) {
            bad++, fprintf(out, "%s/: module %s is not in the table\n", rel, mods[i]);
            continue;
        }
        int nf = tt_list(root, rel, files, 1024);
        for (int k = 0; k < nf; k++) {
            if (!tt_has_suffix(files[k], ".c") && !tt_has_suffix(files[k], ".h")) continue;
            char frel[3 * ITEM + 16];
            snprintf(frel, sizeof frel, "%s/%.*s", rel, ITEM - 1, files[k]);
            bad += check_file(root, frel, r, w, out);
        }
    }
    const char *elsewhere[] = {"src", "kernels"};
    for (int e = 0; e < 2; e++) {
        int nf = tt_list(root, elsewhere[e], files, 1024);
        for (int k = 0; k < nf; k++) {
            char frel[2 * ITEM + 16];
            snprintf(frel, sizeof frel, "%s/%.*s", elsewhere[e], ITEM - 1, files[k]);
            snprintf(path, sizeof path, "%s/%s", root, frel);
            if (tt_is_dir(path)) continue;
            const Row *w = row_of_file(r, frel);
            if (w)
                bad += check_file(root, frel, r, w, out);
            else
                bad++, fprintf(out, "%s: belongs to no module of the table\n", frel);
        }
    }
    return bad;
}

/* The whole check of the tree at root: the table, the includes, and the
 * names its objects use (objects: their paths, one a line; listing: nm's
 * output for them; *uses: the uses of another module's names seen).
 * Returns the violations (each printed to out), or -1 when the table
 * cannot be read. */
static int layering_check(const char *root, const char *objects, const char *listing, int *uses, FILE *out)
{
    static Rules r;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/architecture.md", root);
    if (rules_read(path, &r, out) != 0) return -1;
    return table_check(root, &r, out) + includes_check(root, &r, out) +
           names_check(root, &r, objects, listing, uses, out);
}

/* ---------------------------------------------------------------------- */

/* A made-up tree with one violation of each kind: the checker must name
 * each one, with its file (and line), and nothing else. */
static void fixture_write(const char *root)
{
    tt_put(root, "docs/architecture.md",
           "# x\n\n## Modules\n\n| `c` | ignored |\n\n## Layering\n\n"
           "| module | may use |\n|---|---|\n"
           "| `a` | nothing |\n"
           "| `b` (and `kernels/k.cu`) | `a`, `a/extra.h`, `c2` (upward: a known cycle) |\n"
           "| `c2` | `a`, `b` |\n"
           "| `main` (`src/main.c`) | `b`, `late` |\n"
           "| `late` | `a` |\n"
           "| `gone` | `a`, `a/gone.h`, `zz` |\n"
           "| `gpu` | `a` |\n"
           "\n## Next\n\n| `c` | `a` |\n");
    tt_put(root, "src/c2/c2.c", "#include \"b/b.h\"\n");
    tt_put(root, "src/late/late.h", "\n");
    tt_put(root, "src/late/late.c", "\n");
    tt_put(root, "src/a/a.h", "#include <stdio.h>\n");
    tt_put(root, "src/a/extra.h", "\n");
    tt_put(root, "src/a/private.h", "\n");
    tt_put(root, "src/a/a.c", "#include \"a/a.h\"\n#include \"a.h\"\n#include \"a/private.h\"\n");
    tt_put(root, "src/a/up.c", "/* a includes b: up the layers */\n#include \"b/b.h\"\n");
    tt_put(root, "src/b/b.h", "#include \"a/a.h\"\n");
    tt_put(root, "src/b/b.c", "#include \"b/b.h\"\n#include \"a/extra.h\"\n  #  include \"a/a.h\" /* spaces */\n");
    tt_put(root, "src/b/bad.c", "#include \"b/b.h\"\n#include \"a/private.h\"\n#include \"zz/zz.h\"\n");
    tt_put(root, "src/b/notes.txt", "#include \"zz/zz.h\"\n");
    tt_put(root, "src/c/c.c", "#include \"a/a.h\"\n");
    tt_put(root, "src/gpu/emulate/x.c", "\n");
    tt_put(root, "src/main.c", "#include \"b/b.h\"\n");
    tt_put(root, "kernels/k.cu", "#include \"../src/a/a.h\"\n#include \"../src/b/b.c\"\n");
    tt_put(root, "kernels/stray.cu", "\n");
}

/* The made-up tree's objects (bad.c has none; one is not named after a
 * source, one after a file that does not exist) and their names, as nm
 * -A -P -g prints them. */
static const char fixture_objects[] = "/bld/CMakeFiles/core.dir/src/a/a.c.o\n"
                                      "/bld/CMakeFiles/core.dir/src/a/up.c.o\n"
                                      "/bld/CMakeFiles/core.dir/src/b/b.c.o\n"
                                      "/bld/CMakeFiles/core.dir/src/c/c.c.o\n"
                                      "/bld/CMakeFiles/core.dir/src/c2/c2.c.o\n"
                                      "/bld/CMakeFiles/core.dir/src/late/late.c.o\n"
                                      "/bld/CMakeFiles/core.dir/src/gpu/emulate/x.c.o\n"
                                      "/bld/CMakeFiles/core.dir/kernels/k.cu.o\n"
                                      "/bld/CMakeFiles/core.dir/src/a/gone.c.o\n"
                                      "/bld/odd/b.c.o\n"
                                      "\n"
                                      "/bld/CMakeFiles/main.dir/src/main.c.o\n";
#define O_ "/bld/CMakeFiles/core.dir/"
static const char fixture_listing[] =
    O_ "src/a/a.c.o: a_fn T 0000000000000000 0000000000000010\n" /* */
    O_ "src/a/a.c.o: a_other U         \n"                       /* a's own (up.c) */
    O_ "src/a/a.c.o: b_weak U         \n"                        /* a -> b: not allowed */
    O_ "src/a/a.c.o: c_fn U         \n"                          /* c: not in the table (said once) */
    O_ "src/a/a.c.o: memcpy U         \n"                        /* the C library's */
    O_ "src/a/up.c.o: a_other T 0 8\n"                           /* */
    O_ "src/b/b.c.o: b_fn T 0 8\n"                               /* */
    O_ "src/b/b.c.o: b_weak W 0 8\n"                             /* a weak definition */
    O_ "src/b/b.c.o: c2_fn U         \n"                         /* an upward edge of the table */
    O_ "src/c/c.c.o: c_fn T 0 8\n"                               /* */
    O_ "src/c2/c2.c.o: b_fn U         \n"                        /* */
    O_ "src/c2/c2.c.o: c2_fn T 0 8\n"                            /* */
    O_ "src/c2/c2.c.o: late_fn U         \n"                     /* c2 -> late: not allowed */
    O_ "src/late/late.c.o: a_fn U         \n"                    /* */
    O_ "src/late/late.c.o: late_fn T 0 8\n"                      /* */
    O_ "src/gpu/emulate/x.c.o: b_fn U         \n"                /* gpu -> b: not allowed */
    O_ "src/gpu/emulate/x.c.o: cudaThing T 0 8\n"                /* the CUDA runtime's */
    O_ "kernels/k.cu.o: a_fn U         \n"                       /* */
    O_ "kernels/k.cu.o: cudaThing U         \n"                  /* */
    O_ "kernels/k.cu.o: late_fn U         \n"                    /* b -> late: not allowed */
    "/bld/CMakeFiles/main.dir/src/main.c.o: b_fn U         \n"   /* */
    "/bld/CMakeFiles/main.dir/src/main.c.o: late_fn w         \n" /* weak, undefined */
    "/bld/CMakeFiles/main.dir/src/main.c.o: main T 0 8\n";
#undef O_

static void test_fixture(void)
{
    char root[512];
    tp_tmpdir(root, sizeof root, "layering");
    fixture_write(root);
    char log[4096];
    snprintf(log, sizeof log, "%s/report.txt", root);
    FILE *out = fopen(log, "w");
    CHECK(out != NULL);
    if (!out) return;
    int uses = 0, bad = layering_check(root, fixture_objects, fixture_listing, &uses, out);
    fclose(out);
    char *text = tp_read_file(log, NULL);
    CHECK(text != NULL);
    if (!text) return;
    printf("made-up tree:\n%s", text);
    CHECK_MSG(bad == 16, "%d violations", bad);
    CHECK_CONTAINS(text, "src/a/up.c:2: a includes b/b.h: a -> b is not allowed (a may use nothing)");
    CHECK_CONTAINS(text, "src/b/bad.c:2: b includes a/private.h, private to a (its public header is a/a.h");
    CHECK_CONTAINS(text, "src/b/bad.c:3: b includes zz/zz.h: zz is not a module of the table");
    CHECK_CONTAINS(text, "src/c/: module c is not in the table");
    CHECK_CONTAINS(text, "kernels/stray.cu: belongs to no module of the table");
    CHECK_CONTAINS(text, "docs/architecture.md:16: module gone: no src/gone/");
    CHECK_CONTAINS(text, "docs/architecture.md:16: gone may use a/gone.h, which is not a file under src/");
    CHECK_CONTAINS(text, "docs/architecture.md:16: gone may use zz, which is not a module of the table");
    CHECK_CONTAINS(text, "docs/architecture.md:14: main may use late, which is not on an earlier row");
    CHECK_CONTAINS(text, "src/a/a.c: a uses b_weak (src/b/b.c): a -> b is not allowed (a may use nothing)\n");
    CHECK_CONTAINS(text,
                   "src/c2/c2.c: c2 uses late_fn (src/late/late.c): c2 -> late is not allowed (c2 may use a, b)\n");
    CHECK_CONTAINS(text, "src/gpu/emulate/x.c: gpu uses b_fn (src/b/b.c): gpu -> b is not allowed (gpu may use a)\n");
    CHECK_CONTAINS(text, "kernels/k.cu: b uses late_fn (src/late/late.c): b -> late is not allowed (b may use a, "
                         "a/extra.h, c2)\n");
    CHECK_CONTAINS(text,
                   "/bld/CMakeFiles/core.dir/src/a/gone.c.o: not an object CMake named after a file of this tree");
    CHECK_CONTAINS(text, "/bld/odd/b.c.o: not an object CMake named after a file of this tree");
    CHECK_CONTAINS(text, "src/b/bad.c: no object file of it in the build's list: its names go unchecked\n");
    CHECK(tp_count(text, "\n") == 16);
    /* Every use of another module's name in the table, allowed or not:
     * a -> b_weak, b -> c2_fn, c2 -> b_fn and late_fn, late -> a_fn,
     * gpu -> b_fn, k.cu -> a_fn and late_fn, main -> b_fn and late_fn. */
    CHECK_MSG(uses == 10, "%d uses", uses);
    free(text);

    /* No table: an error, not a pass. */
    tt_put(root, "docs/architecture.md", "# x\n\n## Modules\n");
    out = fopen(log, "w");
    CHECK(out != NULL);
    if (!out) return;
    CHECK(layering_check(root, fixture_objects, fixture_listing, &uses, out) == -1);
    fclose(out);
    tt_remove(root);
}

/* nm's listing of the objects (one path a line), or NULL (said why). */
static char *nm_listing(const char *objects)
{
    size_t cap = 3 * strlen(objects) + 256, len = 0;
    char *cmd = (char *)malloc(cap);
    CHECK(cmd != NULL);
    len += (size_t)snprintf(cmd, cap, "'%s' -A -P -g", FS_TEST_NM);
    for (const char *p = objects; *p;) {
        size_t n = strcspn(p, "\n");
        if (memchr(p, '\'', n)) return fprintf(stderr, "%.*s: a quote in the path\n", (int)n, p), free(cmd), NULL;
        if (n) len += (size_t)snprintf(cmd + len, cap - len, " '%.*s'", (int)n, p);
        p += n + (p[n] == '\n');
    }
    FILE *f = popen(cmd, "r");
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    char buf[1 << 16];
    for (size_t k; f && mem && (k = fread(buf, 1, sizeof buf, f)) > 0;) fwrite(buf, 1, k, mem);
    if (mem) fclose(mem);
    int rc = f ? pclose(f) : -1;
    if (rc != 0) fprintf(stderr, "%.200s ...: exit status %d\n", cmd, rc), free(text), text = NULL;
    free(cmd);
    return text;
}

/* The repository itself, as this build compiled it. */
static void test_tree(void)
{
    char *objects = tp_read_file(FS_TEST_OBJECTS, NULL);
    CHECK_MSG(objects != NULL, "%s: cannot read (tests/CMakeLists.txt writes it)", FS_TEST_OBJECTS);
    char *listing = objects ? nm_listing(objects) : NULL;
    CHECK_MSG(listing != NULL, "nm (%s) could not list the build's objects", FS_TEST_NM);
    int uses = 0;
    int bad = layering_check(FS_TEST_SRC_DIR, objects ? objects : "", listing ? listing : "", &uses, stderr);
    CHECK_MSG(bad == 0, "%d includes or uses break the layering of docs/architecture.md (listed above): move the "
                        "code, or add the edge to the table there if it is meant",
              bad);
    /* The modules use each other's names hundreds of times: fewer means
     * that nm's listing was not understood. */
    CHECK_MSG(uses > 300, "only %d uses of another module's names seen in nm's listing", uses);
    free(objects);
    free(listing);
}

int main(void)
{
    test_fixture();
    test_tree();
    return test_finish();
}
