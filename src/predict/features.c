/*
 * features.c: new proteins' feature columns for an ensemble that reads
 * them (data.features): from the sources its model files name, or from the
 * files the user names instead (--features KIND:PATH,...), which must be
 * the same kinds in the same order; the columns loaded must be as many as
 * the models read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"

/* The first model's sources with their paths replaced by the user's:
 * "KIND:PATH[,KIND:PATH...]", one per source, in the models' order. */
static int override_paths(FsFeatSpec *spec, const char *list, const char *origin, char *buf, size_t bufn, FsErr *err)
{
    if (strlen(list) >= bufn) return fs_err_set(err, "--features: longer than %zu characters", bufn - 1), -1;
    memcpy(buf, list, strlen(list) + 1);
    int i = 0;
    for (char *tok = buf, *next; tok; tok = next, i++) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        char *colon = strchr(tok, ':');
        const int kind = colon ? (*colon = '\0', features_kind_parse(tok)) : -1;
        if (kind < 0 || !colon[1])
            return fs_err_set(err, "--features: '%s': expected KIND:PATH with KIND pssm, hhm, h5 or npy", tok), -1;
        if (i >= spec->n || (int)spec->src[i].kind != kind)
            return fs_err_set(err, "--features: source %d is %s, but %s read %s", i + 1, tok, origin,
                              i < spec->n ? features_kind_name(spec->src[i].kind) : "no more sources"),
                   -1;
        free((char *)spec->src[i].path);
        spec->src[i].path = fs_strdup(colon + 1);
    }
    if (i != spec->n)
        return fs_err_set(err, "--features: %d source%s given, but %s read %d (in order: KIND:PATH,...)", i,
                          i == 1 ? "" : "s", origin, spec->n),
               -1;
    return 0;
}

int predict_features(const FsEnsemble *e, const char *paths, FsDataset *ds, FsErr *err)
{
    const FsArch *a = &e->m[0].net.arch;
    const char *origin = "the models";
    for (int i = 1; i < e->n; i++) {
        const FsArch *b = &e->m[i].net.arch;
        const char *fa = e->m[0].info.features, *fb = e->m[i].info.features;
        if (b->feat_dim != a->feat_dim || b->no_onehot != a->no_onehot || (fa && fb && strcmp(fa, fb) != 0))
            return fs_err_set(err, "the models of one ensemble read the same inputs (data.features): model %d "
                                   "reads other sources than model 1", i + 1),
                   -1;
    }
    if (!a->feat_dim) {
        if (paths) return fs_err_set(err, "--features: the models read no feature columns (one-hot input only)"), -1;
        return 0;
    }
    FsFeatSpec spec;
    char buf[8192];
    if (modelfile_features_parse(&spec, e->m[0].info.features, err) != 0) return -1;
    int rc = paths ? override_paths(&spec, paths, origin, buf, sizeof buf, err) : 0;
    if (rc == 0 && (rc = features_load(ds, &spec, err)) != 0 && !paths) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        fs_err_set(err, "%s (the sources the models were trained with; --features KIND:PATH,... names others)", msg);
    }
    if (rc == 0 && ds->feat_dim != (uint32_t)a->feat_dim)
        rc = (fs_err_set(err, "data.features: the files give %u columns per residue, the models read %d",
                         ds->feat_dim, a->feat_dim),
              -1);
    modelfile_features_free(&spec);
    return rc;
}
