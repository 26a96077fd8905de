/*
 * model: architecture checks, shape and offset tables, initialisation.
 */
#include "model.h"

#include <math.h>
#include <string.h>

const char *const model_act_names[FS_ACT_COUNT] = {"linear", "relu", "leaky_relu", "swish", "tanh", "elu"};
const char *const model_init_names[FS_INIT_COUNT] = {"he", "glorot"};
const char *const model_layer_names[FS_LAYER_OUTPUT + 1] = {"conv1d", "dense",     "dropout", "batchnorm", "highway",
                                                            "add",    "layernorm", "gru",     "lstm", "attention", "output"};

const char *model_act_name(FsAct a) { return (unsigned)a < FS_ACT_COUNT ? model_act_names[a] : "?"; }
const char *model_layer_name(FsLayerKind k) { return (unsigned)k <= FS_LAYER_OUTPUT ? model_layer_names[k] : "?"; }

int model_act_parse(const char *s)
{
    for (int i = 0; i < FS_ACT_COUNT; i++)
        if (strcmp(s, model_act_names[i]) == 0) return i;
    return -1;
}

static long tensor_floats(int batch, int l, int c, int pad) { return (long)batch * (l + 2 * pad) * c; }

/* The architecture as a whole: window, batch, layer count, first layer. */
static int check_arch(const FsArch *arch, int max_batch, FsErr *err)
{
    if (arch->chain ? arch->window != 0 : (arch->window < 1 || arch->window % 2 == 0 || arch->window > 255))
        return fs_err_set(err, arch->chain ? "a chain model has no window, got %d"
                                           : "window must be an odd number between 1 and 255, got %d",
                          arch->window),
               -1;
    if (max_batch < 1) return fs_err_set(err, "batch size must be at least 1, got %d", max_batch), -1;
    if (arch->classes != 0 && arch->classes != FS_CLASSES && arch->classes != FS_CLASSES8)
        return fs_err_set(err, "classes must be 3 or 8, got %d", arch->classes), -1;
    if (arch->n_layers < 0 || arch->n_layers > FS_MAX_LAYERS)
        return fs_err_set(err, "at most %d layers, got %d", FS_MAX_LAYERS, arch->n_layers), -1;
    if (arch->feat_dim < 0 || arch->feat_dim > FS_FEAT_MAX_DIM || (arch->no_onehot && arch->feat_dim == 0))
        return fs_err_set(err, arch->no_onehot && arch->feat_dim == 0
                                   ? "the model has no input: data.features lists neither onehot nor a feature file"
                                   : "feature columns must be from 0 to %d, got %d",
                          FS_FEAT_MAX_DIM, arch->feat_dim),
               -1;
    if (arch->n_layers > 0 && arch->layers[0].kind != FS_LAYER_CONV && arch->layers[0].kind != FS_LAYER_DENSE)
        return fs_err_set(err, "layer 1: the first layer must be conv1d or dense (it reads the one-hot window), got %s",
                          model_layer_name(arch->layers[0].kind)),
               -1;
    return 0;
}

/* A conv1d or highway layer i's width, dilation and filters checked, its
 * output shape from its input (l x c); *pad grows to the widest reach. */
static int conv_shape(FsLayer *y, int i, int l, int c, int chain, int *pad, FsErr *err)
{
    const FsLayerSpec *s = &y->spec;
    /* A window model's kernel fits its window; a chain is as long as it
     * is, and zero padding covers a kernel longer than a protein. */
    if (s->width < 1 || s->width % 2 == 0 || (!chain && s->width > l) || s->width > FS_MAX_WIDTH)
        return fs_err_set(err, chain ? "layer %d (%s): kernel width must be odd and at most %d, got %d"
                                     : "layer %d (%s): kernel width must be odd and at most the input length %d, "
                                       "got %d",
                          i + 1, model_layer_name(s->kind), chain ? FS_MAX_WIDTH : l, s->width),
               -1;
    if (s->dilation < 0 || s->dilation > FS_MAX_DILATION || (!chain && s->dilation > 1))
        return fs_err_set(err, chain ? "layer %d (%s): dilation must be from 1 to %d, got %d"
                                     : "layer %d (%s): dilation needs a chain model (data.window: chain), got %d",
                          i + 1, model_layer_name(s->kind), chain ? FS_MAX_DILATION : s->dilation, s->dilation),
               -1;
    if (s->kind == FS_LAYER_CONV && s->units < 1)
        return fs_err_set(err, "layer %d (conv1d): filters must be at least 1, got %d", i + 1, s->units), -1;
    y->dil = s->dilation > 1 ? s->dilation : 1;
    y->out_l = l;
    y->out_c = s->kind == FS_LAYER_CONV ? s->units : c;
    if (s->width / 2 * y->dil > *pad) *pad = s->width / 2 * y->dil;
    return 0;
}

