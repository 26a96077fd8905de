/*
 * test_metrics: Q3, precision, recall and one-vs-rest MCC on small confusion
 * matrices whose values are worked out by hand in the comments.
 */
#include "metrics/metrics.h"

#include "test.h"

enum { H = 0, E = 1, C = 2 };

static void test_typical(void)
{
    /* rows true H E C, columns predicted:
     *        H   E   C   | row
     *   H   50   5  10   |  65
     *   E    4  30   6   |  40
     *   C    6   5  84   |  95
     *  col  60  40 100   | n = 200, trace = 164 */
    const uint64_t cm[3][3] = {{50, 5, 10}, {4, 30, 6}, {6, 5, 84}};
    FsMetrics m;
    metrics_from_confusion(&m, cm);
    CHECK(m.n == 200);
    for (int a = 0; a < 3; a++) CHECK(memcmp(m.confusion[a], cm[a], sizeof cm[a]) == 0);
    CHECK_NEAR(m.q3, 0.82, 1e-15);
    CHECK_NEAR(m.precision[H], 50.0 / 60.0, 1e-15);
    CHECK_NEAR(m.precision[E], 0.75, 1e-15);
    CHECK_NEAR(m.precision[C], 0.84, 1e-15);
    CHECK_NEAR(m.recall[H], 50.0 / 65.0, 1e-15);
    CHECK_NEAR(m.recall[E], 0.75, 1e-15);
    CHECK_NEAR(m.recall[C], 84.0 / 95.0, 1e-15);
    /* H: TP 50, FP 60-50 = 10, FN 65-50 = 15, TN 200-50-10-15 = 125
     *    (50*125 - 10*15) / sqrt(60*65*135*140) = 6100 / sqrt(73710000) = 0.710504167 */
    CHECK_NEAR(m.mcc[H], 0.7105041671115224, 1e-12);
    /* E: TP 30, FP 10, FN 10, TN 150
     *    (30*150 - 10*10) / sqrt(40*40*160*160) = 4400 / 6400 = 0.6875 */
    CHECK_NEAR(m.mcc[E], 0.6875, 1e-15);
    /* C: TP 84, FP 16, FN 11, TN 89
     *    (84*89 - 16*11) / sqrt(100*95*105*100) = 7300 / sqrt(99750000) = 0.730914215 */
    CHECK_NEAR(m.mcc[C], 0.7309142145097679, 1e-12);

    /* Scale invariance with counts whose products exceed 2^64. */
    uint64_t big[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) big[i][j] = cm[i][j] * 1000000000ull;
    FsMetrics mb;
    metrics_from_confusion(&mb, (const uint64_t(*)[3])big);
    CHECK(mb.n == 200000000000ull);
    CHECK_NEAR(mb.q3, 0.82, 1e-15);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(mb.mcc[k], m.mcc[k], 1e-12);
        CHECK_NEAR(mb.precision[k], m.precision[k], 1e-15);
        CHECK_NEAR(mb.recall[k], m.recall[k], 1e-15);
    }
}

static void test_degenerate(void)
{
    FsMetrics m;
    /* E never occurs, true or predicted:
     *        H  E  C  | row
     *   H   10  0  2  | 12
     *   E    0  0  0  |  0
     *   C    3  0  5  |  8
     *  col  13  0  7  | n = 20, trace = 15 */
    const uint64_t cm[3][3] = {{10, 0, 2}, {0, 0, 0}, {3, 0, 5}};
    metrics_from_confusion(&m, cm);
    CHECK(m.n == 20);
    CHECK_NEAR(m.q3, 0.75, 1e-15);
    CHECK_NEAR(m.precision[H], 10.0 / 13.0, 1e-15);
    CHECK_NEAR(m.precision[C], 5.0 / 7.0, 1e-15);
    CHECK_NEAR(m.recall[H], 10.0 / 12.0, 1e-15);
    CHECK_NEAR(m.recall[C], 5.0 / 8.0, 1e-15);
    /* E: no predictions, no examples: everything 0, not NaN. */
    CHECK(m.precision[E] == 0.0 && m.recall[E] == 0.0 && m.mcc[E] == 0.0);
    /* H: TP 10, FP 3, FN 2, TN 5: (50 - 6) / sqrt(13*12*7*8) = 44 / sqrt(8736) = 0.470756542
     * C: TP 5, FP 2, FN 3, TN 10: (50 - 6) / sqrt(7*8*13*12), the same (two classes). */
    CHECK_NEAR(m.mcc[H], 0.47075654176200415, 1e-12);
    CHECK_NEAR(m.mcc[C], 0.47075654176200415, 1e-12);

    /* E occurs but is never predicted: precision and MCC 0, recall 0/3.
     * H: TP 5, FP 2, FN 0, TN 5: (25 - 0) / sqrt(7*5*5*7) = 25/35 */
    const uint64_t never[3][3] = {{5, 0, 0}, {2, 0, 1}, {0, 0, 4}};
    metrics_from_confusion(&m, never);
    CHECK(m.n == 12);
    CHECK_NEAR(m.q3, 9.0 / 12.0, 1e-15);
    CHECK(m.precision[E] == 0.0 && m.recall[E] == 0.0 && m.mcc[E] == 0.0);
    CHECK_NEAR(m.mcc[H], 25.0 / 35.0, 1e-15);

    /* Perfect and perfectly wrong. */
    const uint64_t diag[3][3] = {{3, 0, 0}, {0, 4, 0}, {0, 0, 5}};
    metrics_from_confusion(&m, diag);
    CHECK(m.q3 == 1.0);
    for (int k = 0; k < 3; k++)
        CHECK(m.precision[k] == 1.0 && m.recall[k] == 1.0 && fabs(m.mcc[k] - 1.0) < 1e-15);
    /* H and C swapped: H: TP 0, FP 5, FN 5, TN 0: (0 - 25) / sqrt(5*5*5*5) = -1 */
    const uint64_t swap[3][3] = {{0, 0, 5}, {0, 0, 0}, {5, 0, 0}};
    metrics_from_confusion(&m, swap);
    CHECK(m.q3 == 0.0);
    CHECK_NEAR(m.mcc[H], -1.0, 1e-15);
    CHECK_NEAR(m.mcc[C], -1.0, 1e-15);

    /* Only one class at all: TN = 0 and FP = 0 make a zero factor: MCC 0. */
    const uint64_t one[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 9}};
    metrics_from_confusion(&m, one);
    CHECK(m.q3 == 1.0 && m.precision[C] == 1.0 && m.recall[C] == 1.0 && m.mcc[C] == 0.0);

    /* Empty matrix. */
    const uint64_t zero[3][3] = {{0}};
    metrics_from_confusion(&m, zero);
    CHECK(m.n == 0 && m.q3 == 0.0);
    for (int k = 0; k < 3; k++)
        CHECK(m.precision[k] == 0.0 && m.recall[k] == 0.0 && m.mcc[k] == 0.0);
}

static void test_alias(void)
{
    /* The input may be the struct's own matrix. */
    FsMetrics m;
    memset(&m, 0, sizeof m);
    const uint64_t cm[3][3] = {{50, 5, 10}, {4, 30, 6}, {6, 5, 84}};
    memcpy(m.confusion, cm, sizeof cm);
    metrics_from_confusion(&m, (const uint64_t(*)[3])m.confusion);
    CHECK(m.n == 200);
    CHECK_NEAR(m.q3, 0.82, 1e-15);
    CHECK_NEAR(m.mcc[E], 0.6875, 1e-15);
}

int main(void)
{
    test_typical();
    test_degenerate();
    test_alias();
    return test_finish();
}
