/*
 * canon.c: the canonical sweep text (normalised YAML of everything that
 * affects results, itself a loadable sweep; run-only options and the test
 * set are left out), trial ids and the seeds a trial's fold trains with
 * (from its id). The difference between two canonical sweeps: diff.c.
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

void sw_put_str(SwBuf *b, const char *s)
{
    if (!fs_utf8_valid(s)) {
        /* YAML text is UTF-8: bytes that are not (a path under a Latin-1
         * folder) are kept as hex, which the loader decodes (yaml_tree.c). */
        sb_puts(b, "!hex \"");
        for (; *s; s++) sb_printf(b, "%02x", (unsigned char)*s);
        sb_puts(b, "\"");
        return;
    }
    sb_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            sb_printf(b, "\\x%02x", (unsigned char)*s);
        else
            sb_printf(b, "%c", *s);
    }
    sb_puts(b, "\"");
}

void sw_value_text(int o, const SwVal *v, char *out, size_t n)
{
    const SwOptDesc *d = &sw_opts[o];
    switch (d->type) {
    case OT_INT: snprintf(out, n, "%lld", (long long)v->d); break;
    case OT_U64: snprintf(out, n, "%llu", (unsigned long long)v->u); break;
    case OT_BOOL: snprintf(out, n, "%s", v->d > 0 ? "true" : "false"); break;
    case OT_ENUM:
        if (o == O_CLASS_WEIGHTS && (int)v->d == FS_CW_EXPLICIT)
            sw_class_weights_text(v, out, n);
        else
            snprintf(out, n, "%s", d->names[(int)v->d]);
        break;
    case OT_FLOAT: fs_format_float(out, n, (float)v->d); break; /* the trainer holds a float: equal floats, equal text */
    }
}

static void put_val(SwBuf *b, int o, const SwVal *v)
{
    char text[320];
    sw_value_text(o, v, text, sizeof text);
    sb_puts(b, text);
}

/* "  key: v", "  key: [a, b]" or "  key: {low: a, high: b}"; one value is written as a scalar. */
static void put_opt(SwBuf *b, const char *indent, int o, const SwOpt *opt, const SwSpace *sp)
{
    sb_printf(b, "%s%s: ", indent, sw_opts[o].key);
    if (opt->range) {
        sw_range_canon(b, &sp->ranges[opt->range - 1]);
        sb_puts(b, "\n");
        return;
    }
    if (opt->n > 1) sb_puts(b, "[");
    for (int i = 0; i < opt->n; i++) {
        if (i) sb_puts(b, ", ");
        put_val(b, o, &opt->v[i]);
    }
    sb_puts(b, opt->n > 1 ? "]\n" : "\n");
}

/* Layer i of alternative a's range of option o, or NULL. */
static const SwRange *layer_range(const SwSpace *sp, int a, int i, int o)
{
    for (int k = 0; k < sp->n_ranges; k++)
        if (sp->ranges[k].alt == a && sp->ranges[k].layer == i && sp->ranges[k].opt == o) return &sp->ranges[k];
    return NULL;
}

/* ", key: value" (the first without the comma): the range where the layer has one. */
static void put_param(SwBuf *b, const char **sep, const char *key, const SwRange *r, const char *value)
{
    sb_printf(b, "%s%s: ", *sep, key);
    if (r)
        sw_range_canon(b, r);
    else
        sb_puts(b, value);
    *sep = ", ";
}

