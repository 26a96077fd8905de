/*
 * sections.c: the `data` section, which holds single values (never grid
 * dimensions; nor do `run` and `search`, in sections_run.c), and the path
 * and format readers the `test` section (testset.c) shares with `data`.
 * Relative data paths are resolved against the sweep file's folder and
 * kept absolute, so the canonical sweep saved in a run folder still names
 * the same files.
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

const char *const sw_data_keys[SW_N_DATA_KEYS] = {"format", "inputs", "files", "sequences", "labels", "mask",
                                                  "prepared", "synth", "window", "folds", "fold_seed", "split",
                                                  "repeats", "features", "feature_store", "classes"};

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
    sw_check_keys(d, "data", sw_data_keys, SW_N_DATA_KEYS, e);
    int has_prep = data_source(sw, d, e);
    data_window(sw, d, e);
    data_folds(sw, d, has_prep, e);
    sw_parse_features(sw, d, e);
    data_classes(sw, d, e);
}
