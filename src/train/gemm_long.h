/*
 * train/gemm_long.h: included by gemm.c alone, CPU build with AVX2's tiles
 * (FS_SIMD, not FS_WIDE_TILES). A weight gradient's GEMM sums over every
 * position of the batch: k runs to thousands while C (the layer's weights)
 * is small. Tile by tile, each 4 x 16 tile streamed all of k through its
 * rows of A and B, and a chain batch's activations and gradients (512 KB
 * each for 2,048 rows of 64 channels) outgrow L2: 45 GFLOP/s where the
 * forward GEMM ran at 77 (bench_chain_step). Here k is cut into blocks
 * whose rows of A and B stay in cache while every tile passes over them;
 * between blocks a tile's accumulators wait in a scratch copy of C. Each
 * output is therefore the chain of multiply-adds tile_full16 computes, from
 * zero, over k in ascending order, added to C once at the end: bit for bit
 * the same result.
 */
#ifndef FS_TRAIN_GEMM_LONG_H
#define FS_TRAIN_GEMM_LONG_H

#include <stdlib.h>
#include <string.h>

#define LONG_KB 128          /* k per block: 64 channels of A and B, 32 KB each */
#define LONG_MIN_K (4 * LONG_KB)
#define LONG_MAX_C (1L << 22) /* floats of scratch, at most (16 MB) */
#define LONG_TILE (MR * 2 * 8) /* a 4 x 16 tile's floats */

/* The 4 x 16 tile over k in [0, K) with plain strides, its accumulators
 * continued from S (the tile's 64 floats, row by row) and left there. A's
 * rows are ar apart, k steps as in A and bs in B. */
static void tile_chain16(int K, const float *A, long ar, long as, const float *B, long bs, float *S)
{
    v8 a0l = *(v8 *)(S + 0), a0h = *(v8 *)(S + 8), a1l = *(v8 *)(S + 16), a1h = *(v8 *)(S + 24);
    v8 a2l = *(v8 *)(S + 32), a2h = *(v8 *)(S + 40), a3l = *(v8 *)(S + 48), a3h = *(v8 *)(S + 56);
    for (int k = 0; k < K; k++) {
        v8 bl = *(const v8 *)(B + k * bs), bh = *(const v8 *)(B + k * bs + 8);
        TILE_KEEP(bl, bh);
        const float *a = A + k * as;
        const float x0 = a[0], x1 = a[ar], x2 = a[2 * ar], x3 = a[3 * ar];
        a0l = vfma8s(x0, bl, a0l);
        a0h = vfma8s(x0, bh, a0h);
        a1l = vfma8s(x1, bl, a1l);
        a1h = vfma8s(x1, bh, a1h);
        a2l = vfma8s(x2, bl, a2l);
        a2h = vfma8s(x2, bh, a2h);
        a3l = vfma8s(x3, bl, a3l);
        a3h = vfma8s(x3, bh, a3h);
    }
    *(v8 *)(S + 0) = a0l, *(v8 *)(S + 8) = a0h, *(v8 *)(S + 16) = a1l, *(v8 *)(S + 24) = a1h;
    *(v8 *)(S + 32) = a2l, *(v8 *)(S + 40) = a2h, *(v8 *)(S + 48) = a3l, *(v8 *)(S + 56) = a3h;
}

typedef struct {
    int M, N, K;
    long nt; /* tiles across N */
    const float *A, *B;
    FsStride am, ak, bk, cm;
    float *C, *S; /* S: LONG_TILE floats per tile, tile t at S + t * LONG_TILE */
} GemmLong;

/* Where the k-block that starts at k0 ends: LONG_KB on, or at the end of
 * k0's group of a two-level stride (within a group both walks are plain). */
static inline int long_block_end(const GemmLong *g, int k0)
{
    long end = k0 + LONG_KB < g->K ? k0 + LONG_KB : g->K;
    if (g->ak.g && (k0 / g->ak.g + 1) * g->ak.g < end) end = (k0 / g->ak.g + 1) * g->ak.g;
    return (int)end;
}

/* Tiles [lo, hi): every k-block over all of them in turn, then C += S. */
static void gemm_long_range(void *arg, long lo, long hi)
{
    const GemmLong *g = arg;
    for (int k0 = 0, k1; k0 < g->K; k0 = k1) {
        k1 = long_block_end(g, k0);
        const float *A = g->A + st_off(g->ak, k0), *B = g->B + st_off(g->bk, k0);
        for (long t = lo; t < hi; t++) {
            const long i0 = (t / g->nt) * MR, n0 = (t % g->nt) * 16;
            tile_chain16(k1 - k0, A + i0 * g->am.s, g->am.s, g->ak.s, B + n0, g->bk.s, g->S + t * LONG_TILE);
        }
    }
    for (long t = lo; t < hi; t++) {
        const long i0 = (t / g->nt) * MR, n0 = (t % g->nt) * 16;
        const float *s = g->S + t * LONG_TILE;
        for (int r = 0; r < MR; r++)
            for (int j = 0; j < 16; j++) g->C[(i0 + r) * g->cm.s + n0 + j] += s[r * 16 + j];
    }
}

/* C += A * B as above when it qualifies: k long and C made of whole tiles,
 * A's and C's rows plain, C's columns contiguous, k's walks both plain or
 * two-level in the same groups of at least a block. Returns 0 otherwise,
 * or when the scratch cannot be had, for the caller's tiles to run. */
static int gemm_long(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B, FsStride bk,
                     float *C, FsStride cm, long cn)
{
    if (K < LONG_MIN_K || M % MR || N % 16 || am.g || cm.g || cn != 1 || ak.g != bk.g ||
        (ak.g && ak.g < LONG_KB) || (long)M * N > LONG_MAX_C)
        return 0;
    const long nt = N / 16, tiles = (long)(M / MR) * nt;
    float *S = fs_aligned_try_alloc(sizeof(float) * (size_t)(tiles * LONG_TILE));
    if (!S) return 0; /* short of memory: the tiles need none */
    memset(S, 0, sizeof(float) * (size_t)(tiles * LONG_TILE));
    GemmLong g = {M, N, K, nt, A, B, am, ak, bk, cm, C, S};
    const double work = (double)M * N * K;
    team_for(tiles, work >= GEMM_TEAM_MIN * team_min_work() ? work : 0.0, gemm_long_range, &g);
    free(S);
    return 1;
}

#endif
