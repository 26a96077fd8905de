/*
 * compare: is one trial really better than another? Cross-validation's
 * fold scores are not independent (every two training sets share most of
 * their proteins), so the plain standard error of their mean is too small
 * and a plain paired t-test calls too many differences. The corrected
 * resampled t-test (Nadeau & Bengio 2003, Machine Learning 52:239-281;
 * for repeated k-fold, Bouckaert & Frank 2004, PAKDD) widens the variance
 * of the mean of n scores from s^2 / n to (1 / n + n_val / n_train) s^2,
 * where n_val / n_train is the ratio of validation to training examples
 * of one split. Student's t with n - 1 degrees of freedom is then used as
 * usual. The formulas, with the simulation that checks the test's false
 * positives, are in docs/statistics.md.
 *
 * Student's t distribution is computed here from the regularised
 * incomplete beta function, P(|T| > t) = I_x(df / 2, 1 / 2) with
 * x = df / (df + t^2), by its continued fraction (modified Lentz), which
 * converges quickly for x below (a + 1) / (a + b + 2) and is used through
 * the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) above it.
 */
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* The continued fraction of I_x(a, b) without its prefactor. */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-16;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        const double m2 = 2.0 * m;
        /* The even step, then the odd one. */
        double num = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));
        d = 1.0 + num * d;
        c = 1.0 + num / c;
        d = 1.0 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));
        d = 1.0 + num * d;
        c = 1.0 + num / c;
        d = 1.0 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < eps) break;
    }
    return h;
}

/* The regularised incomplete beta function I_x(a, b), a, b > 0. */
static double beta_regularised(double a, double b, double x)
{
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    const double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_fraction(a, b, x) / a;
    return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b;
}

double metrics_t_two_sided(double t, double df)
{
    if (isnan(t) || !(df > 0.0)) return NAN;
    if (isinf(t)) return 0.0;
    return beta_regularised(0.5 * df, 0.5, df / (df + t * t));
}

double metrics_t_cdf(double t, double df)
{
    const double tail = metrics_t_two_sided(t, df);
    if (isnan(tail)) return NAN;
    return t >= 0.0 ? 1.0 - 0.5 * tail : 0.5 * tail;
}

double metrics_t_quantile(double p, double df)
{
    if (isnan(p) || !(df > 0.0) || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return -INFINITY;
    if (p == 1.0) return INFINITY;
    if (p == 0.5) return 0.0;
    /* The cdf is monotone: bracket, then halve down to the last bit. */
    const double q = p > 0.5 ? p : 1.0 - p;
    double lo = 0.0, hi = 1.0;
    while (metrics_t_cdf(hi, df) < q && hi < 1e300) lo = hi, hi *= 2.0;
    for (int i = 0; i < 2000 && hi - lo > 0.0; i++) {
        const double mid = lo + 0.5 * (hi - lo);
        if (mid <= lo || mid >= hi) break;
        if (metrics_t_cdf(mid, df) < q) lo = mid;
        else hi = mid;
    }
    return p > 0.5 ? hi : -hi;
}

/* Mean and sample variance of x[0..n-1] (n >= 2), summed in order. */
static void mean_var(const double *x, int n, double *mean, double *var)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += x[i];
    const double m = s / n;
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    *var = ss / (n - 1);
}

static int scores_ok(const double *x, int n, double ratio)
{
    if (!x || n < 2 || isnan(ratio) || ratio < 0.0 || isinf(ratio)) return 0;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

double metrics_se_corrected(const double *x, int n, double ratio)
{
    if (!scores_ok(x, n, ratio)) return NAN;
    double m, v;
    mean_var(x, n, &m, &v);
    return sqrt((1.0 / n + ratio) * v);
}

int metrics_ci_corrected(const double *x, int n, double ratio, double level, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (!scores_ok(x, n, ratio) || !(level > 0.0 && level < 1.0)) return -1;
    double m, v;
    mean_var(x, n, &m, &v);
    const double half = metrics_t_quantile(0.5 + 0.5 * level, n - 1) * metrics_se_corrected(x, n, ratio);
    *lo = m - half;
    *hi = m + half;
    return 0;
}

double metrics_ttest_corrected(const double *a, const double *b, int n, double ratio)
{
    if (!a || !b || n < 2) return NAN;
    double *d = fs_malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) d[i] = a[i] - b[i];
    double p = NAN;
    if (scores_ok(d, n, ratio)) {
        double m, v;
        mean_var(d, n, &m, &v);
        const double se = sqrt((1.0 / n + ratio) * v);
        /* Every split gave the same difference: none at all is no evidence
         * against equality; a constant nonzero one is all the evidence. */
        if (se == 0.0) p = m == 0.0 ? 1.0 : 0.0;
        else p = metrics_t_two_sided(m / se, n - 1);
    }
    free(d);
    return p;
}

