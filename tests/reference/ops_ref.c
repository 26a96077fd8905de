/*
 * ops_ref: the trainer's ops written as the arithmetic they stand for, to
 * be read top to bottom and trusted (declarations and the meaning of every
 * argument in ops_ref.h). No tiling, no vectors, no workspace tricks: one
 * loop per index, sums in double. tests/test_ops.c runs each op of the
 * trainer on the CPU, under the emulated block and on the GPU and compares
 * with these.
 *
 * Layouts are the trainer's (model.h): activations [B][L + 2P][C] with zero
 * pad rows, convolution weights [K][Cin][F], dense weights [L * C][U].
 */
#include "ops_ref.h"

#include <math.h>
#include <stdlib.h>

#include "data/data.h"

/* ---------------------------------------------------------------------- */
/* The first layer's input: one-hot residue codes.                          */

void ref_onehot(const uint8_t *codes, RefShape s, float *x)
{
    for (int b = 0; b < s.B; b++)
        for (int q = 0; q < s.L; q++) {
            int code = codes[b * s.L + q];
            if (code < FS_AA_INPUTS) x[ref_at(s, b, q, code)] = 1.0f;
        }
}

/* ---------------------------------------------------------------------- */
/* Convolution ("same", stride 1). Positions outside [0, L) read zero.      */

void ref_conv_forward(const float *x, RefShape xs, const float *W, const float *bias, int K, RefShape zs,
                      double *z)
{
    const int h = K / 2, Cin = xs.C, F = zs.C;
    for (int b = 0; b < xs.B; b++)
        for (int p = 0; p < xs.L; p++)
            for (int f = 0; f < F; f++) {
                double sum = bias[f];
                for (int k = 0; k < K; k++) {
                    int q = p + k - h;
                    if (q < 0 || q >= xs.L) continue;
                    for (int c = 0; c < Cin; c++) sum += (double)x[ref_at(xs, b, q, c)] * W[(k * Cin + c) * F + f];
                }
                z[ref_at(zs, b, p, f)] = sum;
            }
}

void ref_conv_wgrad(const float *x, RefShape xs, const double *dz, RefShape ds, int K, double *gW, double *gb)
{
    const int h = K / 2, Cin = xs.C, F = ds.C;
    for (int f = 0; f < F; f++) {
        double sum = 0.0;
        for (int b = 0; b < ds.B; b++)
            for (int p = 0; p < ds.L; p++) sum += dz[ref_at(ds, b, p, f)];
        gb[f] += sum;
    }
    for (int k = 0; k < K; k++)
        for (int c = 0; c < Cin; c++)
            for (int f = 0; f < F; f++) {
                double sum = 0.0;
                for (int b = 0; b < ds.B; b++)
                    for (int p = 0; p < ds.L; p++) {
                        int q = p + k - h;
                        if (q < 0 || q >= xs.L) continue;
                        sum += (double)x[ref_at(xs, b, q, c)] * dz[ref_at(ds, b, p, f)];
                    }
                gW[(k * Cin + c) * F + f] += sum;
            }
}

void ref_conv_dgrad(const float *W, int K, const double *dz, RefShape ds, RefShape xs, double *dx)
{
    const int h = K / 2, Cin = xs.C, F = ds.C;
    for (int b = 0; b < xs.B; b++)
        for (int q = 0; q < xs.L; q++)
            for (int c = 0; c < Cin; c++) {
                double sum = 0.0;
                for (int k = 0; k < K; k++) {
                    int p = q - k + h; /* the output position that read x(q) through tap k */
                    if (p < 0 || p >= ds.L) continue;
                    for (int f = 0; f < F; f++) sum += (double)W[(k * Cin + c) * F + f] * dz[ref_at(ds, b, p, f)];
                }
                dx[ref_at(xs, b, q, c)] = sum;
            }
}

/* ---------------------------------------------------------------------- */
/* Dense: the interior rows of one example are one vector of L * C.        */

static double flat(const float *x, RefShape xs, int b, int j)
{
    return x[ref_at(xs, b, j / xs.C, j % xs.C)];
}

void ref_dense_forward(const float *x, RefShape xs, const float *W, const float *bias, int U, double *z)
{
    const int J = xs.L * xs.C;
    for (int b = 0; b < xs.B; b++)
        for (int u = 0; u < U; u++) {
            double sum = bias[u];
            for (int j = 0; j < J; j++) sum += flat(x, xs, b, j) * W[(long)j * U + u];
            z[b * U + u] = sum;
        }
}

