/*
 * diff.c: the differences between two canonical sweeps (both flattened to
 * "dotted.key = value" pairs), and which of them a rerun on the same run
 * folder may make: extending a run (docs/sweep-format.md, "Extending a
 * run") keeps every trial already trained, so only keys that add trials
 * (or change what is decided from here on) may change; the run module
 * then checks that every trial of the journal is still a trial of the new
 * sweep (a changed epochs or seed changes every trial's id).
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

typedef struct {
    char **key, **val;
    int n;
} Flat;

static void flat_add(Flat *f, const char *k, char *v)
{
    f->key = fs_realloc(f->key, (size_t)(f->n + 1) * sizeof *f->key);
    f->val = fs_realloc(f->val, (size_t)(f->n + 1) * sizeof *f->val);
    f->key[f->n] = fs_strdup(k);
    f->val[f->n++] = v;
}

static void flatten(Flat *f, const YNode *n, const char *prefix)
{
    char k[512];
    if (n->kind == YN_MAP) {
        for (int i = 0; i < n->n; i++) {
            snprintf(k, sizeof k, "%s%s%s", prefix, *prefix ? "." : "", n->key[i]->value);
            flatten(f, n->item[i], k);
        }
        return;
    }
    int scalars = n->kind == YN_SEQ;
    for (int i = 0; i < n->n && scalars; i++) scalars = n->item[i]->kind == YN_SCALAR;
    if (n->kind == YN_SEQ && !scalars) {
        for (int i = 0; i < n->n; i++) {
            snprintf(k, sizeof k, "%s[%d]", prefix, i + 1);
            flatten(f, n->item[i], k);
        }
        return;
    }
    SwBuf b = {0};
    sb_puts(&b, "");
    if (n->kind == YN_SCALAR) {
        sb_puts(&b, n->value);
    } else {
        sb_puts(&b, "[");
        for (int i = 0; i < n->n; i++) sb_printf(&b, "%s%s", i ? ", " : "", n->item[i]->value);
        sb_puts(&b, "]");
    }
    flat_add(f, prefix, b.s);
}

static void flat_free(Flat *f)
{
    for (int i = 0; i < f->n; i++) free(f->key[i]), free(f->val[i]);
    free(f->key), free(f->val);
}

static int flat_find(const Flat *f, const char *k)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->key[i], k)) return i;
    return -1;
}

static int read_flat(const char *text, Flat *f)
{
    memset(f, 0, sizeof *f);
    FsErr err = {0};
    int failed;
    YNode *root = ytree_parse(text, strlen(text), "sweep", &failed, &err);
    if (failed) return -1;
    if (root) flatten(f, root, "");
    ytree_free(root);
    return 0;
}

/* What is said of one difference (key's value in a and in b, "(absent)"
 * where a sweep lacks it; fa and fb are the two sweeps): appended to o,
 * returning how many it counts (0 or 1). */
typedef int (*DiffVisit)(const Flat *fa, const Flat *fb, const char *key, const char *va, const char *vb,
                         SwBuf *o);

/* Both sweeps flattened, visit called on each key whose value differs (a's
 * keys in a's order, then the keys only b has), what it said into out.
 * Returns the count (1 with a message when a sweep is not readable). */
static int diff_walk(const char *a, const char *b, char *out, size_t n, DiffVisit visit)
{
    SwBuf o = {0};
    sb_puts(&o, "");
    Flat fa, fb;
    int na = read_flat(a ? a : "", &fa), nb = read_flat(b ? b : "", &fb), count = 0;
    if (na || nb) {
        sb_printf(&o, "sweep: %s is not a readable sweep\n", na ? "the first" : "the second");
        count = 1;
    } else {
        for (int i = 0; i < fa.n; i++) {
            int j = flat_find(&fb, fa.key[i]);
            if (j < 0 || strcmp(fa.val[i], fb.val[j]))
                count += visit(&fa, &fb, fa.key[i], fa.val[i], j >= 0 ? fb.val[j] : "(absent)", &o);
        }
        for (int j = 0; j < fb.n; j++)
            if (flat_find(&fa, fb.key[j]) < 0) count += visit(&fa, &fb, fb.key[j], "(absent)", fb.val[j], &o);
    }
    if (na == 0) flat_free(&fa);
    if (nb == 0) flat_free(&fb);
    if (n) snprintf(out, n, "%s", o.s);
    free(o.s);
    return count;
}

static int say_diff(const Flat *fa, const Flat *fb, const char *key, const char *va, const char *vb, SwBuf *o)
{
    (void)fa, (void)fb;
    sb_printf(o, "%s: %s -> %s\n", key, va, vb);
    return 1;
}

int sweep_diff(const char *a, const char *b, char *out, size_t n) { return diff_walk(a, b, out, n, say_diff); }

/* Keys whose change only adds trials or settles what comes next: the
 * model and training lists (a trial whose config changed is a new trial;
 * the run refuses a change that drops one it trained), the random budget,
 * the pruner (from here on), and how the leaderboard and run.constraints
 * look at trials. */
static const char *const extensible[] = {"model.", "training.", "search.random", "search.pruner",
                                         "run.alpha", "run.objectives", "run.constraints"};

static int has_prefix(const char *key, const char *p) { return !strncmp(key, p, strlen(p)); }

static int flat_has(const Flat *f, const char *prefix)
{
    for (int i = 0; i < f->n; i++)
        if (has_prefix(f->key[i], prefix)) return 1;
    return 0;
}

/* Why key may not change on an extension, or NULL when it may. */
static const char *fixed_why(const char *key, int study)
{
    if (study)
        return "search.stop and search.replicates decide over the trials of one sweep: such a sweep is not extended";
    if (has_prefix(key, "data."))
        return "the kept trials were trained and validated on this data, split and window";
    if (has_prefix(key, "search.seed") || has_prefix(key, "search.sampler") || has_prefix(key, "search.batch"))
        return "it decides which trials are sampled, and in which order";
    if (has_prefix(key, "run.metric")) return "the kept trials were judged and stopped by this metric";
    for (size_t i = 0; i < sizeof extensible / sizeof *extensible; i++)
        if (has_prefix(key, extensible[i])) return NULL;
    return "not a key an extension may change";
}

/* A sweep with search.stop or search.replicates (either of the two). */
static int study(const Flat *fa, const Flat *fb)
{
    return flat_has(fa, "search.stop") || flat_has(fa, "search.replicates") || flat_has(fb, "search.stop") ||
           flat_has(fb, "search.replicates");
}

static int say_fixed(const Flat *fa, const Flat *fb, const char *key, const char *va, const char *vb, SwBuf *o)
{
    const char *why = fixed_why(key, study(fa, fb));
    if (!why) return 0;
    sb_printf(o, "%s: %s -> %s (%s)\n", key, va, vb, why);
    return 1;
}

int sweep_diff_fixed(const char *a, const char *b, char *out, size_t n)
{
    return diff_walk(a, b, out, n, say_fixed);
}
