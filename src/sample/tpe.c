/*
 * tpe.c: the batch proposals of sample.h: random for the first batches,
 * then tree-structured Parzen estimators with a constant liar. A range
 * dimension (FsSweepDim.range) has a Parzen density over [low, high] (in
 * log space with log): a uniform prior of weight 1 and a normal kernel at
 * each trial's value, truncated to the range, of bandwidth
 * (high - low) / 4 x (n + 1)^(-1/5) for n trials, at least 1/100 of the
 * range. The candidates are the sweep's trials (for ranges, a pool drawn
 * from the prior: sweep_tpe_pool), each scored by l(x) / g(x).
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
        if (sw->dims[d].range) continue; /* its density: Parzen below */
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
    for (int d = 0; d < sw->n_dims; d++)
        if (!sw->dims[d].range) m += log(good[d][t->at[d]] / tot_g[d]) - log(bad[d][t->at[d]] / tot_b[d]);
    return m;
}

/* ---------------------------------------------------------------------- */
/* Range dimensions: Parzen densities                                      */

typedef struct {
    double a, b;       /* the range in the sampler's space (logarithms with log) */
    double h_good, h_bad;
    double *log_l;     /* per trial: log l(x), the good trials' density (fixed for the batch) */
    double *sum_bad;   /* per trial: the bad trials' kernels at x (grows with each liar) */
    int n_bad;
} Parzen;

static double space_of(const FsSweepDim *dm, double x) { return dm->log ? log(x) : x; }

static double bandwidth(double a, double b, int n)
{
    double h = (b - a) / 4.0 * pow((double)n + 1.0, -0.2);
    return h > (b - a) / 100.0 ? h : (b - a) / 100.0;
}

/* A normal kernel of width h at m, truncated to [a, b]: its height at m
 * (the truncation's mass taken out once per kernel, not per candidate). */
static double kernel_peak(double m, double h, double a, double b)
{
    const double mass = 0.5 * (erfc(-(b - m) / h / sqrt(2.0)) - erfc(-(a - m) / h / sqrt(2.0)));
    return 1.0 / (h * 2.5066282746310002 /* sqrt(2 pi) */) / (mass > 1e-300 ? mass : 1e-300);
}

/* The kernel at u; beyond 8 widths it is below 1e-14 of its peak and counted as 0. */
static double kernel_at(double u, double m, double h, double peak)
{
    const double z = (u - m) / h;
    return z > 8.0 || z < -8.0 ? 0.0 : peak * exp(-0.5 * z * z);
}

/* Dimension d's densities at the value of every trial not taken, from the
 * scored trials s[] (best first). */
static void parzen_open(const FsSweep *sw, int d, const Scored *s, int n_hist, int n_good,
                        const unsigned char *taken, Parzen *p)
{
    const FsSweepDim *dm = &sw->dims[d];
    p->a = space_of(dm, dm->low);
    p->b = space_of(dm, dm->high);
    p->h_good = bandwidth(p->a, p->b, n_good);
    p->h_bad = bandwidth(p->a, p->b, n_hist - n_good);
    p->n_bad = n_hist - n_good;
    p->log_l = fs_calloc((size_t)sw->n_trials + 1, sizeof(double));
    p->sum_bad = fs_calloc((size_t)sw->n_trials + 1, sizeof(double));
    double *m = fs_calloc((size_t)n_hist + 1, sizeof(double)), *peak = fs_calloc((size_t)n_hist + 1, sizeof(double));
    for (int i = 0; i < n_hist; i++) {
        m[i] = space_of(dm, sw->trials[s[i].trial].x[d]);
        peak[i] = kernel_peak(m[i], i < n_good ? p->h_good : p->h_bad, p->a, p->b);
    }
    for (int t = 0; t < sw->n_trials; t++) {
        if (taken[t]) continue;
        const double u = space_of(dm, sw->trials[t].x[d]);
        double good = 1.0 / (p->b - p->a); /* the prior */
        for (int i = 0; i < n_good; i++) good += kernel_at(u, m[i], p->h_good, peak[i]);
        for (int i = n_good; i < n_hist; i++) p->sum_bad[t] += kernel_at(u, m[i], p->h_bad, peak[i]);
        p->log_l[t] = log(good / (n_good + 1));
    }
    free(m);
    free(peak);
}

/* The liar: trial `pick` counts as a bad trial from here on. */
static void parzen_lie(const FsSweep *sw, int d, Parzen *p, int pick, const unsigned char *taken)
{
    const double m = space_of(&sw->dims[d], sw->trials[pick].x[d]), peak = kernel_peak(m, p->h_bad, p->a, p->b);
    for (int t = 0; t < sw->n_trials; t++)
        if (!taken[t]) p->sum_bad[t] += kernel_at(space_of(&sw->dims[d], sw->trials[t].x[d]), m, p->h_bad, peak);
    p->n_bad++;
}

static double parzen_merit(const Parzen *p, int t)
{
    return p->log_l[t] - log((1.0 / (p->b - p->a) + p->sum_bad[t]) / (p->n_bad + 1));
}

static Parzen *parzen_all(const FsSweep *sw, const Scored *s, int n_hist, int n_good, const unsigned char *taken)
{
    Parzen *p = fs_calloc((size_t)sw->n_dims + 1, sizeof *p);
    for (int d = 0; d < sw->n_dims; d++)
        if (sw->dims[d].range) parzen_open(sw, d, s, n_hist, n_good, taken, &p[d]);
    return p;
}

static void parzen_free(const FsSweep *sw, Parzen *p)
{
    for (int d = 0; d < sw->n_dims; d++) free(p[d].log_l), free(p[d].sum_bad);
    free(p);
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
    Parzen *pz = parzen_all(sw, s, n_hist, n_good, taken);
    int k = 0;
    for (; k < batch; k++) {
        int best = -1;
        double best_m = -INFINITY;
        for (int t = 0; t < sw->n_trials; t++) {
            if (taken[t] || mine[t]) continue;
            double m = merit(sw, &sw->trials[t], good, bad, tot_g, tot_b);
            for (int d = 0; d < sw->n_dims; d++)
                if (sw->dims[d].range) m += parzen_merit(&pz[d], t);
            if (best < 0 || m > best_m) best = t, best_m = m;
        }
        if (best < 0) break;
        out[k] = best;
        mine[best] = 1;
        /* The constant liar: the pick counts as a bad trial for the rest. */
        count(sw, &sw->trials[best], bad, 1.0);
        for (int d = 0; d < sw->n_dims; d++)
            if (sw->dims[d].range) parzen_lie(sw, d, &pz[d], best, taken);
        for (int d = 0; d < sw->n_dims; d++) {
            tot_b[d] = 0;
            for (int v = 0; v < sw->dims[d].n; v++) tot_b[d] += bad[d][v];
        }
    }
    free(mine);
    parzen_free(sw, pz);
    free(tot_g);
    free(tot_b);
    counts_free(sw, good);
    counts_free(sw, bad);
    free(s);
    return k;
}
