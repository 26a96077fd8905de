/*
 * tpe.c: the batch proposals of sample.h: random for the first batches,
 * then tree-structured Parzen estimators with a constant liar.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample.h"

typedef struct {
    double score;
    int trial;
} Scored;

static int by_score(const void *a, const void *b)
{
    const Scored *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->trial - y->trial;
}

/* Adds weight w of a trial's values to the per-dimension counts. */
static void count(const FsSweep *sw, const FsTrial *t, double **c, double w)
{
    for (int d = 0; d < sw->n_dims; d++) {
        int v = t->at[d], n = sw->dims[d].n;
        c[d][v] += w;
        if (sw->dims[d].ordered) {
            if (v > 0) c[d][v - 1] += 0.5 * w;
            if (v + 1 < n) c[d][v + 1] += 0.5 * w;
        }
    }
}

static double **counts_new(const FsSweep *sw)
{
    double **c = fs_calloc((size_t)sw->n_dims + 1, sizeof *c);
    for (int d = 0; d < sw->n_dims; d++) {
        c[d] = fs_calloc((size_t)sw->dims[d].n, sizeof **c);
        for (int v = 0; v < sw->dims[d].n; v++) c[d][v] = 1.0 / sw->dims[d].n; /* the prior */
    }
    return c;
}

static void counts_free(const FsSweep *sw, double **c)
{
    for (int d = 0; d < sw->n_dims; d++) free(c[d]);
    free(c);
}

static double merit(const FsSweep *sw, const FsTrial *t, double **good, double **bad, const double *tot_g,
                    const double *tot_b)
{
    double m = 0;
    for (int d = 0; d < sw->n_dims; d++) m += log(good[d][t->at[d]] / tot_g[d]) - log(bad[d][t->at[d]] / tot_b[d]);
    return m;
}

static int propose_random(const FsSweep *sw, const unsigned char *taken, int batch, int batch_index, int *out)
{
    int *free_t = fs_calloc((size_t)sw->n_trials + 1, sizeof(int)), n = 0, k = 0;
    for (int t = 0; t < sw->n_trials; t++)
        if (!taken[t]) free_t[n++] = t;
    FsRng r;
    const uint64_t words[3] = {sw->search_seed, (uint64_t)batch_index, 0x747065ULL /* "tpe": the purpose */};
    fs_rng_seed(&r, words, 3);
    for (; k < batch && k < n; k++) {
        int j = k + (int)fs_rng_below(&r, (uint32_t)(n - k));
        int tmp = free_t[k];
        free_t[k] = free_t[j];
        free_t[j] = tmp;
        out[k] = free_t[k];
    }
    free(free_t);
    return k;
}

int sample_propose(const FsSweep *sw, const int *hist, const double *score, int n_hist, const unsigned char *taken,
                   int batch, int batch_index, int *out)
{
    if (n_hist < FS_SAMPLE_STARTUP || sw->n_dims == 0) return propose_random(sw, taken, batch, batch_index, out);
    Scored *s = fs_calloc((size_t)n_hist, sizeof *s);
    for (int i = 0; i < n_hist; i++) s[i] = (Scored){isnan(score[i]) ? -INFINITY : score[i], hist[i]};
    qsort(s, (size_t)n_hist, sizeof *s, by_score);
    int n_good = (n_hist + 3) / 4;
    double **good = counts_new(sw), **bad = counts_new(sw);
    for (int i = 0; i < n_hist; i++) count(sw, &sw->trials[s[i].trial], i < n_good ? good : bad, 1.0);
    double *tot_g = fs_calloc((size_t)sw->n_dims + 1, sizeof(double)), *tot_b = fs_calloc((size_t)sw->n_dims + 1, sizeof(double));
    for (int d = 0; d < sw->n_dims; d++)
        for (int v = 0; v < sw->dims[d].n; v++) tot_g[d] += good[d][v], tot_b[d] += bad[d][v];
    unsigned char *mine = fs_calloc((size_t)sw->n_trials + 1, 1);
    int k = 0;
    for (; k < batch; k++) {
        int best = -1;
        double best_m = -INFINITY;
        for (int t = 0; t < sw->n_trials; t++) {
            if (taken[t] || mine[t]) continue;
            double m = merit(sw, &sw->trials[t], good, bad, tot_g, tot_b);
            if (best < 0 || m > best_m) best = t, best_m = m;
        }
        if (best < 0) break;
        out[k] = best;
        mine[best] = 1;
        /* The constant liar: the pick counts as a bad trial for the rest. */
        count(sw, &sw->trials[best], bad, 1.0);
        for (int d = 0; d < sw->n_dims; d++) {
            tot_b[d] = 0;
            for (int v = 0; v < sw->dims[d].n; v++) tot_b[d] += bad[d][v];
        }
    }
    free(mine);
    free(tot_g);
    free(tot_b);
    counts_free(sw, good);
    counts_free(sw, bad);
    free(s);
    return k;
}
