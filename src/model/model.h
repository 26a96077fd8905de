/*
 * model: a small 1D CNN over a window of one-hot residues, as a layer
 * descriptor plus one contiguous float buffer (llm.c habit).
 *
 * Dimension legend: B batch, L window positions (L = 1 after a dense
 * layer), C channels, K kernel width, U dense units, P padding rows.
 *
 * Every activation tensor is stored [B][L + 2P][C] with P zero rows on each
 * side, so that a "same" convolution is a plain GEMM over contiguous rows
 * (the K*C inputs of output position p are consecutive floats) and needs no
 * im2col. Pad rows are never written and stay zero.
 *
 * The weight buffer holds, in order: trainable parameters (n_params), then
 * non-trainable state (batch-norm running statistics, n_state). The model's
 * full buffer (see train) adds gradients, optimizer moments and a copy of
 * the best epoch's weights, all laid out from this module's size table.
 */
#ifndef FS_MODEL_H
#define FS_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

typedef enum {
    FS_LAYER_CONV = 0, /* conv1d: filters, width, same padding, activation */
    FS_LAYER_DENSE,    /* dense: units, activation; flattens an (L, C) input */
    FS_LAYER_DROPOUT,  /* dropout: rate (inverted scaling at training time) */
    FS_LAYER_BATCHNORM,/* batch norm over batch (and positions): eps, momentum */
    FS_LAYER_HIGHWAY,  /* y = T*H + (1-T)*x, H = act(conv_K(x)), T = sigmoid(conv_K(x)) */
    FS_LAYER_ADD,      /* residual: y = x + the input of the `units` layers before it (through a
                          1x1 projection where the widths differ) */
    FS_LAYER_LAYERNORM,/* layer norm over each position's channels: eps */
    FS_LAYER_GRU,      /* a chain model's gated recurrent layer: units, bidir (forward and backward
                          outputs concatenated); it reads each chain whole and never crosses into another */
    FS_LAYER_LSTM,     /* a chain model's long short-term memory layer: units, bidir, as the GRU */
    FS_LAYER_ATTENTION,/* a chain model's multi-head self-attention within each chain: heads, key_dim,
                          max_dist, rate; its residual add and layer norm (eps) (train/attention.c) */
    FS_LAYER_OUTPUT    /* implicit last layer: dense to 3 classes, softmax */
} FsLayerKind;

typedef enum { FS_ACT_LINEAR = 0, FS_ACT_RELU, FS_ACT_LEAKY_RELU, FS_ACT_SWISH, FS_ACT_TANH, FS_ACT_ELU } FsAct;
#define FS_ACT_COUNT 6

typedef enum { FS_INIT_HE = 0, FS_INIT_GLOROT } FsInit;
#define FS_INIT_COUNT 2

/* The names of activations and initialisations in enum order: the one
 * spelling of each, used by the sweep format, trial configs, model files
 * and summaries alike. */
extern const char *const model_act_names[FS_ACT_COUNT];
extern const char *const model_init_names[FS_INIT_COUNT];
/* Layer kinds by FsLayerKind; the first FS_LAYER_OUTPUT are the ones a
 * sweep's `layers` list may name. */
extern const char *const model_layer_names[FS_LAYER_OUTPUT + 1];

typedef struct {
    FsLayerKind kind;
    int units;       /* conv filters / dense units / the layers an add's block spans */
    int width;       /* conv / highway kernel width (odd) */
    FsAct act;       /* conv, dense, highway H */
    float act_param; /* leaky_relu slope, elu alpha */
    float rate;      /* dropout */
    float eps;       /* batch norm and layer norm epsilon */
    float momentum;  /* batch norm running-average momentum */
    float gate_bias; /* highway: initial gate bias (negative: carry the input at first) */
    int dilation;    /* conv / highway: taps this many rows apart (0 or 1: adjacent) */
    int bidir;       /* gru, lstm: 1, both directions (2 x units outputs); 0, forward only */
    int heads;       /* attention: heads */
    int key_dim;     /* attention: each head's query, key and value width (Keras's key_dim) */
    int max_dist;    /* attention: learned position biases for distances -max_dist..max_dist (farther
                        ones share the end buckets) */
} FsLayerSpec;

/* A recurrent layer's gates a unit (PyTorch's order): the GRU's r, z, n,
 * the LSTM's i, f, g, o; 0 for a layer that is not recurrent. A macro:
 * the device code (train/rnn.c) uses it too. */
