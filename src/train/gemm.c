/*
 * gemm: the one matrix kernel of the trainer (single source, see core.h).
 *
 * Convolutions, dense layers and their gradients all reduce to
 * C += A * B with strided rows (model.h explains the padded layout), so a
 * single register-blocked kernel serves them all. A tile is MR rows by NR
 * columns of C kept in registers while k runs; on the CPU the tiles are a
 * plain loop, on the GPU each thread takes tiles.
 *
 * C may be stored transposed (column stride cn != 1): the dense layer's
 * input gradient is computed as dX^T = W * dZ^T, which needs no transpose
 * of the (large) weight matrix, only of the (small) batch gradient.
 */
#include "train/core.h"

#define MR 4
#define NR 16

FS_DEVICE static inline long st_off(FsStride st, long i)
{
    return st.g ? (i / st.g) * st.gs + (i % st.g) * st.s : i * st.s;
}

/* Walks off(st, k) for k = 0, 1, 2, ... without divisions. */
typedef struct {
    long base, r, off;
} FsWalk;

FS_DEVICE static inline void walk_next(FsWalk *w, FsStride st)
{
    if (st.g && ++w->r == st.g) {
        w->r = 0;
        w->base += st.gs;
        w->off = w->base;
    } else {
        w->off += st.s;
    }
}

/* Adds an mr x nr accumulator block to C rows (column stride cn). */
FS_DEVICE static inline void tile_store(float acc[MR][NR], int mr, int nr, float *const *crow, long cn)
{
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++) crow[r][j * cn] += acc[r][j];
}

#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(FS_EMULATE_BLOCK)
/* GCC keeps a float[4][16] accumulator on the stack (a load and a store
 * per multiply-add); vector types put it in registers. Same products in
 * the same order as the portable tile below, so results are identical. */
typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef float v8 __attribute__((vector_size(32), aligned(4)));

#define TILE_VEC(NAME, VT, W)                                                                   \
    FS_DEVICE static void NAME(int K, const float *const *arow, FsStride ak, const float *B,    \
                               FsStride bk, float *const *crow, long cn)                        \
    {                                                                                           \
        VT acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};                                      \
        const float *a0 = arow[0], *a1 = arow[1], *a2 = arow[2], *a3 = arow[3];                 \
        FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};                                                  \
        for (int k = 0; k < K; k++) {                                                           \
            VT b = *(const VT *)(B + wb.off);                                                   \
            acc0 += a0[wa.off] * b;                                                             \
            acc1 += a1[wa.off] * b;                                                             \
            acc2 += a2[wa.off] * b;                                                             \
            acc3 += a3[wa.off] * b;                                                             \
            walk_next(&wa, ak);                                                                 \
            walk_next(&wb, bk);                                                                 \
        }                                                                                       \
        if (cn == 1) {                                                                          \
            *(VT *)crow[0] += acc0;                                                             \
            *(VT *)crow[1] += acc1;                                                             \
            *(VT *)crow[2] += acc2;                                                             \
            *(VT *)crow[3] += acc3;                                                             \
        } else {                                                                                \
            float acc[MR][NR];                                                                  \
            *(VT *)acc[0] = acc0;                                                               \
            *(VT *)acc[1] = acc1;                                                               \
            *(VT *)acc[2] = acc2;                                                               \
            *(VT *)acc[3] = acc3;                                                               \
            tile_store(acc, MR, W, crow, cn);                                                   \
        }                                                                                       \
    }
TILE_VEC(tile_full16, v16, 16)
TILE_VEC(tile_full8, v8, 8)
#endif

/* Any tile up to MR x NR: the portable form (and the GPU's). */
FS_DEVICE static void tile_edge(int K, int mr, int nr, const float *const *arow, FsStride ak, const float *B,
                                FsStride bk, float *const *crow, long cn)
{
    float acc[MR][NR];
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++) acc[r][j] = 0.0f;
    FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};
    for (int k = 0; k < K; k++) {
        const float *b = B + wb.off;
        for (int r = 0; r < mr; r++) {
            float a = arow[r][wa.off];
            for (int j = 0; j < nr; j++) acc[r][j] += a * b[j];
        }
        walk_next(&wa, ak);
        walk_next(&wb, bk);
    }
    tile_store(acc, mr, nr, crow, cn);
}

FS_DEVICE void ops_gemm(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B,
                        FsStride bk, float *C, FsStride cm, long cn)
{
    long mt = (M + MR - 1) / MR, nt = (N + NR - 1) / NR;
    FS_PARFOR(t, mt * nt)
    {
        long i0 = (t / nt) * MR, n0 = (t % nt) * NR;
        int mr = M - i0 < MR ? (int)(M - i0) : MR;
        int nr = N - n0 < NR ? (int)(N - n0) : NR;
        const float *arow[MR];
        float *crow[MR];
        for (int r = 0; r < MR; r++) {
            long i = i0 + (r < mr ? r : 0);
            arow[r] = A + st_off(am, i);
            crow[r] = C + st_off(cm, i) + n0 * cn;
        }
#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(FS_EMULATE_BLOCK)
        if (mr == MR && nr == NR) {
            tile_full16(K, arow, ak, B + n0, bk, crow, cn);
            continue;
        }
        if (mr == MR && nr == 8) {
            tile_full8(K, arow, ak, B + n0, bk, crow, cn);
            continue;
        }
#endif
        tile_edge(K, mr, nr, arow, ak, B + n0, bk, crow, cn);
    }
    FS_SYNC();
}
