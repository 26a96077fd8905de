/*
 * gpu: the CUDA backend behind a C API (the implementation is
 * kernels/gpu_cuda.cu; a build without CUDA gets gpu_none.c, which reports
 * no device). One launch trains many (trial, fold) models, one thread block
 * each, through all their epochs, with the data set resident on the device
 * (uploaded once per process). The per-model code is the CPU trainer's
 * single source.
 */
#ifndef FS_GPU_H
#define FS_GPU_H

#include <stddef.h>

#include "train/train.h"

typedef struct FsGpu FsGpu;

/* Visible CUDA devices (0 without CUDA, without a driver or a device). */
int gpu_count(void);
/* "NVIDIA H200, 139.8 GiB, sm_90", or why there is none. */
void gpu_describe(int device, char *out, size_t n);

/* Selects `device` and uploads the data set's residue arrays once. */
FsGpu *gpu_open(int device, const FsDataset *ds, FsErr *err);
void gpu_close(FsGpu *g);

/* How many models like this job's fit on the device in one launch (memory
 * left, with a margin); 0 if not even one. */
int gpu_capacity(FsGpu *g, const FsJob *job);

/* Trains jobs[0..n) in one kernel launch; each result lands in its job's
 * result (curves included), exactly as train_job would leave it. While the
 * kernel runs, progress(ctx, epochs) is called with the epochs completed
 * over all models, and a raised job cancel flag is passed to the device.
 * Returns 0, or -1 with err (a CUDA error: the jobs are marked failed). */
int gpu_train(FsGpu *g, const FsJob *jobs, int n, void (*progress)(void *ctx, long epochs), void *ctx,
              FsErr *err);

#endif
