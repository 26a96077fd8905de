/*
 * features.c: a model's feature sources (data.features) as its file's
 * "features" metadata, and back: what `predict` and `evaluate` read new
 * proteins' columns from unless told other files (docs/models.md).
 *
 *   {"store": "auto", "sources": [{"kind": "h5", "path": "/abs/x.h5",
 *    "dataset": "{id}", "columns": "logodds", "missing": "error"}, ...]}
 *
 * "dataset" is an h5 source's, "columns" a pssm source's; every value is
 * checked on the way in (the file is anyone's to edit).
 */
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "modelfile/modelfile.h"

char *modelfile_features_json(const FsFeatSpec *spec)
{
    FsJsonOut w = {0};
    json_object_begin(&w);
    json_member_str(&w, "store", features_store_name(spec->store));
    json_key(&w, "sources");
    json_array_begin(&w);
    for (int i = 0; i < spec->n; i++) {
        const FsFeatSource *s = &spec->src[i];
        json_object_begin(&w);
        json_member_str(&w, "kind", features_kind_name(s->kind));
        json_member_str(&w, "path", s->path);
        if (s->kind == FS_FEAT_H5) json_member_str(&w, "dataset", s->dataset ? s->dataset : "{id}");
        if (s->kind == FS_FEAT_PSSM) json_member_str(&w, "columns", s->pssm_percent ? "percent" : "logodds");
        json_member_str(&w, "missing", s->missing_zeros ? "zeros" : "error");
        json_end(&w);
    }
    json_end(&w);
    json_end(&w);
    FS_ASSERT(!json_out_error(&w));
    return w.p;
}

/* A string member that is one of two words: 0 or 1 by which, -1 otherwise. */
static int word_of(const FsJson *o, const char *key, const char *w0, const char *w1)
{
    const FsJson *v = json_get(o, key);
    if (!v || v->type != FS_JSON_STRING) return -1;
    return !strcmp(v->str, w0) ? 0 : !strcmp(v->str, w1) ? 1 : -1;
}

static char *path_of(const FsJson *o, const char *key)
{
    const FsJson *v = json_get(o, key);
    return v && v->type == FS_JSON_STRING && v->len > 0 && v->len < FS_PATH_MAX && strlen(v->str) == v->len
               ? fs_strdup(v->str)
               : NULL;
}

/* Source i of the metadata; 0, or -1 naming what was expected. */
static int source_from(FsFeatSource *s, const FsJson *o, int i, FsErr *err)
{
    const FsJson *k = o->type == FS_JSON_OBJECT ? json_get(o, "kind") : NULL;
    const int kind = k && k->type == FS_JSON_STRING ? features_kind_parse(k->str) : -1;
    memset(s, 0, sizeof *s);
    if (kind < 0) return fs_err_set(err, "features: source %d: expected \"kind\": pssm, hhm, h5 or npy", i + 1), -1;
    s->kind = (FsFeatKind)kind;
    s->path = path_of(o, "path");
    const int missing = word_of(o, "missing", "error", "zeros");
    const int columns = kind == FS_FEAT_PSSM ? word_of(o, "columns", "logodds", "percent") : 0;
    s->dataset = kind == FS_FEAT_H5 ? path_of(o, "dataset") : NULL;
    s->missing_zeros = missing == 1;
    s->pssm_percent = columns == 1;
    if (!s->path || missing < 0 || columns < 0 || (kind == FS_FEAT_H5 && (!s->dataset || !strstr(s->dataset, "{id}"))))
        return fs_err_set(err, "features: source %d (%s): expected \"path\", \"missing\": error or zeros%s", i + 1,
                          features_kind_name(s->kind),
                          kind == FS_FEAT_PSSM ? ", \"columns\": logodds or percent"
                          : kind == FS_FEAT_H5 ? ", \"dataset\" holding {id}"
                                               : ""),
               -1;
    return 0;
}

int modelfile_features_parse(FsFeatSpec *spec, const char *json, FsErr *err)
{
    FsJsonDoc doc;
    char why[160];
    memset(spec, 0, sizeof *spec);
    if (json_parse(&doc, json, strlen(json), why, sizeof why) != 0)
        return fs_err_set(err, "features is not JSON (%s)", why), -1;
    const FsJson *st = json_get(doc.root, "store"), *src = json_get(doc.root, "sources");
    const int store = st && st->type == FS_JSON_STRING ? features_store_parse(st->str) : -1;
    int rc = -1;
    if (store < 0 || !src || src->type != FS_JSON_ARRAY || src->n < 1 || src->n > FS_FEAT_MAX_SOURCES) {
        fs_err_set(err, "features: expected {\"store\": auto, half or float, \"sources\": [1 to %d sources]}",
                   FS_FEAT_MAX_SOURCES);
        goto out;
    }
    spec->store = (FsFeatStore)store;
    for (const FsJson *o = src->child; o; o = o->next) {
        const int bad = source_from(&spec->src[spec->n], o, spec->n, err);
        spec->n++; /* freed with the others either way */
        if (bad) goto out;
    }
    rc = 0;
out:
    json_free(&doc);
    if (rc) modelfile_features_free(spec);
    return rc;
}

void modelfile_features_free(FsFeatSpec *spec)
{
    for (int i = 0; i < spec->n; i++) {
        free((char *)spec->src[i].path);
        free((char *)spec->src[i].dataset);
    }
    spec->n = 0;
}
