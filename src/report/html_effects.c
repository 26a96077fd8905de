/*
 * html_effects.c: which options matter. The options come from the trials'
 * canonical configs (what the journal holds), not from the sweep's syntax:
 * every config is flattened into named values (training and model members
 * by their key, a layer list as "<kind> layers" counts and the first layer
 * of each kind's members, e.g. "conv1d filters"), and an option is one
 * whose value differs between trials. Options that split the trials the
 * same way (the filters of every conv layer) are shown once; a layer count
 * that another option of that kind already implies ("dense layers" beside
 * "dense units", where "none" is 0 layers) is left out.
 *
 * Importance is the share of the variance of trial Q3 that the option's
 * mean effect explains, over complete trials: omega squared of a one-way
 * analysis of variance, (SS_between - (k - 1) MS_within) / (SS_total +
 * MS_within), at least 0. Eta squared (SS_between / SS_total) grows with
 * the number of values k alone, (k - 1) / (n - 1) on average where an
 * option does nothing: 5 trials of a tpe run gave every option 99-100%.
 * Undefined (no bar) with no trial left for the within-value variance.
 * Options of a grid are balanced, so their shares add up to at most 1 plus
 * interactions; in a random sample they may overlap. A numeric option
 * with more than BIN_ABOVE distinct values (a range, search.random or
 * tpe) is cut into BINS bins of about equal counts (quartiles): as
 * categories, a value per trial would "explain" all of the variance.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "report/html_int.h"

#define MAX_VALUES 24 /* more distinct values than this are not plotted */
#define BIN_ABOVE 6   /* a numeric option with more distinct values is binned */
#define BINS 4

typedef struct {
    char *name;
    char *also; /* options with the same split, or NULL */
    char **val; /* one per row (NULL: absent) */
    int count;  /* a "<kind> layers" count */
    int *cat, n_cat;
    char **cats; /* distinct values in display order (borrowed from val, or bins' labels) */
    int binned;  /* the distinct values before binning (0: not binned) */
    int by_values; /* binned by quantiles of the distinct values (one value held most rows) */
    char *labels[BINS]; /* the bins' labels, owned */
    double eta2;
    int drop;
} Feat;

typedef struct {
    Feat *f;
    int n, cap, rows;
} Feats;

static Feat *feat_get(Feats *fs, const char *name)
{
    for (int i = 0; i < fs->n; i++)
        if (!strcmp(fs->f[i].name, name)) return &fs->f[i];
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? fs->cap * 2 : 32;
        fs->f = fs_realloc(fs->f, (size_t)fs->cap * sizeof *fs->f);
    }
    Feat *f = &fs->f[fs->n++];
    memset(f, 0, sizeof *f);
    f->name = fs_strdup(name);
    f->val = fs_calloc((size_t)fs->rows + 1, sizeof *f->val);
    return f;
}

static void feat_set(Feats *fs, const char *name, int row, const char *v)
{
    Feat *f = feat_get(fs, name);
    if (!f->val[row]) f->val[row] = fs_strdup(v);
}

static char *value_text(const FsJson *v)
{
    char buf[64];
    switch (v->type) {
    case FS_JSON_NUMBER: { /* integers as written, a float as the value the user wrote (old configs: 0.300000012) */
        char *end;
        float f = strtof(v->str, &end);
        if (strpbrk(v->str, ".eE") && end != v->str && !*end) return fs_strdup(fs_format_float(buf, sizeof buf, f));
        return fs_strdup(v->str);
    }
    case FS_JSON_STRING: return fs_strdup(v->str);
    case FS_JSON_TRUE: return fs_strdup("true");
    case FS_JSON_FALSE: return fs_strdup("false");
    case FS_JSON_NULL: return fs_strdup("null");
    default: return json_compact(v);
    }
}

/* Members of obj as "prefix.key" (nested objects flattened). */
static void flatten(Feats *fs, int row, const FsJson *obj, const char *prefix)
{
    for (const FsJson *m = obj ? obj->child : NULL; m; m = m->next) {
        char name[160];
        snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", m->key ? m->key : "?");
        if (m->type == FS_JSON_OBJECT) {
            flatten(fs, row, m, name);
        } else {
            char *t = value_text(m);
            feat_set(fs, name, row, t);
            free(t);
        }
    }
}