/* A recurrent (GRU or LSTM) layer i's options checked, its output shape from its input
 * (l x c); *pad at least 1. */
static int rnn_shape(FsLayer *y, int i, int l, int chain, int *pad, FsErr *err)
{
    const FsLayerSpec *s = &y->spec;
    const char *name = model_layer_name(s->kind);
    /* It needs each chain whole (a window model's positions are one
     * example's) and a pad row between chains to find them by. */
    if (!chain)
        return fs_err_set(err, "layer %d (%s): recurrent layers belong to chain models (data.window: chain), "
                               "which read each protein whole",
                          i + 1, name),
               -1;
    if (s->units < 1 || s->units > FS_MAX_RNN_UNITS || (s->bidir != 0 && s->bidir != 1))
        return fs_err_set(err, "layer %d (%s): units must be from 1 to %d and bidirectional true or false, "
                               "got %d and %d",
                          i + 1, name, FS_MAX_RNN_UNITS, s->units, s->bidir),
               -1;
    if (*pad < 1) *pad = 1;
    y->out_l = l;
    y->out_c = s->units * (1 + s->bidir);
    return 0;
}

/* An attention layer i's options checked; its output is as wide as its
 * input (the residual add); *pad at least 1 (a pad row between chains). */
static int attention_shape(FsLayer *y, int i, int l, int c, int chain, int *pad, FsErr *err)
{
    const FsLayerSpec *s = &y->spec;
    if (!chain)
        return fs_err_set(err, "layer %d (attention): attention layers belong to chain models (data.window: "
                               "chain), which read each protein whole",
                          i + 1),
               -1;
    if (s->heads < 1 || s->heads > FS_MAX_HEADS || s->key_dim < 1 || s->key_dim > FS_MAX_KEY_DIM ||
        s->max_dist < 1 || s->max_dist > FS_MAX_ATT_DIST)
        return fs_err_set(err, "layer %d (attention): heads must be from 1 to %d, key_dim from 1 to %d and "
                               "max_distance from 1 to %d, got %d, %d and %d",
                          i + 1, FS_MAX_HEADS, FS_MAX_KEY_DIM, FS_MAX_ATT_DIST, s->heads, s->key_dim, s->max_dist),
               -1;
    if (!(s->rate >= 0.0f && s->rate < 1.0f) || !(s->eps > 0.0f && s->eps <= 1.0f))
        return fs_err_set(err, "layer %d (attention): dropout must be in [0, 1) and eps > 0 and <= 1, got %g and %g",
                          i + 1, s->rate, s->eps),
               -1;
    if (*pad < 1) *pad = 1;
    y->out_l = l;
    y->out_c = c;
    return 0;
}

/* Layer i's options checked and its output shape from its input (l x c);
 * *pad grows to half the widest kernel's reach. */
