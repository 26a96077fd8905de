/*
 * test_emu_libs: the CUDA stand-in's library tier parts (FOLDSWEEP_CUDA=
 * EMULATE builds only, label gpu-emu): the cuDNN stand-in (cudnn.h) and
 * graph capture, replay and events (cuda_runtime.h). Descriptor checks
 * return the library's codes, the algorithm lists hold a non-deterministic
 * entry first, workspace and tensor pointers are checked, the three
 * convolutions are bitwise the CPU trainer's sums (a scalar chain of fused
 * multiply-adds from zero in the trainer's order, kernels/dnn.h, added to
 * the destination once: what ops_gemm computes) on random shapes, a
 * captured graph replays what direct calls computed, forbidden calls
 * invalidate a capture, a freed captured pointer faults on replay, and
 * each injected failure kind returns its error. What poisons the context
 * (a sticky fault) or needs FOLDSWEEP_EMU_FAIL set before the first call
 * runs in a child forked before any stream thread exists.
 */
#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_runtime.h"
#include "cudnn.h"
#include "test.h"

static uint64_t rng = 88172645463325252ull;
static int rnd(int n) /* 0 .. n - 1 */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}
static float rndf(void)
{
    return (float)(rnd(2000001) - 1000000) / 1048576.0f;
}

/* One grouped 1-D convolution and its descriptors, host and device data. */
typedef struct {
    int N, G, Cg, Kg, W, S, dil, nchw;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    float *x, *w, *y;    /* host: x [N][W][C] (NHWC) or [N][C][W], y likewise, w [K][S][Cg] or [K][Cg][S] */
    float *dx, *dw, *dy; /* device copies */
    size_t nx, nw, ny;
    void *ws;
} Conv;

static long xi(const Conv *c, int n, int ch, int p, int C, int W)
{
    return c->nchw ? ((long)n * C + ch) * W + p : ((long)n * W + p) * C + ch;
}
static long wi(const Conv *c, int f, int ch, int k)
{
    return c->nchw ? ((long)f * c->Cg + ch) * c->S + k : ((long)f * c->S + k) * c->Cg + ch;
}