static void layers(Feats *fs, int row, const FsJson *arr)
{
    char kinds[16][32];
    int counts[16], nk = 0;
    for (const FsJson *l = arr ? arr->child : NULL; l; l = l->next) {
        const FsJson *k = json_get(l, "kind");
        const char *kind = k && k->type == FS_JSON_STRING ? k->str : "layer";
        int i = 0;
        while (i < nk && strcmp(kinds[i], kind)) i++;
        if (i == nk) {
            if (nk == 16) continue;
            snprintf(kinds[nk], sizeof kinds[nk], "%s", kind);
            counts[nk++] = 0;
        }
        if (counts[i]++) continue; /* the first layer of a kind speaks for it */
        for (const FsJson *m = l->child; m; m = m->next) {
            if (!m->key || !strcmp(m->key, "kind")) continue;
            char name[160], *t = value_text(m);
            snprintf(name, sizeof name, "%s %s", kind, !strcmp(m->key, "width") ? "kernel width" : m->key);
            feat_set(fs, name, row, t);
            free(t);
        }
    }
    for (int i = 0; i < nk; i++) {
        char name[160], v[16];
        snprintf(name, sizeof name, "%.32s layers", kinds[i]);
        snprintf(v, sizeof v, "%d", counts[i]);
        feat_set(fs, name, row, v);
        feat_get(fs, name)->count = 1;
    }
}

static int is_num(const char *s, double *d)
{
    char *end;
    *d = strtod(s, &end);
    return end != s && *end == '\0';
}

static int cmp_cat(const void *pa, const void *pb)
{
    const char *a = *(char *const *)pa, *b = *(char *const *)pb;
    double x, y;
    int na = !strcmp(a, "none"), nb = !strcmp(b, "none");
    if (na || nb) return nb - na;
    if (is_num(a, &x) && is_num(b, &y) && x != y) return x < y ? -1 : 1;
    return strcmp(a, b);
}

/* 1 if every value but "none" is a number. */
static int numeric(const Feat *f)
{
    double d;
    if (f->binned) return 1; /* its labels are ranges of numbers */
    for (int c = 0; c < f->n_cat; c++)
        if (strcmp(f->cats[c], "none") && !is_num(f->cats[c], &d)) return 0;
    return 1;
}

static void bin(Feat *f, int rows);

/* Distinct values (sorted: numbers by value, "none" first) and each row's
 * category; many numbers binned. */
static void categorise(Feat *f, int rows)
{
    f->cats = fs_calloc((size_t)rows + 1, sizeof *f->cats);
    f->cat = fs_calloc((size_t)rows + 1, sizeof *f->cat);
    for (int r = 0; r < rows; r++) {
        if (!f->val[r]) f->val[r] = fs_strdup(f->count ? "0" : "none");
        int c = 0;
        while (c < f->n_cat && strcmp(f->cats[c], f->val[r])) c++;
        if (c == f->n_cat) f->cats[f->n_cat++] = f->val[r];
    }
    qsort(f->cats, (size_t)f->n_cat, sizeof *f->cats, cmp_cat);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < f->n_cat; c++)
            if (!strcmp(f->cats[c], f->val[r])) f->cat[r] = c;
    if (!f->count && f->n_cat > BIN_ABOVE && numeric(f)) bin(f, rows);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The numeric values (not "none") into quantile bins: rows with equal
 * values share a bin, empty bins are dropped, "none" stays a category of
 * its own (first). Each bin is labelled with its smallest and largest
 * value. */
static void bin(Feat *f, int rows)
{
    double *v = fs_calloc((size_t)rows + 1, sizeof *v), cut[BINS], lo[BINS], hi[BINS];
    int m = 0, none = 0, members[BINS] = {0}, at[BINS];
    for (int r = 0; r < rows; r++)
        if (!is_num(f->val[r], &v[m])) none = 1;
        else m++;
    qsort(v, (size_t)m, sizeof *v, cmp_double);
    /* Quantiles of the rows; where one value holds most of them (all cuts
     * on it: one bin), quantiles of the distinct values instead. */
    if (v[(size_t)(BINS - 1) * (size_t)m / BINS] == v[0]) {
        int u = 0;
        for (int i = 0; i < m; i++)
            if (!u || v[i] != v[u - 1]) v[u++] = v[i];
        m = u;
        f->by_values = 1;
    }
    for (int k = 1; k < BINS; k++) cut[k] = v[(size_t)k * (size_t)m / BINS];
    f->binned = f->n_cat;
    f->n_cat = 0;
    if (none) f->cats[f->n_cat++] = "none";
    for (int r = 0; r < rows; r++) {
        double x;
        int b = 0;
        if (!is_num(f->val[r], &x)) continue;
        while (b + 1 < BINS && x >= cut[b + 1]) b++;
        if (!members[b]++) lo[b] = hi[b] = x;
        lo[b] = x < lo[b] ? x : lo[b], hi[b] = x > hi[b] ? x : hi[b];
        f->cat[r] = b; /* renumbered below */
    }
    /* Labels with as many digits as it takes to tell the bins apart. */
    int digits = 3;
    for (int again = 1; again && digits < 17; digits += again) {
        again = 0;
        char prev[80] = "", t[80];
        for (int b = 0; b < BINS && !again; b++) {
            if (!members[b]) continue;
            snprintf(t, sizeof t, "%.*g to %.*g", digits, lo[b], digits, hi[b]);
            again = !strcmp(t, prev);
            memcpy(prev, t, sizeof t);
        }
    }
    for (int b = 0; b < BINS; b++) {
        if (!members[b]) continue;
        char t[80];
        snprintf(t, sizeof t, "%.*g to %.*g", digits, lo[b], digits, hi[b]);
        at[b] = f->n_cat;
        f->cats[f->n_cat++] = f->labels[b] = fs_strdup(t);
    }
    for (int r = 0; r < rows; r++) {
        double x;
        f->cat[r] = is_num(f->val[r], &x) ? at[f->cat[r]] : 0;
    }
    free(v);
}

