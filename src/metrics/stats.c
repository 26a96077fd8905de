/*
 * stats: quantiles and the percentile bootstrap of Q3 over proteins, for
 * the spread of a held-out score. Proteins, not residues, are resampled:
 * residues of one chain are correlated, so resampling residues would give
 * an interval far too narrow.
 */
#include "metrics/metrics.h"

#include <math.h>   /* NAN, floor, isinf, isnan */
#include <stdlib.h> /* qsort, free */
#include <string.h> /* memcpy */

#include "util/util.h"

/* Callers reject NaN first, so this is a total order. */
static int stats_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Quantile q (0..1) of w[0..n-1], sorted ascending, n >= 1. */
static double stats_sorted_quantile(const double *w, int n, double q)
{
    double pos = q * (double)(n - 1);
    double fl = floor(pos);
    int i = (int)fl;
    if (i >= n - 1) return w[n - 1];
    double t = pos - fl;
    if (t == 0.0) return w[i]; /* also keeps an infinite neighbour out of it */
    double a = w[i], b = w[i + 1], d = b - a;
    /* An infinite end wins for every t in (0, 1); inf - inf would be NaN. */
    if (isinf(a) || isinf(b)) return isinf(a) && isinf(b) && a != b ? NAN : isinf(b) ? b : a;
    /* Interpolate from the nearer end, as numpy's _lerp does: the result
     * stays within [a, b] and is monotone in q despite rounding. */
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

double metrics_quantile(const double *v, int n, double q)
{
    if (v == NULL || n <= 0 || isnan(q)) return NAN;
    for (int i = 0; i < n; i++)
        if (isnan(v[i])) return NAN;
    if (q < 0.0) q = 0.0;
    if (q > 1.0) q = 1.0;
    double *w = fs_malloc((size_t)n * sizeof *w);
    memcpy(w, v, (size_t)n * sizeof *w);
    qsort(w, (size_t)n, sizeof *w, stats_cmp);
    double r = stats_sorted_quantile(w, n, q);
    free(w);
    return r;
}

int metrics_bootstrap_q3(const uint64_t *correct, const uint64_t *total, int n, int reps,
                         uint64_t seed, double *lo, double *hi)
{
    if (lo) *lo = NAN;
    if (hi) *hi = NAN;
    if (correct == NULL || total == NULL || lo == NULL || hi == NULL || n < 1 || reps < 1)
        return -1;
    /* A purpose word, so that the same seed used for folds or sampling
     * elsewhere gives an unrelated stream here. */
    const uint64_t words[2] = {seed, 0x626f6f747133ULL /* "bootq3" */};
    FsRng rng;
    fs_rng_seed(&rng, words, 2);
    double *q3 = fs_malloc((size_t)reps * sizeof *q3);
    int m = 0;
    for (int b = 0; b < reps; b++) {
        uint64_t c = 0, t = 0;
        for (int i = 0; i < n; i++) {
            uint32_t j = fs_rng_below(&rng, (uint32_t)n);
            c += correct[j];
            t += total[j];
        }
        if (t > 0) q3[m++] = (double)c / (double)t;
    }
    /* Sorted once for both ends; the same values as metrics_quantile. */
    if (m > 0) {
        qsort(q3, (size_t)m, sizeof *q3, stats_cmp);
        *lo = stats_sorted_quantile(q3, m, 0.025);
        *hi = stats_sorted_quantile(q3, m, 0.975);
    }
    free(q3);
    return 0;
}
