/*
 * sweep.c: loading a sweep (file or text) from the top: the sections in
 * order, every error collected before any expansion, then the trials and
 * the canonical text; and the checks that need the loaded data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep/sweep_int.h"
#include "synth/synth.h"

static void defaults(FsSweep *sw, const char *name)
{
    memset(sw, 0, sizeof *sw);
    sw->path = fs_strdup(name);
    sw->format = FS_FMT_AUTO;
    sw->folds = 3;
    sw->repeats = 1;
    sw->alpha = FS_ALPHA_DEFAULT;
    sw->fold_seed = 1;
    sw->window = 17;
    sw->classes = FS_CLASSES;
    sw->backend = FS_BACKEND_AUTO;
    sw->metric = FS_METRIC_Q3;
    sw->keep_models = FS_KEEP_DEFAULT;
    sw->checkpoint = FS_CHECKPOINT_DEFAULT;
    sw->search_seed = 1;
    sw->test_format = FS_FMT_AUTO;
    sw->test_top = FS_TEST_TOP_DEFAULT;
    sw->test_max_identity = FS_IDENTITY_MAX_DEFAULT;
    sw->test_max_coverage = FS_COVERAGE_MAX_DEFAULT;
}

int sweep_load_string(FsSweep *sw, const char *text, const char *name, FsErrList *errs)
{
    defaults(sw, name);
    SwErrs e = {.name = name};
    FsErr perr = {0};
    int failed;
    YNode *root = ytree_parse(text, strlen(text), name, &failed, &perr);
    if (failed) {
        errlist_add(errs, "%s", perr.msg);
        sweep_free(sw);
        return -1;
    }
    SwSpace *sp = fs_calloc(1, sizeof *sp);
    sw_space_defaults(sp);
    static const char *const top[] = {"data", "model", "training", "run", "search", "test"};
    const YNode *data = ytree_get(root, "data");
    if (!root || root->kind != YN_MAP) {
        swerr_add(&e, root ? root->line : 1, root ? root->col : 1,
                  "a sweep file is a mapping with the sections data, model, training, run, search and test");
    } else {
        sw_check_keys(root, "the sweep", top, 6, &e);
        if (!data)
            swerr_add(&e, root->line, root->col, "missing section 'data' (what to train on)");
        else
            sw_parse_data(sw, data, &e);
        const YNode *v;
        sw_parse_model(sp, ytree_get(root, "model"), sw->chain ? -1 : sw->window, sw->window_line, sw->window_col, &e);
        sp->classes = sw->classes; /* explicit class weights name the run's classes */
        sw_parse_training(sp, ytree_get(root, "training"), &e);
        sw_check_batching(sw, sp, &e);
        if ((v = ytree_get(root, "run"))) sw_parse_run(sw, v, &e);
        if (sw->classes == FS_CLASSES8 && !sw->metric_given) sw->metric = FS_METRIC_Q8;
        if ((v = ytree_get(root, "search"))) sw_parse_search(sw, v, &e);
        /* Parsed and checked like the rest, but sw_canonical leaves it out. */
        if ((v = ytree_get(root, "test"))) sw_parse_test(sw, ytree_key(root, "test"), v, &e);
    }
    if (!e.n) sw_expand(sw, sp, &e);
    if (!e.n) sweep_set_gpu_path(sw, sw->gpu_path);
    if (!e.n) sw->canonical = sw_canonical(sw, sp);
    ytree_free(root);
    sw->space = sp; /* kept for sweep_trial_value */
    if (e.n) {
        swerr_flush(&e, errs);
        sweep_free(sw);
        return -1;
    }
    return 0;
}

/* A window model's batches are examples (batch_size, eval_batch), a chain
 * model's are rows of whole chains (batch_residues): the other kind's
 * option would change nothing, so it is refused where given. */
int sw_batching_moot(const FsSweep *sw, int o)
{
    return sw->chain ? (o == O_BATCH || o == O_EVAL_BATCH) : o == O_BATCH_RESIDUES;
}

void sw_check_batching(const FsSweep *sw, const SwSpace *sp, SwErrs *e)
{
    for (int k = 0; k < O_COUNT; k++) {
        const SwOpt *o = &sp->opt[k];
        if (o->given && sw_batching_moot(sw, k))
            swerr_add(e, o->line, o->col,
                      sw->chain ? "training.%s: has no effect with a chain model (data.window: chain), whose batches "
                                  "are whole chains up to training.batch_residues rows; remove it"
                                : "training.%s: has no effect without data.window: chain (a window model's batches "
                                  "are batch_size residues); remove it",
                      sw_opts[k].key);
    }
}

int sweep_load_file(FsSweep *sw, const char *path, FsErrList *errs)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen takes a folder; its read fails, saying little */
        defaults(sw, path);
        errlist_add(errs, "%s is a folder; expected a sweep file (YAML, e.g. sweeps/quickstart.yaml)", path);
        sweep_free(sw);
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        defaults(sw, path);
        errlist_add(errs, "%s: cannot open the sweep file: %s", path, strerror(errno));
        sweep_free(sw);
        return -1;
    }
    SwBuf b = {0};
    sb_puts(&b, "");
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = '\0';
        if (strlen(chunk) != n) { /* a NUL byte: binary, not YAML */
            fclose(f);
            free(b.s);
            defaults(sw, path);
            errlist_add(errs, "%s: not a text file (it contains a NUL byte)", path);
            sweep_free(sw);
            return -1;
        }
        sb_puts(&b, chunk);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b.s);
        defaults(sw, path);
        errlist_add(errs, "%s: read error", path);
        sweep_free(sw);
        return -1;
    }
    int rc = sweep_load_string(sw, b.s, path, errs);
    free(b.s);
    return rc;
}