static int layer_shape(FsLayer *y, int i, int l, int c, int chain, int *pad, FsErr *err)
{
    FsLayerSpec *s = &y->spec;
    y->in_l = l;
    y->in_c = c;
    y->gather = (i == 0);
    y->per_residue = 0;
    y->dil = 1;
    if (s->dilation != 0 && s->dilation != 1 && s->kind != FS_LAYER_CONV && s->kind != FS_LAYER_HIGHWAY)
        return fs_err_set(err, "layer %d (%s): only conv1d and highway layers take a dilation", i + 1,
                          model_layer_name(s->kind)),
               -1;
    switch (s->kind) {
    case FS_LAYER_CONV:
    case FS_LAYER_HIGHWAY:
        if (conv_shape(y, i, l, c, chain, pad, err) != 0) return -1;
        break;
    case FS_LAYER_DENSE:
    case FS_LAYER_OUTPUT:
        if (s->units < 1)
            return fs_err_set(err, "layer %d (dense): units must be at least 1, got %d", i + 1, s->units), -1;
        /* In a chain model a dense layer acts on each residue alone: a
         * convolution of width 1, which the layer code runs as one. */
        y->per_residue = chain;
        if (chain) s->width = 1;
        y->out_l = chain ? l : 1;
        y->out_c = s->units;
        break;
    case FS_LAYER_DROPOUT:
        if (!(s->rate >= 0.0f && s->rate < 1.0f))
            return fs_err_set(err, "layer %d (dropout): rate must be in [0, 1), got %g", i + 1, s->rate), -1;
        y->out_l = l;
        y->out_c = c;
        break;
    case FS_LAYER_ADD:
        /* The block's input is a layer's output: the first layer's input is
         * the one-hot residues, which no block may start from. */
        if (i < 2)
            return fs_err_set(err, "layer %d (add): a residual block starts after the first layer (whose input is "
                                   "the one-hot residues): an add needs at least 2 layers before it",
                              i + 1),
                   -1;
        if (s->units < 1 || s->units > i - 1)
            return fs_err_set(err, "layer %d (add): its block spans 1 to %d of the layers before it, got %d", i + 1,
                              i - 1, s->units),
                   -1;
        y->src = i - 1 - s->units;
        y->out_l = l;
        y->out_c = c;
        break;
    case FS_LAYER_LAYERNORM:
        if (!(s->eps > 0.0f && s->eps <= 1.0f))
            return fs_err_set(err, "layer %d (layernorm): eps must be > 0 and <= 1, got %g", i + 1, s->eps), -1;
        y->out_l = l;
        y->out_c = c;
        break;
    case FS_LAYER_GRU:
    case FS_LAYER_LSTM:
        if (rnn_shape(y, i, l, chain, pad, err) != 0) return -1;
        break;
    case FS_LAYER_ATTENTION:
        if (attention_shape(y, i, l, c, chain, pad, err) != 0) return -1;
        break;
    case FS_LAYER_BATCHNORM:
        if (!(s->eps > 0.0f) || !(s->momentum >= 0.0f && s->momentum < 1.0f))
            return fs_err_set(err, "layer %d (batchnorm): eps must be > 0 and momentum in [0, 1), got %g and %g",
                              i + 1, s->eps, s->momentum),
                   -1;
        y->out_l = l;
        y->out_c = c;
        break;
    default:
        return fs_err_set(err, "layer %d: unknown layer kind %d", i + 1, (int)s->kind), -1;
    }
    if ((unsigned)s->act > FS_ACT_ELU) return fs_err_set(err, "layer %d: unknown activation %d", i + 1, (int)s->act), -1;
    return 0;
}

/* An attention layer's parameters from *p on: projections in, out, the
 * layer norm and the position biases (model.h). */
