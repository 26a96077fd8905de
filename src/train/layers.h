/*
 * train/layers.h: internal to the train module (single source): forward
 * and backward of each layer over a batch.
 */
#ifndef FS_TRAIN_LAYERS_H
#define FS_TRAIN_LAYERS_H

#include "train/core.h"

FS_DEVICE static inline FsStride st_plain(long s)
{
    FsStride st = {0, 0, s};
    return st;
}

/* Interior rows of a padded [B][L + 2P][C] tensor, one after another. */
FS_DEVICE static inline FsStride st_rows(int L, int P, int C)
{
    FsStride st = {L, (long)(L + 2 * P) * C, C};
    return st;
}

/* The dense input gradient's dZ^T rows are padded to a multiple of 8
 * floats (zeros), so that the GEMM loads whole vectors at any batch size
 * (model.c sizes the scratch for it). */
FS_DEVICE static inline int dense_bpad(int B)
{
    return (B + 7) / 8 * 8;
}

/* A dropout mask's uniform draw: a hash of (model stream, step, layer,
 * element), so threads draw it in parallel, a repeated forward pass sees
 * the same and a backward pass can draw it again (attention.c). */
FS_DEVICE static inline float dropout_uniform(uint64_t key, uint64_t step, long layer, long e)
{
    uint64_t z = key ^ (step * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)layer << 56) ^ ((uint64_t)e * 0xd1b54a32d192ed03ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

/* Layer i of m's net as this batch sees it: a chain model's layers are
 * compiled for its most rows, and a batch holds m->rows of them (tmp is
 * the copy that says so). */
FS_DEVICE static inline const FsLayer *layer_view(const FsModel *m, int i, FsLayer *tmp)
{
    const FsLayer *y = &m->net->layer[i];
    if (!m->net->chain) return y;
    *tmp = *y;
    tmp->in_l = tmp->out_l = m->rows;
    return tmp;
}

/* A chain batch's pad rows (between and after its proteins: codes
 * FS_AA_PAD) and the tensor's pad rows after the batch set to zero in x
 * (C channels), so that the next layer sees zero padding at every
 * protein's ends. Called on every layer's output and every output
 * gradient of a chain model. */
FS_DEVICE void chain_mask_rows(const FsModel *m, float *x, int C);

/* A conv1d layer's passes before and after its GEMMs (layers.c): forward
 * part 0 the bias, part 1 the activation; backward part 0 the
 * activation's derivative and the bias gradient, part 1 the input
 * gradient zeroed (between the weight and the input gradient's GEMMs). */
FS_DEVICE void conv_forward_part(FsModel *m, int i, int B, int part);
FS_DEVICE void conv_backward_part(FsModel *m, int i, int B, int part);

/* Layer i of m's net; input is layer i-1's output (or the batch codes). */
FS_DEVICE void layer_forward(FsModel *m, int i, int B, int train);
/* Accumulates parameter gradients and writes layer i-1's output gradient.
 * With fuse, a dense layer updates its weights instead of storing their
 * gradient; returns nonzero if this thread saw it non-finite. */
FS_DEVICE int layer_backward(FsModel *m, int i, int B, const FsOptStep *fuse);
/* After layer i's forward pass: a chain batch's pad rows of its output
 * zeroed. After its backward pass: those of its input's gradient, and the
 * residual skips that start at its input added to that gradient. */
FS_DEVICE void layer_forward_done(FsModel *m, int i);
FS_DEVICE void layer_backward_done(FsModel *m, int i, int B);

/* The first layer (conv.c): out = bias + the weight rows its one-hot codes
 * pick (a gather), and the weight gradient's scatter-add. */
FS_DEVICE void gather_forward(const FsLayer *y, const float *w, const uint8_t *codes, float *out, int B);
FS_DEVICE void gather_backward(const FsLayer *y, float *gw, const uint8_t *codes, const float *d, int B);
/* The first layer's feature columns (FsNet.feat_in, weights wf): out +=
 * their GEMM (d NULL; out holds the bias: the batch's load calls it, and
 * the gather then adds the one-hot rows), or their weight gradient from
 * the layer's output gradient d (layer_backward_done). */
FS_DEVICE void input_features(const FsModel *m, const FsLayer *y, float *out, const float *d, int B);
/* Convolution pieces (conv.c), shared by conv1d and highway (weights W [K*Cin][F]). */
FS_DEVICE void conv_gemm(const FsLayer *y, const float *W, const float *x, float *out, int B, int F);
/* The layer's forward after its bias: out += conv(x), then its activation
 * (aux: swish's sigmoids); in the block GEMM's epilogue where there is one
 * (FS_GEMM_ACT, core.h), else act_forward after the GEMM. */
FS_DEVICE void conv_gemm_act(const FsLayer *y, const float *W, const float *x, float *out, float *aux, int B);
FS_DEVICE void conv_wgrad(const FsLayer *y, float *gW, const float *x, const float *d, int B, int F);
FS_DEVICE void conv_dgrad(const FsLayer *y, const float *W, float *Wf, const float *d, float *dx, int B, int F);

/* out = bias + x W, then its activation (aux: swish's sigmoids), as conv_gemm_act. */
FS_DEVICE void dense_forward(const FsLayer *y, const float *w, const float *x, float *out, float *aux, int B);
FS_DEVICE void dense_backward(const FsLayer *y, const float *w, float *gw, float *scratch, const float *x,
                              const float *d, float *dx, int B);
/* dense_backward and the optimizer step o in one pass over the weights. */
FS_DEVICE int dense_backward_fused(const FsLayer *y, float *w, float *gw, float *m1, float *m2, float *scratch,
                                   const float *x, const float *d, float *dx, int B, const FsOptStep *o);

FS_DEVICE void batchnorm_forward(FsModel *m, const FsLayer *y, const float *x, int B, int train);
FS_DEVICE void batchnorm_backward(FsModel *m, const FsLayer *y, float *dx, int B);
FS_DEVICE void layernorm_forward(FsModel *m, const FsLayer *y, const float *x, int B);
FS_DEVICE void layernorm_backward(FsModel *m, const FsLayer *y, float *dx, int B);
/* li: the layer's index (its dropout mask's stream). */
FS_DEVICE void dropout_forward(FsModel *m, const FsLayer *y, long li, const float *x, int B, int train);
FS_DEVICE void dropout_backward(FsModel *m, const FsLayer *y, float *dx, int B);
FS_DEVICE void highway_forward(FsModel *m, const FsLayer *y, const float *x, int B);
/* Residual add (blocks.c): out = x + the block input (projected where the
 * widths differ); backward passes d to x and keeps the skip path's share
 * (y->d itself, or through the projection in y->h) for add_skips, which
 * adds it to the block input's gradient once layer src + 1 has written it. */
FS_DEVICE void add_forward(FsModel *m, const FsLayer *y, const float *x, int B);
FS_DEVICE void add_backward(FsModel *m, const FsLayer *y, float *dx, int B);
FS_DEVICE void add_skips(FsModel *m, int src, int B);
FS_DEVICE void highway_backward(FsModel *m, const FsLayer *y, const float *x, float *dx, int B);
/* A chain model's GRU or LSTM (rnn.c): backward writes the input's gradient dx
 * and uses the layer's own output gradient as its carry (overwritten). */
FS_DEVICE void rnn_forward(FsModel *m, const FsLayer *y, const float *x, int B);
FS_DEVICE void rnn_backward(FsModel *m, const FsLayer *y, const float *x, float *dx, int B);
/* A chain model's self-attention (attention.c), layer li (its dropout
 * masks' stream): backward writes the input's gradient dx. */
FS_DEVICE void attention_forward(FsModel *m, const FsLayer *y, long li, const float *x, int B, int train);
FS_DEVICE void attention_backward(FsModel *m, const FsLayer *y, long li, const float *x, float *dx, int B);

#endif