#define FS_RNN_GATES(k) ((k) == FS_LAYER_GRU ? 3 : (k) == FS_LAYER_LSTM ? 4 : 0)

#define FS_MAX_LAYERS 16
/* The widest layers a sweep may ask for (sweep/options.c), and so the
 * widest a model file may describe (modelfile). */
#define FS_MAX_FILTERS 4096
/* The widest spacing of a chain model's convolution taps. */
#define FS_MAX_DILATION 64
#define FS_MAX_WIDTH 255 /* a convolution's kernel width, at most (odd) */
#define FS_MAX_UNITS 65536
#define FS_MAX_RNN_UNITS 1024 /* a recurrent layer's units (each direction's), at most */
#define FS_MAX_HEADS 16       /* an attention layer's heads, at most */
#define FS_MAX_KEY_DIM 256    /* an attention head's width, at most */
#define FS_MAX_ATT_DIST 128   /* an attention layer's max_dist, at most */

/* An attention layer's position-bias buckets: relative distances
 * -max_dist..max_dist, clipped (bucket = clip(j - i) + max_dist). */
#define FS_ATT_BUCKETS(s) (2 * (s)->max_dist + 1)
/* The CPU's attention passes in this many ranges of (row, head) pairs, each
 * with score rows of its own (FsLayer.att_cpu), for pool threads to share. */
#define FS_ATT_ROW_SETS 8

/* A chain model (arch.chain) reads a whole protein chain, not a window:
 * its convolutions run over the chain with zero padding at its ends
 * ("same" length), dense layers act on each residue (a 1x1 convolution),
 * and the output layer predicts every residue. Its window is 0. */
typedef struct {
    int window; /* odd; 0 for a chain model */
    int chain;  /* 1: a whole-chain model */
    int n_layers;
    FsLayerSpec layers[FS_MAX_LAYERS]; /* the output layer is added by model_compile */
    FsInit init;
    /* The input (data.features): each residue's one-hot code (unless
     * no_onehot) and feat_dim per-residue feature columns read from files
     * (the data set's feat, FsDataset). Zero: one-hot only, as before. */
    int no_onehot;
    int feat_dim;
    int classes; /* the output layer's width: 0 or 3 (3-state), or 8 (DSSP-8, data.classes) */
} FsArch;

/* The first layer's input channels: the one-hot codes', then the features'. */
#define FS_ARCH_ONEHOT_C(a) ((a)->no_onehot ? 0 : FS_AA_INPUTS)

/* One compiled layer: shapes, parameter offsets (floats into the weight
 * buffer) and workspace offsets (floats into the activation workspace). */
typedef struct {
    FsLayerSpec spec;
    int in_l, in_c, out_l, out_c;
    int in_pad, out_pad; /* pad rows of input and output tensors (0 when L == 1) */
    int gather;          /* first layer: input is one-hot codes, forward is a gather */
    int feat;            /* first layer: its input's feature columns (in_c - feat one-hot channels; w holds
                            the one-hot rows, wf the feature rows, [K*feat or in_l*feat][out_c]) */
    int per_residue;     /* a chain model's dense or output layer: a width-1 convolution */
    FsLayerKind op;      /* what the layer code runs it as: its kind, or conv1d where per_residue */
    int dil;             /* conv / highway taps' spacing in rows (>= 1) */
    int src;             /* add: the layer whose output is the block's input (its skip path) */
    long w, b;           /* weights [K*in_c or in_l*in_c][out_c] and bias, or gamma/beta for BN and LN;
                            a recurrent layer's input weights [in_c][dirs*G*units] and their bias (G
                            gates, FS_RNN_GATES: r, z, n or i, f, g, o, of the forward direction, then
                            the backward's) */
    long w2, b2;         /* highway gate weights and bias; a recurrent layer's weights [dirs][units][G*units]
                            and their bias [dirs*G*units]. An attention layer: w [in_c][3*heads*key_dim]
                            and b, the query, key and value projections side by side (each head's
                            key_dim columns in turn); w2 [heads*key_dim][out_c] and b2 the output
                            projection; then att_gamma and att_beta (its layer norm) and att_rel
                            [FS_ATT_BUCKETS][heads] (the position biases) */
    long att_gamma, att_beta, att_rel;
    long s_mean, s_var;  /* batch norm running statistics (in the state region) */
    long n_w;            /* floats in w (and in w2) */
    long wf, n_wf;       /* first layer: the feature columns' weights, floats in them (0: none) */
    /* workspace: a = output, d = gradient of output, z = activation aux
     * (sigmoid for swish, x-hat for BN and LN, mask for dropout), h/t =
     * highway; an add's h: its skip path's gradient through the
     * projection; bn_mean and bn_istd: BN's per channel, LN's bn_istd per
     * position (max_batch x out_l rows). A recurrent layer's z: its
     * gates, padded rows of dirs*G*units (the input's part, then the
     * gates; backward: their gradients), h: the recurrent part (W_hh h +
     * b_hh; an LSTM's cell states once its step is done; backward: its
     * gradient), t: the batch's chains (ints, train/rnn.c), bn_mean: a
     * step's rows gathered for its recurrent products. An attention
     * layer (train/attention.c): z its queries, keys and values, h the
     * heads' outputs, t each row's chain, bn_mean each row and head's
     * log-sum-exp of its scores, then (backward) the dot of its output and
     * output gradient, bn_istd its layer norm's; att_* below. */
    long a, d, z, h, t, bn_mean, bn_istd;
    long att_dqkv;   /* attention: the gradients of z */
    long att_dctx;   /* attention: the gradients of h */
    long att_xhat;   /* attention: its layer norm's x-hat */
    long att_drel;   /* attention: each row and head's position-bias gradients, [rows][heads][buckets] */
    long att_cpu;    /* attention, the CPU's row-at-a-time path: q, k, v transposed [3 x heads x key_dim][rows],
                        the heads' output gradients transposed [heads x key_dim][rows], FS_ATT_ROW_SETS x three
                        rows of scores */
    long out_size; /* floats in one output tensor for the maximum batch */
} FsLayer;

