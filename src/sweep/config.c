/*
 * config.c: a trial's config, the canonical JSON of its model and training
 * options that its id hashes.
 */
#include "sweep/sweep_int.h"

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
    case FS_LAYER_ADD: sb_printf(b, "\"kind\":\"add\",\"layers\":%d", s->units); break;
    case FS_LAYER_BATCHNORM:
        sb_printf(b, "\"epsilon\":%s,\"kind\":\"batchnorm\",\"momentum\":%s", fs_float_text(s->eps),
                  fs_float_text(s->momentum));
        break;
    case FS_LAYER_LAYERNORM: sb_printf(b, "\"epsilon\":%s,\"kind\":\"layernorm\"", fs_float_text(s->eps)); break;
    case FS_LAYER_GRU:
    case FS_LAYER_LSTM:
        sb_printf(b, "\"bidirectional\":%s,\"kind\":\"%s\",\"units\":%d", s->bidir ? "true" : "false",
                  model_layer_name(s->kind), s->units);
        break;
    case FS_LAYER_ATTENTION:
        sb_printf(b, "\"dropout\":%s,\"epsilon\":%s,\"heads\":%d,\"key_dim\":%d,\"kind\":\"attention\",\"max_distance\":%d",
                  fs_float_text(s->rate), fs_float_text(s->eps), s->heads, s->key_dim, s->max_dist);
        break;
    default: break;
    }
    sb_puts(b, "}");
}

char *sw_trial_config(const FsSweep *sw, const FsArch *a, const FsTrainSpec *ts)
{
    SwBuf b = {0};
    sb_puts(&b, "{\"data\":{");
    sw_features_config(&b, sw);
    sb_printf(&b, "\"split\":\"%s\"},\"model\":{\"init\":\"%s\",\"layers\":[",
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
    if (ts->class_weights == FS_CW_EXPLICIT) {
        char w[320];
        sw_class_weights_json(ts->class_w, w, sizeof w);
        sb_printf(&b, "\"class_weights\":%s,", w);
    } else if (ts->class_weights != FS_CW_NONE) {
        sb_printf(&b, "\"class_weights\":\"%s\",", train_class_weights_name(ts->class_weights));
    }
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

