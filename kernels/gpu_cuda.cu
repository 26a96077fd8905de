/*
 * gpu_cuda: the host side of the CUDA backend (API in src/gpu/gpu.h): the
 * device and the data it holds; gpu_launch.cu sizes and runs the launches.
 *
 * gpu_open uploads the residue arrays once; each fold's example lists are
 * uploaded the first time a job needs them (gpu_fold_lists). Nothing goes
 * to the device per batch or per epoch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cuda.h"

int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear: "no driver" is an answer, not an error */
        return 0;
    }
    return n;
}

int gpu_emulated(void)
{
#ifdef FS_CUDA_STANDIN
    return 1;
#else
    return 0;
#endif
}

void gpu_describe(int device, char *out, size_t n)
{
    cudaDeviceProp p;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError(); /* "no driver" is an answer, not an error */
        snprintf(out, n, "no usable CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none visible");
        return;
    }
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        cudaGetLastError();
        snprintf(out, n, "no CUDA device %d", device);
        return;
    }
#ifdef FS_CUDA_STANDIN
    snprintf(out, n, "cuda (emulated on the CPU: %s profile), %.1f GiB, sm_%d%d, %d SMs", fsemu_profile_name(),
             (double)p.totalGlobalMem / (1 << 30), p.major, p.minor, p.multiProcessorCount);
#else
    snprintf(out, n, "%s, %.1f GiB, sm_%d%d, %d SMs", p.name, (double)p.totalGlobalMem / (1 << 30), p.major,
             p.minor, p.multiProcessorCount);
#endif
}

int gpu_limits(int device, FsGpuLimits *out)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%.63s", p.name);
    out->memory = p.totalGlobalMem;
    out->shared_optin = p.sharedMemPerBlockOptin;
    out->shared_per_sm = p.sharedMemPerMultiprocessor;
    out->sms = p.multiProcessorCount;
    out->regs_per_sm = p.regsPerMultiprocessor;
    out->threads_per_sm = p.maxThreadsPerMultiProcessor;
    out->major = p.major;
    out->minor = p.minor;
    return 0;
}

static int upload(void **dst, const void *src, size_t bytes, FsErr *err)
{
    CU(cudaMalloc(dst, bytes ? bytes : 1));
    if (bytes) CU(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return 0;
}

FsGpu *gpu_open(int device, const FsDataset *ds, FsErr *err)
{
    if (cudaSetDevice(device) != cudaSuccess) {
        fs_err_set(err, "cannot use CUDA device %d: %s", device, cudaGetErrorString(cudaGetLastError()));
        return NULL;
    }
    FsGpu *g = (FsGpu *)fs_calloc(1, sizeof *g);
    g->device = device;
    g->ds = ds;
    if (gpu_limits(device, &g->lim) != 0) {
        fs_err_set(err, "cannot read the properties of CUDA device %d: %s", device,
                   cudaGetErrorString(cudaGetLastError()));
        free(g);
        return NULL;
    }
    const int got = gpu_table_env(&g->lim, &g->table, err);
    if (got < 0) {
        free(g);
        return NULL;
    }
    g->has_table = got;
    size_t n = ds->n_res;
    if (upload((void **)&g->d_aa, ds->aa, n, err) || upload((void **)&g->d_ss, ds->ss, n, err) ||
        upload((void **)&g->d_left, ds->left, n, err) || upload((void **)&g->d_right, ds->right, n, err) ||
        (ds->feat_dim && upload(&g->d_feat, ds->feat, n * ds->feat_dim * (ds->feat_half ? 2 : 4), err))) {
        gpu_close(g);
        return NULL;
    }
    return g;
}

void gpu_close(FsGpu *g)
{
    if (!g) return;
    cudaFree(g->d_aa);
    cudaFree(g->d_ss);
    cudaFree(g->d_left);
    cudaFree(g->d_right);
    cudaFree(g->d_feat);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < FS_MAX_FOLDS + 2; i++) cudaFree(g->folds[c][i].d_idx);
    gpu_table_free(&g->table);
    free(g);
}

void gpu_times(const FsGpu *g, FsGpuTimes *out)
{
    if (g) *out = g->times;
    else memset(out, 0, sizeof *out);
}

/* A fold id FsGpu.folds has a place for. */
static int fold_in_range(int fold) { return fold >= FS_FOLD_ALL && fold < FS_MAX_FOLDS; }

int gpu_lists_resident(const FsGpu *g, const FsJob *job)
{
    if (!g || !fold_in_range(job->fold)) return 0;
    return g->folds[job->arch->chain != 0][gpu_fold_slot(job->fold)].d_idx != NULL;
}

const FoldLists *gpu_fold_lists(FsGpu *g, int fold, int chains, FsErr *err)
{
    if (!fold_in_range(fold)) {
        fs_err_set(err, "fold %d is not a fold of this data (at most %d)", fold, FS_MAX_FOLDS);
        return NULL;
    }
    FoldLists *f = &g->folds[chains != 0][gpu_fold_slot(fold)];
    if (f->d_idx) return f;
    /* The CPU trainer's lists and counts (core_fold_data), so that both
     * backends train on the same examples in the same order. */
    FsFoldData fd;
    uint32_t *h = core_fold_data(g->ds, fold, chains, &fd);
    core_fold_class_counts(&fd, chains, f->counts);
    int rc = upload((void **)&f->d_idx, h, sizeof(uint32_t) * ((size_t)fd.n_train + fd.n_valid), err);
    free(h);
    if (rc) return NULL;
    f->n_train = fd.n_train;
    f->n_valid = fd.n_valid;
    f->n_train_res = fd.n_train_res;
    f->n_valid_res = fd.n_valid_res;
    return f;
}