/* 1 if a's category is a function of b's (a is the same or coarser). */
static int function_of(const Feat *a, const Feat *b, int rows)
{
    int *map = fs_malloc((size_t)b->n_cat * sizeof *map);
    for (int c = 0; c < b->n_cat; c++) map[c] = -1;
    int ok = 1;
    for (int r = 0; r < rows && ok; r++) {
        if (map[b->cat[r]] < 0) map[b->cat[r]] = a->cat[r];
        ok = map[b->cat[r]] == a->cat[r];
    }
    free(map);
    return ok;
}

static double eta2(const Feat *f, const double *q3, int rows)
{
    double sum = 0, ss = 0, between = 0;
    int n = 0, k = 0;
    for (int r = 0; r < rows; r++)
        if (isfinite(q3[r])) sum += q3[r], n++;
    if (n < 2) return NAN;
    double mean = sum / n;
    for (int r = 0; r < rows; r++)
        if (isfinite(q3[r])) ss += (q3[r] - mean) * (q3[r] - mean);
    for (int c = 0; c < f->n_cat; c++) {
        double s = 0;
        int m = 0;
        for (int r = 0; r < rows; r++)
            if (f->cat[r] == c && isfinite(q3[r])) s += q3[r], m++;
        if (m) between += m * (s / m - mean) * (s / m - mean), k++;
    }
    if (n - k < 1) return NAN; /* a trial per value: nothing is left to tell an effect from noise */
    const double within = (ss - between) / (n - k), omega = (between - (k - 1) * within) / (ss + within);
    return ss > 0 && omega > 0 ? omega : 0.0;
}