static void attention_params(FsNet *net, FsLayer *y, long *p, long *scratch)
{
    const FsLayerSpec *s = &y->spec;
    const long C = y->in_c, hd = (long)s->heads * s->key_dim;
    y->n_w = C * 3 * hd;
    y->w = *p;
    *p += y->n_w;
    y->b = *p;
    *p += 3 * hd;
    y->w2 = *p;
    *p += hd * C;
    y->b2 = *p;
    *p += C;
    y->att_gamma = *p;
    *p += C;
    y->att_beta = *p;
    *p += C;
    y->att_rel = *p;
    *p += (long)FS_ATT_BUCKETS(s) * s->heads;
    if (y->n_w > *scratch) *scratch = y->n_w; /* the projections' transposes (conv_dgrad) */
    /* The projections here; the scores' share grows with the chains'
     * lengths, which a compiled net does not know: per pair of a chain and
     * head, forward a score and the context's sum (2 x key_dim
     * multiply-adds), backward the query pass's score, dP and dq (3) and
     * the key pass's score, dP, dk and dv (4), train/attention.c. */
    const long fl = 2 * (long)y->out_l * (y->n_w + hd * C);
    net->flops_fwd += fl;
    net->flops_bwd += 2 * fl;
    net->flops_pair_fwd += 2 * 2 * hd;
    net->flops_pair_bwd += 2 * 7 * hd;
}

/* Layer y's parameters from *p on, its transposed-weight scratch need
 * (into *scratch) and its FLOPs. */
static void layer_params(FsNet *net, FsLayer *y, long *p, long *scratch)
{
    const FsLayerSpec *s = &y->spec;
    long fan_rows = 0;
    if (s->kind == FS_LAYER_CONV || s->kind == FS_LAYER_HIGHWAY || y->per_residue) fan_rows = (long)s->width * y->in_c;
    else if (s->kind == FS_LAYER_DENSE || s->kind == FS_LAYER_OUTPUT) fan_rows = (long)y->in_l * y->in_c;
    y->w = y->b = y->w2 = y->b2 = y->s_mean = y->s_var = y->wf = y->att_gamma = y->att_beta = y->att_rel = -1;
    y->n_wf = 0;
    if (fan_rows) {
        /* The first layer's feature columns have weights of their own
         * (wf), after the one-hot rows and the bias: the gather reads the
         * one-hot rows as before, a GEMM the feature rows. */
        const long feat_rows = fan_rows / y->in_c * y->feat;
        y->n_w = (fan_rows - feat_rows) * y->out_c;
        y->w = *p;
        *p += y->n_w;
        y->b = *p;
        *p += y->out_c;
        if (feat_rows) {
            y->n_wf = feat_rows * y->out_c;
            y->wf = *p;
            *p += y->n_wf;
        }
        if (s->kind == FS_LAYER_HIGHWAY) {
            y->w2 = *p;
            *p += y->n_w;
            y->b2 = *p;
            *p += y->out_c;
        }
        /* Transposed-weight scratch: flipped kernels for conv and highway,
         * the batch gradient dZ^T for dense (rows padded to a multiple of
         * 8, train/layers.h). */
        long need = s->kind == FS_LAYER_HIGHWAY                    ? 2 * y->n_w
                    : s->kind == FS_LAYER_CONV || y->per_residue ? y->n_w
                                                                 : (long)y->out_c * ((net->max_batch + 7) / 8 * 8);
        if (!y->gather && need > *scratch) *scratch = need;
        long fl = 2 * (long)y->out_l * fan_rows * y->out_c * (s->kind == FS_LAYER_HIGHWAY ? 2 : 1);
        net->flops_fwd += fl;
        net->flops_bwd += y->gather ? fl : 2 * fl;
    } else if (s->kind == FS_LAYER_ADD) {
        /* A 1x1 projection (no bias) where the block changes the width. */
        const int cs = net->layer[y->src].out_c;
        if (cs != y->out_c) {
            y->n_w = (long)cs * y->out_c;
            y->w = *p;
            *p += y->n_w;
            if (y->n_w > *scratch) *scratch = y->n_w;
            net->flops_fwd += 2 * (long)y->out_l * y->n_w;
            net->flops_bwd += 4 * (long)y->out_l * y->n_w;
        }
    } else if (FS_RNN_GATES(s->kind)) {
        /* Input weights and bias, recurrent weights and bias (model.h). */
        const long g3 = (long)FS_RNN_GATES(s->kind) * y->out_c, u = s->units;
        y->n_w = (long)y->in_c * g3;
        y->w = *p;
        *p += y->n_w;
        y->b = *p;
        *p += g3;
        y->w2 = *p;
        *p += g3 * u;
        y->b2 = *p;
        *p += g3;
        /* The input gradient's transposed weights, then the recurrent
         * weights' transpose (train/rnn.c), one after the other. */
        const long need = y->n_w > g3 * u ? y->n_w : g3 * u;
        if (need > *scratch) *scratch = need;
        const long fl = 2 * (long)y->out_l * (y->n_w + g3 * u);
        net->flops_fwd += fl;
        net->flops_bwd += 2 * fl;
    } else if (s->kind == FS_LAYER_ATTENTION) {
        attention_params(net, y, p, scratch);
    } else if (s->kind == FS_LAYER_BATCHNORM || s->kind == FS_LAYER_LAYERNORM) {
        y->w = *p; /* gamma */
        *p += y->out_c;
        y->b = *p; /* beta */
        *p += y->out_c;
    }
}

