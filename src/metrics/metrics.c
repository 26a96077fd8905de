/*
 * metrics: Q3, per-class precision, recall and one-vs-rest Matthews
 * correlation from a 3x3 confusion matrix (rows true, columns predicted).
 *
 * Counts stay uint64 (sums of counts cannot overflow for any realistic data
 * set); products go through double, whose 53-bit mantissa keeps MCC's
 * relative error near 1e-16 even for billions of residues.
 */
#include "metrics/metrics.h"

#include <math.h>   /* sqrt */
#include <string.h> /* memcpy, memset, strcmp */

const char *const metrics_kind_names[FS_METRIC_COUNT] = {"q3", "loss", "q8"};

const char *metrics_kind_name(FsMetricKind m) { return (unsigned)m < FS_METRIC_COUNT ? metrics_kind_names[m] : "?"; }

int metrics_kind_parse(const char *name)
{
    for (int k = 0; k < FS_METRIC_COUNT; k++)
        if (!strcmp(name, metrics_kind_names[k])) return k;
    return -1;
}

static double metrics_ratio(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : 0.0;
}

void metrics_reduce_confusion(int classes, const uint64_t in[FS_MAX_CLASSES][FS_MAX_CLASSES],
                              uint64_t out[FS_MAX_CLASSES][FS_MAX_CLASSES])
{
    const int K = fs_classes(classes);
    uint64_t r[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}};
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++) r[fs_class_reduce(K, a)][fs_class_reduce(K, b)] += in[a][b];
    memcpy(out, r, sizeof r);
}

void metrics_from_confusion(FsMetrics *m, const uint64_t confusion[FS_CLASSES][FS_CLASSES])
{
    uint64_t c[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}};
    for (int i = 0; i < FS_CLASSES; i++)
        for (int j = 0; j < FS_CLASSES; j++) c[i][j] = confusion[i][j];
    metrics_from_classes(m, FS_CLASSES, c);
}

void metrics_from_classes(FsMetrics *m, int classes, const uint64_t confusion[FS_MAX_CLASSES][FS_MAX_CLASSES])
{
    /* Copy first: the caller may pass m->confusion itself. */
    const int K = fs_classes(classes);
    uint64_t c[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}}, r3[FS_MAX_CLASSES][FS_MAX_CLASSES];
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) c[i][j] = confusion[i][j];
    memset(m, 0, sizeof *m);
    memcpy(m->confusion, c, sizeof c);
    m->classes = K;

    uint64_t rowsum[FS_MAX_CLASSES] = {0}, colsum[FS_MAX_CLASSES] = {0}, trace = 0, trace3 = 0, n = 0;
    for (int i = 0; i < K; i++) {
        for (int j = 0; j < K; j++) {
            rowsum[i] += c[i][j];
            colsum[j] += c[i][j];
            n += c[i][j];
        }
        trace += c[i][i];
    }
    metrics_reduce_confusion(K, c, r3);
    for (int i = 0; i < FS_CLASSES; i++) trace3 += r3[i][i];
    m->n = n;
    m->q3 = metrics_ratio(trace3, n);
    m->q8 = K == FS_CLASSES8 ? metrics_ratio(trace, n) : NAN;

    for (int k = 0; k < K; k++) {
        uint64_t tp = c[k][k];
        uint64_t fp = colsum[k] - tp; /* predicted k, truly another class */
        uint64_t fn = rowsum[k] - tp; /* truly k, predicted another class */
        uint64_t tn = n - tp - fp - fn;
        m->precision[k] = metrics_ratio(tp, colsum[k]);
        m->recall[k] = metrics_ratio(tp, rowsum[k]);
        /* A zero factor means a constant prediction or a constant truth:
         * MCC is undefined there and reported as 0. */
        if (tp + fp == 0 || tp + fn == 0 || tn + fp == 0 || tn + fn == 0) {
            m->mcc[k] = 0.0;
            continue;
        }
        double num = (double)tp * (double)tn - (double)fp * (double)fn;
        double den = sqrt((double)(tp + fp) * (double)(tp + fn) * (double)(tn + fp) *
                          (double)(tn + fn));
        m->mcc[k] = num / den;
    }
}
