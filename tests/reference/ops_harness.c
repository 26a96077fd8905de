/*
 * ops_harness: the backends and the comparisons of tests/test_ops.c
 * (included by it, so that its CHECKs count there).
 *
 * A call runs on every backend from the same input arena: the CPU trainer
 * (the library's code, vector forms), the emulated block (ops_emu.c, the
 * portable forms, several threads) and the GPU (ops_gpu.cu) where one is
 * present. Each result is compared with the reference (ops_ref.c), and the
 * emulated block's whole arena with the CPU's, bitwise: the vector forms
 * claim to compute the portable loops' sums in the same order.
 *
 * Tolerances. The reference sums in double (exact to ~1e-16 here); the
 * trainer in float, in its own order (tiles, lanes, FMA contraction). For a
 * float sum of n terms in any order, |error| <= gamma_n * sum |terms|, gamma_n
 * = n u / (1 - n u), u = 2^-24 (Higham, "Accuracy and Stability of Numerical
 * Algorithms", 2nd ed., sections 3.1 and 4.2), FMA or not. So each value is
 * checked against
 *     |got - ref| <= (n + 16) u mag
 * where mag is the sum of the magnitudes of its terms (the op applied to
 * absolute values, see each check) and the 16 covers the few roundings of
 * the element-wise parts (activations: e^x to 1.2e-7, tanhf to 2 ulp). The
 * bound holds whatever the summation order, so it cannot fail spuriously,
 * and it is tight enough that a wrong index, a lost term or a missed tile
 * edge (an error of the order of one term, mag / n) fails it while
 * n (n + 16) u < 1, n up to about 4000 (here n is at most a few hundred;
 * the largest error seen is about a tenth of its tolerance, printed at the
 * end). Exact results (dropout masks, batch windows, predictions, what an
 * op must leave alone) are compared exactly.
 */
#include <stdlib.h>

#include "gpu/gpu.h"
#include "ops_call.h"
#include "ops_ref.h"
#include "train/layers.h"

#define U_ROUND (1.0 / 16777216.0) /* u = 2^-24, float's unit roundoff */

enum { BE_CPU, BE_EMU, BE_GPU, BE_N };
static const char *be_name[BE_N] = {"cpu", "emulated block", "gpu"};

/* src/train/dense.c: fused dense updates run by this thread (CPU build). */
extern _Thread_local long fs_dense_fused_calls;

static FsRng rng;
static int gpu_ready;
static long n_runs[BE_N];
static double worst_ratio[BE_N]; /* the largest |got - ref| / tolerance seen */

/* A case's inputs and each backend's arena after the call. */
typedef struct {
    const FsNet *net; /* NULL: a bare arena (OPS_GEMM) */
    uint32_t n_train;
    size_t model_bytes, bytes;
    char *in;
    char *out[BE_N];  /* NULL: that backend did not run */
    OpsCall call[BE_N];
    OpsScalars sc;
} OpsRun;

static float urand(float lo, float hi)
{
    return lo + (hi - lo) * fs_rng_uniform(&rng);
}

static int irand(int n)
{
    return (int)fs_rng_below(&rng, (uint32_t)n);
}

static void harness_init(uint64_t seed)
{
    uint64_t w[2] = {seed, 0x0b5};
    fs_rng_seed(&rng, w, 2);
    char why[256] = "built without the CUDA backend";
#if defined(FS_HAVE_CUDA) && !defined(FS_CUDA_STANDIN_BUILD) /* ops_gpu.cu: nvcc only */
    if (gpu_count() > 0) gpu_ready = 1;
    gpu_describe(0, why, sizeof why);
#endif
    if (gpu_ready) printf("GPU leg: %s\n", why);
    else printf("GPU leg skipped: %s\n", why);
    /* scripts/gpu-check sets this: there, a GPU leg that cannot run fails. */
    const char *req = getenv("FOLDSWEEP_REQUIRE_GPU");
    if (req && strcmp(req, "1") == 0) CHECK_MSG(gpu_ready, "FOLDSWEEP_REQUIRE_GPU=1 but the GPU leg cannot run: %s", why);
}

