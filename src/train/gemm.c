/*
 * gemm: the one matrix kernel of the trainer (single source, see core.h).
 *
 * Convolutions, dense layers and their gradients all reduce to
 * C += A * B with strided rows (model.h explains the padded layout), so a
 * single register-blocked kernel serves them all. A tile is MR rows by NR
 * columns of C kept in registers while k runs; on the CPU the tiles are a
 * loop that idle pool threads may share (team.h), on the GPU each thread
 * takes tiles.
 *
 * C may be stored transposed (column stride cn != 1): the dense layer's
 * input gradient is computed as dX^T = W * dZ^T, which needs no transpose
 * of the (large) weight matrix, only of the (small) batch gradient.
 */
#include "train/act.h"
#include "train/core.h"
#include "train/simd.h"
#include "train/team.h"

#define MR FS_GEMM_MR
#if FS_ONE_THREAD
#define NR 16
#else
#define NR 4
#endif
/* AVX2's 4 x 24 tiles (tile_full24): twelve accumulators fill the 16
 * vector registers of AVX; without AVX (SSE's 16 halves) they would spill. */
#if defined(FS_SIMD) && !FS_WIDE_TILES && defined(__AVX__)
#define FS_TILE24 1
#else
#define FS_TILE24 0
#endif

/* GEMM_UNROLL: unroll the next loop. nvcc must, to keep the block's
 * accumulators in registers; so must GCC for the emulated block (the CUDA
 * stand-in, test_block): rolled, its tile kept them on the stack, three
 * quarters of an emulated fit's time (and under ASan every access
 * checked). Unrolling reorders no operation. */
#if defined(__CUDACC__) || defined(__clang__)
#define GEMM_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define GEMM_UNROLL _Pragma("GCC unroll 16")
#else
#define GEMM_UNROLL
#endif
/* GEMM_UNROLL_K: the block's whole-tile k loop (gemm_block.h: gemm_full)
 * unrolled twice by nvcc, no more, for its registers; GCC's choice
 * elsewhere. */
#if defined(__CUDACC__)
#define GEMM_UNROLL_K _Pragma("unroll 2")
#else
#define GEMM_UNROLL_K
#endif
/* GEMM_OPAQUE(p): nvcc takes the pointer p as it is from here on (an
 * empty asm that may have changed it). Without it nvcc splits a row's
 * pointer back into the buffer's base and the row's 64-bit offset and
 * rebuilds the address at every load of the k loop (four instructions
 * where one multiply-add of the 32-bit offset onto the pointer does). */
#if defined(__CUDACC__)
#define GEMM_OPAQUE(p) asm("" : "+l"(p))
#else
#define GEMM_OPAQUE(p) ((void)(p))
#endif

FS_DEVICE static inline long st_off(FsStride st, long i)
{
    return st.g ? (i / st.g) * st.gs + (i % st.g) * st.s : i * st.s;
}

/* Offsets of rows i0 .. i0 + MR - 1 (rows past mr repeat row i0, whose
 * results are not stored): one division per tile, not one per row. */
FS_DEVICE static inline void st_offs(FsStride st, long i0, int mr, long off[MR])
{
    long q = st.g ? i0 / st.g : 0, rem = st.g ? i0 % st.g : i0;
    for (int r = 0; r < MR; r++) {
        off[r] = q * st.gs + rem * st.s;
        if (++rem == st.g) {
            rem = 0;
            q++;
        }
    }
    for (int r = mr; r < MR; r++) off[r] = off[0];
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

#ifdef FS_SIMD
/* GCC keeps a float[4][16] accumulator on the stack (a load and a store
 * per multiply-add); vector types put it in registers. Same products in
 * the same order as the portable tile below, so results are identical.
 * A partial tile (mr rows, nr columns) computes full vectors and stores
 * only its part: rows past mr repeat row 0 (see st_offs), columns past nr
 * read B within its row stride (ops_gemm's contract) and are dropped. */
#define TILE_VEC(NAME, VT, W, FMAS)                                                                 \
    FS_DEVICE static void NAME(int K, int mr, int nr, const float *const *arow, FsStride ak,    \
                               const float *B, FsStride bk, float *const *crow, long cn)        \
    {                                                                                           \
        VT acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};                                      \
        const float *a0 = arow[0], *a1 = arow[1], *a2 = arow[2], *a3 = arow[3];                 \
        FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};                                                  \
        for (int k = 0; k < K; k++) {                                                           \
            VT b = *(const VT *)(B + wb.off);                                                   \
            acc0 = FMAS(a0[wa.off], b, acc0);                                                   \
            acc1 = FMAS(a1[wa.off], b, acc1);                                                   \
            acc2 = FMAS(a2[wa.off], b, acc2);                                                   \
            acc3 = FMAS(a3[wa.off], b, acc3);                                                   \
            walk_next(&wa, ak);                                                                 \
            walk_next(&wb, bk);                                                                 \
        }                                                                                       \
        if (cn == 1 && mr == MR && nr == W) {                                                   \
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
            tile_store(acc, mr, nr, crow, cn);                                                  \
        }                                                                                       \
    }
