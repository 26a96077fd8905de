/*
 * gpu_driver: feeds the CUDA backend from a run's queue. Each launch takes
 * as many jobs as fit on the device at once (gpu_capacity per job, so
 * models of different sizes share a launch), trains them in one kernel and
 * records every result; then the next launch, until nothing is left.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "run/state.h"

int run_choose_backend(int requested, int local_rank, int *use_gpu, int *device, FsErr *err)
{
    int n = gpu_count();
    *use_gpu = 0;
    *device = 0;
    if (requested == FS_BACKEND_CPU) return 0;
    if (n == 0) {
        if (requested == FS_BACKEND_AUTO) return 0;
        char why[256];
        gpu_describe(0, why, sizeof why);
        fs_err_set(err, "backend cuda: no CUDA device is visible (%s); use --backend cpu or auto", why);
        return -1;
    }
    *use_gpu = 1;
    *device = local_rank % n; /* node-local rank modulo the visible devices */
    return 0;
}

int run_gpu_capacity(int device, const FsDataset *ds, const FsJob *job)
{
    FsErr err = {0};
    FsGpu *g = gpu_open(device, ds, &err);
    if (!g) return 1;
    int cap = gpu_capacity(g, job);
    gpu_close(g);
    return cap > 0 ? cap : 1;
}

void run_gpu_drive(int device, const FsDataset *ds, const FsGpuQueue *q)
{
    FsErr err = {0};
    FsGpu *g = gpu_open(device, ds, &err);
    enum { MAX = 4096 };
    int *ids = fs_calloc(MAX, sizeof(int));
    FsJob *batch = fs_calloc(MAX, sizeof(FsJob));
    for (;;) {
        /* Fill the device: each job takes 1/capacity of it. */
        int n = 0;
        double used = 0.0;
        while (n < MAX && used < 1.0) {
            /* Wait for the first job of a launch only: the rest fill it up. */
            if (q->take(q->ctx, &ids[n], n == 0) != 1) break;
            batch[n] = *q->job(q->ctx, ids[n]);
            int cap = g ? gpu_capacity(g, &batch[n]) : 1;
            used += 1.0 / (cap > 0 ? cap : 1);
            n++;
        }
        if (n == 0) break;
        if (!g) {
            /* The device could not be opened: every job fails with why. */
            for (int i = 0; i < n; i++) {
                batch[i].result->status = FS_FIT_FAILED;
                snprintf(batch[i].result->message, sizeof batch[i].result->message, "GPU: %.900s", err.msg);
            }
        } else {
            FsErr e = {0};
            gpu_train(g, batch, n, q->epochs, q->ctx, &e);
        }
        for (int i = 0; i < n; i++) q->done(q->ctx, ids[i]);
    }
    free(ids);
    free(batch);
    gpu_close(g);
}
