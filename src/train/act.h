/*
 * train/act.h: internal to the train module (single source): activations
 * and row helpers over padded [B][L + 2P][C] tensors, interior rows only.
 */
#ifndef FS_TRAIN_ACT_H
#define FS_TRAIN_ACT_H

#include "model/model.h"

/* In place on a; aux receives the sigmoid for swish. */
FS_DEVICE void act_forward(FsAct act, float param, float *a, float *aux, int B, int L, int P, int C);
FS_DEVICE float act_grad(FsAct act, float param, float a, float s);
/* d *= act'(.) given the output a (and aux). */
FS_DEVICE void act_backward(FsAct act, float param, const float *a, const float *aux, float *d, int B, int L,
                            int P, int C);
/* Interior rows = v (a C-vector), or 0 when v is NULL. */
FS_DEVICE void rows_set(float *x, const float *v, int B, int L, int P, int C);
/* out[c] += sum over interior rows of x[., c]. */
FS_DEVICE void rows_colsum(float *out, const float *x, int B, int L, int P, int C);

/* dst [cols][rows] = transpose of src [rows][cols]. */
FS_DEVICE void ops_transpose(const float *src, int rows, int cols, float *dst);

#endif