static void arena_init(OpsRun *r, const FsNet *net, uint32_t n_train, size_t extra)
{
    memset(r, 0, sizeof *r);
    r->net = net;
    r->n_train = n_train;
    r->model_bytes = net ? (core_model_bytes(net, n_train) + 255) / 256 * 256 : 0;
    r->bytes = r->model_bytes + extra;
    r->in = fs_aligned_alloc(r->bytes);
    memset(r->in, 0, r->bytes);
    for (int be = 0; be < BE_N; be++) r->out[be] = NULL;
}

static void arena_free(OpsRun *r)
{
    free(r->in);
    for (int be = 0; be < BE_N; be++) free(r->out[be]);
}

/* The model as it lies in `arena` (one of r's), for reading results. */
static FsModel arena_model(const OpsRun *r, char *arena)
{
    FsModel m;
    core_model_bind(&m, r->net, arena, r->n_train);
    m.step = r->sc.step;
    m.drop_key = r->sc.drop_key;
    m.lr = r->sc.lr;
    return m;
}

/* The next inputs are the CPU's results (a backward pass after a forward). */
static void arena_take_cpu(OpsRun *r)
{
    memcpy(r->in, r->out[BE_CPU], r->bytes);
    for (int be = 0; be < BE_N; be++) {
        free(r->out[be]);
        r->out[be] = NULL;
    }
}

#if defined(FS_HAVE_CUDA) && !defined(FS_CUDA_STANDIN_BUILD) /* ops_gpu.cu: nvcc only */
static int run_gpu(OpsRun *r, OpsCall *call, int threads, char *why, size_t n)
{
    char *d_arena = NULL;
    FsNet *d_net = NULL;
    FsModel *d_m = NULL;
    OpsCall *d_call = NULL;
    int rc = ops_gpu_alloc((void **)&d_arena, r->bytes, why, n) || ops_gpu_alloc((void **)&d_call, sizeof *call, why, n) ||
             ops_gpu_copy(d_arena, r->in, r->bytes, 1, why, n) || ops_gpu_copy(d_call, call, sizeof *call, 1, why, n);
    if (!rc && r->net) {
        rc = ops_gpu_alloc((void **)&d_net, sizeof *r->net, why, n) || ops_gpu_alloc((void **)&d_m, sizeof *d_m, why, n) ||
             ops_gpu_copy(d_net, r->net, sizeof *r->net, 1, why, n);
        /* core_model_bind reads the net's sizes: bind with the host's copy,
         * then point the model at the device's. */
        FsModel m = arena_model(r, d_arena);
        m.net = d_net;
        if (!rc) rc = ops_gpu_copy(d_m, &m, sizeof m, 1, why, n);
    }
    if (!rc) rc = ops_gpu_exec(d_m, d_arena, d_call, threads, why, n);
    if (!rc)
        rc = ops_gpu_copy(r->out[BE_GPU], d_arena, r->bytes, 0, why, n) || ops_gpu_copy(call, d_call, sizeof *call, 0, why, n);
    ops_gpu_free(d_arena);
    ops_gpu_free(d_net);
    ops_gpu_free(d_m);
    ops_gpu_free(d_call);
    return rc ? -1 : 0;
}
#endif

/* Runs call on every backend from r->in; the emulated block must leave
 * exactly the CPU's bytes. */
