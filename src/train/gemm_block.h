/*
 * train/gemm_block.h: included by gemm.c alone, where a block's threads
 * share each GEMM (nvcc, and the emulated block of the CUDA stand-in and
 * the tests; not FS_ONE_THREAD): the block's tile and its walk over C.
 */
#ifndef FS_TRAIN_GEMM_BLOCK_H
#define FS_TRAIN_GEMM_BLOCK_H

/* The block's tile (nvcc, the emulated block): tile_edge's products in
 * tile_edge's order, with every loop over the whole MR x NR tile and a
 * partial tile's rows and columns masked, so that nvcc unrolls them and
 * keeps the accumulators in registers (bounded by mr and nr, the loops
 * kept them in local memory). NR is narrower here than on the CPU: a
 * thread's tile must fit its share of the register file (FS_GPU_THREADS x
 * FS_GPU_MIN_BLOCKS, kernel.h), and a narrow tile gives more of the
 * block's threads work in the small GEMMs of small batches.
 *
 * The GEMM's arguments and the thread's place in its walk over the tiles
 * wait in a GemmArgs in the thread's local memory (FS_IN_MEMORY, device.h)
 * while a tile runs its k loop: only the loop's own values take registers
 * then, and the calls above the GEMM (the fit, a step, a layer) keep
 * theirs within the kernel's budget of 128 (FS_NOINLINE). C's rows are
 * found after the k loop, from memory: a few loads a tile. */
typedef struct {
    const float *A, *B;
    float *C;
    FsStride am, cm;
    long cn, sa, ja, sb, jb; /* k's steps: see gemm_tile */
    int M, N, K, ga, gb;
    int ti, tn, mt, nt, di, dn; /* this thread's tile (rows ti * MR, columns tn * NR) and walk */
} GemmArgs;

FS_DEVICE static inline void gemm_args(GemmArgs *g, int M, int N, int K, const float *A, FsStride am,
                                       FsStride ak, const float *B, FsStride bk, float *C, FsStride cm, long cn)
{
    g->A = A;
    g->B = B;
    g->C = C;
    g->am.g = am.g, g->am.gs = am.gs, g->am.s = am.s;
    g->cm.g = cm.g, g->cm.gs = cm.gs, g->cm.s = cm.s;
    g->cn = cn;
    g->M = M, g->N = N, g->K = K;
    /* walk_next's offsets with less state: steps of s, and at the end of
     * each group of g a step of gs - (g - 1) * s; the position in a group
     * counts in an int (it never exceeds K), and a group longer than K
     * never ends here (g = 0). */
    g->ga = ak.g > 0 && ak.g <= K ? (int)ak.g : 0;
    g->gb = bk.g > 0 && bk.g <= K ? (int)bk.g : 0;
    g->sa = ak.s, g->ja = ak.gs - (ak.g - 1) * ak.s;
    g->sb = bk.s, g->jb = bk.gs - (bk.g - 1) * bk.s;
    /* A group whose jump is its step walks as a plain stride (a
     * convolution's taps one row apart: its channels run on into the next
     * tap's), which gemm_tile's k loop takes without counters. */
    if (g->ga && g->ja == g->sa) g->ga = 0;
    if (g->gb && g->jb == g->sb) g->gb = 0;
}

/* One step of k along a walk (gemm_args): s within a group of g, j at its end. */
FS_DEVICE static inline void gemm_k_step(long *o, int *r, int g, long s, long j)
{
    if (++*r == g) {
        *r = 0;
        *o += j;
    } else {
        *o += s;
    }
}

/* Whether a tile's k walk fits unsigned 32-bit offsets: its steps (a
 * group's jump only where there are groups) never negative, and the
 * largest times K + 1 below 2^31. A block's operands lie in one model's
 * buffer, walked forwards, so in practice it always does. */
FS_DEVICE static inline int gemm_k32(const GemmArgs *g)
{
    if (g->sa < 0 || g->sb < 0 || (g->ga && g->ja < 0) || (g->gb && g->jb < 0)) return 0;
    long m = g->sa > g->sb ? g->sa : g->sb;
    if (g->ga && g->ja > m) m = g->ja;
    if (g->gb && g->jb > m) m = g->jb;
    return m < 2147483647L / ((long)g->K + 1);
}

/* A whole tile's k loop (gemm_tile): A's rows and B read at unsigned
 * 32-bit offsets from their bases (gemm_k32 checks that they fit), so a
 * load's address is a pair of LEAs where the walk's 64-bit offsets cost
 * about four instructions; `grouped` is a constant where this is inlined,
 * so that the walks without groups (most) run without their counters.
 * nvcc unrolls it twice (GEMM_UNROLL_K): more, or moving the rows'
 * pointers themselves, took registers that the GEMM's callers then spill
 * around the call (ptxas: the kernel is one program of at most 128
 * registers a thread, kernel.h). */
