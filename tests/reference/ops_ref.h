/*
 * ops_ref: every op of the trainer as plain loops (ops_ref.c), the
 * definition that the fast forms (GEMM tiles, vector loops, the fused dense
 * update, the emulated block, the GPU kernel) are checked against by
 * tests/test_ops.c. Inputs are the floats the trainer stores, in its
 * layouts; results are doubles, summed in the obvious order.
 */
#ifndef FS_TESTS_OPS_REF_H
#define FS_TESTS_OPS_REF_H

#include <stdint.h>

#include "train/core.h"

/* A padded activation tensor [B][L + 2P][C] (model.h): P zero rows on both
 * sides of each example; element (b, p, c) for interior positions p < L. */
typedef struct {
    int B, L, P, C;
} RefShape;

static inline long ref_at(RefShape s, int b, int p, int c)
{
    return ((long)b * (s.L + 2 * s.P) + s.P + p) * s.C + c;
}

static inline long ref_size(RefShape s)
{
    return (long)s.B * (s.L + 2 * s.P) * s.C;
}

/* One-hot input: x (shape s, C = FS_AA_INPUTS, zeroed by the caller) gets a
 * 1 at (b, q, codes[b * L + q]); the padding code is all zeros. */
void ref_onehot(const uint8_t *codes, RefShape s, float *x);

/* "Same" convolution, stride 1, K odd, weights W[(k * Cin + c) * F + f]:
 * z(b, p, f) = bias[f] + sum_k sum_c x(b, p + k - K/2, c) W[k, c, f].
 * z has x's B, L and its own P, C = F; only interior rows are written. */
void ref_conv_forward(const float *x, RefShape xs, const float *W, const float *bias, int K, RefShape zs,
                      double *z);
/* gW[k, c, f] += sum over (b, p) of x(b, p + k - K/2, c) dz(b, p, f);
 * gb[f] += sum over (b, p) of dz(b, p, f). */
void ref_conv_wgrad(const float *x, RefShape xs, const double *dz, RefShape ds, int K, double *gW, double *gb);
/* dx(b, q, c) = sum_k sum_f W[k, c, f] dz(b, q - k + K/2, f) (written). */
void ref_conv_dgrad(const float *W, int K, const double *dz, RefShape ds, RefShape xs, double *dx);

/* Dense over the flattened interior (L, C) of x, W[(q * C + c) * U + u]:
 * z[b * U + u] = bias[u] + sum_j x_b[j] W[j, u]. */
void ref_dense_forward(const float *x, RefShape xs, const float *W, const float *bias, int U, double *z);
/* gW[j, u] += sum_b x_b[j] dz[b, u]; gb[u] += sum_b dz[b, u];
 * dx_b[j] = sum_u W[j, u] dz[b, u] (written; dx may be NULL). */
void ref_dense_backward(const float *x, RefShape xs, const float *W, const double *dz, int U, double *gW,
                        double *gb, double *dx);

/* Activations of z; param is the leaky slope or the elu alpha. */
double ref_sigmoid(double z);
double ref_act(FsAct act, double param, double z);
/* act'(z) written through the output a = act(z) (and s = sigmoid(z) for
 * swish), the only values the trainer keeps. */
double ref_act_grad(FsAct act, double param, double a, double s);

/* Batch norm over the B * L rows, per channel. Training: batch mean and
 * biased variance, running statistics r = mom * r + (1 - mom) * batch;
 * otherwise the running statistics. out = gamma * xhat + beta with
 * xhat = (x - mean) / sqrt(var + eps). rmean / rvar are updated in place. */
void ref_batchnorm_forward(const float *x, RefShape s, const float *gamma, const float *beta, double *rmean,
                           double *rvar, float eps, float mom, int train, double *out, double *xhat, double *mean,
                           double *istd);
/* From the stored xhat and istd: dx = gamma istd (d - mean(d) - xhat mean(d xhat)),
 * ggamma += sum d xhat, gbeta += sum d. */
void ref_batchnorm_backward(const float *d, const float *xhat, const float *istd, const float *gamma, RefShape s,
                            double *dx, double *ggamma, double *gbeta);