#if FS_WIDE_TILES
TILE_VEC(tile_full16, v16, 16, vfma16s)
#endif
TILE_VEC(tile_full8, v8, 8, vfma8s)

/* 8 x 8 (nr <= 8 columns stored): eight independent multiply-add chains
 * where a 4 x 8 tile has four, half of what the FMA units' latency needs
 * (the dense input gradient at batch 8, inside the fused update; see
 * ops_gemm_rows). Plain strides only. */
FS_DEVICE static void tile_8x8(int K, int nr, const float *const *arow, long as, const float *B, long bs,
                               float *const *crow, long cn)
{
    v8 acc[8] = {{0}};
    const float *a[8];
    for (int r = 0; r < 8; r++) a[r] = arow[r];
    for (int k = 0; k < K; k++) {
        v8 b = *(const v8 *)(B + k * bs);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) acc[r] = vfma8s(a[r][k * as], b, acc[r]);
    }
    if (cn != 1 && crow[7] == crow[0] + 7) {
        /* C is stored transposed with its rows adjacent (the dense input
         * gradient): transpose the block in registers, then one vector add
         * per column instead of eight scalar ones. */
        simd_transpose8(acc);
        for (int j = 0; j < nr; j++) *(v8 *)(crow[0] + j * cn) += acc[j];
        return;
    }
    for (int r = 0; r < 8; r++)
        for (int j = 0; j < nr; j++) crow[r][j * cn] += acc[r][j];
}

#if FS_WIDE_TILES
/* 8 x 32 for weight gradients whose rows are adjacent floats (am plain,
 * stride 1): sixteen accumulators, each k's two B vectors serve eight rows,
 * and the two-level walks are paid once per 16 multiply-adds. */
FS_DEVICE static void tile_8x32(int K, const float *a, FsStride ak, const float *B, FsStride bk, float *const *crow)
{
    v16 lo[8] = {{0}}, hi[8] = {{0}};
    FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};
    for (int k = 0; k < K; k++) {
        const v16 bl = *(const v16 *)(B + wb.off), bh = *(const v16 *)(B + wb.off + 16);
        const float *ak0 = a + wa.off;
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            lo[r] = vfma16s(ak0[r], bl, lo[r]);
            hi[r] = vfma16s(ak0[r], bh, hi[r]);
        }
        walk_next(&wa, ak);
        walk_next(&wb, bk);
    }
    for (int r = 0; r < 8; r++) {
        *(v16 *)crow[r] += lo[r];
        *(v16 *)(crow[r] + 16) += hi[r];
    }
}
#endif

/* 4 x 2W: two vectors of W per row, half the broadcasts per multiply-add.
 * With AVX-512 the 4 x 32 tile (W = 16); with AVX2 it is the 4 x 16 tile
 * (W = 8: eight accumulators, where a v16 would be lowered through the
 * stack; simd.h). */
