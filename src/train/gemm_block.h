/*
 * train/gemm_block.h: included by gemm.c alone, where a block's threads
 * share each GEMM (nvcc, and the emulated block of the CUDA stand-in and
 * the tests; not FS_ONE_THREAD): the block's tile and its walk over C.
 */
#ifndef FS_TRAIN_GEMM_BLOCK_H
#define FS_TRAIN_GEMM_BLOCK_H

/* The most tiles a thread takes through each chunk of a staged B
 * (gemm_stage.h: gemm_staged), their accumulators in its GemmArgs. */
#define GEMM_STAGE_TILES 8

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
    long cn, sa, ja, sb, jb; /* k's steps: see gemm_args */
    int M, N, K, ga, gb;
    int ti, tn, mt, nt, di, dn; /* this thread's tile (rows ti * MR, columns tn * NR) and walk */
    /* ops_gemm_act's epilogue: the activation of each tile once written
     * (FS_ACT_LINEAR: none), and where swish's sigmoids go: aux laid out
     * as C (the same offsets). */
    int act;
    float param;
    float *aux;
    /* gemm_staged's loop (train/gemm_stage.h): its step of steps (groups
     * of rounds x chunks), the group's first round r0 of rounds and this
     * thread's tile j in it (has: whether there is one), the chunk (k0, kn
     * of kc), the stage's row stride n4, and the accumulators of each of
     * the thread's tiles in the group between chunks. */
    int step, steps, chunks, rounds, r0, j, has, kc, k0, kn, n4;
    float accs[GEMM_STAGE_TILES][MR * NR];
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
    g->act = FS_ACT_LINEAR, g->param = 0.0f, g->aux = NULL;
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

/* FS_GEMM_FORM(name, k): the CUDA stand-in counts the k steps of each
 * form of the loop (src/gpu/emulate/cuda_runtime.h); nothing elsewhere. */
#ifndef FS_GEMM_FORM
#define FS_GEMM_FORM(form, k) ((void)0)
#endif

/* A k step's NR values of B: one 16-byte load where vec (nvcc, B's rows
 * 16-byte aligned: gemm_b_aligned) instead of NR; the same values. */
FS_DEVICE static inline void gemm_load_b(float bk[NR], const float *b, int vec)
{
#if defined(__CUDACC__) && NR == 4
    if (vec) {
        const float4 v = *(const float4 *)b;
        bk[0] = v.x, bk[1] = v.y, bk[2] = v.z, bk[3] = v.w;
        return;
    }
#else
    (void)vec;
#endif
    GEMM_UNROLL
    for (int j = 0; j < NR; j++) bk[j] = b[j];
}

/* Whether every k step's row of a tile's B (a walk without groups)
 * starts 16-byte aligned: the tile's first at b0, the step a whole
 * multiple of 4 floats. */
FS_DEVICE static inline int gemm_b_aligned(const GemmArgs *g, const float *b0)
{
    return ((uintptr_t)b0 & 15u) == 0 && (g->sb & 3) == 0;
}

/* A whole tile's k loop (gemm_tile): A's rows and B read at unsigned
 * 32-bit offsets from their pointers (gemm_k32 checks that they fit), so
 * a load's address is one multiply-add of the offset onto the pointer
 * (GEMM_OPAQUE: nvcc had split each pointer into the buffer's base and a
 * 64-bit offset, four instructions a load). `grouped` and `vec_b`
 * (gemm_load_b) are constants where this is inlined: each call is its own
 * loop, and the walks without groups (most) run without their counters.
 * nvcc unrolls it twice (GEMM_UNROLL_K): more, or moving the rows'
 * pointers themselves, took registers that the GEMM's callers then spill
 * around the call (ptxas: the kernel is one program of at most 128
 * registers a thread, kernel.h). Its loads stay generic (LD, not LDG):
 * a block's weights may lie in its shared memory (kernels/fit_kernel.cu),
 * which the stand-in cannot tell apart, so a global-only load would pass
 * every test here and fault on a device. */
