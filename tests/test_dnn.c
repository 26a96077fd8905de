/*
 * test_dnn: the GPU library tier's convolutions (kernels/dnn.h, issue #44)
 * against the CPU trainer's own conv_gemm, conv_wgrad and conv_dgrad, per
 * model, on random group shapes: groups of 1 to 5 models, dilation 1 to 4,
 * widths 1 to 9, 1 to 9 channels, window-like batches (B 2 or 3, pad rows
 * between examples), chains (B = 1) and ragged rows (a model's last rows
 * zero). Under the CUDA stand-in (FOLDSWEEP_CUDA=EMULATE) every buffer,
 * pad rows included, must be bitwise the trainer's; on a GPU each element
 * within test_ops' bound (n + 16) 2^-24 sum |a_i b_i| (Higham's gamma_n
 * for both sides' sums, 16 terms of slack for the library's blocking),
 * both back ends in FP32, the largest error / bound printed per product
 * (scripts/gpu-check keeps it). TF32 is another numeric mode, not a
 * tolerance: on a GPU it runs once more per back end and its largest
 * error relative to sum |a_i b_i| is reported, never failed; under the
 * stand-ins (which do not model TF32 rounding) it must be bitwise too.
 * A missing device is a skip, or a failure with FOLDSWEEP_REQUIRE_GPU=1
 * (gpu-check: there the GPU must be used). Then the cuBLAS stand-in itself: each transpose case against
 * a plain sum in the trainer's order, alpha / beta (beta = 0 reads no C),
 * its argument and pointer checks, and an injected failure
 * (FOLDSWEEP_EMU_FAIL=cublas:N) reported through fs_dnn_* with file:line.
 */
#include "test.h"
#include "train/layers.h" /* conv_gemm, conv_wgrad, conv_dgrad: the CPU trainer's */

#ifdef FS_HAVE_CUDA
#include "kernels/dnn.h"

#include <cublas_v2.h>

#ifdef FS_CUDA_STANDIN_BUILD
#define BITWISE 1
#define FAIL_AT 3 /* the third cuBLAS compute call fails (fault_case) */
#else
#define BITWISE 0
#endif

static unsigned long long rng = 88172645463325252ull;
static unsigned next_u(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}
static int irand(int n) { return (int)(next_u() % (unsigned)n); }
static float frand(void) { return (float)(next_u() % 2001u) / 1000.0f - 1.0f; }

/* Device copies of host arrays, and back. */
static float *dev(const float *h, size_t n)
{
    float *d = NULL;
    if (cudaMalloc((void **)&d, n * sizeof *d) != cudaSuccess) return NULL;
    cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice);
    return d;
}

typedef struct {
    FsDnnConv c;
    float *x, *W, *dy; /* inputs (pad rows zero) */
    float *y, *gW, *dx; /* destinations, random (pads too: they must stay) */
} Case;

/* A padded tensor of G models: interior rows random but for a ragged
 * model's last `zero` rows, pads zero, the gap between models random
 * (nothing may read it). */
static void fill_padded(float *t, const FsDnnConv *c, int ch, long s, int zero_rows)
{
    for (long i = 0; i < (long)c->G * s; i++) t[i] = frand();
    for (int g = 0; g < c->G; g++)
        for (int b = 0; b < c->B; b++)
            for (int q = 0; q < c->L + 2 * c->P; q++) {
                const int p = q - c->P, zero = p < 0 || p >= c->L || (g % 2 && b == c->B - 1 && p >= c->L - zero_rows);
                if (zero) memset(t + g * s + ((long)b * (c->L + 2 * c->P) + q) * ch, 0, (size_t)ch * sizeof *t);
            }
}