/* A chain model's batch is one tensor of rows: each protein's residues,
 * then pad rows of zeros (as many as the widest kernel's reach), the next
 * protein's, and so on; a convolution over it is a convolution over each
 * protein with zero padding at its ends. model_compile's max_batch is then
 * the most rows a batch holds, and the net's example is that tensor. */
typedef struct {
    FsArch arch;
    int chain;    /* arch.chain */
    int classes;  /* the output layer's width, fs_classes(arch.classes): 3 or 8 */
    int in_rows;  /* rows of one example's input: the window, or a chain batch's rows */
    int out_rows; /* rows of one example's output: 1, or a chain batch's rows */
    int pad;      /* pad rows on each side of every tensor (and between a chain batch's proteins) */
    int n; /* layers including the output layer */
    FsLayer layer[FS_MAX_LAYERS + 1];
    int max_batch;
    int train_batch;        /* examples a training step holds at most (a window model's batch_size, set by
                               train_compile; max_batch where compiled without one; a chain model: 1): the
                               GPU library tier's training calls span this many, its validation max_batch */
    long n_params, n_state; /* floats */
    long n_work;            /* floats of activation workspace */
    long feat_in;           /* workspace offset of the first layer's feature input, a padded
                               [max_batch][in_rows][feat] tensor (-1: no feature columns) */
    long n_scratch;         /* floats of transposed-weight scratch */
    long flops_fwd;         /* dense-equivalent multiply-adds x2 per example, forward */
    long flops_bwd;
    /* Attention's scores and context, which grow with the chain: FLOP per
     * row per row of its chain (times the chains' residue-weighted mean
     * length, data_chain_pair_mean, for a row's share), forward and
     * backward; 0 without attention. */
    long flops_pair_fwd, flops_pair_bwd;
} FsNet;

/* Checks and compiles an architecture for batches up to max_batch
 * examples (a chain model: up to max_batch rows, FsNet above).
 * Returns 0, or -1 with err saying which layer and what was expected. */
int model_compile(FsNet *net, const FsArch *arch, int max_batch, FsErr *err);

/* He or Glorot uniform weights, zero biases, BN gamma 1 / beta 0, running
 * variance 1, highway gate bias from the spec. weights has n_params + n_state floats. */
void model_init(const FsNet *net, float *weights, FsRng *rng);

/* The residues one output sees (its receptive field): a chain model's is
 * 1 + the sum of (width - 1) x dilation over convolution and highway
 * layers, or FS_RF_WHOLE_CHAIN where a recurrent or attention layer reads it all; a
 * window model's is its window (its dense or output layer flattens the
 * window). */
#define FS_RF_WHOLE_CHAIN (1 << 30)
int model_receptive_field(const FsArch *arch);

const char *model_act_name(FsAct a);
int model_act_parse(const char *s); /* -1 if unknown */
const char *model_layer_name(FsLayerKind k);

#endif
