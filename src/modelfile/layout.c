/*
 * layout: where each of foldsweep's weight blocks goes in the PyTorch
 * state dict (docs/models.md), shared by the writer and the reader so the
 * two can never disagree. The nn.Sequential index advances for every
 * module, parameters or not (Flatten, Unflatten, activations, dropout).
 */
#include <stdio.h>
#include <string.h>

#include "modelfile/layout.h"

/* A recurrent layer's tensors as foldsweep_torch.GRU's nn.GRU(C, U,
 * batch_first=True, bidirectional) or foldsweep_torch.LSTM's nn.LSTM names
 * them (layer `layer`, module idx, its .rnn), per direction: 4 each, the
 * gates in PyTorch's order (FS_RNN_GATES). */
static int rnn_entries(const FsLayer *y, int layer, int idx, LayoutEntry *e, int *n, int max_entries)
{
    const long U = y->spec.units, G = FS_RNN_GATES(y->spec.kind) * U;
    for (int dir = 0; dir <= y->spec.bidir; dir++) {
        const struct {
            const char *name;
            LayoutKind kind;
            long off, rows, cols, ld;
        } t[4] = {{"weight_ih_l0", LAYOUT_TRANSPOSE, y->w + dir * G, G, y->in_c, G * (1 + y->spec.bidir)},
                  {"weight_hh_l0", LAYOUT_TRANSPOSE, y->w2 + dir * G * U, G, U, G},
                  {"bias_ih_l0", LAYOUT_VECTOR, y->b + dir * G, G, 0, 0},
                  {"bias_hh_l0", LAYOUT_VECTOR, y->b2 + dir * G, G, 0, 0}};
        for (int k = 0; k < 4; k++) {
            if (*n >= max_entries) return -1;
            LayoutEntry *x = &e[(*n)++];
            memset(x, 0, sizeof *x);
            snprintf(x->name, sizeof x->name, "%d.rnn.%s%s", idx, t[k].name, dir ? "_reverse" : "");
            x->kind = t[k].kind;
            x->layer = layer;
            x->off = t[k].off;
            x->ndim = t[k].kind == LAYOUT_VECTOR ? 1 : 2;
            x->shape[0] = t[k].rows, x->shape[1] = t[k].cols;
            x->ld = t[k].ld;
        }
    }
    return 0;
}

/* An attention layer's tensors as foldsweep_torch.Attention names them
 * (module idx): nn.Linear q, k, v and out, nn.LayerNorm norm and
 * nn.Embedding rel (the position biases, [buckets][heads] as foldsweep
 * keeps them). */
static int attention_entries(const FsLayer *y, int layer, int idx, LayoutEntry *e, int *n, int max_entries)
{
    const long C = y->in_c, hd = (long)y->spec.heads * y->spec.key_dim;
    const struct {
        const char *name;
        LayoutKind kind;
        long off, rows, cols, ld;
    } t[11] = {{"q.weight", LAYOUT_TRANSPOSE, y->w, hd, C, 3 * hd},
               {"q.bias", LAYOUT_VECTOR, y->b, hd, 0, 0},
               {"k.weight", LAYOUT_TRANSPOSE, y->w + hd, hd, C, 3 * hd},
               {"k.bias", LAYOUT_VECTOR, y->b + hd, hd, 0, 0},
               {"v.weight", LAYOUT_TRANSPOSE, y->w + 2 * hd, hd, C, 3 * hd},
               {"v.bias", LAYOUT_VECTOR, y->b + 2 * hd, hd, 0, 0},
               {"out.weight", LAYOUT_TRANSPOSE, y->w2, C, hd, C},
               {"out.bias", LAYOUT_VECTOR, y->b2, C, 0, 0},
               {"norm.weight", LAYOUT_VECTOR, y->att_gamma, C, 0, 0},
               {"norm.bias", LAYOUT_VECTOR, y->att_beta, C, 0, 0},
               {"rel.weight", LAYOUT_VECTOR, y->att_rel, FS_ATT_BUCKETS(&y->spec), y->spec.heads, 0}};
    for (int k = 0; k < 11; k++) {
        if (*n >= max_entries) return -1;
        LayoutEntry *x = &e[(*n)++];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%d.%s", idx, t[k].name);
        x->kind = t[k].kind;
        x->layer = layer;
        x->off = t[k].off;
        x->ndim = t[k].cols ? 2 : 1;
        x->shape[0] = t[k].rows, x->shape[1] = t[k].cols;
        x->ld = t[k].ld;
    }
    return 0;
}

/* Whether layer i's input is a 2-D [batch, features] tensor in PyTorch:
 * it is after a dense layer, until a convolution unflattens it. */
