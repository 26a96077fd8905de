/*
 * kernels/dnn_kernels.cu: the library tier's own small kernels around the
 * libraries' products: im2col, interior rows packed and added, and
 * conv_dgrad's flipped, transposed weights (dnn_impl.h). Each output is
 * written by one thread and only copied or added once (y += t is the
 * single addition the trainer's GEMM makes), so none changes a bit of what
 * the CPU trainer computes and none needs an atomic. Written with
 * kernel_macros.h so that the stand-in build compiles them as C.
 */
#if defined(FS_CUDA_EMULATE)
#include <cuda_runtime.h> /* the stand-in */
#endif

#include "dnn_impl.h"
#include "kernel_macros.h"

#define DNN_THREADS 128u
#define DNN_MAX_BLOCKS 4096L

/* A grid for n elements, grid-strided beyond DNN_MAX_BLOCKS blocks. */
static unsigned dnn_grid(long n)
{
    long b = (n + DNN_THREADS - 1) / DNN_THREADS;
    return (unsigned)(b < 1 ? 1 : b > DNN_MAX_BLOCKS ? DNN_MAX_BLOCKS : b);
}

/* One model's rows of a group's padded tensor: geometry shared by the kernels. */
typedef struct {
    const float *src;
    float *dst;
    long n;        /* elements to write */
    long ss;       /* floats from one model's padded tensor to the next's */
    int B, L, P, C; /* examples, positions, pad rows, channels */
    int K, dil;     /* im2col's taps; K = 1, dil = 0 for the row kernels */
} RowsArgs;

/* dst[g][r][k C + c] = src[g ss + (b (L + 2P) + P + p + (k - K/2) dil) C + c], r = b L + p. */
FS_KERNEL_OF(dnn_im2col_kernel, RowsArgs, a)
{
    const long kc = (long)a.K * a.C, rows = (long)a.B * a.L;
    for (long i = FS_GLOBAL_ID; i < a.n; i += FS_GLOBAL_THREADS) {
        const long j = i % kc, r = (i / kc) % rows, g = i / kc / rows;
        const long k = j / a.C, c = j % a.C, b = r / a.L, p = r % a.L;
        const long q = b * (a.L + 2L * a.P) + a.P + p + (k - a.K / 2) * a.dil;
        a.dst[i] = a.src[g * a.ss + q * a.C + c];
    }
}

FS_KERNEL_OF(dnn_pack_kernel, RowsArgs, a)
{
    const long rows = (long)a.B * a.L;
    for (long i = FS_GLOBAL_ID; i < a.n; i += FS_GLOBAL_THREADS) {
        const long c = i % a.C, r = (i / a.C) % rows, g = i / a.C / rows;
        const long q = (r / a.L) * (a.L + 2L * a.P) + a.P + r % a.L;
        a.dst[i] = a.src[g * a.ss + q * a.C + c];
    }
}

/* Here src is the packed t and dst the padded tensor. */
FS_KERNEL_OF(dnn_add_kernel, RowsArgs, a)
{
    const long rows = (long)a.B * a.L;
    for (long i = FS_GLOBAL_ID; i < a.n; i += FS_GLOBAL_THREADS) {
        const long c = i % a.C, r = (i / a.C) % rows, g = i / a.C / rows;
        const long q = (r / a.L) * (a.L + 2L * a.P) + a.P + r % a.L;
        a.dst[g * a.ss + q * a.C + c] += a.src[i];
    }
}

typedef struct {
    const float *W;
    float *Wf;
    long n, ws;
    int K, C, F;
} FlipArgs;

FS_KERNEL_OF(dnn_flip_kernel, FlipArgs, a)
{
    const long kfc = (long)a.K * a.F * a.C;
    for (long i = FS_GLOBAL_ID; i < a.n; i += FS_GLOBAL_THREADS) {
        const long g = i / kfc, e = i % kfc, c = e % a.C, jf = e / a.C, f = jf % a.F, j = jf / a.F;
        a.Wf[i] = a.W[g * a.ws + ((a.K - 1 - j) * a.C + c) * a.F + f];
    }
}

static RowsArgs rows_args(const FsDnnConv *c, int C, const float *src, float *dst, long ss, long per_row)
{
    RowsArgs a = {src, dst, (long)c->G * c->B * c->L * per_row, ss, c->B, c->L, c->P, C, 1, 0};
    return a;
}