void ref_dense_backward(const float *x, RefShape xs, const float *W, const double *dz, int U, double *gW,
                        double *gb, double *dx)
{
    const int J = xs.L * xs.C;
    for (int u = 0; u < U; u++) {
        double sum = 0.0;
        for (int b = 0; b < xs.B; b++) sum += dz[b * U + u];
        gb[u] += sum;
    }
    for (int j = 0; j < J; j++)
        for (int u = 0; u < U; u++) {
            double sum = 0.0;
            for (int b = 0; b < xs.B; b++) sum += flat(x, xs, b, j) * dz[b * U + u];
            gW[(long)j * U + u] += sum;
        }
    if (!dx) return;
    for (int b = 0; b < xs.B; b++)
        for (int j = 0; j < J; j++) {
            double sum = 0.0;
            for (int u = 0; u < U; u++) sum += (double)W[(long)j * U + u] * dz[b * U + u];
            dx[ref_at(xs, b, j / xs.C, j % xs.C)] = sum;
        }
}

/* ---------------------------------------------------------------------- */
/* Activations.                                                             */

double ref_sigmoid(double z)
{
    return 1.0 / (1.0 + exp(-z));
}

double ref_act(FsAct act, double param, double z)
{
    switch (act) {
    case FS_ACT_RELU:
        return z > 0.0 ? z : 0.0;
    case FS_ACT_LEAKY_RELU:
        return z > 0.0 ? z : param * z;
    case FS_ACT_SWISH:
        return z * ref_sigmoid(z);
    case FS_ACT_TANH:
        return tanh(z);
    case FS_ACT_ELU:
        return z > 0.0 ? z : param * (exp(z) - 1.0);
    default:
        return z;
    }
}

/* relu and elu are increasing, so a > 0 exactly where z > 0; swish' =
 * s + z s (1 - s) = s + a (1 - s); tanh' = 1 - a^2; elu' = alpha e^z = a + alpha. */
double ref_act_grad(FsAct act, double param, double a, double s)
{
    switch (act) {
    case FS_ACT_RELU:
        return a > 0.0 ? 1.0 : 0.0;
    case FS_ACT_LEAKY_RELU:
        return a > 0.0 ? 1.0 : param;
    case FS_ACT_SWISH:
        return s + a * (1.0 - s);
    case FS_ACT_TANH:
        return 1.0 - a * a;
    case FS_ACT_ELU:
        return a > 0.0 ? 1.0 : a + param;
    default:
        return 1.0;
    }
}

/* ---------------------------------------------------------------------- */
/* Batch norm: per channel over every interior row of the batch.           */

void ref_batchnorm_forward(const float *x, RefShape s, const float *gamma, const float *beta, double *rmean,
                           double *rvar, float eps, float mom, int train, double *out, double *xhat, double *mean,
                           double *istd)
{
    const double N = (double)s.B * s.L;
    for (int c = 0; c < s.C; c++) {
        double mu = rmean[c], var = rvar[c];
        if (train) {
            double sum = 0.0, sq = 0.0;
            for (int b = 0; b < s.B; b++)
                for (int p = 0; p < s.L; p++) sum += x[ref_at(s, b, p, c)];
            mu = sum / N;
            for (int b = 0; b < s.B; b++)
                for (int p = 0; p < s.L; p++) sq += (x[ref_at(s, b, p, c)] - mu) * (x[ref_at(s, b, p, c)] - mu);
            var = sq / N; /* biased, as Keras keeps it in the running variance too */
            rmean[c] = mom * rmean[c] + (1.0 - mom) * mu;
            rvar[c] = mom * rvar[c] + (1.0 - mom) * var;
        }
        mean[c] = mu;
        istd[c] = 1.0 / sqrt(var + eps);
        for (int b = 0; b < s.B; b++)
            for (int p = 0; p < s.L; p++) {
                long o = ref_at(s, b, p, c);
                xhat[o] = (x[o] - mu) * istd[c];
                out[o] = gamma[c] * xhat[o] + beta[c];
            }
    }
}