int layout_plan(const FsNet *net, LayoutEntry *e, int max_entries)
{
    int n = 0, idx = 0, flat = 0;
#define ADD(fmt_, arg_, kind_, off_, nd_, s0_, s1_, s2_)                          \
    do {                                                                          \
        if (n >= max_entries) return -1;                                          \
        LayoutEntry *x = &e[n++];                                                 \
        memset(x, 0, sizeof *x);                                                  \
        snprintf(x->name, sizeof x->name, fmt_, arg_);                            \
        x->kind = kind_;                                                          \
        x->layer = i;                                                             \
        x->off = off_;                                                            \
        x->ndim = nd_;                                                            \
        x->shape[0] = s0_, x->shape[1] = s1_, x->shape[2] = s2_;                  \
    } while (0)
    for (int i = 0; i < net->n; i++) {
        const FsLayer *y = &net->layer[i];
        const FsLayerSpec *s = &y->spec;
        const long C = y->in_c, L = y->in_l, F = y->out_c, K = s->width;
        switch (s->kind) {
        case FS_LAYER_CONV:
            if (flat) idx++; /* Unflatten(1, (C, 1)) */
            ADD("%d.weight", idx, LAYOUT_CONV, y->w, 3, F, C, K);
            ADD("%d.bias", idx, LAYOUT_VECTOR, y->b, 1, F, 0, 0);
            idx += 1 + (s->act != FS_ACT_LINEAR);
            flat = 0;
            break;
        case FS_LAYER_HIGHWAY:
            if (flat) idx++;
            ADD("%d.h.weight", idx, LAYOUT_CONV, y->w, 3, F, C, K);
            ADD("%d.h.bias", idx, LAYOUT_VECTOR, y->b, 1, F, 0, 0);
            ADD("%d.t.weight", idx, LAYOUT_CONV, y->w2, 3, F, C, K);
            ADD("%d.t.bias", idx, LAYOUT_VECTOR, y->b2, 1, F, 0, 0);
            idx++;
            flat = 0;
            break;
        case FS_LAYER_DENSE:
        case FS_LAYER_OUTPUT:
            if (y->per_residue) { /* a chain model's: Conv1d(C, F, 1) on every residue */
                ADD("%d.weight", idx, LAYOUT_CONV, y->w, 3, F, C, 1);
                ADD("%d.bias", idx, LAYOUT_VECTOR, y->b, 1, F, 0, 0);
                idx += 1 + (s->act != FS_ACT_LINEAR);
                break;
            }
            if (!flat) idx++; /* Flatten() */
            ADD("%d.weight", idx, LAYOUT_DENSE, y->w, 2, F, C * L, 0);
            ADD("%d.bias", idx, LAYOUT_VECTOR, y->b, 1, F, 0, 0);
            idx += 1 + (s->act != FS_ACT_LINEAR);
            flat = 1;
            break;
        case FS_LAYER_BATCHNORM:
            ADD("%d.weight", idx, LAYOUT_VECTOR, y->w, 1, F, 0, 0);
            ADD("%d.bias", idx, LAYOUT_VECTOR, y->b, 1, F, 0, 0);
            ADD("%d.running_mean", idx, LAYOUT_VECTOR, y->s_mean, 1, F, 0, 0);
            ADD("%d.running_var", idx, LAYOUT_VECTOR, y->s_var, 1, F, 0, 0);
            idx++;
            break;
        case FS_LAYER_LAYERNORM: /* LayerNorm over each position's channels (foldsweep_torch.py) */
            ADD("%d.weight", idx, LAYOUT_VECTOR, y->w, 1, F, 0, 0);
            ADD("%d.bias", idx, LAYOUT_VECTOR, y->b, 1, F, 0, 0);
            idx++;
            break;
        case FS_LAYER_DROPOUT:
            idx++;
            break;
        case FS_LAYER_GRU:
        case FS_LAYER_LSTM:
            if (rnn_entries(y, i, idx++, e, &n, max_entries) != 0) return -1;
            break;
        case FS_LAYER_ATTENTION:
            if (attention_entries(y, i, idx++, e, &n, max_entries) != 0) return -1;
            break;
        case FS_LAYER_ADD: /* Residual(from, projection): Conv1d(C_src, C, 1, bias=False) where widths differ */
            if (y->w >= 0) ADD("%d.proj.weight", idx, LAYOUT_CONV, y->w, 3, F, y->n_w / F, 1);
            idx++;
            break;
        }
    }
#undef ADD
    return n;
}

long layout_numel(const LayoutEntry *e)
{
    long k = 1;
    for (int d = 0; d < e->ndim; d++) k *= (long)e->shape[d];
    return k;
}

/* PyTorch element t of the entry <-> foldsweep float w[e->off + f]. */
static long fs_index(const FsNet *net, const LayoutEntry *e, long t)
{
    const FsLayer *y = &net->layer[e->layer];
    /* The first layer's input channels are the one-hot codes' (weights w)
     * then the feature columns' (weights wf, offsets here relative to w). */
    const int first = e->off == y->w && y->feat > 0;
    const long C1 = first ? y->in_c - y->feat : 0;
    if (e->kind == LAYOUT_CONV) { /* pt[f][c][k] = W[k*C + c][f] */
        long F = (long)e->shape[0], C = (long)e->shape[1], K = (long)e->shape[2];
        long f = t / (C * K), c = t / K % C, k = t % K;
        if (first) return c < C1 ? (k * C1 + c) * F + f : y->wf - y->w + (k * y->feat + c - C1) * F + f;
        return (k * C + c) * F + f;
    }
    if (e->kind == LAYOUT_DENSE) { /* pt[u][c*L + q] = W[q*C + c][u] */
        long U = (long)e->shape[0], C = y->in_c, L = y->in_l;
        long u = t / (C * L), c = t % (C * L) / L, q = t % L;
        if (first) return c < C1 ? (q * C1 + c) * U + u : y->wf - y->w + (q * y->feat + c - C1) * U + u;
        return (q * C + c) * U + u;
    }
    if (e->kind == LAYOUT_TRANSPOSE) return t % e->shape[1] * e->ld + t / e->shape[1];
    return t;
}

void layout_to_torch(const FsNet *net, const LayoutEntry *e, const float *w, float *out)
{
    long n = layout_numel(e);
    for (long t = 0; t < n; t++) out[t] = w[e->off + fs_index(net, e, t)];
}

void layout_from_torch(const FsNet *net, const LayoutEntry *e, const float *in, float *w)
{
    long n = layout_numel(e);
    for (long t = 0; t < n; t++) w[e->off + fs_index(net, e, t)] = in[t];
}