const char *const metrics_objective_names[FS_OBJ_COUNT] = {"q3", "loss", "params", "train_seconds", "predict_us"};

int metrics_objective_higher(FsObjective o) { return o == FS_OBJ_Q3; }

double metrics_predict_us(double val_seconds, uint64_t val_examples)
{
    return val_examples ? val_seconds * 1e6 / (double)val_examples : NAN;
}

double metrics_objective(FsObjective o, const FsObjectiveFold *folds, int k, double params)
{
    if (o == FS_OBJ_PARAMS) return params;
    if (k < 1) return NAN;
    double sum = 0.0;
    for (int s = 0; s < k; s++) {
        const FsObjectiveFold *f = &folds[s];
        sum += o == FS_OBJ_Q3              ? f->q3
               : o == FS_OBJ_LOSS          ? f->loss
               : o == FS_OBJ_TRAIN_SECONDS ? f->seconds
                                           : metrics_predict_us(f->val_seconds, f->val_examples);
    }
    return o == FS_OBJ_TRAIN_SECONDS ? sum : sum / k;
}

double metrics_objective_score(FsObjective o, const FsObjectiveFold *folds, int k, double params)
{
    const double v = metrics_objective(o, folds, k, params);
    return metrics_objective_higher(o) ? v : -v;
}

static int has_nan(const double *x, int m)
{
    for (int k = 0; k < m; k++)
        if (isnan(x[k])) return 1;
    return 0;
}

void metrics_pareto(const double *v, int n, int m, unsigned char *front)
{
    for (int i = 0; i < n; i++) {
        const double *a = v + (size_t)i * m;
        int on = !has_nan(a, m);
        for (int j = 0; j < n && on; j++) {
            const double *b = v + (size_t)j * m;
            if (j == i || has_nan(b, m)) continue;
            int ge = 1, gt = 0;
            for (int k = 0; k < m; k++) ge &= b[k] >= a[k], gt |= b[k] > a[k];
            /* b dominates a, or equals it and comes first. */
            if (ge && (gt || j < i)) on = 0;
        }
        front[i] = (unsigned char)on;
    }
}

void metrics_pareto_ranks(const double *v, int n, int m, int *rank)
{
    if (n <= 0) return;
    double *rest = fs_malloc(sizeof(double) * (size_t)n * (size_t)m);
    unsigned char *front = fs_malloc((size_t)n);
    for (int i = 0; i < n; i++) rank[i] = n;
    /* Each round, the points already ranked become NaN: never on a front,
     * dominating nothing, so the next front is that of the rest. */
    memcpy(rest, v, sizeof(double) * (size_t)n * (size_t)m);
    for (int r = 0, left = n; r < n && left > 0; r++) {
        metrics_pareto(rest, n, m, front);
        int found = 0;
        for (int i = 0; i < n; i++)
            if (front[i]) {
                rank[i] = r;
                rest[(size_t)i * m] = NAN;
                found++;
            }
        if (!found) break; /* only NaN points are left */
        left -= found;
    }
    free(rest);
    free(front);
}

typedef struct {
    double p;
    int i;
} HolmItem;

static int holm_cmp(const void *pa, const void *pb)
{
    const HolmItem *a = pa, *b = pb;
    if (a->p != b->p) return a->p < b->p ? -1 : 1;
    return a->i - b->i; /* ties in input order: the same answer every time */
}

void metrics_holm(double *p, int n)
{
    if (!p || n < 1) return;
    HolmItem *v = fs_malloc(sizeof(HolmItem) * (size_t)n);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(p[i])) v[m].p = p[i], v[m].i = i, m++;
    qsort(v, (size_t)m, sizeof *v, holm_cmp);
    /* Step down: the k-th smallest (0-based) is multiplied by m - k, and
     * no adjusted value is below an earlier one. */
    double run = 0.0;
    for (int k = 0; k < m; k++) {
        double adj = (double)(m - k) * v[k].p;
        if (adj > 1.0) adj = 1.0;
        if (adj < run) adj = run;
        run = adj;
        p[v[k].i] = adj;
    }
    free(v);
}
