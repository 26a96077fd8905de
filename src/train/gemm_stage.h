/*
 * train/gemm_stage.h: included by gemm.c alone, for the block (nvcc, the
 * emulated block; not FS_ONE_THREAD): a GEMM's B staged in the block's
 * shared memory by the block's threads together, 16 bytes a load, where
 * all of it fits the block's staging area (#45 part 1).
 *
 * Why B: in the block's walk (gemm_walk) consecutive threads take the
 * column tiles of one row tile, so the threads of a warp read one row of A
 * at one address (a broadcast), while each row of B is read again by every
 * row tile the block's threads hold, across warps, from L1 or global
 * memory. Staged, B comes from there once, each thread copying 16-byte
 * pieces, and every tile's k loop reads it from shared memory.
 *
 * Where all of B fits the block's staging area, it is copied once and the
 * walk runs as unstaged (gemm_walk). Where it does not, B is staged in
 * chunks of k rows, each loaded once for up to GEMM_STAGE_TILES rounds of
 * the block's tiles (a thread's tiles as gemm_walk assigns them; every
 * thread takes every step, with a tile or not, so that the barriers stay
 * uniform): a load, a barrier, the chunk's k steps on each of the
 * thread's tiles, a barrier (the next load overwrites the chunk). A tile's
 * accumulators start at 0, take their k
 * steps in order chunk after chunk (in the thread's local memory between
 * chunks) and are added to C once, after the last: the bits are the CPU's
 * whatever the chunk and wherever B comes from.
 *
 * The staging area is what a launch's dynamic shared memory gives the
 * block past its model (kernels/fit_kernel.cu; kernels/gpu_launch.cu:
 * launch_shared adds as much of FS_GPU_STAGE_BYTES as the room leaves
 * where the models' weights are not in shared memory themselves).
 */
#ifndef FS_TRAIN_GEMM_STAGE_H
#define FS_TRAIN_GEMM_STAGE_H

/* The least k chunk worth its two barriers (in k steps). */
#define GEMM_STAGE_MIN_K 4

/* FS_GEMM_STAGED(k): the CUDA stand-in counts the tiles' k steps that
 * read a staged B (src/gpu/emulate/cuda_runtime.h); nothing elsewhere. */
#ifndef FS_GEMM_STAGED
#define FS_GEMM_STAGED(k) ((void)0)
#endif

/* The block's staging area, set by its kernel (ops_gemm_stage): shared
 * memory beside the model's hot state and weights (kernels/fit_kernel.cu),
 * none (NULL) where the kernel has none to give. One per block: nvcc's
 * __shared__, the CUDA stand-in's per host thread (a host thread runs one
 * block at a time), the tests' pthreads' one (their one block). */
typedef struct {
    float *buf; /* 16-byte aligned, or NULL */
    int floats;
} GemmStage;
#if defined(__CUDACC__)
static __shared__ GemmStage gemm_stage_area;
#elif defined(FS_CUDA_EMULATE)
__shared__ GemmStage gemm_stage_area; /* the stand-in's: static _Thread_local */
#else
static GemmStage gemm_stage_area;
#endif

FS_DEVICE FS_NOINLINE void ops_gemm_stage(float *buf, long floats)
{
    FS_MASTER
    {
        const int ok = buf && ((uintptr_t)buf & 15u) == 0 && floats >= 4;
        gemm_stage_area.buf = ok ? buf : NULL;
        gemm_stage_area.floats = !ok ? 0 : floats > 0x7fffffffL ? 0x7fffffff : (int)floats;
    }
    FS_SYNC();
}

/* GEMM_COPY4(d, s): four floats, one 16-byte load and store on nvcc
 * (both 16-byte aligned: gemm_stage_k); generic, not global-only
 * (tests/cuda_sass.py). */
#if defined(__CUDACC__)
#define GEMM_COPY4(d, s) (*(float4 *)(void *)(d) = *(const float4 *)(const void *)(s))
#else
#define GEMM_COPY4(d, s) ((d)[0] = (s)[0], (d)[1] = (s)[1], (d)[2] = (s)[2], (d)[3] = (s)[3])
#endif

