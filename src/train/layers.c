/*
 * layers: forward and backward of each layer kind over a batch (single
 * source): the dispatch. Shapes and offsets come from the compiled net
 * (model.h); the gather and convolution are in conv.c, dense in dense.c,
 * batch norm, layer norm, dropout and highway in blocks.c, the GRU and LSTM in rnn.c, attention in attention.c.
 */
#include "train/act.h"
#include "train/layers.h"

/* ---------------------------------------------------------------------- */
/* A conv1d layer's passes around its GEMMs: what layer_forward and
 * layer_backward run between them, and what the GPU library tier (#44,
 * kernels/dnn.h) runs as its own kernels while the libraries run the GEMMs
 * over a group of models (step_forward_part, step_backward_part). Forward:
 * part 0 sets the bias, the GEMM adds the convolution, part 1 applies the
 * activation. Backward: part 0 takes the activation's derivative and the
 * bias gradient, the weight-gradient GEMM follows, part 1 zeroes the
 * input's gradient, the input-gradient GEMM adds to it. */

FS_DEVICE void conv_forward_part(FsModel *m, int i, int B, int part)
{
    FsLayer tmp;
    const FsLayer *y = layer_view(m, i, &tmp);
    float *out = m->work + y->a;
    if (part == 0)
        rows_set(out, m->w + y->b, B, y->out_l, y->out_pad, y->out_c);
    else
        act_forward(y->spec.act, y->spec.act_param, out, m->work + y->z, B, y->out_l, y->out_pad, y->out_c);
}

FS_DEVICE void conv_backward_part(FsModel *m, int i, int B, int part)
{
    FsLayer tmp;
    const FsLayer *y = layer_view(m, i, &tmp);
    float *d = m->work + y->d;
    if (part == 0) {
        act_backward(y->spec.act, y->spec.act_param, m->work + y->a, m->work + y->z, d, B, y->out_l, y->out_pad,
                     y->out_c);
        rows_colsum(m->g + y->b, d, B, y->out_l, y->out_pad, y->out_c);
    } else {
        /* Layer i-1's output gradient (a gather, layer 0, has no part 1). */
        rows_set(m->work + m->net->layer[i - 1].d, 0, B, y->in_l, y->in_pad, y->in_c);
    }
}

/* ---------------------------------------------------------------------- */
/* Dispatch.                                                               */

FS_DEVICE FS_NOINLINE void layer_forward(FsModel *m, int i, int B, int train)
{
    FsLayer tmp;
    const FsLayer *y = layer_view(m, i, &tmp);
    float *out = m->work + y->a;
    const float *x = i > 0 ? m->work + m->net->layer[i - 1].a : 0;
    /* As its op: a chain model's dense layers run as width-1 convolutions. */
    switch (y->op) {
    case FS_LAYER_CONV:
        if (y->gather) {
            gather_forward(y, m->w, m->codes, out, B);
            conv_forward_part(m, i, B, 1);
        } else {
            conv_forward_part(m, i, B, 0);
            conv_gemm_act(y, m->w + y->w, x, out, m->work + y->z, B);
        }
        break;
    case FS_LAYER_DENSE:
    case FS_LAYER_OUTPUT:
        if (y->gather) {
            gather_forward(y, m->w, m->codes, out, B);
            act_forward(y->spec.act, y->spec.act_param, out, m->work + y->z, B, 1, 0, y->out_c);
        } else {
            dense_forward(y, m->w, x, out, m->work + y->z, B);
        }
        break;
    case FS_LAYER_BATCHNORM:
        batchnorm_forward(m, y, x, B, train);
        break;
    case FS_LAYER_LAYERNORM:
        layernorm_forward(m, y, x, B);
        break;
    case FS_LAYER_DROPOUT:
        dropout_forward(m, y, i, x, B, train);
        break;
    case FS_LAYER_HIGHWAY:
        highway_forward(m, y, x, B);
        break;
    case FS_LAYER_ADD:
        add_forward(m, y, x, B);
        break;
    case FS_LAYER_GRU:
    case FS_LAYER_LSTM:
        rnn_forward(m, y, x, B);
        break;
#ifndef FS_NO_ATTENTION /* (the block tier's kernel, kernels/fit_kernel.cu) */
    case FS_LAYER_ATTENTION:
        attention_forward(m, y, i, x, B, train);
        break;
#endif
    default:
        break;
    }
}