static int cmp_eta(const void *pa, const void *pb)
{
    const Feat *a = *(Feat *const *)pa, *b = *(Feat *const *)pb;
    double x = isnan(a->eta2) ? -1 : a->eta2, y = isnan(b->eta2) ? -1 : b->eta2;
    if (x != y) return x > y ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Value c's effect: the mean of the complete trials' Q3 (in %) with that
 * value and its 95% Student t interval over those trials' means, mean +-
 * t(0.975, m - 1) s / sqrt(m) (docs/statistics.md); NaN interval under 2 trials. */
static void value_effect(const Feat *f, int c, const double *y, int rows, double *mean, double *lo, double *hi)
{
    double sum = 0, ss = 0;
    int m = 0;
    for (int r = 0; r < rows; r++)
        if (f->cat[r] == c && isfinite(y[r])) sum += y[r], m++;
    *mean = m ? sum / m : NAN, *lo = *hi = NAN;
    if (m < 2) return;
    for (int r = 0; r < rows; r++)
        if (f->cat[r] == c && isfinite(y[r])) ss += (y[r] - *mean) * (y[r] - *mean);
    double half = metrics_t_quantile(0.975, m - 1) * sqrt(ss / (m - 1) / m);
    *lo = *mean - half, *hi = *mean + half;
}

/* "n=4" under a value's column, with how many of its trials are not ok. */
static char *value_note(const Feat *f, int c, const FsReport *rep)
{
    int k = 0, bad = 0;
    for (int r = 0; r < rep->n_rows; r++)
        if (f->cat[r] == c)
            k++, bad += rep->rows[r].status != FS_TRIAL_OK && rep->rows[r].status != FS_TRIAL_INCOMPLETE;
    char buf[64];
    snprintf(buf, sizeof buf, bad ? "n=%d, %d not ok" : "n=%d", k, bad);
    return fs_strdup(buf);
}

static void strip_of(FILE *out, const Feat *f, const FsReport *rep, const double *q3)
{
    int n = rep->n_rows, nc = f->n_cat;
    /* A trial's interval is of the ranking metric: on a Q3 plot only when that is Q3. */
    int q3_ci = rep->spec.metric == FS_METRIC_Q3;
    double *y = fs_calloc((size_t)n + 1, sizeof *y), *lo = fs_calloc((size_t)n + 1, sizeof *lo),
           *hi = fs_calloc((size_t)n + 1, sizeof *hi), *cm = fs_calloc((size_t)nc * 3, sizeof *cm);
    int *tied = fs_calloc((size_t)n + 1, sizeof *tied);
    const char **link = fs_calloc((size_t)n + 1, sizeof *link);
    char **notes = fs_calloc((size_t)nc + 1, sizeof *notes);
    for (int r = 0; r < n; r++) {
        const FsReportRow *row = &rep->rows[r];
        y[r] = q3[r] * 100, link[r] = row->id, tied[r] = row->tied;
        lo[r] = q3_ci && row->has_ci ? row->ci_lo * 100 : NAN, hi[r] = q3_ci && row->has_ci ? row->ci_hi * 100 : NAN;
    }
    for (int c = 0; c < nc; c++) {
        notes[c] = value_note(f, c, rep);
        value_effect(f, c, y, n, &cm[c], &cm[nc + c], &cm[2 * nc + c]);
    }
    char title[300], explains[40] = "", bins[80] = "";
    if (!isnan(f->eta2)) snprintf(explains, sizeof explains, " (explains %.1f%%)", 100 * f->eta2);
    if (f->binned)
        snprintf(bins, sizeof bins, ", %d values in %d bins of about equal %s", f->binned, nc - (f->cats[0][0] == 'n'),
                 f->by_values ? "numbers of values" : "counts");
    snprintf(title, sizeof title, "Q3 by %s%s%s", f->name, explains, bins);
    if (f->also) {
        fputs("<p class=\"why\">", out);
        html_esc(out, f->name);
        fputs(" splits the trials as ", out);
        html_esc(out, f->also);
        fputs(" does: one chart for all.</p>\n", out);
    }
    HtmlStrip s = {title, f->name, "trial Q3 (%, mean over folds)", nc, (const char *const *)f->cats,
                   (const char *const *)notes, n, y, f->cat, link, lo, hi, tied, cm, cm + nc, cm + 2 * nc};
    html_chart_strip(out, &s);
    for (int c = 0; c < nc; c++) free(notes[c]);
    free(notes), free(y), free(lo), free(hi), free(cm), free(tied), free(link);
}

/* Every trial's config flattened into fs; the number of complete trials
 * (a finite Q3). */
static int read_configs(Feats *fs, const FsReport *rep, const double *q3)
{
    int complete = 0;
    for (int r = 0; r < rep->n_rows; r++) {
        complete += isfinite(q3[r]);
        FsJsonDoc d;
        const char *cfg = rep->rows[r].config;
        if (json_parse(&d, cfg, strlen(cfg), NULL, 0) != 0) continue;
        const FsJson *model = json_get(d.root, "model");
        for (const FsJson *m = model ? model->child : NULL; m; m = m->next) {
            if (m->key && !strcmp(m->key, "layers")) layers(fs, r, m);
            else if (m->type != FS_JSON_OBJECT && m->key) {
                char *t = value_text(m);
                feat_set(fs, m->key, r, t);
                free(t);
            }
        }
        flatten(fs, r, json_get(d.root, "training"), "");
        flatten(fs, r, json_get(d.root, "data"), "data");
        json_free(&d);
    }
    return complete;
}

/* Marks the options not to show: one value only, too many to plot, or a
 * layer count another option of its kind implies. The number with too many
 * values. */
static int drop_unshown(Feats *fs, int rows)
{
    int n_many = 0;
    for (int i = 0; i < fs->n; i++) categorise(&fs->f[i], rows);
    for (int i = 0; i < fs->n; i++) {
        Feat *f = &fs->f[i];
        f->drop = f->n_cat < 2 || f->n_cat > MAX_VALUES;
        n_many += f->n_cat > MAX_VALUES;
    }
    for (int i = 0; i < fs->n; i++) { /* "dense layers" beside "dense units" */
        Feat *f = &fs->f[i];
        size_t kl = strlen(f->name) - strlen(" layers");
        for (int k = 0; f->count && k < fs->n && !f->drop; k++)
            if (!fs->f[k].count && !fs->f[k].drop && !strncmp(fs->f[k].name, f->name, kl) &&
                fs->f[k].name[kl] == ' ' && function_of(f, &fs->f[k], rows))
                f->drop = 1;
    }
    return n_many;
}

/* g splits the trials as f does: g is shown as part of f (the one with
 * numbers for values named first). */
static void merge_same(Feat *f, Feat *g)
{
    g->drop = 1;
    if (numeric(g) && !numeric(f)) { /* the numbers name it ("dense units", not "dense activation") */
        Feat t = *f;
        *f = *g, *g = t;
        f->drop = 0, g->drop = 1;
        f->also = t.also, g->also = NULL; /* the list stays with the one shown */
    }
    size_t n = (f->also ? strlen(f->also) + 2 : 0) + strlen(g->name) + 1;
    char *also = fs_malloc(n);
    snprintf(also, n, "%s%s%s", f->also ? f->also : "", f->also ? ", " : "", g->name);
    free(f->also);
    f->also = also;
}

/* The options shown, each split once, with their importance, into shown;
 * their number. */
static int shown_options(Feats *fs, int rows, int complete, const double *q3, Feat **shown)
{
    int n_shown = 0;
    for (int i = 0; i < fs->n; i++) {
        Feat *f = &fs->f[i];
        if (f->drop) continue;
        for (int k = i + 1; k < fs->n; k++) { /* the same split under another name: shown once */
            Feat *g = &fs->f[k];
            if (g->drop || g->n_cat != f->n_cat || !function_of(g, f, rows) || !function_of(f, g, rows)) continue;
            merge_same(f, g);
        }
        f->eta2 = complete >= 3 ? eta2(f, q3, rows) : NAN;
        shown[n_shown++] = f;
    }
    qsort(shown, (size_t)n_shown, sizeof *shown, cmp_eta);
    return n_shown;
}

/* The importance chart, or why there is none. */
static void importance(FILE *out, Feat *const *shown, int n_shown, int rows, int complete)
{
    if (!n_shown) {
        html_no_chart(out, rows < 2 ? "Fewer than two trials in the journal: no option can be compared yet."
                                    : "Every trial has the same options: nothing was swept.");
    } else if (complete < 3) {
        html_no_chart(out, "Importance needs at least three complete trials; shown below are the values swept.");
    } else {
        const char **names = fs_calloc((size_t)n_shown, sizeof *names);
        double *v = fs_calloc((size_t)n_shown, sizeof *v);
        int n = 0; /* the options with a share: a value per complete trial has none */
        for (int i = 0; i < n_shown; i++)
            if (!isnan(shown[i]->eta2)) names[n] = shown[i]->name, v[n++] = 100 * shown[i]->eta2;
        if (!n) {
            html_no_chart(out, "Every option has a value per complete trial: no trial is left to tell an effect from "
                               "noise, so no importance is shown.");
            free(names), free(v);
            return;
        }
        html_chart_bars(out, "Share of trial Q3 variance explained by each option (omega squared: adjusted for "
                        "chance, 0 where an option does no better than its number of values would alone)",
                        "variance explained (%)", n,
                        names, v, "%.1f", "%");
        free(names), free(v);
    }
}

void html_effects(FILE *out, const FsReport *rep, const double *q3)
{
    int rows = rep->n_rows;
    Feats fs = {NULL, 0, 0, rows};
    int complete = read_configs(&fs, rep, q3);
    int n_many = drop_unshown(&fs, rows);
    Feat **shown = fs_calloc((size_t)fs.n + 1, sizeof *shown);
    int n_shown = shown_options(&fs, rows, complete, q3, shown);
    importance(out, shown, n_shown, rows, complete);
    if (n_many)
        fprintf(out, "<p class=\"why\">%d option%s with more than %d distinct values %s not plotted.</p>\n", n_many,
                n_many == 1 ? "" : "s", MAX_VALUES, n_many == 1 ? "is" : "are");
    for (int i = 0; i < n_shown; i++) strip_of(out, shown[i], rep, q3);
    for (int i = 0; i < fs.n; i++) {
        for (int r = 0; r < rows; r++) free(fs.f[i].val[r]);
        free(fs.f[i].val), free(fs.f[i].name), free(fs.f[i].also), free(fs.f[i].cat), free(fs.f[i].cats);
        for (int b = 0; b < BINS; b++) free(fs.f[i].labels[b]);
    }
    free(fs.f), free(shown);
}