static void case_make(Case *k, int G, int B)
{
    FsDnnConv *c = &k->c;
    static const int widths[] = {1, 3, 5, 7, 9};
    c->G = G, c->B = B, c->K = widths[irand(5)], c->dil = 1 + irand(4);
    c->C = 1 + irand(9), c->F = 1 + irand(9);
    c->L = B == 1 ? 1 + irand(40) : 1 + irand(15);
    c->P = c->K / 2 * c->dil + irand(2);
    c->xs = (long)B * (c->L + 2 * c->P) * c->C + irand(3);
    c->ys = (long)B * (c->L + 2 * c->P) * c->F + irand(3);
    c->ws = (long)c->K * c->C * c->F + irand(3);
    const int ragged = irand(c->L);
    k->x = malloc((size_t)G * c->xs * sizeof(float)), k->dy = malloc((size_t)G * c->ys * sizeof(float));
    k->W = malloc((size_t)G * c->ws * sizeof(float)), k->gW = malloc((size_t)G * c->ws * sizeof(float));
    k->y = malloc((size_t)G * c->ys * sizeof(float)), k->dx = malloc((size_t)G * c->xs * sizeof(float));
    fill_padded(k->x, c, c->C, c->xs, ragged);
    fill_padded(k->dy, c, c->F, c->ys, ragged);
    for (long i = 0; i < G * c->ws; i++) k->W[i] = frand(), k->gW[i] = frand();
    for (long i = 0; i < G * c->ys; i++) k->y[i] = frand();
    for (long i = 0; i < G * c->xs; i++) k->dx[i] = frand();
}

static void case_free(Case *k)
{
    free(k->x), free(k->W), free(k->dy), free(k->y), free(k->gW), free(k->dx);
}

static FsLayer layer_of(const FsDnnConv *c)
{
    FsLayer v;
    memset(&v, 0, sizeof v);
    v.in_l = c->L, v.in_c = c->C, v.in_pad = c->P, v.spec.width = c->K, v.dil = c->dil;
    return v;
}

/* The trainer's results, model by model; with mag, sum |a||b| instead
 * (the same convolutions of the absolute values onto zeros). */
static void expect(const Case *k, float *y, float *gW, float *dx, int mag)
{
    const FsDnnConv *c = &k->c;
    const FsLayer v = layer_of(c);
    const long nx = c->G * c->xs, ny = c->G * c->ys, nw = c->G * c->ws;
    float *x = malloc(nx * sizeof *x), *W = malloc(nw * sizeof *W), *dy = malloc(ny * sizeof *dy);
    float *Wf = malloc((size_t)c->K * c->F * c->C * sizeof *Wf);
    for (long i = 0; i < nx; i++) x[i] = mag ? fabsf(k->x[i]) : k->x[i];
    for (long i = 0; i < ny; i++) dy[i] = mag ? fabsf(k->dy[i]) : k->dy[i];
    for (long i = 0; i < nw; i++) W[i] = mag ? fabsf(k->W[i]) : k->W[i];
    memcpy(y, k->y, ny * sizeof *y), memcpy(gW, k->gW, nw * sizeof *gW), memcpy(dx, k->dx, nx * sizeof *dx);
    if (mag) memset(y, 0, ny * sizeof *y), memset(gW, 0, nw * sizeof *gW), memset(dx, 0, nx * sizeof *dx);
    for (int g = 0; g < c->G; g++) {
        conv_gemm(&v, W + g * c->ws, x + g * c->xs, y + g * c->ys, c->B, c->F);
        conv_wgrad(&v, gW + g * c->ws, x + g * c->xs, dy + g * c->ys, c->B, c->F);
        conv_dgrad(&v, W + g * c->ws, Wf, dy + g * c->ys, dx + g * c->xs, c->B, c->F);
    }
    free(x), free(W), free(dy), free(Wf);
}

/* The mode of the cases running: FP32 is checked, TF32 on a GPU only
 * measured (report), and each product's largest error / bound (FP32) or
 * error / sum |a b| (TF32) kept for the summary line. */
static int tf32_mode;
static double worst[3];

/* got against want: bitwise (stand-ins), or within (n + 16) u sum |a b|. */
static int compare(int prod, const Case *k, const float *got, const float *want, const float *mag, long n,
                   int terms)
{
    static const char *name[3] = {"fwd", "wgrad", "dgrad"};
    const double u = 0x1p-24;
    for (long i = 0; i < n; i++) {
        const double e = fabs((double)got[i] - want[i]), tol = (terms + 16) * u * mag[i];
        /* 0 / 0 where a sum has no terms (a pad row): exact there. */
        const double r = tf32_mode ? (mag[i] > 0 ? e / mag[i] : e) : (tol > 0 ? e / tol : e > 0 ? INFINITY : 0);
        if (r > worst[prod]) worst[prod] = r;
        const int ok = BITWISE ? !memcmp(&got[i], &want[i], sizeof *got) : tf32_mode || e <= tol;
        if (!ok) {
            CHECK_MSG(0, "%s%s: element %ld: %.9g, the trainer %.9g (G %d B %d L %d P %d C %d F %d K %d dil %d)",
                      name[prod], tf32_mode ? " (TF32)" : "", i, got[i], want[i], k->c.G, k->c.B, k->c.L, k->c.P,
                      k->c.C, k->c.F, k->c.K, k->c.dil);
            return 0;
        }
    }
    CHECK(1);
    return 1;
}

