/*
 * test_function_size: no function in src/ or kernels/ is longer than
 * FS_MAX_FUNCTION_LINES lines, counted from the line of its opening brace
 * to the line of its closing brace, both included (docs/architecture.md,
 * "Code size"). A longer function is split at its seams: one that holds
 * several steps becomes a function per step, a chain of cases a table.
 *
 * A function still over the limit can be listed as known (KnownLong), so
 * that the change that splits it removes it from the list: a listed
 * function that is no longer over the limit, or no longer exists, fails the
 * test as a new long function does. None is listed today.
 *
 * How a function is found: each file (.c, .h, .cu) is read as C tokens
 * (comments, string and character literals and preprocessor lines skipped),
 * counting braces; a `{` outside any braces right after a `)` opens a
 * function body, named by the identifier before that parameter list's `(`
 * (an `__attribute__((...))` between is passed over). Initialisers and
 * struct, enum and `extern "C"` blocks are not functions. A file whose
 * braces do not balance fails the test: the check would not know where its
 * functions end. The checker first runs on a made-up tree holding each of
 * these cases.
 */
#include "test_tree.h"

#define FS_MAX_FUNCTION_LINES 80

typedef struct {
    const char *file, *function;
} KnownLong;

/* No function of the tree is over the limit (#27 item 6 split the last
 * ones), so the tree is checked with no known long functions; size_check
 * keeps the list (the made-up tree below uses it) for a change that must
 * land a long function and split it later. */

typedef struct {
    const KnownLong *known;
    int n_known;
    int *seen_long; /* per known entry: found, and still over the limit */
    int *seen;      /* per known entry: found */
    FILE *out;
} Ctx;

/* A function body of file rel: lines first..last. 1 if that breaks the
 * rule (printed), else 0. */
static int function_seen(Ctx *c, const char *rel, const char *name, int first, int last)
{
    int lines = last - first + 1;
    for (int i = 0; i < c->n_known; i++)
        if (!strcmp(c->known[i].file, rel) && !strcmp(c->known[i].function, name)) {
            c->seen[i] = 1;
            c->seen_long[i] |= lines > FS_MAX_FUNCTION_LINES;
            return 0;
        }
    if (lines <= FS_MAX_FUNCTION_LINES) return 0;
    fprintf(c->out, "%s:%d: %s is %d lines long (at most %d): split it at its seams\n", rel, first, name, lines,
            FS_MAX_FUNCTION_LINES);
    return 1;
}

static int is_ident(int ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* Past a comment, string or character literal starting at p (or p itself
 * when none starts there); counts the newlines passed in *line. */
static const char *skip_noise(const char *p, int *line)
{
    if (p[0] == '/' && p[1] == '*') {
        for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++) *line += *p == '\n';
        return *p ? p + 2 : p;
    }
    if (p[0] == '/' && p[1] == '/') {
        while (*p && *p != '\n') p++;
        return p;
    }
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        for (; *p && *p != q && *p != '\n'; p++)
            if (*p == '\\' && p[1]) *line += *++p == '\n';
        return *p == q ? p + 1 : p;
    }
    return p;
}

/* Every function of one file. Returns the violations (printed). */
static int check_text(Ctx *c, const char *rel, const char *text)
{
    int line = 1, depth = 0, parens = 0, linkage = 0, open_line = 0, bad = 0, at_line_start = 1;
    char name[ITEM] = "", cand[ITEM] = "", last_ident[ITEM] = "";
    char last = 0; /* the last significant character outside braces: ')' or another */
    for (const char *p = text; *p;) {
        const char *q = skip_noise(p, &line);
        if (q != p) {
            if (*p == '"' && depth == 0 && parens == 0) last = '"'; /* as in extern "C" { */
            p = q;
            continue;
        }
        if (at_line_start && *p == '#') { /* a directive, to its unescaped end */
            while (*p && *p != '\n') {
                q = skip_noise(p, &line);
                if (q != p) {
                    p = q;
                } else {
                    if (*p == '\\' && p[1] == '\n') p++, line++;
                    p++;
                }
            }
            continue;
        }
        if (*p == '\n') line++, at_line_start = 1;
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            p++;
            continue;
        }
        at_line_start = 0;
        if (is_ident(*p)) {
            const char *s = p;
            while (is_ident(*p)) p++;
            if (depth == 0 && parens == 0) snprintf(last_ident, sizeof last_ident, "%.*s", (int)(p - s), s), last = 'a';
            continue;
        }
        char ch = *p++;
        if (ch == '{' && depth == 0 && last == '"') {
            linkage++; /* extern "C" { ... }: what it holds is at file level */
            last = '{';
        } else if (ch == '{') {
            if (depth == 0 && last == ')') snprintf(name, sizeof name, "%s", cand), open_line = line;
            if (depth == 0 && last != ')') name[0] = 0;
            depth++;
        } else if (ch == '}' && depth == 0 && linkage > 0) {
            linkage--;
            last = '}';
        } else if (ch == '}') {
            if (--depth < 0) break;
            if (depth == 0 && name[0]) bad += function_seen(c, rel, name, open_line, line);
            if (depth == 0) name[0] = 0, last = '}';
        } else if (depth == 0 && ch == '(') {
            if (parens++ == 0 && strcmp(last_ident, "__attribute__")) snprintf(cand, sizeof cand, "%s", last_ident);
        } else if (depth == 0 && ch == ')') {
            if (--parens == 0) last = ')';
        } else if (depth == 0 && parens == 0) {
            last = ch;
        }
    }
    if (depth != 0 || parens != 0 || linkage != 0) {
        fprintf(c->out, "%s: its braces or parentheses do not balance (outside comments, strings and directives): "
                        "cannot tell where its functions end\n",
                rel);
        bad++;
    }
    return bad;
}

