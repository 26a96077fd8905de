/*
 * gpu_none: the gpu API in a build without CUDA (FOLDSWEEP_CUDA=OFF, or no
 * nvcc): no device, and every call that needs one says so.
 */
#include "gpu/gpu.h"

#ifndef FS_HAVE_CUDA

#include <stdio.h>
#include <string.h>

int gpu_count(void) { return 0; }

int gpu_emulated(void) { return 0; }

void gpu_describe(int device, char *out, size_t n)
{
    (void)device;
    snprintf(out, n, "none (this build has no CUDA backend: rebuild with nvcc present)");
}

void gpu_libraries(char *out, size_t n) { snprintf(out, n, "none (no CUDA backend)"); }

FsGpu *gpu_open(int device, const FsDataset *ds, FsErr *err)
{
    (void)device, (void)ds;
    fs_err_set(err, "this build has no CUDA backend (nvcc was not found when it was configured)");
    return NULL;
}

void gpu_close(FsGpu *g) { (void)g; }

void gpu_times(const FsGpu *g, FsGpuTimes *out)
{
    (void)g;
    memset(out, 0, sizeof *out);
}

int gpu_limits(int device, FsGpuLimits *out)
{
    (void)device, (void)out;
    return -1;
}

int gpu_capacity(FsGpu *g, const FsJob *job)
{
    (void)g, (void)job;
    return 0;
}

int gpu_lists_resident(const FsGpu *g, const FsJob *job)
{
    (void)g, (void)job;
    return 0;
}

int gpu_group_need(FsGpu *g, const FsJob *job, int width, size_t *need, size_t *budget)
{
    (void)g, (void)job, (void)width, (void)need, (void)budget;
    return -1;
}

int gpu_cudnn_load(FsErr *err)
{
    fs_err_set(err, "this build has no CUDA backend");
    return -1;
}

int gpu_train(FsGpu *g, const FsJob *jobs, int n, const FsGpuWatch *w, FsErr *err)
{
    (void)g, (void)jobs, (void)n, (void)w;
    fs_err_set(err, "this build has no CUDA backend");
    return -1;
}

#endif