void ref_batchnorm_backward(const float *d, const float *xhat, const float *istd, const float *gamma, RefShape s,
                            double *dx, double *ggamma, double *gbeta)
{
    const double N = (double)s.B * s.L;
    for (int c = 0; c < s.C; c++) {
        double sd = 0.0, sdx = 0.0;
        for (int b = 0; b < s.B; b++)
            for (int p = 0; p < s.L; p++) {
                long o = ref_at(s, b, p, c);
                sd += d[o];
                sdx += (double)d[o] * xhat[o];
            }
        ggamma[c] += sdx;
        gbeta[c] += sd;
        for (int b = 0; b < s.B; b++)
            for (int p = 0; p < s.L; p++) {
                long o = ref_at(s, b, p, c);
                dx[o] = (double)gamma[c] * istd[c] * (d[o] - sd / N - xhat[o] * (sdx / N));
            }
    }
}

/* ---------------------------------------------------------------------- */
/* Layer norm: per row (example and position) over its channels.           */

void ref_layernorm_forward(const float *x, RefShape s, const float *gamma, const float *beta, float eps, double *out,
                           double *xhat, double *istd)
{
    for (int b = 0; b < s.B; b++)
        for (int p = 0; p < s.L; p++) {
            const long r = (long)b * s.L + p;
            double sum = 0.0, sq = 0.0;
            for (int c = 0; c < s.C; c++) sum += x[ref_at(s, b, p, c)];
            const double mu = sum / s.C;
            for (int c = 0; c < s.C; c++) sq += (x[ref_at(s, b, p, c)] - mu) * (x[ref_at(s, b, p, c)] - mu);
            istd[r] = 1.0 / sqrt(sq / s.C + eps);
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, b, p, c);
                xhat[o] = (x[o] - mu) * istd[r];
                out[o] = gamma[c] * xhat[o] + beta[c];
            }
        }
}

void ref_layernorm_backward(const float *d, const float *xhat, const float *istd, const float *gamma, RefShape s,
                            double *dx, double *ggamma, double *gbeta)
{
    for (int b = 0; b < s.B; b++)
        for (int p = 0; p < s.L; p++) {
            const long r = (long)b * s.L + p;
            double sg = 0.0, sgx = 0.0;
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, b, p, c);
                double g = (double)d[o] * gamma[c];
                sg += g;
                sgx += g * xhat[o];
                ggamma[c] += (double)d[o] * xhat[o];
                gbeta[c] += d[o];
            }
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, b, p, c);
                dx[o] = istd[r] * ((double)d[o] * gamma[c] - sg / s.C - xhat[o] * (sgx / s.C));
            }
        }
}

/* ---------------------------------------------------------------------- */
/* Dropout: splitmix64's finaliser over the mixed key, top 24 bits.        */

float ref_dropout_mask(uint64_t key, long step, long layer, long e, float rate, int train)
{
    if (!train || rate <= 0.0f) return 1.0f;
    uint64_t z = key ^ ((uint64_t)step * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)layer << 56) ^
                 ((uint64_t)e * 0xd1b54a32d192ed03ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    float u = (float)(z >> 40) / 16777216.0f; /* exact: 24 bits over 2^24 */
    return u >= rate ? 1.0f / (1.0f - rate) : 0.0f;
}

/* ---------------------------------------------------------------------- */
/* Highway (Srivastava et al. 2015).                                        */

void ref_highway_forward(const float *x, RefShape s, const float *W, const float *b, const float *W2,
                         const float *b2, int K, FsAct act, float param, double *out, double *H, double *T,
                         double *S)
{
    ref_conv_forward(x, s, W, b, K, s, H);  /* H's input, made H below */
    ref_conv_forward(x, s, W2, b2, K, s, T); /* T's input, made T below */
    for (int bb = 0; bb < s.B; bb++)
        for (int p = 0; p < s.L; p++)
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, bb, p, c);
                S[o] = ref_sigmoid(H[o]);
                H[o] = ref_act(act, param, H[o]);
                T[o] = ref_sigmoid(T[o]);
                out[o] = T[o] * H[o] + (1.0 - T[o]) * x[o];
            }
}