static void run_call(OpsRun *r, const char *what, const OpsCall *call)
{
    static const int emu_threads[] = {3, 8, 1, 5, 2};
    static int turn;
    turn++;
    for (int be = 0; be < BE_N; be++) {
        free(r->out[be]);
        r->out[be] = NULL;
        if (be == BE_GPU && !gpu_ready) continue;
        r->out[be] = fs_aligned_alloc(r->bytes);
        memcpy(r->out[be], r->in, r->bytes);
        r->call[be] = *call;
        FsModel m = {0};
        if (r->net) m = arena_model(r, r->out[be]);
        if (be == BE_CPU) {
            ops_exec(r->net ? &m : NULL, r->out[be], &r->call[be]);
        } else if (be == BE_EMU) {
            ops_emu_run(r->net ? &m : NULL, r->out[be], &r->call[be], emu_threads[turn % 5]);
        } else {
#if defined(FS_HAVE_CUDA) && !defined(FS_CUDA_STANDIN_BUILD) /* ops_gpu.cu: nvcc only */
            static const int gpu_threads[] = {128, 96, 32}; /* the backend's, and fewer */
            char why[512];
            if (run_gpu(r, &r->call[be], gpu_threads[turn % 3], why, sizeof why) != 0) {
                CHECK_MSG(0, "%s on the GPU: %s", what, why);
                free(r->out[be]);
                r->out[be] = NULL;
                continue;
            }
#endif
        }
        n_runs[be]++;
    }
    long first = -1;
    for (size_t i = 0; i < r->bytes && first < 0; i++)
        if (r->out[BE_CPU][i] != r->out[BE_EMU][i]) first = (long)i;
    /* The floats there (the arena is float-aligned): how far apart says
     * whether it is an order of summation or a wrong result. */
    float fc = 0.0f, fe = 0.0f;
    if (first >= 0) {
        size_t at = (size_t)first / sizeof(float) * sizeof(float);
        memcpy(&fc, r->out[BE_CPU] + at, sizeof fc);
        memcpy(&fe, r->out[BE_EMU] + at, sizeof fe);
    }
    CHECK_MSG(first < 0, "%s: the emulated block (%d threads) differs from the CPU at arena byte %ld (%.9g, CPU %.9g)",
              what, emu_threads[turn % 5], first, (double)fe, (double)fc);
    CHECK_MSG(memcmp(&r->call[BE_EMU].ret, &r->call[BE_CPU].ret, sizeof(double)) == 0,
              "%s: emulated block returned %.9g, CPU %.9g", what,
              r->call[BE_EMU].ret, r->call[BE_CPU].ret);
}

/* ---------------------------------------------------------------------- */
/* Comparisons.                                                             */

static RefShape flat_shape(long n)
{
    RefShape s = {1, (int)n, 0, 1};
    return s;
}

static void abs_floats(const float *x, long n, float *out)
{
    for (long i = 0; i < n; i++) out[i] = fabsf(x[i]);
}

/* got's interior against ref within (n_terms + 16) u mag; pad rows exactly 0. */
static void check_tensor(const char *what, int be, RefShape s, const float *got, const double *ref, const double *mag,
                         long n_terms)
{
    long bad = 0, count = 0;
    double worst = 0.0;
    for (int b = 0; b < s.B; b++)
        for (int p = -s.P; p < s.L + s.P; p++)
            for (int c = 0; c < s.C; c++) {
                long o = ref_at(s, b, p, c);
                count++;
                if (p < 0 || p >= s.L) {
                    if (got[o] != 0.0f && bad++ < 3)
                        fprintf(stderr, "  %s (%s): pad row (%d, %d, %d) written: %g\n", what, be_name[be], b, p, c,
                                got[o]);
                    continue;
                }
                double tol = (double)(n_terms + 16) * U_ROUND * mag[o], err = fabs((double)got[o] - ref[o]);
                if (tol > 0.0 && err / tol > worst) worst = err / tol;
                if (err <= tol) continue;
                if (bad++ < 3)
                    fprintf(stderr, "  %s (%s): (%d, %d, %d) got %.9g, reference %.9g, tolerance %.3g\n", what,
                            be_name[be], b, p, c, got[o], ref[o], tol);
            }
    if (worst > worst_ratio[be]) worst_ratio[be] = worst;
    CHECK_MSG(bad == 0, "%s (%s): %ld of %ld values off", what, be_name[be], bad, count);
}