/* One case through the back end: all three products, then every buffer. */
static void run_case(FsDnn *d, cudaStream_t s, Case *k)
{
    const FsDnnConv *c = &k->c;
    const long nx = c->G * c->xs, ny = c->G * c->ys, nw = c->G * c->ws;
    float *dx_ = dev(k->x, nx), *dW = dev(k->W, nw), *ddy = dev(k->dy, ny);
    float *dy_ = dev(k->y, ny), *dgW = dev(k->gW, nw), *ddx = dev(k->dx, nx);
    FsErr err = {0};
    CHECK(dx_ && dW && ddy && dy_ && dgW && ddx);
    CHECK_MSG(fs_dnn_reserve(d, c, 1, &err) == 0, "%s", err.msg);
    CHECK_MSG(fs_dnn_conv_fwd(d, c, dx_, dW, dy_, &err) == 0, "%s", err.msg);
    CHECK_MSG(fs_dnn_conv_wgrad(d, c, dx_, ddy, dgW, &err) == 0, "%s", err.msg);
    CHECK_MSG(fs_dnn_conv_dgrad(d, c, ddy, dW, ddx, &err) == 0, "%s", err.msg);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    float *y = malloc(ny * sizeof *y), *gW = malloc(nw * sizeof *gW), *dx = malloc(nx * sizeof *dx);
    float *ey = malloc(ny * sizeof *ey), *egW = malloc(nw * sizeof *egW), *edx = malloc(nx * sizeof *edx);
    float *my = malloc(ny * sizeof *my), *mgW = malloc(nw * sizeof *mgW), *mdx = malloc(nx * sizeof *mdx);
    cudaMemcpy(y, dy_, ny * sizeof *y, cudaMemcpyDeviceToHost);
    cudaMemcpy(gW, dgW, nw * sizeof *gW, cudaMemcpyDeviceToHost);
    cudaMemcpy(dx, ddx, nx * sizeof *dx, cudaMemcpyDeviceToHost);
    expect(k, ey, egW, edx, 0);
    expect(k, my, mgW, mdx, 1);
    compare(0, k, y, ey, my, ny, c->K * c->C + 1);
    compare(1, k, gW, egW, mgW, nw, c->B * c->L + 1);
    compare(2, k, dx, edx, mdx, nx, c->K * c->F + 1);
    free(y), free(gW), free(dx), free(ey), free(egW), free(edx), free(my), free(mgW), free(mdx);
    cudaFree(dx_), cudaFree(dW), cudaFree(ddy), cudaFree(dy_), cudaFree(dgW), cudaFree(ddx);
}

/* Each back end the build has (cuDNN's against the cuDNN stand-in in the
 * emulated build: its interleaved groups, filter layout and algorithm
 * filter, bitwise against the trainer too), in one math mode; prints the
 * largest error per product, which gpu-check's summary keeps. */