FS_DEVICE FS_NOINLINE int layer_backward(FsModel *m, int i, int B, const FsOptStep *fuse)
{
    FsLayer tmp;
    const FsLayer *y = layer_view(m, i, &tmp);
    float *d = m->work + y->d;
    const float *x = i > 0 ? m->work + m->net->layer[i - 1].a : 0;
    float *dx = i > 0 ? m->work + m->net->layer[i - 1].d : 0;
    switch (y->op) {
    case FS_LAYER_CONV:
        conv_backward_part(m, i, B, 0);
        if (y->gather) {
            gather_backward(y, m->g, m->codes, d, B);
        } else {
            conv_wgrad(y, m->g + y->w, x, d, B, y->out_c);
            conv_backward_part(m, i, B, 1);
            conv_dgrad(y, m->w + y->w, m->scratch, d, dx, B, y->out_c);
        }
        break;
    case FS_LAYER_DENSE:
    case FS_LAYER_OUTPUT:
        act_backward(y->spec.act, y->spec.act_param, m->work + y->a, m->work + y->z, d, B, 1, 0, y->out_c);
        if (y->gather) {
            rows_colsum(m->g + y->b, d, B, 1, 0, y->out_c);
            gather_backward(y, m->g, m->codes, d, B);
        } else if (fuse) {
            return dense_backward_fused(y, m->w, m->g, m->m1, m->m2, m->scratch, x, d, dx, B, fuse);
        } else {
            dense_backward(y, m->w, m->g, m->scratch, x, d, dx, B);
        }
        break;
    case FS_LAYER_BATCHNORM:
        batchnorm_backward(m, y, dx, B);
        break;
    case FS_LAYER_LAYERNORM:
        layernorm_backward(m, y, dx, B);
        break;
    case FS_LAYER_DROPOUT:
        dropout_backward(m, y, dx, B);
        break;
    case FS_LAYER_HIGHWAY:
        highway_backward(m, y, x, dx, B);
        break;
    case FS_LAYER_ADD:
        add_backward(m, y, dx, B);
        break;
    case FS_LAYER_GRU:
    case FS_LAYER_LSTM:
        rnn_backward(m, y, x, dx, B);
        break;
#ifndef FS_NO_ATTENTION
    case FS_LAYER_ATTENTION:
        attention_backward(m, y, i, x, dx, B);
        break;
#endif
    default:
        break;
    }
    return 0;
}

/* Nothing is left to do after a layer's own pass in layer_forward and
 * layer_backward: on the GPU a value they kept across their GEMMs would
 * hold a register down the deepest chain of calls (device.h). What follows
 * a layer runs here, called by the step with its state in memory. */
FS_DEVICE FS_NOINLINE void layer_forward_done(FsModel *m, int i)
{
    if (m->net->chain) chain_mask_rows(m, m->work + m->net->layer[i].a, m->net->layer[i].out_c);
}

FS_DEVICE FS_NOINLINE void layer_backward_done(FsModel *m, int i, int B)
{
    /* The first layer's feature weights: their gradient from its output's. */
    if (i == 0 && m->net->layer[0].feat) {
        FsLayer tmp;
        const FsLayer *y = layer_view(m, 0, &tmp);
        input_features(m, y, NULL, m->work + y->d, B);
    }
    if (i == 0) return;
    const FsLayer *x = &m->net->layer[i - 1];
    if (m->net->chain) chain_mask_rows(m, m->work + x->d, x->out_c);
    /* Layer i wrote layer i-1's output gradient: the skip paths of the
     * residual blocks that start there add theirs. */
    add_skips(m, i - 1, B);
}

/* ---------------------------------------------------------------------- */
/* A chain batch's pad rows.                                               */

FS_DEVICE FS_NOINLINE void chain_mask_rows(const FsModel *m, float *x, int C)
{
    const int T = m->rows, P = m->net->pad;
    const uint8_t *codes = m->codes;
    FS_PARFOR(r, (long)T + P)
    {
        if (r >= T || codes[r] == FS_AA_PAD) {
            float *row = x + ((long)P + r) * C;
            for (int c = 0; c < C; c++) row[c] = 0.0f;
        }
    }
    FS_SYNC();
}