/* Floats that the op must not touch. */
static void check_same(const char *what, int be, const float *got, const float *before, long n)
{
    long bad = 0;
    for (long i = 0; i < n; i++) bad += memcmp(&got[i], &before[i], sizeof(float)) != 0;
    CHECK_MSG(bad == 0, "%s (%s): %ld of %ld values changed that the op must leave", what, be_name[be], bad, n);
}

/* One optimizer step against the reference, with a first-order bound on
 * its float arithmetic: each stored value passes through at most eight
 * roundings (4 u relative of the magnitudes of its terms, taken twice), and
 * the gradient may carry an error gerr[i] (a float sum) and the clipping
 * scale a relative error srel (the float norm). */
static void check_optimizer(const char *what, int be, const FsTrainSpec *ts, long t, double scale, double srel, long n,
                            const float *w, const float *m1, const float *m2, const double *g, const double *gerr,
                            const float *gw, const float *gm1, const float *gm2, const unsigned char *skip)
{
    double *rw = fs_malloc(sizeof(double) * (size_t)n * 3), *rm1 = rw + n, *rm2 = rw + 2 * n;
    ref_optimizer(ts, t, scale, n, w, m1, m2, g, rw, rm1, rm2);
    const double u4 = 4.0 * U_ROUND, lr = ts->lr, b1 = ts->beta1, b2 = ts->beta2;
    const double l2 = ts->opt == FS_OPT_ADAMW ? 0.0 : ts->weight_decay;
    long bad = 0;
    for (long i = 0; i < n; i++) {
        if (skip && skip[i]) continue;
        double gi = g[i] * scale + l2 * w[i], gmag = fabs(g[i]) * scale + l2 * fabs(w[i]);
        double egi = scale * gerr[i] + fabs(g[i]) * scale * srel + u4 * gmag;
        double em1, em2 = 0.0, ew;
        if (ts->opt == FS_OPT_SGD) {
            em1 = egi + u4 * (ts->momentum * fabs(m1[i]) + gmag);
            ew = lr * em1 + u4 * (fabs(w[i]) + lr * fabs(rm1[i]));
        } else {
            em1 = (1.0 - b1) * egi + u4 * (b1 * fabs(m1[i]) + (1.0 - b1) * gmag);
            em2 = (1.0 - b2) * (2.0 * fabs(gi) * egi + egi * egi) + u4 * rm2[i];
            double c1 = 1.0 - pow(b1, (double)t), c2 = 1.0 - pow(b2, (double)t);
            double den = sqrt(rm2[i] / c2) + ts->eps, upd = lr * rm1[i] / c1 / den;
            double esq = rm2[i] > 0.0 ? fmin(em2 / (2.0 * sqrt(rm2[i])), sqrt(em2)) : sqrt(em2);
            double eden = esq / sqrt(c2) + u4 * den;
            ew = lr / c1 * em1 / den + fabs(upd) * (2.0 * u4 + eden / den) + u4 * (fabs(w[i]) + fabs(upd));
        }
        double d1 = fabs(gm1[i] - rm1[i]), d2 = fabs(gm2[i] - rm2[i]), dw = fabs(gw[i] - rw[i]);
        if (d1 <= 2.0 * em1 && d2 <= 2.0 * em2 && dw <= 2.0 * ew) continue;
        if (bad++ < 3)
            fprintf(stderr, "  %s (%s): parameter %ld: w %.9g / %.9g (tol %.3g), m1 %.9g / %.9g, m2 %.9g / %.9g\n", what,
                    be_name[be], i, gw[i], rw[i], 2.0 * ew, gm1[i], rm1[i], gm2[i], rm2[i]);
    }
    CHECK_MSG(bad == 0, "%s (%s): %ld of %ld parameters off", what, be_name[be], bad, n);
    free(rw);
}