static void random_cases(cudaStream_t s, FsDnnBackend be, int tf32)
{
    FsErr err = {0};
    FsDnn *d = fs_dnn_open(be, s, tf32, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (!d) return;
    tf32_mode = tf32 && !BITWISE;
    worst[0] = worst[1] = worst[2] = 0.0;
    for (int i = 0; i < 60; i++) {
        Case k;
        case_make(&k, 1 + irand(5), i % 3 == 0 ? 1 : 1 + irand(3));
        run_case(d, s, &k);
        case_free(&k);
    }
    printf("test_dnn %s %s: 60 cases, %s fwd %.3g wgrad %.3g dgrad %.3g%s\n", be == FS_DNN_CUDNN ? "cuDNN" : "cuBLAS",
           tf32 ? "TF32" : "FP32",
           BITWISE ? "bitwise; largest error / bound" : tf32_mode ? "largest |err| / sum|a b|" : "largest |err| / bound",
           worst[0], worst[1], worst[2], tf32_mode ? " (reported, not checked; TF32's unit roundoff 2^-11 = 4.9e-4)" : "");
    tf32_mode = 0;
    /* A shape the back end refuses is named. */
    FsDnnConv bad = {2, 1, 8, 1, 3, 3, 5, 1, 100, 100, 45};
    CHECK(fs_dnn_reserve(d, &bad, 1, &err) < 0);
    CHECK_CONTAINS(err.msg, "P < K / 2 * dil");
    fs_dnn_close(d);
}

#ifdef FS_CUDA_STANDIN_BUILD
/* The N-th cuBLAS compute call fails: the third of this group's calls. */
static void fault_case(cudaStream_t s)
{
    FsErr err = {0};
    FsDnn *d = fs_dnn_open(FS_DNN_CUBLAS, s, 0, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (!d) return;
    Case k;
    case_make(&k, 2, 1);
    const FsDnnConv *c = &k.c;
    float *x = dev(k.x, c->G * c->xs), *W = dev(k.W, c->G * c->ws), *dy = dev(k.dy, c->G * c->ys);
    float *y = dev(k.y, c->G * c->ys), *gW = dev(k.gW, c->G * c->ws), *dx = dev(k.dx, c->G * c->xs);
    CHECK(fs_dnn_conv_fwd(d, c, x, W, y, &err) == 0);
    CHECK(fs_dnn_conv_wgrad(d, c, x, dy, gW, &err) == 0);
    CHECK(fs_dnn_conv_dgrad(d, c, dy, W, dx, &err) == -1);
    CHECK_CONTAINS(err.msg, "dnn_cublas.cu:");
    CHECK_CONTAINS(err.msg, "cublasSgemmStridedBatched");
    CHECK_CONTAINS(err.msg, "the GPU program failed to execute");
    /* One call failed, not the stream: the next goes through. */
    err.set = 0;
    CHECK_MSG(fs_dnn_conv_dgrad(d, c, dy, W, dx, &err) == 0, "%s", err.msg);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    cudaFree(x), cudaFree(W), cudaFree(dy), cudaFree(y), cudaFree(gW), cudaFree(dx);
    case_free(&k);
    fs_dnn_close(d);
}

/* C = alpha op(A) op(B) + beta C, column-major, each sum over p in order
 * from 0 with the trainer's FMA, then scaled: the stand-in's promise. */
static void gemm_ref(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                     int ldb, float beta, float *C, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++)
                s = FS_FMA(ta ? A[p + i * lda] : A[i + p * lda], tb ? B[j + p * ldb] : B[p + j * ldb], s);
            float *c = &C[i + j * ldc];
            *c = alpha == 1.0f && beta == 1.0f ? *c + s : beta == 0.0f ? alpha * s : alpha * s + beta * *c;
        }
}

static void gemm_cases(cublasHandle_t h, cudaStream_t s)
{
    for (int t = 0; t < 16; t++) {
        const int ta = t & 1, tb = (t >> 1) & 1, m = 1 + irand(13), n = 1 + irand(13), k = 1 + irand(21);
        const int lda = (ta ? k : m) + (t >> 2 & 1) * irand(3), ldb = (tb ? n : k) + irand(2), ldc = m + irand(2);
        const float alpha = t >> 3 ? 1.0f : 0.5f, beta = t % 3 == 0 ? 0.0f : 1.0f;
        const size_t na = (size_t)lda * (ta ? m : k), nb = (size_t)ldb * (tb ? k : n), nc = (size_t)ldc * n;
        float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *R = malloc(nc * 4);
        for (size_t i = 0; i < na; i++) A[i] = frand();
        for (size_t i = 0; i < nb; i++) B[i] = frand();
        /* beta = 0: C is not read, so NaN there must not come through. */
        for (size_t i = 0; i < nc; i++) C[i] = R[i] = beta == 0.0f ? NAN : frand();
        float *dA = dev(A, na), *dB = dev(B, nb), *dC = dev(C, nc);
        CHECK(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, dA, lda,
                          dB, ldb, &beta, dC, ldc) == CUBLAS_STATUS_SUCCESS);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess);
        cudaMemcpy(C, dC, nc * 4, cudaMemcpyDeviceToHost);
        gemm_ref(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, R, ldc);
        int same = 1;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) same &= !memcmp(&C[i + j * ldc], &R[i + j * ldc], 4);
        CHECK_MSG(same, "Sgemm %c%c m %d n %d k %d lda %d ldb %d ldc %d alpha %g beta %g", ta ? 'T' : 'N',
                  tb ? 'T' : 'N', m, n, k, lda, ldb, ldc, alpha, beta);
        cudaFree(dA), cudaFree(dB), cudaFree(dC);
        free(A), free(B), free(C), free(R);
    }
}

