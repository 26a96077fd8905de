/*
 * bench_r1: the reference workload R1 on the CPU trainer.
 *
 * UCI training set, 3-fold CV by protein, window 17,
 * conv1d(64, 5, swish) -> conv1d(64, 5, swish) -> dense(128, swish) -> softmax,
 * Adam 1e-3, 5 epochs. Prints one JSON line per configuration with training
 * examples per second (per core) and dense-equivalent GFLOP/s. Time covers
 * whole fits: training steps and the per-epoch validation, as in the
 * PyTorch baseline (bench/r1_torch.py), which bench/run-r1 runs beside it.
 *
 * usage: bench_r1 UCI_TRAIN_FILE [--batch N] [--threads N] [--epochs N] [--folds-run N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "metrics/metrics.h"
#include "train/train.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s UCI_TRAIN_FILE [--batch N] [--threads N] [--epochs N] [--folds-run N]\n", argv[0]);
        return 2;
    }
    int batch = 8, threads = 1, epochs = 5, folds_run = 3;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--epochs")) epochs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--folds-run")) folds_run = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    FsDataset ds;
    FsErr err = {0};
    const char *inputs[1] = {argv[1]};
    FsLoadSpec spec = {FS_FMT_UCI, inputs, 1, NULL, NULL, NULL};
    if (data_load(&ds, &spec, &err) != 0 || data_assign_folds(&ds, 3, 1, &err) != 0) {
        fprintf(stderr, "bench_r1: %s\n", err.msg);
        return 1;
    }

    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.window = 17;
    arch.n_layers = 3;
    arch.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 64, .width = 5, .act = FS_ACT_SWISH};
    arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 64, .width = 5, .act = FS_ACT_SWISH};
    arch.layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 128, .act = FS_ACT_SWISH};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_ADAM;
    ts.lr = 1e-3f;
    ts.batch = batch;
    ts.stop.kind = FS_STOP_MAX_EPOCHS;
    ts.stop.max_epochs = epochs;
    ts.seed[0] = 1;
    FsNet net;
    if (model_compile(&net, &arch, batch > ts.eval_batch ? batch : ts.eval_batch, &err) != 0) {
        fprintf(stderr, "bench_r1: %s\n", err.msg);
        return 1;
    }

    FsJob jobs[3];
    FsFitResult res[3];
    for (int f = 0; f < folds_run; f++) {
        train_result_alloc(&res[f], epochs);
        jobs[f] = (FsJob){&arch, &ts, &ds, f, &res[f], NULL, NULL, NULL, NULL, NULL, NULL, 0, 0};
    }
    double t0 = fs_now();
    train_jobs(jobs, folds_run, threads);
    double wall = fs_now() - t0;

    uint64_t ex = 0, vex = 0;
    double q3 = 0.0, fit_seconds = 0.0, val_seconds = 0.0;
    for (int f = 0; f < folds_run; f++) {
        if (res[f].status != FS_FIT_OK) {
            fprintf(stderr, "bench_r1: fold %d %s %s\n", f, train_status_name(res[f].status), res[f].message);
            return 1;
        }
        ex += res[f].train_examples;
        vex += res[f].val_examples;
        q3 += res[f].curves.val_q3[res[f].epochs - 1] / folds_run;
        fit_seconds += res[f].seconds;
        val_seconds += res[f].val_seconds;
    }
    double eps = (double)ex / wall;
    /* Dense-equivalent: forward + backward flops of every trained example
     * plus forward flops of every validation example. */
    double gflops = ((double)ex * (double)(net.flops_fwd + net.flops_bwd) + (double)vex * (double)net.flops_fwd) /
                    wall * 1e-9;
    printf("{\"framework\":\"foldsweep-cpu\",\"batch\":%d,\"threads\":%d,\"epochs\":%d,\"folds_run\":%d,"
           "\"train_examples\":%llu,\"wall_seconds\":%.3f,\"validation_seconds\":%.3f,"
           "\"examples_per_second\":%.1f,\"examples_per_second_per_core\":%.1f,"
           "\"gflops\":%.2f,\"mean_val_q3\":%.4f,\"params\":%ld}\n",
           batch, threads, epochs, folds_run, (unsigned long long)ex, wall, val_seconds, eps, eps / threads,
           gflops, q3, net.n_params);
    (void)fit_seconds;
    for (int f = 0; f < folds_run; f++) train_result_free(&res[f]);
    data_free(&ds);
    return 0;
}
