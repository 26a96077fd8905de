/*
 * gpu_driver: feeds the CUDA backend from a run's queue. Each launch takes
 * as many jobs as fit on the device at once (gpu_capacity per job, so
 * models of different sizes share a launch) and trains them in one kernel;
 * each model's result is recorded as it ends, while the others train (a
 * kill then loses only the models still training); then the next launch,
 * until nothing is left.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "run/gpu_driver.h"
#include "run/run.h"

int run_choose_backend(int requested, int local_rank, int *use_gpu, int *device, FsErr *err)
{
    int n = gpu_count();
    *use_gpu = 0;
    *device = 0;
    if (requested == FS_BACKEND_CPU) return 0;
    /* The CUDA stand-in is for `--backend cuda` on purpose: on the CPU it
     * is slower than the CPU backend, so `auto` never picks it. */
    if (requested == FS_BACKEND_AUTO && gpu_emulated()) return 0;
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

uint32_t run_gpu_largest_fold(const FsDataset *ds, const FsFolds *folds)
{
    uint32_t n_train = 0;
    for (int k = 0; k < folds->n; k++) {
        uint32_t n = data_examples(ds, data_fold_id(folds, k), 0, NULL);
        if (n > n_train) n_train = n;
    }
    return n_train;
}

int run_gpu_trial_tier(const FsGpuLimits *lim, const FsTrial *tr, int fold, uint32_t n_train, char *why, size_t n)
{
    FsTrainSpec ts;
    sweep_fold_spec(&ts, tr, fold);
    why[0] = '\0';
    return (int)gpu_model_check(lim, &tr->arch, &ts, n_train, why, n);
}

int run_gpu_check_trials(const FsSweep *sw, const FsDataset *ds, const FsFolds *folds, int device, FsErr *err)
{
    FsGpuLimits lim;
    if (gpu_limits(device, &lim) != 0) return fs_err_set(err, "cannot read CUDA device %d's limits", device), -1;
    /* The library tier's back-end table, where one is named: refused now,
     * before training, rather than by the device's first launch. */
    FsGpuTable table;
    if (gpu_table_env(&lim, &table, err) < 0) return -1;
    gpu_table_free(&table);
    uint32_t n_train = run_gpu_largest_fold(ds, folds);
    int bad = 0;
    char first[700] = "";
    for (int t = 0; t < sw->n_trials; t++) {
        char why[512];
        if (run_gpu_trial_tier(&lim, &sw->trials[t], data_fold_id(folds, 0), n_train, why, sizeof why) != FS_GPU_REFUSED)
            continue;
        if (!bad++) snprintf(first, sizeof first, "trial %d (%s): %s", t + 1, sw->trials[t].id, why);
    }
    if (!bad) return 0;
    fs_err_set(err,
               "backend cuda: %d of %d trials cannot train on CUDA device %d (%s): %s%s; `%s plan` lists "
               "them all; run them with --backend cpu",
               bad, sw->n_trials, device, lim.name, first, bad > 1 ? ", and others" : "", fs_program());
    return -1;
}

int run_gpu_train_one(int device, const FsDataset *ds, const FsJob *job, FsErr *err)
{
    FsGpu *g = gpu_open(device, ds, err);
    if (!g) return -1;
    int rc = gpu_train(g, job, 1, NULL, err);
    gpu_close(g);
    return rc;
}

void run_gpu_libraries(char *out, size_t n) { gpu_libraries(out, n); }

