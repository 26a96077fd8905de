/*
 * ref_gru: the GRU as its definition reads (PyTorch's torch.nn.GRU), one
 * chain at a time, in double: the readable reference the trainer's
 * recurrence (src/train/rnn.c) is checked against by tests/test_rnn.c.
 */
#include <math.h>
#include <stdlib.h>

#include "ops_ref.h"

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

void ref_gru_forward(const float *w, const FsLayer *y, const double *x, int len, double *out)
{
    const int U = y->spec.units, D = 1 + y->spec.bidir, C = y->in_c, G = 3 * U, OC = y->out_c;
    double *h = calloc((size_t)U, sizeof(double)), *hn = calloc((size_t)U, sizeof(double));
    for (int dir = 0; dir < D; dir++) {
        const float *Wi = w + y->w + dir * G, *bi = w + y->b + dir * G; /* W_ih[c][dir*3U + g] */
        const float *Wh = w + y->w2 + (long)dir * U * G, *bh = w + y->b2 + dir * G;
        for (int u = 0; u < U; u++) h[u] = 0.0;
        for (int t = 0; t < len; t++) {
            const int p = dir == 0 ? t : len - 1 - t; /* the backward direction reads the chain from its end */
            for (int u = 0; u < U; u++) {
                double xi[3], hh[3];
                for (int q = 0; q < 3; q++) {
                    const int g = q * U + u;
                    xi[q] = bi[g];
                    hh[q] = bh[g];
                    for (int c = 0; c < C; c++) xi[q] += (double)Wi[(long)c * D * G + g] * x[(long)p * C + c];
                    for (int k = 0; k < U; k++) hh[q] += (double)Wh[(long)k * G + g] * h[k];
                }
                const double r = sigmoid(xi[0] + hh[0]), z = sigmoid(xi[1] + hh[1]);
                const double n = tanh(xi[2] + r * hh[2]);
                hn[u] = (1.0 - z) * n + z * h[u];
            }
            for (int u = 0; u < U; u++) {
                h[u] = hn[u];
                out[(long)p * OC + dir * U + u] = h[u];
            }
        }
    }
    free(h);
    free(hn);
}
