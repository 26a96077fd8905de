/*
 * expand.c: the search space into trials. Grid points are numbered in
 * mixed radix over the dimensions (layer-list alternatives, then the
 * options in sw_opts order; the last varies fastest). `search.random: N`
 * walks a lazily shuffled permutation of those numbers (a partial
 * Fisher-Yates with a sparse swap table), so any grid size works and the
 * first M trials of random: N are the trials of random: M.
 *
 * A trial's config names only what affects its training (momentum only
 * for SGD, the leaky slope only for leaky_relu layers, ...). Grid points
 * whose configs are equal would train identically; only the first is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

/* ---------------------------------------------------------------------- */
/* A small open-addressing map u64 -> u64.                                 */

typedef struct {
    uint64_t *k, *v;
    uint8_t *used;
    size_t cap, n;
} U64Map;

static size_t slot(const U64Map *m, uint64_t k)
{
    uint64_t s = k;
    size_t i = (size_t)fs_splitmix64(&s) & (m->cap - 1);
    while (m->used[i] && m->k[i] != k) i = (i + 1) & (m->cap - 1);
    return i;
}

static int map_get(const U64Map *m, uint64_t k, uint64_t *v)
{
    if (!m->cap) return 0;
    size_t i = slot(m, k);
    if (!m->used[i]) return 0;
    *v = m->v[i];
    return 1;
}

static void map_put(U64Map *m, uint64_t k, uint64_t v)
{
    if (2 * (m->n + 1) > m->cap) {
        U64Map g = {0};
        g.cap = m->cap ? 2 * m->cap : 64;
        g.k = fs_malloc(g.cap * sizeof *g.k);
        g.v = fs_malloc(g.cap * sizeof *g.v);
        g.used = fs_calloc(g.cap, 1);
        for (size_t i = 0; i < m->cap; i++)
            if (m->used[i]) map_put(&g, m->k[i], m->v[i]);
        free(m->k), free(m->v), free(m->used);
        *m = g;
    }
    size_t i = slot(m, k);
    if (!m->used[i]) m->n++;
    m->used[i] = 1;
    m->k[i] = k;
    m->v[i] = v;
}