FS_DEVICE static inline void gemm_full(float acc[MR][NR], const float *const arow[MR], const float *pb, int K, int ga,
                                       int gb, unsigned sa, unsigned ja, unsigned sb, unsigned jb, int grouped,
                                       int vec_b)
{
    unsigned oa = 0, ob = 0;
    int ra = 0, rb = 0;
    const float *ap[MR];
    GEMM_UNROLL
    for (int r = 0; r < MR; r++) {
        ap[r] = arow[r];
        GEMM_OPAQUE(ap[r]);
    }
    GEMM_OPAQUE(pb);
    GEMM_UNROLL_K
    for (int k = 0; k < K; k++) {
        const float *b = pb + ob;
        float bk[NR];
        gemm_load_b(bk, b, vec_b);
        GEMM_UNROLL
        for (int r = 0; r < MR; r++) {
            const float a = ap[r][oa];
            GEMM_UNROLL
            for (int j = 0; j < NR; j++) acc[r][j] = FS_FMA(a, bk[j], acc[r][j]);
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

/* A whole tile (the common case) runs without the masks (gemm_full):
 * no predicate or branch in nvcc's k loop, and vector multiply-adds from
 * GCC for the emulated block (the masked loop was two thirds of an
 * emulated fit's time). Its forms, one per call below (docs/benchmarks.md,
 * "The block's GEMM in SASS"): grouped walks (a weight gradient's
 * positions, a dilated convolution's taps) with their counters; the others
 * without, where B's rows 16-byte aligned take one vector load a k step on
 * nvcc (gemm_load_b) and A's k contiguous (a step of 1, a constant here)
 * lets a pair of k steps share a row's address. GCC's (the emulated block)
 * take the same branches with plain loads. The same products in the same
 * order in every form: the same bits. 0 where the walk's offsets do not
 * fit 32 bits (gemm_k32): the masked loop then runs the tile. */
FS_DEVICE static inline int gemm_whole(const GemmArgs *g, float acc[MR][NR], const float *const arow[MR],
                                       const float *b0)
{
    const int K = g->K, ga = g->ga, gb = g->gb;
    const long sa = g->sa, ja = g->ja, sb = g->sb, jb = g->jb;
    if (!gemm_k32(g)) return 0;
    if (ga || gb) {
        FS_GEMM_FORM("grouped", K);
        gemm_full(acc, arow, b0, K, ga, gb, (unsigned)sa, (unsigned)ja, (unsigned)sb, (unsigned)jb, 1, 0);
    } else if (gemm_b_aligned(g, b0) && sa == 1) {
        FS_GEMM_FORM("vector-b-unit-a", K);
        gemm_full(acc, arow, b0, K, 0, 0, 1, 0, (unsigned)sb, 0, 0, 1);
    } else if (gemm_b_aligned(g, b0)) {
        FS_GEMM_FORM("vector-b", K);
        gemm_full(acc, arow, b0, K, 0, 0, (unsigned)sa, 0, (unsigned)sb, 0, 0, 1);
    } else {
        FS_GEMM_FORM("plain", K);
        gemm_full(acc, arow, b0, K, 0, 0, (unsigned)sa, 0, (unsigned)sb, 0, 0, 0);
    }
    return 1;
}

/* ops_gemm_act's epilogue: the activation over a tile that this thread
 * has written (its final values: C's one GEMM after the bias, no split of
 * k), as act_forward would apply it after the GEMM's barrier (act_one: the
 * same formula, the same bits). A second walk over the thread's tiles
 * after the GEMM's (gemm.c: gemm_walk), reading them back from memory
 * (L1): inside the k loop's function, the call had the kernel's entry
 * spill (ptxas, tests/cuda_resources.cmake). */
FS_DEVICE FS_NOINLINE static void gemm_tile_act(const GemmArgs *g)
{
    const int mr = g->M - g->ti * MR < MR ? g->M - g->ti * MR : MR;
    const int nr = g->N - g->tn * NR < NR ? g->N - g->tn * NR : NR;
    long off[MR];
    const FsStride cm = {g->cm.g, g->cm.gs, g->cm.s};
    st_offs(cm, (long)g->ti * MR, mr, off);
    const FsAct act = (FsAct)g->act;
    const float param = g->param;
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++) {
            const long o = off[r] + ((long)g->tn * NR + j) * g->cn;
            g->C[o] = act_one(act, param, g->C[o], g->aux ? g->aux + o : NULL);
        }
}

/* A's MR rows of the tile at g->ti (rows past mr repeat the first: st_offs). */
FS_DEVICE static inline void gemm_tile_rows(const GemmArgs *g, int mr, const float *arow[MR])
{
    long off[MR];
    const FsStride am = {g->am.g, g->am.gs, g->am.s};
    st_offs(am, (long)g->ti * MR, mr, off);
    const float *A = g->A;
    GEMM_UNROLL
    for (int r = 0; r < MR; r++) arow[r] = A + off[r];
}

/* Any tile up to MR x NR over K steps of k (b0: its first row of B): a
 * partial tile's rows and columns masked, the walks' groups counted
 * (gemm_k_step); tile_edge's products in its order. */
FS_DEVICE static inline void gemm_masked(float acc[MR][NR], int mr, int nr, const float *const arow[MR],
                                         const float *b0, int K, int ga, int gb, long sa, long ja, long sb, long jb)
{
    long oa = 0, ob = 0;
    int ra = 0, rb = 0;
    for (int k = 0; k < K; k++) {
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
}

/* Adds a tile's accumulators (its mr x nr part) to C at g->ti, g->tn:
 * once, after the whole k loop, so that C's sums are the CPU's. */
FS_DEVICE static inline void gemm_tile_store(const GemmArgs *g, float acc[MR][NR], int mr, int nr)
{
    long off[MR];
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

/* The tile at g->ti, g->tn. */
FS_DEVICE static void gemm_tile(GemmArgs *g)
{
    const int mr = g->M - g->ti * MR < MR ? g->M - g->ti * MR : MR;
    const int nr = g->N - g->tn * NR < NR ? g->N - g->tn * NR : NR;
    const int K = g->K;
    const float *arow[MR];
    gemm_tile_rows(g, mr, arow);
    const float *b0 = g->B + (long)g->tn * NR;
    float acc[MR][NR];
    GEMM_UNROLL
    for (int r = 0; r < MR; r++)
        GEMM_UNROLL
        for (int j = 0; j < NR; j++) acc[r][j] = 0.0f;
    const int full = mr == MR && nr == NR && gemm_whole(g, acc, arow, b0);
    if (!full) FS_GEMM_FORM("masked", K);
    gemm_masked(acc, mr, nr, arow, b0, full ? 0 : K, g->ga, g->gb, g->sa, g->ja, g->sb, g->jb);
    FS_IN_MEMORY(g);
    gemm_tile_store(g, acc, mr, nr);
}

#endif
