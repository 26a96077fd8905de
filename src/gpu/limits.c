/*
 * limits: what the fit kernel needs from a device, and the device profiles
 * (built with or without CUDA: `foldsweep plan` asks where no device is).
 * The CUDA stand-in (src/gpu/emulate) builds its devices from the same
 * profiles, so an emulated refusal is the one a real H200 or A100 gives.
 */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "train/kernel.h"

/* The two devices foldsweep is built for (sm_80, sm_90): the vendor's
 * figures (CUDA programming guide, compute capability tables). */
static const FsGpuLimits profiles[] = {
    {"h200", 150109880320ull, 227 * 1024, 132, 65536, 2048, 9, 0},
    {"a100", 85089058816ull, 163 * 1024, 108, 65536, 2048, 8, 0},
};
#define N_PROFILES (int)(sizeof profiles / sizeof profiles[0])

int gpu_profile(const char *name, FsGpuLimits *out)
{
    for (int i = 0; i < N_PROFILES; i++)
        if (name && strcmp(name, profiles[i].name) == 0) {
            *out = profiles[i];
            return 0;
        }
    return -1;
}

const char *gpu_profile_names(void) { return "h200, a100"; }

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

size_t gpu_model_bytes(const FsNet *net, uint32_t n_train) { return align256(core_model_bytes(net, n_train)); }

const char *gpu_tier_name(FsGpuTier t)
{
    return t == FS_GPU_BLOCK ? "block" : t == FS_GPU_LIBRARY ? "library" : "refused";
}

/* A chain model on the library tier: its group of one must fit the
 * device (kernels/lib_train.cu lays a group out as gpu_model_bytes each). */
static FsGpuTier library_check(const FsGpuLimits *lim, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                               char *why, size_t n)
{
    FsNet net;
    FsErr err = {0};
    if (train_chain_rows(arch, ts, 0, &net, &err) != 0) return snprintf(why, n, "%s", err.msg), FS_GPU_REFUSED;
    size_t bytes = gpu_model_bytes(&net, n_train);
    if (bytes > lim->memory / 100 * 85)
        return snprintf(why, n, "needs %.2f GiB of device memory, more than 85%% of the %s's %.1f GiB",
                        (double)bytes / (1 << 30), lim->name, (double)lim->memory / (1 << 30)),
               FS_GPU_REFUSED;
    return FS_GPU_LIBRARY;
}

FsGpuTier gpu_model_check(const FsGpuLimits *lim, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                          char *why, size_t n)
{
    FsNet net;
    FsErr err = {0};
    int mb = ts->batch > ts->eval_batch ? ts->batch : ts->eval_batch;
    /* The block keeps a batch's codes and labels in shared memory, a
     * window's worth per example; a chain batch's thousands of rows do not
     * fit there: chain models go to the library tier. */
    if (arch->chain) return library_check(lim, arch, ts, n_train, why, n);
    if (model_compile(&net, arch, mb, &err) != 0) return snprintf(why, n, "%s", err.msg), FS_GPU_REFUSED;
    /* The batch's codes, labels, losses and predictions and the reduction
     * partials live in the block's shared memory (kernels/fit_kernel.cu). */
    size_t shared = core_model_hot_bytes(&net);
    if (shared > lim->shared_optin)
        return snprintf(why, n,
                        "needs %zu bytes of shared memory per block (batch %d x window %d), more than the %s's %zu",
                        shared, mb, arch->window, lim->name, lim->shared_optin),
               FS_GPU_REFUSED;
    size_t bytes = gpu_model_bytes(&net, n_train);
    if (bytes > lim->memory / 100 * 85)
        return snprintf(why, n, "needs %.2f GiB of device memory, more than 85%% of the %s's %.1f GiB",
                        (double)bytes / (1 << 30), lim->name, (double)lim->memory / (1 << 30)),
               FS_GPU_REFUSED;
    return FS_GPU_BLOCK;
}
