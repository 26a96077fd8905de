/*
 * point.c: one point of the search space (a value index in each grid
 * dimension, a value in each range) as a trial: its architecture, its
 * training options, its config; the swept dimensions, and a trial's value
 * in each of them (sweep_trial_value).
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

/* ---------------------------------------------------------------------- */
/* One point of the space                                                  */

int sw_grid_dim_size(const SwSpace *sp, int d)
{
    return d == 0 ? (sp->n_alts ? sp->n_alts : 1) : sp->opt[d - 1].range ? 1 : sp->opt[d - 1].n;
}

/* Option o's value at the point: its range's sample, or its value in the grid. */
static double value_of(const SwSpace *sp, const SwPoint *pt, int o)
{
    const SwOpt *op = &sp->opt[o];
    return op->range ? pt->r[op->range - 1] : op->v[pt->at[o + 1]].d;
}
#define D(o) value_of(sp, pt, (o))

static float act_param(const SwSpace *sp, const SwPoint *pt, FsAct act, const SwLayer *ly)
{
    if (act == FS_ACT_LEAKY_RELU) return ly && (ly->set & LS_LEAKY) ? ly->leaky : (float)D(O_LEAKY_SLOPE);
    if (act == FS_ACT_ELU) return ly && (ly->set & LS_ELU) ? ly->elu : (float)D(O_ELU_ALPHA);
    return 0.0f; /* unused by the activation: zero keeps equal layers equal */
}

static void add(FsArch *a, FsLayerSpec s) { a->layers[a->n_layers++] = s; }

/* A layer list's layer ly as the trial's: what it leaves to the model's
 * options (bn_epsilon, bidirectional, attention_*, ...) filled in. */
static FsLayerSpec list_layer(const SwSpace *sp, const SwPoint *pt, const SwLayer *ly)
{
    const float eps = (float)D(O_BN_EPSILON), mom = (float)D(O_BN_MOMENTUM), gate = (float)D(O_GATE_BIAS);
    FsLayerSpec s = {.kind = ly->spec.kind};
    switch (s.kind) {
    case FS_LAYER_CONV:
    case FS_LAYER_DENSE:
    case FS_LAYER_HIGHWAY:
        s.units = s.kind == FS_LAYER_HIGHWAY ? 0 : ly->spec.units;
        s.width = s.kind == FS_LAYER_DENSE ? 0 : ly->spec.width;
        s.act = ly->spec.act;
        s.act_param = act_param(sp, pt, s.act, ly);
        s.dilation = ly->spec.dilation > 1 ? ly->spec.dilation : 0;
        if (s.kind == FS_LAYER_HIGHWAY) s.gate_bias = ly->set & LS_GATE ? ly->spec.gate_bias : gate;
        break;
    case FS_LAYER_DROPOUT: s.rate = ly->spec.rate; break;
    case FS_LAYER_ADD: s.units = ly->spec.units; break;
    case FS_LAYER_LAYERNORM: s.eps = ly->set & LS_EPS ? ly->spec.eps : eps; break;
    case FS_LAYER_GRU:
    case FS_LAYER_LSTM:
        s.units = ly->spec.units;
        s.bidir = ly->set & LS_BIDIR ? ly->spec.bidir : D(O_BIDIR) > 0;
        break;
    case FS_LAYER_ATTENTION:
        s.heads = ly->spec.heads;
        s.key_dim = ly->spec.key_dim;
        s.max_dist = ly->set & LS_MAXDIST ? ly->spec.max_dist : (int)D(O_MAX_DIST);
        s.rate = ly->set & LS_ATTDROP ? ly->spec.rate : (float)D(O_ATT_DROPOUT);
        s.eps = ly->set & LS_EPS ? ly->spec.eps : eps;
        break;
    case FS_LAYER_BATCHNORM:
        s.eps = ly->set & LS_EPS ? ly->spec.eps : eps;
        s.momentum = ly->set & LS_MOM ? ly->spec.momentum : mom;
        break;
    default: break;
    }
    return s;
}

