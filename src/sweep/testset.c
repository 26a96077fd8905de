/*
 * testset.c: the optional `test` section, a held-out test set evaluated
 * when the sweep finishes, and its loading. It names files the way `data`
 * does (same keys, same path resolution) but nothing else of `data`: the
 * window is the sweep's, and a test set is evaluated whole, never split.
 * It is deliberately left out of the canonical sweep and the trial ids, so
 * a test set can be added to a finished sweep, and MPI workers (which get
 * the canonical text) never see it.
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

static const char *const test_keys[] = {"inputs", "files", "format", "sequences", "labels", "mask", "top", "refit",
                                         "max_identity", "max_coverage", "exclude_overlap"};

/* Keys of `data` that have no meaning for a test set: refused with the
 * reason, rather than as unknown keys (whoever writes them means something). */
static const struct {
    const char *key, *why;
} refused[] = {
    {"window", "the window comes from data (data.window), the same for training and test; remove it here"},
    {"prepared", "a prepared fold file is training data; give the test set as inputs or sequences + labels"},
    {"synth", "a synthetic set cannot be the test set; give inputs or sequences + labels"},
    {"split", "a test set is not split (all of it is evaluated); remove it"},
    {"folds", "a test set is not split into folds (all of it is evaluated); remove it"},
    {"fold_seed", "a test set is not split into folds (all of it is evaluated); remove it"},
};
#define N_REFUSED ((int)(sizeof refused / sizeof *refused))

/* The reason key is refused, or NULL. */
static const char *refused_why(const char *key)
{
    for (int i = 0; i < N_REFUSED; i++)
        if (!strcmp(key, refused[i].key)) return refused[i].why;
    return NULL;
}

/* Refused keys with their reason, and unknown keys with suggestions drawn
 * from the accepted keys only (so a misspelt key never points at a refused one). */
static void check_keys(const YNode *t, SwErrs *e)
{
    YNode view = *t; /* the mapping less its refused keys; sw_check_keys reads only key[] and n */
    view.key = fs_calloc((size_t)t->n + 1, sizeof *view.key);
    view.n = 0;
    for (int i = 0; i < t->n; i++) {
        const YNode *k = t->key[i];
        const char *why = refused_why(k->value);
        if (why)
            swerr_add(e, k->line, k->col, "test.%s: %s", k->value, why);
        else
            view.key[view.n++] = t->key[i];
    }
    sw_check_keys(&view, "test", test_keys, (int)(sizeof test_keys / sizeof *test_keys), e);
    free(view.key);
}

/* test.KEY as a plain boolean (as everywhere in a sweep file: "true" in
 * quotes is a string). */
static void parse_bool(const YNode *t, const char *key, int *out, SwErrs *e)
{
    const YNode *v = ytree_get(t, key);
    if (!v) return;
    if (v->kind == YN_SCALAR && !v->quoted && !strcmp(v->value, "true"))
        *out = 1;
    else if (v->kind == YN_SCALAR && !v->quoted && !strcmp(v->value, "false"))
        *out = 0;
    else
        swerr_add(e, v->line, v->col, "test.%s: expected true or false, got %s%s%s", key,
                  v->kind == YN_SCALAR ? "'" : "", v->kind == YN_SCALAR ? v->value : "a list or mapping",
                  v->kind == YN_SCALAR ? "'" : "");
}