void ref_highway_backward(const float *x, const float *H, const float *T, const float *S, const float *d,
                          RefShape s, const float *W, const float *W2, int K, FsAct act, float param, double *dx,
                          double *gW, double *gb, double *gW2, double *gb2)
{
    const long n = ref_size(s);
    double *dH = calloc((size_t)n, sizeof(double)), *dT = calloc((size_t)n, sizeof(double));
    double *dxc = calloc((size_t)n, sizeof(double));
    for (int b = 0; b < s.B; b++)
        for (int p = 0; p < s.L; p++)
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, b, p, c);
                dH[o] = (double)d[o] * T[o] * ref_act_grad(act, param, H[o], S ? S[o] : 0.0);
                dT[o] = (double)d[o] * ((double)H[o] - x[o]) * T[o] * (1.0 - T[o]);
            }
    ref_conv_wgrad(x, s, dH, s, K, gW, gb);
    ref_conv_wgrad(x, s, dT, s, K, gW2, gb2);
    ref_conv_dgrad(W, K, dH, s, s, dx);
    ref_conv_dgrad(W2, K, dT, s, s, dxc);
    for (int b = 0; b < s.B; b++)
        for (int p = 0; p < s.L; p++)
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, b, p, c);
                dx[o] += dxc[o] + (double)d[o] * (1.0 - T[o]); /* the carry path */
            }
    free(dH);
    free(dT);
    free(dxc);
}

/* ---------------------------------------------------------------------- */
/* Softmax cross-entropy, mean over the batch.                              */

void ref_softmax_xent(const float *z, const uint8_t *labels, int B, double *loss, double *dz, int *pred)
{
    for (int b = 0; b < B; b++) {
        const float *zb = z + b * FS_CLASSES;
        double sum = 0.0;
        int arg = 0;
        for (int k = 0; k < FS_CLASSES; k++) {
            sum += exp(zb[k]);
            if (zb[k] > zb[arg]) arg = k;
        }
        loss[b] = log(sum) - zb[labels[b]];
        pred[b] = arg;
        for (int k = 0; k < FS_CLASSES; k++) dz[b * FS_CLASSES + k] = (exp(zb[k]) / sum - (k == labels[b])) / B;
    }
}

/* ---------------------------------------------------------------------- */
/* Clipping and the optimizers.                                             */

double ref_grad_norm(const float *g, long n)
{
    double ss = 0.0;
    for (long i = 0; i < n; i++) ss += (double)g[i] * g[i];
    return sqrt(ss);
}

double ref_clip_scale(double norm, float clip)
{
    return clip > 0.0f && norm > clip ? clip / norm : 1.0;
}

void ref_optimizer(const FsTrainSpec *ts, long t, double scale, long n, const float *w, const float *m1,
                   const float *m2, const double *g, double *w_out, double *m1_out, double *m2_out)
{
    const double lr = ts->lr, wd = ts->weight_decay, b1 = ts->beta1, b2 = ts->beta2;
    for (long i = 0; i < n; i++) {
        double gi = g[i] * scale;
        if (ts->opt != FS_OPT_ADAMW) gi += wd * w[i]; /* L2: part of the gradient */
        if (ts->opt == FS_OPT_SGD) {
            m1_out[i] = ts->momentum * m1[i] + gi;
            m2_out[i] = m2[i];
            w_out[i] = w[i] - lr * m1_out[i];
            continue;
        }
        m1_out[i] = b1 * m1[i] + (1.0 - b1) * gi;
        m2_out[i] = b2 * m2[i] + (1.0 - b2) * gi * gi;
        double mhat = m1_out[i] / (1.0 - pow(b1, (double)t)), vhat = m2_out[i] / (1.0 - pow(b2, (double)t));
        double wi = w[i];
        if (ts->opt == FS_OPT_ADAMW) wi -= lr * wd * w[i]; /* decoupled decay */
        w_out[i] = wi - lr * mhat / (sqrt(vhat) + ts->eps);
    }
}

/* ---------------------------------------------------------------------- */
/* A batch's windows.                                                       */

void ref_load_window(const uint8_t *aa, const uint8_t *ss, const uint8_t *left, const uint8_t *right, uint32_t r,
                     int L, uint8_t *codes, uint8_t *label)
{
    for (int q = 0; q < L; q++) {
        int o = q - L / 2; /* offset from the centre residue */
        int inside = o < 0 ? -o <= left[r] : o <= right[r];
        codes[q] = inside ? aa[(long)r + o] : FS_AA_PAD;
    }
    *label = (uint8_t)FS_SS_CLASS(ss[r]);
}

/* ---------------------------------------------------------------------- */
/* The GEMM every layer is built on.                                        */

long ref_stride_off(FsStride st, long i)
{
    return st.g ? (i / st.g) * st.gs + (i % st.g) * st.s : i * st.s;
}

void ref_gemm(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B, FsStride bk,
              double *C, FsStride cm, long cn)
{
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)A[ref_stride_off(am, i) + ref_stride_off(ak, k)] * B[ref_stride_off(bk, k) + n];
            C[ref_stride_off(cm, i) + n * cn] += sum;
        }
}