static void build_arch(const FsSweep *sw, const SwSpace *sp, const SwPoint *pt, FsArch *a)
{
    memset(a, 0, sizeof *a);
    a->window = sw->chain ? 0 : sw->window;
    a->chain = sw->chain;
    a->no_onehot = sw->no_onehot;
    a->feat_dim = sw->feat_dim;
    a->classes = sw->classes == FS_CLASSES8 ? FS_CLASSES8 : 0; /* 0: 3-state, as before 8 states */
    a->init = (FsInit)(int)D(O_INIT);
    const float eps = (float)D(O_BN_EPSILON), mom = (float)D(O_BN_MOMENTUM), gate = (float)D(O_GATE_BIAS);
    if (sp->n_alts) {
        const SwLayerList *alt = &sp->alts[pt->at[0]];
        for (int i = 0; i < alt->n; i++) {
            SwLayer sampled = alt->l[i]; /* with this point's values of the layer's ranges */
            for (int k = 0; k < sp->n_ranges; k++)
                if (sp->ranges[k].alt == pt->at[0] && sp->ranges[k].layer == i)
                    sw_layer_set(&sampled, sp->ranges[k].opt, pt->r[k]);
            const SwLayer *ly = &sampled;
            const FsLayerSpec s = list_layer(sp, pt, ly);
            for (int k = 0; k < (ly->repeat > 1 ? ly->repeat : 1); k++) add(a, s);
        }
        return;
    }
    /* Structured: depth x (conv [+ BN]), highway layers, dropout, dense, dropout. */
    const FsAct act = (FsAct)(int)D(O_ACTIVATION);
    const float ap = act_param(sp, pt, act, NULL), rate = (float)D(O_DROPOUT);
    const int kernel = (int)D(O_KERNEL), dense = (int)D(O_DENSE), growth = (int)D(O_DILATION);
    const int bn = D(O_BATCHNORM) > 0, res = (int)D(O_RESIDUAL);
    for (int i = 0, dil = 1; i < (int)D(O_DEPTH); i++, dil *= growth) {
        add(a, (FsLayerSpec){.kind = FS_LAYER_CONV, .units = (int)D(O_FILTERS), .width = kernel, .act = act,
                             .act_param = ap, .dilation = dil > 1 ? dil : 0});
        if (bn) add(a, (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = eps, .momentum = mom});
        /* Residual blocks of `res` convolutions after the first (whose input
         * is the one-hot residues); a shorter remainder has no add. */
        if (res > 0 && i > 0 && i % res == 0)
            add(a, (FsLayerSpec){.kind = FS_LAYER_ADD, .units = res * (1 + bn)});
    }
    for (int i = 0; i < (int)D(O_HIGHWAY); i++)
        add(a, (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = kernel, .act = act, .act_param = ap, .gate_bias = gate});
    for (int k = 0; k < (int)D(O_RNN_LAYERS) && D(O_GRU) > 0; k++)
        add(a, (FsLayerSpec){.kind = FS_LAYER_GRU, .units = (int)D(O_GRU), .bidir = D(O_BIDIR) > 0});
    for (int k = 0; k < (int)D(O_RNN_LAYERS) && D(O_LSTM) > 0; k++)
        add(a, (FsLayerSpec){.kind = FS_LAYER_LSTM, .units = (int)D(O_LSTM), .bidir = D(O_BIDIR) > 0});
    for (int k = 0; k < (int)D(O_ATTENTION); k++)
        add(a, (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = (int)D(O_HEADS), .key_dim = (int)D(O_KEY_DIM),
                             .max_dist = (int)D(O_MAX_DIST), .rate = (float)D(O_ATT_DROPOUT), .eps = eps});
    if (rate > 0) add(a, (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = rate});
    if (dense > 0) {
        add(a, (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = dense, .act = act, .act_param = ap});
        if (rate > 0) add(a, (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = rate});
    }
}

static void build_spec(const SwSpace *sp, const SwPoint *pt, FsTrainSpec *ts)
{
    train_spec_defaults(ts);
    ts->opt = (FsOptKind)(int)D(O_OPTIMIZER);
    ts->lr = (float)D(O_LR);
    ts->momentum = (float)D(O_MOMENTUM);
    ts->beta1 = (float)D(O_BETA1);
    ts->beta2 = (float)D(O_BETA2);
    ts->eps = (float)D(O_EPSILON);
    ts->weight_decay = (float)D(O_WEIGHT_DECAY);
    ts->clip_norm = (float)D(O_CLIP_NORM);
    ts->batch = (int)D(O_BATCH);
    ts->eval_batch = (int)D(O_EVAL_BATCH);
    ts->seed[0] = sp->opt[O_SEED].v[pt->at[O_SEED + 1]].u; /* a seed has no range */
    ts->stop.max_epochs = (int)D(O_EPOCHS);
    ts->stop.kind = (FsStopKind)(int)D(O_CRITERION);
    ts->stop.alpha = (float)D(O_ALPHA);
    ts->stop.strip = (int)D(O_STRIP);
    ts->stop.s = (int)D(O_S);
    ts->stop.patience = (int)D(O_PATIENCE);
    ts->stop.min_delta = (float)D(O_MIN_DELTA);
    ts->monitor = (FsMonitor)(int)D(O_MONITOR);
    ts->lr_schedule = (FsLrSchedule)(int)D(O_LR_SCHEDULE);
    ts->lr_step_every = (int)D(O_LR_STEP_EVERY);
    ts->lr_step_factor = (float)D(O_LR_STEP_FACTOR);
    ts->warmup_epochs = (int)D(O_WARMUP);
    ts->class_weights = (FsClassWeights)(int)D(O_CLASS_WEIGHTS);
    if (ts->class_weights == FS_CW_EXPLICIT) /* an enum has no range: the point's value itself */
        memcpy(ts->class_w, sp->opt[O_CLASS_WEIGHTS].v[pt->at[O_CLASS_WEIGHTS + 1]].w, sizeof ts->class_w);
    ts->batch_residues = (int)D(O_BATCH_RESIDUES);
}

