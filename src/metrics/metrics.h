/*
 * metrics: scores on scored residues only, from a 3x3 confusion matrix
 * (rows = true class H E C, columns = predicted). Q3, per-class precision,
 * recall and Matthews correlation.
 */
#ifndef FS_METRICS_H
#define FS_METRICS_H

#include <stdint.h>

typedef struct {
    uint64_t confusion[3][3];
    uint64_t n;
    double q3;
    double precision[3], recall[3], mcc[3]; /* 0 where undefined (no predictions / no examples) */
} FsMetrics;

void metrics_from_confusion(FsMetrics *m, const uint64_t confusion[3][3]);

#endif