static void conv_make(Conv *c)
{
    const int C = c->G * c->Cg, K = c->G * c->Kg;
    cudnnTensorFormat_t fmt = c->nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    cudnnCreateTensorDescriptor(&c->xd);
    cudnnCreateTensorDescriptor(&c->yd);
    cudnnCreateFilterDescriptor(&c->wd);
    cudnnCreateConvolutionDescriptor(&c->cd);
    CHECK(cudnnSetTensor4dDescriptor(c->xd, fmt, CUDNN_DATA_FLOAT, c->N, C, 1, c->W) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnSetTensor4dDescriptor(c->yd, fmt, CUDNN_DATA_FLOAT, c->N, K, 1, c->W) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnSetFilter4dDescriptor(c->wd, CUDNN_DATA_FLOAT, fmt, K, c->Cg, 1, c->S) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnSetConvolution2dDescriptor(c->cd, 0, c->S / 2 * c->dil, 1, 1, 1, c->dil, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnSetConvolutionGroupCount(c->cd, c->G) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnSetConvolutionMathType(c->cd, CUDNN_FMA_MATH) == CUDNN_STATUS_SUCCESS);
    c->nx = (size_t)c->N * C * c->W, c->ny = (size_t)c->N * K * c->W, c->nw = (size_t)K * c->Cg * c->S;
    c->x = malloc(c->nx * 4), c->y = malloc(c->ny * 4), c->w = malloc(c->nw * 4);
    for (size_t i = 0; i < c->nx; i++) c->x[i] = rndf();
    for (size_t i = 0; i < c->ny; i++) c->y[i] = rndf();
    for (size_t i = 0; i < c->nw; i++) c->w[i] = rndf();
    CHECK(cudaMalloc((void **)&c->dx, c->nx * 4) == cudaSuccess);
    CHECK(cudaMalloc((void **)&c->dy, c->ny * 4) == cudaSuccess);
    CHECK(cudaMalloc((void **)&c->dw, c->nw * 4) == cudaSuccess);
    CHECK(cudaMalloc(&c->ws, 2 << 20) == cudaSuccess);
}

static void conv_upload(Conv *c)
{
    cudaMemcpy(c->dx, c->x, c->nx * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(c->dy, c->y, c->ny * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(c->dw, c->w, c->nw * 4, cudaMemcpyHostToDevice);
}

static void conv_free(Conv *c)
{
    cudaFree(c->dx), cudaFree(c->dy), cudaFree(c->dw), cudaFree(c->ws);
    free(c->x), free(c->y), free(c->w);
    cudnnDestroyTensorDescriptor(c->xd), cudnnDestroyTensorDescriptor(c->yd);
    cudnnDestroyFilterDescriptor(c->wd), cudnnDestroyConvolutionDescriptor(c->cd);
}

/* The trainer's sums (conv_gemm, conv_dgrad, conv_wgrad; kernels/dnn.h):
 * into out (host, same layout as the destination), beta 0 or 1. */
static void ref_fwd(const Conv *c, float *out, float beta)
{
    const int C = c->G * c->Cg, K = c->G * c->Kg, pad = c->S / 2 * c->dil;
    for (int g = 0; g < c->G; g++)
        for (int n = 0; n < c->N; n++)
            for (int o = 0; o < c->W; o++)
                for (int f = g * c->Kg; f < (g + 1) * c->Kg; f++) {
                    float acc = 0.0f;
                    for (int k = 0; k < c->S; k++)
                        for (int ch = 0; ch < c->Cg; ch++) {
                            int q = o - pad + k * c->dil;
                            if (q >= 0 && q < c->W) acc = fmaf(c->x[xi(c, n, g * c->Cg + ch, q, C, c->W)], c->w[wi(c, f, ch, k)], acc);
                        }
                    float *d = &out[xi(c, n, f, o, K, c->W)];
                    *d = beta == 0.0f ? 0.0f + acc : *d + acc;
                }
}

static void ref_bwd_data(const Conv *c, float *out, float beta)
{
    const int C = c->G * c->Cg, K = c->G * c->Kg, pad = c->S / 2 * c->dil;
    for (int g = 0; g < c->G; g++)
        for (int n = 0; n < c->N; n++)
            for (int q = 0; q < c->W; q++)
                for (int ch = 0; ch < c->Cg; ch++) {
                    float acc = 0.0f;
                    for (int k = c->S - 1; k >= 0; k--)
                        for (int f = g * c->Kg; f < (g + 1) * c->Kg; f++) {
                            int o = q + pad - k * c->dil;
                            if (o >= 0 && o < c->W) acc = fmaf(c->y[xi(c, n, f, o, K, c->W)], c->w[wi(c, f, ch, k)], acc);
                        }
                    float *d = &out[xi(c, n, g * c->Cg + ch, q, C, c->W)];
                    *d = beta == 0.0f ? 0.0f + acc : *d + acc;
                }
}

static void ref_bwd_filter(const Conv *c, float *out, float beta)
{
    const int C = c->G * c->Cg, K = c->G * c->Kg, pad = c->S / 2 * c->dil;
    for (int f = 0; f < K; f++)
        for (int k = 0; k < c->S; k++)
            for (int ch = 0; ch < c->Cg; ch++) {
                const int g = f / c->Kg;
                float acc = 0.0f;
                for (int n = 0; n < c->N; n++)
                    for (int o = 0; o < c->W; o++) {
                        int q = o - pad + k * c->dil;
                        if (q >= 0 && q < c->W)
                            acc = fmaf(c->x[xi(c, n, g * c->Cg + ch, q, C, c->W)], c->y[xi(c, n, f, o, K, c->W)], acc);
                    }
                float *d = &out[wi(c, f, ch, k)];
                *d = beta == 0.0f ? 0.0f + acc : *d + acc;
            }
}

/* Queues direction dir (0 fwd, 1 data, 2 filter) on h: its status. */
static cudnnStatus_t conv_run(cudnnHandle_t h, Conv *c, int dir, float beta, int algo)
{
    const float one = 1.0f;
    if (dir == 0)
        return cudnnConvolutionForward(h, &one, c->xd, c->dx, c->wd, c->dw, c->cd, (cudnnConvolutionFwdAlgo_t)algo,
                                       c->ws, 2 << 20, &beta, c->yd, c->dy);
    if (dir == 1)
        return cudnnConvolutionBackwardData(h, &one, c->wd, c->dw, c->yd, c->dy, c->cd,
                                            (cudnnConvolutionBwdDataAlgo_t)algo, c->ws, 2 << 20, &beta, c->xd, c->dx);
    return cudnnConvolutionBackwardFilter(h, &one, c->xd, c->dx, c->yd, c->dy, c->cd,
                                          (cudnnConvolutionBwdFilterAlgo_t)algo, c->ws, 2 << 20, &beta, c->wd, c->dw);
}

/* Random shapes, each direction with beta 0 and 1, bitwise. */
static void check_bitwise(cudnnHandle_t h, cudaStream_t s)
{
    static const int widths[] = {1, 3, 5, 7, 9};
    int bad = 0, runs = 0;
    for (int t = 0; t < 40; t++) {
        Conv c = {.N = 1 + rnd(3), .G = 1 + rnd(5), .Cg = 1 + rnd(9), .Kg = 1 + rnd(9), .W = 1 + rnd(24),
                  .S = widths[rnd(5)], .dil = 1 + rnd(4), .nchw = rnd(4) == 0};
        conv_make(&c);
        for (int dir = 0; dir < 3; dir++)
            for (int b = 0; b < 2; b++) {
                conv_upload(&c);
                size_t n = dir == 0 ? c.ny : dir == 1 ? c.nx : c.nw;
                float *want = malloc(n * 4), *got = malloc(n * 4);
                memcpy(want, dir == 0 ? c.y : dir == 1 ? c.x : c.w, n * 4);
                if (dir == 0) ref_fwd(&c, want, (float)b);
                if (dir == 1) ref_bwd_data(&c, want, (float)b);
                if (dir == 2) ref_bwd_filter(&c, want, (float)b);
                CHECK(conv_run(h, &c, dir, (float)b, 1) == CUDNN_STATUS_SUCCESS);
                CHECK(cudaStreamSynchronize(s) == cudaSuccess);
                cudaMemcpy(got, dir == 0 ? (void *)c.dy : dir == 1 ? (void *)c.dx : (void *)c.dw, n * 4,
                           cudaMemcpyDeviceToHost);
                int same = !memcmp(got, want, n * 4);
                if (!same && bad++ < 5)
                    fprintf(stderr, "dir %d beta %d: N %d G %d Cg %d Kg %d W %d S %d dil %d nchw %d differs\n", dir, b,
                            c.N, c.G, c.Cg, c.Kg, c.W, c.S, c.dil, c.nchw);
                runs++;
                free(want), free(got);
            }
        conv_free(&c);
    }
    CHECK_MSG(bad == 0, "%d of %d convolutions differ from the trainer's sums", bad, runs);
}

static void check_descriptors(cudnnHandle_t h)
{
    Conv c = {.N = 2, .G = 3, .Cg = 4, .Kg = 2, .W = 10, .S = 3, .dil = 2};
    conv_make(&c);
    cudnnTensorDescriptor_t t;
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t cv;
    cudnnCreateTensorDescriptor(&t);
    cudnnCreateFilterDescriptor(&f);
    cudnnCreateConvolutionDescriptor(&cv);
    size_t ws = 0;
    CHECK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 0, 4, 1, 10) == CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetTensor4dDescriptor(t, (cudnnTensorFormat_t)7, CUDNN_DATA_FLOAT, 1, 4, 1, 10) == CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 6, -1, 1, 3) == CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetConvolution2dDescriptor(cv, 0, -1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) ==
          CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetConvolution2dDescriptor(cv, 0, 1, 1, 1, 1, 0, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) ==
          CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetConvolution2dDescriptor(cv, 0, 1, 1, 0, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) ==
          CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetConvolutionGroupCount(cv, 0) == CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, c.yd, 0, &ws) == CUDNN_STATUS_SUCCESS);
    CHECK(ws == (1u << 20));
    /* groups: C = 12 is not 5 groups; K = 6 is not 4 groups of filters for Cg = 3 */
    CHECK(cudnnSetConvolutionGroupCount(c.cd, 5) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, c.yd, 0, &ws) == CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnSetConvolutionGroupCount(c.cd, 4) == CUDNN_STATUS_SUCCESS);
    cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 6, 3, 1, 3);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, f, c.cd, c.yd, 0, &ws) == CUDNN_STATUS_BAD_PARAM);
    cudnnSetConvolutionGroupCount(c.cd, 3);
    /* y's width not the output's */
    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 2, 6, 1, 9);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, t, 0, &ws) == CUDNN_STATUS_BAD_PARAM);
    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 2, 7, 1, 10);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, t, 0, &ws) == CUDNN_STATUS_BAD_PARAM);
    /* not float */
    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 2, 6, 1, 10);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, t, 0, &ws) == CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, c.yd, 4, &ws) == CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, c.xd, c.wd, c.cd, c.yd, 99, &ws) == CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, c.xd, c.yd, c.cd, c.wd, 1, &ws) == CUDNN_STATUS_SUCCESS);
    CHECK(ws == (2u << 20));
    CHECK(cudnnGetVersion() == 91900 && !strcmp(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM"));

    /* algorithm lists: a non-deterministic one first, then ALGO_1 */
    cudnnConvolutionBwdDataAlgoPerf_t pd[4];
    cudnnConvolutionBwdFilterAlgoPerf_t pf[4];
    cudnnConvolutionFwdAlgoPerf_t pw[4];
    int n = 0;
    CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, c.wd, c.yd, c.cd, c.xd, 4, &n, pd) == CUDNN_STATUS_SUCCESS);
    CHECK(n == 2 && pd[0].determinism == CUDNN_NON_DETERMINISTIC && pd[0].algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);
    CHECK(n == 2 && pd[1].determinism == CUDNN_DETERMINISTIC && pd[1].algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
    CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, c.xd, c.yd, c.cd, c.wd, 1, &n, pf) == CUDNN_STATUS_SUCCESS);
    CHECK(n == 1 && pf[0].determinism == CUDNN_NON_DETERMINISTIC && pf[0].memory == (2u << 20));
    CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, c.xd, c.wd, c.cd, c.yd, 4, &n, pw) == CUDNN_STATUS_SUCCESS);
    CHECK(n == 2 && pw[0].determinism == CUDNN_DETERMINISTIC && pw[0].mathType == CUDNN_FMA_MATH);
    CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, c.xd, c.wd, c.cd, c.yd, 0, &n, pw) == CUDNN_STATUS_BAD_PARAM);

    /* workspace and tensor pointers */
    const float one = 1.0f, zero = 0.0f;
    CHECK(cudnnConvolutionForward(h, &one, c.xd, c.dx, c.wd, c.dw, c.cd, 0, c.ws, (1 << 20) - 1, &zero, c.yd, c.dy) ==
          CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnConvolutionForward(h, &one, c.xd, c.dx, c.wd, c.dw, c.cd, 0, c.x, 1 << 20, &zero, c.yd, c.dy) ==
          CUDNN_STATUS_BAD_PARAM); /* host memory as the workspace */
    CHECK(cudnnConvolutionForward(h, &one, c.xd, c.dx, c.wd, c.dw, c.cd, 0, (char *)c.ws + (1 << 20) + 8, 1 << 20,
                                  &zero, c.yd, c.dy) == CUDNN_STATUS_BAD_PARAM); /* runs past its end */
    CHECK(cudnnConvolutionForward(h, &one, c.xd, c.dx + 1, c.wd, c.dw, c.cd, 0, c.ws, 1 << 20, &zero, c.yd, c.dy) ==
          CUDNN_STATUS_BAD_PARAM); /* x's last element past its allocation */
    CHECK(cudnnConvolutionForward(h, &one, c.xd, c.dx, c.wd, c.w, c.cd, 0, c.ws, 1 << 20, &zero, c.yd, c.dy) ==
          CUDNN_STATUS_BAD_PARAM);
    CHECK(cudnnConvolutionBackwardFilter(h, &one, c.xd, c.dx, c.yd, c.dy, c.cd, 1, c.ws, 1 << 20, &zero, c.wd,
                                         c.dw) == CUDNN_STATUS_BAD_PARAM); /* filter's workspace is twice */
    CHECK(cudnnConvolutionForward(h, &one, c.xd, c.dx, c.wd, c.dw, c.cd, 0, c.ws, 1 << 20, &zero, c.yd, c.dy) ==
          CUDNN_STATUS_SUCCESS);
    cudaDeviceSynchronize();
    cudnnDestroyTensorDescriptor(t), cudnnDestroyFilterDescriptor(f), cudnnDestroyConvolutionDescriptor(cv);
    conv_free(&c);
}

