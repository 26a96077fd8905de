/*
 * sections.c: the `data`, `run` and `search` sections, which hold single
 * values (never grid dimensions), and the path and format readers the
 * `test` section (testset.c) shares with `data`. Relative data paths are
 * resolved against the sweep file's folder and kept absolute, so the
 * canonical sweep saved in a run folder still names the same files.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/sweep_int.h"

/* ---------------------------------------------------------------------- */
/* Paths                                                                   */

/* Removes "." and "x/.." components in place (lexically: the files need
 * not exist yet when the sweep is checked). */
static void normalize(char *p)
{
    int absolute = p[0] == '/';
    char *out = p + absolute, *seg = p + absolute;
    char *stack[256];
    int n = 0;
    while (seg) {
        char *end = strchr(seg, '/');
        size_t len = end ? (size_t)(end - seg) : strlen(seg);
        char *next = end ? end + 1 : NULL; /* taken now: the copy below may overwrite the terminator */
        int dotdot = len == 2 && seg[0] == '.' && seg[1] == '.';
        if (len == 0 || (len == 1 && seg[0] == '.') || (dotdot && n == 0 && absolute)) {
            /* skip ("/.." is "/") */
        } else if (dotdot && n > 0 && strncmp(stack[n - 1], "../", 3)) {
            out = stack[--n];
        } else if (n < 256) {
            stack[n++] = out;
            memmove(out, seg, len);
            out += len;
            *out++ = '/';
        }
        seg = next;
    }
    if (out > p + absolute) out--; /* the trailing slash */
    *out = '\0';
    if (!p[0]) strcpy(p, ".");
}

