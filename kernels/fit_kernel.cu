/*
 * fit_kernel.cu: the single-source trainer built for the GPU. The per-model
 * code in src/train (layers, step, fit) and src/stop is compiled here by
 * nvcc exactly as the C compiler builds it for the CPU; FS_PARFOR becomes a
 * block-strided loop and FS_SYNC a barrier (train/device.h), so one thread
 * block trains one (trial, fold) model through all of its epochs.
 * kernels/gpu_cuda.cu (the CUDA backend's host side) lays out the models
 * and calls fs_fit_launch.
 */
#include "train/core.h"

#include "../src/stop/stop.c"
#include "../src/train/act.c"
#include "../src/train/blocks.c"
#include "../src/train/conv.c"
#include "../src/train/dense.c"
#include "../src/train/fit.c"
#include "../src/train/gemm.c"
#include "../src/train/layers.c"
#include "../src/train/step.c"

/* One block per model: models[blockIdx.x] with its fold data and spec. */
extern "C" __global__ void fs_fit_kernel(FsModel *models, const FsFoldData *folds, const FsTrainSpec *specs,
                                         FsFitResult *out)
{
    int i = blockIdx.x;
    fit_model(&models[i], &folds[i], &specs[i], &out[i]);
}

/* The launch, for the host side (kernels/gpu_cuda.cu) in another unit:
 * declared in train/kernel.h, the header the two share. */
extern "C" cudaError_t fs_fit_launch(int n, int threads, FsModel *models, const FsFoldData *folds,
                                     const FsTrainSpec *specs, FsFitResult *out, cudaStream_t stream)
{
    fs_fit_kernel<<<n, threads, 0, stream>>>(models, folds, specs, out);
    return cudaGetLastError();
}