/* Forward, backward data, backward filter on s: direct once, then the
 * same three captured and replayed twice from the same inputs. */
static void check_graph(cudnnHandle_t h, cudaStream_t s)
{
    Conv c = {.N = 2, .G = 3, .Cg = 5, .Kg = 4, .W = 17, .S = 5, .dil = 2};
    conv_make(&c);
    float *direct[3], *replay[3];
    size_t n[3] = {c.ny, c.nx, c.nw};
    for (int pass = 0; pass < 3; pass++) {
        conv_upload(&c);
        cudaGraph_t g = NULL;
        cudaGraphExec_t x = NULL;
        enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
        if (pass > 0) {
            CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
            CHECK(cudaStreamIsCapturing(s, &st) == cudaSuccess && st == cudaStreamCaptureStatusActive);
        }
        for (int dir = 0; dir < 3; dir++) CHECK(conv_run(h, &c, dir, 1.0f, 1) == CUDNN_STATUS_SUCCESS);
        if (pass > 0) {
            CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess && g);
            CHECK(cudaGraphInstantiate(&x, g, 0) == cudaSuccess);
            CHECK(cudaGraphDestroy(g) == cudaSuccess); /* the executable is its own copy */
            CHECK(cudaStreamSynchronize(s) == cudaSuccess);
            /* nothing ran at capture */
            float *now = malloc(c.ny * 4);
            cudaMemcpy(now, c.dy, c.ny * 4, cudaMemcpyDeviceToHost);
            CHECK(!memcmp(now, c.y, c.ny * 4));
            free(now);
            for (int r = 0; r < pass; r++) { /* pass 2 replays twice from fresh inputs */
                if (r) conv_upload(&c);
                CHECK(cudaGraphLaunch(x, s) == cudaSuccess);
                CHECK(cudaStreamSynchronize(s) == cudaSuccess);
            }
            CHECK(cudaGraphExecDestroy(x) == cudaSuccess);
        } else {
            CHECK(cudaStreamSynchronize(s) == cudaSuccess);
        }
        void *dev[3] = {c.dy, c.dx, c.dw};
        for (int d = 0; d < 3; d++) {
            float *out = malloc(n[d] * 4);
            cudaMemcpy(out, dev[d], n[d] * 4, cudaMemcpyDeviceToHost);
            if (pass == 0) direct[d] = out;
            else {
                CHECK_MSG(!memcmp(out, direct[d], n[d] * 4), "replay %d, direction %d", pass, d);
                if (pass == 2) replay[d] = out;
                else free(out);
            }
        }
    }
    for (int d = 0; d < 3; d++) free(direct[d]), free(replay[d]);
    conv_free(&c);
}

