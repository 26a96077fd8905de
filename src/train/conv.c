/*
 * conv: the layers' input side (single source): the first layer's gather
 * from one-hot codes, and the convolution as GEMMs on padded tensors, which
 * conv1d (layers.c) and highway (blocks.c) both use. In its own file so
 * that layers.c (the dispatch) and blocks.c depend on it, not on each
 * other.
 */
#include "data/data.h"
#include "train/act.h"
#include "train/layers.h"
#include "train/simd.h"
#include "train/team.h"

/* ---------------------------------------------------------------------- */
/* The first layer reads one-hot codes: its forward pass is a gather-add of
 * weight rows, its weight gradient a scatter-add. No multiplications by
 * zero, and no one-hot tensor. Weight row (k, code) for conv, (q, code) for dense. */

/* Whether the gather is a convolution's (taps around each position: conv1d,
 * or a chain model's per-residue dense layer) or a dense layer's (the
 * whole window flattened). */
FS_DEVICE static inline int gather_is_conv(const FsLayer *y)
{
    return y->spec.kind == FS_LAYER_CONV || y->per_residue;
}

/* Interior row r (example r / OL, position r % OL) of the gather. */
FS_DEVICE static inline void gather_forward_row(const FsLayer *y, const float *w, const uint8_t *codes, float *out,
                                                long r)
{
    const int L = y->in_l, F = y->out_c, OL = y->out_l, P = y->out_pad;
    const int conv = gather_is_conv(y), K = conv ? y->spec.width : L, h = conv ? K / 2 : 0, dil = y->dil;
    const float *bias = w + y->b, *W = w + y->w;
    long b = r / OL;
    int p = (int)(r % OL);
    float *o = out + (b * (OL + 2 * P) + P + p) * (long)F;
    /* With feature columns the batch's load has written the bias and their
     * part already (step.c): the one-hot rows add to it; without one-hot
     * codes (no rows) nothing is added. */
    if (!y->feat)
        for (int f = 0; f < F; f++) o[f] = bias[f];
    for (int k = 0; k < (y->n_w ? K : 0); k++) {
        int q = conv ? p + (k - h) * dil : k;
        if (q < 0 || q >= L) continue;
        int code = codes[b * L + q];
        if (code >= FS_AA_INPUTS) continue; /* padding: zero one-hot */
        const float *wr = W + ((long)k * FS_AA_INPUTS + code) * F;
        for (int f = 0; f < F; f++) o[f] += wr[f];
    }
}

#ifdef FS_SIMD
#define GATHER_VECS 8 /* accumulators: half of AVX2's registers */
/* gather_forward_row for a convolution's gather without feature columns,
 * F a multiple of FS_VW: each run of up to GATHER_VECS vectors of the row
 * is summed in registers, the bias first and the taps in order (the row's
 * own additions in its order, so the same bits), and stored once, where
 * the portable row stores and reloads every tap's partial sums. */
static inline void gather_forward_vec(const FsLayer *y, const float *w, const uint8_t *codes, float *out, long r)
{
    const int L = y->in_l, F = y->out_c, OL = y->out_l, P = y->out_pad, K = y->spec.width, h = K / 2,
              dil = y->dil;
    const long b = r / OL;
    const int p = (int)(r % OL);
    const float *W = w + y->w, *wr[FS_MAX_WIDTH];
    int n = 0;
    for (int k = 0; k < K; k++) {
        const int q = p + (k - h) * dil;
        if (q < 0 || q >= L || codes[b * L + q] >= FS_AA_INPUTS) continue;
        wr[n++] = W + ((long)k * FS_AA_INPUTS + codes[b * L + q]) * F;
    }
    float *o = out + (b * (OL + 2 * P) + P + p) * (long)F;
    for (int f0 = 0; f0 < F; f0 += GATHER_VECS * FS_VW) {
        const int nv = (F - f0) / FS_VW < GATHER_VECS ? (F - f0) / FS_VW : GATHER_VECS;
        vw acc[GATHER_VECS];
        for (int v = 0; v < nv; v++) acc[v] = *(const vw *)(w + y->b + f0 + v * FS_VW);
        for (int t = 0; t < n; t++)
            for (int v = 0; v < nv; v++) acc[v] += *(const vw *)(wr[t] + f0 + v * FS_VW);
        for (int v = 0; v < nv; v++) *(vw *)(o + f0 + v * FS_VW) = acc[v];
    }
}
#endif

/* Columns [f0, f1) of the scatter, rows in order: deterministic. */
FS_DEVICE static inline void gather_backward_cols(const FsLayer *y, float *GW, const uint8_t *codes, const float *d,
                                                  int B, int f0, int f1)
{
    const int L = y->in_l, F = y->out_c, OL = y->out_l, P = y->out_pad;
    const int conv = gather_is_conv(y), K = conv ? y->spec.width : L, h = conv ? K / 2 : 0, dil = y->dil;
    for (long r = 0; r < (long)B * OL; r++) {
        long b = r / OL;
        int p = (int)(r % OL);
        const float *g = d + (b * (OL + 2 * P) + P + p) * (long)F;
        for (int k = 0; k < K; k++) {
            int q = conv ? p + (k - h) * dil : k;
            if (q < 0 || q >= L) continue;
            int code = codes[b * L + q];
            if (code >= FS_AA_INPUTS) continue;
            float *gr = GW + ((long)k * FS_AA_INPUTS + code) * F;
            int f = f0;
#ifdef FS_SIMD
            for (; f + FS_VW <= f1; f += FS_VW) *(vw *)(gr + f) += *(const vw *)(g + f);
#endif
            for (; f < f1; f++) gr[f] += g[f];
        }
    }
}