static void map_free(U64Map *m)
{
    free(m->k), free(m->v), free(m->used);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------- */
/* One grid point                                                          */

#define N_DIMS (O_COUNT + 1) /* dimension 0: layer-list alternative */

static int dim_size(const SwSpace *sp, int d) { return d == 0 ? (sp->n_alts ? sp->n_alts : 1) : sp->opt[d - 1].n; }

static const SwVal *pick(const SwSpace *sp, const int *at, int o) { return &sp->opt[o].v[at[o + 1]]; }
#define D(o) (pick(sp, at, (o))->d)

static float act_param(const SwSpace *sp, const int *at, FsAct act, const SwLayer *ly)
{
    if (act == FS_ACT_LEAKY_RELU) return ly && (ly->set & LS_LEAKY) ? ly->leaky : (float)D(O_LEAKY_SLOPE);
    if (act == FS_ACT_ELU) return ly && (ly->set & LS_ELU) ? ly->elu : (float)D(O_ELU_ALPHA);
    return 0.0f; /* unused by the activation: zero keeps equal layers equal */
}

static void add(FsArch *a, FsLayerSpec s) { a->layers[a->n_layers++] = s; }

static void build_arch(const FsSweep *sw, const SwSpace *sp, const int *at, FsArch *a)
{
    memset(a, 0, sizeof *a);
    a->window = sw->chain ? 0 : sw->window;
    a->chain = sw->chain;
    a->init = (FsInit)(int)D(O_INIT);
    const float eps = (float)D(O_BN_EPSILON), mom = (float)D(O_BN_MOMENTUM), gate = (float)D(O_GATE_BIAS);
    if (sp->n_alts) {
        const SwLayerList *alt = &sp->alts[at[0]];
        for (int i = 0; i < alt->n; i++) {
            const SwLayer *ly = &alt->l[i];
            FsLayerSpec s = {.kind = ly->spec.kind};
            switch (s.kind) {
            case FS_LAYER_CONV:
            case FS_LAYER_DENSE:
            case FS_LAYER_HIGHWAY:
                s.units = s.kind == FS_LAYER_HIGHWAY ? 0 : ly->spec.units;
                s.width = s.kind == FS_LAYER_DENSE ? 0 : ly->spec.width;
                s.act = ly->spec.act;
                s.act_param = act_param(sp, at, s.act, ly);
                s.dilation = ly->spec.dilation > 1 ? ly->spec.dilation : 0;
                if (s.kind == FS_LAYER_HIGHWAY) s.gate_bias = ly->set & LS_GATE ? ly->spec.gate_bias : gate;
                break;
            case FS_LAYER_DROPOUT: s.rate = ly->spec.rate; break;
            case FS_LAYER_BATCHNORM:
                s.eps = ly->set & LS_EPS ? ly->spec.eps : eps;
                s.momentum = ly->set & LS_MOM ? ly->spec.momentum : mom;
                break;
            default: break;
            }
            add(a, s);
        }
        return;
    }
    /* Structured: depth x (conv [+ BN]), highway layers, dropout, dense, dropout. */
    const FsAct act = (FsAct)(int)D(O_ACTIVATION);
    const float ap = act_param(sp, at, act, NULL), rate = (float)D(O_DROPOUT);
    const int kernel = (int)D(O_KERNEL), dense = (int)D(O_DENSE), growth = (int)D(O_DILATION);
    for (int i = 0, dil = 1; i < (int)D(O_DEPTH); i++, dil *= growth) {
        add(a, (FsLayerSpec){.kind = FS_LAYER_CONV, .units = (int)D(O_FILTERS), .width = kernel, .act = act,
                             .act_param = ap, .dilation = dil > 1 ? dil : 0});
        if (D(O_BATCHNORM) > 0) add(a, (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = eps, .momentum = mom});
    }
    for (int i = 0; i < (int)D(O_HIGHWAY); i++)
        add(a, (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = kernel, .act = act, .act_param = ap, .gate_bias = gate});
    if (rate > 0) add(a, (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = rate});
    if (dense > 0) {
        add(a, (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = dense, .act = act, .act_param = ap});
        if (rate > 0) add(a, (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = rate});
    }
}

static void build_spec(const SwSpace *sp, const int *at, FsTrainSpec *ts)
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
    ts->seed[0] = pick(sp, at, O_SEED)->u;
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
    ts->batch_residues = (int)D(O_BATCH_RESIDUES);
}

/* ---------------------------------------------------------------------- */
/* Trial config: canonical JSON, keys sorted, floats as the shortest text
 * that reads back as the same float (fs_format_float). The trial id
 * hashes this text: changing how a value is written changes every id. */

static void act_json(SwBuf *b, const FsLayerSpec *s)
{
    sb_printf(b, "\"activation\":\"%s\",", model_act_name(s->act));
    if (s->act == FS_ACT_ELU) sb_printf(b, "\"elu_alpha\":%s,", fs_float_text(s->act_param));
}

static void layer_json(SwBuf *b, const FsLayerSpec *s)
{
    sb_puts(b, "{");
    switch (s->kind) {
    case FS_LAYER_CONV:
        act_json(b, s);
        if (s->dilation > 1) sb_printf(b, "\"dilation\":%d,", s->dilation);
        sb_printf(b, "\"filters\":%d,\"kind\":\"conv1d\",", s->units);
        if (s->act == FS_ACT_LEAKY_RELU) sb_printf(b, "\"leaky_slope\":%s,", fs_float_text(s->act_param));
        sb_printf(b, "\"width\":%d", s->width);
        break;
    case FS_LAYER_DENSE:
        act_json(b, s);
        sb_puts(b, "\"kind\":\"dense\",");
        if (s->act == FS_ACT_LEAKY_RELU) sb_printf(b, "\"leaky_slope\":%s,", fs_float_text(s->act_param));
        sb_printf(b, "\"units\":%d", s->units);
        break;
    case FS_LAYER_HIGHWAY:
        act_json(b, s);
        if (s->dilation > 1) sb_printf(b, "\"dilation\":%d,", s->dilation);
        sb_printf(b, "\"gate_bias\":%s,\"kind\":\"highway\",", fs_float_text(s->gate_bias));
        if (s->act == FS_ACT_LEAKY_RELU) sb_printf(b, "\"leaky_slope\":%s,", fs_float_text(s->act_param));
        sb_printf(b, "\"width\":%d", s->width);
        break;
    case FS_LAYER_DROPOUT: sb_printf(b, "\"kind\":\"dropout\",\"rate\":%s", fs_float_text(s->rate)); break;
    case FS_LAYER_BATCHNORM:
        sb_printf(b, "\"epsilon\":%s,\"kind\":\"batchnorm\",\"momentum\":%s", fs_float_text(s->eps),
                  fs_float_text(s->momentum));
        break;
    default: break;
    }
    sb_puts(b, "}");
}