static void put_layer(SwBuf *b, const SwSpace *sp, int a, int i)
{
    const SwLayer *ly = &sp->alts[a].l[i];
    const FsLayerSpec *s = &ly->spec;
    char num[40];
    sb_printf(b, "%s: {", model_layer_name(s->kind));
    const char *sep = "";
    const int conv = s->kind == FS_LAYER_CONV, dense = s->kind == FS_LAYER_DENSE, hw = s->kind == FS_LAYER_HIGHWAY;
    snprintf(num, sizeof num, "%d", s->units);
    if (conv) put_param(b, &sep, "filters", layer_range(sp, a, i, O_FILTERS), num);
    if (dense) put_param(b, &sep, "units", layer_range(sp, a, i, O_DENSE), num);
    const int rnn = FS_RNN_GATES(s->kind) > 0;
    if (rnn) put_param(b, &sep, "units", layer_range(sp, a, i, O_GRU), num);
    if (rnn && (ly->set & LS_BIDIR)) put_param(b, &sep, "bidirectional", NULL, s->bidir ? "true" : "false");
    snprintf(num, sizeof num, "%d", ly->repeat);
    if (rnn && (ly->repeat > 1 || layer_range(sp, a, i, O_RNN_LAYERS)))
        put_param(b, &sep, "layers", layer_range(sp, a, i, O_RNN_LAYERS), num);
    if (s->kind == FS_LAYER_ATTENTION) {
        snprintf(num, sizeof num, "%d", s->heads);
        put_param(b, &sep, "heads", layer_range(sp, a, i, O_HEADS), num);
        snprintf(num, sizeof num, "%d", s->key_dim);
        put_param(b, &sep, "key_dim", layer_range(sp, a, i, O_KEY_DIM), num);
        snprintf(num, sizeof num, "%d", s->max_dist);
        if (ly->set & LS_MAXDIST) put_param(b, &sep, "max_distance", layer_range(sp, a, i, O_MAX_DIST), num);
        if (ly->set & LS_ATTDROP)
            put_param(b, &sep, "dropout", layer_range(sp, a, i, O_ATT_DROPOUT), fs_format_float(num, sizeof num, s->rate));
    }
    snprintf(num, sizeof num, "%d", s->width);
    if (conv || hw) put_param(b, &sep, "width", layer_range(sp, a, i, O_KERNEL), num);
    snprintf(num, sizeof num, "%d", s->dilation);
    if (layer_range(sp, a, i, O_DILATION) || s->dilation > 1)
        put_param(b, &sep, "dilation", layer_range(sp, a, i, O_DILATION), num);
    if (conv || dense || hw) put_param(b, &sep, "activation", NULL, model_act_name(s->act));
    /* Parameters are kept as floats: written as the shortest text that reads back to the same float. */
    struct { unsigned bit; const char *key; float v; int o; } opt[] = {
        {LS_LEAKY, "leaky_slope", ly->leaky, O_LEAKY_SLOPE}, {LS_ELU, "elu_alpha", ly->elu, O_ELU_ALPHA},
        {LS_GATE, "gate_bias", s->gate_bias, O_GATE_BIAS}, {LS_EPS, "epsilon", s->eps, O_BN_EPSILON},
        {LS_MOM, "momentum", s->momentum, O_BN_MOMENTUM}};
    if (s->kind == FS_LAYER_DROPOUT)
        put_param(b, &sep, "rate", layer_range(sp, a, i, O_DROPOUT), fs_format_float(num, sizeof num, s->rate));
    snprintf(num, sizeof num, "%d", s->units);
    if (s->kind == FS_LAYER_ADD) put_param(b, &sep, "layers", layer_range(sp, a, i, O_RESIDUAL), num);
    for (int k = 0; k < 5; k++)
        if (ly->set & opt[k].bit)
            put_param(b, &sep, opt[k].key, layer_range(sp, a, i, opt[k].o), fs_format_float(num, sizeof num, opt[k].v));
    sb_puts(b, "}");
}