#define GATHER_CHUNK 16

#ifdef FS_TEAM
/* Both as ranges that idle pool threads may share (team.h): rows of the
 * output, or chunks of GATHER_CHUNK columns of the weight gradient (a
 * range of chunks in one walk of the rows, as one thread alone does). */
typedef struct {
    const FsLayer *y;
    const float *w, *d;
    float *out;
    const uint8_t *codes;
    int B;
} GatherLoop;

static void gather_forward_range(void *arg, long lo, long hi)
{
    const GatherLoop *l = arg;
    const FsLayer *y = l->y;
#ifdef FS_SIMD
    if (gather_is_conv(y) && !y->feat && y->n_w && y->out_c % FS_VW == 0 && y->spec.width <= FS_MAX_WIDTH) {
        for (long r = lo; r < hi; r++) gather_forward_vec(y, l->w, l->codes, l->out, r);
        return;
    }
#endif
    for (long r = lo; r < hi; r++) gather_forward_row(y, l->w, l->codes, l->out, r);
}

static void gather_backward_range(void *arg, long lo, long hi)
{
    const GatherLoop *l = arg;
    const int F = l->y->out_c;
    gather_backward_cols(l->y, l->out, l->codes, l->d, l->B, (int)lo * GATHER_CHUNK,
                         hi * GATHER_CHUNK < F ? (int)hi * GATHER_CHUNK : F);
}
#endif

FS_DEVICE FS_NOINLINE void gather_forward(const FsLayer *y, const float *w, const uint8_t *codes, float *out, int B)
{
    const long rows = (long)B * y->out_l;
#ifdef FS_TEAM
    const int K = gather_is_conv(y) ? y->spec.width : y->in_l;
    GatherLoop l = {y, w, NULL, out, codes, B};
    team_for(rows, 4.0 * rows * (K + 1) * y->out_c, gather_forward_range, &l);
#else
    FS_PARFOR(r, rows) gather_forward_row(y, w, codes, out, r);
#endif
    FS_SYNC();
}

FS_DEVICE FS_NOINLINE void gather_backward(const FsLayer *y, float *gw, const uint8_t *codes, const float *d, int B)
{
    const int F = y->out_c;
    float *GW = gw + y->w;
    if (!y->n_w) return; /* no one-hot rows: a net of feature columns alone */
    /* Parallel over column chunks, rows in order: deterministic scatter. */
#ifdef FS_TEAM
    const int K = gather_is_conv(y) ? y->spec.width : y->in_l;
    GatherLoop l = {y, NULL, d, GW, codes, B};
    /* Counted at one multiply-add per element, not its measured four:
     * each thread sharing it walks every row and code, so sharing it paid
     * only at several times the larger model's size. */
    team_for((F + GATHER_CHUNK - 1) / GATHER_CHUNK, (double)B * y->out_l * K * F, gather_backward_range, &l);
#else
    FS_PARFOR(t, (F + GATHER_CHUNK - 1) / GATHER_CHUNK)
    {
        int f0 = (int)t * GATHER_CHUNK, f1 = f0 + GATHER_CHUNK < F ? f0 + GATHER_CHUNK : F;
        gather_backward_cols(y, GW, codes, d, B, f0, f1);
    }
#endif
    FS_SYNC();
}

/* The first layer's input: one-hot codes (the gather, unless the net
 * reads none: then the bias alone) and feature columns (FsNet.feat_in, a
 * padded tensor like any layer's input) through their own weights wf: a
 * convolution's GEMM, or a dense layer's over the flattened window. */
FS_DEVICE static inline FsLayer input_features_view(const FsLayer *y)
{
    FsLayer v = *y;
    v.in_c = y->feat;
    v.w = y->wf;
    v.n_w = y->n_wf;
    return v;
}

/* The feature columns' part of the first layer: a convolution's GEMM, or
 * a dense layer's over the flattened window; forward into out (which
 * holds the bias), backward into the weight gradient. */