char *sw_trial_config(const FsSweep *sw, const FsArch *a, const FsTrainSpec *ts)
{
    SwBuf b = {0};
    sb_printf(&b, "{\"data\":{\"split\":\"%s\"},\"model\":{\"init\":\"%s\",\"layers\":[",
              sw->predefined ? "predefined" : "kfold", model_init_names[a->init == FS_INIT_GLOROT]);
    for (int i = 0; i < a->n_layers; i++) {
        if (i) sb_puts(&b, ",");
        layer_json(&b, &a->layers[i]);
    }
    /* A chain model: "window":"chain", and its batches' row budget (which
     * a window model does not have); window models' ids stay as they were. */
    if (a->chain)
        sb_printf(&b, "],\"window\":\"chain\"},\"training\":{\"batch_residues\":%d,\"batch_size\":%d,",
                  ts->batch_residues, ts->batch);
    else
        sb_printf(&b, "],\"window\":%d},\"training\":{\"batch_size\":%d,", a->window, ts->batch);
    int adam = ts->opt != FS_OPT_SGD;
    if (adam) sb_printf(&b, "\"beta1\":%s,\"beta2\":%s,", fs_float_text(ts->beta1), fs_float_text(ts->beta2));
    /* Options added later appear only away from their defaults: the ids of
     * sweeps that do not use them stay what they were. Keys sorted. */
    if (ts->class_weights != FS_CW_NONE)
        sb_printf(&b, "\"class_weights\":\"%s\",", train_class_weights_name(ts->class_weights));
    sb_printf(&b, "\"clip_norm\":%s,\"early_stopping\":{", fs_float_text(ts->clip_norm));
    const FsStopSpec *st = &ts->stop;
    if (st->kind == FS_STOP_GL || st->kind == FS_STOP_PQ) sb_printf(&b, "\"alpha\":%s,", fs_float_text(st->alpha));
    sb_printf(&b, "\"criterion\":\"%s\"", stop_kind_name(st->kind));
    if (st->kind == FS_STOP_PATIENCE)
        sb_printf(&b, ",\"min_delta\":%s,\"patience\":%d", fs_float_text(st->min_delta), st->patience);
    if (st->kind == FS_STOP_UP) sb_printf(&b, ",\"s\":%d", st->s);
    if (st->kind == FS_STOP_PQ || st->kind == FS_STOP_UP) sb_printf(&b, ",\"strip\":%d", st->strip);
    sb_printf(&b, "},\"epochs\":%d,", st->max_epochs);
    if (adam) sb_printf(&b, "\"epsilon\":%s,", fs_float_text(ts->eps));
    sb_printf(&b, "\"eval_batch\":%d,\"learning_rate\":%s,", ts->eval_batch, fs_float_text(ts->lr));
    if (ts->lr_schedule != FS_LR_CONSTANT)
        sb_printf(&b, "\"lr_schedule\":\"%s\",", train_lr_schedule_name(ts->lr_schedule));
    if (ts->lr_schedule == FS_LR_STEP)
        sb_printf(&b, "\"lr_step_every\":%d,\"lr_step_factor\":%s,", ts->lr_step_every, fs_float_text(ts->lr_step_factor));
    if (!adam) sb_printf(&b, "\"momentum\":%s,", fs_float_text(ts->momentum));
    /* The default (loss) is left out: the ids of sweeps without
     * training.monitor stay what they were before it existed. */
    if (ts->monitor != FS_MONITOR_LOSS) sb_printf(&b, "\"monitor\":\"%s\",", train_monitor_name(ts->monitor));
    sb_printf(&b, "\"optimizer\":\"%s\",\"seed\":%llu,", train_opt_name(ts->opt), (unsigned long long)ts->seed[0]);
    if (ts->warmup_epochs > 0) sb_printf(&b, "\"warmup_epochs\":%d,", ts->warmup_epochs);
    sb_printf(&b, "\"weight_decay\":%s}}", fs_float_text(ts->weight_decay));
    return b.s;
}