void run_backend_describe(int use_gpu, int device, char *out, size_t n)
{
    if (use_gpu) {
        int k = snprintf(out, n, "GPU %d: ", device);
        if (k > 0 && (size_t)k < n) gpu_describe(device, out + k, n - (size_t)k);
        /* The library tier's back ends: from a measured table, or cuBLAS. */
        const char *table = getenv(FS_GPU_TABLE_ENV);
        size_t at = strlen(out);
        if (table && *table && at < n) snprintf(out + at, n - at, "; library back ends from %s", table);
        return;
    }
    char why[200];
    gpu_describe(0, why, sizeof why);
    /* A CUDA build that found no usable device says why, in the binding
     * line: a compute node without a driver, a card hidden from the job. */
    if (gpu_emulated())
        snprintf(out, n, "cpu (this build's CUDA backend is the CPU stand-in: --backend cuda runs it)");
    else if (gpu_count() == 0 && strncmp(why, "none", 4) != 0)
        snprintf(out, n, "cpu (%s)", why);
    else
        snprintf(out, n, "cpu");
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

uint64_t run_gpu_fill_share(int cap, int models)
{
    const uint64_t c = cap > 0 ? (uint64_t)cap : 1, m = models > 0 ? (uint64_t)models : 1;
    return (FS_GPU_FILL_UNIT * m + c - 1) / c;
}

/* A launch's library groups so far: per signature its jobs. */
typedef struct {
    int *sig, *jobs, n;
} FillGroups;

/* What a job adds to a launch (a share of the device, FS_GPU_FILL_UNIT
 * whole): a model of the block tier 1 / its capacity; the first job of a
 * library group (its signature's first in the launch) what the group's
 * width of models allocates (gpu_group_need: the buffers, arrays and
 * scratch lib_train.cu allocates, against the same 85% of free memory),
 * however many of them the launch holds; the group's later jobs nothing,
 * since they train in its slots, up to FS_GPU_FILL_QUEUE widths of them
 * (*member 1), after which the launch takes no more of it (UINT64_MAX):
 * a launch does not hoard a signature's jobs that other ranks could
 * train. g NULL (no device): each job a whole device. */
#define FS_GPU_FILL_QUEUE 4
static uint64_t fill_cost(FsGpu *g, const FsGpuLimits *lim, const FsJob *job, FillGroups *fg)
{
    if (!g) return FS_GPU_FILL_UNIT;
    char why[512];
    const uint32_t n_train = data_examples(job->data, job->fold, 0, NULL);
    if (job->lib_width <= 0 || !lim ||
        gpu_model_check(lim, job->arch, job->spec, n_train, why, sizeof why) != FS_GPU_LIBRARY)
        return run_gpu_fill_share(gpu_capacity(g, job), 1);
    for (int i = 0; i < fg->n; i++)
        if (fg->sig[i] == job->lib_sig)
            return fg->jobs[i] < FS_GPU_FILL_QUEUE * job->lib_width ? (fg->jobs[i]++, 0) : UINT64_MAX;
    fg->sig[fg->n] = job->lib_sig;
    fg->jobs[fg->n++] = 1;
    size_t need = 0, budget = 0;
    if (gpu_group_need(g, job, job->lib_width, &need, &budget) != 0 || need >= budget) return FS_GPU_FILL_UNIT;
    /* need / budget of the unit, rounded up, in 128-bit-free steps: need < budget. */
    return (uint64_t)(((double)need / (double)budget) * (double)FS_GPU_FILL_UNIT) + 1;
}

/* One launch's jobs as the queue knows them: a job the GPU finished is
 * recorded at once (done[i]: by then), while the launch's others train;
 * refills (drive_more) append to them. */
typedef struct {
    const FsGpuQueue *q;
    int *ids;
    unsigned char *done;
    FsJob *batch;
    const FsGpuLimits *lim; /* the device's, NULL where unread */
    FsGpu *g;
    int n;                  /* jobs in ids / batch / done: the launch's and its refills' */
    int *carried;           /* a job taken that no refill could take: the next launch's first */
} DriveLaunch;

/* The tier that trained a finished job, for its fold record: the one rule
 * (gpu_model_check) with the job's own spec, as the launcher applied it;
 * none (0) for a job the device did not take. */
static int trained_tier(const FsGpuLimits *lim, const FsJob *job)
{
    char why[512];
    if (!lim) return FS_GPU_PATH_AUTO;
    uint32_t n_train = data_examples(job->data, job->fold, 0, NULL);
    FsGpuTier t = gpu_model_check(lim, job->arch, job->spec, n_train, why, sizeof why);
    return t == FS_GPU_REFUSED ? FS_GPU_PATH_AUTO : (int)t;
}

static void drive_epochs(void *ctx, long epochs)
{
    const DriveLaunch *d = ctx;
    d->q->epochs(d->q->ctx, epochs);
}

static void drive_finished(void *ctx, int j)
{
    DriveLaunch *d = ctx;
    d->done[j] = 1;
    d->batch[j].result->gpu_path = trained_tier(d->lim, &d->batch[j]);
    d->q->done(d->q->ctx, d->ids[j]);
}

/* The block tier's refill (FsGpuWatch.more): ready jobs of that tier,
 * with at most `epochs` epochs, while the device's free memory holds them
 * (fill_cost's share, against what is free now: the running launches'
 * buffers are out of it). The first job that does not fit waits for the
 * next launch (carried), and no refill takes another before it. */
static int drive_more(void *ctx, int first, int room, int epochs)
{
    DriveLaunch *d = ctx;
    uint64_t used = 0;
    int k = 0;
    if (*d->carried >= 0 || !d->lim) return 0;
    while (k < room) {
        int id;
        if (d->q->take(d->q->ctx, &id, 0) != 1) break;
        FsJob *job = &d->batch[first + k];
        *job = *d->q->job(d->q->ctx, id);
        char why[512];
        const uint32_t nt = data_examples(job->data, job->fold, 0, NULL);
        /* Capacity 0: not even one more fits beside the running launches
         * (a launch's first job is taken regardless, to fail with its
         * message; a refill's would only run the device out of memory).
         * Its fold lists must be resident (every fold's are uploaded
         * before the first launch; a refit's are not): gpu_capacity and the
         * launch would upload them, an allocation that waits for the
         * running kernels, and the host's watch with it. */
        const int block = gpu_model_check(d->lim, job->arch, job->spec, nt, why, sizeof why) == FS_GPU_BLOCK &&
                          job->spec->stop.max_epochs <= epochs && gpu_lists_resident(d->g, job);
        const int cap = block ? gpu_capacity(d->g, job) : 0;
        const uint64_t cost = run_gpu_fill_share(cap, 1);
        if (!block || cap < 1 || used + cost > FS_GPU_FILL_UNIT) {
            *d->carried = id;
            break;
        }
        used += cost;
        d->ids[first + k] = id;
        d->done[first + k] = 0;
        k++;
    }
    d->n = first + k;
    return k;
}

void run_gpu_drive(int device, const FsDataset *ds, const FsGpuQueue *q)
{
    FsErr err = {0};
    FsGpu *g = gpu_open(device, ds, &err);
    FsGpuLimits lim;
    const int have_lim = gpu_limits(device, &lim) == 0;
    int dead = 0; /* the device failed */
    enum { MAX = 4096 };
    int *ids = fs_calloc(MAX, sizeof(int));
    FsJob *batch = fs_calloc(MAX, sizeof(FsJob));
    unsigned char *done = fs_calloc(MAX, 1);
    FillGroups fg = {fs_calloc(MAX, sizeof(int)), fs_calloc(MAX, sizeof(int)), 0};
    int carried = -1; /* a job taken that did not fit the last launch: the next one's first */
    for (;;) {
        /* Fill the device (fill_cost): jobs while they fit; a full device
         * still takes its groups' queued jobs, which cost nothing. */
        int n = 0;
        uint64_t used = 0;
        fg.n = 0;
        while (n < MAX) {
            /* Wait for the first job of a launch only: the rest fill it up. */
            if (carried >= 0)
                ids[n] = carried, carried = -1;
            else if (q->take(q->ctx, &ids[n], n == 0) != 1)
                break;
            batch[n] = *q->job(q->ctx, ids[n]);
            const uint64_t cost = fill_cost(g && !dead ? g : NULL, have_lim ? &lim : NULL, &batch[n], &fg);
            if (n > 0 && (cost == UINT64_MAX || used + cost > FS_GPU_FILL_UNIT)) { /* no room left for it */
                carried = ids[n];
                break;
            }
            used += cost == UINT64_MAX ? 0 : cost;
            n++;
        }
        if (n == 0) break;
        FsErr e = {0};
        memset(done, 0, (size_t)n);
        DriveLaunch dl = {q, ids, done, batch, have_lim ? &lim : NULL, g, n, &carried};
        const FsGpuWatch w = {drive_epochs, drive_finished, &dl, drive_more, MAX};
        int failed = dead || !g || gpu_train(g, batch, n, &w, &e) != 0;
        n = dl.n; /* with the refills' jobs */
        if (failed) {
            /* The device, not the models: nothing of this launch that is
             * not recorded yet is a result (a rerun trains it), and the
             * run stops with why. */
            if (!g) e = err;
            int lost = 0;
            for (int i = 0; i < n; i++) {
                if (done[i]) continue; /* recorded while the launch ran */
                batch[i].result->status = FS_FIT_CANCELLED;
                snprintf(batch[i].result->message, sizeof batch[i].result->message, "GPU: %.900s", e.msg);
                lost++;
            }
            if (!dead) {
                FsErr why = {0};
                fs_err_set(&why, "CUDA device %d failed: %s; the %d fold%s it was training %s not recorded (a "
                                 "rerun trains %s)",
                           device, e.msg, lost, lost == 1 ? "" : "s", lost == 1 ? "was" : "were",
                           lost == 1 ? "it" : "them");
                q->fail(q->ctx, &why);
            }
            dead = 1; /* what is still handed out comes back cancelled, untouched, until the run ends */
        }
        for (int i = 0; i < n; i++)
            if (!done[i]) q->done(q->ctx, ids[i]);
    }
    free(ids);
    free(fg.sig);
    free(fg.jobs);
    free(batch);
    free(done);
    FsGpuTimes t;
    gpu_times(g, &t);
    if (q->times) q->times(q->ctx, &t);
    gpu_close(g);
}