void sweep_free(FsSweep *sw)
{
    free(sw->path);
    for (int i = 0; i < sw->n_inputs; i++) free(sw->inputs[i]);
    free(sw->inputs);
    free(sw->sequences), free(sw->labels), free(sw->mask), free(sw->prepared);
    sw_features_free(sw);
    free(sw->out_dir);
    for (int i = 0; i < sw->n_test_inputs; i++) free(sw->test_inputs[i]);
    free(sw->test_inputs);
    free(sw->test_sequences), free(sw->test_labels), free(sw->test_mask);
    sw_trials_free(sw);
    free(sw->canonical);
    for (int i = 0; i < sw->n_files; i++) free(sw->files[i].path);
    free(sw->files);
    if (sw->space) sw_space_free(sw->space);
    free(sw->space);
    memset(sw, 0, sizeof *sw);
}

int sweep_check_data(const FsSweep *sw, const FsDataset *ds, FsErrList *errs)
{
    SwErrs e = {.name = sw->path};
    if (sw->predefined) {
        if (!data_examples(ds, FS_FOLD_PREDEFINED, 0, NULL))
            swerr_add(&e, sw->data_line, sw->data_col, "data.split: predefined, but no protein of the data is "
                      "in the training set (FASTA label headers SET=train)");
        if (!data_examples(ds, FS_FOLD_PREDEFINED, 1, NULL))
            swerr_add(&e, sw->data_line, sw->data_col, "data.split: predefined, but no protein of the data is "
                      "in the validation set (SET=validation or VALIDATION=1 in the label headers)");
    } else if (ds->n_folds < 2) {
        if (sw->prepared)
            swerr_add(&e, sw->data_line, sw->data_col, "data.prepared: the file has %u folds; expected 2 or more",
                      ds->n_folds);
        else if ((uint32_t)sw->folds > ds->n_prot)
            swerr_add(&e, sw->folds_line, sw->folds_col, "data.folds: %d folds but the data has only %u proteins",
                      sw->folds, ds->n_prot);
        else
            swerr_add(&e, sw->folds_line, sw->folds_col, "data.folds: the data has no folds assigned "
                      "(the runner must call data_assign_folds)");
    } else {
        if (!sw->prepared && ds->n_folds != (uint32_t)sweep_fold_count(sw))
            swerr_add(&e, sw->folds_line, sw->folds_col, "data.folds: the sweep asks for %d folds, the data has %u",
                      sweep_fold_count(sw), ds->n_folds);
        for (uint32_t f = 0; f < ds->n_folds; f++) {
            if (!data_examples(ds, (int)f, 1, NULL))
                swerr_add(&e, sw->folds_line, sw->folds_col, "data.folds: fold %u has no scored residue to "
                          "validate on; use fewer folds", f + 1);
            else if (!data_examples(ds, (int)f, 0, NULL))
                swerr_add(&e, sw->folds_line, sw->folds_col, "data.folds: fold %u leaves no scored residue to "
                          "train on", f + 1);
        }
    }
    int n = e.n;
    swerr_flush(&e, errs);
    return n ? -1 : 0;
}

int sweep_fold_count(const FsSweep *sw)
{
    return sw->predefined ? 1 : sw->folds * (sw->repeats > 1 ? sw->repeats : 1);
}

int sweep_load_data(const FsSweep *sw, FsDataset *ds, FsErrList *errs)
{
    FsErr err = {0};
    int rc;
    memset(ds, 0, sizeof *ds);
    if (sw->prepared) {
        rc = data_read_prepared(ds, sw->prepared, &err);
    } else if (sw->synth_proteins) {
        rc = synth_generate(ds, sw->synth_proteins, sw->synth_seed, &err);
    } else {
        FsLoadSpec spec = {sw->format, (const char **)sw->inputs, sw->n_inputs, sw->sequences, sw->labels, sw->mask};
        rc = data_load_classes(ds, &spec, sw->classes, &err);
    }
    if (rc == 0 && sw->prepared && fs_classes(ds->classes) != sw->classes) {
        fs_err_at(&err, sw->prepared, 0, 0, "a prepared file of %d-state labels, but data.classes is %d (prepare it "
                  "with --classes %d)", fs_classes(ds->classes), sw->classes, sw->classes);
        rc = -1;
    }
    if (rc) {
        sw_file_error(sw, &err, "data", sw->data_line, sw->data_col, errs);
        data_free(ds);
        return -1;
    }
    if (sw->features.n && features_load(ds, &sw->features, &err)) {
        sw_file_error(sw, &err, "data.features", sw->features_line, sw->features_col, errs);
        data_free(ds);
        return -1;
    }
    /* More folds than proteins is the sweep's mistake: leave it to
     * sweep_check_data, which names the line of `folds`. */
    if (!sw->prepared && !sw->predefined && (uint32_t)sw->folds <= ds->n_prot &&
        data_assign_repeats(ds, (uint32_t)sw->folds, (uint32_t)sw->repeats, sw->fold_seed, &err)) {
        sw_file_error(sw, &err, "data", sw->folds_line, sw->folds_col, errs);
        data_free(ds);
        return -1;
    }
    if (sweep_check_data(sw, ds, errs)) {
        data_free(ds);
        return -1;
    }
    return 0;
}