/* Calls a capture forbids, and events. */
static void check_forbidden(cudnnHandle_t h, cudaStream_t s)
{
    Conv c = {.N = 1, .G = 2, .Cg = 2, .Kg = 2, .W = 8, .S = 3, .dil = 1};
    conv_make(&c);
    conv_upload(&c);
    cudaGraph_t g = (cudaGraph_t)1;
    enum cudaStreamCaptureStatus st;
    void *p = NULL;
    /* each forbidden call: its code, then the capture is invalidated */
    for (int k = 0; k < 5; k++) {
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
        CHECK(conv_run(h, &c, 0, 1.0f, 0) == CUDNN_STATUS_SUCCESS);
        cudaError_t e = k == 0   ? cudaMemcpy(c.x, c.dx, 4, cudaMemcpyDeviceToHost)
                        : k == 1 ? cudaMemset(c.dx, 0, 4)
                        : k == 2 ? cudaStreamSynchronize(s)
                        : k == 3 ? cudaDeviceSynchronize()
                                 : cudaMalloc(&p, 64);
        CHECK_MSG(e == cudaErrorStreamCaptureUnsupported, "forbidden call %d: %d", k, (int)e);
        CHECK(cudaStreamIsCapturing(s, &st) == cudaSuccess && st == cudaStreamCaptureStatusInvalidated);
        CHECK(conv_run(h, &c, 0, 1.0f, 0) == CUDNN_STATUS_EXECUTION_FAILED_CUDART);
        CHECK(cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated && !g);
        CHECK(cudaStreamIsCapturing(s, &st) == cudaSuccess && st == cudaStreamCaptureStatusNone);
    }
    /* relaxed mode allows cudaMalloc */
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);
    CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess && g);
    cudaGraphDestroy(g);
    cudaFree(p);
    CHECK(cudaStreamEndCapture(s, &g) == cudaErrorIllegalState);
    CHECK(cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
    CHECK(cudaGetLastError() == cudaErrorStreamCaptureUnsupported);
    /* events: a second stream waits for the first's work */
    cudaStream_t s2;
    cudaEvent_t ev;
    CHECK(cudaStreamCreate(&s2) == cudaSuccess);
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess);
    CHECK(cudaEventQuery(ev) == cudaSuccess); /* nothing recorded yet */
    CHECK(conv_run(h, &c, 0, 0.0f, 0) == CUDNN_STATUS_SUCCESS);
    CHECK(cudaEventRecord(ev, s) == cudaSuccess);
    CHECK(cudaStreamWaitEvent(s2, ev, 0) == cudaSuccess);
    CHECK(cudaMemcpyAsync(c.y, c.dy, c.ny * 4, cudaMemcpyDeviceToHost, s2) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s2) == cudaSuccess);
    CHECK(cudaEventQuery(ev) == cudaSuccess && cudaEventSynchronize(ev) == cudaSuccess);
    float *want = malloc(c.ny * 4);
    ref_fwd(&c, want, 0.0f);
    CHECK(!memcmp(want, c.y, c.ny * 4));
    free(want);
    CHECK(cudaEventDestroy(ev) == cudaSuccess && cudaStreamDestroy(s2) == cudaSuccess);
    conv_free(&c);
}

