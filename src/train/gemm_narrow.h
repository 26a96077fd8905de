/*
 * train/gemm_narrow.h: included by gemm.c alone, CPU vector build only
 * (FS_SIMD). C += A * B where C has at most NARROW_N columns: a chain
 * model's output layer (3 classes per residue, a width-1 convolution) in
 * its forward pass and its weight gradient. gemm.c's tiles put C's columns
 * in vector lanes, so 3 columns left 13 of 16 lanes idle, or (B's row
 * stride under 8) fell to the scalar tile_edge: about a fifth of an R1
 * chain model's step for 1% of its multiply-adds (bench/run-chain). Here
 * the lanes are 8 rows of C. Every element is still one multiply-add chain
 * over k in ascending order from zero, added to C once, as in every tile of
 * gemm.c, so the results are bit for bit the same.
 */
#ifndef FS_TRAIN_GEMM_NARROW_H
#define FS_TRAIN_GEMM_NARROW_H

#define NARROW_N 4

/* Rows i0..i0+7 where A's rows are adjacent floats (am plain, stride 1:
 * the weight gradient's x^T): the 8 rows' k-th values are one vector. */
static void narrow_adjacent8(long i0, int N, int K, const float *A, FsStride ak, const float *B, FsStride bk,
                             float *C, long cs)
{
    v8 acc[NARROW_N] = {{0}};
    FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};
    for (int k = 0; k < K; k++) {
        const v8 a = *(const v8 *)(A + i0 + wa.off);
        const float *b = B + wb.off;
#pragma GCC unroll 4
        for (int j = 0; j < N; j++) acc[j] = vfma8s(b[j], a, acc[j]);
        walk_next(&wa, ak);
        walk_next(&wb, bk);
    }
    for (int r = 0; r < 8; r++)
        for (int j = 0; j < N; j++) C[(i0 + r) * cs + j] += acc[j][r];
}

/* Rows i0..i0+7 where each row of A is K adjacent floats (ak plain, stride
 * 1: the forward pass): 8 x 8 blocks of A transposed in registers, the
 * last K % 8 values of each row lane by lane. */
static void narrow_rows8(long i0, int N, int K, const float *A, FsStride am, const float *B, long bs, float *C,
                         FsStride cm)
{
    long ao[8], co[8];
    st_offs(am, i0, MR, ao);
    st_offs(am, i0 + MR, MR, ao + MR);
    st_offs(cm, i0, MR, co);
    st_offs(cm, i0 + MR, MR, co + MR);
    v8 acc[NARROW_N] = {{0}};
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        v8 t[8];
        for (int r = 0; r < 8; r++) t[r] = *(const v8 *)(A + ao[r] + k);
        simd_transpose8(t); /* t[q]: the 8 rows' values at k + q */
        for (int q = 0; q < 8; q++) {
            const float *b = B + (long)(k + q) * bs;
#pragma GCC unroll 4
            for (int j = 0; j < N; j++) acc[j] = vfma8s(b[j], t[q], acc[j]);
        }
    }
    float s[NARROW_N][8];
    for (int j = 0; j < N; j++) *(v8 *)s[j] = acc[j];
    for (; k < K; k++)
        for (int r = 0; r < 8; r++)
            for (int j = 0; j < N; j++) s[j][r] = FS_FMA(A[ao[r] + k], B[(long)k * bs + j], s[j][r]);
    for (int r = 0; r < 8; r++)
        for (int j = 0; j < N; j++) C[co[r] + j] += s[j][r];
}

/* The rows of C (a multiple of 8 from row 0) that the narrow tiles take;
 * 0 where C is wide, stored transposed, or neither layout of A holds. */
static long gemm_narrow(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B, FsStride bk,
                        float *C, FsStride cm, long cn)
{
    if (N > NARROW_N || cn != 1) return 0;
    const long M8 = (long)M / 8 * 8;
    if (!am.g && am.s == 1 && !cm.g) {
        for (long i0 = 0; i0 < M8; i0 += 8) narrow_adjacent8(i0, N, K, A, ak, B, bk, C, cm.s);
        return M8;
    }
    if (!ak.g && ak.s == 1 && !bk.g) {
        for (long i0 = 0; i0 < M8; i0 += 8) narrow_rows8(i0, N, K, A, am, B, bk.s, C, cm);
        return M8;
    }
    return 0;
}

#endif
