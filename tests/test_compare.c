/*
 * Comparing trials over cross-validation splits (metrics/compare.c):
 *
 * 1. Student's t against its closed forms (df 1: the Cauchy distribution,
 *    atan; df 2: t / sqrt(2 + t^2)) and their inverses, and against the
 *    normal distribution's 97.5% point at a huge df.
 * 2. The corrected interval and paired test on numbers worked by hand;
 *    the edge cases (a trial against itself: p = 1; a constant nonzero
 *    difference: p = 0; fewer than two scores, a NaN score, a negative
 *    ratio: refused). Holm's adjustment on a worked example.
 * 3. False positives, simulated: pairs of trials with no true difference
 *    whose split scores are correlated as cross-validation's are (every
 *    two splits' differences correlate by ratio / (1 + ratio), Nadeau and
 *    Bengio's model), for k = 3 folds and for 3 folds repeated twice. At
 *    alpha 0.05 the corrected test's false-positive rate must lie in
 *    0.03-0.07 over 4,000 pairs; the plain paired t-test's is printed
 *    beside it and must be far above (that is why the correction exists).
 *    With a true difference the corrected test must still find it.
 *
 * `test_compare --dump SEED N` prints N random cases with this code's
 * answers as JSON lines, for tests/compare_scipy.py to check against
 * SciPy (an independent implementation).
 */
#include <stdint.h>

#include "metrics/metrics.h"
#include "test.h"
#include "util/util.h"

static double normal(FsRng *r)
{
    /* Box-Muller on two 53-bit uniforms in (0, 1). */
    const double u = ((double)(fs_rng_u64(r) >> 11) + 0.5) * 0x1p-53;
    const double v = ((double)(fs_rng_u64(r) >> 11) + 0.5) * 0x1p-53;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static void t_distribution(void)
{
    const double ts[] = {-30.0, -3.1, -1.0, -0.2, 0.0, 0.4, 1.0, 2.5, 12.0, 1e6};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        const double t = ts[i];
        CHECK_NEAR(metrics_t_cdf(t, 1.0), 0.5 + atan(t) / 3.141592653589793, 1e-13);
        CHECK_NEAR(metrics_t_cdf(t, 2.0), 0.5 + t / (2.0 * sqrt(2.0 + t * t)), 1e-13);
        CHECK_NEAR(metrics_t_two_sided(t, 2.0), 1.0 - fabs(t) / sqrt(2.0 + t * t), 1e-13);
    }
    const double ps[] = {0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.9995};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        const double p = ps[i];
        CHECK_NEAR(metrics_t_quantile(p, 1.0), tan(3.141592653589793 * (p - 0.5)), 1e-9 * (1.0 + fabs(tan(3.141592653589793 * (p - 0.5)))));
        CHECK_NEAR(metrics_t_quantile(p, 2.0), (2.0 * p - 1.0) / sqrt(2.0 * p * (1.0 - p)), 1e-10);
    }
    /* (SciPy 1.10 gives 4.302652729911275 here, 1.6e-10 off the closed
     * form: tests/compare_scipy.py compares at 1e-8.) */
    CHECK_NEAR(metrics_t_quantile(0.975, 2.0), 0.95 / sqrt(2.0 * 0.975 * 0.025), 1e-12);
    /* The normal distribution's 97.5% point; lgamma's rounding at half a
     * billion limits this one to about 1e-6. */
    CHECK_NEAR(metrics_t_quantile(0.975, 1e9), 1.959963984540054, 1e-6);
    CHECK(metrics_t_two_sided(0.0, 5.0) == 1.0 && metrics_t_two_sided(INFINITY, 5.0) == 0.0);
    CHECK(isnan(metrics_t_cdf(NAN, 3.0)) && isnan(metrics_t_cdf(1.0, 0.0)) && isnan(metrics_t_quantile(1.5, 3.0)));
    CHECK(isinf(metrics_t_quantile(0.0, 3.0)) && metrics_t_quantile(0.0, 3.0) < 0.0);
}