#define TILE_PAIR(NAME, VT, W, FMAS)                                                                         \
    FS_DEVICE static void NAME(int K, int mr, int nr, const float *const *arow, FsStride ak, const float *B, \
                               FsStride bk, float *const *crow, long cn)                                    \
    {                                                                                                       \
        VT a0l = {0}, a0h = {0}, a1l = {0}, a1h = {0}, a2l = {0}, a2h = {0}, a3l = {0}, a3h = {0};          \
        const float *r0 = arow[0], *r1 = arow[1], *r2 = arow[2], *r3 = arow[3];                             \
        FsWalk wa = {0, 0, 0}, wb = {0, 0, 0};                                                              \
        for (int k = 0; k < K; k++) {                                                                       \
            VT bl = *(const VT *)(B + wb.off), bh = *(const VT *)(B + wb.off + W);                          \
            TILE_KEEP(bl, bh);                                                                              \
            float x0 = r0[wa.off], x1 = r1[wa.off], x2 = r2[wa.off], x3 = r3[wa.off];                       \
            a0l = FMAS(x0, bl, a0l);                                                                        \
            a0h = FMAS(x0, bh, a0h);                                                                        \
            a1l = FMAS(x1, bl, a1l);                                                                        \
            a1h = FMAS(x1, bh, a1h);                                                                        \
            a2l = FMAS(x2, bl, a2l);                                                                        \
            a2h = FMAS(x2, bh, a2h);                                                                        \
            a3l = FMAS(x3, bl, a3l);                                                                        \
            a3h = FMAS(x3, bh, a3h);                                                                        \
            walk_next(&wa, ak);                                                                             \
            walk_next(&wb, bk);                                                                             \
        }                                                                                                   \
        if (cn == 1 && mr == MR && nr == 2 * W) {                                                           \
            *(VT *)crow[0] += a0l, *(VT *)(crow[0] + W) += a0h;                                             \
            *(VT *)crow[1] += a1l, *(VT *)(crow[1] + W) += a1h;                                             \
            *(VT *)crow[2] += a2l, *(VT *)(crow[2] + W) += a2h;                                             \
            *(VT *)crow[3] += a3l, *(VT *)(crow[3] + W) += a3h;                                             \
        } else {                                                                                            \
            float lo[MR][NR], hi[MR][NR];                                                                   \
            *(VT *)lo[0] = a0l, *(VT *)hi[0] = a0h, *(VT *)lo[1] = a1l, *(VT *)hi[1] = a1h;                 \
            *(VT *)lo[2] = a2l, *(VT *)hi[2] = a2h, *(VT *)lo[3] = a3l, *(VT *)hi[3] = a3h;                 \
            float *cw[MR] = {crow[0] + W * cn, crow[1] + W * cn, crow[2] + W * cn, crow[3] + W * cn};       \
            tile_store(lo, mr, nr < W ? nr : W, crow, cn);                                                  \
            if (nr > W) tile_store(hi, mr, nr - W, cw, cn);                                                 \
        }                                                                                                   \
    }
/* TILE_KEEP: B's two vectors stay in registers for the four rows. GCC
 * (znver3 tuning) folded them into each multiply-add as memory operands
 * instead, 12 loads for 8 multiply-adds, more than AVX2's two 256-bit loads
 * a cycle feed. An empty asm moves no value and changes no result. */
#if defined(__AVX__) && !FS_WIDE_TILES
#define TILE_KEEP(a, b) __asm__("" : "+x"(a), "+x"(b))
#else
#define TILE_KEEP(a, b) ((void)0) /* a v8 fits no SSE register; AVX-512's tiles are left as they ran */
#endif
#if FS_WIDE_TILES
TILE_PAIR(tile_full32, v16, 16, vfma16s)
#else
TILE_PAIR(tile_full16, v8, 8, vfma8s)
#endif
#if FS_TILE24
#include "train/gemm_tile24.h"
#endif
#endif

#if FS_ONE_THREAD
/* Any tile up to MR x NR: the portable form (the block's: gemm_tile). */
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
            for (int j = 0; j < nr; j++) acc[r][j] = FS_FMA(a, b[j], acc[r][j]);
        }
        walk_next(&wa, ak);
        walk_next(&wb, bk);
    }
    tile_store(acc, mr, nr, crow, cn);
}
#endif

/* Weight gradients walk k through two-level strides (examples, then
 * positions): there a 4 x 32 tile halves that bookkeeping per multiply-add;
 * elsewhere 4 x 16 runs faster (measured). */