/* ---------------------------------------------------------------------- */
/* Expansion                                                               */

typedef struct {
    FsSweep *sw;
    const SwSpace *sp;
    U64Map seen; /* config hash -> trial index */
    int cap;
} Expander;

/* Adds grid point g unless an equal trial exists. Returns 1 if added. */
static int add_point(Expander *x, uint64_t g)
{
    int at[N_DIMS];
    for (int d = N_DIMS - 1; d >= 0; d--) {
        uint64_t n = (uint64_t)dim_size(x->sp, d);
        at[d] = (int)(g % n);
        g /= n;
    }
    FsTrial t = {0};
    FsSweep *sw0 = x->sw;
    t.at = fs_calloc((size_t)sw0->n_dims + 1, sizeof *t.at);
    for (int d = 0, k = 0; d < N_DIMS; d++)
        if (dim_size(x->sp, d) > 1 && k < sw0->n_dims) t.at[k++] = (uint16_t)at[d];
    build_arch(x->sw, x->sp, at, &t.arch);
    build_spec(x->sp, at, &t.train);
    t.config = sw_trial_config(x->sw, &t.arch, &t.train);
    uint64_t h = fs_fnv1a64(t.config, strlen(t.config), FS_FNV_OFFSET), idx;
    while (map_get(&x->seen, h, &idx)) {
        if (!strcmp(x->sw->trials[idx].config, t.config)) {
            free(t.config);
            free(t.at);
            return 0;
        }
        h = fs_splitmix64(&h); /* a 64-bit collision of different configs: probe on */
    }
    FsSweep *sw = x->sw;
    if (sw->n_trials == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 64;
        sw->trials = fs_realloc(sw->trials, (size_t)x->cap * sizeof *sw->trials);
    }
    t.index = sw->n_trials;
    map_put(&x->seen, h, (uint64_t)sw->n_trials);
    sw->trials[sw->n_trials++] = t;
    return 1;
}

static uint64_t below(FsRng *r, uint64_t n)
{
    uint64_t lim = -n % n; /* rejection keeps it unbiased */
    for (;;) {
        uint64_t x = fs_rng_u64(r);
        if (x >= lim) return x % n;
    }
}

/* The swept dimensions, for the model-based sampler. */
static void list_dims(FsSweep *sw, const SwSpace *sp)
{
    sw->n_dims = 0;
    for (int d = 0; d < N_DIMS && sw->n_dims < FS_SWEEP_MAX_DIMS; d++) {
        if (dim_size(sp, d) < 2) continue;
        FsSweepDim *dm = &sw->dims[sw->n_dims++];
        dm->n = dim_size(sp, d);
        dm->ordered = d > 0 && sw_opts[d - 1].type != OT_ENUM && sw_opts[d - 1].type != OT_BOOL;
        if (d == 0) snprintf(dm->key, sizeof dm->key, "model.layers");
        else snprintf(dm->key, sizeof dm->key, "%s.%s", sw_section_key(sw_opts[d - 1].sec), sw_opts[d - 1].key);
    }
}

/* The option does not change the trial when every other value of it gives
 * the same config (the grid kept the trial at the first such point). */