static void worked_examples(void)
{
    /* Three folds: mean 0.72, s^2 = 0.0004; ratio 0.5 (k = 3). */
    const double x[3] = {0.70, 0.72, 0.74};
    double lo, hi;
    CHECK(metrics_ci_corrected(x, 3, 0.5, 0.95, &lo, &hi) == 0);
    const double half = 0.95 / sqrt(2.0 * 0.975 * 0.025) * sqrt((1.0 / 3.0 + 0.5) * 0.0004);
    CHECK_NEAR(lo, 0.72 - half, 1e-12);
    CHECK_NEAR(hi, 0.72 + half, 1e-12);
    /* Plain (ratio 0) is narrower: the correction widens it. */
    double plo, phi;
    CHECK(metrics_ci_corrected(x, 3, 0.0, 0.95, &plo, &phi) == 0 && phi - plo < hi - lo);
    CHECK(metrics_ci_corrected(x, 1, 0.5, 0.95, &lo, &hi) == -1 && isnan(lo) && isnan(hi));
    CHECK(metrics_ci_corrected(x, 3, -0.1, 0.95, &lo, &hi) == -1);
    const double bad[3] = {0.7, NAN, 0.7};
    CHECK(metrics_ci_corrected(bad, 3, 0.5, 0.95, &lo, &hi) == -1);

    /* Differences 0.02, 0.01, 0.03: mean 0.02, s^2 = 1e-4; t = 0.02 /
     * sqrt((1/3 + 1/2) 1e-4) = 2.19089, P(|T_2| > t) = 1 - t / sqrt(2 + t^2). */
    const double a[3] = {0.74, 0.73, 0.77}, b[3] = {0.72, 0.72, 0.74};
    const double t = 0.02 / sqrt((1.0 / 3.0 + 0.5) * 1e-4);
    CHECK_NEAR(metrics_ttest_corrected(a, b, 3, 0.5), 1.0 - t / sqrt(2.0 + t * t), 1e-12);
    CHECK(metrics_ttest_corrected(a, a, 3, 0.5) == 1.0);
    const double c[3] = {0.75, 0.74, 0.76}, e[3] = {0.74, 0.73, 0.75};
    CHECK(metrics_ttest_corrected(c, e, 3, 0.5) == 0.0);
    CHECK(isnan(metrics_ttest_corrected(a, b, 1, 0.5)) && isnan(metrics_ttest_corrected(a, bad, 3, 0.5)));

    /* Holm: 0.005 x 4, 0.01 x 3, 0.03 x 2, 0.04 x 1 kept at the running
     * maximum; a NaN is no comparison. */
    double p[5] = {0.01, 0.04, NAN, 0.03, 0.005};
    metrics_holm(p, 5);
    CHECK_NEAR(p[0], 0.03, 1e-15);
    CHECK_NEAR(p[1], 0.06, 1e-15);
    CHECK(isnan(p[2]));
    CHECK_NEAR(p[3], 0.06, 1e-15);
    CHECK_NEAR(p[4], 0.02, 1e-15);
    double big[2] = {0.6, 0.9};
    metrics_holm(big, 2);
    CHECK(big[0] == 1.0 && big[1] == 1.0);
}

/* Split scores of two trials whose true difference is delta (in units of
 * one split's noise): every two splits' differences correlate by rho. */
static void simulate_pair(FsRng *r, int n, double rho, double delta, double *a, double *b)
{
    const double shared = normal(r) * sqrt(rho);
    for (int i = 0; i < n; i++) {
        const double base = 0.7 + 0.01 * normal(r); /* what both trials share on split i */
        b[i] = base;
        a[i] = base + 0.01 * (delta + shared + sqrt(1.0 - rho) * normal(r));
    }
}