FS_DEVICE FS_NOINLINE void input_features(const FsModel *m, const FsLayer *y, float *out, const float *d, int B)
{
    const FsLayer v = input_features_view(y);
    const float *x = m->work + m->net->feat_in;
    const long xs = (long)(v.in_l + 2 * v.in_pad) * v.in_c;
    if (gather_is_conv(y) && d)
        conv_wgrad(&v, m->g + v.w, x, d, B, v.out_c);
    else if (gather_is_conv(y))
        conv_gemm(&v, m->w + v.w, x, out, B, v.out_c);
    else if (d)
        ops_gemm(v.in_l * v.in_c, v.out_c, B, x + (long)v.in_pad * v.in_c, st_plain(1), st_plain(xs), d,
                 st_plain(v.out_c), m->g + v.w, st_plain(v.out_c), 1);
    else
        ops_gemm(B, v.out_c, v.in_l * v.in_c, x + (long)v.in_pad * v.in_c, st_plain(xs), st_plain(1), m->w + v.w,
                 st_plain(v.out_c), out, st_plain(v.out_c), 1);
}

/* ---------------------------------------------------------------------- */
/* Convolution ("same", stride 1) and dense as GEMMs on padded tensors.   */

/* A dilated convolution's K taps are rows dil apart, so the K*C inputs of
 * an output are K runs of C floats, dil*C apart: a two-level stride
 * (core.h) that the GEMM walks as it walks contiguous rows. */
FS_DEVICE static inline FsStride conv_taps(int C, int dil)
{
    FsStride st = {C, (long)dil * C, 1};
    return dil > 1 ? st : st_plain(1);
}

/* out (+)= conv(x) with weights W [K*Cin][F]; with an activation act
 * (FS_GEMM_ACT only), act_forward's in the GEMM's epilogue. */
FS_DEVICE static void conv_gemm_with(const FsLayer *y, const float *W, const float *x, float *out, int B, int F,
                                     FsAct act, float *aux)
{
    const int L = y->in_l, C = y->in_c, P = y->in_pad, K = y->spec.width, h = K / 2 * y->dil;
    const float *A = x + (long)(P - h) * C;
    const FsStride am = st_rows(L, P, C), ak = conv_taps(C, y->dil), cm = st_rows(L, P, F);
#if FS_GEMM_ACT
    if (act != FS_ACT_LINEAR) {
        ops_gemm_act(B * L, F, K * C, A, am, ak, W, st_plain(F), out + (long)P * F, cm, act, y->spec.act_param,
                     aux + (long)P * F);
        return;
    }
#else
    (void)act, (void)aux;
#endif
    ops_gemm(B * L, F, K * C, A, am, ak, W, st_plain(F), out + (long)P * F, cm, 1);
}

FS_DEVICE void conv_gemm(const FsLayer *y, const float *W, const float *x, float *out, int B, int F)
{
    conv_gemm_with(y, W, x, out, B, F, FS_ACT_LINEAR, NULL);
}

FS_DEVICE void conv_gemm_act(const FsLayer *y, const float *W, const float *x, float *out, float *aux, int B)
{
    conv_gemm_with(y, W, x, out, B, y->out_c, y->spec.act, aux);
    if (!FS_GEMM_ACT) act_forward(y->spec.act, y->spec.act_param, out, aux, B, y->out_l, y->out_pad, y->out_c);
}

/* gW += x^T d for a conv: rows of gW are the K*Cin window inputs. A
 * dilated one as one GEMM per tap (Cin rows each): the two-level row
 * stride of all K taps at once keeps the GEMM off its fastest tile (rows
 * of adjacent floats, gemm.c's pairs), and each element of gW is the same
 * sum over positions in the same order either way, so the split changes
 * no bit of it (the GPU's tiles have no such path: one GEMM there). */
FS_DEVICE void conv_wgrad(const FsLayer *y, float *gW, const float *x, const float *d, int B, int F)
{
    const int L = y->in_l, C = y->in_c, P = y->in_pad, K = y->spec.width, h = K / 2 * y->dil;
    const float *x0 = x + (long)(P - h) * C;
#ifdef FS_SIMD
    if (y->dil > 1) {
        for (int k = 0; k < K; k++)
            ops_gemm(C, F, B * L, x0 + (long)k * y->dil * C, st_plain(1), st_rows(L, P, C), d + (long)P * F,
                     st_rows(L, P, F), gW + (long)k * C * F, st_plain(F), 1);
        return;
    }
#endif
    ops_gemm(K * C, F, B * L, x0, conv_taps(C, y->dil), st_rows(L, P, C), d + (long)P * F, st_rows(L, P, F), gW,
             st_plain(F), 1);
}

/* dx += conv^T(d): a "same" convolution of d with the flipped, transposed
 * kernel Wf [K*F][Cin], Wf[(j*F + f)][c] = W[(K-1-j)*Cin + c][f] (taps as
 * far apart as the forward's). */
FS_DEVICE void conv_dgrad(const FsLayer *y, const float *W, float *Wf, const float *d, float *dx, int B, int F)
{
    const int L = y->in_l, C = y->in_c, P = y->in_pad, K = y->spec.width, h = K / 2 * y->dil;
    for (int j = 0; j < K; j++) ops_transpose(W + (long)(K - 1 - j) * C * F, C, F, Wf + (long)j * F * C, C);
    ops_gemm(B * L, C, K * F, d + (long)(P - h) * F, st_rows(L, P, F), conv_taps(F, y->dil), Wf, st_plain(C),
             dx + (long)P * C, st_rows(L, P, C), 1);
}