const char *sweep_trial_value(const FsSweep *sw, const FsTrial *t, int d, char *buf, size_t n)
{
    const SwSpace *sp = sw->space;
    if (!sp || d < 0 || d >= sw->n_dims || !t->at || !n) return NULL;
    int at[N_DIMS], dim = -1;
    for (int g = 0, k = 0; g < N_DIMS; g++) { /* t->at holds the swept dimensions only */
        at[g] = 0;
        if (dim_size(sp, g) < 2) continue;
        if (k == d) dim = g;
        if (k < sw->n_dims) at[g] = t->at[k];
        k++;
    }
    if (dim < 0) return NULL;
    const int mine = at[dim];
    int changes = 0;
    for (int v = 0; v < dim_size(sp, dim) && !changes; v++) {
        if (v == mine) continue;
        at[dim] = v;
        FsTrial o = {0};
        build_arch(sw, sp, at, &o.arch);
        build_spec(sp, at, &o.train);
        char *cfg = sw_trial_config(sw, &o.arch, &o.train);
        changes = strcmp(cfg, t->config) != 0;
        free(cfg);
    }
    if (!changes) return NULL;
    if (dim == 0) snprintf(buf, n, "%d", mine + 1);
    else sw_value_text(dim - 1, &sp->opt[dim - 1].v[mine], buf, n);
    return buf;
}

int sw_expand(FsSweep *sw, const SwSpace *sp, SwErrs *e)
{
    list_dims(sw, sp);
    uint64_t g = 1;
    for (int d = 0; d < N_DIMS; d++) {
        uint64_t n = (uint64_t)dim_size(sp, d);
        if (g > (UINT64_C(1) << 62) / n) {
            swerr_add(e, 1, 1, "the grid has more than 2^62 points; split the sweep");
            return -1;
        }
        g *= n;
    }
    sw->grid_size = g;
    if ((!sw->random_n || sw->sampler == FS_SAMPLER_TPE) && g > FS_SWEEP_MAX_GRID) {
        swerr_add(e, 1, 1, "the grid has %llu points (more than %d); sample it with search: {random: N}",
                  (unsigned long long)g, FS_SWEEP_MAX_GRID);
        return -1;
    }
    Expander x = {.sw = sw, .sp = sp};
    if (!sw->random_n || sw->sampler == FS_SAMPLER_TPE) { /* tpe: every candidate; the run proposes */
        for (uint64_t i = 0; i < g && sw->n_trials < FS_SWEEP_MAX_TRIALS; i++) add_point(&x, i);
        if (sw->n_trials >= FS_SWEEP_MAX_TRIALS && g > (uint64_t)sw->n_trials) {
            map_free(&x.seen);
            swerr_add(e, 1, 1, "the grid has more than %d distinct trials; sample it with search: {random: N}",
                      FS_SWEEP_MAX_TRIALS);
            return -1;
        }
    } else {
        FsRng r;
        const uint64_t words[2] = {sw->search_seed, 0x737765657031ULL /* "sweep1": the purpose */};
        fs_rng_seed(&r, words, 2);
        U64Map perm = {0}; /* position -> grid point, where a swap moved it */
        /* Many grid points may collapse into one trial (an option unused by
         * the rest of the config); bound the walk when the grid is huge. */
        uint64_t budget = (uint64_t)sw->random_n * 1000 + 100000, i;
        for (i = 0; i < g && i < budget && sw->n_trials < sw->random_n; i++) {
            uint64_t j = i + below(&r, g - i), vj = j, vi = i;
            map_get(&perm, j, &vj);
            map_get(&perm, i, &vi);
            map_put(&perm, j, vi);
            add_point(&x, vj);
        }
        map_free(&perm);
        if (sw->n_trials < sw->random_n) {
            char note[256];
            if (i < g)
                snprintf(note, sizeof note, "search.random asks for %d trials; only %d distinct ones were found "
                         "in %llu grid points sampled", sw->random_n, sw->n_trials, (unsigned long long)i);
            else
                snprintf(note, sizeof note, "search.random asks for %d trials but the grid has only %d distinct "
                         "trials; all of them run", sw->random_n, sw->n_trials);
            sw->note = fs_strdup(note);
        }
    }
    map_free(&x.seen);
    return 0;
}