static void false_positives(int k, int repeats)
{
    const int n = k * repeats, pairs = 4000;
    const double ratio = 1.0 / (k - 1), rho = ratio / (1.0 + ratio);
    FsRng r;
    const uint64_t seed[2] = {29, (uint64_t)n};
    fs_rng_seed(&r, seed, 2);
    double a[64], b[64];
    int corrected = 0, plain = 0, found = 0;
    for (int i = 0; i < pairs; i++) {
        simulate_pair(&r, n, rho, 0.0, a, b);
        corrected += metrics_ttest_corrected(a, b, n, ratio) < 0.05;
        plain += metrics_ttest_corrected(a, b, n, 0.0) < 0.05;
        simulate_pair(&r, n, rho, 6.0, a, b);
        found += metrics_ttest_corrected(a, b, n, ratio) < 0.05;
    }
    const double fc = (double)corrected / pairs, fp = (double)plain / pairs, power = (double)found / pairs;
    printf("%d folds x %d repeats, %d pairs, no true difference: false positives at alpha 0.05: corrected "
           "%.4f, plain paired t-test %.4f; a true difference of 6 split sds found %.4f of the time\n",
           k, repeats, pairs, fc, fp, power);
    CHECK_MSG(fc >= 0.03 && fc <= 0.07, "corrected test's false-positive rate %.4f outside 0.03-0.07", fc);
    CHECK_MSG(fp > 0.09, "the plain test's rate %.4f: the simulation's folds are not correlated", fp);
    CHECK_MSG(power > 0.5, "the corrected test found a true difference only %.4f of the time", power);
}

/* Random cases with this code's answers, one JSON line each. */
static int dump(uint64_t seed, int count)
{
    FsRng r;
    fs_rng_seed(&r, &seed, 1);
    for (int c = 0; c < count; c++) {
        const int n = 2 + (int)fs_rng_below(&r, 11);
        const double ratio = fs_rng_below(&r, 4) == 0 ? 0.0 : 1.0 / (1 + (int)fs_rng_below(&r, 9));
        double a[16], b[16];
        simulate_pair(&r, n, 0.3, normal(&r) * 2.0, a, b);
        double lo, hi;
        metrics_ci_corrected(a, n, ratio, 0.95, &lo, &hi);
        const double t = normal(&r) * 3.0, df = 0.5 + fs_rng_below(&r, 40), p = (fs_rng_below(&r, 9999) + 1) / 10000.0;
        printf("{\"a\":[");
        for (int i = 0; i < n; i++) printf("%s%.17g", i ? "," : "", a[i]);
        printf("],\"b\":[");
        for (int i = 0; i < n; i++) printf("%s%.17g", i ? "," : "", b[i]);
        printf("],\"ratio\":%.17g,\"lo\":%.17g,\"hi\":%.17g,\"p\":%.17g,\"t\":%.17g,\"df\":%.17g,\"cdf\":%.17g,"
               "\"q\":%.17g,\"quantile\":%.17g}\n",
               ratio, lo, hi, metrics_ttest_corrected(a, b, n, ratio), t, df, metrics_t_cdf(t, df), p,
               metrics_t_quantile(p, df));
    }
    return 0;
}

/* The Pareto front against a brute force written here: a point is on it
 * when no other point is >= in both and > in one, and no earlier point
 * has its very values; small integer grids make ties and equal points. */
static void pareto(void)
{
    FsRng r;
    const uint64_t seed = 31;
    fs_rng_seed(&r, &seed, 1);
    int wrong = 0, on_total = 0;
    for (int trial = 0; trial < 300; trial++) {
        const int n = 1 + (int)fs_rng_below(&r, 30), m = 2 + (int)fs_rng_below(&r, 2);
        double v[40 * 3];
        unsigned char front[40];
        for (int i = 0; i < n * m; i++) v[i] = (double)fs_rng_below(&r, 6);
        if (trial % 7 == 0) v[0] = NAN;
        metrics_pareto(v, n, m, front);
        for (int i = 0; i < n; i++) {
            int want = 1;
            for (int k = 0; k < m; k++) want &= !isnan(v[i * m + k]);
            for (int j = 0; j < n && want; j++) {
                if (j == i || isnan(v[j * m]) || isnan(v[j * m + 1]) || (m == 3 && isnan(v[j * m + 2]))) continue;
                int all_ge = 1, any_gt = 0, same = 1;
                for (int k = 0; k < m; k++) {
                    all_ge &= v[j * m + k] >= v[i * m + k];
                    any_gt |= v[j * m + k] > v[i * m + k];
                    same &= v[j * m + k] == v[i * m + k];
                }
                if ((all_ge && any_gt) || (same && j < i)) want = 0;
            }
            wrong += front[i] != want;
            on_total += front[i];
        }
    }
    CHECK_MSG(wrong == 0, "%d points put on or off the front wrongly", wrong);
    CHECK(on_total > 300); /* the fronts are not empty */
    const double two[4] = {0.7, -100.0, 0.7, -100.0};
    unsigned char f2[2];
    metrics_pareto(two, 2, 2, f2);
    CHECK(f2[0] == 1 && f2[1] == 0); /* equal points: the first only */
}

