/*
 * dense: the fully connected layer (and the softmax output layer's logits)
 * over a flattened (L, C) input, forward and backward (single source).
 *
 * The dense weight matrix is most of a typical model's parameters (R1: 139k
 * of 167k). At small batches its weight gradient has only B terms per
 * element, so storing it, zeroing it, taking its norm and reading it back in
 * the optimizer cost more than computing it. Without clipping,
 * dense_backward_fused therefore walks the matrix once: per block of rows,
 * the input gradient from the old weights, then the weight gradient into
 * registers and straight into the optimizer. Every sum is the one the
 * unfused path takes, in the same order.
 */
#include <float.h>
#include <math.h>

#include "train/act.h"
#include "train/layers.h"
#include "train/simd.h"
#include "train/team.h"

FS_DEVICE FS_NOINLINE void dense_forward(const FsLayer *y, const float *w, const float *x, float *out, float *aux,
                                         int B)
{
    const int U = y->out_c, LC = y->in_l * y->in_c, P = y->in_pad;
    const long xs = (long)(y->in_l + 2 * P) * y->in_c;
    const float *A = x + (long)P * y->in_c;
    rows_set(out, w + y->b, B, 1, 0, U);
#if FS_GEMM_ACT
    if (y->spec.act != FS_ACT_LINEAR) {
        ops_gemm_act(B, U, LC, A, st_plain(xs), st_plain(1), w + y->w, st_plain(U), out, st_plain(U), y->spec.act,
                     y->spec.act_param, aux);
        return;
    }
#endif
    ops_gemm(B, U, LC, A, st_plain(xs), st_plain(1), w + y->w, st_plain(U), out, st_plain(U), 1);
    act_forward(y->spec.act, y->spec.act_param, out, aux, B, 1, 0, U);
}

/* dX^T = W dZ^T: only the small batch gradient is transposed (into
 * scratch), and C is written through a column stride. */
FS_DEVICE static void dense_dgrad_prepare(const FsLayer *y, float *scratch, const float *d, float *dx, int B)
{
    ops_transpose(d, B, y->out_c, scratch, dense_bpad(B));
    rows_set(dx, 0, B, y->in_l, y->in_pad, y->in_c);
}

FS_DEVICE FS_NOINLINE void dense_backward(const FsLayer *y, const float *w, float *gw, float *scratch, const float *x,
                              const float *d, float *dx, int B)
{
    const int U = y->out_c, LC = y->in_l * y->in_c, P = y->in_pad;
    const long xs = (long)(y->in_l + 2 * P) * y->in_c;
    rows_colsum(gw + y->b, d, B, 1, 0, U);
    ops_gemm(LC, U, B, x + (long)P * y->in_c, st_plain(1), st_plain(xs), d, st_plain(U), gw + y->w, st_plain(U), 1);
    if (!dx) return;
    dense_dgrad_prepare(y, scratch, d, dx, B);
    ops_gemm(LC, B, U, w + y->w, st_plain(U), st_plain(1), scratch, st_plain(dense_bpad(B)),
             dx + (long)P * y->in_c, st_plain(1), xs);
}

/* Columns of one weight row per group: eight 16-lane accumulators, enough
 * independent multiply-add chains to keep the FMA units busy. Fusing only
 * happens at small batches (step_fuses), where the batch gradient dZ stays
 * in L1 and a row at a time beats the GEMM's tiles, whose per-tile set-up
 * would dominate eight multiply-adds. */
#define DENSE_GW 128
/* DENSE_ROLLED: keep the next loop rolled (nvcc; nothing elsewhere). The
 * loops over a row's g[] run at most DENSE_GW times, and nvcc unrolled
 * them whole with g[] in registers: about 1,000 bytes of spills in
 * dense_backward_fused under the kernel's register budget (kernel.h). The
 * arithmetic is the same rolled or not. */
#ifdef __CUDACC__
#define DENSE_ROLLED _Pragma("unroll 1")
#else
#define DENSE_ROLLED
#endif
/* Weight rows per work item (a multiple of FS_GEMM_MR): the input
 * gradient's 8 x 8 tile at batch 8. */
#define DENSE_ROWS (2 * FS_GEMM_MR)

/* g[j] = sum over b, in order, of x[b * xs] * d[b * U + j], j < nu: part of
 * one weight row's gradient, as ops_gemm sums it (from zero, k = b in order). */
