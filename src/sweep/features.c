/*
 * features.c: data.features (the model's input: one-hot codes and/or
 * per-residue columns from files; docs/sweep-format.md) and
 * data.feature_store, into the sweep's FsFeatSpec; their canonical text
 * and the trial config's part; binding the data's column count to every
 * trial's architecture once the data is loaded.
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

/* The options each source kind takes besides its own key. */
static int source_option_ok(FsFeatKind k, const char *key)
{
    if (!strcmp(key, "missing")) return 1;
    if (!strcmp(key, "columns")) return k == FS_FEAT_PSSM;
    if (!strcmp(key, "dataset")) return k == FS_FEAT_H5;
    return 0;
}

/* One {KIND: PATH, option: value, ...} item; 0, or -1 with the error added. */
static int parse_source(FsSweep *sw, const YNode *v, const char *where, FsFeatSource *src, SwErrs *e)
{
    int kind = -1, line = v->line, col = v->col;
    for (int i = 0; i < v->n; i++) {
        const int k = features_kind_parse(v->key[i]->value);
        if (k < 0) continue;
        if (kind >= 0)
            return swerr_add(e, v->key[i]->line, v->key[i]->col, "%s: one source per item; give %s and %s as two items",
                             where, features_kind_name((FsFeatKind)kind), v->key[i]->value),
                   -1;
        kind = k;
    }
    if (kind < 0)
        return swerr_add(e, line, col, "%s: expected onehot or a source {pssm: DIR}, {hhm: DIR}, {h5: FILE} or "
                                       "{npy: DIR}", where),
               -1;
    src->kind = (FsFeatKind)kind;
    for (int i = 0; i < v->n; i++) {
        const char *key = v->key[i]->value;
        const YNode *x = v->item[i];
        if (features_kind_parse(key) >= 0) continue;
        if (!source_option_ok(src->kind, key))
            return swerr_add(e, v->key[i]->line, v->key[i]->col,
                             "%s: unknown option '%s' for a %s source (it takes %s)", where, key,
                             features_kind_name(src->kind),
                             src->kind == FS_FEAT_PSSM ? "columns, missing"
                             : src->kind == FS_FEAT_H5 ? "dataset, missing"
                                                       : "missing"),
                   -1;
        const char *val = x->kind == YN_SCALAR ? x->value : "";
        if (!strcmp(key, "missing") && strcmp(val, "zeros") && strcmp(val, "error"))
            return swerr_add(e, x->line, x->col, "%s.missing: expected zeros or error, got '%s'", where, val), -1;
        if (!strcmp(key, "columns") && strcmp(val, "logodds") && strcmp(val, "percent"))
            return swerr_add(e, x->line, x->col, "%s.columns: expected logodds or percent, got '%s'", where, val), -1;
        if (!strcmp(key, "dataset") && (!strstr(val, "{id}") || strlen(val) > 200))
            return swerr_add(e, x->line, x->col, "%s.dataset: expected a dataset name holding {id} (the protein's "
                                                 "id), got '%s'", where, val),
                   -1;
        src->missing_zeros |= !strcmp(key, "missing") && !strcmp(val, "zeros");
        src->pssm_percent |= !strcmp(key, "columns") && !strcmp(val, "percent");
        if (!strcmp(key, "dataset")) src->dataset = fs_strdup(val);
    }
    char w[48];
    snprintf(w, sizeof w, "%s.%s", where, features_kind_name(src->kind));
    src->path = sw_path_of(sw, v, features_kind_name(src->kind), w, e);
    return src->path ? 0 : -1;
}

void sw_parse_features(FsSweep *sw, const YNode *d, SwErrs *e)
{
    const YNode *v = ytree_get(d, "feature_store");
    if (v) {
        const int s = v->kind == YN_SCALAR ? features_store_parse(v->value) : -1;
        if (s < 0)
            swerr_add(e, v->line, v->col, "data.feature_store: expected auto, half or float");
        else
            sw->features.store = (FsFeatStore)s;
    }
    if (!(v = ytree_get(d, "features"))) return;
    sw->features_line = v->line, sw->features_col = v->col;
    if (v->kind != YN_SEQ || v->n == 0) {
        swerr_add(e, v->line, v->col, "data.features: expected a list of onehot and sources, e.g. [onehot, {h5: "
                                      "embeddings.h5}]");
        return;
    }
    int onehot = 0;
    for (int i = 0; i < v->n; i++) {
        const YNode *x = v->item[i];
        char where[40];
        snprintf(where, sizeof where, "data.features[%d]", i + 1);
        if (x->kind == YN_SCALAR && !strcmp(x->value, "onehot")) {
            if (i > 0)
                swerr_add(e, x->line, x->col, "%s: onehot comes first (the model's input is the one-hot codes, "
                                              "then the sources' columns in order)", where);
            onehot = 1;
        } else if (x->kind != YN_MAP) {
            swerr_add(e, x->line, x->col, "%s: expected onehot or a source {pssm: DIR}, {hhm: DIR}, {h5: FILE} or "
                                          "{npy: DIR}", where);
        } else if (sw->features.n == FS_FEAT_MAX_SOURCES) {
            swerr_add(e, x->line, x->col, "%s: at most %d sources", where, FS_FEAT_MAX_SOURCES);
        } else if (parse_source(sw, x, where, &sw->features.src[sw->features.n], e) == 0) {
            sw->features.n++;
        }
    }
    sw->no_onehot = !onehot;
}

