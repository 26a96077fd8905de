/*
 * arch.c: a model's architecture as the JSON of its file's "arch"
 * metadata (docs/models.md, "Metadata"), and back: what the loaders,
 * foldsweep's and PyTorch's, build the network from. Written with the json
 * module's writer (floats as the shortest text that reads back as the same
 * float), read with its reader, every value range-checked.
 */
#include <math.h>
#include <string.h>

#include "json/json.h"
#include "modelfile/modelfile.h"

/* ---------------------------------------------------------------------- */
/* The architecture as JSON (floats as the shortest text of the float)     */

static void put_num(FsJsonOut *w, const char *key, float v)
{
    json_key(w, key);
    json_num32(w, v);
}

static void put_act(FsJsonOut *w, const FsLayerSpec *l)
{
    json_member_str(w, "activation", model_act_name(l->act));
    put_num(w, "act_param", l->act_param);
}

char *modelfile_arch_json(const FsNet *net)
{
    FsJsonOut w = {0}; /* a non-finite setting is refused: the arch is checked before training */
    json_object_begin(&w);
    /* A chain model's window is the word "chain": a reader that knows only
     * windows refuses it rather than reading a window of 0. */
    if (net->arch.chain)
        json_member_str(&w, "window", "chain");
    else
        json_member_int(&w, "window", net->arch.window);
    /* The input, where it is not the one-hot codes alone (data.features):
     * whether they are read, and the feature columns after them. Left out
     * otherwise, so one-hot models' files stay as they were. */
    if (net->arch.feat_dim || net->arch.no_onehot) {
        json_key(&w, "input");
        json_object_begin(&w);
        json_key(&w, "onehot");
        json_bool(&w, !net->arch.no_onehot);
        json_member_int(&w, "features", net->arch.feat_dim);
        json_end(&w);
    }
    json_key(&w, "layers");
    json_array_begin(&w);
    for (int i = 0; i < net->n; i++) {
        const FsLayerSpec *l = &net->layer[i].spec;
        json_object_begin(&w);
        json_member_str(&w, "kind", model_layer_name(l->kind));
        switch (l->kind) {
        case FS_LAYER_CONV:
            json_member_int(&w, "filters", l->units);
            json_member_int(&w, "width", l->width);
            if (l->dilation > 1) json_member_int(&w, "dilation", l->dilation);
            put_act(&w, l);
            break;
        case FS_LAYER_HIGHWAY:
            json_member_int(&w, "width", l->width);
            if (l->dilation > 1) json_member_int(&w, "dilation", l->dilation);
            put_act(&w, l);
            break;
        case FS_LAYER_DENSE:
            json_member_int(&w, "units", l->units);
            put_act(&w, l);
            break;
        case FS_LAYER_BATCHNORM:
            put_num(&w, "eps", l->eps);
            put_num(&w, "momentum", l->momentum);
            break;
        case FS_LAYER_LAYERNORM: put_num(&w, "eps", l->eps); break;
        case FS_LAYER_GRU:
        case FS_LAYER_LSTM:
            json_member_int(&w, "units", l->units);
            json_key(&w, "bidirectional");
            json_bool(&w, l->bidir);
            break;
        case FS_LAYER_ATTENTION:
            json_member_int(&w, "heads", l->heads);
            json_member_int(&w, "key_dim", l->key_dim);
            json_member_int(&w, "max_distance", l->max_dist);
            put_num(&w, "dropout", l->rate);
            put_num(&w, "eps", l->eps);
            break;
        case FS_LAYER_DROPOUT: put_num(&w, "rate", l->rate); break;
        case FS_LAYER_ADD: json_member_int(&w, "layers", l->units); break;
        case FS_LAYER_OUTPUT: json_member_int(&w, "units", l->units); break;
        }
        json_end(&w);
    }
    json_end(&w);
    json_end(&w);
    FS_ASSERT(!json_out_error(&w));
    return w.p;
}