/* cuBLAS's argument checks, and the stand-in's pointer checks. */
static void check_cases(cublasHandle_t h)
{
    const float one = 1.0f;
    float *A = NULL, *host = calloc(64, sizeof *host);
    cudaMalloc((void **)&A, 16 * sizeof *A);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A, 4, A, 4, &one, A, 4) == CUBLAS_STATUS_SUCCESS);
    /* lda smaller than op(A)'s stored rows: columns would overlap. */
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A, 3, A, 4, &one, A, 4) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 4, 4, &one, A, 2, A, 4, &one, A, 2) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 4, 4, 2, &one, A, 4, A, 2, &one, A, 4) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, A, 4, A, 2, &one, A, 3) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, A, 4, A, 4, &one, A, 4) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, 4, A, 2, 4, &one, A, 2, 4,
                                    -1) == CUBLAS_STATUS_INVALID_VALUE);
    /* Operands past their allocation, or not device memory at all. */
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 8, &one, A, 4, A, 8, &one, A, 4) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, host, 4, A, 4, &one, A, 4) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, 5, A, 2, 5, &one, A, 2, 5,
                                    4) == CUBLAS_STATUS_INVALID_VALUE); /* the 4th ends at 19 of 16 */
    CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, 4, A, 2, 4, &one, A, 2, 4,
                                    3) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSetMathMode(h, (cublasMath_t)7) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSetWorkspace(h, host, 64) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(!strcmp(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE),
                  "an invalid numeric value was used as an argument"));
    cudaDeviceSynchronize();
    cudaFree(A);
    free(host);
}
#endif

#endif /* FS_HAVE_CUDA */

int main(void)
{
#ifndef FS_HAVE_CUDA
    TEST_SKIP("no CUDA backend in this build");
#else
#ifdef FS_CUDA_STANDIN_BUILD
    /* Read once, at the stand-in's first call: before any. */
    char fail[32];
    snprintf(fail, sizeof fail, "cublas:%d", FAIL_AT);
    setenv("FOLDSWEEP_EMU_FAIL", fail, 1);
#endif
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        const char *req = getenv("FOLDSWEEP_REQUIRE_GPU");
        CHECK_MSG(!(req && !strcmp(req, "1")), "FOLDSWEEP_REQUIRE_GPU=1 but no CUDA device is usable");
        if (req && !strcmp(req, "1")) return test_finish();
        TEST_SKIP("no CUDA device");
    }
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
#ifdef FS_CUDA_STANDIN_BUILD
    fault_case(s);
    cublasHandle_t h;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
    gemm_cases(h, s);
    check_cases(h);
    cublasDestroy(h);
#endif
    /* FP32 checked; TF32 measured (bitwise under the stand-ins). */
    for (int tf32 = 0; tf32 < 2; tf32++) random_cases(s, FS_DNN_CUBLAS, tf32);
    char libs[256];
    if (fs_dnn_available(FS_DNN_CUDNN)) {
        for (int tf32 = 0; tf32 < 2; tf32++) random_cases(s, FS_DNN_CUDNN, tf32);
        fs_dnn_describe(FS_DNN_CUDNN, libs, sizeof libs);
        CHECK_CONTAINS(libs, "cuDNN ");
    } else {
        /* Without cuDNN the back end says why. */
        FsErr err = {0};
        CHECK(fs_dnn_open(FS_DNN_CUDNN, s, 0, &err) == NULL);
        CHECK(err.msg[0] != '\0');
        printf("no cuDNN back end: %s\n", err.msg);
    }
    fs_dnn_describe(FS_DNN_CUBLAS, libs, sizeof libs);
    CHECK_CONTAINS(libs, "cuBLAS ");
    CHECK(fs_dnn_available(FS_DNN_CUBLAS));
    cudaStreamDestroy(s);
    return test_finish();
#endif
}