void sw_features_free(FsSweep *sw)
{
    for (int i = 0; i < sw->features.n; i++) {
        free((char *)sw->features.src[i].path);
        free((char *)sw->features.src[i].dataset);
    }
    sw->features.n = 0;
}

/* "{h5: "F", dataset: "{id}", missing: zeros}" and the like. */
static void source_text(SwBuf *b, const FsFeatSource *s, int with_path)
{
    sb_printf(b, "{%s", features_kind_name(s->kind));
    if (with_path) sb_puts(b, ": "), sw_put_str(b, s->path);
    if (s->kind == FS_FEAT_PSSM) sb_printf(b, ", columns: %s", s->pssm_percent ? "percent" : "logodds");
    if (s->kind == FS_FEAT_H5) sb_puts(b, ", dataset: "), sw_put_str(b, s->dataset ? s->dataset : "{id}");
    if (s->missing_zeros) sb_puts(b, ", missing: zeros");
    sb_puts(b, "}");
}

void sw_features_canon(SwBuf *b, const FsSweep *sw)
{
    if (sw->features.n) {
        sb_puts(b, "  features: [");
        if (!sw->no_onehot) sb_puts(b, "onehot, ");
        for (int i = 0; i < sw->features.n; i++) {
            if (i) sb_puts(b, ", ");
            source_text(b, &sw->features.src[i], 1);
        }
        sb_puts(b, "]\n");
    }
    if (sw->features.store != FS_FEAT_STORE_AUTO)
        sb_printf(b, "  feature_store: %s\n", features_store_name(sw->features.store));
}

/* The inputs as a trial config's data.features: the kinds and how their
 * columns are read, not where the files are (a model's id does not change
 * when its data moves; the data's fingerprint covers the values). */
void sw_features_config(SwBuf *b, const FsSweep *sw)
{
    if (!sw->features.n) return;
    sb_printf(b, "\"features\":\"%s", sw->no_onehot ? "" : "onehot");
    for (int i = 0; i < sw->features.n; i++) {
        const FsFeatSource *s = &sw->features.src[i];
        sb_printf(b, "%s%s%s", i || !sw->no_onehot ? "+" : "", features_kind_name(s->kind),
                  s->kind == FS_FEAT_PSSM && s->pssm_percent ? ":percent" : "");
    }
    sb_puts(b, "\",");
}

void sweep_features_describe(const FsSweep *sw, const FsDataset *ds, char *out, size_t n)
{
    const unsigned per = ds->feat_dim * (ds->feat_half ? 2u : 4u);
    if (!ds->feat_dim) {
        snprintf(out, n, "one-hot residues");
        return;
    }
    snprintf(out, n, "%s%u columns from %d file source%s, stored as %s: %u bytes per residue, %.1f MiB per rank",
             sw->no_onehot ? "" : "one-hot + ", ds->feat_dim, sw->features.n, sw->features.n == 1 ? "" : "s",
             ds->feat_half ? "half floats" : "floats", per, (double)per * ds->n_res / (1 << 20));
}

int sweep_bind_columns(FsSweep *sw, int feat_dim, FsErrList *errs)
{
    const int was = sw->feat_dim;
    sw->feat_dim = feat_dim;
    /* run.constraints bound the parameters, and the feature weights are
     * parameters: with columns the trials are drawn again, counting them
     * (plan, the leaderboard and the constraints then say one number). */
    if (sw->constraints.given && sw->feat_dim != was) {
        SwErrs e = {.name = sw->path};
        if (sw_expand_again(sw, &e) != 0) {
            swerr_flush(&e, errs);
            return -1;
        }
    }
    for (int i = 0; i < sw->n_trials; i++) sw->trials[i].arch.feat_dim = sw->feat_dim;
    return 0;
}

int sweep_bind_data(FsSweep *sw, const FsDataset *ds, FsErrList *errs)
{
    if (sweep_bind_columns(sw, (int)ds->feat_dim, errs) != 0) return -1;
    sweep_assign_ids(sw, ds->fingerprint);
    return 0;
}