static int get_i(const FsJson *o, const char *key, int lo, int hi, int *out)
{
    long long v;
    if (json_i64(json_get(o, key), &v) || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* A float in [lo, hi] (finite: "nan" and "inf" strings are refused). */
static int get_f(const FsJson *o, const char *key, float lo, float hi, float *out)
{
    return json_f32(json_get(o, key), out) || !(*out >= lo && *out <= hi) ? -1 : 0;
}

/* An optional dilation (absent: 1, written as 0 as the sweep does). */
static int get_dilation(const FsJson *o, FsLayerSpec *l)
{
    if (!json_get(o, "dilation")) return 0;
    if (get_i(o, "dilation", 1, FS_MAX_DILATION, &l->dilation)) return -1;
    if (l->dilation == 1) l->dilation = 0;
    return 0;
}

/* The optional "input": {"onehot": true|false, "features": 0..FS_FEAT_MAX_DIM}. */
static int get_input(const FsJson *o, FsArch *arch)
{
    const FsJson *in = json_get(o, "input"), *oh = in ? json_get(in, "onehot") : NULL;
    if (!in) return 0;
    if (in->type != FS_JSON_OBJECT || !oh || (oh->type != FS_JSON_TRUE && oh->type != FS_JSON_FALSE) ||
        get_i(in, "features", 0, FS_FEAT_MAX_DIM, &arch->feat_dim))
        return -1;
    arch->no_onehot = oh->type == FS_JSON_FALSE;
    return arch->no_onehot && arch->feat_dim == 0 ? -1 : 0;
}

/* "window": 1..255, or "chain". */
static int get_window(const FsJson *o, FsArch *arch)
{
    const FsJson *w = json_get(o, "window");
    if (w && w->type == FS_JSON_STRING && !strcmp(w->str, "chain")) {
        arch->chain = 1;
        arch->window = 0;
        return 0;
    }
    return get_i(o, "window", 1, 255, &arch->window);
}

static int get_act(const FsJson *o, FsLayerSpec *l)
{
    const FsJson *a = json_get(o, "activation");
    if (!a || a->type != FS_JSON_STRING || model_act_parse(a->str) < 0) return -1;
    l->act = (FsAct)model_act_parse(a->str);
    return get_f(o, "act_param", 0, 100, &l->act_param);
}

int modelfile_arch_parse(FsArch *arch, const char *json, FsErr *err)
{
    FsJsonDoc doc;
    char why[160];
    memset(arch, 0, sizeof *arch);
    if (json_parse(&doc, json, strlen(json), why, sizeof why) != 0)
        return fs_err_set(err, "arch is not JSON (%s)", why), -1;
    const FsJson *layers = json_get(doc.root, "layers");
    int rc = -1;
    if (get_window(doc.root, arch) || get_input(doc.root, arch) || !layers || layers->type != FS_JSON_ARRAY ||
        layers->n < 1 || layers->n > FS_MAX_LAYERS + 1) {
        fs_err_set(err, "arch: expected {\"window\": 1..255 or \"chain\", \"input\" (optional): {\"onehot\": true or "
                        "false, \"features\": 0..%d, not both absent}, \"layers\": [1..%d layers, the output last]}",
                   FS_FEAT_MAX_DIM, FS_MAX_LAYERS + 1);
        goto out;
    }
    int i = 0;
    for (const FsJson *o = layers->child; o; o = o->next, i++) {
        const FsJson *k = json_get(o, "kind");
        FsLayerSpec l;
        memset(&l, 0, sizeof l);
        int bad = !k || k->type != FS_JSON_STRING;
        int last = i == layers->n - 1;
        const char *kind = bad ? "?" : k->str;
        if (bad) {
        } else if (!strcmp(kind, "conv1d")) {
            l.kind = FS_LAYER_CONV;
            bad = get_i(o, "filters", 1, FS_MAX_FILTERS, &l.units) || get_i(o, "width", 1, 255, &l.width) ||
                  get_dilation(o, &l) || get_act(o, &l);
        } else if (!strcmp(kind, "highway")) {
            l.kind = FS_LAYER_HIGHWAY;
            bad = get_i(o, "width", 1, 255, &l.width) || get_dilation(o, &l) || get_act(o, &l);
        } else if (!strcmp(kind, "dense")) {
            l.kind = FS_LAYER_DENSE;
            bad = get_i(o, "units", 1, FS_MAX_UNITS, &l.units) || get_act(o, &l);
        } else if (!strcmp(kind, "batchnorm")) {
            l.kind = FS_LAYER_BATCHNORM;
            bad = get_f(o, "eps", 1e-30f, 1, &l.eps) || get_f(o, "momentum", 0, 1, &l.momentum);
        } else if (!strcmp(kind, "layernorm")) {
            l.kind = FS_LAYER_LAYERNORM;
            bad = get_f(o, "eps", 1e-30f, 1, &l.eps);
        } else if (!strcmp(kind, "gru") || !strcmp(kind, "lstm")) {
            const FsJson *bd = json_get(o, "bidirectional");
            l.kind = !strcmp(kind, "gru") ? FS_LAYER_GRU : FS_LAYER_LSTM;
            bad = get_i(o, "units", 1, FS_MAX_RNN_UNITS, &l.units) || !bd ||
                  (bd->type != FS_JSON_TRUE && bd->type != FS_JSON_FALSE);
            l.bidir = !bad && bd->type == FS_JSON_TRUE;
        } else if (!strcmp(kind, "attention")) {
            l.kind = FS_LAYER_ATTENTION;
            bad = get_i(o, "heads", 1, FS_MAX_HEADS, &l.heads) || get_i(o, "key_dim", 1, FS_MAX_KEY_DIM, &l.key_dim) ||
                  get_i(o, "max_distance", 1, FS_MAX_ATT_DIST, &l.max_dist) ||
                  get_f(o, "dropout", 0, 0.999999f, &l.rate) || get_f(o, "eps", 1e-30f, 1, &l.eps);
        } else if (!strcmp(kind, "add")) {
            l.kind = FS_LAYER_ADD;
            bad = get_i(o, "layers", 1, FS_MAX_LAYERS, &l.units);
        } else if (!strcmp(kind, "dropout")) {
            l.kind = FS_LAYER_DROPOUT;
            bad = get_f(o, "rate", 0, 0.999999f, &l.rate);
        } else if (!strcmp(kind, "output")) {
            /* 3 classes, or 8 (an 8-state model, data.classes: 8). */
            int units = 0;
            bad = !last || get_i(o, "units", FS_CLASSES, FS_CLASSES8, &units) ||
                  (units != FS_CLASSES && units != FS_CLASSES8);
            if (!bad && units == FS_CLASSES8) arch->classes = FS_CLASSES8;
        } else {
            bad = 1;
        }
        if (!bad && last && strcmp(kind, "output") != 0) bad = 1;
        if (bad) {
            fs_err_set(err, "arch: layer %d (%s): expected the fields of docs/models.md (and the output layer, "
                            "3 or 8 units, last)", i + 1, kind);
            goto out;
        }
        if (!last) arch->layers[arch->n_layers++] = l;
    }
    rc = 0;
out:
    json_free(&doc);
    return rc;
}
