/*
 * kernels/gpu_launch.h: internal to the CUDA backend's host side: one
 * launch's models laid out in device memory with their mapped records
 * (gpu_launch.cu builds, watches and collects them), shared by the block
 * tier's launch (gpu_launch.cu) and the library tier's groups
 * (lib_train.cu).
 */
#ifndef FS_KERNELS_GPU_LAUNCH_H
#define FS_KERNELS_GPU_LAUNCH_H

#include "gpu_cuda.h"

/* What the host and a running model share through mapped host memory: the
 * model writes its epochs, examples and curves, the host its stop flags.
 * The curves are written before the epoch count moves (FS_PUBLISH). */
typedef struct {
    int progress;      /* epochs completed */
    int cancel, prune; /* the job's flags, copied down by the host */
    int pad;
    uint64_t examples; /* trained so far */
} Watch;

/* Device and mapped layouts round each array up to 256 bytes. */
static inline size_t align256(size_t n) { return (n + 255) / 256 * 256; }
/* A model's curves in mapped memory: 4 x epochs floats (train and
 * validation loss, validation Q3, seconds), rounded up. */
static inline size_t launch_curves_bytes(int epochs)
{
    return align256(sizeof(float) * 4 * (size_t)(epochs > 0 ? epochs : 1));
}

/* The block tier's mapped records for one gpu_train call (gpu_waves.cu),
 * made once: page-locking host memory while a kernel runs would keep the
 * next launch from starting beside it (the guide's implicit
 * synchronisation). A Watch record and a done flag per job index of the
 * call (a launch's slot s uses its first job's base + s: its done flags
 * stay one array, FsFitLaunch.done), and curves records of ep_cap epochs,
 * taken by a launch's slots and given back as each model is collected
 * (launch_collect_one; launch_free gives back those never collected). */
typedef struct {
    char *h;            /* the one mapped allocation */
    Watch *watch;       /* [cap] */
    int *done;          /* [cap] */
    char *curves;       /* [n_curves] records of curve_bytes */
    size_t curve_bytes; /* 4 x ep_cap floats, rounded up */
    int cap, ep_cap, n_curves;
    int *free_curves, n_free;
} Records;

/* One launch's host and device state; freed by launch_free. */
typedef struct {
    int n;          /* models in the launch */
    int base;       /* its jobs' first index in gpu_train's jobs (finished() and the records take base + index) */
    /* The block tier's launches (L->pool set before launch_build): laid out
     * on their own non-blocking streams with the stream-ordered allocator
     * and async copies, their records from the pool, so that a launch
     * can start while another kernel runs (gpu_waves.cu). */
    Records *pool;
    int *rec;       /* per slot: its curves record in the pool */
    int *job;       /* launch slot -> job index */
    int *seen;      /* epochs already handed to the job, per slot */
    unsigned char *handed;  /* per slot: result collected and passed to finished() */
    unsigned char *job_end; /* per job index: the same, for gpu_train's error path */
    FsNet *nets;
    FsModel *models;
    FsFoldData *folds;
    FsTrainSpec *specs;
    FsFitResult *res;
    size_t shared;  /* dynamic shared memory per block: the largest model's, and a staging area where weights are not in it (launch_shared) */
    int weights_shared; /* and every model's weights in it (launch_shared) */
    size_t stride;  /* a library group: bytes from one model's buffer to the next's */
    int width;      /* a library group: the models its calls span (>= n; slots past n stay zero); 0 on the block tier */
    /* A library group's jobs beyond its slots (launch_build's `slots`), in
     * job order: each takes the slot of a model that has ended
     * (launch_refill), so that a group keeps its width to the end. */
    int *queue, n_queue, next_queue;
    int ep_cap;     /* with a queue: epochs of curves each slot holds (the most of any job's) */
    char *d_buf;    /* every model's buffer, then the arrays below */
    FsNet *d_nets;
    FsModel *d_models;
    FsFoldData *d_folds;
    FsTrainSpec *d_specs;
    FsFitResult *d_res;
    char *h_mapped; /* n Watch records, n done flags, then every model's curves */
    Watch *watch;
    volatile int *done; /* the kernel's done flags (FsFitLaunch.done), host side */
    float **curves; /* per slot: 4 x max_epochs floats in h_mapped */
    cudaStream_t stream;
    cudaStream_t copy; /* a finished model's result and weights, while the kernel runs */
} Launch;

/* 85% of the device's free memory, after the job's fold lists are
 * uploaded (gpu_capacity's reasons): what a launch may fill (gpu_capacity,
 * gpu_group_need, lib_fit_width); 0 where it cannot be read. */
size_t launch_budget(FsGpu *g, const FsJob *job);
/* Which tier trains job (its fold of n_train examples): gpu_model_check. */
FsGpuTier gpu_job_tier(FsGpu *g, const FsJob *job, uint32_t n_train, char *why, size_t n);
/* The jobs of jobs[0..n) that sel marks (NULL: all) and `tier` trains,
 * laid out and seeded in one device allocation (a library group: one
 * stride apart, the stride the largest of them all needs); with slots > 0,
 * the first `slots` of them, the rest queued (L->queue). A library group's
 * buffer holds `width` strides where that is more than its models (its
 * calls span them: L->width). 0, or -1 with err. L->n 0: none. */
int launch_build(FsGpu *g, const FsJob *jobs, int n, const unsigned char *sel, FsGpuTier tier, int slots, int width,
                 Launch *L, FsErr *err);
/* Slot s of a library group, whose model has been collected, takes job j
 * (one of L->queue): its buffer zeroed and seeded, its fold, spec, result
 * and records fresh, as launch_build lays out a slot. 0, or -1 with err. */
int launch_refill(FsGpu *g, const FsJob *jobs, Launch *L, int s, int j, FsErr *err);
void launch_free(Launch *L);
/* Slot s's new epochs (curves, then the count) to its job. */
void launch_hand(const FsJob *job, Launch *L, int s, int epochs);
/* Slot s's final result and weights into its job; finished() records it. */
int launch_collect_one(const FsJob *jobs, Launch *L, int s, const FsGpuWatch *w, FsErr *err);

/* Checks, after its kernel has ended or while it runs: hands new epochs,
 * copies the flags down, collects the models that have ended; *epochs:
 * the epochs completed by its models still training. 1 when the kernel has ended (every
 * model collected), 0 while it runs, -1 with err. */
int launch_poll(const FsJob *jobs, Launch *L, const FsGpuWatch *w, long *epochs, FsErr *err);
/* The block tier's launches for jobs[0..*n): refilled while they run
 * (FsGpuWatch.more), *n growing with the jobs it adds; ended[j] set for
 * each job handed to finished(). 0, or -1 with err. */
int gpu_block_train(FsGpu *g, const FsJob *jobs, int *n, const FsGpuWatch *w, unsigned char *ended, FsErr *err);

/* The library tier (lib_train.cu): the jobs of jobs[0..n) it trains, in
 * groups of one shape signature; ended[j] set for each job handed to
 * finished(). 0, or -1 with err (a CUDA or library error). */
int gpu_lib_train(FsGpu *g, const FsJob *jobs, int n, const FsGpuWatch *w, unsigned char *ended, FsErr *err);

#endif
