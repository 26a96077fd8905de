/*
 * options.c: the table of grid options (name, type, bounds, what a value
 * must be), their defaults, typed scalar readers, and the one routine that
 * reads "a value or a list of values" for any option and checks each one.
 * The `training` section is nothing but such options, so it lives here too.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

#define INF HUGE_VAL
/* An enum option reads the names its module defines (model, train, stop):
 * one table per enum; messages list them (expect_of). */
#define E(names, n) names, n, NULL

/* Bounds reflect what the trainer and model_compile accept (so no trial
 * can fail its own checks later), plus generous sanity caps. */
const SwOptDesc sw_opts[O_COUNT] = {
    [O_DEPTH] = {"depth", SEC_MODEL, OT_INT, 1, 16, 0, 0, 0, NULL, 0, "an integer from 1 to 16"},
    [O_FILTERS] = {"filters", SEC_MODEL, OT_INT, 1, FS_MAX_FILTERS, 0, 0, 0, NULL, 0, "an integer from 1 to 4096"},
    [O_KERNEL] = {"kernel", SEC_MODEL, OT_INT, 1, FS_MAX_WIDTH, 0, 0, 1, NULL, 0, "an odd integer from 1 to 255"},
    [O_ACTIVATION] = {"activation", SEC_MODEL, OT_ENUM, 0, 0, 0, 0, 0, E(model_act_names, FS_ACT_COUNT)},
    [O_BATCHNORM] = {"batchnorm", SEC_MODEL, OT_BOOL, 0, 1, 0, 0, 0, NULL, 0, "true or false"},
    [O_HIGHWAY] = {"highway", SEC_MODEL, OT_INT, 0, 8, 0, 0, 0, NULL, 0, "an integer from 0 to 8"},
    [O_DROPOUT] = {"dropout", SEC_MODEL, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a rate >= 0 and < 1"},
    [O_DENSE] = {"dense", SEC_MODEL, OT_INT, 0, FS_MAX_UNITS, 0, 0, 0, NULL, 0,
                 "an integer from 0 (no dense layer) to 65536"},
    /* Structured: the i-th convolution (from 0) takes taps dilation^i apart;
     * a layer list's conv1d or highway names its own (model_space.c). */
    [O_DILATION] = {"dilation", SEC_MODEL, OT_INT, 1, FS_MAX_DILATION, 0, 0, 0, NULL, 0,
                    "an integer from 1 (none) to 64"},
    /* Structured: residual blocks of this many convolutions after the first
     * (point.c); a layer list's `add` spans its own (model_space.c). */
    [O_RESIDUAL] = {"residual", SEC_MODEL, OT_INT, 0, 8, 0, 0, 0, NULL, 0,
                    "an integer from 0 (none) to 8 (convolutions per residual block)"},
    /* Structured: a GRU of this many units (each direction's) after the
     * convolutions and highway layers, 0 for none (point.c); a layer
     * list's gru names its own `units`. */
    [O_GRU] = {"gru", SEC_MODEL, OT_INT, 0, FS_MAX_RNN_UNITS, 0, 0, 0, NULL, 0,
               "an integer from 0 (none) to 1024 (a recurrent layer's units)"},
    /* Structured: an LSTM as wide after the GRU, if any (point.c). */
    [O_LSTM] = {"lstm", SEC_MODEL, OT_INT, 0, FS_MAX_RNN_UNITS, 0, 0, 0, NULL, 0,
                "an integer from 0 (no LSTM) to 1024 (an LSTM's units)"},
    /* Structured: that many attention layers after the recurrent ones
     * (point.c), each with the attention_* options below. */
    [O_ATTENTION] = {"attention", SEC_MODEL, OT_INT, 0, 8, 0, 0, 0, NULL, 0,
                     "an integer from 0 (none) to 8 (attention layers)"},
    /* Structured: that many GRUs and that many LSTMs, stacked (point.c); a
     * layer list's gru or lstm says its own `layers`. */
    [O_RNN_LAYERS] = {"recurrent_layers", SEC_MODEL, OT_INT, 1, 8, 0, 0, 0, NULL, 0,
                      "an integer from 1 to 8 (recurrent layers stacked)"},
    [O_INIT] = {"init", SEC_MODEL, OT_ENUM, 0, 0, 0, 0, 0, E(model_init_names, FS_INIT_COUNT)},
    [O_LEAKY_SLOPE] = {"leaky_slope", SEC_MODEL, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a number >= 0 and < 1"},
    [O_ELU_ALPHA] = {"elu_alpha", SEC_MODEL, OT_FLOAT, 0, 100, 1, 0, 0, NULL, 0, "a number > 0 and <= 100"},
    [O_BN_EPSILON] = {"bn_epsilon", SEC_MODEL, OT_FLOAT, 0, 1, 1, 0, 0, NULL, 0, "a number > 0 and <= 1"},
    [O_BN_MOMENTUM] = {"bn_momentum", SEC_MODEL, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a number >= 0 and < 1"},
    [O_GATE_BIAS] = {"gate_bias", SEC_MODEL, OT_FLOAT, -100, 100, 0, 0, 0, NULL, 0, "a number from -100 to 100"},
    [O_BIDIR] = {"bidirectional", SEC_MODEL, OT_BOOL, 0, 1, 0, 0, 0, NULL, 0, "true or false"},
    /* An attention layer's: structured, for every one; a layer list's
     * attention names its own heads and key_dim (model_space.c) and may
     * name max_distance and dropout, else these apply. */
    [O_HEADS] = {"attention_heads", SEC_MODEL, OT_INT, 1, FS_MAX_HEADS, 0, 0, 0, NULL, 0, "an integer from 1 to 16"},
    [O_KEY_DIM] = {"attention_key_dim", SEC_MODEL, OT_INT, 1, FS_MAX_KEY_DIM, 0, 0, 0, NULL, 0,
                   "an integer from 1 to 256 (each head's width)"},
    [O_MAX_DIST] = {"attention_max_distance", SEC_MODEL, OT_INT, 1, FS_MAX_ATT_DIST, 0, 0, 0, NULL, 0,
                    "an integer from 1 to 128 (the farthest distance with a position bias of its own)"},
    [O_ATT_DROPOUT] = {"attention_dropout", SEC_MODEL, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a rate >= 0 and < 1"},
    [O_EPOCHS] = {"epochs", SEC_TRAINING, OT_INT, 1, 100000, 0, 0, 0, NULL, 0, "an integer from 1 to 100000"},
    [O_OPTIMIZER] = {"optimizer", SEC_TRAINING, OT_ENUM, 0, 0, 0, 0, 0, E(train_opt_names, FS_OPT_COUNT)},
    [O_LR] = {"learning_rate", SEC_TRAINING, OT_FLOAT, 0, INF, 1, 0, 0, NULL, 0, "a number > 0"},
    [O_MOMENTUM] = {"momentum", SEC_TRAINING, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a number >= 0 and < 1"},
    [O_BETA1] = {"beta1", SEC_TRAINING, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a number >= 0 and < 1"},
    [O_BETA2] = {"beta2", SEC_TRAINING, OT_FLOAT, 0, 1, 0, 1, 0, NULL, 0, "a number >= 0 and < 1"},
    [O_EPSILON] = {"epsilon", SEC_TRAINING, OT_FLOAT, 0, 1, 1, 0, 0, NULL, 0, "a number > 0 and <= 1"},
    [O_WEIGHT_DECAY] = {"weight_decay", SEC_TRAINING, OT_FLOAT, 0, INF, 0, 0, 0, NULL, 0, "a number >= 0"},
    [O_CLIP_NORM] = {"clip_norm", SEC_TRAINING, OT_FLOAT, 0, INF, 0, 0, 0, NULL, 0, "a number >= 0 (0 = off)"},
    [O_BATCH] = {"batch_size", SEC_TRAINING, OT_INT, 1, 65536, 0, 0, 0, NULL, 0, "an integer from 1 to 65536"},
    [O_EVAL_BATCH] = {"eval_batch", SEC_TRAINING, OT_INT, 1, 65536, 0, 0, 0, NULL, 0, "an integer from 1 to 65536"},
    [O_SEED] = {"seed", SEC_TRAINING, OT_U64, 0, 0, 0, 0, 0, NULL, 0, "a whole number from 0 to 2^64-1"},
    [O_MONITOR] = {"monitor", SEC_TRAINING, OT_ENUM, 0, 0, 0, 0, 0, E(train_monitor_names, FS_MONITOR_COUNT)},
    [O_LR_SCHEDULE] = {"lr_schedule", SEC_TRAINING, OT_ENUM, 0, 0, 0, 0, 0,
                       E(train_lr_schedule_names, FS_LR_SCHEDULE_COUNT)},
    [O_LR_STEP_EVERY] = {"lr_step_every", SEC_TRAINING, OT_INT, 1, 100000, 0, 0, 0, NULL, 0,
                         "an integer from 1 to 100000 (epochs between the step schedule's changes)"},
    [O_LR_STEP_FACTOR] = {"lr_step_factor", SEC_TRAINING, OT_FLOAT, 0, 1, 1, 0, 0, NULL, 0, "a number > 0 and <= 1"},
    [O_WARMUP] = {"warmup_epochs", SEC_TRAINING, OT_INT, 0, 100000, 0, 0, 0, NULL, 0,
                  "an integer from 0 (no warm-up) to 100000"},
    [O_CLASS_WEIGHTS] = {"class_weights", SEC_TRAINING, OT_ENUM, 0, 0, 0, 0, 0,
                         E(train_class_weights_names, FS_CW_NAMED)}, /* or a mapping: class_weights.c */
    [O_BATCH_RESIDUES] = {"batch_residues", SEC_TRAINING, OT_INT, 1, FS_TRAIN_MAX_BATCH_RESIDUES, 0, 0, 0, NULL, 0,
                          "an integer from 1 to 1048576 (a chain model's rows per batch)"},
    [O_CRITERION] = {"criterion", SEC_STOP, OT_ENUM, 0, 0, 0, 0, 0, E(stop_kind_names, FS_STOP_KIND_COUNT)},
    [O_ALPHA] = {"alpha", SEC_STOP, OT_FLOAT, 0, INF, 1, 0, 0, NULL, 0, "a number > 0"},
    [O_STRIP] = {"strip", SEC_STOP, OT_INT, 1, FS_STOP_MAX_STRIP, 0, 0, 0, NULL, 0, "an integer from 1 to 64"},
    [O_S] = {"s", SEC_STOP, OT_INT, 1, 1000, 0, 0, 0, NULL, 0, "an integer from 1 to 1000"},
    [O_PATIENCE] = {"patience", SEC_STOP, OT_INT, 1, 100000, 0, 0, 0, NULL, 0, "an integer from 1 to 100000"},
    [O_MIN_DELTA] = {"min_delta", SEC_STOP, OT_FLOAT, 0, INF, 0, 0, 0, NULL, 0, "a number >= 0"},
};

const char *sw_section_key(SwSection sec)
{
    return sec == SEC_MODEL ? "model" : sec == SEC_TRAINING ? "training" : "training.early_stopping";
}

static void set_default(SwOpt *o, double d)
{
    o->v = fs_calloc(1, sizeof *o->v);
    o->v[0].d = d;
    o->v[0].u = (uint64_t)(d < 0 ? 0 : d);
    o->n = 1;
    o->given = 0;
}

double sw_opt_default(int o)
{
    FsTrainSpec ts;
    train_spec_defaults(&ts); /* the trainer's defaults stay the single source */
    const double d[O_COUNT] = {
        [O_DEPTH] = 2, [O_FILTERS] = 64, [O_KERNEL] = 5, [O_ACTIVATION] = FS_ACT_SWISH,
        [O_BATCHNORM] = 0, [O_HIGHWAY] = 0, [O_DROPOUT] = 0, [O_DENSE] = 128,
        [O_INIT] = FS_INIT_HE, [O_LEAKY_SLOPE] = 0.01, [O_ELU_ALPHA] = 1.0,
        [O_BN_EPSILON] = 1e-3, [O_BN_MOMENTUM] = 0.99, [O_GATE_BIAS] = -1.0,
        [O_EPOCHS] = ts.stop.max_epochs, [O_OPTIMIZER] = ts.opt, [O_LR] = ts.lr,
        [O_MOMENTUM] = ts.momentum, [O_BETA1] = ts.beta1, [O_BETA2] = ts.beta2, [O_EPSILON] = ts.eps,
        [O_WEIGHT_DECAY] = ts.weight_decay, [O_CLIP_NORM] = ts.clip_norm, [O_BATCH] = ts.batch,
        [O_EVAL_BATCH] = ts.eval_batch, [O_SEED] = 1, [O_MONITOR] = ts.monitor,
        [O_CRITERION] = ts.stop.kind, [O_ALPHA] = ts.stop.alpha, [O_STRIP] = ts.stop.strip,
        [O_S] = ts.stop.s, [O_PATIENCE] = ts.stop.patience, [O_MIN_DELTA] = ts.stop.min_delta,
        [O_LR_SCHEDULE] = ts.lr_schedule, [O_LR_STEP_EVERY] = ts.lr_step_every,
        [O_LR_STEP_FACTOR] = ts.lr_step_factor, [O_WARMUP] = ts.warmup_epochs, [O_CLASS_WEIGHTS] = ts.class_weights,
        [O_DILATION] = 1, [O_RESIDUAL] = 0, [O_BATCH_RESIDUES] = ts.batch_residues, [O_GRU] = 0, [O_LSTM] = 0, [O_RNN_LAYERS] = 1, [O_BIDIR] = 1,
        [O_ATTENTION] = 0, [O_HEADS] = 4, [O_KEY_DIM] = 16, [O_MAX_DIST] = 32, [O_ATT_DROPOUT] = 0,
    };
    return o >= 0 && o < O_COUNT ? d[o] : 0.0;
}

int sw_opt_hidden_default(int o, const SwOpt *opt)
{
    static const int later[] = {O_MONITOR,  O_LR_SCHEDULE,  O_LR_STEP_EVERY,     O_LR_STEP_FACTOR,
                                O_WARMUP,   O_CLASS_WEIGHTS, O_DILATION, O_BATCH_RESIDUES, O_RESIDUAL,
                                O_GRU,      O_LSTM,          O_RNN_LAYERS, O_BIDIR, O_ATTENTION, O_HEADS,
                                O_KEY_DIM,  O_MAX_DIST,      O_ATT_DROPOUT};
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
        if (o == later[i]) return !opt->range && opt->n == 1 && opt->v[0].d == sw_opt_default(o);
    return 0;
}

void sw_space_defaults(SwSpace *sp)
{
    memset(sp, 0, sizeof *sp);
    for (int o = 0; o < O_COUNT; o++) set_default(&sp->opt[o], sw_opt_default(o));
}

void sw_space_free(SwSpace *sp)
{
    for (int o = 0; o < O_COUNT; o++) free(sp->opt[o].v);
    free(sp->alts);
    memset(sp, 0, sizeof *sp);
}

/* ---------------------------------------------------------------------- */
/* Scalars. Numbers must be plain (unquoted): "5" in quotes is a string.   */

int sw_scalar_int(const YNode *v, long long *out)
{
    if (!v || v->kind != YN_SCALAR || v->quoted || !v->value[0]) return -1;
    char *end;
    errno = 0;
    long long x = strtoll(v->value, &end, 10);
    if (*end || errno == ERANGE) return -1; /* out of range: refused, never clamped */
    *out = x;
    return 0;
}

int sw_scalar_u64(const YNode *v, uint64_t *out)
{
    if (!v || v->kind != YN_SCALAR || v->quoted || !v->value[0] || v->value[0] == '-') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v->value, &end, 10);
    if (*end || errno == ERANGE) return -1; /* above 2^64-1: refused, never wrapped */
    *out = x;
    return 0;
}

int sw_scalar_float(const YNode *v, double *out)
{
    if (!v || v->kind != YN_SCALAR || v->quoted || !v->value[0]) return -1;
    if (strpbrk(v->value, "xXpP")) return -1; /* no hex floats */
    char *end;
    double x = strtod(v->value, &end);
    if (*end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

static const char *shown(const YNode *v, char *buf, size_t n)
{
    if (v->kind == YN_SEQ) return "a list";
    if (v->kind == YN_MAP) return "a mapping";
    if (!v->value[0] && !v->quoted) return "nothing";
    snprintf(buf, n, "'%.60s'", v->value);
    return buf;
}

static int in_bounds(const SwOptDesc *d, double x)
{
    if (d->lo_open ? !(x > d->lo) : !(x >= d->lo)) return 0;
    if (d->hi_open ? !(x < d->hi) : !(x <= d->hi)) return 0;
    return 1;
}

int sw_read_value(int o, const YNode *v, SwVal *out)
{
    const SwOptDesc *d = &sw_opts[o];
    long long i;
    double x;
    out->line = v->line;
    out->col = v->col;
    switch (d->type) {
    case OT_INT:
        if (sw_scalar_int(v, &i) || !in_bounds(d, (double)i) || (d->odd && i % 2 == 0)) return -1;
        out->d = (double)i;
        return 0;
    case OT_FLOAT:
        /* Also in bounds as the float the trainer will hold (1e-50 is not > 0 there). */
        if (sw_scalar_float(v, &x) || !in_bounds(d, x) || !in_bounds(d, (double)(float)x)) return -1;
        out->d = x;
        return 0;
    case OT_U64:
        if (sw_scalar_u64(v, &out->u)) return -1;
        out->d = (double)out->u;
        return 0;
    case OT_BOOL:
        if (v->kind != YN_SCALAR || v->quoted) return -1;
        if (!strcmp(v->value, "true")) return out->d = 1, 0;
        if (!strcmp(v->value, "false")) return out->d = 0, 0;
        return -1;
    case OT_ENUM:
        if (v->kind != YN_SCALAR) return -1;
        for (int k = 0; k < d->n_names; k++)
            if (!strcmp(v->value, d->names[k])) return out->d = k, 0;
        return -1;
    }
    return -1;
}

/* What a value must be, for messages; an enum's is "a, b or c" from its names. */
static const char *expect_of(const SwOptDesc *d, char *buf, size_t n)
{
    if (d->type != OT_ENUM) return d->expect;
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < d->n_names && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i == 0 ? "" : i + 1 == d->n_names ? " or " : ", ",
                              d->names[i]);
    return buf;
}

/* Keras' names for what training.monitor can watch, so that its users get
 * ours as the hint. */
static const char *monitor_hint(const char *s)
{
    static const char *const keras[][2] = {
        {"val_loss", "loss"}, {"val_accuracy", "q3"}, {"val_acc", "q3"}, {"accuracy", "q3"}, {"acc", "q3"}};
    for (size_t i = 0; i < sizeof keras / sizeof keras[0]; i++)
        if (!strcmp(s, keras[i][0])) return keras[i][1];
    return NULL;
}

void sw_value_error(int o, const YNode *v, const char *where, SwErrs *e)
{
    const SwOptDesc *d = &sw_opts[o];
    char buf[80], ex[160];
    const char *expect = expect_of(d, ex, sizeof ex);
    const char *hint = NULL;
    static const char *const bools[] = {"true", "false"};
    if (d->type == OT_ENUM && v->kind == YN_SCALAR) hint = fs_nearest(v->value, d->names, d->n_names);
    if (d->type == OT_BOOL && v->kind == YN_SCALAR) hint = fs_nearest(v->value, bools, 2); /* Python's True */
    if (d == &sw_opts[O_MONITOR] && v->kind == YN_SCALAR && !hint) hint = monitor_hint(v->value);
    long long i;
    /* A number in quotes is text to YAML: epochs: "5" read "expected an
     * integer, got '5'", which left its writer looking at an integer. */
    YNode plain = *v;
    plain.quoted = 0;
    SwVal val;
    if (d->type != OT_ENUM && v->kind == YN_SCALAR && v->quoted && sw_read_value(o, &plain, &val) == 0)
        swerr_add(e, v->line, v->col, "%s: expected %s, got \"%.60s\" in quotes, which YAML reads as text; "
                  "write it without the quotes", where, expect, v->value);
    else if (d->odd && !sw_scalar_int(v, &i) && i % 2 == 0 && in_bounds(d, (double)i))
        swerr_add(e, v->line, v->col, "%s: %lld is even; expected %s", where, i, expect);
    else if (hint)
        swerr_add(e, v->line, v->col, "%s: expected %s, got %s (did you mean '%s'?)", where, expect,
                  shown(v, buf, sizeof buf), hint);
    else
        swerr_add(e, v->line, v->col, "%s: expected %s, got %s", where, expect, shown(v, buf, sizeof buf));
}

void sw_parse_opt(SwSpace *sp, int o, const YNode *v, const char *where, SwErrs *e)
{
    const SwOptDesc *d = &sw_opts[o];
    SwOpt *out = &sp->opt[o];
    free(out->v);
    out->v = NULL;
    out->n = 0;
    out->range = 0;
    out->given = 1;
    out->line = v->line;
    out->col = v->col;
    const int numeric = d->type == OT_INT || d->type == OT_FLOAT;
    if (numeric && sw_is_range(v)) {
        int n = sw_parse_range(sp, o, v, where, -1, -1, &out->v, e);
        if (n > 0) out->n = n;
        if (n != 0) return;
        out->range = sp->n_ranges; /* its low stands for it where one value is needed (the default's place) */
        out->v = fs_calloc(1, sizeof *out->v);
        out->v[0] = (SwVal){.d = sp->ranges[sp->n_ranges - 1].low, .line = v->line, .col = v->col};
        out->n = 1;
        return;
    }
    if (o == O_CLASS_WEIGHTS && v->kind == YN_MAP) { /* one explicit mapping */
        out->v = fs_calloc(1, sizeof *out->v);
        out->n = sw_class_weights_read(v, where, sp->classes, &out->v[0], e) == 0;
        return;
    }
    if (v->kind == YN_MAP) {
        char ex[160];
        swerr_add(e, v->line, v->col, "%s: expected %s, or a list of them%s; got a mapping", where,
                  expect_of(d, ex, sizeof ex), numeric ? ", or a range {low: A, high: B}" : "");
        return;
    }
    if (v->kind == YN_SEQ && v->n == 0) {
        swerr_add(e, v->line, v->col, "%s: empty list; give at least one value", where);
        return;
    }
    int n = v->kind == YN_SEQ ? v->n : 1;
    out->v = fs_calloc((size_t)n, sizeof *out->v);
    for (int k = 0; k < n; k++) {
        const YNode *item = v->kind == YN_SEQ ? v->item[k] : v;
        char w[96];
        if (v->kind == YN_SEQ)
            snprintf(w, sizeof w, "%s[%d]", where, k + 1);
        else
            snprintf(w, sizeof w, "%s", where);
        if (o == O_CLASS_WEIGHTS && item->kind == YN_MAP)
            out->n += sw_class_weights_read(item, w, sp->classes, &out->v[out->n], e) == 0;
        else if (sw_read_value(o, item, &out->v[out->n]) == 0)
            out->n++;
        else
            sw_value_error(o, item, w, e);
    }
}

static int has_key(const char *const *keys, int n, const char *key)
{
    for (int j = 0; j < n; j++)
        if (!strcmp(key, keys[j])) return 1;
    return 0;
}

/* The section other than `where` whose key `key` is (batch_size under
 * model belongs in training), or NULL. */
static const char *section_of_key(const char *key, const char *where)
{
    const char *sec = NULL;
    for (int o = 0; o < O_COUNT && !sec; o++)
        if (!strcmp(sw_opts[o].key, key)) sec = sw_section_key(sw_opts[o].sec);
    if (!sec && !strcmp(key, "early_stopping")) sec = "training";
    if (!sec && !strcmp(key, "layers")) sec = "model";
    if (!sec && has_key(sw_data_keys, SW_N_DATA_KEYS, key)) sec = "data";
    if (!sec && has_key(sw_run_keys, SW_N_RUN_KEYS, key)) sec = "run";
    if (!sec && has_key(sw_search_keys, SW_N_SEARCH_KEYS, key)) sec = "search";
    return sec && strcmp(sec, where) ? sec : NULL;
}

/* Keras' (and PyTorch's), Optuna's and Keras Tuner's names for our
 * options, for the hint. `objective` is Optuna's single objective, what
 * run.metric ranks by: its nearest key, run.objectives, is a Pareto front. */
static const char *keras_name(const char *key)
{
    static const char *const names[][2] = {
        {"lr", "training.learning_rate"},      {"kernel_size", "model.kernel"},
        {"units", "model.filters (a convolution's) or model.dense (a dense layer's)"},
        {"dropout_rate", "model.dropout"},     {"num_layers", "model.depth"},
        {"num_epochs", "training.epochs"},     {"n_epochs", "training.epochs"},
        {"validation_split", "data.folds (k-fold cross-validation) or data.split"},
        {"kernel_initializer", "model.init"},  {"metrics", "run.metric"},
        {"n_trials", "search.random, the budget of trials to train"},
        {"max_trials", "search.random, the budget of trials to train"},
        {"objective", "run.metric, the one metric trials are ranked by (run.objectives lists two or more for a "
                      "Pareto front)"},
        {"direction", "run.metric (q3 is maximised, loss minimised)"},
        {"callbacks", "training.early_stopping (EarlyStopping's rules; search.pruner stops trials that fall behind)"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(key, names[i][0])) return names[i][1];
    return NULL;
}

void sw_check_keys(const YNode *map, const char *where, const char *const *keys, int n, SwErrs *e)
{
    /* Only a section's own keys get pointed elsewhere: pruner.seed is not training.seed misplaced. */
    static const char *const sections[] = {"the sweep", "data",  "model", "training",
                                           "run",       "search", "test",  "training.early_stopping"};
    const int section = has_key(sections, (int)(sizeof sections / sizeof *sections), where);
    for (int i = 0; i < map->n; i++) {
        const YNode *k = map->key[i];
        if (has_key(keys, n, k->value)) continue;
        const char *other = section ? section_of_key(k->value, where) : NULL;
        const char *keras = section && !other ? keras_name(k->value) : NULL;
        const char *near = other || keras ? NULL : fs_nearest(k->value, keys, n);
        if (other)
            swerr_add(e, k->line, k->col, "unknown key '%s' in %s (it belongs in %s)", k->value, where, other);
        else if (keras)
            swerr_add(e, k->line, k->col, "unknown key '%s' in %s (foldsweep's name: %s)", k->value, where, keras);
        else if (near)
            swerr_add(e, k->line, k->col, "unknown key '%s' in %s (did you mean '%s'?)", k->value, where, near);
        else
            swerr_add(e, k->line, k->col, "unknown key '%s' in %s", k->value, where);
    }
}

/* ---------------------------------------------------------------------- */
/* training                                                                */

/* early_stopping's settings without a criterion: the criterion stays none
 * (train every epoch), and {patience: 3} (Keras' EarlyStopping) stopped
 * nothing without a word. Refused, naming the criterion they go with. */
static void stop_check_criterion(const YNode *es, SwErrs *e)
{
    if (ytree_get(es, "criterion") || es->n == 0) return;
    const char *with = ytree_get(es, "patience") || ytree_get(es, "min_delta") ? "patience"
                       : ytree_get(es, "s")                                     ? "up"
                       : ytree_get(es, "strip")                                 ? "pq"
                                                                                : "gl";
    swerr_add(e, es->line, es->col,
              "training.early_stopping: no criterion, so no early stopping (criterion: none); "
              "add criterion: %s (the rules: none, gl, pq, up, patience)", with);
}

void sw_parse_training(SwSpace *sp, const YNode *t, SwErrs *e)
{
    if (!t) return;
    if (t->kind != YN_MAP) {
        swerr_add(e, t->line, t->col, "training: expected a mapping of options (epochs, optimizer, ...)");
        return;
    }
    const char *keys[O_COUNT + 1];
    int nk = 0;
    for (int o = 0; o < O_COUNT; o++)
        if (sw_opts[o].sec == SEC_TRAINING) keys[nk++] = sw_opts[o].key;
    keys[nk++] = "early_stopping";
    sw_check_keys(t, "training", keys, nk, e);
    for (int o = 0; o < O_COUNT; o++) {
        if (sw_opts[o].sec != SEC_TRAINING) continue;
        const YNode *v = ytree_get(t, sw_opts[o].key);
        char where[64];
        snprintf(where, sizeof where, "training.%s", sw_opts[o].key);
        if (v) sw_parse_opt(sp, o, v, where, e);
    }
    const YNode *es = ytree_get(t, "early_stopping");
    if (!es) return;
    if (es->kind == YN_SCALAR) { /* early_stopping: gl  ==  {criterion: gl} */
        sw_parse_opt(sp, O_CRITERION, es, sw_section_key(SEC_STOP), e);
        return;
    }
    if (es->kind != YN_MAP) {
        swerr_add(e, es->line, es->col,
                  "training.early_stopping: expected a mapping {criterion, alpha, strip, s, patience, min_delta}");
        return;
    }
    nk = 0;
    for (int o = 0; o < O_COUNT; o++)
        if (sw_opts[o].sec == SEC_STOP) keys[nk++] = sw_opts[o].key;
    sw_check_keys(es, sw_section_key(SEC_STOP), keys, nk, e);
    stop_check_criterion(es, e);
    for (int o = 0; o < O_COUNT; o++) {
        if (sw_opts[o].sec != SEC_STOP) continue;
        const YNode *v = ytree_get(es, sw_opts[o].key);
        char where[64];
        snprintf(where, sizeof where, "training.early_stopping.%s", sw_opts[o].key);
        if (v) sw_parse_opt(sp, o, v, where, e);
    }
}

int sw_read_one(int o, const YNode *v, const char *where, SwVal *out, SwErrs *e)
{
    if (v->kind != YN_SCALAR) {
        char ex[160];
        swerr_add(e, v->line, v->col, "%s: expected %s (one value here, not %s)", where,
                  expect_of(&sw_opts[o], ex, sizeof ex),
                  v->kind == YN_SEQ ? "a list" : "a mapping");
        return -1;
    }
    if (sw_read_value(o, v, out) == 0) return 0;
    sw_value_error(o, v, where, e);
    return -1;
}