FS_DEVICE static inline void gemm_full(float acc[MR][NR], const float *const arow[MR], const float *pb, int K, int ga,
                                       int gb, unsigned sa, unsigned ja, unsigned sb, unsigned jb, int grouped)
{
    unsigned oa = 0, ob = 0;
    int ra = 0, rb = 0;
    GEMM_UNROLL_K
    for (int k = 0; k < K; k++) {
        const float *b = pb + ob;
        GEMM_UNROLL
        for (int r = 0; r < MR; r++) {
            const float a = arow[r][oa];
            GEMM_UNROLL
            for (int j = 0; j < NR; j++) acc[r][j] = FS_FMA(a, b[j], acc[r][j]);
        }
        unsigned da = sa, db = sb;
        if (grouped) {
            if (++ra == ga) ra = 0, da = ja;
            if (++rb == gb) rb = 0, db = jb;
        }
        oa += da;
        ob += db;
    }
}

/* The tile at g->ti, g->tn. */
FS_DEVICE static void gemm_tile(GemmArgs *g)
{
    const int mr = g->M - g->ti * MR < MR ? g->M - g->ti * MR : MR;
    const int nr = g->N - g->tn * NR < NR ? g->N - g->tn * NR : NR;
    const int K = g->K;
    long off[MR];
    {
        const FsStride am = {g->am.g, g->am.gs, g->am.s};
        st_offs(am, (long)g->ti * MR, mr, off);
    }
    const float *arow[MR];
    {
        const float *A = g->A;
        GEMM_UNROLL
        for (int r = 0; r < MR; r++) arow[r] = A + off[r];
    }
    const float *b0 = g->B + (long)g->tn * NR;
    float acc[MR][NR];
    GEMM_UNROLL
    for (int r = 0; r < MR; r++)
        GEMM_UNROLL
        for (int j = 0; j < NR; j++) acc[r][j] = 0.0f;
    const int ga = g->ga, gb = g->gb;
    const long sa = g->sa, ja = g->ja, sb = g->sb, jb = g->jb;
    long oa = 0, ob = 0;
    int ra = 0, rb = 0;
    /* A whole tile (the common case) runs without the masks (gemm_full):
     * no predicate or branch in nvcc's k loop, and vector multiply-adds
     * from GCC for the emulated block (the masked loop below was two
     * thirds of an emulated fit's time). The same products in the same
     * order: the same bits. */
#if defined(__CUDACC__)
    /* nvcc: the walks without groups only; a second form of the loop, for
     * grouped walks (a dilated convolution's taps), takes registers that
     * the GEMM's callers then spill around the call (ptxas). */
    const int full = mr == MR && nr == NR && !ga && !gb && gemm_k32(g);
    if (full) gemm_full(acc, arow, b0, K, 0, 0, (unsigned)sa, 0, (unsigned)sb, 0, 0);
#else
    const int full = mr == MR && nr == NR && gemm_k32(g);
    if (full && (ga || gb))
        gemm_full(acc, arow, b0, K, ga, gb, (unsigned)sa, (unsigned)ja, (unsigned)sb, (unsigned)jb, 1);
    else if (full)
        gemm_full(acc, arow, b0, K, 0, 0, (unsigned)sa, 0, (unsigned)sb, 0, 0);
#endif
    const int K_masked = full ? 0 : K;
    for (int k = 0; k < K_masked; k++) {
        const float *b = b0 + ob;
        GEMM_UNROLL
        for (int r = 0; r < MR; r++)
            if (r < mr) {
                const float a = arow[r][oa];
                GEMM_UNROLL
                for (int j = 0; j < NR; j++)
                    if (j < nr) acc[r][j] = FS_FMA(a, b[j], acc[r][j]);
            }
        gemm_k_step(&oa, &ra, ga, sa, ja);
        gemm_k_step(&ob, &rb, gb, sb, jb);
    }
    FS_IN_MEMORY(g);
    {
        const FsStride cm = {g->cm.g, g->cm.gs, g->cm.s};
        st_offs(cm, (long)g->ti * MR, mr, off);
    }
    float *const C = g->C + (long)g->tn * NR * g->cn;
    const long cn = g->cn;
    GEMM_UNROLL
    for (int r = 0; r < MR; r++)
        if (r < mr) {
            float *c = C + off[r];
            GEMM_UNROLL
            for (int j = 0; j < NR; j++)
                if (j < nr) c[j * cn] += acc[r][j];
        }
}

#endif
