/*
 * model_space.c: the `model` section. Either structured options (depth,
 * filters, kernel, ... each a value or a list) or `layers`, a list of
 * alternative explicit layer lists. Both are checked against the window
 * here, so that no trial of the grid can fail model_compile later.
 */
#include <string.h>

#include "sweep/sweep_int.h"

static const char *const *const kinds = model_layer_names; /* the first FS_LAYER_OUTPUT may be named */

/* Per-layer parameters: key, the option whose type and bounds apply, and
 * which kinds take it (bit per FsLayerKind) and require it. */
typedef struct {
    const char *key;
    int opt;
    unsigned takes, needs;
} LayerParam;

#define K(x) (1u << (x))
static const LayerParam params[] = {
    {"filters", O_FILTERS, K(FS_LAYER_CONV), K(FS_LAYER_CONV)},
    {"units", O_DENSE, K(FS_LAYER_DENSE), K(FS_LAYER_DENSE)},
    {"width", O_KERNEL, K(FS_LAYER_CONV) | K(FS_LAYER_HIGHWAY), K(FS_LAYER_CONV) | K(FS_LAYER_HIGHWAY)},
    {"activation", O_ACTIVATION, K(FS_LAYER_CONV) | K(FS_LAYER_DENSE) | K(FS_LAYER_HIGHWAY), 0},
    {"leaky_slope", O_LEAKY_SLOPE, K(FS_LAYER_CONV) | K(FS_LAYER_DENSE) | K(FS_LAYER_HIGHWAY), 0},
    {"elu_alpha", O_ELU_ALPHA, K(FS_LAYER_CONV) | K(FS_LAYER_DENSE) | K(FS_LAYER_HIGHWAY), 0},
    {"rate", O_DROPOUT, K(FS_LAYER_DROPOUT), K(FS_LAYER_DROPOUT)},
    {"epsilon", O_BN_EPSILON, K(FS_LAYER_BATCHNORM) | K(FS_LAYER_LAYERNORM), 0},
    {"momentum", O_BN_MOMENTUM, K(FS_LAYER_BATCHNORM), 0},
    {"gate_bias", O_GATE_BIAS, K(FS_LAYER_HIGHWAY), 0},
    {"dilation", O_DILATION, K(FS_LAYER_CONV) | K(FS_LAYER_HIGHWAY), 0},
    {"layers", O_RESIDUAL, K(FS_LAYER_ADD), 0},
    {"units", O_GRU, K(FS_LAYER_GRU) | K(FS_LAYER_LSTM), K(FS_LAYER_GRU) | K(FS_LAYER_LSTM)},
    {"bidirectional", O_BIDIR, K(FS_LAYER_GRU) | K(FS_LAYER_LSTM), 0},
    {"layers", O_RNN_LAYERS, K(FS_LAYER_GRU) | K(FS_LAYER_LSTM), 0},
    {"heads", O_HEADS, K(FS_LAYER_ATTENTION), K(FS_LAYER_ATTENTION)},
    {"key_dim", O_KEY_DIM, K(FS_LAYER_ATTENTION), K(FS_LAYER_ATTENTION)},
    {"max_distance", O_MAX_DIST, K(FS_LAYER_ATTENTION), 0},
    {"dropout", O_ATT_DROPOUT, K(FS_LAYER_ATTENTION), 0},
    {"epsilon", O_BN_EPSILON, K(FS_LAYER_ATTENTION), 0},
};
#define N_PARAMS (int)(sizeof params / sizeof params[0])

/* The kinds a layer list may name, "conv1d, dense, ... or layernorm". */
static const char *kind_list(char *out, size_t n)
{
    size_t at = 0;
    out[0] = 0;
    for (int k = 0; k < FS_LAYER_OUTPUT && at < n; k++)
        at += (size_t)snprintf(out + at, n - at, "%s%s", k == 0 ? "" : k == FS_LAYER_OUTPUT - 1 ? " or " : ", ",
                               kinds[k]);
    return out;
}

/* A layer item's kind and its parameter mapping (NULL when none):
 * "- batchnorm", "- batchnorm:" or "- {conv1d: {...}}". The kind, or -1
 * with the error added. */