/* The data section: where the data is, the window, the folds, the inputs. */
static void canon_data(SwBuf *b, const FsSweep *sw)
{
    sb_puts(b, "data:\n");
    if (sw->prepared) {
        sb_puts(b, "  prepared: "), sw_put_str(b, sw->prepared), sb_puts(b, "\n");
    } else if (sw->synth_proteins) {
        sb_printf(b, "  synth: {proteins: %u, seed: %llu}\n", sw->synth_proteins, (unsigned long long)sw->synth_seed);
    } else if (sw->sequences) {
        sb_puts(b, "  sequences: "), sw_put_str(b, sw->sequences), sb_puts(b, "\n");
        sb_puts(b, "  labels: "), sw_put_str(b, sw->labels), sb_puts(b, "\n");
        if (sw->mask) sb_puts(b, "  mask: "), sw_put_str(b, sw->mask), sb_puts(b, "\n");
    } else {
        sb_printf(b, "  format: %s\n  inputs: [", data_format_name(sw->format));
        for (int i = 0; i < sw->n_inputs; i++) {
            if (i) sb_puts(b, ", ");
            sw_put_str(b, sw->inputs[i]);
        }
        sb_puts(b, "]\n");
    }
    if (sw->chain)
        sb_puts(b, "  window: chain\n");
    else
        sb_printf(b, "  window: %d\n", sw->window);
    if (sw->predefined)
        sb_puts(b, "  split: predefined\n");
    else if (!sw->prepared)
        sb_printf(b, "  split: kfold\n  folds: %d\n  fold_seed: %llu\n", sw->folds, (unsigned long long)sw->fold_seed);
    /* Three classes (the default) are left out: 3-state sweeps keep their text. */
    if (sw->classes == FS_CLASSES8) sb_puts(b, "  classes: 8\n");
    /* One repeat is left out: run folders from before repeats keep their sweep. */
    if (!sw->predefined && !sw->prepared && sw->repeats > 1) sb_printf(b, "  repeats: %d\n", sw->repeats);
    sw_features_canon(b, sw);
}

char *sw_canonical(const FsSweep *sw, const SwSpace *sp)
{
    SwBuf b = {0};
    sb_puts(&b, "# foldsweep canonical sweep: every option that affects results, normalised.\n"
                "# Written by foldsweep; run-only options (backend, threads, out) and the test set\n"
                "# are not part of it.\n");
    canon_data(&b, sw);

    sb_puts(&b, "model:\n");
    if (sp->n_alts) {
        sb_puts(&b, "  layers:\n");
        for (int a = 0; a < sp->n_alts; a++)
            for (int i = 0; i < sp->alts[a].n; i++) {
                sb_puts(&b, i ? "      - " : "    - - ");
                put_layer(&b, sp, a, i);
                sb_puts(&b, "\n");
            }
    }
    for (int o = 0; o < O_COUNT; o++)
        if (sw_opts[o].sec == SEC_MODEL && !(sp->n_alts && o <= O_STRUCT_LAST) && !sw_opt_hidden_default(o, &sp->opt[o]))
            put_opt(&b, "  ", o, &sp->opt[o], sp);
    sb_puts(&b, "training:\n");
    for (int o = 0; o < O_COUNT; o++)
        if (sw_opts[o].sec == SEC_TRAINING && !sw_opt_hidden_default(o, &sp->opt[o]) && !sw_batching_moot(sw, o))
            put_opt(&b, "  ", o, &sp->opt[o], sp);
    sb_puts(&b, "  early_stopping:\n");
    for (int o = 0; o < O_COUNT; o++)
        if (sw_opts[o].sec == SEC_STOP) put_opt(&b, "    ", o, &sp->opt[o], sp);
    if (sw->random_n || sw->prune.kind != FS_PRUNER_NONE || sw->replicate_seeds) sb_puts(&b, "search:\n");
    if (sw->random_n) sb_printf(&b, "  random: %d\n  seed: %llu\n", sw->random_n, (unsigned long long)sw->search_seed);
    if (sw->sampler == FS_SAMPLER_TPE) sb_printf(&b, "  sampler: tpe\n  batch: %d\n", sw->batch);
    if (sw->stop_after) {
        if (sw->sampler != FS_SAMPLER_TPE) sb_printf(&b, "  batch: %d\n", sw->batch);
        sb_printf(&b, "  stop: {after: %d}\n", sw->stop_after);
    }
    if (sw->replicate_seeds)
        sb_printf(&b, "  replicates: {top: %d, seeds: %d}\n", sw->replicate_top, sw->replicate_seeds);
    const FsPruneSpec *ps = &sw->prune;
    char z[40];
    fs_format_float(z, sizeof z, (float)ps->z);
    if (ps->kind == FS_PRUNER_MEDIAN)
        sb_printf(&b, "  pruner: {kind: median, warmup: %d, min_trials: %d}\n", ps->warmup, ps->min_trials);
    else if (ps->kind == FS_PRUNER_ASHA)
        sb_printf(&b, "  pruner: {kind: asha, min_epochs: %d, reduction: %d}\n", ps->min_epochs, ps->reduction);
    else if (ps->kind == FS_PRUNER_FOLDS)
        sb_printf(&b, "  pruner: {kind: folds, min_trials: %d, z: %s}\n", ps->min_trials, z);
    sb_printf(&b, "run:\n  metric: %s\n", metrics_kind_name(sw->metric));
    /* At its default it is left out: folders from before it keep their sweep. */
    if (sw->alpha != FS_ALPHA_DEFAULT) sb_printf(&b, "  alpha: %s\n", fs_float_text((float)sw->alpha));
    for (int k = 0; k < sw->n_objectives; k++)
        sb_printf(&b, "%s%s%s", k ? ", " : "  objectives: [", metrics_objective_names[sw->objectives[k]],
                  k + 1 == sw->n_objectives ? "]\n" : "");
    sw_constraints_canon(&b, &sw->constraints);
    return b.s;
}