/* Rows 0 .. kn - 1 of B (row stride sb) into the stage (row stride n4),
 * the block's threads one 16-byte piece each in turn: row and piece
 * stepped, no division per piece. Every thread calls it; a barrier follows. */
FS_DEVICE static inline void gemm_stage_load(float *st, const float *B, long sb, int kn, int n4)
{
    const int q = n4 / 4, T = (int)FS_THREADS;
    int r = (int)FS_THREAD_ID / q, c = (int)FS_THREAD_ID % q;
    const int dr = T / q, dc = T % q;
    while (r < kn) {
        GEMM_COPY4(st + (long)r * n4 + 4 * c, B + r * sb + 4 * c);
        r += dr, c += dc;
        if (c >= q) c -= q, r++;
    }
}

/* The k rows a GEMM (mt x nt tiles) stages B by, or 0 where it runs
 * unstaged: B's rows have no groups, are 16-byte aligned and at least the
 * staged width apart (nt * NR floats: a row is read up to its stride,
 * ops_gemm's contract); B is not in shared memory already (a model's
 * weights where they fit, kernels/fit_kernel.cu); at least two row tiles
 * read it (no reuse, no gain). K where all of B fits; else a chunk of at
 * least GEMM_STAGE_MIN_K rows that, where A's k walk has groups, is a
 * whole number of them, so that each chunk's walk starts at a group's
 * start. */
FS_DEVICE static inline int gemm_stage_k(const GemmArgs *g, long mt, long nt)
{
    const long n4 = nt * NR;
    if (mt < 2 || nt < 1 || !gemm_stage_area.buf || g->gb || !gemm_k32(g)) return 0;
    if (FS_IS_SHARED(g->B) || !gemm_b_aligned(g, g->B) || g->sb < n4) return 0;
    long kc = gemm_stage_area.floats / n4;
    if (kc >= g->K) return g->K;
    if (g->ga) kc -= kc % g->ga;
    return kc >= GEMM_STAGE_MIN_K ? (int)kc : 0;
}

/* How the GEMM in g runs (every thread calls it): returns the chunk for
 * gemm_staged, or 0 for gemm_walk, having staged all of B where it fits
 * (one load, a barrier, and g's B is the stage, row stride nt * NR, which
 * the walk's aligned forms read: gemm_whole). A call of its own: inline,
 * its registers were the GEMM's callers' (ptxas: the kernel spilled). */
FS_DEVICE FS_NOINLINE static int gemm_stage_plan(GemmArgs *g, long mt, long nt)
{
    const int kc = gemm_stage_k(g, mt, nt);
    if (!kc || kc < g->K) return kc; /* unstaged (K = 0 too), or in chunks */
    const int n4 = (int)nt * NR;
    float *const st = gemm_stage_area.buf;
    gemm_stage_load(st, g->B, g->sb, g->K, n4);
    FS_SYNC();
    g->B = st, g->sb = n4;
    FS_MASTER FS_GEMM_STAGED(mt * nt * (long)g->K);
    return 0;
}

/* This round's tile (g->ti, g->tn; none where !g->has: no rows, no k
 * steps) over the chunk's k steps (g->k0, g->kn), B's rows from the stage
 * (row stride g->n4), from and into its accumulators in g->accs, or,
 * after the last chunk, added to C: gemm_whole's forms for a whole tile,
 * gemm_masked's loop for a partial one. */