cudaError_t dnn_im2col(const FsDnnConv *c, int C, const float *x, long xs, float *col, cudaStream_t s)
{
    RowsArgs a = rows_args(c, C, x, col, xs, (long)c->K * C);
    a.K = c->K, a.dil = c->dil;
    return FS_LAUNCH_OF(dnn_im2col_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}

cudaError_t dnn_pack_rows(const FsDnnConv *c, int C, const float *x, long xs, float *out, cudaStream_t s)
{
    RowsArgs a = rows_args(c, C, x, out, xs, C);
    return FS_LAUNCH_OF(dnn_pack_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}

cudaError_t dnn_add_rows(const FsDnnConv *c, int C, const float *t, float *y, long ys, cudaStream_t s)
{
    RowsArgs a = rows_args(c, C, t, y, ys, C);
    return FS_LAUNCH_OF(dnn_add_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}

cudaError_t dnn_flip_weights(const FsDnnConv *c, const float *W, float *Wf, cudaStream_t s)
{
    FlipArgs a = {W, Wf, (long)c->G * c->K * c->F * c->C, c->ws, c->K, c->C, c->F};
    return FS_LAUNCH_OF(dnn_flip_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}

/* ---- the cuDNN back end's layout ---------------------------------------- */

typedef struct {
    const float *src;
    float *dst;
    long n, ps;       /* elements; the per-model tensor's model stride */
    int G, B, L, P, ch;
    int add;          /* 0: interleave (padded -> grouped), 1: de-interleave and add */
} GroupArgs;

FS_KERNEL_OF(dnn_group_kernel, GroupArgs, a)
{
    const long gc = (long)a.G * a.ch;
    for (long i = FS_GLOBAL_ID; i < a.n; i += FS_GLOBAL_THREADS) {
        const long r = i / gc, g = (i % gc) / a.ch, c = i % a.ch;
        const long q = (r / a.L) * (a.L + 2L * a.P) + a.P + r % a.L, o = g * a.ps + q * a.ch + c;
        if (a.add)
            a.dst[o] += a.src[i];
        else
            a.dst[i] = a.src[o];
    }
}

static cudaError_t group_launch(const FsDnnConv *c, int ch, const float *src, float *dst, long ps, int add,
                                cudaStream_t s)
{
    GroupArgs a = {src, dst, (long)c->B * c->L * c->G * ch, ps, c->G, c->B, c->L, c->P, ch, add};
    return FS_LAUNCH_OF(dnn_group_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}

cudaError_t dnn_interleave(const FsDnnConv *c, int ch, const float *src, long ss, float *dst, cudaStream_t s)
{
    return group_launch(c, ch, src, dst, ss, 0, s);
}

cudaError_t dnn_deinterleave_add(const FsDnnConv *c, int ch, const float *src, float *dst, long ds, cudaStream_t s)
{
    return group_launch(c, ch, src, dst, ds, 1, s);
}

typedef struct {
    const float *src;
    float *dst;
    long n, ws;
    int K, C, F, add; /* 0: W -> Wt, 1: gW += Wt */
} FilterArgs;

FS_KERNEL_OF(dnn_filter_kernel, FilterArgs, a)
{
    const long kc = (long)a.K * a.C, fkc = a.F * kc;
    for (long i = FS_GLOBAL_ID; i < a.n; i += FS_GLOBAL_THREADS) {
        const long g = i / fkc, f = (i % fkc) / kc, kcj = i % kc, o = g * a.ws + kcj * a.F + f;
        if (a.add)
            a.dst[o] += a.src[i];
        else
            a.dst[i] = a.src[o];
    }
}

cudaError_t dnn_filter_to(const FsDnnConv *c, const float *W, float *Wt, cudaStream_t s)
{
    FilterArgs a = {W, Wt, (long)c->G * c->F * c->K * c->C, c->ws, c->K, c->C, c->F, 0};
    return FS_LAUNCH_OF(dnn_filter_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}

cudaError_t dnn_filter_add(const FsDnnConv *c, const float *Wt, float *gW, cudaStream_t s)
{
    FilterArgs a = {Wt, gW, (long)c->G * c->F * c->K * c->C, c->ws, c->K, c->C, c->F, 1};
    return FS_LAUNCH_OF(dnn_filter_kernel, dnn_grid(a.n), DNN_THREADS, s, a);
}