/* ---------------------------------------------------------------------- */
/* Swept dimensions                                                        */

int sw_swept(const SwSpace *sp, int *src)
{
    int n = 0;
    if (sw_grid_dim_size(sp, 0) > 1) src[n++] = 0;
    for (int k = 0; k < sp->n_ranges; k++) /* a layer list's ranges follow the lists */
        if (sp->ranges[k].alt >= 0) src[n++] = -1 - k;
    for (int o = 0; o < O_COUNT; o++) {
        if (sp->opt[o].range)
            src[n++] = -sp->opt[o].range;
        else if (sp->opt[o].n > 1)
            src[n++] = o + 1;
    }
    return n;
}

void sw_list_dims(FsSweep *sw, const SwSpace *sp)
{
    int src[FS_SWEEP_MAX_DIMS];
    sw->n_dims = sw_swept(sp, src);
    for (int k = 0; k < sw->n_dims; k++) {
        FsSweepDim *dm = &sw->dims[k];
        memset(dm, 0, sizeof *dm);
        if (src[k] < 0) {
            const SwRange *r = &sp->ranges[-1 - src[k]];
            *dm = (FsSweepDim){.n = 0, .ordered = 1, .range = 1, .low = r->low, .high = r->high, .log = r->log};
            snprintf(dm->key, sizeof dm->key, "%s", r->key);
            continue;
        }
        const int d = src[k];
        dm->n = sw_grid_dim_size(sp, d);
        dm->ordered = d > 0 && sw_opts[d - 1].type != OT_ENUM && sw_opts[d - 1].type != OT_BOOL;
        if (d == 0) snprintf(dm->key, sizeof dm->key, "model.layers");
        else snprintf(dm->key, sizeof dm->key, "%s.%s", sw_section_key(sw_opts[d - 1].sec), sw_opts[d - 1].key);
    }
}

void sw_point_trial(const FsSweep *sw, const SwSpace *sp, const SwPoint *pt, FsTrial *t)
{
    memset(t, 0, sizeof *t);
    int src[FS_SWEEP_MAX_DIMS];
    const int n = sw_swept(sp, src);
    t->at = fs_calloc((size_t)n + 1, sizeof *t->at);
    t->x = fs_calloc((size_t)n + 1, sizeof *t->x);
    for (int k = 0; k < n; k++) {
        if (src[k] >= 0) t->at[k] = (uint16_t)pt->at[src[k]];
        else t->x[k] = pt->r[-1 - src[k]];
    }
    build_arch(sw, sp, pt, &t->arch);
    build_spec(sp, pt, &t->train);
    t->config = sw_trial_config(sw, &t->arch, &t->train);
}

/* The point of trial t (grid dimensions it does not sweep have one value). */
static void trial_point(const FsTrial *t, const int *src, int n, SwPoint *pt)
{
    memset(pt, 0, sizeof *pt);
    for (int k = 0; k < n; k++) {
        if (src[k] >= 0) pt->at[src[k]] = t->at[k];
        else pt->r[-1 - src[k]] = t->x[k];
    }
}

/* Whether the config at pt differs from the trial's. */
static int differs(const FsSweep *sw, const SwSpace *sp, const SwPoint *pt, const FsTrial *t)
{
    FsTrial o = {0};
    build_arch(sw, sp, pt, &o.arch);
    build_spec(sp, pt, &o.train);
    char *cfg = sw_trial_config(sw, &o.arch, &o.train);
    const int changes = strcmp(cfg, t->config) != 0;
    free(cfg);
    return changes;
}

/* The option does not change the trial when every other value of it gives
 * the same config (the grid kept the trial at the first such point); a
 * range, when its other end does. */
const char *sweep_trial_value(const FsSweep *sw, const FsTrial *t, int d, char *buf, size_t n)
{
    const SwSpace *sp = sw->space;
    if (!sp || d < 0 || d >= sw->n_dims || !t->at || !t->x || !n) return NULL;
    int src[FS_SWEEP_MAX_DIMS];
    const int nd = sw_swept(sp, src);
    if (d >= nd) return NULL;
    SwPoint pt;
    trial_point(t, src, nd, &pt);
    int changes = 0;
    if (src[d] < 0) {
        const SwRange *r = &sp->ranges[-1 - src[d]];
        const double mine = t->x[d];
        pt.r[-1 - src[d]] = mine == r->low ? r->high : r->low;
        if (!differs(sw, sp, &pt, t)) return NULL;
        sw_range_value_text(r, mine, buf, n);
        return buf;
    }
    const int dim = src[d], mine = pt.at[dim];
    for (int v = 0; v < sw_grid_dim_size(sp, dim) && !changes; v++) {
        if (v == mine) continue;
        pt.at[dim] = v;
        changes = differs(sw, sp, &pt, t);
    }
    if (!changes) return NULL;
    if (dim == 0) snprintf(buf, n, "%d", mine + 1);
    else sw_value_text(dim - 1, &sp->opt[dim - 1].v[mine], buf, n);
    return buf;
}