FS_DEVICE static inline int gemm_width(FsStride ak, FsStride bk)
{
#if defined(FS_SIMD) && FS_WIDE_TILES
    return (ak.g || bk.g) ? 2 * NR : NR;
#elif FS_TILE24
    (void)ak, (void)bk;
    return NR + 8; /* 4 x 24 tiles (tile_full24) */
#else
    (void)ak, (void)bk;
    return NR;
#endif
}

#if FS_ONE_THREAD
/* The tile of C at rows i0.., columns n0.. (W wide, less at the edges). */
FS_DEVICE static void gemm_tile(long i0, long n0, int W, int M, int N, int K, const float *A, FsStride am,
                                FsStride ak, const float *B, FsStride bk, float *C, FsStride cm, long cn)
{
    int mr = M - i0 < MR ? (int)(M - i0) : MR;
    int nw = N - n0 < W ? (int)(N - n0) : W;
    int nr = nw < NR ? nw : NR;
    long ao[MR], co[MR];
    st_offs(am, i0, mr, ao);
    st_offs(cm, i0, mr, co);
    const float *arow[MR];
    float *crow[MR];
    for (int r = 0; r < MR; r++) {
        arow[r] = A + ao[r];
        crow[r] = C + co[r] + n0 * cn;
    }
#ifdef FS_SIMD
    /* B's rows may be read up to their stride (ops_gemm's contract): a
     * narrow or short tile still takes a vector form when that holds. */
    const long bs = bk.s;
#if FS_WIDE_TILES
    if (nw > NR && n0 + 2 * NR <= bs) {
        tile_full32(K, mr, nw, arow, ak, B + n0, bk, crow, cn);
        return;
    }
#elif FS_TILE24
    if (nw == NR + 8 && mr == MR && cn == 1 && n0 + NR + 8 <= bs) {
        tile_full24(K, arow, ak, B + n0, bk, crow);
        return;
    }
#endif
    if (nw > NR) {
        /* A wide slot (32, or AVX2's 24) not taken whole: 16, then the rest. */
        float *crow2[MR];
        for (int r = 0; r < MR; r++) crow2[r] = crow[r] + NR * cn;
        tile_full16(K, mr, NR, arow, ak, B + n0, bk, crow, cn);
        const int nr2 = nw - NR;
        if (nr2 <= 8 && n0 + NR + 8 <= bs) tile_full8(K, mr, nr2, arow, ak, B + n0 + NR, bk, crow2, cn);
        else tile_edge(K, mr, nr2, arow, ak, B + n0 + NR, bk, crow2, cn);
        return;
    }
    if (nr <= 8 && n0 + 8 <= bs) {
        tile_full8(K, mr, nr, arow, ak, B + n0, bk, crow, cn);
        return;
    }
    if (n0 + NR <= bs) {
        tile_full16(K, mr, nr, arow, ak, B + n0, bk, crow, cn);
        return;
    }
#endif
    tile_edge(K, mr, nr, arow, ak, B + n0, bk, crow, cn);
}
#else
#include "train/gemm_block.h"
#endif

#if defined(FS_SIMD) && FS_WIDE_TILES
/* Weight gradients (rows of A adjacent floats, C plain): tile t of the
 * pairs of row blocks, 8 x 32 where whole. */
static inline void gemm_pair(long t, long nt, int W, int M, int N, int K, const float *A, FsStride am, FsStride ak,
                             const float *B, FsStride bk, float *C, FsStride cm, long cn)
{
    const long i0 = (t / nt) * 2 * MR, n0 = (t % nt) * W;
    if (i0 + 2 * MR <= M && n0 + W <= N) {
        float *crow[2 * MR];
        for (int r = 0; r < 2 * MR; r++) crow[r] = C + (i0 + r) * cm.s + n0;
        tile_8x32(K, A + i0, ak, B + n0, bk, crow);
        return;
    }
    gemm_tile(i0, n0, W, M, N, K, A, am, ak, B, bk, C, cm, cn);
    if (i0 + MR < M) gemm_tile(i0 + MR, n0, W, M, N, K, A, am, ak, B, bk, C, cm, cn);
}
#endif

