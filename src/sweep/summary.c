/*
 * summary.c: one-line descriptions of a trial's architecture and training
 * options, for `plan`, progress lines and leaderboards, and its parameter
 * count.
 */
#include <string.h>

#include "sweep/sweep_int.h"

static void cat(char *out, size_t n, const char *s)
{
    size_t k = strlen(out);
    if (k + 1 < n) snprintf(out + k, n - k, "%s", s);
}

long sweep_trial_params(const FsTrial *t)
{
    FsNet net;
    FsErr err = {0};
    return model_compile(&net, &t->arch, 1, &err) == 0 ? net.n_params : 0;
}

int sweep_trial_receptive_field(const FsTrial *t) { return model_receptive_field(&t->arch); }

void sweep_arch_summary(const FsArch *a, char *out, size_t n)
{
    if (!n) return;
    out[0] = '\0';
    /* One activation for every layer that has one is said once, at the end. */
    int act = -1, mixed = 0;
    for (int i = 0; i < a->n_layers; i++) {
        FsLayerKind k = a->layers[i].kind;
        if (k != FS_LAYER_CONV && k != FS_LAYER_DENSE && k != FS_LAYER_HIGHWAY) continue;
        if (act >= 0 && act != (int)a->layers[i].act) mixed = 1;
        act = (int)a->layers[i].act;
    }
    char t[64];
    for (int i = 0; i < a->n_layers; i++) {
        const FsLayerSpec *s = &a->layers[i];
        switch (s->kind) {
        case FS_LAYER_CONV: snprintf(t, sizeof t, "conv%dx%d", s->units, s->width); break;
        case FS_LAYER_DENSE: snprintf(t, sizeof t, "dense%d", s->units); break;
        case FS_LAYER_HIGHWAY: snprintf(t, sizeof t, "hw%d", s->width); break;
        case FS_LAYER_DROPOUT: snprintf(t, sizeof t, "drop%s", fs_float_text(s->rate)); break;
        case FS_LAYER_BATCHNORM: snprintf(t, sizeof t, "bn"); break;
        case FS_LAYER_LAYERNORM: snprintf(t, sizeof t, "ln"); break;
        case FS_LAYER_GRU:
        case FS_LAYER_LSTM:
            snprintf(t, sizeof t, "%s%s%d", s->bidir ? "bi" : "", model_layer_name(s->kind), s->units);
            break;
        case FS_LAYER_ADD: snprintf(t, sizeof t, "add%d", s->units); break;
        case FS_LAYER_ATTENTION: snprintf(t, sizeof t, "att%dx%d", s->heads, s->key_dim); break;
        default: snprintf(t, sizeof t, "?"); break;
        }
        if (i) cat(out, n, "-");
        cat(out, n, t);
        if (s->dilation > 1 && (s->kind == FS_LAYER_CONV || s->kind == FS_LAYER_HIGHWAY)) {
            snprintf(t, sizeof t, "d%d", s->dilation);
            cat(out, n, t);
        }
        if (mixed && (s->kind == FS_LAYER_CONV || s->kind == FS_LAYER_DENSE || s->kind == FS_LAYER_HIGHWAY)) {
            snprintf(t, sizeof t, ":%s", model_act_name(s->act));
            cat(out, n, t);
        }
    }
    if (act >= 0 && !mixed) {
        snprintf(t, sizeof t, " %s", model_act_name((FsAct)act));
        cat(out, n, t);
    }
    if (a->chain && model_receptive_field(a) == FS_RF_WHOLE_CHAIN) /* a recurrent or attention layer reads it all */
        snprintf(t, sizeof t, " chain rf whole%s", a->init == FS_INIT_GLOROT ? " glorot" : "");
    else if (a->chain)
        snprintf(t, sizeof t, " chain rf%d%s", model_receptive_field(a), a->init == FS_INIT_GLOROT ? " glorot" : "");
    else
        snprintf(t, sizeof t, " w%d%s", a->window, a->init == FS_INIT_GLOROT ? " glorot" : "");
    cat(out, n, t);
}

void sweep_train_summary(const FsTrainSpec *ts, int chain, char *out, size_t n)
{
    const FsStopSpec *st = &ts->stop;
    char stop[48];
    switch (st->kind) {
    case FS_STOP_GL: snprintf(stop, sizeof stop, "gl%s", fs_float_text(st->alpha)); break;
    case FS_STOP_PQ: snprintf(stop, sizeof stop, "pq%s/%d", fs_float_text(st->alpha), st->strip); break;
    case FS_STOP_UP: snprintf(stop, sizeof stop, "up%d/%d", st->s, st->strip); break;
    case FS_STOP_PATIENCE: snprintf(stop, sizeof stop, "patience%d", st->patience); break;
    default: snprintf(stop, sizeof stop, "%s", stop_kind_name(FS_STOP_MAX_EPOCHS)); break;
    }
    char extra[400] = "";
    if (ts->opt == FS_OPT_SGD) snprintf(extra, sizeof extra, " momentum=%s", fs_float_text(ts->momentum));
    if (ts->weight_decay > 0) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " wd=%s", fs_float_text(ts->weight_decay));
    if (ts->clip_norm > 0) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " clip=%s", fs_float_text(ts->clip_norm));
    if (ts->monitor != FS_MONITOR_LOSS)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " monitor=%s", train_monitor_name(ts->monitor));
    if (ts->lr_schedule == FS_LR_STEP)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " lr_schedule=step/%dx%s", ts->lr_step_every,
                 fs_float_text(ts->lr_step_factor));
    else if (ts->lr_schedule != FS_LR_CONSTANT)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " lr_schedule=%s",
                 train_lr_schedule_name(ts->lr_schedule));
    if (ts->warmup_epochs > 0)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " warmup=%d", ts->warmup_epochs);
    if (ts->class_weights == FS_CW_EXPLICIT) {
        char num[FS_FLOAT_TEXT];
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " class_weights=");
        const int K = ts->class_w[FS_CLASSES] > 0.0f ? FS_CLASSES8 : FS_CLASSES;
        for (int c = 0; c < K; c++)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s%c%s", c ? "/" : "", fs_class_letters(K)[c],
                     fs_format_float(num, sizeof num, ts->class_w[c]));
    } else if (ts->class_weights != FS_CW_NONE) {
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " class_weights=%s",
                 train_class_weights_name(ts->class_weights));
    }
    char batch[48];
    snprintf(batch, sizeof batch, chain ? "batch_residues=%d" : "batch=%d", chain ? ts->batch_residues : ts->batch);
    snprintf(out, n, "%s lr=%s %s epochs=%d stop=%s%s seed=%llu", train_opt_name(ts->opt), fs_float_text(ts->lr),
             batch, st->max_epochs, stop, extra, (unsigned long long)ts->seed[0]);
}
