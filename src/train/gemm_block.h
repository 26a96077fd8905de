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
#if defined(FS_EMULATE_BLOCK)
    /* The emulated block: a whole tile's loop without the masks, which GCC
     * turns into vector multiply-adds (a row of the tile at a time); the
     * same products in the same order, so the same bits. The masked loop
     * below was two thirds of an emulated fit's time. nvcc keeps the one
     * loop: its registers are budgeted (see the comment above). */
    const int full = mr == MR && nr == NR;
    for (int k = 0; k < (full ? K : 0); k++) {
        const float *b = b0 + ob;
        GEMM_UNROLL
        for (int r = 0; r < MR; r++) {
            const float a = arow[r][oa];
            GEMM_UNROLL
            for (int j = 0; j < NR; j++) acc[r][j] = FS_FMA(a, b[j], acc[r][j]);
        }
        gemm_k_step(&oa, &ra, ga, sa, ja);
        gemm_k_step(&ob, &rb, gb, sb, jb);
    }
    const int K_masked = full ? 0 : K;
#else
    const int K_masked = K;
#endif
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