/* ---------------------------------------------------------------------- */

void sweep_assign_ids(FsSweep *sw, uint64_t data_fingerprint)
{
    char fp[17];
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)data_fingerprint);
    for (int i = 0; i < sw->n_trials + sw->n_excluded_kept; i++) { /* the excluded too, for plan */
        const char *config = i < sw->n_trials ? sw->trials[i].config : sw->excluded[i - sw->n_trials].config;
        uint64_t h = fs_fnv1a64(config, strlen(config), FS_FNV_OFFSET);
        h = fs_fnv1a64(fp, 16, h);
        snprintf(i < sw->n_trials ? sw->trials[i].id : sw->excluded[i - sw->n_trials].id, FS_TRIAL_ID_LEN + 1,
                 "%0*llx", FS_TRIAL_ID_LEN, (unsigned long long)h);
    }
}

void sweep_fold_spec(FsTrainSpec *ts, const FsTrial *tr, int fold)
{
    *ts = tr->train;
    ts->seed[1] = strtoull(tr->id, NULL, 16);
    ts->seed[2] = (uint64_t)(fold + 1);
}

void sweep_seed_spec(FsTrainSpec *ts, const FsTrial *tr, int fold, int seed)
{
    sweep_fold_spec(ts, tr, fold);
    uint64_t word = ts->seed[0] ^ ((uint64_t)seed << 40); /* training seeds stay below 2^40 in practice */
    if (seed > 0) ts->seed[0] = fs_splitmix64(&word);
}

void sweep_set_gpu_path(FsSweep *sw, int gpu_path)
{
    sw->gpu_path = gpu_path;
    for (int t = 0; t < sw->n_trials; t++) sw->trials[t].train.gpu_path = gpu_path;
}

const char *sweep_backend_name(FsBackend b)
{
    static const char *const names[] = {"auto", "cpu", "cuda"};
    return (unsigned)b <= FS_BACKEND_CUDA ? names[b] : "?";
}

int sweep_backend_parse(const char *s)
{
    for (int b = FS_BACKEND_AUTO; s && b <= FS_BACKEND_CUDA; b++)
        if (!strcmp(s, sweep_backend_name((FsBackend)b))) return b;
    return -1;
}