/* Layer norm over each row's C channels: xhat = (x - mean) / sqrt(var +
 * eps) with the row's mean and biased variance, out = gamma * xhat + beta;
 * istd per row (B * L). */
void ref_layernorm_forward(const float *x, RefShape s, const float *gamma, const float *beta, float eps, double *out,
                           double *xhat, double *istd);
/* From the stored xhat and istd, with g = d gamma per channel:
 * dx = istd (g - mean(g) - xhat mean(g xhat)) over the row's channels,
 * ggamma += sum over rows of d xhat, gbeta += sum of d. */
void ref_layernorm_backward(const float *d, const float *xhat, const float *istd, const float *gamma, RefShape s,
                            double *dx, double *ggamma, double *gbeta);

/* Dropout's multiplier for element e = (b * L + p) * C + c of layer `layer`
 * at optimizer step `step`: 1 / (1 - rate) when a hash of (key, step,
 * layer, e) mapped to [0, 1) is at least rate, else 0 (1 when not
 * training or rate is 0). Exact: the trainer's floats. */
float ref_dropout_mask(uint64_t key, long step, long layer, long e, float rate, int train);

/* Highway: H = act(b + conv_W(x)), T = sigmoid(b2 + conv_W2(x)),
 * out = T H + (1 - T) x; both convolutions keep C channels. */
void ref_highway_forward(const float *x, RefShape s, const float *W, const float *b, const float *W2,
                         const float *b2, int K, FsAct act, float param, double *out, double *H, double *T,
                         double *S);
/* From the stored H, T (and S = sigmoid of H's input for swish):
 * dH = d T act'(H), dT = d (H - x) T (1 - T), dx = d (1 - T) + conv_W^T(dH)
 * + conv_W2^T(dT), and the four parameter gradients (+=). */
void ref_highway_backward(const float *x, const float *H, const float *T, const float *S, const float *d,
                          RefShape s, const float *W, const float *W2, int K, FsAct act, float param, double *dx,
                          double *gW, double *gb, double *gW2, double *gb2);

/* Softmax cross-entropy of B rows of FS_CLASSES logits: per-example loss
 * log sum_k e^z_k - z_label, d(mean loss)/dz, the first arg max. */
void ref_softmax_xent(const float *z, const uint8_t *labels, int B, double *loss, double *dz, int *pred);

/* The global gradient norm, and the clipping scale it gives. */
double ref_grad_norm(const float *g, long n);
double ref_clip_scale(double norm, float clip);
/* One optimizer step t (1-based) on n parameters with gradient g * scale,
 * in PyTorch's textbook form: SGD with momentum and L2; Adam with L2 and
 * bias-corrected moments; AdamW with decoupled weight decay. */
void ref_optimizer(const FsTrainSpec *ts, long t, double scale, long n, const float *w, const float *m1,
                   const float *m2, const double *g, double *w_out, double *m1_out, double *m2_out);

/* The window of residue r: codes[q] = aa[r + q - L/2], or the padding code
 * where that leaves r's segment (left / right: residues to its edges);
 * the label is the class bits of ss[r]. */
void ref_load_window(const uint8_t *aa, const uint8_t *ss, const uint8_t *left, const uint8_t *right, uint32_t r,
                     int L, uint8_t *codes, uint8_t *label);

/* ops_gemm's contract (core.h): C(i, n) += sum_k A(i, k) B(k, n) with
 * A(i, k) = A[off(am, i) + off(ak, k)], B(k, n) = B[off(bk, k) + n],
 * C(i, n) = C[off(cm, i) + n cn]; C here is a double copy. */
long ref_stride_off(FsStride st, long i);
void ref_gemm(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B, FsStride bk,
              double *C, FsStride cm, long cn);

/* A GRU or an LSTM layer y (weights in w, foldsweep's layout: model.h)
 * over one chain x [len][in_c] into out [len][out_c] (ref_gru.c,
 * ref_lstm.c). */
void ref_gru_forward(const float *w, const FsLayer *y, const double *x, int len, double *out);
void ref_lstm_forward(const float *w, const FsLayer *y, const double *x, int len, double *out);
/* An attention layer y over one chain (ref_attention.c), as the GRU's. */
void ref_attention_forward(const float *w, const FsLayer *y, const double *x, int len, double *out);

#endif
