/*
 * gpu_launch: the CUDA backend's launches (gpu_cuda.cu holds the device and
 * its data): how many models fit (gpu_capacity), and gpu_train, which lays
 * out every model's buffer in one device allocation (the same size table
 * the CPU uses, core_model_bytes), initialises weights on the host with
 * the CPU trainer's seeds, launches fs_fit_kernel with one block per
 * model, watches the models' epoch counters in mapped host memory while it
 * runs, and copies the results back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_launch.h"

/* Threads per model (FS_GPU_THREADS, train/kernel.h): the per-model loops
 * are a few hundred wide (GEMM tiles, rows of a batch); more threads would
 * mostly wait at barriers. */
#define FS_GPU_MAX_MODELS 4096


size_t launch_budget(FsGpu *g, const FsJob *job)
{
    size_t free_b = 0, total = 0;
    if (cudaSetDevice(g->device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    FsErr le = {0};
    if (!gpu_fold_lists(g, job->fold, job->arch->chain, &le)) cudaGetLastError();
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return (size_t)((double)free_b * 0.85);
}

int gpu_group_need(FsGpu *g, const FsJob *job, int width, size_t *need, size_t *budget)
{
    FsNet net;
    FsErr e = {0};
    if (train_compile(job->arch, job->spec, data_longest_chain(g->ds), &net, &e) != 0) return -1;
    *need = gpu_lib_group_bytes(&net, data_examples(g->ds, job->fold, 0, NULL), width > 0 ? width : 1);
    *budget = launch_budget(g, job);
    return *budget > 0 ? 0 : -1;
}

int gpu_capacity(FsGpu *g, const FsJob *job)
{
    FsNet net;
    FsErr e = {0};
    /* A chain model's net is compiled for its batch's rows, as its job's. */
    if (train_compile(job->arch, job->spec, data_longest_chain(g->ds), &net, &e) != 0)
        return 1; /* it will fail with its message */
    uint32_t nt = data_examples(g->ds, job->fold, 0, NULL);
    /* A library-tier model's group needs the libraries' scratch beside it,
     * which grows with the group (gpu_lib_group_extra_bytes: its share of
     * one): a chain model's, and a window model's that the tier rule sends
     * there (auto's threshold, run.gpu_path: library). */
    char why[512];
    const int lib = gpu_job_tier(g, job, nt, why, sizeof why) == FS_GPU_LIBRARY;
    size_t per =
        gpu_model_bytes(&net, nt) + gpu_launch_arrays_bytes(1) + (lib ? gpu_lib_group_extra_bytes(&net, 1) : 0);
    /* The launch uploads the fold's example lists (every example of the
     * data set, once a fold) before its models' buffer: resident now, they
     * are out of the free memory read below instead of the margin's, which
     * they outgrow where the data set is large beside the device. A launch
     * of several folds still takes the lists of folds whose capacity comes
     * later from the margin, once a run (they stay resident). A fold the
     * data lacks fails in the launch, with its message. */
    size_t cap = launch_budget(g, job) / per;
    return cap > FS_GPU_MAX_MODELS ? FS_GPU_MAX_MODELS : (int)cap;
}

/* Slot s's curves record back to the block tier's pool (none elsewhere,
 * or given back already). */
static void launch_give_curves(Launch *L, int s)
{
    if (!L->pool || L->rec[s] < 0) return;
    L->pool->free_curves[L->pool->n_free++] = L->rec[s];
    L->rec[s] = -1;
    L->curves[s] = NULL;
}

void launch_free(Launch *L)
{
    /* The block tier's buffer goes back in its stream's order: cudaFree
     * would wait for every kernel, the other launches' too. The curves
     * records its models still hold (not collected: an error) go back to
     * the pool. */
    if (L->pool && L->d_buf) cudaFreeAsync(L->d_buf, L->stream);
    for (int s = 0; L->rec && s < L->n; s++) launch_give_curves(L, s);
    if (L->stream) cudaStreamDestroy(L->stream);
    if (L->copy) cudaStreamDestroy(L->copy);
    if (!L->pool) cudaFree(L->d_buf);
    if (L->h_mapped) cudaFreeHost(L->h_mapped);
    free(L->rec);
    free(L->job);
    free(L->seen);
    free(L->handed);
    free(L->job_end);
    free(L->nets);
    free(L->models);
    free(L->folds);
    free(L->specs);
    free(L->res);
    free(L->curves);
    free(L->queue);
}

static void launch_alloc_host(Launch *L, int n)
{
    L->job = (int *)fs_calloc((size_t)n + 1, sizeof(int));
    L->seen = (int *)fs_calloc((size_t)n + 1, sizeof(int));
    L->handed = (unsigned char *)fs_calloc((size_t)n + 1, 1);
    L->job_end = (unsigned char *)fs_calloc((size_t)n + 1, 1);
    L->nets = (FsNet *)fs_calloc((size_t)n + 1, sizeof(FsNet));
    L->models = (FsModel *)fs_calloc((size_t)n + 1, sizeof(FsModel));
    L->folds = (FsFoldData *)fs_calloc((size_t)n + 1, sizeof(FsFoldData));
    L->specs = (FsTrainSpec *)fs_calloc((size_t)n + 1, sizeof(FsTrainSpec));
    L->res = (FsFitResult *)fs_calloc((size_t)n + 1, sizeof(FsFitResult));
    L->curves = (float **)fs_calloc((size_t)n + 1, sizeof(float *));
    L->queue = (int *)fs_calloc((size_t)n + 1, sizeof(int));
    L->rec = (int *)fs_calloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i <= n; i++) L->rec[i] = -1;
}

/* A launch's dynamic shared memory a block (core_model_shared_bytes):
 * every model's hot state, and its weights after it where every model's
 * fit the room that keeps FS_GPU_MIN_BLOCKS blocks on an SM
 * (gpu_block_shared). Not where one model's do not: the launch's blocks
 * all take its size, and shared memory is carved from the SM's L1, so one
 * small model's weights would cost every other block of the launch L1 for
 * nothing. L->weights_shared tells the kernel which (FsFitLaunch). Where
 * they are not, the launch adds a staging area for the GEMM's B; each
 * block's is what the launch's size leaves past its model's
 * (core_model_block_bytes). */
static size_t launch_shared(const FsGpu *g, Launch *L)
{
    const size_t room = gpu_block_shared(&g->lim);
    size_t hot = 0, both = 0;
    int all = 1;
    for (int s = 0; s < L->n; s++) {
        const size_t h = core_model_hot_bytes(&L->nets[s]), b = core_model_shared_bytes(&L->nets[s], room);
        if (h > hot) hot = h;
        if (b > both) both = b;
        if (b == h) all = 0;
    }
    L->weights_shared = all && L->n > 0;
    if (L->weights_shared) return both;
    /* The GEMM's staging area past the largest hot state, as much of
     * FS_GPU_STAGE_BYTES as the room leaves (train/gemm_stage.h). */
    const size_t staged = hot + FS_GPU_STAGE_BYTES;
    return hot >= room ? hot : staged < room ? staged : room;
}

/* The jobs that can train here get a launch slot; the others are failed
 * with why, as the CPU fails them: a job that cannot train at all, and a
 * model the GPU path does not take (gpu_model_check: the same rule the run
 * and `foldsweep plan` apply before training). off[s]: each slot's offset
 * in the device buffer; returns the buffer's size. With slots > 0, the
 * jobs past the first `slots` are queued, sized into the stride. */
static size_t launch_slots(FsGpu *g, const FsJob *jobs, int n, const unsigned char *sel, FsGpuTier tier, int slots,
                           int width, Launch *L, size_t *off, uint32_t *ntr)
{
    size_t total = 0, most = 0;
    for (int j = 0; j < n; j++) {
        uint32_t nt, nv;
        int s = L->n;
        char why[512];
        FsNet queued;
        const int full = slots > 0 && L->n >= slots;
        FsNet *net = full ? &queued : &L->nets[s];
        if (sel && !sel[j]) continue;
        if (train_job_check(&jobs[j], net, &nt, &nv) != 0) continue;
        if (gpu_job_tier(g, &jobs[j], nt, why, sizeof why) != tier) continue;
        if (full) {
            size_t bytes = gpu_model_bytes(net, nt);
            if (bytes > most) most = bytes;
            L->queue[L->n_queue++] = j;
            continue;
        }
        L->job[s] = j;
        ntr[s] = nt;
        off[s] = total;
        size_t bytes = gpu_model_bytes(&L->nets[s], nt);
        total += bytes;
        if (bytes > most) most = bytes;
        L->n++;
    }
    /* A library group's models lie one stride apart, whatever their
     * folds' sizes: the libraries' batched calls step from one to the next
     * by a constant (kernels/dnn.h); the buffer holds its width's strides,
     * the slots past its models zero. */
    if (tier == FS_GPU_LIBRARY) {
        L->width = width > L->n ? width : L->n;
        for (int s = 0; s < L->n; s++) off[s] = (size_t)s * most;
        total = most * (size_t)L->width;
        L->stride = most;
    }
    return total;
}

FsGpuTier gpu_job_tier(FsGpu *g, const FsJob *job, uint32_t n_train, char *why, size_t n)
{
    return gpu_model_check(&g->lim, job->arch, job->spec, n_train, why, n);
}

/* Each job the GPU refuses fails with why, as the CPU fails one that cannot
 * train (gpu_model_check: the same rule the run and `foldsweep plan` apply
 * before training). */
static void launch_refuse(FsGpu *g, const FsJob *jobs, int n)
{
    FsNet net;
    for (int j = 0; j < n; j++) {
        uint32_t nt, nv;
        char why[512];
        if (train_job_check(&jobs[j], &net, &nt, &nv) != 0) continue;
        if (gpu_job_tier(g, &jobs[j], nt, why, sizeof why) != FS_GPU_REFUSED) continue;
        jobs[j].result->status = FS_FIT_FAILED;
        snprintf(jobs[j].result->message, sizeof jobs[j].result->message, "GPU: %s", why);
    }
}

/* Slot s's curves in mapped memory: its job's epochs, or with a queue the
 * most any job of the launch has (a slot may take any of them). */
static size_t launch_curve_bytes(const FsJob *jobs, const Launch *L, int s)
{
    if (L->pool) return L->pool->curve_bytes;
    return launch_curves_bytes(L->ep_cap ? L->ep_cap : jobs[L->job[s]].spec->stop.max_epochs);
}

/* The mapped records and curves: one host allocation the kernel writes to. */
static int launch_mapped(const FsJob *jobs, Launch *L, FsErr *err)
{
    if (L->pool) { /* the block tier: records from the call's pool, made before its first launch */
        Records *R = L->pool;
        if (L->base + L->n > R->cap || L->n > R->n_free) {
            fs_err_set(err, "%s:%d: %d models past the records made for this call (%d jobs, %d curves free)",
                       __FILE__, __LINE__, L->n, R->cap, R->n_free);
            return -1;
        }
        L->watch = R->watch + L->base;
        L->done = R->done + L->base;
        memset(L->watch, 0, sizeof(Watch) * (size_t)L->n);
        memset((void *)L->done, 0, sizeof(int) * (size_t)L->n);
        for (int s = 0; s < L->n; s++) {
            L->rec[s] = R->free_curves[--R->n_free];
            L->curves[s] = (float *)(void *)(R->curves + (size_t)L->rec[s] * R->curve_bytes);
            memset(L->curves[s], 0, R->curve_bytes);
        }
        return 0;
    }
    const size_t flags = align256(sizeof(Watch) * (size_t)L->n);
    size_t bytes = flags + align256(sizeof(int) * (size_t)L->n), at = bytes;
    for (int s = 0; s < L->n; s++) bytes += launch_curve_bytes(jobs, L, s);
    CU(cudaHostAlloc((void **)&L->h_mapped, bytes, cudaHostAllocMapped));
    memset(L->h_mapped, 0, bytes);
    L->watch = (Watch *)(void *)L->h_mapped;
    L->done = (volatile int *)(void *)(L->h_mapped + flags);
    for (int s = 0; s < L->n; s++) {
        L->curves[s] = (float *)(void *)(L->h_mapped + at);
        at += launch_curve_bytes(jobs, L, s);
    }
    return 0;
}

/* Host to device: on the block tier's launch stream (not the legacy
 * stream, which would wait for the running kernels), waited for there,
 * since the host buffer is reused; elsewhere a plain copy. */
static cudaError_t launch_put(Launch *L, void *dst, const void *src, size_t n)
{
    if (!L->pool) return cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, L->stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(L->stream);
}

/* Slot s's model: bound into the device buffer (sizes from the host copy
 * of its net: core_model_bind reads them), seeded on the host with the CPU
 * trainer's seeds, its fold's lists, its mapped record and curves. */
static int launch_model(FsGpu *g, const FsJob *job, Launch *L, int s, char *buf, uint32_t nt, Watch *d_watch,
                        float **w, size_t *w_cap, FsErr *err)
{
    const FsNet *net = &L->nets[s];
    FsModel *m = &L->models[s];
    core_model_bind(m, net, buf, nt);
    m->net = &L->d_nets[s];
    size_t nw = (size_t)(net->n_params + net->n_state);
    if (nw > *w_cap) *w = (float *)fs_realloc(*w, sizeof(float) * (*w_cap = nw));
    core_model_seed(m, net, job->spec, *w);
    const FoldLists *fl = &g->folds[job->arch->chain != 0][gpu_fold_slot(job->fold)];
    core_model_weigh(m, net, job->spec, fl->counts);
    CU(launch_put(L, m->w, *w, sizeof(float) * nw));
    m->progress = &d_watch[s].progress;
    m->cancel = &d_watch[s].cancel;
    m->prune = &d_watch[s].prune;
    m->examples = &d_watch[s].examples;
    FsFoldData fd = {g->d_aa, g->d_ss, g->d_left, g->d_right, fl->d_idx, fl->n_train, fl->d_idx + fl->n_train,
                     fl->n_valid, fl->n_train_res, fl->n_valid_res, g->ds->feat_dim ? g->d_feat : NULL,
                     g->ds->feat_dim, g->ds->feat_half};
    L->folds[s] = fd;
    L->specs[s] = *job->spec;
    /* The curves go to mapped memory: the host reads each epoch's as it lands. */
    float *c = L->curves[s];
    int E = job->spec->stop.max_epochs;
    float *dc = NULL;
    CU(cudaHostGetDevicePointer((void **)&dc, c, 0));
    L->res[s].curves.train_loss = dc;
    L->res[s].curves.val_loss = dc + E;
    L->res[s].curves.val_q3 = dc + 2 * E;
    L->res[s].curves.seconds = dc + 3 * E;
    return 0;
}

/* One device allocation: the models' buffers (zeroed: pad rows, gradients
 * and moments start at zero), then the launch's arrays. */
static int launch_device(Launch *L, size_t bytes, size_t models, FsErr *err)
{
    if (L->pool) { /* the block tier: nothing here waits for another launch's kernel */
        CU(cudaStreamCreateWithFlags(&L->stream, cudaStreamNonBlocking));
        CU(cudaStreamCreateWithFlags(&L->copy, cudaStreamNonBlocking));
        CU(cudaMallocAsync((void **)&L->d_buf, bytes, L->stream));
        CU(cudaMemsetAsync(L->d_buf, 0, bytes, L->stream));
    } else {
        CU(cudaMalloc((void **)&L->d_buf, bytes));
        CU(cudaMemset(L->d_buf, 0, bytes));
    }
    char *p = L->d_buf + models;
    L->d_nets = (FsNet *)(void *)p;
    p += align256(sizeof(FsNet) * (size_t)L->n);
    L->d_models = (FsModel *)(void *)p;
    p += align256(sizeof(FsModel) * (size_t)L->n);
    L->d_folds = (FsFoldData *)(void *)p;
    p += align256(sizeof(FsFoldData) * (size_t)L->n);
    L->d_specs = (FsTrainSpec *)(void *)p;
    p += align256(sizeof(FsTrainSpec) * (size_t)L->n);
    L->d_res = (FsFitResult *)(void *)p;
    return 0;
}

static int launch_upload(Launch *L, FsErr *err)
{
    CU(launch_put(L, L->d_nets, L->nets, sizeof(FsNet) * (size_t)L->n));
    CU(launch_put(L, L->d_models, L->models, sizeof(FsModel) * (size_t)L->n));
    CU(launch_put(L, L->d_folds, L->folds, sizeof(FsFoldData) * (size_t)L->n));
    CU(launch_put(L, L->d_specs, L->specs, sizeof(FsTrainSpec) * (size_t)L->n));
    CU(launch_put(L, L->d_res, L->res, sizeof(FsFitResult) * (size_t)L->n));
    if (!L->pool) {
        CU(cudaStreamCreate(&L->stream));
        CU(cudaStreamCreate(&L->copy));
    }
    return 0;
}

int launch_build(FsGpu *g, const FsJob *jobs, int n, const unsigned char *sel, FsGpuTier tier, int slots, int width,
                 Launch *L, FsErr *err)
{
    launch_alloc_host(L, n);
    size_t *off = (size_t *)fs_calloc((size_t)n + 1, sizeof(size_t));
    uint32_t *ntr = (uint32_t *)fs_calloc((size_t)n + 1, sizeof(uint32_t));
    int rc = 0;
    size_t total = launch_slots(g, jobs, n, sel, tier, slots, width, L, off, ntr);
    L->shared = launch_shared(g, L);
    for (int s = 0; s < L->n && !rc; s++)
        if (!gpu_fold_lists(g, jobs[L->job[s]].fold, jobs[L->job[s]].arch->chain, err)) rc = -1;
    /* The queued jobs' fold lists too: uploaded now, before the group's
     * buffers, as gpu_capacity counted them. */
    for (int q = 0; q < L->n_queue && !rc; q++) {
        const FsJob *job = &jobs[L->queue[q]];
        if (!gpu_fold_lists(g, job->fold, job->arch->chain, err)) rc = -1;
        if (job->spec->stop.max_epochs > L->ep_cap) L->ep_cap = job->spec->stop.max_epochs;
    }
    for (int s = 0; s < L->n && L->n_queue; s++)
        if (jobs[L->job[s]].spec->stop.max_epochs > L->ep_cap) L->ep_cap = jobs[L->job[s]].spec->stop.max_epochs;
    if (rc || L->n == 0) {
        free(off);
        free(ntr);
        return rc;
    }
    const size_t arrays = gpu_launch_arrays_bytes(L->n);
    float *w = NULL;
    size_t w_cap = 0;
    Watch *d_watch = NULL;
    rc = launch_device(L, total + arrays, total, err);
    if (!rc) rc = launch_mapped(jobs, L, err);
    if (!rc && cudaHostGetDevicePointer((void **)&d_watch, L->watch, 0) != cudaSuccess)
        rc = -1, fs_err_set(err, "%s:%d: cudaHostGetDevicePointer: %s", __FILE__, __LINE__,
                            cudaGetErrorString(cudaGetLastError()));
    for (int s = 0; s < L->n && !rc; s++)
        rc = launch_model(g, &jobs[L->job[s]], L, s, L->d_buf + off[s], ntr[s], d_watch, &w, &w_cap, err);
    free(w);
    free(off);
    free(ntr);
    return rc ? rc : launch_upload(L, err);
}

int launch_refill(FsGpu *g, const FsJob *jobs, Launch *L, int s, int j, FsErr *err)
{
    uint32_t nt, nv;
    if (train_job_check(&jobs[j], &L->nets[s], &nt, &nv) != 0) { /* launch_slots checked it */
        fs_err_set(err, "%s:%d: job %d no longer compiles for its group", __FILE__, __LINE__, j);
        return -1;
    }
    char *buf = L->d_buf + (size_t)s * L->stride;
    CU(cudaMemset(buf, 0, L->stride)); /* pad rows, gradients and moments start at zero */
    Watch *d_watch = NULL;
    CU(cudaHostGetDevicePointer((void **)&d_watch, L->watch, 0));
    memset((void *)&L->watch[s], 0, sizeof(Watch));
    memset(L->curves[s], 0, launch_curve_bytes(jobs, L, s));
    memset(&L->res[s], 0, sizeof L->res[s]);
    L->job[s] = j;
    L->seen[s] = 0;
    float *w = NULL;
    size_t w_cap = 0;
    int rc = launch_model(g, &jobs[j], L, s, buf, nt, d_watch, &w, &w_cap, err);
    free(w);
    if (rc) return rc;
    CU(cudaMemcpy(&L->d_nets[s], &L->nets[s], sizeof(FsNet), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(&L->d_models[s], &L->models[s], sizeof(FsModel), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(&L->d_folds[s], &L->folds[s], sizeof(FsFoldData), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(&L->d_specs[s], &L->specs[s], sizeof(FsTrainSpec), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(&L->d_res[s], &L->res[s], sizeof(FsFitResult), cudaMemcpyHostToDevice));
    L->done[s] = 0;
    L->handed[s] = 0;
    return 0;
}
/* Hands slot s's new epochs to its job as the CPU trainer would: curves
 * first, then (released) the epoch count, so that a watcher (the pruner,
 * --progress, a worker's EPOCH messages) reading the count sees them. */
void launch_hand(const FsJob *job, Launch *L, int s, int epochs)
{
    const FsCurves *c = &job->result->curves;
    int E = job->spec->stop.max_epochs;
    if (epochs > E) epochs = E;
    for (int e = L->seen[s]; e < epochs && c->train_loss; e++) {
        c->train_loss[e] = L->curves[s][e];
        c->val_loss[e] = L->curves[s][E + e];
        c->val_q3[e] = L->curves[s][2 * E + e];
        c->seconds[e] = L->curves[s][3 * E + e];
    }
    if (epochs > L->seen[s]) {
        L->seen[s] = epochs;
        __atomic_thread_fence(__ATOMIC_RELEASE);
        if (job->progress) *job->progress = epochs;
    }
    if (job->examples) *job->examples = ((volatile Watch *)L->watch)[s].examples;
}

/* Slot s's result and weights, final (its done flag is set, or the kernel
 * has ended), into its job: copied on the copy stream, so that the other
 * models train on; then finished() records it. */
int launch_collect_one(const FsJob *jobs, Launch *L, int s, const FsGpuWatch *w, FsErr *err)
{
    const FsJob *job = &jobs[L->job[s]];
    FsFitResult *back = (FsFitResult *)fs_calloc(1, sizeof(FsFitResult));
    cudaError_t e = cudaMemcpyAsync(back, &L->d_res[s], sizeof(FsFitResult), cudaMemcpyDeviceToHost, L->copy);
    if (e == cudaSuccess && job->weights_out)
        e = cudaMemcpyAsync(job->weights_out, L->models[s].w,
                            sizeof(float) * (size_t)(L->nets[s].n_params + L->nets[s].n_state),
                            cudaMemcpyDeviceToHost, L->copy);
    if (e == cudaSuccess) e = cudaStreamSynchronize(L->copy);
    if (e != cudaSuccess) {
        free(back);
        fs_err_set(err, "%s:%d: copying model %d's result and weights: %s", __FILE__, __LINE__, s,
                   cudaGetErrorString(e));
        return -1;
    }
    FsFitResult *r = job->result;
    FsFitResult host = *r; /* the host's curves and weights buffers stay the result's */
    launch_hand(job, L, s, back->epochs);
    *r = *back;
    r->curves = host.curves;
    r->weights = host.weights;
    r->n_weights = host.n_weights;
    r->gpu_group = L->width; /* 0 on the block tier */
    free(back);
    L->handed[s] = 1;
    /* Its curves record back to the block tier's pool now, for a refill
     * while the launch's others train: its block has set its done flag,
     * the last thing it writes (or the kernel has ended). */
    launch_give_curves(L, s);
    L->job_end[L->job[s]] = 1;
    if (w && w->finished) w->finished(w->ctx, L->base + L->job[s]);
    return 0;
}

/* One look at a running launch: each model's epochs, curves and examples
 * go to its job, each job's cancel and prune flags down to its model, and
 * a model that has ended is collected and recorded at once; after the
 * kernel, the models not collected while it ran. *epochs: those of the
 * models still training. */
int launch_poll(const FsJob *jobs, Launch *L, const FsGpuWatch *w, long *epochs, FsErr *err)
{
    volatile Watch *wa = (volatile Watch *)L->watch;
    cudaError_t e = cudaStreamQuery(L->stream);
    *epochs = 0;
    for (int s = 0; s < L->n; s++) {
        if (L->handed[s]) continue;
        if (L->done[s]) {
            __atomic_thread_fence(__ATOMIC_ACQUIRE); /* its result was written before the flag */
            if (launch_collect_one(jobs, L, s, w, err) != 0) return -1;
            continue;
        }
        const FsJob *job = &jobs[L->job[s]];
        int p = wa[s].progress;
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the curves were written before the count */
        launch_hand(job, L, s, p);
        *epochs += p;
        wa[s].cancel = job->cancel && *job->cancel;
        wa[s].prune = job->prune && *job->prune;
    }
    if (e == cudaErrorNotReady) return 0;
    if (e != cudaSuccess) {
        fs_err_set(err, "%s:%d: the kernel (%d models) failed: cudaStreamQuery: %s", __FILE__, __LINE__, L->n,
                   cudaGetErrorString(e));
        return -1;
    }
    for (int s = 0; s < L->n; s++)
        if (!L->handed[s] && launch_collect_one(jobs, L, s, w, err) != 0) return -1;
    return 1;
}

int gpu_train(FsGpu *g, const FsJob *jobs, int n, const FsGpuWatch *w, FsErr *err)
{
    const double t_call = fs_now();
    const double kernel_before = g->times.kernel_seconds;
    FS_NVTX_PUSH("foldsweep: gpu_train");
    /* The block tier's refills append jobs (FsGpuWatch.more), up to cap. */
    const int cap = w && w->more && w->cap > n ? w->cap : n;
    int n_all = n;
    unsigned char *ended = (unsigned char *)fs_calloc((size_t)cap + 1, 1);
    int rc = 0;
    cudaError_t e = cudaSetDevice(g->device);
    if (e != cudaSuccess) {
        fs_err_set(err, "%s:%d: cudaSetDevice(%d): %s", __FILE__, __LINE__, g->device, cudaGetErrorString(e));
        rc = -1;
    }
    if (!rc) launch_refuse(g, jobs, n);
    if (!rc) rc = gpu_block_train(g, jobs, &n_all, w, ended, err);
    FS_NVTX_PUSH("library tier");
    if (!rc) rc = gpu_lib_train(g, jobs, n_all, w, ended, err);
    FS_NVTX_POP();
    if (rc) {
        /* A CUDA error is the device's, not the models': every job of this
         * call that is neither recorded already nor failed for its own
         * reason ends cancelled (no result: a resumed run trains it again)
         * and the caller stops. */
        for (int j = 0; j < n_all; j++) {
            if (ended[j]) continue; /* finished(): the caller's now */
            FsFitResult *r = jobs[j].result;
            if (r->status == FS_FIT_FAILED) continue; /* refused before the launch, with why */
            r->status = FS_FIT_CANCELLED;
            snprintf(r->message, sizeof r->message, "GPU: %.900s", err->msg);
        }
    }
    free(ended);
    /* The host's share: the call's wall time less the device's (this
     * call's kernel and library waits). */
    g->times.host_seconds += fs_now() - t_call - (g->times.kernel_seconds - kernel_before);
    g->times.calls++;
    FS_NVTX_POP();
    return rc;
}