/* In a child: injected failure `kind` (FOLDSWEEP_EMU_FAIL=kind:1), or
 * "freed" (a captured pointer freed before the replay). Exit 0: as
 * expected. */
static int child_case(const char *kind)
{
    cudnnHandle_t h;
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess || cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return 10;
    cudnnSetStream(h, s);
    Conv c = {.N = 1, .G = 2, .Cg = 3, .Kg = 2, .W = 9, .S = 3, .dil = 2};
    conv_make(&c);
    conv_upload(&c);
    if (!strcmp(kind, "cudnn")) return conv_run(h, &c, 2, 1.0f, 1) == CUDNN_STATUS_EXECUTION_FAILED ? 0 : 11;
    if (!strcmp(kind, "capture"))
        return cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported ? 0 : 12;
    cudaGraph_t g;
    cudaGraphExec_t x;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess ||
        conv_run(h, &c, 0, 1.0f, 1) != CUDNN_STATUS_SUCCESS || cudaStreamEndCapture(s, &g) != cudaSuccess ||
        cudaGraphInstantiate(&x, g, 0) != cudaSuccess)
        return 13;
    if (!strcmp(kind, "graph")) return cudaGraphLaunch(x, s) == cudaErrorLaunchOutOfResources ? 0 : 14;
    if (cudaGraphLaunch(x, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess) return 15;
    cudaFree(c.dy);
    if (cudaGraphLaunch(x, s) != cudaSuccess) return 16;
    if (cudaStreamSynchronize(s) != cudaErrorIllegalAddress) return 17;
    if (!strstr(fsemu_sticky_reason(), "cudnnConvolutionForward")) return 18;
    return cudaGetLastError() == cudaErrorIllegalAddress && cudaGetLastError() == cudaErrorIllegalAddress ? 0 : 19;
}

static void check_children(void)
{
    static const char *const kinds[] = {"cudnn", "capture", "graph", "freed"};
    for (int i = 0; i < 4; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            if (strcmp(kinds[i], "freed")) {
                char v[32];
                snprintf(v, sizeof v, "%s:1", kinds[i]);
                setenv("FOLDSWEEP_EMU_FAIL", v, 1);
            }
            _exit(child_case(kinds[i]));
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %d", kinds[i], status);
    }
}

int main(void)
{
    check_children(); /* first: no stream thread exists yet to be lost in the fork */
    cudnnHandle_t h;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(cudnnCreate(&h) == CUDNN_STATUS_SUCCESS);
    CHECK(cudnnSetStream(h, s) == CUDNN_STATUS_SUCCESS);
    check_descriptors(h);
    check_bitwise(h, s);
    check_graph(h, s);
    check_forbidden(h, s);
    cudnnDestroy(h);
    cudaStreamDestroy(s);
    return test_finish();
}
