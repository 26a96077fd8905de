/*
 * train/gemm_tile24.h: included by gemm.c alone, where FS_TILE24 (AVX
 * without AVX-512's wide tiles). The 4 x 24 tile that gemm_tile takes for
 * whole tiles of a 24-column slot (gemm_width).
 */
#ifndef FS_TRAIN_GEMM_TILE24_H
#define FS_TRAIN_GEMM_TILE24_H

/* 4 x 24, AVX2 only, whole tiles with C's columns contiguous: twelve
 * accumulators where 4 x 16 has eight. Two multiply-adds a cycle at a
 * latency of four keep eight in flight, so the 4 x 16 tile's k loop had no
 * slack for its loads and walks; with twelve it has. Every output is the
 * same chain of multiply-adds as in tile_full16, so results are identical.
 * Measured on a Zen 3: a chain model's training step 1% faster, its
 * predict 2% (the dense layer 3%), window models at batch 64 4%
 * (docs/benchmarks.md). Plain strides get their own loop: the two-level walks' bookkeeping did
 * not fit in the registers the twelve accumulators leave. */
#define TILE24_STEP(A_OFF, B_PTR)                                                                             \
    do {                                                                                                      \
        const float *b_ = (B_PTR);                                                                            \
        v8 bl = *(const v8 *)b_, bm = *(const v8 *)(b_ + 8), bh = *(const v8 *)(b_ + 16);                     \
        TILE_KEEP(bl, bm);                                                                                    \
        TILE_KEEP(bh, bh);                                                                                    \
        float x0 = r0[A_OFF], x1 = r1[A_OFF], x2 = r2[A_OFF], x3 = r3[A_OFF];                                 \
        a0l = vfma8s(x0, bl, a0l), a0m = vfma8s(x0, bm, a0m), a0h = vfma8s(x0, bh, a0h);                      \
        a1l = vfma8s(x1, bl, a1l), a1m = vfma8s(x1, bm, a1m), a1h = vfma8s(x1, bh, a1h);                      \
        a2l = vfma8s(x2, bl, a2l), a2m = vfma8s(x2, bm, a2m), a2h = vfma8s(x2, bh, a2h);                      \
        a3l = vfma8s(x3, bl, a3l), a3m = vfma8s(x3, bm, a3m), a3h = vfma8s(x3, bh, a3h);                      \
    } while (0)
FS_DEVICE static void tile_full24(int K, const float *const *arow, FsStride ak, const float *B, FsStride bk,
                                  float *const *crow)
{
    v8 a0l = {0}, a0m = {0}, a0h = {0}, a1l = {0}, a1m = {0}, a1h = {0};
    v8 a2l = {0}, a2m = {0}, a2h = {0}, a3l = {0}, a3m = {0}, a3h = {0};
    const float *r0 = arow[0], *r1 = arow[1], *r2 = arow[2], *r3 = arow[3];
    if (!ak.g && !bk.g) {
        const long as = ak.s, bs = bk.s;
        for (long k = 0; k < K; k++) TILE24_STEP(k * as, B + k * bs);
    } else {
        FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};
        for (int k = 0; k < K; k++) {
            TILE24_STEP(wa.off, B + wb.off);
            walk_next(&wa, ak);
            walk_next(&wb, bk);
        }
    }
    *(v8 *)crow[0] += a0l, *(v8 *)(crow[0] + 8) += a0m, *(v8 *)(crow[0] + 16) += a0h;
    *(v8 *)crow[1] += a1l, *(v8 *)(crow[1] + 8) += a1m, *(v8 *)(crow[1] + 16) += a1h;
    *(v8 *)crow[2] += a2l, *(v8 *)(crow[2] + 8) += a2m, *(v8 *)(crow[2] + 16) += a2h;
    *(v8 *)crow[3] += a3l, *(v8 *)(crow[3] + 8) += a3m, *(v8 *)(crow[3] + 16) += a3h;
}
#undef TILE24_STEP

#endif