/* An attention layer's tensors (model.h, train/attention.c), from *work
 * on: q (rows x width) the floats of one padded [rows][width] tensor. */
static void attention_workspace(FsLayer *y, long rows, long max_batch, long *work)
{
    const FsLayerSpec *s = &y->spec;
    const long hd = (long)s->heads * s->key_dim, qkv = tensor_floats((int)max_batch, y->out_l, (int)(3 * hd), y->out_pad),
               ctx = tensor_floats((int)max_batch, y->out_l, (int)hd, y->out_pad);
    long *area[] = {&y->z,      &y->att_dqkv, &y->h,       &y->att_dctx, &y->att_xhat,
                    &y->t,      &y->bn_mean,  &y->bn_istd, &y->att_drel, &y->att_cpu};
    const long size[] = {qkv, qkv, ctx, ctx, y->out_size, 2 * rows + 4, 2 * rows * s->heads, rows,
                         rows * s->heads * FS_ATT_BUCKETS(s), (4 * hd + 3 * FS_ATT_ROW_SETS) * rows};
    for (int k = 0; k < (int)(sizeof size / sizeof size[0]); k++) {
        *area[k] = *work;
        *work += (size[k] + 15) / 16 * 16;
    }
}

/* Layer y's tensors in the activation workspace from *work on. */
static void layer_workspace(FsLayer *y, long src_size, long rows, long max_batch, long *work)
{
    const FsLayerSpec *s = &y->spec;
    y->z = y->h = y->t = y->bn_mean = y->bn_istd = y->att_dqkv = y->att_dctx = y->att_xhat = y->att_drel = y->att_cpu = -1;
    y->a = *work;
    *work += y->out_size;
    y->d = *work;
    *work += y->out_size;
    if (s->act == FS_ACT_SWISH || s->kind == FS_LAYER_BATCHNORM || s->kind == FS_LAYER_LAYERNORM ||
        s->kind == FS_LAYER_DROPOUT) {
        y->z = *work;
        *work += y->out_size;
    }
    if (s->kind == FS_LAYER_HIGHWAY) {
        y->h = *work;
        *work += y->out_size;
        y->t = *work;
        *work += y->out_size;
    }
    if (s->kind == FS_LAYER_ADD && y->w >= 0) {
        y->h = *work; /* the skip path's gradient: the source's shape */
        *work += src_size;
    }
    if (s->kind == FS_LAYER_BATCHNORM) {
        y->bn_mean = *work;
        *work += y->out_c;
        y->bn_istd = *work;
        *work += y->out_c;
    }
    if (s->kind == FS_LAYER_LAYERNORM) {
        y->bn_istd = *work; /* each position's 1 / sqrt(var + eps) */
        *work += rows;
    }
    const int gates = FS_RNN_GATES(s->kind);
    if (gates) {
        y->z = *work; /* the gates: gates x the output's width a row */
        *work += gates * y->out_size;
        y->h = *work; /* the recurrent part, as wide (an LSTM's cell states after its step, train/rnn.c) */
        *work += gates * y->out_size;
        y->t = *work; /* the chains: a count, then a start and a length each (at most one per 2 rows) */
        *work += rows + 4;
        y->bn_mean = *work; /* a step's rows gathered, in and out: 2 x dirs x (rows / 2 + 1) x gates x units */
        *work += 2L * (1 + s->bidir) * (rows / 2 + 1) * gates * s->units;
    }
    if (s->kind == FS_LAYER_ATTENTION) attention_workspace(y, rows, max_batch, work);
    /* Keep every tensor 64-byte aligned. */
    *work = (*work + 15) / 16 * 16;
}

