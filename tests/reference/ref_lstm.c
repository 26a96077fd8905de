/*
 * ref_lstm: the LSTM as its definition reads (PyTorch's torch.nn.LSTM:
 * gates i, f, g, o; c' = f c + i g, h' = o tanh(c')), one chain at a time,
 * in double: the readable reference the trainer's recurrence
 * (src/train/rnn.c) is checked against by tests/test_rnn.c.
 */
#include <math.h>
#include <stdlib.h>

#include "ops_ref.h"

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

void ref_lstm_forward(const float *w, const FsLayer *y, const double *x, int len, double *out)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, C = y->in_c, G = 4 * U, OC = y->out_c;
    double *h = calloc((size_t)U, sizeof(double)), *c = calloc((size_t)U, sizeof(double));
    double *hn = calloc((size_t)U, sizeof(double));
    for (int dir = 0; dir < D; dir++) {
        const float *Wi = w + y->w + dir * G, *bi = w + y->b + dir * G; /* W_ih[c][dir*4U + g] */
        const float *Wh = w + y->w2 + (long)dir * U * G, *bh = w + y->b2 + dir * G;
        for (int u = 0; u < U; u++) h[u] = c[u] = 0.0;
        for (int t = 0; t < len; t++) {
            const int p = dir == 0 ? t : len - 1 - t; /* the backward direction reads the chain from its end */
            for (int u = 0; u < U; u++) {
                double a[4];
                for (int q = 0; q < 4; q++) {
                    const int g = q * U + u;
                    a[q] = (double)bi[g] + bh[g];
                    for (int k = 0; k < C; k++) a[q] += (double)Wi[(long)k * D * G + g] * x[(long)p * C + k];
                    for (int k = 0; k < U; k++) a[q] += (double)Wh[(long)k * G + g] * h[k];
                }
                const double i = sigmoid(a[0]), f = sigmoid(a[1]), g = tanh(a[2]), o = sigmoid(a[3]);
                c[u] = f * c[u] + i * g;
                hn[u] = o * tanh(c[u]);
            }
            for (int u = 0; u < U; u++) {
                h[u] = hn[u];
                out[(long)p * OC + dir * U + u] = h[u];
            }
        }
    }
    free(h);
    free(c);
    free(hn);
}