/* check_text as tt_walk's visit. */
static int visit_text(void *ctx, const char *rel, const char *text)
{
    return check_text((Ctx *)ctx, rel, text);
}

/* The whole check of the tree at root, with these known long functions.
 * Returns the violations (printed). */
static int size_check(const char *root, const KnownLong *known, int n_known, FILE *out)
{
    int seen[64] = {0}, seen_long[64] = {0};
    Ctx c = {known, n_known < 64 ? n_known : 64, seen_long, seen, out};
    int bad = tt_walk(root, "src", NULL, visit_text, &c, out) + tt_walk(root, "kernels", NULL, visit_text, &c, out);
    for (int i = 0; i < c.n_known; i++) {
        if (!seen[i])
            fprintf(out, "%s: no function %s: remove it from the known long functions (tests/test_function_size.c)\n",
                    known[i].file, known[i].function);
        else if (!seen_long[i])
            fprintf(out, "%s: %s is %d lines or fewer now: remove it from the known long functions "
                         "(tests/test_function_size.c)\n",
                    known[i].file, known[i].function, FS_MAX_FUNCTION_LINES);
        bad += !seen_long[i];
    }
    return bad;
}

/* ---------------------------------------------------------------------- */

/* A function of the given name whose braces span `lines` lines, its body
 * holding the noise that must not count as braces; tail: what stands
 * between its parameters and its body. */
static char *function_text(const char *head, const char *name, const char *tail, int lines)
{
    size_t cap = (size_t)lines * 64 + 512;
    char *s = (char *)malloc(cap);
    CHECK(s != NULL);
    int k = snprintf(s, cap, "%s %s(int a, void (*f)(int))%s\n{\n", head, name, tail);
    for (int i = 0; i < lines - 2; i++)
        k += snprintf(s + k, cap - (size_t)k, "%s\n",
                      i % 4 == 0   ? "    puts(\"}{ \\\" }\"); /* } */"
                      : i % 4 == 1 ? "    char c = '}'; // }"
                      : i % 4 == 2 ? "#define BRACE }"
                                   : "    if (a) { a++; }");
    snprintf(s + k, cap - (size_t)k, "}\n");
    return s;
}

static void test_fixture(void)
{
    char root[512];
    tp_tmpdir(root, sizeof root, "fnsize");
    char *f81 = function_text("static int", "too_long", "", 81), *f80 = function_text("int", "just_fits", "", 80);
    char *known_long_still = function_text("void", "still_long", "", 90);
    char *known_short = function_text("void", "now_short", "", 12);
    char *attr = function_text("__global__ void __launch_bounds__(256)", "with_attr", " __attribute__((cold))", 81);
    size_t cap = 1 << 16;
    char *a = (char *)malloc(cap);
    CHECK(a != NULL);
    if (!a) return; /* and the optimiser knows snprintf's buffer is there */
    snprintf(a, cap, "/* { */\n%s%s%s", f81, f80, "static const int table[] = {\n");
    for (int i = 0; i < 100; i++) snprintf(a + strlen(a), cap - strlen(a), "    %d,\n", i);
    snprintf(a + strlen(a), cap - strlen(a), "};\nstruct S {\n    int x;\n};\n%s", attr);
    tt_put(root, "src/m/a.c", a);
    snprintf(a, cap, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n%s%s#ifdef __cplusplus\n}\n#endif\n",
             known_long_still, known_short);
    tt_put(root, "kernels/k.cu", a);
    tt_put(root, "src/m/deep/unbalanced.h", "static inline int f(void)\n{\n    return 0;\n");
    tt_put(root, "src/m/notes.txt", "void x(void)\n{\n}\n}\n");
    static const KnownLong known[] = {
        {"kernels/k.cu", "still_long"}, {"kernels/k.cu", "now_short"}, {"src/m/a.c", "gone"}};
    char log[1024];
    snprintf(log, sizeof log, "%s/report.txt", root);
    FILE *out = fopen(log, "w");
    CHECK(out != NULL);
    if (!out) return;
    int bad = size_check(root, known, 3, out);
    fclose(out);
    char *text = tp_read_file(log, NULL);
    CHECK(text != NULL);
    if (!text) return;
    printf("made-up tree:\n%s", text);
    CHECK_MSG(bad == 5, "%d violations", bad);
    CHECK_CONTAINS(text, "src/m/a.c:3: too_long is 81 lines long (at most 80): split it at its seams\n");
    CHECK_CONTAINS(text, "src/m/a.c:271: with_attr is 81 lines long (at most 80)");
    CHECK_CONTAINS(text, "src/m/deep/unbalanced.h: its braces or parentheses do not balance");
    CHECK_CONTAINS(text, "kernels/k.cu: now_short is 80 lines or fewer now: remove it from the known long functions");
    CHECK_CONTAINS(text, "src/m/a.c: no function gone: remove it from the known long functions");
    CHECK(tp_count(text, "\n") == 5);
    CHECK(strstr(text, "just_fits") == NULL && strstr(text, "still_long") == NULL);
    free(text);
    free(a);
    free(f81);
    free(f80);
    free(known_long_still);
    free(known_short);
    free(attr);
    tt_remove(root);
}

/* The repository itself. */
static void test_tree(void)
{
    int bad = size_check(FS_TEST_SRC_DIR, NULL, 0, stderr);
    CHECK_MSG(bad == 0, "%d functions over %d lines (listed above)", bad,
              FS_MAX_FUNCTION_LINES);
}

int main(void)
{
    test_fixture();
    test_tree();
    return test_finish();
}