FS_DEVICE static inline void dense_row_grad(float *g, int nu, const float *x, long xs, const float *d, int U, int B)
{
#if defined(FS_SIMD) && !FS_WIDE_TILES
    /* AVX2 (simd.h): 64 columns, eight v8 accumulators, per pass over
     * the batch; each column's sum is the same chain as below. */
    if (nu == DENSE_GW || nu == DENSE_GW / 2) {
        for (int j0 = 0; j0 < nu; j0 += DENSE_GW / 2) {
            v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
            for (int b = 0; b < B; b++) {
                const float xb = x[b * xs];
                const v8 *db = (const v8 *)(d + (long)b * U + j0);
                a0 = vfma8s(xb, db[0], a0), a1 = vfma8s(xb, db[1], a1), a2 = vfma8s(xb, db[2], a2);
                a3 = vfma8s(xb, db[3], a3), a4 = vfma8s(xb, db[4], a4), a5 = vfma8s(xb, db[5], a5);
                a6 = vfma8s(xb, db[6], a6), a7 = vfma8s(xb, db[7], a7);
            }
            v8 *gv = (v8 *)(g + j0);
            gv[0] = a0, gv[1] = a1, gv[2] = a2, gv[3] = a3, gv[4] = a4, gv[5] = a5, gv[6] = a6, gv[7] = a7;
        }
        return;
    }
#elif defined(FS_SIMD)
    if (nu == DENSE_GW) {
        v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
        for (int b = 0; b < B; b++) {
            const float xb = x[b * xs];
            const v16 *db = (const v16 *)(d + (long)b * U);
            a0 = vfma16s(xb, db[0], a0), a1 = vfma16s(xb, db[1], a1), a2 = vfma16s(xb, db[2], a2);
            a3 = vfma16s(xb, db[3], a3), a4 = vfma16s(xb, db[4], a4), a5 = vfma16s(xb, db[5], a5);
            a6 = vfma16s(xb, db[6], a6), a7 = vfma16s(xb, db[7], a7);
        }
        v16 *gv = (v16 *)g;
        gv[0] = a0, gv[1] = a1, gv[2] = a2, gv[3] = a3, gv[4] = a4, gv[5] = a5, gv[6] = a6, gv[7] = a7;
        return;
    }
    if (nu == DENSE_GW / 2) {
        v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int b = 0; b < B; b++) {
            const float xb = x[b * xs];
            const v16 *db = (const v16 *)(d + (long)b * U);
            a0 = vfma16s(xb, db[0], a0), a1 = vfma16s(xb, db[1], a1);
            a2 = vfma16s(xb, db[2], a2), a3 = vfma16s(xb, db[3], a3);
        }
        v16 *gv = (v16 *)g;
        gv[0] = a0, gv[1] = a1, gv[2] = a2, gv[3] = a3;
        return;
    }
#endif
    DENSE_ROLLED for (int j = 0; j < nu; j++) g[j] = 0.0f;
    for (int b = 0; b < B; b++) {
        const float xb = x[b * xs], *db = d + (long)b * U;
        DENSE_ROLLED for (int j = 0; j < nu; j++) g[j] = FS_FMA(xb, db[j], g[j]);
    }
}

/* Rows [t * DENSE_ROWS, +DENSE_ROWS) of the fused update: their input
 * gradient, then their weight gradient straight into the optimizer.
 * Nonzero if a gradient there was not finite. */