FS_DEVICE static inline void gemm_tile_chunk(GemmArgs *g)
{
    const int mr = !g->has ? 0 : g->M - g->ti * MR < MR ? g->M - g->ti * MR : MR;
    const int nr = g->N - g->tn * NR < NR ? g->N - g->tn * NR : NR;
    const int ga = g->ga, k0 = g->k0, kn = g->has ? g->kn : 0;
    const long sa = g->sa, ja = g->ja;
    const unsigned n4 = (unsigned)g->n4;
    const long o = ga ? (long)(k0 / ga) * ((ga - 1) * sa + ja) : (long)k0 * sa;
    const float *ak[MR];
    gemm_tile_rows(g, mr, ak);
    GEMM_UNROLL
    for (int r = 0; r < MR; r++) ak[r] += o;
    const float *const b = gemm_stage_area.buf + (long)g->tn * NR;
    float acc[MR][NR];
    GEMM_UNROLL
    for (int r = 0; r < MR; r++)
        GEMM_UNROLL
        for (int j = 0; j < NR; j++) acc[r][j] = k0 ? g->accs[g->j][r * NR + j] : 0.0f;
    const int whole = mr == MR && nr == NR;
    if (g->has) FS_GEMM_FORM(whole ? "staged" : "staged-masked", kn);
    if (whole) {
        if (ga)
            gemm_full(acc, ak, b, kn, ga, 0, (unsigned)sa, (unsigned)ja, n4, 0, 1, 1);
        else if (sa == 1)
            gemm_full(acc, ak, b, kn, 0, 0, 1, 0, n4, 0, 0, 1);
        else
            gemm_full(acc, ak, b, kn, 0, 0, (unsigned)sa, 0, n4, 0, 0, 1);
    }
    gemm_masked(acc, mr, nr, ak, b, whole ? 0 : kn, ga, 0, sa, ja, n4, 0);
    FS_IN_MEMORY(g);
    if (g->k0 + g->kn == g->K) {
        gemm_tile_store(g, acc, mr, nr); /* the last chunk: C's one add */
        return;
    }
    GEMM_UNROLL
    for (int r = 0; r < MR; r++)
        GEMM_UNROLL
        for (int j = 0; j < NR; j++) g->accs[g->j][r * NR + j] = acc[r][j];
}

/* The GEMM over B staged in chunks of kc k rows (gemm_stage_plan; every
 * thread calls it, and it returns at once where kc is 0). Each chunk is
 * loaded once for up to GEMM_STAGE_TILES rounds of the block's tiles (a
 * thread's tiles t + j x FS_THREADS, as gemm_walk assigns them), whose
 * accumulators wait in g meanwhile: a load, a barrier, the chunk's k steps
 * on each of the thread's tiles, a barrier. One loop over the chunks and
 * the tiles, without a branch around a tile, its state in g in the
 * thread's local memory (FS_IN_MEMORY) while a chunk runs: held in
 * registers, or in nested loops with a branch, the fit kernel spilled
 * (tests/cuda_resources.cmake). */
FS_DEVICE FS_NOINLINE static void gemm_staged(GemmArgs *g, long mt, long nt, int kc)
{
    if (!kc) return;
    g->mt = (int)mt, g->nt = (int)nt, g->kc = kc, g->n4 = (int)nt * NR;
    g->chunks = (g->K + kc - 1) / kc;
    g->rounds = (int)((mt * nt + FS_THREADS - 1) / FS_THREADS);
    g->steps = g->chunks * ((g->rounds + GEMM_STAGE_TILES - 1) / GEMM_STAGE_TILES);
    for (g->step = 0; g->step < g->steps; g->step++) {
        FS_IN_MEMORY(g);
        const int group = g->step / g->chunks, chunk = g->step - group * g->chunks;
        g->r0 = group * GEMM_STAGE_TILES;
        g->k0 = chunk * g->kc;
        g->kn = g->K - g->k0 < g->kc ? g->K - g->k0 : g->kc;
        gemm_stage_load(gemm_stage_area.buf, g->B + (long)g->k0 * g->sb, g->sb, g->kn, g->n4);
        FS_SYNC();
        for (g->j = 0; g->j < GEMM_STAGE_TILES && g->r0 + g->j < g->rounds; g->j++) {
            FS_IN_MEMORY(g);
            const int t = (g->r0 + g->j) * (int)FS_THREADS + (int)FS_THREAD_ID; /* M, N are ints */
            g->has = t < g->mt * g->nt;
            g->ti = g->has ? t / g->nt : 0, g->tn = g->has ? t % g->nt : 0;
            gemm_tile_chunk(g); /* the last chunk stores the tile */
        }
        FS_SYNC();
    }
    FS_MASTER FS_GEMM_STAGED(mt * nt * (long)g->K);
}

#endif