int model_compile(FsNet *net, const FsArch *arch, int max_batch, FsErr *err)
{
    memset(net, 0, sizeof *net);
    net->arch = *arch;
    net->max_batch = max_batch;
    if (check_arch(arch, max_batch, err) != 0) return -1;

    /* Pass 1: shapes and the common pad. A chain model's example is its
     * batch's tensor of max_batch rows (model.h). */
    if (arch->chain) net->max_batch = 1;
    net->train_batch = net->max_batch;
    net->chain = arch->chain != 0;
    net->classes = fs_classes(arch->classes);
    int l = arch->chain ? max_batch : arch->window, c = FS_ARCH_ONEHOT_C(arch) + arch->feat_dim, pad = 0;
    net->n = arch->n_layers + 1;
    for (int i = 0; i < net->n; i++) {
        FsLayer *y = &net->layer[i];
        if (i < arch->n_layers) {
            y->spec = arch->layers[i];
        } else {
            memset(&y->spec, 0, sizeof y->spec);
            y->spec.kind = FS_LAYER_OUTPUT;
            y->spec.units = net->classes;
            y->spec.act = FS_ACT_LINEAR;
        }
        if (layer_shape(y, i, l, c, net->chain, &pad, err) != 0) return -1;
        y->feat = i == 0 ? arch->feat_dim : 0;
        y->op = y->per_residue ? FS_LAYER_CONV : y->spec.kind;
        if (y->spec.kind == FS_LAYER_ADD && net->layer[y->src].out_l != l)
            return fs_err_set(err, "layer %d (add): its block's input has %d positions and its output %d (a dense "
                                   "layer between them flattens the window)",
                              i + 1, net->layer[y->src].out_l, l),
                   -1;
        l = y->out_l;
        c = y->out_c;
    }

    net->in_rows = net->layer[0].in_l;
    net->out_rows = net->layer[net->n - 1].out_l;
    net->pad = pad;
    /* Pass 2: offsets. Parameters first, then state, so that "weights"
     * (what the best epoch keeps) is one contiguous block. */
    long p = 0, work = 0, scratch = 0;
    for (int i = 0; i < net->n; i++) {
        FsLayer *y = &net->layer[i];
        y->in_pad = y->in_l > 1 ? pad : 0;
        y->out_pad = y->out_l > 1 ? pad : 0;
        y->out_size = tensor_floats(net->max_batch, y->out_l, y->out_c, y->out_pad);
        layer_params(net, y, &p, &scratch);
        layer_workspace(y, y->spec.kind == FS_LAYER_ADD ? net->layer[y->src].out_size : 0,
                        (long)net->max_batch * y->out_l, net->max_batch, &work);
    }
    net->feat_in = -1;
    if (net->layer[0].feat) {
        const FsLayer *y = &net->layer[0];
        net->feat_in = work;
        work += (tensor_floats(net->max_batch, y->in_l, y->feat, y->in_pad) + 15) / 16 * 16;
    }
    net->n_params = p;
    long st = p;
    for (int i = 0; i < net->n; i++) {
        FsLayer *y = &net->layer[i];
        if (y->spec.kind == FS_LAYER_BATCHNORM) {
            y->s_mean = st;
            st += y->out_c;
            y->s_var = st;
            st += y->out_c;
        }
    }
    net->n_state = st - p;
    net->n_work = work;
    net->n_scratch = scratch;
    return 0;
}

