/*
 * bench_dnn: the GPU library tier's convolutions (kernels/dnn.h, #44) per
 * back end (im2col + cuBLAS, cuDNN's grouped convolution where the build
 * has it) and math mode (FP32, TF32), on chain group shapes typical of the
 * sweeps: G = 8, 24, 32 models, 1024 and 2048 rows (batch_residues), C = F
 * = 64 and 128 channels, (K, dilation) = (5, 1), (7, 2), (9, 4); --full
 * takes every K with every dilation. Each of fs_dnn_conv_fwd, _wgrad and
 * _dgrad is called --warmup times, then timed over --iters calls between
 * two CUDA events on the back end's stream (wall clock around a stream
 * synchronisation under the CPU stand-in, which has no event timer: its
 * times say nothing about a GPU). Prints a table (shape, back end, mode,
 * ms per call, GFLOP/s: 2 G L K C F per call, the three products alike)
 * and, with --tsv FILE, the same rows tab-separated: the measured
 * back-end table that scripts/gpu-check keeps for the run's back-end
 * choice (../shared/docs/gpu-tiers.md, section 10). The last line counts
 * the rows against those expected; a failed call or a missing row exits
 * 1. --quick (the gpu-emu smoke test) divides rows by 64, channels by 16
 * and groups by 4 and times one call after one warm-up, so the stand-in
 * runs every row in seconds.
 *
 * usage: bench_dnn [--quick] [--full] [--iters N] [--warmup N] [--tsv FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu.h"
#include "kernels/dnn.h"

typedef struct {
    int quick, full, iters, warmup;
    const char *tsv;
} Opts;

typedef struct {
    FsDnnConv c;
    float *x, *W, *y; /* device: inputs, outputs and their gradients share them (timing only) */
} Shape;


#ifdef FS_CUDA_STANDIN_BUILD
/* The stand-in's clock: it has no event timer. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
#endif

static int call(FsDnn *d, int op, const Shape *s, FsErr *err)
{
    if (op == 0) return fs_dnn_conv_fwd(d, &s->c, s->x, s->W, s->y, err);
    if (op == 1) return fs_dnn_conv_wgrad(d, &s->c, s->x, s->y, s->W, err);
    return fs_dnn_conv_dgrad(d, &s->c, s->y, s->W, s->x, err);
}

/* ms per call of one product, or a negative value with err set. */
static double time_op(FsDnn *d, cudaStream_t st, int op, const Shape *s, const Opts *o, FsErr *err)
{
    for (int i = 0; i < o->warmup; i++)
        if (call(d, op, s, err)) return -1.0;
    if (cudaStreamSynchronize(st) != cudaSuccess) return -1.0;
#ifdef FS_CUDA_STANDIN_BUILD
    const double t0 = now_ms();
    for (int i = 0; i < o->iters; i++)
        if (call(d, op, s, err)) return -1.0;
    if (cudaStreamSynchronize(st) != cudaSuccess) return -1.0;
    return (now_ms() - t0) / o->iters;
#else
    cudaEvent_t a, b;
    float ms = -1.0f;
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return -1.0;
    int rc = cudaEventRecord(a, st) != cudaSuccess;
    for (int i = 0; i < o->iters && !rc; i++) rc = call(d, op, s, err);
    rc = rc || cudaEventRecord(b, st) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
         cudaEventElapsedTime(&ms, a, b) != cudaSuccess;
    cudaEventDestroy(a), cudaEventDestroy(b);
    return rc ? -1.0 : ms / o->iters;
#endif
}

/* The shape list: index i of n, or the count with i < 0. */
static int shape_at(const Opts *o, int i, FsDnnConv *c)
{
    static const int Gs[] = {8, 24, 32}, rows[] = {1024, 2048}, chans[] = {64, 128};
    static const int Ks[] = {5, 7, 9}, dils[] = {1, 2, 4};
    const int n_kd = o->full ? 9 : 3, n = 3 * 2 * 2 * n_kd;
    if (i < 0) return n;
    const int kd = i % n_kd, ch = i / n_kd % 2, r = i / n_kd / 2 % 2, g = i / n_kd / 4;
    memset(c, 0, sizeof *c);
    c->G = Gs[g], c->B = 1, c->L = rows[r], c->C = c->F = chans[ch];
    c->K = Ks[o->full ? kd / 3 : kd], c->dil = dils[kd % 3];
    if (o->quick) c->G = (c->G + 3) / 4, c->L /= 64, c->C /= 16, c->F /= 16;
    c->P = c->K / 2 * c->dil;
    c->xs = (long)(c->L + 2 * c->P) * c->C, c->ys = (long)(c->L + 2 * c->P) * c->F, c->ws = (long)c->K * c->C * c->F;
    return n;
}

/* Device buffers for a shape, pads zero, interior small random values
 * (the GEMMs' speed does not depend on them; pads must stay zero). */
static float *dev_fill(long n, long rows_each, int ch, int P, int L, int G)
{
    float *h = calloc((size_t)n, sizeof *h), *d = NULL;
    if (!h) return NULL;
    for (int g = 0; g < G; g++)
        for (long q = P; q < P + L && q < rows_each; q++)
            for (int k = 0; k < ch; k++) h[(long)g * rows_each * ch + q * ch + k] = (float)(rand() % 200 - 100) / 800.0f;
    if (cudaMalloc((void **)&d, (size_t)n * sizeof *d) != cudaSuccess ||
        cudaMemcpy(d, h, (size_t)n * sizeof *d, cudaMemcpyHostToDevice) != cudaSuccess)
        d = NULL;
    free(h);
    return d;
}

