/*
 * run/gpu_driver.h: internal to the run module. The CUDA backend inside a
 * run (gpu_driver.c): which backend a process uses, the trials a device
 * takes, and the driver that trains jobs from a queue launch after launch.
 * The queue is the caller's (rank 0's, a worker rank's), seen through
 * FsGpuQueue, so the driver knows nothing of either side's bookkeeping.
 */
#ifndef FS_RUN_GPU_DRIVER_H
#define FS_RUN_GPU_DRIVER_H

#include "data/data.h"
#include "gpu/gpu.h"
#include "sweep/sweep.h"
#include "train/train.h"
#include "util/util.h"

/* Chooses the backend for this process (cpu, cuda, auto); -1 with a message
 * when cuda is asked for and no device is visible. local_rank picks the GPU. */
int run_choose_backend(int requested, int local_rank, int *use_gpu, int *device, FsErr *err);

/* Trains jobs from the queue on the GPU, launch after launch, until the
 * queue is empty or the run stops (gpu_driver.c). take() hands out one job
 * id (1) or none (0); with wait it may block until one comes or none ever
 * will. done() records one finished job, as soon as its model ends (the
 * launch's others may still train). fail() is told once when the device
 * fails (a CUDA error: the launch's jobs not yet recorded come back
 * cancelled) and the driver stops; the run then ends with that error. */
typedef struct {
    int (*take)(void *ctx, int *id, int wait);
    void (*done)(void *ctx, int id);
    const FsJob *(*job)(void *ctx, int id);
    void (*epochs)(void *ctx, long epochs);
    void (*fail)(void *ctx, const FsErr *err);
    void *ctx;
    /* Optional: where the device's calls spent their time (gpu_times),
     * once, when the driver ends. */
    void (*times)(void *ctx, const FsGpuTimes *t);
} FsGpuQueue;
void run_gpu_drive(int device, const FsDataset *ds, const FsGpuQueue *q);
/* The largest training fold of the sweep's (a model's buffer holds its
 * fold's order): the n_train gpu_model_check is asked with. */
uint32_t run_gpu_largest_fold(const FsDataset *ds, const FsFolds *folds);
/* Trial tr's tier on lim (FsGpuTier: gpu_model_check with its fold's
 * spec, run.gpu_path included), why set where FS_GPU_REFUSED. */
int run_gpu_trial_tier(const FsGpuLimits *lim, const FsTrial *tr, int fold, uint32_t n_train, char *why, size_t n);
/* Every trial of the sweep on the GPU path of `device` (gpu_model_check,
 * the launcher's rule, with the largest training fold): 0, or -1 with the
 * refused trials named. A GPU rank refuses the run with it before training. */
int run_gpu_check_trials(const FsSweep *sw, const FsDataset *ds, const FsFolds *folds, int device, FsErr *err);
/* The library tier's groups, by a fixed rule from the sweep (gpu_groups.c):
 * per trial its signature (trials that share library calls have the same;
 * -1 where the trial does not compile) and its group's width. */
typedef struct {
    int *sig, *width;
    int n;
} RunGpuGroups;
/* The rule on the limits `on`, or where NULL `device`'s (its memory
 * bounds a width): 0, or -1 where the device cannot be read (every job
 * then keeps width 0: the launch's own count). Every rank computes the
 * same from the same sweep; `plan --gpu` from a profile's limits. */
int run_gpu_groups(const FsSweep *sw, const FsDataset *ds, const FsFolds *folds, int device, const FsGpuLimits *on,
                   RunGpuGroups *out);
void run_gpu_groups_free(RunGpuGroups *g);
/* A job of `trial`: its FsJob.lib_sig and lib_width from g (none: width 0). */
void run_gpu_group_job(const RunGpuGroups *g, int trial, FsJob *job);
/* This rank's backend for the binding map: "GPU 0: NVIDIA H200, ...", or
 * "cpu", with why no CUDA device is used where the build has the backend. */
void run_backend_describe(int use_gpu, int device, char *out, size_t n);
/* A launch's fill (run_gpu_drive): the share of the device `models`
 * models of capacity cap (< 1 counts as 1) take, in whole units of 2^-40
 * rounded up, so that cap models of one capacity fill it exactly (summing
 * 1.0 / cap in floating point fell short of 1.0 for half of all
 * capacities: a launch of cap + 1 models). Full at FS_GPU_FILL_UNIT. */
#define FS_GPU_FILL_UNIT ((uint64_t)1 << 40)
uint64_t run_gpu_fill_share(int cap, int models);
/* A representative job's models per launch on this device (for capacity). */
int run_gpu_capacity(int device, const FsDataset *ds, const FsJob *job);

/* One job on CUDA device `device` (gpu_driver.c): 0, or -1 with the CUDA
 * error (the job then ends cancelled, with the error as its message). */
int run_gpu_train_one(int device, const FsDataset *ds, const FsJob *job, FsErr *err);

#endif