static int layer_head(const YNode *ly, const char *where, const YNode **kn_out, const YNode **args_out, SwErrs *e)
{
    const YNode *kn, *args = NULL;
    if (ly->kind == YN_SCALAR) {
        kn = ly; /* "- batchnorm": a kind whose parameters all have defaults */
    } else if (ly->kind == YN_MAP && ly->n == 1) {
        kn = ly->key[0];
        args = ly->item[0];
    } else {
        char list[160];
        swerr_add(e, ly->line, ly->col, "%s: expected one layer, {KIND: {PARAMS}} with KIND one of %s", where,
                  kind_list(list, sizeof list));
        return -1;
    }
    int kind = -1;
    for (int k = 0; k < FS_LAYER_OUTPUT; k++)
        if (!strcmp(kn->value, kinds[k])) kind = k;
    if (kind < 0) {
        const char *near = fs_nearest(kn->value, kinds, FS_LAYER_OUTPUT);
        char list[160];
        swerr_add(e, kn->line, kn->col, "%s: unknown layer kind '%s'%s%s%s; expected %s", where, kn->value,
                  near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", kind_list(list, sizeof list));
        return -1;
    }
    if (args && args->kind == YN_SCALAR && !args->quoted && !args->value[0]) args = NULL; /* "batchnorm:" */
    if (args && args->kind != YN_MAP) {
        swerr_add(e, args->line, args->col, "%s (%s): expected a mapping of parameters", where, kinds[kind]);
        return -1;
    }
    *kn_out = kn;
    *args_out = args;
    return kind;
}

/* Unknown keys of a layer's parameter mapping: 1 if there were any. */
static int layer_keys(const YNode *args, const char *where, int kind, SwErrs *e)
{
    const char *allowed[N_PARAMS];
    int na = 0;
    for (int p = 0; p < N_PARAMS; p++)
        if (params[p].takes & K(kind)) allowed[na++] = params[p].key;
    char w[256];
    snprintf(w, sizeof w, "%s (%s)", where, kinds[kind]);
    int before = e->n;
    sw_check_keys(args, w, allowed, na, e);
    return e->n > before;
}

void sw_layer_set(SwLayer *ly, int opt, double x)
{
    FsLayerSpec *s = &ly->spec;
    switch (opt) {
    case O_FILTERS:
    case O_DENSE: s->units = (int)x; break;
    case O_KERNEL: s->width = (int)x; break;
    case O_ACTIVATION: s->act = (FsAct)(int)x; break;
    case O_LEAKY_SLOPE: ly->leaky = (float)x, ly->set |= LS_LEAKY; break;
    case O_ELU_ALPHA: ly->elu = (float)x, ly->set |= LS_ELU; break;
    case O_DROPOUT: s->rate = (float)x; break;
    case O_BN_EPSILON: s->eps = (float)x, ly->set |= LS_EPS; break;
    case O_BN_MOMENTUM: s->momentum = (float)x, ly->set |= LS_MOM; break;
    case O_GATE_BIAS: s->gate_bias = (float)x, ly->set |= LS_GATE; break;
    case O_DILATION: s->dilation = (int)x; break;
    case O_RESIDUAL:
    case O_GRU: s->units = (int)x; break;
    case O_BIDIR: s->bidir = x != 0, ly->set |= LS_BIDIR; break;
    case O_HEADS: s->heads = (int)x; break;
    case O_KEY_DIM: s->key_dim = (int)x; break;
    case O_MAX_DIST: s->max_dist = (int)x, ly->set |= LS_MAXDIST; break;
    case O_ATT_DROPOUT: s->rate = (float)x, ly->set |= LS_ATTDROP; break;
    case O_RNN_LAYERS:
        ly->repeat = (int)x;
        if (ly->repeat > ly->repeat_max) ly->repeat_max = ly->repeat;
        break;
    }
}

/* One parameter's value x (read from v, named w) into the layer: 1 if it
 * breaks a rule of its own (checked here, where its position is known). */
static int layer_param(int opt, SwVal x, const YNode *v, const char *w, int window, SwLayer *out, SwErrs *e)
{
    sw_layer_set(out, opt, x.d);
    if (opt == O_DENSE && out->spec.units < 1) {
        swerr_add(e, v->line, v->col, "%s: a dense layer needs at least 1 unit", w);
        return 1;
    }
    if (opt == O_KERNEL && window > 0 && out->spec.width > window) {
        swerr_add(e, v->line, v->col, "%s: kernel width %d is wider than the window (%d)", w, out->spec.width, window);
        return 1;
    }
    if (opt == O_GRU && out->spec.units < 1) {
        swerr_add(e, v->line, v->col, "%s: %s %s needs at least 1 unit", w,
                  out->spec.kind == FS_LAYER_LSTM ? "an" : "a", model_layer_name(out->spec.kind));
        return 1;
    }
    if (opt == O_RESIDUAL && out->spec.units < 1) {
        swerr_add(e, v->line, v->col, "%s: an add spans at least 1 layer", w);
        return 1;
    }
    if (opt == O_DILATION && window > 0 && out->spec.dilation > 1) {
        swerr_add(e, v->line, v->col, "%s: a dilation needs a chain model (data.window: chain)", w);
        return 1;
    }
    return 0;
}

/* A parameter written as a range (sp->ranges, for this alternative and
 * layer): its high is checked as a value, its low stands in for the shape
 * check. 1 if it is bad. */
static int layer_range(SwSpace *sp, int opt, const YNode *v, const char *w, int at[2], int window, SwLayer *out,
                       SwErrs *e)
{
    if (sw_parse_range(sp, opt, v, w, at[0], at[1], NULL, e)) return 1;
    const SwRange *r = &sp->ranges[sp->n_ranges - 1];
    if (layer_param(opt, (SwVal){.d = r->high}, v, w, window, out, e)) return 1;
    return layer_param(opt, (SwVal){.d = r->low}, v, w, window, out, e);
}

static int read_layer(SwSpace *sp, const YNode *ly, const char *where, int at[2], int window, SwLayer *out, SwErrs *e)
{
    memset(out, 0, sizeof *out);
    const YNode *kn, *args;
    int kind = layer_head(ly, where, &kn, &args, e);
    if (kind < 0) return -1;
    int bad = args ? layer_keys(args, where, kind, e) : 0;
    out->spec.kind = (FsLayerKind)kind;
    out->spec.act = FS_ACT_SWISH;
    if (kind == FS_LAYER_ADD) out->spec.units = 2; /* a block of two layers, unless `layers` says */
    for (int p = 0; p < N_PARAMS; p++) {
        if (!(params[p].takes & K(kind))) continue;
        const YNode *v = args ? ytree_get(args, params[p].key) : NULL;
        char w[320];
        snprintf(w, sizeof w, "%s.%s", where, params[p].key);
        if (!v) {
            if (params[p].needs & K(kind)) {
                swerr_add(e, kn->line, kn->col, "%s (%s): missing '%s'", where, kinds[kind], params[p].key);
                bad = 1;
            }
            continue;
        }
        const int numeric = sw_opts[params[p].opt].type == OT_INT || sw_opts[params[p].opt].type == OT_FLOAT;
        if (numeric && sw_is_range(v)) {
            bad |= layer_range(sp, params[p].opt, v, w, at, window, out, e);
            continue;
        }
        SwVal x;
        if (sw_read_one(params[p].opt, v, w, &x, e)) {
            bad = 1;
            continue;
        }
        bad |= layer_param(params[p].opt, x, v, w, window, out, e);
    }
    return bad ? -1 : 0;
}

static void read_alt(SwSpace *sp, const YNode *list, int idx, int window, SwErrs *e)
{
    char where[96];
    snprintf(where, sizeof where, "model.layers[%d]", idx + 1);
    if (list->kind != YN_SEQ || list->n == 0) {
        swerr_add(e, list->line, list->col, "%s: expected a non-empty list of layers", where);
        return;
    }
    if (list->n > FS_MAX_LAYERS) {
        swerr_add(e, list->line, list->col, "%s: %d layers; at most %d (the output layer is implicit)", where,
                  list->n, FS_MAX_LAYERS);
        return;
    }
    SwLayerList *alt = &sp->alts[sp->n_alts];
    memset(alt, 0, sizeof *alt);
    alt->line = list->line;
    alt->col = list->col;
    int bad = 0;
    for (int i = 0; i < list->n; i++) {
        char w[192];
        snprintf(w, sizeof w, "%s[%d]", where, i + 1);
        int at[2] = {idx, i};
        bad |= read_layer(sp, list->item[i], w, at, window, &alt->l[i], e) != 0;
    }
    alt->n = list->n;
    if (bad) return;
    /* A recurrent layer's `layers` makes it that many layers (its range's high, the most). */
    int total = 0;
    for (int i = 0; i < alt->n; i++) total += alt->l[i].repeat_max > 1 ? alt->l[i].repeat_max : 1;
    if (total > FS_MAX_LAYERS) {
        swerr_add(e, list->line, list->col, "%s: %d layers with the recurrent layers' `layers`; at most %d", where,
                  total, FS_MAX_LAYERS);
        return;
    }
    /* Shapes (a conv after a dense layer, a first layer that cannot read the
     * one-hot window): model_compile knows the rules, so ask it. Per-layer
     * parameters left to model-wide options get valid stand-ins here. */
    if (window != 0) { /* a window, or a chain model (window < 0: sw_parse_model) */
        FsArch a = {.window = window > 0 ? window : 0, .chain = window < 0};
        for (int i = 0; i < alt->n; i++)
            for (int k = 0; k < (alt->l[i].repeat_max > 1 ? alt->l[i].repeat_max : 1); k++) {
                FsLayerSpec *s = &a.layers[a.n_layers++];
                *s = alt->l[i].spec;
                if (!(alt->l[i].set & LS_EPS)) s->eps = 1e-3f;
                if (!(alt->l[i].set & LS_MOM)) s->momentum = 0.99f;
                if (!(alt->l[i].set & LS_BIDIR)) s->bidir = 1;
                if (!(alt->l[i].set & LS_MAXDIST)) s->max_dist = (int)sw_opt_default(O_MAX_DIST);
            }
        FsNet net;
        FsErr err = {0};
        if (model_compile(&net, &a, 1, &err)) {
            swerr_add(e, list->line, list->col, "%s: %s", where, err.msg);
            return;
        }
    }
    sp->n_alts++;
}

static void read_layers(SwSpace *sp, const YNode *v, int window, SwErrs *e)
{
    sp->layers_line = v->line;
    sp->layers_col = v->col;
    if (v->kind != YN_SEQ || v->n == 0) {
        swerr_add(e, v->line, v->col, "model.layers: expected a list of layer lists, "
                  "[[{conv1d: {filters: 64, width: 5}}, ...], ...]");
        return;
    }
    /* One list of layers (its first item a layer) is shorthand for [[...]]. */
    int single = v->item[0]->kind != YN_SEQ;
    int n = single ? 1 : v->n;
    sp->alts = fs_calloc((size_t)n, sizeof *sp->alts);
    sp->n_alts = 0;
    for (int i = 0; i < n; i++) read_alt(sp, single ? v : v->item[i], i, window, e);
}

static void check_structured(const SwSpace *sp, int window, int line, int col, SwErrs *e);

/* The largest value of a list, or a range's high. */
static double max_of(const SwSpace *sp, const SwOpt *o)
{
    if (o->range) return sp->ranges[o->range - 1].high;
    double m = o->v[0].d;
    for (int i = 1; i < o->n; i++)
        if (o->v[i].d > m) m = o->v[i].d;
    return m;
}

void sw_parse_model(SwSpace *sp, const YNode *m, int window, int wline, int wcol, SwErrs *e)
{
    if (!m) {
        check_structured(sp, window, wline, wcol, e);
        return;
    }
    if (m->kind != YN_MAP) {
        swerr_add(e, m->line, m->col, "model: expected a mapping (depth, filters, kernel, ... or layers)");
        return;
    }
    const char *keys[O_COUNT + 1];
    int nk = 0;
    for (int o = 0; o < O_COUNT; o++)
        if (sw_opts[o].sec == SEC_MODEL) keys[nk++] = sw_opts[o].key;
    keys[nk++] = "layers";
    sw_check_keys(m, "model", keys, nk, e);
    const YNode *layers = ytree_get(m, "layers");
    int bad = 0;
    for (int o = 0; o < O_COUNT; o++) {
        if (sw_opts[o].sec != SEC_MODEL) continue;
        const YNode *v = ytree_get(m, sw_opts[o].key);
        if (!v) continue;
        if (layers && o <= O_STRUCT_LAST) {
            for (int i = 0; i < m->n; i++)
                if (m->item[i] == v)
                    swerr_add(e, m->key[i]->line, m->key[i]->col,
                              "model.%s cannot be combined with model.layers (give it in each layer instead)",
                              sw_opts[o].key);
            continue;
        }
        char where[96];
        snprintf(where, sizeof where, "model.%s", sw_opts[o].key);
        int before = e->n;
        sw_parse_opt(sp, o, v, where, e);
        bad |= e->n > before;
    }
    if (layers) {
        read_layers(sp, layers, window, e);
        return;
    }
    if (!bad) check_structured(sp, window, m->line, m->col, e);
}

/* Cross-option checks of the structured form. Defaults have no position
 * of their own: their errors point at (line, col). */
/* model.dilation's values (a range: its high, the largest) against the
 * window and the deepest convolution of the grid. */
static void check_dilation(const SwSpace *sp, int window, SwErrs *e)
{
    const SwOpt *dl = &sp->opt[O_DILATION];
    for (int i = 0; i < dl->n; i++) {
        const double d = dl->range ? max_of(sp, dl) : dl->v[i].d;
        const int line = dl->range ? dl->line : dl->v[i].line, col = dl->range ? dl->col : dl->v[i].col;
        long reach = 1;
        for (int j = 1; j < (int)max_of(sp, &sp->opt[O_DEPTH]) && reach <= FS_MAX_DILATION; j++) reach *= (long)d;
        if (d > 1 && window > 0)
            swerr_add(e, line, col, "model.dilation: %d needs a chain model (data.window: chain)", (int)d);
        else if (reach > FS_MAX_DILATION)
            swerr_add(e, line, col,
                      "model.dilation: %d gives the deepest convolution of the grid a dilation above %d "
                      "(dilation^(depth - 1)); use a smaller dilation or depth", (int)d, FS_MAX_DILATION);
    }
}

/* The smallest residual block size above 0 of the grid (the most adds), 0
 * for none; a range counts as 1, the most it could draw. */
static int sw_residual_min(const SwSpace *sp)
{
    const SwOpt *r = &sp->opt[O_RESIDUAL];
    if (r->range) return 1;
    int best = 0;
    for (int i = 0; i < r->n; i++)
        if (r->v[i].d > 0 && (best == 0 || (int)r->v[i].d < best)) best = (int)r->v[i].d;
    return best;
}

static void check_structured(const SwSpace *sp, int window, int line, int col, SwErrs *e)
{
    const SwOpt *k = &sp->opt[O_KERNEL];
    check_dilation(sp, window, e);
    if (k->range && window > 0 && max_of(sp, k) > window)
        swerr_add(e, k->line, k->col, "model.kernel: the range's high %d is wider than the window (%d)",
                  (int)max_of(sp, k), window);
    for (int i = 0; i < k->n && window > 0 && !k->range; i++)
        if (k->v[i].d > window)
            swerr_add(e, k->given ? k->v[i].line : line, k->given ? k->v[i].col : col,
                      "model.kernel: width %d%s is wider than the window (%d)", (int)k->v[i].d,
                      k->given ? "" : " (the default)", window);
    /* The largest combination of the grid must fit model.h's layer array. */
    int any_bn = max_of(sp, &sp->opt[O_BATCHNORM]) > 0, any_drop = max_of(sp, &sp->opt[O_DROPOUT]) > 0;
    const int rnn_layers = (int)max_of(sp, &sp->opt[O_RNN_LAYERS]);
    int any_dense = max_of(sp, &sp->opt[O_DENSE]) > 0, any_gru = (max_of(sp, &sp->opt[O_GRU]) > 0) * rnn_layers;
    const int any_lstm = (max_of(sp, &sp->opt[O_LSTM]) > 0) * rnn_layers;
    for (int o = O_GRU; o <= O_ATTENTION && window > 0; o++) {
        const SwOpt *g = &sp->opt[o];
        if (max_of(sp, g) > 0)
            swerr_add(e, g->line, g->col, "model.%s: %s layers belong to chain models (data.window: chain), "
                      "which read each protein whole", sw_opts[o].key, o == O_ATTENTION ? "attention" : "recurrent");
    }
    const int depth_max = (int)max_of(sp, &sp->opt[O_DEPTH]), res_min = sw_residual_min(sp);
    int layers_max = depth_max * (1 + any_bn) + (int)max_of(sp, &sp->opt[O_HIGHWAY]) + any_drop +
                     any_dense * (1 + any_drop) + (res_min > 0 ? (depth_max - 1) / res_min : 0) + any_gru + any_lstm +
                     (int)max_of(sp, &sp->opt[O_ATTENTION]);
    if (layers_max > FS_MAX_LAYERS) {
        const SwOpt *d = &sp->opt[O_DEPTH];
        swerr_add(e, d->given ? d->line : line, d->given ? d->col : col,
                  "model: the largest architecture of the grid has %d layers; at most %d (depth x (1 + batchnorm) "
                  "+ residual adds + highway + (gru + lstm) x recurrent_layers + attention + dense + dropout layers)", layers_max, FS_MAX_LAYERS);
    }
}
