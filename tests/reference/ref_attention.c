/*
 * ref_attention: a chain model's self-attention layer as its definition
 * reads (src/train/attention.c's header), one chain at a time, in double,
 * with every score matrix written out: the readable reference the trainer's
 * attention is checked against by tests/test_rnn.c.
 */
#include <math.h>
#include <stdlib.h>

#include "ops_ref.h"

void ref_attention_forward(const float *w, const FsLayer *y, const double *x, int len, double *out)
{
    const int C = y->in_c, H = y->spec.heads, dk = y->spec.key_dim, hd = H * dk, M = y->spec.max_dist;
    double *qkv = calloc((size_t)len * 3 * hd, sizeof(double)), *ctx = calloc((size_t)len * hd, sizeof(double));
    double *p = calloc((size_t)len, sizeof(double));
    /* q, k, v: columns [0, hd), [hd, 2 hd), [2 hd, 3 hd) of x W + b. */
    for (int i = 0; i < len; i++)
        for (int o = 0; o < 3 * hd; o++) {
            double s = w[y->b + o];
            for (int c = 0; c < C; c++) s += (double)w[y->w + (long)c * 3 * hd + o] * x[(long)i * C + c];
            qkv[(long)i * 3 * hd + o] = s;
        }
    for (int h = 0; h < H; h++)
        for (int i = 0; i < len; i++) {
            double mx = -INFINITY, sum = 0.0;
            for (int j = 0; j < len; j++) {
                double s = 0.0;
                for (int e = 0; e < dk; e++) s += qkv[(long)i * 3 * hd + h * dk + e] * qkv[(long)j * 3 * hd + hd + h * dk + e];
                int rel = j - i < -M ? -M : j - i > M ? M : j - i;
                p[j] = s / sqrt((double)dk) + w[y->att_rel + (long)(rel + M) * H + h];
                if (p[j] > mx) mx = p[j];
            }
            for (int j = 0; j < len; j++) sum += (p[j] = exp(p[j] - mx));
            for (int j = 0; j < len; j++)
                for (int e = 0; e < dk; e++)
                    ctx[(long)i * hd + h * dk + e] += p[j] / sum * qkv[(long)j * 3 * hd + 2 * hd + h * dk + e];
        }
    /* The output projection, the residual add and the layer norm. */
    for (int i = 0; i < len; i++) {
        double *r = out + (long)i * C, mu = 0.0, var = 0.0;
        for (int c = 0; c < C; c++) {
            double s = (double)w[y->b2 + c] + x[(long)i * C + c];
            for (int k = 0; k < hd; k++) s += (double)w[y->w2 + (long)k * C + c] * ctx[(long)i * hd + k];
            r[c] = s;
            mu += s / C;
        }
        for (int c = 0; c < C; c++) var += (r[c] - mu) * (r[c] - mu) / C;
        for (int c = 0; c < C; c++)
            r[c] = (r[c] - mu) / sqrt(var + y->spec.eps) * w[y->att_gamma + c] + w[y->att_beta + c];
    }
    free(qkv);
    free(ctx);
    free(p);
}
