/*
 * gpu_waves: the block tier's launches for one gpu_train call, refilled
 * while they run (#45, part 3). A launch's models end at different times
 * (early stopping, the pruner, smaller folds); the SMs they held idle
 * until its slowest model ends. So while fewer models train than the
 * device keeps resident (its SMs x FS_GPU_MIN_BLOCKS blocks), the caller
 * is asked for more ready jobs (FsGpuWatch.more) and they start at once
 * as a launch of their own, beside the running ones, on its own
 * non-blocking stream.
 *
 * Nothing in a refill's way may wait for a running kernel (the guide's
 * implicit synchronisation: a device or page-locked allocation, a memset,
 * a legacy-stream copy): its buffer comes from the stream-ordered
 * allocator, its copies and memset go on its own stream, its mapped
 * records from a pool made before the first launch (Records), and the
 * folds' example lists are uploaded before it too. A refill is a fresh
 * launch, so its blocks read the seeded weights through a fresh L1 (a
 * block that took a new job in place could read stale lines). Each job
 * trains the same whatever launch or block trains it, so the results are
 * bitwise those of one launch (tests/gpu_emu: prune).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_launch.h"

/* Launches in flight at once: far under the device's concurrent kernels
 * (128 on Hopper); each is a stream pair. */
#define FS_GPU_WAVES 16

/* Records for cap job indexes, n_curves curves of ep_cap epochs. */
static int records_make(Records *R, int cap, int ep_cap, int n_curves, FsErr *err)
{
    memset(R, 0, sizeof *R);
    R->cap = cap;
    R->ep_cap = ep_cap;
    R->n_curves = n_curves;
    R->curve_bytes = launch_curves_bytes(ep_cap);
    const size_t watch = align256(sizeof(Watch) * (size_t)cap), done = align256(sizeof(int) * (size_t)cap);
    CU(cudaHostAlloc((void **)&R->h, watch + done + R->curve_bytes * (size_t)n_curves, cudaHostAllocMapped));
    R->watch = (Watch *)(void *)R->h;
    R->done = (int *)(void *)(R->h + watch);
    R->curves = R->h + watch + done;
    R->free_curves = (int *)fs_calloc((size_t)n_curves + 1, sizeof(int));
    for (int i = n_curves - 1; i >= 0; i--) R->free_curves[R->n_free++] = i;
    return 0;
}

static void records_free(Records *R)
{
    if (R->h) cudaFreeHost(R->h);
    free(R->free_curves);
    memset(R, 0, sizeof *R);
}

/* The call's launches, each with its jobs' base index; a place is in
 * use from launch_build (L->job) to launch_free. */
typedef struct {
    Launch L[FS_GPU_WAVES];
    int live;      /* places in use */
    int resident;  /* blocks the device keeps running at once */
    int started;   /* launches started, for the times */
    Records pool;
} Waves;

static void wave_end(Waves *W, Launch *L, unsigned char *ended)
{
    for (int j = 0; j < L->n && L->job_end; j++)
        if (L->job_end[L->job[j]]) ended[L->base + L->job[j]] = 1;
    launch_free(L); /* the buffer back in its stream's order, the records to the pool */
    memset(L, 0, sizeof *L);
    W->live--;
}

/* jobs[base..base+k) as one launch, started on its own stream. */
static int wave_start(FsGpu *g, const FsJob *jobs, int base, int k, Waves *W, unsigned char *ended, FsErr *err)
{
    Launch *L = W->L;
    while (L->job) L++; /* a free place: the caller checked W->live */
    L->base = base;
    L->pool = &W->pool;
    W->live++;
    if (launch_build(g, jobs + base, k, NULL, FS_GPU_BLOCK, 0, 0, L, err) != 0) return -1;
    if (L->n == 0) { /* none of them is the block tier's */
        wave_end(W, L, ended);
        return 0;
    }
    /* A block trains its whole fit in one launch, with no host between
     * its batches to write a checkpoint or put one in place. */
    for (int s = 0; s < L->n; s++)
        core_ckpt_unsupported(jobs[base + L->job[s]].ckpt, "the GPU's block tier keeps no mid-fold checkpoints (the "
                                                           "library tier does: run.gpu_path: library)");
    int *d_done = NULL;
    CU(cudaHostGetDevicePointer((void **)&d_done, (void *)L->done, 0));
    FsFitLaunch args = {L->d_models, L->d_folds, L->d_specs, L->d_res, d_done, L->weights_shared, L->shared};
    cudaError_t e = fs_fit_launch(L->n, FS_GPU_THREADS, L->shared, &args, L->stream);
    if (e != cudaSuccess) {
        fs_err_set(err, "%s:%d: kernel launch (%d models, %zu bytes of shared memory each): %s", __FILE__, __LINE__,
                   L->n, L->shared, cudaGetErrorString(e));
        return -1;
    }
    W->started++;
    return 0;
}

/* Models still training in the call's launches. */
static int waves_training(const Waves *W)
{
    int t = 0;
    for (int i = 0; i < FS_GPU_WAVES; i++)
        for (int s = 0; s < W->L[i].n; s++) t += !W->L[i].handed[s];
    return t;
}

/* Asks the caller for jobs to fill the room the device has: up to the
 * blocks it keeps resident, the records left, and the jobs array's end. */