void sw_parse_test(FsSweep *sw, const YNode *key, const YNode *t, SwErrs *e)
{
    sw->has_test = 1;
    sw->test_line = key->line;
    sw->test_col = key->col;
    if (t->kind != YN_MAP) {
        swerr_add(e, t->line, t->col, "test: expected a mapping (inputs or sequences + labels, format, top, refit)");
        return;
    }
    check_keys(t, e);
    const YNode *v;
    if ((v = ytree_get(t, "inputs")) && ytree_get(t, "files")) {
        const YNode *k = ytree_key(t, "files");
        swerr_add(e, k->line, k->col, "test: 'files' and 'inputs' are the same option; give one");
    }
    if (v || (v = ytree_get(t, "files")))
        sw_parse_files(sw, v, "test.inputs", &sw->test_inputs, &sw->n_test_inputs, e);
    sw->test_sequences = sw_path_of(sw, t, "sequences", "test.sequences", e);
    sw->test_labels = sw_path_of(sw, t, "labels", "test.labels", e);
    sw->test_mask = sw_path_of(sw, t, "mask", "test.mask", e);

    /* Exactly one source. */
    int has_in = ytree_get(t, "inputs") || ytree_get(t, "files");
    int has_fasta = ytree_get(t, "sequences") || ytree_get(t, "labels") || ytree_get(t, "mask");
    if (!has_in && !has_fasta)
        swerr_add(e, t->line, t->col, "test: no test data; give inputs or sequences + labels (a FASTA set)");
    else if (has_in && has_fasta)
        swerr_add(e, t->line, t->col, "test: give exactly one of inputs, sequences + labels");
    if (has_fasta && !ytree_get(t, "sequences"))
        swerr_add(e, t->line, t->col, "test: a FASTA set needs 'sequences'");
    if (has_fasta && !ytree_get(t, "labels")) swerr_add(e, t->line, t->col, "test: a FASTA set needs 'labels'");

    if ((v = ytree_get(t, "format"))) {
        int f = sw_parse_format(v, "test.format", has_in, has_fasta, NULL, e);
        if (f >= 0) sw->test_format = (FsFormat)f;
    }
    if (has_fasta) sw->test_format = FS_FMT_FASTA;

    long long n;
    if ((v = ytree_get(t, "top"))) {
        if (sw_scalar_int(v, &n) || n < 1 || n > FS_TEST_TOP_MAX)
            swerr_add(e, v->line, v->col, "test.top: expected an integer from 1 to %d (the number of best trials "
                      "evaluated), got %s%s%s", FS_TEST_TOP_MAX, v->kind == YN_SCALAR ? "'" : "",
                      v->kind == YN_SCALAR ? v->value : "a list or mapping", v->kind == YN_SCALAR ? "'" : "");
        else
            sw->test_top = (int)n;
    }
    parse_bool(t, "refit", &sw->test_refit, e);
    parse_bool(t, "exclude_overlap", &sw->test_exclude_overlap, e);
    double x;
    if ((v = ytree_get(t, "max_identity"))) {
        if (sw_scalar_float(v, &x) || !(x >= 0.0 && x <= 1.0))
            swerr_add(e, v->line, v->col, "test.max_identity: expected a number from 0 to 1 (the highest sequence "
                      "identity a test protein may have to a training protein), got %s%s%s",
                      v->kind == YN_SCALAR ? "'" : "", v->kind == YN_SCALAR ? v->value : "a list or mapping",
                      v->kind == YN_SCALAR ? "'" : "");
        else
            sw->test_max_identity = x;
    }
    if ((v = ytree_get(t, "max_coverage"))) {
        if (sw_scalar_float(v, &x) || !(x >= 0.0 && x <= 1.0))
            swerr_add(e, v->line, v->col, "test.max_coverage: expected a number from 0 to 1 (the largest share of a "
                      "test protein's residues in near-identical stretches of training proteins), got %s%s%s",
                      v->kind == YN_SCALAR ? "'" : "", v->kind == YN_SCALAR ? v->value : "a list or mapping",
                      v->kind == YN_SCALAR ? "'" : "");
        else
            sw->test_max_coverage = x;
    }
}

int sweep_load_test(const FsSweep *sw, FsDataset *test, FsErrList *errs)
{
    memset(test, 0, sizeof *test);
    if (!sw->has_test) {
        errlist_add(errs, "%s: the sweep has no test section (test: {inputs: [...]})", sw->path);
        return -1;
    }
    FsLoadSpec spec = {sw->test_format, (const char **)sw->test_inputs, sw->n_test_inputs,
                       sw->test_sequences, sw->test_labels, sw->test_mask};
    FsErr err = {0};
    /* 8-state trials on 3-state labels: their predictions reduced (the run
     * says so as it opens the test set). */
    if (data_load_scoring(test, &spec, sw->classes, &err)) {
        sw_file_error(sw, &err, "test", sw->test_line, sw->test_col, errs);
        data_free(test);
        return -1;
    }
    /* A file with predefined sets (FLIP's): its SET=test proteins (as evaluate). */
    data_keep_test_set(test);
    /* The test proteins' columns from the same sources as the training
     * proteins' (one HDF5 file or folder holds both, by protein id). */
    if (sw->features.n && features_load(test, &sw->features, &err)) {
        sw_file_error(sw, &err, "data.features", sw->features_line, sw->features_col, errs);
        data_free(test);
        return -1;
    }
    /* Every residue masked out: there would be nothing to score. */
    if (!test->stats.scored) {
        errlist_add(errs, "%s:%d:%d: test: the test set has no scored residue to evaluate", sw->path,
                    sw->test_line, sw->test_col);
        data_free(test);
        return -1;
    }
    return 0;
}