static int shape_alloc(Shape *s)
{
    const FsDnnConv *c = &s->c;
    const long rows_each = c->L + 2 * c->P;
    s->x = dev_fill(c->G * c->xs, rows_each, c->C, c->P, c->L, c->G);
    s->y = dev_fill(c->G * c->ys, rows_each, c->F, c->P, c->L, c->G);
    s->W = dev_fill(c->G * c->ws, c->ws / c->C, c->C, 0, c->K * c->F, c->G);
    return s->x && s->y && s->W ? 0 : -1;
}

static void shape_free(Shape *s)
{
    cudaFree(s->x), cudaFree(s->W), cudaFree(s->y);
}

static int parse(int argc, char **argv, Opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 20, o->warmup = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) o->quick = 1, o->iters = 1, o->warmup = 1;
        else if (!strcmp(argv[i], "--full")) o->full = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) o->iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) o->warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tsv") && i + 1 < argc) o->tsv = argv[++i];
        else {
            fprintf(stderr, "usage: bench_dnn [--quick] [--full] [--iters N] [--warmup N] [--tsv FILE]\n");
            return -1;
        }
    }
    return o->iters > 0 && o->warmup >= 0 ? 0 : -1;
}

/* One shape through every back end and mode: its rows, or -1. */
static int bench_shape(FsDnn *const dnn[2][2], cudaStream_t st, Shape *s, const Opts *o, FILE *tsv)
{
    const FsDnnConv *c = &s->c;
    const double flop = 2.0 * c->G * c->B * c->L * c->K * c->C * c->F;
    int rows = 0;
    for (int be = 0; be < 2; be++)
        for (int m = 0; m < 2; m++) {
            FsErr err = {0};
            if (!dnn[be][m]) continue;
            if (fs_dnn_reserve(dnn[be][m], c, 1, &err)) {
                fprintf(stderr, "bench_dnn: %s %s: %s\n", gpu_table_backend_name(be), gpu_table_mode_name(m), err.msg);
                return -1;
            }
            for (int op = 0; op < 3; op++) {
                const double ms = time_op(dnn[be][m], st, op, s, o, &err);
                if (ms < 0) {
                    fprintf(stderr, "bench_dnn: %s %s %s: %s\n", gpu_table_backend_name(be), gpu_table_mode_name(m), gpu_table_op_name(op),
                            err.msg[0] ? err.msg : "a CUDA call failed");
                    return -1;
                }
                printf("%3d %5d %4d %4d %2d %2d  %-6s %-4s %-5s %10.4f %9.1f\n", c->G, c->L, c->C, c->F, c->K, c->dil,
                       gpu_table_backend_name(be), gpu_table_mode_name(m), gpu_table_op_name(op), ms, flop / (ms * 1e6));
                if (tsv)
                    fprintf(tsv, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%.6f\t%.1f\n", gpu_table_op_name(op), c->G, c->L, c->C,
                            c->F, c->K, c->dil, gpu_table_backend_name(be), gpu_table_mode_name(m), ms, flop / (ms * 1e6));
                rows++;
            }
        }
    return rows;
}

int main(int argc, char **argv)
{
    Opts o;
    if (parse(argc, argv, &o)) return 2;
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
        fprintf(stderr, "bench_dnn: no CUDA device\n");
        return 1;
    }
    cudaStream_t st;
    if (cudaStreamCreate(&st) != cudaSuccess) return 1;
    FsDnn *dnn[2][2] = {{NULL, NULL}, {NULL, NULL}};
    int n_be = 0;
    for (int be = 0; be < 2; be++) {
        char lib[256];
        fs_dnn_describe((FsDnnBackend)be, lib, sizeof lib);
        printf("# back end %d: %s\n", be, lib);
        if (!fs_dnn_available((FsDnnBackend)be)) continue;
        for (int m = 0; m < 2; m++) {
            FsErr err = {0};
            dnn[be][m] = fs_dnn_open((FsDnnBackend)be, st, m, &err);
            if (!dnn[be][m]) fprintf(stderr, "bench_dnn: back end %d mode %d: %s\n", be, m, err.msg);
        }
        n_be += dnn[be][0] && dnn[be][1];
    }
    FILE *tsv = o.tsv ? fopen(o.tsv, "w") : NULL;
    if (o.tsv && !tsv) perror(o.tsv);
    FsGpuLimits lim;
    if (tsv) /* the device it was measured on, then the header (gpu/table.c reads both) */
        fprintf(tsv, "%s\t%s\n%s\n", FS_GPU_TABLE_DEVICE, gpu_limits(0, &lim) == 0 ? lim.name : "unknown",
                FS_GPU_TABLE_HEADER);
    printf("#  G  rows    C    F  K  dil back   mode op            ms   GFLOP/s  (%d warm-up, %d timed calls)\n",
           o.warmup, o.iters);
    const int n = shape_at(&o, -1, NULL);
    int rows = 0, failed = o.tsv && !tsv;
    for (int i = 0; i < n && !failed; i++) {
        Shape s;
        memset(&s, 0, sizeof s);
        shape_at(&o, i, &s.c);
        const int r = shape_alloc(&s) ? -1 : bench_shape(dnn, st, &s, &o, tsv);
        if (r < 0) fprintf(stderr, "bench_dnn: shape %d of %d failed\n", i + 1, n), failed = 1;
        else rows += r;
        shape_free(&s);
    }
    for (int be = 0; be < 2; be++)
        for (int m = 0; m < 2; m++)
            if (dnn[be][m]) fs_dnn_close(dnn[be][m]);
    if (tsv) fclose(tsv);
    cudaStreamDestroy(st);
    const int want = n * n_be * 2 * 3;
    printf("bench_dnn: %d rows of %d (%d shapes x %d back ends x 2 modes x 3 products)\n", rows, want, n, n_be);
    return failed || rows != want || n_be == 0 ? 1 : 0;
}