static int waves_refill(FsGpu *g, const FsJob *jobs, int *n, const FsGpuWatch *w, Waves *W, unsigned char *ended,
                        FsErr *err)
{
    if (!w || !w->more || W->live == FS_GPU_WAVES) return 0;
    int room = W->resident - waves_training(W);
    if (room > W->pool.n_free) room = W->pool.n_free;
    if (room > w->cap - *n) room = w->cap - *n;
    if (room <= 0) return 0;
    const int k = w->more(w->ctx, *n, room, W->pool.ep_cap);
    if (k <= 0) return 0;
    const int base = *n;
    *n += k > room ? room : k;
    return wave_start(g, jobs, base, *n - base, W, ended, err);
}

/* The most epochs of the jobs the block tier takes (a refill's jobs must
 * fit the curves records: FsGpuWatch.more). */
static int block_epochs(FsGpu *g, const FsJob *jobs, int n)
{
    int E = 1;
    for (int j = 0; j < n; j++) {
        char why[512];
        uint32_t nt = data_examples(g->ds, jobs[j].fold, 0, NULL);
        if (gpu_job_tier(g, &jobs[j], nt, why, sizeof why) == FS_GPU_BLOCK && jobs[j].spec->stop.max_epochs > E)
            E = jobs[j].spec->stop.max_epochs;
    }
    return E;
}

/* Watches every launch until all have ended, refilling as models end.
 * The wait grows from 1 ms to 50 ms while nothing changes, so a short
 * launch returns at once and a long one costs the host nothing. */
static int waves_watch(FsGpu *g, const FsJob *jobs, int *n, const FsGpuWatch *w, Waves *W, unsigned char *ended,
                       FsErr *err)
{
    long last = -1, wait_ns = 1000 * 1000;
    int rc = 0;
    while (W->live > 0) {
        long epochs = 0;
        for (int i = 0; i < FS_GPU_WAVES && !rc; i++) {
            Launch *L = &W->L[i];
            long e = 0;
            if (!L->job) continue; /* a free place */
            int r = launch_poll(jobs + L->base, L, w, &e, err);
            if (r < 0) rc = -1;
            epochs += e;
            if (r == 1) wave_end(W, L, ended);
        }
        if (rc) return -1;
        const int before = *n;
        if (waves_refill(g, jobs, n, w, W, ended, err) != 0) return -1;
        if (w && w->progress && epochs != last) w->progress(w->ctx, epochs);
        if (epochs != last || *n != before) wait_ns = 1000 * 1000;
        last = epochs;
        if (W->live == 0) break;
        struct timespec ts = {0, wait_ns};
        nanosleep(&ts, NULL);
        if (wait_ns < 50 * 1000 * 1000) wait_ns *= 2;
    }
    return 0;
}

int gpu_block_train(FsGpu *g, const FsJob *jobs, int *n, const FsGpuWatch *w, unsigned char *ended, FsErr *err)
{
    Waves *W = (Waves *)fs_calloc(1, sizeof(Waves));
    const int refills = w && w->more && w->cap > *n;
    const int cap = refills ? w->cap : *n;
    W->resident = gpu_parallel_blocks(&g->lim);
    /* A launch's slots never outnumber its jobs, and refills keep the
     * models training under `resident`: so many curves records serve. */
    const int n_curves = refills && W->resident > *n ? W->resident : *n;
    int rc = records_make(&W->pool, cap > 0 ? cap : 1, block_epochs(g, jobs, *n), n_curves > 0 ? n_curves : 1, err);
    /* Every fold's window lists now: uploaded for a refill, they would
     * be an allocation while the kernels run (a fold the data lacks fails
     * in its launch, with its message). A predefined split's one fold is
     * the first launch's; a refit's (FS_FOLD_ALL) waits for the next
     * launch (drive_more takes only jobs whose lists are resident). */
    for (uint32_t f = 0; !rc && refills && f < g->ds->n_folds && f < FS_MAX_FOLDS; f++) {
        FsErr quiet = {0};
        if (!gpu_fold_lists(g, (int)f, 0, &quiet)) cudaGetLastError();
    }
    FS_NVTX_PUSH("block tier: lay out, seed and upload the models");
    if (!rc) rc = wave_start(g, jobs, 0, *n, W, ended, err);
    FS_NVTX_POP();
    const double t_kernel = fs_now();
    FS_NVTX_PUSH("block tier: the kernels (the host watches, records finished models, refills)");
    if (!rc) rc = waves_watch(g, jobs, n, w, W, ended, err);
    FS_NVTX_POP();
    if (W->started > 0) g->times.kernel_seconds += fs_now() - t_kernel;
    if (W->live > 0) {
        /* After an error: the other launches' models are told to stop and
         * waited for (here, or by launch_free's stream teardown where a
         * sticky error makes the synchronisation return at once) before
         * their buffers and records go (what was recorded stays
         * recorded). */
        for (int i = 0; i < FS_GPU_WAVES; i++)
            for (int s = 0; W->L[i].job && W->L[i].watch && s < W->L[i].n; s++)
                ((volatile Watch *)W->L[i].watch)[s].cancel = 1;
        cudaDeviceSynchronize();
        cudaGetLastError();
        for (int i = 0; i < FS_GPU_WAVES; i++)
            if (W->L[i].job) wave_end(W, &W->L[i], ended);
    }
    /* The stream-ordered pool hands its freed buffers back to the device
     * at a synchronisation: before the library tier or the next fill read
     * the free memory. Every kernel has ended by now; an error it
     * returns is the next call's to report. */
    (void)cudaDeviceSynchronize();
    records_free(&W->pool);
    free(W);
    return rc;
}