#ifdef FS_SIMD
#include "train/gemm_narrow.h"
#endif

#ifdef FS_TEAM
/* One GEMM as a loop over tiles of C that team_for can share: tiles are
 * disjoint and each runs its whole k loop, so who runs a tile does not
 * change a bit of it. A GEMM is shared from GEMM_TEAM_MIN times team.h's
 * threshold (8 million multiply-adds, about 0.2 ms on one core): below
 * that, its operands and its result crossing between the cores' caches
 * cost more than the half it saves (R1's convolutions at batch 8, 2.8
 * million, made a lone fold slower shared; the larger model's, 18 to 80
 * million, gain). */
#define GEMM_TEAM_MIN 8.0
#if defined(FS_SIMD) && !FS_WIDE_TILES
#include "train/gemm_long.h"
#endif
typedef struct {
    int M, N, K, W, pairs, by_cols;
    long mt, nt;
    const float *A, *B;
    FsStride am, ak, bk, cm;
    float *C;
    long cn;
} GemmLoop;

static void gemm_range(void *arg, long lo, long hi)
{
    const GemmLoop *g = arg;
#if defined(FS_SIMD) && FS_WIDE_TILES
    if (g->pairs) {
        for (long t = lo; t < hi; t++)
            gemm_pair(t, g->nt, g->W, g->M, g->N, g->K, g->A, g->am, g->ak, g->B, g->bk, g->C, g->cm, g->cn);
        return;
    }
#endif
    if (g->by_cols) {
        for (long t = lo; t < hi; t++)
            gemm_tile((t % g->mt) * MR, (t / g->mt) * g->W, g->W, g->M, g->N, g->K, g->A, g->am, g->ak, g->B, g->bk,
                      g->C, g->cm, g->cn);
        return;
    }
    for (long t = lo; t < hi; t++)
        gemm_tile((t / g->nt) * MR, (t % g->nt) * g->W, g->W, g->M, g->N, g->K, g->A, g->am, g->ak, g->B, g->bk,
                  g->C, g->cm, g->cn);
}
#endif

#if !FS_ONE_THREAD
/* The block's walk over C's mt x nt tiles: FS_PARFOR(t, mt * nt) with
 * (t / nt, t % nt) stepped, one division per thread, not one per tile.
 * act (a constant where inlined): the epilogue's walk over the same tiles,
 * gemm_tile_act's. */
FS_DEVICE static inline void gemm_walk(GemmArgs *g, long mt, long nt, int act)
{
    const int nti = (int)nt, step = (int)FS_THREADS; /* M, N are ints */
    g->mt = (int)mt, g->nt = nti;
    g->ti = (int)FS_THREAD_ID / nti, g->tn = (int)FS_THREAD_ID % nti;
    g->di = step / nti, g->dn = step % nti;
    FS_IN_MEMORY(g);
    while (g->ti < g->mt) {
        if (act)
            gemm_tile_act(g);
        else
            gemm_tile(g);
        int ti = g->ti + g->di, tn = g->tn + g->dn;
        if (tn >= g->nt) {
            tn -= g->nt;
            ti++;
        }
        g->ti = ti, g->tn = tn;
    }
}

#include "train/gemm_stage.h"
#endif

