/*
 * test_alphabet: the residue alphabet and the class letters are spelled
 * once, in src/util/alphabet.h (FS_AA_LETTERS, FS_CLASS_LETTERS); every
 * other file of src/ and kernels/ names them (#27 item 7). A copy would
 * let a model file, a report and the trainer disagree on which code is
 * which residue or class.
 *
 * What counts as a spelling: the twenty letters in alphabet order, as one
 * run of text anywhere in a .c, .h or .cu file (code or comment), and the
 * class letters as a string literal, "HEC" with its quotes (and the eight
 * DSSP states', "HGIEBTSC", #31 item 2). A file that
 * still spells one can be listed as known (KnownCopy), so that the change
 * that fixes it removes it from the list: a listed file that no longer
 * spells it fails the test as a new copy does. None is listed today. The
 * checker first runs on a made-up tree holding each case.
 */
#include "test_tree.h"

/* The spellings, as the header writes them. */
static const char *const spellings[] = {"ACDEFGHIKLMNPQRSTVWY", "\"HEC\"", "\"HGIEBTSC\""};
#define N_SPELLINGS (int)(sizeof spellings / sizeof spellings[0])
#define HOME "src/util/alphabet.h"

typedef struct {
    const char *file;
    int spelling; /* index into spellings */
} KnownCopy;

/* No file of the tree spells either (#27 item 7 named the last copies),
 * so the tree is checked with no known copies; alphabet_check keeps the
 * list (the made-up tree below uses it) for a change that must land a copy
 * and remove it later. */

typedef struct {
    const KnownCopy *known;
    int n_known;
    int *seen; /* per known entry: the file still spells it */
    FILE *out;
} Ctx;

/* Every spelling in one file's text. Returns the violations (printed). */
static int check_text(Ctx *c, const char *rel, const char *text)
{
    int bad = 0;
    for (int s = 0; s < N_SPELLINGS; s++) {
        int known = -1;
        for (int k = 0; k < c->n_known; k++)
            if (c->known[k].spelling == s && !strcmp(c->known[k].file, rel)) known = k;
        for (const char *p = strstr(text, spellings[s]); p; p = strstr(p + 1, spellings[s])) {
            if (known >= 0) {
                c->seen[known] = 1;
                continue;
            }
            int line = 1;
            for (const char *q = text; q < p; q++) line += *q == '\n';
            fprintf(c->out, "%s:%d: spells %s: name it from %s instead\n", rel, line, spellings[s], HOME);
            bad++;
        }
    }
    return bad;
}

/* check_text as tt_walk's visit. */
static int visit_text(void *ctx, const char *rel, const char *text)
{
    return check_text((Ctx *)ctx, rel, text);
}

/* The whole check of the tree at root, with these known copies. Returns
 * the violations (printed). */
static int alphabet_check(const char *root, const KnownCopy *known, int n_known, FILE *out)
{
    int seen[64] = {0};
    Ctx c = {known, n_known < 64 ? n_known : 64, seen, out};
    int bad = tt_walk(root, "src", HOME, visit_text, &c, out) + tt_walk(root, "kernels", HOME, visit_text, &c, out);
    for (int i = 0; i < c.n_known; i++)
        if (!seen[i]) {
            fprintf(out, "%s: no longer spells %s: remove it from the known copies (tests/test_alphabet.c)\n",
                    known[i].file, spellings[known[i].spelling]);
            bad++;
        }
    return bad;
}

/* ---------------------------------------------------------------------- */

static void test_fixture(void)
{
    char root[512];
    tp_tmpdir(root, sizeof root, "alphabet");
    tt_put(root, HOME, "#define FS_AA_LETTERS \"ACDEFGHIKLMNPQRSTVWY\"\n#define FS_CLASS_LETTERS \"HEC\"\n");
    tt_put(root, "src/m/a.c", "/* order: ACDEFGHIKLMNPQRSTVWY */\nint x;\nstatic const char c[] = \"HEC\";\n");
    tt_put(root, "kernels/k.cu", "const char *s = \"ACDEFGHIKLMNPQRSTVWYX\";\n");
    tt_put(root, "src/m/fine.c", "/* H, E, C: HEC, in that order */\nchar aa[] = \"ACDEFGHIKLMNPQRSTVW\";\n");
    tt_put(root, "src/m/known.c", "char c = \"HEC\"[1];\n");
    tt_put(root, "src/m/fixed.c", "char c = FS_CLASS_LETTERS[1];\n");
    tt_put(root, "src/m/notes.txt", "ACDEFGHIKLMNPQRSTVWY \"HEC\"\n");
    static const KnownCopy known[] = {{"src/m/known.c", 1}, {"src/m/fixed.c", 1}};
    char log[1024];
    snprintf(log, sizeof log, "%s/report.txt", root);
    FILE *out = fopen(log, "w");
    CHECK(out != NULL);
    if (!out) return;
    int bad = alphabet_check(root, known, 2, out);
    fclose(out);
    char *text = tp_read_file(log, NULL);
    CHECK(text != NULL);
    if (!text) return;
    printf("made-up tree:\n%s", text);
    CHECK_MSG(bad == 4, "%d violations", bad);
    CHECK_CONTAINS(text, "src/m/a.c:1: spells ACDEFGHIKLMNPQRSTVWY: name it from src/util/alphabet.h instead\n");
    CHECK_CONTAINS(text, "src/m/a.c:3: spells \"HEC\": name it from src/util/alphabet.h instead\n");
    CHECK_CONTAINS(text, "kernels/k.cu:1: spells ACDEFGHIKLMNPQRSTVWY");
    CHECK_CONTAINS(text, "src/m/fixed.c: no longer spells \"HEC\": remove it from the known copies");
    CHECK(tp_count(text, "\n") == 4);
    CHECK(strstr(text, "fine.c") == NULL && strstr(text, "known.c") == NULL && strstr(text, "alphabet.h:") == NULL);
    free(text);
    tt_remove(root);
}

/* The repository itself. */
static void test_tree(void)
{
    int bad = alphabet_check(FS_TEST_SRC_DIR, NULL, 0, stderr);
    CHECK_MSG(bad == 0, "%d copies of the alphabet or the class letters (listed above)", bad);
}

int main(void)
{
    test_fixture();
    test_tree();
    return test_finish();
}