/* Non-dominated sorting against its definition: a point's rank is the
 * number of fronts peeled (by the brute force above's rule, with the
 * peeled points left out) before it is on one; NaN points get n. */
static void pareto_ranks(void)
{
    FsRng r;
    const uint64_t seed = 57;
    fs_rng_seed(&r, &seed, 1);
    int wrong = 0, deep = 0;
    for (int trial = 0; trial < 200; trial++) {
        const int n = 1 + (int)fs_rng_below(&r, 25), m = 2;
        double v[25 * 2];
        int rank[25], want[25];
        for (int i = 0; i < n * m; i++) v[i] = (double)fs_rng_below(&r, 5);
        if (trial % 5 == 0) v[1] = NAN;
        metrics_pareto_ranks(v, n, m, rank);
        for (int i = 0; i < n; i++) want[i] = isnan(v[i * m]) || isnan(v[i * m + 1]) ? n : -1;
        for (int front = 0; front < n; front++) {
            int fresh[25], any = 0;
            for (int i = 0; i < n; i++) {
                fresh[i] = 0;
                if (want[i] != -1) continue;
                int on = 1;
                for (int j = 0; j < n && on; j++) {
                    if (j == i || want[j] != -1) continue; /* ranked already (or NaN): left out */
                    const int ge = v[j * m] >= v[i * m] && v[j * m + 1] >= v[i * m + 1];
                    const int gt = v[j * m] > v[i * m] || v[j * m + 1] > v[i * m + 1];
                    if (ge && (gt || j < i)) on = 0;
                }
                fresh[i] = on;
            }
            for (int i = 0; i < n; i++)
                if (fresh[i]) want[i] = front, any = 1;
            if (!any) break;
        }
        for (int i = 0; i < n; i++) {
            wrong += rank[i] != want[i];
            deep += rank[i] >= 2 && rank[i] < n;
        }
    }
    CHECK_MSG(wrong == 0, "%d points ranked wrongly", wrong);
    CHECK(deep > 100); /* third fronts and beyond were exercised */
    /* predict_us: a fold's validation seconds over its residues, in us. */
    CHECK(metrics_predict_us(0.5, 250000) == 2.0);
    CHECK(isnan(metrics_predict_us(0.5, 0)));
}

/* A trial's objectives from its folds (the sampler's and the front's one
 * mapping): means of Q3, loss and forward time, summed seconds, params. */
static void objectives(void)
{
    const FsObjectiveFold f[2] = {{0.75, 0.5, 10.0, 0.5, 250000}, {0.25, 1.5, 30.0, 1.0, 250000}};
    CHECK(metrics_objective(FS_OBJ_Q3, f, 2, 7.0) == 0.5);
    CHECK(metrics_objective(FS_OBJ_LOSS, f, 2, 7.0) == 1.0);
    CHECK(metrics_objective(FS_OBJ_PARAMS, f, 2, 7.0) == 7.0);
    CHECK(metrics_objective(FS_OBJ_TRAIN_SECONDS, f, 2, 7.0) == 40.0);
    CHECK(metrics_objective(FS_OBJ_PREDICT_US, f, 2, 7.0) == 3.0);
    CHECK(isnan(metrics_objective(FS_OBJ_Q3, f, 0, 7.0)));
    CHECK(metrics_objective(FS_OBJ_PARAMS, f, 0, 7.0) == 7.0);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--dump")) return dump(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    t_distribution();
    worked_examples();
    pareto();
    pareto_ranks();
    objectives();
    false_positives(3, 1);
    false_positives(3, 2);
    false_positives(5, 1);
    return test_finish();
}