FS_DEVICE static inline int dense_fused_block(const FsLayer *y, float *w, float *m1, float *m2, const float *scratch,
                                              const float *xin, long xs, const float *d, float *dx, int B,
                                              const FsOptStep *o, long t)
{
    const int U = y->out_c, LC = y->in_l * y->in_c, P = y->in_pad;
    const long i0 = t * DENSE_ROWS;
    const int mr = LC - i0 < DENSE_ROWS ? (int)(LC - i0) : DENSE_ROWS;
    if (dx)
        ops_gemm_rows(i0, DENSE_ROWS, LC, B, U, w + y->w, st_plain(U), st_plain(1), scratch,
                      st_plain(dense_bpad(B)), dx + (long)P * y->in_c, st_plain(1), xs);
    /* inf * 0 and NaN * 0 are NaN, lane by lane: a non-finite
     * gradient diverges the model, as its norm would have. The lanes let
     * the CPU's loop vectorise; a block's thread keeps one (the same
     * verdict, in one register instead of sixteen). */
#if FS_ONE_THREAD
    float chk[16];
    for (int l = 0; l < 16; l++) chk[l] = 0.0f;
#else
    float chk = 0.0f;
#endif
    for (long i = i0; i < i0 + mr; i++) {
        const long row = y->w + i * U;
        for (int u0 = 0; u0 < U; u0 += DENSE_GW) {
            const int nu = U - u0 < DENSE_GW ? U - u0 : DENSE_GW;
            float g[DENSE_GW];
            dense_row_grad(g, nu, xin + i, xs, d + u0, U, B);
#if FS_ONE_THREAD
            int v = 0;
            for (; v + 16 <= nu; v += 16)
                for (int l = 0; l < 16; l++) chk[l] += g[v + l] * 0.0f;
            for (; v < nu; v++) chk[0] += g[v] * 0.0f;
#else
            DENSE_ROLLED for (int v = 0; v < nu; v++) chk += g[v] * 0.0f;
#endif
            float *wr = w + row + u0, *m1r = m1 + row + u0, *m2r = m2 + row + u0;
            if (o->opt == FS_OPT_SGD)
                DENSE_ROLLED for (int j = 0; j < nu; j++) opt_sgd(o, wr + j, m1r + j, g[j]);
            else if (o->plain)
                DENSE_ROLLED for (int j = 0; j < nu; j++) opt_adam_plain(o, wr + j, m1r + j, m2r + j, g[j]);
            else
                DENSE_ROLLED for (int j = 0; j < nu; j++) opt_adam(o, wr + j, m1r + j, m2r + j, g[j]);
        }
    }
#if FS_ONE_THREAD
    int bad = 0;
    for (int l = 0; l < 16; l++) bad |= chk[l] != chk[l];
    return bad;
#else
    return chk != chk;
#endif
}

#ifdef FS_TEAM
/* The blocks as a range that idle pool threads may share (team.h). */
typedef struct {
    const FsLayer *y;
    float *w, *m1, *m2;
    const float *scratch, *xin;
    long xs;
    const float *d;
    float *dx;
    int B;
    FsOptStep o;
    int bad;
} DenseFused;

static void dense_fused_range(void *arg, long lo, long hi)
{
    DenseFused *l = arg;
    /* A local copy, for the reason dense_backward_fused gives. */
    const FsOptStep oc = l->o;
    int bad = 0;
    for (long t = lo; t < hi; t++)
        bad |= dense_fused_block(l->y, l->w, l->m1, l->m2, l->scratch, l->xin, l->xs, l->d, l->dx, l->B, &oc, t);
    if (bad) __atomic_fetch_or(&l->bad, bad, __ATOMIC_RELAXED);
}
#endif

/* Fused updates run by this thread, CPU build only: the evidence that
 * fusing happened (tests/test_fused.c), one thread-local increment per
 * layer and step. Not in the GPU or emulated-block builds of this file. */
#if FS_ONE_THREAD
_Thread_local long fs_dense_fused_calls;
#define DENSE_FUSED_RAN() ((void)fs_dense_fused_calls++)
#else
#define DENSE_FUSED_RAN() ((void)0)
#endif

FS_DEVICE FS_NOINLINE int dense_backward_fused(const FsLayer *y, float *w, float *gw, float *m1, float *m2, float *scratch,
                                   const float *x, const float *d, float *dx, int B, const FsOptStep *opt)
{
    DENSE_FUSED_RAN();
    /* A local copy: stores through w could alias *opt, and reloading it
     * every element stops vectorisation. */
    const FsOptStep oc = *opt, *o = &oc;
    const int U = y->out_c, LC = y->in_l * y->in_c, P = y->in_pad;
    const long xs = (long)(y->in_l + 2 * P) * y->in_c;
    const float *xin = x + (long)P * y->in_c;
    /* The bias is left to step_update, like every other parameter. */
    rows_colsum(gw + y->b, d, B, 1, 0, U);
    if (dx) dense_dgrad_prepare(y, scratch, d, dx, B);
    int bad = 0;
    /* A block's rows are read and written by its thread alone: the input
     * gradient of those rows reads the weights before their update. */
#ifdef FS_TEAM
    DenseFused l = {y, w, m1, m2, scratch, xin, xs, d, dx, B, oc, 0};
    team_for((LC + DENSE_ROWS - 1) / DENSE_ROWS, (double)LC * U * (2 * B + 48), dense_fused_range, &l);
    bad = l.bad;
    (void)o;
#else
    FS_PARFOR(t, (LC + DENSE_ROWS - 1) / DENSE_ROWS)
    bad |= dense_fused_block(y, w, m1, m2, scratch, xin, xs, d, dx, B, o, t);
#endif
    FS_SYNC();
    return bad;
}