char *sw_resolve_path(const char *sweep_name, const char *rel)
{
    char cwd[FS_PATH_MAX] = ".";
    char *out;
    if (rel[0] == '/') {
        out = fs_strdup(rel);
    } else {
        const char *slash = strrchr(sweep_name, '/');
        int dir_len = slash ? (int)(slash - sweep_name) : 0;
        int dir_abs = sweep_name[0] == '/';
        if (!dir_abs && !getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
        size_t n = strlen(cwd) + (size_t)dir_len + strlen(rel) + 4;
        out = fs_malloc(n);
        if (dir_abs)
            snprintf(out, n, "%.*s/%s", dir_len, sweep_name, rel);
        else
            snprintf(out, n, "%s/%.*s%s%s", cwd, dir_len, sweep_name, dir_len ? "/" : "", rel);
    }
    normalize(out);
    return out;
}

const char *sw_file_name(const YNode *v, const char *where, SwErrs *e)
{
    if (v->kind != YN_SCALAR || (!v->value[0] && !v->quoted)) {
        swerr_add(e, v->line, v->col, "%s: expected a file name", where);
        return NULL;
    }
    if (!v->value[0]) {
        swerr_add(e, v->line, v->col, "%s: empty file name", where);
        return NULL;
    }
    return v->value;
}

/* The file name v (checked), resolved, and noted in sw->files with where
 * it stands; NULL after an error. */
static char *named_file(FsSweep *sw, const YNode *v, const char *where, SwErrs *e)
{
    const char *s = sw_file_name(v, where, e);
    if (!s) return NULL;
    char *path = sw_resolve_path(sw->path, s);
    sw->files = fs_realloc(sw->files, (size_t)(sw->n_files + 1) * sizeof *sw->files);
    FsSweepFile *f = &sw->files[sw->n_files++];
    f->path = fs_strdup(path);
    snprintf(f->key, sizeof f->key, "%s", where);
    f->line = v->line;
    f->col = v->col;
    f->relative = s[0] != '/';
    return path;
}

char *sw_path_of(FsSweep *sw, const YNode *map, const char *key, const char *where, SwErrs *e)
{
    const YNode *v = ytree_get(map, key);
    return v ? named_file(sw, v, where, e) : NULL;
}

static void key_pos(const YNode *map, const char *key, int *line, int *col)
{
    for (int i = 0; i < map->n; i++)
        if (!strcmp(map->key[i]->value, key)) {
            *line = map->key[i]->line;
            *col = map->key[i]->col;
        }
}

/* ---------------------------------------------------------------------- */
/* data                                                                    */

static const char *const data_keys[] = {"format", "inputs", "files", "sequences", "labels", "mask", "prepared",
                                        "synth", "window", "folds", "fold_seed", "split", "repeats",
                                        "features", "feature_store", "classes"};

void sw_parse_files(FsSweep *sw, const YNode *v, const char *where, char ***out, int *n_out, SwErrs *e)
{
    int n = v->kind == YN_SEQ ? v->n : 1;
    if (v->kind == YN_MAP || n == 0) {
        swerr_add(e, v->line, v->col, "%s: expected a file name or a non-empty list of them", where);
        return;
    }
    *out = fs_calloc((size_t)n, sizeof **out);
    for (int i = 0; i < n; i++) {
        char w[40];
        if (v->kind == YN_SEQ)
            snprintf(w, sizeof w, "%s[%d]", where, i + 1);
        else
            snprintf(w, sizeof w, "%s", where);
        char *path = named_file(sw, v->kind == YN_SEQ ? v->item[i] : v, w, e);
        if (path) (*out)[(*n_out)++] = path;
    }
}

int sw_parse_format(const YNode *v, const char *where, int has_in, int has_fasta, const char *no_effect, SwErrs *e)
{
    static const char *const fmts[] = {"auto", "uci", "fasta", "records", "csv"};
    int f = v->kind == YN_SCALAR ? data_format_parse(v->value) : -1;
    const char *near = v->kind == YN_SCALAR ? fs_nearest(v->value, fmts, 5) : NULL;
    if (f < 0)
        swerr_add(e, v->line, v->col, "%s: expected auto, uci, fasta, records or csv%s%s%s", where,
                  near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    else if (no_effect)
        swerr_add(e, v->line, v->col, "%s: has no effect with %s; remove it", where, no_effect);
    else if (has_fasta && f != FS_FMT_AUTO && f != FS_FMT_FASTA)
        swerr_add(e, v->line, v->col, "%s: sequences + labels are a FASTA set; format must be fasta or auto", where);
    else if (has_in && f == FS_FMT_FASTA)
        swerr_add(e, v->line, v->col, "%s: fasta takes sequences + labels (+ mask), not inputs", where);
    else
        return f;
    return -1;
}

static void parse_synth(FsSweep *sw, const YNode *v, SwErrs *e)
{
    static const char *const keys[] = {"proteins", "seed"};
    if (v->kind != YN_MAP) {
        swerr_add(e, v->line, v->col, "data.synth: expected {proteins: N, seed: S}");
        return;
    }
    sw_check_keys(v, "data.synth", keys, 2, e);
    const YNode *p = ytree_get(v, "proteins"), *s = ytree_get(v, "seed");
    long long n;
    if (!p)
        swerr_add(e, v->line, v->col, "data.synth: missing 'proteins'");
    else if (sw_scalar_int(p, &n) || n < 1 || n > 1000000)
        swerr_add(e, p->line, p->col, "data.synth.proteins: expected an integer from 1 to 1000000, got '%s'",
                  p->kind == YN_SCALAR ? p->value : "?");
    else
        sw->synth_proteins = (uint32_t)n;
    sw->synth_seed = 1;
    if (s && sw_scalar_u64(s, &sw->synth_seed))
        swerr_add(e, s->line, s->col, "data.synth.seed: expected a whole number from 0 to 2^64-1");
}

/* data's source: exactly one of inputs, a FASTA set, prepared, synth;
 * and its format. Returns whether it is a prepared file. */
static int data_source(FsSweep *sw, const YNode *d, SwErrs *e)
{
    const YNode *v;
    if ((v = ytree_get(d, "inputs")) && ytree_get(d, "files")) {
        key_pos(d, "files", &sw->data_line, &sw->data_col);
        swerr_add(e, sw->data_line, sw->data_col, "data: 'files' and 'inputs' are the same option; give one");
    }
    if (v || (v = ytree_get(d, "files"))) sw_parse_files(sw, v, "data.inputs", &sw->inputs, &sw->n_inputs, e);
    sw->sequences = sw_path_of(sw, d, "sequences", "data.sequences", e);
    sw->labels = sw_path_of(sw, d, "labels", "data.labels", e);
    sw->mask = sw_path_of(sw, d, "mask", "data.mask", e);
    sw->prepared = sw_path_of(sw, d, "prepared", "data.prepared", e);
    if ((v = ytree_get(d, "synth"))) parse_synth(sw, v, e);

    int has_in = ytree_get(d, "inputs") || ytree_get(d, "files");
    int has_fasta = ytree_get(d, "sequences") || ytree_get(d, "labels") || ytree_get(d, "mask");
    int has_prep = ytree_get(d, "prepared") != NULL, has_synth = ytree_get(d, "synth") != NULL;
    if (has_in + has_fasta + has_prep + has_synth == 0)
        swerr_add(e, d->line, d->col, "data: no data; give inputs, sequences + labels (a FASTA set), "
                  "prepared (a prepared fold file) or synth");
    else if (has_in + has_fasta + has_prep + has_synth > 1)
        swerr_add(e, d->line, d->col, "data: give exactly one of inputs, sequences + labels, prepared, synth");
    if (has_fasta && !ytree_get(d, "sequences"))
        swerr_add(e, d->line, d->col, "data: a FASTA set needs 'sequences'");
    if (has_fasta && !ytree_get(d, "labels"))
        swerr_add(e, d->line, d->col, "data: a FASTA set needs 'labels'");

    if ((v = ytree_get(d, "format"))) {
        const char *no_effect = has_prep ? "a prepared file" : has_synth ? "synth" : NULL;
        int f = sw_parse_format(v, "data.format", has_in, has_fasta, no_effect, e);
        if (f >= 0) sw->format = (FsFormat)f;
    }
    if (has_fasta) sw->format = FS_FMT_FASTA;
    return has_prep;
}

/* data.window: odd, 1 to 255, default 17 (0 when bad: later checks skip
 * it), or `chain` (a whole-chain model: window 0, chain set). */
static void data_window(FsSweep *sw, const YNode *d, SwErrs *e)
{
    const YNode *v = ytree_get(d, "window");
    sw->window = 17;
    sw->chain = 0;
    if (!v) {
        sw->window_line = d->line;
        sw->window_col = d->col;
        return;
    }
    long long w;
    sw->window_line = v->line;
    sw->window_col = v->col;
    if (v->kind == YN_SCALAR && !strcmp(v->value, "chain")) {
        sw->window = 0;
        sw->chain = 1;
        return;
    }
    if (sw_scalar_int(v, &w) || w < 1 || w > 255 || w % 2 == 0) {
        if (!sw_scalar_int(v, &w) && w % 2 == 0 && w >= 1 && w <= 255)
            swerr_add(e, v->line, v->col, "data.window: %lld is even; expected an odd integer from 1 to 255 "
                      "(the residue is at the centre)", w);
        else
            swerr_add(e, v->line, v->col, "data.window: expected an odd integer from 1 to 255 or chain, got '%s'",
                      v->kind == YN_SCALAR ? v->value : "a list or mapping");
        sw->window = 0; /* unknown: skip the checks against it */
    } else {
        sw->window = (int)w;
    }
}

/* data.split, data.folds, data.fold_seed. */
static void data_folds(FsSweep *sw, const YNode *d, int has_prep, SwErrs *e)
{
    const YNode *v, *split = ytree_get(d, "split");
    if (split) {
        if (split->kind == YN_SCALAR && !strcmp(split->value, "predefined"))
            sw->predefined = 1;
        else if (!(split->kind == YN_SCALAR && !strcmp(split->value, "kfold")))
            swerr_add(e, split->line, split->col, "data.split: expected kfold (k folds by protein, the default) "
                      "or predefined (the data's SET= train/validation split)");
    }
    sw->folds = 3;
    sw->fold_seed = 1;
    sw->folds_line = d->line;
    sw->folds_col = d->col;
    const char *why_not = sw->predefined ? "split: predefined" : has_prep ? "a prepared file (it holds its folds)" : NULL;
    if ((v = ytree_get(d, "folds"))) {
        long long k;
        sw->folds_line = v->line;
        sw->folds_col = v->col;
        if (why_not)
            swerr_add(e, v->line, v->col, "data.folds: has no effect with %s; remove it", why_not);
        else if (sw_scalar_int(v, &k) || k < 2 || k > FS_MAX_FOLDS)
            swerr_add(e, v->line, v->col, "data.folds: expected an integer from 2 to %d, got '%s'", FS_MAX_FOLDS,
                      v->kind == YN_SCALAR ? v->value : "a list or mapping");
        else
            sw->folds = (int)k;
    }
    sw->repeats = 1;
    if ((v = ytree_get(d, "repeats"))) {
        long long r;
        if (why_not)
            swerr_add(e, v->line, v->col, "data.repeats: has no effect with %s; remove it", why_not);
        else if (sw_scalar_int(v, &r) || r < 1 || r > FS_MAX_FOLDS / 2)
            swerr_add(e, v->line, v->col, "data.repeats: expected an integer from 1 (plain k-fold) to %d, got '%s'",
                      FS_MAX_FOLDS / 2, v->kind == YN_SCALAR ? v->value : "a list or mapping");
        else if (r * sw->folds > FS_MAX_FOLDS)
            swerr_add(e, v->line, v->col, "data.repeats: %lld repeats of %d folds make %lld folds; at most %d",
                      r, sw->folds, r * sw->folds, FS_MAX_FOLDS);
        else
            sw->repeats = (int)r;
    }
    if ((v = ytree_get(d, "fold_seed"))) {
        if (why_not)
            swerr_add(e, v->line, v->col, "data.fold_seed: has no effect with %s; remove it", why_not);
        else if (sw_scalar_u64(v, &sw->fold_seed))
            swerr_add(e, v->line, v->col, "data.fold_seed: expected a whole number from 0 to 2^64-1");
    }
    if (has_prep) sw->folds = 0; /* from the file: sweep_check_data reads it */
}

/* data.classes: 3 (the default) or 8 (DSSP-8 labels: the data's own, never synth's). */
static void data_classes(FsSweep *sw, const YNode *d, SwErrs *e)
{
    const YNode *v = ytree_get(d, "classes");
    long long k;
    sw->classes = FS_CLASSES;
    if (!v) return;
    if (sw_scalar_int(v, &k) || (k != FS_CLASSES && k != FS_CLASSES8))
        swerr_add(e, v->line, v->col,
                  "data.classes: expected 3 (helix, strand, coil) or 8 (the DSSP states H G I E B T S C), got '%s'",
                  v->kind == YN_SCALAR ? v->value : "a list or mapping");
    else if (k == FS_CLASSES8 && ytree_get(d, "synth"))
        swerr_add(e, v->line, v->col, "data.classes: 8 needs DSSP 8-state labels, and synth data is 3-state; "
                  "give inputs with DSSP-8 labels or use data.classes: 3");
    else
        sw->classes = (int)k;
}

void sw_parse_data(FsSweep *sw, const YNode *d, SwErrs *e)
{
    sw->data_line = d->line;
    sw->data_col = d->col;
    if (d->kind != YN_MAP) {
        swerr_add(e, d->line, d->col, "data: expected a mapping (inputs, window, folds, ...)");
        sw->window = 0;
        return;
    }
    sw_check_keys(d, "data", data_keys, (int)(sizeof data_keys / sizeof *data_keys), e);
    int has_prep = data_source(sw, d, e);
    data_window(sw, d, e);
    data_folds(sw, d, has_prep, e);
    sw_parse_features(sw, d, e);
    data_classes(sw, d, e);
}

/* ---------------------------------------------------------------------- */
/* run, search                                                             */

/* run.objectives: two or more distinct names of metrics_objective_names. */
static void parse_objectives(FsSweep *sw, const YNode *v, SwErrs *e)
{
    const char *want = "run.objectives: expected a list of two or more of q3, loss, params, train_seconds, predict_us";
    if (v->kind != YN_SEQ || v->n < 2 || v->n > FS_OBJ_COUNT) {
        swerr_add(e, v->line, v->col, "%s", want);
        return;
    }
    for (int i = 0; i < v->n; i++) {
        const YNode *c = v->item[i];
        int o = -1;
        for (int k = 0; c->kind == YN_SCALAR && k < FS_OBJ_COUNT; k++)
            if (!strcmp(c->value, metrics_objective_names[k])) o = k;
        for (int k = 0; o >= 0 && k < sw->n_objectives; k++)
            if (sw->objectives[k] == o) o = -2;
        if (o < 0) {
            swerr_add(e, c->line, c->col, "%s%s", want, o == -2 ? " (each once)" : "");
            sw->n_objectives = 0;
            return;
        }
        sw->objectives[sw->n_objectives++] = o;
    }
}

void sw_parse_run(FsSweep *sw, const YNode *r, SwErrs *e)
{
    static const char *const keys[] = {"backend",    "threads",    "out",   "metric",    "keep_models",
                                       "checkpoint", "alpha",      "objectives", "constraints"};
    if (r->kind != YN_MAP) {
        swerr_add(e, r->line, r->col,
                  "run: expected a mapping (backend, threads, out, metric, keep_models, checkpoint, alpha, objectives, "
                  "constraints)");
        return;
    }
    sw_check_keys(r, "run", keys, 9, e);
    const YNode *v;
    if ((v = ytree_get(r, "objectives"))) parse_objectives(sw, v, e);
    if ((v = ytree_get(r, "constraints"))) sw_parse_constraints(sw, ytree_key(r, "constraints"), v, e);
    if ((v = ytree_get(r, "backend"))) {
        int k = -1;
        for (int i = 0; i <= FS_BACKEND_CUDA && v->kind == YN_SCALAR; i++)
            if (!strcmp(v->value, sweep_backend_name((FsBackend)i))) k = i;
        if (k < 0)
            swerr_add(e, v->line, v->col, "run.backend: expected cpu, cuda or auto");
        else
            sw->backend = (FsBackend)k;
    }
    long long t;
    if ((v = ytree_get(r, "threads"))) {
        if (sw_scalar_int(v, &t) || t < 0 || t > 4096)
            swerr_add(e, v->line, v->col, "run.threads: expected an integer from 0 (all cores) to 4096");
        else
            sw->threads = (int)t;
    }
    if ((v = ytree_get(r, "keep_models"))) {
        if (v->kind == YN_SCALAR && !strcmp(v->value, "all"))
            sw->keep_models = FS_KEEP_ALL;
        else if (v->kind == YN_SCALAR && !strcmp(v->value, "none"))
            sw->keep_models = 0;
        else if (sw_scalar_int(v, &t) || t < 0 || t > FS_SWEEP_MAX_TRIALS)
            swerr_add(e, v->line, v->col, "run.keep_models: expected all, none or the number of best trials "
                      "whose fold models are kept (0 to %d)", FS_SWEEP_MAX_TRIALS);
        else
            sw->keep_models = (int)t;
    }
    if ((v = ytree_get(r, "checkpoint"))) {
        char *end = NULL;
        double sec = v->kind == YN_SCALAR ? strtod(v->value, &end) : 0.0;
        if (v->kind == YN_SCALAR && !strcmp(v->value, "off"))
            sw->checkpoint = 0.0;
        else if (v->kind != YN_SCALAR || end == v->value || *end || !(sec >= 1.0 && sec <= 1e7))
            swerr_add(e, v->line, v->col, "run.checkpoint: expected off or the seconds of a fold's training "
                      "between its checkpoints (1 to 10000000; default 600)");
        else
            sw->checkpoint = sec;
    }
    if ((v = ytree_get(r, "alpha"))) {
        double a;
        if (sw_scalar_float(v, &a) || !(a > 0.0 && a <= 0.5))
            swerr_add(e, v->line, v->col, "run.alpha: expected a level above 0 and at most 0.5 (default 0.05): a "
                      "trial is tied with the best while its adjusted p-value is at least this");
        else
            sw->alpha = (double)(float)a; /* as the canonical text writes it */
    }
    const char *s;
    if ((v = ytree_get(r, "out")) && (s = sw_file_name(v, "run.out", e))) sw->out_dir = fs_strdup(s);
    if ((v = ytree_get(r, "metric"))) {
        int k = v->kind == YN_SCALAR ? metrics_kind_parse(v->value) : -1;
        sw->metric_given = 1;
        if (k == FS_METRIC_Q8 && sw->classes != FS_CLASSES8)
            swerr_add(e, v->line, v->col, "run.metric: q8 ranks 8-state runs (data.classes: 8); expected q3 or loss");
        else if (k == FS_METRIC_Q3 && sw->classes == FS_CLASSES8)
            swerr_add(e, v->line, v->col, "run.metric: an 8-state run (data.classes: 8) ranks by q8 (validation "
                      "accuracy over the 8 states, the default) or loss; its Q3 from the reduced predictions is "
                      "reported too");
        else if (k >= 0)
            sw->metric = (FsMetricKind)k;
        else if (sw->classes == FS_CLASSES8)
            swerr_add(e, v->line, v->col, "run.metric: expected q8 (validation accuracy over the 8 states, higher is "
                      "better) or loss (validation cross-entropy, lower is better)");
        else
            swerr_add(e, v->line, v->col, "run.metric: expected q3 (validation accuracy, higher is better) "
                      "or loss (validation cross-entropy, lower is better)");
    }
}

/* search.pruner: a rule name, or {kind: NAME, its parameters}. */
static void parse_pruner(FsSweep *sw, const YNode *v, SwErrs *e)
{
    static const char *const *const kinds = prune_kind_names;
    static const char *const keys[] = {"kind", "warmup", "min_trials", "min_epochs", "reduction", "z"};
    FsPruneSpec *ps = &sw->prune;
    *ps = (FsPruneSpec){FS_PRUNER_NONE, 1, 4, 1, 3, 2.0};
    const YNode *k = v->kind == YN_MAP ? ytree_get(v, "kind") : v;
    if (v->kind == YN_MAP) sw_check_keys(v, "search.pruner", keys, 6, e);
    int kind = -1;
    for (int i = 0; k && k->kind == YN_SCALAR && i < FS_PRUNER_COUNT; i++)
        if (!strcmp(k->value, kinds[i])) kind = i;
    if (kind < 0) {
        const YNode *at = k ? k : v;
        const char *near = at->kind == YN_SCALAR ? fs_nearest(at->value, kinds, FS_PRUNER_COUNT) : NULL;
        swerr_add(e, at->line, at->col, "search.pruner: expected none, median, asha or folds%s%s%s",
                  near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        return;
    }
    ps->kind = (FsPrunerKind)kind;
    if (kind == FS_PRUNER_FOLDS) ps->min_trials = 3;
    if (v->kind != YN_MAP) return;
    struct { const char *key; int *out; int lo, hi; int for_kind; } ints[] = {
        {"warmup", &ps->warmup, 1, FS_TRAIN_MAX_EPOCHS, FS_PRUNER_MEDIAN},
        {"min_trials", &ps->min_trials, 1, FS_SWEEP_MAX_TRIALS, -1},
        {"min_epochs", &ps->min_epochs, 1, FS_TRAIN_MAX_EPOCHS, FS_PRUNER_ASHA},
        {"reduction", &ps->reduction, 2, 100, FS_PRUNER_ASHA}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        const YNode *x = ytree_get(v, ints[i].key);
        long long n;
        if (!x) continue;
        if (ints[i].for_kind >= 0 && ints[i].for_kind != kind)
            swerr_add(e, x->line, x->col, "search.pruner.%s: has no effect with %s; remove it", ints[i].key, kinds[kind]);
        else if (sw_scalar_int(x, &n) || n < ints[i].lo || n > ints[i].hi)
            swerr_add(e, x->line, x->col, "search.pruner.%s: expected an integer from %d to %d", ints[i].key,
                      ints[i].lo, ints[i].hi);
        else
            *ints[i].out = (int)n;
    }
    const YNode *z = ytree_get(v, "z");
    double zv;
    if (z && kind != FS_PRUNER_FOLDS)
        swerr_add(e, z->line, z->col, "search.pruner.z: has no effect with %s; remove it", kinds[kind]);
    else if (z && (sw_scalar_float(z, &zv) || zv < 0 || zv > 10))
        swerr_add(e, z->line, z->col, "search.pruner.z: expected a number from 0 to 10");
    else if (z)
        ps->z = (float)zv; /* kept as a float, as the canonical text writes it */
}

/* search.replicates: {top: N, seeds: S}, both required. */
static void parse_replicates(FsSweep *sw, const YNode *v, SwErrs *e)
{
    static const char *const keys[] = {"top", "seeds"};
    const YNode *t = v->kind == YN_MAP ? ytree_get(v, "top") : NULL;
    const YNode *s = v->kind == YN_MAP ? ytree_get(v, "seeds") : NULL;
    long long top, seeds;
    if (v->kind == YN_MAP) sw_check_keys(v, "search.replicates", keys, 2, e);
    if (!t || sw_scalar_int(t, &top) || top < 1 || top > FS_SWEEP_MAX_TRIALS)
        swerr_add(e, (t ? t : v)->line, (t ? t : v)->col, "search.replicates: expected {top: N, seeds: S}, top from 1 to "
                  "%d: the best N trials train again with more seeds", FS_SWEEP_MAX_TRIALS);
    else if (!s || sw_scalar_int(s, &seeds) || seeds < 2 || seeds > FS_MAX_SEEDS)
        swerr_add(e, (s ? s : v)->line, (s ? s : v)->col, "search.replicates: expected seeds from 2 to %d: the seeds "
                  "each of the top trials trains with, its own included", FS_MAX_SEEDS);
    else
        sw->replicate_top = (int)top, sw->replicate_seeds = (int)seeds;
}

void sw_parse_search(FsSweep *sw, const YNode *s, SwErrs *e)
{
    static const char *const keys[] = {"random", "seed", "pruner", "sampler", "batch", "stop", "replicates"};
    if (s->kind != YN_MAP) {
        swerr_add(e, s->line, s->col, "search: expected {random: N, seed: S, sampler: random|tpe, pruner: RULE}");
        return;
    }
    sw_check_keys(s, "search", keys, 7, e);
    const YNode *v;
    long long n;
    if ((v = ytree_get(s, "pruner"))) parse_pruner(sw, v, e);
    if ((v = ytree_get(s, "replicates"))) parse_replicates(sw, v, e);
    sw->batch = 8;
    if ((v = ytree_get(s, "sampler"))) {
        if (v->kind == YN_SCALAR && !strcmp(v->value, "random"))
            sw->sampler = FS_SAMPLER_RANDOM;
        else if (v->kind == YN_SCALAR && !strcmp(v->value, "tpe"))
            sw->sampler = FS_SAMPLER_TPE;
        else
            swerr_add(e, v->line, v->col, "search.sampler: expected random or tpe (tree-structured Parzen estimators)");
        if (!ytree_get(s, "random"))
            swerr_add(e, v->line, v->col, "search.sampler: needs search.random, the number of trials to train");
    }
    if ((v = ytree_get(s, "stop"))) {
        const YNode *a = v->kind == YN_MAP ? ytree_get(v, "after") : NULL;
        static const char *const stop_keys[] = {"after"};
        if (v->kind == YN_MAP) sw_check_keys(v, "search.stop", stop_keys, 1, e);
        if (!ytree_get(s, "random"))
            swerr_add(e, v->line, v->col, "search.stop: needs search.random (a budget of trials to stop short of)");
        else if (!a || sw_scalar_int(a, &n) || n < 1 || n > FS_SWEEP_MAX_TRIALS)
            swerr_add(e, (a ? a : v)->line, (a ? a : v)->col, "search.stop: expected {after: N}, N from 1 to %d: the "
                      "study ends once N trials in a row did not beat the best by more than its standard error",
                      FS_SWEEP_MAX_TRIALS);
        else
            sw->stop_after = (int)n;
    }
    if ((v = ytree_get(s, "batch"))) {
        if (sw->sampler != FS_SAMPLER_TPE && !ytree_get(s, "stop"))
            swerr_add(e, v->line, v->col, "search.batch: only with sampler: tpe or search.stop; remove it");
        else if (sw_scalar_int(v, &n) || n < 1 || n > 4096)
            swerr_add(e, v->line, v->col, "search.batch: expected an integer from 1 to 4096");
        else
            sw->batch = (int)n;
    }

    if ((v = ytree_get(s, "random"))) {
        if (sw_scalar_int(v, &n) || n < 1 || n > FS_SWEEP_MAX_TRIALS)
            swerr_add(e, v->line, v->col, "search.random: expected an integer from 1 to %d", FS_SWEEP_MAX_TRIALS);
        else
            sw->random_n = (int)n;
        if (sw->sampler == FS_SAMPLER_GRID) sw->sampler = FS_SAMPLER_RANDOM;
    } else if (!ytree_get(s, "pruner") && !ytree_get(s, "replicates")) {
        swerr_add(e, s->line, s->col, "search: missing 'random' (the number of trials to sample)");
    }
    if ((v = ytree_get(s, "seed")) && sw_scalar_u64(v, &sw->search_seed))
        swerr_add(e, v->line, v->col, "search.seed: expected a whole number from 0 to 2^64-1");
}