FS_DEVICE FS_NOINLINE void ops_gemm(int M, int N, int K, const float *A, FsStride am, FsStride ak, const float *B,
                        FsStride bk, float *C, FsStride cm, long cn)
{
#ifdef FS_SIMD
    /* At most 4 columns (gemm_narrow.h): rows of 8 there, the rest here. */
    const long m8 = gemm_narrow(M, N, K, A, am, ak, B, bk, C, cm, cn);
    if (m8 > 0) {
        if (m8 < M) ops_gemm_rows(m8, (int)(M - m8), M, N, K, A, am, ak, B, bk, C, cm, cn);
        return;
    }
#endif
#if defined(FS_SIMD) && !FS_WIDE_TILES
    if (gemm_long(M, N, K, A, am, ak, B, bk, C, cm, cn)) return; /* a long k in blocks (gemm_long.h) */
#endif
    const int W = gemm_width(ak, bk);
    long mt = (M + MR - 1) / MR, nt = (N + W - 1) / W;
#ifdef FS_TEAM
    int pairs = 0;
#if defined(FS_SIMD) && FS_WIDE_TILES
    pairs = W == 2 * NR && !am.g && am.s == 1 && !cm.g && cn == 1;
#endif
    /* Threads sharing it split the longer side of C: the dense layer's
     * forward (a batch of rows, hundreds of columns) by columns, so that
     * each reads half of the weights, not all of them. */
    GemmLoop g = {M, N, K, W, pairs, !pairs && N > M, mt, nt, A, B, am, ak, bk, cm, C, cn};
    const double work = (double)M * N * K;
    team_for(pairs ? (mt + 1) / 2 * nt : mt * nt, work >= GEMM_TEAM_MIN * team_min_work() ? work : 0.0, gemm_range,
             &g);
#else
    /* No branch around the calls (each returns at once where it has
     * nothing to do): one made the fit kernel spill (ptxas). */
    GemmArgs g;
    gemm_args(&g, M, N, K, A, am, ak, B, bk, C, cm, cn);
    const int kc = gemm_stage_plan(&g, mt, nt); /* B into shared memory where it fits */
    gemm_staged(&g, mt, nt, kc);                /* in chunks */
    if (!kc && mt > 0 && nt > 0) gemm_walk(&g, mt, nt, 0);
#endif
    FS_SYNC();
}

#if !FS_ONE_THREAD
FS_DEVICE FS_NOINLINE void ops_gemm_act(int M, int N, int K, const float *A, FsStride am, FsStride ak,
                                        const float *B, FsStride bk, float *C, FsStride cm, FsAct act, float param,
                                        float *aux)
{
    const long mt = (M + MR - 1) / MR, nt = (N + NR - 1) / NR;
    GemmArgs g;
    gemm_args(&g, M, N, K, A, am, ak, B, bk, C, cm, 1);
    g.act = (int)act, g.param = param, g.aux = aux;
    const int kc = gemm_stage_plan(&g, mt, nt); /* as ops_gemm */
    gemm_staged(&g, mt, nt, kc);
    if (mt > 0 && nt > 0) {
        if (!kc) gemm_walk(&g, mt, nt, 0);
        gemm_walk(&g, mt, nt, 1); /* this thread's own tiles (gemm_staged's too): no barrier between */
    }
    FS_SYNC();
}
#endif

FS_DEVICE FS_NOINLINE void ops_gemm_rows(long i0, int rows, int M, int N, int K, const float *A, FsStride am, FsStride ak,
                             const float *B, FsStride bk, float *C, FsStride cm, long cn)
{
#ifdef FS_SIMD
    if (rows == 2 * MR && i0 + 2 * MR <= M && N <= 8 && bk.s >= 8 && !ak.g && !bk.g) {
        const float *arow[2 * MR];
        float *crow[2 * MR];
        for (int r = 0; r < 2 * MR; r++) {
            arow[r] = A + st_off(am, i0 + r);
            crow[r] = C + st_off(cm, i0 + r);
        }
        tile_8x8(K, N, arow, ak.s, B, bk.s, crow, cn);
        return;
    }
#endif
#if FS_ONE_THREAD
    const int W = gemm_width(ak, bk);
    for (long r0 = i0; r0 < i0 + rows && r0 < M; r0 += MR)
        for (long n0 = 0; n0 < N; n0 += W) gemm_tile(r0, n0, W, M, N, K, A, am, ak, B, bk, C, cm, cn);
#else
    /* Tiles rows (ti) by columns (tn), as above; g.mt ends the rows. */
    GemmArgs g;
    gemm_args(&g, M, N, K, A, am, ak, B, bk, C, cm, cn);
    const long end = i0 + rows < M ? i0 + rows : M;
    g.mt = (int)((end + MR - 1) / MR);
    g.nt = (N + NR - 1) / NR;
    FS_IN_MEMORY(&g);
    for (g.ti = (int)(i0 / MR); g.ti < g.mt; g.ti++)
        for (g.tn = 0; g.tn < g.nt; g.tn++) gemm_tile(&g);
#endif
}
