/*
 * bench_chain_step: where one training step of a chain model spends its
 * time (bench/run-chain prints it after its table; docs/benchmarks.md).
 *
 * R1's layers as a chain model (the second convolution dilated by
 * --dilation), one batch of the UCI file's first chains filling the
 * default row budget, the step's pieces timed over --reps repetitions on
 * one thread, the median of each: each layer's forward pass, the loss, the
 * backward pass, the optimizer; then the 64 -> 64 convolution's three GEMMs
 * alone (forward, weight gradient, input gradient) in GFLOP/s. One JSON
 * line.
 *
 * usage: bench_chain_step UCI_FILE [--dilation D] [--reps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "train/core.h"
#include "train/layers.h"
#include "train/train.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int setup(FsModel *m, FsNet *net, FsDataset *ds, const char *path, int dil, FsTrainSpec *ts, void **buf)
{
    FsErr err = {0};
    const char *in[1] = {path};
    FsLoadSpec spec = {FS_FMT_UCI, in, 1, NULL, NULL, NULL};
    if (data_load(ds, &spec, &err) != 0) return fprintf(stderr, "bench_chain_step: %s\n", err.msg), -1;
    FsArch a;
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.n_layers = 3;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 64, .width = 5, .act = FS_ACT_SWISH};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 64, .width = 5, .act = FS_ACT_SWISH, .dilation = dil};
    a.layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 128, .act = FS_ACT_SWISH};
    train_spec_defaults(ts);
    ts->opt = FS_OPT_ADAM;
    ts->lr = 1e-3f;
    if (train_chain_rows(&a, ts, data_longest_chain(ds), net, &err) != 0)
        return fprintf(stderr, "bench_chain_step: %s\n", err.msg), -1;
    size_t bytes = core_model_bytes(net, 1);
    *buf = fs_aligned_alloc(bytes);
    memset(*buf, 0, bytes);
    core_model_bind(m, net, *buf, 1);
    core_model_seed(m, net, ts, m->w);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "usage: %s UCI_FILE [--dilation D] [--reps N]\n", argv[0]), 2;
    int dil = 1, reps = 200;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dilation")) dil = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    }
    if (reps < 1) return fprintf(stderr, "bench_chain_step: --reps must be at least 1\n"), 2;
    FsDataset ds;
    FsNet net;
    FsModel m;
    FsTrainSpec ts;
    void *buf;
    if (setup(&m, &net, &ds, argv[1], dil, &ts, &buf) != 0) return 1;
    FsFoldData fd = {ds.aa, ds.ss, ds.left, ds.right, NULL, 0, NULL, 0, 0, 0, NULL, 0, 0};
    uint32_t starts[256];
    int nc = 0;
    for (uint32_t s = 0; s < ds.n_seg && nc < 256; s++) starts[nc++] = ds.seg_off[s];
    step_load_chain(&m, &fd, starts, step_chain_batch(&fd, starts, nc, net.in_rows, net.pad));
    /* Each piece's median over the repetitions: this machine is shared,
     * and a mean takes in every pause another process causes. */
    enum { T_LOSS = FS_MAX_LAYERS, T_BACK, T_UPDATE, T_GFWD, T_GW, T_GD, T_N };
    double *t = fs_calloc((size_t)T_N * reps, sizeof(double));
#define T(piece, it) t[(size_t)(piece) * reps + (it)]
    for (int it = 0; it < reps; it++) {
        for (int i = 0; i < net.n; i++) {
            double a0 = fs_now();
            layer_forward(&m, i, 1, 1);
            T(i, it) = fs_now() - a0;
        }
        double t1 = fs_now();
        step_loss(&m, 1, 1, 0);
        double t2 = fs_now();
        step_backward(&m, 1, &ts);
        double t3 = fs_now();
        step_update(&m, &ts, 1);
        T(T_LOSS, it) = t2 - t1, T(T_BACK, it) = t3 - t2, T(T_UPDATE, it) = fs_now() - t3;
    }
    /* The 64 -> 64 convolution's GEMMs alone. */
    FsLayer tmp;
    const FsLayer *y = layer_view(&m, 1, &tmp), *x0 = &net.layer[0];
    for (int it = 0; it < reps; it++) {
        double a0 = fs_now();
        conv_gemm(y, m.w + y->w, m.work + x0->a, m.work + y->a, 1, 64);
        double a1 = fs_now();
        conv_wgrad(y, m.g + y->w, m.work + x0->a, m.work + y->d, 1, 64);
        double a2 = fs_now();
        conv_dgrad(y, m.w + y->w, m.scratch, m.work + y->d, m.work + x0->d, 1, 64);
        T(T_GFWD, it) = a1 - a0, T(T_GW, it) = a2 - a1, T(T_GD, it) = fs_now() - a2;
    }
    double med[T_N], step = 0.0;
    for (int p = 0; p < T_N; p++) med[p] = median(&T(p, 0), reps);
#undef T
    printf("{\"bench\":\"chain-step\",\"dilation\":%d,\"rows\":%d,\"scored\":%u,\"us\":{", dil, m.rows, m.scored);
    for (int i = 0; i < net.n; i++) printf("\"forward_layer%d\":%.1f,", i, med[i] * 1e6);
    for (int i = 0; i < net.n; i++) step += med[i];
    step += med[T_LOSS] + med[T_BACK] + med[T_UPDATE];
    printf("\"loss\":%.1f,\"backward\":%.1f,\"update\":%.1f},\"step_residues_per_second\":%.0f,", med[T_LOSS] * 1e6,
           med[T_BACK] * 1e6, med[T_UPDATE] * 1e6, m.scored / step);
    const double fl = 2.0 * m.rows * 5 * 64 * 64 * 1e-9;
    printf("\"conv64_gflops\":{\"forward\":%.1f,\"wgrad\":%.1f,\"dgrad\":%.1f}}\n", fl / med[T_GFWD],
           fl / med[T_GW], fl / med[T_GD]);
    free(t);
    free(buf);
    data_free(&ds);
    return 0;
}