void model_init(const FsNet *net, float *weights, FsRng *rng)
{
    memset(weights, 0, sizeof(float) * (size_t)(net->n_params + net->n_state));
    for (int i = 0; i < net->n; i++) {
        const FsLayer *y = &net->layer[i];
        const FsLayerSpec *s = &y->spec;
        if (FS_RNN_GATES(s->kind)) {
            /* PyTorch's GRU and LSTM init for both weight matrices, uniform
             * in +-1/sqrt(units); biases zero. */
            const float limit = 1.0f / sqrtf((float)s->units);
            const long n2 = (long)FS_RNN_GATES(s->kind) * y->out_c * s->units;
            for (long k = 0; k < y->n_w; k++) weights[y->w + k] = limit * (2.0f * fs_rng_uniform(rng) - 1.0f);
            for (long k = 0; k < n2; k++) weights[y->w2 + k] = limit * (2.0f * fs_rng_uniform(rng) - 1.0f);
            continue;
        }
        if (s->kind == FS_LAYER_ATTENTION) {
            /* Glorot uniform for each projection (fan in + fan out: C
             * and heads x key_dim), biases and position biases zero,
             * the layer norm's gamma 1. */
            const long C = y->in_c, hd = (long)s->heads * s->key_dim;
            const float lin = sqrtf(6.0f / (float)(C + hd));
            for (long k = 0; k < y->n_w; k++) weights[y->w + k] = lin * (2.0f * fs_rng_uniform(rng) - 1.0f);
            for (long k = 0; k < hd * C; k++) weights[y->w2 + k] = lin * (2.0f * fs_rng_uniform(rng) - 1.0f);
            for (long c = 0; c < C; c++) weights[y->att_gamma + c] = 1.0f;
            continue;
        }
        if (s->kind == FS_LAYER_BATCHNORM || s->kind == FS_LAYER_LAYERNORM) {
            for (int c = 0; c < y->out_c; c++) weights[y->w + c] = 1.0f; /* gamma; beta 0 */
            if (s->kind == FS_LAYER_BATCHNORM)
                for (int c = 0; c < y->out_c; c++) weights[y->s_var + c] = 1.0f;
            continue;
        }
        if (y->w < 0) continue;
        long fan_in = (y->n_w + y->n_wf) / y->out_c;
        long fan_out = (s->kind == FS_LAYER_CONV || s->kind == FS_LAYER_HIGHWAY || y->per_residue)
                           ? (long)s->width * y->out_c
                           : y->out_c;
        double limit = net->arch.init == FS_INIT_GLOROT ? sqrt(6.0 / (double)(fan_in + fan_out))
                                                        : sqrt(6.0 / (double)fan_in);
        for (long k = 0; k < y->n_w; k++) weights[y->w + k] = (float)limit * (2.0f * fs_rng_uniform(rng) - 1.0f);
        for (long k = 0; k < y->n_wf; k++) weights[y->wf + k] = (float)limit * (2.0f * fs_rng_uniform(rng) - 1.0f);
        if (s->kind == FS_LAYER_HIGHWAY) {
            for (long k = 0; k < y->n_w; k++)
                weights[y->w2 + k] = (float)limit * (2.0f * fs_rng_uniform(rng) - 1.0f);
            for (int c = 0; c < y->out_c; c++) weights[y->b2 + c] = s->gate_bias;
        }
    }
}

int model_receptive_field(const FsArch *arch)
{
    /* A window model's dense or output layer flattens the window: its one
     * output sees every residue of it, whatever the convolutions' widths. */
    if (!arch->chain) return arch->window;
    long f = 1;
    for (int i = 0; i < arch->n_layers; i++) {
        const FsLayerSpec *s = &arch->layers[i];
        if (FS_RNN_GATES(s->kind) || s->kind == FS_LAYER_ATTENTION) return FS_RF_WHOLE_CHAIN;
        if (s->kind == FS_LAYER_CONV || s->kind == FS_LAYER_HIGHWAY)
            f += (long)(s->width - 1) * (s->dilation > 1 ? s->dilation : 1);
    }
    return f >= FS_RF_WHOLE_CHAIN ? FS_RF_WHOLE_CHAIN - 1 : (int)f;
}
