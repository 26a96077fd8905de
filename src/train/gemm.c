/*
 * gemm: the one matrix kernel of the trainer (single source, see core.h).
 *
 * Convolutions, dense layers and their gradients all reduce to
 * C += A * B with strided rows (model.h explains the padded layout), so a
 * single register-blocked kernel serves them all. A tile is MR rows by NR
 * columns of C kept in registers while k runs; on the CPU the tiles are a
 * plain loop, on the GPU each thread takes tiles.
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

/* A full MR x NR tile: fixed trip counts so the compiler keeps acc in
 * vector registers and vectorises the NR loop. */
FS_DEVICE static void tile_full(int K, const float *const *arow, FsStride ak, const float *B, FsStride bk,
                                float *const *crow)
{
#if defined(__GNUC__) && !defined(__CUDACC__)
    /* GCC keeps a float[4][16] accumulator on the stack; vector types put
     * it in registers. Same products, same order as the portable loop. */
    typedef float v16 __attribute__((vector_size(64), aligned(4)));
    v16 acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};
    const float *a0 = arow[0], *a1 = arow[1], *a2 = arow[2], *a3 = arow[3];
    FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};
    for (int k = 0; k < K; k++) {
        v16 b = *(const v16 *)(B + wb.off);
        acc0 += a0[wa.off] * b;
        acc1 += a1[wa.off] * b;
        acc2 += a2[wa.off] * b;
        acc3 += a3[wa.off] * b;
        walk_next(&wa, ak);
        walk_next(&wb, bk);
    }
    *(v16 *)crow[0] += acc0;
    *(v16 *)crow[1] += acc1;
    *(v16 *)crow[2] += acc2;
    *(v16 *)crow[3] += acc3;
#else
    float acc[MR][NR];
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++) acc[r][j] = 0.0f;
    FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};
    for (int k = 0; k < K; k++) {
        const float *b = B + wb.off;
        for (int r = 0; r < MR; r++) {
            float a = arow[r][wa.off];
            for (int j = 0; j < NR; j++) acc[r][j] += a * b[j];
        }
        walk_next(&wa, ak);
        walk_next(&wb, bk);
    }
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++) crow[r][j] += acc[r][j];
#endif
}

/* An edge tile: mr <= MR rows, nr <= NR columns, same summation order. */
FS_DEVICE static void tile_edge(int K, int mr, int nr, const float *const *arow, FsStride ak, const float *B,
                                FsStride bk, float *const *crow)
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
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++) crow[r][j] += acc[r][j];
}

FS_DEVICE void ops_gemm(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B,
                        FsStride bk, float *C, FsStride cm)
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
            crow[r] = C + st_off(cm, i) + n0;
        }
        if (mr == MR && nr == NR)
            tile_full(K, arow, ak, B + n0, bk, crow);
        else
            tile_edge(K, mr, nr, arow, ak, B + n0, bk, crow);
    }
    FS_SYNC();
}
